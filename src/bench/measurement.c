#include "bench/measurement.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_report_init(struct bench_report *r) { memset(r, 0, sizeof(*r)); }

void bench_report_done(struct bench_report *r) {
        for (size_t i = 0; i < r->n; i++)
                free(r->m[i].samples);
        free(r->m);
        memset(r, 0, sizeof(*r));
}

static struct measurement sink;

struct measurement *bench_measurement_new(struct bench_report *r, const char *bench, const char *name,
                                          const char *subject, const char *unit, bool higher_is_better) {
        if (r->n == r->cap) {
                size_t cap = r->cap ? r->cap * 2 : 32;
                struct measurement *grown = realloc(r->m, cap * sizeof(*grown));
                if (!grown) {
                        r->out_of_memory = true;
                        free(sink.samples);
                        memset(&sink, 0, sizeof(sink));
                        return &sink;
                }
                r->m = grown;
                r->cap = cap;
        }
        struct measurement *m = &r->m[r->n++];
        memset(m, 0, sizeof(*m));
        snprintf(m->bench, sizeof(m->bench), "%s", bench);
        snprintf(m->name, sizeof(m->name), "%s", name);
        snprintf(m->subject, sizeof(m->subject), "%s", subject);
        snprintf(m->unit, sizeof(m->unit), "%s", unit);
        m->higher_is_better = higher_is_better;
        m->status = STATUS_ERROR; /* until judged: a benchmark that forgets cannot pass */
        /* a benchmark starts a measurement before it measures: what its child does now */
        bench_live_note(name, subject);
        return m;
}

void measurement_param(struct measurement *m, const char *key, const char *fmt, ...) {
        if (m->n_params == MEASUREMENT_MAX_PARAMS)
                return;
        struct measurement_param *p = &m->params[m->n_params++];
        snprintf(p->key, sizeof(p->key), "%s", key);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->value, sizeof(p->value), fmt, ap);
        va_end(ap);
}

int measurement_set_samples(struct measurement *m, const double *samples, size_t n, size_t warmup) {
        double *copy = malloc((n ? n : 1) * sizeof(double));
        if (!copy)
                return -ENOMEM;
        memcpy(copy, samples, n * sizeof(double));
        free(m->samples);
        m->samples = copy;
        m->n_samples = n;
        m->warmup = warmup;
        return 0;
}

void measurement_fail(struct measurement *m, enum status s, const char *fmt, ...) {
        m->status = s;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(m->summary, sizeof(m->summary), fmt, ap);
        va_end(ap);
}

static double ratio(const struct measurement *m, double ref) {
        if (ref <= 0 || m->stats.median <= 0)
                return 0;
        return m->higher_is_better ? m->stats.median / ref : ref / m->stats.median;
}

void bench_judge(struct measurement *m, const struct bench_limits *limits) {
        if (m->status == STATUS_SKIP || (m->status == STATUS_ERROR && m->summary[0]))
                return; /* already decided by the benchmark, with its reason */
        if (m->n_samples == 0 || bench_stats_compute(m->samples, m->n_samples, &m->stats) < 0) {
                measurement_fail(m, STATUS_ERROR, "no valid sample");
                return;
        }
        m->ratio_peak = ratio(m, m->peak);
        m->ratio_baseline = ratio(m, m->baseline);
        if (m->verify_error[0]) {
                measurement_fail(m, STATUS_FAIL, "result verification failed: %s", m->verify_error);
                return;
        }
        double r = m->ratio_baseline > 0 ? m->ratio_baseline : m->ratio_peak;
        const char *ref = m->ratio_baseline > 0 ? "baseline" : "peak";
        char figure[64];
        snprintf(figure, sizeof(figure), "%.4g %s (median of %zu, cv %.1f%%)", m->stats.median, m->unit,
                 m->stats.n, m->stats.cv * 100);
        if (r <= 0 || !limits) {
                m->status = STATUS_PASS;
                snprintf(m->summary, sizeof(m->summary), "%s; no reference for this device", figure);
                return;
        }
        m->limits.pass_ratio = limits->pass_ratio;
        m->limits.warn_ratio = limits->warn_ratio;
        m->status = r >= limits->pass_ratio ? STATUS_PASS : r >= limits->warn_ratio ? STATUS_WARN : STATUS_FAIL;
        snprintf(m->summary, sizeof(m->summary), "%s = %.0f%% of %s", figure, r * 100, ref);
}

static bool same_measurement(const struct measurement *a, const struct measurement *b) {
        if (strcmp(a->bench, b->bench) || strcmp(a->name, b->name) || a->n_params != b->n_params)
                return false;
        for (size_t i = 0; i < a->n_params; i++)
                if (strcmp(a->params[i].key, b->params[i].key) || strcmp(a->params[i].value, b->params[i].value))
                        return false;
        return true;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

void bench_compare_siblings(struct bench_report *r, double tolerance) { bench_compare_siblings_from(r, 0, tolerance); }

void bench_compare_siblings_from(struct bench_report *r, size_t first, double tolerance) {
        for (size_t i = first; i < r->n; i++) {
                struct measurement *m = &r->m[i];
                if (strncmp(m->subject, "gpu", 3) != 0 || m->stats.n == 0)
                        continue;
                double medians[256];
                size_t n = 0;
                for (size_t k = first; k < r->n && n < 256; k++)
                        if (strncmp(r->m[k].subject, "gpu", 3) == 0 && r->m[k].stats.n && same_measurement(m, &r->m[k]))
                                medians[n++] = r->m[k].stats.median;
                if (n < 3)
                        continue; /* a median of two says nothing about which one is off */
                qsort(medians, n, sizeof(double), cmp_double);
                double node = n % 2 ? medians[n / 2] : (medians[n / 2 - 1] + medians[n / 2]) / 2;
                double rel = m->higher_is_better ? m->stats.median / node : node / m->stats.median;
                if (rel < 1 - tolerance && m->status == STATUS_PASS) {
                        m->status = STATUS_WARN;
                        size_t len = strlen(m->summary);
                        snprintf(m->summary + len, sizeof(m->summary) - len, "; %.0f%% below the node's median %.4g %s",
                                 (1 - rel) * 100, node, m->unit);
                }
        }
}

/* A wrong result is a fault whatever the benchmark, never slowness. */
static const char verify_remedy[] =
        "A wrong result is a fault, not slowness: look for Xid and ECC errors (gpu.xid, gpu.ecc_errors), then run the "
        "benchmark again; a GPU that computes wrongly twice must be drained and reported to the vendor.";

void measurement_outcome(const struct measurement *m, const char *bench_remedy, struct measurement_outcome *out) {
        memset(out, 0, sizeof(*out));
        const struct bench_stats *st = &m->stats;
        if (st->n)
                snprintf(out->observed, sizeof(out->observed), "%.4g %s, median of %zu (min %.4g, max %.4g, cv %.1f%%)",
                         st->median, m->unit, st->n, st->min, st->max, st->cv * 100);
        bool on_baseline = m->ratio_baseline > 0;
        double ref = on_baseline ? m->baseline : m->peak;
        const char *source = on_baseline ? m->baseline_source : m->peak_source;
        if (m->limits.pass_ratio > 0 && ref > 0) {
                /* The ratio is figure/reference, or reference/figure when lower is better. */
                const char *sep = source[0] ? ": " : "", *what = on_baseline ? "baseline" : "peak";
                if (m->higher_is_better)
                        snprintf(out->expected, sizeof(out->expected), "at least %.4g %s (%.0f%% of the %s %.4g %s%s%s)",
                                 ref * m->limits.pass_ratio, m->unit, m->limits.pass_ratio * 100, what, ref, m->unit,
                                 sep, source);
                else
                        snprintf(out->expected, sizeof(out->expected), "at most %.4g %s (the %s %.4g %s / %.0f%%%s%s)",
                                 ref / m->limits.pass_ratio, m->unit, what, ref, m->unit, m->limits.pass_ratio * 100,
                                 sep, source);
        }
        if (m->status == STATUS_WARN || m->status == STATUS_FAIL)
                out->remedy = m->verify_error[0] ? verify_remedy : bench_remedy;
}

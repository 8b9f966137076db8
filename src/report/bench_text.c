#include "report/bench_text.h"

#include <string.h>

#include "bench/bench.h"
#include "report/text_safe.h"

static void fmt_value(char *buf, size_t size, double v) {
        if (v >= 1000)
                snprintf(buf, size, "%.0f", v);
        else if (v >= 10)
                snprintf(buf, size, "%.1f", v);
        else
                snprintf(buf, size, "%.3g", v);
}

/* Each distinct remedy of a run's warnings and failures, once, under its table (as check's
 * text gives a remedy under the results it applies to). */
static void print_remedies(FILE *out, const struct bench_report *rep, const struct bench_run_result *run) {
        const char *shown[4] = {NULL};
        size_t n_shown = 0;
        for (size_t i = run->first; i < run->first + run->count && n_shown < 4; i++) {
                struct measurement_outcome o;
                measurement_outcome(&rep->m[i], run->info->remedy, &o);
                bool seen = !o.remedy;
                for (size_t k = 0; k < n_shown && !seen; k++)
                        seen = shown[k] == o.remedy;
                if (seen)
                        continue;
                shown[n_shown++] = o.remedy;
                fprintf(out, "     remedy: %s\n", o.remedy);
        }
}

static void print_row(FILE *out, const struct measurement *m, const struct text_options *opt) {
        char med[32] = "-", range[48] = "-", cv[16] = "-", pk[16] = "-", bl[16] = "-", glyph[32], subject[64];
        if (m->stats.n) {
                char lo[24], hi[24];
                fmt_value(med, sizeof(med), m->stats.median);
                size_t l = strlen(med);
                snprintf(med + l, sizeof(med) - l, " %s", m->unit);
                fmt_value(lo, sizeof(lo), m->stats.min);
                fmt_value(hi, sizeof(hi), m->stats.max);
                snprintf(range, sizeof(range), "%s-%s", lo, hi);
                snprintf(cv, sizeof(cv), "%.1f%%", m->stats.cv * 100);
        }
        if (m->ratio_peak > 0)
                snprintf(pk, sizeof(pk), "%.0f%%", m->ratio_peak * 100);
        if (m->ratio_baseline > 0)
                snprintf(bl, sizeof(bl), "%.0f%%", m->ratio_baseline * 100);
        fprintf(out, " %s %-22s %-21s %14s %21s %7s %7s %7s\n", report_text_glyph(m->status, opt, glyph, sizeof(glyph)),
                text_safe(m->subject, subject, sizeof(subject)), m->name, med, range, cv, pk, bl);
        if (m->status != STATUS_PASS || m->stats.n == 0) {
                /* the summary quotes the backend and the device: made terminal-safe */
                fputs("     ", out);
                text_safe_write(out, m->summary);
                fputc('\n', out);
        }
}

void bench_text_run(FILE *out, const struct bench_report *rep, const struct bench_run_result *run,
                    const struct text_options *opt) {
        fprintf(out, "%s: %s (%.1f s%s%s)\n", run->info->name, run->info->title, run->duration_ms / 1e3,
                run->backend[0] ? ", backend " : "", run->backend);
        fprintf(out, "   %-22s %-21s %14s %21s %7s %7s %7s\n", "subject", "measurement", "median", "min-max", "cv",
                "%peak", "%base");
        for (size_t i = run->first; i < run->first + run->count; i++)
                print_row(out, &rep->m[i], opt);
        print_remedies(out, rep, run);
        fputc('\n', out);
}

void bench_text_verdict(FILE *out, const struct bench_report *rep, enum status verdict, double duration_ms,
                        const struct text_options *opt) {
        unsigned counts[_STATUS_COUNT] = {0};
        for (size_t i = 0; i < rep->n; i++)
                counts[rep->m[i].status]++;
        report_text_verdict(out, opt, verdict, counts, duration_ms);
}

#include "report/bench_text.h"

#include <string.h>

#include "core/strbuf.h"

#include "bench/bench.h"
#include "report/text_safe.h"
#include "report/text_wrap.h"

/* The table at full width is 108 columns; narrower, it leaves out the spread (min-max,
 * then cv) before anything a reader compares: the median and its ratios to the peak and
 * the baseline stay. */
#define BENCH_TABLE_WIDTH 108
#define BENCH_RANGE_WIDTH 22
#define BENCH_CV_WIDTH 8

struct bench_columns {
        bool range, cv;
};

static struct bench_columns columns_for(size_t width) {
        return (struct bench_columns){
                .range = !width || width >= BENCH_TABLE_WIDTH,
                .cv = !width || width >= BENCH_TABLE_WIDTH - BENCH_RANGE_WIDTH,
        };
}

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
static void print_remedies(FILE *out, const struct bench_report *rep, const struct bench_run_result *run,
                           const struct text_options *opt) {
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
                char line[4096];
                snprintf(line, sizeof(line), "     remedy: %s", o.remedy);
                text_wrap_line(out, line, 5, opt->width);
        }
}

/* One row's cells after the glyph, as many as the columns show. */
static void format_cells(char *buf, size_t size, const char *subject, const char *name, const char *med,
                         const char *range, const char *cv, const char *pk, const char *bl,
                         struct bench_columns cols) {
        snprintf(buf, size, "%-22s %-21s %14s", subject, name, med);
        if (cols.range)
                strbuf_appendf(buf, size, " %21s", range);
        if (cols.cv)
                strbuf_appendf(buf, size, " %7s", cv);
        strbuf_appendf(buf, size, " %7s %7s", pk, bl);
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
        char cells[512], line[640];
        format_cells(cells, sizeof(cells), text_safe(m->subject, subject, sizeof(subject)), m->name, med, range, cv,
                     pk, bl, columns_for(opt->width));
        snprintf(line, sizeof(line), " %s %s", report_text_glyph(m->status, opt, glyph, sizeof(glyph)), cells);
        text_wrap_line(out, line, 5, opt->width);
        if (m->status != STATUS_PASS || m->stats.n == 0) {
                /* the summary quotes the backend and the device: made terminal-safe */
                char sum[4096];
                snprintf(line, sizeof(line), "     %s", text_safe(m->summary, sum, sizeof(sum)));
                text_wrap_line(out, line, 5, opt->width);
        }
}

void bench_text_run(FILE *out, const struct bench_report *rep, const struct bench_run_result *run,
                    const struct text_options *opt) {
        char line[640], cells[512];
        snprintf(line, sizeof(line), "%s: %s (%.1f s%s%s)", run->info->name, run->info->title,
                 run->duration_ms / 1e3, run->backend[0] ? ", backend " : "", run->backend);
        text_wrap_line(out, line, 2, opt->width);
        format_cells(cells, sizeof(cells), "subject", "measurement", "median", "min-max", "cv", "%peak", "%base",
                     columns_for(opt->width));
        fprintf(out, "   %s\n", cells);
        for (size_t i = run->first; i < run->first + run->count; i++)
                print_row(out, &rep->m[i], opt);
        print_remedies(out, rep, run, opt);
        fputc('\n', out);
}

void bench_text_verdict(FILE *out, const struct bench_report *rep, enum status verdict, double duration_ms,
                        const struct text_options *opt) {
        unsigned counts[_STATUS_COUNT] = {0};
        for (size_t i = 0; i < rep->n; i++)
                counts[rep->m[i].status]++;
        report_text_verdict(out, opt, verdict, counts, duration_ms);
}

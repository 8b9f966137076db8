/* The benchmarks: each judged figure as a bar against its reference with the pass threshold
 * marked, one chart per benchmark and unit; the figures without a reference (sweep points,
 * devices gpuvet has no baseline for) in a folded table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/baselines.h"
#include "html/html_escape.h"
#include "html/html_page.h"
#include "html/svg_bars.h"
#include "html/svg_distribution.h"
#include "html/svg_scale.h"
#include "report/html_sections.h"

struct figure {
        const char *bench, *name, *subject, *unit;
        double value, peak, baseline;
        bool higher_is_better;
        enum status status;
};

struct bar_entry {
        struct svg_bar bar;
        const char *bench, *unit;
        char label[200], text[120];
};

static bool read_figure(struct doc_reader *r, json_t *o, const char *where, struct figure *f) {
        f->bench = doc_string(r, o, where, "bench", true);
        f->name = doc_string(r, o, where, "name", true);
        f->subject = doc_string(r, o, where, "subject", false);
        f->unit = doc_string(r, o, where, "unit", false);
        f->status = doc_status(r, o, where, "status");
        char at[96];
        snprintf(at, sizeof(at), "%s.stats", where);
        f->value = doc_number(r, doc_object(r, o, where, "stats", false), at, "median", false);
        f->peak = doc_number(r, o, where, "peak", false);
        f->baseline = doc_number(r, o, where, "baseline", false);
        json_t *hib = json_object_get(o, "higher_is_better");
        if (hib && !json_is_boolean(hib) && !json_is_null(hib))
                doc_fail(r, where, "higher_is_better: expected a boolean");
        f->higher_is_better = !json_is_false(hib);
        return !r->failed;
}

static bool positive(double v) { return isfinite(v) && v > 0; }

static void fill_bar(const struct figure *f, const struct baselines *limits, struct bar_entry *e) {
        bool on_baseline = positive(f->baseline);
        double ref = on_baseline ? f->baseline : f->peak;
        double threshold = NAN;
        const struct bench_limit_set *set = limits ? baselines_limits(limits, f->bench) : NULL;
        if (set) {
                double pass = on_baseline ? set->baseline.pass_ratio : set->peak.pass_ratio;
                if (pass > 0)
                        threshold = f->higher_is_better ? ref * pass : ref / pass;
        }
        snprintf(e->label, sizeof(e->label), "%s %s", f->name, f->subject ? f->subject : "");
        char value[48];
        if (isfinite(f->value))
                snprintf(e->text, sizeof(e->text), "%s (%.0f%% of %s)", svg_format_value(f->value, value, sizeof(value)),
                         100 * f->value / ref, on_baseline ? "baseline" : "peak");
        e->bench = f->bench;
        e->unit = f->unit;
        e->bar = (struct svg_bar){.label = e->label, .value = f->value, .reference = ref,
                                  .reference_name = on_baseline ? "baseline" : "peak", .threshold = threshold,
                                  .status = f->status, .value_text = isfinite(f->value) ? e->text : NULL};
}

static bool same(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : "") == 0; }

/* One chart per (benchmark, unit), in the order they first appear. */
static void charts(struct html_buf *b, struct bar_entry *e, size_t n) {
        struct svg_bar *bars = malloc((n ? n : 1) * sizeof(*bars));
        bool *done = calloc(n ? n : 1, sizeof(*done));
        if (!bars || !done) {
                b->failed = true;
                free(bars);
                free(done);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                if (done[i])
                        continue;
                size_t k = 0;
                for (size_t j = i; j < n; j++)
                        if (!done[j] && same(e[j].bench, e[i].bench) && same(e[j].unit, e[i].unit)) {
                                bars[k++] = e[j].bar;
                                done[j] = true;
                        }
                char title[160];
                snprintf(title, sizeof(title), "%s (%s) against baseline or peak", e[i].bench ? e[i].bench : "",
                         e[i].unit ? e[i].unit : "");
                svg_bars(b, title, e[i].unit, bars, k);
        }
        free(bars);
        free(done);
}

/* The figures of measurement (bench, name, unit) with a value, and their subjects, into
 * values and labels (room for n). */
static size_t siblings(const struct figure *f, size_t n, const struct figure *like, double *values,
                       const char **labels) {
        size_t k = 0;
        for (size_t j = 0; j < n; j++)
                if (isfinite(f[j].value) && same(f[j].bench, like->bench) && same(f[j].name, like->name) &&
                    same(f[j].unit, like->unit)) {
                        values[k] = f[j].value;
                        labels[k++] = f[j].subject ? f[j].subject : "";
                }
        return k;
}

/* The same measurement on three GPUs or more side by side, one chart per benchmark and
 * unit: a GPU well apart from its siblings is the one to look at, reference or not. */
static void spread(struct html_buf *b, const struct figure *f, size_t n) {
        bool *charted = calloc(n ? n : 1, sizeof(*charted)), *named = calloc(n ? n : 1, sizeof(*named));
        struct svg_group *groups = calloc(n ? n : 1, sizeof(*groups));
        if (!charted || !named || !groups) {
                b->failed = true;
                goto out;
        }
        for (size_t i = 0; i < n; i++) {
                if (charted[i])
                        continue;
                size_t n_groups = 0;
                for (size_t j = i; j < n; j++) {
                        if (!same(f[j].bench, f[i].bench) || !same(f[j].unit, f[i].unit))
                                continue;
                        charted[j] = true;
                        if (named[j])
                                continue;
                        for (size_t k = j; k < n; k++)
                                named[k] = named[k] || (same(f[k].bench, f[j].bench) && same(f[k].name, f[j].name) &&
                                                        same(f[k].unit, f[j].unit));
                        double *values = malloc(n * sizeof(*values));
                        const char **labels = malloc(n * sizeof(*labels));
                        size_t count = values && labels ? siblings(f, n, &f[j], values, labels) : 0;
                        if (!values || !labels)
                                b->failed = true;
                        if (count < 3) {
                                free(values);
                                free(labels);
                                continue;
                        }
                        groups[n_groups++] = (struct svg_group){.label = f[j].name, .values = values,
                                                                .value_labels = labels, .n = count};
                }
                char title[160];
                snprintf(title, sizeof(title), "%s (%s) across GPUs", f[i].bench ? f[i].bench : "",
                         f[i].unit ? f[i].unit : "");
                svg_distribution(b, title, f[i].unit, groups, n_groups);
                for (size_t g = 0; g < n_groups; g++) {
                        free((void *)groups[g].values);
                        free((void *)groups[g].value_labels);
                }
        }
out:
        free(charted);
        free(named);
        free(groups);
}

static void unreferenced_table(struct html_buf *b, const struct figure *f, size_t n) {
        size_t count = 0;
        for (size_t i = 0; i < n; i++)
                count += !positive(f[i].peak) && !positive(f[i].baseline);
        if (!count)
                return;
        html_buf_printf(b, "<details class=\"figures\"><summary>%zu figures without a reference</summary>\n", count);
        static const char *const headers[] = {"Benchmark", "Measurement", "Subject", "Figure", "Status"};
        html_table_begin(b, "figures", headers, 5);
        for (size_t i = 0; i < n; i++) {
                if (positive(f[i].peak) || positive(f[i].baseline))
                        continue;
                char value[96], figure[48];
                if (isfinite(f[i].value))
                        snprintf(value, sizeof(value), "%s %s", svg_format_value(f[i].value, figure, sizeof(figure)),
                                 f[i].unit ? f[i].unit : "");
                html_buf_puts(b, "<tr>");
                html_element(b, "td", NULL, f[i].bench);
                html_element(b, "td", "mono", f[i].name);
                html_element(b, "td", "mono", f[i].subject ? f[i].subject : "");
                html_element(b, "td", NULL, isfinite(f[i].value) ? value : "\xE2\x80\x94");
                html_buf_puts(b, "<td>");
                html_status_badge(b, f[i].status);
                html_buf_puts(b, "</td></tr>\n");
        }
        html_table_end(b);
        html_buf_puts(b, "</details>\n");
}

static void bench_doc(struct html_buf *b, struct node_doc *d, const struct baselines *limits) {
        struct doc_reader *r = d->reader;
        json_t *arr = doc_array(r, d->doc, "", "measurements", false);
        size_t n = json_array_size(arr);
        html_buf_puts(b, "<h3>");
        html_escapef(b, "%s: %s", d->command ? d->command : "bench", doc_file_name(r));
        html_buf_puts(b, "</h3>\n");
        if (n == 0) {
                html_element(b, "p", "muted", "No measurement in this document.");
                return;
        }
        struct figure *f = calloc(n, sizeof(*f));
        struct bar_entry *e = calloc(n, sizeof(*e));
        if (!f || !e) {
                b->failed = true;
                goto out;
        }
        size_t n_bars = 0;
        for (size_t i = 0; i < n; i++) {
                char where[48];
                snprintf(where, sizeof(where), "measurements[%zu]", i);
                json_t *o = doc_array_object(r, arr, "measurements", i);
                if (!o || !read_figure(r, o, where, &f[i]))
                        goto out;
                if (positive(f[i].peak) || positive(f[i].baseline))
                        fill_bar(&f[i], limits, &e[n_bars++]);
        }
        charts(b, e, n_bars);
        spread(b, f, n);
        unreferenced_table(b, f, n);
out:
        free(f);
        free(e);
}

void html_bench_section(struct html_buf *b, struct node_doc *docs, size_t n, const struct baselines *limits) {
        struct html_lazy_section section = {.id = "bench", .heading = "Benchmarks"};
        for (size_t i = 0; i < n; i++) {
                if (docs[i].kind != NODE_DOC_BENCH)
                        continue;
                html_lazy_section_entry(b, &section);
                bench_doc(b, &docs[i], limits);
        }
        html_lazy_section_end(b, &section);
}

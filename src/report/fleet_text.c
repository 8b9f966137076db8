#include "report/fleet_text.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/array.h"
#include "report/fleet_group_words.h"
#include "report/text_safe.h"

/* Nodes listed by name in the text (all of them are in the JSON). */
#define TEXT_MAX_NODES 50
#define TEXT_MAX_ODD 10

static void safe(FILE *out, const char *s) {
        text_safe_write(out, s ? s : "");
}

/* A figure with 4 significant digits, no exponent for the sizes benchmarks give. */
static void figure(FILE *out, double v) {
        double a = fabs(v);
        fprintf(out, a >= 1000 || a == 0 ? "%.0f" : a >= 100 ? "%.1f" : a >= 10 ? "%.2f" : "%.3g", v);
}

static void nodes_text(FILE *out, const struct fleet *f, const struct text_options *opt) {
        const size_t *c = f->node_counts;
        fprintf(out, "Nodes: %zu — %zu pass, %zu warn, %zu fail, %zu error", f->n_nodes, c[STATUS_PASS], c[STATUS_WARN],
                c[STATUS_FAIL], c[STATUS_ERROR]);
        if (c[STATUS_SKIP])
                fprintf(out, ", %zu skip", c[STATUS_SKIP]);
        fputc('\n', out);
        size_t shown = 0, bad = 0;
        for (size_t i = 0; i < f->n_nodes; i++) {
                const struct fleet_node *n = &f->nodes[i];
                if (n->verdict == STATUS_PASS || n->verdict == STATUS_SKIP)
                        continue;
                if (bad++ >= TEXT_MAX_NODES)
                        continue;
                char g[32];
                fprintf(out, "  %s ", report_text_glyph(n->verdict, opt, g, sizeof(g)));
                safe(out, n->name);
                if (n->hostname) {
                        fputs(" (host ", out);
                        safe(out, n->hostname);
                        fputc(')', out);
                }
                fprintf(out, "  %s  (", status_name(n->verdict));
                safe(out, n->verdict_doc);
                fputs(")\n", out);
                shown++;
        }
        if (bad > shown)
                fprintf(out, "  ... and %zu more (--json lists every node)\n", bad - shown);
}

static void checks_text(FILE *out, const struct fleet *f) {
        if (f->n_checks == 0)
                return;
        fprintf(out, "\nChecks that did not pass, by nodes affected:\n");
        for (size_t i = 0; i < f->n_checks; i++) {
                const struct fleet_check_count *c = &f->checks[i];
                fputs("  ", out);
                safe(out, c->id);
                fprintf(out, ": %zu node%s (%zu fail, %zu warn, %zu error): ", c->nodes_total,
                        c->nodes_total == 1 ? "" : "s", c->nodes[STATUS_FAIL], c->nodes[STATUS_WARN],
                        c->nodes[STATUS_ERROR]);
                for (size_t k = 0; k < c->n_sample; k++) {
                        fputs(k ? ", " : "", out);
                        safe(out, c->sample[k]);
                }
                fputs(c->nodes_total > c->n_sample ? ", ...\n" : "\n", out);
        }
}

static void metrics_text(FILE *out, const struct fleet *f) {
        if (f->n_dists == 0)
                return;
        fprintf(out, "\nBenchmarks per GPU model (per GPU where the figure is per GPU):\n");
        for (size_t i = 0; i < f->n_dists; i++) {
                const struct fleet_distribution *d = &f->dists[i];
                const struct fleet_stats *s = &d->stats;
                fputs("  ", out);
                safe(out, d->metric);
                fputs(" [", out);
                safe(out, d->model);
                fprintf(out, "] %s n=%zu", d->unit[0] ? d->unit : "", s->n);
                const char *const names[] = {"min", "p10", "median", "p90", "max", "mean", "stddev"};
                const double values[] = {s->min, s->p10, s->median, s->p90, s->max, s->mean, s->stddev};
                for (size_t k = 0; k < ARRAY_COUNT(values); k++) {
                        fprintf(out, " %s ", names[k]);
                        figure(out, values[k]);
                }
                fputc('\n', out);
        }
}

/* One figure: "gpu2 (0000:1b:00.0) memory/triad 1374 GB/s: 31.0% below the median 1990 (...)". */
static void outlier_figure(FILE *out, const struct fleet_outlier *o) {
        safe(out, o->subject);
        fputc(' ', out);
        safe(out, o->metric);
        fputc(' ', out);
        figure(out, o->value);
        fprintf(out, " %s: ", o->unit);
        if (o->rule == FLEET_RULE_VARIANCE) {
                fprintf(out, "%.1f%% %s the median ", fabs(o->deviation_pct), o->deviation_pct < 0 ? "below" : "above");
                figure(out, o->median);
                fprintf(out, " (%.1f MADs; rule ", o->mads);
        } else {
                fprintf(out, "%s the rule's %s (median ", o->rule == FLEET_RULE_VALUE_MIN ? "below" : "above",
                        fleet_rule_kind_name(o->rule));
                figure(out, o->median);
                fputs("; rule ", out);
        }
        safe(out, o->rule_pattern);
        fputc(')', out);
}

/* One line per node and side of the median: a slow node is one finding, its worst figure
 * named; the JSON's outliers[] lists every figure. */
static void outliers_text(FILE *out, const struct fleet *f, const struct text_options *opt) {
        if (f->n_outliers == 0)
                return;
        fprintf(out, "\nOutliers against the median of their GPU model (rules: ");
        safe(out, f->rules_source);
        fputs("):\n", out);
        bool grouped = false;
        for (size_t i = 0; i < f->n_outlier_groups; i++) {
                const struct fleet_outlier_group *g = &f->outlier_groups[i];
                const struct fleet_outlier *w = &f->outliers[g->worst];
                char gl[32];
                fprintf(out, "  %s ", report_text_glyph(g->status, opt, gl, sizeof(gl)));
                safe(out, g->node);
                if (g->n == 1) {
                        fputc(' ', out);
                        outlier_figure(out, w);
                        fputc('\n', out);
                        continue;
                }
                grouped = true;
                char words[800]; /* room for any two figures printed in full */
                fleet_group_words(g, "-", words, sizeof(words));
                fprintf(out, ": %s; worst: ", words);
                outlier_figure(out, w);
                fputc('\n', out);
        }
        if (grouped)
                fputs("  (--json lists every figure in outliers[], --html folds them under each node)\n", out);
}

static void drift_text(FILE *out, const struct fleet *f) {
        if (f->n_drifts == 0)
                return;
        fprintf(out, "\nConfiguration:\n");
        for (size_t i = 0; i < f->n_drifts; i++) {
                const struct fleet_drift *d = &f->drifts[i];
                fprintf(out, "  %s%s", d->n_odd ? "drift " : "", d->attribute);
                if (d->model) {
                        fputs(" [", out);
                        safe(out, d->model);
                        fputc(']', out);
                }
                fprintf(out, ": %zu of %zu nodes ", d->n_majority, d->n_reporting);
                safe(out, d->majority);
                if (d->n_odd) {
                        fputs("; odd: ", out);
                        for (size_t k = 0; k < d->n_odd && k < TEXT_MAX_ODD; k++) {
                                fputs(k ? ", " : "", out);
                                safe(out, d->odd[k].node);
                                fputs(" (", out);
                                safe(out, d->odd[k].value);
                                fputc(')', out);
                        }
                        if (d->n_odd > TEXT_MAX_ODD)
                                fprintf(out, ", ... %zu more", d->n_odd - TEXT_MAX_ODD);
                }
                fputc('\n', out);
        }
}

static void skipped_text(FILE *out, const struct fleet *f) {
        if (f->n_skipped == 0)
                return;
        fprintf(out, "\nSkipped inputs (%zu):\n", f->n_skipped);
        for (size_t i = 0; i < f->n_skipped; i++) {
                fputs("  ", out);
                safe(out, f->skipped[i].path);
                fputs(": ", out);
                safe(out, f->skipped[i].reason);
                fputc('\n', out);
        }
}

void fleet_text(FILE *out, const struct fleet *f, const struct text_options *opt) {
        fprintf(out, "gpuvet fleet: %zu document%s from %zu node%s\n\n", f->n_docs, f->n_docs == 1 ? "" : "s",
                f->n_nodes, f->n_nodes == 1 ? "" : "s");
        nodes_text(out, f, opt);
        checks_text(out, f);
        metrics_text(out, f);
        outliers_text(out, f, opt);
        drift_text(out, f);
        skipped_text(out, f);
        static const char *const word[_STATUS_COUNT] = {
                [STATUS_PASS] = "PASS", [STATUS_WARN] = "WARN", [STATUS_FAIL] = "FAIL",
                [STATUS_SKIP] = "SKIP (no node read)", [STATUS_ERROR] = "ERROR"};
        char g[32];
        fprintf(out, "\nVerdict: %s %s — %zu node%s (%zu not passing), %zu outlier%s, %zu drifting, %zu input%s skipped (%.0f ms)\n",
                report_text_glyph(f->overall, opt, g, sizeof(g)), word[f->overall], f->n_nodes,
                f->n_nodes == 1 ? "" : "s",
                f->node_counts[STATUS_WARN] + f->node_counts[STATUS_FAIL] + f->node_counts[STATUS_ERROR],
                f->n_outliers, f->n_outliers == 1 ? "" : "s", f->n_drifting, f->n_skipped,
                f->n_skipped == 1 ? "" : "s", f->duration_ms);
}

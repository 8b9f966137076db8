#include "report/fleet_html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet.h"
#include "html/html_escape.h"
#include "html/html_page.h"
#include "html/svg_distribution.h"
#include "version.h"

/* A page for ten thousand nodes stays readable and small: tables of nodes stop here and
 * say how many more the JSON holds. */
#define HTML_MAX_ROWS 500
/* Check ids shown per failing node before "+N more". */
#define HTML_MAX_NODE_CHECKS 6

static const char *plural(size_t n) {
        return n == 1 ? "" : "s";
}

/* 4 significant digits, no exponent for the sizes benchmarks give (as the text output). */
static void figure(struct html_buf *b, double v) {
        double a = fabs(v);
        if (!isfinite(v))
                html_buf_puts(b, "\xE2\x80\x94");
        else
                html_buf_printf(b, a >= 1000 || a == 0 ? "%.0f" : a >= 100 ? "%.1f" : a >= 10 ? "%.2f" : "%.3g", v);
}

static void cell(struct html_buf *b, const char *text) {
        if (text)
                html_element(b, "td", NULL, text);
        else
                html_element(b, "td", "muted", "\xE2\x80\x94");
}

static void badge_cell(struct html_buf *b, enum status s) {
        html_buf_puts(b, "<td>");
        html_status_badge(b, s);
        html_buf_puts(b, "</td>");
}

static void more_rows(struct html_buf *b, size_t shown, size_t total, const char *what) {
        if (total > shown)
                html_buf_printf(b, "<p class=\"muted more\">%zu more %s: <code>gpuvet fleet --json</code> lists them all.</p>\n",
                                total - shown, what);
}

static void header(struct html_buf *b, const struct fleet *f) {
        const size_t *c = f->node_counts;
        html_buf_puts(b, "<header class=\"page\">\n<div><h1>");
        html_escapef(b, "gpuvet fleet: %zu node%s", f->n_nodes, plural(f->n_nodes));
        html_buf_printf(b, "</h1>\n<dl>\n<dt>Nodes</dt><dd id=\"node-counts\">%zu pass, %zu warn, %zu fail, %zu error",
                        c[STATUS_PASS], c[STATUS_WARN], c[STATUS_FAIL], c[STATUS_ERROR]);
        if (c[STATUS_SKIP])
                html_buf_printf(b, ", %zu skip", c[STATUS_SKIP]);
        html_buf_printf(b, "</dd>\n<dt>Reports</dt><dd>%zu read, %zu skipped</dd>\n<dt>Outlier rules</dt><dd>",
                        f->n_docs, f->n_skipped);
        html_escape(b, f->rules_source ? f->rules_source : "unknown");
        html_buf_puts(b, "</dd>\n<dt>gpuvet</dt><dd>");
        html_escape(b, GPUVET_VERSION);
        html_buf_printf(b, "</dd>\n</dl></div>\n<div class=\"verdict %s\" id=\"verdict\">%s %s<small>"
                           "%zu node%s not passing, %zu outlier%s, %zu drifting setting%s</small></div>\n</header>\n",
                        html_status_class(f->overall), html_status_mark(f->overall), status_name(f->overall),
                        c[STATUS_WARN] + c[STATUS_FAIL] + c[STATUS_ERROR],
                        plural(c[STATUS_WARN] + c[STATUS_FAIL] + c[STATUS_ERROR]), f->n_outliers,
                        plural(f->n_outliers), f->n_drifting, plural(f->n_drifting));
}

/* A node's checks that did not pass, each id once, in report order; a dash when its verdict
 * came from elsewhere (a benchmark's). */
static void node_checks(struct html_buf *b, const struct fleet_node *n) {
        const char *shown[HTML_MAX_NODE_CHECKS];
        size_t n_shown = 0, more = 0;
        for (size_t d = 0; d < n->n_docs; d++)
                for (size_t i = 0; i < n->docs[d]->n_checks; i++) {
                        const char *id = n->docs[d]->checks[i].id;
                        size_t k = 0;
                        while (k < n_shown && strcmp(shown[k], id))
                                k++;
                        if (k < n_shown)
                                continue;
                        if (n_shown < HTML_MAX_NODE_CHECKS) {
                                html_buf_puts(b, n_shown ? ", <code>" : "<code>");
                                html_escape(b, id);
                                html_buf_puts(b, "</code>");
                                shown[n_shown++] = id;
                        } else {
                                more++; /* an id past the cap may repeat: an upper bound is honest enough */
                        }
                }
        if (more)
                html_buf_printf(b, " +%zu more", more);
        if (n_shown == 0)
                html_buf_puts(b, "<span class=\"muted\">\xE2\x80\x94</span>");
}

static void failing_nodes(struct html_buf *b, const struct fleet *f) {
        size_t total = f->node_counts[STATUS_WARN] + f->node_counts[STATUS_FAIL] + f->node_counts[STATUS_ERROR];
        html_buf_puts(b, "<section id=\"failing-nodes\">\n");
        if (total == 0) {
                html_buf_puts(b, "<h2 class=\"st-pass\">\xE2\x9C\x93 Every node passes</h2>\n</section>\n");
                return;
        }
        html_buf_printf(b, "<h2>Nodes that did not pass (%zu)</h2>\n", total);
        static const char *const head[] = {"Node", "Verdict", "Checks not passed", "From"};
        html_table_begin(b, "nodes", head, 4);
        size_t shown = 0;
        /* Failures first, then errors, then warnings: the order a person acts on them. */
        static const enum status order[] = {STATUS_FAIL, STATUS_ERROR, STATUS_WARN};
        for (size_t o = 0; o < 3; o++)
                for (size_t i = 0; i < f->n_nodes && shown < HTML_MAX_ROWS; i++) {
                        const struct fleet_node *n = &f->nodes[i];
                        if (n->verdict != order[o])
                                continue;
                        html_buf_printf(b, "<tr data-node-status=\"%s\">", status_name(n->verdict));
                        cell(b, n->name);
                        badge_cell(b, n->verdict);
                        html_buf_puts(b, "<td>");
                        node_checks(b, n);
                        html_buf_puts(b, "</td>");
                        cell(b, n->verdict_doc);
                        html_buf_puts(b, "</tr>\n");
                        shown++;
                }
        html_table_end(b);
        more_rows(b, shown, total, "nodes");
        html_buf_puts(b, "</section>\n");
}

static void checks(struct html_buf *b, const struct fleet *f) {
        if (f->n_checks == 0)
                return;
        html_buf_printf(b, "<section id=\"checks\">\n<h2>Checks that did not pass, by nodes affected (%zu)</h2>\n",
                        f->n_checks);
        static const char *const head[] = {"Check", "Nodes", "Fail", "Warn", "Error", "For example"};
        html_table_begin(b, "checks", head, 6);
        for (size_t i = 0; i < f->n_checks && i < HTML_MAX_ROWS; i++) {
                const struct fleet_check_count *c = &f->checks[i];
                html_buf_puts(b, "<tr><td><code>");
                html_escape(b, c->id);
                html_buf_printf(b, "</code></td><td>%zu</td><td>%zu</td><td>%zu</td><td>%zu</td><td>", c->nodes_total,
                                c->nodes[STATUS_FAIL], c->nodes[STATUS_WARN], c->nodes[STATUS_ERROR]);
                for (size_t k = 0; k < c->n_sample; k++) {
                        html_buf_puts(b, k ? ", " : "");
                        html_escape(b, c->sample[k]);
                }
                html_buf_puts(b, c->nodes_total > c->n_sample ? ", \xE2\x80\xA6</td></tr>\n" : "</td></tr>\n");
        }
        html_table_end(b);
        more_rows(b, f->n_checks < HTML_MAX_ROWS ? f->n_checks : HTML_MAX_ROWS, f->n_checks, "checks");
        html_buf_puts(b, "</section>\n");
}

static void outlier_rule(struct html_buf *b, const struct fleet_outlier *o) {
        if (o->rule == FLEET_RULE_VARIANCE) {
                html_buf_printf(b, "%.1f%% %s the median", fabs(o->deviation_pct), o->deviation_pct < 0 ? "below" : "above");
                if (o->mads > 0)
                        html_buf_printf(b, ", %.1f MADs", o->mads);
        } else {
                html_buf_puts(b, o->rule == FLEET_RULE_VALUE_MIN ? "below the rule's floor" : "above the rule's ceiling");
        }
        html_buf_puts(b, " (rule <code>");
        html_escape(b, o->rule_pattern);
        html_buf_puts(b, "</code>)");
}

static void outlier_row(struct html_buf *b, const struct fleet_outlier *o) {
        html_buf_printf(b, "<tr data-outlier-status=\"%s\">", status_name(o->status));
        badge_cell(b, o->status);
        cell(b, o->node);
        html_buf_puts(b, "<td><code>");
        html_escape(b, o->metric);
        html_buf_puts(b, "</code></td>");
        cell(b, o->subject);
        cell(b, o->model);
        html_buf_puts(b, "<td class=\"num\">");
        figure(b, o->value);
        html_buf_puts(b, " ");
        html_escape(b, o->unit);
        html_buf_puts(b, "</td><td class=\"num\">");
        figure(b, o->median);
        html_buf_puts(b, "</td><td>");
        outlier_rule(b, o);
        html_buf_puts(b, "</td></tr>\n");
}

/* What a group's line says of its worst figure: "memory/triad on gpu2 (…): 1374 GB/s, median 1990". */
static void outlier_worst(struct html_buf *b, const struct fleet_outlier *o) {
        html_buf_puts(b, "<code>");
        html_escape(b, o->metric);
        html_buf_puts(b, "</code> on ");
        html_escape(b, o->subject);
        html_buf_puts(b, ": ");
        figure(b, o->value);
        html_buf_puts(b, " ");
        html_escape(b, o->unit);
        html_buf_puts(b, ", median ");
        figure(b, o->median);
        html_buf_puts(b, ", ");
        outlier_rule(b, o);
}

/* One finding per node and side of the median, its figures folded beneath it: one slow node
 * is one line, not a page of rows. */
static void outliers(struct html_buf *b, const struct fleet *f) {
        if (f->n_outliers == 0)
                return;
        size_t nodes = 0;
        for (size_t i = 0; i < f->n_outlier_groups; i++) {
                size_t k = 0;
                while (k < i && strcmp(f->outlier_groups[k].node, f->outlier_groups[i].node))
                        k++;
                nodes += k == i;
        }
        html_buf_printf(b, "<section id=\"outliers\">\n<h2 class=\"st-warn\">Outliers against their GPU model's median "
                           "(%zu figure%s on %zu node%s)</h2>\n",
                        f->n_outliers, plural(f->n_outliers), nodes, plural(nodes));
        static const char *const head[] = {"Status", "Node", "Figure", "Of", "GPU model", "Value", "Median", "Why"};
        size_t shown = 0;
        for (size_t i = 0; i < f->n_outlier_groups && shown < HTML_MAX_ROWS; i++) {
                const struct fleet_outlier_group *g = &f->outlier_groups[i];
                const struct fleet_outlier *w = &f->outliers[g->worst];
                html_buf_printf(b, "<div class=\"outlier-group\" data-group-status=\"%s\" data-figures=\"%zu\">\n<p>",
                                status_name(g->status), g->n);
                html_status_badge(b, g->status);
                html_buf_puts(b, " <strong>");
                html_escape(b, g->node);
                html_buf_puts(b, "</strong>: ");
                if (g->n == 1) {
                        outlier_worst(b, w);
                } else {
                        html_buf_printf(b, "%zu figures ", g->n);
                        if (round(g->least_pct) == round(g->most_pct))
                                html_buf_printf(b, "%.0f%%", g->most_pct);
                        else
                                html_buf_printf(b, "%.0f\xE2\x80\x93%.0f%%", g->least_pct, g->most_pct);
                        html_buf_printf(b, " %s the median (%zu fail, %zu warn); worst: ", g->below ? "below" : "above",
                                        g->n_fail, g->n - g->n_fail);
                        outlier_worst(b, w);
                }
                html_buf_puts(b, "</p>\n");
                if (g->n == 1)
                        html_buf_puts(b, "<details><summary>The figure</summary>\n");
                else
                        html_buf_printf(b, "<details><summary>Its %zu figures</summary>\n", g->n);
                html_table_begin(b, "outliers", head, 8);
                for (int pass = 0; pass < 2; pass++) /* failing figures first */
                        for (size_t k = 0; k < g->n && shown < HTML_MAX_ROWS; k++) {
                                const struct fleet_outlier *o = &f->outliers[g->members[k]];
                                if ((pass == 0) != (o->status == STATUS_FAIL))
                                        continue;
                                outlier_row(b, o);
                                shown++;
                        }
                html_table_end(b);
                html_buf_puts(b, "</details>\n</div>\n");
        }
        more_rows(b, shown, f->n_outliers, "outliers");
        html_buf_puts(b, "</section>\n");
}

static void drift_name(struct html_buf *b, const struct fleet_drift *d) {
        html_escape(b, d->attribute);
        if (d->model) {
                html_buf_puts(b, " (");
                html_escape(b, d->model);
                html_buf_puts(b, ")");
        }
}

static void drift(struct html_buf *b, const struct fleet *f) {
        if (f->n_drifts == 0)
                return;
        html_buf_puts(b, "<section id=\"drift\">\n");
        if (f->n_drifting) {
                html_buf_printf(b, "<h2 class=\"st-warn\">Configuration drift (%zu)</h2>\n", f->n_drifting);
                static const char *const head[] = {"Setting", "Most nodes", "Nodes that differ"};
                html_table_begin(b, "drift", head, 3);
                for (size_t i = 0; i < f->n_drifts; i++) {
                        const struct fleet_drift *d = &f->drifts[i];
                        if (d->n_odd == 0)
                                continue;
                        html_buf_puts(b, "<tr><td>");
                        drift_name(b, d);
                        html_buf_puts(b, "</td><td><code>");
                        html_escape(b, d->majority);
                        html_buf_printf(b, "</code> on %zu of %zu</td><td>", d->n_majority, d->n_reporting);
                        for (size_t k = 0; k < d->n_odd && k < HTML_MAX_ROWS; k++) {
                                html_buf_puts(b, k ? ", " : "");
                                html_escape(b, d->odd[k].node);
                                html_buf_puts(b, ": <code>");
                                html_escape(b, d->odd[k].value);
                                html_buf_puts(b, "</code>");
                        }
                        if (d->n_odd > HTML_MAX_ROWS)
                                html_buf_printf(b, ", and %zu more", d->n_odd - HTML_MAX_ROWS);
                        html_buf_puts(b, "</td></tr>\n");
                }
                html_table_end(b);
        } else {
                html_buf_puts(b, "<h2 class=\"st-pass\">\xE2\x9C\x93 No configuration drift</h2>\n");
        }
        size_t same = 0;
        for (size_t i = 0; i < f->n_drifts; i++) {
                const struct fleet_drift *d = &f->drifts[i];
                if (d->n_odd)
                        continue;
                html_buf_puts(b, same++ ? "; " : "<p class=\"muted\" id=\"same-everywhere\">The same on every node reporting it: ");
                drift_name(b, d);
                html_buf_puts(b, " <code>");
                html_escape(b, d->majority);
                html_buf_printf(b, "</code> (%zu node%s)", d->n_reporting, plural(d->n_reporting));
        }
        if (same)
                html_buf_puts(b, ".</p>\n");
        html_buf_puts(b, "</section>\n");
}

/* One chart per figure and unit, one row per GPU model, then the statistics as a table. */
static void distribution_chart(struct html_buf *b, const struct fleet_distribution *dists, size_t n_groups) {
        const struct fleet_distribution *d0 = &dists[0];
        struct svg_group *groups = calloc(n_groups, sizeof(*groups));
        if (!groups) {
                b->failed = true;
                return;
        }
        bool drawable = true;
        for (size_t g = 0; g < n_groups; g++) {
                const struct fleet_distribution *d = &dists[g];
                groups[g] = (struct svg_group){d->model, d->values, d->value_nodes, d->values ? d->stats.n : 0};
                drawable = drawable && d->values;
        }
        html_buf_puts(b, "<div class=\"distribution\" data-metric=\"");
        html_escape(b, d0->metric);
        html_buf_puts(b, "\">\n");
        if (drawable) {
                char title[256];
                snprintf(title, sizeof(title), "%s%s", d0->metric,
                         d0->direction == FLEET_HIGHER_BETTER  ? " (higher is better)"
                         : d0->direction == FLEET_LOWER_BETTER ? " (lower is better)"
                                                               : "");
                svg_distribution(b, title, d0->unit[0] ? d0->unit : NULL, groups, n_groups);
        }
        static const char *const head[] = {"GPU model", "n", "min", "p10", "median", "p90", "max", "mean", "stddev"};
        html_table_begin(b, "stats", head, 9);
        for (size_t g = 0; g < n_groups; g++) {
                const struct fleet_stats *s = &dists[g].stats;
                const double v[] = {s->min, s->p10, s->median, s->p90, s->max, s->mean, s->stddev};
                html_buf_puts(b, "<tr>");
                cell(b, dists[g].model);
                html_buf_printf(b, "<td class=\"num\">%zu</td>", s->n);
                for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
                        html_buf_puts(b, "<td class=\"num\">");
                        figure(b, v[k]);
                        html_buf_puts(b, "</td>");
                }
                html_buf_puts(b, "</tr>\n");
        }
        html_table_end(b);
        html_buf_puts(b, "</div>\n");
        free(groups);
}

static bool same_figure(const struct fleet_distribution *a, const struct fleet_distribution *b) {
        return strcmp(a->metric, b->metric) == 0 && strcmp(a->unit, b->unit) == 0;
}

static void distributions(struct html_buf *b, const struct fleet *f) {
        if (f->n_dists == 0)
                return;
        html_buf_puts(b, "<section id=\"distributions\">\n<h2>Benchmarks per GPU model</h2>\n"
                         "<p class=\"muted\">Per GPU where the figure is about one GPU, else per node. The box spans "
                         "the middle half of the values, the whiskers reach the furthest within 1.5 box lengths, and "
                         "values past them are marked \xE2\x97\x86 with their node's name. Outliers by the fleet's "
                         "rules are in the table above.</p>\n");
        /* The distributions are sorted by figure, then model, then unit: a figure's models
         * can interleave units, so each (figure, unit) gathers its models first. */
        bool *done = calloc(f->n_dists, sizeof(*done));
        struct fleet_distribution *group = malloc(f->n_dists * sizeof(*group));
        if (!done || !group) {
                free(done);
                free(group);
                b->failed = true;
                return;
        }
        for (size_t i = 0; i < f->n_dists; i++) {
                if (done[i])
                        continue;
                size_t n = 0;
                for (size_t k = i; k < f->n_dists && strcmp(f->dists[k].metric, f->dists[i].metric) == 0; k++)
                        if (!done[k] && same_figure(&f->dists[k], &f->dists[i])) {
                                done[k] = true;
                                group[n++] = f->dists[k];
                        }
                distribution_chart(b, group, n);
        }
        free(done);
        free(group);
        html_buf_puts(b, "</section>\n");
}

static void skipped(struct html_buf *b, const struct fleet *f) {
        if (f->n_skipped == 0)
                return;
        html_buf_printf(b, "<section id=\"skipped\">\n<h2 class=\"st-warn\">\xE2\x9A\xA0 Inputs skipped (%zu)</h2>\n",
                        f->n_skipped);
        static const char *const head[] = {"Input", "Why"};
        html_table_begin(b, "skipped", head, 2);
        for (size_t i = 0; i < f->n_skipped && i < HTML_MAX_ROWS; i++) {
                const char *row[] = {f->skipped[i].path, f->skipped[i].reason};
                html_table_row(b, row, 2);
        }
        html_table_end(b);
        more_rows(b, f->n_skipped < HTML_MAX_ROWS ? f->n_skipped : HTML_MAX_ROWS, f->n_skipped, "inputs");
        html_buf_puts(b, "</section>\n");
}

static void all_nodes(struct html_buf *b, const struct fleet *f) {
        html_buf_printf(b, "<section id=\"all-nodes\">\n<details><summary>Every node (%zu)</summary>\n", f->n_nodes);
        static const char *const head[] = {"Node", "Verdict", "Driver", "CUDA", "Kernel", "Reports"};
        html_table_begin(b, "nodes", head, 6);
        size_t shown = 0;
        for (; shown < f->n_nodes && shown < HTML_MAX_ROWS * 4; shown++) {
                const struct fleet_node *n = &f->nodes[shown];
                html_buf_puts(b, "<tr>");
                cell(b, n->name);
                badge_cell(b, n->verdict);
                cell(b, n->driver_version);
                cell(b, n->cuda_version);
                cell(b, n->kernel_release);
                html_buf_printf(b, "<td class=\"num\">%zu</td></tr>\n", n->n_docs);
        }
        html_table_end(b);
        more_rows(b, shown, f->n_nodes, "nodes");
        html_buf_puts(b, "</details>\n</section>\n");
}

char *fleet_html(const struct fleet *f, size_t *ret_len) {
        struct html_buf b = {0};
        char title[128];
        snprintf(title, sizeof(title), "gpuvet fleet: %zu node%s", f->n_nodes, plural(f->n_nodes));
        html_page_begin(&b, title);
        header(&b, f);
        failing_nodes(&b, f);
        checks(&b, f);
        outliers(&b, f);
        drift(&b, f);
        distributions(&b, f);
        skipped(&b, f);
        all_nodes(&b, f);
        html_buf_puts(&b, "<footer>Written by gpuvet ");
        html_escape(&b, GPUVET_VERSION);
        html_buf_puts(&b, " (gpuvet fleet --html). Statuses: \xE2\x9C\x93 pass, \xE2\x9A\xA0 warn, \xE2\x9C\x97 fail, "
                          "! error, - skip.</footer>\n");
        html_page_end(&b);
        return html_buf_take(&b, ret_len);
}

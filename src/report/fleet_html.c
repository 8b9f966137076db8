#include "report/fleet_html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "fleet/fleet.h"
#include "html/html_escape.h"
#include "html/html_page.h"
#include "html/svg_distribution.h"
#include "report/fleet_group_words.h"
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

/* A node's name, and what its reports call it when that differs (the play's inventory name
 * and the machine's hostname). */
static void node_cell(struct html_buf *b, const struct fleet_node *n) {
        html_buf_puts(b, "<td>");
        html_escape(b, n->name);
        if (n->hostname) {
                html_buf_puts(b, " <span class=\"muted\">(host ");
                html_escape(b, n->hostname);
                html_buf_puts(b, ")</span>");
        }
        html_buf_puts(b, "</td>");
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

static void href_component(struct html_buf *b, const char *s, size_t len) {
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)s[i];
                if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("-._~", c))
                        html_buf_printf(b, "%c", c);
                else
                        html_buf_printf(b, "%%%02X", c);
        }
}

void fleet_html_href(struct html_buf *b, const char *from_dir, const char *to) {
        const char *t = to;
        if (from_dir) {
                /* Past the components both paths share, "../" for each left in from_dir. */
                const char *d = from_dir;
                for (;;) {
                        while (*d == '/')
                                d++;
                        while (*t == '/')
                                t++;
                        size_t dl = strcspn(d, "/"), tl = strcspn(t, "/");
                        if (dl == 0 || dl != tl || strncmp(d, t, dl) != 0 || t[tl] != '/')
                                break;
                        d += dl;
                        t += tl;
                }
                for (;;) {
                        while (*d == '/')
                                d++;
                        size_t dl = strcspn(d, "/");
                        if (dl == 0)
                                break;
                        html_buf_puts(b, "../");
                        d += dl;
                }
        }
        while (*t) {
                size_t len = strcspn(t, "/");
                href_component(b, t, len);
                t += len;
                if (*t == '/') {
                        html_buf_puts(b, "/");
                        while (*t == '/')
                                t++;
                }
        }
}

/* The document a node's verdict came from, a link when its own page sits beside it; else a
 * link to a page beside another of its documents. */
static void from_cell(struct html_buf *b, const struct fleet_node *n, const char *page_dir) {
        const struct fleet_doc *with_page = NULL, *verdict = NULL;
        for (size_t d = 0; d < n->n_docs; d++) {
                if (n->docs[d]->path == n->verdict_doc)
                        verdict = n->docs[d];
                if (!with_page && n->docs[d]->page)
                        with_page = n->docs[d];
        }
        if (verdict && verdict->page)
                with_page = verdict;
        html_buf_puts(b, "<td>");
        if (with_page == verdict && verdict) {
                html_buf_puts(b, "<a class=\"node-page\" href=\"");
                fleet_html_href(b, page_dir, verdict->page);
                html_buf_puts(b, "\">");
        }
        if (n->verdict_doc)
                html_escape(b, n->verdict_doc);
        else
                html_buf_puts(b, "<span class=\"muted\">\xE2\x80\x94</span>");
        if (with_page == verdict && verdict)
                html_buf_puts(b, "</a>");
        else if (with_page) {
                html_buf_puts(b, " (<a class=\"node-page\" href=\"");
                fleet_html_href(b, page_dir, with_page->page);
                html_buf_puts(b, "\">its page</a>)");
        }
        html_buf_puts(b, "</td>");
}

static void failing_nodes(struct html_buf *b, const struct fleet *f, const char *page_dir) {
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
                        node_cell(b, n);
                        badge_cell(b, n->verdict);
                        html_buf_puts(b, "<td>");
                        node_checks(b, n);
                        html_buf_puts(b, "</td>");
                        from_cell(b, n, page_dir);
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
                        char words[800]; /* room for any two figures printed in full */
                        fleet_group_words(g, "\xE2\x80\x93", words, sizeof(words));
                        html_buf_printf(b, "%s; worst: ", words);
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

/* A value's label beside its mark: the node and, for a figure about one of its GPUs, the GPU
 * ("node-03 gpu5"): two GPUs of a node with the same value are two marks, told apart. */
static char *value_label(const char *node, const char *subject) {
        size_t len = subject ? strcspn(subject, " (") : 0;
        if (len == 0 || (len == 4 && strncmp(subject, "host", 4) == 0))
                return strdup(node);
        size_t n = strlen(node) + 1 + len + 1;
        char *s = malloc(n);
        if (s)
                snprintf(s, n, "%s %.*s", node, (int)len, subject);
        return s;
}

static void free_labels(char **labels, size_t n) {
        if (!labels)
                return;
        for (size_t i = 0; i < n; i++)
                free(labels[i]);
        free(labels);
}

static char **value_labels(const struct fleet_distribution *d) {
        size_t n = d->stats.n;
        char **labels = calloc(n ? n : 1, sizeof(*labels));
        for (size_t i = 0; labels && i < n; i++)
                if (!(labels[i] = value_label(d->value_nodes[i], d->value_subjects ? d->value_subjects[i] : NULL))) {
                        free_labels(labels, i);
                        return NULL;
                }
        return labels;
}

/* One chart per figure and unit, one row per GPU model, then the statistics as a table. */
static void distribution_chart(struct html_buf *b, const struct fleet_distribution *dists, size_t n_groups,
                               size_t index) {
        const struct fleet_distribution *d0 = &dists[0];
        struct svg_group *groups = calloc(n_groups, sizeof(*groups));
        char ***labels = calloc(n_groups, sizeof(*labels));
        if (!groups || !labels) {
                free(groups);
                free(labels);
                b->failed = true;
                return;
        }
        bool drawable = true;
        for (size_t g = 0; g < n_groups && drawable; g++) {
                const struct fleet_distribution *d = &dists[g];
                if (d->values && !(labels[g] = value_labels(d)))
                        b->failed = true;
                groups[g] = (struct svg_group){d->model, d->values, (const char *const *)labels[g],
                                               d->values ? d->stats.n : 0};
                drawable = d->values && labels[g];
        }
        html_buf_printf(b, "<div class=\"distribution\" id=\"figure-%zu\" data-metric=\"", index);
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
                for (size_t k = 0; k < ARRAY_COUNT(v); k++) {
                        html_buf_puts(b, "<td class=\"num\">");
                        figure(b, v[k]);
                        html_buf_puts(b, "</td>");
                }
                html_buf_puts(b, "</tr>\n");
        }
        html_table_end(b);
        html_buf_puts(b, "</div>\n");
        for (size_t g = 0; g < n_groups; g++)
                free_labels(labels[g], dists[g].stats.n);
        free(labels);
        free(groups);
}

static bool same_figure(const struct fleet_distribution *a, const struct fleet_distribution *b) {
        return strcmp(a->metric, b->metric) == 0 && strcmp(a->unit, b->unit) == 0;
}

/* Outliers by the rules among a figure's values (any model). */
static size_t figure_outliers(const struct fleet *f, const struct fleet_distribution *d, enum status *worst) {
        size_t n = 0;
        *worst = STATUS_PASS;
        for (size_t i = 0; i < f->n_outliers; i++) {
                const struct fleet_outlier *o = &f->outliers[i];
                if (strcmp(o->metric, d->metric) || strcmp(o->unit, d->unit))
                        continue;
                n++;
                *worst = status_worse(*worst, o->status);
        }
        return n;
}

/* A link to each chart: a fleet's few dozen figures make a page thousands of pixels long. */
static void figures_toc(struct html_buf *b, const struct fleet *f, const struct fleet_distribution *const *firsts,
                        size_t n) {
        html_buf_printf(b, "<nav class=\"toc\" id=\"figures-toc\"><strong>Figures (%zu)</strong>\n<ol>\n", n);
        for (size_t i = 0; i < n; i++) {
                enum status worst;
                size_t outl = figure_outliers(f, firsts[i], &worst);
                html_buf_printf(b, "<li><a href=\"#figure-%zu\"><code>", i);
                html_escape(b, firsts[i]->metric);
                html_buf_puts(b, "</code></a>");
                if (firsts[i]->unit[0]) {
                        html_buf_puts(b, " <span class=\"muted\">");
                        html_escape(b, firsts[i]->unit);
                        html_buf_puts(b, "</span>");
                }
                if (outl)
                        html_buf_printf(b, " <span class=\"badge %s\">%s %zu outlier%s</span>", html_status_class(worst),
                                        html_status_mark(worst), outl, plural(outl));
                html_buf_puts(b, "</li>\n");
        }
        html_buf_puts(b, "</ol></nav>\n");
}

static void distributions(struct html_buf *b, const struct fleet *f) {
        if (f->n_dists == 0)
                return;
        html_buf_puts(b, "<section id=\"distributions\">\n<h2>Benchmarks per GPU model</h2>\n"
                         "<p class=\"muted\">Per GPU where the figure is about one GPU, else per node. The box spans "
                         "the middle half of the values, the whiskers reach the furthest within 1.5 box lengths, and "
                         "values past them are marked \xE2\x97\x86 with their node's name and GPU. Outliers by the fleet's "
                         "rules are in the table above.</p>\n");
        /* The distributions are sorted by figure, then model, then unit: a figure's models
         * can interleave units, so each (figure, unit) gathers its models first. */
        bool *done = calloc(f->n_dists, sizeof(*done));
        size_t *order = malloc(f->n_dists * sizeof(*order));  /* distributions, chart by chart */
        size_t *starts = malloc(f->n_dists * sizeof(*starts)); /* each chart's first in order */
        const struct fleet_distribution **firsts = malloc(f->n_dists * sizeof(*firsts));
        struct fleet_distribution *group = malloc(f->n_dists * sizeof(*group));
        if (!done || !order || !starts || !firsts || !group) {
                free(done);
                free(order);
                free(starts);
                free(firsts);
                free(group);
                b->failed = true;
                return;
        }
        size_t n_order = 0, n_charts = 0;
        for (size_t i = 0; i < f->n_dists; i++) {
                if (done[i])
                        continue;
                starts[n_charts] = n_order;
                firsts[n_charts++] = &f->dists[i];
                for (size_t k = i; k < f->n_dists && strcmp(f->dists[k].metric, f->dists[i].metric) == 0; k++)
                        if (!done[k] && same_figure(&f->dists[k], &f->dists[i])) {
                                done[k] = true;
                                order[n_order++] = k;
                        }
        }
        figures_toc(b, f, firsts, n_charts);
        for (size_t c = 0; c < n_charts; c++) {
                size_t end = c + 1 < n_charts ? starts[c + 1] : n_order, n = 0;
                for (size_t k = starts[c]; k < end; k++)
                        group[n++] = f->dists[order[k]];
                distribution_chart(b, group, n, c);
        }
        free(done);
        free(order);
        free(starts);
        free(firsts);
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
                node_cell(b, n);
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

char *fleet_html(const struct fleet *f, const char *page_dir, size_t *ret_len) {
        struct html_buf b = {0};
        char title[128];
        snprintf(title, sizeof(title), "gpuvet fleet: %zu node%s", f->n_nodes, plural(f->n_nodes));
        html_page_begin(&b, title);
        header(&b, f);
        failing_nodes(&b, f, page_dir);
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

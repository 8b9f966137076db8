#include "html/svg_distribution.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html/html_escape.h"
#include "html/svg_draw.h"

#define WIDTH 960.0
#define LABEL_W 220.0
#define TEXT_W 150.0 /* n and the median, right of the plot */
#define ROW_H 44.0
#define BOX_H 18.0
#define TOP 34.0
#define AXIS_H 40.0

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

static double quantile(const double *sorted, size_t n, double q) {
        double pos = q * (double)(n - 1);
        size_t i = (size_t)floor(pos);
        double frac = pos - (double)i;
        return i + 1 < n ? sorted[i] + frac * (sorted[i + 1] - sorted[i]) : sorted[i];
}

long svg_box_stats(const double *v, size_t n, struct svg_box *ret) {
        memset(ret, 0, sizeof(*ret));
        double *s = malloc((n ? n : 1) * sizeof(*s));
        if (!s)
                return -1;
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
                if (isfinite(v[i]))
                        s[m++] = v[i];
        if (m) {
                qsort(s, m, sizeof(*s), cmp_double);
                ret->n = m;
                ret->q1 = quantile(s, m, 0.25);
                ret->median = quantile(s, m, 0.5);
                ret->q3 = quantile(s, m, 0.75);
                double iqr = ret->q3 - ret->q1;
                ret->low_fence = ret->q1 - 1.5 * iqr;
                ret->high_fence = ret->q3 + 1.5 * iqr;
                ret->whisker_low = ret->q1;
                ret->whisker_high = ret->q3;
                for (size_t i = 0; i < m; i++) {
                        if (s[i] >= ret->low_fence && s[i] < ret->whisker_low)
                                ret->whisker_low = s[i];
                        if (s[i] <= ret->high_fence && s[i] > ret->whisker_high)
                                ret->whisker_high = s[i];
                }
        }
        free(s);
        return (long)m;
}

static bool outlier(const struct svg_box *box, double v) { return v < box->low_fence || v > box->high_fence; }

static void group_row(struct html_buf *b, const struct svg_group *g, const struct svg_axis *axis, double y) {
        double x0 = LABEL_W, x1 = WIDTH - TEXT_W, mid = y + ROW_H / 2;
        struct svg_box box;
        long count = svg_box_stats(g->values, g->n, &box);
        if (count < 0) {
                b->failed = true;
                return;
        }
        size_t outliers = 0;
        for (size_t i = 0; i < g->n; i++)
                outliers += isfinite(g->values[i]) && outlier(&box, g->values[i]);
        html_buf_printf(b, "<g class=\"group\" data-values=\"%ld\" data-outliers=\"%zu\">\n", count, outliers);
        svg_text(b, LABEL_W - 8, mid + 4, "end", NULL, g->label, LABEL_W - 12, SVG_FONT_PX);
        char side[96];
        if (count) {
                double xl = svg_axis_map(axis, box.whisker_low, x0, x1), xh = svg_axis_map(axis, box.whisker_high, x0, x1);
                double xq1 = svg_axis_map(axis, box.q1, x0, x1), xq3 = svg_axis_map(axis, box.q3, x0, x1);
                double xm = svg_axis_map(axis, box.median, x0, x1);
                html_buf_printf(b, "<line class=\"whisker\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", xl, mid,
                                xh, mid);
                html_buf_printf(b, "<line class=\"whisker\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", xl,
                                mid - 5, xl, mid + 5);
                html_buf_printf(b, "<line class=\"whisker\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", xh,
                                mid - 5, xh, mid + 5);
                html_buf_printf(b, "<rect class=\"box\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n", xq1,
                                mid - BOX_H / 2, xq3 - xq1 > 1 ? xq3 - xq1 : 1, BOX_H);
                html_buf_printf(b, "<line class=\"median\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", xm,
                                mid - BOX_H / 2, xm, mid + BOX_H / 2);
                char median[48];
                snprintf(side, sizeof(side), "n=%ld, median %s", count, svg_format_value(box.median, median, sizeof(median)));
        } else {
                snprintf(side, sizeof(side), "n=0, no value");
        }
        /* Every value as a dot, spread over the row by its index so that equal values do not
         * hide one another; outliers as diamonds with their name, alternately above and
         * below the box so that two close ones do not overwrite each other. */
        size_t nth_outlier = 0;
        for (size_t i = 0; i < g->n; i++) {
                double v = g->values[i];
                if (!isfinite(v))
                        continue;
                double x = svg_axis_map(axis, v, x0, x1);
                if (!outlier(&box, v)) {
                        double dy = (double)((i * 7) % 9) * 1.6 - 6.4;
                        html_buf_printf(b, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\"/>\n", x, mid + dy);
                        continue;
                }
                html_buf_printf(b, "<path class=\"outlier\" d=\"M%.1f %.1fl6 6l-6 6l-6 -6z\"><title>", x, mid - 6);
                const char *name = g->value_labels ? g->value_labels[i] : NULL;
                char label[300];
                char value[48];
                svg_format_value(v, value, sizeof(value));
                if (name)
                        snprintf(label, sizeof(label), "%s: %s", name, value);
                else
                        snprintf(label, sizeof(label), "%s", value);
                html_escape(b, label);
                html_buf_puts(b, "</title></path>\n");
                double ty = nth_outlier++ % 2 ? mid + BOX_H / 2 + 13 : mid - BOX_H / 2 - 6;
                /* Near the right edge the label ends at the mark instead of starting there. */
                bool right = x > (x0 + x1) / 2;
                svg_text(b, right ? x - 8 : x + 8, ty, right ? "end" : "start", "outlier-label", label,
                         right ? x - x0 : x1 - x, SVG_TICK_FONT_PX);
        }
        svg_text(b, x1 + 10, mid + 4, "start", "tick", side, TEXT_W - 12, SVG_TICK_FONT_PX);
        html_buf_puts(b, "</g>\n");
}

void svg_distribution(struct html_buf *b, const char *title, const char *unit, const struct svg_group *groups,
                      size_t n_groups) {
        if (n_groups == 0)
                return;
        double lo = 0, hi = 1;
        size_t seen = 0;
        for (size_t k = 0; k < n_groups; k++) {
                double l, h;
                if (!svg_finite_range(groups[k].values, groups[k].n, &l, &h))
                        continue;
                lo = seen == 0 || l < lo ? l : lo;
                hi = seen == 0 || h > hi ? h : hi;
                seen++;
        }
        struct svg_axis axis;
        svg_axis_nice(lo, hi, 8, &axis);
        double y_axis = TOP + (double)n_groups * ROW_H;
        svg_begin(b, "distribution", WIDTH, y_axis + AXIS_H, title);
        svg_value_axis_x(b, &axis, LABEL_W, WIDTH - TEXT_W, y_axis, TOP, unit);
        for (size_t k = 0; k < n_groups; k++)
                group_row(b, &groups[k], &axis, TOP + (double)k * ROW_H);
        svg_end(b);
}

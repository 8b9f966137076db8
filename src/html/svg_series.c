#include "html/svg_series.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "html/html_escape.h"
#include "html/svg_draw.h"

#define WIDTH 960.0
#define HEIGHT 300.0
#define LEFT 64.0
#define RIGHT 230.0 /* the legend's column */
#define TOP 40.0
#define BOTTOM 48.0
#define N_COLOURS 8
#define N_DASHES 4

static const char *const dashes[N_DASHES] = {"", "8 4", "2 3", "10 3 2 3"};

static bool point_ok(const struct svg_series *s, size_t i) { return isfinite(s->x[i]) && isfinite(s->y[i]); }

/* The finite range of one coordinate over every series' usable points. */
static size_t range(const struct svg_series *series, size_t n_series, bool use_x, double *lo, double *hi) {
        size_t count = 0;
        for (size_t k = 0; k < n_series; k++)
                for (size_t i = 0; i < series[k].n; i++) {
                        if (!point_ok(&series[k], i))
                                continue;
                        double v = use_x ? series[k].x[i] : series[k].y[i];
                        if (count == 0 || v < *lo)
                                *lo = v;
                        if (count == 0 || v > *hi)
                                *hi = v;
                        count++;
                }
        return count;
}

static size_t draw_series(struct html_buf *b, const struct svg_series *s, size_t k, const struct svg_axis *ax,
                          const struct svg_axis *ay) {
        double x0 = LEFT, x1 = WIDTH - RIGHT, y0 = HEIGHT - BOTTOM, y1 = TOP;
        size_t points = 0;
        for (size_t i = 0; i < s->n; i++)
                points += point_ok(s, i);
        html_buf_printf(b, "<path class=\"series k%zu\" data-points=\"%zu\"", k % N_COLOURS, points);
        if (*dashes[(k / N_COLOURS + k) % N_DASHES])
                html_buf_printf(b, " stroke-dasharray=\"%s\"", dashes[(k / N_COLOURS + k) % N_DASHES]);
        html_buf_puts(b, " d=\"");
        bool pen_down = false;
        for (size_t i = 0; i < s->n; i++) {
                if (!point_ok(s, i)) {
                        pen_down = false;
                        continue;
                }
                html_buf_printf(b, "%s%.1f %.1f ", pen_down ? "L" : "M", svg_axis_map(ax, s->x[i], x0, x1),
                                svg_axis_map(ay, s->y[i], y0, y1));
                pen_down = true;
        }
        html_buf_puts(b, "\"><title>");
        html_escape(b, s->name);
        html_buf_puts(b, "</title></path>\n");
        /* A point with no neighbour draws no line: a dot shows it. */
        for (size_t i = 0; i < s->n; i++) {
                bool before = i > 0 && point_ok(s, i - 1), after = i + 1 < s->n && point_ok(s, i + 1);
                if (point_ok(s, i) && !before && !after)
                        html_buf_printf(b, "<circle class=\"k%zu\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"/>\n", k % N_COLOURS,
                                        svg_axis_map(ax, s->x[i], x0, x1), svg_axis_map(ay, s->y[i], y0, y1));
        }
        return points;
}

static void legend_entry(struct html_buf *b, const struct svg_series *s, size_t k, size_t points, double y) {
        double x = WIDTH - RIGHT + 16;
        html_buf_printf(b, "<line class=\"series k%zu\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"", k % N_COLOURS, x,
                        y - 4, x + 26, y - 4);
        if (*dashes[(k / N_COLOURS + k) % N_DASHES])
                html_buf_printf(b, " stroke-dasharray=\"%s\"", dashes[(k / N_COLOURS + k) % N_DASHES]);
        html_buf_puts(b, "/>\n");
        char name[300];
        snprintf(name, sizeof(name), "%s%s", s->name ? s->name : "", points ? "" : " (no data)");
        svg_text(b, x + 32, y, "start", NULL, name, RIGHT - 50, SVG_FONT_PX);
}

static void draw_limit(struct html_buf *b, const struct svg_limit *l, const struct svg_axis *ay, size_t nth) {
        double x0 = LEFT, x1 = WIDTH - RIGHT, y = svg_axis_map(ay, l->y, HEIGHT - BOTTOM, TOP);
        html_buf_printf(b, "<line class=\"limit\" data-limit=\"%g\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"><title>",
                        l->y, x0, y, x1, y);
        html_escape(b, l->label);
        html_buf_puts(b, "</title></line>\n");
        /* Right-aligned above the line; a second limit's label on the left, so two close
         * limits do not write over each other. */
        bool right = nth % 2 == 0;
        svg_text(b, right ? x1 - 4 : x0 + 4, y - 4, right ? "end" : "start", "limit-label", l->label, (x1 - x0) / 2 - 8,
                 SVG_TICK_FONT_PX);
}

void svg_series_chart(struct html_buf *b, const char *title, const char *x_unit, const char *y_unit,
                      const struct svg_series *series, size_t n_series) {
        svg_series_chart_limits(b, title, x_unit, y_unit, series, n_series, NULL, 0);
}

void svg_series_chart_limits(struct html_buf *b, const char *title, const char *x_unit, const char *y_unit,
                             const struct svg_series *series, size_t n_series, const struct svg_limit *limits,
                             size_t n_limits) {
        if (n_series == 0)
                return;
        double xlo = 0, xhi = 1, ylo = 0, yhi = 1;
        range(series, n_series, true, &xlo, &xhi);
        size_t finite_y = range(series, n_series, false, &ylo, &yhi);
        for (size_t i = 0; i < n_limits; i++) {
                if (!isfinite(limits[i].y))
                        continue;
                if (finite_y++ == 0)
                        ylo = yhi = limits[i].y;
                ylo = fmin(ylo, limits[i].y);
                yhi = fmax(yhi, limits[i].y);
        }
        if (ylo == yhi) {
                /* A level held all along: centred in a band around it, not an axis from 0. */
                double pad = fabs(ylo) * 0.05 > 1 ? fabs(ylo) * 0.05 : 1;
                ylo -= pad;
                yhi += pad;
        }
        struct svg_axis ax, ay;
        svg_axis_nice(xlo, xhi, 10, &ax);
        svg_axis_nice(ylo, yhi, 5, &ay);
        svg_begin(b, "series", WIDTH, HEIGHT, title);
        svg_value_axis_y(b, &ay, LEFT, HEIGHT - BOTTOM, TOP, WIDTH - RIGHT, y_unit);
        svg_value_axis_x(b, &ax, LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP, x_unit);
        /* The legend has room for rows entries; past that its last row counts the rest. */
        size_t rows = (size_t)((HEIGHT - TOP) / 18), shown = n_series > rows ? rows - 1 : n_series;
        for (size_t i = 0, nth = 0; i < n_limits; i++)
                if (isfinite(limits[i].y))
                        draw_limit(b, &limits[i], &ay, nth++);
        for (size_t k = 0; k < n_series; k++) {
                size_t points = draw_series(b, &series[k], k, &ax, &ay);
                if (k < shown)
                        legend_entry(b, &series[k], k, points, TOP + 8 + (double)k * 18);
        }
        if (shown < n_series) {
                char more[64];
                snprintf(more, sizeof(more), "and %zu more", n_series - shown);
                svg_text(b, WIDTH - RIGHT + 16, TOP + 8 + (double)shown * 18, "start", "tick", more, RIGHT - 20,
                         SVG_TICK_FONT_PX);
        }
        svg_end(b);
}

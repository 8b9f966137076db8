#include "html/svg_bars.h"

#include <math.h>
#include <stdio.h>

#include "html/html_escape.h"
#include "html/html_page.h"
#include "html/svg_draw.h"

#define WIDTH 960.0
#define LABEL_W 240.0 /* the row names' column */
#define TEXT_W 210.0  /* the figures' column, right of the plot */
#define ROW_H 28.0
#define BAR_H 14.0
#define TOP 34.0
#define AXIS_H 48.0

static double largest(const struct svg_bar *bars, size_t n) {
        double hi = 0;
        for (size_t i = 0; i < n; i++) {
                const double v[3] = {bars[i].value, bars[i].reference, bars[i].threshold};
                for (int k = 0; k < 3; k++)
                        if (isfinite(v[k]) && v[k] > hi)
                                hi = v[k];
        }
        return hi;
}

static void bar_row(struct html_buf *b, const struct svg_bar *bar, const struct svg_axis *axis, double y) {
        double x0 = LABEL_W, x1 = WIDTH - TEXT_W, mid = y + ROW_H / 2;
        const char *cls = html_status_class(bar->status);
        html_buf_printf(b, "<g class=\"row\" data-status=\"%s\">\n", status_name(bar->status));
        svg_text(b, LABEL_W - 8, mid + 4, "end", NULL, bar->label, LABEL_W - 12, SVG_FONT_PX);
        if (isfinite(bar->reference) && bar->reference > 0) {
                double xr = svg_axis_map(axis, bar->reference, x0, x1);
                html_buf_printf(b, "<rect class=\"track\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">"
                                   "<title>",
                                x0, mid - BAR_H / 2 - 3, xr - x0, BAR_H + 6);
                html_escape(b, bar->reference_name ? bar->reference_name : "reference");
                char ref[48];
                html_buf_printf(b, " %s</title></rect>\n", svg_format_value(bar->reference, ref, sizeof(ref)));
        }
        char text[160];
        if (isfinite(bar->value)) {
                double xv = svg_axis_map(axis, bar->value, x0, x1);
                html_buf_printf(b, "<rect class=\"bar %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n", cls,
                                x0, mid - BAR_H / 2, xv - x0 > 1 ? xv - x0 : 1, BAR_H);
                if (!bar->value_text)
                        svg_format_value(bar->value, text, sizeof(text));
        } else {
                snprintf(text, sizeof(text), "no figure");
        }
        if (isfinite(bar->threshold) && bar->threshold > 0) {
                double xt = svg_axis_map(axis, bar->threshold, x0, x1);
                html_buf_printf(b, "<line class=\"threshold\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\">"
                                   "<title>pass threshold %s</title></line>\n",
                                xt, mid - BAR_H / 2 - 5, xt, mid + BAR_H / 2 + 5,
                                svg_format_value(bar->threshold, text, sizeof(text)));
        }
        char told[200];
        snprintf(told, sizeof(told), "%s %s", html_status_mark(bar->status),
                 bar->value_text && isfinite(bar->value) ? bar->value_text : text);
        svg_text(b, x1 + 8, mid + 4, "start", cls, told, TEXT_W - 10, SVG_FONT_PX);
        html_buf_puts(b, "</g>\n");
}

void svg_bars(struct html_buf *b, const char *title, const char *unit, const struct svg_bar *bars, size_t n) {
        if (n == 0)
                return;
        struct svg_axis axis;
        svg_axis_nice(0, largest(bars, n), 8, &axis);
        double height = TOP + (double)n * ROW_H + AXIS_H;
        svg_begin(b, "bars", WIDTH, height, title);
        double y_axis = TOP + (double)n * ROW_H;
        svg_value_axis_x(b, &axis, LABEL_W, WIDTH - TEXT_W, y_axis, TOP, unit);
        for (size_t i = 0; i < n; i++)
                bar_row(b, &bars[i], &axis, TOP + (double)i * ROW_H);
        /* The legend, under the axis, says in words what the marks mean. */
        double y = y_axis + 36;
        html_buf_printf(b, "<g class=\"legend\"><rect class=\"track\" x=\"0\" y=\"%.1f\" width=\"18\" height=\"10\"/>\n",
                        y - 9);
        svg_text(b, 24, y, "start", "tick", "reference (baseline or peak)", 190, SVG_TICK_FONT_PX);
        html_buf_printf(b, "<line class=\"threshold\" x1=\"230\" y1=\"%.1f\" x2=\"230\" y2=\"%.1f\"/>\n", y - 11, y + 3);
        svg_text(b, 238, y, "start", "tick", "pass threshold", 120, SVG_TICK_FONT_PX);
        html_buf_puts(b, "</g>\n");
        svg_end(b);
}

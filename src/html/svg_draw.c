#include "html/svg_draw.h"

#include "html/html_escape.h"

void svg_begin(struct html_buf *b, const char *kind, double width, double height, const char *title) {
        html_buf_printf(b, "<figure><svg class=\"chart %s\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
                           "role=\"img\" aria-label=\"",
                        kind, width, height);
        html_escape(b, title);
        html_buf_puts(b, "\"><title>");
        html_escape(b, title);
        html_buf_puts(b, "</title>\n");
        svg_text(b, 0, 15, "start", "title", title, width, 14);
}

void svg_end(struct html_buf *b) { html_buf_puts(b, "</svg></figure>\n"); }

void svg_text(struct html_buf *b, double x, double y, const char *anchor, const char *cls, const char *text,
              double max_px, double font_px) {
        char fitted[512];
        bool cut = svg_text_fit(text, max_px, font_px, fitted, sizeof(fitted));
        html_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"", x, y, anchor);
        if (cls)
                html_buf_printf(b, " class=\"%s\"", cls);
        html_buf_puts(b, ">");
        html_escape(b, fitted);
        if (cut) {
                html_buf_puts(b, "<title>");
                html_escape(b, text);
                html_buf_puts(b, "</title>");
        }
        html_buf_puts(b, "</text>\n");
}

void svg_value_axis_x(struct html_buf *b, const struct svg_axis *a, double x0, double x1, double y, double y_top,
                      const char *unit) {
        html_buf_printf(b, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x0, y, x1, y);
        double room = a->n_ticks > 1 ? (x1 - x0) / (double)(a->n_ticks - 1) : x1 - x0;
        for (size_t i = 0; i < a->n_ticks; i++) {
                double v = svg_axis_tick(a, i), x = svg_axis_map(a, v, x0, x1);
                char label[64];
                svg_format_tick(v, a->step, label, sizeof(label));
                html_buf_printf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x, y_top,
                                x, y + 4);
                svg_text(b, x, y + 16, "middle", "tick", label, room, SVG_TICK_FONT_PX);
        }
        if (unit && *unit)
                svg_text(b, x1, y + 30, "end", "tick", unit, x1 - x0, SVG_TICK_FONT_PX);
}

void svg_value_axis_y(struct html_buf *b, const struct svg_axis *a, double x, double y0, double y1, double x_right,
                      const char *unit) {
        html_buf_printf(b, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x, y0, x, y1);
        for (size_t i = 0; i < a->n_ticks; i++) {
                double v = svg_axis_tick(a, i), y = svg_axis_map(a, v, y0, y1);
                char label[64];
                svg_format_tick(v, a->step, label, sizeof(label));
                html_buf_printf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x - 4, y,
                                x_right, y);
                svg_text(b, x - 6, y + 4, "end", "tick", label, x - 8, SVG_TICK_FONT_PX);
        }
        if (unit && *unit)
                svg_text(b, x, y1 - 8, "middle", "tick", unit, 2 * x, SVG_TICK_FONT_PX);
}

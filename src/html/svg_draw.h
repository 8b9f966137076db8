/* What the SVG charts share: the chart's frame (a <figure> holding one <svg class="chart">
 * with its title), text that is fitted to the room it has, and axes with round ticks. The
 * charts are inline SVG in the page, coloured by the page's stylesheet (html_page.c). */
#pragma once

#include "html/html_buf.h"
#include "html/svg_scale.h"

#define SVG_FONT_PX 12.0
#define SVG_TICK_FONT_PX 11.0

/* <figure><svg class="chart KIND" viewBox="0 0 width height" role="img"> with the title as
 * its accessible name and as a heading drawn at the top (20 px). kind is markup. */
void svg_begin(struct html_buf *b, const char *kind, double width, double height, const char *title);
void svg_end(struct html_buf *b);

/* text at (x, y), anchor "start", "middle" or "end", class cls (markup, may be NULL), cut
 * with an ellipsis to max_px (the whole in a <title>, shown on hover). */
void svg_text(struct html_buf *b, double x, double y, const char *anchor, const char *cls, const char *text,
              double max_px, double font_px);

/* A horizontal value axis at y from x0 (a->lo) to x1 (a->hi): grid lines up to y_top, tick
 * labels below, unit (may be NULL) at the right end under them. */
void svg_value_axis_x(struct html_buf *b, const struct svg_axis *a, double x0, double x1, double y, double y_top,
                      const char *unit);
/* A vertical value axis at x from y0 (a->lo, bottom) to y1 (a->hi, top): grid lines to
 * x_right, tick labels left of it, unit above it. */
void svg_value_axis_y(struct html_buf *b, const struct svg_axis *a, double x, double y0, double y1, double x_right,
                      const char *unit);

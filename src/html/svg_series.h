/* A line chart of several series over a shared x axis (time in a burn: per GPU temperature,
 * power, clocks), with round ticks and units on both axes. Series differ by colour and by
 * dash pattern, and a legend names each, so a grey print still tells them apart. Points
 * whose x or y is NaN or infinite are left out, and the line breaks there. */
#pragma once

#include <stddef.h>

#include "html/html_buf.h"

struct svg_series {
        const char *name; /* legend text, cut to fit */
        const double *x;  /* n values each */
        const double *y;
        size_t n;
};

/* One chart; x_unit and y_unit (may be NULL) label the axes. A series with no finite point
 * keeps its legend entry, marked "(no data)". Writes nothing when n_series is 0. */
void svg_series_chart(struct html_buf *b, const char *title, const char *x_unit, const char *y_unit,
                      const struct svg_series *series, size_t n_series);

/* A level a chart's reader compares the series with (a slowdown temperature, a power limit,
 * the clock floor a verdict used): a dashed horizontal line across the plot, labelled. */
struct svg_limit {
        const char *label; /* "slowdown 89 °C", cut to fit */
        double y;          /* a limit that is not finite is left out */
};

/* svg_series_chart with limits: the y axis reaches each limit, so the line shows how far the
 * series stayed from it. */
void svg_series_chart_limits(struct html_buf *b, const char *title, const char *x_unit, const char *y_unit,
                             const struct svg_series *series, size_t n_series, const struct svg_limit *limits,
                             size_t n_limits);

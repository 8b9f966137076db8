/* Horizontal bars: measured figures against their reference (a baseline or the theoretical
 * peak) with the pass threshold marked, one row per figure. Each bar is coloured by its
 * status and carries the status mark and the figure as text, so colour is never the only
 * sign. Used by the node report's bench section; any writer can call it with plain arrays. */
#pragma once

#include <stddef.h>

#include "core/result.h"
#include "html/html_buf.h"

struct svg_bar {
        const char *label;     /* the row's name, e.g. "GPU 0 0000:1b:00.0 triad"; cut to fit */
        double value;          /* the figure; NaN: none (the row says "no figure") */
        double reference;      /* the baseline or peak it is judged against; NaN: none */
        const char *reference_name; /* "baseline", "peak" (NULL: "reference") */
        double threshold;      /* where pass begins (at least, or at most when lower is better); NaN: none */
        enum status status;
        const char *value_text; /* the figure as told beside the bar, e.g. "2817 GB/s (94%)"; NULL: the value */
};

/* One chart of n bars sharing unit (may be NULL), the axis from 0 to the largest of the
 * values, references and thresholds. Writes nothing when n is 0. */
void svg_bars(struct html_buf *b, const char *title, const char *unit, const struct svg_bar *bars, size_t n);

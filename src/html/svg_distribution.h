/* A fleet's distribution: per group (a GPU model, a benchmark, a check's figure), a box
 * plot (quartiles, median, whiskers to the furthest values within 1.5 IQR) over a strip of
 * every value, with the outliers marked by a diamond and labelled (by their node's name when
 * the caller gives names, else by value), so a slow node stands out in print too. */
#pragma once

#include <stddef.h>

#include "html/html_buf.h"

struct svg_group {
        const char *label;               /* the row's name, cut to fit */
        const double *values;            /* n values; NaN and infinities are left out */
        const char *const *value_labels; /* NULL, or n names (e.g. hostnames) told beside outliers */
        size_t n;
};

/* Tukey's box of the finite values: quartiles by linear interpolation (R's type 7), the
 * fences 1.5 IQR beyond them, the whiskers at the furthest values inside the fences. */
struct svg_box {
        size_t n; /* finite values */
        double q1, median, q3;
        double low_fence, high_fence;
        double whisker_low, whisker_high;
};

/* The box of v[0..n). Returns the count of finite values (then *ret is filled; 0: *ret
 * is zeroed), or -1 when out of memory. */
long svg_box_stats(const double *v, size_t n, struct svg_box *ret);

/* One chart, unit (may be NULL) under the axis. Writes nothing when n_groups is 0. */
void svg_distribution(struct html_buf *b, const char *title, const char *unit, const struct svg_group *groups,
                      size_t n_groups);

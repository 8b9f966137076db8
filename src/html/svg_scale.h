/* The arithmetic under the SVG charts: round axis ticks, value -> pixel mapping, tick labels
 * and fitting text into a width. Pure functions, so the unit tests pin them down. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* An axis from lo to hi in steps of step: n_ticks ticks lo, lo + step, ..., hi. */
struct svg_axis {
        double lo, hi, step;
        size_t n_ticks;
};

/* The finite values of v[0..n) (NaN and infinities skipped): their count, with the smallest
 * and largest in *ret_min, *ret_max (left alone when the count is 0). */
size_t svg_finite_range(const double *v, size_t n, double *ret_min, double *ret_max);

/* Round ticks covering [min, max]: steps of 1, 2 or 5 times a power of ten, at most
 * max_intervals intervals (at least 1). A single value (min == max) gets an axis around it
 * (from 0 when it is positive), non-finite input the axis 0..1. */
void svg_axis_nice(double min, double max, unsigned max_intervals, struct svg_axis *ret);
/* Tick i (0-based) of the axis; computed from lo and step without accumulating error. */
double svg_axis_tick(const struct svg_axis *a, size_t i);
/* v's position between px_lo (at a->lo) and px_hi (at a->hi), clamped to that span; a
 * degenerate axis maps everything to px_lo. */
double svg_axis_map(const struct svg_axis *a, double v, double px_lo, double px_hi);

/* v with as many decimals as the step needs (step 0.25: 2; step 50: 0), thousands not
 * grouped, "-0" written "0"; into buf. Returns buf. */
const char *svg_format_tick(double v, double step, char *buf, size_t size);

/* A figure for a person: about 4 significant digits, never in exponent form between 1e-4
 * and 1e12 (49995 GFLOPS, not 5e+04), "-" for NaN; into buf. Returns buf. */
const char *svg_format_value(double v, char *buf, size_t size);

/* An estimate of s's width in pixels at font_px in DejaVu Sans (the page's font): its
 * average advance is about 0.6 em, wide glyphs (W, M, digits) and narrow ones balance. */
double svg_text_width(const char *s, double font_px);
/* s cut at a character boundary with "…" so that it fits max_px, into buf (always
 * terminated). Returns true when s was cut (the caller then gives the whole in a <title>). */
bool svg_text_fit(const char *s, double max_px, double font_px, char *buf, size_t size);

/* The widgets of gpuvet top as text (docs/top.md): a bar with its value inside and a
 * sparkline of the last samples. Plain ASCII, so a capture reads the same in any locale
 * and terminal; the curses screen and --once print the same characters. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* "[|||||      45%]" in exactly width columns (width >= 2; out holds width + 1 bytes):
 * frac (0..1, clamped) of the inside filled with '|', text right-aligned over the fill.
 * have false: the inside is text alone (a stale or lost reading: no fill pretends). */
void top_bar(char *out, size_t width, double frac, bool have, const char *text);

/* Sparkline levels, lowest first; a missing sample is ' '. */
#define TOP_SPARK_LEVELS "_.,:-=+*#"

#define TOP_HISTORY 128

/* The last readings of one figure, as fractions of its full scale. */
struct top_series {
        float v[TOP_HISTORY];
        bool have[TOP_HISTORY];
        unsigned int n;    /* pushed so far, up to TOP_HISTORY */
        unsigned int head; /* where the next one goes */
};

/* Add the newest reading (have false: this sample had none). frac is clamped to 0..1. */
void top_series_push(struct top_series *s, double frac, bool have);

/* A line chart of n series in height rows of width columns: out holds height rows of
 * width + 1 bytes, each NUL-terminated. The newest sample is the last column, one column a
 * sample back from it; a sample's row is its fraction of the height (the top row: the top
 * eighth when height is 8). Series i is drawn with marks[i], '*' where several fall in one
 * cell; a missing sample draws nothing, so a gap stays a gap. */
void top_chart(char *out, size_t width, size_t height, const struct top_series *const *series, const char *marks,
               size_t n);

/* The last width readings, oldest left, newest at the right end, padded on the left with
 * blanks while the history is shorter; out holds width + 1 bytes. */
void top_spark(char *out, size_t width, const struct top_series *s);

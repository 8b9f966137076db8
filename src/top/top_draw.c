/* Bars and sparklines as text (top_draw.h). */
#include "top/top_draw.h"

#include <string.h>

static double clamp01(double x) { return x != x || x < 0 ? 0 : x > 1 ? 1 : x; }

void top_bar(char *out, size_t width, double frac, bool have, const char *text) {
        if (width < 2) {
                if (width == 1)
                        out[0] = '[';
                out[width] = '\0';
                return;
        }
        size_t inside = width - 2;
        out[0] = '[';
        size_t fill = have ? (size_t)(clamp01(frac) * (double)inside + 0.5) : 0;
        for (size_t i = 0; i < inside; i++)
                out[1 + i] = i < fill ? '|' : ' ';
        size_t tl = text ? strlen(text) : 0;
        if (tl > inside) /* the value matters more than its tail: keep its start */
                tl = inside;
        if (tl)
                memcpy(out + 1 + inside - tl, text, tl);
        out[width - 1] = ']';
        out[width] = '\0';
}

void top_series_push(struct top_series *s, double frac, bool have) {
        s->v[s->head] = (float)clamp01(frac);
        s->have[s->head] = have;
        s->head = (s->head + 1) % TOP_HISTORY;
        if (s->n < TOP_HISTORY)
                s->n++;
}

void top_chart(char *out, size_t width, size_t height, const struct top_series *const *series, const char *marks,
               size_t n) {
        for (size_t r = 0; r < height; r++) {
                memset(out + r * (width + 1), ' ', width);
                out[r * (width + 1) + width] = '\0';
        }
        if (!height)
                return;
        for (size_t i = 0; i < n; i++) {
                const struct top_series *s = series[i];
                size_t shown = s->n < width ? s->n : width;
                for (size_t back = 0; back < shown; back++) {
                        size_t at = (s->head + TOP_HISTORY - 1 - back) % TOP_HISTORY;
                        if (!s->have[at])
                                continue;
                        size_t level = (size_t)(s->v[at] * (double)height);
                        size_t row = height - 1 - (level < height ? level : height - 1);
                        char *cell = out + row * (width + 1) + (width - 1 - back);
                        *cell = *cell == ' ' || *cell == marks[i] ? marks[i] : '*';
                }
        }
}

void top_spark(char *out, size_t width, const struct top_series *s) {
        static const char levels[] = TOP_SPARK_LEVELS;
        const size_t n_levels = sizeof(levels) - 1;
        size_t shown = s->n < width ? s->n : width;
        size_t pad = width - shown;
        memset(out, ' ', pad);
        for (size_t i = 0; i < shown; i++) {
                /* the (shown - i)th newest */
                size_t at = (s->head + TOP_HISTORY - (shown - i)) % TOP_HISTORY;
                if (!s->have[at]) {
                        out[pad + i] = ' ';
                        continue;
                }
                size_t level = (size_t)(s->v[at] * (double)(n_levels - 1) + 0.5);
                out[pad + i] = levels[level < n_levels ? level : n_levels - 1];
        }
        out[width] = '\0';
}

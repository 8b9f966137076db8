#include "html/svg_scale.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/utf8.h"

size_t svg_finite_range(const double *v, size_t n, double *ret_min, double *ret_max) {
        size_t count = 0;
        double lo = 0, hi = 0;
        for (size_t i = 0; i < n; i++) {
                if (!isfinite(v[i]))
                        continue;
                if (count == 0 || v[i] < lo)
                        lo = v[i];
                if (count == 0 || v[i] > hi)
                        hi = v[i];
                count++;
        }
        if (count) {
                *ret_min = lo;
                *ret_max = hi;
        }
        return count;
}

/* The smallest of 1, 2, 5 x 10^k at least raw. */
static double nice_step(double raw) {
        double mag = pow(10, floor(log10(raw)));
        double f = raw / mag;
        /* A little slack, so that 2.0000000001 from a division stays 2. */
        double m = f <= 1 + 1e-9 ? 1 : f <= 2 + 1e-9 ? 2 : f <= 5 + 1e-9 ? 5 : 10;
        return m * mag;
}

void svg_axis_nice(double min, double max, unsigned max_intervals, struct svg_axis *ret) {
        if (max_intervals < 1)
                max_intervals = 1;
        if (!isfinite(min) || !isfinite(max)) {
                *ret = (struct svg_axis){.lo = 0, .hi = 1, .step = 1, .n_ticks = 2};
                return;
        }
        if (min > max) {
                double t = min;
                min = max;
                max = t;
        }
        if (min == max) {
                /* One value: an axis from 0 when it is positive (a bar, a level), else a
                 * unit either side. */
                if (min > 0)
                        min = 0;
                else if (max < 0)
                        max = 0;
                else
                        max = 1;
                if (min == max) {
                        min -= 1;
                        max += 1;
                }
        }
        /* Beyond about 1e300 the span overflows; such values are no figure gpuvet writes. */
        double span = max - min;
        if (!isfinite(span)) {
                *ret = (struct svg_axis){.lo = 0, .hi = 1, .step = 1, .n_ticks = 2};
                return;
        }
        double step = nice_step(span / max_intervals);
        double lo = floor(min / step) * step, hi = ceil(max / step) * step;
        size_t n = (size_t)llround((hi - lo) / step);
        /* Rounding both ends out can add one interval: widen the step once more. */
        while (n > max_intervals) {
                step = nice_step(step * 1.5);
                lo = floor(min / step) * step;
                hi = ceil(max / step) * step;
                n = (size_t)llround((hi - lo) / step);
        }
        *ret = (struct svg_axis){.lo = lo, .hi = hi, .step = step, .n_ticks = n + 1};
}

double svg_axis_tick(const struct svg_axis *a, size_t i) {
        double v = a->lo + (double)i * a->step;
        /* 0.1 * 3 is 0.30000000000000004: round to one digit finer than the step. */
        if (!(a->step > 0) || !isfinite(a->step))
                return v;
        double scale = pow(10, 1 - floor(log10(a->step)));
        double r = round(v * scale) / scale;
        return fabs(r) < a->step * 1e-9 ? 0 : r;
}

double svg_axis_map(const struct svg_axis *a, double v, double px_lo, double px_hi) {
        double span = a->hi - a->lo;
        if (!(span > 0) || !isfinite(v))
                return px_lo;
        double f = (v - a->lo) / span;
        if (f < 0)
                f = 0;
        if (f > 1)
                f = 1;
        return px_lo + f * (px_hi - px_lo);
}

const char *svg_format_tick(double v, double step, char *buf, size_t size) {
        int decimals = 0;
        if (step > 0 && isfinite(step) && step < 1) {
                decimals = (int)ceil(-log10(step) - 1e-9);
                /* A step of 0.25 or 0.5 x 10^-k needs one more digit than its power. */
                double scaled = step * pow(10, decimals);
                if (fabs(scaled - round(scaled)) > 1e-6)
                        decimals++;
                if (decimals > 9)
                        decimals = 9;
        }
        if (fabs(v) < 0.5 * pow(10, -decimals))
                v = 0;
        snprintf(buf, size, "%.*f", decimals, v);
        return buf;
}

const char *svg_format_value(double v, char *buf, size_t size) {
        double a = fabs(v);
        if (!isfinite(v))
                snprintf(buf, size, "-");
        else if (a >= 1e4 && a < 1e12)
                snprintf(buf, size, "%.0f", v);
        else if (a >= 1e-4 || a == 0)
                snprintf(buf, size, "%.4g", v);
        else
                snprintf(buf, size, "%.3e", v);
        return buf;
}

double svg_text_width(const char *s, double font_px) {
        size_t chars = 0;
        for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++)
                if ((*p & 0xC0) != 0x80)
                        chars++;
        return (double)chars * 0.6 * font_px;
}

bool svg_text_fit(const char *s, double max_px, double font_px, char *buf, size_t size) {
        if (!size)
                return false;
        s = s ? s : "";
        if (svg_text_width(s, font_px) <= max_px) {
                snprintf(buf, size, "%s", s);
                return strlen(s) >= size;
        }
        static const char ellipsis[] = "\xE2\x80\xA6"; /* U+2026 */
        if (size < sizeof(ellipsis)) {
                buf[0] = '\0';
                return true;
        }
        double room = max_px - 0.6 * font_px;          /* the ellipsis takes one advance */
        size_t out = 0;
        double width = 0;
        const unsigned char *p = (const unsigned char *)s;
        while (*p) {
                size_t len = utf8_sequence(p);
                if (len == 0)
                        len = 1; /* a stray byte counts as one character; escaping shows it */
                if (width + 0.6 * font_px > room || out + len + sizeof(ellipsis) > size)
                        break;
                memcpy(buf + out, p, len);
                out += len;
                p += len;
                width += 0.6 * font_px;
        }
        memcpy(buf + out, ellipsis, sizeof(ellipsis));
        return true;
}

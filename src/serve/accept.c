/* Accept header negotiation (accept.h): media ranges with their q values, nothing else. */
#include "serve/accept.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

/* q of one media range's parameters "version=1.0.0;q=0.5": 1000 for absent, 0-1000 for
 * "q=0" to "q=1.000" (RFC 9110 qvalue); a malformed q counts as 0, so a garbled range
 * never wins. */
static int qvalue(const char *p, const char *end) {
        while (p < end) {
                while (p < end && (*p == ' ' || *p == '\t' || *p == ';'))
                        p++;
                const char *param = p;
                while (p < end && *p != ';')
                        p++;
                const char *param_end = p;
                while (param_end > param && (param_end[-1] == ' ' || param_end[-1] == '\t'))
                        param_end--;
                if (param_end - param < 2 || (param[0] != 'q' && param[0] != 'Q') || param[1] != '=')
                        continue;
                const char *v = param + 2;
                if (v >= param_end || (*v != '0' && *v != '1'))
                        return 0;
                int q = (*v - '0') * 1000;
                v++;
                if (v < param_end) {
                        if (*v != '.')
                                return 0;
                        v++;
                        int scale = 100, digits = 0;
                        for (; v < param_end; v++, digits++) {
                                if (*v < '0' || *v > '9' || digits == 3)
                                        return 0;
                                q += (*v - '0') * scale;
                                scale /= 10;
                        }
                }
                return q > 1000 ? 0 : q;
        }
        return 1000;
}

static bool type_is(const char *t, size_t n, const char *want) {
        return n == strlen(want) && strncasecmp(t, want, n) == 0;
}

enum expo_format accept_format(const char *header, size_t len) {
        if (!header)
                return EXPO_TEXT;
        int q_om = -1, q_text = -1, q_wild = -1;
        const char *p = header, *end = header + len;
        while (p < end) {
                const char *range = p;
                while (p < end && *p != ',')
                        p++;
                const char *range_end = p;
                if (p < end)
                        p++;
                while (range < range_end && (*range == ' ' || *range == '\t'))
                        range++;
                const char *type_end = range;
                while (type_end < range_end && *type_end != ';' && *type_end != ' ' && *type_end != '\t')
                        type_end++;
                size_t n = (size_t)(type_end - range);
                int q = qvalue(type_end, range_end);
                int *slot = NULL;
                if (type_is(range, n, "application/openmetrics-text"))
                        slot = &q_om;
                else if (type_is(range, n, "text/plain"))
                        slot = &q_text;
                else if (type_is(range, n, "*/*") || type_is(range, n, "text/*"))
                        slot = &q_wild;
                if (slot && q > *slot)
                        *slot = q;
        }
        if (q_om <= 0)
                return EXPO_TEXT;
        int q_other = q_text >= 0 ? q_text : q_wild;
        return q_om >= q_other ? EXPO_OPENMETRICS : EXPO_TEXT;
}

const char *expo_content_type(enum expo_format f) {
        return f == EXPO_OPENMETRICS ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                     : "text/plain; version=0.0.4; charset=utf-8";
}

#include "report/json_text.h"

#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p (1-4), or 0 when invalid. */
static size_t utf8_sequence(const unsigned char *p) {
        if (p[0] < 0x80)
                return 1;
        size_t n = (p[0] & 0xe0) == 0xc0 ? 2 : (p[0] & 0xf0) == 0xe0 ? 3 : (p[0] & 0xf8) == 0xf0 ? 4 : 0;
        if (n == 0 || (n == 2 && p[0] < 0xc2) || (n == 4 && p[0] > 0xf4))
                return 0;
        for (size_t i = 1; i < n; i++)
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
        /* Overlong 3/4-byte forms and UTF-16 surrogates. */
        if (n == 3 && ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0)))
                return 0;
        if (n == 4 && ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90)))
                return 0;
        return n;
}

json_t *json_text(const char *s) {
        if (!s || !*s)
                return json_null();
        json_t *j = json_string(s);
        if (j)
                return j;
        size_t len = strlen(s);
        char *clean = malloc(len * 3 + 1);
        if (!clean)
                return json_null();
        size_t out = 0;
        for (const unsigned char *p = (const unsigned char *)s; *p;) {
                size_t n = utf8_sequence(p);
                if (n) {
                        memcpy(clean + out, p, n);
                        out += n;
                        p += n;
                } else {
                        memcpy(clean + out, "\xef\xbf\xbd", 3);
                        out += 3;
                        p++;
                }
        }
        clean[out] = '\0';
        j = json_string(clean);
        free(clean);
        return j ? j : json_null();
}

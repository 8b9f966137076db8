#include "core/json_text.h"
#include "core/utf8.h"

#include <stdlib.h>
#include <string.h>

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

json_t *json_text_keep_empty(const char *s) {
        return s && !*s ? json_string("") : json_text(s);
}

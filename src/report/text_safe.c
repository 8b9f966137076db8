#include "report/text_safe.h"
#include "core/utf8.h"

#include <stdbool.h>
#include <string.h>

/* Length of the plain character at p, or 0 when it must be escaped. */
static size_t plain(const unsigned char *p) {
        if (*p < 0x20 || *p == 0x7f)
                return 0;
        size_t n = utf8_sequence(p);
        if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) /* U+0080-U+009F: C1 controls (CSI, OSC ...) */
                return 0;
        return n;
}

static bool needs_escape(const char *s) {
        for (const unsigned char *p = (const unsigned char *)s; *p;) {
                size_t n = plain(p);
                if (!n)
                        return true;
                p += n;
        }
        return false;
}

const char *text_safe(const char *s, char *buf, size_t size) {
        if (!s)
                return "";
        if (!needs_escape(s))
                return s;
        size_t out = 0;
        if (size == 0)
                return "";
        for (const unsigned char *p = (const unsigned char *)s; *p;) {
                size_t n = plain(p);
                char esc[5];
                const char *piece = (const char *)p;
                size_t len = n;
                if (!n) {
                        snprintf(esc, sizeof(esc), "\\x%02x", *p);
                        piece = esc;
                        len = strlen(esc);
                        n = 1;
                }
                if (out + len >= size)
                        break;
                memcpy(buf + out, piece, len);
                out += len;
                p += n;
        }
        buf[out] = '\0';
        return buf;
}

void text_safe_write(FILE *out, const char *s) {
        if (!s)
                return;
        /* A run of plain characters goes out in one fwrite: query writes hundreds of cells. */
        for (const unsigned char *p = (const unsigned char *)s; *p;) {
                const unsigned char *run = p;
                for (size_t n; (n = plain(p)) != 0;)
                        p += n;
                if (p > run)
                        fwrite(run, 1, (size_t)(p - run), out);
                if (*p) {
                        fprintf(out, "\\x%02x", *p);
                        p++;
                }
        }
}

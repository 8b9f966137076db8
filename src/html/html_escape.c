#include "html/html_escape.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"

static void hex_byte(struct html_buf *b, unsigned char c) { html_buf_printf(b, "\\x%02X", c); }

void html_escape_n(struct html_buf *b, const char *s, size_t n) {
        if (!s)
                return;
        const unsigned char *p = (const unsigned char *)s, *end = p + n;
        while (p < end && *p) {
                /* Runs of plain characters go in one append. */
                const unsigned char *run = p;
                while (p < end && *p >= 0x20 && *p < 0x7f && !strchr("&<>\"'", *p))
                        p++;
                html_buf_append(b, (const char *)run, (size_t)(p - run));
                if (p == end || !*p)
                        break;
                unsigned char c = *p;
                switch (c) {
                case '&': html_buf_puts(b, "&amp;"); p++; continue;
                case '<': html_buf_puts(b, "&lt;"); p++; continue;
                case '>': html_buf_puts(b, "&gt;"); p++; continue;
                case '"': html_buf_puts(b, "&quot;"); p++; continue;
                case '\'': html_buf_puts(b, "&#39;"); p++; continue;
                case '\t':
                case '\n': html_buf_append(b, (const char *)p, 1); p++; continue;
                default: break;
                }
                if (c < 0x80) { /* the other C0 controls and DEL */
                        hex_byte(b, c);
                        p++;
                        continue;
                }
                /* utf8_sequence reads a whole sequence: only where the buffer holds it. */
                size_t len = 0, room = (size_t)(end - p);
                unsigned char seq[5] = {0};
                memcpy(seq, p, room < 4 ? room : 4);
                len = utf8_sequence(seq);
                if (len == 0) {
                        html_buf_puts(b, "&#xFFFD;");
                        p++;
                } else if (c == 0xC2 && p[1] < 0xA0) { /* U+0080..U+009F, the C1 controls */
                        hex_byte(b, p[0]);
                        hex_byte(b, p[1]);
                        p += 2;
                } else {
                        html_buf_append(b, (const char *)p, len);
                        p += len;
                }
        }
}

void html_escape(struct html_buf *b, const char *s) {
        if (s)
                html_escape_n(b, s, strlen(s));
}

void html_escapef(struct html_buf *b, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        char *s = NULL;
        int n = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (n < 0) {
                b->failed = true;
                return;
        }
        html_escape_n(b, s, (size_t)n);
        free(s);
}

void html_escape_code_spans(struct html_buf *b, const char *s) {
        if (!s)
                return;
        for (;;) {
                const char *open = strchr(s, '`');
                const char *close = open ? strchr(open + 1, '`') : NULL;
                if (!close || close == open + 1) { /* no span left (an empty one stays as written) */
                        if (!close) {
                                html_escape(b, s);
                                return;
                        }
                        html_escape_n(b, s, (size_t)(close + 1 - s));
                        s = close + 1;
                        continue;
                }
                html_escape_n(b, s, (size_t)(open - s));
                html_buf_puts(b, "<code>");
                html_escape_n(b, open + 1, (size_t)(close - open - 1));
                html_buf_puts(b, "</code>");
                s = close + 1;
        }
}

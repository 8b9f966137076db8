#include "html/html_buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(struct html_buf *b, size_t more) {
        if (b->failed)
                return false;
        if (b->len + more + 1 <= b->cap)
                return true;
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + more + 1) {
                if (cap > SIZE_MAX / 2) {
                        b->failed = true;
                        return false;
                }
                cap *= 2;
        }
        char *p = realloc(b->data, cap);
        if (!p) {
                b->failed = true;
                return false;
        }
        b->data = p;
        b->cap = cap;
        return true;
}

void html_buf_append(struct html_buf *b, const char *s, size_t n) {
        if (!reserve(b, n))
                return;
        memcpy(b->data + b->len, s, n);
        b->len += n;
        b->data[b->len] = '\0';
}

void html_buf_puts(struct html_buf *b, const char *s) { html_buf_append(b, s, strlen(s)); }

void html_buf_printf(struct html_buf *b, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        char small[256];
        int n = vsnprintf(small, sizeof(small), fmt, ap);
        va_end(ap);
        if (n < 0) {
                b->failed = true;
                return;
        }
        if ((size_t)n < sizeof(small)) {
                html_buf_append(b, small, (size_t)n);
                return;
        }
        if (!reserve(b, (size_t)n))
                return;
        va_start(ap, fmt);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
        b->len += (size_t)n;
}

char *html_buf_take(struct html_buf *b, size_t *ret_len) {
        char *p = NULL;
        size_t len = 0;
        if (b->failed) {
                free(b->data);
        } else {
                p = b->data ? b->data : calloc(1, 1);
                len = b->len;
        }
        *b = (struct html_buf){0};
        if (ret_len)
                *ret_len = p ? len : 0;
        return p;
}

void html_buf_free(struct html_buf *b) {
        free(b->data);
        *b = (struct html_buf){0};
}

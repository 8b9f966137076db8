#include "core/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void strbuf_appendf(char *buf, size_t size, const char *fmt, ...) {
        size_t len = strnlen(buf, size);
        if (len + 1 >= size)
                return;
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(buf + len, size - len, fmt, ap);
        va_end(ap);
}

void strbuf_printf(char *buf, size_t size, const char *fmt, ...) {
        if (!buf || !size)
                return;
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(buf, size, fmt, ap);
        va_end(ap);
}

void strbuf_replace(char *buf, size_t size, const char *src, const char *from, const char *to) {
        if (!buf || !size)
                return;
        buf[0] = '\0';
        size_t from_len = strlen(from);
        for (const char *at; from_len && (at = strstr(src, from)); src = at + from_len)
                strbuf_appendf(buf, size, "%.*s%s", (int)(at - src), src, to);
        strbuf_appendf(buf, size, "%s", src);
}

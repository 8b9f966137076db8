/* Writing and appending to fixed-size text buffers, as checks build observed values and
 * lists and library code leaves its messages in its caller's buffer. */
#pragma once

#include <stddef.h>

/* Append printf-style text to the NUL-terminated string in buf (size bytes in all).
 * Text that does not fit is cut; buf stays terminated. */
void strbuf_appendf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* printf-style text into buf (size bytes), cut to fit; a NULL buf or a size of 0 is left
 * alone (a caller that wants no message passes none). */
void strbuf_printf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* src into buf (size bytes) with every occurrence of from replaced by to, cut to fit. */
void strbuf_replace(char *buf, size_t size, const char *src, const char *from, const char *to);

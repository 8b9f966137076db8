/* Appending to fixed-size text buffers, as checks build observed values and lists. */
#pragma once

#include <stddef.h>

/* Append printf-style text to the NUL-terminated string in buf (size bytes in all).
 * Text that does not fit is cut; buf stays terminated. */
void strbuf_appendf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

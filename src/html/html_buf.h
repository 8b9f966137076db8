/* A growable text buffer for the HTML and SVG writers. A failed allocation marks the buffer
 * failed and every later append does nothing, so a writer appends freely and checks once,
 * at the end (html_buf_take). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct html_buf {
        char *data; /* NUL-terminated once anything was appended */
        size_t len, cap;
        bool failed; /* out of memory: the content is incomplete */
};

/* Trusted markup, as is: never a string read from a report (see html_escape.h). */
void html_buf_append(struct html_buf *b, const char *s, size_t n);
void html_buf_puts(struct html_buf *b, const char *s);
/* Trusted printf-style markup: numbers and literal tags; a %s argument must be markup too. */
void html_buf_printf(struct html_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The content, handed to the caller (free() it), with its length in *ret_len; NULL when an
 * append failed (out of memory). The buffer is empty afterwards either way. */
char *html_buf_take(struct html_buf *b, size_t *ret_len);
/* Drop the content. */
void html_buf_free(struct html_buf *b);

/* Strings from a report into HTML and SVG. A hostname, a GPU name, a check summary or a
 * fuzzer's document can hold any characters: markup (`<script>`), quotes that would close an
 * attribute, control characters, bytes that are not UTF-8. Every such string reaches the
 * page through here, in text and in attribute values alike (both are quoted with "). */
#pragma once

#include <stddef.h>

#include "html/html_buf.h"

/* s (NULL: nothing) into b: & < > " ' as character references; C0 controls but tab and
 * newline, DEL and C1 controls shown as \xNN (as the text report shows them); each byte
 * that is not part of valid UTF-8 as U+FFFD. */
void html_escape(struct html_buf *b, const char *s);
/* The first n bytes of s (a NUL among them ends it). */
void html_escape_n(struct html_buf *b, const char *s, size_t n);
/* printf-style text, then escaped as html_escape does. */
void html_escapef(struct html_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s escaped as html_escape does, each `span` between a pair of backticks as <code>span</code>
 * (gpuvet's remedies quote commands and paths as Markdown does); a backtick without its pair
 * stays as written. */
void html_escape_code_spans(struct html_buf *b, const char *s);

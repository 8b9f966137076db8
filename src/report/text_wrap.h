/* Text lines that fit the terminal. check's report lines carry sysfs paths, long remedies
 * and lists of GPUs; a terminal that breaks them where its last column falls cuts words in
 * two and loses the indentation that tells a remedy from the next result. */
#pragma once

#include <stddef.h>
#include <stdio.h>

/* The width text written to out should fit: a terminal's own (TIOCGWINSZ), else $COLUMNS,
 * else 0: no wrapping, so that a pipe or a file gets the same lines on every machine. A
 * width below TEXT_WRAP_MIN_WIDTH is taken as that. */
#define TEXT_WRAP_MIN_WIDTH 20
size_t text_wrap_width(FILE *out);

/* Columns s takes on a terminal: a character of UTF-8 one (✓, é), an East Asian wide one
 * two, a combining mark none, and an escape sequence of ours (ESC [ ... letter) none. */
size_t text_display_width(const char *s);

/* line, then a newline, to out: with width 0 as it is, else broken at spaces so that no
 * output line is wider than width columns (given at least one character fits), each
 * continuation starting with indent spaces. A word wider than a line (a long sysfs path)
 * is broken after its last '/' that fits, else at a character boundary. line must hold
 * no newline (text_safe escapes them). */
void text_wrap_line(FILE *out, const char *line, size_t indent, size_t width);

/* A block of lines (a report written whole) to out, each through text_wrap_line with its
 * continuations two columns under where its own text starts, so that a list item's wrapped
 * tail stays inside the item. */
void text_wrap_block(FILE *out, const char *text, size_t width);

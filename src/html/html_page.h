/* One self-contained HTML page: the document's head with its inline stylesheet (screen,
 * print on A4/Letter, light and dark), and the building blocks every gpuvet page uses
 * (headings, status badges, tables). Nothing is fetched: no external stylesheet, font,
 * image or script, so the file reads the same offline, printed or mailed to a vendor.
 * A page is a struct html_buf: begin, append blocks and charts (html/svg_*.h), end, take. */
#pragma once

#include <stddef.h>

#include "core/result.h"
#include "html/html_buf.h"

/* <!DOCTYPE html>, the head (charset, title, stylesheet) and the opening of <body>. */
void html_page_begin(struct html_buf *b, const char *title);
/* The closing tags; the page is complete after it. */
void html_page_end(struct html_buf *b);

/* <tag class="cls">text</tag>, text escaped; cls NULL: no class attribute. tag and cls are
 * markup (literals), text is data. */
void html_element(struct html_buf *b, const char *tag, const char *cls, const char *text);

/* A status as a mark and a word, never colour alone: "✗ fail" in its colour. */
void html_status_badge(struct html_buf *b, enum status s);
/* The mark of a status, as the text report writes it: ✓ ⚠ ✗ - !. */
const char *html_status_mark(enum status s);
/* "st-pass", "st-warn" ...: the class that colours a status (CSS and SVG). */
const char *html_status_class(enum status s);

/* A table: html_table_begin with the header cells (text), rows of cells, html_table_end. A
 * NULL cell is shown as an em dash (a value gpuvet could not determine). */
void html_table_begin(struct html_buf *b, const char *cls, const char *const *headers, size_t n);
void html_table_row(struct html_buf *b, const char *const *cells, size_t n);
void html_table_end(struct html_buf *b);

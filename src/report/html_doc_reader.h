/* Typed reading of a gpuvet JSON document for the HTML report. The report is rendered from
 * documents a person hands it (possibly edited, truncated or of another tool), so every field
 * is read through here: a field of the wrong type is an error naming the file and the field
 * ("r.json: checks[3].status: expected a string, found an integer"), the first one is kept,
 * and the renderer goes on harmlessly (reads then give NULL/NaN) until it checks at the end. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/result.h"

struct doc_reader {
        const char *file; /* names the document in messages */
        char err[512];    /* the first problem, "FILE: WHERE: what" */
        bool failed;
};

/* Record a problem (the first one only) at where (e.g. "checks[3]"). */
void doc_fail(struct doc_reader *r, const char *where, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* obj[key]: a string, a number, an array or an object. A missing or null field gives NULL
 * (NaN for numbers) and is an error only when required; a field of another type is always
 * an error. obj NULL (an earlier failure) gives NULL/NaN quietly. */
const char *doc_string(struct doc_reader *r, json_t *obj, const char *where, const char *key, bool required);
double doc_number(struct doc_reader *r, json_t *obj, const char *where, const char *key, bool required);
json_t *doc_array(struct doc_reader *r, json_t *obj, const char *where, const char *key, bool required);
json_t *doc_object(struct doc_reader *r, json_t *obj, const char *where, const char *key, bool required);
/* A status word ("pass" ... "error"), required. _STATUS_COUNT when it is missing or unknown
 * (then an error is recorded). */
enum status doc_status(struct doc_reader *r, json_t *obj, const char *where, const char *key);
/* Element i of array arr, which must be an object (else an error, NULL). */
json_t *doc_array_object(struct doc_reader *r, json_t *arr, const char *where, size_t i);
/* The document's file name without its directory, as the page names it: a page mailed to a
 * vendor has no use for where the file lay on the machine that wrote the page, and should
 * not tell it. */
const char *doc_file_name(const struct doc_reader *r);

/* Reading the JSON document a data table comes from: DIR/NAME when --data-dir has that
 * file, else the copy compiled into the binary; parse errors named by file and line. */
#pragma once

#include <jansson.h>
#include <stddef.h>

/* DIR/name when dir holds it, else the embedded bytes; source receives which
 * ("/etc/gpuvet/data/xid.json", "built-in xid.json"). NULL with "SOURCE: line N: what" in
 * err when it does not parse. */
json_t *json_doc_open(const char *dir, const char *name, const char *embedded, size_t embedded_len, char *source,
                      size_t source_size, char *err, size_t errsize);
/* len bytes at buf (need not be NUL-terminated), named source in messages. */
json_t *json_doc_parse(const char *buf, size_t len, const char *source, char *err, size_t errsize);
/* The last step of every table's loader: root (NULL: it did not parse, err says why) into
 * table, which keeps root at *json for done to release. parse fills the table, saying in
 * why what is wrong; on failure err gets "SOURCE: why" (or out of memory) and done
 * releases what parse left. Returns parse's result, or -EINVAL for a NULL root. */
int json_doc_take(json_t *root, const char *source, void **json, void *table,
                  int (*parse)(json_t *root, void *table, char *why, size_t whysize), void (*done)(void *table),
                  char *err, size_t errsize);

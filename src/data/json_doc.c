#include "data/json_doc.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

static json_t *parsed(json_t *root, const json_error_t *jerr, const char *source, char *err, size_t errsize) {
        if (!root)
                snprintf(err, errsize, "%s: line %d: %s", source, jerr->line, jerr->text);
        return root;
}

json_t *json_doc_open(const char *dir, const char *name, const char *embedded, size_t embedded_len, char *source,
                      size_t source_size, char *err, size_t errsize) {
        if (dir && (snprintf(source, source_size, "%s/%s", dir, name), access(source, F_OK) == 0)) {
                json_error_t jerr;
                return parsed(json_load_file(source, JSON_REJECT_DUPLICATES, &jerr), &jerr, source, err, errsize);
        }
        snprintf(source, source_size, "built-in %s", name);
        return json_doc_parse(embedded, embedded_len, source, err, errsize);
}

json_t *json_doc_parse(const char *buf, size_t len, const char *source, char *err, size_t errsize) {
        json_error_t jerr;
        return parsed(json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr), &jerr, source, err, errsize);
}

int json_doc_take(json_t *root, const char *source, void **json, void *table,
                  int (*parse)(json_t *root, void *table, char *why, size_t whysize), void (*done)(void *table),
                  char *err, size_t errsize) {
        if (!root)
                return -EINVAL;
        *json = root;
        char why[256] = "";
        int r = parse(root, table, why, sizeof(why));
        if (r < 0) {
                snprintf(err, errsize, "%s: %s", source, r == -ENOMEM ? "out of memory" : why);
                done(table);
        }
        return r;
}

/* Check report -> statuses per id (check_status.h). */
#include "serve/check_status.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_id(const void *a, const void *b) {
        return strcmp(((const struct check_status *)a)->id, ((const struct check_status *)b)->id);
}

static bool status_parse(const char *s, enum status *ret) {
        for (int k = 0; k < _STATUS_COUNT; k++)
                if (strcmp(s, status_name((enum status)k)) == 0) {
                        *ret = (enum status)k;
                        return true;
                }
        return false;
}

/* Fold the sorted items so that each id appears once, with its worst status. */
static size_t fold(struct check_status *items, size_t n) {
        size_t out = 0;
        for (size_t i = 0; i < n; i++) {
                if (out > 0 && strcmp(items[out - 1].id, items[i].id) == 0)
                        items[out - 1].status = status_worse(items[out - 1].status, items[i].status);
                else
                        items[out++] = items[i];
        }
        return out;
}

int check_status_parse(const char *buf, size_t len, struct check_status_set *ret, char *err, size_t errsize) {
        memset(ret, 0, sizeof(*ret));
        if (len > CHECK_STATUS_MAX_BYTES) {
                snprintf(err, errsize, "larger than %u MiB", CHECK_STATUS_MAX_BYTES >> 20);
                return -EINVAL;
        }
        json_error_t je;
        json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
        if (!root) {
                snprintf(err, errsize, "not JSON: %s (line %d)", je.text, je.line);
                return -EINVAL;
        }
        int r = -EINVAL;
        json_t *schema = json_object_get(root, "schema");
        json_t *checks = json_object_get(root, "checks");
        if (!json_is_string(schema) || strcmp(json_string_value(schema), "gpuvet.report/1") != 0) {
                snprintf(err, errsize, "not a gpuvet check report (\"schema\" is not \"gpuvet.report/1\")");
                goto out;
        }
        if (!json_is_array(checks)) {
                snprintf(err, errsize, "\"checks\" is not an array");
                goto out;
        }
        size_t n = json_array_size(checks);
        struct check_status *items = calloc(n ? n : 1, sizeof(*items));
        if (!items) {
                snprintf(err, errsize, "out of memory");
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < n; i++) {
                json_t *c = json_array_get(checks, i);
                json_t *id = json_object_get(c, "id"), *st = json_object_get(c, "status");
                const char *ids = json_string_value(id), *sts = json_string_value(st);
                if (!ids || !*ids || strlen(ids) >= CHECK_STATUS_ID_MAX) {
                        snprintf(err, errsize, "checks[%zu].id is not a string of 1 to %d bytes", i,
                                 CHECK_STATUS_ID_MAX - 1);
                        free(items);
                        goto out;
                }
                if (!sts || !status_parse(sts, &items[i].status)) {
                        snprintf(err, errsize, "checks[%zu] (%s): status is not pass, warn, fail, skip or error", i,
                                 ids);
                        free(items);
                        goto out;
                }
                snprintf(items[i].id, sizeof(items[i].id), "%s", ids);
        }
        qsort(items, n, sizeof(*items), by_id);
        ret->n = fold(items, n);
        ret->items = items;
        r = 0;
out:
        json_decref(root);
        return r;
}

void check_status_done(struct check_status_set *set) {
        free(set->items);
        set->items = NULL;
        set->n = 0;
}

/* Reading `dcgmi diag -j` output (sys/dcgm_diag.h) with jansson. Unknown keys are
 * ignored and missing ones left empty: DCGM adds keys between versions, and a result
 * without its status still says which test ran. */
#include "sys/dcgm_diag.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/array.h"
#include "core/grow.h"
#include "core/strbuf.h"

#define MAX_RESULTS 4096 /* 4 levels x ~20 tests x 72 GPUs fits with room */

static const char *const top_keys[] = {"DCGM Diagnostic", "DCGM GPU Diagnostic"};

const char *dcgm_status_name(enum dcgm_status s) {
        switch (s) {
        case DCGM_PASS: return "Pass";
        case DCGM_SKIP: return "Skip";
        case DCGM_FAIL: return "Fail";
        case DCGM_OTHER: break;
        }
        return "unknown";
}

static void set_err(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t size, const char *fmt, ...) {
        if (!err || !size)
                return;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, size, fmt, ap);
        va_end(ap);
}

static void copy_str(char *dst, size_t size, json_t *v) {
        if (json_is_string(v))
                snprintf(dst, size, "%s", json_string_value(v));
        else if (json_is_integer(v))
                snprintf(dst, size, "%lld", (long long)json_integer_value(v));
}

#define MAX_IDS 256 /* GPUs one result may list; DCGM handles 32 at most */

static int id_in_range(long long i) {
        return i >= 0 && i < 1000000 ? (int)i : -1;
}

/* The ids a result names: a number, or a string of one or more ("0"; "0,1,2,3" where
 * one result speaks for every GPU of the run). A member that is not a number is left
 * out. Returns how many were stored in ids. */
static size_t ids_of(json_t *v, int *ids, size_t max) {
        if (json_is_integer(v)) {
                int id = id_in_range(json_integer_value(v));
                if (id < 0 || max == 0)
                        return 0;
                ids[0] = id;
                return 1;
        }
        if (!json_is_string(v))
                return 0;
        size_t n = 0;
        const char *s = json_string_value(v);
        while (*s && n < max) {
                char *end;
                long long i = strtoll(s, &end, 10);
                if (end != s && id_in_range(i) >= 0)
                        ids[n++] = (int)i;
                const char *comma = strchr(end, ',');
                if (!comma)
                        break;
                s = comma + 1;
        }
        return n;
}

static enum dcgm_status status_of(const char *s) {
        if (!s)
                return DCGM_OTHER;
        if (strcasecmp(s, "Pass") == 0)
                return DCGM_PASS;
        if (strcasecmp(s, "Skip") == 0)
                return DCGM_SKIP;
        if (strcasecmp(s, "Fail") == 0 || strcasecmp(s, "Warn") == 0)
                return DCGM_FAIL;
        return DCGM_OTHER;
}

/* warnings: a string, or a list of objects whose message is "warning" (or "warnings"). */
static void read_warnings(json_t *w, struct dcgm_result *r) {
        if (json_is_string(w)) {
                snprintf(r->message, sizeof(r->message), "%s", json_string_value(w));
                return;
        }
        size_t i;
        json_t *item;
        json_array_foreach(w, i, item) {
                const char *text = NULL;
                if (json_is_string(item)) {
                        text = json_string_value(item);
                } else if (json_is_object(item)) {
                        json_t *t = json_object_get(item, "warning");
                        if (!json_is_string(t))
                                t = json_object_get(item, "warnings");
                        text = json_string_value(t);
                        json_t *id = json_object_get(item, "error_id");
                        if (json_is_integer(id))
                                strbuf_appendf(r->error_ids, sizeof(r->error_ids), "%s%lld", r->error_ids[0] ? ", " : "",
                                               (long long)json_integer_value(id));
                }
                if (text && *text)
                        strbuf_appendf(r->message, sizeof(r->message), "%s%s", r->message[0] ? "; " : "", text);
        }
}

static void read_info(json_t *v, struct dcgm_result *r) {
        if (json_is_string(v))
                snprintf(r->info, sizeof(r->info), "%s", json_string_value(v));
        else if (json_is_array(v) && json_is_string(json_array_get(v, 0)))
                snprintf(r->info, sizeof(r->info), "%s", json_string_value(json_array_get(v, 0)));
}

static struct dcgm_result *add(struct dcgm_diag *d, size_t *cap) {
        if (d->n >= MAX_RESULTS)
                return NULL;
        if (array_grow((void **)&d->results, d->n, cap, sizeof(*d->results), 32) < 0)
                return NULL;
        return &d->results[d->n++];
}

static int read_result(json_t *o, const char *test, const char *category, int is_summary, struct dcgm_diag *d,
                       size_t *cap) {
        if (!json_is_object(o))
                return 0;
        struct dcgm_result r;
        memset(&r, 0, sizeof(r));
        snprintf(r.test, sizeof(r.test), "%s", test);
        snprintf(r.category, sizeof(r.category), "%s", category);
        r.is_summary = is_summary;
        const char *st = json_string_value(json_object_get(o, "status"));
        r.status = status_of(st);
        snprintf(r.status_text, sizeof(r.status_text), "%s", st ? st : "");
        int ids[MAX_IDS];
        size_t n_ids = 0;
        json_t *v;
        if ((v = json_object_get(o, "entity_id")) != NULL) {
                n_ids = ids_of(v, ids, 1);
                copy_str(r.entity, sizeof(r.entity), json_object_get(o, "entity_group"));
                if (!r.entity[0])
                        snprintf(r.entity, sizeof(r.entity), "GPU");
        } else if ((v = json_object_get(o, "gpu_id")) != NULL || (v = json_object_get(o, "gpu_ids")) != NULL) {
                n_ids = ids_of(v, ids, MAX_IDS);
                snprintf(r.entity, sizeof(r.entity), "GPU");
        }
        if (n_ids == 0)
                r.entity[0] = '\0';
        read_warnings(json_object_get(o, "warnings"), &r);
        json_t *id = json_object_get(o, "error_id"); /* up to 3.2: beside a string warning */
        if (!r.error_ids[0] && json_is_integer(id))
                snprintf(r.error_ids, sizeof(r.error_ids), "%lld", (long long)json_integer_value(id));
        read_info(json_object_get(o, "info"), &r);
        for (size_t i = 0; i < (n_ids ? n_ids : 1); i++) {
                struct dcgm_result *slot = add(d, cap);
                if (!slot)
                        return d->n >= MAX_RESULTS ? 0 : -ENOMEM;
                *slot = r;
                slot->entity_id = n_ids ? ids[i] : -1;
        }
        return 0;
}

static int read_tests(json_t *categories, struct dcgm_diag *d, char *err, size_t errsize) {
        size_t cap = 0, i, j, k;
        json_t *cat, *test, *res;
        if (!json_is_array(categories)) {
                set_err(err, errsize, "\"test_categories\" is not a list");
                return -EINVAL;
        }
        json_array_foreach(categories, i, cat) {
                const char *category = json_string_value(json_object_get(cat, "category"));
                json_t *tests = json_object_get(cat, "tests");
                if (!json_is_array(tests))
                        continue;
                json_array_foreach(tests, j, test) {
                        const char *name = json_string_value(json_object_get(test, "name"));
                        if (!name)
                                continue;
                        json_t *results = json_object_get(test, "results");
                        json_array_foreach(results, k, res) {
                                if (read_result(res, name, category ? category : "", 0, d, &cap) < 0)
                                        return -ENOMEM;
                        }
                        /* A summary speaks for the test when it carries a message of its own
                         * (4.2: messages tied to no entity) or the test has no result. */
                        json_t *summary = json_object_get(test, "test_summary");
                        if (json_is_object(summary) &&
                            (json_object_get(summary, "warnings") || !json_is_array(results) || json_array_size(results) == 0))
                                if (read_result(summary, name, category ? category : "", 1, d, &cap) < 0)
                                        return -ENOMEM;
                }
        }
        return 0;
}

/* The first line of what came before the document, trimmed, for the report to show. */
static void keep_preamble(const char *text, size_t start, struct dcgm_diag *out) {
        size_t i = 0;
        while (i < start) {
                while (i < start && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
                        i++;
                size_t end = i;
                while (end < start && text[end] != '\n')
                        end++;
                size_t stop = end;
                while (stop > i && (text[stop - 1] == ' ' || text[stop - 1] == '\t' || text[stop - 1] == '\r'))
                        stop--;
                if (stop > i) {
                        snprintf(out->preamble, sizeof(out->preamble), "%.*s", (int)(stop - i), text + i);
                        return;
                }
                i = end;
        }
}

/* The document in text. dcgmi -j prints one JSON object, but what reaches us may carry
 * a line before it (a warning, a wrapper's banner) and text after: read, as DCGM's own
 * readers do, from a '{' on to the document's end. The first '{' is tried first, then
 * each '{' that begins a line, so that braces in a warning do not hide the document. */
static json_t *find_document(const char *text, size_t len, struct dcgm_diag *out, char *err, size_t errsize) {
        json_error_t jerr, first_err;
        json_t *root = json_loadb(text, len, 0, &jerr);
        if (root)
                return root;
        first_err = jerr;
        int tries = 0;
        for (size_t i = 0; i < len && tries < 64; i++) {
                if (text[i] != '{')
                        continue;
                size_t line = i;
                while (line > 0 && (text[line - 1] == ' ' || text[line - 1] == '\t'))
                        line--;
                if (tries > 0 && line > 0 && text[line - 1] != '\n')
                        continue;
                tries++;
                root = json_loadb(text + i, len - i, JSON_DISABLE_EOF_CHECK, &jerr);
                if (json_is_object(root)) {
                        keep_preamble(text, i, out);
                        return root;
                }
                json_decref(root);
        }
        set_err(err, errsize, "not JSON: %s (line %d)", first_err.text, first_err.line);
        return NULL;
}

int dcgm_diag_parse(const char *text, size_t len, struct dcgm_diag *out, char *err, size_t errsize) {
        memset(out, 0, sizeof(*out));
        json_t *root = find_document(text, len, out, err, errsize);
        if (!root) {
                memset(out, 0, sizeof(*out));
                return -EINVAL;
        }
        int r = 0;
        json_t *body = NULL;
        for (size_t i = 0; i < ARRAY_COUNT(top_keys) && !body; i++)
                if ((body = json_object_get(root, top_keys[i])) != NULL)
                        snprintf(out->top_key, sizeof(out->top_key), "%s", top_keys[i]);
        if (!json_is_object(body)) {
                set_err(err, errsize, "no \"DCGM Diagnostic\" object: not the output of dcgmi diag -j");
                r = -EINVAL;
                goto done;
        }
        /* 3.1.7-3.3 print the versions beside the top key; 4.x under "metadata". */
        json_t *meta = json_object_get(root, "metadata");
        json_t *where[] = {meta, root, body};
        for (size_t i = 0; i < 3; i++) {
                if (!json_is_object(where[i]))
                        continue;
                if (!out->version[0])
                        copy_str(out->version, sizeof(out->version), json_object_get(where[i], "version"));
                if (!out->driver_version[0])
                        copy_str(out->driver_version, sizeof(out->driver_version),
                                 json_object_get(where[i], "Driver Version Detected"));
        }
        copy_str(out->runtime_error, sizeof(out->runtime_error), json_object_get(body, "runtime_error"));
        json_t *categories = json_object_get(body, "test_categories");
        if (categories)
                r = read_tests(categories, out, err, errsize);
        else if (!out->runtime_error[0]) {
                set_err(err, errsize, "neither \"test_categories\" nor \"runtime_error\" in \"%s\"", out->top_key);
                r = -EINVAL;
        }
        if (r == -ENOMEM)
                set_err(err, errsize, "out of memory");
done:
        json_decref(root);
        if (r < 0)
                dcgm_diag_done(out);
        return r;
}

void dcgm_diag_done(struct dcgm_diag *d) {
        free(d->results);
        memset(d, 0, sizeof(*d));
}

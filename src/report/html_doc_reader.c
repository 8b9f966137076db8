#include "report/html_doc_reader.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void doc_fail(struct doc_reader *r, const char *where, const char *fmt, ...) {
        if (r->failed)
                return;
        r->failed = true;
        char what[384];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        snprintf(r->err, sizeof(r->err), "%s: %s%s%s", r->file, where ? where : "", where && *where ? ": " : "",
                 what);
}

static const char *type_label(json_type t) {
        switch (t) {
        case JSON_OBJECT: return "an object";
        case JSON_ARRAY: return "an array";
        case JSON_STRING: return "a string";
        case JSON_INTEGER: return "an integer";
        case JSON_REAL: return "a number";
        case JSON_TRUE:
        case JSON_FALSE: return "a boolean";
        default: return "null";
        }
}

/* where.key: the place doc_fail names. */
static void field_path(char *at, size_t size, const char *where, const char *key) {
        snprintf(at, size, "%s%s%s", where ? where : "", where && *where ? "." : "", key);
}

/* obj[key] when it is present, not null and of type (JSON_REAL: any number); NULL
 * otherwise, recording a missing required field or one of another type. */
static json_t *field(struct doc_reader *r, json_t *obj, const char *where, const char *key, bool required,
                     json_type type) {
        if (!obj)
                return NULL;
        json_t *v = json_object_get(obj, key);
        char at[256];
        if (!v || json_is_null(v)) {
                if (required) {
                        field_path(at, sizeof(at), where, key);
                        doc_fail(r, at, "missing (required)");
                }
                return NULL;
        }
        if (type == JSON_REAL ? !json_is_number(v) : json_typeof(v) != type) {
                field_path(at, sizeof(at), where, key);
                doc_fail(r, at, "expected %s, found %s", type_label(type), type_label(json_typeof(v)));
                return NULL;
        }
        return v;
}

const char *doc_string(struct doc_reader *r, json_t *obj, const char *where, const char *key, bool required) {
        return json_string_value(field(r, obj, where, key, required, JSON_STRING));
}

double doc_number(struct doc_reader *r, json_t *obj, const char *where, const char *key, bool required) {
        json_t *v = field(r, obj, where, key, required, JSON_REAL);
        return v ? json_number_value(v) : NAN;
}

json_t *doc_array(struct doc_reader *r, json_t *obj, const char *where, const char *key, bool required) {
        return field(r, obj, where, key, required, JSON_ARRAY);
}

json_t *doc_object(struct doc_reader *r, json_t *obj, const char *where, const char *key, bool required) {
        return field(r, obj, where, key, required, JSON_OBJECT);
}

enum status doc_status(struct doc_reader *r, json_t *obj, const char *where, const char *key) {
        const char *s = doc_string(r, obj, where, key, true);
        if (!s)
                return _STATUS_COUNT;
        for (int i = 0; i < _STATUS_COUNT; i++)
                if (strcmp(s, status_name((enum status)i)) == 0)
                        return (enum status)i;
        char at[256];
        field_path(at, sizeof(at), where, key);
        doc_fail(r, at, "unknown status \"%.40s\" (pass, warn, fail, skip or error)", s);
        return _STATUS_COUNT;
}

json_t *doc_array_object(struct doc_reader *r, json_t *arr, const char *where, size_t i) {
        json_t *v = json_array_get(arr, i);
        if (v && json_is_object(v))
                return v;
        char at[256];
        snprintf(at, sizeof(at), "%s[%zu]", where ? where : "", i);
        doc_fail(r, at, "expected an object, found %s", v ? type_label(json_typeof(v)) : "nothing");
        return NULL;
}

const char *doc_file_name(const struct doc_reader *r) {
        const char *slash = strrchr(r->file, '/');
        return slash && slash[1] ? slash + 1 : r->file;
}

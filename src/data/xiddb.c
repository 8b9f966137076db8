#include "data/xiddb.h"
#include "data/embedded.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XID_SCHEMA "gpuvet.xid/1"

static const char *const severity_names[_XID_SEVERITY_COUNT] = {"application", "warning", "critical"};

const char *xid_severity_name(enum xid_severity s) {
        return s >= 0 && s < _XID_SEVERITY_COUNT ? severity_names[s] : "?";
}

static int parse(json_t *root, struct xiddb *x, char *why, size_t whysize) {
        json_t *schema = json_object_get(root, "schema"), *list = json_object_get(root, "xids");
        if (!json_is_string(schema) || strcmp(json_string_value(schema), XID_SCHEMA) != 0) {
                snprintf(why, whysize, "\"schema\" must be \"%s\"", XID_SCHEMA);
                return -EINVAL;
        }
        if (!json_is_array(list)) {
                snprintf(why, whysize, "\"xids\" must be a list");
                return -EINVAL;
        }
        x->xids = calloc(json_array_size(list) + 1, sizeof(*x->xids));
        if (!x->xids)
                return -ENOMEM;
        size_t i;
        json_t *e;
        json_array_foreach(list, i, e) {
                json_t *code = json_object_get(e, "code"), *name = json_object_get(e, "name"),
                       *sev = json_object_get(e, "severity"), *action = json_object_get(e, "action");
                if (!json_is_integer(code) || json_integer_value(code) < 0 || json_integer_value(code) > 100000 ||
                    !json_is_string(name) || !json_is_string(sev) || !json_is_string(action)) {
                        snprintf(why, whysize, "entry %zu needs an integer \"code\" and strings \"name\", \"severity\", \"action\"", i);
                        return -EINVAL;
                }
                struct xid_info *info = &x->xids[x->n];
                info->code = (int)json_integer_value(code);
                info->name = json_string_value(name);
                info->action = json_string_value(action);
                info->severity = _XID_SEVERITY_COUNT;
                for (int s = 0; s < _XID_SEVERITY_COUNT; s++)
                        if (strcmp(json_string_value(sev), severity_names[s]) == 0)
                                info->severity = (enum xid_severity)s;
                if (info->severity == _XID_SEVERITY_COUNT) {
                        snprintf(why, whysize, "Xid %d: severity must be application, warning or critical", info->code);
                        return -EINVAL;
                }
                if (xiddb_find(x, info->code)) {
                        snprintf(why, whysize, "Xid %d is listed twice", info->code);
                        return -EINVAL;
                }
                x->n++;
        }
        return 0;
}

/* Take root (NULL: jerr says why it did not parse) into ret. */
static int load_root(json_t *root, const json_error_t *jerr, const char *source, struct xiddb *ret, char *err,
                     size_t errsize) {
        if (!root) {
                snprintf(err, errsize, "%s: line %d: %s", source, jerr->line, jerr->text);
                return -EINVAL;
        }
        ret->json = root;
        char why[256] = "";
        int r = parse(root, ret, why, sizeof(why));
        if (r < 0) {
                snprintf(err, errsize, "%s: %s", source, r == -ENOMEM ? "out of memory" : why);
                xiddb_done(ret);
        }
        return r;
}

int xiddb_load(const char *dir, struct xiddb *ret, char *err, size_t errsize) {
        memset(ret, 0, sizeof(*ret));
        char source[512];
        if (!dir || (snprintf(source, sizeof(source), "%s/xid.json", dir), access(source, F_OK) < 0))
                return xiddb_load_buffer((const char *)embedded_xid_json, embedded_xid_json_len, "built-in xid.json",
                                         ret, err, errsize);
        json_error_t jerr;
        json_t *root = json_load_file(source, JSON_REJECT_DUPLICATES, &jerr);
        return load_root(root, &jerr, source, ret, err, errsize);
}

int xiddb_load_buffer(const char *buf, size_t len, const char *source, struct xiddb *ret, char *err,
                      size_t errsize) {
        memset(ret, 0, sizeof(*ret));
        json_error_t jerr;
        json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
        return load_root(root, &jerr, source, ret, err, errsize);
}

void xiddb_done(struct xiddb *x) {
        free(x->xids);
        json_decref(x->json);
        memset(x, 0, sizeof(*x));
}

const struct xid_info *xiddb_find(const struct xiddb *x, int code) {
        for (size_t i = 0; x && i < x->n; i++)
                if (x->xids[i].code == code)
                        return &x->xids[i];
        return NULL;
}

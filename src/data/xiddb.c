#include "data/xiddb.h"
#include "data/embedded.h"
#include "data/json_doc.h"

#include <errno.h>
#include <stdbool.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XID_SCHEMA_V1 "gpuvet.xid/1"
#define XID_SCHEMA_V2 "gpuvet.xid/2"

static const char *const severity_names[_XID_SEVERITY_COUNT] = {"ignore", "application", "warning", "critical"};

const char *xid_severity_name(enum xid_severity s) {
        return s >= 0 && s < _XID_SEVERITY_COUNT ? severity_names[s] : "?";
}

static int severity_of(json_t *v, enum xid_severity *ret) {
        if (!json_is_string(v))
                return -EINVAL;
        for (int s = 0; s < _XID_SEVERITY_COUNT; s++)
                if (strcmp(json_string_value(v), severity_names[s]) == 0) {
                        *ret = (enum xid_severity)s;
                        return 0;
                }
        return -EINVAL;
}

#define SEVERITY_CHOICES "ignore, application, warning or critical"

/* "resolutions": {"RESET_GPU": {"severity": ..., "action": ...}}: checked whole, so a
 * bucket no code uses is still well formed. */
static int check_resolutions(json_t *resolutions, char *why, size_t whysize) {
        if (!resolutions)
                return 0;
        if (!json_is_object(resolutions)) {
                snprintf(why, whysize, "\"resolutions\" must be an object");
                return -EINVAL;
        }
        const char *key;
        json_t *v;
        json_object_foreach(resolutions, key, v) {
                enum xid_severity sev;
                if (!json_is_object(v) || severity_of(json_object_get(v, "severity"), &sev) < 0 ||
                    !json_is_string(json_object_get(v, "action"))) {
                        snprintf(why, whysize, "resolution %.64s needs \"severity\" (%s) and a string \"action\"", key,
                                 SEVERITY_CHOICES);
                        return -EINVAL;
                }
        }
        return 0;
}

static int parse_recovery(json_t *root, struct xiddb *x, char *why, size_t whysize) {
        json_t *rec = json_object_get(root, "recovery_actions");
        if (!rec)
                return 0;
        json_t *values = json_object_get(rec, "values");
        if (!json_is_object(rec) || !json_is_array(values)) {
                snprintf(why, whysize, "\"recovery_actions\" must be an object with a \"values\" list");
                return -EINVAL;
        }
        x->recovery = calloc(json_array_size(values) + 1, sizeof(*x->recovery));
        if (!x->recovery)
                return -ENOMEM;
        size_t i;
        json_t *e;
        json_array_foreach(values, i, e) {
                json_t *value = json_object_get(e, "value"), *name = json_object_get(e, "name"),
                       *action = json_object_get(e, "action");
                struct xid_recovery_action *a = &x->recovery[x->n_recovery];
                if (!json_is_integer(value) || json_integer_value(value) < 0 || json_integer_value(value) > 0xffff ||
                    !json_is_string(name) || !json_is_string(action) ||
                    severity_of(json_object_get(e, "severity"), &a->severity) < 0) {
                        snprintf(why, whysize,
                                 "recovery action %zu needs an integer \"value\", strings \"name\" and \"action\" and "
                                 "\"severity\" (%s)",
                                 i, SEVERITY_CHOICES);
                        return -EINVAL;
                }
                a->value = (unsigned)json_integer_value(value);
                if (xiddb_find_recovery(x, a->value)) {
                        snprintf(why, whysize, "recovery action %u is listed twice", a->value);
                        return -EINVAL;
                }
                a->name = json_string_value(name);
                a->action = json_string_value(action);
                x->n_recovery++;
        }
        return 0;
}

static int parse(json_t *root, struct xiddb *x, char *why, size_t whysize) {
        json_t *schema = json_object_get(root, "schema"), *list = json_object_get(root, "xids");
        json_t *resolutions = json_object_get(root, "resolutions");
        const char *schema_name = json_is_string(schema) ? json_string_value(schema) : "";
        bool v2 = strcmp(schema_name, XID_SCHEMA_V2) == 0;
        if (!v2 && strcmp(schema_name, XID_SCHEMA_V1) != 0) {
                snprintf(why, whysize, "\"schema\" must be \"%s\" (or the older \"%s\")", XID_SCHEMA_V2, XID_SCHEMA_V1);
                return -EINVAL;
        }
        if (!json_is_array(list)) {
                snprintf(why, whysize, "\"xids\" must be a list");
                return -EINVAL;
        }
        int r = check_resolutions(resolutions, why, whysize);
        if (r < 0 || (r = parse_recovery(root, x, why, whysize)) < 0)
                return r;
        x->xids = calloc(json_array_size(list) + 1, sizeof(*x->xids));
        if (!x->xids)
                return -ENOMEM;
        size_t i;
        json_t *e;
        json_array_foreach(list, i, e) {
                json_t *code = json_object_get(e, "code"), *name = json_object_get(e, "name"),
                       *sev = json_object_get(e, "severity"), *action = json_object_get(e, "action"),
                       *resolution = json_object_get(e, "resolution"), *mnemonic = json_object_get(e, "mnemonic");
                if (!json_is_integer(code) || json_integer_value(code) < 0 || json_integer_value(code) > 100000 ||
                    !json_is_string(name)) {
                        snprintf(why, whysize, "entry %zu needs an integer \"code\" and a string \"name\"", i);
                        return -EINVAL;
                }
                struct xid_info *info = &x->xids[x->n];
                info->code = (int)json_integer_value(code);
                info->name = json_string_value(name);
                info->mnemonic = json_is_string(mnemonic) ? json_string_value(mnemonic) : NULL;
                /* The code's own severity and action win over its bucket's. */
                json_t *bucket = NULL;
                if (resolution) {
                        bucket = json_is_string(resolution) && json_is_object(resolutions)
                                         ? json_object_get(resolutions, json_string_value(resolution))
                                         : NULL;
                        if (!bucket) {
                                snprintf(why, whysize, "Xid %d: resolution must name an entry of \"resolutions\"",
                                         info->code);
                                return -EINVAL;
                        }
                        info->resolution = json_string_value(resolution);
                }
                if (!sev && bucket)
                        sev = json_object_get(bucket, "severity");
                if (!action && bucket)
                        action = json_object_get(bucket, "action");
                if (severity_of(sev, &info->severity) < 0 || !json_is_string(action)) {
                        snprintf(why, whysize,
                                 "Xid %d needs a \"resolution\", or a \"severity\" (%s) and a string \"action\"",
                                 info->code, SEVERITY_CHOICES);
                        return -EINVAL;
                }
                info->action = json_string_value(action);
                if (xiddb_find(x, info->code)) {
                        snprintf(why, whysize, "Xid %d is listed twice", info->code);
                        return -EINVAL;
                }
                x->n++;
        }
        return 0;
}

/* Take root (NULL: it did not parse, err says why) into ret. */
static int take(json_t *root, const char *source, struct xiddb *ret, char *err, size_t errsize) {
        if (!root)
                return -EINVAL;
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
        json_t *root = json_doc_open(dir, "xid.json", (const char *)embedded_xid_json, embedded_xid_json_len, source,
                                     sizeof(source), err, errsize);
        return take(root, source, ret, err, errsize);
}

int xiddb_load_buffer(const char *buf, size_t len, const char *source, struct xiddb *ret, char *err, size_t errsize) {
        memset(ret, 0, sizeof(*ret));
        return take(json_doc_parse(buf, len, source, err, errsize), source, ret, err, errsize);
}

void xiddb_done(struct xiddb *x) {
        free(x->xids);
        free(x->recovery);
        json_decref(x->json);
        memset(x, 0, sizeof(*x));
}

const struct xid_info *xiddb_find(const struct xiddb *x, int code) {
        for (size_t i = 0; x && i < x->n; i++)
                if (x->xids[i].code == code)
                        return &x->xids[i];
        return NULL;
}

const struct xid_recovery_action *xiddb_find_recovery(const struct xiddb *x, unsigned value) {
        for (size_t i = 0; x && i < x->n_recovery; i++)
                if (x->recovery[i].value == value)
                        return &x->recovery[i];
        return NULL;
}

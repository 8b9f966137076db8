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

static int parse_resolutions(json_t *resolutions, struct xiddb *x) {
        if (!json_is_object(resolutions))
                return 0;
        x->resolutions = calloc(json_object_size(resolutions) + 1, sizeof(*x->resolutions));
        if (!x->resolutions)
                return -ENOMEM;
        const char *key;
        json_t *v;
        json_object_foreach(resolutions, key, v) {
                struct xid_resolution *r = &x->resolutions[x->n_resolutions++];
                r->name = key;
                r->action = json_string_value(json_object_get(v, "action"));
                severity_of(json_object_get(v, "severity"), &r->severity); /* check_resolutions vetted it */
        }
        return 0;
}

static int parse_nvlink5(json_t *root, struct xiddb *x, char *why, size_t whysize) {
        json_t *decode = json_object_get(root, "nvlink5_decode");
        if (!decode)
                return 0;
        json_t *rows = json_object_get(decode, "rows");
        if (!json_is_array(rows)) {
                snprintf(why, whysize, "\"nvlink5_decode\" must be an object with a \"rows\" list");
                return -EINVAL;
        }
        x->nvlink5 = calloc(json_array_size(rows) + 1, sizeof(*x->nvlink5));
        if (!x->nvlink5)
                return -ENOMEM;
        size_t i;
        json_t *e;
        json_array_foreach(rows, i, e) {
                struct xid_nvlink5_rule *r = &x->nvlink5[x->n_nvlink5];
                json_t *xid = json_object_get(e, "xid"), *units = json_object_get(e, "units"),
                       *status = json_object_get(e, "error_status"), *reason = json_object_get(e, "link_down_reason"),
                       *res = json_object_get(e, "resolution"), *res2 = json_object_get(e, "resolution_if_fatal"),
                       *sev = json_object_get(e, "severity");
                bool ok = json_is_integer(xid) && json_is_array(units) && json_array_size(units) > 0 &&
                          json_array_size(units) <= XID_NVLINK5_UNITS_MAX && json_is_string(res) &&
                          xiddb_find_resolution(x, json_string_value(res)) && (!res2 || json_is_string(res2)) &&
                          (!res2 || xiddb_find_resolution(x, json_string_value(res2))) &&
                          (!status || (json_is_integer(status) && json_integer_value(status) >= 0 &&
                                       json_integer_value(status) <= 0xffffffffLL)) &&
                          (!reason || (json_is_integer(reason) && json_integer_value(reason) >= 0 &&
                                       json_integer_value(reason) <= 63));
                for (size_t u = 0; ok && u < json_array_size(units); u++)
                        ok = json_is_string(json_array_get(units, u));
                if (!ok) {
                        snprintf(why, whysize,
                                 "nvlink5_decode row %zu needs \"xid\", 1-%d \"units\" and a \"resolution\" of "
                                 "\"resolutions\" (error_status a 32-bit value, link_down_reason 0-63)",
                                 i, XID_NVLINK5_UNITS_MAX);
                        return -EINVAL;
                }
                r->xid = (int)json_integer_value(xid);
                for (size_t u = 0; u < json_array_size(units); u++)
                        r->units[r->n_units++] = json_string_value(json_array_get(units, u));
                r->has_status = status != NULL;
                r->error_status = status ? (uint32_t)json_integer_value(status) : 0;
                r->link_down_reason = reason ? (int)json_integer_value(reason) : -1;
                r->resolution = json_string_value(res);
                r->resolution_if_fatal = res2 ? json_string_value(res2) : NULL;
                r->severity = json_is_string(sev) ? json_string_value(sev) : "";
                x->n_nvlink5++;
        }
        return 0;
}

static int parse(json_t *root, void *table, char *why, size_t whysize) {
        struct xiddb *x = table;
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
        if (r < 0 || (r = parse_recovery(root, x, why, whysize)) < 0 || (r = parse_resolutions(resolutions, x)) < 0 ||
            (r = parse_nvlink5(root, x, why, whysize)) < 0)
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

static void done(void *table) {
        xiddb_done(table);
}

int xiddb_load(const char *dir, struct xiddb *ret, char *err, size_t errsize) {
        memset(ret, 0, sizeof(*ret));
        char source[512];
        json_t *root = json_doc_open(dir, "xid.json", (const char *)embedded_xid_json, embedded_xid_json_len, source,
                                     sizeof(source), err, errsize);
        return json_doc_take(root, source, &ret->json, ret, parse, done, err, errsize);
}

int xiddb_load_buffer(const char *buf, size_t len, const char *source, struct xiddb *ret, char *err, size_t errsize) {
        memset(ret, 0, sizeof(*ret));
        return json_doc_take(json_doc_parse(buf, len, source, err, errsize), source, &ret->json, ret, parse, done, err,
                             errsize);
}

void xiddb_done(struct xiddb *x) {
        free(x->xids);
        free(x->recovery);
        free(x->resolutions);
        free(x->nvlink5);
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

const struct xid_resolution *xiddb_find_resolution(const struct xiddb *x, const char *name) {
        for (size_t i = 0; x && name && i < x->n_resolutions; i++)
                if (strcmp(x->resolutions[i].name, name) == 0)
                        return &x->resolutions[i];
        return NULL;
}

const struct xid_nvlink5_rule *xiddb_decode_nvlink5(const struct xiddb *x, int xid, const char *unit,
                                                    uint32_t intr_info, uint32_t error_status) {
        for (size_t i = 0; x && unit && unit[0] && i < x->n_nvlink5; i++) {
                const struct xid_nvlink5_rule *r = &x->nvlink5[i];
                if (r->xid != xid || (r->has_status && r->error_status != error_status) ||
                    (r->link_down_reason >= 0 && (int)((intr_info >> 20) & 0x3f) != r->link_down_reason))
                        continue;
                for (size_t u = 0; u < r->n_units; u++)
                        if (strcmp(r->units[u], unit) == 0)
                                return r;
        }
        return NULL;
}

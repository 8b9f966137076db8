/* ngc test's reading of what the container printed (ngc/ngc.h). */
#include "ngc/ngc.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "core/strbuf.h"
#include "core/strparse.h"

void ngc_read_framework(const char *out, struct ngc_seen *s) {
        /* The last line that is a JSON object with "framework": the script prints one. */
        const char *p = out ? out : "";
        char line[8192];
        while (text_next_line(&p, line, sizeof(line))) {
                json_t *o = json_loads(line, 0, NULL);
                if (!json_is_object(o) || !json_is_string(json_object_get(o, "framework"))) {
                        json_decref(o);
                        continue;
                }
                s->have_report = true;
                snprintf(s->framework, sizeof(s->framework), "%s", json_string_value(json_object_get(o, "framework")));
                const char *v = json_string_value(json_object_get(o, "version"));
                snprintf(s->version, sizeof(s->version), "%s", v ? v : "");
                s->matmul_ok = json_is_true(json_object_get(o, "matmul_ok"));
                json_t *err = json_object_get(o, "max_abs_err");
                s->max_abs_err = json_is_number(err) ? json_number_value(err) : -1;
                json_t *count = json_object_get(o, "gpu_count");
                s->count = json_is_integer(count) ? json_integer_value(count) : -1;
                s->n_uuids = 0;
                size_t i;
                json_t *u;
                json_array_foreach(json_object_get(o, "gpus"), i, u) {
                        if (json_is_string(u) && s->n_uuids < CONTAINER_GPU_MAX)
                                snprintf(s->uuids[s->n_uuids++], sizeof(s->uuids[0]), "%s", json_string_value(u));
                }
                if (s->count < 0)
                        s->count = (long long)s->n_uuids;
                json_decref(o);
        }
}

bool ngc_uuid_listed(const char (*list)[96], size_t n, const char *uuid) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(list[i], uuid) == 0)
                        return true;
        return false;
}

void ngc_test_judge(const struct ngc_test *t, const struct ngc_seen *s, const char (*host)[96], size_t n_host,
                    size_t host_count, struct ngc_test_verdict *v) {
        *v = (struct ngc_test_verdict){0};
        v->compare_uuids = t->compares_uuids && n_host > 0;
        for (size_t i = 0; v->compare_uuids && i < n_host; i++)
                if (!ngc_uuid_listed(s->uuids, s->n_uuids, host[i])) {
                        strbuf_appendf(v->missing, sizeof(v->missing), "%s%s", v->n_missing ? ", " : "", host[i]);
                        v->n_missing++;
                }
        v->gpus_ok = s->count == (long long)host_count &&
                     (!v->compare_uuids || (v->n_missing == 0 && s->n_uuids == n_host));
        v->report_ok = !t->script || s->have_report;
        v->matmul_ok = !t->script || s->matmul_ok;
        v->pass = v->report_ok && v->gpus_ok && v->matmul_ok;
}

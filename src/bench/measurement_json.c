#include "bench/measurement_json.h"
#include "core/json_real.h"
#include "core/json_text.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *num_or_null(double v) { return v > 0 && isfinite(v) ? json_real(v) : json_null(); }

json_t *bench_json_measurement(const struct measurement *m) {
        json_t *params = json_object();
        for (size_t i = 0; i < m->n_params; i++)
                json_object_set_new(params, m->params[i].key, json_text(m->params[i].value));
        json_t *samples = json_array();
        for (size_t i = 0; i < m->n_samples; i++)
                json_array_append_new(samples, isfinite(m->samples[i]) ? json_real(m->samples[i]) : json_null());
        json_t *stats = json_null();
        if (m->stats.n)
                stats = json_pack("{s:I, s:o, s:o, s:o, s:o, s:o}", "n", (json_int_t)m->stats.n, "min",
                                  json_real_or_null(m->stats.min), "median", json_real_or_null(m->stats.median), "max",
                                  json_real_or_null(m->stats.max), "mean", json_real_or_null(m->stats.mean), "cv",
                                  json_real_or_null(m->stats.cv));
        /* the report's key order: each figure beside its source */
        return json_pack("{s:o, s:o, s:o, s:o, s:b, s:o, s:I, s:o, s:o, s:b, "
                         "s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:o}",
                         "bench", json_text(m->bench), "name", json_text(m->name), "subject", json_text(m->subject),
                         "unit", json_text(m->unit), "higher_is_better", m->higher_is_better, "params", params,
                         "warmup", (json_int_t)m->warmup, "samples", samples, "stats", stats, "verified", m->verified,
                         "verify_error", json_text(m->verify_error), "peak", num_or_null(m->peak), "peak_source",
                         json_text(m->peak_source), "baseline", num_or_null(m->baseline), "baseline_source",
                         json_text(m->baseline_source), "ratio_peak", num_or_null(m->ratio_peak), "ratio_baseline",
                         num_or_null(m->ratio_baseline), "status", status_name(m->status), "summary",
                         json_text(m->summary));
}

static const char *get_str(json_t *o, const char *key) {
        json_t *v = json_object_get(o, key);
        return json_is_string(v) ? json_string_value(v) : json_is_null(v) ? "" : NULL;
}

static double get_num(json_t *o, const char *key) {
        json_t *v = json_object_get(o, key);
        return json_is_number(v) ? json_number_value(v) : 0;
}

static int status_from_name(const char *s, enum status *ret) {
        for (int i = 0; i < _STATUS_COUNT; i++)
                if (strcmp(status_name((enum status)i), s) == 0) {
                        *ret = (enum status)i;
                        return 0;
                }
        return -EINVAL;
}

int bench_json_parse_measurement(json_t *o, struct bench_report *rep, char *why, size_t whysize) {
        const char *bench = get_str(o, "bench"), *name = get_str(o, "name"), *subject = get_str(o, "subject"),
                   *unit = get_str(o, "unit"), *status = get_str(o, "status"), *summary = get_str(o, "summary");
        json_t *samples = json_object_get(o, "samples"), *params = json_object_get(o, "params");
        enum status st;
        if (!json_is_object(o) || !bench || !name || !subject || !unit || !status || !summary ||
            !json_is_array(samples) || !json_is_object(params) || status_from_name(status, &st) < 0) {
                snprintf(why, whysize, "a measurement lacks a field or has one of the wrong type");
                return -EINVAL;
        }
        struct measurement *m =
                bench_measurement_new(rep, bench, name, subject, unit, json_is_true(json_object_get(o, "higher_is_better")));
        if (rep->out_of_memory)
                return -ENOMEM;
        const char *key;
        json_t *v;
        json_object_foreach(params, key, v) measurement_param(m, key, "%s", json_is_string(v) ? json_string_value(v) : "");
        size_t n = json_array_size(samples);
        double *buf = malloc((n ? n : 1) * sizeof(double));
        if (!buf)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_t *s = json_array_get(samples, i);
                buf[i] = json_is_number(s) ? json_number_value(s) : NAN;
        }
        json_t *warmup = json_object_get(o, "warmup");
        int r = measurement_set_samples(m, buf, n, json_is_integer(warmup) ? (size_t)json_integer_value(warmup) : 0);
        free(buf);
        if (r < 0)
                return r;
        m->verified = json_is_true(json_object_get(o, "verified"));
        const char *ve = get_str(o, "verify_error");
        snprintf(m->verify_error, sizeof(m->verify_error), "%s", ve ? ve : "");
        m->peak = get_num(o, "peak");
        m->baseline = get_num(o, "baseline");
        const char *ps = get_str(o, "peak_source"), *bs = get_str(o, "baseline_source");
        snprintf(m->peak_source, sizeof(m->peak_source), "%s", ps ? ps : "");
        snprintf(m->baseline_source, sizeof(m->baseline_source), "%s", bs ? bs : "");
        m->status = st;
        snprintf(m->summary, sizeof(m->summary), "%s", summary);
        return 0;
}

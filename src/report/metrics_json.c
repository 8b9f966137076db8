/* The metrics registry as JSON (metrics_json.h). */
#include "report/metrics_json.h"

#include <math.h>

#include "metrics/metrics.h"
#include "core/json_text.h"

/* Integers stay integers (a byte count, a clock in hertz); anything else is a real. */
static json_t *number(double x) {
        if (x == floor(x) && fabs(x) < 9007199254740992.0) /* 2^53: exact in a double */
                return json_integer((json_int_t)x);
        return json_real(x);
}

json_t *metrics_json(const struct nvml_facts *facts, const struct nvml_gpu *gpu, bool system, metric_note_fn note,
                     void *ctx) {
        json_t *o = json_object();
        for (size_t i = 0; i < metric_count(); i++) {
                const struct metric *m = metric_at(i);
                if (m->system != system)
                        continue;
                struct metric_value v;
                metric_read(m, facts, gpu, &v);
                json_t *j;
                if (v.state != NV_OK)
                        j = note ? note(ctx, v.state, v.rc, v.fn) : json_null();
                else if (v.kind == METRIC_NUMBER)
                        j = number(v.number);
                else if (v.kind == METRIC_BOOL)
                        j = json_boolean(v.flag);
                else
                        j = json_text(v.text);
                json_object_set_new(o, m->id, j);
        }
        return o;
}

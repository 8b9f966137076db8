#include "report/bench_json.h"
#include "bench/bench.h"
#include "report/envelope.h"
#include "core/json_real.h"
#include "core/json_text.h"
#include "report/report_json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_SCHEMA "gpuvet.bench/2"

char *bench_json_report(const struct bench_json_run *run, const struct facts *facts, const struct bench_report *rep,
                        const struct bench_run_result *runs, size_t n_runs) {
        json_t *root = envelope_new(BENCH_SCHEMA, "bench");
        const struct bench_options *opt = run->opt;
        json_t *o = json_object();
        json_object_set_new(o, "benchmarks", json_text(run->benchmarks));
        json_object_set_new(o, "backend", json_text(opt->backend));
        json_object_set_new(o, "reps", opt->reps ? json_integer(opt->reps) : json_null());
        json_object_set_new(o, "warmup", opt->warmup ? json_integer(opt->warmup) : json_null());
        json_object_set_new(o, "size_bytes", opt->size_bytes ? json_integer((json_int_t)opt->size_bytes) : json_null());
        json_object_set_new(o, "threads", opt->threads ? json_integer(opt->threads) : json_null());
        json_object_set_new(o, "precision", json_text(opt->precision));
        json_t *gpus = json_array();
        for (size_t i = 0; i < opt->n_gpus; i++)
                json_array_append_new(gpus, json_integer(opt->gpus[i]));
        json_object_set_new(o, "gpus", opt->gpus ? gpus : (json_decref(gpus), json_null()));
        json_object_set_new(o, "timeout_s", run->timeout_s ? json_integer(run->timeout_s) : json_null());
        json_object_set_new(root, "options", o);
        if (facts) {
                json_object_set_new(root, "host", report_json_host(facts));
                json_object_set_new(root, "gpus", report_json_gpus(facts));
        }
        json_t *benches = json_array();
        for (size_t i = 0; i < n_runs; i++) {
                const struct bench_run_result *r = &runs[i];
                json_array_append_new(benches,
                                      json_pack("{s:s, s:s, s:s, s:o, s:o, s:I, s:o}", "name", r->info->name, "title",
                                                r->info->title, "status", status_name(r->status), "backend",
                                                r->backend[0] ? json_string(r->backend) : json_null(), "duration_ms",
                                                json_real_or_null(r->duration_ms), "measurements", (json_int_t)r->count, "note",
                                                r->note[0] ? json_text(r->note) : json_null()));
        }
        json_object_set_new(root, "benchmarks", benches);
        json_t *ms = json_array();
        unsigned counts[_STATUS_COUNT] = {0};
        for (size_t i = 0; i < rep->n; i++) {
                /* Judged now: told like a check result (observed, expected, remedy). */
                const struct measurement *m = &rep->m[i];
                counts[m->status]++;
                const struct bench_info *info = bench_find(m->bench);
                struct measurement_outcome out;
                measurement_outcome(m, info ? info->remedy : NULL, &out);
                json_t *mo = bench_json_measurement(m);
                report_json_outcome(mo, out.observed[0] ? out.observed : NULL, out.expected[0] ? out.expected : NULL,
                                    out.remedy);
                json_array_append_new(ms, mo);
        }
        json_object_set_new(root, "measurements", ms);
        json_object_set_new(root, "summary", envelope_summary(counts, run->verdict, run->duration_ms));
        char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
        json_decref(root);
        return s;
}

/* JSON of benchmark measurements and of a bench report (schema gpuvet.bench/2,
 * documented in docs/bench.md). The same measurement encoding travels over the runner's
 * pipe from child to parent, so a measurement survives the trip field for field. */
#pragma once

#include <jansson.h>

#include "bench/measurement.h"
#include "bench/runner.h"
#include "sys/facts.h"

/* One measurement; samples that are not finite become null (jansson has no NaN). */
json_t *bench_json_measurement(const struct measurement *m);
/* Append the measurement described by o to rep. -EINVAL when o lacks a field or has one
 * of the wrong type (with why), -ENOMEM. */
int bench_json_parse_measurement(json_t *o, struct bench_report *rep, char *why, size_t whysize);

struct bench_json_run {
        const char *benchmarks;  /* the NAME operand */
        const char *backend;     /* --backend */
        const struct bench_options *opt;
        unsigned timeout_s;      /* 0: each benchmark's default */
        double duration_ms;
        enum status verdict;
};

/* The whole report as a JSON string (caller frees); NULL on out of memory. */
char *bench_json_report(const struct bench_json_run *run, const struct facts *facts, const struct bench_report *rep,
                        const struct bench_run_result *runs, size_t n_runs);

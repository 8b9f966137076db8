/* JSON of a bench report (schema gpuvet.bench/2, documented in docs/bench.md); each
 * measurement in it is bench/measurement_json.h's encoding. */
#pragma once

#include <jansson.h>

#include "bench/measurement.h"
#include "bench/measurement_json.h"
#include "bench/runner.h"
#include "sys/facts.h"

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

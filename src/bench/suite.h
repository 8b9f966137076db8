/* Every benchmark, as `gpuvet bench all` runs it, for `gpuvet check --level full`: each in
 * a child under its own deadline (bench/runner.h), judged against peaks, baselines and the
 * node's other GPUs; device.benchmarks (checks/device.c) judges what they measured. */
#pragma once

#include <stdbool.h>

#include "bench/measurement.h"
#include "results/bench_suite.h"

struct facts;
struct fsroot;

/* Run every registered benchmark on the live devices with its default options, with a
 * progress line on standard error when progress (bench/runner.h). Never fails: problems
 * become measurements or not_run. Free with bench_suite_done. */
void bench_suite_run(struct fsroot *fs, const struct facts *f, const char *backend, const char *data_dir,
                     bool progress, struct bench_suite_facts *ret);
void bench_suite_not_run(struct bench_suite_facts *ret, const char *why);
void bench_suite_done(struct bench_suite_facts *s);

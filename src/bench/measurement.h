/* Recording and judging benchmark measurements (results/measurement.h: the types).
 *
 * Benchmarks fill name/subject/unit/samples/verification; bench_judge() computes the
 * statistics, ratios and status from the limits, so every benchmark is judged the same way
 * (docs/bench.md documents the thresholds). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "results/measurement.h"

/* In a benchmark's child (bench/runner.c): what it measures now ("triad" on "gpu0
 * (0000:1b:00.0)"), for the parent's progress line. Does nothing outside a child. */
void bench_live_note(const char *what, const char *subject);

void bench_report_init(struct bench_report *r);
void bench_report_done(struct bench_report *r);

/* Append a measurement with the given identity; the caller fills the rest. The static
 * sink of core/result.c's kind is used on allocation failure (r->out_of_memory set). In a
 * benchmark's child the name and subject become its live note. */
struct measurement *bench_measurement_new(struct bench_report *r, const char *bench, const char *name,
                                          const char *subject, const char *unit, bool higher_is_better);
void measurement_param(struct measurement *m, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Record the samples (copied). */
int measurement_set_samples(struct measurement *m, const double *samples, size_t n, size_t warmup);
/* Record a failure: status error (or skip) with a summary; samples may be absent. */
void measurement_fail(struct measurement *m, enum status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Statistics, ratios and status. A measurement that failed verification fails whatever its
 * figure; one with neither peak nor baseline passes with "no reference" in the summary.
 * The baseline is preferred for the verdict when both exist (achieved figures are what a
 * healthy part reaches); the peak ratio is reported alongside. */
void bench_judge(struct measurement *m, const struct bench_limits *limits);

/* bench_remedy: the remedy of the measurement's benchmark (struct bench_info), or NULL. */
void measurement_outcome(const struct measurement *m, const char *bench_remedy, struct measurement_outcome *out);

/* Within one node, flag GPUs well below their siblings' median for the same measurement
 * (bench, name, params alike): below (1 - tolerance) x median -> at least warn. */
void bench_compare_siblings(struct bench_report *r, double tolerance);
/* The same among measurements [first, r->n) only: one benchmark's, judged as soon as it
 * ends (siblings share a benchmark, so this gives what the whole report would). */
void bench_compare_siblings_from(struct bench_report *r, size_t first, double tolerance);

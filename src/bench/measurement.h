/* One benchmark measurement: what was measured, every sample, its statistics, the
 * comparison with the theoretical peak and with achieved baselines, and a verdict.
 *
 * Benchmarks fill name/subject/unit/samples/verification; bench_judge() computes the
 * statistics, ratios and status from the limits, so every benchmark is judged the same way
 * (docs/bench.md documents the thresholds). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "bench/stats.h"
#include "core/result.h"

#define MEASUREMENT_MAX_PARAMS 8

struct measurement_param {
        char key[24];   /* "size_bytes", "threads", "direction" */
        char value[128]; /* long enough for a device name; paths are given as file names */
};

struct measurement {
        char bench[24];    /* "memory", "host-memory", "transfer" ... */
        char name[48];     /* "triad", "h2d_pinned", "fp32_fma" */
        char subject[48];  /* "host", "node0", "gpu0 (0000:1b:00.0)", "gpu0->gpu1" */
        char unit[16];     /* "GB/s", "GFLOPS", "TFLOPS", "us" */
        bool higher_is_better;

        struct measurement_param params[MEASUREMENT_MAX_PARAMS];
        size_t n_params;

        double *samples;   /* one per repetition, after warm-up; owned */
        size_t n_samples;
        size_t warmup;     /* repetitions run and discarded first */
        struct bench_stats stats;

        /* Verification of the results the measured code produced: a wrong kernel must be
         * caught, its figure is then worthless. */
        bool verified;
        char verify_error[160]; /* "" when verified or not verifiable */

        /* Comparisons; 0 when unknown. ratio = median / reference (lower_is_better: ref / median). */
        double peak;              char peak_source[96];
        double baseline;          char baseline_source[96];
        double ratio_peak, ratio_baseline;

        struct bench_limits_used {
                double pass_ratio, warn_ratio; /* what bench_judge judged the ratio against; 0: none */
        } limits;

        enum status status;
        char summary[256];
};

/* Thresholds on the ratio to the reference: pass >= pass_ratio, warn >= warn_ratio, else fail. */
struct bench_limits {
        double pass_ratio, warn_ratio;
};

struct bench_report {
        struct measurement *m;
        size_t n, cap;
        bool out_of_memory;
};

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

/* A measurement told the way a check result is (core/result.h), so that a benchmark's
 * verdict reads like a check's: what was observed, what was expected, and what to do. */
struct measurement_outcome {
        char observed[160]; /* "2843 GB/s, median of 5 (min 2811, max 2851, cv 0.5%)"; "" without samples */
        char expected[224]; /* "at least 90% of the baseline 3000 GB/s (...)"; "" without a reference */
        const char *remedy; /* for warn and fail: the benchmark's remedy, or verification's; else NULL */
};
/* bench_remedy: the remedy of the measurement's benchmark (struct bench_info), or NULL. */
void measurement_outcome(const struct measurement *m, const char *bench_remedy, struct measurement_outcome *out);

/* Within one node, flag GPUs well below their siblings' median for the same measurement
 * (bench, name, params alike): below (1 - tolerance) x median -> at least warn. */
void bench_compare_siblings(struct bench_report *r, double tolerance);
/* The same among measurements [first, r->n) only: one benchmark's, judged as soon as it
 * ends (siblings share a benchmark, so this gives what the whole report would). */
void bench_compare_siblings_from(struct bench_report *r, size_t first, double tolerance);

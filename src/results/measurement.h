/* One benchmark measurement: what was measured, every sample, its statistics, the
 * comparison with the theoretical peak and with achieved baselines, and a verdict. The
 * types alone, as the checks that judge the probes and benchmarks read them; recording
 * and judging them is bench/measurement.h. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "results/stats.h"
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

/* A measurement told the way a check result is (core/result.h), so that a benchmark's
 * verdict reads like a check's: what was observed, what was expected, and what to do. */
struct measurement_outcome {
        char observed[160]; /* "2843 GB/s, median of 5 (min 2811, max 2851, cv 0.5%)"; "" without samples */
        char expected[224]; /* "at least 90% of the baseline 3000 GB/s (...)"; "" without a reference */
        const char *remedy; /* for warn and fail: the benchmark's remedy, or verification's; else NULL */
};

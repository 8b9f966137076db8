/* Achieved figures per GPU model and the thresholds every benchmark is judged by.
 *
 * data/baselines.json (schema gpuvet.baselines/1), compiled in and overridable with
 * --data-dir DIR (DIR/baselines.json when that file exists). Each baseline is what a
 * healthy part of that model reaches, converted to gpuvet's byte-counting convention
 * (docs/bench.md), with the public source it came from. Limits are per benchmark: one
 * pair of ratios against a baseline, another against the theoretical peak (a healthy
 * part never reaches the peak, so the peak thresholds are lower). */
#pragma once

#include <stddef.h>

#include "bench/measurement.h"

struct baseline {
        const char *gpu;        /* model name as in data/gpus.json: "NVIDIA H100 80GB HBM3" */
        const char *bench;      /* "memory" */
        const char *name;       /* measurement name: "triad" */
        double value;           /* in unit, gpuvet's convention */
        const char *unit;       /* "GB/s", "TFLOPS" */
        const char *source;     /* "S11 te42kyfo gpu-stream h100_pcie.txt" */
};

struct bench_limit_set {
        const char *bench;
        struct bench_limits baseline; /* ratio to the achieved baseline */
        struct bench_limits peak;     /* ratio to the theoretical peak, when no baseline */
        const char *rationale;
};

struct baselines {
        struct baseline *v;
        size_t n;
        struct bench_limit_set *limits;
        size_t n_limits;
        void *json;   /* keeps the strings alive */
        char source[512];
};

/* Load DIR/baselines.json when dir is non-NULL and that file exists, else the built-in
 * table. -EINVAL on a malformed file, with a message naming the file and line in err;
 * -ENOMEM. */
int baselines_load(const char *dir, struct baselines **ret, char *err, size_t errsize);
/* The same from a buffer; source names it in messages. */
int baselines_load_buffer(const char *buf, size_t len, const char *source, struct baselines **ret, char *err,
                          size_t errsize);
struct baselines *baselines_free(struct baselines *b);

/* The baseline for this model and measurement, or NULL. */
const struct baseline *baselines_find(const struct baselines *b, const char *gpu, const char *bench,
                                      const char *name);
/* The limits of a benchmark, or the "default" entry, or NULL. */
const struct bench_limit_set *baselines_limits(const struct baselines *b, const char *bench);

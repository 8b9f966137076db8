/* Benchmarks: a descriptor plus a run function, like checks (checks/check.h).
 *
 * bench.def lists them all, in one registry: those `gpuvet bench all` runs, then those with
 * a command of their own (train, nccl, rdma). The bench command runs each in a forked child under a
 * deadline (a hung device call becomes an error measurement, never a hang) and collects
 * its measurements; each measurement is judged against the theoretical peak (data/gpus.json)
 * and achieved baselines (data/baselines.json). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "bench/device.h"
#include "bench/measurement.h"
#include "sys/facts.h"

struct train_shape;

struct bench_options {
        const char *backend;      /* "auto", "cuda", "opencl" */
        const int *gpus;          /* device indices to use; NULL = all */
        size_t n_gpus;
        unsigned reps;            /* repetitions after warm-up (0: the benchmark's default) */
        unsigned warmup;          /* warm-up repetitions (0: default) */
        uint64_t size_bytes;      /* working set (0: default) */
        unsigned size_share;      /* memory: arrays of at most 1/size_share of the device's memory
                                   * (the probes' light load; 0: size_bytes as given) */
        unsigned threads;         /* host benchmarks (0: all online CPUs) */
        const char *precision;    /* gemm: "fp64", "fp32", "tf32", "fp16", "bf16", "fp8"; NULL = all */
        const char *only;         /* the part to run, for the standard level's probes; NULL = all.
                                   * memory: "triad"; transfer: "pinned" (h2d_pinned and d2h_pinned
                                   * at size_bytes, no sweep, no bidirectional); p2p: "write_uni" */
        bool link_under_load;     /* transfer: read each GPU's PCIe link while pinned H2D copies run
                                   * (measurement pcie/link_under_load; needs bench_ctx.fs) */
        const struct train_shape *train_shape; /* train: the model's shape and the step's sizes */
};

struct baselines;
struct fsroot;
struct bench_progress;

struct bench_ctx {
        const struct bench_options *opt;
        const struct facts *facts;          /* host, NUMA, GPUs (gpudb models give the peaks) */
        const struct baselines *baselines;  /* achieved figures per model */
        const struct dev_ops *ops;          /* NULL for host-only benchmarks */
        struct dev_backend *dev;
        struct fsroot *fs;                  /* the machine's files, for readings taken under load */
        struct bench_progress *progress;    /* the parent's progress line (bench/runner.h); NULL: none */
};

/* Whether opt->only asks for exactly this part. */
bool bench_only(const struct bench_ctx *ctx, const char *part);

struct bench_info {
        const char *name;   /* "memory", "host-memory" */
        const char *title;
        const char *remedy; /* what to do about a measurement that warns or fails (docs/bench.md) */
        bool needs_device;  /* false: runs without a GPU backend (host-memory) */
        bool on_nic;        /* measures the network adapters, not a GPU or the host (rdma) */
        bool own_command;   /* bench.def's BENCH_COMMAND: options of its own, not part of all */
        unsigned default_timeout_s; /* the runner's deadline without --timeout; 0: 120 s */
        /* NULL for nccl and rdma, whose commands run them (several processes, two nodes) */
        void (*run)(const struct bench_ctx *ctx, struct bench_report *rep);
};

#define BENCH(name) extern const struct bench_info bench_##name;
#define BENCH_COMMAND(name) extern const struct bench_info bench_##name;
#include "bench/bench.def"
#undef BENCH_COMMAND
#undef BENCH

/* Every benchmark of bench.def: first the bench_all_count that `gpuvet bench all` runs, in
 * its order, then those with a command of their own. */
extern const struct bench_info *const bench_registry[];
extern const size_t bench_registry_count;
extern const size_t bench_all_count;
/* One of `gpuvet bench all`'s benchmarks by name ("host-memory"); NULL for any other name,
 * those with a command of their own included. */
const struct bench_info *bench_find(const char *name);

/* The collective benchmark's measuring loop (`gpuvet bench nccl`): for each collective,
 * size of the sweep and placement, fill every local rank's send buffer with nccl_math's
 * deterministic fill, run the collective once and verify what each rank received, then warm
 * up and time `iters` back-to-back calls between device events, as nccl-tests does
 * (docs/bench.md, "nccl").
 *
 * It runs in the benchmark's child process, over the ranks this process drives: every GPU
 * of a single-process run (ncclCommInitAll), or one rank of a launcher's job. Every figure of
 * a row is already what the whole job measured: a multi-process job combines its processes'
 * times (their mean, as nccl-tests' default -a 1) and wrong-element counts (their sum)
 * through NCCL itself after each step. Each step is announced before it runs, so the parent
 * that keeps the deadline can name the collective that hung. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "bench/collective.h"
#include "bench/device.h"
#include "bench/nccl_math.h"

#define NCCL_RUN_MAX_LOCAL 64
/* Repetitions of the largest size's timed block: the samples the verdict is taken from. */
#define NCCL_RUN_FINAL_REPS 5

struct nccl_run_options {
        enum nccl_coll colls[NCCL_COLL_COUNT];
        size_t n_colls;
        enum nccl_dtype dtype;
        enum nccl_redop op;
        int root;
        struct nccl_sweep sweep;
        unsigned iters, warmup;
        bool out_of_place, in_place;
        bool check; /* verify every step's output (nccl-tests' -c 1) */
};

/* The ranks this process drives. */
struct nccl_ranks {
        struct coll_lib *lib;
        const struct dev_ops *ops; /* the CUDA backend */
        struct dev_backend *dev;
        struct dev_ctx *ctx[NCCL_RUN_MAX_LOCAL];
        struct coll_comm *comm[NCCL_RUN_MAX_LOCAL];
        int n_local;
        int nranks;    /* in the whole job */
        int nprocs;    /* processes in the job (their times are averaged) */
};

/* One step of the sweep, as the job measured it. */
struct nccl_row {
        enum nccl_coll coll;
        bool in_place;
        size_t bytes, count;
        double time_us;         /* per call: the mean over processes of each one's slowest local rank */
        double algbw_gbps, busbw_gbps;
        bool verified;          /* output compared with nccl_expected (check on) */
        double wrong;           /* elements that differed, over every rank (sampled past 8 MiB) */
        /* the largest size only: NCCL_RUN_FINAL_REPS timed blocks' busbw, else 0 */
        double final_busbw[NCCL_RUN_FINAL_REPS];
        size_t n_final;
};

struct nccl_run_sink {
        /* Before a step runs: what is about to be called. */
        void (*begin)(void *ctx, enum nccl_coll coll, bool in_place, size_t bytes);
        void (*row)(void *ctx, const struct nccl_row *row);
        void *ctx;
};

/* Run the sweep. 0, or a negative errno with the message in err (naming the collective, the
 * size and the call) after aborting nothing: the caller aborts the communicators. */
int nccl_run(const struct nccl_run_options *o, struct nccl_ranks *ranks, const struct nccl_run_sink *sink, char *err,
             size_t errsize);

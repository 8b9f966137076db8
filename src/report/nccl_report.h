/* `gpuvet bench nccl`'s reports: the per-size tables in nccl-tests' columns and the
 * verdicts (text), and the JSON document (schema gpuvet.bench-nccl/1, docs/bench.md). */
#pragma once

#include <stdio.h>

#include "bench/measurement.h"
#include "bench/nccl_expect.h"
#include "bench/nccl_job.h"
#include "bench/nccl_run.h"
#include "report/report_text.h"

#define NCCL_SCHEMA "gpuvet.bench-nccl/1"
/* What to do about a collective below its expected bus bandwidth (docs/bench.md, "nccl"). */
extern const char nccl_remedy[];

struct nccl_report {
        const struct nccl_run_options *run;
        const struct nccl_job_result *job;
        const struct nccl_fabric *fabric;
        const struct bench_report *verdicts; /* one measurement per collective, judged */
        enum status verdict;
        int nodes;
        const char *launcher;  /* "single process", "slurm", ... */
        char **environment;    /* NCCL_* variables, "NAME=value", NULL-terminated */
        /* $NCCL_TOPO_FILE, the topology NCCL was told to use instead of probing: NULL when
         * unset; its size, or -1 with topo_errno when it cannot be read (NCCL then fails or
         * falls back, and the report should say why) */
        const char *topo_file;
        long long topo_bytes;
        int topo_errno;
        /* a multi-process job, on rank 0: every rank's outcome (NULL: a single process, or
         * the ranks never met) and the rendezvous' address */
        const struct nccl_rank_outcome *outcomes;
        size_t n_outcomes;
        const char *rendezvous;
        int own_rank;
        unsigned hang_s, timeout_s;
        double duration_ms;
};

void nccl_report_text(FILE *out, const struct nccl_report *r, const struct text_options *opt);
/* The JSON document (caller frees); NULL when memory ran out. */
char *nccl_report_json(const struct nccl_report *r);

/* One process's part of `gpuvet bench nccl`, run so that nothing NCCL does can hang the
 * command or lose its diagnostics: a forked child (its own process group) opens the CUDA
 * backend and NCCL, joins the job's communicator and runs the sweep (bench/nccl_run.h),
 * sending each step's announcement and result to the parent over a pipe as fixed-size
 * records; its standard output and error (where NCCL_DEBUG writes) go to a capture file.
 * The parent keeps two deadlines: no progress for hang_s (a collective that never
 * completes: a misconfigured fabric, a peer that never came) and the whole run's timeout_s.
 * Either kills the child's group and names the step that was running. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "bench/collective.h"
#include "bench/nccl_run.h"

/* How this process joins the job. */
struct nccl_job_spec {
        const struct nccl_run_options *run;
        const int *gpus;     /* CUDA device indices this process drives; NULL: all (single process) */
        size_t n_gpus;
        /* A multi-process job: this process is rank `rank` of `nranks`, on one CUDA device:
         * the only one of gpus (or of the visible devices), else the local_rank-th. Once the
         * child has its device and NCCL open (so a rank that cannot start never joins, and
         * the others' rendezvous names it), share_id runs in the parent, which outlives a
         * child killed at a deadline: rank 0 publishes the id its child made with
         * coll_unique_id, the others fill id with it; the child then joins. */
        bool multi_process;
        int rank, nranks, local_rank;
        int (*share_id)(void *ctx, unsigned char id[COLL_ID_BYTES], char *err, size_t errsize);
        void *share_ctx;
        unsigned hang_s, timeout_s;
};

struct nccl_job_info {
        char library[256];   /* coll_lib_describe */
        char device_name[128];
        int nranks, nprocs, n_local;
        char bus_ids[NCCL_RUN_MAX_LOCAL][16]; /* this process's GPUs, CUDA's PCI bus ids */
        int cuda_index[NCCL_RUN_MAX_LOCAL];
};

struct nccl_job_result {
        bool have_info;
        struct nccl_job_info info;
        struct nccl_row *rows;
        size_t n_rows;
        bool joined;            /* a multi-process job: the rendezvous gave this rank the job's id */
        bool failed;            /* error[] says why */
        bool hung, timed_out;   /* no progress for hang_s / past timeout_s */
        char error[1024];
        /* the step running when it failed or hung: valid when have_step */
        bool have_step;
        enum nccl_coll step_coll;
        bool step_in_place;
        size_t step_bytes;
        char *log;              /* the child's output (NCCL's warnings), its last 8 KiB; NULL when empty */
        double duration_ms;
};

/* One rank's outcome in a multi-process job, as rank 0 gathered it after the job. */
struct nccl_rank_outcome {
        int rank;
        enum { NCCL_RANK_OK, NCCL_RANK_FAILED, NCCL_RANK_MISSING } state;
        char message[512];      /* its error; "" when ok or missing */
};

/* Run the job. Returns 0 whatever the job did (see result), or a negative errno when the
 * child could not be started (result->error says why). */
int nccl_job_run(const struct nccl_job_spec *spec, struct nccl_job_result *result);
void nccl_job_result_done(struct nccl_job_result *r);

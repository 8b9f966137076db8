/* slurm-health's check: the check pipeline (check_execute) in a child process of gpuvet's
 * own code under one overall deadline, so that whatever the GPUs do the caller gets an
 * answer in time and alone talks to Slurm. The child sends each result that is neither
 * pass nor skip back over a pipe, then its exit code. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cmd/check_run.h"
#include "core/result.h"

struct slurm_check_outcome {
        bool judged;          /* the checks ran and judged: verdict and ids hold */
        enum status verdict;  /* report_verdict's (an error result makes it fail) */
        char **ids[_STATUS_COUNT]; /* per status, the check ids in report order, each once */
        size_t n_ids[_STATUS_COUNT];
        int exit_code;        /* check's, when the child exited; -1 otherwise */
        bool timed_out;       /* killed at the deadline */
        int signal;           /* the signal that ended it otherwise (0: none) */
        bool out_of_memory;
};

/* Run check o with args in a child; kill its process group after timeout_ms. Returns 0 with
 * *out filled (judged or not: a timeout, a crash and a bad input are told by its fields),
 * or a negative errno when no child could be started. */
int slurm_check_run(const struct check_cli *o, const struct cmd_args *args, unsigned timeout_ms,
                    struct slurm_check_outcome *out);
void slurm_check_done(struct slurm_check_outcome *out);

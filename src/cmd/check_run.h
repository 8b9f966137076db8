/* The check pipeline, shared by `gpuvet check` and `gpuvet burn` (which is check at the
 * full level with only the burn category selected, and its own options): gather the
 * facts, run the probes and the stress test the selected checks judge, judge, report. */
#pragma once

#include <stdbool.h>

#include "bench/probes.h"
#include "burn/burn.h"
#include "cmd/options.h"
#include "core/result.h"
#include "report/report_text.h"

/* What the command was asked to do. */
struct check_cli {
        const char *command;      /* "check", "burn": in messages and the report */
        enum level level;
        const char *json_path, *only, *color, *backend, *policy_path;
        bool strict, list, quiet, no_policy;
        unsigned probe_timeout_s[_PROBE_COUNT]; /* 0: the probe's own */
        unsigned cuda_timeout_ms; /* 0: CUDA_DRIVER_TIMEOUT_MS_DEFAULT */
        int dcgm_level;           /* 0: DCGM not run */
        unsigned dcgm_timeout_s;  /* 0: the level's default */
        const char *container_runtime, *container_image; /* container.gpu_access; NULL: policy or default */
        unsigned container_timeout_s; /* 0: CONTAINER_GPU_DEFAULT_TIMEOUT_S */
        struct burn_options burn; /* the stress test, when a burn.* check is selected */
        struct text_options text;
        /* Called with the judged report before it is written (slurm-health sends its
         * results to its parent); NULL: none. */
        void (*judged)(const struct report *rep, void *ctx);
        void *judged_ctx;
};

struct fsroot;
struct facts;
struct container_gpu_facts;
struct progress;

/* A slow step with no progress of its own (container.gpu_access's container, DCGM's
 * diagnostic): one line on standard error naming it and its deadline, unless progress is
 * off (--no-progress, -q); the caller erases it with progress_clear when the step ends. */
void check_step_line(struct progress *p, const struct check_cli *o, const char *what, unsigned deadline_s);

/* container.gpu_access's container (check_container.c): the runtime from the options, the
 * site policy, $GPUVET_CONTAINER_RUNTIME or PATH; not run under a capture's --root unless
 * one is named, nor without GPUs or the NVIDIA toolkit (out->note says why). */
void check_container_gpu(const struct check_cli *o, struct fsroot *fs, const char *data_dir, const struct facts *f,
                         struct container_gpu_facts *out);

/* Every word of --only must name a check or a category, so a typo is an error, not an
 * empty pass; false after a message naming cmd and the word. */
bool check_only_is_valid(const char *cmd, const char *only);

/* Run the pipeline for o (parsed by the command) and args (cmd_parse's). Returns the exit
 * code: the verdict, or why nothing could be judged. */
int check_execute(const struct check_cli *o, const struct cmd_args *args);

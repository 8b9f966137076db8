/* gpuvet estimate's adviser: from a model, a parallel layout and a GPU, the memory per GPU,
 * whether it fits, the smallest changes that would make it fit, and the times (FLOPs and
 * tokens per second, per step and per epoch). Pure: no I/O; the command (src/cmd/estimate.c)
 * resolves the options and the GPU, then prints the answer (docs/estimate.md). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "estimate/estimate.h"

struct gpu_model;
struct model_preset;

/* 10% of the GPU's memory is held back for the CUDA context, NCCL buffers, the caching
 * allocator's fragmentation and temporary buffers the formulas do not count. */
#define EST_USABLE_FRACTION 0.9
#define EST_MAX_SUGGESTIONS 8
/* A bound on tp x pp x dp that keeps every product of the degrees and batches exact, and is
 * beyond any job run so far (the largest published runs use tens of thousands of GPUs). */
#define EST_MAX_GPUS 1048576ull

struct est_gpu {
        const struct gpu_model *model; /* NULL: none to judge by */
        unsigned count_on_node;        /* detected: how many; --gpu: 0 */
};

struct est_suggestion {
        char change[96]; /* "--zero 3" */
        double total;    /* bytes per GPU after it */
        unsigned gpus;   /* GPUs the job takes after it */
};

struct est_answer {
        const struct model_preset *preset; /* NULL for a shape from the command line */
        struct est_model model;
        struct est_config config;
        struct est_memory memory;
        double params_total, params_active, flops_per_token, mfu, tokens;
        unsigned gpus; /* tp x pp x dp */
        struct est_gpu gpu;
        double usable_bytes, peak;    /* 0: unknown */
        bool judged, fits;
        struct est_suggestion suggestions[EST_MAX_SUGGESTIONS];
        size_t n_suggestions;
        bool combined; /* the one suggestion combines several changes (find_combined) */
        /* times, NAN when unknown */
        double tokens_per_second, step_seconds, epoch_seconds, steps_per_epoch, decode_tokens_per_second;
};

/* tp x pp x dp, without overflow. */
unsigned long long est_gpus_of(const struct est_config *c);

/* Fill a's memory, parameters, FLOPs per token, the verdict against a->gpu's memory with
 * the suggestions when it does not fit, and the times, from a->model, a->config, a->gpu,
 * a->mfu, a->tokens and a->gpus. Returns 0, or -EINVAL for a layout est_memory refuses. */
int est_advise(struct est_answer *a);

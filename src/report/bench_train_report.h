/* gpuvet bench train's report: the text table and the JSON document (schema
 * gpuvet.bench-train/1, docs/bench.md "train"). The command measures and decides; this
 * writes what it found. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "bench/measurement.h"
#include "bench/train_shape.h"
#include "bench/train_torch.h"
#include "report/report_text.h"

/* One device's figures, derived from its measurements. */
struct train_figures {
        const struct measurement *step;              /* TFLOPS: model FLOPs over the whole step */
        const struct measurement *forward, *backward, *logits; /* ms of the proxy's parts; NULL: none */
        const struct measurement *allreduce; /* ms of the gradients' all-reduce; NULL on one GPU */
        double whole_step_ms;  /* the whole model's step the median implies */
        double tokens_per_s, samples_per_s;
        double mfu;            /* the step's ratio to the peak; 0: no GPU peak */
        bool cpu_device;       /* a CPU (PoCL): the figures are not a GPU's */
};

struct train_report {
        const char *model_id;   /* the preset, or "custom" */
        const char *model_name;
        const struct train_shape *shape;
        const char *precision;
        const char *backend;    /* "cuda", "opencl", "" when none opened */
        const char *framework;  /* "native" or "torch" */
        unsigned gpus, steps, warmup, timeout_s;
        double model_flops, proxy_flops, layer_flops, logit_flops, layer_params;
        const struct measurement *m; /* every measurement of the run */
        size_t n_m;
        const struct train_figures *fig; /* one per device with a step figure */
        size_t n_fig;
        double node_tokens_per_s; /* data parallel: every GPU's micro-batch over the slowest step; 0: one GPU */
        const struct train_torch_result *torch; /* NULL without --framework torch */
        const char *baseline_note; /* why the seed's baseline does or does not apply */
        enum status verdict;
        double duration_ms;
};

void train_report_text(FILE *out, const struct train_report *r, const struct text_options *opt);
/* The JSON document, malloc'd; NULL when out of memory. */
char *train_report_json(const struct train_report *r);

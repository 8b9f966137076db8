/* Memory and compute needs of training or serving a transformer (gpuvet estimate).
 * Pure functions: no I/O, no allocation; every formula names its source here and in
 * docs/estimate.md. Sizes are bytes, FLOPs are counts (not rates), times are seconds. */
#pragma once

#include <stdbool.h>

#include "data/model_shape.h"

enum est_precision { EST_FP32, EST_BF16, EST_FP16, EST_FP8, _EST_PRECISION_COUNT, _EST_PRECISION_INVALID = -1 };
enum est_optimizer { EST_ADAM, EST_SGD, EST_ADAFACTOR, _EST_OPTIMIZER_COUNT, _EST_OPTIMIZER_INVALID = -1 };
enum est_recompute { EST_RECOMPUTE_NONE, EST_RECOMPUTE_SELECTIVE, EST_RECOMPUTE_FULL, _EST_RECOMPUTE_COUNT,
                     _EST_RECOMPUTE_INVALID = -1 };
enum est_mode { EST_TRAIN, EST_INFER };

struct est_config {
        enum est_mode mode;
        enum est_precision precision;
        enum est_optimizer optimizer;
        unsigned zero;        /* ZeRO stage 0-3 over the data-parallel group */
        unsigned tp, pp, dp;  /* tensor-, pipeline-, data-parallel degrees */
        unsigned seq;         /* training: sequence length; inference: context length */
        unsigned micro_batch; /* training: sequences per micro-batch per data-parallel rank */
        unsigned global_batch;/* training: sequences per optimizer step */
        enum est_recompute recompute;
        unsigned batch;       /* inference: concurrent sequences */
        bool kv_cache;        /* inference: keep keys and values (default on) */
        bool fp32_gradients;  /* training: gradients kept (or accumulated) in fp32, 4 bytes */
};

struct est_memory {
        double weights, gradients, optimizer, activations, kv_cache, total; /* bytes per GPU */
};

/* Parameters the shape implies (dense: all; MoE: every expert), and those one token
 * meets (MoE: experts_per_token of them). */
double est_params_total(const struct est_model *m);
double est_params_active(const struct est_model *m);

/* Bytes per parameter of weights, gradients and optimizer states for c's mode, precision,
 * optimizer and gradient precision, before any sharding (Rajbhandari et al. 2019, ZeRO, sec.
 * 3.1: mixed-precision Adam keeps fp16 weights and gradients and an fp32 copy, momentum and
 * variance: 2 + 2 + 12 = 16 bytes; 18 with gradients kept in fp32). For inference only
 * weights count. */
struct est_config;
void est_bytes_per_param(const struct est_config *c, double *ret_weights, double *ret_gradients,
                         double *ret_optimizer);

/* Activation bytes one transformer layer keeps for one micro-batch of b sequences of s
 * tokens (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
 * Models", sec. 4, 16-bit activations): sbh(34 + 5as/h) without parallelism; with tensor
 * parallelism t and sequence parallelism sbh/t (34 + 5as/h); selective recomputation drops the
 * 5as/h attention term; full recomputation keeps only the layer's input, 2sbh (/t with
 * sequence parallelism). */
double est_activation_bytes_per_layer(unsigned s, unsigned b, unsigned h, unsigned a, unsigned t,
                                      enum est_recompute r);

/* The tokens a token attends to, and the KV cache keeps per sequence: seq, or the model's
 * sliding window when that is shorter. */
unsigned est_attended_tokens(const struct est_model *m, unsigned seq);
/* KV-cache bytes: 2 (keys and values) x layers x kv_heads x head_dim x seq x batch x bytes. */
double est_kv_cache_bytes(unsigned layers, unsigned kv_heads, unsigned head_dim, unsigned seq, unsigned batch,
                          double bytes_per_value);

/* Model FLOPs per token. Training: 6N + 12 L h s (Chowdhery et al. 2022, PaLM, appendix B;
 * the same count as Narayanan et al. 2021 eq. 3 without recomputation); inference, one new
 * token at context s: 2N + 4 L h s. N is the active parameter count, embeddings included. */
double est_flops_per_token(enum est_mode mode, double active_params, unsigned layers, unsigned hidden, unsigned seq);

/* Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters",
 * eq. 3: FLOPs per iteration with full recomputation, 96 B s l h^2 (1 + s/6h + V/16lh). */
double est_megatron_flops_per_iteration(double batch, double seq, double layers, double hidden, double vocab);
/* The same count without recomputation (the forward pass once, the backward pass twice its
 * FLOPs): 72 B s l h^2 (1 + s/6h + V/12lh), the model FLOPs MFU divides by (Narayanan et al.
 * 2021, sec. 5.1 and appendix; Chowdhery et al. 2022, appendix B). gpuvet bench train checks
 * its GEMM-by-GEMM count against it. */
double est_megatron_model_flops_per_iteration(double batch, double seq, double layers, double hidden, double vocab);

/* The model's shape is known (layers, hidden, heads, kv_heads): without it (--params alone)
 * activations, the KV cache and the attention FLOPs cannot be counted. */
bool est_model_has_shape(const struct est_model *m);

/* Per-GPU memory of the whole configuration. Returns 0, or -EINVAL when the configuration
 * cannot be laid out (heads not divisible by tp, layers fewer than pp, ...). */
int est_memory(const struct est_model *m, const struct est_config *c, struct est_memory *ret);

const char *est_precision_name(enum est_precision p);
const char *est_optimizer_name(enum est_optimizer o);
const char *est_recompute_name(enum est_recompute r);
enum est_precision est_precision_from_name(const char *s);
enum est_optimizer est_optimizer_from_name(const char *s);
enum est_recompute est_recompute_from_name(const char *s);

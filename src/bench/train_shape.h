/* The GEMMs of one training step of a transformer (gpuvet bench train) and their FLOPs.
 * Pure functions: no I/O, no allocation.
 *
 * A layer of a Megatron-LM GPT (or a Llama: gated MLP, grouped KV heads) does, per
 * micro-batch of B sequences of s tokens (T = B s tokens), hidden h, a heads of d = h / a:
 *
 *   forward                          m x n x k (column-major, D = op(A) op(B))
 *     qkv      Y = W^T X            (h + 2 kv d) x T x h
 *     score    S = K^T Q, per head   s x s x d          (B a of them)
 *     context  O = V P,  per head    d x s x s          (B a of them)
 *     proj     Y = W^T O             h x T x h
 *     mlp_up   Y = W^T X             ffn (2 ffn gated) x T x h
 *     mlp_down Y = W^T X             h x T x ffn
 *   backward: each linear GEMM twice (data gradient dX = W dY: "NN", weight gradient
 *   dW = X dY^T: "NT"), each attention GEMM twice (dP, dV; dQ, dK): 2x the forward FLOPs.
 *   logits (once a step, not per layer): V x T x h forward, twice that backward.
 *
 * That is the count of Narayanan et al. 2021 ("Efficient Large-Scale Language Model
 * Training on GPU Clusters", sec. 5.1, eq. 3 without recomputation): for a GPT shape (ffn =
 * 4h, kv = a, plain MLP) the sum is exactly 72 B s L h^2 (1 + s/6h + V/12Lh) per iteration
 * (est_megatron_model_flops_per_iteration; the unit test checks the two agree). The
 * element-wise work (layer norms, softmax, GeLU/SwiGLU, dropout, residuals) and the
 * optimizer are not run: they are not model FLOPs, but they take time in a real step. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "estimate/estimate.h"

struct train_shape {
        unsigned layers;     /* the model's, for the whole-model figures */
        unsigned hidden, heads, kv_heads, ffn, vocab;
        enum est_mlp mlp;
        unsigned seq, micro_batch;
        unsigned layers_run; /* layers the proxy runs (1..layers); the logit layer always runs */
};

enum train_phase { TRAIN_FORWARD, TRAIN_BACKWARD, TRAIN_LOGITS, _TRAIN_PHASE_COUNT };

/* Where a GEMM operand lives: a layer's weights or their gradients (at weight_offset in the
 * layer's block), or one of the activation buffers every GEMM shares. */
enum train_operand { TRAIN_WEIGHT, TRAIN_GRAD, TRAIN_ACT_A, TRAIN_ACT_B, TRAIN_OUT, _TRAIN_OPERAND_COUNT };

struct train_gemm {
        const char *name;       /* "qkv.fwd", "score.bwd_dq" ... */
        enum train_phase phase;
        uint64_t m, n, k;
        bool trans_a, trans_b;  /* op(A) = A^T, op(B) = B^T (column-major, cuBLAS's sense) */
        uint64_t batch;         /* 1, or B a for the per-head attention products */
        enum train_operand a, b, d;
        uint64_t weight_offset; /* elements into the layer's weight (or gradient) block */
};

#define TRAIN_MAX_GEMMS 32

/* 0 when the shape can be run: every size at least 1, heads dividing hidden, kv_heads
 * dividing heads, 1 <= layers_run <= layers; else -EINVAL with the reason in why. */
int train_shape_check(const struct train_shape *s, char *why, size_t size);

/* The GEMMs of a step, in order: one layer's forward, one layer's backward (a step runs
 * the forward of each of layers_run layers, then their backward in reverse order), then
 * the logit layer's forward and backward. Returns how many were written (at most
 * TRAIN_MAX_GEMMS). */
size_t train_gemms(const struct train_shape *s, struct train_gemm *out);

/* FLOPs of one GEMM entry: 2 m n k batch. */
double train_gemm_flops(const struct train_gemm *g);
/* The weights of one layer (QKV, output projection, MLP), in elements: its gradient
 * block's size too, and what data parallelism all-reduces per layer. Biases and layer
 * norms are left out (under 0.1% of a layer). */
uint64_t train_layer_params(const struct train_shape *s);

/* FLOPs of one layer's forward and backward, and of the logit layer's. */
double train_layer_flops(const struct train_shape *s);
double train_logit_flops(const struct train_shape *s);
/* What the proxy executes per step: layers_run layers plus the logits. */
double train_proxy_flops(const struct train_shape *s);
/* Model FLOPs of one iteration of the whole model on one micro-batch: all layers plus the
 * logits, the numerator of MFU. */
double train_model_flops(const struct train_shape *s);

/* The whole model's step in ms from the proxy's parts: every layer as long as the layers
 * run, one logit layer: (forward + backward) x layers / layers_run + logits. */
double train_whole_step_ms(const struct train_shape *s, double forward_ms, double backward_ms, double logits_ms);

/* The whole model's gradient all-reduce in ms from the proxy's: its bytes scale from the
 * layers run and the logit layer's weights to every layer's (time taken proportional to
 * the bytes: the bandwidth-bound regime of large all-reduces). */
double train_whole_allreduce_ms(const struct train_shape *s, double allreduce_ms);

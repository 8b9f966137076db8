#include "bench/train_shape.h"

#include <errno.h>
#include <stdio.h>

int train_shape_check(const struct train_shape *s, char *why, size_t size) {
        const char *bad = NULL;
        if (!s->layers || !s->hidden || !s->heads || !s->kv_heads || !s->ffn || !s->vocab || !s->seq ||
            !s->micro_batch)
                bad = "every size must be at least 1";
        else if (s->hidden % s->heads)
                bad = "the heads must divide the hidden size";
        else if (s->heads % s->kv_heads)
                bad = "the KV heads must divide the heads";
        else if (s->mlp != EST_MLP_PLAIN && s->mlp != EST_MLP_GATED)
                bad = "unknown MLP kind";
        else if (s->layers_run < 1 || s->layers_run > s->layers)
                bad = "the layers run must be 1 to the model's layers";
        if (bad) {
                snprintf(why, size, "%s", bad);
                return -EINVAL;
        }
        return 0;
}

static unsigned head_dim(const struct train_shape *s) { return s->hidden / s->heads; }
static uint64_t qkv_out(const struct train_shape *s) { return s->hidden + 2ull * s->kv_heads * head_dim(s); }
static uint64_t mlp_up_out(const struct train_shape *s) { return (s->mlp == EST_MLP_GATED ? 2ull : 1ull) * s->ffn; }

/* A linear layer y = W x (in -> out, W at off): forward "TN", data gradient "NN", weight
 * gradient "NT", as cuBLAS sees PyTorch's row-major [out, in] weight. */
static size_t linear(struct train_gemm *g, enum train_phase phase, const char *fwd, const char *dgrad,
                     const char *wgrad, uint64_t in, uint64_t out, uint64_t tokens, uint64_t off, bool backward) {
        if (!backward) {
                g[0] = (struct train_gemm){fwd, phase, out, tokens, in, true, false, 1, TRAIN_WEIGHT, TRAIN_ACT_A,
                                          TRAIN_OUT, off};
                return 1;
        }
        g[0] = (struct train_gemm){dgrad, phase, in, tokens, out, false, false, 1, TRAIN_WEIGHT, TRAIN_ACT_A,
                                  TRAIN_OUT, off};
        g[1] = (struct train_gemm){wgrad, phase, in, out, tokens, false, true, 1, TRAIN_ACT_A, TRAIN_ACT_B,
                                  TRAIN_GRAD, off};
        return 2;
}

/* One attention product per (sequence, head): m x n x k, B a of them. */
static struct train_gemm attention(const char *name, enum train_phase phase, uint64_t m, uint64_t n, uint64_t k,
                                   bool ta, bool tb, uint64_t batch) {
        return (struct train_gemm){name, phase, m, n, k, ta, tb, batch, TRAIN_ACT_A, TRAIN_ACT_B, TRAIN_OUT, 0};
}

size_t train_gemms(const struct train_shape *s, struct train_gemm *out) {
        uint64_t h = s->hidden, T = (uint64_t)s->micro_batch * s->seq, sq = s->seq, d = head_dim(s);
        uint64_t heads = (uint64_t)s->micro_batch * s->heads;
        uint64_t off_qkv = 0, off_proj = h * qkv_out(s), off_up = off_proj + h * h, off_down = off_up + h * mlp_up_out(s);
        size_t n = 0;
        /* forward */
        n += linear(out + n, TRAIN_FORWARD, "qkv.fwd", NULL, NULL, h, qkv_out(s), T, off_qkv, false);
        out[n++] = attention("score.fwd", TRAIN_FORWARD, sq, sq, d, true, false, heads);
        out[n++] = attention("context.fwd", TRAIN_FORWARD, d, sq, sq, false, false, heads);
        n += linear(out + n, TRAIN_FORWARD, "proj.fwd", NULL, NULL, h, h, T, off_proj, false);
        n += linear(out + n, TRAIN_FORWARD, "mlp_up.fwd", NULL, NULL, h, mlp_up_out(s), T, off_up, false);
        n += linear(out + n, TRAIN_FORWARD, "mlp_down.fwd", NULL, NULL, s->ffn, h, T, off_down, false);
        /* backward, last operation first */
        n += linear(out + n, TRAIN_BACKWARD, NULL, "mlp_down.dgrad", "mlp_down.wgrad", s->ffn, h, T, off_down, true);
        n += linear(out + n, TRAIN_BACKWARD, NULL, "mlp_up.dgrad", "mlp_up.wgrad", h, mlp_up_out(s), T, off_up, true);
        n += linear(out + n, TRAIN_BACKWARD, NULL, "proj.dgrad", "proj.wgrad", h, h, T, off_proj, true);
        out[n++] = attention("context.dgrad_p", TRAIN_BACKWARD, sq, sq, d, true, false, heads); /* dP = V^T dO */
        out[n++] = attention("context.dgrad_v", TRAIN_BACKWARD, d, sq, sq, false, true, heads); /* dV = dO P^T */
        out[n++] = attention("score.dgrad_q", TRAIN_BACKWARD, d, sq, sq, false, false, heads);  /* dQ = K dS */
        out[n++] = attention("score.dgrad_k", TRAIN_BACKWARD, d, sq, sq, false, true, heads);   /* dK = Q dS^T */
        n += linear(out + n, TRAIN_BACKWARD, NULL, "qkv.dgrad", "qkv.wgrad", h, qkv_out(s), T, off_qkv, true);
        /* the logit layer, its weight in a block of its own (offset 0) */
        n += linear(out + n, TRAIN_LOGITS, "logits.fwd", NULL, NULL, h, s->vocab, T, 0, false);
        n += linear(out + n, TRAIN_LOGITS, NULL, "logits.dgrad", "logits.wgrad", h, s->vocab, T, 0, true);
        return n;
}

double train_gemm_flops(const struct train_gemm *g) {
        return 2.0 * (double)g->m * (double)g->n * (double)g->k * (double)g->batch;
}

uint64_t train_layer_params(const struct train_shape *s) {
        uint64_t h = s->hidden;
        return h * qkv_out(s) + h * h + h * mlp_up_out(s) + (uint64_t)s->ffn * h;
}

static double phase_flops(const struct train_shape *s, bool logits) {
        struct train_gemm g[TRAIN_MAX_GEMMS];
        size_t n = train_gemms(s, g);
        double f = 0;
        for (size_t i = 0; i < n; i++)
                if ((g[i].phase == TRAIN_LOGITS) == logits)
                        f += train_gemm_flops(&g[i]);
        return f;
}

double train_layer_flops(const struct train_shape *s) { return phase_flops(s, false); }
double train_logit_flops(const struct train_shape *s) { return phase_flops(s, true); }

double train_proxy_flops(const struct train_shape *s) {
        return (double)s->layers_run * train_layer_flops(s) + train_logit_flops(s);
}

double train_model_flops(const struct train_shape *s) {
        return (double)s->layers * train_layer_flops(s) + train_logit_flops(s);
}

double train_whole_step_ms(const struct train_shape *s, double forward_ms, double backward_ms, double logits_ms) {
        return (forward_ms + backward_ms) * (double)s->layers / (double)s->layers_run + logits_ms;
}

double train_whole_allreduce_ms(const struct train_shape *s, double allreduce_ms) {
        double layer = (double)train_layer_params(s), logits = (double)s->vocab * s->hidden;
        return allreduce_ms * ((double)s->layers * layer + logits) / ((double)s->layers_run * layer + logits);
}

#include "estimate/estimate.h"

#include <errno.h>
#include <string.h>

static const char *const precision_names[_EST_PRECISION_COUNT] = {"fp32", "bf16", "fp16", "fp8"};
static const char *const optimizer_names[_EST_OPTIMIZER_COUNT] = {"adam", "sgd", "adafactor"};
static const char *const recompute_names[_EST_RECOMPUTE_COUNT] = {"none", "selective", "full"};

#define NAME_OF(table, count, v) ((int)(v) >= 0 && (int)(v) < (count) ? (table)[(v)] : "?")

static int index_of(const char *const *table, int count, const char *s) {
        for (int i = 0; s && i < count; i++)
                if (strcmp(s, table[i]) == 0)
                        return i;
        return -1;
}

const char *est_precision_name(enum est_precision p) { return NAME_OF(precision_names, _EST_PRECISION_COUNT, p); }
const char *est_optimizer_name(enum est_optimizer o) { return NAME_OF(optimizer_names, _EST_OPTIMIZER_COUNT, o); }
const char *est_recompute_name(enum est_recompute r) { return NAME_OF(recompute_names, _EST_RECOMPUTE_COUNT, r); }
enum est_precision est_precision_from_name(const char *s) {
        return (enum est_precision)index_of(precision_names, _EST_PRECISION_COUNT, s);
}
enum est_optimizer est_optimizer_from_name(const char *s) {
        return (enum est_optimizer)index_of(optimizer_names, _EST_OPTIMIZER_COUNT, s);
}
enum est_recompute est_recompute_from_name(const char *s) {
        return (enum est_recompute)index_of(recompute_names, _EST_RECOMPUTE_COUNT, s);
}

/* Weights of one layer's attention: Q and O are h x h; K and V are h x (kv_heads x head_dim),
 * smaller than h x h under grouped-query attention. Biases are left out (none in Llama,
 * Mistral; under 0.01% in GPT-3 and Qwen2.5). */
static double attention_params(const struct est_model *m) {
        double h = m->hidden, kv_width = (double)m->kv_heads * (m->hidden / m->heads);
        return 2 * h * h + 2 * h * kv_width;
}

static double mlp_params(const struct est_model *m) {
        return (m->mlp == EST_MLP_GATED ? 3.0 : 2.0) * m->hidden * m->ffn;
}

/* Embedding, output layer, position table and the final norm: what is not per layer. */
static double outside_layers_params(const struct est_model *m) {
        double h = m->hidden, embed = (double)m->vocab * h;
        return embed * (m->tied_embeddings ? 1 : 2) + (m->learned_positions ? (double)m->max_seq * h : 0) +
               (m->mlp == EST_MLP_GATED ? h : 2 * h);
}

/* Two norms per layer: RMSNorm has a scale (h), LayerNorm a scale and a bias (2h). */
static double norm_params(const struct est_model *m) { return (m->mlp == EST_MLP_GATED ? 2.0 : 4.0) * m->hidden; }

static double params_with_experts(const struct est_model *m, unsigned experts) {
        double per_layer = attention_params(m) + norm_params(m) + mlp_params(m) * (experts ? experts : 1) +
                           (m->experts ? (double)m->hidden * m->experts : 0); /* the router */
        return m->layers * per_layer + outside_layers_params(m);
}

double est_params_total(const struct est_model *m) {
        if (m->params_override > 0)
                return m->params_override;
        return params_with_experts(m, m->experts);
}

double est_params_active(const struct est_model *m) {
        if (m->params_override > 0)
                return m->params_override;
        return params_with_experts(m, m->experts ? m->experts_per_token : 0);
}

static double precision_bytes(enum est_precision p) {
        switch (p) {
        case EST_FP32: return 4;
        case EST_FP8: return 1;
        default: return 2;
        }
}

void est_bytes_per_param(const struct est_config *c, double *ret_weights, double *ret_gradients,
                         double *ret_optimizer) {
        enum est_precision p = c->precision;
        enum est_optimizer o = c->optimizer;
        if (c->mode == EST_INFER) {
                *ret_weights = precision_bytes(p);
                *ret_gradients = *ret_optimizer = 0;
                return;
        }
        /* The optimizer's own states per parameter, in fp32: Adam's momentum and variance (8),
         * SGD's momentum (4), Adafactor without momentum nothing per parameter: its second
         * moment is factored into a row and a column vector per matrix (Shazeer & Stern 2018,
         * sec. 3), (rows + columns) x 4 bytes, under 0.1% of a matrix of h >= 1024 and left out. */
        double states = o == EST_ADAM ? 8 : o == EST_SGD ? 4 : 0;
        if (p == EST_FP32) {
                /* no master copy */
                *ret_weights = 4;
                *ret_gradients = 4;
                *ret_optimizer = states;
                return;
        }
        /* Mixed precision (ZeRO sec. 3.1): 16-bit weights and gradients, an fp32 master copy
         * beside the optimizer's fp32 states. FP8 training as Transformer Engine does it keeps
         * the 16-bit weights and adds an fp8 copy for the GEMMs: 2 + 1. */
        *ret_weights = p == EST_FP8 ? 3 : 2;
        /* Megatron-LM's --accumulate-allreduce-grads-in-fp32 and DeepSpeed's fp32 gradient
         * accumulation keep 4-byte gradients: 18 bytes a parameter with Adam. */
        *ret_gradients = c->fp32_gradients ? 4 : 2;
        *ret_optimizer = 4 + states; /* the fp32 master copy */
}

double est_activation_bytes_per_layer(unsigned s, unsigned b, unsigned h, unsigned a, unsigned t,
                                      enum est_recompute r) {
        double sbh = (double)s * b * h, tp = t ? t : 1;
        switch (r) {
        case EST_RECOMPUTE_FULL: return 2 * sbh / tp;
        case EST_RECOMPUTE_SELECTIVE: return sbh * 34 / tp;
        default: return sbh / tp * (34 + 5.0 * a * s / h);
        }
}

unsigned est_attended_tokens(const struct est_model *m, unsigned seq) {
        /* a rolling buffer of window entries (Mistral's reference code, vLLM) */
        return m->sliding_window && m->sliding_window < seq ? m->sliding_window : seq;
}

double est_kv_cache_bytes(unsigned layers, unsigned kv_heads, unsigned head_dim, unsigned seq, unsigned batch,
                          double bytes_per_value) {
        return 2.0 * layers * kv_heads * head_dim * (double)seq * batch * bytes_per_value;
}

double est_flops_per_token(enum est_mode mode, double active_params, unsigned layers, unsigned hidden,
                           unsigned seq) {
        double attention = (double)layers * hidden * seq;
        return mode == EST_TRAIN ? 6 * active_params + 12 * attention : 2 * active_params + 4 * attention;
}

double est_megatron_flops_per_iteration(double batch, double seq, double layers, double hidden, double vocab) {
        return 96 * batch * seq * layers * hidden * hidden *
               (1 + seq / (6 * hidden) + vocab / (16 * layers * hidden));
}

double est_megatron_model_flops_per_iteration(double batch, double seq, double layers, double hidden, double vocab) {
        return 72 * batch * seq * layers * hidden * hidden *
               (1 + seq / (6 * hidden) + vocab / (12 * layers * hidden));
}

static unsigned ceil_div(unsigned a, unsigned b) { return (a + b - 1) / b; }

bool est_model_has_shape(const struct est_model *m) { return m->layers && m->hidden && m->heads && m->kv_heads; }

/* 0 when the parallel layout is possible: degrees at least 1, ZeRO 0-3, heads divisible by tp
 * and kv_heads dividing heads, at least one layer per pipeline stage (checked when the shape is
 * known); else -EINVAL. */
static int est_check_layout(const struct est_model *m, const struct est_config *c) {
        if (!c->tp || !c->pp || !c->dp || c->zero > 3)
                return -EINVAL;
        if (!est_model_has_shape(m))
                return 0; /* a bare count splits evenly by any degree */
        /* Megatron-LM splits heads across tensor-parallel ranks and layers across stages. */
        if (m->hidden % m->heads || m->heads % m->kv_heads || m->heads % c->tp || m->layers < c->pp)
                return -EINVAL;
        return 0;
}

int est_memory(const struct est_model *m, const struct est_config *c, struct est_memory *ret) {
        memset(ret, 0, sizeof(*ret));
        int r = est_check_layout(m, c);
        if (r < 0)
                return r;
        double weight_b, gradient_b, optimizer_b;
        est_bytes_per_param(c, &weight_b, &gradient_b, &optimizer_b);
        /* Tensor and pipeline parallelism split the parameters evenly (Megatron-LM; the
         * embedding's imbalance on the first and last stage is ignored). ZeRO then shards, over
         * the data-parallel group, the optimizer states (stage 1), the gradients (2) and the
         * weights (3) (Rajbhandari et al. 2019, sec. 5). */
        double shard = est_params_total(m) / ((double)c->tp * c->pp);
        bool training = c->mode == EST_TRAIN;
        ret->weights = shard * weight_b / (training && c->zero >= 3 ? c->dp : 1);
        ret->gradients = shard * gradient_b / (c->zero >= 2 ? c->dp : 1);
        ret->optimizer = shard * optimizer_b / (c->zero >= 1 ? c->dp : 1);
        if (est_model_has_shape(m)) {
                if (training) {
                        /* With the 1F1B schedule the first stage holds pp micro-batches of L/pp
                         * layers in flight: L layers' worth whatever pp is (Korthikanti sec. 4.2.3),
                         * unless a step has fewer micro-batches than stages. */
                        unsigned in_flight = c->pp;
                        if (c->global_batch && c->micro_batch) {
                                unsigned micro_batches = c->global_batch / c->micro_batch / c->dp;
                                if (micro_batches < in_flight)
                                        in_flight = micro_batches ? micro_batches : 1;
                        }
                        ret->activations = (double)ceil_div(m->layers, c->pp) * in_flight *
                                           est_activation_bytes_per_layer(c->seq, c->micro_batch, m->hidden, m->heads,
                                                                          c->tp, c->recompute);
                } else if (c->kv_cache) {
                        /* Each tensor-parallel rank holds its share of the KV heads, at least one
                         * (vLLM replicates a KV head when tp exceeds kv_heads); each stage its layers. */
                        unsigned kv_per_rank = c->tp >= m->kv_heads ? 1 : ceil_div(m->kv_heads, c->tp);
                        ret->kv_cache = est_kv_cache_bytes(ceil_div(m->layers, c->pp), kv_per_rank, m->hidden / m->heads,
                                                           est_attended_tokens(m, c->seq), c->batch,
                                                           precision_bytes(c->precision));
                }
        }
        ret->total = ret->weights + ret->gradients + ret->optimizer + ret->activations + ret->kv_cache;
        return 0;
}


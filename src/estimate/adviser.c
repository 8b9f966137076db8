/* gpuvet estimate's adviser: the verdict, the suggestions and the times (estimate/adviser.h). */
#include "estimate/adviser.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "data/gpudb.h"

/* Dense Tensor Core peak for the precision, FLOP/s; 0 when the table gives none. FP32
 * training runs its GEMMs as TF32 where the GPU has it (PyTorch's default for convolutions,
 * Megatron's with --tf32), so TF32 is the peak for fp32 when known. */
static double peak_flops(const struct gpu_model *g, enum est_precision p) {
        const struct gpu_tflops *t = &g->tflops;
        double tflops = 0;
        switch (p) {
        case EST_FP32: tflops = t->tf32 > 0 ? t->tf32 : t->fp32; break;
        case EST_BF16: tflops = t->bf16; break;
        case EST_FP16: tflops = t->fp16; break;
        case EST_FP8: tflops = t->fp8; break;
        default: break;
        }
        return tflops * 1e12;
}

unsigned long long est_gpus_of(const struct est_config *c) { return (unsigned long long)c->tp * c->pp * c->dp; }

static bool fits_with(const struct est_answer *a, const struct est_model *m, const struct est_config *c, double *ret_total) {
        struct est_memory mem;
        if (est_memory(m, c, &mem) < 0)
                return false;
        *ret_total = mem.total;
        return mem.total <= a->usable_bytes;
}

/* Add the change (printf-style, the option and its value) if c fits; returns whether it did. */
static bool suggest(struct est_answer *a, const struct est_config *c, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static bool suggest(struct est_answer *a, const struct est_config *c, const char *fmt, ...) {
        double total;
        if (a->n_suggestions >= EST_MAX_SUGGESTIONS || est_gpus_of(c) > EST_MAX_GPUS || !fits_with(a, &a->model, c, &total))
                return false;
        struct est_suggestion *s = &a->suggestions[a->n_suggestions++];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->change, sizeof(s->change), fmt, ap);
        va_end(ap);
        s->total = total;
        s->gpus = (unsigned)est_gpus_of(c);
        return true;
}

/* The smallest change of one setting that would fit, for each setting that can help. */
static void find_suggestions(struct est_answer *a) {
        const struct est_config base = a->config;
        struct est_config c;
        if (base.mode == EST_TRAIN) {
                for (unsigned z = base.zero + 1; z <= 3 && base.dp > 1; z++) {
                        c = base, c.zero = z;
                        if (suggest(a, &c, "--zero %u", z))
                                break;
                }
                for (int r = base.recompute + 1; r < _EST_RECOMPUTE_COUNT; r++) {
                        c = base, c.recompute = (enum est_recompute)r;
                        if (suggest(a, &c, "--recompute %s", est_recompute_name(c.recompute)))
                                break;
                }
                /* The largest smaller micro-batch that divides each rank's share of the global
                 * batch, so that gradient accumulation keeps the global batch as it is. */
                unsigned per_rank = base.global_batch / base.dp;
                for (unsigned mb = base.micro_batch - 1; mb >= 1; mb--) {
                        if (per_rank % mb)
                                continue;
                        c = base, c.micro_batch = mb;
                        if (suggest(a, &c, "--micro-batch %u (gradient accumulation keeps the global batch)", mb))
                                break;
                }
        } else {
                if (base.precision != EST_FP8) {
                        c = base, c.precision = EST_FP8;
                        suggest(a, &c, "--precision fp8 (weights and KV cache in 8 bits)");
                }
                for (unsigned b = base.batch / 2; b >= 1; b /= 2) {
                        c = base, c.batch = b;
                        if (suggest(a, &c, "--batch %u", b))
                                break;
                }
                for (unsigned s = base.seq / 2; s >= 128; s /= 2) {
                        c = base, c.seq = s;
                        if (suggest(a, &c, "--seq %u", s))
                                break;
                }
        }
        for (unsigned tp = base.tp * 2; tp <= 64; tp *= 2) {
                c = base, c.tp = tp;
                if (suggest(a, &c, "--tp %u", tp))
                        break;
        }
        for (unsigned pp = base.pp * 2; pp <= 256; pp *= 2) {
                c = base, c.pp = pp;
                if (suggest(a, &c, "--pp %u", pp))
                        break;
        }
        if (base.mode == EST_TRAIN && base.zero >= 1) {
                for (unsigned dp = base.dp * 2; dp <= 4096; dp *= 2) {
                        c = base, c.dp = dp;
                        unsigned long long global = (unsigned long long)base.global_batch / base.dp * dp;
                        if (global > 1073741824ull)
                                break;
                        c.global_batch = (unsigned)global;
                        if (suggest(a, &c, "--dp %u (ZeRO shards over more GPUs)", dp))
                                break;
                }
        }
}

/* When no single change fits: the memory-saving settings that cost no GPUs (ZeRO 3 over the
 * data-parallel group and full recomputation; fp8 for inference), then pipeline stages
 * doubled until it fits, as one combined change. Nothing when even 4096 GPUs do not. */
static void find_combined(struct est_answer *a) {
        struct est_config c = a->config;
        char change[96] = "";
        size_t used = 0;
        if (c.mode == EST_TRAIN) {
                if (c.dp > 1 && c.zero < 3)
                        used += (size_t)snprintf(change + used, sizeof(change) - used, "--zero 3 "), c.zero = 3;
                if (c.recompute != EST_RECOMPUTE_FULL)
                        used += (size_t)snprintf(change + used, sizeof(change) - used, "--recompute full "),
                                c.recompute = EST_RECOMPUTE_FULL;
        } else if (c.precision != EST_FP8) {
                used += (size_t)snprintf(change + used, sizeof(change) - used, "--precision fp8 "), c.precision = EST_FP8;
        }
        double total;
        while (!fits_with(a, &a->model, &c, &total)) {
                c.pp *= 2;
                if (est_gpus_of(&c) > 4096 || (est_model_has_shape(&a->model) && c.pp > a->model.layers))
                        return;
        }
        if (c.pp != a->config.pp)
                snprintf(change + used, sizeof(change) - used, "--pp %u", c.pp);
        struct est_suggestion *s = &a->suggestions[a->n_suggestions++];
        snprintf(s->change, sizeof(s->change), "%s", change);
        s->total = total;
        s->gpus = (unsigned)est_gpus_of(&c);
        a->combined = true;
}

static void compute_times(struct est_answer *a) {
        const struct est_config *c = &a->config;
        a->tokens_per_second = a->step_seconds = a->epoch_seconds = a->steps_per_epoch = NAN;
        a->decode_tokens_per_second = NAN;
        if (!(a->peak > 0))
                return;
        double rate = a->gpus * a->peak * a->mfu; /* model FLOP/s of the whole job */
        a->tokens_per_second = rate / a->flops_per_token;
        if (c->mode == EST_TRAIN) {
                double tokens_per_step = (double)c->global_batch * c->seq;
                a->step_seconds = tokens_per_step / a->tokens_per_second;
                if (a->tokens > 0) {
                        a->steps_per_epoch = ceil(a->tokens / tokens_per_step);
                        a->epoch_seconds = a->tokens / a->tokens_per_second;
                }
                return;
        }
        /* Decoding reads every weight and the whole KV cache once per step: with batch
         * sequences per step a replica makes at most batch x bandwidth / bytes tokens a second. */
        double bw = a->gpu.model->mem_bw_gbps * 1e9, bytes = a->memory.weights + a->memory.kv_cache;
        if (bw > 0 && bytes > 0) {
                double per_replica = c->batch * bw / bytes;
                a->decode_tokens_per_second = per_replica * c->dp;
        }
        double rate_tokens = a->tokens_per_second;
        if (a->decode_tokens_per_second < rate_tokens)
                rate_tokens = a->decode_tokens_per_second;
        a->step_seconds = (double)c->batch * c->dp / rate_tokens; /* one decode step of the whole job */
        if (a->tokens > 0)
                a->epoch_seconds = a->tokens / rate_tokens;
}

int est_advise(struct est_answer *a) {
        if (est_memory(&a->model, &a->config, &a->memory) < 0)
                return -EINVAL;
        a->params_total = est_params_total(&a->model);
        a->params_active = est_params_active(&a->model);
        bool shape = est_model_has_shape(&a->model);
        a->flops_per_token = est_flops_per_token(a->config.mode, a->params_active, shape ? a->model.layers : 0,
                                                 shape ? a->model.hidden : 0, est_attended_tokens(&a->model, a->config.seq));
        if (a->gpu.model) {
                a->usable_bytes = a->gpu.model->memory_gb * 1e9 * EST_USABLE_FRACTION;
                a->peak = peak_flops(a->gpu.model, a->config.precision);
                a->judged = a->usable_bytes > 0;
                a->fits = a->judged && a->memory.total <= a->usable_bytes;
                if (a->judged && !a->fits)
                        find_suggestions(a);
                if (a->judged && !a->fits && a->n_suggestions == 0)
                        find_combined(a);
        }
        compute_times(a);
        return 0;
}

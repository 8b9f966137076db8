/* gpuvet estimate: memory per GPU and time of training or serving a transformer, for a
 * preset of data/models.json or a shape given on the command line, judged against the GPU
 * table's memory and peak rates (docs/estimate.md). */
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/specs.h"
#include "core/array.h"
#include "core/fsroot.h"
#include "data/gpudb.h"
#include "data/modeldb.h"
#include "estimate/adviser.h"
#include "estimate/estimate.h"
#include "core/json_real.h"
#include "sys/gpu.h"
#include "sys/pci.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum estimate_opt {
        ESTIMATE_JSON = 'j',
        ESTIMATE_MODEL = 0x100, ESTIMATE_LIST, ESTIMATE_PARAMS, ESTIMATE_LAYERS, ESTIMATE_HIDDEN, ESTIMATE_HEADS,
        ESTIMATE_KV_HEADS, ESTIMATE_WINDOW, ESTIMATE_VOCAB, ESTIMATE_FFN, ESTIMATE_MLP, ESTIMATE_TRAIN, ESTIMATE_INFER,
        ESTIMATE_PRECISION, ESTIMATE_OPTIMIZER, ESTIMATE_ZERO, ESTIMATE_TP, ESTIMATE_PP, ESTIMATE_DP, ESTIMATE_SEQ,
        ESTIMATE_MICRO, ESTIMATE_GLOBAL, ESTIMATE_RECOMPUTE, ESTIMATE_BATCH, ESTIMATE_KV, ESTIMATE_NO_KV, ESTIMATE_GPU,
        ESTIMATE_MFU, ESTIMATE_TOKENS, ESTIMATE_FP32_GRADS,
};

/* A whole number option: its value, checked by its kind, and whether it was given. */
struct whole {
        unsigned v;
        bool given;
};

struct estimate_cli {
        const char *model, *mlp, *precision, *optimizer, *recompute, *gpu, *json;
        double params, mfu, tokens; /* 0: not given */
        struct whole layers, hidden, heads, kv_heads, vocab, ffn, sliding_window, zero, tp, pp, dp, seq, micro_batch,
                global_batch, batch;
        bool list, train, infer, kv_cache, no_kv_cache, fp32_grads;
};

static int parse_count(const char *s, double *ret);

/* --params, --tokens: a count with a suffix, which no kind of value takes. */
static int count_option(const char *opt, const char *examples, const char *arg, double *ret) {
        if (parse_count(arg, ret) < 0)
                return cmd_usage_error("estimate", "%s: expected a count from 1 to 1e18 (%s), not \"%s\"", opt, examples,
                                       arg);
        return -1;
}

static int mfu_option(const char *arg, double *ret) {
        char *end;
        errno = 0;
        double v = strtod(arg, &end);
        if (errno || end == arg || *end || !(v > 0 && v <= 1))
                return cmd_usage_error("estimate", "--mfu: expected a fraction above 0 and at most 1, not \"%s\"", arg);
        *ret = v;
        return -1;
}

static int estimate_option(int id, const struct opt_value *v, void *ctx) {
        struct estimate_cli *o = ctx;
        struct whole w = {(unsigned)v->n, true}; /* every whole number's bound is below UINT_MAX */
        switch ((enum estimate_opt)id) {
        case ESTIMATE_MODEL: o->model = v->text; break;
        case ESTIMATE_LIST: o->list = true; break;
        case ESTIMATE_PARAMS: return count_option("--params", "7B, 70e9, 1.5T", v->text, &o->params);
        case ESTIMATE_LAYERS: o->layers = w; break;
        case ESTIMATE_HIDDEN: o->hidden = w; break;
        case ESTIMATE_HEADS: o->heads = w; break;
        case ESTIMATE_KV_HEADS: o->kv_heads = w; break;
        case ESTIMATE_WINDOW: o->sliding_window = w; break;
        case ESTIMATE_VOCAB: o->vocab = w; break;
        case ESTIMATE_FFN: o->ffn = w; break;
        case ESTIMATE_MLP: o->mlp = v->text; break;
        case ESTIMATE_TRAIN: o->train = true; break;
        case ESTIMATE_INFER: o->infer = true; break;
        case ESTIMATE_PRECISION: o->precision = v->text; break;
        case ESTIMATE_OPTIMIZER: o->optimizer = v->text; break;
        case ESTIMATE_ZERO: o->zero = w; break;
        case ESTIMATE_TP: o->tp = w; break;
        case ESTIMATE_PP: o->pp = w; break;
        case ESTIMATE_DP: o->dp = w; break;
        case ESTIMATE_SEQ: o->seq = w; break;
        case ESTIMATE_MICRO: o->micro_batch = w; break;
        case ESTIMATE_GLOBAL: o->global_batch = w; break;
        case ESTIMATE_RECOMPUTE: o->recompute = v->text; break;
        case ESTIMATE_BATCH: o->batch = w; break;
        case ESTIMATE_KV: o->kv_cache = true; break;
        case ESTIMATE_NO_KV: o->no_kv_cache = true; break;
        case ESTIMATE_GPU: o->gpu = v->text; break;
        case ESTIMATE_MFU: return mfu_option(v->text, &o->mfu);
        case ESTIMATE_TOKENS: return count_option("--tokens", "300B, 2e12", v->text, &o->tokens);
        case ESTIMATE_JSON: o->json = v->text; break;
        case ESTIMATE_FP32_GRADS: o->fp32_grads = true; break;
        }
        return -1;
}

#define GIB_TOKENS 1073741824ull
#define NUMBER(opt_name, opt_id, lo, hi, default_words, text)                                                          \
        {.name = opt_name, .kind = ARG_NUMBER, .id = opt_id, .min = lo, .max = hi, .def = default_words, .help = text}

static const struct opt estimate_options[] = {
        {.name = "model", .kind = ARG_TEXT, .id = ESTIMATE_MODEL, .metavar = "NAME",
         .help = "a preset of models.json (--list-models shows them)"},
        {.name = "list-models", .kind = ARG_FLAG, .id = ESTIMATE_LIST,
         .help = "print the presets and their sources, then exit"},
        {.name = "params", .kind = ARG_TEXT, .id = ESTIMATE_PARAMS, .metavar = "N",
         .help = "parameter count (7B, 70e9, 1.5T); alone, or replacing the shape's"},
        NUMBER("layers", ESTIMATE_LAYERS, 1, 100000, NULL, "the shape's transformer layers"),
        NUMBER("hidden", ESTIMATE_HIDDEN, 1, 16777216, NULL, "its hidden size"),
        NUMBER("heads", ESTIMATE_HEADS, 1, 65536, NULL, "its attention heads"),
        NUMBER("kv-heads", ESTIMATE_KV_HEADS, 1, 65536, "--heads", "its key/value heads (grouped-query attention)"),
        NUMBER("vocab", ESTIMATE_VOCAB, 1, 16777216, NULL, "its vocabulary"),
        NUMBER("ffn", ESTIMATE_FFN, 1, 16777216, "4 x --hidden", "its feed-forward size"),
        NUMBER("sliding-window", ESTIMATE_WINDOW, 0, GIB_TOKENS, "the preset's, else 0",
               "attention sees at most N tokens back, so the KV cache keeps N (0: the whole sequence)"),
        {.name = "mlp", .kind = ARG_ENUM, .id = ESTIMATE_MLP, .metavar = "KIND", .choices = "gated|plain",
         .def = "gated with --ffn, else plain", .help = "gated: SwiGLU (3 matrices); plain: GPT's (2)"},
        {.name = "train", .kind = ARG_FLAG, .id = ESTIMATE_TRAIN, .help = "training (the default)"},
        {.name = "infer", .kind = ARG_FLAG, .id = ESTIMATE_INFER, .help = "inference"},
        {.name = "precision", .kind = ARG_ENUM, .id = ESTIMATE_PRECISION, .metavar = "P", .choices = "bf16|fp16|fp8|fp32",
         .def = "bf16", .help = "bf16, fp16, fp8 or fp32"},
        {.name = "optimizer", .kind = ARG_ENUM, .id = ESTIMATE_OPTIMIZER, .metavar = "O", .choices = "adam|sgd|adafactor",
         .def = "adam", .help = "adam, sgd (with momentum) or adafactor (factored, no momentum)"},
        {.name = "fp32-grads", .kind = ARG_FLAG, .id = ESTIMATE_FP32_GRADS,
         .help = "gradients kept in fp32 (4 bytes; 18 a parameter with Adam)"},
        NUMBER("zero", ESTIMATE_ZERO, 0, 3, "0", "ZeRO stage over the data-parallel group"),
        NUMBER("tp", ESTIMATE_TP, 1, 4096, "1", "tensor-parallel degree"),
        NUMBER("pp", ESTIMATE_PP, 1, 4096, "1", "pipeline-parallel degree"),
        NUMBER("dp", ESTIMATE_DP, 1, 1048576, "1", "data-parallel degree"),
        NUMBER("seq", ESTIMATE_SEQ, 1, GIB_TOKENS, "the preset's, capped at 4096 for training, or 2048",
               "sequence (training) or context (inference) length"),
        NUMBER("micro-batch", ESTIMATE_MICRO, 1, 1048576, "1", "sequences per micro-batch"),
        NUMBER("global-batch", ESTIMATE_GLOBAL, 1, GIB_TOKENS, "micro-batch x dp", "sequences per optimizer step"),
        {.name = "recompute", .kind = ARG_ENUM, .id = ESTIMATE_RECOMPUTE, .metavar = "R",
         .choices = "none|selective|full", .def = "none", .help = "none, selective or full activation recomputation"},
        NUMBER("batch", ESTIMATE_BATCH, 1, 1048576, "1", "inference: concurrent sequences"),
        {.name = "kv-cache", .kind = ARG_FLAG, .id = ESTIMATE_KV, .help = "inference: count the KV cache (the default)"},
        {.name = "no-kv-cache", .kind = ARG_FLAG, .id = ESTIMATE_NO_KV, .help = "inference: leave the KV cache out"},
        {.name = "gpu", .kind = ARG_TEXT, .id = ESTIMATE_GPU, .metavar = "MODEL", .def = "the node's GPUs",
         .help = "a GPU of the table (\"H100 80GB HBM3\")"},
        {.name = "mfu", .kind = ARG_TEXT, .id = ESTIMATE_MFU, .metavar = "F", .def = "0.4",
         .help = "model FLOPs utilisation, 0 < F <= 1"},
        {.name = "tokens", .kind = ARG_TEXT, .id = ESTIMATE_TOKENS, .metavar = "N",
         .help = "tokens in an epoch (training) or to generate (inference): 300B"},
        OPT_JSON("gpuvet.estimate/1"),
        {0},
};

const struct cmd_spec cmd_estimate_spec = {
        .name = "estimate",
        .synopsis = "--model NAME [OPTIONS]\n--params N [OPTIONS]\n--layers L --hidden H --heads A --vocab V [OPTIONS]",
        .summary = "Memory per GPU (weights, gradients, optimizer states, activations, KV cache) and time (FLOPs per "
                   "token, tokens/s, time per step and per epoch) of training or serving a transformer; whether it "
                   "fits the GPU, and if not what would make it fit.",
        .description = "The model is a preset (--model), a parameter count (--params), or a shape: --layers, "
                       "--hidden, --heads and --vocab, optionally --kv-heads, --ffn, --mlp.",
        .opts = estimate_options,
        .notes = "--root reads /sys under DIR to find the GPUs (a fixture); --data-dir gives gpus.json and "
                 "models.json.",
        .exit_status = "0 fits (or no GPU to judge by), 1 does not fit, 2 usage or bad input, 3 internal error.",
        .on_option = estimate_option,
};

/* ---- values ---- */

/* A count with an optional K, M, B (or G) or T suffix, decimal: "7B", "1.5T", "70e9".
 * Returns 0, or -EINVAL for anything else, zero, negative or above 1e18. */
static int parse_count(const char *s, double *ret) {
        if (!s || !*s)
                return -EINVAL;
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (errno || end == s)
                return -EINVAL;
        static const struct {
                char suffix;
                double scale;
        } suffixes[] = {{'K', 1e3}, {'M', 1e6}, {'B', 1e9}, {'G', 1e9}, {'T', 1e12}};
        if (*end) {
                bool known = false;
                for (size_t i = 0; i < ARRAY_COUNT(suffixes) && !known; i++)
                        if ((*end == suffixes[i].suffix || *end == suffixes[i].suffix + ('a' - 'A')) && end[1] == '\0') {
                                v *= suffixes[i].scale;
                                known = true;
                        }
                if (!known)
                        return -EINVAL;
        }
        if (!(v >= 1 && v <= 1e18)) /* also refuses NaN */
                return -EINVAL;
        *ret = v;
        return 0;
}

/* A whole number option's value into dst when it was given. */
#define TAKE(w, dst)                                                                                                   \
        do {                                                                                                           \
                if ((w).given)                                                                                         \
                        *(dst) = (w).v;                                                                                \
        } while (0)

/* ---- the GPU ---- */

/* --gpu NAME: a model whose name is NAME (case-insensitive), else the one model whose name
 * contains it. EXIT_USAGE after a message when none or several do, else -1. */
static int gpu_by_name(const struct gpudb *db, const char *name, const struct gpu_model **ret) {
        const struct gpu_model *found = NULL;
        size_t matches = 0;
        char several[512] = "";
        for (size_t i = 0; i < db->n_models; i++)
                if (strcasecmp(db->models[i].name, name) == 0) {
                        *ret = &db->models[i];
                        return -1;
                }
        for (size_t i = 0; i < db->n_models; i++)
                if (strcasestr(db->models[i].name, name)) {
                        found = &db->models[i];
                        size_t used = strlen(several);
                        if (++matches <= 6)
                                snprintf(several + used, sizeof(several) - used, "%s\"%s\"", matches > 1 ? ", " : "",
                                         found->name);
                }
        if (matches == 1) {
                *ret = found;
                return -1;
        }
        if (matches == 0)
                return cmd_usage_error("estimate",
                                       "--gpu: no GPU of the table is called \"%s\" (gpuvet detect --list-gpus lists them)",
                                       name);
        return cmd_usage_error("estimate", "--gpu: \"%s\" names %zu GPUs (%s%s); give one name whole", name, matches,
                               several, matches > 6 ? ", ..." : "");
}

/* The node's GPUs under the root: the known one with the least memory (the one a job runs
 * out of first). Leaves ret->model NULL when there are none. Returns 0 or an exit code. */
static int detected_gpu(const struct common_options *common, const struct gpudb *db, struct est_gpu *ret) {
        struct fsroot *fs;
        int r = fsroot_open(common->root, &fs);
        if (r < 0) {
                fprintf(stderr, "gpuvet estimate: --root %s: %s\n", common->root, strerror(-r));
                return EXIT_USAGE;
        }
        struct pci_facts pci = {0};
        struct gpu_facts gpus = {0};
        r = pci_gather(fs, &pci);
        if (r >= 0)
                r = gpu_gather(&pci, db, &gpus);
        if (r < 0) {
                fprintf(stderr, "gpuvet estimate: finding the GPUs under %s: %s\n", common->root, strerror(-r));
        } else {
                for (size_t i = 0; i < gpus.n; i++) {
                        const struct gpu_model *m = gpus.gpus[i].model;
                        if (m && m->memory_gb > 0 && (!ret->model || m->memory_gb < ret->model->memory_gb))
                                ret->model = m;
                }
                ret->count_on_node = (unsigned)gpus.n;
        }
        gpu_facts_done(&gpus);
        pci_facts_done(&pci);
        fsroot_free(fs);
        return r < 0 ? EXIT_INTERNAL : 0;
}

/* ---- output ---- */

static const char *mode_name(enum est_mode m) { return m == EST_TRAIN ? "train" : "infer"; }

/* A JSON number, or null for NAN (unknown). */
static json_t *answer_json(const struct est_answer *a) {
        const struct est_config *c = &a->config;
        const struct est_model *m = &a->model;
        json_t *shape = est_model_has_shape(m)
                                ? json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:s, s:b, s:i, s:i, s:o}", "layers", m->layers,
                                            "hidden", m->hidden, "ffn", m->ffn, "heads", m->heads, "kv_heads",
                                            m->kv_heads, "vocab", m->vocab, "mlp", est_mlp_name(m->mlp),
                                            "tied_embeddings", m->tied_embeddings, "experts", m->experts,
                                            "experts_per_token", m->experts_per_token, "sliding_window",
                                            m->sliding_window ? json_integer(m->sliding_window) : json_null())
                                : json_null();
        json_t *model = json_pack("{s:s?, s:s?, s:o, s:o, s:o, s:o}", "id", a->preset ? a->preset->id : NULL, "name",
                                  a->preset ? a->preset->name : NULL, "shape", shape, "params",
                                  json_real_or_null(a->params_total), "active_params", json_real_or_null(a->params_active),
                                  "params_published",
                                  a->preset ? json_real_or_null(a->preset->params_published) : json_null());
        json_t *config = json_pack(
                "{s:s, s:s, s:s?, s:o?, s:i, s:i, s:i, s:i, s:i, s:i, s:o?, s:o?, s:s?, s:o?, s:o?, s:f, s:o}", "mode",
                mode_name(c->mode), "precision", est_precision_name(c->precision), "optimizer",
                c->mode == EST_TRAIN ? est_optimizer_name(c->optimizer) : NULL, "fp32_gradients",
                c->mode == EST_TRAIN ? json_boolean(c->fp32_gradients) : NULL, "zero", c->zero, "tp", c->tp, "pp",
                c->pp, "dp", c->dp, "gpus", a->gpus, "seq", c->seq, "micro_batch",
                c->mode == EST_TRAIN ? json_integer(c->micro_batch) : NULL, "global_batch",
                c->mode == EST_TRAIN ? json_integer(c->global_batch) : NULL, "recompute",
                c->mode == EST_TRAIN ? est_recompute_name(c->recompute) : NULL, "batch",
                c->mode == EST_INFER ? json_integer(c->batch) : NULL, "kv_cache",
                c->mode == EST_INFER ? json_boolean(c->kv_cache) : NULL, "mfu", a->mfu, "tokens",
                a->tokens > 0 ? json_real_or_null(a->tokens) : json_null());
        json_t *memory = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "weights", json_real_or_null(a->memory.weights),
                                   "gradients", json_real_or_null(a->memory.gradients), "optimizer",
                                   json_real_or_null(a->memory.optimizer), "activations",
                                   est_model_has_shape(m) ? json_real_or_null(a->memory.activations) : json_null(),
                                   "kv_cache", est_model_has_shape(m) ? json_real_or_null(a->memory.kv_cache) : json_null(),
                                   "total", json_real_or_null(a->memory.total));
        json_t *gpu = a->gpu.model ? json_pack("{s:s, s:s, s:f, s:f, s:o, s:o}", "name", a->gpu.model->name, "from",
                                               a->gpu.count_on_node ? "detected" : "--gpu", "memory_bytes",
                                               a->gpu.model->memory_gb * 1e9, "usable_bytes", a->usable_bytes,
                                               "peak_flops", a->peak > 0 ? json_real_or_null(a->peak) : json_null(),
                                               "count_on_node", a->gpu.count_on_node ? json_integer(a->gpu.count_on_node)
                                                                                     : json_null())
                                   : json_null();
        json_t *suggestions = json_array();
        for (size_t i = 0; suggestions && i < a->n_suggestions; i++)
                json_array_append_new(suggestions, json_pack("{s:s, s:o, s:i}", "change", a->suggestions[i].change,
                                                             "total_bytes", json_real_or_null(a->suggestions[i].total),
                                                             "gpus", a->suggestions[i].gpus));
        json_t *compute = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "flops_per_token",
                                    json_real_or_null(a->flops_per_token),
                                    "tokens_per_second", json_real_or_null(a->tokens_per_second), "step_seconds",
                                    json_real_or_null(a->step_seconds), "steps_per_epoch", json_real_or_null(a->steps_per_epoch),
                                    "epoch_seconds", json_real_or_null(a->epoch_seconds), "decode_tokens_per_second",
                                    json_real_or_null(a->decode_tokens_per_second));
        return json_pack("{s:s, s:o, s:o, s:o, s:o, s:s, s:o, s:b, s:o}", "schema", "gpuvet.estimate/1", "model", model,
                         "config", config, "memory_per_gpu", memory, "gpu", gpu, "verdict",
                         !a->judged ? "not_judged" : a->fits ? "fits" : "does_not_fit", "suggestions", suggestions,
                         "suggestions_combined", a->combined,
                         "compute", compute);
}

static void print_gb(const char *what, double bytes, const char *how) {
        printf("  %-14s %9.2f GB%s%s\n", what, bytes / 1e9, *how ? "  " : "", how);
}

/* 93.4 s, 2.1 h, 3.5 days */
static void print_duration(const char *what, double s) {
        if (isnan(s))
                return;
        if (s < 120)
                printf("  %-18s %.3g s\n", what, s);
        else if (s < 7200)
                printf("  %-18s %.1f min\n", what, s / 60);
        else if (s < 3 * 86400)
                printf("  %-18s %.1f h\n", what, s / 3600);
        else
                printf("  %-18s %.1f days\n", what, s / 86400);
}

static void answer_text(const struct est_answer *a) {
        const struct est_config *c = &a->config;
        const struct est_model *m = &a->model;
        double wb, gb, ob;
        est_bytes_per_param(c, &wb, &gb, &ob);
        printf("model: %s", a->preset ? a->preset->name : "custom");
        if (est_model_has_shape(m))
                printf(", %u layers, hidden %u, FFN %u (%s), %u heads (%u KV), vocab %u", m->layers, m->hidden, m->ffn,
                       est_mlp_name(m->mlp), m->heads, m->kv_heads, m->vocab);
        if (m->experts)
                printf(", %u experts (%u per token)", m->experts, m->experts_per_token);
        printf("\n  parameters %.2f B", a->params_total / 1e9);
        if (m->experts)
                printf(" (%.2f B active per token)", a->params_active / 1e9);
        if (a->preset)
                printf("; published %.3g B", a->preset->params_published / 1e9);
        printf("\n");
        if (c->mode == EST_TRAIN)
                printf("training: %s, %s, ZeRO %u, TP %u x PP %u x DP %u = %u GPU%s, sequence %u, micro-batch %u, "
                       "global batch %u, recompute %s\n",
                       est_precision_name(c->precision), est_optimizer_name(c->optimizer), c->zero, c->tp, c->pp, c->dp,
                       a->gpus, a->gpus == 1 ? "" : "s", c->seq, c->micro_batch, c->global_batch, est_recompute_name(c->recompute));
        else
                printf("inference: %s, TP %u x PP %u = %u GPU(s) per replica, DP %u replica(s), context %u, batch %u, KV cache %s\n",
                       est_precision_name(c->precision), c->tp, c->pp, c->tp * c->pp, c->dp, c->seq, c->batch,
                       c->kv_cache ? "yes" : "no");
        printf("\nmemory per GPU\n");
        char how[128];
        snprintf(how, sizeof(how), "%g B/param / (TP x PP)%s", wb, c->mode == EST_TRAIN && c->zero >= 3 ? " / DP" : "");
        print_gb("weights", a->memory.weights, how);
        if (c->mode == EST_TRAIN) {
                snprintf(how, sizeof(how), "%g B/param%s", gb, c->zero >= 2 ? " / DP (ZeRO 2)" : "");
                print_gb("gradients", a->memory.gradients, how);
                snprintf(how, sizeof(how), "%g B/param%s", ob, c->zero >= 1 ? " / DP (ZeRO 1)" : "");
                print_gb("optimizer", a->memory.optimizer, how);
                if (est_model_has_shape(m))
                        print_gb("activations", a->memory.activations,
                                 c->recompute == EST_RECOMPUTE_FULL        ? "L x 2sbh/t (full recompute)"
                                 : c->recompute == EST_RECOMPUTE_SELECTIVE ? "L x 34sbh/t (selective recompute)"
                                                                           : "L x sbh/t (34 + 5as/h)");
                else
                        printf("  %-14s %12s  needs the shape (--layers, --hidden, --heads)\n", "activations", "unknown");
        } else if (c->kv_cache) {
                if (est_model_has_shape(m))
                        print_gb("KV cache", a->memory.kv_cache,
                                 m->sliding_window && m->sliding_window < c->seq
                                         ? "2 x L x kv_heads x head_dim x window x batch x bytes"
                                         : "2 x L x kv_heads x head_dim x seq x batch x bytes");
                else
                        printf("  %-14s %12s  needs the shape (--layers, --hidden, --heads)\n", "KV cache", "unknown");
        }
        print_gb("total", a->memory.total, "");
        if (a->gpu.model) {
                char from[64] = "--gpu";
                if (a->gpu.count_on_node)
                        snprintf(from, sizeof(from), "detected, %u on this node", a->gpu.count_on_node);
                printf("  %-14s %9.2f GB  %s (%s), %.2f GB usable (90%%)\n", "GPU memory", a->gpu.model->memory_gb,
                       a->gpu.model->name, from, a->usable_bytes / 1e9);
        }
        if (!a->judged)
                printf("\nverdict: not judged: %s\n",
                       a->gpu.model ? "the GPU table gives no memory size for this GPU"
                                    : "no GPU found; name one with --gpu MODEL");
        else if (a->fits)
                printf("\nverdict: fits (%.1f%% of usable memory)\n", 100 * a->memory.total / a->usable_bytes);
        else {
                printf("\nverdict: does not fit (%.1f%% of usable memory)\n", 100 * a->memory.total / a->usable_bytes);
                if (a->n_suggestions == 0)
                        printf("  nothing fits on up to 4096 GPUs of this model\n");
                else if (a->combined)
                        printf("  no single change fits; together:\n");
                for (size_t i = 0; i < a->n_suggestions; i++)
                        printf("  %-58s -> %.2f GB per GPU, %u GPU%s\n", a->suggestions[i].change,
                               a->suggestions[i].total / 1e9, a->suggestions[i].gpus,
                               a->suggestions[i].gpus == 1 ? "" : "s");
        }
        printf("\ncompute\n");
        printf("  %-18s %.4g  (%s%s)\n", "FLOPs per token", a->flops_per_token,
               c->mode == EST_TRAIN ? "6N" : "2N",
               !est_model_has_shape(m) ? "; the attention term needs the shape"
               : est_attended_tokens(m, c->seq) < c->seq
                       ? (c->mode == EST_TRAIN ? " + 12 L h window" : " + 4 L h window")
                       : (c->mode == EST_TRAIN ? " + 12 L h s" : " + 4 L h s"));
        if (!(a->peak > 0)) {
                if (a->gpu.model)
                        printf("  no peak %s rate for %s in the GPU table: no times\n", est_precision_name(c->precision),
                               a->gpu.model->name);
                else
                        printf("  no GPU to take a peak rate from: no times\n");
                return;
        }
        printf("  %-18s %.0f TFLOPS %s per GPU x %u at MFU %.2f\n", "peak", a->peak / 1e12,
               est_precision_name(c->precision), a->gpus, a->mfu);
        printf("  %-18s %.4g%s\n", "tokens/s", a->tokens_per_second, c->mode == EST_INFER ? " (compute bound)" : "");
        if (!isnan(a->decode_tokens_per_second))
                printf("  %-18s %.4g (memory bound: weights + KV cache read once per step)\n", "decode tokens/s",
                       a->decode_tokens_per_second);
        print_duration(c->mode == EST_TRAIN ? "time per step" : "time per decode step", a->step_seconds);
        if (!isnan(a->steps_per_epoch))
                printf("  %-18s %.0f\n", "steps per epoch", a->steps_per_epoch);
        print_duration(c->mode == EST_TRAIN ? "time per epoch" : "time for --tokens", a->epoch_seconds);
}

static int list_models(const struct modeldb *db, const char *json_path) {
        if (!json_path || strcmp(json_path, "-") != 0) {
                printf("%-16s %-24s %10s  %s\n", "ID", "NAME", "PARAMS", "SHAPE");
                for (size_t i = 0; i < db->n; i++) {
                        const struct model_preset *p = &db->models[i];
                        printf("%-16s %-24s %9.3gB  L%u h%u ffn%u a%u kv%u V%u seq%u%s\n", p->id, p->name,
                               p->params_published / 1e9, p->shape.layers, p->shape.hidden, p->shape.ffn,
                               p->shape.heads, p->shape.kv_heads, p->shape.vocab, p->shape.max_seq,
                               p->shape.experts ? " MoE" : "");
                }
        }
        if (!json_path)
                return EXIT_PASS;
        json_t *list = json_array();
        for (size_t i = 0; list && i < db->n; i++)
                json_array_append_new(list, json_pack("{s:s, s:s, s:f}", "id", db->models[i].id, "name",
                                                      db->models[i].name, "params_published",
                                                      db->models[i].params_published));
        char *text = list ? json_dumps(list, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
        json_decref(list);
        return write_json_output("estimate", json_path, text);
}

/* ---- the command ---- */

/* The model from --model or the shape options, with --params. Returns -1, or an exit code
 * after a message naming the option. */
static int resolve_model(const struct estimate_cli *o, const struct modeldb *db, struct est_answer *a) {
        bool shape_given = o->layers.given || o->hidden.given || o->heads.given || o->kv_heads.given ||
                           o->vocab.given || o->ffn.given || o->mlp;
        if (o->model && shape_given)
                return cmd_usage_error("estimate", "--model %s and the shape options (--layers, --hidden, ...): give one",
                                       o->model);
        if (o->model) {
                a->preset = modeldb_find(db, o->model);
                if (!a->preset)
                        return cmd_usage_error("estimate", "--model: no preset \"%s\" (gpuvet estimate --list-models)",
                                               o->model);
                a->model = a->preset->shape;
        } else if (shape_given) {
                struct est_model *m = &a->model;
                if (!o->layers.given || !o->hidden.given || !o->heads.given || !o->vocab.given)
                        return cmd_usage_error("estimate", "a shape needs --layers, --hidden, --heads and --vocab%s",
                                               o->params ? " (or --params alone)" : "");
                TAKE(o->layers, &m->layers);
                TAKE(o->hidden, &m->hidden);
                TAKE(o->heads, &m->heads);
                m->kv_heads = m->heads;
                TAKE(o->kv_heads, &m->kv_heads);
                TAKE(o->vocab, &m->vocab);
                m->mlp = o->ffn.given ? EST_MLP_GATED : EST_MLP_PLAIN;
                if (o->mlp)
                        m->mlp = est_mlp_from_name(o->mlp); /* one of its table's choices */
                if (m->hidden > 16777216 / 4 && !o->ffn.given)
                        return cmd_usage_error("estimate", "--hidden %u: give --ffn (4 x hidden is too large)", m->hidden);
                m->ffn = 4 * m->hidden; /* GPT's FFN, 4h (Vaswani et al. 2017; GPT-3 Table 2.1) */
                TAKE(o->ffn, &m->ffn);
                if (m->hidden % m->heads)
                        return cmd_usage_error("estimate", "--heads %u: must divide --hidden %u", m->heads, m->hidden);
                if (m->heads % m->kv_heads)
                        return cmd_usage_error("estimate", "--kv-heads %u: must divide --heads %u", m->kv_heads, m->heads);
        } else if (!o->params) {
                return cmd_usage_error("estimate", "which model? --model NAME, --params N or a shape (see --help)");
        }
        TAKE(o->sliding_window, &a->model.sliding_window);
        a->model.params_override = o->params;
        return -1;
}

static int resolve_config(const struct estimate_cli *o, struct est_answer *a) {
        struct est_config *c = &a->config;
        if (o->train && o->infer)
                return cmd_usage_error("estimate", "--train and --infer: give one");
        c->mode = o->infer ? EST_INFER : EST_TRAIN;
        static const struct {
                const char *name;
                bool given_train_only, given_infer_only;
        } misplaced[] = {{"--optimizer", true, false}, {"--zero", true, false},        {"--micro-batch", true, false},
                         {"--global-batch", true, false}, {"--recompute", true, false}, {"--batch", false, true},
                         {"--kv-cache", false, true},  {"--no-kv-cache", false, true}, {"--fp32-grads", true, false}};
        const bool given[] = {o->optimizer, o->zero.given, o->micro_batch.given, o->global_batch.given, o->recompute,
                              o->batch.given, o->kv_cache, o->no_kv_cache, o->fp32_grads};
        for (size_t i = 0; i < ARRAY_COUNT(given); i++)
                if (given[i] && (c->mode == EST_INFER ? misplaced[i].given_train_only : misplaced[i].given_infer_only))
                        return cmd_usage_error("estimate", "%s is for %s only", misplaced[i].name,
                                               misplaced[i].given_train_only ? "training (--train)"
                                                                             : "inference (--infer)");
        if (o->kv_cache && o->no_kv_cache)
                return cmd_usage_error("estimate", "--kv-cache and --no-kv-cache: give one");
        /* each one of its table's choices */
        c->precision = o->precision ? est_precision_from_name(o->precision) : EST_BF16;
        c->optimizer = o->optimizer ? est_optimizer_from_name(o->optimizer) : EST_ADAM;
        c->recompute = o->recompute ? est_recompute_from_name(o->recompute) : EST_RECOMPUTE_NONE;
        c->tp = c->pp = c->dp = 1;
        c->micro_batch = c->batch = 1;
        c->kv_cache = !o->no_kv_cache;
        c->fp32_gradients = o->fp32_grads;
        TAKE(o->zero, &c->zero);
        TAKE(o->tp, &c->tp);
        TAKE(o->pp, &c->pp);
        TAKE(o->dp, &c->dp);
        TAKE(o->micro_batch, &c->micro_batch);
        TAKE(o->batch, &c->batch);
        unsigned max_seq = a->model.max_seq;
        c->seq = max_seq ? (max_seq < 4096 ? max_seq : 4096) : 2048;
        TAKE(o->seq, &c->seq);
        if (max_seq && c->seq > max_seq)
                return cmd_usage_error("estimate", "--seq %u: beyond %s's %u-token context", c->seq, a->preset->name,
                                       max_seq);
        if (est_gpus_of(c) > EST_MAX_GPUS)
                return cmd_usage_error("estimate", "--tp %u x --pp %u x --dp %u: more than %llu GPUs", c->tp, c->pp,
                                       c->dp, EST_MAX_GPUS);
        unsigned long long per_step = (unsigned long long)c->micro_batch * c->dp;
        if (per_step > 1073741824ull)
                return cmd_usage_error("estimate", "--micro-batch %u x --dp %u: more than 2^30 sequences a step",
                                       c->micro_batch, c->dp);
        c->global_batch = (unsigned)per_step;
        TAKE(o->global_batch, &c->global_batch);
        if (c->global_batch % per_step)
                return cmd_usage_error("estimate",
                                       "--global-batch %u: must be a multiple of micro-batch x dp (%u x %u): "
                                       "gradient accumulation runs whole micro-batches on every data-parallel rank",
                                       c->global_batch, c->micro_batch, c->dp);
        const struct est_model *m = &a->model;
        if (est_model_has_shape(m) && m->heads % c->tp)
                return cmd_usage_error("estimate", "--tp %u: must divide the %u attention heads", c->tp, m->heads);
        if (est_model_has_shape(m) && c->pp > m->layers)
                return cmd_usage_error("estimate", "--pp %u: more stages than the %u layers", c->pp, m->layers);
        a->mfu = o->mfu > 0 ? o->mfu : 0.4;
        a->tokens = o->tokens;
        a->gpus = (unsigned)est_gpus_of(c);
        return -1;
}

static int estimate_run(const struct estimate_cli *o, const struct common_options *common, const struct modeldb *db) {
        struct est_answer a = {0};
        int code = resolve_model(o, db, &a);
        if (code < 0)
                code = resolve_config(o, &a);
        if (code >= 0)
                return code;
        struct gpudb *gdb;
        char err[512];
        int r = gpudb_load(common->data_dir, &gdb, err, sizeof(err));
        if (r < 0)
                return table_load_failed("gpus.json", r, err);
        if (o->gpu)
                code = gpu_by_name(gdb, o->gpu, &a.gpu.model);
        else if ((code = detected_gpu(common, gdb, &a.gpu)) == 0)
                code = -1;
        if (code >= 0) {
                gpudb_free(gdb);
                return code;
        }
        if (est_advise(&a) < 0) {
                gpudb_free(gdb);
                fprintf(stderr, "gpuvet estimate: internal error: a layout resolve_config accepted was refused\n");
                return EXIT_INTERNAL;
        }
        code = EXIT_PASS;
        if (!o->json || strcmp(o->json, "-") != 0)
                answer_text(&a);
        if (o->json) {
                json_t *doc = answer_json(&a);
                char *text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12)) : NULL;
                json_decref(doc);
                code = write_json_output("estimate", o->json, text);
        }
        gpudb_free(gdb);
        if (code == EXIT_PASS && a.judged && !a.fits)
                code = EXIT_FAILED;
        return code;
}

static int estimate_main(void *cli, const struct cmd_args *args) {
        const struct estimate_cli *o = cli;
        struct modeldb db;
        char err[512];
        int r = modeldb_load(args->common.data_dir, &db, err, sizeof(err));
        if (r < 0)
                return table_load_failed("models.json", r, err);
        int code = o->list ? list_models(&db, o->json) : estimate_run(o, &args->common, &db);
        modeldb_done(&db);
        return code;
}

int cmd_estimate(int argc, char **argv) {
        return cmd_parse_run(&cmd_estimate_spec, argc, argv, &(struct estimate_cli){0}, estimate_main);
}

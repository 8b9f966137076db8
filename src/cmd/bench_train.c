/* gpuvet bench train: the training-step proxy (src/bench/bench_train.h) for a preset of
 * data/models.json or a shape given on the command line, run in a child under the deadline
 * like every benchmark, judged against the GPU's peak (MFU) and, for the seed's own
 * configuration only, its baseline; optionally the same step in PyTorch beside it. */
#include "bench/baselines.h"
#include "bench/bench.h"
#include "bench/bench_train.h"
#include "bench/runner.h"
#include "bench/train_shape.h"
#include "bench/train_torch.h"
#include "cmd/cmd.h"
#include "cmd/machine.h"
#include "cmd/options.h"
#include "cmd/specs.h"
#include "core/deadline.h"
#include "core/strparse.h"
#include "data/gpudb.h"
#include "data/modeldb.h"
#include "report/bench_train_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GPUS 256
#define DEFAULT_MICRO_BATCH 4
#define DEFAULT_LAYERS_RUN 2
#define MAX_TRAIN_SEQ 4096 /* a preset's context is its limit, not a training length */
#define CUSTOM_SEQ 2048
#define CUSTOM_VOCAB 51200 /* GPT-2's 50257 padded to a multiple of 1024, as Megatron-LM does */
#define SEED_MODEL "megatron-1.2b"

enum train_opt {
        TRAIN_PRECISION = 'p', TRAIN_STEPS = 'n', TRAIN_WARMUP = 'w', TRAIN_BACKEND = 'b', TRAIN_GPUS = 'g',
        TRAIN_JSON = 'j', TRAIN_QUIET = 'q',
        TRAIN_MODEL = 0x200, TRAIN_LAYERS, TRAIN_HIDDEN, TRAIN_HEADS, TRAIN_KV_HEADS, TRAIN_FFN, TRAIN_VOCAB, TRAIN_MLP,
        TRAIN_SEQ, TRAIN_MICRO, TRAIN_LAYERS_RUN, TRAIN_FRAMEWORK, TRAIN_NO_PROGRESS,
};

struct train_cli {
        const char *model, *mlp, *framework, *json_path;
        unsigned layers, hidden, heads, kv_heads, ffn, vocab, seq, micro_batch, layers_run;
        struct bench_options bopt;
        int gpus[MAX_GPUS];
        bool quiet, no_progress;
};

static int train_option(int id, const struct opt_value *v, void *ctx) {
        struct train_cli *o = ctx;
        unsigned n = (unsigned)v->n; /* every number's bound is below UINT_MAX */
        switch ((enum train_opt)id) {
        case TRAIN_MODEL: o->model = v->text; break;
        case TRAIN_LAYERS: o->layers = n; break;
        case TRAIN_HIDDEN: o->hidden = n; break;
        case TRAIN_HEADS: o->heads = n; break;
        case TRAIN_KV_HEADS: o->kv_heads = n; break;
        case TRAIN_FFN: o->ffn = n; break;
        case TRAIN_VOCAB: o->vocab = n; break;
        case TRAIN_SEQ: o->seq = n; break;
        case TRAIN_MICRO: o->micro_batch = n; break;
        case TRAIN_LAYERS_RUN: o->layers_run = n; break;
        case TRAIN_STEPS: o->bopt.reps = n; break;
        case TRAIN_WARMUP: o->bopt.warmup = n; break;
        case TRAIN_MLP: o->mlp = v->text; break;
        case TRAIN_FRAMEWORK: o->framework = v->text; break;
        case TRAIN_PRECISION: o->bopt.precision = v->text; break;
        case TRAIN_BACKEND: o->bopt.backend = v->text; break;
        case TRAIN_GPUS:
                if (!cmd_parse_device_list(v->text, MAX_GPUS, o->gpus, &o->bopt.n_gpus))
                        return cmd_usage_error("bench train",
                                               "--gpus: expected device indices 0-%d such as \"0\" or \"0-3\", not \"%s\"",
                                               MAX_GPUS - 1, v->text);
                o->bopt.gpus = o->gpus;
                break;
        case TRAIN_JSON: o->json_path = v->text; break;
        case TRAIN_QUIET: o->quiet = true; break;
        case TRAIN_NO_PROGRESS: o->no_progress = true; break;
        }
        return -1;
}

static const struct opt train_options[] = {
        {.name = "model", .kind = ARG_TEXT, .id = TRAIN_MODEL, .metavar = "NAME",
         .help = "a preset of models.json (gpuvet estimate --list-models); megatron-1.2b is the seed's GPT-1.2B"},
        {.name = "layers", .kind = ARG_NUMBER, .id = TRAIN_LAYERS, .min = 1, .max = 100000,
         .help = "the model's transformer layers"},
        {.name = "hidden", .kind = ARG_NUMBER, .id = TRAIN_HIDDEN, .min = 1, .max = 1u << 20, .help = "its hidden size"},
        {.name = "heads", .kind = ARG_NUMBER, .id = TRAIN_HEADS, .min = 1, .max = 65536, .help = "its attention heads"},
        {.name = "kv-heads", .kind = ARG_NUMBER, .id = TRAIN_KV_HEADS, .min = 1, .max = 65536, .def = "the preset's, else --heads",
         .help = "its key/value heads (grouped-query attention)"},
        {.name = "ffn", .kind = ARG_NUMBER, .id = TRAIN_FFN, .min = 1, .max = 1u << 22, .def = "the preset's, else 4 x --hidden",
         .help = "its feed-forward size"},
        {.name = "vocab", .kind = ARG_NUMBER, .id = TRAIN_VOCAB, .min = 1, .max = 1u << 24, .def = "the preset's, else 51200",
         .help = "its vocabulary"},
        {.name = "mlp", .kind = ARG_ENUM, .id = TRAIN_MLP, .metavar = "KIND", .choices = "gated|plain",
         .def = "the preset's; else gated with --ffn, plain without", .help = "gated: SwiGLU; plain: GPT's"},
        {.name = "seq", .kind = ARG_NUMBER, .id = TRAIN_SEQ, .min = 1, .max = 1u << 20,
         .def = "the preset's, at most 4096; else 2048", .help = "tokens a sequence"},
        {.name = "micro-batch", .kind = ARG_NUMBER, .id = TRAIN_MICRO, .min = 1, .max = 65536, .def = "4",
         .help = "sequences a step"},
        {.name = "layers-run", .kind = ARG_NUMBER, .id = TRAIN_LAYERS_RUN, .min = 1, .max = 100000, .def = "2",
         .help = "layers the proxy runs, 1 to the model's; the whole model's figures scale them to every layer"},
        {.name = "precision", .letter = 'p', .kind = ARG_ENUM, .metavar = "P", .choices = "bf16|fp16|fp32|tf32|fp8",
         .def = "bf16 on CUDA; OpenCL: fp32", .help = "bf16, fp16, fp32, tf32 or fp8"},
        {.name = "steps", .letter = 'n', .kind = ARG_NUMBER, .min = 1, .max = 100000, .def = "10",
         .help = "timed steps"},
        {.name = "warmup", .letter = 'w', .kind = ARG_NUMBER, .min = 1, .max = 10000, .def = "2",
         .help = "warm-up steps"},
        {.name = "framework", .kind = ARG_ENUM, .id = TRAIN_FRAMEWORK, .metavar = "F", .choices = "native|torch",
         .def = "native",
         .help = "native, or torch: also the same GEMMs in PyTorch (python3 and torch with a CUDA device; skipped otherwise)"},
        {.name = "backend", .letter = 'b', .kind = ARG_ENUM, .metavar = "NAME", .choices = "cuda|opencl|auto",
         .def = "auto: CUDA when it has a device", .help = "run the step through cuda or opencl"},
        {.name = "gpus", .letter = 'g', .kind = ARG_LIST, .def = "0",
         .help = "device indices; more than one: data parallel, the gradients all-reduced through NCCL after "
                 "each backward"},
        OPT_JSON("gpuvet.bench-train/1"),
        {.name = "quiet", .letter = 'q', .kind = ARG_FLAG, .help = "no text report and no progress"},
        {.name = "no-progress", .kind = ARG_FLAG, .id = TRAIN_NO_PROGRESS, .help = "no progress line on standard error"},
        {0},
};

const struct cmd_spec cmd_bench_train_spec = {
        .name = "bench train",
        .synopsis = "--model NAME [OPTIONS]\n--layers L --hidden H --heads A [OPTIONS]",
        .summary = "A training-step proxy: the GEMMs of a transformer layer's forward and backward for a few layers, "
                   "and the logit layer's, through cuBLASLt (OpenCL: fp32 kernel), timed per step; tokens/s, "
                   "achieved TFLOPS and MFU of the whole model (Megatron-LM's FLOP count), the element-wise work "
                   "left out (docs/bench.md, \"train\").",
        .description = "The model is a preset (--model) or a shape (--layers, --hidden, --heads, and optionally "
                       "--kv-heads, --ffn, --vocab, --mlp); with --model, any of the shape's options replaces the "
                       "preset's.",
        .opts = train_options,
        .notes = "--data-dir holds gpus.json, models.json, baselines.json and train_torch.py.",
        .exit_status = "0 the step passed or warned (PyTorch skipped included), 1 it failed, was wrong or could not "
                       "be measured (error, timeout, PyTorch failed), 2 usage or bad input, 3 internal error.",
        .timeout_help = "the deadline of the step's child, and of PyTorch's (default: 600s)",
        .no_default_timeout = true,
        .color = true,
        .on_option = train_option,
};

/* The shape from the preset and the options over it. Returns -1, or EXIT_USAGE after a
 * message. *ret_custom: some option changed the preset's shape (or there is none). */
static int build_shape(const struct train_cli *o, const struct modeldb *db, struct train_shape *s,
                       const struct model_preset **ret_preset, bool *ret_custom) {
        const struct model_preset *p = NULL;
        memset(s, 0, sizeof(*s));
        if (o->model) {
                if (!(p = modeldb_find(db, o->model)))
                        return cmd_usage_error("bench train", "--model: no preset \"%s\" (gpuvet estimate --list-models)",
                                               o->model);
                if (p->shape.experts)
                        return cmd_usage_error("bench train", "--model: %s is a mixture of experts, which the proxy does "
                                               "not run (its experts' GEMMs are routed per token)", p->id);
                s->layers = p->shape.layers, s->hidden = p->shape.hidden, s->heads = p->shape.heads;
                s->kv_heads = p->shape.kv_heads, s->ffn = p->shape.ffn, s->vocab = p->shape.vocab, s->mlp = p->shape.mlp;
                s->seq = p->shape.max_seq && p->shape.max_seq < MAX_TRAIN_SEQ ? p->shape.max_seq : MAX_TRAIN_SEQ;
        } else if (!o->layers || !o->hidden || !o->heads) {
                return cmd_usage_error("bench train", "name a model: --model NAME, or --layers, --hidden and --heads");
        } else {
                s->vocab = CUSTOM_VOCAB;
                s->seq = CUSTOM_SEQ;
                s->mlp = o->ffn ? EST_MLP_GATED : EST_MLP_PLAIN;
        }
        bool custom = !p || o->layers || o->hidden || o->heads || o->kv_heads || o->ffn || o->vocab || o->mlp || o->seq;
        if (o->layers) s->layers = o->layers;
        if (o->hidden) s->hidden = o->hidden;
        if (o->heads) s->heads = o->heads;
        s->kv_heads = o->kv_heads ? o->kv_heads : (p && !o->heads ? s->kv_heads : s->heads);
        if (o->mlp) s->mlp = est_mlp_from_name(o->mlp);
        s->ffn = o->ffn ? o->ffn : (p && !o->hidden ? s->ffn : 4 * s->hidden);
        if (o->vocab) s->vocab = o->vocab;
        if (o->seq) s->seq = o->seq;
        s->micro_batch = o->micro_batch ? o->micro_batch : DEFAULT_MICRO_BATCH;
        s->layers_run = o->layers_run ? o->layers_run : (s->layers < DEFAULT_LAYERS_RUN ? s->layers : DEFAULT_LAYERS_RUN);
        char why[128];
        if (train_shape_check(s, why, sizeof(why)) < 0)
                return cmd_usage_error("bench train", "the shape: %s (layers %u, hidden %u, heads %u, KV heads %u, "
                                       "layers run %u)", why, s->layers, s->hidden, s->heads, s->kv_heads, s->layers_run);
        *ret_preset = p;
        *ret_custom = custom;
        return -1;
}

/* The step measurement of each device and its parts, and the figures they imply. */
static size_t derive_figures(const struct bench_report *rep, const struct train_shape *s, struct train_figures *fig,
                             size_t cap) {
        size_t n = 0;
        for (size_t i = 0; i < rep->n && n < cap; i++) {
                const struct measurement *m = &rep->m[i];
                if (strcmp(m->name, "step") || !strcmp(m->subject, "node"))
                        continue;
                struct train_figures *f = &fig[n++];
                memset(f, 0, sizeof(*f));
                f->step = m;
                f->cpu_device = !strncmp(m->subject, "cpu", 3);
                for (size_t k = 0; k < rep->n; k++) {
                        const struct measurement *p = &rep->m[k];
                        if (strcmp(p->subject, m->subject))
                                continue;
                        if (!strcmp(p->name, "forward")) f->forward = p;
                        if (!strcmp(p->name, "backward")) f->backward = p;
                        if (!strcmp(p->name, "logits")) f->logits = p;
                        if (!strcmp(p->name, "allreduce")) f->allreduce = p;
                }
                if (m->stats.n && m->stats.median > 0) {
                        f->whole_step_ms = train_model_flops(s) / m->stats.median / 1e9;
                        f->tokens_per_s = (double)s->micro_batch * s->seq / (f->whole_step_ms / 1e3);
                        f->samples_per_s = (double)s->micro_batch / (f->whole_step_ms / 1e3);
                        f->mfu = m->ratio_peak;
                }
        }
        return n;
}

/* The seed's baseline applies to its own configuration only: the GPT-1.2B preset as it is,
 * at its sequence, one GPU, 16-bit. Sets the step's baseline (then judged against it) and
 * says why it does or does not apply. */
static void apply_baseline(struct bench_report *rep, size_t first, const struct facts *facts,
                           const struct baselines *bl, const struct model_preset *p, bool custom,
                           const struct train_cli *o, const char *precision, char *note, size_t size) {
        const char *why = NULL;
        if (!p || strcmp(p->id, SEED_MODEL) != 0)
                why = "the seed's baselines are for its GPT-1.2B (--model " SEED_MODEL ") alone";
        else if (custom)
                why = "the preset's shape was changed";
        else if (o->bopt.n_gpus > 1)
                why = "the seed's baselines are for one GPU";
        else if (strcmp(precision, "bf16") && strcmp(precision, "fp16"))
                why = "the seed's baselines are 16-bit mixed precision (bf16 or fp16)";
        for (size_t i = first; !why && i < rep->n; i++) {
                struct measurement *m = &rep->m[i];
                if (strcmp(m->name, "step"))
                        continue;
                const struct gpu_model *model = bench_subject_model(facts, m->subject);
                const struct baseline *b = model ? baselines_find(bl, model->name, "train", SEED_MODEL) : NULL;
                if (!b) {
                        why = "none for this GPU model in baselines.json";
                        continue;
                }
                m->baseline = b->value;
                snprintf(m->baseline_source, sizeof(m->baseline_source), "%s", b->source);
                snprintf(note, size, "the seed's Megatron-LM GPT-1.2B single-GPU figure for %s, %.1f TFLOPS "
                         "(data/baselines.json); the proxy runs the GEMMs alone, so a healthy GPU is well above a "
                         "framework's figure", model->name, b->value);
        }
        if (why)
                snprintf(note, size, "judged against the GPU's peak only (MFU): %s", why);
}

struct train_job {
        const struct train_cli *o;
        const struct common_options *common;
        const struct train_shape *shape;
        const struct model_preset *preset;
        bool custom;
};

static int run_train(const struct train_job *job) {
        const struct train_cli *o = job->o;
        double start = monotonic_ms();
        struct machine m;
        int code = machine_open("bench train", job->common, &m);
        if (code)
                return code;
        char err[512], note[320] = "";
        struct baselines *bl = NULL;
        if (baselines_load(job->common->data_dir, &bl, err, sizeof(err)) < 0) {
                fprintf(stderr, "gpuvet bench train: %s\n", err);
                return machine_done(&m, EXIT_USAGE);
        }
        if ((code = machine_gather(&m, 30)) != 0) {
                baselines_free(bl);
                return machine_done(&m, code);
        }
        unsigned timeout_s = job->common->timeout_s ? job->common->timeout_s : bench_train.default_timeout_s;
        struct bench_progress progress;
        bench_progress_init(&progress, "bench", 1, !o->quiet && !o->no_progress);
        bench_progress_next(&progress, 0);
        struct bench_ctx ctx = {.opt = &o->bopt, .facts = m.facts, .baselines = bl, .fs = m.fs, .progress = &progress};
        struct bench_report rep;
        bench_report_init(&rep);
        struct bench_run_result run;
        bench_run_child(&bench_train, &ctx, timeout_s, &rep, &run);
        progress_clear(&progress.out);
        /* the precision the child ran: its default depends on the backend it opened */
        const char *precision = o->bopt.precision ? o->bopt.precision : bench_train_default_precision(
                                                                              !strcmp(run.backend, "opencl") ? DEV_OPENCL : DEV_CUDA);
        apply_baseline(&rep, run.first, m.facts, bl, job->preset, job->custom, o, precision, note, sizeof(note));
        bench_judge_range(&rep, run.first, m.facts, bl);

        struct train_torch_result torch;
        if (o->framework && !strcmp(o->framework, "torch")) {
                char script[4096];
                train_torch_script(job->common->data_dir, script, sizeof(script));
                train_torch_run(script, job->shape, precision, o->bopt.reps ? o->bopt.reps : 10,
                                o->bopt.warmup ? o->bopt.warmup : 2, o->bopt.gpus[0], timeout_s, &torch);
        }
        struct train_figures fig[64];
        size_t n_fig = derive_figures(&rep, job->shape, fig, 64);
        /* synchronous data parallelism: the node moves at its slowest GPU's pace */
        double slowest_ms = 0, node_tokens_per_s = 0;
        for (size_t i = 0; i < n_fig; i++)
                slowest_ms = fig[i].whole_step_ms > slowest_ms ? fig[i].whole_step_ms : slowest_ms;
        if (n_fig > 1 && n_fig == o->bopt.n_gpus && slowest_ms > 0)
                node_tokens_per_s = (double)n_fig * job->shape->micro_batch * job->shape->seq / (slowest_ms / 1e3);
        enum status verdict = STATUS_SKIP;
        for (size_t i = 0; i < rep.n; i++)
                verdict = status_worse(verdict, rep.m[i].status);
        if (o->framework && !strcmp(o->framework, "torch"))
                verdict = status_worse(verdict, torch.status);
        struct train_report r = {
                .model_id = job->preset ? job->preset->id : "custom",
                .model_name = job->preset ? (job->custom ? "preset, shape changed" : job->preset->name) : "given shape",
                .shape = job->shape, .precision = precision, .backend = run.backend,
                .framework = o->framework ? o->framework : "native", .gpus = (unsigned)o->bopt.n_gpus,
                .steps = o->bopt.reps ? o->bopt.reps : 10, .warmup = o->bopt.warmup ? o->bopt.warmup : 2,
                .timeout_s = timeout_s, .model_flops = train_model_flops(job->shape),
                .proxy_flops = train_proxy_flops(job->shape), .layer_flops = train_layer_flops(job->shape),
                .logit_flops = train_logit_flops(job->shape), .layer_params = (double)train_layer_params(job->shape),
                .m = rep.m, .n_m = rep.n, .fig = fig, .n_fig = n_fig, .node_tokens_per_s = node_tokens_per_s,
                .torch = o->framework && !strcmp(o->framework, "torch") ? &torch : NULL, .baseline_note = note,
                .verdict = verdict, .duration_ms = monotonic_ms() - start,
        };
        code = verdict == STATUS_FAIL || verdict == STATUS_ERROR ? EXIT_FAILED : EXIT_PASS;
        if (o->json_path && write_json_output("bench train", o->json_path, train_report_json(&r)) != EXIT_PASS)
                code = EXIT_INTERNAL;
        if (!o->quiet && !(o->json_path && !strcmp(o->json_path, "-"))) {
                struct text_options text = {.color = text_want_color(stdout)};
                train_report_text(stdout, &r, &text);
        }
        if (rep.out_of_memory)
                code = EXIT_INTERNAL;
        bench_report_done(&rep);
        baselines_free(bl);
        return machine_done(&m, code);
}

int cmd_bench_train(int argc, char **argv) {
        static const int first_gpu[1] = {0};
        struct train_cli o = {.bopt = {.backend = "auto", .gpus = first_gpu, .n_gpus = 1}};
        struct cmd_args args;
        int code = cmd_parse(&cmd_bench_train_spec, argc, argv, &o, &args);
        if (code >= 0)
                return code;
        struct modeldb db;
        char err[512];
        if (modeldb_load(args.common.data_dir, &db, err, sizeof(err)) < 0) {
                fprintf(stderr, "gpuvet bench train: %s\n", err);
                return EXIT_USAGE;
        }
        struct train_shape shape;
        struct train_job job = {.o = &o, .common = &args.common, .shape = &shape};
        code = build_shape(&o, &db, &shape, &job.preset, &job.custom);
        if (code < 0) {
                o.bopt.train_shape = &shape;
                code = run_train(&job);
        }
        modeldb_done(&db);
        return code;
}

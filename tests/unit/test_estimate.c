/* gpuvet estimate's formulas against published figures (the source beside each), and the
 * model table's loader (data/models.json): every preset's count against its model card, and
 * broken variants refused with a message naming the problem. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "data/gpudb.h"
#include "data/modeldb.h"
#include "estimate/adviser.h"
#include "estimate/estimate.h"

#define assert_near(actual, expected, rel)                                                                             \
        do {                                                                                                           \
                double a_ = (actual), e_ = (expected);                                                                 \
                if (!(fabs(a_ - e_) <= (rel) * fabs(e_))) {                                                            \
                        print_error("%s = %.6g, expected %.6g (within %g)\n", #actual, a_, e_, (double)(rel));         \
                        fail();                                                                                        \
                }                                                                                                      \
        } while (0)

/* Rajbhandari et al. 2019, "ZeRO: Memory Optimizations Toward Training Trillion Parameter
 * Models", sec. 3.1: mixed-precision Adam holds 2 + 2 + 12 = 16 bytes per parameter; Figure 1:
 * a 7.5B model on 64-way data parallelism needs 120 GB per GPU, 31.4 GB with P_os (stage 1),
 * 16.6 GB with P_os+g (stage 2) and 1.9 GB with P_os+g+p (stage 3). */
static void test_zero_paper_figure_1(void **state) {
        (void)state;
        double w, g, o;
        struct est_config bytes = {.mode = EST_TRAIN, .precision = EST_FP16, .optimizer = EST_ADAM};
        est_bytes_per_param(&bytes, &w, &g, &o);
        assert_true(w == 2 && g == 2 && o == 12);
        bytes.precision = EST_BF16;
        est_bytes_per_param(&bytes, &w, &g, &o);
        assert_true(w + g + o == 16);
        /* Gradients kept in fp32: 2 + 4 + 12 = 18. */
        bytes.fp32_gradients = true;
        est_bytes_per_param(&bytes, &w, &g, &o);
        assert_true(w + g + o == 18);
        bytes.fp32_gradients = false;
        /* SGD with momentum: the master copy and the momentum; Adafactor: the master copy only
         * (its factored second moment is not per parameter) */
        bytes.optimizer = EST_SGD;
        est_bytes_per_param(&bytes, &w, &g, &o);
        assert_true(o == 8);
        bytes.optimizer = EST_ADAFACTOR;
        est_bytes_per_param(&bytes, &w, &g, &o);
        assert_true(w + g + o == 8);
        bytes.precision = EST_FP32;
        est_bytes_per_param(&bytes, &w, &g, &o);
        assert_true(w == 4 && g == 4 && o == 0);
        bytes.precision = EST_BF16;
        bytes.optimizer = EST_ADAM;
        struct est_model m = {.params_override = 7.5e9};
        struct est_config c = {.mode = EST_TRAIN, .precision = EST_FP16, .optimizer = EST_ADAM, .tp = 1, .pp = 1,
                               .dp = 64, .seq = 1, .micro_batch = 1, .global_batch = 64};
        static const double expected_gb[] = {120, 31.4, 16.6, 1.9};
        for (unsigned zero = 0; zero <= 3; zero++) {
                struct est_memory mem;
                c.zero = zero;
                assert_int_equal(est_memory(&m, &c, &mem), 0);
                assert_near(mem.total / 1e9, expected_gb[zero], 0.03); /* the paper rounds to 0.1 GB */
        }
        /* fp32 Adam: weights, gradients, momentum, variance: 16 bytes too, with no master copy. */
        bytes.precision = EST_FP32;
        est_bytes_per_param(&bytes, &w, &g, &o);
        assert_true(w == 4 && g == 4 && o == 8);
        bytes.mode = EST_INFER, bytes.precision = EST_FP8;
        est_bytes_per_param(&bytes, &w, &g, &o);
        assert_true(w == 1 && g == 0 && o == 0);
}

/* KV cache: NVIDIA, "Mastering LLM Techniques: Inference Optimization" (2023): Llama 2 7B in
 * 16-bit at batch 1 and 4096 tokens: 1 x 4096 x 2 x 32 x 4096 x 2 bytes, about 2 GB. Llama 2
 * 70B's config.json has 8 KV heads (GQA) of 128 over 80 layers: 320 KiB a token, 1.25 GiB at 4k. */
static void test_kv_cache(void **state) {
        (void)state;
        assert_true(est_kv_cache_bytes(32, 32, 128, 4096, 1, 2) == 1.0 * 4096 * 2 * 32 * 4096 * 2);
        assert_true(est_kv_cache_bytes(32, 32, 128, 4096, 1, 2) == 2147483648.0);
        assert_true(est_kv_cache_bytes(80, 8, 128, 1, 1, 2) == 320 * 1024);
        assert_true(est_kv_cache_bytes(80, 8, 128, 4096, 1, 2) == 1.25 * 1024 * 1024 * 1024);
        /* a sliding window caps the tokens kept (Mistral 7B v0.1: 4096) */
        struct est_model mistral = {.sliding_window = 4096};
        assert_int_equal(est_attended_tokens(&mistral, 32768), 4096);
        assert_int_equal(est_attended_tokens(&mistral, 1000), 1000);
        struct est_model full = {0};
        assert_int_equal(est_attended_tokens(&full, 32768), 32768);

        /* Through est_memory: tensor parallelism splits the KV heads, at least one per rank. */
        struct est_model m = {.layers = 80, .hidden = 8192, .ffn = 28672, .heads = 64, .kv_heads = 8,
                              .vocab = 32000, .mlp = EST_MLP_GATED};
        struct est_config c = {.mode = EST_INFER, .precision = EST_BF16, .tp = 1, .pp = 1, .dp = 1, .seq = 4096,
                               .batch = 1, .kv_cache = true};
        struct est_memory mem;
        assert_int_equal(est_memory(&m, &c, &mem), 0);
        assert_true(mem.kv_cache == 1.25 * 1024 * 1024 * 1024);
        c.tp = 8;
        assert_int_equal(est_memory(&m, &c, &mem), 0);
        assert_true(mem.kv_cache == 1.25 * 1024 * 1024 * 1024 / 8);
        c.tp = 16; /* 8 KV heads on 16 ranks: each keeps one (replicated), not half of one */
        assert_int_equal(est_memory(&m, &c, &mem), 0);
        assert_true(mem.kv_cache == 1.25 * 1024 * 1024 * 1024 / 8);
        c.kv_cache = false;
        assert_int_equal(est_memory(&m, &c, &mem), 0);
        assert_true(mem.kv_cache == 0);
}

/* Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models":
 * sbh(34 + 5as/h) bytes per layer (eq. 1); with tensor and sequence parallelism sbh/t (34 +
 * 5as/h) (eq. 4); selective recomputation keeps 34 sbh/t (eq. 6), which the paper says saves
 * 70% of the activation memory for GPT-3 (a = 96, s = 2048, h = 12288: 5as/h = 80) and 65% for
 * MT-NLG (a = 128, s = 2048, h = 20480: 5as/h = 64). */
static void test_activations(void **state) {
        (void)state;
        double sbh = 2048.0 * 1 * 12288;
        assert_true(est_activation_bytes_per_layer(2048, 1, 12288, 96, 1, EST_RECOMPUTE_NONE) == sbh * (34 + 80));
        assert_true(est_activation_bytes_per_layer(2048, 1, 12288, 96, 8, EST_RECOMPUTE_NONE) == sbh / 8 * (34 + 80));
        assert_true(est_activation_bytes_per_layer(2048, 1, 12288, 96, 8, EST_RECOMPUTE_SELECTIVE) == sbh / 8 * 34);
        assert_true(est_activation_bytes_per_layer(2048, 1, 12288, 96, 8, EST_RECOMPUTE_FULL) == sbh / 8 * 2);
        double gpt3_saved = 1 - est_activation_bytes_per_layer(2048, 1, 12288, 96, 8, EST_RECOMPUTE_SELECTIVE) /
                                        est_activation_bytes_per_layer(2048, 1, 12288, 96, 8, EST_RECOMPUTE_NONE);
        assert_near(gpt3_saved, 0.70, 0.01);
        double mtnlg_saved = 1 - est_activation_bytes_per_layer(2048, 1, 20480, 128, 8, EST_RECOMPUTE_SELECTIVE) /
                                         est_activation_bytes_per_layer(2048, 1, 20480, 128, 8, EST_RECOMPUTE_NONE);
        assert_near(mtnlg_saved, 0.65, 0.01);
        /* Micro-batch scales it linearly (the b of sbh). */
        assert_true(est_activation_bytes_per_layer(2048, 4, 12288, 96, 8, EST_RECOMPUTE_NONE) ==
                    4 * est_activation_bytes_per_layer(2048, 1, 12288, 96, 8, EST_RECOMPUTE_NONE));
}

/* Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters",
 * eq. 3 counts 96 B s l h^2 (1 + s/6h + V/16lh) FLOPs an iteration with recomputation; without
 * it the same derivation gives 72 B s l h^2 (1 + s/6h + V/12lh), which is 6N + 12 l h s a token
 * with N = 12 l h^2 + V h (their parameter count), the count PaLM's appendix B uses for MFU. */
static void test_flops(void **state) {
        (void)state;
        const double l = 96, h = 12288, s = 2048, V = 51200, B = 1536; /* GPT-3 175B as in their Table 1 */
        double n = 12 * l * h * h + V * h;
        double per_iteration = est_flops_per_token(EST_TRAIN, n, 96, 12288, 2048) * B * s;
        assert_near(per_iteration, 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h)), 1e-12);
        /* eq. 3 as printed, against its expansion */
        assert_near(est_megatron_flops_per_iteration(B, s, l, h, V),
                    B * s * (96 * l * h * h + 16 * l * h * s + 6 * V * h), 1e-12);
        /* Recomputation adds one forward pass of the layers (2N-ish + 4lhs) but not of the logits. */
        assert_near(est_megatron_flops_per_iteration(B, s, l, h, V) - per_iteration,
                    B * s * (2 * 12 * l * h * h + 4 * l * h * s), 1e-12);
        /* Inference: 2N a token plus attention over the context, 4 l h s (one third of training's 12). */
        assert_true(est_flops_per_token(EST_INFER, n, 96, 12288, 2048) == 2 * n + 4 * l * h * s);
}

static const char *table_error(const char *json) {
        static char err[512];
        struct modeldb db;
        err[0] = '\0';
        int r = modeldb_load_buffer(json, strlen(json), "models.json", &db, err, sizeof(err));
        if (r == 0) {
                modeldb_done(&db);
                return NULL;
        }
        assert_int_equal(r, -EINVAL);
        return err;
}

#define GOOD_SOURCES "\"sources\": {\"card\": {\"title\": \"t\", \"url\": \"https://example.org/\"}}"
#define GOOD_MODEL                                                                                                     \
        "\"id\": \"m\", \"name\": \"M\", \"layers\": 2, \"hidden\": 64, \"ffn\": 256, \"mlp\": \"plain\", \"heads\": "   \
        "4, \"kv_heads\": 2, \"vocab\": 100, \"max_seq\": 128, \"params_published\": 1e6"

static void test_table_refusals(void **state) {
        (void)state;
        const char *e;
        assert_null(table_error("{\"schema\": \"gpuvet.models/1\", " GOOD_SOURCES ", \"models\": [{" GOOD_MODEL
                                ", \"source\": \"card\"}]}"));
        e = table_error("{\"schema\": \"gpuvet.models/2\", " GOOD_SOURCES ", \"models\": []}");
        assert_non_null(strstr(e, "models.json: \"schema\" must be \"gpuvet.models/1\""));
        e = table_error("{\"schema\": \"gpuvet.models/1\", " GOOD_SOURCES ", \"models\": []}");
        assert_non_null(strstr(e, "\"models\" must be a non-empty list"));
        e = table_error("{\"schema\": \"gpuvet.models/1\",\n" GOOD_SOURCES ",\n \"models\": [}");
        assert_non_null(strstr(e, "models.json: line 3"));
        e = table_error("{\"schema\": \"gpuvet.models/1\", " GOOD_SOURCES ", \"models\": [{" GOOD_MODEL
                        ", \"source\": \"nowhere\"}]}");
        assert_non_null(strstr(e, "model m: source nowhere is not in \"sources\""));
        e = table_error("{\"schema\": \"gpuvet.models/1\", " GOOD_SOURCES ", \"models\": [{" GOOD_MODEL "}]}");
        assert_non_null(strstr(e, "model m: \"source\" must name"));
        /* A key given twice is refused by the parser (JSON_REJECT_DUPLICATES), with its line. */
        e = table_error("{\"schema\": \"gpuvet.models/1\", " GOOD_SOURCES ", \"models\": [{" GOOD_MODEL
                        ", \"layers\": 0, \"source\": \"card\"}]}");
        assert_non_null(strstr(e, "models.json: line 1: duplicate object key"));
        e = table_error("{\"schema\": \"gpuvet.models/1\", " GOOD_SOURCES ", \"models\": [{\"id\": \"m\", \"name\": "
                        "\"M\", \"layers\": 0, \"hidden\": 64, \"ffn\": 256, \"mlp\": \"plain\", \"heads\": 4, "
                        "\"kv_heads\": 2, \"vocab\": 100, \"max_seq\": 128, \"params_published\": 1e6, \"source\": "
                        "\"card\"}]}");
        assert_non_null(strstr(e, "model m: \"layers\" must be an integer from 1 to 100000"));
        e = table_error("{\"schema\": \"gpuvet.models/1\", " GOOD_SOURCES ", \"models\": [{\"id\": \"m\", \"name\": "
                        "\"M\", \"layers\": 2, \"hidden\": 64, \"ffn\": 256, \"mlp\": \"plain\", \"heads\": 4, "
                        "\"kv_heads\": 3, \"vocab\": 100, \"max_seq\": 128, \"params_published\": 1e6, \"source\": "
                        "\"card\"}]}");
        assert_non_null(strstr(e, "model m: heads (4) must divide hidden (64) and kv_heads (3) divide heads"));
        e = table_error("{\"schema\": \"gpuvet.models/1\", " GOOD_SOURCES ", \"models\": [{\"id\": \"m\", \"name\": "
                        "\"M\", \"layers\": 2, \"hidden\": 64, \"ffn\": 256, \"mlp\": \"swish\", \"heads\": 4, "
                        "\"kv_heads\": 2, \"vocab\": 100, \"max_seq\": 128, \"params_published\": 1e6, \"source\": "
                        "\"card\"}]}");
        assert_non_null(strstr(e, "model m: \"mlp\" must be \"gated\" (SwiGLU) or \"plain\""));
        e = table_error("{\"schema\": \"gpuvet.models/1\", " GOOD_SOURCES ", \"models\": [{" GOOD_MODEL
                        ", \"source\": \"card\"}, {" GOOD_MODEL ", \"source\": \"card\"}]}");
        assert_non_null(strstr(e, "model m is listed twice"));
        e = table_error("{\"schema\": \"gpuvet.models/1\", " GOOD_SOURCES ", \"models\": [{" GOOD_MODEL
                        ", \"experts\": 8, \"experts_per_token\": 9, \"source\": \"card\"}]}");
        assert_non_null(strstr(e, "\"experts\" (1-4096) needs \"experts_per_token\" from 1 to experts"));
        e = table_error("{\"schema\": \"gpuvet.models/1\", " GOOD_SOURCES ", \"models\": [{" GOOD_MODEL
                        ", \"active_params_published\": 2e6, \"source\": \"card\"}]}");
        assert_non_null(strstr(e, "\"params_published\" must be a number"));
}

/* Every built-in preset: its shape's count against the count its model card or paper
 * publishes. The labels are rounded (Llama 2 "7B" is 6.74B), so 5%; the cards that give
 * three digits are held to them. */
static void test_presets_against_published_counts(void **state) {
        (void)state;
        struct modeldb db;
        char err[512];
        assert_int_equal(modeldb_load(NULL, &db, err, sizeof(err)), 0);
        assert_true(db.n >= 15);
        for (size_t i = 0; i < db.n; i++) {
                const struct model_preset *p = &db.models[i];
                double total = est_params_total(&p->shape);
                if (fabs(total - p->params_published) > 0.05 * p->params_published) {
                        print_error("%s: %.4g parameters from the shape, %.4g published\n", p->id, total,
                                    p->params_published);
                        fail();
                }
                if (p->active_params_published > 0)
                        assert_near(est_params_active(&p->shape), p->active_params_published, 0.01);
        }
        /* Qwen2.5 7B card: 7.61B; Mixtral blog: 46.7B total, 12.9B per token; Mistral: 7.3B. */
        assert_near(est_params_total(&modeldb_find(&db, "qwen2.5-7b")->shape), 7.61e9, 0.002);
        assert_near(est_params_total(&modeldb_find(&db, "mixtral-8x7b")->shape), 46.7e9, 0.002);
        assert_near(est_params_active(&modeldb_find(&db, "mixtral-8x7b")->shape), 12.9e9, 0.005);
        assert_near(est_params_total(&modeldb_find(&db, "mistral-7b")->shape), 7.3e9, 0.01);
        assert_near(est_params_total(&modeldb_find(&db, "llama-3.1-405b")->shape), 405e9, 0.005);
        assert_non_null(modeldb_find(&db, "LLAMA-2-70B")); /* ids match case-insensitively */
        assert_null(modeldb_find(&db, "llama-2"));
        modeldb_done(&db);
}

static void test_layout(void **state) {
        (void)state;
        struct est_model m = {.layers = 4, .hidden = 64, .ffn = 256, .heads = 4, .kv_heads = 2, .vocab = 100};
        struct est_config c = {.mode = EST_TRAIN, .tp = 4, .pp = 4, .dp = 1, .seq = 16, .micro_batch = 1};
        struct est_memory mem;
        assert_int_equal(est_memory(&m, &c, &mem), 0);
        c.tp = 3; /* 4 heads do not split 3 ways */
        assert_int_equal(est_memory(&m, &c, &mem), -EINVAL);
        c.tp = 1, c.pp = 5; /* more stages than layers */
        assert_int_equal(est_memory(&m, &c, &mem), -EINVAL);
        /* Pipeline: the first stage keeps pp micro-batches of L/pp layers (Korthikanti sec.
         * 4.2.3), L layers' worth, unless a step has fewer micro-batches than stages. */
        c.tp = 1, c.pp = 1, c.global_batch = 8;
        assert_int_equal(est_memory(&m, &c, &mem), 0);
        double one_stage = mem.activations;
        c.pp = 4;
        assert_int_equal(est_memory(&m, &c, &mem), 0);
        assert_true(mem.activations == one_stage);
        c.global_batch = 2; /* two micro-batches a step: two in flight on a 4-stage pipeline */
        assert_int_equal(est_memory(&m, &c, &mem), 0);
        assert_true(mem.activations == one_stage / 2);
        c.global_batch = 0;
        c.pp = 1, c.zero = 4;
        assert_int_equal(est_memory(&m, &c, &mem), -EINVAL);
        assert_int_equal(est_precision_from_name("bf16"), EST_BF16);
        assert_int_equal(est_precision_from_name("int4"), _EST_PRECISION_INVALID);
        assert_string_equal(est_recompute_name(EST_RECOMPUTE_SELECTIVE), "selective");
}

/* The adviser (estimate/adviser.h): ZeRO's 7.5B model on 64-way data parallelism needs 120
 * GB a GPU (test_zero_paper_figure_1), more than 90% of an 80 GB GPU; the smallest single
 * changes that fit are ZeRO stage 1 (31.4 GB), then twice the tensor or the pipeline degree
 * (60 GB). Without a shape the FLOPs are 6N a token, so the job makes 64 x peak x MFU / 6N
 * tokens a second. */
static void test_advise(void **state) {
        (void)state;
        const struct gpu_model gpu = {.name = "test 80GB", .memory_gb = 80, .tflops = {.bf16 = 1000}};
        struct est_answer a = {
                .model = {.params_override = 7.5e9},
                .config = {.mode = EST_TRAIN, .precision = EST_BF16, .optimizer = EST_ADAM, .tp = 1, .pp = 1,
                           .dp = 64, .seq = 1, .micro_batch = 1, .global_batch = 64},
                .gpu = {.model = &gpu},
                .mfu = 0.4,
                .gpus = 64,
        };
        assert_int_equal(est_advise(&a), 0);
        assert_true(a.judged);
        assert_false(a.fits);
        assert_near(a.usable_bytes, 72e9, 1e-9);
        assert_near(a.memory.total / 1e9, 120, 0.03);
        assert_int_equal(a.n_suggestions, 3);
        assert_false(a.combined);
        assert_string_equal(a.suggestions[0].change, "--zero 1");
        assert_near(a.suggestions[0].total / 1e9, 31.4, 0.03);
        assert_string_equal(a.suggestions[1].change, "--tp 2");
        assert_int_equal(a.suggestions[1].gpus, 128);
        assert_string_equal(a.suggestions[2].change, "--pp 2");
        assert_near(a.flops_per_token, 6 * 7.5e9, 1e-9);
        assert_near(a.tokens_per_second, 64 * 1000e12 * 0.4 / (6 * 7.5e9), 1e-9);
        assert_near(a.step_seconds, 64 / a.tokens_per_second, 1e-9);
        assert_true(isnan(a.epoch_seconds)); /* no --tokens */

        /* A GPU the table gives no memory for: not judged, no suggestions. */
        const struct gpu_model unknown = {.name = "test ?GB"};
        a = (struct est_answer){.model = a.model, .config = a.config, .gpu = {.model = &unknown}, .mfu = 0.4, .gpus = 64};
        assert_int_equal(est_advise(&a), 0);
        assert_false(a.judged);
        assert_int_equal(a.n_suggestions, 0);
        assert_true(isnan(a.tokens_per_second)); /* no peak either */
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_zero_paper_figure_1),
                cmocka_unit_test(test_kv_cache),
                cmocka_unit_test(test_activations),
                cmocka_unit_test(test_flops),
                cmocka_unit_test(test_table_refusals),
                cmocka_unit_test(test_presets_against_published_counts),
                cmocka_unit_test(test_layout),
                cmocka_unit_test(test_advise),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

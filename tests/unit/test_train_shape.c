/* gpuvet bench train's step arithmetic (src/bench/train_shape.c): the GEMM-by-GEMM count
 * against Megatron-LM's closed form (Narayanan et al. 2021, eq. 3 without recomputation:
 * 72 B s L h^2 (1 + s/6h + V/12Lh)) for every GPT-shaped preset of data/models.json, a
 * small case worked by hand, the gated MLP and grouped KV heads, and the shape checks. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>

#include "bench/train_shape.h"
#include "data/modeldb.h"

#define assert_near(actual, expected, rel)                                                                             \
        do {                                                                                                           \
                double a_ = (actual), e_ = (expected);                                                                 \
                if (!(fabs(a_ - e_) <= (rel) * fabs(e_))) {                                                            \
                        print_error("%s = %.10g, expected %.10g (within %g)\n", #actual, a_, e_, (double)(rel));       \
                        fail();                                                                                        \
                }                                                                                                      \
        } while (0)

static const struct train_shape tiny = {.layers = 2, .hidden = 64, .heads = 4, .kv_heads = 4, .ffn = 256,
                                        .vocab = 100, .mlp = EST_MLP_PLAIN, .seq = 32, .micro_batch = 2,
                                        .layers_run = 1};

/* Worked by hand: forward qkv 2*192*64*64 = 1572864, score and context 2*32*32*16 per head,
 * 8 heads: 262144 each, proj 2*64*64*64 = 524288, mlp up and down 2*256*64*64 = 2097152
 * each: 6815744; times 3 with the backward: 20447232 a layer. Logits 2*100*64*64*3 =
 * 2457600. Two layers: 43352064, which is Megatron's 72*2*32*2*64^2*(1 + 32/384 + 100/1536). */
static void test_tiny_by_hand(void **state) {
        (void)state;
        assert_near(train_layer_flops(&tiny), 20447232.0, 1e-12);
        assert_near(train_logit_flops(&tiny), 2457600.0, 1e-12);
        assert_near(train_model_flops(&tiny), 43352064.0, 1e-12);
        assert_near(train_proxy_flops(&tiny), 20447232.0 + 2457600.0, 1e-12);
        assert_near(est_megatron_model_flops_per_iteration(2, 32, 2, 64, 100), 43352064.0, 1e-12);
        /* 64*192 + 64*64 + 64*256 + 256*64 */
        assert_int_equal(train_layer_params(&tiny), 12288 + 4096 + 16384 + 16384);
}

/* Backward = 2x forward for every layer, the logits too: Megatron's factor 3. */
static void test_backward_is_twice_forward(void **state) {
        (void)state;
        struct train_gemm g[TRAIN_MAX_GEMMS];
        size_t n = train_gemms(&tiny, g);
        double f[_TRAIN_PHASE_COUNT] = {0}, logit_fwd = 0;
        for (size_t i = 0; i < n; i++) {
                f[g[i].phase] += train_gemm_flops(&g[i]);
                if (!strcmp(g[i].name, "logits.fwd"))
                        logit_fwd = train_gemm_flops(&g[i]);
        }
        assert_near(f[TRAIN_BACKWARD], 2 * f[TRAIN_FORWARD], 1e-12);
        assert_near(f[TRAIN_LOGITS], 3 * logit_fwd, 1e-12);
        assert_true(n <= TRAIN_MAX_GEMMS);
}

/* Every GPT-shaped preset (plain MLP, ffn = 4h, no grouped KV heads) of data/models.json:
 * the count of the GEMMs is Megatron's formula, at the seed's sequence and micro-batch. */
static void test_presets_match_megatron(void **state) {
        (void)state;
        struct modeldb db;
        char err[256];
        assert_int_equal(modeldb_load(NULL, &db, err, sizeof(err)), 0);
        unsigned checked = 0;
        for (size_t i = 0; i < db.n; i++) {
                const struct est_model *m = &db.models[i].shape;
                if (m->mlp != EST_MLP_PLAIN || m->ffn != 4 * m->hidden || m->kv_heads != m->heads || m->experts)
                        continue;
                struct train_shape s = {.layers = m->layers, .hidden = m->hidden, .heads = m->heads,
                                        .kv_heads = m->kv_heads, .ffn = m->ffn, .vocab = m->vocab, .mlp = m->mlp,
                                        .seq = m->max_seq, .micro_batch = 4, .layers_run = 1};
                assert_int_equal(train_shape_check(&s, err, sizeof(err)), 0);
                assert_near(train_model_flops(&s),
                            est_megatron_model_flops_per_iteration(4, m->max_seq, m->layers, m->hidden, m->vocab), 1e-12);
                checked++;
        }
        assert_true(checked >= 3); /* megatron-1.2b, megatron-8.3b, gpt3-175b */
        modeldb_done(&db);
}

/* GPT-3 175B (Brown et al. 2020): 2048 tokens a sequence, one sequence: 72*2048*96*12288^2
 * (1 + 2048/73728 + 50257/14155776) = 2.20441e15 model FLOPs, 6N per token plus attention
 * (PaLM's 6N + 12 L h s for N = 174.6e9 of the layers and logits). */
static void test_gpt3(void **state) {
        (void)state;
        struct train_shape s = {.layers = 96, .hidden = 12288, .heads = 96, .kv_heads = 96, .ffn = 49152,
                                .vocab = 50257, .mlp = EST_MLP_PLAIN, .seq = 2048, .micro_batch = 1, .layers_run = 2};
        double per_token = train_model_flops(&s) / 2048;
        double n_params = 96.0 * (double)train_layer_params(&s) + 50257.0 * 12288;
        assert_near(per_token, 6 * n_params + 12.0 * 96 * 12288 * 2048, 1e-12);
        assert_near(train_model_flops(&s), 2.20441e15, 1e-5);
        assert_near(train_proxy_flops(&s), 2 * train_layer_flops(&s) + train_logit_flops(&s), 1e-12);
}

/* Llama 2 70B: grouped KV heads (64 Q, 8 KV of 128) shrink the QKV projection to
 * h (h + 2*8*128); the gated MLP has three h x ffn weights. */
static void test_gqa_swiglu(void **state) {
        (void)state;
        struct train_shape s = {.layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8, .ffn = 28672,
                                .vocab = 32000, .mlp = EST_MLP_GATED, .seq = 4096, .micro_batch = 1, .layers_run = 1};
        assert_int_equal(train_layer_params(&s), 8192ull * (8192 + 2048) + 8192ull * 8192 + 3ull * 8192 * 28672);
        double h = 8192, T = 4096;
        double fwd = 2 * T * (double)train_layer_params(&s) + 4 * T * T * h;
        assert_near(train_layer_flops(&s), 3 * fwd, 1e-12);
}

/* The whole model's step from the proxy's parts: 40 layers from 2 run; the all-reduce by
 * bytes: (40 layer blocks + the logits) over (2 + the logits). */
static void test_whole_step(void **state) {
        (void)state;
        struct train_shape s = {.layers = 40, .hidden = 1536, .heads = 16, .kv_heads = 16, .ffn = 6144, .vocab = 51200,
                                .mlp = EST_MLP_PLAIN, .seq = 1024, .micro_batch = 4, .layers_run = 2};
        assert_near(train_whole_step_ms(&s, 3, 5, 1), (3 + 5) * 20.0 + 1, 1e-12);
        double layer = 12.0 * 1536 * 1536, logits = 51200.0 * 1536;
        assert_near(train_whole_allreduce_ms(&s, 2), 2 * (40 * layer + logits) / (2 * layer + logits), 1e-12);
        s.layers_run = 40;
        assert_near(train_whole_allreduce_ms(&s, 2), 2, 1e-12);
}

static void test_shape_checks(void **state) {
        (void)state;
        char why[128];
        struct train_shape s = tiny;
        s.heads = 5;
        assert_int_equal(train_shape_check(&s, why, sizeof(why)), -EINVAL);
        assert_non_null(strstr(why, "hidden"));
        s = tiny;
        s.kv_heads = 3;
        assert_int_equal(train_shape_check(&s, why, sizeof(why)), -EINVAL);
        s = tiny;
        s.layers_run = 3;
        assert_int_equal(train_shape_check(&s, why, sizeof(why)), -EINVAL);
        assert_non_null(strstr(why, "layers"));
        s = tiny;
        s.seq = 0;
        assert_int_equal(train_shape_check(&s, why, sizeof(why)), -EINVAL);
        assert_int_equal(train_shape_check(&tiny, why, sizeof(why)), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_tiny_by_hand),      cmocka_unit_test(test_backward_is_twice_forward),
                cmocka_unit_test(test_presets_match_megatron), cmocka_unit_test(test_gpt3),
                cmocka_unit_test(test_gqa_swiglu),        cmocka_unit_test(test_shape_checks),
                cmocka_unit_test(test_whole_step),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

/* bench train: the training-step proxy (bench/bench_train.h; docs/bench.md, "train").
 *
 * Buffers: the weights of layers_run layers and the logit layer's, one block each (their
 * gradients likewise: what the weight-gradient products write), and three activation
 * buffers every product shares (two inputs, one output), each sized for the largest
 * product that uses it. No product feeds another: the values do not matter for timing, only
 * the shapes and that the inputs are not all zeros (a GPU multiplies zeros at less power,
 * so faster). The inputs are the gemm benchmark's values, {±0.5, ±1, ±1.5, ±2}.
 *
 * The attention's products, one per (sequence, head), are one strided-batch cuBLASLt call
 * each, as PyTorch's batched matmul makes them.
 *
 * On OpenCL every product reads and writes the start of its buffers (a kernel argument is
 * a whole buffer; sub-buffers would be needed for offsets), so the layers share one weight
 * block and the heads one region; each product's m is rounded up to a multiple of 16 (the
 * kernel's tile), its FLOPs counted as the model's. The figures of a CPU device (PoCL) are
 * measured, never judged: its subject is "cpuN" and it has no GPU peak. */
#include "bench/bench_train.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_devutil.h"
#include "bench/collective.h"
#include "bench/cuda_raw.h"
#include "bench/gemm_ref.h"
#include "bench/matmul.h"
#include "bench/train_shape.h"
#include "core/array.h"
#include "data/gpudb.h"

#define TRAIN_WORKSPACE_BYTES (32u << 20) /* as bench gemm: what cuBLAS recommends for Hopper */
#define TRAIN_MEM_FRACTION 0.9
#define TRAIN_FILL_CHUNK_BYTES (16u << 20)
#define TRAIN_FULL_VERIFY_N 256
#define TRAIN_VERIFY_SAMPLES 64
#define TRAIN_DEFAULT_STEPS 10
#define TRAIN_DEFAULT_WARMUP 2
#define TRAIN_MAX_GPUS 64 /* data-parallel ranks in one process */

static const struct gemm_seeds *const seeds = &gemm_seeds_default;

/* The parts of a step, timed apart, in order; the all-reduce only with more than one GPU. */
enum part { PART_FORWARD, PART_LOGITS, PART_BACKWARD, PART_ALLREDUCE, _PART_COUNT };
static const char *const part_names[_PART_COUNT] = {"forward", "logits", "backward", "allreduce"};
#define TRAIN_ALLREDUCE_VERIFY_ELEMS 4096

struct train_dev {
        struct bench_dev d;
        const struct train_shape *shape;
        const struct gemm_prec *p;
        bool cuda;
        struct lt_library *lib;
        struct lt_device *lt;
        struct dev_buf *ws;
        uint64_t ws_bytes, pws;
        struct dev_buf *buf[_TRAIN_OPERAND_COUNT];
        uint64_t ptr[_TRAIN_OPERAND_COUNT];   /* CUDA device addresses of buf */
        uint64_t elems[_TRAIN_OPERAND_COUNT]; /* elements each holds */
        struct train_gemm g[TRAIN_MAX_GEMMS];
        size_t n_g;
        struct lt_matmul *mm[TRAIN_MAX_GEMMS];
        unsigned algo[TRAIN_MAX_GEMMS];
        struct measurement *m; /* the step measurement: where failures are told */
        size_t step_index;     /* its index in the report (an append may move the report) */
        struct coll_comm *comm; /* data parallel: this GPU's rank */
        struct dev_event *ev[_PART_COUNT + 1];
        double *tflops, *part_ms[_PART_COUNT]; /* a sample a step */
};

const char *bench_train_default_precision(enum dev_kind kind) { return kind == DEV_OPENCL ? "fp32" : "bf16"; }

static uint64_t rows_m(const struct train_dev *t, const struct train_gemm *g) {
        return t->cuda ? g->m : (g->m + 15) / 16 * 16;
}

static size_t operand_size(const struct train_dev *t, enum train_operand o) {
        return gemm_elem_size(o == TRAIN_GRAD || o == TRAIN_OUT ? t->p->d : t->p->ab);
}

/* Elements of operand o of product g for one batch entry: A m x k, B k x n, D m x n. */
static uint64_t entry_elems(const struct train_dev *t, const struct train_gemm *g, int which) {
        uint64_t m = rows_m(t, g);
        return which == 0 ? m * g->k : which == 1 ? g->k * g->n : m * g->n;
}

/* Element offset of operand which (0 A, 1 B, 2 D) of g for layer l and batch entry b. */
static uint64_t operand_offset(const struct train_dev *t, const struct train_gemm *g, int which, unsigned l,
                               uint64_t b) {
        if (!t->cuda)
                return 0;
        enum train_operand o = which == 0 ? g->a : which == 1 ? g->b : g->d;
        if (o == TRAIN_WEIGHT || o == TRAIN_GRAD) {
                uint64_t block = g->phase == TRAIN_LOGITS ? t->shape->layers_run : l;
                return block * train_layer_params(t->shape) + g->weight_offset;
        }
        return b * entry_elems(t, g, which);
}

static void size_buffers(struct train_dev *t) {
        const struct train_shape *s = t->shape;
        uint64_t logit_block = (uint64_t)s->vocab * s->hidden;
        uint64_t layer = train_layer_params(s);
        for (int o = 0; o < _TRAIN_OPERAND_COUNT; o++)
                t->elems[o] = 0;
        if (t->cuda) {
                t->elems[TRAIN_WEIGHT] = t->elems[TRAIN_GRAD] = s->layers_run * layer + logit_block;
        }
        for (size_t i = 0; i < t->n_g; i++) {
                const struct train_gemm *g = &t->g[i];
                enum train_operand ops[3] = {g->a, g->b, g->d};
                for (int w = 0; w < 3; w++) {
                        uint64_t need = entry_elems(t, g, w) * (t->cuda ? g->batch : 1);
                        if (need > t->elems[ops[w]])
                                t->elems[ops[w]] = need;
                }
        }
}

static double device_bytes(const struct train_dev *t) {
        double total = (double)t->ws_bytes;
        for (int o = 0; o < _TRAIN_OPERAND_COUNT; o++)
                total += (double)t->elems[o] * (double)operand_size(t, o);
        return total;
}

/* Fill a buffer with the inputs' values through one host chunk copied over and over. */
static int fill(const struct bench_ctx *ctx, struct train_dev *t, enum train_operand o) {
        size_t es = operand_size(t, o), total = t->elems[o] * es;
        size_t chunk = TRAIN_FILL_CHUNK_BYTES < total ? TRAIN_FILL_CHUNK_BYTES : total;
        chunk -= chunk % es;
        void *host = malloc(chunk);
        if (!host)
                return -ENOMEM;
        enum gemm_elem e = o == TRAIN_GRAD || o == TRAIN_OUT ? t->p->d : t->p->ab;
        for (size_t i = 0; i < chunk / es; i++)
                gemm_elem_store(e, host, i, gemm_value_a(seeds, (uint32_t)(i % 4099), (uint32_t)(i / 4099)));
        int r = 0;
        for (size_t off = 0; off < total && r == 0; off += chunk)
                r = ctx->ops->copy_h2d(t->d.ctx, t->buf[o], off, host, total - off < chunk ? total - off : chunk);
        if (r == 0)
                r = ctx->ops->synchronize(t->d.ctx);
        free(host);
        return r;
}

/* One product of layer l (CUDA: its whole batch; OpenCL: batch entry b); enqueued, not
 * waited for. */
static int run_one(const struct bench_ctx *ctx, struct train_dev *t, size_t i, unsigned l, uint64_t b) {
        const struct train_gemm *g = &t->g[i];
        if (t->cuda) {
                uint64_t p[3];
                enum train_operand ops[3] = {g->a, g->b, g->d};
                for (int w = 0; w < 3; w++)
                        p[w] = t->ptr[ops[w]] + operand_offset(t, g, w, l, b) * operand_size(t, ops[w]);
                int e = lt_matmul_run(t->mm[i], t->algo[i], p[0], p[1], p[2], t->pws);
                if (e < 0)
                        measurement_fail(t->m, STATUS_ERROR, "%s: %s", g->name, lt_library_error(t->lib));
                return e;
        }
        uint64_t m = rows_m(t, g);
        struct dev_arg args[6] = {
                {.kind = DEV_ARG_BUF, .v.buf = t->buf[g->d]}, {.kind = DEV_ARG_BUF, .v.buf = t->buf[g->a]},
                {.kind = DEV_ARG_BUF, .v.buf = t->buf[g->b]}, {.kind = DEV_ARG_U32, .v.u32 = (uint32_t)m},
                {.kind = DEV_ARG_U32, .v.u32 = (uint32_t)g->n}, {.kind = DEV_ARG_U32, .v.u32 = (uint32_t)g->k},
        };
        /* one work item per 16 x 6 tile of D (gemm_mnk_f32 is grid-stride: any size is right) */
        size_t tiles = (size_t)(m / 16) * (size_t)((g->n + 5) / 6);
        int e = ctx->ops->launch(t->d.ctx, "gemm_mnk_f32", tiles, 0, args, 6);
        if (e < 0)
                measurement_fail(t->m, STATUS_ERROR, "%s: %s", g->name, bench_dev_error(ctx));
        return e;
}

/* Every product of one part of the step: the layers' forward in order, the logit layer's,
 * the layers' backward from the last layer down. */
static int run_part(const struct bench_ctx *ctx, struct train_dev *t, enum part part) {
        unsigned layers = part == PART_LOGITS ? 1 : t->shape->layers_run;
        enum train_phase phase = part == PART_FORWARD ? TRAIN_FORWARD : part == PART_LOGITS ? TRAIN_LOGITS : TRAIN_BACKWARD;
        for (unsigned li = 0; li < layers; li++) {
                unsigned l = part == PART_BACKWARD ? layers - 1 - li : li;
                for (size_t i = 0; i < t->n_g; i++) {
                        if (t->g[i].phase != phase)
                                continue;
                        /* attention: CUDA runs a (sequence, head) batch in one call; OpenCL
                         * launches each product, at the buffers' start */
                        for (uint64_t b = 0; b < (t->cuda ? 1 : t->g[i].batch); b++) {
                                int e = run_one(ctx, t, i, l, b);
                                if (e < 0)
                                        return e;
                        }
                }
        }
        return 0;
}

/* Enqueue one step's products with an event before each part and after the backward (not
 * waited for); the all-reduce, when there is one, is enqueued by the caller after this. */
static int enqueue_step(const struct bench_ctx *ctx, struct train_dev *t) {
        const struct dev_ops *ops = ctx->ops;
        void *stream;
        int e = t->cuda ? cuda_ctx_stream(t->d.ctx, &stream) : 0; /* cuBLASLt runs in the current context */
        if (e == 0)
                e = ops->event_record(t->d.ctx, t->ev[0]);
        for (int part = 0; e == 0 && part < PART_ALLREDUCE; part++)
                if ((e = run_part(ctx, t, (enum part)part)) == 0)
                        e = ops->event_record(t->d.ctx, t->ev[part + 1]);
        if (e < 0 && !t->m->summary[0])
                measurement_fail(t->m, STATUS_ERROR, "%s", bench_dev_error(ctx));
        return e;
}

/* After the all-reduce (or right after the backward): the last event, the wait, and each
 * part's milliseconds into ms. */
static int collect_step(const struct bench_ctx *ctx, struct train_dev *t, double *ms) {
        const struct dev_ops *ops = ctx->ops;
        int e = ops->event_record(t->d.ctx, t->ev[_PART_COUNT]);
        if (e == 0)
                e = ops->synchronize(t->d.ctx);
        for (int part = 0; e == 0 && part < _PART_COUNT; part++)
                e = ops->event_elapsed_ms(t->d.ctx, t->ev[part], t->ev[part + 1], &ms[part]);
        if (e < 0 && !t->m->summary[0])
                measurement_fail(t->m, STATUS_ERROR, "%s", bench_dev_error(ctx));
        return e;
}

/* NCCL's type for the gradients: D's element type. */
static enum nccl_dtype grad_dtype(const struct train_dev *t) {
        switch (t->p->d) {
        case GEMM_ELEM_F16: return NCCL_DT_FLOAT16;
        case GEMM_ELEM_BF16: return NCCL_DT_BFLOAT16;
        case GEMM_ELEM_F64: return NCCL_DT_FLOAT64;
        default: return NCCL_DT_FLOAT32;
        }
}

/* The gradients' all-reduce (sum, in place) of count elements over every rank, one group:
 * one thread drives all the ranks of this process. */
static int allreduce(struct coll_lib *coll, struct train_dev *t, size_t n, size_t count) {
        int e = coll_group_start(coll);
        for (size_t i = 0; e == 0 && i < n; i++) {
                void *stream;
                if ((e = cuda_ctx_stream(t[i].d.ctx, &stream)) < 0)
                        break;
                struct coll_call call = {.coll = NCCL_COLL_ALL_REDUCE, .send = t[i].ptr[TRAIN_GRAD],
                                         .recv = t[i].ptr[TRAIN_GRAD], .count = count, .dtype = grad_dtype(&t[i]),
                                         .op = NCCL_OP_SUM, .stream = stream};
                e = coll_enqueue(t[i].comm, &call);
        }
        int end = coll_group_end(coll);
        e = e < 0 ? e : end;
        for (size_t i = 0; e < 0 && i < n; i++)
                if (!t[i].m->summary[0])
                        measurement_fail(t[i].m, STATUS_ERROR, "all-reduce: %s", coll_lib_error(coll));
        return e;
}

/* ---- verification: the first head's attention products on known inputs ------------------- */

/* One product of each layout cuBLASLt runs in the step: "TN" (scores), "NN" (context), "NT"
 * (dV); the smallest of the step, each its own plan and kernel. OpenCL runs one kernel and
 * one layout: the scores alone. */
static const char *const verified_products[] = {"score.fwd", "context.fwd", "context.dgrad_v"};

static long product_index(const struct train_dev *t, const char *name) {
        for (size_t i = 0; i < t->n_g; i++)
                if (!strcmp(t->g[i].name, name))
                        return (long)i;
        return -1;
}

/* A and B of product g, as stored for its layout and this backend, from the reference's
 * values A^T(i, k) and B(k, j); D filled with NaN first (a product that writes nothing fails). */
static int upload_known(const struct bench_ctx *ctx, struct train_dev *t, const struct train_gemm *g) {
        uint64_t m = rows_m(t, g), n = g->n, k = g->k;
        size_t es = gemm_elem_size(t->p->ab);
        void *a = calloc(m * k, es), *b = calloc(k * n, es);
        int r = -ENOMEM;
        if (a && b) {
                for (uint64_t i = 0; i < m; i++)
                        for (uint64_t kk = 0; kk < k; kk++) {
                                double v = i < g->m ? gemm_value_a(seeds, (uint32_t)i, (uint32_t)kk) : 0;
                                /* op(A) = A^T: A stored k x m; else m x k (gemm_mnk_f32 takes A^T m x k) */
                                gemm_elem_store(t->p->ab, a, t->cuda && g->trans_a ? kk + i * k : i + kk * m, v);
                        }
                for (uint64_t j = 0; j < n; j++)
                        for (uint64_t kk = 0; kk < k; kk++)
                                gemm_elem_store(t->p->ab, b, t->cuda && g->trans_b ? j + kk * n : kk + j * k,
                                                gemm_value_b(seeds, (uint32_t)kk, (uint32_t)j));
                r = ctx->ops->copy_h2d(t->d.ctx, t->buf[g->a], 0, a, m * k * es);
                if (r == 0)
                        r = ctx->ops->copy_h2d(t->d.ctx, t->buf[g->b], 0, b, k * n * es);
                if (r == 0)
                        r = ctx->ops->memset(t->d.ctx, t->buf[g->d], 0xff, m * n * gemm_elem_size(t->p->d));
                if (r == 0) /* the copies are asynchronous: the host arrays live until they are done */
                        r = ctx->ops->synchronize(t->d.ctx);
        }
        free(a);
        free(b);
        return r;
}

/* Check D(i0..i1-1, j) read into col against the exact reference. */
static bool check_column(const struct train_dev *t, const struct train_gemm *g, const void *col, uint64_t j,
                         uint64_t i0, uint64_t i1, double *bcol) {
        for (uint64_t kk = 0; kk < g->k; kk++)
                bcol[kk] = gemm_value_b(seeds, (uint32_t)kk, (uint32_t)j);
        for (uint64_t i = i0; i < i1; i++) {
                double mag, want = gemm_ref_element(seeds, (unsigned)g->k, (uint32_t)i, (uint32_t)j, bcol, &mag);
                double got = gemm_elem_load(t->p->d, col, i - i0), tol = gemm_ref_tolerance(t->p, want, mag);
                if (!(fabs(got - want) <= tol)) {
                        snprintf(t->m->verify_error, sizeof(t->m->verify_error),
                                 "%s: D(%llu,%llu) = %.9g, expected %.9g (tolerance %.3g)", g->name,
                                 (unsigned long long)i, (unsigned long long)j, got, want, tol);
                        return false;
                }
        }
        return true;
}

/* Run product si once on known inputs (its whole batch; entry 0 is checked) and compare. */
static bool verify_product(const struct bench_ctx *ctx, struct train_dev *t, size_t si) {
        const struct train_gemm *g = &t->g[si];
        uint64_t m = rows_m(t, g), n = g->n;
        size_t es = gemm_elem_size(t->p->d);
        void *col = malloc(m * es);
        double *bcol = malloc(g->k * sizeof(double));
        int e = col && bcol ? upload_known(ctx, t, g) : -ENOMEM;
        if (e == 0)
                e = run_one(ctx, t, si, 0, 0);
        if (e == 0)
                e = ctx->ops->synchronize(t->d.ctx);
        bool ok = e == 0;
        uint64_t cols[3] = {0, n / 2, n - 1};
        bool full = n <= TRAIN_FULL_VERIFY_N;
        for (uint64_t c = 0; ok && c < (full ? n : 3); c++) {
                uint64_t j = full ? c : cols[c];
                if ((e = ctx->ops->copy_d2h(t->d.ctx, col, t->buf[g->d], j * m * es, m * es)) < 0 ||
                    (e = ctx->ops->synchronize(t->d.ctx)) < 0)
                        break;
                ok = check_column(t, g, col, j, 0, g->m, bcol);
        }
        /* scattered elements elsewhere: a wrong tile in the middle */
        uint32_t h = 0x9e3779b9u ^ (uint32_t)n;
        for (unsigned s = 0; ok && e == 0 && !full && s < TRAIN_VERIFY_SAMPLES; s++) {
                h = h * 1664525u + 1013904223u;
                uint64_t i = (h >> 8) % g->m;
                h = h * 1664525u + 1013904223u;
                uint64_t j = (h >> 8) % n;
                if ((e = ctx->ops->copy_d2h(t->d.ctx, col, t->buf[g->d], (j * m + i) * es, es)) < 0 ||
                    (e = ctx->ops->synchronize(t->d.ctx)) < 0)
                        break;
                ok = check_column(t, g, col, j, i, i + 1, bcol);
        }
        if (e < 0 && !t->m->summary[0])
                measurement_fail(t->m, STATUS_ERROR, "verifying %s: %s", g->name,
                                 e == -ENOMEM ? "out of memory" : bench_dev_error(ctx));
        free(col);
        free(bcol);
        return e == 0 && ok;
}

static void verify(const struct bench_ctx *ctx, struct train_dev *t) {
        size_t n = t->cuda ? ARRAY_COUNT(verified_products) : 1;
        bool ok = true;
        for (size_t i = 0; i < n && ok; i++) {
                long si = product_index(t, verified_products[i]);
                ok = si >= 0 && verify_product(ctx, t, (size_t)si);
        }
        t->m->verified = ok;
}

/* ---- setup ----------------------------------------------------------------------------------- */

/* cuBLASLt: a handle on the device's stream, a workspace, and one plan per product (the
 * heuristic's first usable algorithm). False with the step measurement failed. */
static bool plan_cuda(const struct bench_ctx *ctx, struct train_dev *t) {
        void *stream;
        int e = cuda_ctx_stream(t->d.ctx, &stream);
        if (e < 0) {
                measurement_fail(t->m, STATUS_ERROR, "%s", bench_dev_error(ctx));
                return false;
        }
        if ((e = lt_device_open(t->lib, stream, &t->lt)) < 0) {
                measurement_fail(t->m, STATUS_ERROR, "%s", lt_library_error(t->lib));
                return false;
        }
        t->ws_bytes = TRAIN_WORKSPACE_BYTES;
        if (ctx->ops->alloc(t->d.ctx, t->ws_bytes, &t->ws) < 0) {
                t->ws = NULL;
                t->ws_bytes = 0; /* fewer algorithms, still runs */
        } else {
                (void)cuda_buf_ptr(t->ws, &t->pws);
        }
        for (size_t i = 0; i < t->n_g; i++) {
                const struct train_gemm *g = &t->g[i];
                /* the attention's products per (sequence, head): one strided-batch call */
                struct lt_shape sh = {g->m, g->n, g->k, g->trans_a, g->trans_b, g->batch,
                                      (int64_t)entry_elems(t, g, 0), (int64_t)entry_elems(t, g, 1),
                                      (int64_t)entry_elems(t, g, 2)};
                if ((e = lt_matmul_plan_shape(t->lt, &t->p->lt, &sh, t->ws_bytes, 8, 0, &t->mm[i])) < 0) {
                        if (e == -ENODATA)
                                measurement_fail(t->m, STATUS_SKIP, "%s (%llux%llux%llu): cuBLASLt has no algorithm for %s",
                                                 g->name, (unsigned long long)g->m, (unsigned long long)g->n,
                                                 (unsigned long long)g->k, t->p->name);
                        else
                                measurement_fail(t->m, e == -ENOTSUP ? STATUS_SKIP : STATUS_ERROR, "%s: %s", g->name,
                                                 lt_library_error(t->lib));
                        return false;
                }
                unsigned count = lt_matmul_algos(t->mm[i]), a = 0;
                while (a < count && !lt_matmul_usable(t->mm[i], a))
                        a++;
                if (a == count) {
                        measurement_fail(t->m, STATUS_SKIP, "%s: none of %u cuBLASLt algorithms fits the workspace", g->name,
                                         count);
                        return false;
                }
                t->algo[i] = a;
        }
        return true;
}

static bool alloc_buffers(const struct bench_ctx *ctx, struct train_dev *t) {
        size_buffers(t);
        double need = device_bytes(t), have = (double)t->d.info.global_mem_bytes;
        if (have > 0 && need > TRAIN_MEM_FRACTION * have) {
                measurement_fail(t->m, STATUS_SKIP,
                                 "the step needs %.0f MiB, more than %.0f%% of the device's %.0f MiB: fewer --layers-run "
                                 "or a smaller --micro-batch",
                                 need / 1048576, TRAIN_MEM_FRACTION * 100, have / 1048576);
                return false;
        }
        for (int o = 0; o < _TRAIN_OPERAND_COUNT; o++) {
                if (!t->elems[o])
                        continue;
                int e = ctx->ops->alloc(t->d.ctx, t->elems[o] * operand_size(t, o), &t->buf[o]);
                if (e == 0 && t->cuda)
                        (void)cuda_buf_ptr(t->buf[o], &t->ptr[o]);
                if (e == 0)
                        e = fill(ctx, t, o);
                if (e < 0) {
                        measurement_fail(t->m, e == -ENOMEM ? STATUS_SKIP : STATUS_ERROR, "allocating the buffers: %s",
                                         e == -ENOMEM ? "out of memory" : bench_dev_error(ctx));
                        return false;
                }
        }
        return true;
}

static void train_dev_close(const struct bench_ctx *ctx, struct train_dev *t) {
        for (size_t i = 0; i < t->n_g; i++)
                lt_matmul_free(t->mm[i]);
        if (t->d.ctx) {
                for (int o = 0; o < _TRAIN_OPERAND_COUNT; o++)
                        if (t->buf[o])
                                ctx->ops->free(t->d.ctx, t->buf[o]);
                if (t->ws)
                        ctx->ops->free(t->d.ctx, t->ws);
                void *stream;
                if (t->lt)
                        lt_device_close(t->lt, cuda_ctx_stream(t->d.ctx, &stream) == 0);
        }
        bench_dev_close(ctx, &t->d);
}

/* ---- the run ----------------------------------------------------------------------------------- */

static void set_peak(struct train_dev *t) {
        const char *col;
        double tf = t->d.model && !t->d.info.is_cpu ? gemm_prec_peak_tflops(t->d.model, t->p, &col) : 0;
        if (tf > 0) {
                t->m->peak = tf;
                snprintf(t->m->peak_source, sizeof(t->m->peak_source), "%s spec sheet, dense %s (data/gpus.json)",
                         t->d.model->name, col);
        }
}

/* The allreduce measurement's check: rank r's first elements set to (r + 1) / 4, summed by
 * one all-reduce, must read n (n + 1) / 8 on every rank (exact in every type for n <= 64). */
static void verify_allreduce(const struct bench_ctx *ctx, struct coll_lib *coll, struct train_dev *t, size_t n,
                             struct measurement **am) {
        size_t count = t[0].elems[TRAIN_GRAD] < TRAIN_ALLREDUCE_VERIFY_ELEMS ? t[0].elems[TRAIN_GRAD]
                                                                              : TRAIN_ALLREDUCE_VERIFY_ELEMS;
        size_t es = gemm_elem_size(t[0].p->d);
        void *host = malloc(count * es);
        int e = host ? 0 : -ENOMEM;
        for (size_t r = 0; e == 0 && r < n; r++) {
                for (size_t i = 0; i < count; i++)
                        gemm_elem_store(t[r].p->d, host, i, (double)(r + 1) / 4);
                if ((e = ctx->ops->copy_h2d(t[r].d.ctx, t[r].buf[TRAIN_GRAD], 0, host, count * es)) == 0)
                        e = ctx->ops->synchronize(t[r].d.ctx);
        }
        if (e == 0)
                e = allreduce(coll, t, n, count);
        double want = (double)n * (double)(n + 1) / 8;
        for (size_t r = 0; r < n; r++) {
                bool ok = e == 0 && ctx->ops->copy_d2h(t[r].d.ctx, host, t[r].buf[TRAIN_GRAD], 0, count * es) == 0 &&
                          ctx->ops->synchronize(t[r].d.ctx) == 0;
                for (size_t i = 0; ok && i < count; i++) {
                        double got = gemm_elem_load(t[r].p->d, host, i);
                        if (got != want) {
                                snprintf(am[r]->verify_error, sizeof(am[r]->verify_error),
                                         "gradient element %zu after the all-reduce = %.9g, expected %.9g", i, got, want);
                                ok = false;
                        }
                }
                am[r]->verified = ok;
                if (!ok && !am[r]->verify_error[0])
                        snprintf(am[r]->verify_error, sizeof(am[r]->verify_error), "the all-reduce could not be checked: %s",
                                 e == -ENOMEM ? "out of memory" : coll_lib_error(coll));
        }
        free(host);
}

/* warmup + steps steps on every device at once (data parallel: each its own micro-batch,
 * then the gradients' all-reduce, after the backward, not overlapped with it). The step
 * measurement's samples are TFLOPS of the whole model's step; the parts' are ms. */
static void measure(const struct bench_ctx *ctx, struct bench_report *rep, struct train_dev *t, size_t n,
                    struct coll_lib *coll) {
        unsigned steps = bench_reps(ctx, TRAIN_DEFAULT_STEPS), warmup = bench_warmup(ctx, TRAIN_DEFAULT_WARMUP);
        const struct train_shape *s = t[0].shape;
        int e = 0;
        for (size_t d = 0; d < n && e == 0; d++) {
                if (!(t[d].tflops = calloc(steps, sizeof(double))))
                        e = -ENOMEM;
                for (int p = 0; p < _PART_COUNT; p++)
                        if (!(t[d].part_ms[p] = calloc(steps, sizeof(double))))
                                e = -ENOMEM;
                for (int i = 0; e == 0 && i <= _PART_COUNT; i++)
                        e = ctx->ops->event_create(t[d].d.ctx, &t[d].ev[i]);
                if (e < 0)
                        measurement_fail(t[d].m, STATUS_ERROR, "%s", e == -ENOMEM ? "out of memory" : bench_dev_error(ctx));
        }
        double model = train_model_flops(s);
        for (unsigned i = 0; e == 0 && i < warmup + steps; i++) {
                for (size_t d = 0; d < n && e == 0; d++)
                        e = enqueue_step(ctx, &t[d]);
                if (e == 0 && n > 1)
                        e = allreduce(coll, t, n, t[0].elems[TRAIN_GRAD]);
                for (size_t d = 0; d < n && e == 0; d++) {
                        double ms[_PART_COUNT];
                        if ((e = collect_step(ctx, &t[d], ms)) < 0 || i < warmup)
                                continue;
                        double whole_ms = train_whole_step_ms(s, ms[PART_FORWARD], ms[PART_BACKWARD], ms[PART_LOGITS]) +
                                          train_whole_allreduce_ms(s, ms[PART_ALLREDUCE]);
                        t[d].tflops[i - warmup] = whole_ms > 0 ? model / whole_ms / 1e9 : 0;
                        for (int p = 0; p < _PART_COUNT; p++)
                                t[d].part_ms[p][i - warmup] = ms[p];
                }
        }
        struct measurement *am[TRAIN_MAX_GPUS] = {NULL};
        for (size_t d = 0; d < n && e == 0; d++) {
                t[d].m = &rep->m[t[d].step_index]; /* the appends below may move the report */
                if (measurement_set_samples(t[d].m, t[d].tflops, steps, warmup) < 0) {
                        e = -ENOMEM;
                        break;
                }
                for (int p = 0; p < (n > 1 ? _PART_COUNT : PART_ALLREDUCE); p++) {
                        struct measurement *pm = bench_measurement_new(rep, "train", part_names[p], t[d].d.subject, "ms", false);
                        if (measurement_set_samples(pm, t[d].part_ms[p], steps, warmup) < 0)
                                measurement_fail(pm, STATUS_ERROR, "out of memory");
                        if (p == PART_ALLREDUCE) {
                                measurement_param(pm, "bytes", "%llu", (unsigned long long)(t[d].elems[TRAIN_GRAD] *
                                                                                           gemm_elem_size(t[d].p->d)));
                                measurement_param(pm, "overlap", "none: after the backward, on the same stream");
                                am[d] = pm;
                        }
                }
        }
        if (e == 0 && !rep->out_of_memory) {
                /* the report is complete: point at its entries again, then verify */
                for (size_t d = 0; d < n; d++) {
                        t[d].m = &rep->m[t[d].step_index];
                        verify(ctx, &t[d]);
                }
                if (n > 1) {
                        size_t k = 0;
                        for (size_t i = 0; i < rep->n && k < n; i++)
                                if (!strcmp(rep->m[i].name, "allreduce"))
                                        am[k++] = &rep->m[i];
                        verify_allreduce(ctx, coll, t, n, am);
                }
        }
}

/* Open device index, name its step measurement, plan its products and fill its buffers;
 * false when it cannot run (the step measurement says why). */
static bool setup_device(const struct bench_ctx *ctx, struct bench_report *rep, struct lt_library *lib, int index,
                         const struct gemm_prec *p, struct train_dev *t) {
        *t = (struct train_dev){.shape = ctx->opt->train_shape, .p = p, .cuda = ctx->ops == &dev_ops_cuda, .lib = lib};
        if (bench_dev_open(ctx, rep, "train", index, &t->d) < 0)
                return false;
        t->m = bench_measurement_new(rep, "train", "step", t->d.subject, "TFLOPS", true);
        t->step_index = rep->n - 1;
        measurement_param(t->m, "device", "%s", t->d.info.name);
        measurement_param(t->m, "precision", "%s", p->name);
        measurement_param(t->m, "types", "%s", t->cuda ? p->types : "A/B/D fp32 (OpenCL gemm_mnk_f32)");
        if (t->cuda) {
                char name[160];
                lt_library_describe(lib, name, sizeof(name));
                measurement_param(t->m, "cublaslt", "%s", name);
        } else {
                char shape[160];
                if (ctx->ops->kernel_shape(t->d.ctx, "gemm_mnk_f32", shape, sizeof(shape)) == 0)
                        measurement_param(t->m, "kernel", "%s", shape);
        }
        t->n_g = train_gemms(t->shape, t->g);
        /* FP8 runs "TN" only (cuBLASLt's FP8 kernels; docs/bench.md): same shapes, A transposed */
        for (size_t i = 0; !strcmp(p->name, "fp8") && i < t->n_g; i++)
                t->g[i].trans_a = true, t->g[i].trans_b = false;
        set_peak(t);
        int major = 0, minor = 0;
        if (t->cuda)
                (void)cuda_ctx_cc(t->d.ctx, &major, &minor);
        if (t->cuda && major * 10 + minor < p->min_cc) {
                measurement_fail(t->m, STATUS_SKIP, "%s: %s; this GPU is %d.%d", t->d.info.name, p->min_cc_why, major,
                                 minor);
                return false;
        }
        return (!t->cuda || plan_cuda(ctx, t)) && alloc_buffers(ctx, t);
}

/* Data parallel: NCCL's library and one communicator over the devices of this process.
 * False with every step measurement failed. */
static bool open_collectives(struct train_dev *t, size_t n, struct coll_lib **ret) {
        char err[512];
        int devices[TRAIN_MAX_GPUS];
        struct coll_comm *comms[TRAIN_MAX_GPUS] = {NULL};
        int e = coll_lib_open(ret, err, sizeof(err));
        if (e == 0) {
                for (size_t i = 0; i < n; i++)
                        devices[i] = t[i].d.index;
                if ((e = coll_init_all(*ret, devices, (int)n, comms)) < 0)
                        snprintf(err, sizeof(err), "%s", coll_lib_error(*ret));
        }
        for (size_t i = 0; i < n; i++) {
                t[i].comm = comms[i];
                if (e < 0)
                        measurement_fail(t[i].m, STATUS_ERROR, "%zu GPUs need NCCL's all-reduce: %s", n, err);
        }
        return e == 0;
}

static void train_dev_free(const struct bench_ctx *ctx, struct train_dev *t) {
        for (int i = 0; i <= _PART_COUNT; i++)
                if (t->ev[i])
                        ctx->ops->event_destroy(t->d.ctx, t->ev[i]);
        free(t->tflops);
        for (int p = 0; p < _PART_COUNT; p++)
                free(t->part_ms[p]);
        train_dev_close(ctx, t);
}

static void run_devices(const struct bench_ctx *ctx, struct bench_report *rep, struct lt_library *lib,
                        size_t n, const struct gemm_prec *p) {
        struct train_dev *t = calloc(n, sizeof(*t));
        struct coll_lib *coll = NULL;
        if (!t) {
                struct measurement *m = bench_measurement_new(rep, "train", "step", "node", "TFLOPS", true);
                measurement_fail(m, STATUS_ERROR, "out of memory");
                return;
        }
        bool ready = true;
        size_t opened = 0;
        for (; opened < n && ready; opened++)
                ready = setup_device(ctx, rep, lib, bench_dev_index(ctx, opened), p, &t[opened]);
        for (size_t i = 0; i < opened; i++)
                t[i].m = &rep->m[t[i].step_index]; /* the report may have moved */
        if (ready && n > 1)
                ready = open_collectives(t, n, &coll);
        if (ready)
                measure(ctx, rep, t, n, coll);
        for (size_t i = 0; i < opened; i++) {
                if (t[i].comm && coll_comm_destroy(t[i].comm) < 0)
                        coll_comm_abort(t[i].comm); /* teardown: nothing more to do */
                train_dev_free(ctx, &t[i]);
        }
        coll_lib_close(coll);
        free(t);
}

static void train_run(const struct bench_ctx *ctx, struct bench_report *rep) {
        size_t n;
        if (bench_dev_count(ctx, rep, "train", &n) < 0)
                return;
        const char *want = ctx->opt->precision ? ctx->opt->precision : bench_train_default_precision(ctx->ops->kind);
        const struct gemm_prec *p = gemm_prec_by_name(want);
        struct measurement *m = NULL;
        struct lt_library *lib = NULL;
        char err[512];
        int e;
        if (!p || !strcmp(want, "fp64")) {
                m = bench_measurement_new(rep, "train", "step", "node", "TFLOPS", true);
                measurement_fail(m, STATUS_ERROR, "no training precision \"%s\": bf16, fp16, fp32, tf32 or fp8", want);
        } else if (ctx->ops->kind == DEV_OPENCL && strcmp(want, "fp32") != 0) {
                m = bench_measurement_new(rep, "train", "step", "node", "TFLOPS", true);
                measurement_fail(m, STATUS_SKIP, "the OpenCL backend runs bench train in fp32 only, not %s", want);
        } else if (n > 1 && ctx->ops->kind != DEV_CUDA) {
                /* data parallelism needs the gradients' all-reduce: NCCL, CUDA's */
                m = bench_measurement_new(rep, "train", "step", "node", "TFLOPS", true);
                measurement_fail(m, STATUS_ERROR, "%zu devices: data-parallel steps need CUDA and NCCL; run one (-g 0)",
                                 n);
        } else if (n > TRAIN_MAX_GPUS) {
                m = bench_measurement_new(rep, "train", "step", "node", "TFLOPS", true);
                measurement_fail(m, STATUS_ERROR, "%zu GPUs: at most %d in one process", n, TRAIN_MAX_GPUS);
        } else if (ctx->ops->kind == DEV_CUDA && (e = lt_library_open(&lib, err, sizeof(err))) < 0) {
                m = bench_measurement_new(rep, "train", "step", "node", "TFLOPS", true);
                measurement_fail(m, e == -ENOENT ? STATUS_SKIP : STATUS_ERROR, "%s", err);
        } else {
                run_devices(ctx, rep, lib, n, p);
        }
        lt_library_close(lib);
}

const struct bench_info bench_train = {
        .name = "train",
        .title = "Training-step proxy: a transformer's GEMMs forward and backward (tokens/s, TFLOPS, MFU)",
        .remedy = "Training-step throughput below the reference: first bench gemm at the same precision (a GEMM "
                  "shortfall is a GPU or library problem: clocks, power limit, throttling, the cuBLAS version); "
                  "if gemm passes, the step's small products (attention per head, a small --micro-batch) are "
                  "launch-bound: compare with a larger --micro-batch.",
        .needs_device = true,
        .own_command = true,
        .default_timeout_s = 600,
        .run = train_run,
};

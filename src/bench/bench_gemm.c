/* bench gemm: matrix multiply throughput through cuBLASLt, per precision, over square sizes.
 *
 * D = A^T B ("TN": A stored K x M, B K x N, D M x N, column-major, the one layout every
 * precision accepts: FP8 kernels require it), alpha 1, beta 0, C = D. Precisions:
 *   fp64  A/B/D FP64, compute 64F               every GPU
 *   fp32  A/B/D FP32, compute 32F               every GPU
 *   tf32  A/B/D FP32, compute 32F_FAST_TF32     compute capability 8.0+
 *   fp16  A/B/D FP16, compute 32F               every GPU (Tensor Cores, FP32 accumulate)
 *   bf16  A/B/D BF16, compute 32F               8.0+
 *   fp8   A/B E4M3, D BF16, compute 32F         8.9+ (Ada, Hopper, Blackwell)
 * FLOPs = 2 M N K per multiply; the unit is TFLOPS.
 *
 * Algorithm choice: cublasLtMatmulAlgoGetHeuristic ranks algorithms by a model, not by
 * measurement, so its first answer is not always the fastest for a shape. We ask for the
 * top GEMM_TOP_K, time each (GEMM_CAND_WARMUP + GEMM_CAND_REPS runs, CUDA events through
 * dev_ops) and measure the fastest with the full warm-up and repetitions: "the best
 * cuBLASLt result for the shape" (docs/bench.md).
 *
 * Verification: the inputs are drawn from {±0.5, ±1, ±1.5, ±2}, exact in every input
 * type, so products are exact and FP32 sums of them are exact for every K used here; a
 * correct result differs from the host's exact reference only by the output rounding (and
 * FP8's reduced-precision accumulation on Hopper). Up to GEMM_FULL_VERIFY_N every element
 * is checked; above it, three whole columns (first, middle, last: every row, and the edge
 * tiles) and GEMM_VERIFY_SAMPLES scattered elements.
 *
 * Sizes: 1024, 2048, 4096 and 8192 (those that fit in 90% of device memory), or one size
 * from --size: the largest multiple of 16 whose n x n input matrix fits in that many
 * bytes. With several sizes each is reported as "<precision>_<n>" without a reference,
 * and the best of them again as "<precision>", judged against the baseline (achieved,
 * best shape) or the spec peak: that is how the public figures were taken too
 * (gpu-specs §5.4: the best size). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/bench_devutil.h"
#include "bench/cuda_raw.h"
#include "bench/gemm_ref.h"
#include "bench/matmul.h"

#define GEMM_TOP_K 8
#define GEMM_CAND_WARMUP 1
#define GEMM_CAND_REPS 3
#define GEMM_WORKSPACE_BYTES (32u << 20) /* what cuBLAS recommends for Hopper; enough for older GPUs */
#define GEMM_FULL_VERIFY_N 256
#define GEMM_VERIFY_SAMPLES 64
#define GEMM_CHUNK_BYTES (16u << 20)
#define GEMM_MEM_FRACTION 0.9
#define GEMM_MAX_SIZES 4

static const unsigned default_sizes[GEMM_MAX_SIZES] = {1024, 2048, 4096, 8192};

#define N_PRECS gemm_n_precs
#define precs gemm_precs /* the precisions, their types and tolerances: bench/gemm_ref.c */

static const struct gemm_seeds *const seeds = &gemm_seeds_default;

/* ---- per device ------------------------------------------------------------------------------- */

struct gemm_dev {
        struct bench_dev d;
        struct lt_library *lib;
        struct lt_device *lt;
        struct dev_buf *ws;
        size_t ws_bytes;
        int cc;
};

struct gemm_run {
        struct gemm_dev *g;
        const struct gemm_prec *p;
        unsigned n;
        struct dev_buf *a, *b, *dd;
        uint64_t pa, pb, pd, pw;
        struct lt_matmul *mm;
        unsigned algo;
        struct measurement *m; /* where a failed matmul is reported */
};

static int gemm_enqueue(const struct bench_ctx *ctx, struct bench_dev *d, void *arg) {
        (void)ctx;
        (void)d;
        struct gemm_run *r = arg;
        int e = lt_matmul_run(r->mm, r->algo, r->pa, r->pb, r->pd, r->pw);
        if (e < 0 && r->m && !r->m->summary[0])
                measurement_fail(r->m, e == -ENOTSUP ? STATUS_SKIP : STATUS_ERROR, "%s", lt_library_error(r->g->lib));
        return e;
}

/* Fill a device matrix of rows x cols (column-major, ld = rows) through a host chunk. */
static int upload(const struct bench_ctx *ctx, struct gemm_dev *g, struct dev_buf *buf, enum gemm_elem e,
                  unsigned rows, unsigned cols, bool is_a, struct measurement *m) {
        size_t es = gemm_elem_size(e), total = (size_t)rows * cols, chunk = GEMM_CHUNK_BYTES / es;
        void *host = malloc((chunk < total ? chunk : total) * es);
        if (!host) {
                measurement_fail(m, STATUS_ERROR, "out of memory (host staging buffer)");
                return -ENOMEM;
        }
        int r = 0;
        for (size_t start = 0; start < total && r == 0; start += chunk) {
                size_t cnt = total - start < chunk ? total - start : chunk;
                for (size_t i = 0; i < cnt; i++) {
                        size_t idx = start + i;
                        uint32_t inner = (uint32_t)(idx % rows), outer = (uint32_t)(idx / rows);
                        /* A: stored K x M, element (k, i) = A^T(i, k); B: (k, j) */
                        gemm_elem_store(e, host, i, is_a ? gemm_value_a(seeds, outer, inner) : gemm_value_b(seeds, inner, outer));
                }
                if ((r = ctx->ops->copy_h2d(g->d.ctx, buf, start * es, host, cnt * es)) < 0 ||
                    (r = ctx->ops->synchronize(g->d.ctx)) < 0)
                        measurement_fail(m, STATUS_ERROR, "uploading the inputs: %s", bench_dev_error(ctx));
        }
        free(host);
        return r;
}

/* Check D(i, j) for every i of column j against the exact reference. */
static bool verify_column(const struct gemm_run *r, const void *col, unsigned j, unsigned i0, unsigned i1,
                          struct measurement *m) {
        unsigned k_n = r->n;
        double *bcol = malloc(k_n * sizeof(double));
        if (!bcol) {
                snprintf(m->verify_error, sizeof(m->verify_error), "out of memory verifying");
                return false;
        }
        for (unsigned k = 0; k < k_n; k++)
                bcol[k] = gemm_value_b(seeds, k, j);
        bool ok = true;
        for (unsigned i = i0; i < i1 && ok; i++) {
                double mag;
                double want = gemm_ref_element(seeds, k_n, i, j, bcol, &mag);
                double got = gemm_elem_load(r->p->d, col, i - i0);
                double tol = gemm_ref_tolerance(r->p, want, mag);
                if (!(fabs(got - want) <= tol)) {
                        snprintf(m->verify_error, sizeof(m->verify_error),
                                 "D(%u,%u) = %.9g, expected %.9g (tolerance %.3g, n=%u)", i, j, got, want, tol, r->n);
                        ok = false;
                }
        }
        free(bcol);
        return ok;
}

static void verify(const struct bench_ctx *ctx, struct gemm_run *r, struct measurement *m) {
        unsigned n = r->n;
        size_t es = gemm_elem_size(r->p->d);
        void *col = malloc((size_t)n * es);
        if (!col) {
                snprintf(m->verify_error, sizeof(m->verify_error), "out of memory verifying");
                return;
        }
        unsigned cols[3] = {0, n / 2, n - 1};
        unsigned n_cols = n <= GEMM_FULL_VERIFY_N ? n : 3;
        bool ok = true;
        for (unsigned c = 0; c < n_cols && ok; c++) {
                unsigned j = n <= GEMM_FULL_VERIFY_N ? c : cols[c];
                if (ctx->ops->copy_d2h(r->g->d.ctx, col, r->dd, (size_t)j * n * es, (size_t)n * es) < 0 ||
                    ctx->ops->synchronize(r->g->d.ctx) < 0) {
                        measurement_fail(m, STATUS_ERROR, "reading the result back: %s", bench_dev_error(ctx));
                        free(col);
                        return;
                }
                ok = verify_column(r, col, j, 0, n, m);
        }
        /* Scattered elements elsewhere (a wrong tile in the middle of a large matrix). */
        uint32_t h = 0x9e3779b9u ^ n;
        for (unsigned s = 0; ok && n > GEMM_FULL_VERIFY_N && s < GEMM_VERIFY_SAMPLES; s++) {
                h = h * 1664525u + 1013904223u;
                unsigned i = (h >> 8) % n;
                h = h * 1664525u + 1013904223u;
                unsigned j = (h >> 8) % n;
                if (ctx->ops->copy_d2h(r->g->d.ctx, col, r->dd, ((size_t)j * n + i) * es, es) < 0 ||
                    ctx->ops->synchronize(r->g->d.ctx) < 0) {
                        measurement_fail(m, STATUS_ERROR, "reading the result back: %s", bench_dev_error(ctx));
                        free(col);
                        return;
                }
                ok = verify_column(r, col, j, i, i + 1, m);
        }
        free(col);
        m->verified = ok;
}

/* Median milliseconds of one candidate algorithm; negative errno on failure (message in
 * the measurement when it is a cuBLASLt or device error that ends the size). */
static int time_candidate(const struct bench_ctx *ctx, struct gemm_run *r, double *ret_ms, bool *ret_lt) {
        const struct dev_ops *ops = ctx->ops;
        struct dev_event *e0 = NULL, *e1 = NULL;
        double ms[GEMM_CAND_REPS];
        *ret_lt = false;
        int e = ops->event_create(r->g->d.ctx, &e0);
        if (e == 0)
                e = ops->event_create(r->g->d.ctx, &e1);
        for (unsigned i = 0; e == 0 && i < GEMM_CAND_WARMUP + GEMM_CAND_REPS; i++) {
                double t = 0;
                if ((e = ops->event_record(r->g->d.ctx, e0)) < 0)
                        break;
                if ((e = gemm_enqueue(ctx, &r->g->d, r)) < 0) {
                        *ret_lt = true;
                        break;
                }
                if ((e = ops->event_record(r->g->d.ctx, e1)) < 0 || (e = ops->synchronize(r->g->d.ctx)) < 0 ||
                    (e = ops->event_elapsed_ms(r->g->d.ctx, e0, e1, &t)) < 0)
                        break;
                if (i >= GEMM_CAND_WARMUP)
                        ms[i - GEMM_CAND_WARMUP] = t;
        }
        if (e0)
                ops->event_destroy(r->g->d.ctx, e0);
        if (e1)
                ops->event_destroy(r->g->d.ctx, e1);
        if (e < 0)
                return e;
        /* median of three */
        double a = ms[0], b = ms[1], c = ms[2];
        *ret_ms = a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
        return 0;
}

static void free_run(const struct bench_ctx *ctx, struct gemm_run *r) {
        lt_matmul_free(r->mm);
        ctx->ops->free(r->g->d.ctx, r->a);
        ctx->ops->free(r->g->d.ctx, r->b);
        ctx->ops->free(r->g->d.ctx, r->dd);
}

static unsigned size_from_bytes(uint64_t bytes, size_t es) {
        double n = floor(sqrt((double)bytes / (double)es));
        unsigned u = n > 65536 ? 65536 : (unsigned)n;
        u -= u % 16;
        return u < 16 ? 16 : u;
}

/* One precision at one size: measurement "<name>". Returns the index of the measurement
 * in rep when it has samples, else -1. */
static long run_size(const struct bench_ctx *ctx, struct bench_report *rep, struct gemm_dev *g,
                     const struct gemm_prec *p, unsigned n, const char *name) {
        const struct dev_ops *ops = ctx->ops;
        struct measurement *m = bench_measurement_new(rep, "gemm", name, g->d.subject, "TFLOPS", true);
        if (rep->out_of_memory)
                return -1; /* m is the report's sink, not an entry */
        long index = (long)(m - rep->m);
        measurement_param(m, "device", "%s", g->d.info.name);
        measurement_param(m, "n", "%u", n);
        measurement_param(m, "shape", "%ux%ux%u TN", n, n, n);
        measurement_param(m, "types", "%s", p->types);
        char lib[160];
        lt_library_describe(g->lib, lib, sizeof(lib));
        measurement_param(m, "cublaslt", "%s", lib);

        size_t ab = gemm_elem_size(p->ab), dsz = gemm_elem_size(p->d), nn = (size_t)n * n;
        double need = (double)nn * (2.0 * (double)ab + (double)dsz) + (double)g->ws_bytes;
        double have = (double)g->d.info.global_mem_bytes;
        if (need > GEMM_MEM_FRACTION * have) {
                measurement_fail(m, STATUS_SKIP, "n=%u needs %.0f MiB, more than %.0f%% of the device's %.0f MiB", n,
                                 need / 1048576, GEMM_MEM_FRACTION * 100, have / 1048576);
                return -1;
        }
        struct gemm_run r = {.g = g, .p = p, .n = n, .m = m};
        int e;
        if ((e = ops->alloc(g->d.ctx, nn * ab, &r.a)) < 0 || (e = ops->alloc(g->d.ctx, nn * ab, &r.b)) < 0 ||
            (e = ops->alloc(g->d.ctx, nn * dsz, &r.dd)) < 0) {
                measurement_fail(m, e == -ENOMEM ? STATUS_SKIP : STATUS_ERROR, "%s", bench_dev_error(ctx));
                free_run(ctx, &r);
                return -1;
        }
        (void)cuda_buf_ptr(r.a, &r.pa);
        (void)cuda_buf_ptr(r.b, &r.pb);
        (void)cuda_buf_ptr(r.dd, &r.pd);
        if (g->ws)
                (void)cuda_buf_ptr(g->ws, &r.pw);
        if (upload(ctx, g, r.a, p->ab, n, n, true, m) < 0 || upload(ctx, g, r.b, p->ab, n, n, false, m) < 0) {
                free_run(ctx, &r);
                return -1;
        }
        /* the stream's context current on this thread: cuBLASLt runs in the current one */
        void *stream;
        if ((e = cuda_ctx_stream(g->d.ctx, &stream)) < 0) {
                measurement_fail(m, STATUS_ERROR, "%s", bench_dev_error(ctx));
                free_run(ctx, &r);
                return -1;
        }
        if ((e = lt_matmul_plan(g->lt, &p->lt, n, g->ws_bytes, GEMM_TOP_K, 0, &r.mm)) < 0) {
                if (e == -ENODATA)
                        measurement_fail(m, STATUS_SKIP, "cublasLtMatmulAlgoGetHeuristic: no algorithm for %s at n=%u",
                                         p->name, n);
                else
                        measurement_fail(m, e == -ENOTSUP ? STATUS_SKIP : STATUS_ERROR, "%s", lt_library_error(g->lib));
                free_run(ctx, &r);
                return -1;
        }
        int count = (int)lt_matmul_algos(r.mm);

        /* Time every candidate, keep the fastest. A candidate the library refuses to run
         * (not supported, invalid for this shape) is passed over; any other failure ends
         * the size, since a failed matmul may leave the device in error. */
        int best = -1, tried = 0;
        double best_ms = 0;
        char refused[160] = "";
        for (int i = 0; i < count; i++) {
                if (!lt_matmul_usable(r.mm, (unsigned)i))
                        continue;
                r.algo = (unsigned)i;
                r.m = NULL; /* a refused candidate is not the measurement's failure */
                double ms = 0;
                bool from_lt = false;
                e = time_candidate(ctx, &r, &ms, &from_lt);
                tried++;
                if (from_lt && (e == -ENOTSUP || e == -EINVAL)) {
                        if (!refused[0])
                                snprintf(refused, sizeof(refused), "%.159s", lt_library_error(g->lib));
                        continue;
                }
                if (e < 0) {
                        measurement_fail(m, STATUS_ERROR, "%s", from_lt ? lt_library_error(g->lib) : bench_dev_error(ctx));
                        free_run(ctx, &r);
                        return -1;
                }
                if (best < 0 || ms < best_ms) {
                        best = i;
                        best_ms = ms;
                }
        }
        if (best < 0) {
                measurement_fail(m, STATUS_SKIP, "none of %d cuBLASLt algorithms ran %s at n=%u%s%s", count, p->name, n,
                                 refused[0] ? ": " : "", refused);
                free_run(ctx, &r);
                return -1;
        }
        measurement_param(m, "algo", "heuristic #%d of %d (%d timed)", best + 1, count, tried);

        r.algo = (unsigned)best;
        r.m = m;
        unsigned reps = bench_reps(ctx, 10), warmup = bench_warmup(ctx, 2);
        double *samples = calloc(reps, sizeof(double));
        double tflop = 2.0 * (double)n * n * n / 1e12;
        if (!samples) {
                measurement_fail(m, STATUS_ERROR, "out of memory");
        } else if (ops->memset(g->d.ctx, r.dd, 0xff, nn * dsz) < 0) {
                /* NaN everywhere first: a matmul that writes nothing cannot pass */
                measurement_fail(m, STATUS_ERROR, "%s", bench_dev_error(ctx));
        } else if (bench_time_reps(ctx, &g->d, m, warmup, reps, gemm_enqueue, &r, tflop, samples) == 0) {
                verify(ctx, &r, m);
        }
        free(samples);
        free_run(ctx, &r);
        return m->n_samples > 0 && !m->summary[0] ? index : -1;
}

/* The best of the sizes again as "<precision>", with the peak: the judged figure. */
static void add_headline(struct bench_report *rep, size_t best, const struct gemm_dev *g, const struct gemm_prec *p,
                         const unsigned *sizes, size_t n_sizes) {
        struct measurement *m = bench_measurement_new(rep, "gemm", p->name, g->d.subject, "TFLOPS", true);
        const struct measurement *src = &rep->m[best]; /* after the append: rep->m may have moved */
        measurement_param(m, "device", "%s", g->d.info.name);
        char list[64] = "";
        for (size_t i = 0; i < n_sizes; i++)
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%u", i ? "," : "", sizes[i]);
        measurement_param(m, "best_of_n", "%s", list);
        measurement_param(m, "types", "%s", p->types);
        char lib[160];
        lt_library_describe(g->lib, lib, sizeof(lib));
        measurement_param(m, "cublaslt", "%s", lib);
        if (measurement_set_samples(m, src->samples, src->n_samples, src->warmup) < 0) {
                measurement_fail(m, STATUS_ERROR, "out of memory");
                return;
        }
        m->verified = src->verified;
        memcpy(m->verify_error, src->verify_error, sizeof(m->verify_error));
}

static void set_peak(struct measurement *m, const struct gemm_dev *g, const struct gemm_prec *p) {
        const struct gpu_model *model = g->d.model;
        if (!model)
                return;
        const char *col;
        double tf = gemm_prec_peak_tflops(model, p, &col);
        if (tf > 0) {
                m->peak = tf;
                snprintf(m->peak_source, sizeof(m->peak_source), "%s spec sheet, dense %s (data/gpus.json)",
                         model->name, col);
        }
}

/* Test-only (docs/bench.md), in the test build (gpuvet-test-hooks) alone:
 * GPUVET_BENCH_TEST_GEMM_SIZES=32,48,64 replaces the default sweep, so the sweep-and-headline
 * path runs on the fake library at sizes its host loops finish in milliseconds. Returns how
 * many sizes it gave (0: unset, malformed, or the released gpuvet). */
static size_t test_sizes(unsigned *sizes) {
#ifdef GPUVET_TEST_HOOKS
        const char *s = getenv("GPUVET_BENCH_TEST_GEMM_SIZES");
#else
        const char *s = NULL;
#endif
        size_t n = 0;
        while (s && *s && n < GEMM_MAX_SIZES) {
                char *end;
                unsigned long v = strtoul(s, &end, 10);
                if (end == s || v < 16 || v > 65536 || v % 16)
                        return 0;
                sizes[n++] = (unsigned)v;
                s = *end == ',' ? end + 1 : end;
        }
        return s && !*s ? n : 0;
}

static void run_precision(const struct bench_ctx *ctx, struct bench_report *rep, struct gemm_dev *g,
                          const struct gemm_prec *p) {
        if (g->cc < p->min_cc) {
                struct measurement *m = bench_measurement_new(rep, "gemm", p->name, g->d.subject, "TFLOPS", true);
                measurement_param(m, "device", "%s", g->d.info.name);
                measurement_fail(m, STATUS_SKIP, "%s: %s; this GPU is %d.%d", g->d.info.name, p->min_cc_why,
                                 g->cc / 10, g->cc % 10);
                return;
        }
        unsigned sizes[GEMM_MAX_SIZES];
        size_t n_sizes = 0;
        if (ctx->opt && ctx->opt->size_bytes)
                sizes[n_sizes++] = size_from_bytes(ctx->opt->size_bytes, gemm_elem_size(p->ab));
        else if (!(n_sizes = test_sizes(sizes)))
                for (size_t i = 0; i < GEMM_MAX_SIZES; i++)
                        sizes[n_sizes++] = default_sizes[i];
        if (n_sizes == 1) {
                long i = run_size(ctx, rep, g, p, sizes[0], p->name);
                if (i >= 0)
                        set_peak(&rep->m[i], g, p);
                return;
        }
        long best = -1;
        double best_median = 0;
        unsigned ran[GEMM_MAX_SIZES];
        size_t n_ran = 0;
        for (size_t s = 0; s < n_sizes; s++) {
                char name[32];
                snprintf(name, sizeof(name), "%s_%u", p->name, sizes[s]);
                long i = run_size(ctx, rep, g, p, sizes[s], name);
                if (i < 0)
                        continue;
                ran[n_ran++] = sizes[s];
                struct bench_stats st;
                if (bench_stats_compute(rep->m[i].samples, rep->m[i].n_samples, &st) == 0 &&
                    (best < 0 || st.median > best_median)) {
                        best = i;
                        best_median = st.median;
                }
        }
        if (best >= 0) {
                add_headline(rep, (size_t)best, g, p, ran, n_ran);
                set_peak(&rep->m[rep->n - 1], g, p);
        }
}

static bool gemm_open_dev(const struct bench_ctx *ctx, struct bench_report *rep, struct lt_library *lib, int index,
                          struct gemm_dev *g) {
        memset(g, 0, sizeof(*g));
        g->lib = lib;
        if (bench_dev_open(ctx, rep, "gemm", index, &g->d) < 0)
                return false;
        int major = 0, minor = 0;
        (void)cuda_ctx_cc(g->d.ctx, &major, &minor);
        g->cc = major * 10 + minor;
        struct measurement *m = NULL;
        void *stream;
        int e = cuda_ctx_stream(g->d.ctx, &stream);
        if (e < 0) {
                m = bench_measurement_new(rep, "gemm", "cublaslt", g->d.subject, "", true);
                measurement_fail(m, STATUS_ERROR, "%s", bench_dev_error(ctx));
                return false;
        }
        if (lt_device_open(lib, stream, &g->lt) < 0) {
                char name[160];
                lt_library_describe(lib, name, sizeof(name));
                m = bench_measurement_new(rep, "gemm", "cublaslt", g->d.subject, "", true);
                measurement_fail(m, STATUS_ERROR, "%s (%s)", lt_library_error(lib), name);
                return false;
        }
        /* The workspace lets cuBLASLt pick split-K and other fast kernels; without one it
         * still runs, with fewer algorithms. */
        g->ws_bytes = GEMM_WORKSPACE_BYTES;
        if (ctx->ops->alloc(g->d.ctx, g->ws_bytes, &g->ws) < 0) {
                g->ws = NULL;
                g->ws_bytes = 0;
        }
        return true;
}

static void gemm_close_dev(const struct bench_ctx *ctx, struct gemm_dev *g) {
        if (g->d.ctx) {
                ctx->ops->free(g->d.ctx, g->ws);
                void *stream;
                lt_device_close(g->lt, cuda_ctx_stream(g->d.ctx, &stream) == 0);
        }
        bench_dev_close(ctx, &g->d);
}

static void gemm_run(const struct bench_ctx *ctx, struct bench_report *rep) {
        size_t n;
        if (bench_dev_count(ctx, rep, "gemm", &n) < 0)
                return;
        const char *want = ctx->opt ? ctx->opt->precision : NULL;
        bool known = !want;
        for (size_t p = 0; p < N_PRECS; p++)
                known |= want && !strcmp(want, precs[p].name);
        if (!known) {
                struct measurement *m = bench_measurement_new(rep, "gemm", "setup", "node", "TFLOPS", true);
                measurement_fail(m, STATUS_ERROR, "unknown precision '%s' for gemm: fp64, fp32, tf32, fp16, bf16 or fp8",
                                 want);
                return;
        }
        if (ctx->ops != &dev_ops_cuda) {
                struct measurement *m = bench_measurement_new(rep, "gemm", "backend", "node", "TFLOPS", true);
                measurement_fail(m, STATUS_SKIP, "GEMM needs CUDA (cuBLASLt); the %s backend has none",
                                 ctx->ops->name);
                return;
        }
        struct lt_library *lib = NULL;
        char err[512];
        int e = lt_library_open(&lib, err, sizeof(err));
        if (e < 0) {
                struct measurement *m = bench_measurement_new(rep, "gemm", "cublaslt", "node", "TFLOPS", true);
                measurement_fail(m, e == -ENOENT ? STATUS_SKIP : STATUS_ERROR, "%s", err);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                struct gemm_dev g;
                if (gemm_open_dev(ctx, rep, lib, bench_dev_index(ctx, i), &g))
                        for (size_t p = 0; p < N_PRECS; p++)
                                if (!want || !strcmp(want, precs[p].name))
                                        run_precision(ctx, rep, &g, &precs[p]);
                gemm_close_dev(ctx, &g);
        }
        lt_library_close(lib);
}

const struct bench_info bench_gemm = {
        .name = "gemm",
        .title = "Matrix multiply TFLOPS through cuBLASLt (FP64, FP32, TF32, FP16, BF16, FP8)",
        .remedy = "Matrix-multiply TFLOPS below the reference: look at clocks, the power limit and throttling "
                  "(gpu.clock_events, gpu.power_limit), the temperature and other processes; then the cuBLAS "
                  "version (an older cuBLAS may lack tuned kernels for this architecture: use the one of the "
                  "toolkit matching the driver).",
        .needs_device = true,
        .default_timeout_s = 900,
        .run = gemm_run,
};

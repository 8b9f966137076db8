/* The GEMM load (gemm_load.h; docs/burn.md, "gemm").
 *
 * Layouts. D is n x n column-major on every backend (so digests compare across backends
 * too). B is stored K x N column-major. A^T is stored as each backend's kernel wants it:
 * cuBLASLt's "TN" product (bench gemm's: the one layout FP8 accepts) reads A as K x M
 * column-major, i.e. A^T row-major; the OpenCL kernels read A^T column-major, so a vector
 * of A^T's column k is contiguous (kernels/gpuvet.cl).
 *
 * The check. The sample is every element when n <= GEMM_LOAD_FULL_N, else
 * GEMM_LOAD_SAMPLES elements: the four corners, then positions from a fixed
 * pseudo-random sequence; its reference is computed once at open (it never changes: the
 * inputs are fixed), so a verification costs a copy of D, one pass comparing it with the
 * first result (memcmp, element by element only where it differs) and one computing the
 * digest. Tolerance: for every precision but fp8 the exact sum rounded to D's type, bit
 * for bit (the sums are exact, bench/gemm_ref.h; a correct GPU rounds them once, to
 * nearest even); fp8: bench gemm's tolerance (Hopper's FP8 Tensor Cores keep about 14 bits
 * of the running sum). */
#include "burn/gemm_load.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cuda_raw.h"
#include "bench/gemm_ref.h"
#include "bench/matmul.h"
#include "core/array.h"
#include "core/name_table.h"

#define GEMM_LOAD_FULL_N 256
#define GEMM_LOAD_SAMPLES 1024
#define GEMM_LOAD_TOP_K 8
#define GEMM_LOAD_WORKSPACE_BYTES (32u << 20) /* as bench gemm: what cuBLAS recommends for Hopper */
#define GEMM_LOAD_CHUNK_BYTES (16u << 20)
#define GEMM_LOAD_MEM_FRACTION 0.25
#define GEMM_IB 4 /* kernels/gpuvet.cl: row tiles per band */

/* Indexed by enum burn_precision; the names are bench/gemm_ref.c's. */
static const char *const precision_names[_BURN_PRECISION_COUNT] = {
        [BURN_FP64] = "fp64", [BURN_FP32] = "fp32", [BURN_TF32] = "tf32",
        [BURN_BF16] = "bf16", [BURN_FP16] = "fp16", [BURN_FP8] = "fp8",
};

const char *burn_precision_name(enum burn_precision p) {
        return name_table_name(precision_names, _BURN_PRECISION_COUNT, (int)p);
}

enum burn_precision burn_precision_parse(const char *s) {
        int p = name_table_value(precision_names, _BURN_PRECISION_COUNT, s);
        return p < 0 ? _BURN_PRECISION_INVALID : (enum burn_precision)p;
}

struct gemm_load {
        const struct dev_ops *ops;
        struct dev_backend *b;
        struct dev_ctx *ctx;
        const struct gemm_prec *p;
        struct gemm_seeds seeds;
        unsigned n;
        bool cuda;

        /* cuBLASLt */
        struct lt_library *lib;
        struct lt_device *lt;
        struct lt_matmul *mm;
        unsigned algo;
        struct dev_buf *ws;
        uint64_t ws_bytes;
        uint64_t pa, pb, pd, pw;

        /* OpenCL */
        const char *kernel;

        struct dev_buf *a, *bm, *d;
        size_t d_bytes;
        struct dev_event *ev0, *ev1;
        bool pending;

        void *host_d;   /* D copied back */
        bool host_pinned;
        void *first;    /* the first verified D */
        bool have_first;

        size_t n_sample;
        uint32_t *sample_row, *sample_col;
        double *sample_want, *sample_tol;

        uint64_t fingerprint;
        char desc[320];
        char err[1024];
};

static void set_err(struct gemm_load *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(struct gemm_load *g, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(g->err, sizeof(g->err), fmt, ap);
        va_end(ap);
}

/* The failed call's message: the backend's or cuBLASLt's, after what we were doing. */
static int dev_fail(struct gemm_load *g, int e, const char *doing) {
        set_err(g, "%s: %s", doing, g->ops->last_error(g->b));
        return e < 0 ? e : -EIO;
}
static int lt_fail(struct gemm_load *g, int e, const char *doing) {
        set_err(g, "%s: %s", doing, lt_library_error(g->lib));
        return e < 0 ? e : -EIO;
}

/* ---- the digest --------------------------------------------------------------------------- */

/* 64-bit FNV-1a over 8-byte words (D's size is a multiple of 8: n is a multiple of 16),
 * then a final mix (splitmix64's), so that one flipped bit anywhere changes about half
 * of the digest's bits. */
static uint64_t digest_of(const void *p, size_t bytes) {
        uint64_t h = 0xcbf29ce484222325ull;
        const unsigned char *c = p;
        for (size_t i = 0; i + 8 <= bytes; i += 8) {
                uint64_t w;
                memcpy(&w, c + i, sizeof(w));
                h = (h ^ w) * 0x100000001b3ull;
        }
        h ^= (uint64_t)bytes;
        h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
        h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
        h ^= h >> 31;
        return h ? h : 1;
}

/* ---- the inputs and the sample --------------------------------------------------------------- */

/* Fill a device matrix through a host chunk. is_a: A^T, stored for the backend (top of the
 * file); else B (k + j n). */
static int upload(struct gemm_load *g, struct dev_buf *buf, bool is_a) {
        enum gemm_elem e = g->p->ab;
        size_t es = gemm_elem_size(e), n = g->n, total = n * n, chunk = GEMM_LOAD_CHUNK_BYTES / es;
        void *host = malloc((chunk < total ? chunk : total) * es);
        if (!host) {
                set_err(g, "out of host memory (staging the inputs)");
                return -ENOMEM;
        }
        int r = 0;
        for (size_t start = 0; start < total && r == 0; start += chunk) {
                size_t cnt = total - start < chunk ? total - start : chunk;
                for (size_t x = 0; x < cnt; x++) {
                        uint32_t inner = (uint32_t)((start + x) % n), outer = (uint32_t)((start + x) / n);
                        double v;
                        if (!is_a)
                                v = gemm_value_b(&g->seeds, inner, outer); /* B(k = inner, j = outer) */
                        else if (g->cuda)
                                v = gemm_value_a(&g->seeds, outer, inner); /* A^T(i = outer, k = inner) */
                        else
                                v = gemm_value_a(&g->seeds, inner, outer); /* A^T(i = inner, k = outer) */
                        gemm_elem_store(e, host, x, v);
                }
                if ((r = g->ops->copy_h2d(g->ctx, buf, start * es, host, cnt * es)) < 0 ||
                    (r = g->ops->synchronize(g->ctx)) < 0)
                        r = dev_fail(g, r, "uploading the inputs");
        }
        free(host);
        return r;
}

/* The expected value of D(i, j) (the exact sum, rounded to D's type except for fp8) and its
 * tolerance (0 except for fp8): the top of the file says why. */
static void expected(const struct gemm_load *g, uint32_t i, uint32_t j, const double *bcol, double *want,
                     double *tol) {
        double mag, exact = gemm_ref_element(&g->seeds, g->n, i, j, bcol, &mag);
        if (g->p->ab == GEMM_ELEM_E4M3) {
                *want = exact;
                *tol = gemm_ref_tolerance(g->p, exact, mag);
                return;
        }
        unsigned char cell[8];
        gemm_elem_store(g->p->d, cell, 0, exact);
        *want = gemm_elem_load(g->p->d, cell, 0);
        *tol = 0;
}

static int make_sample(struct gemm_load *g) {
        size_t n = g->n, count = n <= GEMM_LOAD_FULL_N ? n * n : GEMM_LOAD_SAMPLES;
        g->sample_row = calloc(count, sizeof(*g->sample_row));
        g->sample_col = calloc(count, sizeof(*g->sample_col));
        g->sample_want = calloc(count, sizeof(*g->sample_want));
        g->sample_tol = calloc(count, sizeof(*g->sample_tol));
        double *bcol = calloc(n, sizeof(*bcol));
        if (!g->sample_row || !g->sample_col || !g->sample_want || !g->sample_tol || !bcol) {
                free(bcol);
                set_err(g, "out of host memory (the sample)");
                return -ENOMEM;
        }
        if (n <= GEMM_LOAD_FULL_N) {
                for (uint32_t j = 0; j < n; j++) {
                        for (uint32_t k = 0; k < n; k++)
                                bcol[k] = gemm_value_b(&g->seeds, k, j);
                        for (uint32_t i = 0; i < n; i++) {
                                size_t s = i + (size_t)j * n;
                                g->sample_row[s] = i;
                                g->sample_col[s] = j;
                                expected(g, i, j, bcol, &g->sample_want[s], &g->sample_tol[s]);
                        }
                }
        } else {
                uint32_t last = (uint32_t)n - 1, h = 0x9e3779b9u ^ (uint32_t)n;
                const uint32_t corners[4][2] = {{0, 0}, {last, 0}, {0, last}, {last, last}};
                for (size_t s = 0; s < count; s++) {
                        if (s < 4) {
                                g->sample_row[s] = corners[s][0];
                                g->sample_col[s] = corners[s][1];
                        } else {
                                h = h * 1664525u + 1013904223u;
                                g->sample_row[s] = (h >> 8) % (uint32_t)n;
                                h = h * 1664525u + 1013904223u;
                                g->sample_col[s] = (h >> 8) % (uint32_t)n;
                        }
                        expected(g, g->sample_row[s], g->sample_col[s], NULL, &g->sample_want[s], &g->sample_tol[s]);
                }
        }
        free(bcol);
        g->n_sample = count;
        return 0;
}

/* ---- open ----------------------------------------------------------------------------------- */

static unsigned default_n(const struct dev_info *info, bool cuda) {
        return cuda ? 8192 : info->is_cpu ? 1024 : 4096;
}

/* Whether A, B and D of size n fit: a quarter of the device's memory (the burn's other
 * loads and the other processes keep the rest), each within the largest allocation. */
static bool fits(const struct gemm_load *g, const struct dev_info *info, unsigned n) {
        double nn = (double)n * n, ab = (double)gemm_elem_size(g->p->ab), d = (double)gemm_elem_size(g->p->d);
        double need = nn * (2 * ab + d) + (g->cuda ? GEMM_LOAD_WORKSPACE_BYTES : 0);
        if (info->global_mem_bytes && need > GEMM_LOAD_MEM_FRACTION * (double)info->global_mem_bytes)
                return false;
        return !info->max_alloc_bytes || nn * (ab > d ? ab : d) <= (double)info->max_alloc_bytes;
}

/* Which precision this backend and device run, or -ENOTSUP with the reason. */
static int choose_path(struct gemm_load *g, const struct dev_info *info, enum burn_precision prec, char *err,
                       size_t errsize) {
        if (g->ops == &dev_ops_cuda) {
                g->cuda = true;
                int major = 0, minor = 0;
                (void)cuda_ctx_cc(g->ctx, &major, &minor);
                int cc = major * 10 + minor;
                if (cc < g->p->min_cc) {
                        snprintf(err, errsize, "%s: %s; this GPU is %d.%d", g->p->name, g->p->min_cc_why, major, minor);
                        return -ENOTSUP;
                }
                return 0;
        }
        if (prec == BURN_FP32) {
                g->kernel = "gemm_f32";
                return 0;
        }
        if (prec == BURN_FP64) {
                if (!info->fp64) {
                        snprintf(err, errsize, "fp64: %s has no double precision (cl_khr_fp64)", info->name);
                        return -ENOTSUP;
                }
                g->kernel = "gemm_f64";
                return 0;
        }
        snprintf(err, errsize, "%s: the %s backend's GEMM kernels are fp32 and fp64; %s needs CUDA (cuBLASLt)",
                 g->p->name, g->ops->name, g->p->name);
        return -ENOTSUP;
}

/* cuBLASLt: the handle on the context's stream, the workspace, the plan and its algorithm:
 * the heuristic's first usable one among those that do not split K (LT_PLAN_NO_SPLIT_K).
 * Not the fastest by measurement, as bench gemm picks: the heuristic is a model, the same
 * answer on every GPU of a model with the same library, so every such GPU runs the same
 * algorithm and the FP8 results, whose bits depend on the order of the sum, compare too. */
static int open_cublaslt(struct gemm_load *g, char *err, size_t errsize) {
        int e = lt_library_open(&g->lib, err, errsize);
        if (e < 0)
                return e;
        void *stream;
        if ((e = cuda_ctx_stream(g->ctx, &stream)) < 0)
                return dev_fail(g, e, "the CUDA stream");
        if ((e = lt_device_open(g->lib, stream, &g->lt)) < 0)
                return lt_fail(g, e, "cuBLASLt handle");
        g->ws_bytes = GEMM_LOAD_WORKSPACE_BYTES;
        if (g->ops->alloc(g->ctx, g->ws_bytes, &g->ws) < 0) { /* fewer algorithms, still runs */
                g->ws = NULL;
                g->ws_bytes = 0;
        }
        (void)cuda_buf_ptr(g->a, &g->pa);
        (void)cuda_buf_ptr(g->bm, &g->pb);
        (void)cuda_buf_ptr(g->d, &g->pd);
        if (g->ws)
                (void)cuda_buf_ptr(g->ws, &g->pw);
        e = lt_matmul_plan(g->lt, &g->p->lt, g->n, g->ws_bytes, GEMM_LOAD_TOP_K, LT_PLAN_NO_SPLIT_K, &g->mm);
        if (e == -ENODATA) {
                set_err(g, "cublasLtMatmulAlgoGetHeuristic: no algorithm without split-K for %s at n=%u", g->p->name,
                        g->n);
                return e;
        }
        if (e < 0)
                return lt_fail(g, e, "planning the product");
        unsigned count = lt_matmul_algos(g->mm);
        for (g->algo = 0; g->algo < count && !lt_matmul_usable(g->mm, g->algo); g->algo++)
                ;
        if (g->algo == count) {
                set_err(g, "cublasLtMatmulAlgoGetHeuristic: none of %u algorithms for %s at n=%u fits a %llu-byte "
                        "workspace", count, g->p->name, g->n, (unsigned long long)g->ws_bytes);
                return -ENODATA;
        }
        char lib[160];
        lt_library_describe(g->lib, lib, sizeof(lib));
        snprintf(g->desc, sizeof(g->desc), "cuBLASLt %s, %s: %s, n=%u, algorithm %u of %u (reduction scheme NONE)",
                 lib, g->p->name, g->p->types, g->n, g->algo + 1, count);
        g->fingerprint = lt_matmul_algo_digest(g->mm, g->algo);
        return 0;
}

static int open_kernel(struct gemm_load *g) {
        char shape[256] = "";
        int e = g->ops->kernel_shape(g->ctx, g->kernel, shape, sizeof(shape));
        if (e < 0)
                return dev_fail(g, e, "the kernel's shape");
        snprintf(g->desc, sizeof(g->desc), "%s %s, n=%u, %s", g->ops->name, g->kernel, g->n, shape);
        return 0;
}

static int product(struct gemm_load *g);

static uint64_t mix(uint64_t h, uint64_t v) {
        h = (h ^ v) * 0x100000001b3ull;
        return h ^ (h >> 29);
}

static int open_load(struct gemm_load *g, const struct dev_info *info, const struct gemm_load_options *o, char *err,
                     size_t errsize) {
        int e = choose_path(g, info, o->precision, err, errsize);
        if (e < 0)
                return e;
        if (o->n) {
                if (o->n < 16 || o->n > 65536 || o->n % 16) {
                        snprintf(err, errsize, "n=%u: a multiple of 16 from 16 to 65536", o->n);
                        return -EINVAL;
                }
                g->n = o->n;
                if (!fits(g, info, g->n)) {
                        snprintf(err, errsize, "n=%u: A, B and D need more than %.0f%% of %s's %llu MiB", g->n,
                                 GEMM_LOAD_MEM_FRACTION * 100, info->name,
                                 (unsigned long long)(info->global_mem_bytes >> 20));
                        return -ENOMEM;
                }
        } else {
                for (g->n = default_n(info, g->cuda); g->n > 256 && !fits(g, info, g->n); g->n /= 2)
                        ;
        }
        size_t nn = (size_t)g->n * g->n, ab = nn * gemm_elem_size(g->p->ab);
        g->d_bytes = nn * gemm_elem_size(g->p->d);
        if ((e = g->ops->alloc(g->ctx, ab, &g->a)) < 0 || (e = g->ops->alloc(g->ctx, ab, &g->bm)) < 0 ||
            (e = g->ops->alloc(g->ctx, g->d_bytes, &g->d)) < 0)
                return dev_fail(g, e, "allocating A, B and D");
        if ((e = upload(g, g->a, true)) < 0 || (e = upload(g, g->bm, false)) < 0)
                return e;
        /* NaN everywhere first: a product that writes nothing cannot pass */
        if ((e = g->ops->memset(g->ctx, g->d, 0xff, g->d_bytes)) < 0)
                return dev_fail(g, e, "clearing D");
        if ((e = g->ops->event_create(g->ctx, &g->ev0)) < 0 || (e = g->ops->event_create(g->ctx, &g->ev1)) < 0)
                return dev_fail(g, e, "creating events");
        if ((e = g->cuda ? open_cublaslt(g, err, errsize) : open_kernel(g)) < 0)
                return e;
        /* One product, waited for: the first launch builds the OpenCL program (PoCL compiles
         * it) and loads cuBLASLt's kernels, which the first timed product must not hold. */
        if ((e = product(g)) < 0)
                return e;
        if ((e = g->ops->synchronize(g->ctx)) < 0)
                return dev_fail(g, e, "the first product");
        if (g->ops->host_alloc(g->ctx, g->d_bytes, true, &g->host_d) == 0) {
                g->host_pinned = true;
        } else if ((e = g->ops->host_alloc(g->ctx, g->d_bytes, false, &g->host_d)) < 0) {
                g->host_d = NULL;
                return dev_fail(g, e, "host memory for D");
        }
        if (!(g->first = malloc(g->d_bytes))) {
                set_err(g, "out of host memory (the first result)");
                return -ENOMEM;
        }
        if ((e = make_sample(g)) < 0)
                return e;
        uint64_t h = mix(0xcbf29ce484222325ull, g->cuda);
        h = mix(h, (uint64_t)(g->p - gemm_precs));
        h = mix(h, g->n);
        h = mix(h, ((uint64_t)g->seeds.a << 32) | g->seeds.b);
        h = mix(h, g->fingerprint); /* cuBLASLt: the algorithm; OpenCL: 0, its kernel sums in k order */
        for (const char *c = g->cuda ? "" : g->desc; *c; c++)
                h = mix(h, (unsigned char)*c);
        g->fingerprint = h ? h : 1;
        return 0;
}

int gemm_load_open(const struct dev_ops *ops, struct dev_backend *b, struct dev_ctx *ctx, const struct dev_info *info,
                   const struct gemm_load_options *o, struct gemm_load **ret, char *err, size_t errsize) {
        *ret = NULL;
        err[0] = '\0';
        const struct gemm_prec *p = gemm_prec_by_name(burn_precision_name(o->precision));
        if (!p) {
                snprintf(err, errsize, "precision %d: not one of fp64, fp32, tf32, bf16, fp16, fp8", (int)o->precision);
                return -EINVAL;
        }
        struct gemm_load *g = calloc(1, sizeof(*g));
        if (!g) {
                snprintf(err, errsize, "out of host memory");
                return -ENOMEM;
        }
        *g = (struct gemm_load){.ops = ops, .b = b, .ctx = ctx, .p = p, .seeds = gemm_seeds_from(o->seed)};
        int e = open_load(g, info, o, err, errsize);
        if (e < 0) {
                if (!err[0])
                        snprintf(err, errsize, "%s", g->err);
                gemm_load_close(g);
                return e;
        }
        *ret = g;
        return 0;
}

/* ---- running -------------------------------------------------------------------------------- */

const char *gemm_load_describe(const struct gemm_load *g) { return g->desc; }
uint64_t gemm_load_fingerprint(const struct gemm_load *g) { return g->fingerprint; }
double gemm_load_flops(const struct gemm_load *g) { return 2.0 * g->n * (double)g->n * g->n; }
unsigned gemm_load_n(const struct gemm_load *g) { return g->n; }
const char *gemm_load_error(const struct gemm_load *g) { return g->err; }

static int product(struct gemm_load *g) {
        if (g->cuda) {
                int e = lt_matmul_run(g->mm, g->algo, g->pa, g->pb, g->pd, g->pw);
                return e < 0 ? lt_fail(g, e, "the product") : 0;
        }
        /* one work item per tile: kernels/gpuvet.cl (16 or 8 rows x 6 columns) */
        unsigned mr = g->p->d == GEMM_ELEM_F64 ? 8 : 16;
        size_t tiles = (size_t)((g->n / mr + GEMM_IB - 1) / GEMM_IB * GEMM_IB) * ((g->n + 5) / 6);
        struct dev_arg args[] = {
                {.kind = DEV_ARG_BUF, .v.buf = g->d},
                {.kind = DEV_ARG_BUF, .v.buf = g->a},
                {.kind = DEV_ARG_BUF, .v.buf = g->bm},
                {.kind = DEV_ARG_U32, .v.u32 = g->n},
        };
        int e = g->ops->launch(g->ctx, g->kernel, tiles, 0, args, ARRAY_COUNT(args));
        return e < 0 ? dev_fail(g, e, "the product") : 0;
}

int gemm_load_enqueue(struct gemm_load *g, unsigned products) {
        if (!products) {
                set_err(g, "gemm_load_enqueue: 0 products");
                return -EINVAL;
        }
        if (g->pending) {
                set_err(g, "gemm_load_enqueue: the previous products were not waited for");
                return -EBUSY;
        }
        int e;
        void *stream;
        /* cuBLASLt runs in the calling thread's current context: make it the stream's */
        if (g->cuda && (e = cuda_ctx_stream(g->ctx, &stream)) < 0)
                return dev_fail(g, e, "the CUDA stream");
        if ((e = g->ops->event_record(g->ctx, g->ev0)) < 0)
                return dev_fail(g, e, "recording the start event");
        for (unsigned i = 0; i < products; i++)
                if ((e = product(g)) < 0)
                        return e;
        if ((e = g->ops->event_record(g->ctx, g->ev1)) < 0)
                return dev_fail(g, e, "recording the end event");
        g->pending = true;
        return 0;
}

int gemm_load_wait(struct gemm_load *g, double *device_ms) {
        if (device_ms)
                *device_ms = 0;
        if (!g->pending) {
                set_err(g, "gemm_load_wait: nothing enqueued");
                return -EINVAL;
        }
        g->pending = false;
        int e = g->ops->synchronize(g->ctx);
        if (e < 0)
                return dev_fail(g, e, "waiting for the products");
        double ms = 0;
        if ((e = g->ops->event_elapsed_ms(g->ctx, g->ev0, g->ev1, &ms)) < 0)
                return dev_fail(g, e, "timing the products");
        if (device_ms)
                *device_ms = ms;
        return 0;
}

static void note_fault(struct gemm_check *c, bool *have, uint32_t row, uint32_t col, double want, double got) {
        if (*have)
                return;
        *have = true;
        c->fault.row = row;
        c->fault.col = col;
        c->fault.expected = want;
        c->fault.got = got;
}

/* Count the elements of D that differ bit for bit from the first result's. */
static void compare_first(const struct gemm_load *g, struct gemm_check *c, bool *have) {
        size_t es = gemm_elem_size(g->p->d), col_bytes = es * g->n;
        const unsigned char *cur = g->host_d, *first = g->first;
        c->elements_compared = (uint64_t)g->n * g->n;
        for (uint32_t j = 0; j < g->n; j++) {
                size_t off = j * col_bytes;
                if (!memcmp(cur + off, first + off, col_bytes))
                        continue;
                for (uint32_t i = 0; i < g->n; i++) {
                        if (!memcmp(cur + off + i * es, first + off + i * es, es))
                                continue;
                        c->faulty_vs_first++;
                        if (!*have) {
                                double want, tol;
                                expected(g, i, j, NULL, &want, &tol);
                                note_fault(c, have, i, j, want, gemm_elem_load(g->p->d, cur + off, i));
                        }
                }
        }
}

int gemm_load_verify(struct gemm_load *g, struct gemm_check *ret) {
        memset(ret, 0, sizeof(*ret));
        int e;
        if ((e = g->ops->copy_d2h(g->ctx, g->host_d, g->d, 0, g->d_bytes)) < 0 ||
            (e = g->ops->synchronize(g->ctx)) < 0)
                return dev_fail(g, e, "reading D back");
        bool have = false;
        ret->elements_sampled = g->n_sample;
        for (size_t s = 0; s < g->n_sample; s++) {
                size_t idx = g->sample_row[s] + (size_t)g->sample_col[s] * g->n;
                double got = gemm_elem_load(g->p->d, g->host_d, idx), want = g->sample_want[s];
                if (!(fabs(got - want) <= g->sample_tol[s])) {
                        ret->faulty_vs_host++;
                        note_fault(ret, &have, g->sample_row[s], g->sample_col[s], want, got);
                }
        }
        if (g->have_first) {
                compare_first(g, ret, &have);
        } else {
                memcpy(g->first, g->host_d, g->d_bytes);
                g->have_first = true;
        }
        ret->digest = digest_of(g->host_d, g->d_bytes);
        return 0;
}

void gemm_load_close(struct gemm_load *g) {
        if (!g)
                return;
        if (g->pending)
                (void)g->ops->synchronize(g->ctx); /* teardown: the buffers go either way */
        lt_matmul_free(g->mm);
        if (g->lt) {
                void *stream;
                lt_device_close(g->lt, cuda_ctx_stream(g->ctx, &stream) == 0);
        }
        lt_library_close(g->lib);
        struct dev_buf *const bufs[] = {g->ws, g->a, g->bm, g->d};
        for (size_t i = 0; i < ARRAY_COUNT(bufs); i++)
                if (bufs[i])
                        g->ops->free(g->ctx, bufs[i]);
        struct dev_event *const events[] = {g->ev0, g->ev1};
        for (size_t i = 0; i < ARRAY_COUNT(events); i++)
                if (events[i])
                        g->ops->event_destroy(g->ctx, events[i]);
        if (g->host_d)
                g->ops->host_free(g->ctx, g->host_d, g->host_pinned);
        free(g->first);
        free(g->sample_row);
        free(g->sample_col);
        free(g->sample_want);
        free(g->sample_tol);
        free(g);
}

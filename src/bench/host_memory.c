/* host-memory: STREAM-like copy/scale/add/triad on the host, and host peak FLOPS.
 *
 * Threads are a pthread pool (not OpenMP: pinning each thread to one CPU and letting it
 * first-touch exactly the pages it later streams is explicit here, and clang builds need
 * no libomp). Each thread owns one contiguous, cache-line aligned slice of each array,
 * initialises it (first touch: the pages land on the thread's NUMA node) and runs every
 * kernel on that slice only. A run over all CPUs ("host") is followed, on a machine with
 * several NUMA nodes, by one run per node ("nodeN": threads pinned to the node's CPUs,
 * memory first-touched there).
 *
 * Byte counting is STREAM's: copy and scale move 2 arrays per element, add and triad 3.
 * Stores are non-temporal on x86-64 (a full cache line written straight to memory): they
 * skip the read-for-ownership a normal store makes, which STREAM's counting does not count
 * either; the arrays are far larger than the caches, so nothing is lost by bypassing them.
 * The wider forms (AVX2, AVX-512) are chosen at run time from CPUID, so the binary stays
 * baseline x86-64 (no -march=native, no SIGILL elsewhere).
 *
 * Verification follows STREAM's checkSTREAMresults: the same sequence of kernels is
 * replayed on scalars and every element of the three arrays is compared with it. The
 * scalar is sqrt(2)-1, for which one copy-scale-add-triad round multiplies the values by
 * 2s+s^2 = 1: they neither overflow nor vanish however many repetitions are asked for. */
#include "bench/bench.h"
#include "bench/cpu_isa.h"
#include "core/clock.h"
#include "core/strparse.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define HM_DEFAULT_ELEMS (80u * 1000 * 1000) /* STREAM's usual 80 M doubles: 640 MB per array */
#define HM_DEFAULT_REPS 10
#define HM_DEFAULT_WARMUP 1
#define FMA_DEFAULT_REPS 5
#define FMA_TARGET_S 0.1
#define MAX_CPUS 4096

static const double hm_scalar = 0.41421356237309504880; /* sqrt(2) - 1 */

/* ---- kernels ---------------------------------------------------------------------- */

typedef void (*kernel_fn)(double *restrict a, double *restrict b, double *restrict c, double s, size_t lo,
                          size_t hi);

/* Portable forms. Each statement on its own line: no compiler may fuse s*x+y into an FMA
 * (clang contracts within one expression), so results match the scalar replay exactly. */
static void copy_c(double *restrict a, double *restrict b, double *restrict c, double s, size_t lo, size_t hi) {
        (void)b, (void)s;
        for (size_t i = lo; i < hi; i++)
                c[i] = a[i];
}
static void scale_c(double *restrict a, double *restrict b, double *restrict c, double s, size_t lo, size_t hi) {
        (void)a;
        for (size_t i = lo; i < hi; i++)
                b[i] = s * c[i];
}
static void add_c(double *restrict a, double *restrict b, double *restrict c, double s, size_t lo, size_t hi) {
        (void)s;
        for (size_t i = lo; i < hi; i++)
                c[i] = a[i] + b[i];
}
static void triad_c(double *restrict a, double *restrict b, double *restrict c, double s, size_t lo, size_t hi) {
        for (size_t i = lo; i < hi; i++) {
                double t = s * c[i];
                a[i] = b[i] + t;
        }
}

#if defined(__x86_64__)
/* One family of four kernels per vector width: W doubles per vector, 4 vectors (a cache
 * line or more) per step; lo is a multiple of 8 elements, so loads and streams are aligned.
 * The tail past the last full step is scalar. sfence orders the streaming stores before
 * the barrier that ends the kernel. */
#define HM_KERNELS(sfx, attr, V, W, LOAD, STORE, MUL, ADD, SET1)                                                 \
        attr static void copy_##sfx(double *restrict a, double *restrict b, double *restrict c, double s, size_t lo, \
                                    size_t hi) {                                                                 \
                (void)b, (void)s;                                                                                \
                size_t i = lo, end = lo + (hi - lo) / (4 * W) * (4 * W);                                         \
                for (; i < end; i += 4 * W) {                                                                    \
                        V x0 = LOAD(a + i), x1 = LOAD(a + i + W), x2 = LOAD(a + i + 2 * W), x3 = LOAD(a + i + 3 * W); \
                        STORE(c + i, x0);                                                                        \
                        STORE(c + i + W, x1);                                                                    \
                        STORE(c + i + 2 * W, x2);                                                                \
                        STORE(c + i + 3 * W, x3);                                                                \
                }                                                                                                \
                for (; i < hi; i++)                                                                              \
                        c[i] = a[i];                                                                             \
                _mm_sfence();                                                                                    \
        }                                                                                                        \
        attr static void scale_##sfx(double *restrict a, double *restrict b, double *restrict c, double s, size_t lo, \
                                     size_t hi) {                                                                \
                (void)a;                                                                                         \
                V vs = SET1(s);                                                                                  \
                size_t i = lo, end = lo + (hi - lo) / (4 * W) * (4 * W);                                         \
                for (; i < end; i += 4 * W) {                                                                    \
                        V x0 = LOAD(c + i), x1 = LOAD(c + i + W), x2 = LOAD(c + i + 2 * W), x3 = LOAD(c + i + 3 * W); \
                        STORE(b + i, MUL(vs, x0));                                                               \
                        STORE(b + i + W, MUL(vs, x1));                                                           \
                        STORE(b + i + 2 * W, MUL(vs, x2));                                                       \
                        STORE(b + i + 3 * W, MUL(vs, x3));                                                       \
                }                                                                                                \
                for (; i < hi; i++)                                                                              \
                        b[i] = s * c[i];                                                                         \
                _mm_sfence();                                                                                    \
        }                                                                                                        \
        attr static void add_##sfx(double *restrict a, double *restrict b, double *restrict c, double s, size_t lo,   \
                                   size_t hi) {                                                                  \
                (void)s;                                                                                         \
                size_t i = lo, end = lo + (hi - lo) / (4 * W) * (4 * W);                                         \
                for (; i < end; i += 4 * W) {                                                                    \
                        STORE(c + i, ADD(LOAD(a + i), LOAD(b + i)));                                             \
                        STORE(c + i + W, ADD(LOAD(a + i + W), LOAD(b + i + W)));                                 \
                        STORE(c + i + 2 * W, ADD(LOAD(a + i + 2 * W), LOAD(b + i + 2 * W)));                     \
                        STORE(c + i + 3 * W, ADD(LOAD(a + i + 3 * W), LOAD(b + i + 3 * W)));                     \
                }                                                                                                \
                for (; i < hi; i++)                                                                              \
                        c[i] = a[i] + b[i];                                                                      \
                _mm_sfence();                                                                                    \
        }                                                                                                        \
        attr static void triad_##sfx(double *restrict a, double *restrict b, double *restrict c, double s, size_t lo, \
                                     size_t hi) {                                                                \
                V vs = SET1(s);                                                                                  \
                size_t i = lo, end = lo + (hi - lo) / (4 * W) * (4 * W);                                         \
                for (; i < end; i += 4 * W) {                                                                    \
                        STORE(a + i, ADD(LOAD(b + i), MUL(vs, LOAD(c + i))));                                    \
                        STORE(a + i + W, ADD(LOAD(b + i + W), MUL(vs, LOAD(c + i + W))));                        \
                        STORE(a + i + 2 * W, ADD(LOAD(b + i + 2 * W), MUL(vs, LOAD(c + i + 2 * W))));            \
                        STORE(a + i + 3 * W, ADD(LOAD(b + i + 3 * W), MUL(vs, LOAD(c + i + 3 * W))));            \
                }                                                                                                \
                for (; i < hi; i++) {                                                                            \
                        double t = s * c[i];                                                                     \
                        a[i] = b[i] + t;                                                                         \
                }                                                                                                \
                _mm_sfence();                                                                                    \
        }

HM_KERNELS(sse2_nt, , __m128d, 2, _mm_load_pd, _mm_stream_pd, _mm_mul_pd, _mm_add_pd, _mm_set1_pd)
HM_KERNELS(sse2_st, , __m128d, 2, _mm_load_pd, _mm_store_pd, _mm_mul_pd, _mm_add_pd, _mm_set1_pd)
HM_KERNELS(avx2_nt, __attribute__((target("avx2"))), __m256d, 4, _mm256_load_pd, _mm256_stream_pd, _mm256_mul_pd,
           _mm256_add_pd, _mm256_set1_pd)
HM_KERNELS(avx512_nt, __attribute__((target("avx512f"))), __m512d, 8, _mm512_load_pd, _mm512_stream_pd,
           _mm512_mul_pd, _mm512_add_pd, _mm512_set1_pd)
#endif

struct stream_kernels {
        const char *isa;
        kernel_fn copy, scale, add, triad;
};

/* GPUVET_HOST_MEMORY_ISA=c|sse2|sse2-store|avx2|avx512 forces one family (diagnostics and
 * docs/perf.md comparisons; documented in docs/bench.md). */
static struct stream_kernels pick_kernels(void) {
        const char *force = secure_getenv("GPUVET_HOST_MEMORY_ISA");
        struct stream_kernels k = {"c", copy_c, scale_c, add_c, triad_c};
#if defined(__x86_64__)
        struct cpu_isa isa;
        cpu_isa_detect(&isa);
        bool any = !force || !*force;
        if ((any || strcmp(force, "avx512") == 0) && isa.avx512f)
                return (struct stream_kernels){"avx512-nt", copy_avx512_nt, scale_avx512_nt, add_avx512_nt, triad_avx512_nt};
        if ((any || strcmp(force, "avx2") == 0) && isa.avx2)
                return (struct stream_kernels){"avx2-nt", copy_avx2_nt, scale_avx2_nt, add_avx2_nt, triad_avx2_nt};
        if (any || strcmp(force, "sse2") == 0)
                return (struct stream_kernels){"sse2-nt", copy_sse2_nt, scale_sse2_nt, add_sse2_nt, triad_sse2_nt};
        if (strcmp(force, "sse2-store") == 0)
                return (struct stream_kernels){"sse2-store", copy_sse2_st, scale_sse2_st, add_sse2_st, triad_sse2_st};
#else
        (void)force;
#endif
        return k;
}

/* ---- FMA throughput --------------------------------------------------------------- */

/* x = x * m + c on independent chains (enough to cover FMA latency x FMA ports); m and c
 * are powers-of-two fractions keeping x in [1, 3] (no denormals), and fused multiply-add
 * is exactly rounded, so a scalar fma()/fmaf() replay gives bit-identical values. */
#define FMA64_M (1.0 - 0x1p-30)
#define FMA64_C 0x1p-30
#define FMA32_M (1.0f - 0x1p-23f)
#define FMA32_C 0x1p-23f
#define MAX_CHAINS 16
#define MAX_LANES 16

static double chain_start(unsigned k) { return 1.0 + (k + 1) / 16.0; }

struct fma_result {
        unsigned chains, lanes;
        double lane0[MAX_CHAINS];
        bool lanes_agree;
};

/* F(k, ...) for each chain k, the rest of the arguments passed through. */
#define REP12(F, ...)                                                                                      \
        F(0, __VA_ARGS__) F(1, __VA_ARGS__) F(2, __VA_ARGS__) F(3, __VA_ARGS__) F(4, __VA_ARGS__)          \
        F(5, __VA_ARGS__) F(6, __VA_ARGS__) F(7, __VA_ARGS__) F(8, __VA_ARGS__) F(9, __VA_ARGS__)          \
        F(10, __VA_ARGS__) F(11, __VA_ARGS__)
#define REP16(F, ...) REP12(F, __VA_ARGS__) F(12, __VA_ARGS__) F(13, __VA_ARGS__) F(14, __VA_ARGS__) F(15, __VA_ARGS__)

/* The portable kernel: 8 chains of T through the C library's FMA. */
#define FMA_SCALAR(NAME, T, FMA, M, C)                                                                    \
        static void NAME(uint64_t iters, struct fma_result *r) {                                          \
                T x[8];                                                                                   \
                for (unsigned k = 0; k < 8; k++)                                                          \
                        x[k] = (T)chain_start(k);                                                         \
                for (uint64_t i = 0; i < iters; i++)                                                      \
                        for (unsigned k = 0; k < 8; k++)                                                  \
                                x[k] = FMA(x[k], M, C);                                                   \
                r->chains = 8, r->lanes = 1, r->lanes_agree = true;                                       \
                for (unsigned k = 0; k < 8; k++)                                                          \
                        r->lane0[k] = x[k];                                                               \
        }
FMA_SCALAR(fma64_c, double, fma, FMA64_M, FMA64_C)
FMA_SCALAR(fma32_c, float, fmaf, FMA32_M, FMA32_C)

#if defined(__x86_64__)
/* One FMA kernel: NCH independent chains of W lanes of T in vectors V, with the ISA's
 * set1, fmadd and storeu. */
#define FMA_KERNEL(NAME, ISA, V, T, W, NCH, REP, SET1, FMADD, STOREU, M, C)                             \
        __attribute__((target(ISA))) static void NAME(uint64_t iters, struct fma_result *r) {             \
                V vm = SET1(M), vc = SET1(C);                                                            \
                _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wshadow\"")            \
                REP(DECL, V, T, SET1) for (uint64_t i = 0; i < iters; i++) { REP(STEP, FMADD) }         \
                T out[MAX_CHAINS][W];                                                                    \
                REP(SAVE, STOREU) _Pragma("GCC diagnostic pop") r->chains = NCH, r->lanes = W;           \
                r->lanes_agree = true;                                                                   \
                for (unsigned k = 0; k < NCH; k++) {                                                     \
                        r->lane0[k] = out[k][0];                                                         \
                        for (unsigned l = 1; l < W; l++)                                                 \
                                r->lanes_agree &= out[k][l] == out[k][0];                                \
                }                                                                                        \
        }
#define DECL(k, V, T, SET1) V x##k = SET1((T)chain_start(k));
#define STEP(k, FMADD) x##k = FMADD(x##k, vm, vc);
#define SAVE(k, STOREU) STOREU(out[k], x##k);

FMA_KERNEL(fma64_avx512, "avx512f", __m512d, double, 8, 16, REP16, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_storeu_pd,
           FMA64_M, FMA64_C)
FMA_KERNEL(fma32_avx512, "avx512f", __m512, float, 16, 16, REP16, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_storeu_ps,
           FMA32_M, FMA32_C)
FMA_KERNEL(fma64_avx2, "avx2,fma", __m256d, double, 4, 12, REP12, _mm256_set1_pd, _mm256_fmadd_pd, _mm256_storeu_pd,
           FMA64_M, FMA64_C)
FMA_KERNEL(fma32_avx2, "avx2,fma", __m256, float, 8, 12, REP12, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_storeu_ps,
           FMA32_M, FMA32_C)
#endif

typedef void (*fma_fn)(uint64_t iters, struct fma_result *r);

struct fma_kernels {
        const char *isa;
        fma_fn f64, f32;
};

static struct fma_kernels pick_fma(void) {
#if defined(__x86_64__)
        struct cpu_isa isa;
        cpu_isa_detect(&isa);
        if (isa.avx512f)
                return (struct fma_kernels){"avx512", fma64_avx512, fma32_avx512};
        if (isa.avx2 && isa.fma)
                return (struct fma_kernels){"avx2-fma", fma64_avx2, fma32_avx2};
#endif
        return (struct fma_kernels){"scalar-fma", fma64_c, fma32_c};
}

/* ---- thread pool ------------------------------------------------------------------- */

enum hm_cmd { CMD_INIT, CMD_COPY, CMD_SCALE, CMD_ADD, CMD_TRIAD, CMD_CHECK, CMD_FMA64, CMD_FMA32, CMD_EXIT };

struct hm_pool;

struct hm_worker {
        struct hm_pool *pool;
        int cpu;         /* pinned to this CPU, -1 when not pinned */
        size_t lo, hi;
        /* check */
        size_t bad, first_bad;
        char which;
        double got, want;
        struct fma_result fma;
} __attribute__((aligned(64)));

struct hm_pool {
        unsigned n;
        pthread_t *tids;
        struct hm_worker *w;
        pthread_barrier_t start, end;
        enum hm_cmd cmd;
        double *a, *b, *c;
        size_t elems;
        double ea, eb, ec;
        uint64_t fma_iters;
        struct stream_kernels k;
        struct fma_kernels f;
};

static void check_slice(struct hm_worker *w) {
        const struct hm_pool *p = w->pool;
        const double *arr[3] = {p->a, p->b, p->c};
        const double want[3] = {p->ea, p->eb, p->ec};
        w->bad = 0;
        for (int j = 0; j < 3; j++)
                for (size_t i = w->lo; i < w->hi; i++) {
                        double d = fabs(arr[j][i] - want[j]);
                        if (!(d <= 1e-13 * fabs(want[j]))) {
                                if (!w->bad++) {
                                        w->first_bad = i, w->which = "abc"[j];
                                        w->got = arr[j][i], w->want = want[j];
                                }
                        }
                }
}

static void *worker_main(void *arg) {
        struct hm_worker *w = arg;
        struct hm_pool *p = w->pool;
        if (w->cpu >= 0) {
                cpu_set_t set;
                CPU_ZERO(&set);
                CPU_SET(w->cpu, &set);
                (void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set); /* unpinned still measures, ignoring */
        }
        for (;;) {
                pthread_barrier_wait(&p->start);
                switch (p->cmd) {
                case CMD_INIT:
                        for (size_t i = w->lo; i < w->hi; i++)
                                p->a[i] = 1.0, p->b[i] = 2.0, p->c[i] = 0.0;
                        break;
                case CMD_COPY: p->k.copy(p->a, p->b, p->c, hm_scalar, w->lo, w->hi); break;
                case CMD_SCALE: p->k.scale(p->a, p->b, p->c, hm_scalar, w->lo, w->hi); break;
                case CMD_ADD: p->k.add(p->a, p->b, p->c, hm_scalar, w->lo, w->hi); break;
                case CMD_TRIAD: p->k.triad(p->a, p->b, p->c, hm_scalar, w->lo, w->hi); break;
                case CMD_CHECK: check_slice(w); break;
                case CMD_FMA64: p->f.f64(p->fma_iters, &w->fma); break;
                case CMD_FMA32: p->f.f32(p->fma_iters, &w->fma); break;
                case CMD_EXIT: pthread_barrier_wait(&p->end); return NULL;
                }
                pthread_barrier_wait(&p->end);
        }
}

/* Run cmd on every worker; the wall time from release to the last one done. */
static double pool_run(struct hm_pool *p, enum hm_cmd cmd) {
        p->cmd = cmd;
        double t0 = monotonic_s();
        pthread_barrier_wait(&p->start);
        pthread_barrier_wait(&p->end);
        return monotonic_s() - t0;
}

static void pool_stop(struct hm_pool *p, unsigned started) {
        if (started == p->n) {
                pool_run(p, CMD_EXIT);
                for (unsigned i = 0; i < p->n; i++)
                        pthread_join(p->tids[i], NULL);
        }
        pthread_barrier_destroy(&p->start);
        pthread_barrier_destroy(&p->end);
        free(p->tids);
        free(p->w);
}

/* Start n workers pinned to cpus[i % n_cpus] (none when n_cpus is 0), slicing elems into
 * cache-line aligned ranges. */
static int pool_start(struct hm_pool *p, unsigned n, const int *cpus, unsigned n_cpus, size_t elems) {
        p->n = n;
        p->elems = elems;
        p->tids = calloc(n, sizeof(*p->tids));
        p->w = aligned_alloc(64, ((n * sizeof(*p->w)) + 63) / 64 * 64);
        if (!p->tids || !p->w) {
                free(p->tids);
                free(p->w);
                return -ENOMEM;
        }
        memset(p->w, 0, n * sizeof(*p->w));
        pthread_barrier_init(&p->start, NULL, n + 1);
        pthread_barrier_init(&p->end, NULL, n + 1);
        size_t per = (elems / n + 7) / 8 * 8;
        for (unsigned i = 0; i < n; i++) {
                struct hm_worker *w = &p->w[i];
                w->pool = p;
                w->cpu = n_cpus ? cpus[i % n_cpus] : -1;
                w->lo = (size_t)i * per < elems ? (size_t)i * per : elems;
                w->hi = w->lo + per < elems && i + 1 < n ? w->lo + per : elems;
                int r = pthread_create(&p->tids[i], NULL, worker_main, w);
                if (r) {
                        /* Threads already started wait at the barrier forever; the runner's
                         * deadline ends the child. Say why now. */
                        return -r;
                }
        }
        return 0;
}

/* ---- the benchmark ----------------------------------------------------------------- */

struct hm_plan {
        const char *subject;
        const int *cpus;
        unsigned n_cpus;
        unsigned threads;
};

static void param_common(struct measurement *m, const struct hm_pool *p, uint64_t array_bytes, const char *isa) {
        measurement_param(m, "array_bytes", "%llu", (unsigned long long)array_bytes);
        measurement_param(m, "threads", "%u", p->n);
        measurement_param(m, "kernels", "%s", isa);
}

static void stream_run(const struct bench_ctx *ctx, struct bench_report *rep, const struct hm_plan *plan,
                       size_t elems) {
        const struct bench_options *o = ctx->opt;
        unsigned reps = o->reps ? o->reps : HM_DEFAULT_REPS, warmup = o->warmup ? o->warmup : HM_DEFAULT_WARMUP;
        static const char *names[4] = {"copy", "scale", "add", "triad"};
        static const unsigned arrays[4] = {2, 2, 3, 3};
        struct measurement *m[4];
        for (int k = 0; k < 4; k++)
                m[k] = bench_measurement_new(rep, "host-memory", names[k], plan->subject, "GB/s", true);

        size_t bytes = elems * sizeof(double);
        size_t map_len = (bytes + (2u << 20) - 1) / (2u << 20) * (2u << 20);
        double *arr[3] = {NULL, NULL, NULL};
        for (int j = 0; j < 3; j++) {
                void *q = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (q == MAP_FAILED) {
                        for (int k = 0; k < 4; k++)
                                measurement_fail(m[k], STATUS_ERROR, "mmap of %zu bytes: %s", map_len, strerror(errno));
                        goto unmap;
                }
                /* Huge pages where THP is "madvise": fewer TLB misses while streaming. */
                (void)madvise(q, map_len, MADV_HUGEPAGE); /* a kernel without THP still runs, ignoring */
                arr[j] = q;
        }

        struct hm_pool pool = {.a = arr[0], .b = arr[1], .c = arr[2], .k = pick_kernels()};
        int r = pool_start(&pool, plan->threads, plan->cpus, plan->n_cpus, elems);
        if (r < 0) {
                for (int k = 0; k < 4; k++)
                        measurement_fail(m[k], STATUS_ERROR, "starting %u threads: %s", plan->threads, strerror(-r));
                goto unmap;
        }
        pool_run(&pool, CMD_INIT); /* first touch by the thread that streams each slice */

        double *samples[4];
        for (int k = 0; k < 4; k++)
                samples[k] = calloc(reps, sizeof(double));
        double ea = 1.0, eb = 2.0, ec = 0.0;
        enum hm_cmd cmds[4] = {CMD_COPY, CMD_SCALE, CMD_ADD, CMD_TRIAD};
        for (unsigned rep_i = 0; rep_i < warmup + reps; rep_i++) {
                for (int k = 0; k < 4; k++) {
                        double t = pool_run(&pool, cmds[k]);
                        if (rep_i >= warmup && samples[k])
                                samples[k][rep_i - warmup] = (double)arrays[k] * (double)bytes / t / 1e9;
                }
                /* The scalar replay, statement by statement as the kernels do it. */
                ec = ea;
                eb = hm_scalar * ec;
                ec = ea + eb;
                double t = hm_scalar * ec;
                ea = eb + t;
        }
        pool.ea = ea, pool.eb = eb, pool.ec = ec;
        pool_run(&pool, CMD_CHECK);
        size_t bad = 0;
        const struct hm_worker *first = NULL;
        for (unsigned i = 0; i < pool.n; i++) {
                if (pool.w[i].bad && !first)
                        first = &pool.w[i];
                bad += pool.w[i].bad;
        }
        for (int k = 0; k < 4; k++) {
                param_common(m[k], &pool, bytes, pool.k.isa);
                measurement_param(m[k], "bytes_per_element", "%u", arrays[k] * 8);
                if (!samples[k] || measurement_set_samples(m[k], samples[k], reps, warmup) < 0) {
                        measurement_fail(m[k], STATUS_ERROR, "out of memory recording samples");
                        continue;
                }
                if (bad)
                        snprintf(m[k]->verify_error, sizeof(m[k]->verify_error),
                                 "%zu of %zu elements wrong after %u rounds, first %c[%zu] = %.17g, expected %.17g", bad,
                                 3 * elems, warmup + reps, first->which, first->first_bad, first->got, first->want);
                else
                        m[k]->verified = true;
        }
        for (int k = 0; k < 4; k++)
                free(samples[k]);
        pool_stop(&pool, pool.n);
unmap:
        for (int j = 0; j < 3; j++)
                if (arr[j])
                        munmap(arr[j], map_len);
}

static bool fma_matches(const struct fma_result *r, bool f64, uint64_t iters) {
        if (!r->lanes_agree)
                return false;
        unsigned ks[2] = {0, r->chains - 1};
        for (int j = 0; j < 2; j++) {
                unsigned k = ks[j];
                double want;
                if (f64) {
                        double x = chain_start(k);
                        for (uint64_t i = 0; i < iters; i++)
                                x = fma(x, FMA64_M, FMA64_C);
                        want = x;
                } else {
                        float x = (float)chain_start(k);
                        for (uint64_t i = 0; i < iters; i++)
                                x = fmaf(x, FMA32_M, FMA32_C);
                        want = x;
                }
                if (r->lane0[k] != want)
                        return false;
        }
        return true;
}

static void flops_run(const struct bench_ctx *ctx, struct bench_report *rep, const struct hm_plan *plan, bool f64) {
        const struct bench_options *o = ctx->opt;
        unsigned reps = o->reps ? o->reps : FMA_DEFAULT_REPS, warmup = o->warmup ? o->warmup : 1;
        struct measurement *m =
                bench_measurement_new(rep, "host-memory", f64 ? "fp64_fma" : "fp32_fma", plan->subject, "GFLOPS", true);
        struct hm_pool pool = {.f = pick_fma()};
        int r = pool_start(&pool, plan->threads, plan->cpus, plan->n_cpus, 0);
        if (r < 0) {
                measurement_fail(m, STATUS_ERROR, "starting %u threads: %s", plan->threads, strerror(-r));
                return;
        }
        enum hm_cmd cmd = f64 ? CMD_FMA64 : CMD_FMA32;
        /* Calibrate: grow the iteration count until one repetition takes ~FMA_TARGET_S. */
        pool.fma_iters = 1u << 16;
        double t = pool_run(&pool, cmd);
        while (t < FMA_TARGET_S / 8 && pool.fma_iters < (1ull << 34)) {
                pool.fma_iters *= 4;
                t = pool_run(&pool, cmd);
        }
        double want = FMA_TARGET_S / t * (double)pool.fma_iters;
        pool.fma_iters = want < 1024 ? 1024 : (uint64_t)want;
        double *samples = calloc(reps, sizeof(double));
        for (unsigned i = 0; i < warmup + reps; i++) {
                t = pool_run(&pool, cmd);
                double flops = 0;
                for (unsigned w = 0; w < pool.n; w++)
                        flops += 2.0 * pool.w[w].fma.chains * pool.w[w].fma.lanes * (double)pool.fma_iters;
                if (i >= warmup && samples)
                        samples[i - warmup] = flops / t / 1e9;
        }
        measurement_param(m, "threads", "%u", pool.n);
        measurement_param(m, "kernels", "%s", pool.f.isa);
        measurement_param(m, "chains", "%u", pool.w[0].fma.chains);
        measurement_param(m, "iterations", "%llu", (unsigned long long)pool.fma_iters);
        if (!samples || measurement_set_samples(m, samples, reps, warmup) < 0) {
                measurement_fail(m, STATUS_ERROR, "out of memory recording samples");
        } else {
                unsigned bad = 0;
                for (unsigned w = 0; w < pool.n && !bad; w++)
                        if (!fma_matches(&pool.w[w].fma, f64, pool.fma_iters))
                                bad = w + 1;
                if (bad)
                        snprintf(m->verify_error, sizeof(m->verify_error),
                                 "thread %u: FMA chains differ from the scalar replay of %llu steps", bad - 1,
                                 (unsigned long long)pool.fma_iters);
                else
                        m->verified = true;
        }
        free(samples);
        pool_stop(&pool, pool.n);
}

/* The CPUs this process may run on, ascending. */
static unsigned allowed_cpus(int *cpus, unsigned max) {
        cpu_set_t set;
        unsigned n = 0;
        if (sched_getaffinity(0, sizeof(set), &set) < 0)
                return 0;
        for (int c = 0; c < CPU_SETSIZE && n < max; c++)
                if (CPU_ISSET(c, &set))
                        cpus[n++] = c;
        return n;
}

static size_t default_elems(void) {
        long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
        size_t elems = HM_DEFAULT_ELEMS;
        if (l3 > 0 && (size_t)l3 * 4 / sizeof(double) > elems)
                elems = (size_t)l3 * 4 / sizeof(double);
        return elems;
}

static void run_host_memory(const struct bench_ctx *ctx, struct bench_report *rep) {
        const struct bench_options *o = ctx->opt;
        static int cpus[MAX_CPUS], node_cpus[MAX_CPUS];
        unsigned n_cpus = allowed_cpus(cpus, MAX_CPUS);
        unsigned threads = o->threads ? o->threads : (n_cpus ? n_cpus : 1);

        size_t elems = o->size_bytes ? (size_t)(o->size_bytes / sizeof(double)) : default_elems();
        struct sysinfo si;
        uint64_t total = sysinfo(&si) == 0 ? (uint64_t)si.totalram * si.mem_unit : 0;
        if (elems < 1024 || (total && 3 * (uint64_t)elems * sizeof(double) > total / 2)) {
                struct measurement *m = bench_measurement_new(rep, "host-memory", "triad", "host", "GB/s", true);
                measurement_fail(m, STATUS_ERROR,
                                 "3 arrays of %zu bytes: need at least 8 KiB per array and at most half of the "
                                 "%llu MiB of RAM",
                                 elems * sizeof(double), (unsigned long long)(total >> 20));
                return;
        }
        if (!o->size_bytes && total && 3 * (uint64_t)elems * sizeof(double) > total / 4)
                elems = (size_t)(total / 4 / 3 / sizeof(double));

        struct hm_plan host = {.subject = "host", .cpus = cpus, .n_cpus = n_cpus, .threads = threads};
        stream_run(ctx, rep, &host, elems);

        /* Per NUMA node: threads on the node's CPUs (those this process may use). */
        const struct numa_facts *numa = ctx->facts ? &ctx->facts->numa : NULL;
        if (numa && numa->n_cpu_nodes >= 2) {
                for (size_t i = 0; i < numa->n_nodes; i++) {
                        const struct numa_node *nd = &numa->nodes[i];
                        if (!nd->cpulist || !nd->n_cpus)
                                continue;
                        uint64_t mask[MAX_CPUS / 64] = {0};
                        unsigned count;
                        if (parse_cpulist(nd->cpulist, mask, MAX_CPUS, &count) < 0)
                                continue;
                        unsigned n = 0;
                        for (unsigned c = 0; c < n_cpus; c++)
                                if (mask[cpus[c] / 64] >> (cpus[c] % 64) & 1)
                                        node_cpus[n++] = cpus[c];
                        if (!n)
                                continue;
                        char subject[24];
                        snprintf(subject, sizeof(subject), "node%d", nd->id);
                        unsigned t = o->threads ? (o->threads < n ? o->threads : n) : n;
                        struct hm_plan node = {.subject = subject, .cpus = node_cpus, .n_cpus = n, .threads = t};
                        stream_run(ctx, rep, &node, elems);
                }
        }

        const char *p = o->precision;
        if (!p || strcmp(p, "fp64") == 0)
                flops_run(ctx, rep, &host, true);
        if (!p || strcmp(p, "fp32") == 0)
                flops_run(ctx, rep, &host, false);
        if (p && strcmp(p, "fp64") && strcmp(p, "fp32")) {
                struct measurement *m = bench_measurement_new(rep, "host-memory", "fma", "host", "GFLOPS", true);
                measurement_fail(m, STATUS_SKIP, "host FMA throughput is measured in fp64 and fp32 only, not %s", p);
        }
}

const struct bench_info bench_host_memory = {
        .name = "host-memory",
        .title = "Host memory bandwidth (STREAM copy/scale/add/triad) and host FMA throughput",
        .remedy = "Host memory bandwidth below the reference: check that every memory channel is populated and "
                  "runs at its rated speed (`dmidecode -t memory`: Configured Memory Speed), the BIOS power "
                  "profile (performance, no memory power-down) and the CPU governor (cpu.governor), and that "
                  "nothing else loads the memory.",
        .needs_device = false,
        .default_timeout_s = 300,
        .run = run_host_memory,
};

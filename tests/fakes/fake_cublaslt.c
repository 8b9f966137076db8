/* A libcublasLt.so.13 test double: the cuBLASLt subset gpuvet's gemm benchmark calls
 * (src/bindings/cublaslt_functions.def), run on the host over the fake libcuda
 * (tests/fakes/fake_cuda.c), whose device pointers are host memory.
 *
 * - cublasLtMatmul computes D = alpha op(A) op(B) + beta C with naive loops, for the
 *   types the benchmark uses: FP64 (64F compute), FP32 (32F), TF32 (inputs rounded to
 *   10-bit mantissas), FP16 and BF16 (32F compute), FP8 E4M3 inputs with BF16 output.
 *   Accumulation is in float for 32F compute, double for 64F; the output is rounded to
 *   nearest even in D's type. Conversions are written independently of bench_gemm.c's,
 *   so an encoding bug on either side shows as a verification failure.
 * - The heuristic returns FAKE_CUBLASLT_ALGOS algorithms (default 4); the odd-numbered ones
 *   play split-K algorithms (reduction scheme COMPUTE_TYPE, in the workspace), the even ones
 *   sum in one sequence (NONE), and CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK filters them
 *   as the real heuristic does. Algorithm i runs at
 *   a fraction FAKE_CUBLASLT_EFF[i] of the precision's rate (default 0.6,0.9,0.75,1.0: the
 *   fastest is ranked last, so "best of top-k" is observable).
 * - Strided batches (CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT and _STRIDED_BATCH_OFFSET, through
 *   cublasLtMatrixLayoutSetAttribute): every layout must give the same count, as the real
 *   library requires; entry i of each operand starts i strides in.
 * - cublasLtMatmul advances the fake libcuda's stream clock by FLOPs over that rate, so
 *   events around it give predictable TFLOPS.
 *
 * Configuration (environment, read at the first call):
 *   FAKE_CUBLASLT_TFLOPS=fp64=60,fp32=50,...  rates (defaults fp64 60, fp32 50, tf32 400,
 *                                  fp16 800, bf16 800, fp8 1600)
 *   FAKE_CUBLASLT_ALGOS=N           algorithms the heuristic knows (1-8)
 *   FAKE_CUBLASLT_EFF=a,b,...       efficiency of each
 *   FAKE_CUBLASLT_CC=8.0            compute capability the heuristic assumes (default: the
 *                                  first of FAKE_CUDA_CC, else 9.0): FP8 needs 8.9, TF32
 *                                  and BF16 8.0, else CUBLAS_STATUS_NOT_SUPPORTED
 *   FAKE_CUBLASLT_WRONG=1           every matmul drops the last term of its K loop
 *   FAKE_CUBLASLT_MATH_LIMIT=N      a product of more than N multiply-adds is timed on the
 *                                  synthetic clock but not computed (D left as it was): model-
 *                                  sized shapes (bench train's presets) in seconds, not hours;
 *                                  only the products under N can be verified
 *   FAKE_CUBLASLT_CORRUPT=DEV:ROW:COL[:FROM]   matmuls on device DEV (the fake libcuda's
 *                                  stream device), from its FROM-th on (default 1), add 1
 *                                  to D(ROW, COL): one silent data corruption (the burn's
 *                                  GEMM load must find and place it)
 *   FAKE_CUBLASLT_FAIL=fn:STATUS[:call=N][,...]   fn returns STATUS (a CUBLAS_STATUS_*
 *                                  name or a number), at its N-th call or every call
 *   FAKE_CUBLASLT_HANG=fn           fn never returns
 *   FAKE_CUBLASLT_HANG_DEVICE=DEV[:FROM]  cublasLtMatmul on device DEV never returns, from
 *                                  its FROM-th matmul there (default 1): one GPU wedged
 *                                  mid-run while the others work
 *   FAKE_CUBLASLT_LOG=FILE          append "fn status" per call
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bindings/cublaslt_api.h"

#define FAKE_EXPORT __attribute__((visibility("default")))
#define MAX_FAILS 16
#define MAX_ALGOS 8
#define ALGO_MAGIC 0x66616b65616c676full

/* The fake libcuda's stream (tests/fakes/fake_cuda.c): its device and the synthetic clock
 * events read. Kept in step with that file by hand; golden_bench_gemm's timing checks
 * would catch a drift. */
struct CUstream_st {
        int device;
        double clock_ms;
};

struct cublasLtContext {
        uint32_t magic;
};

struct fake_desc {
        uint32_t magic;
        cublasComputeType_t compute;
        cudaDataType_t scale;
        int32_t transa, transb;
};

struct fake_layout {
        uint32_t magic;
        cudaDataType_t type;
        uint64_t rows, cols;
        int64_t ld;
        int32_t batch;  /* CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 1 by default */
        int64_t stride; /* CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, elements */
};

struct fake_pref {
        uint32_t magic;
        uint64_t max_ws;
        uint32_t reduction_mask;
};

#define MAGIC_HANDLE 0x4c544831u
#define MAGIC_DESC 0x4c544432u
#define MAGIC_LAYOUT 0x4c544c33u
#define MAGIC_PREF 0x4c545034u

struct fake_fail {
        char fn[64];
        cublasStatus_t st;
        unsigned long call;
};

static struct {
        bool configured;
        double tflops[6]; /* fp64 fp32 tf32 fp16 bf16 fp8 */
        int n_algos;
        double eff[MAX_ALGOS];
        int cc;
        bool wrong;
        double math_limit;            /* FAKE_CUBLASLT_MATH_LIMIT: 0: compute every product */
        int corrupt_dev;              /* -1: none */
        int hang_dev;                 /* FAKE_CUBLASLT_HANG_DEVICE: -1: none */
        unsigned long hang_from;
        uint64_t corrupt_row, corrupt_col;
        unsigned long corrupt_from;
        unsigned long dev_matmuls[64]; /* matmuls per device so far */
        char hang[64];
        struct fake_fail fails[MAX_FAILS];
        int n_fails;
        FILE *log;
} fk;

static struct {
        char fn[64];
        unsigned long n;
} counters[32];

static const char *const prec_names[6] = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8"};

static const struct {
        const char *name;
        cublasStatus_t st;
} statuses[] = {
        {"CUBLAS_STATUS_SUCCESS", 0},          {"CUBLAS_STATUS_NOT_INITIALIZED", 1},
        {"CUBLAS_STATUS_ALLOC_FAILED", 3},     {"CUBLAS_STATUS_INVALID_VALUE", 7},
        {"CUBLAS_STATUS_ARCH_MISMATCH", 8},    {"CUBLAS_STATUS_MAPPING_ERROR", 11},
        {"CUBLAS_STATUS_EXECUTION_FAILED", 13}, {"CUBLAS_STATUS_INTERNAL_ERROR", 14},
        {"CUBLAS_STATUS_NOT_SUPPORTED", 15},   {"CUBLAS_STATUS_LICENSE_ERROR", 16},
};

static cublasStatus_t status_by_name(const char *s) {
        for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
                if (strcmp(statuses[i].name, s) == 0)
                        return statuses[i].st;
        char *end;
        long v = strtol(s, &end, 10);
        return *s && !*end ? (cublasStatus_t)v : CUBLAS_STATUS_INTERNAL_ERROR;
}

static void configure(void) {
        static const double def[6] = {60, 50, 400, 800, 800, 1600};
        memcpy(fk.tflops, def, sizeof(def));
        const char *s = getenv("FAKE_CUBLASLT_TFLOPS");
        while (s && *s) {
                for (int i = 0; i < 6; i++) {
                        size_t l = strlen(prec_names[i]);
                        if (strncmp(s, prec_names[i], l) == 0 && s[l] == '=') {
                                double v = strtod(s + l + 1, NULL);
                                if (v > 0)
                                        fk.tflops[i] = v;
                        }
                }
                s = strchr(s, ',');
                if (s)
                        s++;
        }
        s = getenv("FAKE_CUBLASLT_ALGOS");
        fk.n_algos = s && *s ? atoi(s) : 4;
        if (fk.n_algos < 1)
                fk.n_algos = 1;
        if (fk.n_algos > MAX_ALGOS)
                fk.n_algos = MAX_ALGOS;
        static const double def_eff[MAX_ALGOS] = {0.6, 0.9, 0.75, 1.0, 0.5, 0.55, 0.65, 0.7};
        memcpy(fk.eff, def_eff, sizeof(def_eff));
        s = getenv("FAKE_CUBLASLT_EFF");
        for (int i = 0; s && *s && i < MAX_ALGOS; i++) {
                double v = strtod(s, NULL);
                if (v > 0)
                        fk.eff[i] = v;
                s = strchr(s, ',');
                if (s)
                        s++;
        }
        int major = 9, minor = 0;
        s = getenv("FAKE_CUBLASLT_CC");
        if (!s || !*s)
                s = getenv("FAKE_CUDA_CC");
        if (s && *s)
                sscanf(s, "%d.%d", &major, &minor);
        fk.cc = major * 10 + minor;
        s = getenv("FAKE_CUBLASLT_WRONG");
        fk.wrong = s && strcmp(s, "1") == 0;
        s = getenv("FAKE_CUBLASLT_MATH_LIMIT");
        fk.math_limit = s && *s ? strtod(s, NULL) : 0;
        s = getenv("FAKE_CUBLASLT_CORRUPT");
        unsigned cd, cr, cc, from = 1;
        fk.corrupt_dev = -1;
        if (s && sscanf(s, "%u:%u:%u:%u", &cd, &cr, &cc, &from) >= 3 && cd < 64) {
                fk.corrupt_dev = (int)cd;
                fk.corrupt_row = cr;
                fk.corrupt_col = cc;
                fk.corrupt_from = from;
        }
        s = getenv("FAKE_CUBLASLT_HANG");
        snprintf(fk.hang, sizeof(fk.hang), "%s", s ? s : "");
        s = getenv("FAKE_CUBLASLT_HANG_DEVICE");
        unsigned hd;
        unsigned long hfrom = 1;
        fk.hang_dev = -1;
        if (s && sscanf(s, "%u:%lu", &hd, &hfrom) >= 1 && hd < 64) {
                fk.hang_dev = (int)hd;
                fk.hang_from = hfrom;
        }
        s = getenv("FAKE_CUBLASLT_FAIL");
        while (s && *s && fk.n_fails < MAX_FAILS) {
                char item[128];
                size_t len = strcspn(s, ",");
                snprintf(item, sizeof(item), "%.*s", (int)len, s);
                s += len + (s[len] == ',');
                char *a = strchr(item, ':');
                if (!a)
                        continue;
                *a++ = '\0';
                char *c = strchr(a, ':');
                if (c)
                        *c++ = '\0';
                struct fake_fail *f = &fk.fails[fk.n_fails++];
                snprintf(f->fn, sizeof(f->fn), "%.63s", item);
                f->st = status_by_name(a);
                f->call = c && strncmp(c, "call=", 5) == 0 ? strtoul(c + 5, NULL, 10) : 0;
        }
        s = getenv("FAKE_CUBLASLT_LOG");
        fk.log = s && *s ? fopen(s, "a") : NULL;
        fk.configured = true;
}

static cublasStatus_t enter(const char *fn) {
        if (!fk.configured)
                configure();
        unsigned long n = 0;
        for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
                if (!counters[i].fn[0])
                        snprintf(counters[i].fn, sizeof(counters[i].fn), "%s", fn);
                if (strcmp(counters[i].fn, fn) == 0) {
                        n = ++counters[i].n;
                        break;
                }
        }
        if (fk.hang[0] && strcmp(fk.hang, fn) == 0)
                for (;;)
                        pause();
        cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
        for (int i = 0; i < fk.n_fails; i++)
                if (strcmp(fk.fails[i].fn, fn) == 0 && (fk.fails[i].call == 0 || fk.fails[i].call == n))
                        st = fk.fails[i].st;
        if (fk.log) {
                fprintf(fk.log, "%s %d\n", fn, (int)st);
                fflush(fk.log);
        }
        return st;
}

#define ENTER()                                        \
        do {                                           \
                cublasStatus_t inj_ = enter(__func__); \
                if (inj_)                              \
                        return inj_;                   \
        } while (0)

/* ---- versions, handles ------------------------------------------------------------------------ */

FAKE_EXPORT size_t cublasLtGetVersion(void) {
        (void)enter(__func__);
        return 130100;
}

FAKE_EXPORT const char *cublasLtGetStatusName(cublasStatus_t st) {
        for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
                if (statuses[i].st == st)
                        return statuses[i].name;
        return "<unknown>";
}

FAKE_EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *h) {
        ENTER();
        if (!h)
                return CUBLAS_STATUS_INVALID_VALUE;
        struct cublasLtContext *c = calloc(1, sizeof(*c));
        if (!c)
                return CUBLAS_STATUS_ALLOC_FAILED;
        c->magic = MAGIC_HANDLE;
        *h = c;
        return CUBLAS_STATUS_SUCCESS;
}

/* Destroy calls release whatever they answer (as fake_cuda.c's): the caller is done with
 * the object either way, and keeping it would read as the caller's leak under LSan. */
FAKE_EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t h) {
        cublasStatus_t st = enter(__func__);
        if (h && h->magic != MAGIC_HANDLE)
                return CUBLAS_STATUS_INVALID_VALUE;
        free(h);
        return st ? st : (h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED);
}

/* ---- descriptors -------------------------------------------------------------------------------- */

static struct fake_desc *desc_of(cublasLtMatmulDesc_t d) {
        struct fake_desc *f = (struct fake_desc *)d;
        return f && f->magic == MAGIC_DESC ? f : NULL;
}
static struct fake_layout *layout_of(cublasLtMatrixLayout_t l) {
        struct fake_layout *f = (struct fake_layout *)l;
        return f && f->magic == MAGIC_LAYOUT ? f : NULL;
}
static struct fake_pref *pref_of(cublasLtMatmulPreference_t p) {
        struct fake_pref *f = (struct fake_pref *)p;
        return f && f->magic == MAGIC_PREF ? f : NULL;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute,
                                                    cudaDataType_t scale) {
        ENTER();
        if (!d)
                return CUBLAS_STATUS_INVALID_VALUE;
        struct fake_desc *f = calloc(1, sizeof(*f));
        if (!f)
                return CUBLAS_STATUS_ALLOC_FAILED;
        *f = (struct fake_desc){MAGIC_DESC, compute, scale, CUBLAS_OP_N, CUBLAS_OP_N};
        *d = (cublasLtMatmulDesc_t)f;
        return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) {
        cublasStatus_t st = enter(__func__);
        free(desc_of(d));
        return st;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr,
                                                          const void *buf, size_t size) {
        ENTER();
        struct fake_desc *f = desc_of(d);
        if (!f || !buf)
                return CUBLAS_STATUS_INVALID_VALUE;
        switch (attr) {
        case CUBLASLT_MATMUL_DESC_TRANSA:
        case CUBLASLT_MATMUL_DESC_TRANSB: {
                if (size != sizeof(int32_t))
                        return CUBLAS_STATUS_INVALID_VALUE;
                int32_t v;
                memcpy(&v, buf, sizeof(v));
                if (v != CUBLAS_OP_N && v != CUBLAS_OP_T)
                        return CUBLAS_STATUS_INVALID_VALUE;
                *(attr == CUBLASLT_MATMUL_DESC_TRANSA ? &f->transa : &f->transb) = v;
                return CUBLAS_STATUS_SUCCESS;
        }
        default:
                return CUBLAS_STATUS_INVALID_VALUE;
        }
}

FAKE_EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType_t type, uint64_t rows,
                                                      uint64_t cols, int64_t ld) {
        ENTER();
        if (!l || ld < (int64_t)rows || rows == 0 || cols == 0)
                return CUBLAS_STATUS_INVALID_VALUE;
        struct fake_layout *f = calloc(1, sizeof(*f));
        if (!f)
                return CUBLAS_STATUS_ALLOC_FAILED;
        *f = (struct fake_layout){MAGIC_LAYOUT, type, rows, cols, ld, 1, 0};
        *l = (cublasLtMatrixLayout_t)f;
        return CUBLAS_STATUS_SUCCESS;
}

/* The two attributes gpuvet sets, with the real library's size check. */
FAKE_EXPORT cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr,
                                                            const void *buf, size_t size) {
        ENTER();
        struct fake_layout *f = layout_of(l);
        if (!f || !buf)
                return CUBLAS_STATUS_INVALID_VALUE;
        if (attr == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT && size == sizeof(int32_t)) {
                memcpy(&f->batch, buf, size);
                return f->batch >= 1 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
        }
        if (attr == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET && size == sizeof(int64_t)) {
                memcpy(&f->stride, buf, size);
                return CUBLAS_STATUS_SUCCESS;
        }
        return CUBLAS_STATUS_INVALID_VALUE;
}

FAKE_EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) {
        cublasStatus_t st = enter(__func__);
        free(layout_of(l));
        return st;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p) {
        ENTER();
        if (!p)
                return CUBLAS_STATUS_INVALID_VALUE;
        struct fake_pref *f = calloc(1, sizeof(*f));
        if (!f)
                return CUBLAS_STATUS_ALLOC_FAILED;
        f->magic = MAGIC_PREF;
        f->reduction_mask = CUBLASLT_REDUCTION_SCHEME_MASK;
        *p = (cublasLtMatmulPreference_t)f;
        return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) {
        cublasStatus_t st = enter(__func__);
        free(pref_of(p));
        return st;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                                                cublasLtMatmulPreferenceAttributes_t attr,
                                                                const void *buf, size_t size) {
        ENTER();
        struct fake_pref *f = pref_of(p);
        if (!f || !buf)
                return CUBLAS_STATUS_INVALID_VALUE;
        if (attr == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES && size == sizeof(uint64_t)) {
                memcpy(&f->max_ws, buf, sizeof(f->max_ws));
                return CUBLAS_STATUS_SUCCESS;
        }
        if (attr == CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK && size == sizeof(uint32_t)) {
                memcpy(&f->reduction_mask, buf, sizeof(f->reduction_mask));
                return CUBLAS_STATUS_SUCCESS;
        }
        return CUBLAS_STATUS_INVALID_VALUE;
}

/* ---- the operation ------------------------------------------------------------------------------ */

/* Which precision a descriptor and layouts describe (index into fk.tflops), or -1 for a
 * combination this fake (and gpuvet) does not use. */
static int precision_of(const struct fake_desc *d, const struct fake_layout *a, const struct fake_layout *b,
                        const struct fake_layout *c, const struct fake_layout *dd) {
        if (a->type != b->type || c->type != dd->type)
                return -1;
        switch (d->compute) {
        case CUBLAS_COMPUTE_64F:
                return a->type == CUDA_R_64F && dd->type == CUDA_R_64F && d->scale == CUDA_R_64F ? 0 : -1;
        case CUBLAS_COMPUTE_32F_FAST_TF32:
                return a->type == CUDA_R_32F && dd->type == CUDA_R_32F && d->scale == CUDA_R_32F ? 2 : -1;
        case CUBLAS_COMPUTE_32F:
                if (d->scale != CUDA_R_32F)
                        return -1;
                if (a->type == CUDA_R_32F && dd->type == CUDA_R_32F)
                        return 1;
                if (a->type == CUDA_R_16F && dd->type == CUDA_R_16F)
                        return 3;
                if (a->type == CUDA_R_16BF && dd->type == CUDA_R_16BF)
                        return 4;
                /* FP8 needs the "TN" layout, as the real library does */
                if (a->type == CUDA_R_8F_E4M3 && dd->type == CUDA_R_16BF && d->transa == CUBLAS_OP_T &&
                    d->transb == CUBLAS_OP_N)
                        return 5;
                return -1;
        default:
                return -1;
        }
}

static int min_cc(int prec) {
        return prec == 5 ? 89 : (prec == 2 || prec == 4) ? 80 : 0;
}

/* op(X) dimensions and a consistent set of layouts for D (m x n) = op(A) (m x k) op(B). */
static bool shapes(const struct fake_desc *d, const struct fake_layout *a, const struct fake_layout *b,
                   const struct fake_layout *c, const struct fake_layout *dd, uint64_t *m, uint64_t *n, uint64_t *k) {
        uint64_t am = d->transa == CUBLAS_OP_T ? a->cols : a->rows, ak = d->transa == CUBLAS_OP_T ? a->rows : a->cols;
        uint64_t bk = d->transb == CUBLAS_OP_T ? b->cols : b->rows, bn = d->transb == CUBLAS_OP_T ? b->rows : b->cols;
        *m = am;
        *n = bn;
        *k = ak;
        return ak == bk && dd->rows == am && dd->cols == bn && c->rows == dd->rows && c->cols == dd->cols &&
               c->ld == dd->ld && a->batch == dd->batch && b->batch == dd->batch && c->batch == dd->batch;
}

/* The reduction scheme algorithm i plays: odd ones split K and reduce in the workspace. */
static uint32_t algo_reduction(int i) {
        return i % 2 ? CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE : CUBLASLT_REDUCTION_SCHEME_NONE;
}

/* Whether a preference's reduction mask admits scheme: an algorithm that does not split K
 * (NONE) always; a split-K one when the mask holds its scheme (cublasLt.h: "filters heuristic
 * result to only include algo configs that use one of the required modes"). */
static bool reduction_allowed(uint32_t mask, uint32_t scheme) {
        return scheme == CUBLASLT_REDUCTION_SCHEME_NONE || (mask & scheme) != 0;
}

static size_t algo_workspace(int i) {
        static const size_t need[MAX_ALGOS] = {0, 4u << 20, 0, 16u << 20, 0, 1u << 20, 0, 64u << 20};
        return need[i];
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t op,
                                                          cublasLtMatrixLayout_t la, cublasLtMatrixLayout_t lb,
                                                          cublasLtMatrixLayout_t lc, cublasLtMatrixLayout_t ld,
                                                          cublasLtMatmulPreference_t pref, int requested,
                                                          cublasLtMatmulHeuristicResult_t results[], int *returned) {
        ENTER();
        struct fake_desc *d = desc_of(op);
        struct fake_layout *a = layout_of(la), *b = layout_of(lb), *c = layout_of(lc), *dd = layout_of(ld);
        struct fake_pref *p = pref_of(pref);
        if (!h || h->magic != MAGIC_HANDLE)
                return CUBLAS_STATUS_NOT_INITIALIZED;
        if (!d || !a || !b || !c || !dd || !p || requested <= 0 || !results || !returned)
                return CUBLAS_STATUS_INVALID_VALUE;
        uint64_t m, n, k;
        if (!shapes(d, a, b, c, dd, &m, &n, &k))
                return CUBLAS_STATUS_INVALID_VALUE;
        int prec = precision_of(d, a, b, c, dd);
        if (prec < 0 || fk.cc < min_cc(prec))
                return CUBLAS_STATUS_NOT_SUPPORTED;
        int got = 0;
        for (int i = 0; i < fk.n_algos && got < requested; i++) {
                if (algo_workspace(i) > p->max_ws)
                        continue; /* the real heuristic honours the workspace limit too */
                if (!reduction_allowed(p->reduction_mask, algo_reduction(i)))
                        continue;
                cublasLtMatmulHeuristicResult_t *r = &results[got++];
                memset(r, 0, sizeof(*r));
                r->algo.data[0] = (uint64_t)i;
                r->algo.data[1] = ALGO_MAGIC;
                r->workspaceSize = algo_workspace(i);
                r->state = CUBLAS_STATUS_SUCCESS;
                r->wavesCount = 1.0f;
        }
        *returned = got;
        return got ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}

/* Element decoders, written from the bit layouts (bench_gemm.c uses frexp/ldexp). */
static double dec_f16(uint16_t h) {
        int e = h >> 10 & 0x1f, f = h & 0x3ff;
        double s = h & 0x8000 ? -1.0 : 1.0;
        if (e == 0x1f)
                return f ? NAN : s * INFINITY;
        if (e == 0)
                return s * f / 16777216.0; /* f 2^-24 */
        return s * (1024 + f) * pow(2.0, e - 25);
}

static double dec_bf16(uint16_t b) {
        uint32_t u = (uint32_t)b << 16;
        float f;
        memcpy(&f, &u, sizeof(f));
        return f;
}

static double dec_e4m3(uint8_t v) {
        int e = v >> 3 & 0xf, f = v & 7;
        double s = v & 0x80 ? -1.0 : 1.0;
        if (e == 0xf && f == 7)
                return NAN;
        if (e == 0)
                return s * f / 512.0; /* f 2^-9 */
        return s * (8 + f) * pow(2.0, e - 10);
}

/* Round a float's significand to 10 bits (TF32), nearest even. */
static float to_tf32(float x) {
        uint32_t u;
        memcpy(&u, &x, sizeof(u));
        if ((u & 0x7f800000u) != 0x7f800000u)
                u = (u + 0xfffu + (u >> 13 & 1)) & ~0x1fffu;
        memcpy(&x, &u, sizeof(x));
        return x;
}

static uint16_t enc_bf16(float x) {
        uint32_t u;
        memcpy(&u, &x, sizeof(u));
        if ((u & 0x7fffffffu) > 0x7f800000u)
                return 0x7fc0;
        return (uint16_t)((u + 0x7fffu + (u >> 16 & 1)) >> 16);
}

static uint16_t enc_f16(float x) {
        uint32_t u;
        memcpy(&u, &x, sizeof(u));
        uint16_t sign = (uint16_t)(u >> 16 & 0x8000);
        uint32_t a = u & 0x7fffffffu;
        if (a > 0x7f800000u)
                return sign | 0x7e00;
        if (a >= 0x477ff000u) /* rounds to 65536 or more */
                return sign | 0x7c00;
        if (a < 0x38800000u) { /* below 2^-14: subnormal half, units of 2^-24 */
                float fa;
                memcpy(&fa, &a, sizeof(fa));
                return sign | (uint16_t)nearbyintf(fa * 16777216.0f);
        }
        uint32_t e = (a >> 23) - 112, mant = a & 0x7fffff;
        uint32_t h = e << 10 | mant >> 13;
        uint32_t rest = mant & 0x1fff;
        if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
                h++;
        return sign | (uint16_t)h;
}

static double load(cudaDataType_t t, const void *p, size_t i, bool tf32) {
        switch (t) {
        case CUDA_R_64F: return ((const double *)p)[i];
        case CUDA_R_32F: return tf32 ? to_tf32(((const float *)p)[i]) : ((const float *)p)[i];
        case CUDA_R_16F: return dec_f16(((const uint16_t *)p)[i]);
        case CUDA_R_16BF: return dec_bf16(((const uint16_t *)p)[i]);
        case CUDA_R_8F_E4M3: return dec_e4m3(((const uint8_t *)p)[i]);
        }
        return NAN;
}

static void store(cudaDataType_t t, void *p, size_t i, double v) {
        switch (t) {
        case CUDA_R_64F: ((double *)p)[i] = v; break;
        case CUDA_R_32F: ((float *)p)[i] = (float)v; break;
        case CUDA_R_16F: ((uint16_t *)p)[i] = enc_f16((float)v); break;
        case CUDA_R_16BF: ((uint16_t *)p)[i] = enc_bf16((float)v); break;
        case CUDA_R_8F_E4M3: break; /* no FP8 output in this fake */
        }
}

static size_t elem_size(cudaDataType_t t) {
        switch (t) {
        case CUDA_R_64F: return 8;
        case CUDA_R_32F: return 4;
        case CUDA_R_16F:
        case CUDA_R_16BF: return 2;
        case CUDA_R_8F_E4M3: return 1;
        }
        return 1;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t op, const void *alpha,
                                          const void *A, cublasLtMatrixLayout_t la, const void *B,
                                          cublasLtMatrixLayout_t lb, const void *beta, const void *C,
                                          cublasLtMatrixLayout_t lc, void *D, cublasLtMatrixLayout_t ld,
                                          const cublasLtMatmulAlgo_t *algo, void *workspace, size_t ws_bytes,
                                          cudaStream_t stream) {
        ENTER();
        struct fake_desc *d = desc_of(op);
        struct fake_layout *a = layout_of(la), *b = layout_of(lb), *c = layout_of(lc), *dd = layout_of(ld);
        if (!h || h->magic != MAGIC_HANDLE)
                return CUBLAS_STATUS_NOT_INITIALIZED;
        if (!d || !a || !b || !c || !dd || !alpha || !beta || !A || !B || !C || !D || !stream)
                return CUBLAS_STATUS_INVALID_VALUE;
        uint64_t m, n, k;
        if (!shapes(d, a, b, c, dd, &m, &n, &k))
                return CUBLAS_STATUS_INVALID_VALUE;
        int prec = precision_of(d, a, b, c, dd);
        if (prec < 0 || fk.cc < min_cc(prec))
                return CUBLAS_STATUS_NOT_SUPPORTED;
        if (stream->device == fk.hang_dev && fk.dev_matmuls[fk.hang_dev] + 1 >= fk.hang_from)
                for (;;) /* a GPU wedged mid-run: its matmuls never come back, the others' do */
                        pause();
        int ai = -1;
        if (algo) {
                if (algo->data[1] != ALGO_MAGIC || algo->data[0] >= (uint64_t)fk.n_algos)
                        return CUBLAS_STATUS_INVALID_VALUE;
                ai = (int)algo->data[0];
                if (algo_workspace(ai) > ws_bytes || (algo_workspace(ai) && !workspace))
                        return CUBLAS_STATUS_INVALID_VALUE;
        }
        bool f64 = d->scale == CUDA_R_64F, tf32 = prec == 2;
        double al = f64 ? *(const double *)alpha : *(const float *)alpha;
        double be = f64 ? *(const double *)beta : *(const float *)beta;
        uint64_t kend = fk.wrong && k > 1 ? k - 1 : k; /* the injected bug: an off-by-one K loop */
        bool skip_math = fk.math_limit > 0 && (double)m * (double)n * (double)k * (double)dd->batch > fk.math_limit;
        for (int32_t bi = 0; bi < dd->batch; bi++) {
                /* entry bi of a strided batch: each operand moved by its own stride */
                const char *Ab = (const char *)A + (size_t)bi * (size_t)a->stride * elem_size(a->type);
                const char *Bb = (const char *)B + (size_t)bi * (size_t)b->stride * elem_size(b->type);
                const char *Cb = (const char *)C + (size_t)bi * (size_t)c->stride * elem_size(c->type);
                char *Db = (char *)D + (size_t)bi * (size_t)dd->stride * elem_size(dd->type);
                for (uint64_t j = 0; j < n && !skip_math; j++)
                        for (uint64_t i = 0; i < m; i++) {
                                double acc64 = 0;
                                float acc32 = 0;
                                for (uint64_t kk = 0; kk < kend; kk++) {
                                        size_t ia = d->transa == CUBLAS_OP_T ? kk + i * (uint64_t)a->ld : i + kk * (uint64_t)a->ld;
                                        size_t ib = d->transb == CUBLAS_OP_T ? j + kk * (uint64_t)b->ld : kk + j * (uint64_t)b->ld;
                                        double prod = load(a->type, Ab, ia, tf32) * load(b->type, Bb, ib, tf32);
                                        if (f64)
                                                acc64 += prod;
                                        else
                                                acc32 += (float)prod;
                                }
                                double v = al * (f64 ? acc64 : acc32);
                                size_t id = i + j * (uint64_t)dd->ld;
                                if (be != 0)
                                        v += be * load(c->type, Cb, i + j * (uint64_t)c->ld, false);
                                store(dd->type, Db, id, v);
                        }
        }
        int dev = stream->device;
        if (dev >= 0 && dev < 64 && ++fk.dev_matmuls[dev] >= fk.corrupt_from && dev == fk.corrupt_dev &&
            fk.corrupt_row < m && fk.corrupt_col < n) {
                size_t id = fk.corrupt_row + fk.corrupt_col * (uint64_t)dd->ld;
                store(dd->type, D, id, load(dd->type, D, id, false) + 1);
        }
        double eff = ai >= 0 ? fk.eff[ai] : 1.0;
        stream->clock_ms += 2.0 * (double)m * (double)n * (double)k * (double)dd->batch / (fk.tflops[prec] * 1e12 * eff) * 1e3;
        return CUBLAS_STATUS_SUCCESS;
}

#include "bench/matmul.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bindings/cublaslt.h"

struct lt_library {
        struct cublaslt *lt;
};

struct lt_device {
        struct cublaslt *lt;
        cublasLtHandle_t handle;
        cudaStream_t stream;
};

struct lt_matmul {
        struct lt_device *dev;
        bool f64_scale;
        uint64_t ws_bytes;
        cublasLtMatmulDesc_t op;
        cublasLtMatrixLayout_t la, lb, ld;
        cublasLtMatmulPreference_t pref;
        int count;
        cublasLtMatmulHeuristicResult_t res[]; /* count of them */
};

static cudaDataType_t type_of(enum lt_type t) {
        switch (t) {
        case LT_F64: return CUDA_R_64F;
        case LT_F32: return CUDA_R_32F;
        case LT_F16: return CUDA_R_16F;
        case LT_BF16: return CUDA_R_16BF;
        case LT_E4M3: return CUDA_R_8F_E4M3;
        }
        return CUDA_R_32F;
}

static cublasComputeType_t compute_of(enum lt_compute c) {
        switch (c) {
        case LT_COMPUTE_64F: return CUBLAS_COMPUTE_64F;
        case LT_COMPUTE_32F: return CUBLAS_COMPUTE_32F;
        case LT_COMPUTE_32F_FAST_TF32: return CUBLAS_COMPUTE_32F_FAST_TF32;
        }
        return CUBLAS_COMPUTE_32F;
}

int lt_library_open(struct lt_library **ret, char *err, size_t size) {
        *ret = NULL;
        struct lt_library *lib = calloc(1, sizeof(*lib));
        if (!lib) {
                snprintf(err, size, "out of memory");
                return -ENOMEM;
        }
        int e = cublaslt_open(&lib->lt, err, size);
        if (e < 0) {
                free(lib);
                return e;
        }
        *ret = lib;
        return 0;
}

void lt_library_close(struct lt_library *lib) {
        if (!lib)
                return;
        cublaslt_close(lib->lt);
        free(lib);
}

void lt_library_describe(const struct lt_library *lib, char *buf, size_t size) {
        const char *name = lib->lt->dl.name, *slash = strrchr(name, '/');
        snprintf(buf, size, "%s %zu", slash ? slash + 1 : name, lib->lt->version);
}

const char *lt_library_error(const struct lt_library *lib) { return lib->lt->err; }

int lt_device_open(struct lt_library *lib, void *stream, struct lt_device **ret) {
        *ret = NULL;
        struct lt_device *dev = calloc(1, sizeof(*dev));
        if (!dev) {
                snprintf(lib->lt->err, sizeof(lib->lt->err), "out of memory");
                return -ENOMEM;
        }
        dev->lt = lib->lt;
        dev->stream = stream;
        cublasStatus_t st = lib->lt->fn.cublasLtCreate(&dev->handle);
        if (st != CUBLAS_STATUS_SUCCESS) {
                int e = cublaslt_fail(lib->lt, "cublasLtCreate", st, NULL);
                free(dev);
                return e;
        }
        *ret = dev;
        return 0;
}

void lt_device_close(struct lt_device *dev, bool context_current) {
        if (!dev)
                return;
        if (context_current)
                (void)dev->lt->fn.cublasLtDestroy(dev->handle); /* teardown: nothing to do on failure */
        free(dev);
}

static int describe(struct lt_matmul *mm, const struct lt_precision *p, const struct lt_shape *sh, unsigned flags) {
        const struct cublaslt_fns *fn = &mm->dev->lt->fn;
        struct cublaslt *lt = mm->dev->lt;
        int32_t ta = sh->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = sh->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
        cublasStatus_t st;
        if ((st = fn->cublasLtMatmulDescCreate(&mm->op, compute_of(p->compute), type_of(p->scale))) !=
            CUBLAS_STATUS_SUCCESS) {
                mm->op = NULL;
                return cublaslt_fail(lt, "cublasLtMatmulDescCreate", st, NULL);
        }
        if ((st = fn->cublasLtMatmulDescSetAttribute(mm->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta))) ||
            (st = fn->cublasLtMatmulDescSetAttribute(mm->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb))))
                return cublaslt_fail(lt, "cublasLtMatmulDescSetAttribute", st, NULL);
        cublasLtMatrixLayout_t *layouts[] = {&mm->la, &mm->lb, &mm->ld};
        /* stored rows x cols of A, B and D */
        uint64_t rows[3] = {sh->trans_a ? sh->k : sh->m, sh->trans_b ? sh->n : sh->k, sh->m};
        uint64_t cols[3] = {sh->trans_a ? sh->m : sh->k, sh->trans_b ? sh->k : sh->n, sh->n};
        for (int i = 0; i < 3; i++)
                if ((st = fn->cublasLtMatrixLayoutCreate(layouts[i], type_of(i < 2 ? p->ab : p->d), rows[i], cols[i],
                                                         (int64_t)rows[i])) != CUBLAS_STATUS_SUCCESS) {
                        *layouts[i] = NULL;
                        return cublaslt_fail(lt, "cublasLtMatrixLayoutCreate", st, NULL);
                }
        if (sh->batch > 1) {
                if (!fn->cublasLtMatrixLayoutSetAttribute) {
                        snprintf(lt->err, sizeof(lt->err), "cublasLtMatrixLayoutSetAttribute: not in this library "
                                                           "(strided batches need it)");
                        return -ENOTSUP;
                }
                int32_t count = (int32_t)sh->batch;
                int64_t strides[3] = {sh->stride_a, sh->stride_b, sh->stride_d};
                for (int i = 0; i < 3; i++)
                        if ((st = fn->cublasLtMatrixLayoutSetAttribute(*layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                                       &count, sizeof(count))) ||
                            (st = fn->cublasLtMatrixLayoutSetAttribute(*layouts[i],
                                                                       CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                                       &strides[i], sizeof(strides[i]))))
                                return cublaslt_fail(lt, "cublasLtMatrixLayoutSetAttribute", st, NULL);
        }
        if ((st = fn->cublasLtMatmulPreferenceCreate(&mm->pref)) != CUBLAS_STATUS_SUCCESS) {
                mm->pref = NULL;
                return cublaslt_fail(lt, "cublasLtMatmulPreferenceCreate", st, NULL);
        }
        if ((st = fn->cublasLtMatmulPreferenceSetAttribute(mm->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                           &mm->ws_bytes, sizeof(mm->ws_bytes))) != CUBLAS_STATUS_SUCCESS)
                return cublaslt_fail(lt, "cublasLtMatmulPreferenceSetAttribute", st, NULL);
        uint32_t none = CUBLASLT_REDUCTION_SCHEME_NONE;
        if ((flags & LT_PLAN_NO_SPLIT_K) &&
            (st = fn->cublasLtMatmulPreferenceSetAttribute(mm->pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &none,
                                                           sizeof(none))) != CUBLAS_STATUS_SUCCESS)
                return cublaslt_fail(lt, "cublasLtMatmulPreferenceSetAttribute(REDUCTION_SCHEME_MASK)", st, NULL);
        return 0;
}

int lt_matmul_plan(struct lt_device *dev, const struct lt_precision *p, unsigned n, uint64_t ws_bytes,
                   unsigned max_algos, unsigned flags, struct lt_matmul **ret) {
        struct lt_shape square = {n, n, n, true, false, 1, 0, 0, 0};
        return lt_matmul_plan_shape(dev, p, &square, ws_bytes, max_algos, flags, ret);
}

int lt_matmul_plan_shape(struct lt_device *dev, const struct lt_precision *p, const struct lt_shape *shape,
                         uint64_t ws_bytes, unsigned max_algos, unsigned flags, struct lt_matmul **ret) {
        *ret = NULL;
        struct cublaslt *lt = dev->lt;
        lt->err[0] = '\0';
        struct lt_matmul *mm = calloc(1, sizeof(*mm) + (max_algos ? max_algos : 1) * sizeof(mm->res[0]));
        if (!mm) {
                snprintf(lt->err, sizeof(lt->err), "out of memory");
                return -ENOMEM;
        }
        mm->dev = dev;
        mm->f64_scale = p->scale == LT_F64;
        mm->ws_bytes = ws_bytes;
        int e = describe(mm, p, shape, flags);
        if (e == 0) {
                cublasStatus_t st = lt->fn.cublasLtMatmulAlgoGetHeuristic(dev->handle, mm->op, mm->la, mm->lb, mm->ld,
                                                                          mm->ld, mm->pref, (int)max_algos, mm->res,
                                                                          &mm->count);
                if (st != CUBLAS_STATUS_SUCCESS)
                        e = cublaslt_fail(lt, "cublasLtMatmulAlgoGetHeuristic", st, NULL);
                else if (mm->count <= 0)
                        e = -ENODATA;
                else if ((unsigned)mm->count > max_algos)
                        mm->count = (int)max_algos;
        }
        if (e < 0) {
                lt_matmul_free(mm);
                return e;
        }
        *ret = mm;
        return 0;
}

unsigned lt_matmul_algos(const struct lt_matmul *mm) { return (unsigned)mm->count; }

bool lt_matmul_usable(const struct lt_matmul *mm, unsigned i) {
        return i < (unsigned)mm->count && mm->res[i].state == CUBLAS_STATUS_SUCCESS &&
               mm->res[i].workspaceSize <= mm->ws_bytes;
}

uint64_t lt_matmul_algo_digest(const struct lt_matmul *mm, unsigned i) {
        if (i >= (unsigned)mm->count)
                return 0;
        uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a over the opaque words */
        for (size_t w = 0; w < sizeof(mm->res[i].algo.data) / sizeof(mm->res[i].algo.data[0]); w++)
                h = (h ^ mm->res[i].algo.data[w]) * 0x100000001b3ull;
        return h ? h : 1;
}

int lt_matmul_run(struct lt_matmul *mm, unsigned i, uint64_t a, uint64_t b, uint64_t d, uint64_t ws) {
        struct lt_device *dev = mm->dev;
        double alpha64 = 1, beta64 = 0;
        float alpha32 = 1, beta32 = 0;
        void *alpha = mm->f64_scale ? (void *)&alpha64 : (void *)&alpha32;
        void *beta = mm->f64_scale ? (void *)&beta64 : (void *)&beta32;
        cublasStatus_t st = dev->lt->fn.cublasLtMatmul(
                dev->handle, mm->op, alpha, (void *)(uintptr_t)a, mm->la, (void *)(uintptr_t)b, mm->lb, beta,
                (void *)(uintptr_t)d, mm->ld, (void *)(uintptr_t)d, mm->ld, &mm->res[i].algo,
                mm->ws_bytes ? (void *)(uintptr_t)ws : NULL, mm->ws_bytes, dev->stream);
        return st == CUBLAS_STATUS_SUCCESS ? 0 : cublaslt_fail(dev->lt, "cublasLtMatmul", st, NULL);
}

void lt_matmul_free(struct lt_matmul *mm) {
        if (!mm)
                return;
        const struct cublaslt_fns *fn = &mm->dev->lt->fn;
        /* Teardown failures leave nothing to do; the handles are gone either way. */
        if (mm->pref)
                (void)fn->cublasLtMatmulPreferenceDestroy(mm->pref);
        if (mm->la)
                (void)fn->cublasLtMatrixLayoutDestroy(mm->la);
        if (mm->lb)
                (void)fn->cublasLtMatrixLayoutDestroy(mm->lb);
        if (mm->ld)
                (void)fn->cublasLtMatrixLayoutDestroy(mm->ld);
        if (mm->op)
                (void)fn->cublasLtMatmulDescDestroy(mm->op);
        free(mm);
}

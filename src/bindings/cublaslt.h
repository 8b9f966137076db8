/* cuBLASLt loaded at run time (core/dynlib.h), for the gemm benchmark (src/bench/bench_gemm.c).
 *
 * Library: $GPUVET_CUBLASLT_LIB when set: a file, loaded as is, or a directory, searched
 * for the sonames (a pip-installed nvidia-cublas wheel keeps its library in such a
 * directory); else the sonames libcublasLt.so.13, .so.12 and .so.11, newest first, through
 * the dynamic loader's usual search. The library must come with the same CUDA major as
 * the driver or older; cuBLASLt finds the driver (libcuda.so.1) itself.
 *
 * Errors are values: 0 or a negative errno, with a message naming the call and the
 * cuBLAS status in lt->err ("cublasLtMatmul: CUBLAS_STATUS_EXECUTION_FAILED (13)").
 * Nothing here prints. */
#pragma once

#include <stddef.h>

#include "core/dynlib.h"
#include "bindings/cublaslt_api.h"

struct cublaslt_fns {
#define CUBLASLT_FN(req, ret, name, params) name##_fn name;
#include "bindings/cublaslt_functions.def"
#undef CUBLASLT_FN
};

struct cublaslt {
        struct dynlib dl;   /* dl.name: the file or soname that loaded */
        size_t version;     /* cublasLtGetVersion(): 130100 for 13.1.0 */
        struct cublaslt_fns fn;
        char err[512];
};

/* Load the library and resolve every function. -ENOENT: no library (err names what was
 * tried: "libcublasLt.so.13/.12/.11 not found (...)"); -ENOSYS: a required symbol is
 * missing (err names it); -ENOMEM. */
int cublaslt_open(struct cublaslt **ret, char *err, size_t errsize);
/* NULL-safe; the library stays mapped (cuBLASLt keeps driver state that outlives a close). */
struct cublaslt *cublaslt_close(struct cublaslt *lt);

/* "CUBLAS_STATUS_NOT_SUPPORTED" (ours, else the library's), or NULL for a code unknown to both. */
const char *cublaslt_status_name(const struct cublaslt *lt, cublasStatus_t st);
/* Record "call: NAME (code)[, context]" in lt->err; return -ENOTSUP for NOT_SUPPORTED and
 * ARCH_MISMATCH, -ENOMEM for ALLOC_FAILED, -EINVAL for INVALID_VALUE, else -EIO. */
int cublaslt_fail(struct cublaslt *lt, const char *call, cublasStatus_t st, const char *context);

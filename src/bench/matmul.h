/* One matrix product D = op(A) op(B) through cuBLASLt, in gpuvet's terms: the gemm
 * benchmark (bench/bench_gemm.c) plans a square D = A^T B for a precision and a size, the
 * train benchmark (bench/bench_train.c) any m x n x k with either operand transposed; each
 * lets cuBLASLt's heuristic propose algorithms, runs the one it chooses on the CUDA
 * backend's stream, and never sees a cuBLASLt type; bindings/cublaslt_matmul.c speaks the
 * library. Matrices are column-major with the leading dimension of their stored rows; device
 * pointers are the CUDA backend's (bench/cuda_raw.h).
 *
 * Errors are values: 0 or a negative errno (-ENOTSUP: not supported on this GPU or by this
 * library; -EINVAL: refused for this shape; -ENOMEM; -EIO), with a message naming the call
 * and the cuBLAS status in lt_matmul_error(). Nothing here prints. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Element types and accumulation, as cuBLASLt names them (cudaDataType_t and
 * cublasComputeType_t: lt_type_of and lt_compute_of map them). */
enum lt_type { LT_F64, LT_F32, LT_F16, LT_BF16, LT_E4M3 };
enum lt_compute { LT_COMPUTE_64F, LT_COMPUTE_32F, LT_COMPUTE_32F_FAST_TF32 };

struct lt_precision {
        enum lt_type ab, d, scale; /* A and B; D; alpha and beta */
        enum lt_compute compute;
};

struct lt_library;  /* the loaded library */
struct lt_device;   /* a cuBLASLt handle bound to one GPU's stream */
struct lt_matmul;   /* one planned product and its candidate algorithms */

/* Load cuBLASLt (bindings/cublaslt.h: $GPUVET_CUBLASLT_LIB, then the sonames). -ENOENT: not
 * installed; -ENOSYS: a required symbol is missing; err says which. */
int lt_library_open(struct lt_library **ret, char *err, size_t size);
void lt_library_close(struct lt_library *lib);
/* "libcublasLt.so.13 130100": the file loaded and cublasLtGetVersion(). */
void lt_library_describe(const struct lt_library *lib, char *buf, size_t size);
/* The last failure's message ("cublasLtMatmul: CUBLAS_STATUS_EXECUTION_FAILED (13)"), "". */
const char *lt_library_error(const struct lt_library *lib);

/* A handle for the GPU whose current context owns stream (a CUstream). */
int lt_device_open(struct lt_library *lib, void *stream, struct lt_device **ret);
/* Destroy the handle, its GPU's context current (context_current false: the context could
 * not be made current, so the handle is left to the driver and only gpuvet's part freed). */
void lt_device_close(struct lt_device *dev, bool context_current);

/* lt_matmul_plan's flags. LT_PLAN_NO_SPLIT_K: only algorithms that sum each dot product in
 * one sequence (CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK = CUBLASLT_REDUCTION_SCHEME_NONE),
 * so no partial sums go through the workspace in a reduced or reordered form: with one
 * stream, the same algorithm on the same GPU model gives the same bits at every run. */
#define LT_PLAN_NO_SPLIT_K 0x1u

/* Describe D = A^T B for n x n matrices of precision p with a workspace of ws_bytes, and
 * ask the heuristic for up to max_algos algorithms (flags: LT_PLAN_*). -ENODATA when it
 * proposes none. */
int lt_matmul_plan(struct lt_device *dev, const struct lt_precision *p, unsigned n, uint64_t ws_bytes,
                   unsigned max_algos, unsigned flags, struct lt_matmul **ret);
/* D (m x n) = op(A) (m x k) op(B) (k x n): A is stored k x m when trans_a (else m x k), B
 * n x k when trans_b (else k x n), D m x n; each with its stored rows as leading dimension.
 * batch > 1: a strided batch of that many products in one call, entry i of each operand
 * stride_* elements after entry i - 1 (-ENOTSUP from a library without
 * cublasLtMatrixLayoutSetAttribute). */
struct lt_shape {
        uint64_t m, n, k;
        bool trans_a, trans_b;
        uint64_t batch;                      /* 0 or 1: one product */
        int64_t stride_a, stride_b, stride_d; /* elements */
};
/* lt_matmul_plan for any shape; lt_matmul_plan(n) is {n, n, n, true, false}. */
int lt_matmul_plan_shape(struct lt_device *dev, const struct lt_precision *p, const struct lt_shape *shape,
                         uint64_t ws_bytes, unsigned max_algos, unsigned flags, struct lt_matmul **ret);
/* How many algorithms the heuristic proposed, and whether algorithm i can run within the
 * workspace (the heuristic marks the ones it could not configure). */
unsigned lt_matmul_algos(const struct lt_matmul *mm);
bool lt_matmul_usable(const struct lt_matmul *mm, unsigned i);
/* A 64-bit digest of algorithm i's configuration (cublasLtMatmulAlgo_t, opaque): equal
 * digests, the same algorithm. 0 when i is out of range. */
uint64_t lt_matmul_algo_digest(const struct lt_matmul *mm, unsigned i);
/* Enqueue one product with algorithm i on the device's stream (not waited for); a, b, d and
 * ws are device pointers (ws 0 without a workspace). */
int lt_matmul_run(struct lt_matmul *mm, unsigned i, uint64_t a, uint64_t b, uint64_t d, uint64_t ws);
void lt_matmul_free(struct lt_matmul *mm);

/* Our own declarations of the subset of cuBLASLt gpuvet calls (as cuda_api.h does for the
 * driver API), so that no CUDA toolkit is needed to build. Names, values and layouts are
 * those of cublasLt.h, cublas_api.h and library_types.h (CUDA 13.0, cuBLAS 13.1); the
 * ones used here have not changed since cuBLASLt 11.0 (FP8 types: 11.8).
 * tests/abi/cublaslt_*.c compares every item below with the official headers when they
 * are installed; the function list is cublaslt_functions.def. */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef enum {
        CUBLAS_STATUS_SUCCESS = 0,
        CUBLAS_STATUS_NOT_INITIALIZED = 1,
        CUBLAS_STATUS_ALLOC_FAILED = 3,
        CUBLAS_STATUS_INVALID_VALUE = 7,
        CUBLAS_STATUS_ARCH_MISMATCH = 8,
        CUBLAS_STATUS_MAPPING_ERROR = 11,
        CUBLAS_STATUS_EXECUTION_FAILED = 13,
        CUBLAS_STATUS_INTERNAL_ERROR = 14,
        CUBLAS_STATUS_NOT_SUPPORTED = 15,
        CUBLAS_STATUS_LICENSE_ERROR = 16,
} cublasStatus_t;

typedef enum {
        CUBLAS_OP_N = 0,
        CUBLAS_OP_T = 1,
} cublasOperation_t;

typedef enum {
        CUBLAS_COMPUTE_16F = 64,
        CUBLAS_COMPUTE_32F = 68,
        CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
        CUBLAS_COMPUTE_64F = 70,
} cublasComputeType_t;

typedef enum cudaDataType_t {
        CUDA_R_32F = 0,
        CUDA_R_64F = 1,
        CUDA_R_16F = 2,
        CUDA_R_16BF = 14,
        CUDA_R_8F_E4M3 = 28,
} cudaDataType_t;

typedef enum {
        CUBLASLT_MATMUL_DESC_COMPUTE_TYPE = 0,
        CUBLASLT_MATMUL_DESC_SCALE_TYPE = 1,
        CUBLASLT_MATMUL_DESC_POINTER_MODE = 2,
        CUBLASLT_MATMUL_DESC_TRANSA = 3,
        CUBLASLT_MATMUL_DESC_TRANSB = 4,
        CUBLASLT_MATMUL_DESC_FAST_ACCUM = 25,
} cublasLtMatmulDescAttributes_t;

typedef enum {
        CUBLASLT_MATMUL_PREF_SEARCH_MODE = 0,
        CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,
        CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK = 3,
} cublasLtMatmulPreferenceAttributes_t;

/* A matrix layout's attributes gpuvet sets: strided batches (bench train's attention, one
 * product per sequence and head). BATCH_COUNT is an int32_t, STRIDED_BATCH_OFFSET an int64_t
 * count of elements. */
typedef enum {
        CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,
        CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6,
} cublasLtMatrixLayoutAttribute_t;

/* How an algorithm sums the parts of a dot product computed in parallel (split-K). */
typedef enum {
        CUBLASLT_REDUCTION_SCHEME_NONE = 0,
        CUBLASLT_REDUCTION_SCHEME_INPLACE = 1,
        CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE = 2,
        CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE = 4,
        CUBLASLT_REDUCTION_SCHEME_MASK = 0x7,
} cublasLtReductionScheme_t;

typedef struct cublasLtContext *cublasLtHandle_t;
typedef struct CUstream_st *cudaStream_t; /* the driver's CUstream (cuda_api.h) */

typedef struct {
        uint64_t data[8];
} cublasLtMatrixLayoutOpaque_t;
typedef cublasLtMatrixLayoutOpaque_t *cublasLtMatrixLayout_t;

typedef struct {
        uint64_t data[8];
} cublasLtMatmulAlgo_t;

typedef struct {
        uint64_t data[32];
} cublasLtMatmulDescOpaque_t;
typedef cublasLtMatmulDescOpaque_t *cublasLtMatmulDesc_t;

typedef struct {
        uint64_t data[8];
} cublasLtMatmulPreferenceOpaque_t;
typedef cublasLtMatmulPreferenceOpaque_t *cublasLtMatmulPreference_t;

typedef struct {
        cublasLtMatmulAlgo_t algo;
        size_t workspaceSize;
        cublasStatus_t state;
        float wavesCount;
        int reserved[4];
} cublasLtMatmulHeuristicResult_t;

#define CUBLASLT_FN_TYPEDEF(req, ret, name, params) typedef ret(*name##_fn) params;
#define CUBLASLT_FN CUBLASLT_FN_TYPEDEF
#include "bindings/cublaslt_functions.def"
#undef CUBLASLT_FN
#undef CUBLASLT_FN_TYPEDEF

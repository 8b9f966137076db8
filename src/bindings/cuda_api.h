/* Our own declarations of the subset of the CUDA driver API gpuvet calls (as
 * bindings/nvml_api.h does for NVML), so that no CUDA toolkit is needed to build the
 * binary. Values and signatures are those of cuda.h (CUDA 13.0); the entry points are the
 * ABI names the driver exports (the _v2 names cuda.h maps the plain ones to); the list of
 * functions is bindings/cuda_functions.def. */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr; /* CUdeviceptr_v2: pointer-sized on 64-bit hosts */
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef int CUdevice_attribute;
typedef int CUjit_option;
typedef int CUmemRangeHandleType;

enum {
        CUDA_SUCCESS = 0,
        CUDA_ERROR_INVALID_VALUE = 1,
        CUDA_ERROR_OUT_OF_MEMORY = 2,
        CUDA_ERROR_NOT_INITIALIZED = 3,
        CUDA_ERROR_DEINITIALIZED = 4,
        CUDA_ERROR_STUB_LIBRARY = 34,
        CUDA_ERROR_DEVICE_UNAVAILABLE = 46,
        CUDA_ERROR_NO_DEVICE = 100,
        CUDA_ERROR_INVALID_DEVICE = 101,
        CUDA_ERROR_DEVICE_NOT_LICENSED = 102,
        CUDA_ERROR_INVALID_IMAGE = 200,
        CUDA_ERROR_INVALID_CONTEXT = 201,
        CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
        CUDA_ERROR_ECC_UNCORRECTABLE = 214,
        CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217,
        CUDA_ERROR_INVALID_PTX = 218,
        CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
        CUDA_ERROR_OPERATING_SYSTEM = 304,
        CUDA_ERROR_INVALID_HANDLE = 400,
        CUDA_ERROR_NOT_FOUND = 500,
        CUDA_ERROR_NOT_READY = 600,
        CUDA_ERROR_ILLEGAL_ADDRESS = 700,
        CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
        CUDA_ERROR_LAUNCH_TIMEOUT = 702,
        CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
        CUDA_ERROR_LAUNCH_FAILED = 719,
        CUDA_ERROR_NOT_PERMITTED = 800,
        CUDA_ERROR_NOT_SUPPORTED = 801,
        CUDA_ERROR_SYSTEM_NOT_READY = 802,
        CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
        CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
        CUDA_ERROR_TIMEOUT = 909,
        CUDA_ERROR_UNKNOWN = 999,
};

enum {
        CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
        CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13, /* kHz */
        CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
        CU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
        CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 116,
        CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124,
};

/* cuMemGetHandleForAddressRange's handle types (CUDA 11.7). */
enum { CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD = 0x1 };

enum { CU_STREAM_NON_BLOCKING = 0x1 };
enum { CU_EVENT_DEFAULT = 0x0 };
enum {
        CU_JIT_INFO_LOG_BUFFER = 3,
        CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
        CU_JIT_ERROR_LOG_BUFFER = 5,
        CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};

enum cuda_need { CUDA_NEED_NONE = 0, CUDA_NEED_PROBE = 1, CUDA_NEED_COMPUTE = 2 };

#define CUDA_FN(need, name, fallback, params) typedef CUresult(*name##_fn) params;
#include "bindings/cuda_functions.def"
#undef CUDA_FN

/* Our own declarations of the subset of NCCL gpuvet calls (as cuda_api.h does for the driver
 * API), so that no NCCL SDK is needed to build. Names, values and layouts are those of
 * nccl.h (NCCL 2.28.9, from the CUDA 13.0 toolkit); the ones used here have been stable
 * since NCCL 2.12 (ncclBfloat16: 2.10; the two FP8 types: 2.24, hence optional in use).
 * tests/abi/nccl_*.c compares every item below with the official header when it is
 * installed; the function list is nccl_functions.def. */
#pragma once

#include <stddef.h>

/* Opaque handle to a communicator. */
typedef struct ncclComm *ncclComm_t;

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
        char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef enum {
        ncclSuccess = 0,
        ncclUnhandledCudaError = 1,
        ncclSystemError = 2,
        ncclInternalError = 3,
        ncclInvalidArgument = 4,
        ncclInvalidUsage = 5,
        ncclRemoteError = 6,
        ncclInProgress = 7,
        ncclNumResults = 8
} ncclResult_t;

typedef enum {
        ncclInt8 = 0,
        ncclChar = 0,
        ncclUint8 = 1,
        ncclInt32 = 2,
        ncclInt = 2,
        ncclUint32 = 3,
        ncclInt64 = 4,
        ncclUint64 = 5,
        ncclFloat16 = 6,
        ncclHalf = 6,
        ncclFloat32 = 7,
        ncclFloat = 7,
        ncclFloat64 = 8,
        ncclDouble = 8,
        ncclBfloat16 = 9,
        ncclFloat8e4m3 = 10,
        ncclFloat8e5m2 = 11,
        ncclNumTypes = 12
} ncclDataType_t;

/* nccl.h sizes this enum with a dummy enum's sizeof (ncclMaxRedOp = 0x7fffffff on every
 * ABI gpuvet builds for): an int. */
typedef enum {
        ncclSum = 0,
        ncclProd = 1,
        ncclMax = 2,
        ncclMin = 3,
        ncclAvg = 4,
        ncclNumOps = 5,
        ncclMaxRedOp = 0x7fffffff
} ncclRedOp_t;

/* NCCL_VERSION(X,Y,Z) as nccl.h computes it: 2.8.4 -> 2804, 2.9.0 onwards -> 20900. */
#define NCCL_VERSION(X, Y, Z) (((X) <= 2 && (Y) <= 8) ? (X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * 100 + (Z))

/* The CUDA runtime's stream is the driver's CUstream (cuda_api.h). */
typedef struct CUstream_st *cudaStream_t;

/* Function pointer types, one per entry of nccl_functions.def: <symbol>_fn. */
#define NCCL_FN(req, ret, name, params) typedef ret(*name##_fn) params;
#include "bindings/nccl_functions.def"
#undef NCCL_FN

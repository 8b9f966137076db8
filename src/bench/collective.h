/* NCCL's communicators and collectives in gpuvet's terms (the enums below), for
 * the collective benchmark and the training proxy; src/bindings/nccl_comm.c speaks NCCL
 * (bindings/nccl.h loads it). Buffers and streams are the CUDA backend's raw handles
 * (bench/cuda_raw.h: cuda_buf_ptr, cuda_ctx_stream).
 *
 * Errors are values: 0 or a negative errno, with a message naming the NCCL call and its
 * result (and NCCL's last error when the library has ncclGetLastError) in
 * coll_lib_error(). Nothing here prints. Every call may block on a wedged GPU or a peer that
 * never comes: callers run them in a child under a deadline. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum nccl_coll {
        NCCL_COLL_ALL_REDUCE,
        NCCL_COLL_ALL_GATHER,
        NCCL_COLL_REDUCE_SCATTER,
        NCCL_COLL_BROADCAST,
        NCCL_COLL_REDUCE,
        NCCL_COLL_ALLTOALL,
        NCCL_COLL_SENDRECV,
        NCCL_COLL_COUNT,
        NCCL_COLL_INVALID = -1,
};

/* gpuvet's names of NCCL's element types; the values are NCCL's ncclDataType_t (the vendor
 * code asserts they agree). */
enum nccl_dtype {
        NCCL_DT_INT8 = 0,
        NCCL_DT_UINT8 = 1,
        NCCL_DT_INT32 = 2,
        NCCL_DT_UINT32 = 3,
        NCCL_DT_INT64 = 4,
        NCCL_DT_UINT64 = 5,
        NCCL_DT_FLOAT16 = 6,
        NCCL_DT_FLOAT32 = 7,
        NCCL_DT_FLOAT64 = 8,
        NCCL_DT_BFLOAT16 = 9,
        NCCL_DT_COUNT,
        NCCL_DT_INVALID = -1,
};

/* NCCL's ncclRedOp_t values. */
enum nccl_redop {
        NCCL_OP_SUM = 0,
        NCCL_OP_PROD = 1,
        NCCL_OP_MAX = 2,
        NCCL_OP_MIN = 3,
        NCCL_OP_AVG = 4,
        NCCL_OP_COUNT,
        NCCL_OP_INVALID = -1,
};

/* "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall",
 * "sendrecv" (nccl-tests' binary names without _perf); NULL out of range. */
const char *nccl_coll_name(enum nccl_coll c);
enum nccl_coll nccl_coll_from_name(const char *s);
/* nccl-tests' type names: "int8", "uint8", "int32", "uint32", "int64", "uint64", "half",
 * "float", "double", "bfloat16"; NULL out of range. */
const char *nccl_dtype_name(enum nccl_dtype t);
enum nccl_dtype nccl_dtype_from_name(const char *s);
size_t nccl_dtype_size(enum nccl_dtype t);
/* "sum", "prod", "max", "min", "avg". */
const char *nccl_redop_name(enum nccl_redop op);
enum nccl_redop nccl_redop_from_name(const char *s);
/* Whether the collective reduces (takes an op). */
bool nccl_coll_reduces(enum nccl_coll c);
/* Whether it has a root (broadcast, reduce). */
bool nccl_coll_rooted(enum nccl_coll c);

/* The size of NCCL's unique id, the one blob rank 0 hands every other rank. */
#define COLL_ID_BYTES 128

struct coll_lib;  /* the loaded NCCL */
struct coll_comm; /* one rank's communicator */

/* Load NCCL (bindings/nccl.h: $GPUVET_NCCL_LIB, libnccl.so.2, pip wheels). -ENOENT: not
 * installed; -ENOSYS: a required symbol missing; -EPROTONOSUPPORT: too old. err says which. */
int coll_lib_open(struct coll_lib **ret, char *err, size_t errsize);
/* NULL-safe. The library stays mapped (its threads outlive a close). */
void coll_lib_close(struct coll_lib *lib);
/* "NCCL 2.28.9 (/usr/lib/x86_64-linux-gnu/libnccl.so.2)". */
void coll_lib_describe(const struct coll_lib *lib, char *buf, size_t size);
/* The last failure's message, "" before any. */
const char *coll_lib_error(const struct coll_lib *lib);

/* A fresh unique id (ncclGetUniqueId), on rank 0 only; the launcher's rendezvous hands it
 * to the others. */
int coll_unique_id(struct coll_lib *lib, unsigned char id[COLL_ID_BYTES]);

/* n communicators in this process, rank i on CUDA device devices[i] (ncclCommInitAll), into
 * comms[0 .. n-1]; on failure none is left. */
int coll_init_all(struct coll_lib *lib, const int *devices, int n, struct coll_comm **comms);
/* This process's one rank of nranks, on CUDA device `device`, whose context the caller has
 * made current on this thread (the CUDA runtime inside NCCL takes the current context's
 * device). Waits until every rank has joined (ncclCommInitRank). */
int coll_init_rank(struct coll_lib *lib, const unsigned char id[COLL_ID_BYTES], int nranks, int rank, int device,
                   struct coll_comm **ret);
/* ncclCommDestroy (waits for the communicator's work); NULL-safe. */
int coll_comm_destroy(struct coll_comm *comm);
/* ncclCommAbort: after a failure or a hang, without waiting for peers; NULL-safe. */
void coll_comm_abort(struct coll_comm *comm);
int coll_comm_rank(const struct coll_comm *comm);
/* The communicator's asynchronous error (a peer's failure, a network error): 0, or the
 * negative errno of nccl_fail's mapping with the message in coll_lib_error(). */
int coll_comm_check(struct coll_comm *comm);

/* Calls between coll_group_start and coll_group_end are issued together: one thread
 * driving several ranks must group their calls (NCCL would wait in the first rank's call
 * for the others otherwise). */
int coll_group_start(struct coll_lib *lib);
int coll_group_end(struct coll_lib *lib);

/* One collective call of one rank. send and recv are CUdeviceptrs; count is the
 * collective's count argument (nccl_counts' count); root for broadcast and reduce.
 * alltoall is each peer's chunk of count elements sent and received in one group, as
 * nccl-tests' alltoall; sendrecv sends to rank + 1 and receives from rank - 1 (mod nranks),
 * in one group. */
struct coll_call {
        enum nccl_coll coll;
        uint64_t send, recv;
        size_t count;
        enum nccl_dtype dtype;
        enum nccl_redop op;
        int root;
        void *stream; /* the rank's CUstream */
};
/* Enqueue the call on its stream (asynchronous, as NCCL's). */
int coll_enqueue(struct coll_comm *comm, const struct coll_call *call);

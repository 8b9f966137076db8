/* The collectives', element types' and operations' names and sizes (bench/collective.h):
 * part of the interface nccl_comm.c implements, which speaks them to NCCL. */
#include "bench/collective.h"

#include <string.h>

static const char *const coll_names[NCCL_COLL_COUNT] = {
        [NCCL_COLL_ALL_REDUCE] = "all_reduce", [NCCL_COLL_ALL_GATHER] = "all_gather",
        [NCCL_COLL_REDUCE_SCATTER] = "reduce_scatter", [NCCL_COLL_BROADCAST] = "broadcast",
        [NCCL_COLL_REDUCE] = "reduce", [NCCL_COLL_ALLTOALL] = "alltoall", [NCCL_COLL_SENDRECV] = "sendrecv",
};

static const struct {
        const char *name;
        size_t size;
} dtypes[NCCL_DT_COUNT] = {
        [NCCL_DT_INT8] = {"int8", 1},       [NCCL_DT_UINT8] = {"uint8", 1},   [NCCL_DT_INT32] = {"int32", 4},
        [NCCL_DT_UINT32] = {"uint32", 4},   [NCCL_DT_INT64] = {"int64", 8},   [NCCL_DT_UINT64] = {"uint64", 8},
        [NCCL_DT_FLOAT16] = {"half", 2},    [NCCL_DT_FLOAT32] = {"float", 4}, [NCCL_DT_FLOAT64] = {"double", 8},
        [NCCL_DT_BFLOAT16] = {"bfloat16", 2},
};

static const char *const redop_names[NCCL_OP_COUNT] = {"sum", "prod", "max", "min", "avg"};

const char *nccl_coll_name(enum nccl_coll c) {
        return c >= 0 && c < NCCL_COLL_COUNT ? coll_names[c] : NULL;
}

enum nccl_coll nccl_coll_from_name(const char *s) {
        for (int i = 0; i < NCCL_COLL_COUNT; i++)
                if (s && strcmp(s, coll_names[i]) == 0)
                        return (enum nccl_coll)i;
        return NCCL_COLL_INVALID;
}

const char *nccl_dtype_name(enum nccl_dtype t) {
        return t >= 0 && t < NCCL_DT_COUNT ? dtypes[t].name : NULL;
}

enum nccl_dtype nccl_dtype_from_name(const char *s) {
        for (int i = 0; i < NCCL_DT_COUNT; i++)
                if (s && strcmp(s, dtypes[i].name) == 0)
                        return (enum nccl_dtype)i;
        return NCCL_DT_INVALID;
}

size_t nccl_dtype_size(enum nccl_dtype t) {
        return t >= 0 && t < NCCL_DT_COUNT ? dtypes[t].size : 0;
}

const char *nccl_redop_name(enum nccl_redop op) {
        return op >= 0 && op < NCCL_OP_COUNT ? redop_names[op] : NULL;
}

enum nccl_redop nccl_redop_from_name(const char *s) {
        for (int i = 0; i < NCCL_OP_COUNT; i++)
                if (s && strcmp(s, redop_names[i]) == 0)
                        return (enum nccl_redop)i;
        return NCCL_OP_INVALID;
}

bool nccl_coll_reduces(enum nccl_coll c) {
        return c == NCCL_COLL_ALL_REDUCE || c == NCCL_COLL_REDUCE_SCATTER || c == NCCL_COLL_REDUCE;
}

bool nccl_coll_rooted(enum nccl_coll c) {
        return c == NCCL_COLL_BROADCAST || c == NCCL_COLL_REDUCE;
}

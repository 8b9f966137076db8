/* The collectives', element types' and operations' names and sizes (bench/collective.h):
 * part of the interface nccl_comm.c implements, which speaks them to NCCL. */
#include "bench/collective.h"
#include "core/name_table.h"

static const char *const coll_names[NCCL_COLL_COUNT] = {
        [NCCL_COLL_ALL_REDUCE] = "all_reduce", [NCCL_COLL_ALL_GATHER] = "all_gather",
        [NCCL_COLL_REDUCE_SCATTER] = "reduce_scatter", [NCCL_COLL_BROADCAST] = "broadcast",
        [NCCL_COLL_REDUCE] = "reduce", [NCCL_COLL_ALLTOALL] = "alltoall", [NCCL_COLL_SENDRECV] = "sendrecv",
};

static const char *const dtype_names[NCCL_DT_COUNT] = {
        [NCCL_DT_INT8] = "int8",       [NCCL_DT_UINT8] = "uint8",   [NCCL_DT_INT32] = "int32",
        [NCCL_DT_UINT32] = "uint32",   [NCCL_DT_INT64] = "int64",   [NCCL_DT_UINT64] = "uint64",
        [NCCL_DT_FLOAT16] = "half",    [NCCL_DT_FLOAT32] = "float", [NCCL_DT_FLOAT64] = "double",
        [NCCL_DT_BFLOAT16] = "bfloat16",
};

static const size_t dtype_sizes[NCCL_DT_COUNT] = {
        [NCCL_DT_INT8] = 1,    [NCCL_DT_UINT8] = 1,   [NCCL_DT_INT32] = 4,   [NCCL_DT_UINT32] = 4,
        [NCCL_DT_INT64] = 8,   [NCCL_DT_UINT64] = 8,  [NCCL_DT_FLOAT16] = 2, [NCCL_DT_FLOAT32] = 4,
        [NCCL_DT_FLOAT64] = 8, [NCCL_DT_BFLOAT16] = 2,
};

static const char *const redop_names[NCCL_OP_COUNT] = {"sum", "prod", "max", "min", "avg"};

_Static_assert(NCCL_COLL_INVALID == -1 && NCCL_DT_INVALID == -1 && NCCL_OP_INVALID == -1, "INVALID is -1");

/* name_table_value's -1 for a name it does not know is each enum's INVALID. */
const char *nccl_coll_name(enum nccl_coll c) { return name_table_name(coll_names, NCCL_COLL_COUNT, c); }

enum nccl_coll nccl_coll_from_name(const char *s) {
        return (enum nccl_coll)name_table_value(coll_names, NCCL_COLL_COUNT, s);
}

const char *nccl_dtype_name(enum nccl_dtype t) { return name_table_name(dtype_names, NCCL_DT_COUNT, t); }

enum nccl_dtype nccl_dtype_from_name(const char *s) {
        return (enum nccl_dtype)name_table_value(dtype_names, NCCL_DT_COUNT, s);
}

size_t nccl_dtype_size(enum nccl_dtype t) {
        return t >= 0 && t < NCCL_DT_COUNT ? dtype_sizes[t] : 0;
}

const char *nccl_redop_name(enum nccl_redop op) { return name_table_name(redop_names, NCCL_OP_COUNT, op); }

enum nccl_redop nccl_redop_from_name(const char *s) {
        return (enum nccl_redop)name_table_value(redop_names, NCCL_OP_COUNT, s);
}

bool nccl_coll_reduces(enum nccl_coll c) {
        return c == NCCL_COLL_ALL_REDUCE || c == NCCL_COLL_REDUCE_SCATTER || c == NCCL_COLL_REDUCE;
}

bool nccl_coll_rooted(enum nccl_coll c) {
        return c == NCCL_COLL_BROADCAST || c == NCCL_COLL_REDUCE;
}

/* bench/collective.h over NCCL (bindings/nccl.h). */
#include "bench/collective.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bindings/nccl.h"

_Static_assert(COLL_ID_BYTES == NCCL_UNIQUE_ID_BYTES, "the unique id's size is NCCL's");

struct coll_lib {
        struct nccl *nc;
};

struct coll_comm {
        struct coll_lib *lib;
        ncclComm_t comm;
        int rank, nranks, device;
};

int coll_lib_open(struct coll_lib **ret, char *err, size_t errsize) {
        *ret = NULL;
        struct coll_lib *lib = calloc(1, sizeof(*lib));
        if (!lib) {
                snprintf(err, errsize, "out of memory");
                return -ENOMEM;
        }
        int r = nccl_open(&lib->nc, err, errsize);
        if (r < 0) {
                free(lib);
                return r;
        }
        *ret = lib;
        return 0;
}

void coll_lib_close(struct coll_lib *lib) {
        if (!lib)
                return;
        nccl_close(lib->nc);
        free(lib);
}

void coll_lib_describe(const struct coll_lib *lib, char *buf, size_t size) {
        const struct nccl *nc = lib->nc;
        snprintf(buf, size, "NCCL %d.%d.%d (%s)", nc->major, nc->minor, nc->patch, nc->dl.name);
}

const char *coll_lib_error(const struct coll_lib *lib) {
        return lib->nc->err;
}

int coll_unique_id(struct coll_lib *lib, unsigned char id[COLL_ID_BYTES]) {
        ncclUniqueId uid;
        ncclResult_t rc = lib->nc->fn.ncclGetUniqueId(&uid);
        if (rc != ncclSuccess)
                return nccl_fail(lib->nc, "ncclGetUniqueId", rc, NULL, NULL);
        memcpy(id, uid.internal, COLL_ID_BYTES);
        return 0;
}

static struct coll_comm *comm_new(struct coll_lib *lib, ncclComm_t c, int rank, int nranks, int device) {
        struct coll_comm *comm = calloc(1, sizeof(*comm));
        if (comm)
                *comm = (struct coll_comm){.lib = lib, .comm = c, .rank = rank, .nranks = nranks, .device = device};
        return comm;
}

int coll_init_all(struct coll_lib *lib, const int *devices, int n, struct coll_comm **comms) {
        struct nccl *nc = lib->nc;
        if (n < 1)
                return -EINVAL;
        ncclComm_t *raw = calloc((size_t)n, sizeof(*raw));
        if (!raw)
                return -ENOMEM;
        ncclResult_t rc = nc->fn.ncclCommInitAll(raw, n, devices);
        if (rc != ncclSuccess) {
                char what[32];
                snprintf(what, sizeof(what), "%d devices", n);
                free(raw);
                return nccl_fail(nc, "ncclCommInitAll", rc, NULL, what);
        }
        for (int i = 0; i < n; i++) {
                comms[i] = comm_new(lib, raw[i], i, n, devices[i]);
                if (!comms[i]) {
                        for (int k = 0; k < n; k++) {
                                if (k < i)
                                        free(comms[k]);
                                (void)nc->fn.ncclCommAbort(raw[k]);
                                comms[k] = NULL;
                        }
                        free(raw);
                        snprintf(nc->err, sizeof(nc->err), "out of memory");
                        return -ENOMEM;
                }
        }
        free(raw);
        return 0;
}

int coll_init_rank(struct coll_lib *lib, const unsigned char id[COLL_ID_BYTES], int nranks, int rank, int device,
                   struct coll_comm **ret) {
        struct nccl *nc = lib->nc;
        *ret = NULL;
        ncclUniqueId uid;
        memcpy(uid.internal, id, COLL_ID_BYTES);
        ncclComm_t c = NULL;
        ncclResult_t rc = nc->fn.ncclCommInitRank(&c, nranks, uid, rank);
        if (rc != ncclSuccess) {
                char what[48];
                snprintf(what, sizeof(what), "rank %d of %d", rank, nranks);
                return nccl_fail(nc, "ncclCommInitRank", rc, NULL, what);
        }
        *ret = comm_new(lib, c, rank, nranks, device);
        if (!*ret) {
                (void)nc->fn.ncclCommAbort(c);
                snprintf(nc->err, sizeof(nc->err), "out of memory");
                return -ENOMEM;
        }
        return 0;
}

int coll_comm_destroy(struct coll_comm *comm) {
        if (!comm)
                return 0;
        struct nccl *nc = comm->lib->nc;
        ncclResult_t rc = nc->fn.ncclCommDestroy(comm->comm);
        int r = rc == ncclSuccess ? 0 : nccl_fail(nc, "ncclCommDestroy", rc, NULL, NULL);
        free(comm);
        return r;
}

void coll_comm_abort(struct coll_comm *comm) {
        if (!comm)
                return;
        (void)comm->lib->nc->fn.ncclCommAbort(comm->comm);
        free(comm);
}

int coll_comm_rank(const struct coll_comm *comm) {
        return comm->rank;
}

int coll_comm_check(struct coll_comm *comm) {
        struct nccl *nc = comm->lib->nc;
        ncclResult_t async = ncclSuccess;
        ncclResult_t rc = nc->fn.ncclCommGetAsyncError(comm->comm, &async);
        if (rc != ncclSuccess)
                return nccl_fail(nc, "ncclCommGetAsyncError", rc, comm->comm, NULL);
        if (async != ncclSuccess && async != ncclInProgress) {
                char what[48];
                snprintf(what, sizeof(what), "asynchronous error on rank %d", comm->rank);
                return nccl_fail(nc, "ncclCommGetAsyncError", async, comm->comm, what);
        }
        return 0;
}

int coll_group_start(struct coll_lib *lib) {
        ncclResult_t rc = lib->nc->fn.ncclGroupStart();
        return rc == ncclSuccess ? 0 : nccl_fail(lib->nc, "ncclGroupStart", rc, NULL, NULL);
}

int coll_group_end(struct coll_lib *lib) {
        ncclResult_t rc = lib->nc->fn.ncclGroupEnd();
        return rc == ncclSuccess ? 0 : nccl_fail(lib->nc, "ncclGroupEnd", rc, NULL, NULL);
}

/* Each peer's chunk of count elements, sent and received in one group (nccl-tests'
 * alltoall): chunk p of send goes to rank p, chunk p of recv comes from rank p. */
static ncclResult_t enqueue_alltoall(struct nccl *nc, const struct coll_comm *comm, const struct coll_call *call,
                                     const char **ret_fn) {
        size_t chunk = call->count * nccl_dtype_size(call->dtype);
        ncclResult_t rc;
        *ret_fn = "ncclGroupStart";
        if ((rc = nc->fn.ncclGroupStart()) != ncclSuccess)
                return rc;
        for (int p = 0; p < comm->nranks && rc == ncclSuccess; p++) {
                *ret_fn = "ncclSend";
                rc = nc->fn.ncclSend((const void *)(uintptr_t)(call->send + (uint64_t)p * chunk), call->count,
                                     (ncclDataType_t)call->dtype, p, comm->comm, call->stream);
                if (rc == ncclSuccess) {
                        *ret_fn = "ncclRecv";
                        rc = nc->fn.ncclRecv((void *)(uintptr_t)(call->recv + (uint64_t)p * chunk), call->count,
                                             (ncclDataType_t)call->dtype, p, comm->comm, call->stream);
                }
        }
        /* the group is closed even after a failed call, or the thread stays inside it */
        ncclResult_t end = nc->fn.ncclGroupEnd();
        if (rc == ncclSuccess && end != ncclSuccess) {
                *ret_fn = "ncclGroupEnd";
                rc = end;
        }
        return rc;
}

static ncclResult_t enqueue_sendrecv(struct nccl *nc, const struct coll_comm *comm, const struct coll_call *call,
                                     const char **ret_fn) {
        int next = (comm->rank + 1) % comm->nranks, prev = (comm->rank + comm->nranks - 1) % comm->nranks;
        ncclResult_t rc;
        *ret_fn = "ncclGroupStart";
        if ((rc = nc->fn.ncclGroupStart()) != ncclSuccess)
                return rc;
        *ret_fn = "ncclSend";
        rc = nc->fn.ncclSend((const void *)(uintptr_t)call->send, call->count, (ncclDataType_t)call->dtype, next,
                             comm->comm, call->stream);
        if (rc == ncclSuccess) {
                *ret_fn = "ncclRecv";
                rc = nc->fn.ncclRecv((void *)(uintptr_t)call->recv, call->count, (ncclDataType_t)call->dtype, prev,
                                     comm->comm, call->stream);
        }
        ncclResult_t end = nc->fn.ncclGroupEnd();
        if (rc == ncclSuccess && end != ncclSuccess) {
                *ret_fn = "ncclGroupEnd";
                rc = end;
        }
        return rc;
}

int coll_enqueue(struct coll_comm *comm, const struct coll_call *call) {
        struct nccl *nc = comm->lib->nc;
        const void *send = (const void *)(uintptr_t)call->send;
        void *recv = (void *)(uintptr_t)call->recv;
        ncclDataType_t t = (ncclDataType_t)call->dtype;
        ncclRedOp_t op = (ncclRedOp_t)call->op;
        const char *fn = nccl_coll_name(call->coll);
        ncclResult_t rc;
        switch (call->coll) {
        case NCCL_COLL_ALL_REDUCE:
                fn = "ncclAllReduce";
                rc = nc->fn.ncclAllReduce(send, recv, call->count, t, op, comm->comm, call->stream);
                break;
        case NCCL_COLL_ALL_GATHER:
                fn = "ncclAllGather";
                rc = nc->fn.ncclAllGather(send, recv, call->count, t, comm->comm, call->stream);
                break;
        case NCCL_COLL_REDUCE_SCATTER:
                fn = "ncclReduceScatter";
                rc = nc->fn.ncclReduceScatter(send, recv, call->count, t, op, comm->comm, call->stream);
                break;
        case NCCL_COLL_BROADCAST:
                fn = "ncclBroadcast";
                rc = nc->fn.ncclBroadcast(send, recv, call->count, t, call->root, comm->comm, call->stream);
                break;
        case NCCL_COLL_REDUCE:
                fn = "ncclReduce";
                rc = nc->fn.ncclReduce(send, recv, call->count, t, op, call->root, comm->comm, call->stream);
                break;
        case NCCL_COLL_ALLTOALL:
                rc = enqueue_alltoall(nc, comm, call, &fn);
                break;
        case NCCL_COLL_SENDRECV:
                rc = enqueue_sendrecv(nc, comm, call, &fn);
                break;
        default:
                snprintf(nc->err, sizeof(nc->err), "no collective %d", (int)call->coll);
                return -EINVAL;
        }
        if (rc == ncclSuccess)
                return 0;
        char what[48];
        snprintf(what, sizeof(what), "rank %d of %d", comm->rank, comm->nranks);
        return nccl_fail(nc, fn, rc, comm->comm, what);
}

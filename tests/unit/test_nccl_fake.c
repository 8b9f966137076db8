/* The fake libnccl.so.2 (tests/fakes/fake_nccl.c) driven through gpuvet's loader
 * (src/bindings/nccl.c) over the fake libcuda's streams, its results checked with
 * bench/nccl_math.h's expected values:
 * - every collective (all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall as
 *   grouped send/recv, sendrecv), out of place and in place, on 4 and 3 ranks of
 *   ncclCommInitAll, over every type and reduction;
 * - the stream clock: busbw computed with nccl-tests' formulas from events around each
 *   collective reads FAKE_NCCL_BUSBW_GBPS back;
 * - ncclCommInitRank joining 3 threads;
 * - ncclCommInitRank joining 2, 3 and 4 fork()ed processes (rank 0 makes the id and writes
 *   it to the others' pipes): each runs every collective in place and out of place over
 *   five type/reduction pairs, verified with nccl_verify, and reads busbw back from its own
 *   stream's clock; a process that exits after init makes its peers' next all_reduce end
 *   with ncclRemoteError rather than hang; FAKE_NCCL_WRONG in one rank's process (this
 *   program run again with --rank) corrupts that rank's outputs only; nothing of the fake
 *   stays in /dev/shm;
 * - the benchmark's flow: 3 processes find their ranks in the environment, rank 0's id goes
 *   through bench/rendezvous.h (a file), then ncclCommInitRank, an all_reduce verified, and
 *   every rank's result gathered to rank 0;
 * - each fault, in a fresh process (the fake reads its switches once): FAKE_NCCL_FAIL at
 *   ncclCommInitAll and at the 5th ncclAllReduce, FAKE_NCCL_WRONG caught by verification,
 *   FAKE_NCCL_HANG in ncclGroupEnd (the process never finishes: killed at a deadline),
 *   FAKE_NCCL_ASYNC seen through ncclCommGetAsyncError.
 *
 * usage: test_nccl_fake FAKE_LIBNCCL FAKE_LIBCUDA */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "bench/nccl_math.h"
#include "bench/rendezvous.h"
#include "bindings/cuda_api.h"
#include "bindings/nccl.h"
#include "timescale.h"

#define MAX_N 4

static char nccl_path[PATH_MAX], cuda_path[PATH_MAX];
static struct nccl *nc;

static struct {
        CUresult (*cuInit)(unsigned int);
        CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
        CUresult (*cuCtxSetCurrent)(CUcontext);
        CUresult (*cuStreamCreate)(CUstream *, unsigned int);
        CUresult (*cuStreamDestroy_v2)(CUstream);
        CUresult (*cuEventCreate)(CUevent *, unsigned int);
        CUresult (*cuEventRecord)(CUevent, CUstream);
        CUresult (*cuEventElapsedTime_v2)(float *, CUevent, CUevent);
        CUresult (*cuEventDestroy_v2)(CUevent);
} cu;

static CUstream streams[MAX_N];

static void load_cuda(void) {
        void *h = dlopen(cuda_path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
                fprintf(stderr, "%s: %s\n", cuda_path, dlerror());
                exit(2);
        }
#define SYM(n)                                                                                               \
        do {                                                                                                 \
                *(void **)&cu.n = dlsym(h, #n);                                                              \
                if (!cu.n) {                                                                                 \
                        fprintf(stderr, "%s: no %s\n", cuda_path, #n);                                       \
                        exit(2);                                                                             \
                }                                                                                            \
        } while (0)
        SYM(cuInit);
        SYM(cuDevicePrimaryCtxRetain);
        SYM(cuCtxSetCurrent);
        SYM(cuStreamCreate);
        SYM(cuStreamDestroy_v2);
        SYM(cuEventCreate);
        SYM(cuEventRecord);
        SYM(cuEventElapsedTime_v2);
        SYM(cuEventDestroy_v2);
#undef SYM
        if (cu.cuInit(0) != CUDA_SUCCESS) {
                fprintf(stderr, "fake cuInit failed\n");
                exit(2);
        }
        for (int d = 0; d < MAX_N; d++) {
                CUcontext ctx;
                if (cu.cuDevicePrimaryCtxRetain(&ctx, d) != CUDA_SUCCESS || cu.cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
                    cu.cuStreamCreate(&streams[d], 0) != CUDA_SUCCESS) {
                        fprintf(stderr, "fake libcuda: no stream on device %d\n", d);
                        exit(2);
                }
        }
}

static void open_nccl(void) {
        char err[1024];
        setenv("GPUVET_NCCL_LIB", nccl_path, 1);
        if (nccl_open(&nc, err, sizeof(err)) != 0) {
                fprintf(stderr, "%s\n", err);
                exit(2);
        }
}

/* NCCL's types are gpuvet's (bench/nccl_math.h mirrors them). */
static ncclDataType_t nt(enum nccl_dtype t) { return (ncclDataType_t)t; }
static ncclRedOp_t no(enum nccl_redop op) { return (ncclRedOp_t)op; }

#define CHECK_NCCL(call)                                                                                     \
        do {                                                                                                 \
                ncclResult_t rc_ = (call);                                                                   \
                if (rc_ != ncclSuccess)                                                                      \
                        fail_msg("%s: %s", #call, nccl_result_name(nc, rc_));                               \
        } while (0)

/* Rank r's calls of one collective (alltoall and sendrecv: its sends and receives). */
static ncclResult_t issue_rank(enum nccl_coll c, ncclComm_t comm, int n, int r, void *send, void *recv, size_t count,
                               enum nccl_dtype t, enum nccl_redop op, int root, CUstream stream) {
        size_t es = nccl_dtype_size(t);
        ncclResult_t rc = ncclSuccess;
        switch (c) {
        case NCCL_COLL_ALL_REDUCE:
                return nc->fn.ncclAllReduce(send, recv, count, nt(t), no(op), comm, stream);
        case NCCL_COLL_ALL_GATHER:
                return nc->fn.ncclAllGather(send, recv, count, nt(t), comm, stream);
        case NCCL_COLL_REDUCE_SCATTER:
                return nc->fn.ncclReduceScatter(send, recv, count, nt(t), no(op), comm, stream);
        case NCCL_COLL_BROADCAST:
                return nc->fn.ncclBroadcast(send, recv, count, nt(t), root, comm, stream);
        case NCCL_COLL_REDUCE:
                return nc->fn.ncclReduce(send, recv, count, nt(t), no(op), root, comm, stream);
        case NCCL_COLL_ALLTOALL: /* nccl-tests' alltoall: a send and a receive per peer */
                for (int p = 0; p < n && rc == ncclSuccess; p++) {
                        rc = nc->fn.ncclSend((char *)send + (size_t)p * count * es, count, nt(t), p, comm, stream);
                        if (rc == ncclSuccess)
                                rc = nc->fn.ncclRecv((char *)recv + (size_t)p * count * es, count, nt(t), p, comm,
                                                     stream);
                }
                return rc;
        case NCCL_COLL_SENDRECV:
                rc = nc->fn.ncclSend(send, count, nt(t), (r + 1) % n, comm, stream);
                if (rc == ncclSuccess)
                        rc = nc->fn.ncclRecv(recv, count, nt(t), (r + n - 1) % n, comm, stream);
                return rc;
        default:
                return ncclInvalidArgument;
        }
}

/* One collective on every rank, issued from this thread in one group. send[r] and recv[r]
 * hold k's send_count and recv_count elements; in place, send[r] points into recv[r]. */
static ncclResult_t issue(enum nccl_coll c, ncclComm_t *comms, int n, void **send, void **recv, size_t count,
                          enum nccl_dtype t, enum nccl_redop op, int root) {
        ncclResult_t rc = nc->fn.ncclGroupStart();
        if (rc != ncclSuccess)
                return rc;
        for (int r = 0; r < n && rc == ncclSuccess; r++)
                rc = issue_rank(c, comms[r], n, r, send[r], recv[r], count, t, op, root, streams[r]);
        ncclResult_t end = nc->fn.ncclGroupEnd();
        return rc != ncclSuccess ? rc : end;
}

/* Fill, run, verify every rank: the number of wrong elements over all ranks. */
static size_t run_and_verify(enum nccl_coll c, ncclComm_t *comms, int n, size_t bytes, enum nccl_dtype t,
                             enum nccl_redop op, int root, bool in_place) {
        struct nccl_counts k;
        size_t es = nccl_dtype_size(t);
        assert_int_equal(nccl_counts(c, bytes, es, n, &k), 0);
        /* nccl-tests' buffers: both of max(send, recv) elements, so that in place the receive
         * buffer holds reduce_scatter's whole input and all_gather's whole output */
        size_t elems = k.send_count > k.recv_count ? k.send_count : k.recv_count;
        void *sendbuf[MAX_N], *recvbuf[MAX_N], *send[MAX_N];
        for (int r = 0; r < n; r++) {
                sendbuf[r] = calloc(elems + 1, es);
                recvbuf[r] = calloc(elems + 1, es);
                assert_non_null(sendbuf[r]);
                assert_non_null(recvbuf[r]);
                memset(recvbuf[r], 0xa5, k.recv_count * es);
                send[r] = in_place ? (char *)recvbuf[r] + (size_t)r * k.send_inplace_offset * es : sendbuf[r];
                nccl_fill(send[r], t, op, r, 0, k.send_count);
        }
        void *recv[MAX_N];
        for (int r = 0; r < n; r++)
                recv[r] = in_place ? (char *)recvbuf[r] + (size_t)r * k.recv_inplace_offset * es : recvbuf[r];
        CHECK_NCCL(issue(c, comms, n, send, recv, k.count, t, op, root));
        size_t bad = 0;
        for (int r = 0; r < n; r++) {
                if (c == NCCL_COLL_REDUCE && r != root)
                        continue;
                size_t first;
                size_t b = nccl_verify(recv[r], t, c, op, n, r, root, k.count, k.recv_count, &first);
                if (b)
                        printf("# %s %s %s n=%d rank %d%s: %zu wrong, first at %zu\n", nccl_coll_name(c),
                               nccl_dtype_name(t), nccl_redop_name(op), n, r, in_place ? " in place" : "", b, first);
                bad += b;
        }
        for (int r = 0; r < n; r++) {
                free(sendbuf[r]);
                free(recvbuf[r]);
        }
        return bad;
}

static void init_all(ncclComm_t *comms, int n) {
        int devs[MAX_N] = {0, 1, 2, 3};
        CHECK_NCCL(nc->fn.ncclCommInitAll(comms, n, devs));
}

static void destroy_all(ncclComm_t *comms, int n) {
        for (int r = 0; r < n; r++)
                CHECK_NCCL(nc->fn.ncclCommDestroy(comms[r]));
}

static void test_every_collective(void **state) {
        (void)state;
        for (int n = 3; n <= 4; n++) {
                ncclComm_t comms[MAX_N];
                init_all(comms, n);
                int count = 0, rank = -1;
                CHECK_NCCL(nc->fn.ncclCommCount(comms[n - 1], &count));
                CHECK_NCCL(nc->fn.ncclCommUserRank(comms[n - 1], &rank));
                assert_int_equal(count, n);
                assert_int_equal(rank, n - 1);
                size_t runs = 0;
                for (int c = 0; c < NCCL_COLL_COUNT; c++)
                        for (int t = 0; t < NCCL_DT_COUNT; t++)
                                for (int op = 0; op < NCCL_OP_COUNT; op++) {
                                        if (!nccl_coll_reduces((enum nccl_coll)c) && op > 0)
                                                continue;
                                        for (int ip = 0; ip < 2; ip++) {
                                                /* alltoall and sendrecv: no in-place form in nccl-tests' sense */
                                                if (ip && (c == NCCL_COLL_ALLTOALL || c == NCCL_COLL_SENDRECV))
                                                        continue;
                                                int root = nccl_coll_rooted((enum nccl_coll)c) ? n - 1 : 0;
                                                assert_int_equal(run_and_verify((enum nccl_coll)c, comms, n, 4096,
                                                                                (enum nccl_dtype)t, (enum nccl_redop)op,
                                                                                root, ip),
                                                                 0);
                                                runs++;
                                        }
                                }
                printf("# %d ranks: %zu collective runs verified\n", n, runs);
                ncclResult_t async = ncclInternalError;
                CHECK_NCCL(nc->fn.ncclCommGetAsyncError(comms[0], &async));
                assert_int_equal(async, ncclSuccess);
                destroy_all(comms, n);
        }
}

/* busbw from events around each collective = FAKE_NCCL_BUSBW_GBPS (100, latency 0: main). */
static void test_clock(void **state) {
        (void)state;
        ncclComm_t comms[MAX_N];
        int n = 4;
        init_all(comms, n);
        for (int c = 0; c < NCCL_COLL_COUNT; c++) {
                struct nccl_counts k;
                assert_int_equal(nccl_counts((enum nccl_coll)c, 1 << 22, 4, n, &k), 0);
                void *s[MAX_N], *r[MAX_N];
                for (int i = 0; i < n; i++) {
                        s[i] = calloc(k.send_count, 4);
                        r[i] = calloc(k.recv_count, 4);
                }
                CUevent a, b;
                assert_int_equal(cu.cuEventCreate(&a, 0), CUDA_SUCCESS);
                assert_int_equal(cu.cuEventCreate(&b, 0), CUDA_SUCCESS);
                assert_int_equal(cu.cuEventRecord(a, streams[0]), CUDA_SUCCESS);
                CHECK_NCCL(issue((enum nccl_coll)c, comms, n, s, r, k.count, NCCL_DT_FLOAT32, NCCL_OP_SUM, 0));
                assert_int_equal(cu.cuEventRecord(b, streams[0]), CUDA_SUCCESS);
                float ms = 0;
                assert_int_equal(cu.cuEventElapsedTime_v2(&ms, a, b), CUDA_SUCCESS);
                double alg, bus;
                assert_int_equal(nccl_bandwidth((enum nccl_coll)c, k.count, 4, n, ms / 1e3, &alg, &bus), 0);
                printf("# %s: %zu bytes in %.4f ms: algbw %.2f busbw %.2f GB/s\n", nccl_coll_name((enum nccl_coll)c),
                       k.bytes, ms, alg, bus);
                if (bus < 99.9 || bus > 100.1)
                        fail_msg("%s: busbw %.3f GB/s, the fake runs at 100", nccl_coll_name((enum nccl_coll)c), bus);
                (void)cu.cuEventDestroy_v2(a);
                (void)cu.cuEventDestroy_v2(b);
                for (int i = 0; i < n; i++) {
                        free(s[i]);
                        free(r[i]);
                }
        }
        destroy_all(comms, n);
}

/* ncclCommInitRank: 3 threads join one id, then each runs its all_reduce outside a group. */
static pthread_barrier_t queued;

struct rank_arg {
        ncclUniqueId id;
        int rank;
        ncclResult_t rc;
        size_t bad;
};

static void *rank_main(void *p) {
        struct rank_arg *a = p;
        ncclComm_t comm = NULL;
        a->rc = nc->fn.ncclCommInitRank(&comm, 3, a->id, a->rank);
        if (a->rc != ncclSuccess)
                return NULL;
        float send[64], recv[64] = {0};
        nccl_fill(send, NCCL_DT_FLOAT32, NCCL_OP_SUM, a->rank, 0, 64);
        a->rc = nc->fn.ncclAllReduce(send, recv, 64, ncclFloat32, ncclSum, comm, streams[a->rank]);
        /* the fake runs it inside the last rank's call: once all three have returned, it has
         * run (where a real NCCL would need a stream synchronisation) */
        pthread_barrier_wait(&queued);
        if (a->rc == ncclSuccess) {
                size_t first;
                a->bad = nccl_verify(recv, NCCL_DT_FLOAT32, NCCL_COLL_ALL_REDUCE, NCCL_OP_SUM, 3, a->rank, 0, 64, 64,
                                     &first);
        }
        ncclResult_t d = nc->fn.ncclCommDestroy(comm);
        if (a->rc == ncclSuccess)
                a->rc = d;
        return NULL;
}

static void test_init_rank_threads(void **state) {
        (void)state;
        ncclUniqueId id;
        CHECK_NCCL(nc->fn.ncclGetUniqueId(&id));
        pthread_t th[3];
        struct rank_arg args[3];
        for (int r = 0; r < 3; r++) {
                memset(&args[r], 0, sizeof(args[r]));
                args[r].id = id;
                args[r].rank = r;
        }
        assert_int_equal(pthread_barrier_init(&queued, NULL, 3), 0);
        for (int r = 0; r < 3; r++)
                assert_int_equal(pthread_create(&th[r], NULL, rank_main, &args[r]), 0);
        for (int r = 0; r < 3; r++) {
                assert_int_equal(pthread_join(th[r], NULL), 0);
                assert_int_equal(args[r].rc, ncclSuccess);
                assert_int_equal(args[r].bad, 0);
        }
        pthread_barrier_destroy(&queued);
}

/* ---- ranks in separate processes: ncclCommInitRank across fork()ed children --------------- */

static const struct {
        enum nccl_dtype t;
        enum nccl_redop op;
} proc_cases[] = {
        {NCCL_DT_FLOAT32, NCCL_OP_SUM}, {NCCL_DT_INT64, NCCL_OP_MAX},  {NCCL_DT_BFLOAT16, NCCL_OP_AVG},
        {NCCL_DT_FLOAT16, NCCL_OP_MIN}, {NCCL_DT_UINT8, NCCL_OP_PROD},
};

/* This process' rank of one collective, filled, run and verified: the wrong elements. */
static size_t proc_run_verify(enum nccl_coll c, ncclComm_t comm, int n, int rank, size_t bytes, enum nccl_dtype t,
                              enum nccl_redop op, int root, bool in_place) {
        struct nccl_counts k;
        size_t es = nccl_dtype_size(t);
        if (nccl_counts(c, bytes, es, n, &k) != 0)
                return SIZE_MAX;
        size_t elems = k.send_count > k.recv_count ? k.send_count : k.recv_count;
        char *sendbuf = calloc(elems + 1, es), *recvbuf = calloc(elems + 1, es);
        if (!sendbuf || !recvbuf)
                return SIZE_MAX;
        memset(recvbuf, 0xa5, k.recv_count * es);
        char *send = in_place ? recvbuf + (size_t)rank * k.send_inplace_offset * es : sendbuf;
        char *recv = in_place ? recvbuf + (size_t)rank * k.recv_inplace_offset * es : recvbuf;
        nccl_fill(send, t, op, rank, 0, k.send_count);
        ncclResult_t rc = nc->fn.ncclGroupStart();
        if (rc == ncclSuccess)
                rc = issue_rank(c, comm, n, rank, send, recv, k.count, t, op, root, streams[rank]);
        ncclResult_t end = nc->fn.ncclGroupEnd();
        size_t bad = SIZE_MAX, first;
        if (rc == ncclSuccess && end == ncclSuccess)
                bad = c == NCCL_COLL_REDUCE && rank != root
                              ? 0
                              : nccl_verify(recv, t, c, op, n, rank, root, k.count, k.recv_count, &first);
        if (bad)
                fprintf(stderr, "# rank %d of %d: %s %s %s%s: %zu wrong\n", rank, n, nccl_coll_name(c),
                        nccl_dtype_name(t), nccl_redop_name(op), in_place ? " in place" : "", bad);
        free(sendbuf);
        free(recvbuf);
        return bad;
}

/* busbw from events around a 4 MiB collective on this rank's stream: the fake's 100 GB/s. */
static int proc_clock(ncclComm_t comm, int n, int rank) {
        for (int c = 0; c < NCCL_COLL_COUNT; c++) {
                struct nccl_counts k;
                if (nccl_counts((enum nccl_coll)c, 1 << 22, 4, n, &k) != 0)
                        return 1;
                float *s = calloc(k.send_count, 4), *r = calloc(k.recv_count, 4);
                CUevent a, b;
                if (!s || !r || cu.cuEventCreate(&a, 0) != CUDA_SUCCESS || cu.cuEventCreate(&b, 0) != CUDA_SUCCESS)
                        return 1;
                (void)cu.cuEventRecord(a, streams[rank]);
                ncclResult_t rc = nc->fn.ncclGroupStart();
                if (rc == ncclSuccess)
                        rc = issue_rank((enum nccl_coll)c, comm, n, rank, s, r, k.count, NCCL_DT_FLOAT32, NCCL_OP_SUM, 0,
                                        streams[rank]);
                if (nc->fn.ncclGroupEnd() != ncclSuccess || rc != ncclSuccess)
                        return 1;
                (void)cu.cuEventRecord(b, streams[rank]);
                float ms = 0;
                double alg, bus;
                if (cu.cuEventElapsedTime_v2(&ms, a, b) != CUDA_SUCCESS ||
                    nccl_bandwidth((enum nccl_coll)c, k.count, 4, n, ms / 1e3, &alg, &bus) != 0)
                        return 1;
                if (bus < 99.9 || bus > 100.1) {
                        fprintf(stderr, "# rank %d of %d: %s busbw %.3f GB/s, the fake runs at 100\n", rank, n,
                                nccl_coll_name((enum nccl_coll)c), bus);
                        return 1;
                }
                (void)cu.cuEventDestroy_v2(a);
                (void)cu.cuEventDestroy_v2(b);
                free(s);
                free(r);
        }
        return 0;
}

enum proc_plan { PROC_ALL, PROC_PEER_DIES };

/* A rank in a child: its id from rank 0 (rank 0 makes it and writes it to every other rank's
 * pipe, and to the parent's, pipes[0]), then its work. The exit status: 0, or the step that
 * failed. */
static int proc_rank(int n, int rank, int (*pipes)[2], enum proc_plan plan) {
        ncclUniqueId id;
        if (rank == 0) {
                if (nc->fn.ncclGetUniqueId(&id) != ncclSuccess)
                        return 10;
                for (int r = 0; r < n; r++)
                        if (write(pipes[r][1], &id, sizeof(id)) != (ssize_t)sizeof(id))
                                return 11;
        } else if (read(pipes[rank][0], &id, sizeof(id)) != (ssize_t)sizeof(id)) {
                return 12;
        }
        ncclComm_t comm;
        if (nc->fn.ncclCommInitRank(&comm, n, id, rank) != ncclSuccess)
                return 13;
        int count = 0, me = -1;
        if (nc->fn.ncclCommCount(comm, &count) != ncclSuccess || count != n ||
            nc->fn.ncclCommUserRank(comm, &me) != ncclSuccess || me != rank)
                return 14;
        if (plan == PROC_PEER_DIES) {
                if (rank == n - 1)
                        _exit(0); /* gone without a word: no destroy, no abort */
                float x[64] = {0}, y[64];
                if (nc->fn.ncclAllReduce(x, y, 64, ncclFloat32, ncclSum, comm, streams[rank]) != ncclSuccess)
                        return 15;
                ncclResult_t async = ncclSuccess;
                if (nc->fn.ncclCommGetAsyncError(comm, &async) != ncclSuccess || async != ncclRemoteError)
                        return 16;
                return nc->fn.ncclCommAbort(comm) == ncclSuccess ? 0 : 17;
        }
        for (int c = 0; c < NCCL_COLL_COUNT; c++)
                for (size_t i = 0; i < sizeof(proc_cases) / sizeof(proc_cases[0]); i++) {
                        enum nccl_redop op = nccl_coll_reduces((enum nccl_coll)c) ? proc_cases[i].op : NCCL_OP_SUM;
                        int root = nccl_coll_rooted((enum nccl_coll)c) ? n - 1 : 0;
                        for (int ip = 0; ip < 2; ip++) {
                                if (ip && (c == NCCL_COLL_ALLTOALL || c == NCCL_COLL_SENDRECV))
                                        continue;
                                if (proc_run_verify((enum nccl_coll)c, comm, n, rank, 4096, proc_cases[i].t, op, root,
                                                    ip) != 0)
                                        return 20 + c;
                        }
                }
        if (proc_clock(comm, n, rank) != 0)
                return 30;
        ncclResult_t async = ncclInternalError;
        if (nc->fn.ncclCommGetAsyncError(comm, &async) != ncclSuccess || async != ncclSuccess)
                return 31;
        return nc->fn.ncclCommDestroy(comm) == ncclSuccess ? 0 : 32;
}

/* Whether the shared memory object of id is still in /dev/shm (its name is id's bytes; other
 * runs of this test may have theirs there meanwhile). */
static bool shm_left(const ncclUniqueId *id) {
        char path[sizeof(id->internal) + 16];
        assert_true(strncmp(id->internal, "/fake-nccl-", 11) == 0);
        snprintf(path, sizeof(path), "/dev/shm%.*s", (int)sizeof(id->internal), id->internal);
        return access(path, F_OK) == 0;
}

/* Fork n ranks; their exit statuses into status (-1: killed at the deadline); the id rank 0
 * made into *ret_id. */
static void run_ranks(int n, enum proc_plan plan, int *status, ncclUniqueId *ret_id) {
        int pipes[MAX_N][2];
        for (int r = 0; r < n; r++)
                assert_int_equal(pipe(pipes[r]), 0);
        fflush(stdout);
        fflush(stderr);
        pid_t pids[MAX_N];
        for (int r = 0; r < n; r++) {
                pids[r] = fork();
                assert_true(pids[r] >= 0);
                if (pids[r] == 0)
                        _exit(proc_rank(n, r, pipes, plan));
        }
        for (int r = 0; r < n; r++) {
                if (r)
                        close(pipes[r][0]);
                close(pipes[r][1]);
        }
        memset(ret_id, 0, sizeof(*ret_id));
        assert_int_equal(read(pipes[0][0], ret_id, sizeof(*ret_id)), sizeof(*ret_id));
        close(pipes[0][0]);
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int r = 0; r < n; r++) {
                int st;
                for (;;) {
                        pid_t w = waitpid(pids[r], &st, WNOHANG);
                        if (w == pids[r]) {
                                status[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                                break;
                        }
                        clock_gettime(CLOCK_MONOTONIC, &t);
                        if ((t.tv_sec - t0.tv_sec) * 1000 > (long long)SCALED_MS(30000)) {
                                for (int k = 0; k < n; k++)
                                        kill(pids[k], SIGKILL);
                                waitpid(pids[r], &st, 0);
                                status[r] = -1;
                                break;
                        }
                        usleep(5000);
                }
        }
}

static void test_processes(void **state) {
        (void)state;
        ncclUniqueId a, b;
        CHECK_NCCL(nc->fn.ncclGetUniqueId(&a));
        CHECK_NCCL(nc->fn.ncclGetUniqueId(&b));
        assert_true(memcmp(&a, &b, sizeof(a)) != 0); /* fresh per call */
        for (int n = 2; n <= MAX_N; n++) {
                int status[MAX_N];
                ncclUniqueId id;
                run_ranks(n, PROC_ALL, status, &id);
                for (int r = 0; r < n; r++)
                        if (status[r] != 0)
                                fail_msg("%d processes: rank %d ended with %d", n, r, status[r]);
                assert_false(shm_left(&id));
                printf("# %d processes: every collective verified, busbw read back\n", n);
        }
}

/* A rank's process exits after init: the others' next collective does not hang, their comm
 * reports ncclRemoteError, and nothing stays in /dev/shm. */
static void test_process_dies(void **state) {
        (void)state;
        int status[MAX_N];
        ncclUniqueId id;
        run_ranks(3, PROC_PEER_DIES, status, &id);
        for (int r = 0; r < 3; r++)
                if (status[r] != 0)
                        fail_msg("rank %d ended with %d", r, status[r]);
        assert_false(shm_left(&id));
}

/* The benchmark's flow on these foundations: ranks from the launcher's environment, rank
 * 0's id through the rendezvous (a file here: no port to agree on), ncclCommInitRank, an
 * all_reduce verified, each rank's result (or error) gathered to rank 0. A template for
 * `bench nccl`. The exit status: 0, or the step that failed. */
static int rdv_rank(int rank, int n, const char *spec) {
        char e[512], vars[4][64];
        snprintf(vars[0], sizeof(vars[0]), "GPUVET_RANK=%d", rank);
        snprintf(vars[1], sizeof(vars[1]), "GPUVET_WORLD_SIZE=%d", n);
        snprintf(vars[2], sizeof(vars[2]), "GPUVET_JOB_KEY=fake-nccl-test");
        snprintf(vars[3], sizeof(vars[3]), "GPUVET_RENDEZVOUS=%s", spec);
        const char *envp[] = {vars[0], vars[1], vars[2], vars[3], NULL};
        struct rdv_ranks ranks;
        struct rdv_address addr;
        struct rdv_session *s;
        if (rdv_ranks_from_env(envp, &ranks, e, sizeof(e)) < 0 || rdv_address_default(envp, &ranks, &addr, e, sizeof(e)) < 0 ||
            rdv_open(&ranks, &addr, &s, e, sizeof(e)) < 0)
                return 40;
        ncclUniqueId id;
        size_t len = sizeof(id);
        if (ranks.rank == 0 && nc->fn.ncclGetUniqueId(&id) != ncclSuccess)
                return 41;
        if (rdv_share(s, &id, &len, sizeof(id), (unsigned)SCALED_MS(30000), e, sizeof(e)) < 0 || len != sizeof(id))
                return 42;
        ncclComm_t comm;
        if (nc->fn.ncclCommInitRank(&comm, ranks.size, id, ranks.rank) != ncclSuccess)
                return 43;
        size_t bad = proc_run_verify(NCCL_COLL_ALL_REDUCE, comm, n, rank, 1 << 16, NCCL_DT_FLOAT32, NCCL_OP_SUM, 0, false);
        char result[64];
        snprintf(result, sizeof(result), "rank %d: %zu wrong", rank, bad);
        struct rdv_gathered g;
        int rc = rdv_gather(s, bad == 0, result, strlen(result), &g, (unsigned)SCALED_MS(30000), e, sizeof(e));
        if (rc == 0 && rank == 0)
                for (int r = 0; r < n; r++) {
                        char want[64];
                        snprintf(want, sizeof(want), "rank %d: 0 wrong", r);
                        if (g.ranks[r].state != RDV_RANK_OK || strcmp((const char *)g.ranks[r].data, want) != 0)
                                rc = -1;
                }
        rdv_gathered_free(&g);
        rdv_close(s);
        if (rc < 0)
                return 44;
        return nc->fn.ncclCommDestroy(comm) == ncclSuccess ? 0 : 45;
}

static void test_rendezvous_then_nccl(void **state) {
        (void)state;
        char dir[] = "/tmp/gpuvet-nccl-rdv-XXXXXX", spec[64];
        assert_non_null(mkdtemp(dir));
        snprintf(spec, sizeof(spec), "file:%s/id", dir);
        enum { N = 3 };
        pid_t pids[N];
        fflush(stdout);
        for (int r = 0; r < N; r++) {
                pids[r] = fork();
                assert_true(pids[r] >= 0);
                if (pids[r] == 0)
                        _exit(rdv_rank(r, N, spec));
        }
        for (int r = 0; r < N; r++) {
                int st;
                assert_int_equal(waitpid(pids[r], &st, 0), pids[r]);
                if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                        fail_msg("rank %d ended with %d", r, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
        }
        assert_int_equal(rmdir(dir), 0); /* empty: the rendezvous removed its files */
}

/* A rank run as this program again (--rank R N ID), so that it reads the fake's switches from
 * its own environment: all_reduce and all_gather out of place, then "wrong A G" (the elements
 * each got wrong) on stdout. */
static int exec_rank_main(int rank, int n, const char *hex) {
        ncclUniqueId id;
        memset(&id, 0, sizeof(id));
        for (size_t i = 0; i < sizeof(id.internal) && hex[2 * i] && hex[2 * i + 1]; i++) {
                unsigned v;
                if (sscanf(hex + 2 * i, "%2x", &v) != 1)
                        return 2;
                id.internal[i] = (char)v;
        }
        ncclComm_t comm;
        if (nc->fn.ncclCommInitRank(&comm, n, id, rank) != ncclSuccess)
                return 3;
        size_t a = proc_run_verify(NCCL_COLL_ALL_REDUCE, comm, n, rank, 4096, NCCL_DT_INT32, NCCL_OP_SUM, 0, false);
        size_t g = proc_run_verify(NCCL_COLL_ALL_GATHER, comm, n, rank, 4096, NCCL_DT_INT32, NCCL_OP_SUM, 0, false);
        printf("wrong %zu %zu\n", a, g);
        return nc->fn.ncclCommDestroy(comm) == ncclSuccess ? 0 : 4;
}

/* FAKE_NCCL_WRONG=1 in one rank's process only: that rank's outputs are wrong, the others'
 * right, as each process reads its own switches. */
static void test_process_switches(void **state) {
        (void)state;
        ncclUniqueId id;
        CHECK_NCCL(nc->fn.ncclGetUniqueId(&id));
        char hex[2 * sizeof(id.internal) + 1] = "";
        for (size_t i = 0; i < strlen(id.internal); i++)
                snprintf(hex + 2 * i, 3, "%02x", (unsigned char)id.internal[i]);
        enum { N = 3 };
        int out[N];
        pid_t pids[N];
        fflush(stdout);
        for (int r = 0; r < N; r++) {
                int fds[2];
                assert_int_equal(pipe(fds), 0);
                pids[r] = fork();
                assert_true(pids[r] >= 0);
                if (pids[r] == 0) {
                        close(fds[0]);
                        dup2(fds[1], 1);
                        if (r == 1)
                                setenv("FAKE_NCCL_WRONG", "1", 1);
                        char rank[16], n[16];
                        snprintf(rank, sizeof(rank), "%d", r);
                        snprintf(n, sizeof(n), "%d", N);
                        execl("/proc/self/exe", "test_nccl_fake", nccl_path, cuda_path, "--rank", rank, n, hex,
                              (char *)NULL);
                        _exit(127);
                }
                close(fds[1]);
                out[r] = fds[0];
        }
        for (int r = 0; r < N; r++) {
                char buf[256] = "";
                size_t got = 0;
                ssize_t k;
                while (got < sizeof(buf) - 1 && (k = read(out[r], buf + got, sizeof(buf) - 1 - got)) > 0)
                        got += (size_t)k;
                close(out[r]);
                int st;
                assert_int_equal(waitpid(pids[r], &st, 0), pids[r]);
                assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
                /* one flipped byte per output: one element */
                assert_string_equal(buf, r == 1 ? "wrong 1 1\n" : "wrong 0 0\n");
        }
        assert_false(shm_left(&id));
}

/* ---- faults, each in a fresh process: this program run again with --fault NAME ------------ */

static int fault_main(const char *name) {
        ncclComm_t comms[MAX_N];
        int devs[MAX_N] = {0, 1, 2, 3};
        if (strcmp(name, "init") == 0) {
                ncclResult_t rc = nc->fn.ncclCommInitAll(comms, 4, devs);
                int e = nccl_fail(nc, "ncclCommInitAll", rc, NULL, NULL);
                printf("%d %s\n", e, nc->err);
                return 0;
        }
        if (nc->fn.ncclCommInitAll(comms, 4, devs) != ncclSuccess)
                return 3;
        if (strcmp(name, "fail2") == 0) {
                /* the first all_reduce (4 calls, one per rank) works, the 5th call fails */
                size_t bad = run_and_verify(NCCL_COLL_ALL_REDUCE, comms, 4, 1024, NCCL_DT_FLOAT32, NCCL_OP_SUM, 0, false);
                float x[4] = {0}, y[4];
                ncclResult_t rc = nc->fn.ncclAllReduce(x, y, 4, ncclFloat32, ncclSum, comms[0], streams[0]);
                int e = nccl_fail(nc, "ncclAllReduce", rc, comms[0], NULL);
                printf("%zu %d %s\n", bad, e, nc->err);
                return 0;
        }
        if (strcmp(name, "wrong") == 0) {
                for (int c = 0; c < NCCL_COLL_COUNT; c++)
                        printf("%s %zu\n", nccl_coll_name((enum nccl_coll)c),
                               run_and_verify((enum nccl_coll)c, comms, 4, 4096, NCCL_DT_INT32, NCCL_OP_SUM, 0, false));
                return 0;
        }
        if (strcmp(name, "hang") == 0) {
                printf("before\n");
                fflush(stdout);
                (void)run_and_verify(NCCL_COLL_ALL_REDUCE, comms, 4, 1024, NCCL_DT_FLOAT32, NCCL_OP_SUM, 0, false);
                printf("returned\n");
                return 0;
        }
        if (strcmp(name, "async") == 0) {
                ncclResult_t e0 = ncclInternalError, e1 = ncclInternalError;
                if (nc->fn.ncclCommGetAsyncError(comms[2], &e0) != ncclSuccess)
                        return 4;
                (void)run_and_verify(NCCL_COLL_ALL_REDUCE, comms, 4, 1024, NCCL_DT_FLOAT32, NCCL_OP_SUM, 0, false);
                if (nc->fn.ncclCommGetAsyncError(comms[2], &e1) != ncclSuccess)
                        return 4;
                printf("%d %d\n", (int)e0, (int)e1);
                for (int r = 0; r < 4; r++)
                        if (nc->fn.ncclCommAbort(comms[r]) != ncclSuccess)
                                return 5;
                return 0;
        }
        return 2;
}

/* Run --fault NAME with VAR=VALUE; its stdout into out; the exit status, or -1 when it had
 * not finished after deadline_ms (then killed). */
static int run_fault(const char *name, const char *var, const char *value, int deadline_ms, char *out, size_t size) {
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        fflush(stdout);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                close(fds[0]);
                dup2(fds[1], 1);
                setenv(var, value, 1);
                execl("/proc/self/exe", "test_nccl_fake", nccl_path, cuda_path, "--fault", name, (char *)NULL);
                _exit(127);
        }
        close(fds[1]);
        int status = 0, waited = 0;
        while (waitpid(pid, &status, WNOHANG) == 0) {
                if (waited >= deadline_ms) {
                        kill(pid, SIGKILL);
                        waitpid(pid, &status, 0);
                        status = -1;
                        break;
                }
                usleep(10000);
                waited += 10;
        }
        ssize_t n = read(fds[0], out, size - 1);
        out[n > 0 ? n : 0] = 0;
        close(fds[0]);
        return status == -1 ? -1 : (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

static void test_fault_init(void **state) {
        (void)state;
        char out[2048];
        assert_int_equal(run_fault("init", "FAKE_NCCL_FAIL", "ncclCommInitAll:ncclSystemError", 10000, out, sizeof(out)), 0);
        assert_non_null(strstr(out, "-5 ncclCommInitAll: ncclSystemError (2)"));
}

static void test_fault_second_call(void **state) {
        (void)state;
        char out[2048];
        assert_int_equal(run_fault("fail2", "FAKE_NCCL_FAIL", "ncclAllReduce:ncclUnhandledCudaError:call=5", 10000, out,
                                   sizeof(out)),
                         0);
        /* the first verified clean, the second failed with the fake's last error */
        assert_non_null(strstr(out, "0 -5 ncclAllReduce: ncclUnhandledCudaError (1): fake NCCL"));
}

static void test_fault_wrong(void **state) {
        (void)state;
        char out[2048];
        assert_int_equal(run_fault("wrong", "FAKE_NCCL_WRONG", "1", 10000, out, sizeof(out)), 0);
        /* one element per written output: every rank (reduce: the root only) */
        assert_non_null(strstr(out, "all_reduce 4\n"));
        assert_non_null(strstr(out, "all_gather 4\n"));
        assert_non_null(strstr(out, "reduce_scatter 4\n"));
        assert_non_null(strstr(out, "broadcast 4\n"));
        assert_non_null(strstr(out, "reduce 1\n"));
        assert_non_null(strstr(out, "alltoall 16\n")); /* a chunk per peer */
        assert_non_null(strstr(out, "sendrecv 4\n"));
}

static void test_fault_hang(void **state) {
        (void)state;
        char out[2048];
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        assert_int_equal(run_fault("hang", "FAKE_NCCL_HANG", "ncclGroupEnd", 500, out, sizeof(out)), -1);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        assert_string_equal(out, "before\n");
        assert_true(t1.tv_sec - t0.tv_sec < 5);
}

static void test_fault_async(void **state) {
        (void)state;
        char out[2048];
        assert_int_equal(run_fault("async", "FAKE_NCCL_ASYNC", "ncclRemoteError:after=1", 10000, out, sizeof(out)), 0);
        assert_string_equal(out, "0 6\n");
}

int main(int argc, char **argv) {
        if (argc < 3) {
                fprintf(stderr, "usage: %s FAKE_LIBNCCL FAKE_LIBCUDA\n", argv[0]);
                return 2;
        }
        if (!realpath(argv[1], nccl_path) || !realpath(argv[2], cuda_path)) {
                perror("realpath");
                return 2;
        }
        setenv("FAKE_CUDA_DEVICES", "4", 1);
        setenv("FAKE_NCCL_BUSBW_GBPS", "100", 1);
        setenv("FAKE_NCCL_LAT_US", "0", 1);
        load_cuda();
        open_nccl();
        if (argc == 5 && strcmp(argv[3], "--fault") == 0)
                return fault_main(argv[4]);
        if (argc == 7 && strcmp(argv[3], "--rank") == 0)
                return exec_rank_main(atoi(argv[4]), atoi(argv[5]), argv[6]);
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_every_collective),  cmocka_unit_test(test_clock),
                cmocka_unit_test(test_init_rank_threads), cmocka_unit_test(test_processes),
                cmocka_unit_test(test_process_dies),      cmocka_unit_test(test_process_switches),
                cmocka_unit_test(test_rendezvous_then_nccl),
                cmocka_unit_test(test_fault_init),
                cmocka_unit_test(test_fault_second_call), cmocka_unit_test(test_fault_wrong),
                cmocka_unit_test(test_fault_hang),        cmocka_unit_test(test_fault_async),
        };
        int r = cmocka_run_group_tests(tests, NULL, NULL);
        nccl_close(nc);
        return r;
}

/* A libnccl.so.2 test double: the NCCL subset gpuvet calls (src/vendor/nccl_functions.def),
 * run on the host over the fake libcuda (tests/fakes/fake_cuda.c), whose device pointers are
 * host memory and whose streams keep a synthetic clock.
 *
 * - Communicators: ncclCommInitAll(comms, n, devlist) makes n ranks in this process;
 *   ncclCommInitRank joins the ranks of one ncclUniqueId across threads of this process
 *   (each call waits, as NCCL's does, until all nranks have joined; another process never
 *   joins: that needs a real NCCL).
 * - Collectives are queued per rank, as NCCL enqueues them on the stream, and run once every
 *   rank of the communicator has queued its next one (they must match: same collective,
 *   count, type, op and root, else every rank's async error becomes ncclInvalidUsage). So a
 *   single thread may issue all ranks' calls inside ncclGroupStart/End, and threads may issue
 *   one rank each. Inputs are read before any output is written, so in-place calls work.
 *   ncclSend/ncclRecv pair up in order per (sender, receiver); all-to-all is grouped
 *   sends and receives, as nccl-tests' alltoall.
 * - Reductions: sum, prod, max, min, avg on int8/uint8/int32/uint32/int64/uint64/float16/
 *   float32/float64/bfloat16 (float16 and bfloat16 computed in float, rounded to nearest
 *   even); the FP8 types move but do not reduce (ncclInvalidArgument).
 * - Timing: a collective advances every participating stream's clock (the fake libcuda's
 *   CUstream_st) to the latest of them plus latency + bus bytes / bus bandwidth, where the
 *   bus bytes are nccl-tests' (doc/PERFORMANCE.md): all-reduce S*2(n-1)/n, all-gather and
 *   reduce-scatter S*(n-1)/n (S the whole gathered array), broadcast and reduce S. So a
 *   benchmark computing busbw from events around the call reads FAKE_NCCL_BUSBW_GBPS back.
 *   Sends and receives to other ranks advance a rank's stream by the larger of the bytes it
 *   sent and received over the bus bandwidth (once per group), so sendrecv's and alltoall's
 *   busbw read it back too; a rank's sends to itself cost nothing.
 *
 * Configuration (environment):
 *   FAKE_NCCL_VERSION=N            what ncclGetVersion answers (default 22809: 2.28.9)
 *   FAKE_NCCL_BUSBW_GBPS=X         bus bandwidth (default 400)
 *   FAKE_NCCL_LAT_US=X             per collective or per group of sends/receives (default 10)
 *   FAKE_NCCL_FAIL=fn:RESULT[:call=N][,...]   fn returns RESULT (an nccl* result name or a
 *                                  number), at its N-th call only or at every call; the
 *                                  call does nothing else (ncclCommInitAll: init failure)
 *   FAKE_NCCL_WRONG=1              every collective and receive writes one wrong byte (the
 *                                  first byte of each output it writes is flipped)
 *   FAKE_NCCL_HANG=fn              fn never returns (a hung collective; ncclGroupEnd)
 *   FAKE_NCCL_ASYNC=RESULT[:after=N]  ncclCommGetAsyncError reports RESULT once N
 *                                  collectives have run (default 0: at once), as NCCL
 *                                  reports a peer's failure
 *   FAKE_NCCL_LOG=FILE             append "fn result" per call
 * The switches are read once per process, at the first call. ncclGroupStart/End nest per
 * process here (NCCL's per thread): threads issuing one rank each should not use groups.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vendor/nccl_api.h"

#define FAKE_EXPORT __attribute__((visibility("default")))
#define MAX_RANKS 64
#define MAX_FAILS 16
#define COMM_MAGIC 0x6e63636cu

/* The fake libcuda's stream (tests/fakes/fake_cuda.c): its device and the synthetic clock
 * events read. Kept in step with that file by hand, as fake_cublaslt.c's. */
struct CUstream_st {
        int device;
        double clock_ms;
};

enum op_kind { OP_ALLREDUCE, OP_ALLGATHER, OP_REDUCESCATTER, OP_BROADCAST, OP_REDUCE, OP_SEND, OP_RECV };

struct fake_op {
        enum op_kind kind;
        const void *send;
        void *recv;
        size_t count;
        ncclDataType_t type;
        ncclRedOp_t redop;
        int root; /* or the peer of a send/receive */
        cudaStream_t stream;
        struct fake_op *next;
};

struct clique {
        int nranks;
        int joined;
        ncclUniqueId id;
        bool by_id;
        struct ncclComm *comms[MAX_RANKS];
        struct clique *next;
};

struct ncclComm {
        uint32_t magic;
        struct clique *clique;
        int rank, device;
        bool aborted;
        ncclResult_t async;
        struct fake_op *head, *tail; /* queued collectives */
        /* sends and receives of the open group, for the clock */
        double sent_bytes, recv_bytes;
        cudaStream_t p2p_stream;
};

struct fake_fail {
        char fn[64];
        ncclResult_t rc;
        unsigned long call; /* 0: every call */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t joined = PTHREAD_COND_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static struct {
        int version;
        double busbw_gbps, lat_us;
        bool wrong;
        char hang[64];
        struct fake_fail fails[MAX_FAILS];
        int n_fails;
        ncclResult_t async;
        unsigned long async_after;
        unsigned long collectives;
        char log[512];
        /* calls per function name, for FAIL's call=N */
        struct {
                char fn[64];
                unsigned long n;
        } calls[32];
        int n_calls;
        int group_depth;
        struct ncclComm *group_comms[MAX_RANKS * 4];
        int n_group_comms;
        struct clique *cliques;
        /* queued sends and receives, matched in order per (from, to) */
        struct fake_op *p2p_head;
} fk;

static const char *const result_names[] = {
        "ncclSuccess",       "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
        "ncclInvalidArgument", "ncclInvalidUsage",     "ncclRemoteError", "ncclInProgress",
};

static ncclResult_t result_by_name(const char *s) {
        for (size_t i = 0; i < sizeof(result_names) / sizeof(result_names[0]); i++)
                if (strcmp(s, result_names[i]) == 0)
                        return (ncclResult_t)i;
        return (ncclResult_t)strtol(s, NULL, 0);
}

static double env_double(const char *name, double def) {
        const char *v = getenv(name);
        if (!v || !*v)
                return def;
        double d = strtod(v, NULL);
        return d > 0 ? d : def;
}

static void configure(void) {
        const char *v = getenv("FAKE_NCCL_VERSION");
        fk.version = v && *v ? atoi(v) : 22809;
        fk.busbw_gbps = env_double("FAKE_NCCL_BUSBW_GBPS", 400);
        v = getenv("FAKE_NCCL_LAT_US");
        fk.lat_us = v && *v && strtod(v, NULL) >= 0 ? strtod(v, NULL) : 10;
        v = getenv("FAKE_NCCL_WRONG");
        fk.wrong = v && strcmp(v, "1") == 0;
        v = getenv("FAKE_NCCL_HANG");
        snprintf(fk.hang, sizeof(fk.hang), "%s", v ? v : "");
        v = getenv("FAKE_NCCL_LOG");
        snprintf(fk.log, sizeof(fk.log), "%s", v ? v : "");
        v = getenv("FAKE_NCCL_ASYNC");
        if (v && *v) {
                char buf[128];
                snprintf(buf, sizeof(buf), "%s", v);
                char *after = strstr(buf, ":after=");
                if (after) {
                        *after = 0;
                        fk.async_after = strtoul(after + 7, NULL, 10);
                }
                fk.async = result_by_name(buf);
        }
        v = getenv("FAKE_NCCL_FAIL");
        if (v && *v) {
                char buf[1024];
                snprintf(buf, sizeof(buf), "%s", v);
                char *save = NULL;
                for (char *item = strtok_r(buf, ",", &save); item && fk.n_fails < MAX_FAILS;
                     item = strtok_r(NULL, ",", &save)) {
                        struct fake_fail *f = &fk.fails[fk.n_fails];
                        char *colon = strchr(item, ':');
                        if (!colon)
                                continue;
                        *colon = 0;
                        snprintf(f->fn, sizeof(f->fn), "%s", item);
                        char *call = strstr(colon + 1, ":call=");
                        if (call) {
                                *call = 0;
                                f->call = strtoul(call + 6, NULL, 10);
                        }
                        f->rc = result_by_name(colon + 1);
                        fk.n_fails++;
                }
        }
}

static void log_call(const char *fn, ncclResult_t rc) {
        if (!fk.log[0])
                return;
        FILE *f = fopen(fk.log, "a");
        if (f) {
                fprintf(f, "%s %d\n", fn, (int)rc);
                fclose(f);
        }
}

/* Every exported function starts here, under the lock: count the call, hang or fail it as
 * configured. Returns ncclSuccess to go on. */
static ncclResult_t enter(const char *fn) {
        pthread_once(&once, configure);
        unsigned long n = 0;
        int i;
        for (i = 0; i < fk.n_calls; i++)
                if (strcmp(fk.calls[i].fn, fn) == 0)
                        break;
        if (i == fk.n_calls && i < (int)(sizeof(fk.calls) / sizeof(fk.calls[0]))) {
                snprintf(fk.calls[i].fn, sizeof(fk.calls[i].fn), "%s", fn);
                fk.n_calls++;
        }
        if (i < fk.n_calls)
                n = ++fk.calls[i].n;
        if (fk.hang[0] && strcmp(fk.hang, fn) == 0) {
                log_call(fn, -1);
                pthread_mutex_unlock(&lock);
                for (;;)
                        pause();
        }
        for (int j = 0; j < fk.n_fails; j++)
                if (strcmp(fk.fails[j].fn, fn) == 0 && (fk.fails[j].call == 0 || fk.fails[j].call == n)) {
                        log_call(fn, fk.fails[j].rc);
                        return fk.fails[j].rc;
                }
        log_call(fn, ncclSuccess);
        return ncclSuccess;
}

#define ENTER()                                                                                              \
        pthread_mutex_lock(&lock);                                                                           \
        ncclResult_t rc_ = enter(__func__);                                                                  \
        if (rc_ != ncclSuccess) {                                                                            \
                pthread_mutex_unlock(&lock);                                                                 \
                return rc_;                                                                                  \
        }
#define LEAVE(rc)                                                                                            \
        do {                                                                                                 \
                pthread_mutex_unlock(&lock);                                                                 \
                return (rc);                                                                                 \
        } while (0)

static bool valid(const struct ncclComm *c) { return c && c->magic == COMM_MAGIC && !c->aborted; }

/* ---- element types ---------------------------------------------------------------------------- */

static size_t type_size(ncclDataType_t t) {
        switch (t) {
        case ncclInt8:
        case ncclUint8:
        case ncclFloat8e4m3:
        case ncclFloat8e5m2:
                return 1;
        case ncclFloat16:
        case ncclBfloat16:
                return 2;
        case ncclInt32:
        case ncclUint32:
        case ncclFloat32:
                return 4;
        case ncclInt64:
        case ncclUint64:
        case ncclFloat64:
                return 8;
        default:
                return 0;
        }
}

static float half_to_float(uint16_t h) {
        uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
        if (exp == 0) {
                float f = (float)man / 1024.0f / 16384.0f; /* subnormal: man * 2^-24 */
                return sign ? -f : f;
        }
        if (exp == 31)
                bits = sign | 0x7f800000u | (man << 13);
        else
                bits = sign | ((exp + 112) << 23) | (man << 13);
        float f;
        memcpy(&f, &bits, 4);
        return f;
}

static uint16_t float_to_half(float f) {
        uint32_t x;
        memcpy(&x, &f, 4);
        uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
        int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
        uint32_t man = x & 0x7fffff;
        if (((x >> 23) & 0xff) == 0xff)
                return sign | 0x7c00 | (man ? 0x200 : 0);
        if (exp >= 31)
                return sign | 0x7c00;
        if (exp <= 0) {
                if (exp < -10)
                        return sign;
                man |= 0x800000;
                uint32_t shift = (uint32_t)(14 - exp);
                uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
                if (rem > half || (rem == half && (h & 1)))
                        h++;
                return sign | (uint16_t)h;
        }
        uint32_t h = ((uint32_t)exp << 10) | (man >> 13), rem = man & 0x1fff;
        if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
                h++; /* may carry into the exponent, up to infinity: correct */
        return sign | (uint16_t)h;
}

static float bf16_to_float(uint16_t b) {
        uint32_t x = (uint32_t)b << 16;
        float f;
        memcpy(&f, &x, 4);
        return f;
}

static uint16_t float_to_bf16(float f) {
        uint32_t x;
        memcpy(&x, &f, 4);
        if ((x & 0x7fffffff) > 0x7f800000)
                return (uint16_t)((x >> 16) | 0x40);
        x += 0x7fff + ((x >> 16) & 1);
        return (uint16_t)(x >> 16);
}

#define REDUCE_INT(T)                                                                                        \
        do {                                                                                                 \
                T *d = dst;                                                                                  \
                const T *s = src;                                                                            \
                for (size_t i = 0; i < n; i++)                                                               \
                        switch (op) {                                                                        \
                        case ncclProd:                                                                       \
                                d[i] = (T)(d[i] * s[i]);                                                     \
                                break;                                                                       \
                        case ncclMax:                                                                        \
                                d[i] = d[i] > s[i] ? d[i] : s[i];                                            \
                                break;                                                                       \
                        case ncclMin:                                                                        \
                                d[i] = d[i] < s[i] ? d[i] : s[i];                                            \
                                break;                                                                       \
                        default: /* sum, and avg's sum */                                                    \
                                d[i] = (T)(d[i] + s[i]);                                                     \
                        }                                                                                    \
        } while (0)

static float red_f(ncclRedOp_t op, float a, float b) {
        switch (op) {
        case ncclProd:
                return a * b;
        case ncclMax:
                return a > b ? a : b;
        case ncclMin:
                return a < b ? a : b;
        default:
                return a + b;
        }
}

/* dst[i] = dst[i] op src[i] (avg sums; avg_finish divides). Unsigned arithmetic for the
 * integer sums and products, so that they wrap as NCCL's do rather than overflow. */
static void reduce_into(void *dst, const void *src, size_t n, ncclDataType_t t, ncclRedOp_t op) {
        switch (t) {
        case ncclInt8:
                if (op == ncclMax || op == ncclMin)
                        REDUCE_INT(int8_t);
                else
                        REDUCE_INT(uint8_t);
                break;
        case ncclUint8:
                REDUCE_INT(uint8_t);
                break;
        case ncclInt32:
                if (op == ncclMax || op == ncclMin)
                        REDUCE_INT(int32_t);
                else
                        REDUCE_INT(uint32_t);
                break;
        case ncclUint32:
                REDUCE_INT(uint32_t);
                break;
        case ncclInt64:
                if (op == ncclMax || op == ncclMin)
                        REDUCE_INT(int64_t);
                else
                        REDUCE_INT(uint64_t);
                break;
        case ncclUint64:
                REDUCE_INT(uint64_t);
                break;
        case ncclFloat32: {
                float *d = dst;
                const float *s = src;
                for (size_t i = 0; i < n; i++)
                        d[i] = red_f(op, d[i], s[i]);
                break;
        }
        case ncclFloat64: {
                double *d = dst;
                const double *s = src;
                for (size_t i = 0; i < n; i++)
                        d[i] = op == ncclProd ? d[i] * s[i]
                               : op == ncclMax ? (d[i] > s[i] ? d[i] : s[i])
                               : op == ncclMin ? (d[i] < s[i] ? d[i] : s[i])
                                               : d[i] + s[i];
                break;
        }
        case ncclFloat16: {
                uint16_t *d = dst;
                const uint16_t *s = src;
                for (size_t i = 0; i < n; i++)
                        d[i] = float_to_half(red_f(op, half_to_float(d[i]), half_to_float(s[i])));
                break;
        }
        case ncclBfloat16: {
                uint16_t *d = dst;
                const uint16_t *s = src;
                for (size_t i = 0; i < n; i++)
                        d[i] = float_to_bf16(red_f(op, bf16_to_float(d[i]), bf16_to_float(s[i])));
                break;
        }
        default:
                break;
        }
}

/* ncclAvg: the sum divided by the rank count (integers: truncated, as NCCL's). */
static void avg_finish(void *dst, size_t n, ncclDataType_t t, int nranks) {
        for (size_t i = 0; i < n; i++)
                switch (t) {
                case ncclInt8:
                        ((int8_t *)dst)[i] = (int8_t)(((int8_t *)dst)[i] / nranks);
                        break;
                case ncclUint8:
                        ((uint8_t *)dst)[i] = (uint8_t)(((uint8_t *)dst)[i] / nranks);
                        break;
                case ncclInt32:
                        ((int32_t *)dst)[i] /= nranks;
                        break;
                case ncclUint32:
                        ((uint32_t *)dst)[i] /= (uint32_t)nranks;
                        break;
                case ncclInt64:
                        ((int64_t *)dst)[i] /= nranks;
                        break;
                case ncclUint64:
                        ((uint64_t *)dst)[i] /= (uint64_t)nranks;
                        break;
                case ncclFloat32:
                        ((float *)dst)[i] /= (float)nranks;
                        break;
                case ncclFloat64:
                        ((double *)dst)[i] /= nranks;
                        break;
                case ncclFloat16: {
                        uint16_t *d = dst;
                        d[i] = float_to_half(half_to_float(d[i]) / (float)nranks);
                        break;
                }
                case ncclBfloat16: {
                        uint16_t *d = dst;
                        d[i] = float_to_bf16(bf16_to_float(d[i]) / (float)nranks);
                        break;
                }
                default:
                        break;
                }
}

static bool reducible(ncclDataType_t t, ncclRedOp_t op) {
        return type_size(t) && t != ncclFloat8e4m3 && t != ncclFloat8e5m2 && (unsigned)op < (unsigned)ncclNumOps;
}

/* ---- the clock -------------------------------------------------------------------------------- */

static void corrupt(void *p, size_t bytes) {
        if (fk.wrong && p && bytes)
                ((unsigned char *)p)[0] ^= 1;
}

/* Every rank's stream to the latest of them, then latency + bus bytes / bus bandwidth. */
static void advance_all(struct clique *q, struct fake_op **ops, double bus_bytes) {
        double start = 0;
        for (int r = 0; r < q->nranks; r++)
                if (ops[r]->stream && ops[r]->stream->clock_ms > start)
                        start = ops[r]->stream->clock_ms;
        double end = start + fk.lat_us / 1e3 + bus_bytes / (fk.busbw_gbps * 1e9) * 1e3;
        for (int r = 0; r < q->nranks; r++)
                if (ops[r]->stream)
                        ops[r]->stream->clock_ms = end;
}

/* ---- collectives ------------------------------------------------------------------------------ */

static bool same_call(const struct fake_op *a, const struct fake_op *b) {
        return a->kind == b->kind && a->count == b->count && a->type == b->type && a->redop == b->redop &&
               a->root == b->root;
}

/* Run one collective of every rank (ops[r] is rank r's), inputs copied first. */
static void run_collective(struct clique *q, struct fake_op **ops) {
        int n = q->nranks;
        const struct fake_op *o = ops[0];
        size_t es = type_size(o->type), c = o->count;
        for (int r = 1; r < n; r++)
                if (!same_call(o, ops[r])) {
                        for (int k = 0; k < n; k++)
                                q->comms[k]->async = ncclInvalidUsage;
                        return;
                }
        size_t in_elems = o->kind == OP_ALLGATHER ? c : o->kind == OP_REDUCESCATTER ? c * (size_t)n : c;
        size_t in_bytes = in_elems * es;
        unsigned char *in = malloc(in_bytes * (size_t)n + 1);
        unsigned char *acc = malloc(in_bytes + 1);
        if (!in || !acc) {
                free(in);
                free(acc);
                for (int k = 0; k < n; k++)
                        q->comms[k]->async = ncclSystemError;
                return;
        }
        for (int r = 0; r < n; r++)
                if (o->kind != OP_BROADCAST || r == o->root)
                        memcpy(in + in_bytes * (size_t)r, ops[r]->send, in_bytes);
        double s_bytes = 0, factor = 1;
        switch (o->kind) {
        case OP_ALLREDUCE:
        case OP_REDUCE:
        case OP_REDUCESCATTER:
                memcpy(acc, in, in_bytes);
                for (int r = 1; r < n; r++)
                        reduce_into(acc, in + in_bytes * (size_t)r, in_elems, o->type, o->redop);
                if (o->redop == ncclAvg)
                        avg_finish(acc, in_elems, o->type, n);
                if (o->kind == OP_ALLREDUCE) {
                        for (int r = 0; r < n; r++) {
                                memcpy(ops[r]->recv, acc, in_bytes);
                                corrupt(ops[r]->recv, in_bytes);
                        }
                        s_bytes = (double)in_bytes, factor = 2.0 * (n - 1) / n;
                } else if (o->kind == OP_REDUCE) {
                        memcpy(ops[o->root]->recv, acc, in_bytes);
                        corrupt(ops[o->root]->recv, in_bytes);
                        s_bytes = (double)in_bytes;
                } else {
                        for (int r = 0; r < n; r++) {
                                memcpy(ops[r]->recv, acc + c * es * (size_t)r, c * es);
                                corrupt(ops[r]->recv, c * es);
                        }
                        s_bytes = (double)in_bytes, factor = (double)(n - 1) / n;
                }
                break;
        case OP_ALLGATHER:
                for (int r = 0; r < n; r++) {
                        memcpy(ops[r]->recv, in, in_bytes * (size_t)n);
                        corrupt(ops[r]->recv, in_bytes * (size_t)n);
                }
                s_bytes = (double)in_bytes * n, factor = (double)(n - 1) / n;
                break;
        case OP_BROADCAST:
                for (int r = 0; r < n; r++) {
                        memcpy(ops[r]->recv, in + in_bytes * (size_t)o->root, in_bytes);
                        corrupt(ops[r]->recv, in_bytes);
                }
                s_bytes = (double)in_bytes;
                break;
        default:
                break;
        }
        advance_all(q, ops, s_bytes * factor);
        fk.collectives++;
        free(in);
        free(acc);
}

/* Run every collective that all ranks of q have queued. */
static void progress_clique(struct clique *q) {
        for (;;) {
                struct fake_op *ops[MAX_RANKS] = {0};
                for (int r = 0; r < q->nranks; r++) {
                        if (!q->comms[r] || !q->comms[r]->head)
                                return;
                        ops[r] = q->comms[r]->head;
                }
                run_collective(q, ops);
                for (int r = 0; r < q->nranks; r++) {
                        struct ncclComm *c = q->comms[r];
                        c->head = ops[r]->next;
                        if (!c->head)
                                c->tail = NULL;
                        free(ops[r]);
                }
        }
}

static void unlink_op(const struct fake_op *o) {
        for (struct fake_op **p = &fk.p2p_head; *p; p = &(*p)->next)
                if (*p == o) {
                        *p = o->next;
                        return;
                }
}

/* Pair queued sends with receives, first come first matched per (sender, receiver). */
static void progress_p2p(void) {
        for (struct fake_op **pr = &fk.p2p_head; *pr;) {
                struct fake_op *recv = *pr;
                if (recv->kind != OP_RECV) {
                        pr = &recv->next;
                        continue;
                }
                struct ncclComm *me = (struct ncclComm *)recv->send; /* a receive keeps its comm there */
                struct fake_op **ps = NULL; /* the matching send's link */
                for (struct fake_op **p = &fk.p2p_head; *p; p = &(*p)->next) {
                        struct fake_op *s = *p;
                        const struct ncclComm *from = (const struct ncclComm *)s->recv;
                        if (s->kind == OP_SEND && from->clique == me->clique && from->rank == recv->root &&
                            s->root == me->rank) {
                                ps = p;
                                break;
                        }
                }
                if (!ps) {
                        pr = &recv->next;
                        continue;
                }
                struct fake_op *send = *ps;
                struct ncclComm *from = (struct ncclComm *)send->recv;
                size_t es = type_size(recv->type);
                size_t bytes = (send->count < recv->count ? send->count : recv->count) * es;
                if (send->count != recv->count || send->type != recv->type)
                        from->async = me->async = ncclInvalidUsage;
                memmove(recv->recv, send->send, bytes);
                corrupt(recv->recv, bytes);
                if (from != me) {
                        from->sent_bytes += (double)bytes;
                        from->p2p_stream = send->stream;
                        me->recv_bytes += (double)bytes;
                        me->p2p_stream = recv->stream;
                }
                unlink_op(send);
                unlink_op(recv);
                pr = &fk.p2p_head; /* start over: the list changed */
                free(send);
                free(recv);
        }
}

/* The clock for the sends and receives of a group (or of a call outside one). */
static void settle_p2p(void) {
        for (struct clique *q = fk.cliques; q; q = q->next)
                for (int r = 0; r < q->nranks; r++) {
                        struct ncclComm *c = q->comms[r];
                        if (!c || (!c->sent_bytes && !c->recv_bytes))
                                continue;
                        double b = c->sent_bytes > c->recv_bytes ? c->sent_bytes : c->recv_bytes;
                        if (c->p2p_stream)
                                c->p2p_stream->clock_ms += fk.lat_us / 1e3 + b / (fk.busbw_gbps * 1e9) * 1e3;
                        c->sent_bytes = c->recv_bytes = 0;
                        c->p2p_stream = NULL;
                }
}

static void progress(void) {
        if (fk.group_depth > 0)
                return;
        for (struct clique *q = fk.cliques; q; q = q->next)
                progress_clique(q);
        progress_p2p();
        settle_p2p();
}

static ncclResult_t enqueue(struct ncclComm *comm, struct fake_op *tmpl) {
        if (!valid(comm))
                return ncclInvalidArgument;
        size_t es = type_size(tmpl->type);
        if (!es)
                return ncclInvalidArgument;
        if ((tmpl->kind == OP_ALLREDUCE || tmpl->kind == OP_REDUCE || tmpl->kind == OP_REDUCESCATTER) &&
            !reducible(tmpl->type, tmpl->redop))
                return ncclInvalidArgument;
        int n = comm->clique->nranks;
        if ((tmpl->kind == OP_BROADCAST || tmpl->kind == OP_REDUCE || tmpl->kind == OP_SEND ||
             tmpl->kind == OP_RECV) &&
            (tmpl->root < 0 || tmpl->root >= n))
                return ncclInvalidArgument;
        bool needs_send = tmpl->kind != OP_RECV && (tmpl->kind != OP_BROADCAST || comm->rank == tmpl->root);
        bool needs_recv = tmpl->kind != OP_SEND && (tmpl->kind != OP_REDUCE || comm->rank == tmpl->root);
        if (tmpl->count && ((needs_send && !tmpl->send) || (needs_recv && !tmpl->recv)))
                return ncclInvalidArgument;
        if (tmpl->stream && tmpl->stream->device != comm->device)
                return ncclInvalidArgument; /* NCCL: the stream of another device fails in CUDA */
        struct fake_op *o = malloc(sizeof(*o));
        if (!o)
                return ncclSystemError;
        *o = *tmpl;
        o->next = NULL;
        if (o->kind == OP_SEND || o->kind == OP_RECV) {
                /* a send keeps its comm in recv, a receive in send (unused there) */
                if (o->kind == OP_SEND)
                        o->recv = comm;
                else
                        o->send = comm;
                struct fake_op **p = &fk.p2p_head;
                while (*p)
                        p = &(*p)->next;
                *p = o;
        } else {
                if (comm->tail)
                        comm->tail->next = o;
                else
                        comm->head = o;
                comm->tail = o;
        }
        progress();
        return ncclSuccess;
}

/* ---- the API ---------------------------------------------------------------------------------- */

FAKE_EXPORT ncclResult_t ncclGetVersion(int *version) {
        ENTER();
        if (!version)
                LEAVE(ncclInvalidArgument);
        *version = fk.version;
        LEAVE(ncclSuccess);
}

FAKE_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
        ENTER();
        if (!id)
                LEAVE(ncclInvalidArgument);
        static unsigned long serial;
        memset(id, 0, sizeof(*id));
        snprintf(id->internal, sizeof(id->internal), "fake-nccl:%d:%lu", (int)getpid(), ++serial);
        LEAVE(ncclSuccess);
}

static struct ncclComm *new_comm(struct clique *q, int rank, int device) {
        struct ncclComm *c = calloc(1, sizeof(*c));
        if (!c)
                return NULL;
        c->magic = COMM_MAGIC;
        c->clique = q;
        c->rank = rank;
        c->device = device;
        q->comms[rank] = c;
        return c;
}

FAKE_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist) {
        ENTER();
        if (!comms || ndev < 1 || ndev > MAX_RANKS)
                LEAVE(ncclInvalidArgument);
        struct clique *q = calloc(1, sizeof(*q));
        if (!q)
                LEAVE(ncclSystemError);
        q->nranks = q->joined = ndev;
        for (int r = 0; r < ndev; r++)
                if (!new_comm(q, r, devlist ? devlist[r] : r)) {
                        for (int k = 0; k < r; k++)
                                free(q->comms[k]);
                        free(q);
                        LEAVE(ncclSystemError);
                }
        q->next = fk.cliques;
        fk.cliques = q;
        for (int r = 0; r < ndev; r++)
                comms[r] = q->comms[r];
        LEAVE(ncclSuccess);
}

FAKE_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
        ENTER();
        if (!comm || nranks < 1 || nranks > MAX_RANKS || rank < 0 || rank >= nranks)
                LEAVE(ncclInvalidArgument);
        struct clique *q;
        for (q = fk.cliques; q; q = q->next)
                if (q->by_id && memcmp(&q->id, &id, sizeof(id)) == 0)
                        break;
        if (q && (q->nranks != nranks || q->comms[rank]))
                LEAVE(ncclInvalidUsage);
        if (!q) {
                q = calloc(1, sizeof(*q));
                if (!q)
                        LEAVE(ncclSystemError);
                q->nranks = nranks;
                q->id = id;
                q->by_id = true;
                q->next = fk.cliques;
                fk.cliques = q;
        }
        /* the device: this thread's current one is not known here; rank order, as tests
         * give each rank the device of its number */
        struct ncclComm *c = new_comm(q, rank, rank);
        if (!c)
                LEAVE(ncclSystemError);
        q->joined++;
        pthread_cond_broadcast(&joined);
        while (q->joined < q->nranks)
                pthread_cond_wait(&joined, &lock);
        *comm = c;
        LEAVE(ncclSuccess);
}

static ncclResult_t drop_comm(ncclComm_t comm) {
        if (!comm || comm->magic != COMM_MAGIC)
                return ncclInvalidArgument;
        struct clique *q = comm->clique;
        for (struct fake_op *o = comm->head, *next; o; o = next) {
                next = o->next;
                free(o);
        }
        for (struct fake_op **p = &fk.p2p_head; *p;) {
                struct fake_op *o = *p;
                if ((o->kind == OP_SEND ? o->recv : (void *)o->send) == (void *)comm) {
                        *p = o->next;
                        free(o);
                } else {
                        p = &o->next;
                }
        }
        q->comms[comm->rank] = NULL;
        comm->magic = 0;
        free(comm);
        if (--q->joined == 0) {
                for (struct clique **p = &fk.cliques; *p; p = &(*p)->next)
                        if (*p == q) {
                                *p = q->next;
                                break;
                        }
                free(q);
        }
        return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
        ENTER();
        LEAVE(drop_comm(comm));
}

FAKE_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
        ENTER();
        LEAVE(drop_comm(comm));
}

FAKE_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *err) {
        ENTER();
        if (!valid(comm) || !err)
                LEAVE(ncclInvalidArgument);
        *err = comm->async;
        if (*err == ncclSuccess && fk.async != ncclSuccess && fk.collectives >= fk.async_after)
                *err = fk.async;
        LEAVE(ncclSuccess);
}

FAKE_EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) {
        ENTER();
        if (!valid(comm) || !count)
                LEAVE(ncclInvalidArgument);
        *count = comm->clique->nranks;
        LEAVE(ncclSuccess);
}

FAKE_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) {
        ENTER();
        if (!valid(comm) || !rank)
                LEAVE(ncclInvalidArgument);
        *rank = comm->rank;
        LEAVE(ncclSuccess);
}

FAKE_EXPORT const char *ncclGetErrorString(ncclResult_t rc) {
        pthread_once(&once, configure);
        switch (rc) {
        case ncclSuccess:
                return "no error";
        case ncclUnhandledCudaError:
                return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
        case ncclSystemError:
                return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
        case ncclInternalError:
                return "internal error - please report this issue to the NCCL developers";
        case ncclInvalidArgument:
                return "invalid argument (run with NCCL_DEBUG=WARN for details)";
        case ncclInvalidUsage:
                return "invalid usage (run with NCCL_DEBUG=WARN for details)";
        case ncclRemoteError:
                return "remote process exited or there was a network error";
        case ncclInProgress:
                return "NCCL operation in progress";
        default:
                return "unknown result code";
        }
}

FAKE_EXPORT const char *ncclGetLastError(ncclComm_t comm) {
        (void)comm;
        return "fake NCCL: see FAKE_NCCL_* in tests/fakes/fake_nccl.c";
}

#define COLL(...)                                                                                            \
        ENTER();                                                                                             \
        struct fake_op o = {__VA_ARGS__};                                                                    \
        LEAVE(enqueue(comm, &o))

FAKE_EXPORT ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                       ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
        COLL(.kind = OP_ALLREDUCE, .send = sendbuff, .recv = recvbuff, .count = count, .type = datatype, .redop = op,
             .stream = stream);
}

FAKE_EXPORT ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                                       ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
        COLL(.kind = OP_ALLGATHER, .send = sendbuff, .recv = recvbuff, .count = sendcount, .type = datatype,
             .stream = stream);
}

FAKE_EXPORT ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                           cudaStream_t stream) {
        COLL(.kind = OP_REDUCESCATTER, .send = sendbuff, .recv = recvbuff, .count = recvcount, .type = datatype,
             .redop = op, .stream = stream);
}

FAKE_EXPORT ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                       int root, ncclComm_t comm, cudaStream_t stream) {
        COLL(.kind = OP_BROADCAST, .send = sendbuff, .recv = recvbuff, .count = count, .type = datatype,
             .root = root, .stream = stream);
}

FAKE_EXPORT ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                    ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
        COLL(.kind = OP_REDUCE, .send = sendbuff, .recv = recvbuff, .count = count, .type = datatype, .redop = op,
             .root = root, .stream = stream);
}

FAKE_EXPORT ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
                                  ncclComm_t comm, cudaStream_t stream) {
        COLL(.kind = OP_SEND, .send = sendbuff, .count = count, .type = datatype, .root = peer, .stream = stream);
}

FAKE_EXPORT ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                                  cudaStream_t stream) {
        COLL(.kind = OP_RECV, .recv = recvbuff, .count = count, .type = datatype, .root = peer, .stream = stream);
}

FAKE_EXPORT ncclResult_t ncclGroupStart(void) {
        ENTER();
        fk.group_depth++;
        LEAVE(ncclSuccess);
}

FAKE_EXPORT ncclResult_t ncclGroupEnd(void) {
        ENTER();
        if (fk.group_depth == 0)
                LEAVE(ncclInvalidUsage);
        fk.group_depth--;
        progress();
        LEAVE(ncclSuccess);
}

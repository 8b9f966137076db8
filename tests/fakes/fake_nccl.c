/* A libnccl.so.2 test double: the NCCL subset gpuvet calls (src/bindings/nccl_functions.def),
 * run on the host over the fake libcuda (tests/fakes/fake_cuda.c), whose device pointers are
 * host memory and whose streams keep a synthetic clock.
 *
 * - Communicators: ncclCommInitAll(comms, n, devlist) makes n ranks in this process;
 *   ncclCommInitRank joins the ranks of one ncclUniqueId in whatever processes they are (each
 *   call waits, as NCCL's does, until all nranks have joined). ncclGetUniqueId gives a fresh
 *   random id per call whose bytes name a POSIX shared memory object ("/fake-nccl-" and 32 hex
 *   digits) where the ranks meet; its name is removed once the last rank has joined, so
 *   nothing stays in /dev/shm even when a process is killed later (a rank that never comes
 *   leaves it, as its peers wait for ever inside ncclCommInitRank, as NCCL's would).
 *   When every rank is a thread of this process, they run as below, in process; else each
 *   rank runs each collective as a step of the whole communicator: it posts its arguments,
 *   its stream's clock and its input (a memfd, which the others open through
 *   /proc/PID/fd), waits for every rank's (a process-shared robust mutex and condition),
 *   computes its own output and waits until all have read its input. So a call outside a
 *   group, or ncclGroupEnd, returns once every rank has made the matching call (a real
 *   NCCL returns at once and the stream waits). A group's sends and receives are one such
 *   step, which every rank of the communicator must make (as nccl-tests' sendrecv and
 *   alltoall do); the k-th receive from a peer takes that peer's k-th send to this rank.
 *   A rank whose process is gone (dead, or a zombie) or whose comm was destroyed makes its
 *   peers' pending step end with ncclRemoteError from ncclCommGetAsyncError, not a hang.
 *   A rank of another process knows no device (ranks of another node count from 0 again):
 *   any stream is accepted. Not modelled: ncclCommAbort from another thread while a step
 *   waits (NCCL's way to unblock a hung collective; here, end the process), and one thread
 *   of a process driving ranks of several such communicators in one group (each step waits
 *   for its peers in turn: give each its own thread, as NCCL asks of blocking calls).
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
 *   CUstream_st; across processes, each rank its own, from the clocks all posted) to the
 *   latest of them plus latency + bus bytes / bus bandwidth, where the
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
 * The switches are read once per process, at the first call, and act per process (a rank
 * of another process follows its own environment: FAKE_NCCL_WRONG in one rank's process
 * corrupts that rank's outputs only). ncclGroupStart/End nest per process here (NCCL's per
 * thread): threads issuing one rank each should not use groups.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bindings/nccl_api.h"

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
        /* a rank whose peers are other processes: its shared control block, the steps it
         * has run, its queued sends and receives, the next such comm of this process */
        struct shm_ctl *ctl;
        unsigned long steps;
        struct fake_op *p2p_queue;
        struct ncclComm *next_cross;
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
        /* this process' ranks of communicators that span processes */
        struct ncclComm *cross;
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
/* NCCL prints its warnings on standard output when NCCL_DEBUG is WARN or INFO, as
 * "host:pid:tid [device] NCCL WARN message"; an injected failure is told the same way, so
 * that a caller capturing NCCL's output has a line to capture. */
static void warn_failure(const char *fn, ncclResult_t rc) {
        const char *level = getenv("NCCL_DEBUG");
        if (!level || (strcasecmp(level, "WARN") != 0 && strcasecmp(level, "INFO") != 0))
                return;
        char host[64] = "localhost";
        (void)gethostname(host, sizeof(host) - 1);
        printf("%s:%d:%d [0] NCCL WARN %s failed: result %d (fake NCCL: FAKE_NCCL_FAIL)\n", host, (int)getpid(),
               (int)getpid(), fn, (int)rc);
        fflush(stdout);
}

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
                        warn_failure(fn, fk.fails[j].rc);
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
/* rc is evaluated before the unlock: LEAVE(enqueue(...)) runs the collective under the lock */
#define LEAVE(rc)                                                                                            \
        do {                                                                                                 \
                ncclResult_t leave_rc_ = (rc);                                                               \
                pthread_mutex_unlock(&lock);                                                                 \
                return leave_rc_;                                                                            \
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

static size_t input_bytes(const struct fake_op *o, int n) {
        size_t c = o->count;
        return (o->kind == OP_REDUCESCATTER ? c * (size_t)n : c) * type_size(o->type);
}

/* One collective's results: in[r] is rank r's input (input_bytes; NULL for a broadcast's
 * non-root), written to out[r] for each rank this process holds (NULL for the others: the
 * ranks of other processes). Inputs are copied before any output is written, so in-place
 * calls work. Returns the bus bytes for the clock, or -1 when memory ran out. */
static double compute_collective(const struct fake_op *o, int n, const void *const *in_r, void *const *out) {
        size_t es = type_size(o->type), c = o->count;
        size_t in_bytes = input_bytes(o, n), in_elems = in_bytes / es;
        unsigned char *in = malloc(in_bytes * (size_t)n + 1);
        unsigned char *acc = malloc(in_bytes + 1);
        if (!in || !acc) {
                free(in);
                free(acc);
                return -1;
        }
        for (int r = 0; r < n; r++)
                if (o->kind != OP_BROADCAST || r == o->root)
                        memcpy(in + in_bytes * (size_t)r, in_r[r], in_bytes);
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
                        for (int r = 0; r < n; r++)
                                if (out[r]) {
                                        memcpy(out[r], acc, in_bytes);
                                        corrupt(out[r], in_bytes);
                                }
                        s_bytes = (double)in_bytes, factor = 2.0 * (n - 1) / n;
                } else if (o->kind == OP_REDUCE) {
                        if (out[o->root]) {
                                memcpy(out[o->root], acc, in_bytes);
                                corrupt(out[o->root], in_bytes);
                        }
                        s_bytes = (double)in_bytes;
                } else {
                        for (int r = 0; r < n; r++)
                                if (out[r]) {
                                        memcpy(out[r], acc + c * es * (size_t)r, c * es);
                                        corrupt(out[r], c * es);
                                }
                        s_bytes = (double)in_bytes, factor = (double)(n - 1) / n;
                }
                break;
        case OP_ALLGATHER:
                for (int r = 0; r < n; r++)
                        if (out[r]) {
                                memcpy(out[r], in, in_bytes * (size_t)n);
                                corrupt(out[r], in_bytes * (size_t)n);
                        }
                s_bytes = (double)in_bytes * n, factor = (double)(n - 1) / n;
                break;
        case OP_BROADCAST:
                for (int r = 0; r < n; r++)
                        if (out[r]) {
                                memcpy(out[r], in + in_bytes * (size_t)o->root, in_bytes);
                                corrupt(out[r], in_bytes);
                        }
                s_bytes = (double)in_bytes;
                break;
        default:
                break;
        }
        free(in);
        free(acc);
        return s_bytes * factor;
}

/* Run one collective of every rank of this process' clique (ops[r] is rank r's). */
static void run_collective(struct clique *q, struct fake_op **ops) {
        int n = q->nranks;
        const void *in[MAX_RANKS];
        void *out[MAX_RANKS];
        for (int r = 0; r < n; r++) {
                if (!same_call(ops[0], ops[r])) {
                        for (int k = 0; k < n; k++)
                                q->comms[k]->async = ncclInvalidUsage;
                        return;
                }
                in[r] = ops[r]->send;
                out[r] = ops[0]->kind == OP_REDUCE && r != ops[0]->root ? NULL : ops[r]->recv;
        }
        double bus = compute_collective(ops[0], n, in, out);
        if (bus < 0) {
                for (int k = 0; k < n; k++)
                        q->comms[k]->async = ncclSystemError;
                return;
        }
        advance_all(q, ops, bus);
        fk.collectives++;
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

/* ---- ranks in other processes ----------------------------------------------------------------- */

/* A communicator whose ranks are in several processes meets in a POSIX shared memory
 * object named by its unique id (SHM_PREFIX + 32 random hex digits): a control block with a
 * process-shared robust mutex and condition, and a slot per rank. Each collective, and each
 * group's sends and receives, is a step every rank posts (its arguments, its stream's clock,
 * and its input in a memfd of its own, which the others open through /proc/PID/fd/N: no name
 * to leak), then waits for all; each computes its own output from the others' inputs and
 * waits again until all have read its input. The object's name is removed as soon as the
 * last rank has joined, so a process killed later leaves nothing in /dev/shm. */
#define SHM_PREFIX "/fake-nccl-"
#define SHM_MAGIC 0x66616b656e63636cull
#define MAX_STEP_P2P (2 * MAX_RANKS)
#define PEER_CHECK_MS 100
#define STEP_P2P 100 /* a step's kind: a group's sends and receives (else an enum op_kind) */

struct step_p2p {
        int kind; /* OP_SEND or OP_RECV */
        int peer;
        size_t count;
        ncclDataType_t type;
        size_t offset; /* a send's data in its rank's step data */
};

struct shm_slot {
        pid_t pid;
        bool joined, left;          /* left: its comm destroyed or aborted */
        unsigned long posted, done; /* the last step posted; the last whose peers' data it read */
        int kind;
        size_t count;
        ncclDataType_t type;
        ncclRedOp_t redop;
        int root;
        double clock_ms; /* its stream's clock when it posted */
        int data_fd;     /* a memfd in its process: its input, or its sends; -1 for none */
        size_t data_bytes;
        int n_p2p;
        struct step_p2p p2p[MAX_STEP_P2P];
};

struct shm_ctl {
        uint64_t magic; /* stored last by the creator */
        pthread_mutex_t mutex;
        pthread_cond_t cond;
        int nranks, joined;
        struct shm_slot slots[MAX_RANKS];
};

static void ctl_lock(struct shm_ctl *c) {
        if (pthread_mutex_lock(&c->mutex) == EOWNERDEAD) /* its holder died: the slots are still whole */
                pthread_mutex_consistent(&c->mutex);
}

/* ctl locked: wait for a change, or PEER_CHECK_MS. */
static void ctl_wait(struct shm_ctl *c) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += PEER_CHECK_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
        }
        if (pthread_cond_timedwait(&c->cond, &c->mutex, &ts) == EOWNERDEAD)
                pthread_mutex_consistent(&c->mutex);
}

/* A dead process, or a zombie its parent has not reaped yet. */
static bool process_gone(pid_t pid) {
        if (pid <= 0)
                return false;
        if (kill(pid, 0) < 0 && errno == ESRCH)
                return true;
        char path[64], buf[512];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return false;
        buf[n] = '\0';
        const char *p = strrchr(buf, ')');
        return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/* ctl locked: until every rank has posted (or, with done, finished) step seq. ncclSuccess,
 * or ncclRemoteError once a rank that has not is gone (its process, or its comm), where a
 * real NCCL would report the peer's failure or hang. */
static ncclResult_t wait_all(struct shm_ctl *c, unsigned long seq, bool done) {
        for (;;) {
                bool all = true;
                for (int r = 0; r < c->nranks; r++) {
                        const struct shm_slot *sl = &c->slots[r];
                        if ((done ? sl->done : sl->posted) >= seq)
                                continue;
                        if (sl->left || process_gone(sl->pid))
                                return ncclRemoteError;
                        all = false;
                }
                if (all)
                        return ncclSuccess;
                ctl_wait(c);
        }
}

/* The object's name from an id: NULL unless ncclGetUniqueId made it. */
static const char *id_name(const ncclUniqueId *id) {
        size_t n = strnlen(id->internal, sizeof(id->internal));
        if (n == sizeof(id->internal) || strncmp(id->internal, SHM_PREFIX, strlen(SHM_PREFIX)) != 0 ||
            strchr(id->internal + 1, '/'))
                return NULL;
        return id->internal;
}

static void sleep_ms(int ms) {
        struct timespec ts = {0, ms * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* Join the ranks of id in whatever process they are: the first creates the object, all
 * wait until nranks have joined (as ncclCommInitRank does), the last removes its name.
 * *one_process: every rank is in this one (then threads: the in-process path runs them). */
static ncclResult_t shm_join(const ncclUniqueId *id, int nranks, int rank, struct shm_ctl **ret, bool *one_process) {
        const char *name = id_name(id);
        if (!name)
                return ncclInvalidArgument;
        bool creator = true;
        int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 && errno == EEXIST) {
                creator = false;
                fd = shm_open(name, O_RDWR | O_CLOEXEC, 0600);
        }
        if (fd < 0) /* gone already: every rank of this id had joined, so this one is extra */
                return errno == ENOENT ? ncclInvalidUsage : ncclSystemError;
        if (creator && ftruncate(fd, sizeof(struct shm_ctl)) < 0) {
                close(fd);
                shm_unlink(name);
                return ncclSystemError;
        }
        /* an opener may come between the creator's open and its ftruncate */
        struct stat st;
        for (int tries = 0; !creator && (fstat(fd, &st) < 0 || (size_t)st.st_size < sizeof(struct shm_ctl)); tries++) {
                if (tries > 10000) {
                        close(fd);
                        return ncclSystemError;
                }
                sleep_ms(1);
        }
        struct shm_ctl *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (c == MAP_FAILED)
                return ncclSystemError;
        if (creator) {
                pthread_mutexattr_t ma;
                pthread_mutexattr_init(&ma);
                pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
                pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
                pthread_mutex_init(&c->mutex, &ma);
                pthread_mutexattr_destroy(&ma);
                pthread_condattr_t ca;
                pthread_condattr_init(&ca);
                pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
                pthread_cond_init(&c->cond, &ca);
                pthread_condattr_destroy(&ca);
                c->nranks = nranks;
                __atomic_store_n(&c->magic, SHM_MAGIC, __ATOMIC_RELEASE);
        }
        for (int tries = 0; __atomic_load_n(&c->magic, __ATOMIC_ACQUIRE) != SHM_MAGIC; tries++) {
                if (tries > 10000) {
                        munmap(c, sizeof(*c));
                        return ncclSystemError;
                }
                sleep_ms(1);
        }
        ctl_lock(c);
        if (c->nranks != nranks || c->slots[rank].joined) {
                pthread_mutex_unlock(&c->mutex);
                munmap(c, sizeof(*c));
                return ncclInvalidUsage;
        }
        struct shm_slot *me = &c->slots[rank];
        me->pid = getpid();
        me->joined = true;
        me->data_fd = -1;
        if (++c->joined == nranks)
                shm_unlink(name);
        pthread_cond_broadcast(&c->cond);
        while (c->joined < nranks)
                ctl_wait(c); /* as NCCL: until every rank comes, however long */
        *one_process = true;
        for (int r = 0; r < nranks; r++)
                if (c->slots[r].pid != me->pid)
                        *one_process = false;
        pthread_mutex_unlock(&c->mutex);
        *ret = c;
        return ncclSuccess;
}

/* A memfd of bytes holding src (or the sends of ops), mapped; the fd, or -1. */
static int step_data(size_t bytes, void **map) {
        *map = NULL;
        if (!bytes)
                return -1;
        int fd = memfd_create("fake-nccl-step", MFD_CLOEXEC);
        if (fd < 0)
                return -1;
        if (ftruncate(fd, (off_t)bytes) < 0 ||
            (*map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
                *map = NULL;
                close(fd);
                return -1;
        }
        return fd;
}

/* Another rank's step data, read-only; NULL when it cannot be had. */
static void *map_peer(pid_t pid, int fd, size_t bytes) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
        int mine = open(path, O_RDONLY | O_CLOEXEC);
        if (mine < 0)
                return NULL;
        void *p = mmap(NULL, bytes, PROT_READ, MAP_SHARED, mine, 0);
        close(mine);
        return p == MAP_FAILED ? NULL : p;
}

struct peer_view {
        pid_t pid;
        int kind, root, fd;
        size_t count, bytes;
        ncclDataType_t type;
        ncclRedOp_t redop;
        double clock_ms;
};

/* Post this rank's part of step seq, wait for every rank's, copy what this rank needs to
 * know of them into view. ctl unlocked on return. */
static ncclResult_t post_step(struct ncclComm *comm, const struct shm_slot *mine, unsigned long seq,
                              struct peer_view *view, struct step_p2p (*their_sends)[MAX_STEP_P2P], int *n_sends) {
        struct shm_ctl *c = comm->ctl;
        ctl_lock(c);
        struct shm_slot *sl = &c->slots[comm->rank];
        sl->kind = mine->kind;
        sl->count = mine->count;
        sl->type = mine->type;
        sl->redop = mine->redop;
        sl->root = mine->root;
        sl->clock_ms = mine->clock_ms;
        sl->data_fd = mine->data_fd;
        sl->data_bytes = mine->data_bytes;
        sl->n_p2p = mine->n_p2p;
        memcpy(sl->p2p, mine->p2p, sizeof(sl->p2p[0]) * (size_t)mine->n_p2p);
        sl->posted = seq;
        pthread_cond_broadcast(&c->cond);
        ncclResult_t rc = wait_all(c, seq, false);
        for (int r = 0; rc == ncclSuccess && r < c->nranks; r++) {
                const struct shm_slot *p = &c->slots[r];
                view[r] = (struct peer_view){.pid = p->pid, .kind = p->kind, .root = p->root, .fd = p->data_fd,
                                             .count = p->count, .bytes = p->data_bytes, .type = p->type,
                                             .redop = p->redop, .clock_ms = p->clock_ms};
                if (their_sends) { /* the sends of r to this rank, in order */
                        n_sends[r] = 0;
                        for (int i = 0; i < p->n_p2p; i++)
                                if (p->p2p[i].kind == OP_SEND && p->p2p[i].peer == comm->rank)
                                        their_sends[r][n_sends[r]++] = p->p2p[i];
                }
        }
        pthread_mutex_unlock(&c->mutex);
        return rc;
}

/* Step seq done with the others' data: wait until every rank is, so that this rank's data
 * may go. */
static ncclResult_t finish_step(struct ncclComm *comm, unsigned long seq) {
        struct shm_ctl *c = comm->ctl;
        ctl_lock(c);
        c->slots[comm->rank].done = seq;
        pthread_cond_broadcast(&c->cond);
        ncclResult_t rc = wait_all(c, seq, true);
        pthread_mutex_unlock(&c->mutex);
        return rc;
}

static double step_cost_ms(double bytes) { return fk.lat_us / 1e3 + bytes / (fk.busbw_gbps * 1e9) * 1e3; }

/* One collective of a rank whose peers are other processes; called without the process lock.
 * Returns whether it ran (for FAKE_NCCL_ASYNC's count). */
static bool cross_collective(struct ncclComm *comm, const struct fake_op *o) {
        struct shm_ctl *c = comm->ctl;
        int n = c->nranks, me = comm->rank;
        size_t bytes = o->kind == OP_BROADCAST && me != o->root ? 0 : input_bytes(o, n);
        void *data;
        int fd = step_data(bytes, &data);
        ncclResult_t rc = bytes && fd < 0 ? ncclSystemError : ncclSuccess;
        if (data)
                memcpy(data, o->send, bytes);
        struct shm_slot *post = malloc(sizeof(*post)); /* large: not on the stack */
        if (!post) {
                if (data)
                        munmap(data, bytes);
                if (fd >= 0)
                        close(fd);
                comm->async = ncclSystemError; /* its peers wait: as a real rank out of memory */
                return false;
        }
        *post = (struct shm_slot){.kind = o->kind, .count = o->count, .type = o->type, .redop = o->redop,
                                  .root = o->root, .clock_ms = o->stream ? o->stream->clock_ms : 0, .data_fd = fd,
                                  .data_bytes = fd < 0 ? 0 : bytes};
        unsigned long seq = ++comm->steps;
        struct peer_view view[MAX_RANKS];
        ncclResult_t posted = post_step(comm, post, seq, view, NULL, NULL);
        free(post);
        if (rc == ncclSuccess)
                rc = posted;
        const void *in[MAX_RANKS] = {0};
        void *maps[MAX_RANKS] = {0};
        for (int r = 0; rc == ncclSuccess && r < n; r++) {
                struct fake_op theirs = {.kind = (enum op_kind)view[r].kind, .count = view[r].count,
                                         .type = view[r].type, .redop = view[r].redop, .root = view[r].root};
                if (!same_call(o, &theirs))
                        rc = ncclInvalidUsage;
                else if (o->kind == OP_BROADCAST && r != o->root)
                        continue;
                else if (view[r].bytes != input_bytes(o, n))
                        rc = ncclSystemError; /* its input could not be posted */
                else if (r == me)
                        in[r] = data;
                else if (!(in[r] = maps[r] = map_peer(view[r].pid, view[r].fd, view[r].bytes)))
                        rc = ncclSystemError;
        }
        bool ran = false;
        if (rc == ncclSuccess) {
                void *out[MAX_RANKS] = {0};
                out[me] = o->kind == OP_REDUCE && me != o->root ? NULL : o->recv;
                double bus = compute_collective(o, n, in, out);
                if (bus < 0) {
                        rc = ncclSystemError;
                } else if (o->stream) {
                        double start = 0;
                        for (int r = 0; r < n; r++)
                                if (view[r].clock_ms > start)
                                        start = view[r].clock_ms;
                        o->stream->clock_ms = start + step_cost_ms(bus);
                }
                ran = bus >= 0;
        }
        for (int r = 0; r < n; r++)
                if (maps[r])
                        munmap(maps[r], view[r].bytes);
        ncclResult_t finished = posted == ncclSuccess ? finish_step(comm, seq) : posted;
        if (rc == ncclSuccess)
                rc = finished;
        if (data)
                munmap(data, bytes);
        if (fd >= 0)
                close(fd);
        if (rc != ncclSuccess && comm->async == ncclSuccess)
                comm->async = rc;
        return ran;
}

/* A group's sends and receives of a rank whose peers are other processes, as one step of the
 * whole communicator (every rank posts one, empty or not); the k-th receive from a peer takes
 * that peer's k-th send to this rank. Called without the process lock. */
static void cross_p2p(struct ncclComm *comm, const struct fake_op *ops) {
        struct shm_ctl *c = comm->ctl;
        int n = c->nranks, me = comm->rank;
        struct p2p_scratch {
                struct shm_slot post;
                struct step_p2p sends[MAX_RANKS][MAX_STEP_P2P];
                int n_sends[MAX_RANKS];
        } *scratch = malloc(sizeof(*scratch)); /* large: not on the stack */
        if (!scratch) {
                comm->async = ncclSystemError;
                return;
        }
        struct shm_slot *post = &scratch->post;
        ncclResult_t rc = ncclSuccess;
        size_t bytes = 0;
        cudaStream_t stream = NULL;
        *post = (struct shm_slot){.kind = STEP_P2P, .data_fd = -1};
        for (const struct fake_op *o = ops; o; o = o->next) {
                if (post->n_p2p == MAX_STEP_P2P) {
                        rc = ncclInvalidUsage; /* more than the fake keeps in one group */
                        break;
                }
                post->p2p[post->n_p2p++] = (struct step_p2p){.kind = o->kind, .peer = o->root, .count = o->count,
                                                           .type = o->type, .offset = bytes};
                if (o->kind == OP_SEND)
                        bytes += o->count * type_size(o->type);
                stream = o->stream;
        }
        void *data;
        int fd = step_data(bytes, &data);
        if (bytes && fd < 0)
                rc = ncclSystemError;
        double sent = 0, received = 0;
        int i = 0;
        for (const struct fake_op *o = ops; o && i < post->n_p2p; o = o->next, i++)
                if (o->kind == OP_SEND && data) {
                        size_t b = o->count * type_size(o->type);
                        memcpy((char *)data + post->p2p[i].offset, o->send, b);
                        if (o->root != me)
                                sent += (double)b;
                }
        post->data_fd = fd;
        post->data_bytes = fd < 0 ? 0 : bytes;
        post->clock_ms = stream ? stream->clock_ms : 0;
        unsigned long seq = ++comm->steps;
        struct peer_view view[MAX_RANKS];
        struct step_p2p(*sends)[MAX_STEP_P2P] = scratch->sends;
        int *n_sends = scratch->n_sends;
        ncclResult_t posted = post_step(comm, post, seq, view, sends, n_sends);
        if (rc == ncclSuccess)
                rc = posted;
        void *maps[MAX_RANKS] = {0};
        int taken[MAX_RANKS] = {0};
        i = 0;
        for (const struct fake_op *o = ops; rc == ncclSuccess && o && i < post->n_p2p; o = o->next, i++) {
                if (o->kind != OP_RECV)
                        continue;
                int p = o->root;
                if (view[p].kind != STEP_P2P || taken[p] >= n_sends[p]) {
                        rc = ncclInvalidUsage; /* no matching send: a real NCCL would wait for ever */
                        break;
                }
                const struct step_p2p *s = &sends[p][taken[p]++];
                const char *from = p == me ? data : NULL;
                if (p != me && !maps[p] && view[p].bytes)
                        maps[p] = map_peer(view[p].pid, view[p].fd, view[p].bytes);
                if (p != me)
                        from = maps[p];
                size_t es = type_size(o->type);
                size_t b = (s->count < o->count ? s->count : o->count) * es;
                if (s->count != o->count || s->type != o->type)
                        rc = ncclInvalidUsage;
                if (b && (!from || s->offset + b > view[p].bytes)) {
                        rc = ncclSystemError;
                        break;
                }
                memmove(o->recv, from + s->offset, b);
                corrupt(o->recv, b);
                if (p != me)
                        received += (double)b;
        }
        for (int r = 0; r < n; r++)
                if (maps[r])
                        munmap(maps[r], view[r].bytes);
        if (rc == ncclSuccess && stream && (sent || received))
                stream->clock_ms += step_cost_ms(sent > received ? sent : received);
        ncclResult_t finished = posted == ncclSuccess ? finish_step(comm, seq) : posted;
        if (rc == ncclSuccess)
                rc = finished;
        if (data)
                munmap(data, bytes);
        if (fd >= 0)
                close(fd);
        if (rc != ncclSuccess && comm->async == ncclSuccess)
                comm->async = rc;
        free(scratch);
}

static void free_ops(struct fake_op *o) {
        while (o) {
                struct fake_op *next = o->next;
                free(o);
                o = next;
        }
}

/* Run what this process' cross-process ranks have queued: each collective a step, then the
 * sends and receives as one. Called with the process lock, which it lets go while it waits
 * for the other processes (a comm is used by one thread at a time, as NCCL asks). */
static void progress_cross(void) {
        for (struct ncclComm *c = fk.cross; c; c = c->next_cross)
                while (c->head || c->p2p_queue) {
                        if (c->head) {
                                struct fake_op *o = c->head;
                                c->head = o->next;
                                if (!c->head)
                                        c->tail = NULL;
                                pthread_mutex_unlock(&lock);
                                bool ran = cross_collective(c, o);
                                pthread_mutex_lock(&lock);
                                if (ran)
                                        fk.collectives++;
                                free(o);
                        } else {
                                struct fake_op *list = c->p2p_queue;
                                c->p2p_queue = NULL;
                                pthread_mutex_unlock(&lock);
                                cross_p2p(c, list);
                                pthread_mutex_lock(&lock);
                                free_ops(list);
                        }
                }
}

/* This rank leaves the shared block (its comm destroyed or aborted): the ranks waiting for
 * it see it gone. The block goes with its last mapping; its name went at the last join. */
static void leave_ctl(struct shm_ctl *c, int rank) {
        ctl_lock(c);
        c->slots[rank].left = true;
        pthread_cond_broadcast(&c->cond);
        pthread_mutex_unlock(&c->mutex);
        munmap(c, sizeof(*c));
}

static void progress(void) {
        if (fk.group_depth > 0)
                return;
        for (struct clique *q = fk.cliques; q; q = q->next)
                progress_clique(q);
        progress_p2p();
        settle_p2p();
        progress_cross();
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
        if (tmpl->stream && comm->device >= 0 && tmpl->stream->device != comm->device)
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
                struct fake_op **p = comm->ctl ? &comm->p2p_queue : &fk.p2p_head;
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
        /* fresh and random per call, as NCCL's (which carries rank 0's address): the bytes
         * name the shared memory where the ranks of other processes meet */
        uint8_t r[16];
        if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
                static unsigned long serial;
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                uint64_t a = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32), b = (uint64_t)ts.tv_sec ^ ++serial;
                memcpy(r, &a, 8);
                memcpy(r + 8, &b, 8);
        }
        memset(id, 0, sizeof(*id));
        int o = snprintf(id->internal, sizeof(id->internal), "%s", SHM_PREFIX);
        for (size_t i = 0; i < sizeof(r); i++)
                o += snprintf(id->internal + o, sizeof(id->internal) - (size_t)o, "%02x", r[i]);
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

/* This process' rank of a communicator spanning processes: a clique of its own (the other
 * ranks' comms are elsewhere) and the shared control block. Its device is not known here
 * (ranks of another node count from 0 again): any stream is accepted. */
static ncclResult_t join_cross(ncclComm_t *ret, struct shm_ctl *ctl, int nranks, int rank) {
        struct clique *q = calloc(1, sizeof(*q));
        struct ncclComm *c = q ? new_comm(q, rank, -1) : NULL;
        if (!c) {
                free(q);
                leave_ctl(ctl, rank);
                return ncclSystemError;
        }
        q->nranks = nranks;
        q->joined = 1;
        c->ctl = ctl;
        c->next_cross = fk.cross;
        fk.cross = c;
        *ret = c;
        return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
        ENTER();
        if (!comm || nranks < 1 || nranks > MAX_RANKS || rank < 0 || rank >= nranks)
                LEAVE(ncclInvalidArgument);
        struct shm_ctl *ctl = NULL;
        bool one_process = false;
        pthread_mutex_unlock(&lock); /* the other ranks may be threads of this process */
        ncclResult_t joined_rc = shm_join(&id, nranks, rank, &ctl, &one_process);
        pthread_mutex_lock(&lock);
        if (joined_rc != ncclSuccess)
                LEAVE(joined_rc);
        if (!one_process)
                LEAVE(join_cross(comm, ctl, nranks, rank));
        munmap(ctl, sizeof(*ctl)); /* threads only: the in-process path below runs them */
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
        if (comm->ctl) {
                free_ops(comm->p2p_queue);
                for (struct ncclComm **p = &fk.cross; *p; p = &(*p)->next_cross)
                        if (*p == comm) {
                                *p = comm->next_cross;
                                break;
                        }
                leave_ctl(comm->ctl, comm->rank);
        }
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

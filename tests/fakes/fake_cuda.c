/* A libcuda.so.1 test double: the driver API subset gpuvet's CUDA backend calls
 * (src/bindings/cuda_api.h), run on the host.
 *
 * - Device pointers are host memory; copies are memcpy, done at the call.
 * - Kernels are found by name (cuModuleGetFunction) in a table of C reference
 *   implementations of src/bench/kernels.def, run over grid x block work items.
 * - Each stream keeps a synthetic device clock that every operation advances (bytes over
 *   a configured bandwidth, FLOPs over a configured rate, a fixed launch cost); events
 *   record that clock, so cuEventElapsedTime gives figures the tests can predict.
 *
 * Configuration, read from the environment at every cuInit:
 *   FAKE_CUDA_DEVICES=N            devices (default 1, at most 16)
 *   FAKE_CUDA_CC=9.0[,7.0...]      compute capability per device (the last repeats)
 *   FAKE_CUDA_NAME=...             device name (default "Fake NVIDIA H100 80GB HBM3")
 *   FAKE_CUDA_MEM_MIB=N            memory per device (default 1024)
 *   FAKE_CUDA_BW_GBPS=X            device memory bandwidth for kernels and d2d (default 2000)
 *   FAKE_CUDA_PCIE_GBPS=X[,Y...]   host<->device copies (default 25); a list gives one
 *                                  figure per device (the last repeats)
 *   FAKE_CUDA_PCI_BUS_IDS=A[,B...] PCI addresses of the devices ("0000:1b:00.0"; default
 *                                  0000:1B:00.0, 0000:2B:00.0 ... 0x10 apart)
 *   FAKE_CUDA_P2P_GBPS=X           peer copies (default 300); FAKE_CUDA_P2P=0: no peer access
 *   FAKE_CUDA_TFLOPS=X             FMA kernels (default 50)
 *   FAKE_CUDA_LAUNCH_US=X          per launch (default 5)
 *   FAKE_CUDA_COPY_US=X            per copy, before the bytes (default 2)
 *   FAKE_CUDA_DUPLEX=1|0           host<->device copies on two streams: 1 (default, as
 *                                  PCIe and GPUs with two copy engines) H2D and D2H each
 *                                  have the full FAKE_CUDA_PCIE_GBPS at once, so a
 *                                  bidirectional transfer moves ~2x; 0: one link shared
 *                                  by both directions, copies queue for it (~1x)
 *   FAKE_CUDA_WRONG_KERNEL=name    that kernel computes a wrong result (one element off)
 *   FAKE_CUDA_FAIL=fn:CODE[:call=N][,...]   fn returns CODE (a CUDA_ERROR_* name or a
 *                                  number): at its N-th call only, or at every call
 *   FAKE_CUDA_HANG=fn              fn never returns (deadline tests)
 *   FAKE_CUDA_INIT_MS=N            cuInit takes N ms (a node waking its GPUs; benchmarks)
 *   FAKE_CUDA_CRASH=fn             fn aborts the process (SIGABRT: a driver that crashes;
 *                                  not SIGSEGV, which ASan builds turn into an exit)
 *   cuMemGetHandleForAddressRange  gives a memfd as the "dma-buf" (FAKE_CUDA_FAIL to refuse)
 *   FAKE_CUDA_LOG=FILE             append one line per call ("fn rc"), for tests that
 *                                  list the calls a run makes
 *   FAKE_CUDA_LOAD_LOG=FILE        append a line at every load of the library (read at
 *                                  load), for tests that show a process never loaded it
 *   FAKE_CUDA_MEM_FAULT=OFF:MASK[:ALLOC[:LEN]][,...]   a memory fault (at most 4): the
 *                                  memtest kernels read bytes OFF .. OFF + LEN - 1 (LEN 8
 *                                  by default) of device allocation number ALLOC (the
 *                                  ALLOC-th successful cuMemAlloc_v2 since cuInit, from 1;
 *                                  default 1) with the bits of MASK flipped: MASK is a
 *                                  64-bit little-endian word laid over every 8 bytes from
 *                                  OFF on, so LEN = the allocation's size flips those bits
 *                                  in every word. Numbers in C notation (0x.. for hex).
 *                                  The bench kernels and copies see the memory as written.
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bindings/cuda_api.h"

#define FAKE_EXPORT __attribute__((visibility("default")))
#define MAX_DEVICES 16
#define MAX_FAILS 16

/* Whether a process loaded the library at all (a held CUDA probe sent away must not):
 * each load appends a line to $FAKE_CUDA_LOAD_LOG. */
__attribute__((constructor)) static void fake_load(void) {
        const char *path = getenv("FAKE_CUDA_LOAD_LOG");
        if (!path || !*path)
                return;
        FILE *f = fopen(path, "a");
        if (f) {
                fprintf(f, "loaded by pid %d\n", (int)getpid());
                fclose(f);
        }
}

struct fake_ctx {
        int device;
        int retained;
        int peer[MAX_DEVICES];
};

struct CUstream_st {
        int device;
        double clock_ms;
};

struct CUevent_st {
        double t_ms;
        bool recorded;
        int device; /* of the stream it was recorded on */
};

struct fake_alloc {
        void *p;
        size_t bytes;
        int device;
        unsigned long number; /* device allocations: the n-th since cuInit, from 1 */
        struct fake_alloc *next;
};

#define MAX_MEM_FAULTS 4

/* FAKE_CUDA_MEM_FAULT: where and which bits; lo .. hi is the fault's address range in the
 * allocation while it is alive (resolved at each memtest launch), NULL otherwise. */
struct fake_mem_fault {
        unsigned long long offset, mask, length;
        unsigned long alloc;
        const unsigned char *lo, *hi;
};

struct fake_fail {
        char fn[64];
        CUresult rc;
        unsigned long call; /* 0: every call */
};

static struct {
        bool initialized;
        int n_devices;
        int cc_major[MAX_DEVICES], cc_minor[MAX_DEVICES];
        char name[128];
        size_t mem_bytes;
        size_t used[MAX_DEVICES];
        double bw_gbps, pcie_gbps, p2p_gbps, tflops, launch_us, copy_us;
        double pcie_dev_gbps[MAX_DEVICES];
        char bus_id[MAX_DEVICES][16];
        bool p2p;
        bool duplex;
        /* The streams of a device share its timeline: host_ms is the latest device time the
         * host has waited for (a stream synchronised), before which nothing enqueued
         * afterwards can start; link_ms[dir] is when the host link is free again for
         * H2D (0) and D2H (1) copies, one link for both unless duplex. */
        double host_ms[MAX_DEVICES];
        double link_ms[MAX_DEVICES][2];
        char wrong_kernel[64];
        char hang[64];
        char crash[64];
        struct fake_fail fails[MAX_FAILS];
        int n_fails;
        struct fake_ctx ctxs[MAX_DEVICES];
        struct fake_alloc *allocs;
        unsigned long n_device_allocs;
        struct fake_mem_fault mem_faults[MAX_MEM_FAULTS];
        int n_mem_faults;
        FILE *log;
} fk;

static __thread struct fake_ctx *current;

/* Per-function call counters, by name. */
static struct {
        char fn[64];
        unsigned long n;
} counters[64];

static const struct {
        const char *name;
        CUresult rc;
} codes[] = {
        {"CUDA_SUCCESS", 0},
        {"CUDA_ERROR_INVALID_VALUE", 1},
        {"CUDA_ERROR_OUT_OF_MEMORY", 2},
        {"CUDA_ERROR_NOT_INITIALIZED", 3},
        {"CUDA_ERROR_STUB_LIBRARY", 34},
        {"CUDA_ERROR_NO_DEVICE", 100},
        {"CUDA_ERROR_INVALID_DEVICE", 101},
        {"CUDA_ERROR_INVALID_IMAGE", 200},
        {"CUDA_ERROR_INVALID_CONTEXT", 201},
        {"CUDA_ERROR_NO_BINARY_FOR_GPU", 209},
        {"CUDA_ERROR_ECC_UNCORRECTABLE", 214},
        {"CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", 217},
        {"CUDA_ERROR_INVALID_PTX", 218},
        {"CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 222},
        {"CUDA_ERROR_INVALID_HANDLE", 400},
        {"CUDA_ERROR_NOT_FOUND", 500},
        {"CUDA_ERROR_ILLEGAL_ADDRESS", 700},
        {"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 701},
        {"CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", 704},
        {"CUDA_ERROR_LAUNCH_FAILED", 719},
        {"CUDA_ERROR_NOT_SUPPORTED", 801},
        {"CUDA_ERROR_TIMEOUT", 909},
        {"CUDA_ERROR_UNKNOWN", 999},
};

static CUresult code_by_name(const char *s) {
        for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
                if (strcmp(codes[i].name, s) == 0)
                        return codes[i].rc;
        char *end;
        long v = strtol(s, &end, 10);
        return *s && !*end ? (CUresult)v : CUDA_ERROR_UNKNOWN;
}

static double env_double(const char *name, double def) {
        const char *s = getenv(name);
        if (!s || !*s)
                return def;
        char *end;
        double v = strtod(s, &end);
        return *end || !(v > 0) ? def : v;
}

static void configure(void) {
        const char *s = getenv("FAKE_CUDA_DEVICES");
        fk.n_devices = s && *s ? atoi(s) : 1;
        if (fk.n_devices < 0)
                fk.n_devices = 0;
        if (fk.n_devices > MAX_DEVICES)
                fk.n_devices = MAX_DEVICES;
        int major = 9, minor = 0;
        s = getenv("FAKE_CUDA_CC");
        for (int i = 0; i < MAX_DEVICES; i++) {
                if (s && *s) {
                        sscanf(s, "%d.%d", &major, &minor);
                        s = strchr(s, ',');
                        if (s)
                                s++;
                }
                fk.cc_major[i] = major;
                fk.cc_minor[i] = minor;
        }
        s = getenv("FAKE_CUDA_NAME");
        snprintf(fk.name, sizeof(fk.name), "%s", s && *s ? s : "Fake NVIDIA H100 80GB HBM3");
        fk.mem_bytes = (size_t)(env_double("FAKE_CUDA_MEM_MIB", 1024) * 1048576.0);
        fk.bw_gbps = env_double("FAKE_CUDA_BW_GBPS", 2000);
        fk.pcie_gbps = env_double("FAKE_CUDA_PCIE_GBPS", 25);
        s = getenv("FAKE_CUDA_PCIE_GBPS");
        for (int i = 0; i < MAX_DEVICES; i++) {
                double v = s && *s ? strtod(s, NULL) : 0;
                fk.pcie_dev_gbps[i] = v > 0 ? v : i ? fk.pcie_dev_gbps[i - 1] : fk.pcie_gbps;
                s = s ? strchr(s, ',') : NULL;
                if (s)
                        s++;
        }
        fk.pcie_gbps = fk.pcie_dev_gbps[0]; /* env_double refuses a list */
        s = getenv("FAKE_CUDA_PCI_BUS_IDS");
        for (int i = 0; i < MAX_DEVICES; i++) {
                size_t len = s ? strcspn(s, ",") : 0;
                if (len)
                        snprintf(fk.bus_id[i], sizeof(fk.bus_id[i]), "%.*s", (int)len, s);
                else
                        snprintf(fk.bus_id[i], sizeof(fk.bus_id[i]), "0000:%02X:00.0", 0x1b + i * 0x10);
                s = s && s[len] == ',' ? s + len + 1 : NULL;
        }
        fk.p2p_gbps = env_double("FAKE_CUDA_P2P_GBPS", 300);
        fk.tflops = env_double("FAKE_CUDA_TFLOPS", 50);
        fk.launch_us = env_double("FAKE_CUDA_LAUNCH_US", 5);
        fk.copy_us = env_double("FAKE_CUDA_COPY_US", 2);
        s = getenv("FAKE_CUDA_P2P");
        fk.p2p = !(s && strcmp(s, "0") == 0);
        s = getenv("FAKE_CUDA_DUPLEX");
        fk.duplex = !(s && strcmp(s, "0") == 0);
        s = getenv("FAKE_CUDA_WRONG_KERNEL");
        snprintf(fk.wrong_kernel, sizeof(fk.wrong_kernel), "%s", s ? s : "");
        s = getenv("FAKE_CUDA_HANG");
        snprintf(fk.hang, sizeof(fk.hang), "%s", s ? s : "");
        s = getenv("FAKE_CUDA_CRASH");
        snprintf(fk.crash, sizeof(fk.crash), "%s", s ? s : "");
        fk.n_fails = 0;
        s = getenv("FAKE_CUDA_FAIL");
        while (s && *s && fk.n_fails < MAX_FAILS) {
                char item[128];
                size_t len = strcspn(s, ",");
                snprintf(item, sizeof(item), "%.*s", (int)len, s);
                s += len + (s[len] == ',');
                struct fake_fail *f = &fk.fails[fk.n_fails];
                char *a = strchr(item, ':');
                if (!a)
                        continue;
                *a++ = '\0';
                char *c = strchr(a, ':');
                if (c)
                        *c++ = '\0';
                snprintf(f->fn, sizeof(f->fn), "%.63s", item);
                f->rc = code_by_name(a);
                f->call = c && strncmp(c, "call=", 5) == 0 ? strtoul(c + 5, NULL, 10) : 0;
                fk.n_fails++;
        }
        fk.n_device_allocs = 0;
        fk.n_mem_faults = 0;
        s = getenv("FAKE_CUDA_MEM_FAULT");
        while (s && *s && fk.n_mem_faults < MAX_MEM_FAULTS) {
                struct fake_mem_fault *f = &fk.mem_faults[fk.n_mem_faults];
                char *end;
                memset(f, 0, sizeof(*f));
                f->offset = strtoull(s, &end, 0);
                f->mask = *end == ':' ? strtoull(end + 1, &end, 0) : 0;
                f->alloc = *end == ':' ? strtoul(end + 1, &end, 0) : 1;
                f->length = *end == ':' ? strtoull(end + 1, &end, 0) : 8;
                s = strchr(end, ',');
                s = s ? s + 1 : NULL;
                if (f->mask && f->alloc && f->length)
                        fk.n_mem_faults++;
        }
        s = getenv("FAKE_CUDA_LOG");
        if (fk.log)
                fclose(fk.log);
        fk.log = s && *s ? fopen(s, "a") : NULL;
        memset(counters, 0, sizeof(counters));
}

/* Count the call, hang or fail it when configured; returns the injected code or 0. */
static CUresult enter(const char *fn) {
        unsigned long n = 0;
        for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
                if (!counters[i].fn[0])
                        snprintf(counters[i].fn, sizeof(counters[i].fn), "%s", fn);
                if (strcmp(counters[i].fn, fn) == 0) {
                        n = ++counters[i].n;
                        break;
                }
        }
        if (fk.hang[0] && strcmp(fk.hang, fn) == 0)
                for (;;)
                        pause();
        if (fk.crash[0] && strcmp(fk.crash, fn) == 0)
                abort();
        CUresult rc = 0;
        for (int i = 0; i < fk.n_fails; i++)
                if (strcmp(fk.fails[i].fn, fn) == 0 && (fk.fails[i].call == 0 || fk.fails[i].call == n))
                        rc = fk.fails[i].rc;
        if (fk.log) {
                fprintf(fk.log, "%s %d\n", fn, rc);
                fflush(fk.log);
        }
        return rc;
}

#define ENTER()                                  \
        do {                                     \
                CUresult inj_ = enter(__func__); \
                if (inj_)                        \
                        return inj_;             \
        } while (0)
#define NEED_INIT()                                   \
        do {                                          \
                if (!fk.initialized)                  \
                        return CUDA_ERROR_NOT_INITIALIZED; \
        } while (0)
#define NEED_CTX()                                    \
        do {                                          \
                NEED_INIT();                          \
                if (!current || !current->retained)   \
                        return CUDA_ERROR_INVALID_CONTEXT; \
        } while (0)

static struct fake_alloc *find_alloc(const void *p, size_t bytes) {
        const char *c = p;
        for (struct fake_alloc *a = fk.allocs; a; a = a->next) {
                const char *base = a->p;
                if (c >= base && c <= base + a->bytes && bytes <= (size_t)(base + a->bytes - c))
                        return a;
        }
        return NULL;
}

/* A stream idle since before the host last waited starts its next work no earlier. */
static void catch_up(CUstream s) {
        if (s && s->device >= 0 && s->device < MAX_DEVICES && s->clock_ms < fk.host_ms[s->device])
                s->clock_ms = fk.host_ms[s->device];
}

static void advance(CUstream s, double bytes, double gbps) {
        catch_up(s);
        if (s)
                s->clock_ms += bytes / (gbps * 1e9) * 1e3;
}

/* A copy: the fixed cost of starting a DMA, then the bytes. */
static void advance_copy(CUstream s, double bytes, double gbps) {
        catch_up(s);
        if (s)
                s->clock_ms += fk.copy_us / 1e3;
        advance(s, bytes, gbps);
}

/* A host<->device copy (dir 0: H2D, 1: D2H) waits for the link its direction uses. */
static void advance_link(CUstream s, double bytes, int dir) {
        catch_up(s);
        if (!s || s->device < 0 || s->device >= MAX_DEVICES) {
                advance_copy(s, bytes, fk.pcie_gbps);
                return;
        }
        double *free_ms = &fk.link_ms[s->device][fk.duplex ? dir : 0];
        if (s->clock_ms < *free_ms)
                s->clock_ms = *free_ms;
        advance_copy(s, bytes, fk.pcie_dev_gbps[s->device]);
        *free_ms = s->clock_ms;
}

/* The host waited for t_ms on device d. */
static void host_waited(int d, double t_ms) {
        if (d >= 0 && d < MAX_DEVICES && fk.host_ms[d] < t_ms)
                fk.host_ms[d] = t_ms;
}

/* ---- initialisation and devices ---------------------------------------------------------- */

FAKE_EXPORT CUresult cuInit(unsigned int flags) {
        configure();
        ENTER();
        const char *init_ms = getenv("FAKE_CUDA_INIT_MS");
        if (init_ms && atoi(init_ms) > 0)
                usleep((useconds_t)atoi(init_ms) * 1000u);
        if (flags != 0)
                return CUDA_ERROR_INVALID_VALUE;
        if (fk.n_devices == 0)
                return CUDA_ERROR_NO_DEVICE;
        fk.initialized = true;
        return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDriverGetVersion(int *v) {
        ENTER();
        if (!v)
                return CUDA_ERROR_INVALID_VALUE;
        *v = 13000;
        return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetCount(int *n) {
        ENTER();
        NEED_INIT();
        *n = fk.n_devices;
        return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGet(CUdevice *d, int i) {
        ENTER();
        NEED_INIT();
        if (i < 0 || i >= fk.n_devices)
                return CUDA_ERROR_INVALID_DEVICE;
        *d = i;
        return CUDA_SUCCESS;
}

#define CHECK_DEV(d)                                   \
        do {                                           \
                if ((d) < 0 || (d) >= fk.n_devices)    \
                        return CUDA_ERROR_INVALID_DEVICE; \
        } while (0)

FAKE_EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
        ENTER();
        NEED_INIT();
        CHECK_DEV(d);
        if (!name || len <= 0)
                return CUDA_ERROR_INVALID_VALUE;
        snprintf(name, (size_t)len, "%s", fk.name);
        return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) {
        ENTER();
        NEED_INIT();
        CHECK_DEV(d);
        *bytes = fk.mem_bytes;
        return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
        ENTER();
        NEED_INIT();
        CHECK_DEV(d);
        switch (a) {
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
        case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1980000; break;
        case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
        case CU_DEVICE_ATTRIBUTE_INTEGRATED: *v = 0; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = fk.cc_major[d]; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = fk.cc_minor[d]; break;
        case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED: *v = 1; break;
        case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED: *v = 1; break;
        default: return CUDA_ERROR_INVALID_VALUE;
        }
        return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetPCIBusId(char *bus, int len, CUdevice d) {
        ENTER();
        NEED_INIT();
        CHECK_DEV(d);
        /* The driver's form: upper-case hex (FAKE_CUDA_PCI_BUS_IDS as given). */
        snprintf(bus, (size_t)len, "%s", fk.bus_id[d]);
        return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceCanAccessPeer(int *can, CUdevice d, CUdevice peer) {
        ENTER();
        NEED_INIT();
        CHECK_DEV(d);
        CHECK_DEV(peer);
        *can = fk.p2p && d != peer;
        return CUDA_SUCCESS;
}

/* ---- contexts and streams ------------------------------------------------------------------ */

FAKE_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice d) {
        ENTER();
        NEED_INIT();
        CHECK_DEV(d);
        fk.ctxs[d].device = d;
        fk.ctxs[d].retained++;
        *pctx = (CUcontext)&fk.ctxs[d];
        return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
        ENTER();
        NEED_INIT();
        CHECK_DEV(d);
        if (fk.ctxs[d].retained <= 0)
                return CUDA_ERROR_INVALID_CONTEXT;
        if (--fk.ctxs[d].retained == 0)
                memset(fk.ctxs[d].peer, 0, sizeof(fk.ctxs[d].peer));
        return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
        ENTER();
        NEED_INIT();
        struct fake_ctx *c = (struct fake_ctx *)ctx;
        if (c && (c < fk.ctxs || c >= fk.ctxs + MAX_DEVICES || !c->retained))
                return CUDA_ERROR_INVALID_CONTEXT;
        current = c;
        return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags) {
        ENTER();
        NEED_CTX();
        struct fake_ctx *p = (struct fake_ctx *)peer;
        if (flags || !p || p < fk.ctxs || p >= fk.ctxs + MAX_DEVICES || !p->retained)
                return CUDA_ERROR_INVALID_VALUE;
        if (!fk.p2p || p == current)
                return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
        if (current->peer[p->device])
                return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
        current->peer[p->device] = 1;
        return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuStreamCreate(CUstream *s, unsigned int flags) {
        ENTER();
        NEED_CTX();
        (void)flags;
        struct CUstream_st *st = calloc(1, sizeof(*st));
        if (!st)
                return CUDA_ERROR_OUT_OF_MEMORY;
        st->device = current->device;
        *s = st;
        return CUDA_SUCCESS;
}

/* Destroy calls release the handle whatever they answer (an injected error, no current
 * context): the stream is gone from the caller's point of view either way, and keeping
 * it would read as the caller's leak under LeakSanitizer. */
FAKE_EXPORT CUresult cuStreamDestroy_v2(CUstream s) {
        CUresult r = enter(__func__);
        free(s);
        return r;
}

FAKE_EXPORT CUresult cuStreamSynchronize(CUstream s) {
        ENTER();
        NEED_CTX();
        if (s)
                host_waited(s->device, s->clock_ms);
        return CUDA_SUCCESS;
}

/* ---- memory ----------------------------------------------------------------------------------- */

static CUresult track(void **p, size_t bytes, int device) {
        if (bytes == 0)
                return CUDA_ERROR_INVALID_VALUE;
        if (device >= 0 && fk.used[device] + bytes > fk.mem_bytes)
                return CUDA_ERROR_OUT_OF_MEMORY;
        struct fake_alloc *a = calloc(1, sizeof(*a));
        /* Poisoned, like fresh device memory: a kernel that skips elements is caught. */
        void *m = malloc(bytes);
        if (!a || !m) {
                free(a);
                free(m);
                return CUDA_ERROR_OUT_OF_MEMORY;
        }
        memset(m, 0xa5, bytes);
        a->p = m;
        a->bytes = bytes;
        a->device = device;
        if (device >= 0)
                a->number = ++fk.n_device_allocs;
        a->next = fk.allocs;
        fk.allocs = a;
        if (device >= 0)
                fk.used[device] += bytes;
        *p = m;
        return CUDA_SUCCESS;
}

static CUresult untrack(void *p, bool device) {
        for (struct fake_alloc **pa = &fk.allocs; *pa; pa = &(*pa)->next) {
                struct fake_alloc *a = *pa;
                if (a->p == p && (a->device >= 0) == device) {
                        *pa = a->next;
                        if (a->device >= 0)
                                fk.used[a->device] -= a->bytes;
                        free(a->p);
                        free(a);
                        return CUDA_SUCCESS;
                }
        }
        return CUDA_ERROR_INVALID_VALUE;
}

FAKE_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes) {
        ENTER();
        NEED_CTX();
        void *p = NULL;
        CUresult rc = track(&p, bytes, current->device);
        if (rc == CUDA_SUCCESS)
                *dptr = (CUdeviceptr)(uintptr_t)p;
        return rc;
}

FAKE_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) {
        ENTER();
        NEED_CTX();
        return untrack((void *)(uintptr_t)dptr, true);
}

/* A dma-buf of a device range: here an empty memfd, which the fake libibverbs'
 * ibv_reg_dmabuf_mr accepts (it registers the iova range, host memory in these fakes).
 * FAKE_CUDA_FAIL=cuMemGetHandleForAddressRange:CUDA_ERROR_NOT_SUPPORTED plays a driver
 * without dma-buf (proprietary modules). */
FAKE_EXPORT CUresult cuMemGetHandleForAddressRange(void *handle, CUdeviceptr dptr, size_t size,
                                                   CUmemRangeHandleType type, unsigned long long flags) {
        ENTER();
        NEED_CTX();
        if (!handle || !dptr || !size || type != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD || flags)
                return CUDA_ERROR_INVALID_VALUE;
        int fd = memfd_create("fake-cuda-dmabuf", MFD_CLOEXEC);
        if (fd < 0)
                return CUDA_ERROR_OPERATING_SYSTEM;
        *(int *)handle = fd;
        return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes) {
        ENTER();
        NEED_CTX();
        if (!free_bytes || !total_bytes)
                return CUDA_ERROR_INVALID_VALUE;
        *total_bytes = fk.mem_bytes;
        *free_bytes = fk.mem_bytes - fk.used[current->device];
        return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemAllocHost_v2(void **p, size_t bytes) {
        ENTER();
        NEED_CTX();
        return track(p, bytes, -1);
}

FAKE_EXPORT CUresult cuMemFreeHost(void *p) {
        ENTER();
        NEED_CTX();
        return untrack(p, false);
}

static bool is_device(CUdeviceptr p, size_t bytes) {
        struct fake_alloc *a = find_alloc((void *)(uintptr_t)p, bytes);
        return a && a->device >= 0;
}

FAKE_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, CUstream s) {
        ENTER();
        NEED_CTX();
        if (!s || !src || !is_device(dst, bytes))
                return CUDA_ERROR_INVALID_VALUE;
        memcpy((void *)(uintptr_t)dst, src, bytes);
        advance_link(s, (double)bytes, 0);
        return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream s) {
        ENTER();
        NEED_CTX();
        if (!s || !dst || !is_device(src, bytes))
                return CUDA_ERROR_INVALID_VALUE;
        memcpy(dst, (void *)(uintptr_t)src, bytes);
        advance_link(s, (double)bytes, 1);
        return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s) {
        ENTER();
        NEED_CTX();
        if (!s || !is_device(dst, bytes) || !is_device(src, bytes))
                return CUDA_ERROR_INVALID_VALUE;
        memmove((void *)(uintptr_t)dst, (void *)(uintptr_t)src, bytes);
        /* read + write, as the bandwidth convention of docs/bench.md counts a copy */
        advance_copy(s, 2.0 * (double)bytes, fk.bw_gbps);
        return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                                       size_t bytes, CUstream s) {
        ENTER();
        NEED_CTX();
        if (!s || !dst_ctx || !src_ctx || !is_device(dst, bytes) || !is_device(src, bytes))
                return CUDA_ERROR_INVALID_VALUE;
        memmove((void *)(uintptr_t)dst, (void *)(uintptr_t)src, bytes);
        struct fake_ctx *sc = (struct fake_ctx *)src_ctx, *dc = (struct fake_ctx *)dst_ctx;
        /* Without peer access enabled the driver stages through host memory. */
        bool direct = sc->peer[dc->device] || sc == dc;
        advance_copy(s, (double)bytes, direct ? fk.p2p_gbps : fk.pcie_gbps / 2);
        return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s) {
        ENTER();
        NEED_CTX();
        if (!s || !is_device(dst, n))
                return CUDA_ERROR_INVALID_VALUE;
        memset((void *)(uintptr_t)dst, v, n);
        advance(s, (double)n, fk.bw_gbps);
        return CUDA_SUCCESS;
}

/* ---- modules and kernels: C references of src/bench/kernels.def ----------------------------- */

struct launch {
        unsigned long long gsize; /* work items */
        void **p;
        bool wrong;
        double bytes, flops; /* what the launch costs on the synthetic clock */
};

#define ARG(l, i, type) (*(type *)(l)->p[i])
#define PTR(l, i, type) ((type *)(uintptr_t)ARG(l, i, CUdeviceptr))

static void k_copy_f32(struct launch *l) {
        float *out = PTR(l, 0, float), *in = PTR(l, 1, float);
        unsigned long long n = ARG(l, 2, unsigned long long);
        for (unsigned long long i = 0; i < n; i++)
                out[i] = in[i];
        if (l->wrong && n)
                out[n / 2] += 1.0f;
        l->bytes = 8.0 * (double)n;
}

static void k_scale_f32(struct launch *l) {
        float *out = PTR(l, 0, float), *in = PTR(l, 1, float);
        float s = ARG(l, 2, float);
        unsigned long long n = ARG(l, 3, unsigned long long);
        for (unsigned long long i = 0; i < n; i++)
                out[i] = s * in[i];
        if (l->wrong && n)
                out[n / 2] += 1.0f;
        l->bytes = 8.0 * (double)n;
}

static void k_add_f32(struct launch *l) {
        float *out = PTR(l, 0, float), *a = PTR(l, 1, float), *b = PTR(l, 2, float);
        unsigned long long n = ARG(l, 3, unsigned long long);
        for (unsigned long long i = 0; i < n; i++)
                out[i] = a[i] + b[i];
        if (l->wrong && n)
                out[n / 2] += 1.0f;
        l->bytes = 12.0 * (double)n;
}

static void k_triad_f32(struct launch *l) {
        float *out = PTR(l, 0, float), *a = PTR(l, 1, float), *b = PTR(l, 2, float);
        float s = ARG(l, 3, float);
        unsigned long long n = ARG(l, 4, unsigned long long);
        for (unsigned long long i = 0; i < n; i++)
                out[i] = a[i] + s * b[i];
        if (l->wrong && n)
                out[n / 2] += 1.0f;
        l->bytes = 12.0 * (double)n;
}

static void k_read_f32(struct launch *l) {
        float *partial = PTR(l, 0, float), *in = PTR(l, 1, float);
        unsigned long long n = ARG(l, 2, unsigned long long);
        /* Wrong: a kernel that stops half way (an off-by-half loop bound). */
        unsigned long long end = l->wrong ? n / 2 : n;
        /* As the CUDA kernel: work item g sums float4 number g, g + gsize, ..., then the
         * scalar tail element n / 4 * 4 + g. */
        for (unsigned long long g = 0; g < l->gsize; g++) {
                float sum = 0.0f;
                for (unsigned long long v = g; v < end / 4; v += l->gsize)
                        sum += in[4 * v] + in[4 * v + 1] + in[4 * v + 2] + in[4 * v + 3];
                for (unsigned long long i = end / 4 * 4 + g; i < end; i += l->gsize)
                        sum += in[i];
                partial[g] = sum;
        }
        l->bytes = 4.0 * (double)n;
}

static void k_write_f32(struct launch *l) {
        float *out = PTR(l, 0, float);
        float v = ARG(l, 1, float);
        unsigned long long n = ARG(l, 2, unsigned long long);
        for (unsigned long long i = 0; i < n; i++)
                out[i] = v;
        if (l->wrong && n)
                out[n / 2] += 1.0f;
        l->bytes = 4.0 * (double)n;
}

static void k_fill_u32(struct launch *l) {
        uint32_t *out = PTR(l, 0, uint32_t);
        uint32_t seed = ARG(l, 1, uint32_t);
        unsigned long long n = ARG(l, 2, unsigned long long);
        for (unsigned long long i = 0; i < n; i++)
                out[i] = seed ^ (uint32_t)(i * 2654435761ull);
        if (l->wrong && n)
                out[n / 2] ^= 1u;
        l->bytes = 4.0 * (double)n;
}

/* fma_*: 8 chains x = fma(x, 0.999, 0.001) from seed + k/8 (kernels/bench_kernels.cu). */
static void k_fma_f32(struct launch *l) {
        float *out = PTR(l, 0, float);
        uint32_t iters = ARG(l, 1, uint32_t);
        float seed = ARG(l, 2, float);
        float x[8];
        for (int k = 0; k < 8; k++)
                x[k] = seed + 0.125f * (float)k;
        for (uint32_t it = 0; it < iters; it++)
                for (int k = 0; k < 8; k++)
                        x[k] = fmaf(x[k], 0.999f, 0.001f);
        float r = ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]));
        for (unsigned long long g = 0; g < l->gsize; g++)
                out[g] = r;
        if (l->wrong)
                out[0] += 1.0f;
        l->flops = 16.0 * iters * (double)l->gsize;
}

static void k_fma_f64(struct launch *l) {
        double *out = PTR(l, 0, double);
        uint32_t iters = ARG(l, 1, uint32_t);
        double seed = ARG(l, 2, double);
        double x[8];
        for (int k = 0; k < 8; k++)
                x[k] = seed + 0.125 * k;
        for (uint32_t it = 0; it < iters; it++)
                for (int k = 0; k < 8; k++)
                        x[k] = fma(x[k], 0.999, 0.001);
        double r = ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]));
        for (unsigned long long g = 0; g < l->gsize; g++)
                out[g] = r;
        if (l->wrong)
                out[0] += 1.0;
        /* FP64 at half the FP32 rate, as on H100 */
        l->flops = 2.0 * 16.0 * iters * (double)l->gsize;
}

/* Half: A = 0.875, B = 0.125, each step rounded to half (11 significant bits), the sum
 * in float, as the CUDA kernel does. */
static float to_half(float v) {
        if (v == 0)
                return 0;
        int e;
        float m = frexpf(v, &e);
        return ldexpf(nearbyintf(ldexpf(m, 11)), e - 11);
}

static void k_fma_f16(struct launch *l) {
        float *out = PTR(l, 0, float);
        uint32_t iters = ARG(l, 1, uint32_t);
        float seed = ARG(l, 2, float);
        float x[8];
        for (int k = 0; k < 8; k++)
                x[k] = to_half(seed + 0.125f * (float)k);
        for (uint32_t it = 0; it < iters; it++)
                for (int k = 0; k < 8; k++)
                        x[k] = to_half(fmaf(x[k], 0.875f, 0.125f));
        float r = ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]));
        for (unsigned long long g = 0; g < l->gsize; g++)
                out[g] = r;
        if (l->wrong)
                out[0] += 1.0f;
        l->flops = 16.0 * iters * (double)l->gsize / 2.0; /* twice the FP32 rate */
}

static void k_empty(struct launch *l) {
        (void)l;
}

/* ---- memtest kernels (kernels.def, kernels/bench_kernels.cu): the same values, the same
 * counter and log, word by word in ascending order (descending for invert_down); reads go
 * through mt_load, where FAKE_CUDA_MEM_FAULT flips its bits. */

/* Where each FAKE_CUDA_MEM_FAULT lies now: allocations come and go between launches. */
static void mem_faults_resolve(void) {
        for (int i = 0; i < fk.n_mem_faults; i++) {
                struct fake_mem_fault *f = &fk.mem_faults[i];
                f->lo = f->hi = NULL;
                for (struct fake_alloc *a = fk.allocs; a; a = a->next)
                        if (a->device >= 0 && a->number == f->alloc && f->offset < a->bytes) {
                                f->lo = (const unsigned char *)a->p + f->offset;
                                size_t room = a->bytes - f->offset;
                                f->hi = f->lo + (f->length < room ? f->length : room);
                        }
        }
}

/* The word at p as the faulty memory reads it back. */
static uint64_t mt_load(const uint64_t *p) {
        uint64_t v = *p;
        const unsigned char *b = (const unsigned char *)p;
        for (int i = 0; i < fk.n_mem_faults; i++) {
                const struct fake_mem_fault *f = &fk.mem_faults[i];
                if (!f->lo || b + 8 <= f->lo || b >= f->hi)
                        continue;
                for (int j = 0; j < 8; j++)
                        if (b + j >= f->lo && b + j < f->hi)
                                v ^= ((f->mask >> (8 * ((size_t)(b + j - f->lo) % 8))) & 0xffu) << (8 * j);
        }
        return v;
}

static uint64_t mt_walk(uint64_t w, uint64_t param) {
        unsigned r = (unsigned)(w & 63);
        return r ? (param << r) | (param >> (64 - r)) : param;
}

static uint64_t mt_random(uint64_t w, uint64_t seed) {
        uint64_t z = seed + (w + 1) * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
}

static uint64_t mt_address(uint64_t w, uint64_t param) { return w ^ param; }
static uint64_t mt_const(uint64_t w, uint64_t param) { return (void)w, param; }

struct mt_launch {
        uint64_t *data;
        unsigned long long n, base, param;
        uint32_t *errors;
        uint64_t *log;
        uint32_t log_cap;
        unsigned long long bad;
};

static struct mt_launch mt_args(struct launch *l, bool verify) {
        struct mt_launch m = {
                .data = PTR(l, 0, uint64_t),
                .n = ARG(l, 1, unsigned long long),
                .base = ARG(l, 2, unsigned long long),
                .param = ARG(l, 3, unsigned long long),
        };
        if (verify) {
                m.errors = PTR(l, 4, uint32_t);
                m.log = PTR(l, 5, uint64_t);
                m.log_cap = ARG(l, 6, uint32_t);
                mem_faults_resolve();
        }
        return m;
}

static void mt_check(struct mt_launch *m, uint64_t w, uint64_t want, uint64_t got) {
        if (got == want)
                return;
        m->bad++;
        if (m->errors[1] < m->log_cap) {
                uint32_t slot = m->errors[1]++;
                m->log[3 * (size_t)slot] = w;
                m->log[3 * (size_t)slot + 1] = want;
                m->log[3 * (size_t)slot + 2] = got;
        }
}

/* The saturating 32-bit counter of the device kernels. */
static void mt_count(struct mt_launch *m) {
        uint32_t add = m->bad > 0xffffffffull ? 0xffffffffu : (uint32_t)m->bad;
        m->errors[0] = m->errors[0] + add < m->errors[0] ? 0xffffffffu : m->errors[0] + add;
}

/* Wrong (FAKE_CUDA_WRONG_KERNEL): a write kernel writes one word off, a verify kernel
 * sees nothing. */
#define FAKE_MEMTEST_KERNELS(NAME, VALUE)                                                               static void k_memtest_##NAME##_write(struct launch *l) {                                               struct mt_launch m = mt_args(l, false);                                                        for (unsigned long long i = 0; i < m.n; i++)                                                           m.data[i] = VALUE(m.base + i, m.param);                                                if (l->wrong && m.n)                                                                                   m.data[m.n / 2] ^= 1u;                                                                 l->bytes = 8.0 * (double)m.n;                                                          }                                                                                              static void k_memtest_##NAME##_verify(struct launch *l) {                                              struct mt_launch m = mt_args(l, true);                                                         for (unsigned long long i = 0; i < m.n && !l->wrong; i++)                                              mt_check(&m, m.base + i, VALUE(m.base + i, m.param), mt_load(&m.data[i]));                 mt_count(&m);                                                                                  l->bytes = 8.0 * (double)m.n;                                                          }

FAKE_MEMTEST_KERNELS(walk, mt_walk)
FAKE_MEMTEST_KERNELS(random, mt_random)
FAKE_MEMTEST_KERNELS(address, mt_address)
FAKE_MEMTEST_KERNELS(const, mt_const)

static void mt_invert(struct launch *l, bool down) {
        struct mt_launch m = mt_args(l, true);
        for (unsigned long long k = 0; k < m.n; k++) {
                unsigned long long i = down ? m.n - 1 - k : k;
                if (!l->wrong)
                        mt_check(&m, m.base + i, m.param, mt_load(&m.data[i]));
                m.data[i] = ~m.param;
        }
        mt_count(&m);
        l->bytes = 16.0 * (double)m.n;
}

static void k_memtest_invert_up(struct launch *l) { mt_invert(l, false); }
static void k_memtest_invert_down(struct launch *l) { mt_invert(l, true); }

/* n_args: the kernels.def arguments; the hidden logical global size follows them. */
static const struct fake_kernel {
        const char *name;
        void (*run)(struct launch *l);
        int n_args;
} fake_kernels[] = {
        {"copy_f32", k_copy_f32, 3},   {"scale_f32", k_scale_f32, 4}, {"add_f32", k_add_f32, 4},
        {"triad_f32", k_triad_f32, 5}, {"read_f32", k_read_f32, 3},   {"write_f32", k_write_f32, 3},
        {"fill_u32", k_fill_u32, 3},   {"fma_f32", k_fma_f32, 3},     {"fma_f64", k_fma_f64, 3},
        {"fma_f16", k_fma_f16, 3},     {"empty", k_empty, 0},
        /* memtest */
        {"memtest_walk_write", k_memtest_walk_write, 4},
        {"memtest_walk_verify", k_memtest_walk_verify, 7},
        {"memtest_random_write", k_memtest_random_write, 4},
        {"memtest_random_verify", k_memtest_random_verify, 7},
        {"memtest_address_write", k_memtest_address_write, 4},
        {"memtest_address_verify", k_memtest_address_verify, 7},
        {"memtest_const_write", k_memtest_const_write, 4},
        {"memtest_const_verify", k_memtest_const_verify, 7},
        {"memtest_invert_up", k_memtest_invert_up, 7},
        {"memtest_invert_down", k_memtest_invert_down, 7},
};

struct fake_module {
        int device;
};

/* A fatbin starts with the fatbin magic 0xBA55ED50 (little endian); anything else (a
 * build without nvcc would have no image at all) is refused like the driver does. */
FAKE_EXPORT CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned int n_options, CUjit_option *options,
                                        void **values) {
        ENTER();
        NEED_CTX();
        if (!image || (n_options && (!options || !values)))
                return CUDA_ERROR_INVALID_VALUE;
        uint32_t magic;
        memcpy(&magic, image, sizeof(magic));
        if (magic != 0xBA55ED50u)
                return CUDA_ERROR_INVALID_IMAGE;
        /* The real driver refuses a fatbin without SASS or PTX for the device. */
        if (fk.cc_major[current->device] * 10 + fk.cc_minor[current->device] < 75)
                return CUDA_ERROR_NO_BINARY_FOR_GPU;
        struct fake_module *mod = calloc(1, sizeof(*mod));
        if (!mod)
                return CUDA_ERROR_OUT_OF_MEMORY;
        mod->device = current->device;
        *m = (CUmodule)mod;
        return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuModuleUnload(CUmodule m) {
        CUresult r = enter(__func__); /* released whatever the answer, as cuStreamDestroy_v2 */
        free(m);
        return r;
}

FAKE_EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
        ENTER();
        NEED_CTX();
        if (!m || !name)
                return CUDA_ERROR_INVALID_VALUE;
        for (size_t i = 0; i < sizeof(fake_kernels) / sizeof(fake_kernels[0]); i++)
                if (strcmp(fake_kernels[i].name, name) == 0) {
                        *f = (CUfunction)(uintptr_t)&fake_kernels[i];
                        return CUDA_SUCCESS;
                }
        return CUDA_ERROR_NOT_FOUND;
}

FAKE_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                    unsigned int by, unsigned int bz, unsigned int shared, CUstream s, void **params,
                                    void **extra) {
        ENTER();
        NEED_CTX();
        const struct fake_kernel *k = (const struct fake_kernel *)f;
        if (!k || !s || gx == 0 || gy != 1 || gz != 1 || bx == 0 || bx > 1024 || by != 1 || bz != 1 || shared || extra)
                return CUDA_ERROR_INVALID_VALUE;
        if (!params)
                return CUDA_ERROR_INVALID_VALUE;
        struct launch l = {.p = params};
        l.gsize = ARG(&l, k->n_args, unsigned long long);
        /* The kernels return past gsize; more than the threads launched would be a backend bug. */
        if (l.gsize == 0 || l.gsize > (unsigned long long)gx * bx)
                return CUDA_ERROR_INVALID_VALUE;
        l.wrong = fk.wrong_kernel[0] && strcmp(fk.wrong_kernel, k->name) == 0;
        k->run(&l);
        catch_up(s);
        s->clock_ms += fk.launch_us / 1e3;
        advance(s, l.bytes, fk.bw_gbps);
        advance(s, l.flops, fk.tflops * 1e3);
        return CUDA_SUCCESS;
}

/* ---- events ------------------------------------------------------------------------------------ */

FAKE_EXPORT CUresult cuEventCreate(CUevent *e, unsigned int flags) {
        ENTER();
        NEED_CTX();
        (void)flags;
        struct CUevent_st *ev = calloc(1, sizeof(*ev));
        if (!ev)
                return CUDA_ERROR_OUT_OF_MEMORY;
        *e = ev;
        return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuEventRecord(CUevent e, CUstream s) {
        ENTER();
        NEED_CTX();
        if (!e || !s)
                return CUDA_ERROR_INVALID_HANDLE;
        catch_up(s);
        e->t_ms = s->clock_ms;
        e->device = s->device;
        e->recorded = true;
        return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuEventSynchronize(CUevent e) {
        ENTER();
        NEED_CTX();
        if (e && e->recorded)
                host_waited(e->device, e->t_ms);
        return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

FAKE_EXPORT CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b) {
        ENTER();
        NEED_CTX();
        if (!ms || !a || !b)
                return CUDA_ERROR_INVALID_HANDLE;
        if (!a->recorded || !b->recorded)
                return CUDA_ERROR_INVALID_HANDLE;
        *ms = (float)(b->t_ms - a->t_ms);
        return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuEventDestroy_v2(CUevent e) {
        CUresult r = enter(__func__); /* released whatever the answer, as cuStreamDestroy_v2 */
        free(e);
        return r;
}

/* ---- error strings -------------------------------------------------------------------------------- */

FAKE_EXPORT CUresult cuGetErrorName(CUresult rc, const char **s) {
        for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
                if (codes[i].rc == rc) {
                        *s = codes[i].name;
                        return CUDA_SUCCESS;
                }
        *s = NULL;
        return CUDA_ERROR_INVALID_VALUE;
}

FAKE_EXPORT CUresult cuGetErrorString(CUresult rc, const char **s) {
        const char *name = NULL;
        CUresult r = cuGetErrorName(rc, &name);
        *s = name ? "fake libcuda error" : NULL;
        return r;
}

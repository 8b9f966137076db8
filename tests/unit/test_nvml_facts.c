/* sys/nvml_facts: gathering through a hand-made struct nvml_lib of stub functions.
 *
 * The stubs model an 8x H100 SXM node (18 NVLinks each, 3 compute processes) and take
 * faults from `cfg`: an error from one function (on one GPU or all), a call that blocks
 * at a gate until the test opens it (a hang), a latency per call, init failures. Hung
 * stubs are released at the end of each test so that the late-return path also runs under
 * ASan: an abandoned worker must touch only its own memory. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/deadline.h"
#include "metrics/sampler.h"
#include "sys/nvml_facts.h"
#include "bindings/nvml.h"

#define MAX_GPUS 8
#define N_NVLINKS 18
#define N_PROCS 3

static struct {
        unsigned int n_gpus;
        const char *fail_fn; /* this function returns fail_rc ... */
        nvmlReturn_t fail_rc;
        int fail_gpu;        /* ... on this GPU, -1: all */
        const char *hang_fn; /* this function waits at the gate ... */
        int hang_gpu;        /* ... on this GPU, -1: all */
        unsigned int hang_nth; /* ... on its nth call for that GPU (0 or 1: the first) */
        unsigned int latency_us;
        nvmlReturn_t init_rc;
        bool init_hang;
        /* The field stub's violation fields: 0 none (NOT_SUPPORTED), 1 all, 2 only the
         * policy fields 74-81 (a driver without the reason counters 269-271), 3 all, the
         * HW thermal one negative. */
        int viol_fields;
} cfg;

static atomic_uint hang_calls[MAX_GPUS + 1];
static atomic_uint calls_made;
static atomic_uint remote_calls; /* nvmlDeviceGetNvLinkRemotePciInfo_v2 */
static atomic_uint shutdowns;

static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static bool gate_open;

static void gate_wait(void) {
        pthread_mutex_lock(&gate_mu);
        while (!gate_open)
                pthread_cond_wait(&gate_cv, &gate_mu);
        pthread_mutex_unlock(&gate_mu);
}

static void gate_set(bool open) {
        pthread_mutex_lock(&gate_mu);
        gate_open = open;
        pthread_cond_broadcast(&gate_cv);
        pthread_mutex_unlock(&gate_mu);
}

static void reset(unsigned int n_gpus) {
        memset(&cfg, 0, sizeof(cfg));
        cfg.n_gpus = n_gpus;
        cfg.fail_gpu = -1;
        cfg.hang_gpu = -1;
        for (unsigned int i = 0; i <= MAX_GPUS; i++)
                atomic_store(&hang_calls[i], 0);
        atomic_store(&calls_made, 0);
        atomic_store(&remote_calls, 0);
        atomic_store(&shutdowns, 0);
}

/* Open the gate, wait until every worker thread is gone, close the gate. */
static void drain(void) {
        gate_set(true);
        for (int i = 0; i < 5000 && deadline_threads_alive() > 0; i++) {
                struct timespec ts = {0, 1000000};
                nanosleep(&ts, NULL);
        }
        assert_int_equal(deadline_threads_alive(), 0);
        gate_set(false);
}

#define DEV_BASE 0x1000u
#define MIG_BASE 0x2000u
static nvmlDevice_t dev_of(unsigned int i) {
        return (nvmlDevice_t)(uintptr_t)(DEV_BASE + i);
}
static int gpu_of(nvmlDevice_t d) {
        uintptr_t v = (uintptr_t)d;
        return v >= DEV_BASE && v < DEV_BASE + MAX_GPUS ? (int)(v - DEV_BASE) : -1;
}

/* Common entry of every stub: latency, hang, injected error. */
static nvmlReturn_t enter(const char *fn, int gpu) {
        atomic_fetch_add(&calls_made, 1);
        if (cfg.latency_us) {
                struct timespec ts = {0, (long)cfg.latency_us * 1000L};
                nanosleep(&ts, NULL);
        }
        if (cfg.hang_fn && strcmp(fn, cfg.hang_fn) == 0 && (cfg.hang_gpu < 0 || cfg.hang_gpu == gpu)) {
                unsigned int slot = gpu >= 0 && gpu < MAX_GPUS ? (unsigned int)gpu : MAX_GPUS;
                unsigned int nth = atomic_fetch_add(&hang_calls[slot], 1) + 1;
                if (cfg.hang_nth <= 1 || nth == cfg.hang_nth)
                        gate_wait();
        }
        if (cfg.fail_fn && strcmp(fn, cfg.fail_fn) == 0 && (cfg.fail_gpu < 0 || cfg.fail_gpu == gpu))
                return cfg.fail_rc;
        return NVML_SUCCESS;
}

#define ENTER(d)                                                \
        do {                                                    \
                nvmlReturn_t r_ = enter(__func__, gpu_of(d));   \
                if (r_ != NVML_SUCCESS)                         \
                        return r_;                              \
                if (gpu_of(d) < 0)                              \
                        return NVML_ERROR_INVALID_ARGUMENT;     \
        } while (0)
#define ENTER_SYS()                                             \
        do {                                                    \
                nvmlReturn_t r_ = enter(__func__, -1);          \
                if (r_ != NVML_SUCCESS)                         \
                        return r_;                              \
        } while (0)

static nvmlReturn_t copy_str(char *buf, unsigned int len, const char *s) {
        if (strlen(s) + 1 > len)
                return NVML_ERROR_INSUFFICIENT_SIZE;
        memcpy(buf, s, strlen(s) + 1);
        return NVML_SUCCESS;
}

static const unsigned int bus_of_gpu[MAX_GPUS] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};

/* --- the stubs, named as NVML's functions ---------------------------------------------- */

static nvmlReturn_t nvmlInit_v2(void) {
        atomic_fetch_add(&calls_made, 1);
        if (cfg.init_hang)
                gate_wait();
        return cfg.init_rc;
}
static nvmlReturn_t nvmlShutdown(void) {
        atomic_fetch_add(&shutdowns, 1);
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int len) {
        ENTER_SYS();
        return copy_str(v, len, "550.54.15");
}
static nvmlReturn_t nvmlSystemGetNVMLVersion(char *v, unsigned int len) {
        ENTER_SYS();
        return copy_str(v, len, "12.550.54.15");
}
static nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) {
        ENTER_SYS();
        *v = 12040;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n) {
        ENTER_SYS();
        *n = cfg.n_gpus;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) {
        nvmlReturn_t r = enter(__func__, (int)i);
        if (r != NVML_SUCCESS)
                return r;
        if (i >= cfg.n_gpus)
                return NVML_ERROR_INVALID_ARGUMENT;
        *d = dev_of(i);
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *v, unsigned int len) {
        ENTER(d);
        return copy_str(v, len, "NVIDIA H100 80GB HBM3");
}
static nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *v, unsigned int len) {
        ENTER(d);
        char s[64];
        snprintf(s, sizeof(s), "GPU-a1b2c3d4-0000-0000-0000-00000000000%d", gpu_of(d));
        return copy_str(v, len, s);
}
static nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t d, char *v, unsigned int len) {
        ENTER(d);
        char s[32];
        snprintf(s, sizeof(s), "165232100000%d", gpu_of(d));
        return copy_str(v, len, s);
}
static nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p) {
        ENTER(d);
        memset(p, 0, sizeof(*p));
        unsigned int bus = bus_of_gpu[gpu_of(d)];
        snprintf(p->busIdLegacy, sizeof(p->busIdLegacy), "0000:%02X:00.0", bus);
        snprintf(p->busId, sizeof(p->busId), "00000000:%02X:00.0", bus);
        p->bus = bus;
        p->pciDeviceId = 0x233010de;
        p->pciSubSystemId = 0x16c110de;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t d, char *v, unsigned int len) {
        ENTER(d);
        return copy_str(v, len, "96.00.74.00.01");
}
static nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned int *v) {
        ENTER(d);
        *v = (unsigned int)gpu_of(d);
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t d, nvmlBrandType_t *v) {
        ENTER(d);
        *v = NVML_BRAND_NVIDIA;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t d, nvmlDeviceArchitecture_t *v) {
        ENTER(d);
        *v = NVML_DEVICE_ARCH_HOPPER;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *major, int *minor) {
        ENTER(d);
        *major = 9;
        *minor = 0;
        return NVML_SUCCESS;
}
#define MIB (1024ull * 1024ull)
static nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m) {
        ENTER(d);
        m->total = 81559 * MIB;
        m->used = 1 * MIB;
        m->free = m->total - m->used;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m) {
        ENTER(d);
        if (m->version != nvmlMemory_v2)
                return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
        m->total = 81559 * MIB;
        m->reserved = 530 * MIB;
        m->used = 1 * MIB;
        m->free = m->total - m->reserved - m->used;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t d, nvmlBAR1Memory_t *b) {
        ENTER(d);
        b->bar1Total = 131072 * MIB;
        b->bar1Used = 1 * MIB;
        b->bar1Free = b->bar1Total - b->bar1Used;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, nvmlTemperatureSensors_t s, unsigned int *v) {
        ENTER(d);
        if (s != NVML_TEMPERATURE_GPU)
                return NVML_ERROR_INVALID_ARGUMENT;
        *v = 30 + (unsigned int)gpu_of(d);
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t d, nvmlTemperatureThresholds_t t, unsigned int *v) {
        ENTER(d);
        switch (t) {
        case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN: *v = 92; break;
        case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN: *v = 89; break;
        case NVML_TEMPERATURE_THRESHOLD_MEM_MAX: *v = 95; break;
        case NVML_TEMPERATURE_THRESHOLD_GPU_MAX: *v = 87; break;
        default: return NVML_ERROR_INVALID_ARGUMENT;
        }
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *v) {
        ENTER(d);
        *v = 70000 + (unsigned int)gpu_of(d);
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned int *v) {
        ENTER(d);
        *v = 700000;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t d, unsigned int *v) {
        ENTER(d);
        *v = 700000;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int *v) {
        ENTER(d);
        *v = 690000;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t d, unsigned int *lo, unsigned int *hi) {
        ENTER(d);
        *lo = 200000;
        *hi = 700000;
        return NVML_SUCCESS;
}
static const unsigned int clk_cur[4] = {345, 345, 2619, 765};
static const unsigned int clk_max[4] = {1980, 1980, 2619, 1965};
static nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, nvmlClockType_t t, unsigned int *v) {
        ENTER(d);
        if ((unsigned int)t > 3)
                return NVML_ERROR_INVALID_ARGUMENT;
        *v = clk_cur[t];
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, nvmlClockType_t t, unsigned int *v) {
        ENTER(d);
        if ((unsigned int)t > 3)
                return NVML_ERROR_INVALID_ARGUMENT;
        *v = clk_max[t];
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t d, nvmlClockType_t t, unsigned int *v) {
        ENTER(d);
        if ((unsigned int)t > 3)
                return NVML_ERROR_INVALID_ARGUMENT;
        *v = clk_max[t];
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t d, nvmlClockType_t t, unsigned int *v) {
        ENTER(d);
        if ((unsigned int)t > 3)
                return NVML_ERROR_INVALID_ARGUMENT;
        *v = clk_max[t];
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *v) {
        ENTER(d);
        *v = nvmlClocksEventReasonGpuIdle;
        return NVML_SUCCESS;
}
/* Policy p of GPU g has been held down (p + 1) * 1000 + g ns. */
static unsigned long long viol_ns(int policy, int gpu) {
        return (unsigned long long)(policy + 1) * 1000ULL + (unsigned long long)gpu;
}
static nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t d, nvmlPerfPolicyType_t p, nvmlViolationTime_t *t) {
        ENTER(d);
        if ((unsigned int)p >= NVML_PERF_POLICY_COUNT)
                return NVML_ERROR_INVALID_ARGUMENT;
        t->referenceTime = 1700000000000000ULL;
        t->violationTime = viol_ns(p, gpu_of(d));
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *v) {
        ENTER(d);
        *v = nvmlClocksEventReasonGpuIdle | nvmlClocksThrottleReasonHwSlowdown;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u) {
        ENTER(d);
        u->gpu = 0;
        u->memory = 0;
        return NVML_SUCCESS;
}
/* The video engines: encoder 10 + GPU, decoder 20 + GPU percent. */
static nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t d, unsigned int *v, unsigned int *period_us) {
        ENTER(d);
        *v = 10u + (unsigned int)gpu_of(d);
        *period_us = 167000;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t d, unsigned int *v, unsigned int *period_us) {
        ENTER(d);
        *v = 20u + (unsigned int)gpu_of(d);
        *period_us = 167000;
        return NVML_SUCCESS;
}
/* Energy since the driver loaded: past 2^32 mJ, so a 32-bit path would show. */
static nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long *mj) {
        ENTER(d);
        *mj = 60480123457ULL + (unsigned long long)gpu_of(d);
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t d, nvmlPstates_t *v) {
        ENTER(d);
        *v = NVML_PSTATE_0;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t d, unsigned int *v) {
        ENTER(d);
        *v = 40;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, nvmlEnableState_t *cur, nvmlEnableState_t *pend) {
        ENTER(d);
        *cur = NVML_FEATURE_ENABLED;
        *pend = NVML_FEATURE_ENABLED;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, nvmlMemoryErrorType_t e, nvmlEccCounterType_t k,
                                                unsigned long long *v) {
        ENTER(d);
        *v = (unsigned long long)(e * 10 + k);
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t d, nvmlPageRetirementCause_t cause, unsigned int *n,
                                              unsigned long long *addr) {
        ENTER(d);
        /* SBE: the count query answers SUCCESS; DBE: INSUFFICIENT_SIZE (both seen in drivers). */
        unsigned int have = cause == NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR ? 2 : 0;
        if (*n < have || !addr) {
                bool short_buf = *n < have;
                *n = have;
                return short_buf ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
        }
        for (unsigned int i = 0; i < have; i++)
                addr[i] = 0x1000ull * i;
        *n = have;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, nvmlEnableState_t *v) {
        ENTER(d);
        *v = NVML_FEATURE_DISABLED;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int *c, unsigned int *u, unsigned int *p,
                                              unsigned int *f) {
        ENTER(d);
        *c = 1;
        *u = 0;
        *p = 0;
        *f = 0;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int *v) {
        ENTER(d);
        *v = 5;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int *v) {
        ENTER(d);
        *v = 16;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *v) {
        ENTER(d);
        *v = 5;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int *v) {
        ENTER(d);
        *v = 16;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t d, unsigned int *v) {
        ENTER(d);
        *v = 0;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, nvmlEnableState_t *v) {
        ENTER(d);
        if (link >= N_NVLINKS)
                return NVML_ERROR_NOT_SUPPORTED;
        *v = NVML_FEATURE_ENABLED;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t d, unsigned int link, nvmlNvLinkErrorCounter_t c,
                                                    unsigned long long *v) {
        ENTER(d);
        if (link >= N_NVLINKS)
                return NVML_ERROR_INVALID_ARGUMENT;
        *v = link * 10ull + (unsigned long long)c;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned int link, nvmlPciInfo_t *p) {
        atomic_fetch_add(&remote_calls, 1);
        ENTER(d);
        if (link >= N_NVLINKS)
                return NVML_ERROR_INVALID_ARGUMENT;
        memset(p, 0, sizeof(*p));
        snprintf(p->busId, sizeof(p->busId), "00000000:%02X:00.0", 0x05 + link % 4);
        p->pciDeviceId = 0x22a310de; /* NVSwitch */
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, nvmlEnableState_t *v) {
        ENTER(d);
        *v = NVML_FEATURE_ENABLED;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t d, nvmlComputeMode_t *v) {
        ENTER(d);
        *v = NVML_COMPUTEMODE_DEFAULT;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetDisplayMode(nvmlDevice_t d, nvmlEnableState_t *v) {
        ENTER(d);
        *v = NVML_FEATURE_DISABLED;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_t d, nvmlEnableState_t *v) {
        ENTER(d);
        *v = NVML_FEATURE_DISABLED;
        return NVML_SUCCESS;
}
static bool mig_on;
static nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *cur, unsigned int *pend) {
        ENTER(d);
        *cur = mig_on;
        *pend = mig_on;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int *v) {
        ENTER(d);
        *v = 7;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int i, nvmlDevice_t *m) {
        ENTER(d);
        if (i >= 3) /* three MIG devices exist */
                return NVML_ERROR_NOT_FOUND;
        *m = (nvmlDevice_t)(uintptr_t)(MIG_BASE + i);
        return NVML_SUCCESS;
}
static nvmlReturn_t procs(nvmlDevice_t d, unsigned int have, unsigned int *count, nvmlProcessInfo_t *infos) {
        if (!infos || *count < have) {
                bool short_buf = *count < have;
                *count = have;
                return short_buf ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
        }
        for (unsigned int i = 0; i < have; i++) {
                infos[i].pid = 1000u + 100u * (unsigned int)gpu_of(d) + i;
                infos[i].usedGpuMemory = (i + 1) * 1024 * MIB;
                infos[i].gpuInstanceId = 0xFFFFFFFFu;
                infos[i].computeInstanceId = 0xFFFFFFFFu;
        }
        *count = have;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *count,
                                                            nvmlProcessInfo_t *infos) {
        ENTER(d);
        return procs(d, N_PROCS, count, infos);
}
static nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned int *count,
                                                             nvmlProcessInfo_t *infos) {
        ENTER(d);
        return procs(d, 0, count, infos);
}
/* Three samples of the first two compute processes, within the window gpuvet asks for: the
 * first PID twice (the later one counts), the second with a value NVML should never give. */
static nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d, nvmlProcessUtilizationSample_t *u,
                                                    unsigned int *count, unsigned long long since) {
        ENTER(d);
        if (!count)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (!u || *count < 3) {
                *count = 3;
                return NVML_ERROR_INSUFFICIENT_SIZE;
        }
        unsigned int pid0 = 1000u + 100u * (unsigned int)gpu_of(d);
        u[0] = (nvmlProcessUtilizationSample_t){pid0, since + 2000, 40, 20, 0, 0};
        u[1] = (nvmlProcessUtilizationSample_t){pid0, since + 1000, 10, 5, 0, 0};
        u[2] = (nvmlProcessUtilizationSample_t){pid0 + 1, since + 1500, 250, 7, 0, 0};
        *count = 3;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t d, nvmlGpuFabricInfo_t *fi) {
        ENTER(d);
        memset(fi, 0, sizeof(*fi));
        fi->state = NVML_GPU_FABRIC_STATE_COMPLETED;
        fi->status = NVML_SUCCESS;
        fi->cliqueId = 1;
        return NVML_SUCCESS;
}

/* A Hopper driver's field call, NVLink fields only (the rest NOT_SUPPORTED, so those
 * readings are asked by their own calls): 18 links, each up, every error total 0. */
static nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int n, nvmlFieldValue_t *fv) {
        ENTER(d);
        for (int i = 0; i < n; i++) {
                fv[i].nvmlReturn = NVML_SUCCESS;
                switch (fv[i].fieldId) {
                case NVML_FI_DEV_NVLINK_LINK_COUNT:
                        fv[i].valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
                        fv[i].value.uiVal = N_NVLINKS;
                        break;
                case NVML_FI_DEV_NVLINK_GET_STATE:
                        fv[i].valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
                        fv[i].value.uiVal = NVML_FEATURE_ENABLED;
                        if (fv[i].scopeId >= N_NVLINKS)
                                fv[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
                        break;
                case NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL:
                case NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL:
                case NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL:
                case NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL:
                case NVML_FI_DEV_NVLINK_ECC_DATA_ERROR_COUNT_TOTAL:
                        fv[i].valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
                        fv[i].value.ullVal = 0;
                        break;
                case NVML_FI_DEV_PERF_POLICY_POWER:
                case NVML_FI_DEV_PERF_POLICY_THERMAL:
                case NVML_FI_DEV_PERF_POLICY_SYNC_BOOST:
                case NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT:
                case NVML_FI_DEV_PERF_POLICY_LOW_UTILIZATION:
                case NVML_FI_DEV_PERF_POLICY_RELIABILITY:
                case NVML_FI_DEV_PERF_POLICY_TOTAL_APP_CLOCKS:
                case NVML_FI_DEV_PERF_POLICY_TOTAL_BASE_CLOCKS:
                        /* The policy's counter plus 5: told apart from the call's. */
                        fv[i].valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
                        fv[i].value.ullVal = viol_ns((int)(fv[i].fieldId - NVML_FI_DEV_PERF_POLICY_POWER), gpu_of(d)) + 5;
                        if (cfg.viol_fields == 0)
                                fv[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
                        break;
                case NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN:
                case NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN:
                case NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN:
                        fv[i].valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
                        fv[i].value.ullVal = 100000ULL * (fv[i].fieldId - 268) + (unsigned int)gpu_of(d);
                        if (cfg.viol_fields == 3 && fv[i].fieldId == NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN) {
                                fv[i].valueType = NVML_VALUE_TYPE_SIGNED_LONG_LONG;
                                fv[i].value.sllVal = -1;
                        }
                        if (cfg.viol_fields == 0 || cfg.viol_fields == 2)
                                fv[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
                        break;
                default:
                        fv[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
                        break;
                }
        }
        return NVML_SUCCESS;
}

static struct nvml_lib stub_lib(void) {
        struct nvml_lib lib;
        memset(&lib, 0, sizeof(lib));
#define S(name) lib.name = name
        S(nvmlInit_v2);
        S(nvmlShutdown);
        S(nvmlSystemGetDriverVersion);
        S(nvmlSystemGetNVMLVersion);
        S(nvmlSystemGetCudaDriverVersion_v2);
        S(nvmlDeviceGetCount_v2);
        S(nvmlDeviceGetHandleByIndex_v2);
        S(nvmlDeviceGetName);
        S(nvmlDeviceGetUUID);
        S(nvmlDeviceGetSerial);
        S(nvmlDeviceGetPciInfo_v3);
        S(nvmlDeviceGetVbiosVersion);
        S(nvmlDeviceGetMinorNumber);
        S(nvmlDeviceGetBrand);
        S(nvmlDeviceGetArchitecture);
        S(nvmlDeviceGetCudaComputeCapability);
        S(nvmlDeviceGetMemoryInfo);
        S(nvmlDeviceGetMemoryInfo_v2);
        S(nvmlDeviceGetBAR1MemoryInfo);
        S(nvmlDeviceGetTemperature);
        S(nvmlDeviceGetTemperatureThreshold);
        S(nvmlDeviceGetPowerUsage);
        S(nvmlDeviceGetPowerManagementLimit);
        S(nvmlDeviceGetPowerManagementDefaultLimit);
        S(nvmlDeviceGetEnforcedPowerLimit);
        S(nvmlDeviceGetPowerManagementLimitConstraints);
        S(nvmlDeviceGetClockInfo);
        S(nvmlDeviceGetMaxClockInfo);
        S(nvmlDeviceGetApplicationsClock);
        S(nvmlDeviceGetDefaultApplicationsClock);
        S(nvmlDeviceGetCurrentClocksEventReasons);
        S(nvmlDeviceGetViolationStatus);
        S(nvmlDeviceGetCurrentClocksThrottleReasons);
        S(nvmlDeviceGetUtilizationRates);
        S(nvmlDeviceGetEncoderUtilization);
        S(nvmlDeviceGetDecoderUtilization);
        S(nvmlDeviceGetTotalEnergyConsumption);
        S(nvmlDeviceGetPerformanceState);
        S(nvmlDeviceGetFanSpeed);
        S(nvmlDeviceGetEccMode);
        S(nvmlDeviceGetTotalEccErrors);
        S(nvmlDeviceGetRetiredPages);
        S(nvmlDeviceGetRetiredPagesPendingStatus);
        S(nvmlDeviceGetRemappedRows);
        S(nvmlDeviceGetCurrPcieLinkGeneration);
        S(nvmlDeviceGetCurrPcieLinkWidth);
        S(nvmlDeviceGetMaxPcieLinkGeneration);
        S(nvmlDeviceGetMaxPcieLinkWidth);
        S(nvmlDeviceGetPcieReplayCounter);
        S(nvmlDeviceGetNvLinkState);
        S(nvmlDeviceGetNvLinkErrorCounter);
        S(nvmlDeviceGetNvLinkRemotePciInfo_v2);
        S(nvmlDeviceGetPersistenceMode);
        S(nvmlDeviceGetComputeMode);
        S(nvmlDeviceGetDisplayMode);
        S(nvmlDeviceGetDisplayActive);
        S(nvmlDeviceGetMigMode);
        S(nvmlDeviceGetMaxMigDeviceCount);
        S(nvmlDeviceGetMigDeviceHandleByIndex);
        S(nvmlDeviceGetComputeRunningProcesses_v3);
        S(nvmlDeviceGetGraphicsRunningProcesses_v3);
        S(nvmlDeviceGetProcessUtilization);
        S(nvmlDeviceGetGpuFabricInfo);
#undef S
        return lib;
}

/* --- GPM: samples that remember when they were taken ----------------------------------- */

struct nvmlGpmSample_st {
        unsigned long long ms; /* when taken (deadline_now_ms), 0 before */
        int gpu;
};
static atomic_uint gpm_allocs, gpm_frees, gpm_metric_calls;
static atomic_ullong gpm_min_window_ms;
/* The buffers not freed yet, as the library keeps them (gpm_free_leftovers). */
static pthread_mutex_t gpm_live_mu = PTHREAD_MUTEX_INITIALIZER;
static nvmlGpmSample_t gpm_live[64];

static void gpm_track(nvmlGpmSample_t s, nvmlGpmSample_t replace) {
        pthread_mutex_lock(&gpm_live_mu);
        for (unsigned int i = 0; i < 64; i++)
                if (gpm_live[i] == replace) {
                        gpm_live[i] = s;
                        break;
                }
        pthread_mutex_unlock(&gpm_live_mu);
}

/* Free what gpuvet left to the library (a stuck worker's buffers); how many there were. */
static unsigned int gpm_free_leftovers(void) {
        unsigned int n = 0;
        for (unsigned int i = 0; i < 64; i++)
                if (gpm_live[i]) {
                        free(gpm_live[i]);
                        gpm_live[i] = NULL;
                        n++;
                }
        return n;
}

static nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t d, nvmlGpmSupport_t *s) {
        ENTER(d);
        if (s->version != NVML_GPM_SUPPORT_VERSION)
                return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
        s->isSupportedDevice = gpu_of(d) != 1; /* GPU 1: an Ampere board */
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *s) {
        ENTER_SYS();
        *s = calloc(1, sizeof(**s));
        if (!*s)
                return NVML_ERROR_MEMORY;
        gpm_track(*s, NULL);
        atomic_fetch_add(&gpm_allocs, 1);
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t s) {
        ENTER_SYS();
        gpm_track(NULL, s);
        free(s);
        atomic_fetch_add(&gpm_frees, 1);
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t d, nvmlGpmSample_t s) {
        ENTER(d);
        s->ms = deadline_now_ms();
        s->gpu = gpu_of(d);
        return NVML_SUCCESS;
}
/* Metric i of the request answers 10 * (i + 1); NVLink RX (id 60) NOT_SUPPORTED. */
static nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *mg) {
        ENTER_SYS();
        if (mg->version != NVML_GPM_METRICS_GET_VERSION || !mg->sample1->ms || !mg->sample2->ms ||
            mg->sample1->gpu != mg->sample2->gpu || mg->sample2->ms < mg->sample1->ms)
                return NVML_ERROR_INVALID_ARGUMENT;
        unsigned long long w = mg->sample2->ms - mg->sample1->ms;
        unsigned long long seen = atomic_load(&gpm_min_window_ms);
        while (w < seen && !atomic_compare_exchange_weak(&gpm_min_window_ms, &seen, w))
                ;
        atomic_fetch_add(&gpm_metric_calls, 1);
        for (unsigned int i = 0; i < mg->numMetrics; i++) {
                mg->metrics[i].nvmlReturn =
                        mg->metrics[i].metricId == NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC ? NVML_ERROR_NOT_SUPPORTED
                                                                                           : NVML_SUCCESS;
                mg->metrics[i].value = 10.0 * (i + 1);
        }
        return NVML_SUCCESS;
}

static struct nvml_lib gpm_lib(void) {
        struct nvml_lib lib = stub_lib();
        lib.nvmlGpmQueryDeviceSupport = nvmlGpmQueryDeviceSupport;
        lib.nvmlGpmSampleAlloc = nvmlGpmSampleAlloc;
        lib.nvmlGpmSampleFree = nvmlGpmSampleFree;
        lib.nvmlGpmSampleGet = nvmlGpmSampleGet;
        lib.nvmlGpmMetricsGet = nvmlGpmMetricsGet;
        atomic_store(&gpm_allocs, 0);
        atomic_store(&gpm_frees, 0);
        atomic_store(&gpm_metric_calls, 0);
        atomic_store(&gpm_min_window_ms, ~0ULL);
        return lib;
}

/* --- every scalar reading of a GPU, by offset, with the function that fills it -------- */

struct hdr {
        unsigned char state;
        int rc;
        const char *fn;
};

static struct hdr hdr_at(const struct nvml_gpu *g, size_t off) {
        struct hdr h;
        const char *p = (const char *)g + off;
        memcpy(&h.state, p + offsetof(struct nv_u32, state), sizeof(h.state));
        memcpy(&h.rc, p + offsetof(struct nv_u32, rc), sizeof(h.rc));
        memcpy(&h.fn, p + offsetof(struct nv_u32, fn), sizeof(h.fn));
        return h;
}

#define F(field, fn) {offsetof(struct nvml_gpu, field), #field, fn}
static const struct fact {
        size_t off;
        const char *field;
        const char *fn;
} facts[] = {
        F(name, "nvmlDeviceGetName"),
        F(uuid, "nvmlDeviceGetUUID"),
        F(serial, "nvmlDeviceGetSerial"),
        F(pci_bus_id, "nvmlDeviceGetPciInfo_v3"),
        F(pci_device_id, "nvmlDeviceGetPciInfo_v3"),
        F(pci_subsystem_id, "nvmlDeviceGetPciInfo_v3"),
        F(vbios, "nvmlDeviceGetVbiosVersion"),
        F(minor_number, "nvmlDeviceGetMinorNumber"),
        F(brand, "nvmlDeviceGetBrand"),
        F(architecture, "nvmlDeviceGetArchitecture"),
        F(cc_major, "nvmlDeviceGetCudaComputeCapability"),
        F(cc_minor, "nvmlDeviceGetCudaComputeCapability"),
        F(mem_total_bytes, "nvmlDeviceGetMemoryInfo_v2"),
        F(mem_used_bytes, "nvmlDeviceGetMemoryInfo_v2"),
        F(mem_free_bytes, "nvmlDeviceGetMemoryInfo_v2"),
        F(mem_reserved_bytes, "nvmlDeviceGetMemoryInfo_v2"),
        F(bar1_total_bytes, "nvmlDeviceGetBAR1MemoryInfo"),
        F(bar1_used_bytes, "nvmlDeviceGetBAR1MemoryInfo"),
        F(bar1_free_bytes, "nvmlDeviceGetBAR1MemoryInfo"),
        F(temp_c, "nvmlDeviceGetTemperature"),
        F(temp_slowdown_c, "nvmlDeviceGetTemperatureThreshold"),
        F(temp_shutdown_c, "nvmlDeviceGetTemperatureThreshold"),
        F(temp_gpu_max_c, "nvmlDeviceGetTemperatureThreshold"),
        F(temp_mem_max_c, "nvmlDeviceGetTemperatureThreshold"),
        F(power_mw, "nvmlDeviceGetPowerUsage"),
        F(energy_mj, "nvmlDeviceGetTotalEnergyConsumption"),
        F(power_limit_mw, "nvmlDeviceGetPowerManagementLimit"),
        F(power_default_limit_mw, "nvmlDeviceGetPowerManagementDefaultLimit"),
        F(power_enforced_limit_mw, "nvmlDeviceGetEnforcedPowerLimit"),
        F(power_min_limit_mw, "nvmlDeviceGetPowerManagementLimitConstraints"),
        F(power_max_limit_mw, "nvmlDeviceGetPowerManagementLimitConstraints"),
        F(clock_mhz[0], "nvmlDeviceGetClockInfo"),
        F(clock_mhz[1], "nvmlDeviceGetClockInfo"),
        F(clock_mhz[2], "nvmlDeviceGetClockInfo"),
        F(clock_mhz[3], "nvmlDeviceGetClockInfo"),
        F(clock_max_mhz[0], "nvmlDeviceGetMaxClockInfo"),
        F(clock_max_mhz[3], "nvmlDeviceGetMaxClockInfo"),
        F(clock_app_mhz[0], "nvmlDeviceGetApplicationsClock"),
        F(clock_app_mhz[2], "nvmlDeviceGetApplicationsClock"),
        F(clock_default_app_mhz[1], "nvmlDeviceGetDefaultApplicationsClock"),
        F(clock_default_app_mhz[2], "nvmlDeviceGetDefaultApplicationsClock"),
        F(clocks_event_reasons, "nvmlDeviceGetCurrentClocksEventReasons"),
        F(violation_ns[NVML_VIOL_POWER], "nvmlDeviceGetViolationStatus"),
        F(violation_ns[NVML_VIOL_THERMAL], "nvmlDeviceGetViolationStatus"),
        F(violation_ns[NVML_VIOL_SYNC_BOOST], "nvmlDeviceGetViolationStatus"),
        F(violation_ns[NVML_VIOL_BOARD_LIMIT], "nvmlDeviceGetViolationStatus"),
        F(violation_ns[NVML_VIOL_LOW_UTIL], "nvmlDeviceGetViolationStatus"),
        F(violation_ns[NVML_VIOL_RELIABILITY], "nvmlDeviceGetViolationStatus"),
        F(violation_ns[NVML_VIOL_TOTAL_BASE_CLOCKS], "nvmlDeviceGetViolationStatus"),
        F(util_gpu_pct, "nvmlDeviceGetUtilizationRates"),
        F(util_mem_pct, "nvmlDeviceGetUtilizationRates"),
        F(util_enc_pct, "nvmlDeviceGetEncoderUtilization"),
        F(util_dec_pct, "nvmlDeviceGetDecoderUtilization"),
        F(pstate, "nvmlDeviceGetPerformanceState"),
        F(fan_pct, "nvmlDeviceGetFanSpeed"),
        F(ecc_mode_current, "nvmlDeviceGetEccMode"),
        F(ecc_mode_pending, "nvmlDeviceGetEccMode"),
        F(ecc_volatile_corrected, "nvmlDeviceGetTotalEccErrors"),
        F(ecc_volatile_uncorrected, "nvmlDeviceGetTotalEccErrors"),
        F(ecc_aggregate_corrected, "nvmlDeviceGetTotalEccErrors"),
        F(ecc_aggregate_uncorrected, "nvmlDeviceGetTotalEccErrors"),
        F(retired_pages_sbe, "nvmlDeviceGetRetiredPages"),
        F(retired_pages_dbe, "nvmlDeviceGetRetiredPages"),
        F(retired_pages_pending, "nvmlDeviceGetRetiredPagesPendingStatus"),
        F(remap_corrected, "nvmlDeviceGetRemappedRows"),
        F(remap_uncorrected, "nvmlDeviceGetRemappedRows"),
        F(remap_pending, "nvmlDeviceGetRemappedRows"),
        F(remap_failure, "nvmlDeviceGetRemappedRows"),
        F(pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration"),
        F(pcie_width, "nvmlDeviceGetCurrPcieLinkWidth"),
        F(pcie_max_gen, "nvmlDeviceGetMaxPcieLinkGeneration"),
        F(pcie_max_width, "nvmlDeviceGetMaxPcieLinkWidth"),
        F(pcie_replay, "nvmlDeviceGetPcieReplayCounter"),
        F(nvlink[0].state, "nvmlDeviceGetNvLinkState"),
        F(nvlink[0].errors[0], "nvmlDeviceGetNvLinkErrorCounter"),
        F(nvlink[17].errors[4], "nvmlDeviceGetNvLinkErrorCounter"),
        F(nvlink[5].remote_bus_id, "nvmlDeviceGetNvLinkRemotePciInfo_v2"),
        F(nvlink[5].remote_device_id, "nvmlDeviceGetNvLinkRemotePciInfo_v2"),
        F(persistence_mode, "nvmlDeviceGetPersistenceMode"),
        F(compute_mode, "nvmlDeviceGetComputeMode"),
        F(display_mode, "nvmlDeviceGetDisplayMode"),
        F(display_active, "nvmlDeviceGetDisplayActive"),
        F(mig_mode_current, "nvmlDeviceGetMigMode"),
        F(mig_mode_pending, "nvmlDeviceGetMigMode"),
        F(mig_max_devices, "nvmlDeviceGetMaxMigDeviceCount"),
        F(compute_procs, "nvmlDeviceGetComputeRunningProcesses_v3"),
        F(graphics_procs, "nvmlDeviceGetGraphicsRunningProcesses_v3"),
        F(proc_utils, "nvmlDeviceGetProcessUtilization"),
        F(fabric_state, "nvmlDeviceGetGpuFabricInfo"),
        F(fabric_status, "nvmlDeviceGetGpuFabricInfo"),
        F(fabric_clique_id, "nvmlDeviceGetGpuFabricInfo"),
};
#define N_FACTS (sizeof(facts) / sizeof(facts[0]))

static const struct nvml_deadlines short_dl = {.call_ms = 200, .gpu_ms = 5000, .init_ms = 200};

static void assert_gpu_complete(const struct nvml_gpu *g, unsigned int i) {
        assert_false(g->timed_out);
        assert_int_equal(g->index, i);
        assert_int_equal(g->handle.state, NV_OK);
        for (size_t k = 0; k < N_FACTS; k++) {
                struct hdr h = hdr_at(g, facts[k].off);
                if (h.state != NV_OK)
                        fail_msg("GPU %u %s: %s rc %d (%s)", i, facts[k].field, nv_state_name(h.state), h.rc,
                                 h.fn ? h.fn : "-");
                assert_string_equal(h.fn, facts[k].fn);
        }
}

static void test_healthy(void **state) {
        (void)state;
        reset(8);
        struct nvml_lib lib = stub_lib();
        struct nvml_facts f;
        assert_int_equal(nvml_facts_gather(&lib, &short_dl, &f), 0);
        assert_int_equal(f.init_state, NVML_INIT_OK);
        assert_true(f.initialized);
        assert_false(f.abandoned);
        assert_int_equal(f.n_timeouts, 0);
        assert_string_equal(f.driver_version.v, "550.54.15");
        assert_string_equal(f.nvml_version.v, "12.550.54.15");
        assert_int_equal(f.cuda_driver_version.v, 12040);
        assert_string_equal(f.cuda_driver_version_str, "12.4");
        assert_int_equal(f.n_gpus, 8);
        for (unsigned int i = 0; i < f.n_gpus; i++) {
                const struct nvml_gpu *g = &f.gpus[i];
                assert_gpu_complete(g, i);
                char bus[16];
                snprintf(bus, sizeof(bus), "0000:%02x:00.0", bus_of_gpu[i]);
                assert_string_equal(g->pci_bus_id.v, bus);
                assert_string_equal(g->name.v, "NVIDIA H100 80GB HBM3");
                assert_int_equal(g->pci_device_id.v, 0x233010de);
                assert_int_equal(g->temp_c.v, 30 + i);
                assert_int_equal(g->temp_slowdown_c.v, 89);
                assert_int_equal(g->temp_shutdown_c.v, 92);
                assert_int_equal(g->temp_gpu_max_c.v, 87);
                assert_int_equal(g->temp_mem_max_c.v, 95);
                assert_int_equal(g->mem_reserved_bytes.v, 530 * MIB);
                assert_int_equal(g->clock_mhz[NVML_CLK_MEM].v, 2619);
                assert_int_equal(g->clock_max_mhz[NVML_CLK_SM].v, 1980);
                assert_int_equal(g->clocks_event_reasons.v, nvmlClocksEventReasonGpuIdle);
                assert_int_equal(g->ecc_aggregate_uncorrected.v, 11);
                assert_int_equal(g->retired_pages_sbe.v, 0);
                assert_int_equal(g->retired_pages_dbe.v, 2);
                assert_int_equal(g->remap_corrected.v, 1);
                assert_int_equal(g->nvlink_count, N_NVLINKS);
                assert_int_equal(g->nvlink_end.state, NV_ERROR);
                assert_int_equal(g->nvlink_end.rc, NVML_ERROR_NOT_SUPPORTED);
                assert_int_equal(g->nvlink[17].errors[NVML_NVL_ECC_DATA].v, 174);
                assert_string_equal(g->nvlink[5].remote_bus_id.v, "0000:06:00.0");
                assert_int_equal(g->nvlink[18].errors[0].state, NV_UNREAD);
                /* Each counter summed over the 18 active links: sum of (10 * link + counter). */
                for (unsigned int c = 0; c < NVML_NVL_COUNTER_COUNT; c++) {
                        assert_int_equal(g->nvlink_errors_total[c].state, NV_OK);
                        assert_int_equal(g->nvlink_errors_total[c].v, 10 * (17 * 18 / 2) + 18 * c);
                }
                assert_int_equal(g->energy_mj.v, 60480123457ULL + i);
                assert_int_equal(g->util_enc_pct.v, 10 + i);
                assert_int_equal(g->util_dec_pct.v, 20 + i);
                assert_int_equal(g->mig_device_count.state, NV_UNREAD); /* MIG off */
                assert_int_equal(g->compute_procs.count, N_PROCS);
                /* one entry per PID, its latest sample; above 100 % is unknown */
                assert_int_equal(g->proc_utils.count, 2);
                assert_int_equal(g->proc_utils.v[0].pid, 1000u + 100u * i);
                assert_int_equal(g->proc_utils.v[0].sm, 40);
                assert_int_equal(g->proc_utils.v[0].memory, 20);
                assert_int_equal(g->proc_utils.v[1].pid, 1000u + 100u * i + 1);
                assert_int_equal(g->proc_utils.v[1].sm, NV_UTIL_UNKNOWN);
                assert_int_equal(g->proc_utils.v[1].memory, 7);
                assert_non_null(g->compute_procs.v);
                assert_int_equal(g->compute_procs.v[2].pid, 1000 + 100 * i + 2);
                assert_int_equal(g->compute_procs.v[2].used_bytes, 3 * 1024 * MIB);
                assert_int_equal(g->graphics_procs.count, 0);
                assert_null(g->graphics_procs.v);
                assert_int_equal(g->fabric_state.v, NVML_GPU_FABRIC_STATE_COMPLETED);
        }
        nvml_facts_done(&f);
        assert_int_equal(atomic_load(&shutdowns), 1);
        assert_false(f.abandoned);
}

static void test_mig(void **state) {
        (void)state;
        reset(2);
        mig_on = true;
        struct nvml_lib lib = stub_lib();
        struct nvml_facts f;
        assert_int_equal(nvml_facts_gather(&lib, &short_dl, &f), 0);
        mig_on = false;
        assert_int_equal(f.gpus[1].mig_mode_current.v, 1);
        assert_int_equal(f.gpus[1].mig_device_count.state, NV_OK);
        assert_int_equal(f.gpus[1].mig_device_count.v, 3);
        nvml_facts_done(&f);
}

/* Each error code from each function lands in its facts, with its rc, naming it. */
static void test_errors(void **state) {
        (void)state;
        static const nvmlReturn_t rcs[] = {NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_NO_PERMISSION, NVML_ERROR_GPU_IS_LOST,
                                           NVML_ERROR_UNKNOWN, NVML_ERROR_TIMEOUT};
        struct nvml_lib lib = stub_lib();
        for (size_t ri = 0; ri < sizeof(rcs) / sizeof(rcs[0]); ri++) {
                for (size_t k = 0; k < N_FACTS; k++) {
                        reset(2);
                        cfg.fail_fn = facts[k].fn;
                        cfg.fail_rc = rcs[ri];
                        cfg.fail_gpu = 1;
                        struct nvml_facts f;
                        assert_int_equal(nvml_facts_gather(&lib, &short_dl, &f), 0);
                        assert_int_equal(f.n_gpus, 2);
                        assert_gpu_complete(&f.gpus[0], 0);
                        for (size_t j = 0; j < N_FACTS; j++) {
                                if (strcmp(facts[j].fn, facts[k].fn) != 0)
                                        continue;
                                struct hdr h = hdr_at(&f.gpus[1], facts[j].off);
                                /* The v2 memory refusal falls back to v1 for all but reserved. */
                                if (strcmp(facts[k].fn, "nvmlDeviceGetMemoryInfo_v2") == 0 &&
                                    strcmp(facts[j].field, "mem_reserved_bytes") != 0) {
                                        assert_int_equal(h.state, NV_OK);
                                        assert_string_equal(h.fn, "nvmlDeviceGetMemoryInfo");
                                        continue;
                                }
                                /* A link state error other than NOT_SUPPORTED leaves the
                                 * link's counters unread. */
                                if (strcmp(facts[k].fn, "nvmlDeviceGetNvLinkState") == 0 &&
                                    strcmp(facts[j].field, "nvlink[0].state") != 0)
                                        continue;
                                if (h.state != NV_ERROR || h.rc != (int)rcs[ri])
                                        fail_msg("%s failing with %d: %s is %s rc %d", facts[k].fn, rcs[ri],
                                                 facts[j].field, nv_state_name(h.state), h.rc);
                                assert_string_equal(h.fn, facts[k].fn);
                        }
                        nvml_facts_done(&f);
                }
        }
}

static void test_nvlink_not_supported(void **state) {
        (void)state;
        reset(1);
        cfg.fail_fn = "nvmlDeviceGetNvLinkState";
        cfg.fail_rc = NVML_ERROR_NOT_SUPPORTED;
        struct nvml_lib lib = stub_lib();
        struct nvml_facts f;
        assert_int_equal(nvml_facts_gather(&lib, &short_dl, &f), 0);
        /* A PCIe card without NVLink: no links, the walk ended at link 0. */
        assert_int_equal(f.gpus[0].nvlink_count, 0);
        assert_int_equal(f.gpus[0].nvlink_end.state, NV_ERROR);
        assert_int_equal(f.gpus[0].nvlink_end.rc, NVML_ERROR_NOT_SUPPORTED);
        /* No total either, never a 0: NVML's own answer. */
        for (unsigned int c = 0; c < NVML_NVL_COUNTER_COUNT; c++) {
                assert_int_equal(f.gpus[0].nvlink_errors_total[c].state, NV_ERROR);
                assert_int_equal(f.gpus[0].nvlink_errors_total[c].rc, NVML_ERROR_NOT_SUPPORTED);
                assert_string_equal(f.gpus[0].nvlink_errors_total[c].fn, "nvmlDeviceGetNvLinkState");
        }
        nvml_facts_done(&f);
}

static void test_handle_fails(void **state) {
        (void)state;
        reset(2);
        cfg.fail_fn = "nvmlDeviceGetHandleByIndex_v2";
        cfg.fail_rc = NVML_ERROR_GPU_IS_LOST;
        cfg.fail_gpu = 1;
        struct nvml_lib lib = stub_lib();
        struct nvml_facts f;
        assert_int_equal(nvml_facts_gather(&lib, &short_dl, &f), 0);
        assert_gpu_complete(&f.gpus[0], 0);
        for (size_t k = 0; k < N_FACTS; k++) {
                struct hdr h = hdr_at(&f.gpus[1], facts[k].off);
                if (strncmp(facts[k].field, "nvlink[", 7) == 0 && strncmp(facts[k].field, "nvlink[0].state", 15) != 0)
                        continue; /* links after the first are not walked */
                assert_int_equal(h.state, NV_ERROR);
                assert_int_equal(h.rc, NVML_ERROR_GPU_IS_LOST);
                assert_string_equal(h.fn, "nvmlDeviceGetHandleByIndex_v2");
        }
        nvml_facts_done(&f);
}

static void test_missing_functions(void **state) {
        (void)state;
        reset(1);
        struct nvml_lib lib = stub_lib();
        lib.nvmlDeviceGetFanSpeed = NULL;
        lib.nvmlDeviceGetCurrentClocksEventReasons = NULL;
        lib.nvmlDeviceGetMemoryInfo_v2 = NULL;
        lib.nvmlDeviceGetGpuFabricInfo = NULL;
        lib.nvmlSystemGetCudaDriverVersion_v2 = NULL;
        struct nvml_facts f;
        assert_int_equal(nvml_facts_gather(&lib, &short_dl, &f), 0);
        const struct nvml_gpu *g = &f.gpus[0];
        assert_int_equal(g->fan_pct.state, NV_NO_FUNCTION);
        assert_int_equal(g->fan_pct.rc, NVML_ERROR_FUNCTION_NOT_FOUND);
        assert_string_equal(g->fan_pct.fn, "nvmlDeviceGetFanSpeed");
        /* Older drivers: the throttle-reasons name answers. */
        assert_int_equal(g->clocks_event_reasons.state, NV_OK);
        assert_string_equal(g->clocks_event_reasons.fn, "nvmlDeviceGetCurrentClocksThrottleReasons");
        assert_int_equal(g->clocks_event_reasons.v, nvmlClocksEventReasonGpuIdle | nvmlClocksThrottleReasonHwSlowdown);
        /* No v2 memory: v1 answers, reserved says why it is missing. */
        assert_int_equal(g->mem_reserved_bytes.state, NV_NO_FUNCTION);
        assert_int_equal(g->mem_total_bytes.state, NV_OK);
        assert_string_equal(g->mem_total_bytes.fn, "nvmlDeviceGetMemoryInfo");
        assert_int_equal(g->mem_total_bytes.v, 81559 * MIB);
        assert_int_equal(g->fabric_state.state, NV_NO_FUNCTION);
        assert_int_equal(g->fabric_clique_id.state, NV_NO_FUNCTION);
        assert_int_equal(f.cuda_driver_version.state, NV_NO_FUNCTION);
        assert_string_equal(f.cuda_driver_version_str, "");
        nvml_facts_done(&f);
}

static void test_init_errors(void **state) {
        (void)state;
        static const struct {
                nvmlReturn_t rc;
                enum nvml_init_state st;
        } cases[] = {
                {NVML_ERROR_DRIVER_NOT_LOADED, NVML_INIT_DRIVER_NOT_LOADED},
                {NVML_ERROR_LIB_RM_VERSION_MISMATCH, NVML_INIT_VERSION_MISMATCH},
                {NVML_ERROR_NO_PERMISSION, NVML_INIT_NO_PERMISSION},
                {NVML_ERROR_UNKNOWN, NVML_INIT_ERROR},
        };
        struct nvml_lib lib = stub_lib();
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                reset(8);
                cfg.init_rc = cases[i].rc;
                struct nvml_facts f;
                assert_int_equal(nvml_facts_gather(&lib, &short_dl, &f), 0);
                assert_int_equal(f.init_state, cases[i].st);
                assert_int_equal(f.init_rc, cases[i].rc);
                assert_false(f.initialized);
                assert_int_equal(f.n_gpus, 0);
                assert_int_equal(f.driver_version.state, NV_UNREAD);
                nvml_facts_done(&f);
                assert_int_equal(atomic_load(&shutdowns), 0);
        }

        /* No library at all. */
        struct nvml_facts f;
        assert_int_equal(nvml_facts_gather(NULL, NULL, &f), 0);
        assert_int_equal(f.init_state, NVML_INIT_NO_LIBRARY);
        assert_string_equal(nvml_init_state_name(f.init_state), "no library");
        nvml_facts_done(&f);

        /* No GPU: init fine, count 0. */
        reset(0);
        assert_int_equal(nvml_facts_gather(&lib, &short_dl, &f), 0);
        assert_int_equal(f.init_state, NVML_INIT_OK);
        assert_int_equal(f.device_count.state, NV_OK);
        assert_int_equal(f.n_gpus, 0);
        nvml_facts_done(&f);
        assert_int_equal(atomic_load(&shutdowns), 1);
}

static void test_hang_temperature_gpu2(void **state) {
        (void)state;
        reset(8);
        cfg.hang_fn = "nvmlDeviceGetTemperature";
        cfg.hang_gpu = 2;
        struct nvml_lib lib = stub_lib();
        struct nvml_facts f;
        unsigned long long t0 = deadline_now_ms();
        assert_int_equal(nvml_facts_gather(&lib, &short_dl, &f), 0);
        unsigned long long took = deadline_now_ms() - t0;
        print_message("8 GPUs, GPU 2 hung in nvmlDeviceGetTemperature: gather returned in %llu ms (call deadline %u ms)\n",
                      took, short_dl.call_ms);
        assert_true(took < 2 * short_dl.call_ms);

        assert_int_equal(f.n_gpus, 8);
        assert_true(f.abandoned);
        assert_int_equal(f.n_timeouts, 1);
        assert_string_equal(f.timeouts[0].fn, "nvmlDeviceGetTemperature");
        assert_int_equal(f.timeouts[0].gpu, 2);
        assert_true(f.timeouts[0].elapsed_ms >= short_dl.call_ms);
        assert_false(f.timeouts[0].budget);
        for (unsigned int i = 0; i < 8; i++)
                if (i != 2)
                        assert_gpu_complete(&f.gpus[i], i);

        const struct nvml_gpu *g = &f.gpus[2];
        assert_true(g->timed_out);
        assert_string_equal(g->timeout_fn, "nvmlDeviceGetTemperature");
        /* Read before the hang: kept. */
        assert_int_equal(g->name.state, NV_OK);
        assert_int_equal(g->mem_total_bytes.state, NV_OK);
        assert_int_equal(g->bar1_total_bytes.state, NV_OK);
        /* The hung one and everything after: timeout naming the function. */
        size_t k0 = 0;
        while (strcmp(facts[k0].fn, "nvmlDeviceGetTemperature") != 0)
                k0++;
        for (size_t k = k0; k < N_FACTS; k++) {
                struct hdr h = hdr_at(g, facts[k].off);
                if (strncmp(facts[k].field, "nvlink[", 7) == 0 && strncmp(facts[k].field, "nvlink[0].state", 15) != 0)
                        continue; /* the link walk stops at the first timed-out link */
                if (h.state != NV_TIMEOUT)
                        fail_msg("GPU 2 %s: %s", facts[k].field, nv_state_name(h.state));
                assert_string_equal(h.fn, "nvmlDeviceGetTemperature");
        }
        assert_int_equal(g->nvlink_count, 0);
        assert_int_equal(g->nvlink_end.state, NV_TIMEOUT);
        assert_int_equal(g->nvlink_errors_total[NVML_NVL_CRC_FLIT].state, NV_TIMEOUT);
        assert_string_equal(g->nvlink_errors_total[NVML_NVL_CRC_FLIT].fn, "nvmlDeviceGetTemperature");

        /* No nvmlShutdown while a thread is inside the library. */
        nvml_facts_done(&f);
        assert_int_equal(atomic_load(&shutdowns), 0);
        assert_true(f.abandoned);
        drain();
}

/* --- the NVLink remote PCI info asked ahead (a helper thread per GPU) ------------------ */

static struct nvml_lib fields_lib(void) {
        struct nvml_lib lib = stub_lib();
        lib.nvmlDeviceGetFieldValues = nvmlDeviceGetFieldValues;
        return lib;
}

/* Every link of g: state from the fields, remote end from the helper's answers. */
static void assert_links_read(const struct nvml_gpu *g, unsigned int i) {
        assert_int_equal(g->nvlink_count, N_NVLINKS);
        for (unsigned int l = 0; l < N_NVLINKS; l++) {
                const struct nvml_nvlink *k = &g->nvlink[l];
                if (k->state.state != NV_OK || k->remote_bus_id.state != NV_OK || k->remote_device_id.state != NV_OK)
                        fail_msg("GPU %u link %u: state %s, remote %s", i, l, nv_state_name(k->state.state),
                                 nv_state_name(k->remote_bus_id.state));
                assert_string_equal(k->state.fn, "nvmlDeviceGetFieldValues");
                assert_string_equal(k->remote_bus_id.fn, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
                char want[16];
                snprintf(want, sizeof(want), "0000:%02x:00.0", 0x05 + l % 4);
                assert_string_equal(k->remote_bus_id.v, want);
                assert_int_equal(k->remote_device_id.v, 0x22a310de);
                assert_int_equal(k->errors[0].state, NV_OK);
        }
}

static void test_prefetch_healthy(void **state) {
        (void)state;
        reset(8);
        struct nvml_lib lib = fields_lib();
        struct nvml_facts f;
        assert_int_equal(nvml_facts_gather(&lib, &short_dl, &f), 0);
        assert_false(f.abandoned);
        assert_int_equal(f.n_timeouts, 0);
        for (unsigned int i = 0; i < 8; i++) {
                assert_false(f.gpus[i].timed_out);
                assert_links_read(&f.gpus[i], i);
                assert_int_equal(f.gpus[i].persistence_mode.state, NV_OK);
                assert_int_equal(f.gpus[i].nvlink_end.state, NV_ERROR); /* link 18: NOT_SUPPORTED */
        }
        /* Each remote end asked once, as in line; the helpers are joined. */
        assert_int_equal(atomic_load(&remote_calls), 8 * N_NVLINKS);
        assert_int_equal(deadline_threads_alive(), 0);
        nvml_facts_done(&f);
}

/* A hang on GPU 2 with the remote ends asked ahead: the facts are those of the calls made
 * in line (docs/nvml.md): read before the hung call, kept; the hung call's and every later
 * one's, NV_TIMEOUT naming it, whatever the helper had read meanwhile. */
static void hang_case(const char *fn, unsigned int nth, unsigned int first_lost_link) {
        reset(8);
        cfg.hang_fn = fn;
        cfg.hang_gpu = 2;
        cfg.hang_nth = nth;
        struct nvml_lib lib = fields_lib();
        struct nvml_facts f;
        assert_int_equal(nvml_facts_gather(&lib, &short_dl, &f), 0);
        assert_true(f.abandoned);
        assert_int_equal(f.n_timeouts, 1);
        assert_string_equal(f.timeouts[0].fn, fn);
        assert_int_equal(f.timeouts[0].gpu, 2);
        assert_true(f.timeouts[0].elapsed_ms >= short_dl.call_ms);
        assert_false(f.timeouts[0].budget);
        for (unsigned int i = 0; i < 8; i++)
                if (i != 2)
                        assert_links_read(&f.gpus[i], i);
        const struct nvml_gpu *g = &f.gpus[2];
        assert_true(g->timed_out);
        assert_string_equal(g->timeout_fn, fn);
        for (unsigned int l = 0; l < first_lost_link && l < N_NVLINKS; l++) {
                assert_int_equal(g->nvlink[l].remote_bus_id.state, NV_OK);
                assert_int_equal(g->nvlink[l].remote_device_id.state, NV_OK);
        }
        if (first_lost_link < N_NVLINKS) {
                /* The replay's walk: a link whose state was read gets its remote end as
                 * NV_TIMEOUT; the next link's state is NV_TIMEOUT and ends the walk; the
                 * links past it stay unread. */
                unsigned int end = first_lost_link;
                const struct nvml_nvlink *k = &g->nvlink[first_lost_link];
                if (k->state.state == NV_OK) {
                        assert_int_equal(k->remote_bus_id.state, NV_TIMEOUT);
                        assert_int_equal(k->remote_device_id.state, NV_TIMEOUT);
                        assert_string_equal(k->remote_bus_id.fn, fn);
                        end++;
                }
                assert_int_equal(g->nvlink[end].state.state, NV_TIMEOUT);
                assert_string_equal(g->nvlink[end].state.fn, fn);
                assert_int_equal(g->nvlink_end.state, NV_TIMEOUT);
                for (unsigned int l = end; l < N_NVLINKS; l++)
                        if (g->nvlink[l].remote_bus_id.state != NV_UNREAD)
                                fail_msg("%s: GPU 2 link %u remote end %s, want unread (the walk ended)", fn, l,
                                         nv_state_name(g->nvlink[l].remote_bus_id.state));
        }
        if (first_lost_link < N_NVLINKS) {
                /* Everything after the NVLinks as well. */
                assert_int_equal(g->persistence_mode.state, NV_TIMEOUT);
                assert_string_equal(g->persistence_mode.fn, fn);
                assert_int_equal(g->fabric_state.state, NV_TIMEOUT);
        }
        nvml_facts_done(&f);
        drain();
        /* The helper asked nothing past what the worker could still take. */
        assert_true(atomic_load(&remote_calls) <= 8 * N_NVLINKS);
}

static void test_prefetch_hang_before_nvlinks(void **state) {
        (void)state;
        /* After the field call (the helper runs), before read_nvlinks: the helper's 18
         * answers are dropped. */
        hang_case("nvmlDeviceGetPowerUsage", 0, 0);
        /* The field call itself: no helper at all. */
        hang_case("nvmlDeviceGetFieldValues", 0, 0);
}

static void test_prefetch_hang_in_remote(void **state) {
        (void)state;
        /* The helper's call hangs: the worker, waiting for it at link 0 or link 5, is
         * abandoned at the call's deadline, naming it. */
        hang_case("nvmlDeviceGetNvLinkRemotePciInfo_v2", 1, 0);
        hang_case("nvmlDeviceGetNvLinkRemotePciInfo_v2", 6, 5);
}

static void test_prefetch_hang_after_nvlinks(void **state) {
        (void)state;
        /* Past the links (the walk's end, then persistence mode): every remote end kept. */
        hang_case("nvmlDeviceGetNvLinkState", 0, N_NVLINKS);
        hang_case("nvmlDeviceGetPersistenceMode", 0, N_NVLINKS);
        reset(8);
}

/* --- the violation counters (NVML_GROUP_VIOLATIONS) ------------------------------------ */

/* Each reading's policy (-1: none, field only) and what each source answers for GPU g. */
static const int viol_policy[NVML_VIOL_COUNT] = {
        [NVML_VIOL_POWER] = NVML_PERF_POLICY_POWER,
        [NVML_VIOL_THERMAL] = NVML_PERF_POLICY_THERMAL,
        [NVML_VIOL_SYNC_BOOST] = NVML_PERF_POLICY_SYNC_BOOST,
        [NVML_VIOL_BOARD_LIMIT] = NVML_PERF_POLICY_BOARD_LIMIT,
        [NVML_VIOL_LOW_UTIL] = NVML_PERF_POLICY_LOW_UTILIZATION,
        [NVML_VIOL_RELIABILITY] = NVML_PERF_POLICY_RELIABILITY,
        [NVML_VIOL_TOTAL_BASE_CLOCKS] = NVML_PERF_POLICY_TOTAL_BASE_CLOCKS,
        [NVML_VIOL_HW_THERMAL] = -1,
        [NVML_VIOL_HW_POWER_BRAKE] = -1,
};
static const unsigned int viol_field[NVML_VIOL_COUNT] = {
        NVML_FI_DEV_PERF_POLICY_POWER,       NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN,
        NVML_FI_DEV_PERF_POLICY_SYNC_BOOST,  NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT,
        NVML_FI_DEV_PERF_POLICY_LOW_UTILIZATION, NVML_FI_DEV_PERF_POLICY_RELIABILITY,
        NVML_FI_DEV_PERF_POLICY_TOTAL_BASE_CLOCKS, NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN,
        NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN,
};

/* The field stub's value of field id for GPU g. */
static unsigned long long viol_field_ns(unsigned int id, int g) {
        if (id >= NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN)
                return 100000ULL * (id - 268) + (unsigned long long)g;
        return viol_ns((int)(id - NVML_FI_DEV_PERF_POLICY_POWER), g) + 5;
}

static void assert_viol(const struct nvml_gpu *g, unsigned int i, unsigned char state, int rc, const char *fn,
                        unsigned long long v) {
        const struct nv_u64 *r = &g->violation_ns[i];
        if (r->state != state || r->rc != rc || !r->fn || strcmp(r->fn, fn) != 0 || (state == NV_OK && r->v != v))
                fail_msg("GPU %u violation %u: %s rc %d %s v %llu; want %s rc %d %s v %llu", g->index, i,
                         nv_state_name(r->state), r->rc, r->fn ? r->fn : "-", r->v, nv_state_name(state), rc, fn, v);
}

static struct nvml_facts gather_viol(struct nvml_lib *lib, unsigned int n) {
        struct nvml_facts f;
        assert_int_equal(nvml_facts_gather(lib, &short_dl, &f), 0);
        assert_int_equal(f.n_gpus, n);
        return f;
}

/* Where the driver has every field: all nine from the one field call, no other call (a
 * failing nvmlDeviceGetViolationStatus would show). */
static void test_violations_fields(void **state) {
        (void)state;
        reset(2);
        cfg.viol_fields = 1;
        cfg.fail_fn = "nvmlDeviceGetViolationStatus";
        cfg.fail_rc = NVML_ERROR_UNKNOWN;
        struct nvml_lib lib = fields_lib();
        struct nvml_facts f = gather_viol(&lib, 2);
        for (unsigned int g = 0; g < 2; g++)
                for (unsigned int i = 0; i < NVML_VIOL_COUNT; i++)
                        assert_viol(&f.gpus[g], i, NV_OK, 0, "nvmlDeviceGetFieldValues", viol_field_ns(viol_field[i], (int)g));
        nvml_facts_done(&f);
}

/* A driver without the reason counters 269-271: SW thermal from the THERMAL policy field (75),
 * the other policies from theirs; HW thermal and power brake NOT_SUPPORTED, naming the
 * field call (they have no other source). */
static void test_violations_policy_fields_only(void **state) {
        (void)state;
        reset(1);
        cfg.viol_fields = 2;
        struct nvml_lib lib = fields_lib();
        struct nvml_facts f = gather_viol(&lib, 1);
        const struct nvml_gpu *g = &f.gpus[0];
        assert_viol(g, NVML_VIOL_THERMAL, NV_OK, 0, "nvmlDeviceGetFieldValues",
                    viol_field_ns(NVML_FI_DEV_PERF_POLICY_THERMAL, 0));
        assert_viol(g, NVML_VIOL_POWER, NV_OK, 0, "nvmlDeviceGetFieldValues", viol_field_ns(NVML_FI_DEV_PERF_POLICY_POWER, 0));
        assert_viol(g, NVML_VIOL_HW_THERMAL, NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetFieldValues", 0);
        assert_viol(g, NVML_VIOL_HW_POWER_BRAKE, NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetFieldValues", 0);
        nvml_facts_done(&f);
}

/* Fields NOT_SUPPORTED (an older driver): each policy from nvmlDeviceGetViolationStatus;
 * without the field function at all, the two field-only readings are NV_NO_FUNCTION. A
 * negative value in a field is no counter: UNKNOWN. */
static void test_violations_fallback(void **state) {
        (void)state;
        reset(2);
        struct nvml_lib lib = fields_lib();
        struct nvml_facts f = gather_viol(&lib, 2);
        for (unsigned int g = 0; g < 2; g++) {
                for (unsigned int i = 0; i < NVML_VIOL_COUNT; i++) {
                        if (viol_policy[i] >= 0)
                                assert_viol(&f.gpus[g], i, NV_OK, 0, "nvmlDeviceGetViolationStatus", viol_ns(viol_policy[i], (int)g));
                        else
                                assert_viol(&f.gpus[g], i, NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetFieldValues", 0);
                }
        }
        nvml_facts_done(&f);

        reset(1);
        lib = stub_lib();
        f = gather_viol(&lib, 1);
        assert_viol(&f.gpus[0], NVML_VIOL_HW_THERMAL, NV_NO_FUNCTION, NVML_ERROR_FUNCTION_NOT_FOUND,
                    "nvmlDeviceGetFieldValues", 0);
        assert_viol(&f.gpus[0], NVML_VIOL_RELIABILITY, NV_OK, 0, "nvmlDeviceGetViolationStatus",
                    viol_ns(NVML_PERF_POLICY_RELIABILITY, 0));
        nvml_facts_done(&f);

        reset(1);
        cfg.viol_fields = 3;
        lib = fields_lib();
        f = gather_viol(&lib, 1);
        assert_viol(&f.gpus[0], NVML_VIOL_HW_THERMAL, NV_ERROR, NVML_ERROR_UNKNOWN, "nvmlDeviceGetFieldValues", 0);
        assert_viol(&f.gpus[0], NVML_VIOL_HW_POWER_BRAKE, NV_OK, 0, "nvmlDeviceGetFieldValues",
                    viol_field_ns(NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN, 0));
        nvml_facts_done(&f);
}

/* Errors: each from the call that gave it, on its GPU only; a missing function. */
static void test_violations_errors(void **state) {
        (void)state;
        static const nvmlReturn_t rcs[] = {NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_NO_PERMISSION, NVML_ERROR_GPU_IS_LOST,
                                           NVML_ERROR_UNKNOWN};
        for (size_t ri = 0; ri < sizeof(rcs) / sizeof(rcs[0]); ri++) {
                /* The call failing, the fields not answering. */
                reset(2);
                cfg.fail_fn = "nvmlDeviceGetViolationStatus";
                cfg.fail_rc = rcs[ri];
                cfg.fail_gpu = 1;
                struct nvml_lib lib = fields_lib();
                struct nvml_facts f = gather_viol(&lib, 2);
                for (unsigned int i = 0; i < NVML_VIOL_COUNT; i++) {
                        if (viol_policy[i] < 0)
                                continue;
                        assert_viol(&f.gpus[0], i, NV_OK, 0, "nvmlDeviceGetViolationStatus", viol_ns(viol_policy[i], 0));
                        assert_viol(&f.gpus[1], i, NV_ERROR, (int)rcs[ri], "nvmlDeviceGetViolationStatus", 0);
                }
                nvml_facts_done(&f);
                /* The field call failing: the policies from the call, the others its error. */
                reset(2);
                cfg.viol_fields = 1;
                cfg.fail_fn = "nvmlDeviceGetFieldValues";
                cfg.fail_rc = rcs[ri];
                cfg.fail_gpu = 1;
                f = gather_viol(&lib, 2);
                for (unsigned int i = 0; i < NVML_VIOL_COUNT; i++) {
                        if (viol_policy[i] >= 0)
                                assert_viol(&f.gpus[1], i, NV_OK, 0, "nvmlDeviceGetViolationStatus", viol_ns(viol_policy[i], 1));
                        else
                                assert_viol(&f.gpus[1], i, NV_ERROR, (int)rcs[ri], "nvmlDeviceGetFieldValues", 0);
                        assert_viol(&f.gpus[0], i, NV_OK, 0, "nvmlDeviceGetFieldValues", viol_field_ns(viol_field[i], 0));
                }
                nvml_facts_done(&f);
        }
        reset(1);
        struct nvml_lib lib = fields_lib();
        lib.nvmlDeviceGetViolationStatus = NULL;
        struct nvml_facts f = gather_viol(&lib, 1);
        assert_viol(&f.gpus[0], NVML_VIOL_POWER, NV_NO_FUNCTION, NVML_ERROR_FUNCTION_NOT_FOUND,
                    "nvmlDeviceGetViolationStatus", 0);
        nvml_facts_done(&f);
}

/* A hang in nvmlDeviceGetViolationStatus, then in the field call, on GPU 1 of 3: the
 * counters and every later reading NV_TIMEOUT naming it, the other GPUs complete. */
static void test_violations_hang(void **state) {
        (void)state;
        static const char *const fns[] = {"nvmlDeviceGetViolationStatus", "nvmlDeviceGetFieldValues"};
        for (size_t k = 0; k < 2; k++) {
                reset(3);
                cfg.hang_fn = fns[k];
                cfg.hang_gpu = 1;
                struct nvml_lib lib = fields_lib();
                struct nvml_facts f = gather_viol(&lib, 3);
                assert_true(f.abandoned);
                assert_int_equal(f.n_timeouts, 1);
                assert_string_equal(f.timeouts[0].fn, fns[k]);
                assert_int_equal(f.timeouts[0].gpu, 1);
                const struct nvml_gpu *g = &f.gpus[1];
                assert_true(g->timed_out);
                assert_string_equal(g->timeout_fn, fns[k]);
                for (unsigned int i = 0; i < NVML_VIOL_COUNT; i++)
                        assert_viol(g, i, NV_TIMEOUT, NVML_ERROR_TIMEOUT, fns[k], 0);
                assert_int_equal(g->util_gpu_pct.state, NV_TIMEOUT);
                assert_string_equal(g->util_gpu_pct.fn, fns[k]);
                for (unsigned int j = 0; j < 3; j += 2) {
                        assert_false(f.gpus[j].timed_out);
                        for (unsigned int i = 0; i < NVML_VIOL_COUNT; i++)
                                if (viol_policy[i] >= 0)
                                        assert_viol(&f.gpus[j], i, NV_OK, 0, "nvmlDeviceGetViolationStatus",
                                                    viol_ns(viol_policy[i], (int)j));
                }
                nvml_facts_done(&f);
                drain();
        }
}

static void test_hang_late_return_into_buffer(void **state) {
        (void)state;
        /* Hang in the second process call, the one given a buffer; when released it writes
         * into that buffer, long after the caller freed its facts. */
        reset(2);
        cfg.hang_fn = "nvmlDeviceGetComputeRunningProcesses_v3";
        cfg.hang_gpu = 0;
        cfg.hang_nth = 2;
        struct nvml_lib lib = stub_lib();
        struct nvml_facts f;
        assert_int_equal(nvml_facts_gather(&lib, &short_dl, &f), 0);
        assert_true(f.gpus[0].timed_out);
        assert_int_equal(f.gpus[0].compute_procs.state, NV_TIMEOUT);
        assert_int_equal(f.gpus[0].fabric_state.state, NV_TIMEOUT);
        assert_int_equal(f.gpus[0].nvlink_count, N_NVLINKS);
        assert_gpu_complete(&f.gpus[1], 1);
        nvml_facts_done(&f);
        memset(&f, 0x5a, sizeof(f));
        drain();
}

static void test_hang_init(void **state) {
        (void)state;
        reset(8);
        cfg.init_hang = true;
        struct nvml_lib lib = stub_lib();
        struct nvml_facts f;
        unsigned long long t0 = deadline_now_ms();
        assert_int_equal(nvml_facts_gather(&lib, &short_dl, &f), 0);
        unsigned long long took = deadline_now_ms() - t0;
        print_message("nvmlInit_v2 hung: gather returned in %llu ms (init deadline %u ms)\n", took, short_dl.init_ms);
        assert_true(took < 2 * short_dl.init_ms);
        assert_int_equal(f.init_state, NVML_INIT_TIMEOUT);
        assert_string_equal(nvml_init_state_name(f.init_state), "timeout");
        assert_true(f.abandoned);
        assert_false(f.initialized);
        assert_int_equal(f.n_gpus, 0);
        assert_int_equal(f.n_timeouts, 1);
        assert_string_equal(f.timeouts[0].fn, "nvmlInit_v2");
        assert_int_equal(f.timeouts[0].gpu, -1);
        nvml_facts_done(&f);
        assert_int_equal(atomic_load(&shutdowns), 0);
        drain();
}

static void test_hang_count(void **state) {
        (void)state;
        reset(8);
        cfg.hang_fn = "nvmlDeviceGetCount_v2";
        struct nvml_lib lib = stub_lib();
        struct nvml_facts f;
        assert_int_equal(nvml_facts_gather(&lib, &short_dl, &f), 0);
        assert_int_equal(f.init_state, NVML_INIT_OK);
        assert_int_equal(f.driver_version.state, NV_OK);
        assert_int_equal(f.device_count.state, NV_TIMEOUT);
        assert_string_equal(f.device_count.fn, "nvmlDeviceGetCount_v2");
        assert_true(f.abandoned);
        assert_int_equal(f.n_gpus, 0);
        nvml_facts_done(&f);
        assert_int_equal(atomic_load(&shutdowns), 0);
        drain();
}

static void test_gpu_budget(void **state) {
        (void)state;
        reset(2);
        cfg.latency_us = 20000; /* 20 ms a call: ~200 calls would take 4 s */
        struct nvml_lib lib = stub_lib();
        struct nvml_deadlines dl = {.call_ms = 1000, .gpu_ms = 300, .init_ms = 1000};
        struct nvml_facts f;
        unsigned long long t0 = deadline_now_ms();
        assert_int_equal(nvml_facts_gather(&lib, &dl, &f), 0);
        unsigned long long took = deadline_now_ms() - t0;
        /* System calls (5 x 20 ms) + the GPU budget. */
        assert_true(took < 100 + 300 + 200);
        for (unsigned int i = 0; i < 2; i++) {
                assert_true(f.gpus[i].timed_out);
                assert_int_equal(f.gpus[i].name.state, NV_OK);
                assert_int_equal(f.gpus[i].fabric_state.state, NV_TIMEOUT);
        }
        assert_int_equal(f.n_timeouts, 2);
        assert_true(f.timeouts[0].budget);
        nvml_facts_done(&f);
        drain();
}

static void test_parallel_latency(void **state) {
        (void)state;
        reset(8);
        cfg.latency_us = 1000;
        struct nvml_lib lib = stub_lib();
        struct nvml_facts f;
        unsigned long long t0 = deadline_now_ms();
        assert_int_equal(nvml_facts_gather(&lib, NULL, &f), 0);
        unsigned long long took = deadline_now_ms() - t0;
        unsigned int calls = atomic_load(&calls_made);
        print_message("8 GPUs, 1 ms per NVML call, %u calls: gather took %llu ms (%u ms if serial)\n", calls, took,
                      calls);
        for (unsigned int i = 0; i < 8; i++)
                assert_gpu_complete(&f.gpus[i], i);
        /* Generous: parallel GPUs take about a GPU's share. */
        assert_true(took < calls / 2);
        nvml_facts_done(&f);
}

/* Last: a call that never returns, as on a wedged GPU. Its thread is still blocked when
 * the process exits; LeakSanitizer finds its memory reachable from that thread's stack,
 * so no suppression is needed. */
static void test_hang_forever(void **state) {
        (void)state;
        reset(4);
        cfg.hang_fn = "nvmlDeviceGetPowerUsage";
        cfg.hang_gpu = 3;
        struct nvml_lib lib = stub_lib();
        struct nvml_facts f;
        assert_int_equal(nvml_facts_gather(&lib, &short_dl, &f), 0);
        assert_true(f.abandoned);
        assert_int_equal(f.gpus[3].power_mw.state, NV_TIMEOUT);
        assert_int_equal(f.gpus[3].temp_c.state, NV_OK);
        nvml_facts_done(&f);
        assert_int_equal(deadline_threads_alive(), 1);
}

/* --- the sampler (metrics/sampler.c) ------------------------------------------------- */

static const nvml_groups name_only = 1ULL << NVML_GROUP_NAME;

static void test_sampler_rounds(void **state) {
        (void)state;
        reset(2);
        struct nvml_lib lib = stub_lib();
        struct sampler *smp;
        struct sampler_options o = {.lib = &lib, .dl = short_dl, .groups = name_only, .interval_ms = 20};
        assert_int_equal(sampler_start(&o, &smp), 0);
        unsigned long long seq = 0;
        for (int round = 0; round < 4; round++) {
                struct sample *x = sampler_next(smp, seq, 5000);
                assert_non_null(x);
                assert_true(x->seq > seq);
                seq = x->seq;
                assert_int_equal(x->facts.n_gpus, 2);
                assert_int_equal(x->facts.gpus[1].name.state, NV_OK);
                /* Only the group asked for: nothing else was read. */
                assert_int_equal(x->facts.gpus[1].temp_c.state, NV_UNREAD);
                assert_int_equal(x->facts.gpus[1].nvlink_count, 0);
                sample_put(smp, x);
        }
        assert_false(sampler_ended(smp, NULL));
        assert_false(sampler_stop(smp));
        /* Every round's init was balanced by a shutdown once its sample was released. */
        assert_true(atomic_load(&shutdowns) >= 4);
        drain();
}

static void test_sampler_reader_never_waits(void **state) {
        (void)state;
        reset(2);
        cfg.latency_us = 150000; /* every call 150 ms: a round takes ~1 s */
        struct nvml_lib lib = stub_lib();
        struct sampler *smp;
        struct nvml_deadlines dl = {.call_ms = 5000, .gpu_ms = 20000, .init_ms = 5000};
        struct sampler_options o = {.lib = &lib, .dl = dl, .groups = name_only, .interval_ms = 10};
        assert_int_equal(sampler_start(&o, &smp), 0);
        struct sample *first = sampler_next(smp, 0, 20000);
        assert_non_null(first);
        sample_put(smp, first);
        /* The next round is under way now; taking the latest must not wait for it. */
        unsigned long long worst = 0;
        for (int i = 0; i < 20; i++) {
                unsigned long long t0 = deadline_now_ms();
                struct sample *x = sampler_latest(smp);
                unsigned long long took = deadline_now_ms() - t0;
                worst = took > worst ? took : worst;
                assert_non_null(x);
                sample_put(smp, x);
                struct timespec ts = {0, 10000000};
                nanosleep(&ts, NULL);
        }
        print_message("sampler_latest during a 1 s round: worst %llu ms\n", worst);
        assert_true(worst < 50);
        /* Stopped mid-round: that round's calls are abandoned (they return later). */
        (void)sampler_stop(smp);
        drain();
}

static void test_sampler_hung_gpu_stale(void **state) {
        (void)state;
        reset(2);
        cfg.hang_fn = "nvmlDeviceGetName";
        cfg.hang_gpu = 1;
        cfg.hang_nth = 2; /* the second round */
        struct nvml_lib lib = stub_lib();
        struct sampler *smp;
        struct sampler_options o = {.lib = &lib, .dl = short_dl, .groups = name_only, .interval_ms = 20};
        assert_int_equal(sampler_start(&o, &smp), 0);
        struct sample *a = sampler_next(smp, 0, 5000);
        assert_non_null(a);
        assert_int_equal(a->facts.gpus[1].name.state, NV_OK);
        struct sample *b = sampler_next(smp, a->seq, 5000);
        assert_non_null(b);
        /* GPU 1 hung this round: its name is a timeout naming the call, not round 1's value
         * again and not empty-but-ok; GPU 0 answered. The older sample is unchanged. */
        assert_true(b->facts.gpus[1].timed_out);
        assert_int_equal(b->facts.gpus[1].name.state, NV_TIMEOUT);
        assert_string_equal(b->facts.gpus[1].name.fn, "nvmlDeviceGetName");
        assert_int_equal(b->facts.gpus[0].name.state, NV_OK);
        assert_int_equal(a->facts.gpus[1].name.state, NV_OK);
        sample_put(smp, a);
        sample_put(smp, b);
        /* A call never returned: no further round (another would strand one more thread). */
        struct sample *c = sampler_next(smp, b->seq, 1000);
        assert_null(c);
        struct sampler_status st;
        assert_true(sampler_ended(smp, &st));
        assert_int_equal(st.end, SAMPLER_CALL_HUNG);
        unsigned int shut = atomic_load(&shutdowns);
        assert_true(sampler_stop(smp)); /* abandoned: the caller must _exit */
        assert_int_equal(atomic_load(&shutdowns), shut); /* no nvmlShutdown while a call hangs */
        drain();
}

static void test_sampler_stop_cuts_a_slow_round(void **state) {
        (void)state;
        reset(2);
        cfg.hang_fn = "nvmlDeviceGetName";
        cfg.hang_gpu = 0;
        struct nvml_lib lib = stub_lib();
        struct sampler *smp;
        struct nvml_deadlines dl = {.call_ms = 60000, .gpu_ms = 60000, .init_ms = 60000};
        struct sampler_options o = {.lib = &lib, .dl = dl, .groups = name_only, .interval_ms = 20};
        assert_int_equal(sampler_start(&o, &smp), 0);
        assert_null(sampler_next(smp, 0, 300)); /* the first round hangs, within its long deadline */
        unsigned long long t0 = deadline_now_ms();
        assert_true(sampler_stop(smp));
        unsigned long long took = deadline_now_ms() - t0;
        print_message("sampler_stop during a hung round: %llu ms\n", took);
        assert_true(took < 2000);
        drain();
}

/* Rounds every 30 ms: GPM's rates come only over windows of 100 ms or more, from the
 * second sample on, never on the GPU without GPM; the buffers are freed at the stop. */
static void test_sampler_gpm_windows(void **state) {
        (void)state;
        reset(3);
        struct nvml_lib lib = gpm_lib();
        struct sampler *smp;
        struct sampler_options o = {.lib = &lib, .dl = short_dl, .groups = 1ULL << NVML_GROUP_GPM, .interval_ms = 30};
        assert_int_equal(sampler_start(&o, &smp), 0);
        unsigned long long seq = 0;
        unsigned int with_rates = 0, without = 0;
        for (int round = 0; round < 25; round++) {
                struct sample *x = sampler_next(smp, seq, 5000);
                assert_non_null(x);
                seq = x->seq;
                const struct nvml_gpu *g0 = &x->facts.gpus[0], *g1 = &x->facts.gpus[1];
                assert_int_equal(g1->gpm_supported.state, NV_OK);
                assert_int_equal(g1->gpm_supported.v, 0);
                assert_int_equal(g1->gpm[NVML_GPM_TENSOR].state, NV_ERROR);
                assert_int_equal(g1->gpm[NVML_GPM_TENSOR].rc, NVML_ERROR_NOT_SUPPORTED);
                if (g0->gpm[NVML_GPM_TENSOR].state == NV_OK) {
                        with_rates++;
                        assert_true(g0->gpm_window_ms >= NVML_GPM_MIN_WINDOW_MS);
                        assert_true(g0->gpm[NVML_GPM_GRAPHICS].v == 10.0);
                        assert_true(g0->gpm[NVML_GPM_TENSOR].v == 40.0);
                        assert_true(g0->gpm[NVML_GPM_NVLINK_TX].v == 110.0);
                        assert_int_equal(g0->gpm[NVML_GPM_NVLINK_RX].state, NV_ERROR);
                        assert_int_equal(g0->gpm[NVML_GPM_NVLINK_RX].rc, NVML_ERROR_NOT_SUPPORTED);
                } else {
                        without++;
                        assert_int_equal(g0->gpm[NVML_GPM_TENSOR].state, NV_UNREAD);
                }
                sample_put(smp, x);
        }
        assert_false(sampler_stop(smp));
        /* 25 rounds 30 ms apart: a window closes about every fourth round. */
        assert_true(with_rates >= 3);
        assert_true(without >= with_rates);
        assert_true(atomic_load(&gpm_metric_calls) >= 2 * with_rates);
        assert_true(atomic_load(&gpm_min_window_ms) >= NVML_GPM_MIN_WINDOW_MS);
        assert_int_equal(atomic_load(&gpm_allocs), 4); /* two per GPU with GPM */
        assert_int_equal(atomic_load(&gpm_frees), 4);
        drain();
        assert_int_equal(gpm_free_leftovers(), 0);
}

/* A one-shot gather (no carry) asks GPM nothing. */
static void test_gpm_one_shot_asks_nothing(void **state) {
        (void)state;
        reset(2);
        struct nvml_lib lib = gpm_lib();
        struct nvml_facts f;
        assert_int_equal(nvml_facts_gather(&lib, &short_dl, &f), 0);
        assert_int_equal(f.gpus[0].gpm_supported.state, NV_UNREAD);
        assert_int_equal(f.gpus[0].gpm[NVML_GPM_SM_ACTIVE].state, NV_UNREAD);
        assert_int_equal(atomic_load(&gpm_allocs), 0);
        nvml_facts_done(&f);
        drain();
}

/* A GPM call that hangs is a timeout of its GPU like any other; the carry forgets that
 * GPU's buffers (the stuck thread has them) and frees the others'. */
static void test_gpm_hang(void **state) {
        (void)state;
        reset(3);
        struct nvml_lib lib = gpm_lib();
        cfg.hang_fn = "nvmlGpmSampleGet";
        cfg.hang_gpu = 2;
        struct nvml_gpm_carry *carry = nvml_gpm_carry_new();
        assert_non_null(carry);
        struct nvml_facts f;
        assert_int_equal(nvml_facts_gather_carry(&lib, &short_dl, 1ULL << NVML_GROUP_GPM, carry, &f), 0);
        assert_true(f.abandoned);
        assert_int_equal(f.gpus[2].gpm[NVML_GPM_TENSOR].state, NV_TIMEOUT);
        assert_string_equal(f.gpus[2].gpm[NVML_GPM_TENSOR].fn, "nvmlGpmSampleGet");
        assert_int_equal(f.gpus[0].gpm[NVML_GPM_TENSOR].state, NV_UNREAD); /* its first sample */
        assert_int_equal(f.gpus[1].gpm[NVML_GPM_TENSOR].rc, NVML_ERROR_NOT_SUPPORTED);
        assert_false(nvml_gpm_carry_free(carry, &lib, &short_dl, false));
        assert_int_equal(atomic_load(&gpm_allocs), 4);
        assert_int_equal(atomic_load(&gpm_frees), 2); /* GPU 0's; GPU 2's are the stuck thread's */
        nvml_facts_done(&f);
        drain();
        assert_int_equal(gpm_free_leftovers(), 2);
}

static void test_bus_id(void **state) {
        (void)state;
        char out[32];
        assert_int_equal(nvml_bus_id_normalise("00000000:1B:00.0", out, sizeof(out)), 0);
        assert_string_equal(out, "0000:1b:00.0");
        assert_int_equal(nvml_bus_id_normalise("0000:DB:00.0", out, sizeof(out)), 0);
        assert_string_equal(out, "0000:db:00.0");
        assert_int_equal(nvml_bus_id_normalise("00000001:01:1f.7", out, sizeof(out)), 0);
        assert_string_equal(out, "0001:01:1f.7");
        assert_int_equal(nvml_bus_id_normalise("garbage", out, sizeof(out)), -EINVAL);
        assert_string_equal(out, "garbage");
        assert_int_equal(nvml_bus_id_normalise("0000:1b:00.0x", out, sizeof(out)), -EINVAL);
        assert_int_equal(nvml_bus_id_normalise("0000:1b:20.0", out, sizeof(out)), -EINVAL);
        assert_string_equal(nv_state_name(NV_TIMEOUT), "timeout");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_bus_id),
                cmocka_unit_test(test_healthy),
                cmocka_unit_test(test_mig),
                cmocka_unit_test(test_errors),
                cmocka_unit_test(test_nvlink_not_supported),
                cmocka_unit_test(test_handle_fails),
                cmocka_unit_test(test_missing_functions),
                cmocka_unit_test(test_init_errors),
                cmocka_unit_test(test_hang_temperature_gpu2),
                cmocka_unit_test(test_hang_late_return_into_buffer),
                cmocka_unit_test(test_violations_fields),
                cmocka_unit_test(test_violations_policy_fields_only),
                cmocka_unit_test(test_violations_fallback),
                cmocka_unit_test(test_violations_errors),
                cmocka_unit_test(test_violations_hang),
                cmocka_unit_test(test_prefetch_healthy),
                cmocka_unit_test(test_prefetch_hang_before_nvlinks),
                cmocka_unit_test(test_prefetch_hang_in_remote),
                cmocka_unit_test(test_prefetch_hang_after_nvlinks),
                cmocka_unit_test(test_hang_init),
                cmocka_unit_test(test_hang_count),
                cmocka_unit_test(test_gpu_budget),
                cmocka_unit_test(test_parallel_latency),
                cmocka_unit_test(test_hang_forever),
                cmocka_unit_test(test_sampler_rounds),
                cmocka_unit_test(test_sampler_reader_never_waits),
                cmocka_unit_test(test_sampler_hung_gpu_stale),
                cmocka_unit_test(test_sampler_stop_cuts_a_slow_round),
                cmocka_unit_test(test_sampler_gpm_windows),
                cmocka_unit_test(test_gpm_one_shot_asks_nothing),
                cmocka_unit_test(test_gpm_hang),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

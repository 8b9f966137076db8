/* A fake libnvidia-ml.so.1 for tests: every NVML function gpuvet calls
 * (src/bindings/nvml_functions.def) with NVML's own signatures, plus what pynvml, gpustat
 * and nvitop call, answering from a scenario file named by $FAKE_NVML_SCENARIO (read at
 * nvmlInit; format in tests/fakes/README.md).
 *
 * Behaviour follows real NVML where tests can tell: calls before nvmlInit return
 * UNINITIALIZED; NULL output pointers and handles the library did not hand out return
 * INVALID_ARGUMENT; a value the scenario does not give returns NOT_SUPPORTED (what NVML
 * says on boards without the feature), never a made-up value; a GPU marked lost returns
 * GPU_IS_LOST. Injected faults, hangs and latencies come from the scenario.
 *
 * Thread safety: one mutex guards the scenario, the rule counters, the event queues and
 * the init count. It is never held while sleeping for an injected latency or hanging, so
 * one hung call does not stop the other threads. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "fake_nvml_extra.h"
#include "fake_scenario.h"

struct nvmlDevice_st {
        unsigned char unused;
};

#define FAKE_MAX_EVENT_SETS 64
struct nvmlEventSet_st {
        bool live;
        unsigned long long mask[FAKE_MAX_GPUS];
};

/* The exports beyond nvml_functions.def that take part in fault injection. */
#define FAKE_EXTRA_FUNCTIONS(X)                                                                      \
        X(nvmlInit) X(nvmlInitWithFlags) X(nvmlSystemGetCudaDriverVersion) X(nvmlSystemGetProcessName) \
        X(nvmlDeviceGetCount) X(nvmlDeviceGetHandleByIndex) X(nvmlDeviceGetHandleByUUID)               \
        X(nvmlDeviceGetHandleByPciBusId) X(nvmlDeviceGetPciInfo_v2)                                    \
        X(nvmlDeviceGetComputeRunningProcesses) X(nvmlDeviceGetComputeRunningProcesses_v2)              \
        X(nvmlDeviceGetGraphicsRunningProcesses) X(nvmlDeviceGetGraphicsRunningProcesses_v2)            \
        X(nvmlDeviceGetFanSpeed_v2) X(nvmlDeviceGetNumFans) X(nvmlDeviceGetPowerState)                 \
        X(nvmlDeviceIsMigDeviceHandle) X(nvmlDeviceGetGpuInstanceId) X(nvmlDeviceGetComputeInstanceId) \
        X(nvmlDeviceGetDeviceHandleFromMigDeviceHandle) X(nvmlDeviceGetSupportedClocksEventReasons)     \
        X(nvmlDeviceGetSupportedClocksThrottleReasons) X(nvmlDeviceGetTemperatureV) FAKE_STUB_FUNCTIONS(X)

/* Functions the clients call that the fake does not model: they answer NOT_SUPPORTED after
 * the usual checks, as NVML does on a board without the feature. */
#define FAKE_STUB_FUNCTIONS(X) FAKE_STUB_DEV_FUNCTIONS(X)
#define FAKE_STUB_DEV_FUNCTIONS(X)                                                                   \
        X(nvmlDeviceGetJpgUtilization) X(nvmlDeviceGetOfaUtilization) \
        X(nvmlDeviceGetNvLinkVersion) X(nvmlDeviceGetNvLinkUtilizationCounter) \
        X(nvmlDeviceGetNvLinkCapability) X(nvmlDeviceGetSamples)      \
        X(nvmlDeviceGetAccountingMode) X(nvmlDeviceGetAccountingStats) X(nvmlDeviceGetAccountingPids)    \
        X(nvmlDeviceGetGpuOperationMode) X(nvmlDeviceGetBoardId)      \
        X(nvmlDeviceGetInforomVersion) X(nvmlDeviceGetBoardPartNumber) \
        X(nvmlDeviceGetVirtualizationMode) X(nvmlDeviceGetMultiGpuBoard) X(nvmlDeviceGetTargetFanSpeed)  \
        X(nvmlDeviceGetFanControlPolicy_v2) X(nvmlDeviceGetMinMaxFanSpeed) X(nvmlDeviceGetFanSpeedRPM)   \
        X(nvmlDeviceGetMaxCustomerBoostClock) X(nvmlDeviceGetAutoBoostedClocksEnabled)                   \
        X(nvmlDeviceGetClock) X(nvmlDeviceGetGspFirmwareMode) X(nvmlDeviceGetGspFirmwareVersion)         \
        X(nvmlDeviceGetPcieSpeed) X(nvmlDeviceGetPcieLinkMaxSpeed) X(nvmlDeviceGetGpuMaxPcieLinkGeneration) \
        X(nvmlDeviceGetMemoryBusWidth) X(nvmlDeviceGetNumGpuCores) X(nvmlDeviceGetPowerSource)           \
        X(nvmlDeviceGetMemClkVfOffset) X(nvmlDeviceGetGpcClkVfOffset) X(nvmlDeviceGetEncoderStats)       \
        X(nvmlDeviceGetEncoderSessions) X(nvmlDeviceGetFBCStats) X(nvmlDeviceGetFBCSessions)             \
        X(nvmlDeviceGetComputeRunningProcesses_v4) X(nvmlDeviceGetRunningProcessDetailList)              \
        X(nvmlDeviceGetMPSComputeRunningProcesses) X(nvmlDeviceGetMPSComputeRunningProcesses_v2)         \
        X(nvmlDeviceGetMPSComputeRunningProcesses_v3) X(nvmlDeviceGetRetiredPages_v2)                    \
        X(nvmlDeviceGetDriverModel) X(nvmlDeviceGetDriverModel_v2) X(nvmlDeviceGetBoardPartNumber_v2)   \
        X(nvmlDeviceGetModuleId) X(nvmlDeviceGetC2cModeInfoV) X(nvmlDeviceGetDramEncryptionMode)         \
        X(nvmlDeviceGetConfComputeMemSizeInfo) X(nvmlDeviceGetThermalSettings)   \
        X(nvmlDeviceGetHostVgpuMode) X(nvmlDeviceGetVgpuCapabilities)     \
        X(nvmlDeviceGetCpuAffinity) X(nvmlDeviceGetMemoryAffinity) X(nvmlDeviceGetCpuAffinityWithinScope) \
        X(nvmlDeviceGetNvLinkRemoteDeviceType) X(nvmlDeviceGetP2PStatus) X(nvmlDeviceGetAttributes_v2)  \
        X(nvmlDeviceGetCurrentClockFreqs) X(nvmlDeviceGetPerformanceModes) X(nvmlDeviceGetDynamicPstatesInfo) \
        X(nvmlDeviceGetPowerManagementMode) X(nvmlDeviceGetBridgeChipInfo) X(nvmlDeviceGetIrqNum)        \
        X(nvmlDeviceGetNumaNodeId) X(nvmlDeviceGetPdi) X(nvmlDeviceGetAddressingMode)                    \
        \
        X(nvmlDeviceGetDetailedEccErrors) X(nvmlDeviceGetPgpuMetadataString)

enum fn_id {
#define NVML_FN(required, name, params) FN_##name,
#include "bindings/nvml_functions.def"
#undef NVML_FN
#define FAKE_FN_ENUM(name) FN_##name,
        FAKE_EXTRA_FUNCTIONS(FAKE_FN_ENUM)
#undef FAKE_FN_ENUM
        FN_COUNT
};

static const char *const fn_names[FN_COUNT] = {
#define NVML_FN(required, name, params) [FN_##name] = #name,
#include "bindings/nvml_functions.def"
#undef NVML_FN
#define FAKE_FN_NAME(name) [FN_##name] = #name,
        FAKE_EXTRA_FUNCTIONS(FAKE_FN_NAME)
#undef FAKE_FN_NAME
};

int fake_fn_lookup(const char *name)
{
        for (int i = 0; i < FN_COUNT; i++)
                if (strcmp(fn_names[i], name) == 0)
                        return i;
        return -1;
}

bool fake_busid_parse(const char *s, unsigned int *dom, unsigned int *bus, unsigned int *dev, unsigned int *fn);

/* Every function of nvml_functions.def, declared with the parameter list written there
 * (so a definition below that differs fails to compile) and referenced from this table
 * (so one that is missing fails to link: shared libraries link with --no-undefined). */
#define NVML_FN(required, name, params) nvmlReturn_t name params;
#include "bindings/nvml_functions.def"
#undef NVML_FN
__attribute__((used)) static const struct {
#define NVML_FN(required, name, params) name##_fn name;
#include "bindings/nvml_functions.def"
#undef NVML_FN
        nvmlErrorString_fn nvmlErrorString;
} exported = {
#define NVML_FN(required, name, params) .name = name,
#include "bindings/nvml_functions.def"
#undef NVML_FN
        .nvmlErrorString = nvmlErrorString,
};

/* --- state ---------------------------------------------------------------------------- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct fake_scenario *sc;
static unsigned int init_count;
static unsigned long long generation; /* bumped when the scenario is (re)loaded or shut down */
/* $FAKE_NVML_SCENARIO_LATER=FILE:MS: MS milliseconds after the scenario was loaded, the
 * calls answer from FILE instead (the same handles, no reload): a GPU whose state changes
 * while a command runs, as under a stress test (throttling that starts, an Xid). With
 * FILE:init=N the switch comes at the Nth nvmlInit instead, whatever the time: a command's
 * second read (check's after the device probes) sees FILE, on a machine of any speed. The
 * scenario it replaces is kept until unload: a thread may still be reading it. */
static unsigned long long loaded_at_ms;
static unsigned int inits_since_load;
static bool later_done;
/* $FAKE_NVML_SCENARIO_LATER as it was at the load: read once, not on every call. */
static char later_spec[4096];
static struct fake_scenario *retired;
static struct nvmlDevice_st handles[FAKE_MAX_GPUS * (1 + FAKE_MAX_MIG)];
static struct nvmlEventSet_st event_sets[FAKE_MAX_EVENT_SETS];

static nvmlDevice_t handle_of(unsigned int g, unsigned int m)
{
        return &handles[g * (1 + FAKE_MAX_MIG) + m];
}

/* A handle is ours if it points at one of the slots of the handle pool; comparing
 * addresses as integers keeps a foreign pointer from ever being dereferenced. */
static bool slot_of(nvmlDevice_t h, unsigned int *g, unsigned int *m)
{
        uintptr_t base = (uintptr_t)handles, p = (uintptr_t)h;
        if (p < base || p >= base + sizeof(handles) || (p - base) % sizeof(handles[0]) != 0)
                return false;
        size_t i = (p - base) / sizeof(handles[0]);
        *g = (unsigned int)(i / (1 + FAKE_MAX_MIG));
        *m = (unsigned int)(i % (1 + FAKE_MAX_MIG));
        return true;
}

static struct nvmlEventSet_st *event_set_of(nvmlEventSet_t s)
{
        uintptr_t base = (uintptr_t)event_sets, p = (uintptr_t)s;
        if (p < base || p >= base + sizeof(event_sets) || (p - base) % sizeof(event_sets[0]) != 0)
                return NULL;
        struct nvmlEventSet_st *es = &event_sets[(p - base) / sizeof(event_sets[0])];
        return es->live ? es : NULL;
}

static unsigned long long now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (unsigned long long)ts.tv_sec * 1000ull + (unsigned long long)ts.tv_nsec / 1000000ull;
}

/* With the lock held: switch to the later scenario when its time has come. A later file
 * that does not load leaves the first in place, with a message, once. */
static void maybe_later(void)
{
        const char *spec = later_done ? NULL : later_spec;
        if (!spec || !*spec)
                return;
        const char *colon = strrchr(spec, ':');
        if (colon && strncmp(colon + 1, "init=", 5) == 0) {
                if (inits_since_load < strtoul(colon + 6, NULL, 10))
                        return;
        } else {
                unsigned long long ms = colon ? strtoull(colon + 1, NULL, 10) : 0;
                if (now_ms() - loaded_at_ms < ms)
                        return;
        }
        later_done = true;
        char path[4096];
        snprintf(path, sizeof(path), "%.*s", colon ? (int)(colon - spec) : (int)strlen(spec), spec);
        struct fake_scenario *n = fake_scenario_load(path, NULL);
        if (!n)
                return;
        if (retired)
                fake_scenario_free(retired);
        retired = sc;
        sc = n;
}

static void sleep_ms(unsigned int ms)
{
        struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
                ;
}

/* An injected hang: the call never returns, as a wedged GPU makes NVML do. */
static void hang_forever(void)
{
        for (;;)
                pause();
}

/* With $FAKE_NVML_CALL_LOG set, every call that reaches the rules appends "FUNCTION GPU"
 * (GPU -1: a call that names none) to that file: a test counts what a command asked.
 * Called with the lock held. */
static void log_call(enum fn_id fn, int gpu)
{
        static int fd = -2; /* -2: not opened yet, -1: no log */
        if (fd == -2) {
                const char *path = getenv("FAKE_NVML_CALL_LOG");
                fd = path && *path ? open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : -1;
        }
        if (fd < 0)
                return;
        char line[160];
        int n = snprintf(line, sizeof(line), "%s %d\n", fn_names[fn], gpu);
        if (n > 0 && (size_t)n < sizeof(line) && write(fd, line, (size_t)n) < 0)
                fd = -1;
}

/* Counts one more call matching a fault or hang rule; true when the rule strikes it. */
static bool rule_hits(struct fake_rule *r)
{
        r->calls++;
        return r->when == WHEN_ALWAYS || (r->when == WHEN_CALL && r->calls == r->n) ||
               (r->when == WHEN_AFTER && r->calls > r->n);
}

/* The fault and hang rules that name fn, applied to a field that stands for one call of
 * fn (nvmlDeviceGetFieldValues' health fields): the field answers the injected error in
 * its own nvmlReturn, and a hang hangs the field call, as a wedged driver would. The call
 * counts for call=N/after=N as one call of fn. Neither logged nor delayed: the call
 * made is nvmlDeviceGetFieldValues, which instrument() already logged and delayed. Called
 * with the lock held; a hang never returns. */
static nvmlReturn_t rules_of(enum fn_id fn, int gpu)
{
        bool hang = false, fault = false;
        nvmlReturn_t err = NVML_SUCCESS;
        for (unsigned int i = 0; i < sc->nrules; i++) {
                struct fake_rule *r = &sc->rules[i];
                if (r->fn != (int)fn || (r->gpu >= 0 && r->gpu != gpu) || r->action == ACT_LATENCY)
                        continue;
                if (!rule_hits(r))
                        continue;
                if (r->action == ACT_HANG)
                        hang = true;
                else if (!fault)
                        fault = true, err = r->err;
        }
        if (hang) {
                pthread_mutex_unlock(&lock);
                hang_forever();
        }
        return err;
}

/* Applies the scenario's rules to one call. Called and returns with the lock held;
 * drops it while sleeping or hanging. Returns the injected error or NVML_SUCCESS, or
 * UNINITIALIZED if the library was shut down or reloaded meanwhile. */
static nvmlReturn_t instrument(enum fn_id fn, int gpu)
{
        unsigned int ms = 0, any_ms = 0;
        bool ms_set = false, hang = false, fault = false;
        nvmlReturn_t err = NVML_SUCCESS;

        maybe_later();
        log_call(fn, gpu);
        for (unsigned int i = 0; i < sc->nrules; i++) {
                struct fake_rule *r = &sc->rules[i];
                if ((r->fn >= 0 && r->fn != (int)fn) || (r->gpu >= 0 && r->gpu != gpu))
                        continue;
                if (r->action == ACT_LATENCY) {
                        /* the last matching line wins; a named function beats '*' */
                        if (r->fn >= 0)
                                ms = r->ms, ms_set = true;
                        else
                                any_ms = r->ms;
                        continue;
                }
                if (!rule_hits(r))
                        continue;
                if (r->action == ACT_HANG)
                        hang = true;
                else if (!fault)
                        fault = true, err = r->err;
        }
        if (!ms_set)
                ms = any_ms;
        if (ms || hang) {
                unsigned long long gen = generation;
                pthread_mutex_unlock(&lock);
                if (ms)
                        sleep_ms(ms);
                if (hang)
                        hang_forever();
                pthread_mutex_lock(&lock);
                if (gen != generation)
                        return NVML_ERROR_UNINITIALIZED;
        }
        return err;
}

static nvmlReturn_t leave(nvmlReturn_t r)
{
        pthread_mutex_unlock(&lock);
        return r;
}

/* Entry of a call that names no device: returns NVML_SUCCESS with the lock held, or an
 * error with it released. */
static nvmlReturn_t enter_sys(enum fn_id fn, int gpu)
{
        pthread_mutex_lock(&lock);
        if (!init_count)
                return leave(NVML_ERROR_UNINITIALIZED);
        nvmlReturn_t r = instrument(fn, gpu);
        return r == NVML_SUCCESS ? r : leave(r);
}

static bool lost_level(unsigned int g, unsigned long long level)
{
        const struct fake_dev *d = &sc->devs[g][0];
        return d->set[K_LOST] && d->u[K_LOST] >= level;
}

static bool dev_valid(unsigned int g, unsigned int m)
{
        return g < sc->ngpus && sc->devs[g][m].defined;
}

/* Entry of a per-device call: checks the handle, applies the rules and the lost state.
 * On NVML_SUCCESS the lock is held and *ret_d, *ret_g, *ret_m are the device. */
static nvmlReturn_t enter_dev_ex(enum fn_id fn, nvmlDevice_t h, bool lost_ok, struct fake_dev **ret_d,
                                 unsigned int *ret_g, unsigned int *ret_m)
{
        unsigned int g, m;
        pthread_mutex_lock(&lock);
        if (!init_count)
                return leave(NVML_ERROR_UNINITIALIZED);
        if (!slot_of(h, &g, &m) || !dev_valid(g, m))
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        nvmlReturn_t r = instrument(fn, (int)g);
        if (r != NVML_SUCCESS)
                return leave(r);
        if (!dev_valid(g, m))
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!lost_ok && lost_level(g, 1))
                return leave(NVML_ERROR_GPU_IS_LOST);
        *ret_d = &sc->devs[g][m];
        if (ret_g)
                *ret_g = g;
        if (ret_m)
                *ret_m = m;
        return NVML_SUCCESS;
}

static nvmlReturn_t enter_dev(enum fn_id fn, nvmlDevice_t h, struct fake_dev **ret_d)
{
        return enter_dev_ex(fn, h, false, ret_d, NULL, NULL);
}

#define ENTER_DEV(fn, h, d)                                     \
        struct fake_dev *d;                                     \
        do {                                                    \
                nvmlReturn_t r_ = enter_dev(FN_##fn, (h), &d);  \
                if (r_ != NVML_SUCCESS)                         \
                        return r_;                              \
        } while (0)

#define ENTER_SYS(fn)                                           \
        do {                                                    \
                nvmlReturn_t r_ = enter_sys(FN_##fn, -1);       \
                if (r_ != NVML_SUCCESS)                         \
                        return r_;                              \
        } while (0)

static nvmlReturn_t copy_str(const char *v, char *buf, unsigned int len)
{
        if (!buf)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (!v)
                return NVML_ERROR_NOT_SUPPORTED;
        size_t n = strlen(v);
        if (len < n + 1)
                return NVML_ERROR_INSUFFICIENT_SIZE;
        memcpy(buf, v, n + 1);
        return NVML_SUCCESS;
}

static nvmlReturn_t get_u32(const struct fake_dev *d, enum fake_key k, unsigned int *out)
{
        if (!out)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (!d->set[k])
                return NVML_ERROR_NOT_SUPPORTED;
        *out = (unsigned int)d->u[k];
        return NVML_SUCCESS;
}

static nvmlReturn_t get_u64(const struct fake_dev *d, enum fake_key k, unsigned long long *out)
{
        if (!out)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (!d->set[k])
                return NVML_ERROR_NOT_SUPPORTED;
        *out = d->u[k];
        return NVML_SUCCESS;
}

/* A getter of one key into an integer-sized output (enums included). */
#define GETTER(fn, type, key)                                                   \
        nvmlReturn_t fn(nvmlDevice_t device, type *out)                         \
        {                                                                       \
                ENTER_DEV(fn, device, d);                                       \
                unsigned int v;                                                 \
                nvmlReturn_t r = get_u32(d, key, out ? &v : NULL);              \
                if (r == NVML_SUCCESS)                                          \
                        *out = (type)v;                                         \
                return leave(r);                                                \
        }

#define STRING_GETTER(fn, key)                                                          \
        nvmlReturn_t fn(nvmlDevice_t device, char *buf, unsigned int length)            \
        {                                                                               \
                ENTER_DEV(fn, device, d);                                               \
                return leave(copy_str(d->s[key], buf, length));                         \
        }

/* --- init, shutdown, errors ---------------------------------------------------------- */

/* Whether a command loaded NVML at all (gpuvet check --only cpu must not): each load
 * appends a line to $FAKE_NVML_LOAD_LOG. */
__attribute__((constructor)) static void fake_load(void)
{
        const char *path = getenv("FAKE_NVML_LOAD_LOG");
        if (!path || !*path)
                return;
        FILE *f = fopen(path, "a");
        if (f) {
                fprintf(f, "loaded by pid %d\n", (int)getpid());
                fclose(f);
        }
}

/* The scenario outlives nvmlShutdown (clients keep handles and may call again, getting
 * UNINITIALIZED), so it is freed when the library is unloaded or the process exits: then
 * LeakSanitizer in the caller sees the fake's memory returned. A thread still hung in the
 * fake holds no lock (hangs release it), but may read the scenario: the caller then leaves
 * with _exit, which runs no destructor. */
__attribute__((destructor)) static void fake_unload(void)
{
        if (pthread_mutex_trylock(&lock) != 0)
                return; /* a thread is inside the fake right now: leave everything as it is */
        sc = fake_scenario_free(sc);
        retired = fake_scenario_free(retired);
        pthread_mutex_unlock(&lock);
}

static nvmlReturn_t do_init(enum fn_id fn)
{
        pthread_mutex_lock(&lock);
        if (init_count == 0) {
                const char *path = getenv("FAKE_NVML_SCENARIO");
                if (!path || !*path) {
                        fprintf(stderr, "fake-nvml: FAKE_NVML_SCENARIO is not set (it names the scenario file)\n");
                        return leave(NVML_ERROR_UNKNOWN);
                }
                struct fake_scenario *n = fake_scenario_load(path, getenv("FAKE_NVML_STATE"));
                if (!n)
                        return leave(NVML_ERROR_UNKNOWN);
                fake_scenario_free(sc);
                sc = n;
                generation++;
                loaded_at_ms = now_ms();
                inits_since_load = 0;
                later_done = false;
                const char *later = getenv("FAKE_NVML_SCENARIO_LATER");
                snprintf(later_spec, sizeof(later_spec), "%s", later ? later : "");
                memset(event_sets, 0, sizeof(event_sets));
                if (sc->init_error_set)
                        return leave(sc->init_error);
        }
        unsigned long long gen = generation;
        inits_since_load++;
        nvmlReturn_t r = instrument(fn, -1);
        if (r == NVML_SUCCESS && gen == generation)
                init_count++;
        return leave(r);
}

nvmlReturn_t nvmlInit_v2(void)
{
        return do_init(FN_nvmlInit_v2);
}

nvmlReturn_t nvmlInit(void)
{
        return do_init(FN_nvmlInit);
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
        (void)flags; /* NO_GPUS and NO_ATTACH change nothing for a fake */
        return do_init(FN_nvmlInitWithFlags);
}

/* GPM sample buffers allocated and not freed (nvmlGpmSampleAlloc, below). */
static unsigned int gpm_unfreed;

nvmlReturn_t nvmlShutdown(void)
{
        ENTER_SYS(nvmlShutdown);
        if (--init_count == 0) {
                generation++;
                memset(event_sets, 0, sizeof(event_sets));
                /* NVML keeps them; a client that leaves them behind leaks them, so say so. */
                if (gpm_unfreed)
                        fprintf(stderr, "fake-nvml: nvmlShutdown with %u GPM samples not freed\n", gpm_unfreed);
        }
        return leave(NVML_SUCCESS);
}

const char *nvmlErrorString(nvmlReturn_t result)
{
        switch (result) {
        case NVML_SUCCESS: return "Success";
        case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
        case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
        case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
        case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
        case NVML_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
        case NVML_ERROR_NOT_FOUND: return "Not Found";
        case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
        case NVML_ERROR_INSUFFICIENT_POWER: return "Insufficient External Power";
        case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
        case NVML_ERROR_TIMEOUT: return "Timeout";
        case NVML_ERROR_IRQ_ISSUE: return "Interrupt Request Issue";
        case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
        case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
        case NVML_ERROR_CORRUPTED_INFOROM: return "Corrupted infoROM";
        case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
        case NVML_ERROR_RESET_REQUIRED: return "GPU requires restart";
        case NVML_ERROR_OPERATING_SYSTEM: return "The operating system has blocked the request.";
        case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "RM has detected an NVML/RM version mismatch.";
        case NVML_ERROR_IN_USE: return "In use by another client";
        case NVML_ERROR_MEMORY: return "Insufficient Memory";
        case NVML_ERROR_NO_DATA: return "No data";
        case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED:
                return "The requested vgpu operation is not available on target device, becasue ECC is enabled";
        case NVML_ERROR_INSUFFICIENT_RESOURCES: return "Ran out of critical resources, other than memory";
        case NVML_ERROR_FREQ_NOT_SUPPORTED: return "Ran out of critical resources, other than memory";
        case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
        case NVML_ERROR_DEPRECATED: return "Requested functionality has been deprecated";
        case NVML_ERROR_NOT_READY: return "System is not ready for the request";
        case NVML_ERROR_GPU_NOT_FOUND: return "No GPUs were found";
        case NVML_ERROR_INVALID_STATE: return "Invalid state";
        case NVML_ERROR_RESET_TYPE_NOT_SUPPORTED: return "Reset type not supported";
        case NVML_ERROR_UNKNOWN: return "Unknown Error";
        }
        return "Unknown Error";
}

/* --- system ------------------------------------------------------------------------- */

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
        ENTER_SYS(nvmlSystemGetDriverVersion);
        return leave(copy_str(sc->driver_version, version, length));
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
        ENTER_SYS(nvmlSystemGetNVMLVersion);
        return leave(copy_str(sc->nvml_version, version, length));
}

static nvmlReturn_t cuda_version(enum fn_id fn, int *v)
{
        nvmlReturn_t r = enter_sys(fn, -1);
        if (r != NVML_SUCCESS)
                return r;
        if (!v)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!sc->cuda_set)
                return leave(NVML_ERROR_NOT_SUPPORTED);
        *v = sc->cuda_driver_version;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
        return cuda_version(FN_nvmlSystemGetCudaDriverVersion_v2, cudaDriverVersion);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
        return cuda_version(FN_nvmlSystemGetCudaDriverVersion, cudaDriverVersion);
}

nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int length)
{
        ENTER_SYS(nvmlSystemGetProcessName);
        if (!name || length == 0)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        for (unsigned int g = 0; g < sc->ngpus; g++)
                for (unsigned int m = 0; m < 1 + FAKE_MAX_MIG; m++) {
                        const struct fake_dev *d = &sc->devs[g][m];
                        if (!d->defined)
                                continue;
                        for (unsigned int i = 0; i < d->nprocs; i++)
                                if (d->procs[i].pid == pid) {
                                        /* NVML truncates to the buffer */
                                        snprintf(name, length, "%s", d->procs[i].name);
                                        return leave(NVML_SUCCESS);
                                }
                }
        return leave(NVML_ERROR_NOT_FOUND);
}

static nvmlReturn_t device_count(enum fn_id fn, unsigned int *count)
{
        nvmlReturn_t r = enter_sys(fn, -1);
        if (r != NVML_SUCCESS)
                return r;
        if (!count)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        *count = sc->ngpus;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
        return device_count(FN_nvmlDeviceGetCount_v2, deviceCount);
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount)
{
        return device_count(FN_nvmlDeviceGetCount, deviceCount);
}

/* --- handles ------------------------------------------------------------------------- */

/* Hands out GPU G's handle (-1: not found) after the rules for that GPU. */
static nvmlReturn_t hand_out(enum fn_id fn, int g, nvmlDevice_t *device, nvmlReturn_t not_found)
{
        nvmlReturn_t r = instrument(fn, g);
        if (r != NVML_SUCCESS)
                return leave(r);
        if (!device)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (g < 0 || (unsigned int)g >= sc->ngpus)
                return leave(not_found);
        /* lost = 2: the GPU fell off the bus before this process started, so even its
         * handle cannot be had (what nvidia-smi shows as "Unable to determine the device
         * handle for GPU ...: GPU is lost") */
        if (lost_level((unsigned int)g, 2))
                return leave(NVML_ERROR_GPU_IS_LOST);
        *device = handle_of((unsigned int)g, 0);
        return leave(NVML_SUCCESS);
}

static nvmlReturn_t by_index(enum fn_id fn, unsigned int index, nvmlDevice_t *device)
{
        pthread_mutex_lock(&lock);
        if (!init_count)
                return leave(NVML_ERROR_UNINITIALIZED);
        return hand_out(fn, index < sc->ngpus ? (int)index : -1, device, NVML_ERROR_INVALID_ARGUMENT);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
        return by_index(FN_nvmlDeviceGetHandleByIndex_v2, index, device);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
        return by_index(FN_nvmlDeviceGetHandleByIndex, index, device);
}

static nvmlReturn_t by_bus_id(enum fn_id fn, const char *bus_id, nvmlDevice_t *device)
{
        unsigned int a[4], b[4];
        pthread_mutex_lock(&lock);
        if (!init_count)
                return leave(NVML_ERROR_UNINITIALIZED);
        if (!bus_id || strnlen(bus_id, 64) >= 64 || !fake_busid_parse(bus_id, &a[0], &a[1], &a[2], &a[3])) {
                nvmlReturn_t r = instrument(fn, -1);
                return leave(r != NVML_SUCCESS ? r : NVML_ERROR_INVALID_ARGUMENT);
        }
        int found = -1;
        for (unsigned int g = 0; g < sc->ngpus && found < 0; g++) {
                const char *s = sc->devs[g][0].s[K_PCI_BUS_ID];
                if (s && fake_busid_parse(s, &b[0], &b[1], &b[2], &b[3]) && memcmp(a, b, sizeof(a)) == 0)
                        found = (int)g;
        }
        return hand_out(fn, found, device, NVML_ERROR_NOT_FOUND);
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
        return by_bus_id(FN_nvmlDeviceGetHandleByPciBusId_v2, pciBusId, device);
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *pciBusId, nvmlDevice_t *device)
{
        return by_bus_id(FN_nvmlDeviceGetHandleByPciBusId, pciBusId, device);
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
        pthread_mutex_lock(&lock);
        if (!init_count)
                return leave(NVML_ERROR_UNINITIALIZED);
        int found = -1;
        for (unsigned int g = 0; uuid && g < sc->ngpus && found < 0; g++) {
                const char *s = sc->devs[g][0].s[K_UUID];
                if (s && strncmp(s, uuid, FAKE_STR_MAX) == 0)
                        found = (int)g;
        }
        if (!uuid) {
                nvmlReturn_t r = instrument(FN_nvmlDeviceGetHandleByUUID, -1);
                return leave(r != NVML_SUCCESS ? r : NVML_ERROR_INVALID_ARGUMENT);
        }
        return hand_out(FN_nvmlDeviceGetHandleByUUID, found, device, NVML_ERROR_NOT_FOUND);
}

/* --- identity ------------------------------------------------------------------------ */

STRING_GETTER(nvmlDeviceGetName, K_NAME)
STRING_GETTER(nvmlDeviceGetUUID, K_UUID)
STRING_GETTER(nvmlDeviceGetSerial, K_SERIAL)
STRING_GETTER(nvmlDeviceGetVbiosVersion, K_VBIOS)
STRING_GETTER(nvmlDeviceGetInforomImageVersion, K_INFOROM_IMAGE)

static nvmlReturn_t fill_pci(const char *bus_id, unsigned int device_id, unsigned int subsystem_id,
                             nvmlPciInfo_t *pci)
{
        unsigned int dom, bus, dev, fn;
        if (!pci)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (!bus_id || !fake_busid_parse(bus_id, &dom, &bus, &dev, &fn))
                return NVML_ERROR_NOT_SUPPORTED;
        memset(pci, 0, sizeof(*pci));
        /* as NVML: busIdLegacy has a 4-digit domain, busId an 8-digit one */
        snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.%X", dom & 0xffffu, bus, dev, fn);
        snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.%X", dom, bus, dev, fn);
        pci->domain = dom;
        pci->bus = bus;
        pci->device = dev;
        pci->pciDeviceId = device_id;
        pci->pciSubSystemId = subsystem_id;
        return NVML_SUCCESS;
}

static nvmlReturn_t pci_info(enum fn_id fn, nvmlDevice_t device, nvmlPciInfo_t *pci)
{
        struct fake_dev *d;
        nvmlReturn_t r = enter_dev(fn, device, &d);
        if (r != NVML_SUCCESS)
                return r;
        return leave(fill_pci(d->s[K_PCI_BUS_ID], (unsigned int)d->u[K_PCI_DEVICE_ID],
                              (unsigned int)d->u[K_PCI_SUBSYSTEM_ID], pci));
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
        return pci_info(FN_nvmlDeviceGetPciInfo_v3, device, pci);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
        return pci_info(FN_nvmlDeviceGetPciInfo_v2, device, pci);
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
        struct fake_dev *d;
        unsigned int g, m;
        nvmlReturn_t r = enter_dev_ex(FN_nvmlDeviceGetIndex, device, false, &d, &g, &m);
        if (r != NVML_SUCCESS)
                return r;
        if (!index)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (m != 0)
                return leave(NVML_ERROR_NOT_SUPPORTED);
        *index = g;
        return leave(NVML_SUCCESS);
}

GETTER(nvmlDeviceGetMinorNumber, unsigned int, K_MINOR)
GETTER(nvmlDeviceGetBrand, nvmlBrandType_t, K_BRAND)
GETTER(nvmlDeviceGetArchitecture, nvmlDeviceArchitecture_t, K_ARCH)

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
        ENTER_DEV(nvmlDeviceGetCudaComputeCapability, device, d);
        if (!major || !minor)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->set[K_CC])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        *major = (int)(d->u[K_CC] >> 16);
        *minor = (int)(d->u[K_CC] & 0xffff);
        return leave(NVML_SUCCESS);
}

/* --- memory -------------------------------------------------------------------------- */

/* total, reserved, used, free with the missing one of used/free derived from the others
 * (NVML: total = reserved + used + free); false if the scenario does not give enough. */
static bool memory_of(const struct fake_dev *d, unsigned long long *total, unsigned long long *reserved,
                      unsigned long long *used, unsigned long long *free_b)
{
        if (!d->set[K_MEM_TOTAL] || (!d->set[K_MEM_USED] && !d->set[K_MEM_FREE]))
                return false;
        unsigned long long t = d->u[K_MEM_TOTAL];
        unsigned long long rs = d->set[K_MEM_RESERVED] ? d->u[K_MEM_RESERVED] : 0;
        unsigned long long u, f;
        if (d->set[K_MEM_USED] && d->set[K_MEM_FREE]) {
                u = d->u[K_MEM_USED], f = d->u[K_MEM_FREE];
        } else if (d->set[K_MEM_USED]) {
                u = d->u[K_MEM_USED];
                f = t > u + rs ? t - u - rs : 0;
        } else {
                f = d->u[K_MEM_FREE];
                u = t > f + rs ? t - f - rs : 0;
        }
        *total = t, *reserved = rs, *used = u, *free_b = f;
        return true;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
        ENTER_DEV(nvmlDeviceGetMemoryInfo, device, d);
        unsigned long long t, rs, u, f;
        if (!memory)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!memory_of(d, &t, &rs, &u, &f))
                return leave(NVML_ERROR_NOT_SUPPORTED);
        /* v1 counts the driver's reservation as used */
        memory->total = t;
        memory->free = f;
        memory->used = t > f ? t - f : 0;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
        ENTER_DEV(nvmlDeviceGetMemoryInfo_v2, device, d);
        unsigned long long t, rs, u, f;
        if (!memory)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (memory->version != nvmlMemory_v2)
                return leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        if (!memory_of(d, &t, &rs, &u, &f))
                return leave(NVML_ERROR_NOT_SUPPORTED);
        memory->total = t;
        memory->reserved = rs;
        memory->used = u;
        memory->free = f;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t *bar1Memory)
{
        ENTER_DEV(nvmlDeviceGetBAR1MemoryInfo, device, d);
        if (!bar1Memory)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->set[K_BAR1_TOTAL] || (!d->set[K_BAR1_USED] && !d->set[K_BAR1_FREE]))
                return leave(NVML_ERROR_NOT_SUPPORTED);
        unsigned long long t = d->u[K_BAR1_TOTAL];
        unsigned long long u = d->set[K_BAR1_USED] ? d->u[K_BAR1_USED] : (t > d->u[K_BAR1_FREE] ? t - d->u[K_BAR1_FREE] : 0);
        unsigned long long f = d->set[K_BAR1_FREE] ? d->u[K_BAR1_FREE] : (t > u ? t - u : 0);
        bar1Memory->bar1Total = t;
        bar1Memory->bar1Used = u;
        bar1Memory->bar1Free = f;
        return leave(NVML_SUCCESS);
}

/* --- thermal, power, clocks ----------------------------------------------------------- */

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType, unsigned int *temp)
{
        ENTER_DEV(nvmlDeviceGetTemperature, device, d);
        if (sensorType != NVML_TEMPERATURE_GPU)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        return leave(get_u32(d, K_TEMP, temp));
}

nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t *temperature)
{
        ENTER_DEV(nvmlDeviceGetTemperatureV, device, d);
        if (!temperature)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (temperature->version != nvmlTemperature_v1)
                return leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        if (temperature->sensorType != NVML_TEMPERATURE_GPU)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->set[K_TEMP])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        temperature->temperature = (int)d->u[K_TEMP];
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device, nvmlTemperatureThresholds_t thresholdType,
                                               unsigned int *temp)
{
        static const enum fake_key k[] = {K_TEMP_SHUTDOWN, K_TEMP_SLOWDOWN, K_TEMP_MEM_MAX, K_TEMP_GPU_MAX};
        ENTER_DEV(nvmlDeviceGetTemperatureThreshold, device, d);
        unsigned int t = (unsigned int)thresholdType;
        /* NVML knows thresholds 0..7 (acoustic ones and more past GPU_MAX); the fake models 0..3 */
        if (t > 7)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (t > 3)
                return leave(temp ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_INVALID_ARGUMENT);
        return leave(get_u32(d, k[t], temp));
}

GETTER(nvmlDeviceGetPowerUsage, unsigned int, K_POWER_USAGE)

GETTER(nvmlDeviceGetPowerManagementLimit, unsigned int, K_POWER_LIMIT)
GETTER(nvmlDeviceGetPowerManagementDefaultLimit, unsigned int, K_POWER_DEFAULT)
GETTER(nvmlDeviceGetEnforcedPowerLimit, unsigned int, K_POWER_ENFORCED)

nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device, unsigned int *minLimit,
                                                          unsigned int *maxLimit)
{
        ENTER_DEV(nvmlDeviceGetPowerManagementLimitConstraints, device, d);
        if (!minLimit || !maxLimit)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->set[K_POWER_MIN] || !d->set[K_POWER_MAX])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        *minLimit = (unsigned int)d->u[K_POWER_MIN];
        *maxLimit = (unsigned int)d->u[K_POWER_MAX];
        return leave(NVML_SUCCESS);
}

static nvmlReturn_t clock_of(enum fn_id fn, enum fake_key base, nvmlDevice_t device, nvmlClockType_t type,
                             unsigned int *clock)
{
        struct fake_dev *d;
        nvmlReturn_t r = enter_dev(fn, device, &d);
        if (r != NVML_SUCCESS)
                return r;
        if ((unsigned int)type > NVML_CLOCK_VIDEO)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        return leave(get_u32(d, (enum fake_key)(base + (int)type), clock));
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
        return clock_of(FN_nvmlDeviceGetClockInfo, K_CLOCK_GRAPHICS, device, type, clock);
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
        return clock_of(FN_nvmlDeviceGetMaxClockInfo, K_MAX_CLOCK_GRAPHICS, device, type, clock);
}

nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t device, nvmlClockType_t clockType, unsigned int *clockMHz)
{
        return clock_of(FN_nvmlDeviceGetApplicationsClock, K_APP_CLOCK_GRAPHICS, device, clockType, clockMHz);
}

nvmlReturn_t nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t device, nvmlClockType_t clockType,
                                                   unsigned int *clockMHz)
{
        return clock_of(FN_nvmlDeviceGetDefaultApplicationsClock, K_DEF_CLOCK_GRAPHICS, device, clockType, clockMHz);
}

/* A scenario clock list ("1980 1755 345") into out; the count. */
static unsigned int clock_list(const char *text, unsigned int *out, unsigned int max)
{
        unsigned int n = 0;
        for (const char *p = text; p && *p && n < max;) {
                char *end;
                unsigned long v = strtoul(p, &end, 10);
                if (end == p)
                        break;
                out[n++] = (unsigned int)v;
                p = end;
        }
        return n;
}

static nvmlReturn_t give_clocks(const unsigned int *list, unsigned int n, unsigned int *count, unsigned int *clocksMHz)
{
        if (*count < n) {
                *count = n;
                return NVML_ERROR_INSUFFICIENT_SIZE;
        }
        if (n && !clocksMHz)
                return NVML_ERROR_INVALID_ARGUMENT;
        memcpy(clocksMHz, list, n * sizeof(*list));
        *count = n;
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t device, unsigned int *count, unsigned int *clocksMHz)
{
        ENTER_DEV(nvmlDeviceGetSupportedMemoryClocks, device, d);
        if (!count)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->s[K_SUPPORTED_MEM_CLOCKS])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        unsigned int list[64];
        return leave(give_clocks(list, clock_list(d->s[K_SUPPORTED_MEM_CLOCKS], list, 64), count, clocksMHz));
}

/* The scenario's graphics clocks hold for each of its memory clocks. */
nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t device, unsigned int memoryClockMHz, unsigned int *count,
                                                  unsigned int *clocksMHz)
{
        ENTER_DEV(nvmlDeviceGetSupportedGraphicsClocks, device, d);
        if (!count)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->s[K_SUPPORTED_MEM_CLOCKS] || !d->s[K_SUPPORTED_GR_CLOCKS])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        unsigned int mem[64], list[64], nmem = clock_list(d->s[K_SUPPORTED_MEM_CLOCKS], mem, 64);
        bool known = false;
        for (unsigned int i = 0; i < nmem; i++)
                known |= mem[i] == memoryClockMHz;
        if (!known)
                return leave(NVML_ERROR_NOT_FOUND);
        return leave(give_clocks(list, clock_list(d->s[K_SUPPORTED_GR_CLOCKS], list, 64), count, clocksMHz));
}

static nvmlReturn_t u64_of(enum fn_id fn, enum fake_key k, nvmlDevice_t device, unsigned long long *out)
{
        struct fake_dev *d;
        nvmlReturn_t r = enter_dev(fn, device, &d);
        if (r != NVML_SUCCESS)
                return r;
        return leave(get_u64(d, k, out));
}

/* "total_energy_consumption = N mJ": what the board used since the driver loaded; unset:
 * NOT_SUPPORTED, as before Volta. */
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy)
{
        return u64_of(FN_nvmlDeviceGetTotalEnergyConsumption, K_ENERGY, device, energy);
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *clocksEventReasons)
{
        return u64_of(FN_nvmlDeviceGetCurrentClocksEventReasons, K_EVENT_REASONS, device, clocksEventReasons);
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long *clocksThrottleReasons)
{
        return u64_of(FN_nvmlDeviceGetCurrentClocksThrottleReasons, K_EVENT_REASONS, device, clocksThrottleReasons);
}

/* The violation (perf policy) counters, ns: each policy from its scenario key, which its
 * field gives too (violation_field()); TOTAL_APP_CLOCKS is not modelled (NOT_SUPPORTED).
 * referenceTime is the time of the call, in us, as NVML gives it. */
static const struct {
        nvmlPerfPolicyType_t policy;
        enum fake_key key;
} violation_keys[] = {
        {NVML_PERF_POLICY_POWER, K_VIOL_POWER},
        {NVML_PERF_POLICY_THERMAL, K_VIOL_THERMAL},
        {NVML_PERF_POLICY_SYNC_BOOST, K_VIOL_SYNC_BOOST},
        {NVML_PERF_POLICY_BOARD_LIMIT, K_VIOL_BOARD_LIMIT},
        {NVML_PERF_POLICY_LOW_UTILIZATION, K_VIOL_LOW_UTIL},
        {NVML_PERF_POLICY_RELIABILITY, K_VIOL_RELIABILITY},
        {NVML_PERF_POLICY_TOTAL_BASE_CLOCKS, K_VIOL_TOTAL_BASE},
};

nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t device, nvmlPerfPolicyType_t perfPolicyType,
                                          nvmlViolationTime_t *violTime)
{
        ENTER_DEV(nvmlDeviceGetViolationStatus, device, d);
        if (!violTime || (unsigned int)perfPolicyType >= NVML_PERF_POLICY_COUNT)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        for (size_t k = 0; k < sizeof(violation_keys) / sizeof(violation_keys[0]); k++) {
                if (violation_keys[k].policy != perfPolicyType)
                        continue;
                if (!d->set[violation_keys[k].key])
                        break;
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                violTime->referenceTime = (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000;
                violTime->violationTime = d->u[violation_keys[k].key];
                return leave(NVML_SUCCESS);
        }
        return leave(NVML_ERROR_NOT_SUPPORTED);
}

/* The violation fields (ns): the policy fields and the clock event reason counters (SW
 * thermal is the THERMAL policy under CUDA 13's number; HW thermal and HW power brake have no
 * call). Those standing for a policy carry the fault and hang rules naming
 * nvmlDeviceGetViolationStatus, as the health fields do for theirs (*answered, *answer:
 * once per nvmlDeviceGetFieldValues call). NOT_SUPPORTED where the key is unset, and all
 * of them with "violation_fields = false" (a driver without them). False when v is not one. */
static bool violation_field(const struct fake_dev *d, int gpu, nvmlFieldValue_t *v, bool *answered,
                            nvmlReturn_t *answer)
{
        static const struct {
                unsigned int field;
                enum fake_key key;
                bool policy; /* stands for nvmlDeviceGetViolationStatus */
        } fields[] = {
                {NVML_FI_DEV_PERF_POLICY_POWER, K_VIOL_POWER, true},
                {NVML_FI_DEV_PERF_POLICY_THERMAL, K_VIOL_THERMAL, true},
                {NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN, K_VIOL_THERMAL, true},
                {NVML_FI_DEV_PERF_POLICY_SYNC_BOOST, K_VIOL_SYNC_BOOST, true},
                {NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT, K_VIOL_BOARD_LIMIT, true},
                {NVML_FI_DEV_PERF_POLICY_LOW_UTILIZATION, K_VIOL_LOW_UTIL, true},
                {NVML_FI_DEV_PERF_POLICY_RELIABILITY, K_VIOL_RELIABILITY, true},
                {NVML_FI_DEV_PERF_POLICY_TOTAL_BASE_CLOCKS, K_VIOL_TOTAL_BASE, true},
                {NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN, K_VIOL_HW_THERMAL, false},
                {NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN, K_VIOL_HW_POWER_BRAKE, false},
        };
        for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
                if (v->fieldId != fields[k].field)
                        continue;
                if ((d->set[K_VIOL_FIELDS] && !d->u[K_VIOL_FIELDS]) || !d->set[fields[k].key])
                        return true; /* NOT_SUPPORTED, as set by the caller */
                if (fields[k].policy) {
                        if (!*answered) {
                                *answer = rules_of(FN_nvmlDeviceGetViolationStatus, gpu);
                                *answered = true;
                        }
                        v->nvmlReturn = *answer;
                        if (v->nvmlReturn != NVML_SUCCESS)
                                return true;
                }
                v->valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
                v->value.ullVal = d->u[fields[k].key];
                v->nvmlReturn = NVML_SUCCESS;
                return true;
        }
        return false;
}

nvmlReturn_t nvmlDeviceGetSupportedClocksEventReasons(nvmlDevice_t device, unsigned long long *supported)
{
        return u64_of(FN_nvmlDeviceGetSupportedClocksEventReasons, K_EVENT_REASONS_SUPPORTED, device, supported);
}

nvmlReturn_t nvmlDeviceGetSupportedClocksThrottleReasons(nvmlDevice_t device, unsigned long long *supported)
{
        return u64_of(FN_nvmlDeviceGetSupportedClocksThrottleReasons, K_EVENT_REASONS_SUPPORTED, device, supported);
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
        ENTER_DEV(nvmlDeviceGetUtilizationRates, device, d);
        if (!utilization)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->set[K_UTIL_GPU] || !d->set[K_UTIL_MEM])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        utilization->gpu = (unsigned int)d->u[K_UTIL_GPU];
        utilization->memory = (unsigned int)d->u[K_UTIL_MEM];
        return leave(NVML_SUCCESS);
}

static nvmlReturn_t codec_util(enum fn_id fn, enum fake_key k, nvmlDevice_t device, unsigned int *util,
                               unsigned int *period_us)
{
        struct fake_dev *d;
        nvmlReturn_t r = enter_dev(fn, device, &d);
        if (r != NVML_SUCCESS)
                return r;
        if (!util || !period_us)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        r = get_u32(d, k, util);
        if (r == NVML_SUCCESS)
                *period_us = 0; /* the sampling period is not modeled (README) */
        return leave(r);
}

nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                             unsigned int *samplingPeriodUs)
{
        return codec_util(FN_nvmlDeviceGetEncoderUtilization, K_UTIL_ENC, device, utilization, samplingPeriodUs);
}

nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                             unsigned int *samplingPeriodUs)
{
        return codec_util(FN_nvmlDeviceGetDecoderUtilization, K_UTIL_DEC, device, utilization, samplingPeriodUs);
}

GETTER(nvmlDeviceGetPerformanceState, nvmlPstates_t, K_PSTATE)
GETTER(nvmlDeviceGetPowerState, nvmlPstates_t, K_PSTATE)
GETTER(nvmlDeviceGetFanSpeed, unsigned int, K_FAN_SPEED)

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, nvmlPcieUtilCounter_t counter, unsigned int *value)
{
        ENTER_DEV(nvmlDeviceGetPcieThroughput, device, d);
        if (!value || (counter != NVML_PCIE_UTIL_TX_BYTES && counter != NVML_PCIE_UTIL_RX_BYTES))
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        return leave(get_u32(d, counter == NVML_PCIE_UTIL_TX_BYTES ? K_PCIE_TX_KBS : K_PCIE_RX_KBS, value));
}

nvmlReturn_t nvmlDeviceGetNumFans(nvmlDevice_t device, unsigned int *numFans)
{
        ENTER_DEV(nvmlDeviceGetNumFans, device, d);
        if (!numFans)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (d->set[K_NUM_FANS])
                *numFans = (unsigned int)d->u[K_NUM_FANS];
        else if (d->set[K_FAN_SPEED])
                *numFans = 1;
        else
                return leave(NVML_ERROR_NOT_SUPPORTED);
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetFanSpeed_v2(nvmlDevice_t device, unsigned int fan, unsigned int *speed)
{
        ENTER_DEV(nvmlDeviceGetFanSpeed_v2, device, d);
        if (!speed)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->set[K_FAN_SPEED])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        unsigned int n = d->set[K_NUM_FANS] ? (unsigned int)d->u[K_NUM_FANS] : 1;
        if (fan >= n)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        *speed = (unsigned int)d->u[K_FAN_SPEED];
        return leave(NVML_SUCCESS);
}

/* --- ECC, retired pages, remapped rows ----------------------------------------------- */

static nvmlReturn_t mode_pair(const struct fake_dev *d, enum fake_key cur, enum fake_key pend, unsigned int *a,
                              unsigned int *b)
{
        if (!a || !b)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (!d->set[cur])
                return NVML_ERROR_NOT_SUPPORTED;
        *a = (unsigned int)d->u[cur];
        *b = (unsigned int)(d->set[pend] ? d->u[pend] : d->u[cur]);
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t *current, nvmlEnableState_t *pending)
{
        ENTER_DEV(nvmlDeviceGetEccMode, device, d);
        unsigned int a, b;
        nvmlReturn_t r = mode_pair(d, K_ECC_CURRENT, K_ECC_PENDING, current ? &a : NULL, pending ? &b : NULL);
        if (r == NVML_SUCCESS) {
                *current = (nvmlEnableState_t)a;
                *pending = (nvmlEnableState_t)b;
        }
        return leave(r);
}

/* "ecc_mode_default = on": the board's factory setting; unset: NOT_SUPPORTED. */
nvmlReturn_t nvmlDeviceGetDefaultEccMode(nvmlDevice_t device, nvmlEnableState_t *defaultMode)
{
        ENTER_DEV(nvmlDeviceGetDefaultEccMode, device, d);
        if (!defaultMode)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->set[K_ECC_DEFAULT])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        *defaultMode = d->u[K_ECC_DEFAULT] ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                         nvmlEccCounterType_t counterType, unsigned long long *eccCounts)
{
        ENTER_DEV(nvmlDeviceGetTotalEccErrors, device, d);
        unsigned int e = (unsigned int)errorType, c = (unsigned int)counterType;
        if (e > 1 || c > 1)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        static const enum fake_key k[2][2] = {{K_ECC_VOL_CORR, K_ECC_AGG_CORR}, {K_ECC_VOL_UNC, K_ECC_AGG_UNC}};
        return leave(get_u64(d, k[e][c], eccCounts));
}

/* Uncorrected errors by location (DRAM, SRAM) as the scenario gives them; corrected
 * errors and the other locations are not modelled (NOT_SUPPORTED). */
nvmlReturn_t nvmlDeviceGetMemoryErrorCounter(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                             nvmlEccCounterType_t counterType, nvmlMemoryLocation_t locationType,
                                             unsigned long long *count)
{
        ENTER_DEV(nvmlDeviceGetMemoryErrorCounter, device, d);
        unsigned int e = (unsigned int)errorType, c = (unsigned int)counterType, l = (unsigned int)locationType;
        if (e > 1 || c > 1 || l > 7 || !count)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (e != NVML_MEMORY_ERROR_TYPE_UNCORRECTED || (l != NVML_MEMORY_LOCATION_DRAM && l != NVML_MEMORY_LOCATION_SRAM))
                return leave(NVML_ERROR_NOT_SUPPORTED);
        static const enum fake_key k[2][2] = {{K_ECC_VOL_UNC_DRAM, K_ECC_VOL_UNC_SRAM},
                                              {K_ECC_AGG_UNC_DRAM, K_ECC_AGG_UNC_SRAM}};
        return leave(get_u64(d, k[c][l == NVML_MEMORY_LOCATION_SRAM], count));
}

/* Only the threshold flag and the SRAM totals the scenario gives (as SEC-DED errors). */
nvmlReturn_t nvmlDeviceGetSramEccErrorStatus(nvmlDevice_t device, nvmlEccSramErrorStatus_v1_t *status)
{
        ENTER_DEV(nvmlDeviceGetSramEccErrorStatus, device, d);
        if (!status)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (status->version != nvmlEccSramErrorStatus_v1)
                return leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        if (!d->set[K_SRAM_THRESHOLD])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        unsigned int version = status->version;
        memset(status, 0, sizeof(*status));
        status->version = version;
        status->volatileUncSecDed = d->u[K_ECC_VOL_UNC_SRAM];
        status->aggregateUncSecDed = d->u[K_ECC_AGG_UNC_SRAM];
        status->bThresholdExceeded = (unsigned int)d->u[K_SRAM_THRESHOLD];
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, nvmlPageRetirementCause_t cause, unsigned int *pageCount,
                                       unsigned long long *addresses)
{
        ENTER_DEV(nvmlDeviceGetRetiredPages, device, d);
        unsigned int c = (unsigned int)cause;
        if (c > 1 || !pageCount)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        enum fake_key k = c == 0 ? K_RETIRED_SBE : K_RETIRED_DBE;
        if (!d->set[k])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        unsigned int n = (unsigned int)d->u[k];
        if (*pageCount < n) {
                *pageCount = n;
                return leave(NVML_ERROR_INSUFFICIENT_SIZE);
        }
        if (n > 0 && !addresses)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        for (unsigned int i = 0; i < n; i++)
                addresses[i] = i < d->nretired_addr[c] ? d->retired_addr[c][i] : 0;
        *pageCount = n;
        return leave(NVML_SUCCESS);
}

GETTER(nvmlDeviceGetRetiredPagesPendingStatus, nvmlEnableState_t, K_RETIRED_PENDING)

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows, unsigned int *uncRows,
                                       unsigned int *isPending, unsigned int *failureOccurred)
{
        ENTER_DEV(nvmlDeviceGetRemappedRows, device, d);
        if (!corrRows || !uncRows || !isPending || !failureOccurred)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->set[K_REMAP_CORR] || !d->set[K_REMAP_UNC] || !d->set[K_REMAP_PENDING] || !d->set[K_REMAP_FAILURE])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        *corrRows = (unsigned int)d->u[K_REMAP_CORR];
        *uncRows = (unsigned int)d->u[K_REMAP_UNC];
        *isPending = (unsigned int)d->u[K_REMAP_PENDING];
        *failureOccurred = (unsigned int)d->u[K_REMAP_FAILURE];
        return leave(NVML_SUCCESS);
}

/* "repair_channel_pending = yes", "repair_tpc_pending = yes" (Blackwell); NOT_SUPPORTED
 * unless both are set. */
nvmlReturn_t nvmlDeviceGetRepairStatus(nvmlDevice_t device, nvmlRepairStatus_t *repairStatus)
{
        ENTER_DEV(nvmlDeviceGetRepairStatus, device, d);
        if (!repairStatus)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (repairStatus->version != nvmlRepairStatus_v1)
                return leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        if (!d->set[K_REPAIR_CHANNEL] || !d->set[K_REPAIR_TPC])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        repairStatus->bChannelRepairPending = (unsigned int)d->u[K_REPAIR_CHANNEL];
        repairStatus->bTpcRepairPending = (unsigned int)d->u[K_REPAIR_TPC];
        return leave(NVML_SUCCESS);
}

/* "remapper_histogram = max,high,partial,low,none" bank counts. */
nvmlReturn_t nvmlDeviceGetRowRemapperHistogram(nvmlDevice_t device, nvmlRowRemapperHistogramValues_t *values)
{
        ENTER_DEV(nvmlDeviceGetRowRemapperHistogram, device, d);
        if (!values)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->set[K_REMAP_HIST])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        unsigned int v[5];
        char tail;
        if (sscanf(d->s[K_REMAP_HIST], "%u,%u,%u,%u,%u%c", &v[0], &v[1], &v[2], &v[3], &v[4], &tail) != 5)
                return leave(NVML_ERROR_UNKNOWN);
        *values = (nvmlRowRemapperHistogramValues_t){v[0], v[1], v[2], v[3], v[4]};
        return leave(NVML_SUCCESS);
}

/* Field values: the recovery action (230); every other field answers NOT_SUPPORTED in
 * its own nvmlReturn, as a driver does for fields it lacks. */
/* The NVLink fields, from the same links the per-link calls answer for: the link count,
 * a counter's total over the links (as nvmlNvLinkErrorCounter_t indexes them), and a link's
 * state by scopeId. A board without "nvlink_count" answers NOT_SUPPORTED, as one without
 * NVLink does, and so does every one with "nvlink_fields = false". False when v is not an
 * NVLink field. */
static bool nvlink_field(const struct fake_dev *d, nvmlFieldValue_t *v)
{
        static const unsigned int totals[FAKE_NVLINK_COUNTERS] = {
                NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL,   NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL,
                NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL, NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL,
                NVML_FI_DEV_NVLINK_ECC_DATA_ERROR_COUNT_TOTAL,
        };
        unsigned int n = d->set[K_NVLINK_COUNT] ? (unsigned int)d->u[K_NVLINK_COUNT] : 0;
        bool is_nvlink = v->fieldId == NVML_FI_DEV_NVLINK_LINK_COUNT || v->fieldId == NVML_FI_DEV_NVLINK_GET_STATE;
        for (unsigned int c = 0; c < FAKE_NVLINK_COUNTERS; c++)
                is_nvlink |= v->fieldId == totals[c];
        if (!is_nvlink)
                return false;
        /* "nvlink_fields = false": a driver without them, NOT_SUPPORTED each. */
        if (d->set[K_NVLINK_FIELDS] && !d->u[K_NVLINK_FIELDS])
                return true;
        bool counters = !d->set[K_NVLINK_ERROR_COUNTERS] || d->u[K_NVLINK_ERROR_COUNTERS];
        if (v->fieldId == NVML_FI_DEV_NVLINK_LINK_COUNT) {
                if (d->set[K_NVLINK_COUNT]) {
                        v->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
                        v->value.uiVal = n;
                        v->nvmlReturn = NVML_SUCCESS;
                }
                return true;
        }
        if (v->fieldId == NVML_FI_DEV_NVLINK_GET_STATE) {
                if (v->scopeId < n && v->scopeId < NVML_NVLINK_MAX_LINKS) {
                        const struct fake_link *lk = &d->links[v->scopeId];
                        v->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
                        v->value.uiVal = !lk->state_set || lk->state_up ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
                        v->nvmlReturn = NVML_SUCCESS;
                }
                return true;
        }
        for (unsigned int c = 0; c < FAKE_NVLINK_COUNTERS; c++) {
                if (v->fieldId != totals[c])
                        continue;
                if (n > 0 && counters) {
                        unsigned long long sum = 0;
                        for (unsigned int l = 0; l < n && l < NVML_NVLINK_MAX_LINKS; l++)
                                sum += d->links[l].err_set[c] ? d->links[l].err[c] : 0;
                        v->valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
                        v->value.ullVal = sum;
                        v->nvmlReturn = NVML_SUCCESS;
                }
                return true;
        }
        return false;
}

/* NVLink5's counters (Blackwell), each from its "nvlink5_*" key, summed over the links:
 * answered for scopeId UINT_MAX only (NVML's aggregate, the one gpuvet asks), NOT_SUPPORTED
 * where the key is unset. False when v is not one. */
static bool nvlink5_field(const struct fake_dev *d, nvmlFieldValue_t *v)
{
        static const struct {
                unsigned int field;
                enum fake_key key;
        } fields[] = {
                {NVML_FI_DEV_NVLINK_COUNT_SYMBOL_ERRORS, K_NVL5_SYMBOL_ERRORS},
                {NVML_FI_DEV_NVLINK_COUNT_EFFECTIVE_ERRORS, K_NVL5_EFFECTIVE_ERRORS},
                {NVML_FI_DEV_NVLINK_COUNT_LINK_RECOVERY_EVENTS, K_NVL5_RECOVERY_EVENTS},
                {NVML_FI_DEV_NVLINK_COUNT_LINK_RECOVERY_SUCCESSFUL_EVENTS, K_NVL5_RECOVERY_SUCCESSFUL},
                {NVML_FI_DEV_NVLINK_COUNT_LINK_RECOVERY_FAILED_EVENTS, K_NVL5_RECOVERY_FAILED},
                {NVML_FI_DEV_NVLINK_COUNT_MALFORMED_PACKET_ERRORS, K_NVL5_MALFORMED_PACKETS},
                {NVML_FI_DEV_NVLINK_COUNT_BUFFER_OVERRUN_ERRORS, K_NVL5_BUFFER_OVERRUN},
                {NVML_FI_DEV_NVLINK_COUNT_RCV_ERRORS, K_NVL5_RCV_ERRORS},
                {NVML_FI_DEV_NVLINK_COUNT_RCV_REMOTE_ERRORS, K_NVL5_RCV_REMOTE_ERRORS},
                {NVML_FI_DEV_NVLINK_COUNT_RCV_GENERAL_ERRORS, K_NVL5_RCV_GENERAL_ERRORS},
                {NVML_FI_DEV_NVLINK_COUNT_LOCAL_LINK_INTEGRITY_ERRORS, K_NVL5_LOCAL_LINK_INTEGRITY},
                {NVML_FI_DEV_NVLINK_COUNT_SYMBOL_BER, K_NVL5_SYMBOL_BER},
                {NVML_FI_DEV_NVLINK_COUNT_EFFECTIVE_BER, K_NVL5_EFFECTIVE_BER},
        };
        if (v->fieldId >= NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_0 && v->fieldId <= NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_15) {
                /* "nvlink5_fec_history = N0 N1 ... N15": bin b is the b-th number. */
                const char *p = d->s[K_NVL5_FEC_HISTORY];
                unsigned int bin = v->fieldId - NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_0;
                for (unsigned int b = 0; p && *p && v->scopeId == UINT_MAX; b++) {
                        char *end;
                        unsigned long long x = strtoull(p, &end, 10);
                        if (end == p)
                                break;
                        if (b == bin) {
                                v->valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
                                v->value.ullVal = x;
                                v->nvmlReturn = NVML_SUCCESS;
                                break;
                        }
                        p = end;
                }
                return true;
        }
        for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
                if (v->fieldId != fields[k].field)
                        continue;
                if (v->scopeId == UINT_MAX && d->set[fields[k].key]) {
                        v->valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
                        v->value.ullVal = d->u[fields[k].key];
                        v->nvmlReturn = NVML_SUCCESS;
                }
                return true;
        }
        return false;
}

/* The fields that stand for a per-device call's answer (memory health, PCIe replays, power
 * limits), each from the scenario key that call answers from, so that a field and its call
 * always agree: NOT_SUPPORTED where the call would be (a key unset; for the calls giving
 * several values, any of their keys), and the fault and hang rules naming the call apply
 * to its fields (rules_of(): a field group is one call of it). The power limits answer for
 * scopeId NVML_POWER_SCOPE_GPU only (the module scope is not modelled). "health_fields =
 * false": a driver without them, NOT_SUPPORTED each. */
enum health_call {
        HC_ECC_VOL_CORR,
        HC_ECC_VOL_UNC,
        HC_ECC_AGG_CORR,
        HC_ECC_AGG_UNC,
        HC_ECC_VOL_UNC_DRAM,
        HC_ECC_AGG_UNC_DRAM,
        HC_RETIRED_SBE,
        HC_RETIRED_DBE,
        HC_RETIRED_PENDING,
        HC_REMAP,
        HC_PCIE_REPLAY,
        HC_POWER_DEFAULT,
        HC_POWER_ENFORCED,
        HC_POWER_CONSTRAINTS,
        HC_COUNT
};

static const struct {
        unsigned int field;
        enum health_call call;
        enum fn_id fn; /* the call the field stands for */
        enum fake_key key;
        nvmlValueType_t type;
} health_fields[] = {
        {NVML_FI_DEV_ECC_SBE_VOL_TOTAL, HC_ECC_VOL_CORR, FN_nvmlDeviceGetTotalEccErrors, K_ECC_VOL_CORR,
         NVML_VALUE_TYPE_UNSIGNED_LONG_LONG},
        {NVML_FI_DEV_ECC_DBE_VOL_TOTAL, HC_ECC_VOL_UNC, FN_nvmlDeviceGetTotalEccErrors, K_ECC_VOL_UNC,
         NVML_VALUE_TYPE_UNSIGNED_LONG_LONG},
        {NVML_FI_DEV_ECC_SBE_AGG_TOTAL, HC_ECC_AGG_CORR, FN_nvmlDeviceGetTotalEccErrors, K_ECC_AGG_CORR,
         NVML_VALUE_TYPE_UNSIGNED_LONG_LONG},
        {NVML_FI_DEV_ECC_DBE_AGG_TOTAL, HC_ECC_AGG_UNC, FN_nvmlDeviceGetTotalEccErrors, K_ECC_AGG_UNC,
         NVML_VALUE_TYPE_UNSIGNED_LONG_LONG},
        {NVML_FI_DEV_ECC_DBE_VOL_DEV, HC_ECC_VOL_UNC_DRAM, FN_nvmlDeviceGetMemoryErrorCounter, K_ECC_VOL_UNC_DRAM,
         NVML_VALUE_TYPE_UNSIGNED_LONG_LONG},
        {NVML_FI_DEV_ECC_DBE_AGG_DEV, HC_ECC_AGG_UNC_DRAM, FN_nvmlDeviceGetMemoryErrorCounter, K_ECC_AGG_UNC_DRAM,
         NVML_VALUE_TYPE_UNSIGNED_LONG_LONG},
        {NVML_FI_DEV_RETIRED_SBE, HC_RETIRED_SBE, FN_nvmlDeviceGetRetiredPages, K_RETIRED_SBE,
         NVML_VALUE_TYPE_UNSIGNED_INT},
        {NVML_FI_DEV_RETIRED_DBE, HC_RETIRED_DBE, FN_nvmlDeviceGetRetiredPages, K_RETIRED_DBE,
         NVML_VALUE_TYPE_UNSIGNED_INT},
        {NVML_FI_DEV_RETIRED_PENDING, HC_RETIRED_PENDING, FN_nvmlDeviceGetRetiredPagesPendingStatus, K_RETIRED_PENDING,
         NVML_VALUE_TYPE_UNSIGNED_INT},
        {NVML_FI_DEV_REMAPPED_COR, HC_REMAP, FN_nvmlDeviceGetRemappedRows, K_REMAP_CORR, NVML_VALUE_TYPE_UNSIGNED_INT},
        {NVML_FI_DEV_REMAPPED_UNC, HC_REMAP, FN_nvmlDeviceGetRemappedRows, K_REMAP_UNC, NVML_VALUE_TYPE_UNSIGNED_INT},
        {NVML_FI_DEV_REMAPPED_PENDING, HC_REMAP, FN_nvmlDeviceGetRemappedRows, K_REMAP_PENDING,
         NVML_VALUE_TYPE_UNSIGNED_INT},
        {NVML_FI_DEV_REMAPPED_FAILURE, HC_REMAP, FN_nvmlDeviceGetRemappedRows, K_REMAP_FAILURE,
         NVML_VALUE_TYPE_UNSIGNED_INT},
        {NVML_FI_DEV_PCIE_REPLAY_COUNTER, HC_PCIE_REPLAY, FN_nvmlDeviceGetPcieReplayCounter, K_PCIE_REPLAY,
         NVML_VALUE_TYPE_UNSIGNED_INT},
        {NVML_FI_DEV_POWER_DEFAULT_LIMIT, HC_POWER_DEFAULT, FN_nvmlDeviceGetPowerManagementDefaultLimit,
         K_POWER_DEFAULT, NVML_VALUE_TYPE_UNSIGNED_INT},
        {NVML_FI_DEV_POWER_CURRENT_LIMIT, HC_POWER_ENFORCED, FN_nvmlDeviceGetEnforcedPowerLimit, K_POWER_ENFORCED,
         NVML_VALUE_TYPE_UNSIGNED_INT},
        {NVML_FI_DEV_POWER_MIN_LIMIT, HC_POWER_CONSTRAINTS, FN_nvmlDeviceGetPowerManagementLimitConstraints,
         K_POWER_MIN, NVML_VALUE_TYPE_UNSIGNED_INT},
        {NVML_FI_DEV_POWER_MAX_LIMIT, HC_POWER_CONSTRAINTS, FN_nvmlDeviceGetPowerManagementLimitConstraints,
         K_POWER_MAX, NVML_VALUE_TYPE_UNSIGNED_INT},
};

/* Whether the call would answer: every key it answers from is set. */
static bool health_call_supported(const struct fake_dev *d, enum health_call call)
{
        for (size_t k = 0; k < sizeof(health_fields) / sizeof(health_fields[0]); k++)
                if (health_fields[k].call == call && !d->set[health_fields[k].key])
                        return false;
        return true;
}

/* Answers v when it is a health field (true), else false. answered[] and answer[] hold,
 * per call, what its rules and keys said for this nvmlDeviceGetFieldValues call. Called
 * with the lock held; a hang rule never returns. */
static bool health_field(const struct fake_dev *d, int gpu, nvmlFieldValue_t *v, bool *answered,
                         nvmlReturn_t *answer)
{
        for (size_t k = 0; k < sizeof(health_fields) / sizeof(health_fields[0]); k++) {
                if (v->fieldId != health_fields[k].field)
                        continue;
                enum health_call call = health_fields[k].call;
                bool power = call == HC_POWER_DEFAULT || call == HC_POWER_ENFORCED || call == HC_POWER_CONSTRAINTS;
                if ((d->set[K_HEALTH_FIELDS] && !d->u[K_HEALTH_FIELDS]) || (power && v->scopeId != NVML_POWER_SCOPE_GPU))
                        return true; /* NOT_SUPPORTED, as set by the caller */
                if (!answered[call]) {
                        nvmlReturn_t r = rules_of(health_fields[k].fn, gpu);
                        if (r == NVML_SUCCESS && !health_call_supported(d, call))
                                r = NVML_ERROR_NOT_SUPPORTED;
                        answer[call] = r;
                        answered[call] = true;
                }
                v->nvmlReturn = answer[call];
                if (v->nvmlReturn != NVML_SUCCESS)
                        return true;
                v->valueType = health_fields[k].type;
                if (health_fields[k].type == NVML_VALUE_TYPE_UNSIGNED_LONG_LONG)
                        v->value.ullVal = d->u[health_fields[k].key];
                else
                        v->value.uiVal = (unsigned int)d->u[health_fields[k].key];
                return true;
        }
        return false;
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values)
{
        struct fake_dev *d;
        unsigned int gpu;
        nvmlReturn_t r = enter_dev_ex(FN_nvmlDeviceGetFieldValues, device, false, &d, &gpu, NULL);
        if (r != NVML_SUCCESS)
                return r;
        if (valuesCount < 0 || !values)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        bool answered[HC_COUNT] = {false};
        nvmlReturn_t answer[HC_COUNT];
        bool viol_answered = false;
        nvmlReturn_t viol_answer = NVML_SUCCESS;
        for (int i = 0; i < valuesCount; i++) {
                nvmlFieldValue_t *v = &values[i];
                v->timestamp = 0;
                v->latencyUsec = 0;
                static const struct {
                        unsigned int field;
                        enum fake_key key;
                        nvmlValueType_t type;
                } fields[] = {
                        {NVML_FI_DEV_GET_GPU_RECOVERY_ACTION, K_RECOVERY_ACTION, NVML_VALUE_TYPE_UNSIGNED_INT},
                        {NVML_FI_DEV_MEMORY_TEMP, K_TEMP_MEMORY, NVML_VALUE_TYPE_UNSIGNED_INT},
                        {NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT, K_TLIMIT_SHUTDOWN, NVML_VALUE_TYPE_SIGNED_INT},
                        {NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT, K_TLIMIT_SLOWDOWN, NVML_VALUE_TYPE_SIGNED_INT},
                        {NVML_FI_DEV_TEMPERATURE_MEM_MAX_TLIMIT, K_TLIMIT_MEM_MAX, NVML_VALUE_TYPE_SIGNED_INT},
                        {NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT, K_TLIMIT_GPU_MAX, NVML_VALUE_TYPE_SIGNED_INT},
                };
                v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
                if (nvlink_field(d, v) || nvlink5_field(d, v) || health_field(d, (int)gpu, v, answered, answer) ||
                    violation_field(d, (int)gpu, v, &viol_answered, &viol_answer))
                        continue;
                for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
                        if (v->fieldId != fields[k].field || !d->set[fields[k].key])
                                continue;
                        v->valueType = fields[k].type;
                        if (fields[k].type == NVML_VALUE_TYPE_SIGNED_INT)
                                v->value.siVal = (int)(unsigned int)d->u[fields[k].key];
                        else
                                v->value.uiVal = (unsigned int)d->u[fields[k].key];
                        v->nvmlReturn = NVML_SUCCESS;
                }
        }
        return leave(NVML_SUCCESS);
}

/* "inforom_valid = false": the checksum fails, as on a board nvidia-smi exits 14 for. */
nvmlReturn_t nvmlDeviceValidateInforom(nvmlDevice_t device)
{
        ENTER_DEV(nvmlDeviceValidateInforom, device, d);
        if (!d->set[K_INFOROM_VALID])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        return leave(d->u[K_INFOROM_VALID] ? NVML_SUCCESS : NVML_ERROR_CORRUPTED_INFOROM);
}

/* "temperature_margin = 46 C": degrees left to the nearest slowdown threshold. */
nvmlReturn_t nvmlDeviceGetMarginTemperature(nvmlDevice_t device, nvmlMarginTemperature_t *margin)
{
        ENTER_DEV(nvmlDeviceGetMarginTemperature, device, d);
        if (!margin)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (margin->version != nvmlMarginTemperature_v1)
                return leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        if (!d->set[K_TEMP_MARGIN])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        margin->marginTemperature = (int)(unsigned int)d->u[K_TEMP_MARGIN];
        return leave(NVML_SUCCESS);
}

/* --- PCIe, NVLink --------------------------------------------------------------------- */

GETTER(nvmlDeviceGetCurrPcieLinkGeneration, unsigned int, K_PCIE_GEN_CUR)
GETTER(nvmlDeviceGetCurrPcieLinkWidth, unsigned int, K_PCIE_WIDTH_CUR)
GETTER(nvmlDeviceGetMaxPcieLinkGeneration, unsigned int, K_PCIE_GEN_MAX)
GETTER(nvmlDeviceGetMaxPcieLinkWidth, unsigned int, K_PCIE_WIDTH_MAX)
GETTER(nvmlDeviceGetPcieReplayCounter, unsigned int, K_PCIE_REPLAY)

/* The link, or NULL with *r set: INVALID_ARGUMENT past NVML's maximum, NOT_SUPPORTED
 * past the board's links (or on a board without NVLink). */
static const struct fake_link *link_of(const struct fake_dev *d, unsigned int link, nvmlReturn_t *r)
{
        if (link >= NVML_NVLINK_MAX_LINKS) {
                *r = NVML_ERROR_INVALID_ARGUMENT;
                return NULL;
        }
        if (!d->set[K_NVLINK_COUNT] || link >= d->u[K_NVLINK_COUNT]) {
                *r = NVML_ERROR_NOT_SUPPORTED;
                return NULL;
        }
        return &d->links[link];
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, nvmlEnableState_t *isActive)
{
        ENTER_DEV(nvmlDeviceGetNvLinkState, device, d);
        nvmlReturn_t r;
        const struct fake_link *lk = link_of(d, link, &r);
        if (!lk)
                return leave(r);
        if (!isActive)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        *isActive = !lk->state_set || lk->state_up ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t device, unsigned int link, nvmlNvLinkErrorCounter_t counter,
                                             unsigned long long *counterValue)
{
        ENTER_DEV(nvmlDeviceGetNvLinkErrorCounter, device, d);
        nvmlReturn_t r;
        const struct fake_link *lk = link_of(d, link, &r);
        if (!lk)
                return leave(r);
        unsigned int c = (unsigned int)counter;
        if (c >= FAKE_NVLINK_COUNTERS || !counterValue)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        /* "nvlink_error_counters = false": Blackwell, whose links have none of these. */
        if (d->set[K_NVLINK_ERROR_COUNTERS] && !d->u[K_NVLINK_ERROR_COUNTERS])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        *counterValue = lk->err_set[c] ? lk->err[c] : 0;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link, nvmlPciInfo_t *pci)
{
        ENTER_DEV(nvmlDeviceGetNvLinkRemotePciInfo_v2, device, d);
        nvmlReturn_t r;
        const struct fake_link *lk = link_of(d, link, &r);
        if (!lk)
                return leave(r);
        return leave(fill_pci(lk->remote_bus_id, lk->remote_device_id, 0, pci));
}

/* --- modes, MIG ---------------------------------------------------------------------- */

GETTER(nvmlDeviceGetPersistenceMode, nvmlEnableState_t, K_PERSISTENCE)
GETTER(nvmlDeviceGetComputeMode, nvmlComputeMode_t, K_COMPUTE_MODE)
GETTER(nvmlDeviceGetDisplayMode, nvmlEnableState_t, K_DISPLAY_MODE)
GETTER(nvmlDeviceGetDisplayActive, nvmlEnableState_t, K_DISPLAY_ACTIVE)
GETTER(nvmlDeviceGetMaxMigDeviceCount, unsigned int, K_MIG_MAX)

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode)
{
        ENTER_DEV(nvmlDeviceGetMigMode, device, d);
        return leave(mode_pair(d, K_MIG_CURRENT, K_MIG_PENDING, currentMode, pendingMode));
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index, nvmlDevice_t *migDevice)
{
        struct fake_dev *d;
        unsigned int g, m;
        nvmlReturn_t r = enter_dev_ex(FN_nvmlDeviceGetMigDeviceHandleByIndex, device, false, &d, &g, &m);
        if (r != NVML_SUCCESS)
                return r;
        if (!migDevice || m != 0)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->set[K_MIG_CURRENT])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        if (index >= FAKE_MAX_MIG || (d->set[K_MIG_MAX] && index >= d->u[K_MIG_MAX]))
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->u[K_MIG_CURRENT] || !sc->devs[g][1 + index].defined)
                return leave(NVML_ERROR_NOT_FOUND);
        *migDevice = handle_of(g, 1 + index);
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int *isMigDevice)
{
        struct fake_dev *d;
        unsigned int m;
        nvmlReturn_t r = enter_dev_ex(FN_nvmlDeviceIsMigDeviceHandle, device, false, &d, NULL, &m);
        if (r != NVML_SUCCESS)
                return r;
        if (!isMigDevice)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        *isMigDevice = m != 0;
        return leave(NVML_SUCCESS);
}

static nvmlReturn_t mig_id(enum fn_id fn, enum fake_key k, nvmlDevice_t device, unsigned int *id)
{
        struct fake_dev *d;
        unsigned int m;
        nvmlReturn_t r = enter_dev_ex(fn, device, false, &d, NULL, &m);
        if (r != NVML_SUCCESS)
                return r;
        if (!id)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (m == 0)
                return leave(NVML_ERROR_NOT_SUPPORTED);
        return leave(get_u32(d, k, id));
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id)
{
        return mig_id(FN_nvmlDeviceGetGpuInstanceId, K_GPU_INSTANCE_ID, device, id);
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int *id)
{
        return mig_id(FN_nvmlDeviceGetComputeInstanceId, K_COMPUTE_INSTANCE_ID, device, id);
}

nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t migDevice, nvmlDevice_t *device)
{
        struct fake_dev *d;
        unsigned int g, m;
        nvmlReturn_t r = enter_dev_ex(FN_nvmlDeviceGetDeviceHandleFromMigDeviceHandle, migDevice, false, &d, &g, &m);
        if (r != NVML_SUCCESS)
                return r;
        if (!device || m == 0)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        *device = handle_of(g, 0);
        return leave(NVML_SUCCESS);
}

/* --- processes ------------------------------------------------------------------------ */

/* Lists the compute or graphics processes into INFOS, records of SIZE bytes (v1 or v2). */
static nvmlReturn_t processes(enum fn_id fn, bool graphics, nvmlDevice_t device, unsigned int *count, void *infos,
                              size_t size)
{
        struct fake_dev *d;
        nvmlReturn_t r = enter_dev(fn, device, &d);
        if (r != NVML_SUCCESS)
                return r;
        if (!count)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        unsigned int n = 0;
        for (unsigned int i = 0; i < d->nprocs; i++)
                n += d->procs[i].graphics == graphics;
        if (*count < n) {
                *count = n;
                return leave(NVML_ERROR_INSUFFICIENT_SIZE);
        }
        if (n > 0 && !infos)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        unsigned int j = 0;
        for (unsigned int i = 0; i < d->nprocs; i++) {
                const struct fake_proc *p = &d->procs[i];
                if (p->graphics != graphics)
                        continue;
                if (size == sizeof(nvmlProcessInfo_v1_t)) {
                        nvmlProcessInfo_v1_t *o = (nvmlProcessInfo_v1_t *)infos + j;
                        o->pid = p->pid;
                        o->usedGpuMemory = p->used_bytes;
                } else {
                        nvmlProcessInfo_v2_t *o = (nvmlProcessInfo_v2_t *)infos + j;
                        o->pid = p->pid;
                        o->usedGpuMemory = p->used_bytes;
                        o->gpuInstanceId = p->gpu_instance_id;
                        o->computeInstanceId = p->compute_instance_id;
                }
                j++;
        }
        *count = n;
        return leave(NVML_SUCCESS);
}

/* The processes given sm=/mem=/enc=/dec= have one sample each, stamped 100 ms ago on the
 * wall clock (NVML's samples carry the CPU's time in microseconds); only samples newer than
 * lastSeenTimeStamp are returned, NOT_FOUND when none is. NOT_SUPPORTED with MIG on, as NVML
 * documents. */
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t *utilization,
                                             unsigned int *processSamplesCount, unsigned long long lastSeenTimeStamp)
{
        ENTER_DEV(nvmlDeviceGetProcessUtilization, device, d);
        if (!processSamplesCount)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (d->set[K_MIG_CURRENT] && d->u[K_MIG_CURRENT] != 0)
                return leave(NVML_ERROR_NOT_SUPPORTED);
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        unsigned long long stamp = (unsigned long long)now.tv_sec * 1000000ULL + (unsigned long long)now.tv_nsec / 1000 -
                                   100000ULL;
        unsigned int n = 0;
        for (unsigned int i = 0; i < d->nprocs; i++)
                n += d->procs[i].sampled && stamp > lastSeenTimeStamp;
        if (n == 0)
                return leave(NVML_ERROR_NOT_FOUND);
        if (!utilization || *processSamplesCount < n) {
                *processSamplesCount = n;
                return leave(NVML_ERROR_INSUFFICIENT_SIZE);
        }
        unsigned int j = 0;
        for (unsigned int i = 0; i < d->nprocs; i++) {
                const struct fake_proc *p = &d->procs[i];
                if (!p->sampled || stamp <= lastSeenTimeStamp)
                        continue;
                utilization[j++] = (nvmlProcessUtilizationSample_t){
                        .pid = p->pid, .timeStamp = stamp,
                        .smUtil = p->util[0], .memUtil = p->util[1], .encUtil = p->util[2], .decUtil = p->util[3]};
        }
        *processSamplesCount = n;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos)
{
        return processes(FN_nvmlDeviceGetComputeRunningProcesses_v3, false, device, infoCount, infos, sizeof(*infos));
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_v2_t *infos)
{
        return processes(FN_nvmlDeviceGetComputeRunningProcesses_v2, false, device, infoCount, infos, sizeof(*infos));
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                  nvmlProcessInfo_v1_t *infos)
{
        return processes(FN_nvmlDeviceGetComputeRunningProcesses, false, device, infoCount, infos, sizeof(*infos));
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                      nvmlProcessInfo_t *infos)
{
        return processes(FN_nvmlDeviceGetGraphicsRunningProcesses_v3, true, device, infoCount, infos, sizeof(*infos));
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                                      nvmlProcessInfo_v2_t *infos)
{
        return processes(FN_nvmlDeviceGetGraphicsRunningProcesses_v2, true, device, infoCount, infos, sizeof(*infos));
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                   nvmlProcessInfo_v1_t *infos)
{
        return processes(FN_nvmlDeviceGetGraphicsRunningProcesses, true, device, infoCount, infos, sizeof(*infos));
}

/* --- GPM --------------------------------------------------------------------------------- */

/* A sample buffer: which GPU it was last taken of, and in what order. Buffers live on a list
 * so that a freed or made-up one is refused (INVALID_ARGUMENT), as NVML refuses them. */
struct nvmlGpmSample_st {
        struct nvmlGpmSample_st *next;
        bool taken;
        unsigned int gpu, mig;
        unsigned long long seq;
};
static struct nvmlGpmSample_st *gpm_samples;
static unsigned long long gpm_seq;

static bool gpm_live(nvmlGpmSample_t s)
{
        for (nvmlGpmSample_t p = gpm_samples; p; p = p->next)
                if (p == s)
                        return true;
        return false;
}

static bool gpm_given(const struct fake_dev *d)
{
        return d->set[K_GPM_ACTIVITY] || d->set[K_GPM_TRAFFIC];
}

/* One metric's value from "gpm_activity = GRAPHICS SM OCCUPANCY TENSOR DRAM FP64 FP32 FP16"
 * (percent) and "gpm_traffic = PCIE_TX PCIE_RX NVLINK_RX NVLINK_TX" (MiB/s); "-" in a
 * place, a key not given or an id not listed: NOT_SUPPORTED, as for a unit the GPU lacks. */
static nvmlReturn_t gpm_value(const struct fake_dev *d, unsigned int id, double *ret)
{
        static const unsigned int activity[] = {
                NVML_GPM_METRIC_GRAPHICS_UTIL, NVML_GPM_METRIC_SM_UTIL,     NVML_GPM_METRIC_SM_OCCUPANCY,
                NVML_GPM_METRIC_ANY_TENSOR_UTIL, NVML_GPM_METRIC_DRAM_BW_UTIL, NVML_GPM_METRIC_FP64_UTIL,
                NVML_GPM_METRIC_FP32_UTIL,     NVML_GPM_METRIC_FP16_UTIL};
        static const unsigned int traffic[] = {NVML_GPM_METRIC_PCIE_TX_PER_SEC, NVML_GPM_METRIC_PCIE_RX_PER_SEC,
                                               NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC,
                                               NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC};
        const struct {
                enum fake_key key;
                const unsigned int *ids;
                unsigned int n;
        } lists[] = {{K_GPM_ACTIVITY, activity, 8}, {K_GPM_TRAFFIC, traffic, 4}};
        for (unsigned int l = 0; l < 2; l++) {
                for (unsigned int i = 0; i < lists[l].n; i++) {
                        if (lists[l].ids[i] != id)
                                continue;
                        if (!d->set[lists[l].key])
                                return NVML_ERROR_NOT_SUPPORTED;
                        const char *p = d->s[lists[l].key];
                        for (unsigned int k = 0;; k++) {
                                char word[32];
                                int used = 0;
                                if (sscanf(p, " %31s%n", word, &used) != 1) {
                                        fprintf(stderr, "fake-nvml: %s has fewer than %u values\n",
                                                l ? "gpm_traffic" : "gpm_activity", lists[l].n);
                                        return NVML_ERROR_UNKNOWN;
                                }
                                p += used;
                                if (k < i)
                                        continue;
                                if (strcmp(word, "-") == 0)
                                        return NVML_ERROR_NOT_SUPPORTED;
                                char *end;
                                *ret = strtod(word, &end);
                                if (*end) {
                                        fprintf(stderr, "fake-nvml: gpm value '%s' is not a number\n", word);
                                        return NVML_ERROR_UNKNOWN;
                                }
                                return NVML_SUCCESS;
                        }
                }
        }
        return NVML_ERROR_NOT_SUPPORTED;
}

/* Supported where the scenario gives GPM values (a Hopper or later board). */
nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t *gpmSupport)
{
        ENTER_DEV(nvmlGpmQueryDeviceSupport, device, d);
        if (!gpmSupport)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (gpmSupport->version != NVML_GPM_SUPPORT_VERSION)
                return leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        gpmSupport->isSupportedDevice = gpm_given(d);
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *gpmSample)
{
        ENTER_SYS(nvmlGpmSampleAlloc);
        if (!gpmSample)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        nvmlGpmSample_t s = calloc(1, sizeof(*s));
        if (!s)
                return leave(NVML_ERROR_MEMORY);
        s->next = gpm_samples;
        gpm_samples = s;
        gpm_unfreed++;
        *gpmSample = s;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t gpmSample)
{
        ENTER_SYS(nvmlGpmSampleFree);
        for (nvmlGpmSample_t *p = &gpm_samples; *p; p = &(*p)->next) {
                if (*p != gpmSample)
                        continue;
                *p = gpmSample->next;
                free(gpmSample);
                gpm_unfreed--;
                return leave(NVML_SUCCESS);
        }
        return leave(NVML_ERROR_INVALID_ARGUMENT);
}

nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t gpmSample)
{
        unsigned int g, m;
        struct fake_dev *d;
        nvmlReturn_t r = enter_dev_ex(FN_nvmlGpmSampleGet, device, false, &d, &g, &m);
        if (r != NVML_SUCCESS)
                return r;
        if (!gpm_live(gpmSample))
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!gpm_given(d))
                return leave(NVML_ERROR_NOT_SUPPORTED);
        *gpmSample = (struct nvmlGpmSample_st){.next = gpmSample->next, .taken = true, .gpu = g, .mig = m,
                                               .seq = ++gpm_seq};
        return leave(NVML_SUCCESS);
}

/* The scenario's values for two samples of one GPU, the older first; the fault rules see
 * the call as the samples' GPU's. */
nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *metricsGet)
{
        pthread_mutex_lock(&lock);
        if (!init_count)
                return leave(NVML_ERROR_UNINITIALIZED);
        if (!metricsGet)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        nvmlGpmSample_t s1 = metricsGet->sample1, s2 = metricsGet->sample2;
        nvmlReturn_t r = instrument(FN_nvmlGpmMetricsGet, gpm_live(s1) && s1->taken ? (int)s1->gpu : -1);
        if (r != NVML_SUCCESS)
                return leave(r);
        if (metricsGet->version != NVML_GPM_METRICS_GET_VERSION)
                return leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        if (!gpm_live(s1) || !gpm_live(s2) || s1 == s2 || !s1->taken || !s2->taken || s1->gpu != s2->gpu ||
            s1->mig != s2->mig || s2->seq <= s1->seq || !dev_valid(s1->gpu, s1->mig))
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (metricsGet->numMetrics == 0 || metricsGet->numMetrics > NVML_GPM_METRIC_MAX)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        const struct fake_dev *d = &sc->devs[s1->gpu][s1->mig];
        for (unsigned int i = 0; i < metricsGet->numMetrics; i++) {
                nvmlGpmMetric_t *m = &metricsGet->metrics[i];
                double v = 0;
                m->nvmlReturn = m->metricId < NVML_GPM_METRIC_MAX ? gpm_value(d, m->metricId, &v)
                                                                  : NVML_ERROR_INVALID_ARGUMENT;
                m->value = m->nvmlReturn == NVML_SUCCESS ? v : 0;
                m->metricInfo.shortName = m->metricInfo.longName = m->metricInfo.unit = NULL;
        }
        return leave(NVML_SUCCESS);
}

/* --- topology, fabric ---------------------------------------------------------------- */

nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t device1, nvmlDevice_t device2,
                                                 nvmlGpuTopologyLevel_t *pathInfo)
{
        struct fake_dev *a;
        unsigned int ga, ma, gb, mb;
        nvmlReturn_t r = enter_dev_ex(FN_nvmlDeviceGetTopologyCommonAncestor, device1, false, &a, &ga, &ma);
        if (r != NVML_SUCCESS)
                return r;
        if (!pathInfo || !slot_of(device2, &gb, &mb) || !dev_valid(gb, mb) || ma != 0 || mb != 0)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (lost_level(gb, 1))
                return leave(NVML_ERROR_GPU_IS_LOST);
        const struct fake_dev *b = &sc->devs[gb][0];
        if (ga == gb) {
                *pathInfo = NVML_TOPOLOGY_INTERNAL;
                return leave(NVML_SUCCESS);
        }
        if (!a->set[K_TOPO_NUMA] || !b->set[K_TOPO_NUMA])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        if (a->set[K_TOPO_SWITCH] && b->set[K_TOPO_SWITCH] && a->u[K_TOPO_SWITCH] == b->u[K_TOPO_SWITCH])
                *pathInfo = NVML_TOPOLOGY_SINGLE;
        else if (a->set[K_TOPO_HOSTBRIDGE] && b->set[K_TOPO_HOSTBRIDGE] &&
                 a->u[K_TOPO_HOSTBRIDGE] == b->u[K_TOPO_HOSTBRIDGE])
                *pathInfo = NVML_TOPOLOGY_HOSTBRIDGE;
        else if (a->u[K_TOPO_NUMA] == b->u[K_TOPO_NUMA])
                *pathInfo = NVML_TOPOLOGY_NODE;
        else
                *pathInfo = NVML_TOPOLOGY_SYSTEM;
        return leave(NVML_SUCCESS);
}

static unsigned char hexval(char c)
{
        return (unsigned char)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
}

static void fill_fabric(const struct fake_dev *d, unsigned char *uuid, nvmlReturn_t *status, unsigned int *clique,
                        nvmlGpuFabricState_t *state)
{
        *state = (nvmlGpuFabricState_t)d->u[K_FABRIC_STATE];
        *status = d->set[K_FABRIC_STATUS] ? (nvmlReturn_t)d->u[K_FABRIC_STATUS] : NVML_SUCCESS;
        *clique = (unsigned int)d->u[K_FABRIC_CLIQUE];
        const char *u = d->s[K_FABRIC_CLUSTER];
        for (unsigned int i = 0; u && *u && i < NVML_GPU_FABRIC_UUID_LEN * 2; u++) {
                if (*u == '-')
                        continue;
                uuid[i / 2] |= (unsigned char)(hexval(*u) << (i % 2 ? 0 : 4));
                i++;
        }
}

nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device, nvmlGpuFabricInfo_t *gpuFabricInfo)
{
        ENTER_DEV(nvmlDeviceGetGpuFabricInfo, device, d);
        if (!gpuFabricInfo)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->set[K_FABRIC_STATE])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        memset(gpuFabricInfo, 0, sizeof(*gpuFabricInfo));
        fill_fabric(d, gpuFabricInfo->clusterUuid, &gpuFabricInfo->status, &gpuFabricInfo->cliqueId,
                    &gpuFabricInfo->state);
        return leave(NVML_SUCCESS);
}

/* The versioned form: v3 only (as a driver that knows v3 answers v3; an unknown version is
 * ARGUMENT_VERSION_MISMATCH, which is what NVML answers too). */
nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfo_v3_t *info)
{
        ENTER_DEV(nvmlDeviceGetGpuFabricInfoV, device, d);
        if (!info)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (info->version != nvmlGpuFabricInfo_v3)
                return leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        if (!d->set[K_FABRIC_STATE])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        unsigned int version = info->version;
        memset(info, 0, sizeof(*info));
        info->version = version;
        fill_fabric(d, info->clusterUuid, &info->status, &info->cliqueId, &info->state);
        info->healthMask = (unsigned int)d->u[K_FABRIC_HEALTH_MASK];
        info->healthSummary = (unsigned char)d->u[K_FABRIC_HEALTH_SUMMARY];
        return leave(NVML_SUCCESS);
}

/* --- events --------------------------------------------------------------------------- */

nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device, unsigned long long *eventTypes)
{
        return u64_of(FN_nvmlDeviceGetSupportedEventTypes, K_SUPPORTED_EVENTS, device, eventTypes);
}

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
        ENTER_SYS(nvmlEventSetCreate);
        if (!set)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        for (unsigned int i = 0; i < FAKE_MAX_EVENT_SETS; i++)
                if (!event_sets[i].live) {
                        memset(&event_sets[i], 0, sizeof(event_sets[i]));
                        event_sets[i].live = true;
                        *set = &event_sets[i];
                        return leave(NVML_SUCCESS);
                }
        return leave(NVML_ERROR_MEMORY);
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes, nvmlEventSet_t set)
{
        struct fake_dev *d;
        unsigned int g, m;
        /* lost = 1 (fell off the bus while running) still registers, so that a waiter
         * receives the XID 79 that NVML reports for the loss */
        nvmlReturn_t r = enter_dev_ex(FN_nvmlDeviceRegisterEvents, device, true, &d, &g, &m);
        if (r != NVML_SUCCESS)
                return r;
        struct nvmlEventSet_st *es = event_set_of(set);
        if (!es || m != 0)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (lost_level(g, 2))
                return leave(NVML_ERROR_GPU_IS_LOST);
        if (!d->set[K_SUPPORTED_EVENTS] || (eventTypes & ~d->u[K_SUPPORTED_EVENTS]))
                return leave(NVML_ERROR_NOT_SUPPORTED);
        es->mask[g] |= eventTypes;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms)
{
        ENTER_SYS(nvmlEventSetWait_v2);
        struct nvmlEventSet_st *es = event_set_of(set);
        if (!es || !data)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        for (unsigned int g = 0; g < sc->ngpus; g++) {
                struct fake_dev *d = &sc->devs[g][0];
                if (!(es->mask[g] & (unsigned long long)nvmlEventTypeXidCriticalError) || d->xid_next >= d->nxids)
                        continue;
                memset(data, 0, sizeof(*data));
                data->device = handle_of(g, 0);
                data->eventType = (unsigned long long)nvmlEventTypeXidCriticalError;
                data->eventData = d->xids[d->xid_next++];
                data->gpuInstanceId = 0xFFFFFFFFu;
                data->computeInstanceId = 0xFFFFFFFFu;
                return leave(NVML_SUCCESS);
        }
        /* nothing queued: wait out the timeout without the lock, as NVML blocks */
        pthread_mutex_unlock(&lock);
        sleep_ms(timeoutms);
        return NVML_ERROR_TIMEOUT;
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
        ENTER_SYS(nvmlEventSetFree);
        struct nvmlEventSet_st *es = event_set_of(set);
        if (!es)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        es->live = false;
        return leave(NVML_SUCCESS);
}

/* --- not modeled ------------------------------------------------------------------------ */

/* Per-device functions the clients call and the fake does not model: the device is
 * checked (and the rules applied) as for any call, then NOT_SUPPORTED. They read none of
 * their other arguments, so those are left unnamed behind "...". */
#define FAKE_STUB_DEV(name)                                    \
        nvmlReturn_t name(nvmlDevice_t device, ...);           \
        nvmlReturn_t name(nvmlDevice_t device, ...)            \
        {                                                      \
                ENTER_DEV(name, device, d);                    \
                (void)d;                                       \
                return leave(NVML_ERROR_NOT_SUPPORTED);        \
        }
FAKE_STUB_DEV_FUNCTIONS(FAKE_STUB_DEV)

/* --- setters ------------------------------------------------------------------------- */

/* What a setter changed, appended to $FAKE_NVML_STATE as scenario lines, so that the next
 * process (and the next nvmlInit) sees it: gpuvet tune apply, then status, then revert. */
static void record(unsigned int g, const char *key, unsigned long long value)
{
        const char *path = getenv("FAKE_NVML_STATE");
        if (!path || !*path)
                return;
        FILE *f = fopen(path, "a");
        if (!f) {
                fprintf(stderr, "fake-nvml: FAKE_NVML_STATE %s: %s\n", path, strerror(errno));
                return;
        }
        fprintf(f, "[gpu %u]\n%s = %llu\n", g, key, value);
        fclose(f);
}

/* Setters need root, as NVML's do; a MIG device handle is refused (they act on the GPU). */
static nvmlReturn_t enter_setter(enum fn_id fn, nvmlDevice_t device, struct fake_dev **d, unsigned int *g)
{
        unsigned int m;
        nvmlReturn_t r = enter_dev_ex(fn, device, false, d, g, &m);
        if (r != NVML_SUCCESS)
                return r;
        if (m != 0)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (geteuid() != 0)
                return leave(NVML_ERROR_NO_PERMISSION);
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceSetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t mode)
{
        struct fake_dev *d;
        unsigned int g;
        nvmlReturn_t r = enter_setter(FN_nvmlDeviceSetPersistenceMode, device, &d, &g);
        if (r != NVML_SUCCESS)
                return r;
        if (mode != NVML_FEATURE_ENABLED && mode != NVML_FEATURE_DISABLED)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->set[K_PERSISTENCE])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        d->u[K_PERSISTENCE] = mode == NVML_FEATURE_ENABLED;
        record(g, "persistence_mode", d->u[K_PERSISTENCE]);
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t device, unsigned int limit)
{
        struct fake_dev *d;
        unsigned int g;
        nvmlReturn_t r = enter_setter(FN_nvmlDeviceSetPowerManagementLimit, device, &d, &g);
        if (r != NVML_SUCCESS)
                return r;
        if (!d->set[K_POWER_LIMIT] || !d->set[K_POWER_MIN] || !d->set[K_POWER_MAX])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        if (limit < d->u[K_POWER_MIN] || limit > d->u[K_POWER_MAX])
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        d->u[K_POWER_LIMIT] = limit;
        record(g, "power_limit", limit);
        if (d->set[K_POWER_ENFORCED]) {
                d->u[K_POWER_ENFORCED] = limit;
                record(g, "power_enforced_limit", limit);
        }
        return leave(NVML_SUCCESS);
}

static bool in_list(const char *text, unsigned int mhz)
{
        unsigned int list[64], n = clock_list(text, list, 64);
        for (unsigned int i = 0; i < n; i++)
                if (list[i] == mhz)
                        return true;
        return false;
}

nvmlReturn_t nvmlDeviceSetApplicationsClocks(nvmlDevice_t device, unsigned int memClockMHz,
                                             unsigned int graphicsClockMHz)
{
        struct fake_dev *d;
        unsigned int g;
        nvmlReturn_t r = enter_setter(FN_nvmlDeviceSetApplicationsClocks, device, &d, &g);
        if (r != NVML_SUCCESS)
                return r;
        if (!d->set[K_APP_CLOCK_MEM] || !d->set[K_APP_CLOCK_GRAPHICS])
                return leave(NVML_ERROR_NOT_SUPPORTED);
        /* Without lists the scenario accepts any pair, as no real GPU does: keep them given. */
        if ((d->s[K_SUPPORTED_MEM_CLOCKS] && !in_list(d->s[K_SUPPORTED_MEM_CLOCKS], memClockMHz)) ||
            (d->s[K_SUPPORTED_GR_CLOCKS] && !in_list(d->s[K_SUPPORTED_GR_CLOCKS], graphicsClockMHz)))
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        d->u[K_APP_CLOCK_MEM] = memClockMHz;
        d->u[K_APP_CLOCK_GRAPHICS] = graphicsClockMHz;
        record(g, "app_clock_memory", memClockMHz);
        record(g, "app_clock_graphics", graphicsClockMHz);
        if (d->set[K_APP_CLOCK_SM]) {
                d->u[K_APP_CLOCK_SM] = graphicsClockMHz;
                record(g, "app_clock_sm", graphicsClockMHz);
        }
        return leave(NVML_SUCCESS);
}

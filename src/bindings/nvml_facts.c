/* Reading every NVML fact, per GPU in parallel, under deadlines (docs/nvml.md).
 *
 * Each GPU is read by gather_gpu() on its own thread (core/deadline.c), into a heap block
 * of its own. Every NVML call goes through NVCALL(), which brackets it with
 * deadline_begin/deadline_end and lets NVML write only into the worker's locals; the
 * put_*() helpers then store the outcome into the block. The NVLink remote PCI info is
 * asked ahead on a helper thread and taken in order (remote_pci_info, below).
 *
 * gather_gpu() also runs in "replay" mode, without calling anything: put_*() then set each
 * reading that is still NV_UNREAD to a given state. That is how a GPU abandoned inside a
 * call gets "this fact and all not yet read are NV_TIMEOUT naming the function" (replay
 * over the caller's copy, in publish), and how a failed device handle turns every fact
 * into that error: the list of facts exists once, in gather_gpu's order. */
#include "sys/nvml_facts.h"
#include "bindings/nvml.h"
#include "bindings/nvml_deadline.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/array.h"
#include "core/deadline.h"

/* gpuvet's names for NVML's values (sys/nvml_facts.h) are NVML's values. */
#define SAME(ours, nvml) _Static_assert((long long)(ours) == (long long)(nvml), #ours " differs from " #nvml);
SAME(NV_RC_SUCCESS, NVML_SUCCESS)
SAME(NV_RC_INVALID_ARGUMENT, NVML_ERROR_INVALID_ARGUMENT)
SAME(NV_RC_NOT_SUPPORTED, NVML_ERROR_NOT_SUPPORTED)
SAME(NV_RC_NO_PERMISSION, NVML_ERROR_NO_PERMISSION)
SAME(NV_RC_DRIVER_NOT_LOADED, NVML_ERROR_DRIVER_NOT_LOADED)
SAME(NV_RC_TIMEOUT, NVML_ERROR_TIMEOUT)
SAME(NV_RC_FUNCTION_NOT_FOUND, NVML_ERROR_FUNCTION_NOT_FOUND)
SAME(NV_RC_CORRUPTED_INFOROM, NVML_ERROR_CORRUPTED_INFOROM)
SAME(NV_RC_GPU_IS_LOST, NVML_ERROR_GPU_IS_LOST)
SAME(NV_RC_ARGUMENT_VERSION_MISMATCH, NVML_ERROR_ARGUMENT_VERSION_MISMATCH)
SAME(NV_RC_DEPRECATED, NVML_ERROR_DEPRECATED)
SAME(NV_RC_UNKNOWN, NVML_ERROR_UNKNOWN)
SAME(NV_ENABLED, NVML_FEATURE_ENABLED)
SAME(NV_PSTATE_UNKNOWN, NVML_PSTATE_UNKNOWN)
SAME(NV_NVLINK_MAX, NVML_NVLINK_MAX_LINKS)
SAME(NV_NVLINK5_BER_MANTISSA_SHIFT, NVML_NVLINK_BER_MANTISSA_SHIFT)
SAME(NV_NVLINK5_BER_MANTISSA_WIDTH, NVML_NVLINK_BER_MANTISSA_WIDTH)
SAME(NV_NVLINK5_BER_EXP_SHIFT, NVML_NVLINK_BER_EXP_SHIFT)
SAME(NV_NVLINK5_BER_EXP_WIDTH, NVML_NVLINK_BER_EXP_WIDTH)
/* slot_field numbers the FEC history bins from bin 0's field. */
SAME(NVML_NVL5_COUNT - 1 - NVML_NVL5_FEC_HISTORY_0,
     NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_15 - NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_0)
SAME(NV_CLOCKS_EVENT_GPU_IDLE, nvmlClocksEventReasonGpuIdle)
SAME(NV_CLOCKS_EVENT_APPLICATIONS_CLOCKS_SETTING, nvmlClocksEventReasonApplicationsClocksSetting)
SAME(NV_CLOCKS_EVENT_SW_POWER_CAP, nvmlClocksEventReasonSwPowerCap)
SAME(NV_CLOCKS_EVENT_HW_SLOWDOWN, nvmlClocksThrottleReasonHwSlowdown)
SAME(NV_CLOCKS_EVENT_SYNC_BOOST, nvmlClocksEventReasonSyncBoost)
SAME(NV_CLOCKS_EVENT_SW_THERMAL_SLOWDOWN, nvmlClocksEventReasonSwThermalSlowdown)
SAME(NV_CLOCKS_EVENT_HW_THERMAL_SLOWDOWN, nvmlClocksThrottleReasonHwThermalSlowdown)
SAME(NV_CLOCKS_EVENT_HW_POWER_BRAKE_SLOWDOWN, nvmlClocksThrottleReasonHwPowerBrakeSlowdown)
SAME(NV_CLOCKS_EVENT_DISPLAY_CLOCK_SETTING, nvmlClocksEventReasonDisplayClockSetting)
SAME(NV_FABRIC_STATE_NOT_SUPPORTED, NVML_GPU_FABRIC_STATE_NOT_SUPPORTED)
SAME(NV_FABRIC_STATE_NOT_STARTED, NVML_GPU_FABRIC_STATE_NOT_STARTED)
SAME(NV_FABRIC_STATE_IN_PROGRESS, NVML_GPU_FABRIC_STATE_IN_PROGRESS)
SAME(NV_FABRIC_STATE_COMPLETED, NVML_GPU_FABRIC_STATE_COMPLETED)
SAME(NV_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED, NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED)
SAME(NV_FABRIC_HEALTH_SUMMARY_HEALTHY, NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY)
SAME(NV_FABRIC_HEALTH_SUMMARY_UNHEALTHY, NVML_GPU_FABRIC_HEALTH_SUMMARY_UNHEALTHY)
SAME(NV_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY, NVML_GPU_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY)
SAME(NV_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW, NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW)
SAME(NV_FABRIC_HEALTH_MASK_SHIFT_ROUTE_RECOVERY, NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_RECOVERY)
SAME(NV_FABRIC_HEALTH_MASK_SHIFT_ROUTE_UNHEALTHY, NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_UNHEALTHY)
SAME(NV_FABRIC_HEALTH_MASK_SHIFT_ACCESS_TIMEOUT_RECOVERY, NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ACCESS_TIMEOUT_RECOVERY)
SAME(NV_FABRIC_HEALTH_MASK_SHIFT_INCORRECT_CONFIGURATION, NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_INCORRECT_CONFIGURATION)
SAME(NV_FABRIC_HEALTH_MASK_WIDTH_INCORRECT_CONFIGURATION, NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_INCORRECT_CONFIGURATION)
SAME(NV_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NONE, NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NONE)
#undef SAME

const char *nv_rc_name(int rc) {
        return nvml_return_name((nvmlReturn_t)rc);
}

const char *nv_rc_text(const struct nvml_lib *lib, int rc) {
        return nvml_return_text(lib, (nvmlReturn_t)rc);
}

int nv_lib_open(const char *path, struct nvml_lib **ret, char *err, size_t size) {
        return nvml_lib_load(path, ret, err, size);
}

struct nvml_lib *nv_lib_close(struct nvml_lib *lib) { return nvml_lib_free(lib); }

const char *nv_lib_path(const struct nvml_lib *lib) { return lib ? lib->dl.path : ""; }

/* How long the call that hung had run: its timeout record (system calls are gpu -1). */
static unsigned int hung_ms(const struct nvml_facts *nv, const char *fn, int gpu) {
        for (unsigned int i = 0; i < nv->n_timeouts; i++)
                if (nv->timeouts[i].gpu == gpu && nv->timeouts[i].fn && fn && strcmp(nv->timeouts[i].fn, fn) == 0)
                        return nv->timeouts[i].elapsed_ms;
        return nv->dl.call_ms;
}

const char *nvml_reading_error(const struct nvml_use *u, int gpu, unsigned char state, int rc, const char *fn,
                               char *buf, size_t size) {
        switch (state) {
        case NV_TIMEOUT:
                snprintf(buf, size, "did not return within %u ms", hung_ms(u->nv, fn, gpu));
                return buf;
        case NV_ERROR:
                if (nv_rc_not_offered(rc))
                        return NULL;
                snprintf(buf, size, "%s", nv_rc_text(u->lib, rc));
                return buf;
        default:
                return NULL;
        }
}

const char *nvml_reading_problem(const struct nvml_use *u, int gpu, unsigned char state, int rc, const char *fn,
                                 char *buf, size_t size) {
        char err[160];
        if (!nvml_reading_error(u, gpu, state, rc, fn, err, sizeof(err)))
                return NULL;
        snprintf(buf, size, "%s%s %s", fn ? fn : "an NVML call", state == NV_TIMEOUT ? "" : ":", err);
        return buf;
}

enum gctx_mode { MODE_CALL, MODE_REPLAY };
enum gctx_last {
        LAST_CALLED,      /* the call was made and returned in time: store its rc */
        LAST_NO_FUNCTION, /* the library lacks it */
        LAST_STOPPED,     /* abandoned: touch nothing */
        LAST_REPLAY,      /* replay: NV_UNREAD becomes the replay state */
};

/* The fields of a GPU's one nvmlDeviceGetFieldValues call (fields_call()), each asked only
 * when its group is read. Past FS_NVLINK_TOTAL: an NVLink error counter's total over the
 * links (+ enum nvml_nvlink_counter), then one link's state (+ link), then an NVLink5
 * counter summed over the links (+ enum nvml_nvlink5_counter). */
enum field_slot {
        FS_MEMORY_TEMP,
        FS_TLIMIT_SHUTDOWN,
        FS_TLIMIT_SLOWDOWN,
        FS_TLIMIT_MEM_MAX,
        FS_TLIMIT_GPU_MAX,
        FS_POWER_DEFAULT_LIMIT,
        FS_POWER_CURRENT_LIMIT,
        FS_POWER_MIN_LIMIT,
        FS_POWER_MAX_LIMIT,
        FS_ECC_SBE_VOL_TOTAL,
        FS_ECC_DBE_VOL_TOTAL,
        FS_ECC_SBE_AGG_TOTAL,
        FS_ECC_DBE_AGG_TOTAL,
        FS_ECC_DBE_VOL_DEV,
        FS_ECC_DBE_AGG_DEV,
        FS_RETIRED_SBE,
        FS_RETIRED_DBE,
        FS_RETIRED_PENDING,
        FS_REMAPPED_COR,
        FS_REMAPPED_UNC,
        FS_REMAPPED_PENDING,
        FS_REMAPPED_FAILURE,
        FS_RECOVERY_ACTION,
        FS_PCIE_REPLAY,
        FS_VIOL_POWER,
        FS_VIOL_SW_THERMAL,
        FS_VIOL_THERMAL,
        FS_VIOL_SYNC_BOOST,
        FS_VIOL_BOARD_LIMIT,
        FS_VIOL_LOW_UTIL,
        FS_VIOL_RELIABILITY,
        FS_VIOL_TOTAL_BASE_CLOCKS,
        FS_VIOL_HW_THERMAL,
        FS_VIOL_HW_POWER_BRAKE,
        FS_NVLINK_LINK_COUNT,
        FS_NVLINK_TOTAL,
        FS_NVLINK_STATE = FS_NVLINK_TOTAL + NVML_NVL_COUNTER_COUNT,
        FS_NVLINK5 = FS_NVLINK_STATE + NV_NVLINK_MAX,
        FS_COUNT = FS_NVLINK5 + NVML_NVL5_COUNT,
        FS_NONE = -1,
};

struct gpu_fields {
        bool made;           /* the call was made (or replayed): its outcome is below */
        enum gctx_last last; /* c->last after it */
        nvmlReturn_t rc;     /* its own answer */
        short at[FS_COUNT];  /* each slot's index in fv, -1 when not asked */
        nvmlFieldValue_t fv[FS_COUNT];
};

struct remote_prefetch;

struct gctx {
        struct deadline_worker *w; /* NULL in replay mode */
        const struct nvml_lib *lib;
        enum gctx_mode mode;
        nvml_groups groups; /* what gather_gpu reads */
        bool stop;
        unsigned char replay_state;
        int replay_rc;
        const char *replay_fn;
        enum gctx_last last;
        const char *last_fn;
        struct gpu_fields fields; /* NVML writes fv: the worker's own, as every buffer */
        /* The NVLink remote PCI info asked ahead on a helper thread (MODE_CALL only; NULL
         * when not): read_nvlinks takes its answers in order, at the place of its calls. */
        struct remote_prefetch *prefetch;
        unsigned int prefetch_next; /* the next of its links read_nvlinks takes */
        /* This GPU's GPM samples from earlier rounds (the block's copy of its carry entry);
         * NULL when the caller keeps none. */
        struct gpm_keep *gpm;
};

/* Decide whether to make the call named fn now; records why not in c->last. */
static bool call_enter(struct gctx *c, const char *fn, bool present, unsigned int limit_ms) {
        c->last_fn = fn;
        if (c->stop) {
                c->last = LAST_STOPPED;
                return false;
        }
        if (!present) {
                c->last = LAST_NO_FUNCTION;
                return false;
        }
        if (c->mode == MODE_REPLAY) {
                c->last = LAST_REPLAY;
                return false;
        }
        if (!deadline_begin(c->w, fn, limit_ms)) {
                c->stop = true;
                c->last = LAST_STOPPED;
                return false;
        }
        return true;
}

static nvmlReturn_t call_leave(struct gctx *c, nvmlReturn_t rc) {
        if (!deadline_end(c->w)) {
                /* Abandoned while inside: the caller already holds a copy of our facts
                 * saying NV_TIMEOUT; drop this late answer. */
                c->stop = true;
                c->last = LAST_STOPPED;
        } else {
                c->last = LAST_CALLED;
        }
        return rc;
}

/* Call lib->name(args) under the deadline. When it is not called (see c->last) the value
 * is meaningless and the put_*() helpers ignore it. */
#define NVCALL_MS(c, limit_ms, name, ...) \
        (call_enter((c), #name, (c)->lib->name != NULL, (limit_ms)) ? call_leave((c), (c)->lib->name(__VA_ARGS__)) \
                                                                    : NVML_ERROR_UNKNOWN)
#define NVCALL(c, name, ...) NVCALL_MS(c, 0, name, __VA_ARGS__)
/* The common case: one unsigned value from name(device, &value) into a reading. */
#define READ_U32(c, device, reading, name)                                    \
        do {                                                                  \
                unsigned int v_ = 0;                                          \
                nvmlReturn_t r_ = NVCALL(c, name, device, &v_);               \
                put_u32(c, &(reading), r_, v_);                               \
        } while (0)

/* One value of an enum type from name(device, &value) into a u32 reading. */
#define READ_AS(c, device, reading, name, type, init)                                 \
        do {                                                                          \
                type v_ = (init);                                                     \
                nvmlReturn_t r_ = NVCALL(c, name, device, &v_);                       \
                put_u32(c, &(reading), r_, (unsigned int)v_);                         \
        } while (0)

/* Every clock type (graphics, SM, memory, video) from name(device, type, &mhz) into an
 * array indexed by enum nvml_clock. */
#define READ_CLOCKS(c, device, readings, name)                                        \
        do {                                                                          \
                for (unsigned int t_ = 0; t_ < NVML_CLK_COUNT; t_++) {                \
                        unsigned int v_ = 0;                                          \
                        nvmlReturn_t r_ = NVCALL(c, name, device, (nvmlClockType_t)t_, &v_); \
                        put_u32(c, &(readings)[t_], r_, v_);                          \
                }                                                                     \
        } while (0)

/* One string from name(device, buf, size) into a reading. */
#define READ_STR(c, device, reading, name)                                            \
        do {                                                                          \
                char buf_[NV_STR_MAX] = "";                                           \
                nvmlReturn_t r_ = NVCALL(c, name, device, buf_, sizeof(buf_));        \
                put_str(c, &(reading), r_, buf_, sizeof(buf_));                       \
        } while (0)

/* Settle a reading's state/rc/fn after an NVCALL; true when its value should be stored. */
static bool settle(struct gctx *c, unsigned char *state, int *rc, const char **fn, nvmlReturn_t r) {
        switch (c->last) {
        case LAST_STOPPED:
                return false;
        case LAST_REPLAY:
                if (*state == NV_UNREAD) {
                        *state = c->replay_state;
                        *rc = c->replay_rc;
                        *fn = c->replay_fn;
                }
                return false;
        case LAST_NO_FUNCTION:
                if (c->mode == MODE_REPLAY && *state != NV_UNREAD)
                        return false;
                *state = NV_NO_FUNCTION;
                *rc = NVML_ERROR_FUNCTION_NOT_FOUND;
                *fn = c->last_fn;
                return false;
        case LAST_CALLED:
                *state = r == NVML_SUCCESS ? NV_OK : NV_ERROR;
                *rc = (int)r;
                *fn = c->last_fn;
                return r == NVML_SUCCESS;
        }
        return false;
}

#define SETTLE(c, f, r) settle((c), &(f)->state, &(f)->rc, &(f)->fn, (r))

static bool put_u32(struct gctx *c, struct nv_u32 *f, nvmlReturn_t r, unsigned int v) {
        if (SETTLE(c, f, r))
                f->v = v;
        return f->state == NV_OK;
}

static bool put_i32(struct gctx *c, struct nv_i32 *f, nvmlReturn_t r, int v) {
        if (SETTLE(c, f, r))
                f->v = v;
        return f->state == NV_OK;
}

static bool put_u64(struct gctx *c, struct nv_u64 *f, nvmlReturn_t r, unsigned long long v) {
        if (SETTLE(c, f, r))
                f->v = v;
        return f->state == NV_OK;
}

static bool put_f64(struct gctx *c, struct nv_f64 *f, nvmlReturn_t r, double v) {
        if (SETTLE(c, f, r))
                f->v = v;
        return f->state == NV_OK;
}

/* s: a buffer NVML filled (not necessarily terminated: NVML's own buffers are sized
 * exactly); at most n bytes are read. */
static bool put_str(struct gctx *c, struct nv_str *f, nvmlReturn_t r, const char *s, size_t n) {
        if (SETTLE(c, f, r)) {
                size_t len = strnlen(s, n < NV_STR_MAX - 1 ? n : NV_STR_MAX - 1);
                memcpy(f->v, s, len);
                f->v[len] = '\0';
        }
        return f->state == NV_OK;
}

static void bus_id_from_pci(const nvmlPciInfo_t *pci, char *out, unsigned int outsize) {
        char raw[sizeof(pci->busId) + 1];
        const char *src = pci->busId[0] ? pci->busId : pci->busIdLegacy;
        size_t max = pci->busId[0] ? sizeof(pci->busId) : sizeof(pci->busIdLegacy);
        size_t len = strnlen(src, max);
        memcpy(raw, src, len);
        raw[len] = '\0';
        /* An unparsable id is kept as NVML gave it: evidence beats nothing. */
        (void)nvml_bus_id_normalise(raw, out, outsize);
}

static bool nvlink_walk_ends(const struct nv_u32 *s) {
        if (s->state == NV_ERROR)
                return s->rc == NVML_ERROR_NOT_SUPPORTED || s->rc == NVML_ERROR_INVALID_ARGUMENT;
        return s->state != NV_OK;
}

/* The field and scope each slot asks, and the group that wants it. */
static void slot_field(unsigned int s, unsigned int *ret_group, unsigned int *ret_field, unsigned int *ret_scope) {
        static const struct {
                unsigned char group;
                unsigned short field;
                unsigned char scope;
        } named[FS_NVLINK_TOTAL] = {
                [FS_MEMORY_TEMP] = {NVML_GROUP_THERMAL_FIELDS, NVML_FI_DEV_MEMORY_TEMP, 0},
                [FS_TLIMIT_SHUTDOWN] = {NVML_GROUP_THERMAL_FIELDS, NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT, 0},
                [FS_TLIMIT_SLOWDOWN] = {NVML_GROUP_THERMAL_FIELDS, NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT, 0},
                [FS_TLIMIT_MEM_MAX] = {NVML_GROUP_THERMAL_FIELDS, NVML_FI_DEV_TEMPERATURE_MEM_MAX_TLIMIT, 0},
                [FS_TLIMIT_GPU_MAX] = {NVML_GROUP_THERMAL_FIELDS, NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT, 0},
                /* The GPU's own limits, as the per-device calls give them (not the module's,
                 * which on a Grace Hopper board adds the CPU). */
                [FS_POWER_DEFAULT_LIMIT] = {NVML_GROUP_POWER_DEFAULT_LIMIT, NVML_FI_DEV_POWER_DEFAULT_LIMIT,
                                            NVML_POWER_SCOPE_GPU},
                [FS_POWER_CURRENT_LIMIT] = {NVML_GROUP_POWER_ENFORCED_LIMIT, NVML_FI_DEV_POWER_CURRENT_LIMIT,
                                            NVML_POWER_SCOPE_GPU},
                [FS_POWER_MIN_LIMIT] = {NVML_GROUP_POWER_CONSTRAINTS, NVML_FI_DEV_POWER_MIN_LIMIT, NVML_POWER_SCOPE_GPU},
                [FS_POWER_MAX_LIMIT] = {NVML_GROUP_POWER_CONSTRAINTS, NVML_FI_DEV_POWER_MAX_LIMIT, NVML_POWER_SCOPE_GPU},
                [FS_ECC_SBE_VOL_TOTAL] = {NVML_GROUP_ECC_COUNTS, NVML_FI_DEV_ECC_SBE_VOL_TOTAL, 0},
                [FS_ECC_DBE_VOL_TOTAL] = {NVML_GROUP_ECC_COUNTS, NVML_FI_DEV_ECC_DBE_VOL_TOTAL, 0},
                [FS_ECC_SBE_AGG_TOTAL] = {NVML_GROUP_ECC_COUNTS, NVML_FI_DEV_ECC_SBE_AGG_TOTAL, 0},
                [FS_ECC_DBE_AGG_TOTAL] = {NVML_GROUP_ECC_COUNTS, NVML_FI_DEV_ECC_DBE_AGG_TOTAL, 0},
                [FS_ECC_DBE_VOL_DEV] = {NVML_GROUP_ECC_LOCATION, NVML_FI_DEV_ECC_DBE_VOL_DEV, 0},
                [FS_ECC_DBE_AGG_DEV] = {NVML_GROUP_ECC_LOCATION, NVML_FI_DEV_ECC_DBE_AGG_DEV, 0},
                [FS_RETIRED_SBE] = {NVML_GROUP_RETIRED_PAGES, NVML_FI_DEV_RETIRED_SBE, 0},
                [FS_RETIRED_DBE] = {NVML_GROUP_RETIRED_PAGES, NVML_FI_DEV_RETIRED_DBE, 0},
                [FS_RETIRED_PENDING] = {NVML_GROUP_RETIRED_PAGES, NVML_FI_DEV_RETIRED_PENDING, 0},
                [FS_REMAPPED_COR] = {NVML_GROUP_REMAP, NVML_FI_DEV_REMAPPED_COR, 0},
                [FS_REMAPPED_UNC] = {NVML_GROUP_REMAP, NVML_FI_DEV_REMAPPED_UNC, 0},
                [FS_REMAPPED_PENDING] = {NVML_GROUP_REMAP, NVML_FI_DEV_REMAPPED_PENDING, 0},
                [FS_REMAPPED_FAILURE] = {NVML_GROUP_REMAP, NVML_FI_DEV_REMAPPED_FAILURE, 0},
                [FS_RECOVERY_ACTION] = {NVML_GROUP_RECOVERY, NVML_FI_DEV_GET_GPU_RECOVERY_ACTION, 0},
                [FS_PCIE_REPLAY] = {NVML_GROUP_PCIE_REPLAY, NVML_FI_DEV_PCIE_REPLAY_COUNTER, 0},
                [FS_VIOL_POWER] = {NVML_GROUP_VIOLATIONS, NVML_FI_DEV_PERF_POLICY_POWER, 0},
                [FS_VIOL_SW_THERMAL] = {NVML_GROUP_VIOLATIONS, NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN, 0},
                [FS_VIOL_THERMAL] = {NVML_GROUP_VIOLATIONS, NVML_FI_DEV_PERF_POLICY_THERMAL, 0},
                [FS_VIOL_SYNC_BOOST] = {NVML_GROUP_VIOLATIONS, NVML_FI_DEV_PERF_POLICY_SYNC_BOOST, 0},
                [FS_VIOL_BOARD_LIMIT] = {NVML_GROUP_VIOLATIONS, NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT, 0},
                [FS_VIOL_LOW_UTIL] = {NVML_GROUP_VIOLATIONS, NVML_FI_DEV_PERF_POLICY_LOW_UTILIZATION, 0},
                [FS_VIOL_RELIABILITY] = {NVML_GROUP_VIOLATIONS, NVML_FI_DEV_PERF_POLICY_RELIABILITY, 0},
                [FS_VIOL_TOTAL_BASE_CLOCKS] = {NVML_GROUP_VIOLATIONS, NVML_FI_DEV_PERF_POLICY_TOTAL_BASE_CLOCKS, 0},
                [FS_VIOL_HW_THERMAL] = {NVML_GROUP_VIOLATIONS, NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN, 0},
                [FS_VIOL_HW_POWER_BRAKE] = {NVML_GROUP_VIOLATIONS, NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN,
                                            0},
                [FS_NVLINK_LINK_COUNT] = {NVML_GROUP_NVLINK, NVML_FI_DEV_NVLINK_LINK_COUNT, 0},
        };
        /* Indexed by enum nvml_nvlink_counter. */
        static const unsigned short totals[NVML_NVL_COUNTER_COUNT] = {
                NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL,   NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL,
                NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL, NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL,
                NVML_FI_DEV_NVLINK_ECC_DATA_ERROR_COUNT_TOTAL,
        };
        /* Indexed by enum nvml_nvlink5_counter. */
        static const unsigned short nvlink5[NVML_NVL5_FEC_HISTORY_0] = {
                [NVML_NVL5_SYMBOL_ERRORS] = NVML_FI_DEV_NVLINK_COUNT_SYMBOL_ERRORS,
                [NVML_NVL5_EFFECTIVE_ERRORS] = NVML_FI_DEV_NVLINK_COUNT_EFFECTIVE_ERRORS,
                [NVML_NVL5_RECOVERY_EVENTS] = NVML_FI_DEV_NVLINK_COUNT_LINK_RECOVERY_EVENTS,
                [NVML_NVL5_RECOVERY_SUCCESSFUL] = NVML_FI_DEV_NVLINK_COUNT_LINK_RECOVERY_SUCCESSFUL_EVENTS,
                [NVML_NVL5_RECOVERY_FAILED] = NVML_FI_DEV_NVLINK_COUNT_LINK_RECOVERY_FAILED_EVENTS,
                [NVML_NVL5_MALFORMED_PACKETS] = NVML_FI_DEV_NVLINK_COUNT_MALFORMED_PACKET_ERRORS,
                [NVML_NVL5_BUFFER_OVERRUN] = NVML_FI_DEV_NVLINK_COUNT_BUFFER_OVERRUN_ERRORS,
                [NVML_NVL5_RCV_ERRORS] = NVML_FI_DEV_NVLINK_COUNT_RCV_ERRORS,
                [NVML_NVL5_RCV_REMOTE_ERRORS] = NVML_FI_DEV_NVLINK_COUNT_RCV_REMOTE_ERRORS,
                [NVML_NVL5_RCV_GENERAL_ERRORS] = NVML_FI_DEV_NVLINK_COUNT_RCV_GENERAL_ERRORS,
                [NVML_NVL5_LOCAL_LINK_INTEGRITY] = NVML_FI_DEV_NVLINK_COUNT_LOCAL_LINK_INTEGRITY_ERRORS,
                [NVML_NVL5_SYMBOL_BER] = NVML_FI_DEV_NVLINK_COUNT_SYMBOL_BER,
                [NVML_NVL5_EFFECTIVE_BER] = NVML_FI_DEV_NVLINK_COUNT_EFFECTIVE_BER,
        };
        if (s < FS_NVLINK_TOTAL) {
                *ret_group = named[s].group;
                *ret_field = named[s].field;
                *ret_scope = named[s].scope;
        } else if (s < FS_NVLINK_STATE) {
                *ret_group = NVML_GROUP_NVLINK;
                *ret_field = totals[s - FS_NVLINK_TOTAL];
                *ret_scope = 0;
        } else if (s < FS_NVLINK5) {
                *ret_group = NVML_GROUP_NVLINK;
                *ret_field = NVML_FI_DEV_NVLINK_GET_STATE;
                *ret_scope = s - FS_NVLINK_STATE; /* the link */
        } else {
                unsigned int k = s - FS_NVLINK5;
                *ret_group = NVML_GROUP_NVLINK;
                *ret_field = k >= NVML_NVL5_FEC_HISTORY_0
                                     ? NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_0 + (k - NVML_NVL5_FEC_HISTORY_0)
                                     : nvlink5[k];
                *ret_scope = UINT_MAX; /* NVLink5's aggregate over the links */
        }
}

static void remote_prefetch_start(struct gctx *c, nvmlDevice_t d);

/* A GPU's one nvmlDeviceGetFieldValues call, made by the first reader that needs it (in
 * gather_gpu's order, so a hang in it is where a hang in the first field reader was): it
 * asks every field of every group being read, and the readers after it take their fields
 * from it. Leaves c->last and c->last_fn as that call left them (also when called again
 * after other calls), so that put_*() store its outcome; true when it returned
 * NVML_SUCCESS in time, each field then holding its own answer. */
static bool fields_call(struct gctx *c, nvmlDevice_t d) {
        struct gpu_fields *f = &c->fields;
        if (!f->made) {
                int n = 0;
                for (unsigned int s = 0; s < FS_COUNT; s++) {
                        unsigned int group, field, scope;
                        slot_field(s, &group, &field, &scope);
                        f->at[s] = -1;
                        if (!(c->groups & nvml_group_bit(group)))
                                continue;
                        memset(&f->fv[n], 0, sizeof(f->fv[n]));
                        f->fv[n].fieldId = field;
                        f->fv[n].scopeId = scope;
                        f->at[s] = (short)n++;
                }
                f->rc = NVCALL(c, nvmlDeviceGetFieldValues, d, n, f->fv);
                f->last = c->last;
                f->made = true;
                if (c->mode == MODE_CALL && f->last == LAST_CALLED && f->rc == NVML_SUCCESS)
                        remote_prefetch_start(c, d);
        } else if (c->stop) {
                c->last = LAST_STOPPED;
        } else {
                c->last = f->last;
                c->last_fn = "nvmlDeviceGetFieldValues";
        }
        return c->last == LAST_CALLED && f->rc == NVML_SUCCESS;
}

/* A slot's answer, or NULL when the call did not answer (see c->last) or did not ask it. */
static const nvmlFieldValue_t *field_of(struct gctx *c, nvmlDevice_t d, enum field_slot s) {
        if (!fields_call(c, d) || c->fields.at[s] < 0)
                return NULL;
        return &c->fields.fv[c->fields.at[s]];
}

/* A field's value as a signed number, whatever type NVML chose for it. */
static long long field_value(const nvmlFieldValue_t *fv) {
        switch (fv->valueType) {
        case NVML_VALUE_TYPE_DOUBLE: return (long long)(fv->value.dVal < 0 ? fv->value.dVal - 0.5 : fv->value.dVal + 0.5);
        case NVML_VALUE_TYPE_UNSIGNED_INT: return fv->value.uiVal;
        case NVML_VALUE_TYPE_UNSIGNED_LONG: return (long long)fv->value.ulVal;
        case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: return (long long)fv->value.ullVal;
        case NVML_VALUE_TYPE_SIGNED_LONG_LONG: return fv->value.sllVal;
        case NVML_VALUE_TYPE_SIGNED_INT: return fv->value.siVal;
        case NVML_VALUE_TYPE_UNSIGNED_SHORT: return fv->value.usVal;
        }
        return fv->value.siVal;
}

/* The value of a field that stands for a whole call's answer (the memory health, PCIe
 * replay and power limit fields): true only when it answered NVML_SUCCESS with a count in
 * 0..max. Anything else (NOT_SUPPORTED or INVALID_ARGUMENT from a driver that lacks the
 * field, any other error, a value out of range, no call) sends the reader to the call the
 * field stands for, whose own answer is then the reading's: the reading is what that call
 * gives, and names the function that gave it. */
static bool field_count(struct gctx *c, nvmlDevice_t d, enum field_slot s, unsigned long long max,
                        unsigned long long *ret) {
        const nvmlFieldValue_t *fv = field_of(c, d, s);
        if (!fv || fv->nvmlReturn != NVML_SUCCESS)
                return false;
        unsigned long long v;
        switch (fv->valueType) {
        case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: v = fv->value.ullVal; break;
        case NVML_VALUE_TYPE_UNSIGNED_LONG: v = fv->value.ulVal; break;
        case NVML_VALUE_TYPE_UNSIGNED_INT: v = fv->value.uiVal; break;
        case NVML_VALUE_TYPE_UNSIGNED_SHORT: v = fv->value.usVal; break;
        case NVML_VALUE_TYPE_SIGNED_INT:
        case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
        case NVML_VALUE_TYPE_DOUBLE: {
                long long sv = field_value(fv);
                if (sv < 0)
                        return false;
                v = (unsigned long long)sv;
                break;
        }
        default: return false;
        }
        if (v > max)
                return false;
        *ret = v;
        return true;
}

/* Readings a field answered: as if its own call had returned them, naming the call that did. */
static void put_from_fields(struct nv_u32 *f, unsigned int v) {
        *f = (struct nv_u32){.state = NV_OK, .rc = NVML_SUCCESS, .fn = "nvmlDeviceGetFieldValues", .v = v};
}

static void put_u64_from_fields(struct nv_u64 *f, unsigned long long v) {
        *f = (struct nv_u64){.state = NV_OK, .rc = NVML_SUCCESS, .fn = "nvmlDeviceGetFieldValues", .v = v};
}

/* One u32 reading from its field when that answers (max: the largest value it may hold),
 * else false: the caller makes the reading's own call. */
static bool u32_from_field(struct gctx *c, nvmlDevice_t d, struct nv_u32 *f, enum field_slot s, unsigned int max) {
        unsigned long long v;
        if (!field_count(c, d, s, max, &v))
                return false;
        put_from_fields(f, (unsigned int)v);
        return true;
}

/* HBM temperature and the T.Limit thresholds: each field carries its own answer
 * (NOT_SUPPORTED where the board or driver lacks it), and a failed call is every
 * reading's answer: these fields have no other call. A value no sensor gives (past +-1000
 * C) is stored as NVML_ERROR_UNKNOWN. */
static void read_thermal_fields(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        static const enum field_slot slots[5] = {FS_MEMORY_TEMP, FS_TLIMIT_SHUTDOWN, FS_TLIMIT_SLOWDOWN,
                                                 FS_TLIMIT_MEM_MAX, FS_TLIMIT_GPU_MAX};
        struct nv_i32 *tlimits[4] = {&g->tlimit_shutdown_c, &g->tlimit_slowdown_c, &g->tlimit_mem_max_c,
                                     &g->tlimit_gpu_max_c};
        nvmlFieldValue_t fv[5];
        memset(fv, 0, sizeof(fv));
        if (fields_call(c, d))
                for (int i = 0; i < 5; i++)
                        fv[i] = c->fields.fv[c->fields.at[slots[i]]];
        nvmlReturn_t r = c->fields.rc;
        nvmlReturn_t own = r == NVML_SUCCESS ? fv[0].nvmlReturn : r;
        long long t = field_value(&fv[0]);
        if (own == NVML_SUCCESS && (t < 0 || t > 1000))
                own = NVML_ERROR_UNKNOWN;
        put_u32(c, &g->temp_memory_c, own, own == NVML_SUCCESS ? (unsigned int)t : 0);
        for (int i = 0; i < 4; i++) {
                own = r == NVML_SUCCESS ? fv[i + 1].nvmlReturn : r;
                long long v = field_value(&fv[i + 1]);
                if (own == NVML_SUCCESS && (v < -1000 || v > 1000))
                        own = NVML_ERROR_UNKNOWN;
                put_i32(c, tlimits[i], own, own == NVML_SUCCESS ? (int)v : 0);
        }
}

/* What the field call tells of a GPU's NVLinks: how many there are, the state of each
 * (Hopper and later answer NVLINK_GET_STATE per link), and each error counter summed over
 * the links. A counter whose total is 0 is 0 on every link, so on a healthy GPU the 5 x 18
 * per-link counter calls are not made; anything the fields do not answer is asked link by
 * link, as drivers without them need. */
struct nvlink_fields {
        bool have_count;
        unsigned int count;
        bool have_state[NV_NVLINK_MAX];
        unsigned int state[NV_NVLINK_MAX];
        bool total_zero[NVML_NVL_COUNTER_COUNT];
        /* The total answered NOT_SUPPORTED where an NVLink5 counter answered: a Blackwell
         * GPU, whose per-link counters NVML documents as unsupported, so they are not
         * asked link by link either. */
        bool total_unsupported[NVML_NVL_COUNTER_COUNT];
};

static void read_nvlink_fields(struct gctx *c, nvmlDevice_t d, struct nvlink_fields *out) {
        memset(out, 0, sizeof(*out));
        if (!fields_call(c, d))
                return;
        const nvmlFieldValue_t *fv = field_of(c, d, FS_NVLINK_LINK_COUNT);
        if (fv && fv->nvmlReturn == NVML_SUCCESS) {
                long long n = field_value(fv);
                out->have_count = n >= 0 && n <= NV_NVLINK_MAX;
                out->count = out->have_count ? (unsigned int)n : 0;
        }
        const nvmlFieldValue_t *nvl5 = field_of(c, d, (enum field_slot)(FS_NVLINK5 + NVML_NVL5_SYMBOL_ERRORS));
        bool nvlink5 = nvl5 && nvl5->nvmlReturn == NVML_SUCCESS;
        for (int k = 0; k < NVML_NVL_COUNTER_COUNT; k++) {
                fv = field_of(c, d, (enum field_slot)(FS_NVLINK_TOTAL + k));
                out->total_zero[k] = fv && fv->nvmlReturn == NVML_SUCCESS && field_value(fv) == 0;
                out->total_unsupported[k] = nvlink5 && fv && fv->nvmlReturn == NVML_ERROR_NOT_SUPPORTED;
        }
        for (unsigned int l = 0; l < NV_NVLINK_MAX; l++) {
                fv = field_of(c, d, (enum field_slot)(FS_NVLINK_STATE + l));
                long long st = fv ? field_value(fv) : -1;
                /* Inactive (0) and active (1) are nvmlDeviceGetNvLinkState's own answers; a
                 * sleeping link, or one active without traffic, is asked that way. */
                out->have_state[l] = fv && fv->nvmlReturn == NVML_SUCCESS &&
                                     (st == NVML_FEATURE_DISABLED || st == NVML_FEATURE_ENABLED);
                out->state[l] = (unsigned int)st;
        }
}

/* --- the NVLink remote PCI info, asked ahead ---------------------------------------------
 *
 * nvmlDeviceGetNvLinkRemotePciInfo_v2 is one call per active link (18 on an H100, a quarter
 * of a GPU's calls), and the links it is asked for are known as soon as the field call has
 * answered their states, long before read_nvlinks comes to them. So a helper thread asks
 * them then, in link order, while the GPU's worker goes on with the other readings; the
 * worker takes each answer where it would have made the call (remote_pci_info), as if it
 * had: its deadline counts from the helper's call's start (deadline_begin_at), a call past
 * it abandons the GPU naming the function, and the facts are stored by the worker, in
 * gather_gpu's order, so a hang anywhere gives the same facts as the calls made in line.
 * Only links the fields answered, from link 0 without a gap, are asked ahead: exactly the
 * remote calls read_nvlinks makes unless the worker stops. Answers the worker never takes
 * (it was abandoned before) are dropped; the helper asks nothing more once the worker is
 * done with it.
 *
 * Memory: the helper writes only this block, under its mutex, and NVML writes only the
 * helper's locals; the worker copies answers out under the mutex into its own locals. The
 * block is freed by whichever of the two lets go of it last. */
struct remote_slot {
        bool started, done;
        unsigned long long start_ms, end_ms;
        nvmlReturn_t rc;
        nvmlPciInfo_t pci;
};

struct remote_prefetch {
        pthread_mutex_t mu;
        pthread_cond_t cv;
        unsigned int refs; /* the worker and the helper */
        bool cancelled;    /* the worker is done with it: ask nothing more */
        const struct nvml_lib *lib;
        nvmlDevice_t device;
        pthread_t thread;
        unsigned int n;
        unsigned int link[NV_NVLINK_MAX]; /* the links asked, in order */
        struct remote_slot slot[NV_NVLINK_MAX];
};

static void prefetch_unref(struct remote_prefetch *pf) {
        pthread_mutex_lock(&pf->mu);
        unsigned int refs = --pf->refs;
        pthread_mutex_unlock(&pf->mu);
        if (refs > 0)
                return;
        pthread_cond_destroy(&pf->cv);
        pthread_mutex_destroy(&pf->mu);
        free(pf);
}

static void *prefetch_main(void *arg) {
        struct remote_prefetch *pf = arg;
        for (unsigned int k = 0; k < pf->n; k++) {
                pthread_mutex_lock(&pf->mu);
                bool cancelled = pf->cancelled;
                if (!cancelled) {
                        pf->slot[k].started = true;
                        pf->slot[k].start_ms = deadline_now_ms();
                        pthread_cond_broadcast(&pf->cv);
                }
                pthread_mutex_unlock(&pf->mu);
                if (cancelled)
                        break;
                nvmlPciInfo_t pci;
                memset(&pci, 0, sizeof(pci));
                nvmlReturn_t rc = pf->lib->nvmlDeviceGetNvLinkRemotePciInfo_v2(pf->device, pf->link[k], &pci);
                pthread_mutex_lock(&pf->mu);
                pf->slot[k].rc = rc;
                pf->slot[k].pci = pci;
                pf->slot[k].end_ms = deadline_now_ms();
                if (pf->slot[k].end_ms == 0)
                        pf->slot[k].end_ms = 1; /* 0 means "not returned" to deadline_begin_at */
                pf->slot[k].done = true;
                pthread_cond_broadcast(&pf->cv);
                pthread_mutex_unlock(&pf->mu);
        }
        prefetch_unref(pf);
        deadline_thread_leave();
        return NULL;
}

/* After the field call answered: the links whose state it gave, from 0 without a gap, that
 * are active. Starts the helper when there is one; without a thread the worker makes the
 * calls itself. Leaves c->last as the field call left it. */
static void remote_prefetch_start(struct gctx *c, nvmlDevice_t d) {
        if (c->prefetch || !(c->groups & nvml_group_bit(NVML_GROUP_NVLINK)) || !d ||
            !c->lib->nvmlDeviceGetNvLinkRemotePciInfo_v2)
                return;
        enum gctx_last last = c->last;
        const char *last_fn = c->last_fn;
        struct nvlink_fields fields;
        read_nvlink_fields(c, d, &fields);
        c->last = last;
        c->last_fn = last_fn;
        unsigned int links[NV_NVLINK_MAX], n = 0;
        for (unsigned int l = 0; fields.have_count && l < fields.count && fields.have_state[l]; l++)
                if (fields.state[l] == NVML_FEATURE_ENABLED)
                        links[n++] = l;
        if (n == 0)
                return;
        struct remote_prefetch *pf = calloc(1, sizeof(*pf));
        if (!pf)
                return;
        if (pthread_mutex_init(&pf->mu, NULL) != 0) {
                free(pf);
                return;
        }
        if (pthread_cond_init(&pf->cv, NULL) != 0) {
                pthread_mutex_destroy(&pf->mu);
                free(pf);
                return;
        }
        pf->refs = 2;
        pf->lib = c->lib;
        pf->device = d;
        pf->n = n;
        memcpy(pf->link, links, n * sizeof(links[0]));
        /* The worker blocks every signal (core/deadline.c), and the helper inherits that.
         * It counts among deadline_threads_alive: it may be stuck in NVML as a worker may. */
        deadline_thread_enter();
        if (pthread_create(&pf->thread, NULL, prefetch_main, pf) != 0) {
                deadline_thread_leave();
                pf->refs = 1;
                prefetch_unref(pf);
                return;
        }
        c->prefetch = pf;
        c->prefetch_next = 0;
}

/* The worker is done with the helper (gather_gpu's end, however it ended). A helper between
 * calls stops now and is joined; one inside a call (the worker was abandoned meanwhile:
 * that call may never return) is left to finish, or not, on its own. */
static void remote_prefetch_end(struct gctx *c) {
        struct remote_prefetch *pf = c->prefetch;
        if (!pf)
                return;
        c->prefetch = NULL;
        pthread_mutex_lock(&pf->mu);
        pf->cancelled = true;
        bool in_call = false;
        for (unsigned int k = 0; k < pf->n; k++)
                in_call |= pf->slot[k].started && !pf->slot[k].done;
        pthread_mutex_unlock(&pf->mu);
        if (in_call)
                pthread_detach(pf->thread);
        else
                pthread_join(pf->thread, NULL);
        prefetch_unref(pf);
}

/* nvmlDeviceGetNvLinkRemotePciInfo_v2(d, link, ret) as NVCALL would make it, or its answer
 * from the helper when it asked this link ahead. */
static nvmlReturn_t remote_pci_info(struct gctx *c, nvmlDevice_t d, unsigned int link, nvmlPciInfo_t *ret) {
        struct remote_prefetch *pf = c->prefetch;
        if (!pf || c->mode != MODE_CALL || c->stop || c->prefetch_next >= pf->n || pf->link[c->prefetch_next] != link)
                return NVCALL(c, nvmlDeviceGetNvLinkRemotePciInfo_v2, d, link, ret);
        struct remote_slot *slot = &pf->slot[c->prefetch_next++];
        c->last_fn = "nvmlDeviceGetNvLinkRemotePciInfo_v2";
        /* The helper starts a link as soon as the previous one answered, which this worker
         * took already: a short wait for our own code, not for NVML. */
        pthread_mutex_lock(&pf->mu);
        while (!slot->started)
                pthread_cond_wait(&pf->cv, &pf->mu);
        unsigned long long start = slot->start_ms, end = slot->done ? slot->end_ms : 0;
        pthread_mutex_unlock(&pf->mu);
        if (!deadline_begin_at(c->w, c->last_fn, 0, start, end)) {
                c->stop = true;
                c->last = LAST_STOPPED;
                pthread_mutex_lock(&pf->mu);
                pf->cancelled = true;
                pthread_mutex_unlock(&pf->mu);
                return NVML_ERROR_UNKNOWN;
        }
        /* Inside the call as the deadline sees it: abandoned meanwhile, deadline_end says so. */
        pthread_mutex_lock(&pf->mu);
        while (!slot->done)
                pthread_cond_wait(&pf->cv, &pf->mu);
        nvmlReturn_t rc = slot->rc;
        *ret = slot->pci;
        pthread_mutex_unlock(&pf->mu);
        rc = call_leave(c, rc);
        if (c->stop) {
                /* Abandoned while it waited: the helper need ask nothing more. */
                pthread_mutex_lock(&pf->mu);
                pf->cancelled = true;
                pthread_mutex_unlock(&pf->mu);
        }
        return rc;
}

/* The head of a reading, for a total that cannot be known: its state, rc and fn. */
static void nvlink_total_unknown(struct nv_u64 *t, unsigned char state, int rc, const char *fn) {
        *t = (struct nv_u64){.state = state, .rc = rc, .fn = fn};
}

/* nvlink_errors_total from the per-link readings (nvml_facts.h). Called once the walk is
 * over, on the worker and again on a replay (whose timeouts then reach the totals); never
 * on a worker that was abandoned, whose published copy it must not touch. */
static void sum_nvlink_errors(struct nvml_gpu *g) {
        const struct nv_u32 *end = &g->nvlink_end;
        for (unsigned int k = 0; k < NVML_NVL_COUNTER_COUNT; k++) {
                struct nv_u64 *t = &g->nvlink_errors_total[k];
                /* No link at all (NOT_SUPPORTED on a board without NVLink), or a walk cut
                 * short by a hung call or a missing function: links past it are unknown. */
                if (g->nvlink_count == 0 || end->state == NV_TIMEOUT || end->state == NV_NO_FUNCTION) {
                        nvlink_total_unknown(t, end->state == NV_UNREAD ? NV_ERROR : end->state,
                                             end->state == NV_UNREAD ? NVML_ERROR_NOT_SUPPORTED : end->rc,
                                             end->fn ? end->fn : "nvmlDeviceGetNvLinkState");
                        continue;
                }
                *t = (struct nv_u64){.state = NV_OK, .rc = NVML_SUCCESS, .fn = "nvmlDeviceGetNvLinkErrorCounter"};
                for (unsigned int l = 0; l < g->nvlink_count && l < NV_NVLINK_MAX; l++) {
                        const struct nvml_nvlink *link = &g->nvlink[l];
                        if (!nv_ok(link->state)) {
                                nvlink_total_unknown(t, link->state.state, link->state.rc, link->state.fn);
                                break;
                        }
                        if (link->state.v != NVML_FEATURE_ENABLED)
                                continue;
                        const struct nv_u64 *e = &link->errors[k];
                        if (!nv_ok(*e)) {
                                nvlink_total_unknown(t, e->state, e->rc, e->fn);
                                break;
                        }
                        t->v += e->v;
                }
        }
}

/* NVLink5's counters, each its field's own answer (the call's, when the call failed). */
static void read_nvlink5_fields(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        bool called = fields_call(c, d);
        for (int k = 0; k < NVML_NVL5_COUNT; k++) {
                const nvmlFieldValue_t *fv = called ? field_of(c, d, (enum field_slot)(FS_NVLINK5 + k)) : NULL;
                if (called && !fv)
                        continue; /* not asked: stays NV_UNREAD */
                nvmlReturn_t r = fv ? fv->nvmlReturn : c->fields.rc;
                unsigned long long v = 0;
                if (fv && r == NVML_SUCCESS) {
                        long long sv = field_value(fv);
                        if (fv->valueType == NVML_VALUE_TYPE_UNSIGNED_LONG_LONG)
                                v = fv->value.ullVal;
                        else if (sv >= 0)
                                v = (unsigned long long)sv;
                        else
                                r = NVML_ERROR_UNKNOWN; /* no count is negative */
                }
                put_u64(c, &g->nvlink5[k], r, v);
        }
}

static void read_nvlinks(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        static const nvmlNvLinkErrorCounter_t counters[NVML_NVL_COUNTER_COUNT] = {
                NVML_NVLINK_ERROR_DL_REPLAY,    NVML_NVLINK_ERROR_DL_RECOVERY, NVML_NVLINK_ERROR_DL_CRC_FLIT,
                NVML_NVLINK_ERROR_DL_CRC_DATA, NVML_NVLINK_ERROR_DL_ECC_DATA,
        };
        struct nvlink_fields fields;
        read_nvlink_fields(c, d, &fields);
        read_nvlink5_fields(c, g, d);
        unsigned int count = 0;
        for (unsigned int i = 0; i < NVML_NVLINK_MAX_LINKS && !c->stop; i++) {
                struct nvml_nvlink *l = &g->nvlink[i];
                /* Past the link count the walk's end is asked the old way: the answer that
                 * ends it (NOT_SUPPORTED) is then NVML's own. */
                if (fields.have_count && i < fields.count && fields.have_state[i]) {
                        put_from_fields(&l->state, fields.state[i]);
                } else {
                        nvmlEnableState_t st = NVML_FEATURE_DISABLED;
                        nvmlReturn_t r = NVCALL(c, nvmlDeviceGetNvLinkState, d, i, &st);
                        put_u32(c, &l->state, r, (unsigned int)st);
                }
                if (nvlink_walk_ends(&l->state)) {
                        g->nvlink_end = l->state;
                        break;
                }
                count = i + 1;
                if (!nv_ok(l->state) || l->state.v != NVML_FEATURE_ENABLED)
                        continue;
                for (unsigned int k = 0; k < NVML_NVL_COUNTER_COUNT && !c->stop; k++) {
                        if (fields.total_zero[k]) {
                                put_u64_from_fields(&l->errors[k], 0);
                                continue;
                        }
                        if (fields.total_unsupported[k]) {
                                l->errors[k] = (struct nv_u64){.state = NV_ERROR, .rc = NVML_ERROR_NOT_SUPPORTED,
                                                               .fn = "nvmlDeviceGetFieldValues"};
                                continue;
                        }
                        unsigned long long v = 0;
                        nvmlReturn_t r = NVCALL(c, nvmlDeviceGetNvLinkErrorCounter, d, i, counters[k], &v);
                        put_u64(c, &l->errors[k], r, v);
                }
                nvmlPciInfo_t pci;
                memset(&pci, 0, sizeof(pci));
                char bus[NV_STR_MAX] = "";
                nvmlReturn_t r = remote_pci_info(c, d, i, &pci);
                if (c->last == LAST_CALLED && r == NVML_SUCCESS)
                        bus_id_from_pci(&pci, bus, sizeof(bus));
                put_str(c, &l->remote_bus_id, r, bus, sizeof(bus));
                put_u32(c, &l->remote_device_id, r, pci.pciDeviceId);
        }
        if (!c->stop) {
                g->nvlink_count = count;
                sum_nvlink_errors(g);
        }
}

/* The _v3 process lists: ask the count first, then read with some slack, growing when
 * processes started meanwhile (INSUFFICIENT_SIZE again). */
static void read_procs(struct gctx *c, struct nvml_procs *p, nvmlDevice_t d, bool compute) {
        unsigned int count = 0;
        nvmlReturn_t r = compute ? NVCALL(c, nvmlDeviceGetComputeRunningProcesses_v3, d, &count, NULL)
                                 : NVCALL(c, nvmlDeviceGetGraphicsRunningProcesses_v3, d, &count, NULL);
        struct nvml_process *out = NULL;
        unsigned int n_out = 0;

        for (unsigned int attempt = 0; c->last == LAST_CALLED && r == NVML_ERROR_INSUFFICIENT_SIZE && attempt < 4;
             attempt++) {
                unsigned int cap = count + 8 + attempt * 32;
                /* NVML writes into buf: it belongs to this worker, never to the block, until
                 * the call returned in time (an abandoned call may write it later). */
                nvmlProcessInfo_t *buf = calloc(cap, sizeof(*buf));
                if (!buf) {
                        r = NVML_ERROR_MEMORY;
                        break;
                }
                count = cap;
                r = compute ? NVCALL(c, nvmlDeviceGetComputeRunningProcesses_v3, d, &count, buf)
                            : NVCALL(c, nvmlDeviceGetGraphicsRunningProcesses_v3, d, &count, buf);
                if (c->last == LAST_CALLED && r == NVML_SUCCESS) {
                        if (count > cap)
                                count = cap;
                        out = count ? calloc(count, sizeof(*out)) : NULL;
                        if (count && !out) {
                                r = NVML_ERROR_MEMORY;
                        } else {
                                for (unsigned int i = 0; i < count; i++) {
                                        out[i].pid = buf[i].pid;
                                        out[i].used_bytes = buf[i].usedGpuMemory;
                                        out[i].gpu_instance_id = buf[i].gpuInstanceId;
                                        out[i].compute_instance_id = buf[i].computeInstanceId;
                                }
                                n_out = count;
                        }
                }
                free(buf);
        }
        if (c->last == LAST_CALLED && r == NVML_SUCCESS && !out)
                n_out = 0; /* the count query said: no processes */
        if (SETTLE(c, p, r)) {
                free(p->v);
                p->v = out;
                p->count = n_out;
        } else {
                free(out);
        }
}

static void read_name(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        READ_STR(c, d, g->name, nvmlDeviceGetName);
}

static void read_uuid(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        READ_STR(c, d, g->uuid, nvmlDeviceGetUUID);
}

static void read_serial(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        READ_STR(c, d, g->serial, nvmlDeviceGetSerial);
}

static void read_pci_info(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlReturn_t r;
        nvmlPciInfo_t pci;
        memset(&pci, 0, sizeof(pci));
        char bus[NV_STR_MAX] = "";
        r = NVCALL(c, nvmlDeviceGetPciInfo_v3, d, &pci);
        if (c->last == LAST_CALLED && r == NVML_SUCCESS)
                bus_id_from_pci(&pci, bus, sizeof(bus));
        put_str(c, &g->pci_bus_id, r, bus, sizeof(bus));
        put_u32(c, &g->pci_device_id, r, pci.pciDeviceId);
        put_u32(c, &g->pci_subsystem_id, r, pci.pciSubSystemId);
}

static void read_vbios(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        READ_STR(c, d, g->vbios, nvmlDeviceGetVbiosVersion);
}

static void read_inforom(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        READ_STR(c, d, g->inforom_image, nvmlDeviceGetInforomImageVersion);
        nvmlReturn_t r = NVCALL(c, nvmlDeviceValidateInforom, d);
        put_u32(c, &g->inforom_valid, r, 1);
}

static void read_minor_number(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        READ_U32(c, d, g->minor_number, nvmlDeviceGetMinorNumber);
}

static void read_brand(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        READ_AS(c, d, g->brand, nvmlDeviceGetBrand, nvmlBrandType_t, NVML_BRAND_UNKNOWN);
}

static void read_architecture(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        READ_AS(c, d, g->architecture, nvmlDeviceGetArchitecture, nvmlDeviceArchitecture_t, 0);
}

static void read_compute_capability(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlReturn_t r;
        int major = 0, minor = 0;
        r = NVCALL(c, nvmlDeviceGetCudaComputeCapability, d, &major, &minor);
        put_i32(c, &g->cc_major, r, major);
        put_i32(c, &g->cc_minor, r, minor);
}

/* Memory: v2 adds "reserved"; fall back to v1 when v2 is missing or refuses. */
static void read_memory(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlReturn_t r;
        nvmlMemory_v2_t m2;
        memset(&m2, 0, sizeof(m2));
        m2.version = nvmlMemory_v2;
        r = NVCALL(c, nvmlDeviceGetMemoryInfo_v2, d, &m2);
        if (put_u64(c, &g->mem_reserved_bytes, r, m2.reserved)) {
                put_u64(c, &g->mem_total_bytes, r, m2.total);
                put_u64(c, &g->mem_used_bytes, r, m2.used);
                put_u64(c, &g->mem_free_bytes, r, m2.free);
        } else if (g->mem_reserved_bytes.state != NV_TIMEOUT) {
                nvmlMemory_t m1;
                memset(&m1, 0, sizeof(m1));
                r = NVCALL(c, nvmlDeviceGetMemoryInfo, d, &m1);
                put_u64(c, &g->mem_total_bytes, r, m1.total);
                put_u64(c, &g->mem_used_bytes, r, m1.used);
                put_u64(c, &g->mem_free_bytes, r, m1.free);
        } else {
                /* The v2 call hung (replay): the rest of memory follows it. */
                put_u64(c, &g->mem_total_bytes, r, 0);
                put_u64(c, &g->mem_used_bytes, r, 0);
                put_u64(c, &g->mem_free_bytes, r, 0);
        }
}

static void read_bar1(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlReturn_t r;
        nvmlBAR1Memory_t b;
        memset(&b, 0, sizeof(b));
        r = NVCALL(c, nvmlDeviceGetBAR1MemoryInfo, d, &b);
        put_u64(c, &g->bar1_total_bytes, r, b.bar1Total);
        put_u64(c, &g->bar1_used_bytes, r, b.bar1Used);
        put_u64(c, &g->bar1_free_bytes, r, b.bar1Free);
}

static void read_temperature(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlReturn_t r;
        unsigned int v = 0;
        r = NVCALL(c, nvmlDeviceGetTemperature, d, NVML_TEMPERATURE_GPU, &v);
        put_u32(c, &g->temp_c, r, v);
}

static void read_temperature_thresholds(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlReturn_t r;
        static const struct {
                nvmlTemperatureThresholds_t t;
                size_t off;
        } th[] = {
                {NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, offsetof(struct nvml_gpu, temp_slowdown_c)},
                {NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, offsetof(struct nvml_gpu, temp_shutdown_c)},
                {NVML_TEMPERATURE_THRESHOLD_GPU_MAX, offsetof(struct nvml_gpu, temp_gpu_max_c)},
                {NVML_TEMPERATURE_THRESHOLD_MEM_MAX, offsetof(struct nvml_gpu, temp_mem_max_c)},
        };
        for (size_t i = 0; i < ARRAY_COUNT(th); i++) {
                unsigned int v = 0;
                r = NVCALL(c, nvmlDeviceGetTemperatureThreshold, d, th[i].t, &v);
                put_u32(c, (struct nv_u32 *)((char *)g + th[i].off), r, v);
        }
}

static void read_temperature_margin(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlReturn_t r;
        nvmlMarginTemperature_t m = {.version = nvmlMarginTemperature_v1};
        r = NVCALL(c, nvmlDeviceGetMarginTemperature, d, &m);
        put_i32(c, &g->temp_margin_c, r, m.marginTemperature);
}

static void read_power_draw(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        READ_U32(c, d, g->power_mw, nvmlDeviceGetPowerUsage);
}

static void read_energy(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        unsigned long long mj = 0;
        nvmlReturn_t r = NVCALL(c, nvmlDeviceGetTotalEnergyConsumption, d, &mj);
        put_u64(c, &g->energy_mj, r, mj);
}

static void read_power_limit(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        READ_U32(c, d, g->power_limit_mw, nvmlDeviceGetPowerManagementLimit);
}

/* The limits below come from the field call where it answers (docs/nvml.md), else from
 * their own calls. */
static void read_power_default_limit(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        if (!u32_from_field(c, d, &g->power_default_limit_mw, FS_POWER_DEFAULT_LIMIT, UINT_MAX))
                READ_U32(c, d, g->power_default_limit_mw, nvmlDeviceGetPowerManagementDefaultLimit);
}

static void read_power_enforced_limit(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        if (!u32_from_field(c, d, &g->power_enforced_limit_mw, FS_POWER_CURRENT_LIMIT, UINT_MAX))
                READ_U32(c, d, g->power_enforced_limit_mw, nvmlDeviceGetEnforcedPowerLimit);
}

/* Min and max are one call's answer: both from the fields, or both from the call. */
static void read_power_constraints(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlReturn_t r;
        unsigned long long fmin, fmax;
        if (field_count(c, d, FS_POWER_MIN_LIMIT, UINT_MAX, &fmin) &&
            field_count(c, d, FS_POWER_MAX_LIMIT, UINT_MAX, &fmax)) {
                put_from_fields(&g->power_min_limit_mw, (unsigned int)fmin);
                put_from_fields(&g->power_max_limit_mw, (unsigned int)fmax);
                return;
        }
        unsigned int lo = 0, hi = 0;
        r = NVCALL(c, nvmlDeviceGetPowerManagementLimitConstraints, d, &lo, &hi);
        put_u32(c, &g->power_min_limit_mw, r, lo);
        put_u32(c, &g->power_max_limit_mw, r, hi);
}

static void read_clocks(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        READ_CLOCKS(c, d, g->clock_mhz, nvmlDeviceGetClockInfo);
}

static void read_clocks_max(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        READ_CLOCKS(c, d, g->clock_max_mhz, nvmlDeviceGetMaxClockInfo);
}

static void read_clocks_app(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        READ_CLOCKS(c, d, g->clock_app_mhz, nvmlDeviceGetApplicationsClock);
}

static void read_clocks_default_app(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        READ_CLOCKS(c, d, g->clock_default_app_mhz, nvmlDeviceGetDefaultApplicationsClock);
}

/* "Throttle" was renamed "event" in CUDA 12.2's NVML; older drivers only have the old
 * name, same bits. */
static void read_clock_event_reasons(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlReturn_t r;
        unsigned long long v = 0;
        if (c->lib->nvmlDeviceGetCurrentClocksEventReasons)
                r = NVCALL(c, nvmlDeviceGetCurrentClocksEventReasons, d, &v);
        else
                r = NVCALL(c, nvmlDeviceGetCurrentClocksThrottleReasons, d, &v);
        put_u64(c, &g->clocks_event_reasons, r, v);
}

/* How long each limiter held the clocks down (docs/nvml.md, "Violation counters"). Each
 * counter from its field where that answers with a value; the SW thermal one from CUDA 13's
 * reason field, else the older policy field (NVIDIA's header maps the THERMAL policy to
 * the reason). A counter whose fields do not answer is asked of
 * nvmlDeviceGetViolationStatus, deprecated in NVML 13 but the only source before the
 * fields; HW thermal and power brake have no call: their field's answer (or the field
 * call's) is the reading. */
static void read_violations(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        static const struct {
                enum field_slot slot, alt;
                int policy; /* nvmlPerfPolicyType_t, -1: none */
        } viol[NVML_VIOL_COUNT] = {
                [NVML_VIOL_POWER] = {FS_VIOL_POWER, FS_NONE, NVML_PERF_POLICY_POWER},
                [NVML_VIOL_THERMAL] = {FS_VIOL_SW_THERMAL, FS_VIOL_THERMAL, NVML_PERF_POLICY_THERMAL},
                [NVML_VIOL_SYNC_BOOST] = {FS_VIOL_SYNC_BOOST, FS_NONE, NVML_PERF_POLICY_SYNC_BOOST},
                [NVML_VIOL_BOARD_LIMIT] = {FS_VIOL_BOARD_LIMIT, FS_NONE, NVML_PERF_POLICY_BOARD_LIMIT},
                [NVML_VIOL_LOW_UTIL] = {FS_VIOL_LOW_UTIL, FS_NONE, NVML_PERF_POLICY_LOW_UTILIZATION},
                [NVML_VIOL_RELIABILITY] = {FS_VIOL_RELIABILITY, FS_NONE, NVML_PERF_POLICY_RELIABILITY},
                [NVML_VIOL_TOTAL_BASE_CLOCKS] = {FS_VIOL_TOTAL_BASE_CLOCKS, FS_NONE, NVML_PERF_POLICY_TOTAL_BASE_CLOCKS},
                [NVML_VIOL_HW_THERMAL] = {FS_VIOL_HW_THERMAL, FS_NONE, -1},
                [NVML_VIOL_HW_POWER_BRAKE] = {FS_VIOL_HW_POWER_BRAKE, FS_NONE, -1},
        };
        for (unsigned int i = 0; i < NVML_VIOL_COUNT; i++) {
                struct nv_u64 *f = &g->violation_ns[i];
                unsigned long long ns = 0;
                if (field_count(c, d, viol[i].slot, ULLONG_MAX, &ns) ||
                    (viol[i].alt != FS_NONE && field_count(c, d, viol[i].alt, ULLONG_MAX, &ns))) {
                        put_u64_from_fields(f, ns);
                        continue;
                }
                if (viol[i].policy >= 0) {
                        nvmlViolationTime_t t;
                        memset(&t, 0, sizeof(t));
                        nvmlReturn_t r = NVCALL(c, nvmlDeviceGetViolationStatus, d, (nvmlPerfPolicyType_t)viol[i].policy, &t);
                        put_u64(c, f, r, t.violationTime);
                        continue;
                }
                /* Field only: its own answer, or the call's (fields_call leaves c->last as
                 * the call left it, for put_u64); a negative value is no counter's. */
                bool answered = fields_call(c, d);
                nvmlReturn_t r = c->fields.rc;
                if (answered) {
                        r = c->fields.fv[c->fields.at[viol[i].slot]].nvmlReturn;
                        if (r == NVML_SUCCESS)
                                r = NVML_ERROR_UNKNOWN; /* field_count refused its value */
                }
                put_u64(c, f, r, 0);
        }
}

static void read_utilization(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlReturn_t r;
        nvmlUtilization_t u;
        memset(&u, 0, sizeof(u));
        r = NVCALL(c, nvmlDeviceGetUtilizationRates, d, &u);
        put_u32(c, &g->util_gpu_pct, r, u.gpu);
        put_u32(c, &g->util_mem_pct, r, u.memory);
}

/* The video engines. NVML also gives the sampling period the percentage is of; gpuvet,
 * like nvidia-smi and DCGM, keeps only the percentage. */
static void read_codec_utilization(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        unsigned int pct = 0, period_us = 0;
        nvmlReturn_t r = NVCALL(c, nvmlDeviceGetEncoderUtilization, d, &pct, &period_us);
        put_u32(c, &g->util_enc_pct, r, pct);
        pct = 0;
        r = NVCALL(c, nvmlDeviceGetDecoderUtilization, d, &pct, &period_us);
        put_u32(c, &g->util_dec_pct, r, pct);
}

static void read_pstate(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        READ_AS(c, d, g->pstate, nvmlDeviceGetPerformanceState, nvmlPstates_t, NVML_PSTATE_UNKNOWN);
}

static void read_fan(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        READ_U32(c, d, g->fan_pct, nvmlDeviceGetFanSpeed);
}

static void read_pcie_throughput(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        unsigned int kbs = 0;
        nvmlReturn_t r = NVCALL(c, nvmlDeviceGetPcieThroughput, d, NVML_PCIE_UTIL_TX_BYTES, &kbs);
        put_u32(c, &g->pcie_tx_kbs, r, kbs);
        kbs = 0;
        r = NVCALL(c, nvmlDeviceGetPcieThroughput, d, NVML_PCIE_UTIL_RX_BYTES, &kbs);
        put_u32(c, &g->pcie_rx_kbs, r, kbs);
}

static void read_ecc_mode(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlReturn_t r;
        nvmlEnableState_t cur = NVML_FEATURE_DISABLED, pend = NVML_FEATURE_DISABLED;
        r = NVCALL(c, nvmlDeviceGetEccMode, d, &cur, &pend);
        put_u32(c, &g->ecc_mode_current, r, (unsigned int)cur);
        put_u32(c, &g->ecc_mode_pending, r, (unsigned int)pend);
}

static void read_ecc_default_mode(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlReturn_t r;
        nvmlEnableState_t def = NVML_FEATURE_DISABLED;
        r = NVCALL(c, nvmlDeviceGetDefaultEccMode, d, &def);
        put_u32(c, &g->ecc_mode_default, r, (unsigned int)def);
}

/* Each total from its field where it answers (single-bit = corrected, double-bit =
 * uncorrected), else from nvmlDeviceGetTotalEccErrors. */
static void read_ecc_counts(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlReturn_t r;
        static const struct {
                nvmlMemoryErrorType_t e;
                nvmlEccCounterType_t k;
                enum field_slot slot;
                size_t off;
        } ecc[] = {
                {NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, FS_ECC_SBE_VOL_TOTAL,
                 offsetof(struct nvml_gpu, ecc_volatile_corrected)},
                {NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, FS_ECC_DBE_VOL_TOTAL,
                 offsetof(struct nvml_gpu, ecc_volatile_uncorrected)},
                {NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC, FS_ECC_SBE_AGG_TOTAL,
                 offsetof(struct nvml_gpu, ecc_aggregate_corrected)},
                {NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, FS_ECC_DBE_AGG_TOTAL,
                 offsetof(struct nvml_gpu, ecc_aggregate_uncorrected)},
        };
        for (size_t i = 0; i < ARRAY_COUNT(ecc); i++) {
                struct nv_u64 *f = (struct nv_u64 *)((char *)g + ecc[i].off);
                unsigned long long v = 0;
                if (field_count(c, d, ecc[i].slot, ULLONG_MAX, &v)) {
                        put_u64_from_fields(f, v);
                        continue;
                }
                r = NVCALL(c, nvmlDeviceGetTotalEccErrors, d, ecc[i].e, ecc[i].k, &v);
                put_u64(c, f, r, v);
        }
}

/* Uncorrected errors in DRAM from the device memory fields where they answer (DRAM is
 * NVML_MEMORY_LOCATION_DEVICE_MEMORY); SRAM has no field: nvmlDeviceGetMemoryErrorCounter. */
static void read_ecc_by_location(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlReturn_t r;
        static const struct {
                nvmlEccCounterType_t k;
                nvmlMemoryLocation_t where;
                enum field_slot slot;
                size_t off;
        } split[] = {
                {NVML_VOLATILE_ECC, NVML_MEMORY_LOCATION_DRAM, FS_ECC_DBE_VOL_DEV,
                 offsetof(struct nvml_gpu, ecc_volatile_uncorrected_dram)},
                {NVML_VOLATILE_ECC, NVML_MEMORY_LOCATION_SRAM, FS_NONE,
                 offsetof(struct nvml_gpu, ecc_volatile_uncorrected_sram)},
                {NVML_AGGREGATE_ECC, NVML_MEMORY_LOCATION_DRAM, FS_ECC_DBE_AGG_DEV,
                 offsetof(struct nvml_gpu, ecc_aggregate_uncorrected_dram)},
                {NVML_AGGREGATE_ECC, NVML_MEMORY_LOCATION_SRAM, FS_NONE,
                 offsetof(struct nvml_gpu, ecc_aggregate_uncorrected_sram)},
        };
        for (size_t i = 0; i < ARRAY_COUNT(split); i++) {
                struct nv_u64 *f = (struct nv_u64 *)((char *)g + split[i].off);
                unsigned long long v = 0;
                if (split[i].slot != FS_NONE && field_count(c, d, split[i].slot, ULLONG_MAX, &v)) {
                        put_u64_from_fields(f, v);
                        continue;
                }
                r = NVCALL(c, nvmlDeviceGetMemoryErrorCounter, d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, split[i].k,
                           split[i].where, &v);
                put_u64(c, f, r, v);
        }
        nvmlEccSramErrorStatus_v1_t sram;
        memset(&sram, 0, sizeof(sram));
        sram.version = nvmlEccSramErrorStatus_v1;
        r = NVCALL(c, nvmlDeviceGetSramEccErrorStatus, d, &sram);
        put_u32(c, &g->sram_threshold_exceeded, r, sram.bThresholdExceeded);
}

static void read_retired_pages(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlReturn_t r;
        {
                /* pageCount 0 with no buffer asks for the count; NVML answers SUCCESS or,
                 * on some drivers, INSUFFICIENT_SIZE with the count set. */
                static const struct {
                        nvmlPageRetirementCause_t cause;
                        enum field_slot slot;
                        size_t off;
                } rp[] = {
                        {NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, FS_RETIRED_SBE,
                         offsetof(struct nvml_gpu, retired_pages_sbe)},
                        {NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, FS_RETIRED_DBE,
                         offsetof(struct nvml_gpu, retired_pages_dbe)},
                };
                for (size_t i = 0; i < ARRAY_COUNT(rp); i++) {
                        if (u32_from_field(c, d, (struct nv_u32 *)((char *)g + rp[i].off), rp[i].slot, UINT_MAX))
                                continue;
                        unsigned int n = 0;
                        r = NVCALL(c, nvmlDeviceGetRetiredPages, d, rp[i].cause, &n, NULL);
                        if (r == NVML_ERROR_INSUFFICIENT_SIZE)
                                r = NVML_SUCCESS;
                        put_u32(c, (struct nv_u32 *)((char *)g + rp[i].off), r, n);
                }
        }
        if (!u32_from_field(c, d, &g->retired_pages_pending, FS_RETIRED_PENDING, NVML_FEATURE_ENABLED)) {
                nvmlEnableState_t v = NVML_FEATURE_DISABLED;
                r = NVCALL(c, nvmlDeviceGetRetiredPagesPendingStatus, d, &v);
                put_u32(c, &g->retired_pages_pending, r, (unsigned int)v);
        }
}

/* The four are one call's answer: all from the fields, or all from the call. */
static void read_remapped_rows(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlReturn_t r;
        unsigned long long fc, fu, fp, ff;
        if (field_count(c, d, FS_REMAPPED_COR, UINT_MAX, &fc) && field_count(c, d, FS_REMAPPED_UNC, UINT_MAX, &fu) &&
            field_count(c, d, FS_REMAPPED_PENDING, 1, &fp) && field_count(c, d, FS_REMAPPED_FAILURE, 1, &ff)) {
                put_from_fields(&g->remap_corrected, (unsigned int)fc);
                put_from_fields(&g->remap_uncorrected, (unsigned int)fu);
                put_from_fields(&g->remap_pending, (unsigned int)fp);
                put_from_fields(&g->remap_failure, (unsigned int)ff);
                return;
        }
        unsigned int corr = 0, unc = 0, pend = 0, fail = 0;
        r = NVCALL(c, nvmlDeviceGetRemappedRows, d, &corr, &unc, &pend, &fail);
        put_u32(c, &g->remap_corrected, r, corr);
        put_u32(c, &g->remap_uncorrected, r, unc);
        put_u32(c, &g->remap_pending, r, pend);
        put_u32(c, &g->remap_failure, r, fail);
}

/* Both answers of the one call; an older driver lacks it (NV_NO_FUNCTION). */
static void read_repair_status(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlRepairStatus_t st;
        memset(&st, 0, sizeof(st));
        st.version = nvmlRepairStatus_v1;
        nvmlReturn_t r = NVCALL(c, nvmlDeviceGetRepairStatus, d, &st);
        put_u32(c, &g->repair_channel_pending, r, st.bChannelRepairPending);
        put_u32(c, &g->repair_tpc_pending, r, st.bTpcRepairPending);
}

/* The field call's own answer, then the field's: an old driver answers the call but not
 * the field (NVML_ERROR_NOT_SUPPORTED in nvmlReturn). */
static void read_recovery_action(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlFieldValue_t fv;
        memset(&fv, 0, sizeof(fv));
        if (fields_call(c, d))
                fv = c->fields.fv[c->fields.at[FS_RECOVERY_ACTION]];
        nvmlReturn_t r = c->fields.rc;
        if (r == NVML_SUCCESS && fv.nvmlReturn != NVML_SUCCESS)
                r = fv.nvmlReturn;
        unsigned int action = fv.valueType == NVML_VALUE_TYPE_UNSIGNED_LONG_LONG ? (unsigned int)fv.value.ullVal
                              : fv.valueType == NVML_VALUE_TYPE_UNSIGNED_LONG  ? (unsigned int)fv.value.ulVal
                                                                                : fv.value.uiVal;
        put_u32(c, &g->recovery_action, r, action);
}

static void read_remap_histogram(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlReturn_t r;
        nvmlRowRemapperHistogramValues_t h = {0};
        r = NVCALL(c, nvmlDeviceGetRowRemapperHistogram, d, &h);
        const unsigned int banks[5] = {h.max, h.high, h.partial, h.low, h.none};
        for (int i = 0; i < 5; i++)
                put_u32(c, &g->remap_hist[i], r, banks[i]);
}

static void read_pcie_link(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        READ_U32(c, d, g->pcie_gen, nvmlDeviceGetCurrPcieLinkGeneration);
        READ_U32(c, d, g->pcie_width, nvmlDeviceGetCurrPcieLinkWidth);
        READ_U32(c, d, g->pcie_max_gen, nvmlDeviceGetMaxPcieLinkGeneration);
        READ_U32(c, d, g->pcie_max_width, nvmlDeviceGetMaxPcieLinkWidth);
}

static void read_pcie_replay(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        if (!u32_from_field(c, d, &g->pcie_replay, FS_PCIE_REPLAY, UINT_MAX))
                READ_U32(c, d, g->pcie_replay, nvmlDeviceGetPcieReplayCounter);
}

static void read_persistence_mode(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        READ_AS(c, d, g->persistence_mode, nvmlDeviceGetPersistenceMode, nvmlEnableState_t, NVML_FEATURE_DISABLED);
}

static void read_compute_mode(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        READ_AS(c, d, g->compute_mode, nvmlDeviceGetComputeMode, nvmlComputeMode_t, NVML_COMPUTEMODE_DEFAULT);
}

static void read_display(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlReturn_t r;
        {
                nvmlEnableState_t v = NVML_FEATURE_DISABLED;
                r = NVCALL(c, nvmlDeviceGetDisplayMode, d, &v);
                put_u32(c, &g->display_mode, r, (unsigned int)v);
        }
        {
                nvmlEnableState_t v = NVML_FEATURE_DISABLED;
                r = NVCALL(c, nvmlDeviceGetDisplayActive, d, &v);
                put_u32(c, &g->display_active, r, (unsigned int)v);
        }
}

static void read_mig(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlReturn_t r;
        {
                unsigned int cur = 0, pend = 0;
                r = NVCALL(c, nvmlDeviceGetMigMode, d, &cur, &pend);
                put_u32(c, &g->mig_mode_current, r, cur);
                put_u32(c, &g->mig_mode_pending, r, pend);
        }
        READ_U32(c, d, g->mig_max_devices, nvmlDeviceGetMaxMigDeviceCount);
        if (nv_ok(g->mig_mode_current) && g->mig_mode_current.v == 1 && nv_ok(g->mig_max_devices)) {
                unsigned int n = 0;
                nvmlReturn_t result = NVML_SUCCESS;
                for (unsigned int j = 0; j < g->mig_max_devices.v && j < 64; j++) {
                        nvmlDevice_t md = NULL;
                        r = NVCALL(c, nvmlDeviceGetMigDeviceHandleByIndex, d, j, &md);
                        if (c->last != LAST_CALLED)
                                break;
                        if (r == NVML_SUCCESS) {
                                n++;
                        } else if (r != NVML_ERROR_NOT_FOUND) {
                                /* NOT_FOUND: no MIG device in that slot, which is normal. */
                                result = r;
                                break;
                        }
                }
                if (c->last == LAST_CALLED)
                        r = result;
                put_u32(c, &g->mig_device_count, r, n);
        }
}

static void read_processes(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        read_procs(c, &g->compute_procs, d, true);
        read_procs(c, &g->graphics_procs, d, false);
}

/* Keep the latest sample of pid among the first n entries of v; the entry count after. */
static unsigned int keep_latest(struct nvml_process_util *v, unsigned int n, const nvmlProcessUtilizationSample_t *s) {
        unsigned int pct[4] = {s->smUtil, s->memUtil, s->encUtil, s->decUtil};
        for (unsigned int k = 0; k < 4; k++)
                if (pct[k] > 100) /* not a share of a sample period: unknown, not clamped */
                        pct[k] = NV_UTIL_UNKNOWN;
        unsigned int i = 0;
        while (i < n && v[i].pid != s->pid)
                i++;
        if (i < n && v[i].timestamp_us >= s->timeStamp)
                return n;
        v[i] = (struct nvml_process_util){s->pid, s->timeStamp, pct[0], pct[1], pct[2], pct[3]};
        return i < n ? n : n + 1;
}

/* The processes' utilization over the last NVML_PROC_UTIL_WINDOW_US: the count first (a
 * NULL buffer answers INSUFFICIENT_SIZE with it), then the samples, growing when processes
 * started meanwhile. NOT_FOUND (no sample in the window) is an empty list, not an error:
 * nothing ran on the GPU. */
static void read_process_utilization(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now); /* NVML stamps samples with the CPU's wall clock */
        unsigned long long now_us = (unsigned long long)now.tv_sec * 1000000ULL + (unsigned long long)now.tv_nsec / 1000;
        unsigned long long since = now_us > NVML_PROC_UTIL_WINDOW_US ? now_us - NVML_PROC_UTIL_WINDOW_US : 0;
        unsigned int count = 0;
        nvmlReturn_t r = NVCALL(c, nvmlDeviceGetProcessUtilization, d, NULL, &count, since);
        struct nvml_process_util *out = NULL;
        unsigned int n_out = 0;

        for (unsigned int attempt = 0; c->last == LAST_CALLED && r == NVML_ERROR_INSUFFICIENT_SIZE && attempt < 4;
             attempt++) {
                unsigned int cap = count + 8 + attempt * 32;
                /* The worker's buffer until the call returned in time (as read_procs). */
                nvmlProcessUtilizationSample_t *buf = calloc(cap, sizeof(*buf));
                if (!buf) {
                        r = NVML_ERROR_MEMORY;
                        break;
                }
                count = cap;
                r = NVCALL(c, nvmlDeviceGetProcessUtilization, d, buf, &count, since);
                if (c->last == LAST_CALLED && r == NVML_SUCCESS) {
                        if (count > cap)
                                count = cap;
                        out = count ? calloc(count, sizeof(*out)) : NULL;
                        if (count && !out)
                                r = NVML_ERROR_MEMORY;
                        for (unsigned int i = 0; out && i < count; i++)
                                n_out = keep_latest(out, n_out, &buf[i]);
                }
                free(buf);
        }
        if (c->last == LAST_CALLED && r == NVML_ERROR_NOT_FOUND)
                r = NVML_SUCCESS;
        if (SETTLE(c, &g->proc_utils, r)) {
                free(g->proc_utils.v);
                g->proc_utils.v = out;
                g->proc_utils.count = n_out;
        } else {
                free(out);
        }
}

/* The versioned call first: it adds the fabric's health (degraded bandwidth, unhealthy
 * routes, a wrong configuration). A library without it, or one that knows another
 * version, is asked the v1 question. */
static void read_fabric(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        nvmlReturn_t r;
        nvmlGpuFabricInfo_v3_t v3;
        memset(&v3, 0, sizeof(v3));
        v3.version = nvmlGpuFabricInfo_v3;
        r = NVCALL(c, nvmlDeviceGetGpuFabricInfoV, d, &v3);
        bool v3_answered = c->last == LAST_CALLED &&
                           r != NVML_ERROR_ARGUMENT_VERSION_MISMATCH && r != NVML_ERROR_FUNCTION_NOT_FOUND;
        put_u32(c, &g->fabric_health_mask, r, v3.healthMask);
        put_u32(c, &g->fabric_health_summary, r, v3.healthSummary);
        nvmlGpuFabricInfo_t fi;
        memset(&fi, 0, sizeof(fi));
        if (v3_answered) {
                memcpy(fi.clusterUuid, v3.clusterUuid, sizeof(fi.clusterUuid));
                fi.status = v3.status;
                fi.cliqueId = v3.cliqueId;
                fi.state = v3.state;
        } else if (g->fabric_health_mask.state != NV_TIMEOUT) {
                r = NVCALL(c, nvmlDeviceGetGpuFabricInfo, d, &fi);
        }
        put_u32(c, &g->fabric_state, r, fi.state);
        put_u32(c, &g->fabric_status, r, (unsigned int)fi.status);
        put_u32(c, &g->fabric_clique_id, r, fi.cliqueId);
        char uuid[40] = "";
        for (unsigned int k = 0; k < NVML_GPU_FABRIC_UUID_LEN; k++)
                snprintf(uuid + strlen(uuid), sizeof(uuid) - strlen(uuid), "%s%02x",
                         k == 4 || k == 6 || k == 8 || k == 10 ? "-" : "", fi.clusterUuid[k]);
        put_str(c, &g->fabric_cluster_uuid, r, uuid, sizeof(uuid));
}

/* --- GPM ----------------------------------------------------------------------------- */

/* One GPU's samples across rounds: buf[next] takes this round's, buf[next ^ 1] holds the
 * previous round's when have_prev. */
struct gpm_keep {
        nvmlGpmSample_t buf[2];
        unsigned int next;
        bool have_prev;
        unsigned long long prev_ms; /* deadline_now_ms() when the previous sample was taken */
        nvmlDevice_t device;        /* the handle it was taken with */
};

struct nvml_gpm_carry {
        struct gpm_keep keep[NVML_FACTS_MAX_GPUS];
};

/* enum nvml_gpm_metric -> NVML's metric id. */
static const unsigned int gpm_ids[NVML_GPM_COUNT] = {
        [NVML_GPM_GRAPHICS] = NVML_GPM_METRIC_GRAPHICS_UTIL,
        [NVML_GPM_SM_ACTIVE] = NVML_GPM_METRIC_SM_UTIL,
        [NVML_GPM_SM_OCCUPANCY] = NVML_GPM_METRIC_SM_OCCUPANCY,
        [NVML_GPM_TENSOR] = NVML_GPM_METRIC_ANY_TENSOR_UTIL,
        [NVML_GPM_DRAM] = NVML_GPM_METRIC_DRAM_BW_UTIL,
        [NVML_GPM_FP64] = NVML_GPM_METRIC_FP64_UTIL,
        [NVML_GPM_FP32] = NVML_GPM_METRIC_FP32_UTIL,
        [NVML_GPM_FP16] = NVML_GPM_METRIC_FP16_UTIL,
        [NVML_GPM_PCIE_TX] = NVML_GPM_METRIC_PCIE_TX_PER_SEC,
        [NVML_GPM_PCIE_RX] = NVML_GPM_METRIC_PCIE_RX_PER_SEC,
        [NVML_GPM_NVLINK_TX] = NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC,
        [NVML_GPM_NVLINK_RX] = NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC,
};

/* Every metric of gpm[] at once: rc, or each metric's own answer when the call succeeded. */
static void put_gpm_all(struct gctx *c, struct nvml_gpu *g, nvmlReturn_t r, const nvmlGpmMetricsGet_t *mg) {
        for (unsigned int i = 0; i < NVML_GPM_COUNT; i++) {
                nvmlReturn_t ri = r;
                double v = 0;
                if (c->last == LAST_CALLED && r == NVML_SUCCESS) {
                        ri = mg ? mg->metrics[i].nvmlReturn : NVML_ERROR_UNKNOWN;
                        v = mg ? mg->metrics[i].value : 0;
                        /* A negative share or rate is no measurement (counters that wrapped or
                         * were reset between the samples): unknown, never clamped. */
                        if (ri == NVML_SUCCESS && !(v >= 0))
                                ri = NVML_ERROR_UNKNOWN;
                }
                put_f64(c, &g->gpm[i], ri, v);
        }
}

/* Support, then this round's sample, then the metrics over the window since the previous
 * round's. Without a kept sample (the first round, a failed sample) gpm[] stays NV_UNREAD:
 * there is no window to measure; a gather without a carry (a one-shot reading) asks
 * nothing. A window shorter than NVML asks for keeps the older sample for the next round. */
static void read_gpm(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d) {
        struct gpm_keep *k = c->gpm; /* not to be dereferenced in MODE_REPLAY */
        if (!k)
                return; /* a one-shot reading has no window: nothing worth a call */
        nvmlGpmSupport_t support = {.version = NVML_GPM_SUPPORT_VERSION};
        nvmlReturn_t r = NVCALL(c, nvmlGpmQueryDeviceSupport, d, &support);
        if (!put_u32(c, &g->gpm_supported, r, support.isSupportedDevice) || c->mode == MODE_REPLAY) {
                put_gpm_all(c, g, r, NULL);
                return;
        }
        if (!g->gpm_supported.v) {
                for (unsigned int i = 0; i < NVML_GPM_COUNT; i++)
                        g->gpm[i] = (struct nv_f64){NV_ERROR, NVML_ERROR_NOT_SUPPORTED, g->gpm_supported.fn, 0};
                return;
        }
        if (k->have_prev && k->device != d)
                k->have_prev = false; /* another GPU behind the index: start again */
        if (k->have_prev && deadline_now_ms() - k->prev_ms < NVML_GPM_MIN_WINDOW_MS)
                return;
        for (unsigned int i = 0; i < 2; i++) {
                if (k->buf[i])
                        continue;
                nvmlGpmSample_t sample = NULL;
                r = NVCALL(c, nvmlGpmSampleAlloc, &sample);
                if (c->last != LAST_CALLED || r != NVML_SUCCESS) {
                        put_gpm_all(c, g, r, NULL);
                        return;
                }
                k->buf[i] = sample;
        }
        r = NVCALL(c, nvmlGpmSampleGet, d, k->buf[k->next]);
        unsigned long long now = deadline_now_ms();
        if (c->last != LAST_CALLED || r != NVML_SUCCESS) {
                k->have_prev = false;
                put_gpm_all(c, g, r, NULL);
                return;
        }
        if (k->have_prev) {
                nvmlGpmMetricsGet_t *mg = calloc(1, sizeof(*mg)); /* 19 KB: off the worker's stack */
                if (!mg) {
                        put_gpm_all(c, g, NVML_ERROR_MEMORY, NULL);
                } else {
                        mg->version = NVML_GPM_METRICS_GET_VERSION;
                        mg->numMetrics = NVML_GPM_COUNT;
                        mg->sample1 = k->buf[k->next ^ 1];
                        mg->sample2 = k->buf[k->next];
                        for (unsigned int i = 0; i < NVML_GPM_COUNT; i++)
                                mg->metrics[i].metricId = gpm_ids[i];
                        r = NVCALL(c, nvmlGpmMetricsGet, mg);
                        g->gpm_window_ms = (unsigned int)(now - k->prev_ms);
                        put_gpm_all(c, g, r, mg);
                        free(mg); /* the call has returned, in time or not */
                }
        }
        k->have_prev = true;
        k->prev_ms = now;
        k->device = d;
        k->next ^= 1;
}

/* Every per-GPU reading group in reading order (a group may read at several places). */
static const struct {
        unsigned int group; /* enum nvml_group */
        void (*read)(struct gctx *c, struct nvml_gpu *g, nvmlDevice_t d);
} readers[] = {
        {NVML_GROUP_NAME, read_name},
        {NVML_GROUP_UUID, read_uuid},
        {NVML_GROUP_SERIAL, read_serial},
        {NVML_GROUP_PCI, read_pci_info},
        {NVML_GROUP_VBIOS, read_vbios},
        {NVML_GROUP_INFOROM, read_inforom},
        {NVML_GROUP_MINOR, read_minor_number},
        {NVML_GROUP_BRAND, read_brand},
        {NVML_GROUP_ARCH, read_architecture},
        {NVML_GROUP_CC, read_compute_capability},
        {NVML_GROUP_MEMORY, read_memory},
        {NVML_GROUP_BAR1, read_bar1},
        {NVML_GROUP_TEMP, read_temperature},
        {NVML_GROUP_TEMP_THRESHOLDS, read_temperature_thresholds},
        {NVML_GROUP_TEMP_MARGIN, read_temperature_margin},
        {NVML_GROUP_THERMAL_FIELDS, read_thermal_fields},
        {NVML_GROUP_POWER_DRAW, read_power_draw},
        {NVML_GROUP_ENERGY, read_energy},
        {NVML_GROUP_POWER_LIMIT, read_power_limit},
        {NVML_GROUP_POWER_DEFAULT_LIMIT, read_power_default_limit},
        {NVML_GROUP_POWER_ENFORCED_LIMIT, read_power_enforced_limit},
        {NVML_GROUP_POWER_CONSTRAINTS, read_power_constraints},
        {NVML_GROUP_CLOCKS, read_clocks},
        {NVML_GROUP_CLOCKS_MAX, read_clocks_max},
        {NVML_GROUP_CLOCKS_APP, read_clocks_app},
        {NVML_GROUP_CLOCKS_DEFAULT_APP, read_clocks_default_app},
        {NVML_GROUP_CLOCK_REASONS, read_clock_event_reasons},
        {NVML_GROUP_VIOLATIONS, read_violations},
        {NVML_GROUP_UTIL, read_utilization},
        {NVML_GROUP_CODEC_UTIL, read_codec_utilization},
        {NVML_GROUP_PSTATE, read_pstate},
        {NVML_GROUP_FAN, read_fan},
        {NVML_GROUP_PCIE_THROUGHPUT, read_pcie_throughput},
        {NVML_GROUP_ECC_MODE, read_ecc_mode},
        {NVML_GROUP_ECC_DEFAULT_MODE, read_ecc_default_mode},
        {NVML_GROUP_ECC_COUNTS, read_ecc_counts},
        {NVML_GROUP_ECC_LOCATION, read_ecc_by_location},
        {NVML_GROUP_RETIRED_PAGES, read_retired_pages},
        {NVML_GROUP_REMAP, read_remapped_rows},
        {NVML_GROUP_REPAIR, read_repair_status},
        {NVML_GROUP_RECOVERY, read_recovery_action},
        {NVML_GROUP_REMAP_HIST, read_remap_histogram},
        {NVML_GROUP_PCIE_LINK, read_pcie_link},
        {NVML_GROUP_PCIE_REPLAY, read_pcie_replay},
        {NVML_GROUP_NVLINK, read_nvlinks},
        {NVML_GROUP_PERSISTENCE, read_persistence_mode},
        {NVML_GROUP_COMPUTE_MODE, read_compute_mode},
        {NVML_GROUP_DISPLAY, read_display},
        {NVML_GROUP_MIG, read_mig},
        {NVML_GROUP_PROCS, read_processes},
        {NVML_GROUP_PROC_UTIL, read_process_utilization},
        {NVML_GROUP_FABRIC, read_fabric},
        {NVML_GROUP_GPM, read_gpm},
};

/* The handle, then every selected group in order. Runs on the GPU's worker (MODE_CALL) or
 * as a replay over a copy (MODE_REPLAY); see the top of the file. */
static void gather_gpu(struct gctx *c, struct nvml_gpu *g) {
        nvmlDevice_t d = NULL;
        nvmlReturn_t r;

        r = NVCALL(c, nvmlDeviceGetHandleByIndex_v2, g->index, &d);
        if (c->last == LAST_CALLED && r == NVML_SUCCESS)
                g->device = d;
        if (!put_u32(c, &g->handle, r, 0) && c->mode == MODE_CALL && !c->stop) {
                /* No handle, no facts: each says why, naming the handle call. */
                c->mode = MODE_REPLAY;
                c->replay_state = g->handle.state;
                c->replay_rc = g->handle.rc;
                c->replay_fn = g->handle.fn;
        }
        for (size_t i = 0; i < ARRAY_COUNT(readers); i++)
                if (c->groups & nvml_group_bit(readers[i].group))
                        readers[i].read(c, g, g->device);
}

/* --- the per-GPU workers ---------------------------------------------------------------- */

struct gpu_block {
        const struct nvml_lib *lib;
        nvml_groups groups;
        unsigned long long start_ms;
        bool gpm_kept;        /* gpm is the caller's carry entry, handed back at publish */
        struct gpm_keep gpm;
        struct nvml_gpu gpu;
};

static void gpu_work(struct deadline_worker *w, void *block) {
        struct gpu_block *b = block;
        struct gctx c = {.w = w, .lib = b->lib, .mode = MODE_CALL, .groups = b->groups,
                         .gpm = b->gpm_kept ? &b->gpm : NULL};
        gather_gpu(&c, &b->gpu);
        remote_prefetch_end(&c);
}

static void gpu_publish(void *block, void *dest, unsigned int index, const char *hung, unsigned int elapsed_ms,
                        void *userdata) {
        struct gpu_block *b = block;
        struct nvml_gpu *g = dest;
        struct nvml_gpm_carry *carry = userdata;

        /* The samples go back to the carry; a worker abandoned in a call may still be using
         * them, so the carry forgets them (never freed: the stuck thread owns them). */
        if (carry && b->gpm_kept)
                carry->keep[index] = hung ? (struct gpm_keep){0} : b->gpm;

        /* Copy, and move the process lists: the block is freed by its worker. */
        *g = b->gpu;
        b->gpu.compute_procs.v = NULL;
        b->gpu.compute_procs.count = 0;
        b->gpu.graphics_procs.v = NULL;
        b->gpu.graphics_procs.count = 0;
        b->gpu.proc_utils.v = NULL;
        b->gpu.proc_utils.count = 0;
        g->gather_ms = (unsigned int)(deadline_now_ms() - b->start_ms);
        if (!hung)
                return;
        g->timed_out = true;
        g->timeout_fn = hung;
        g->timeout_ms = elapsed_ms;
        struct gctx c = {
                .lib = b->lib,
                .mode = MODE_REPLAY,
                .groups = b->groups,
                .replay_state = NV_TIMEOUT,
                .replay_rc = NVML_ERROR_TIMEOUT,
                .replay_fn = hung,
                /* Says GPM was read; a replay never touches the samples (the stuck worker
                 * may be inside a call with them). */
                .gpm = b->gpm_kept ? &b->gpm : NULL,
        };
        gather_gpu(&c, g);
}

static void gpu_free_block(void *block) {
        struct gpu_block *b = block;
        if (!b)
                return;
        free(b->gpu.compute_procs.v);
        free(b->gpu.graphics_procs.v);
        free(b->gpu.proc_utils.v);
        free(b);
}

/* --- system facts --------------------------------------------------------------------- */

struct sys_facts {
        struct nv_u32 init;
        struct nv_str driver_version;
        struct nv_str nvml_version;
        struct nv_i32 cuda_driver_version;
        struct nv_u32 device_count;
};

struct sys_block {
        const struct nvml_lib *lib;
        unsigned int init_ms;
        struct sys_facts s;
};

static void gather_sys(struct gctx *c, struct sys_facts *s, unsigned int init_ms) {
        nvmlReturn_t r;
        r = call_enter(c, "nvmlInit_v2", c->lib->nvmlInit_v2 != NULL, init_ms) ? call_leave(c, c->lib->nvmlInit_v2())
                                                                                : NVML_ERROR_UNKNOWN;
        if (!put_u32(c, &s->init, r, 0))
                return;
        {
                char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = "";
                r = NVCALL(c, nvmlSystemGetDriverVersion, buf, sizeof(buf));
                put_str(c, &s->driver_version, r, buf, sizeof(buf));
        }
        {
                char buf[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE] = "";
                r = NVCALL(c, nvmlSystemGetNVMLVersion, buf, sizeof(buf));
                put_str(c, &s->nvml_version, r, buf, sizeof(buf));
        }
        {
                int v = 0;
                r = NVCALL(c, nvmlSystemGetCudaDriverVersion_v2, &v);
                put_i32(c, &s->cuda_driver_version, r, v);
        }
        {
                unsigned int v = 0;
                r = NVCALL(c, nvmlDeviceGetCount_v2, &v);
                put_u32(c, &s->device_count, r, v);
        }
}

static void sys_work(struct deadline_worker *w, void *block) {
        struct sys_block *b = block;
        struct gctx c = {.w = w, .lib = b->lib, .mode = MODE_CALL};
        gather_sys(&c, &b->s, b->init_ms);
}

static void sys_publish(void *block, void *dest, unsigned int index, const char *hung, unsigned int elapsed_ms,
                        void *userdata) {
        struct sys_block *b = block;
        struct sys_facts *s = dest;
        (void)index;
        (void)elapsed_ms;
        (void)userdata;
        *s = b->s;
        if (hung) {
                struct gctx c = {
                        .lib = b->lib,
                        .mode = MODE_REPLAY,
                        .replay_state = NV_TIMEOUT,
                        .replay_rc = NVML_ERROR_TIMEOUT,
                        .replay_fn = hung,
                };
                gather_sys(&c, s, b->init_ms);
        }
}

/* --- shutdown --------------------------------------------------------------------------- */

struct shutdown_block {
        const struct nvml_lib *lib;
        nvmlReturn_t rc;
};

static void shutdown_work(struct deadline_worker *w, void *block) {
        struct shutdown_block *b = block;
        if (!deadline_begin(w, "nvmlShutdown", 0))
                return;
        nvmlReturn_t rc = b->lib->nvmlShutdown();
        if (deadline_end(w))
                b->rc = rc;
}

static void shutdown_publish(void *block, void *dest, unsigned int index, const char *hung, unsigned int elapsed_ms,
                             void *userdata) {
        (void)index;
        (void)elapsed_ms;
        (void)userdata;
        (void)hung;
        *(nvmlReturn_t *)dest = ((struct shutdown_block *)block)->rc;
}

/* --- GPM samples kept across gathers ---------------------------------------------------- */

struct nvml_gpm_carry *nvml_gpm_carry_new(void) { return calloc(1, sizeof(struct nvml_gpm_carry)); }

struct gpm_free_block {
        const struct nvml_lib *lib;
        struct nvml_gpm_carry *carry;
};

static void gpm_free_work(struct deadline_worker *w, void *block) {
        struct gpm_free_block *b = block;
        for (unsigned int i = 0; i < NVML_FACTS_MAX_GPUS; i++)
                for (unsigned int k = 0; k < 2; k++) {
                        nvmlGpmSample_t sample = b->carry->keep[i].buf[k];
                        if (!sample)
                                continue;
                        if (!deadline_begin(w, "nvmlGpmSampleFree", 0))
                                return;
                        /* Its error (an invalid sample) changes nothing: the sample is gone. */
                        (void)b->lib->nvmlGpmSampleFree(sample);
                        if (!deadline_end(w))
                                return;
                }
        free(b->carry); /* only once every free returned: a stuck one keeps it */
}

static void gpm_free_publish(void *block, void *dest, unsigned int index, const char *hung, unsigned int elapsed_ms,
                             void *userdata) {
        (void)block;
        (void)index;
        (void)elapsed_ms;
        (void)userdata;
        *(bool *)dest = hung != NULL;
}

bool nvml_gpm_carry_free(struct nvml_gpm_carry *carry, struct nvml_lib *lib, const struct nvml_deadlines *dl,
                         bool abandoned) {
        if (!carry)
                return false;
        bool any = false;
        for (unsigned int i = 0; i < NVML_FACTS_MAX_GPUS && !any; i++)
                any = carry->keep[i].buf[0] || carry->keep[i].buf[1];
        if (!any || abandoned || !lib || !lib->nvmlGpmSampleFree) {
                free(carry); /* the samples, if any, are left to the library */
                return false;
        }
        struct gpm_free_block *b = calloc(1, sizeof(*b));
        if (!b) {
                free(carry);
                return false;
        }
        b->lib = lib;
        b->carry = carry;
        struct nvml_deadlines d;
        nvml_deadlines_normalise(dl, &d);
        bool hung = false;
        struct deadline_outcome o;
        if (nvml_run_one(d.call_ms, gpm_free_work, gpm_free_publish, b, &hung, &o) < 0)
                return false; /* not started: the block (not the carry) was freed; leak it */
        return hung;
}

/* --- the whole gather ----------------------------------------------------------------- */

static void add_timeout(struct nvml_facts *f, const struct deadline_outcome *o, int gpu) {
        f->abandoned = true;
        if (o->stopped) {
                f->stopped = true; /* not a timeout: nobody waited for it */
                return;
        }
        struct nvml_timeout *t = realloc(f->timeouts, (f->n_timeouts + 1) * sizeof(*t));
        if (!t)
                return; /* the GPU's own facts still say timeout */
        f->timeouts = t;
        t[f->n_timeouts++] = (struct nvml_timeout){.fn = o->what, .gpu = gpu, .elapsed_ms = o->elapsed_ms, .budget = o->budget};
}

static enum nvml_init_state init_state_of(const struct nv_u32 *init) {
        switch (init->state) {
        case NV_OK:
                return NVML_INIT_OK;
        case NV_TIMEOUT:
                return NVML_INIT_TIMEOUT;
        case NV_UNREAD:
                return NVML_INIT_NOT_TRIED;
        default:
                break;
        }
        switch (init->rc) {
        case NVML_ERROR_DRIVER_NOT_LOADED:
                return NVML_INIT_DRIVER_NOT_LOADED;
        case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
                return NVML_INIT_VERSION_MISMATCH;
        case NVML_ERROR_NO_PERMISSION:
                return NVML_INIT_NO_PERMISSION;
        default:
                return NVML_INIT_ERROR;
        }
}

static void gather_system(struct nvml_facts *f, int *ret_r) {
        struct sys_facts s;
        memset(&s, 0, sizeof(s));
        struct sys_block *b = calloc(1, sizeof(*b));
        if (!b) {
                *ret_r = -ENOMEM;
                return;
        }
        b->lib = f->lib;
        b->init_ms = f->dl.init_ms;
        struct deadline_spec spec = {
                .call_ms = f->dl.call_ms,
                .budget_ms = 0, /* each call has its own limit, init the longest */
                .work = sys_work,
                .publish = sys_publish,
                .free_block = free,
                .stop_requested = f->dl.stop_requested,
                .stop_ctx = f->dl.stop_ctx,
        };
        void *blocks[1] = {b};
        void *dests[1] = {&s};
        struct deadline_outcome o;
        int r = deadline_run(&spec, 1, blocks, dests, &o);
        if (r < 0)
                *ret_r = r;
        if (o.state == DEADLINE_ABANDONED)
                add_timeout(f, &o, -1);

        f->init_state = init_state_of(&s.init);
        f->init_rc = s.init.state == NV_NO_FUNCTION ? NVML_ERROR_FUNCTION_NOT_FOUND : s.init.rc;
        f->initialized = nv_ok(s.init);
        f->driver_version = s.driver_version;
        f->nvml_version = s.nvml_version;
        f->cuda_driver_version = s.cuda_driver_version;
        f->device_count = s.device_count;
        if (nv_ok(s.cuda_driver_version) && s.cuda_driver_version.v > 0)
                snprintf(f->cuda_driver_version_str, sizeof(f->cuda_driver_version_str), "%d.%d",
                         s.cuda_driver_version.v / 1000, (s.cuda_driver_version.v % 1000) / 10);
}

int nvml_facts_gather(struct nvml_lib *lib, const struct nvml_deadlines *dl, struct nvml_facts *ret) {
        return nvml_facts_gather_some(lib, dl, NVML_GROUPS_ALL, ret);
}

int nvml_facts_gather_some(struct nvml_lib *lib, const struct nvml_deadlines *dl, nvml_groups groups,
                           struct nvml_facts *ret) {
        return nvml_facts_gather_carry(lib, dl, groups, NULL, ret);
}

int nvml_facts_gather_carry(struct nvml_lib *lib, const struct nvml_deadlines *dl, nvml_groups groups,
                            struct nvml_gpm_carry *carry, struct nvml_facts *ret) {
        struct nvml_facts *f = ret;
        int r = 0;
        unsigned long long t0 = deadline_now_ms();

        memset(f, 0, sizeof(*f));
        f->lib = lib;
        f->groups = groups;
        nvml_deadlines_normalise(dl, &f->dl);
        if (!lib) {
                f->init_state = NVML_INIT_NO_LIBRARY;
                f->init_rc = NVML_ERROR_LIBRARY_NOT_FOUND;
                return 0;
        }

        gather_system(f, &r);
        if (!f->initialized || f->abandoned || !nv_ok(f->device_count) || f->device_count.v == 0)
                goto out;

        unsigned int n = f->device_count.v < NVML_FACTS_MAX_GPUS ? f->device_count.v : NVML_FACTS_MAX_GPUS;
        f->gpus = calloc(n, sizeof(*f->gpus));
        void **blocks = calloc(n, sizeof(*blocks));
        void **dests = calloc(n, sizeof(*dests));
        struct deadline_outcome *o = calloc(n, sizeof(*o));
        if (!f->gpus || !blocks || !dests || !o) {
                r = -ENOMEM;
                goto free_arrays;
        }
        unsigned long long start = deadline_now_ms();
        for (unsigned int i = 0; i < n; i++) {
                struct gpu_block *b = calloc(1, sizeof(*b));
                if (!b) {
                        for (unsigned int k = 0; k < i; k++)
                                gpu_free_block(blocks[k]);
                        r = -ENOMEM;
                        goto free_arrays;
                }
                b->lib = lib;
                b->groups = groups;
                b->start_ms = start;
                if (carry && (groups & nvml_group_bit(NVML_GROUP_GPM))) {
                        b->gpm_kept = true;
                        b->gpm = carry->keep[i];
                }
                b->gpu.index = i;
                f->gpus[i].index = i;
                blocks[i] = b;
                dests[i] = &f->gpus[i];
        }
        f->n_gpus = n;
        struct deadline_spec spec = {
                .call_ms = f->dl.call_ms,
                .budget_ms = f->dl.gpu_ms,
                .work = gpu_work,
                .publish = gpu_publish,
                .free_block = gpu_free_block,
                .userdata = carry,
                .stop_requested = f->dl.stop_requested,
                .stop_ctx = f->dl.stop_ctx,
        };
        int rr = deadline_run(&spec, n, blocks, dests, o);
        if (rr < 0)
                r = rr;
        for (unsigned int i = 0; i < n; i++)
                if (o[i].state == DEADLINE_ABANDONED)
                        add_timeout(f, &o[i], (int)i);

free_arrays:
        if (r == -ENOMEM && f->n_gpus == 0) {
                free(f->gpus);
                f->gpus = NULL;
        }
        free(blocks);
        free(dests);
        free(o);
out:
        f->gather_ms = (unsigned int)(deadline_now_ms() - t0);
        return r;
}

void nvml_facts_done(struct nvml_facts *f) {
        if (!f)
                return;
        for (unsigned int i = 0; i < f->n_gpus; i++) {
                free(f->gpus[i].compute_procs.v);
                free(f->gpus[i].graphics_procs.v);
                free(f->gpus[i].proc_utils.v);
        }
        free(f->gpus);
        f->gpus = NULL;
        f->n_gpus = 0;
        free(f->timeouts);
        f->timeouts = NULL;
        f->n_timeouts = 0;

        if (f->initialized && !f->abandoned && f->lib && f->lib->nvmlShutdown) {
                struct shutdown_block *b = calloc(1, sizeof(*b));
                if (b) {
                        nvmlReturn_t rc = NVML_SUCCESS;
                        b->lib = f->lib;
                        struct deadline_outcome o;
                        if (nvml_run_one(f->dl.call_ms, shutdown_work, shutdown_publish, b, &rc, &o) == 0 &&
                            o.state == DEADLINE_ABANDONED)
                                f->abandoned = true;
                        /* nvmlShutdown's own error changes nothing for the caller, ignoring. */
                        (void)rc;
                }
        }
        f->initialized = false;
}

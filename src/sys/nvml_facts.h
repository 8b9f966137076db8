/* Everything gpuvet reads from NVML, per GPU and for the system, as plain structs.
 *
 * Every reading records how it was obtained (the nv_* value types below): read (NV_OK),
 * refused by NVML (NV_ERROR, rc = NVML's return code), never answered within our deadline
 * (NV_TIMEOUT, fn = the function that never returned), or not exported by this library
 * (NV_NO_FUNCTION, rc = NV_RC_FUNCTION_NOT_FOUND). NV_UNREAD means gpuvet did not ask
 * (e.g. NVLink counters of a link that is not active). A check tells "not offered here"
 * (NV_NO_FUNCTION, or NV_ERROR with a code nv_rc_not_offered() accepts) apart from "call
 * failed".
 *
 * This header is the line between NVML and the rest: it includes no NVML header, and the
 * values readings hold (return codes, enable states, clock event bits, fabric states) have
 * gpuvet's names here. Only the readers (nvml_facts.c, nvml_events.c) and the writers
 * (bindings/nvml_tune.c), and the commands that load the library, include bindings/nvml.h.
 *
 * Collection never hangs (docs/nvml.md): each GPU is read by its own thread, every call
 * under a per-call deadline and every GPU under a budget; a call that does not return in
 * time abandons that GPU, its remaining facts become NV_TIMEOUT, and the run goes on. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* gpuvet's own names for the NVML values readings and checks use: nothing that reads these
 * facts needs NVML's header (bindings/nvml_facts.c asserts each equals NVML's). */
enum nv_rc {
        NV_RC_SUCCESS = 0,
        NV_RC_INVALID_ARGUMENT = 2,
        NV_RC_NOT_SUPPORTED = 3,
        NV_RC_NO_PERMISSION = 4,
        NV_RC_DRIVER_NOT_LOADED = 9,
        NV_RC_TIMEOUT = 10,
        NV_RC_FUNCTION_NOT_FOUND = 13,
        NV_RC_CORRUPTED_INFOROM = 14,
        NV_RC_GPU_IS_LOST = 15,
        NV_RC_ARGUMENT_VERSION_MISMATCH = 25,
        NV_RC_DEPRECATED = 26,
        NV_RC_UNKNOWN = 999,
};

/* Whether a return code says "this driver does not offer it", never "the GPU failed": the
 * GPU or driver lacks the feature (NOT_SUPPORTED), a newer driver withdrew it (DEPRECATED:
 * R590 and later for the applications clocks), or the library has the entry point but no
 * implementation behind it (FUNCTION_NOT_FOUND). */
static inline bool nv_rc_not_offered(int rc) {
        return rc == NV_RC_NOT_SUPPORTED || rc == NV_RC_DEPRECATED || rc == NV_RC_FUNCTION_NOT_FOUND;
}
#define NV_ENABLED 1     /* nvmlEnableState_t's NVML_FEATURE_ENABLED */
#define NV_NVLINK_MAX 36 /* NVML_NVLINK_MAX_LINKS */
#define NV_PSTATE_UNKNOWN 32 /* nvmlPstates_t's NVML_PSTATE_UNKNOWN */

/* The clock event (throttle) reason bits of clock_events (nvmlClocksEventReason*). */
#define NV_CLOCKS_EVENT_GPU_IDLE 0x1ULL
#define NV_CLOCKS_EVENT_APPLICATIONS_CLOCKS_SETTING 0x2ULL
#define NV_CLOCKS_EVENT_SW_POWER_CAP 0x4ULL
#define NV_CLOCKS_EVENT_HW_SLOWDOWN 0x8ULL
#define NV_CLOCKS_EVENT_SYNC_BOOST 0x10ULL
#define NV_CLOCKS_EVENT_SW_THERMAL_SLOWDOWN 0x20ULL
#define NV_CLOCKS_EVENT_HW_THERMAL_SLOWDOWN 0x40ULL
#define NV_CLOCKS_EVENT_HW_POWER_BRAKE_SLOWDOWN 0x80ULL
#define NV_CLOCKS_EVENT_DISPLAY_CLOCK_SETTING 0x100ULL

/* Fabric registration states, health summaries and health mask fields (NVML_GPU_FABRIC_*). */
#define NV_FABRIC_STATE_NOT_SUPPORTED 0
#define NV_FABRIC_STATE_NOT_STARTED 1
#define NV_FABRIC_STATE_IN_PROGRESS 2
#define NV_FABRIC_STATE_COMPLETED 3
#define NV_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED 0
#define NV_FABRIC_HEALTH_SUMMARY_HEALTHY 1
#define NV_FABRIC_HEALTH_SUMMARY_UNHEALTHY 2
#define NV_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY 3
#define NV_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW 0
#define NV_FABRIC_HEALTH_MASK_SHIFT_ROUTE_RECOVERY 2
#define NV_FABRIC_HEALTH_MASK_SHIFT_ROUTE_UNHEALTHY 4
#define NV_FABRIC_HEALTH_MASK_SHIFT_ACCESS_TIMEOUT_RECOVERY 6
#define NV_FABRIC_HEALTH_MASK_SHIFT_INCORRECT_CONFIGURATION 8
#define NV_FABRIC_HEALTH_MASK_WIDTH_INCORRECT_CONFIGURATION 0xf
#define NV_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NONE 1

/* "NVML_ERROR_GPU_IS_LOST" for a return code; "NVML_ERROR_<n>" for unknown codes. */
const char *nv_rc_name(int rc);
struct nvml_lib;
/* A sentence for a return code: the library's nvmlErrorString when lib is loaded, else
 * gpuvet's own. */
const char *nv_rc_text(const struct nvml_lib *lib, int rc);

/* The library, for the commands that load it (bindings/nvml.c searches --nvml-lib, then
 * $GPUVET_NVML_LIB, then the sonames); its types stay in bindings/. nv_lib_open returns 0 or
 * a negative errno with err saying what was tried; nv_lib_close accepts NULL and returns
 * NULL (never while a thread may still be in a call); nv_lib_path is the file loaded. */
#define NV_LIB_ENV "GPUVET_NVML_LIB"
int nv_lib_open(const char *path, struct nvml_lib **ret, char *err, size_t size);
struct nvml_lib *nv_lib_close(struct nvml_lib *lib);
const char *nv_lib_path(const struct nvml_lib *lib);

/* A command's NVML reading as it shows it (cmd/nvml_use.c fills it; info, topo and the
 * checks' reports read it). */
struct nvml_facts;
struct nvml_reading;
struct nvml_use {
        struct nvml_lib *lib;  /* NULL when not loaded */
        struct nvml_facts *nv; /* f->nvml of the facts given to nvml_use_start */
        char why[768];         /* when nv->init_state != NVML_INIT_OK: one line saying why */
        /* The state to report: nvml_init_state_name(), or after a good init "error" or
         * "timeout" when a system call (versions, device count) failed or hung; then
         * problem says which and how, else it is "". */
        const char *status;
        char problem[256];
        double read_ms;                 /* monotonic_ms() when the gather returned; 0: none */
        struct nvml_reading *reading;   /* begun on a thread, not joined yet (cmd/nvml_use.c) */
};

/* What went wrong with an NVML reading, without the function: "Unknown Error", "did not
 * return within 1000 ms"; NULL when it is fine or merely unsupported. */
const char *nvml_reading_error(const struct nvml_use *u, int gpu, unsigned char state, int rc, const char *fn,
                               char *buf, size_t size);
/* One line on an NVML reading that failed or hung ("nvmlDeviceGetPciInfo_v3: Unknown
 * Error", "nvmlDeviceGetNvLinkState did not return within 1000 ms") of GPU gpu (NVML
 * index; -1 for system calls), or NULL when it is fine or merely unsupported. */
const char *nvml_reading_problem(const struct nvml_use *u, int gpu, unsigned char state, int rc, const char *fn,
                                 char *buf, size_t size);

struct nvmlDevice_st;

enum nv_state {
        NV_UNREAD = 0,   /* not asked */
        NV_OK,           /* v is valid */
        NV_ERROR,        /* NVML returned rc */
        NV_TIMEOUT,      /* fn never returned within the deadline (this or an earlier call) */
        NV_NO_FUNCTION,  /* the library lacks fn (optional symbol); rc = FUNCTION_NOT_FOUND */
        NV_STATE_COUNT
};

/* The common head of every reading: state, NVML's rc (NVML_SUCCESS when NV_OK), and fn,
 * the NVML function it came from (a string literal; for NV_TIMEOUT the function that hung,
 * which is the function of this reading or one called before it). */
struct nv_u32 {
        unsigned char state;
        int rc;
        const char *fn;
        unsigned int v;
};
struct nv_i32 {
        unsigned char state;
        int rc;
        const char *fn;
        int v;
};
struct nv_u64 {
        unsigned char state;
        int rc;
        const char *fn;
        unsigned long long v;
};
struct nv_f64 {
        unsigned char state;
        int rc;
        const char *fn;
        double v;
};
#define NV_STR_MAX 96
struct nv_str {
        unsigned char state;
        int rc;
        const char *fn;
        char v[NV_STR_MAX]; /* NUL-terminated */
};

/* Convenience: true when a reading holds a value. */
#define nv_ok(f) ((f).state == NV_OK)

/* Clock arrays are indexed by nvmlClockType_t. */
enum nvml_clock {
        NVML_CLK_GRAPHICS = 0, /* NVML_CLOCK_GRAPHICS */
        NVML_CLK_SM = 1,       /* NVML_CLOCK_SM */
        NVML_CLK_MEM = 2,      /* NVML_CLOCK_MEM */
        NVML_CLK_VIDEO = 3,    /* NVML_CLOCK_VIDEO */
        NVML_CLK_COUNT
};

/* NVLink error counters, indexed by nvmlNvLinkErrorCounter_t. */
enum nvml_nvlink_counter {
        NVML_NVL_REPLAY = 0,   /* NVML_NVLINK_ERROR_DL_REPLAY */
        NVML_NVL_RECOVERY = 1, /* NVML_NVLINK_ERROR_DL_RECOVERY */
        NVML_NVL_CRC_FLIT = 2, /* NVML_NVLINK_ERROR_DL_CRC_FLIT */
        NVML_NVL_CRC_DATA = 3, /* NVML_NVLINK_ERROR_DL_CRC_DATA */
        NVML_NVL_ECC_DATA = 4, /* NVML_NVLINK_ERROR_DL_ECC_DATA */
        NVML_NVL_COUNTER_COUNT
};

/* NVLink5 counters (Blackwell and later, whose links answer NOT_SUPPORTED for the counters
 * above), indexed by nvlink5[]: each NVML_FI_DEV_NVLINK_COUNT_* field since the driver
 * loaded, summed over the links by NVML (scopeId UINT_MAX, as DCGM reads them). The error
 * counts come first, then the two bit error rates, as NVML packs them (nvml_nvlink5_ber),
 * then the 16 bins of the FEC history. */
enum nvml_nvlink5_counter {
        NVML_NVL5_SYMBOL_ERRORS = 0,     /* _SYMBOL_ERRORS: rx symbol errors */
        NVML_NVL5_EFFECTIVE_ERRORS,      /* _EFFECTIVE_ERRORS */
        NVML_NVL5_RECOVERY_EVENTS,       /* _LINK_RECOVERY_EVENTS: up to recovery, whatever came of it */
        NVML_NVL5_RECOVERY_SUCCESSFUL,   /* _LINK_RECOVERY_SUCCESSFUL_EVENTS */
        NVML_NVL5_RECOVERY_FAILED,       /* _LINK_RECOVERY_FAILED_EVENTS: the link was declared down */
        NVML_NVL5_MALFORMED_PACKETS,     /* _MALFORMED_PACKET_ERRORS */
        NVML_NVL5_BUFFER_OVERRUN,        /* _BUFFER_OVERRUN_ERRORS: rx packets dropped */
        NVML_NVL5_RCV_ERRORS,            /* _RCV_ERRORS */
        NVML_NVL5_RCV_REMOTE_ERRORS,     /* _RCV_REMOTE_ERRORS */
        NVML_NVL5_RCV_GENERAL_ERRORS,    /* _RCV_GENERAL_ERRORS */
        NVML_NVL5_LOCAL_LINK_INTEGRITY,  /* _LOCAL_LINK_INTEGRITY_ERRORS */
        NVML_NVL5_SYMBOL_BER,            /* _SYMBOL_BER, packed */
        NVML_NVL5_EFFECTIVE_BER,         /* _EFFECTIVE_BER, packed */
        NVML_NVL5_FEC_HISTORY_0,         /* _FEC_HISTORY_0 .. _15: codewords with N symbols corrected */
        NVML_NVL5_COUNT = NVML_NVL5_FEC_HISTORY_0 + 16
};
#define NVML_NVL5_FIRST_BER NVML_NVL5_SYMBOL_BER

/* A packed NVLink5 BER: the mantissa in bits 8..11, the exponent in bits 0..7, the rate
 * being mantissa * 10^-exponent (NVML_NVLINK_ERROR_COUNTER_BER_GET). */
#define NV_NVLINK5_BER_MANTISSA_SHIFT 8  /* NVML_NVLINK_BER_MANTISSA_SHIFT */
#define NV_NVLINK5_BER_MANTISSA_WIDTH 0xf /* NVML_NVLINK_BER_MANTISSA_WIDTH */
#define NV_NVLINK5_BER_EXP_SHIFT 0        /* NVML_NVLINK_BER_EXP_SHIFT */
#define NV_NVLINK5_BER_EXP_WIDTH 0xff     /* NVML_NVLINK_BER_EXP_WIDTH */
static inline unsigned int nvml_nvlink5_ber_mantissa(unsigned long long v) {
        return (unsigned int)(v >> NV_NVLINK5_BER_MANTISSA_SHIFT) & NV_NVLINK5_BER_MANTISSA_WIDTH;
}
static inline unsigned int nvml_nvlink5_ber_exponent(unsigned long long v) {
        return (unsigned int)(v >> NV_NVLINK5_BER_EXP_SHIFT) & NV_NVLINK5_BER_EXP_WIDTH;
}

/* How long each limiter has held the clocks down since the driver loaded (violation_ns[],
 * nanoseconds, counters). The first six are nvmlPerfPolicyType_t's policies (POWER is the
 * SW power cap reason, THERMAL the SW thermal slowdown reason: NVIDIA's header maps one to
 * the other); the last two reasons have a field (CUDA 13's header) and no call. docs/nvml.md. */
enum nvml_violation {
        NVML_VIOL_POWER = 0,          /* NVML_PERF_POLICY_POWER; smi sw_power_cap */
        NVML_VIOL_THERMAL = 1,        /* NVML_PERF_POLICY_THERMAL; smi sw_thermal_slowdown */
        NVML_VIOL_SYNC_BOOST = 2,     /* NVML_PERF_POLICY_SYNC_BOOST */
        NVML_VIOL_BOARD_LIMIT = 3,    /* NVML_PERF_POLICY_BOARD_LIMIT */
        NVML_VIOL_LOW_UTIL = 4,       /* NVML_PERF_POLICY_LOW_UTILIZATION */
        NVML_VIOL_RELIABILITY = 5,    /* NVML_PERF_POLICY_RELIABILITY */
        NVML_VIOL_TOTAL_BASE_CLOCKS,  /* NVML_PERF_POLICY_TOTAL_BASE_CLOCKS: below base clocks */
        NVML_VIOL_HW_THERMAL,         /* field only; smi hw_thermal_slowdown */
        NVML_VIOL_HW_POWER_BRAKE,     /* field only; smi hw_power_brake_slowdown */
        NVML_VIOL_COUNT
};

/* What GPM measured over the window between two samples of the GPU's counters (Hopper and
 * later), indexed by gpm[]: activity as percent of the window (nvmlGpmMetricId_t's
 * "0.0 - 100.0"), traffic in MiB/s, as NVML gives them. */
enum nvml_gpm_metric {
        NVML_GPM_GRAPHICS = 0,  /* NVML_GPM_METRIC_GRAPHICS_UTIL: a context was active */
        NVML_GPM_SM_ACTIVE,     /* NVML_GPM_METRIC_SM_UTIL: SMs with a warp assigned */
        NVML_GPM_SM_OCCUPANCY,  /* NVML_GPM_METRIC_SM_OCCUPANCY: resident warps of the maximum */
        NVML_GPM_TENSOR,        /* NVML_GPM_METRIC_ANY_TENSOR_UTIL */
        NVML_GPM_DRAM,          /* NVML_GPM_METRIC_DRAM_BW_UTIL: of peak DRAM bandwidth */
        NVML_GPM_FP64,          /* NVML_GPM_METRIC_FP64_UTIL (non-tensor) */
        NVML_GPM_FP32,          /* NVML_GPM_METRIC_FP32_UTIL */
        NVML_GPM_FP16,          /* NVML_GPM_METRIC_FP16_UTIL */
        NVML_GPM_PCIE_TX,       /* NVML_GPM_METRIC_PCIE_TX_PER_SEC, MiB/s */
        NVML_GPM_PCIE_RX,       /* NVML_GPM_METRIC_PCIE_RX_PER_SEC */
        NVML_GPM_NVLINK_TX,     /* NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC */
        NVML_GPM_NVLINK_RX,     /* NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC */
        NVML_GPM_COUNT
};
/* NVML asks for more than this between two samples (its counters refresh at that rate). */
#define NVML_GPM_MIN_WINDOW_MS 100u

struct nvml_nvlink {
        struct nv_u32 state;                           /* nvmlEnableState_t: 1 = active */
        struct nv_u64 errors[NVML_NVL_COUNTER_COUNT];  /* read for active links only */
        struct nv_str remote_bus_id;                   /* sysfs form "0000:1b:00.0" */
        struct nv_u32 remote_device_id;                /* pciDeviceId of the far end */
};

struct nvml_process {
        unsigned int pid;
        unsigned long long used_bytes; /* NVML_VALUE_NOT_AVAILABLE (~0ULL) when unknown */
        unsigned int gpu_instance_id;  /* 0xFFFFFFFF when not MIG */
        unsigned int compute_instance_id;
};

/* A process list: state/rc/fn as the nv_* readings; v has count entries (may be NULL). */
struct nvml_procs {
        unsigned char state;
        int rc;
        const char *fn;
        unsigned int count;
        struct nvml_process *v;
};

/* One process's share of the GPU in the driver's latest sample of it
 * (nvmlProcessUtilizationSample_t), percent of the sample period; NV_UTIL_UNKNOWN where the
 * driver gave a value above 100. */
#define NV_UTIL_UNKNOWN 0xFFFFFFFFu
struct nvml_process_util {
        unsigned int pid;
        unsigned long long timestamp_us; /* the sample's CPU time stamp */
        unsigned int sm, memory, encoder, decoder;
};

/* The processes sampled in the last NVML_PROC_UTIL_WINDOW_US, one entry per PID (its
 * latest sample); state/rc/fn as the nv_* readings. A process of the process lists
 * without an entry did not run on the GPU in the window (0 %). */
#define NVML_PROC_UTIL_WINDOW_US 3000000ULL
struct nvml_proc_utils {
        unsigned char state;
        int rc;
        const char *fn;
        unsigned int count;
        struct nvml_process_util *v;
};

/* One GPU as NVML sees it, index = NVML's device index. */
struct nvml_gpu {
        unsigned int index;
        bool timed_out;          /* a call never returned: facts from timeout_fn on are NV_TIMEOUT */
        const char *timeout_fn;  /* the function that hung (NULL when !timed_out) */
        unsigned int timeout_ms; /* how long it had run when abandoned */
        unsigned int gather_ms;  /* time taken to read this GPU (up to abandonment) */

        /* nvmlDeviceGetHandleByIndex_v2: when it fails every other fact is NV_ERROR with
         * its rc and fn. device is valid while NVML stays initialised (until
         * nvml_facts_done), for callers that need further calls (topology, events). */
        struct nv_u32 handle; /* v unused */
        struct nvmlDevice_st *device; /* NVML's nvmlDevice_t */

        /* Identity */
        struct nv_str name;
        struct nv_str uuid;
        struct nv_str serial;
        struct nv_str vbios;
        struct nv_str inforom_image;    /* InfoROM image version, "G520.0200.00.05" */
        /* nvmlDeviceValidateInforom: v = 1 when its checksum holds; rc
         * NVML_ERROR_CORRUPTED_INFOROM when it does not. */
        struct nv_u32 inforom_valid;
        struct nv_str pci_bus_id;       /* nvmlDeviceGetPciInfo_v3, normalised to sysfs form */
        struct nv_u32 pci_device_id;    /* device << 16 | vendor (0x233010de: H100 SXM) */
        struct nv_u32 pci_subsystem_id;
        struct nv_u32 minor_number;     /* /dev/nvidia<N> */
        struct nv_u32 brand;            /* nvmlBrandType_t */
        struct nv_u32 architecture;     /* nvmlDeviceArchitecture_t */
        struct nv_i32 cc_major;         /* CUDA compute capability */
        struct nv_i32 cc_minor;

        /* Memory (bytes). nvmlDeviceGetMemoryInfo_v2 when the library has it, else v1;
         * mem_reserved then records v2's absence or error. */
        struct nv_u64 mem_total_bytes;
        struct nv_u64 mem_used_bytes;
        struct nv_u64 mem_free_bytes;
        struct nv_u64 mem_reserved_bytes;
        struct nv_u64 bar1_total_bytes;
        struct nv_u64 bar1_used_bytes;
        struct nv_u64 bar1_free_bytes;

        /* Thermal (degrees C) */
        struct nv_u32 temp_c;
        struct nv_u32 temp_slowdown_c;
        struct nv_u32 temp_shutdown_c;
        struct nv_u32 temp_gpu_max_c;
        struct nv_u32 temp_mem_max_c;
        /* Ada and later, R570+: degrees C left to the nearest slowdown threshold
         * (nvmlDeviceGetMarginTemperature; nvidia-smi's "GPU T.Limit Temp"), and the T.Limit
         * thresholds on the same scale (fields 193-196, negative past the limit: H100 slows
         * down at -2 and shuts down at -8). */
        struct nv_i32 temp_margin_c;
        struct nv_i32 tlimit_shutdown_c;
        struct nv_i32 tlimit_slowdown_c;
        struct nv_i32 tlimit_mem_max_c;
        struct nv_i32 tlimit_gpu_max_c;
        /* Memory (HBM) temperature, field NVML_FI_DEV_MEMORY_TEMP: NOT_SUPPORTED on boards
         * without a memory sensor (GDDR). */
        struct nv_u32 temp_memory_c;

        /* Power (milliwatts) */
        struct nv_u32 power_mw;
        /* Energy the GPU used since the driver loaded, millijoules
         * (nvmlDeviceGetTotalEnergyConsumption; Volta and later, NOT_SUPPORTED before). */
        struct nv_u64 energy_mj;
        struct nv_u32 power_limit_mw;
        struct nv_u32 power_default_limit_mw;
        struct nv_u32 power_enforced_limit_mw;
        struct nv_u32 power_min_limit_mw;
        struct nv_u32 power_max_limit_mw;

        /* Clocks (MHz), indexed by enum nvml_clock */
        struct nv_u32 clock_mhz[NVML_CLK_COUNT];
        struct nv_u32 clock_max_mhz[NVML_CLK_COUNT];
        struct nv_u32 clock_app_mhz[NVML_CLK_COUNT];          /* applications clocks */
        struct nv_u32 clock_default_app_mhz[NVML_CLK_COUNT];
        /* nvmlClocksEventReason* bits; fn tells which entry point answered
         * (nvmlDeviceGetCurrentClocksEventReasons, else ...ThrottleReasons). */
        struct nv_u64 clocks_event_reasons;
        /* Time the clocks were held down, per enum nvml_violation (ns): the field call's
         * NVML_FI_DEV_PERF_POLICY_* / NVML_FI_DEV_CLOCKS_EVENT_REASON_* where it answers,
         * else nvmlDeviceGetViolationStatus (fn says which). */
        struct nv_u64 violation_ns[NVML_VIOL_COUNT];

        struct nv_u32 util_gpu_pct;
        struct nv_u32 util_mem_pct;
        /* Video encoder and decoder engines, percent of NVML's own sampling period
         * (nvmlDeviceGetEncoderUtilization / ...DecoderUtilization); NOT_SUPPORTED in MIG mode. */
        struct nv_u32 util_enc_pct;
        struct nv_u32 util_dec_pct;
        struct nv_u32 pstate;  /* 0..15, 32 = unknown */
        struct nv_u32 fan_pct; /* NOT_SUPPORTED on passively cooled boards */
        /* PCIe traffic, KB/s, over the 20 ms the driver counts inside the call
         * (nvmlDeviceGetPcieThroughput); NOT_SUPPORTED under vGPU. */
        struct nv_u32 pcie_tx_kbs, pcie_rx_kbs;

        /* ECC */
        struct nv_u32 ecc_mode_current; /* nvmlEnableState_t */
        struct nv_u32 ecc_mode_pending;
        /* The board's factory ECC setting (nvmlDeviceGetDefaultEccMode): what NVIDIA ships
         * this SKU with, the driver's word rather than a table of ours. */
        struct nv_u32 ecc_mode_default;
        struct nv_u64 ecc_volatile_corrected;
        struct nv_u64 ecc_volatile_uncorrected;
        struct nv_u64 ecc_aggregate_corrected;
        struct nv_u64 ecc_aggregate_uncorrected;
        /* Uncorrectable errors by where they happened (nvmlDeviceGetMemoryErrorCounter,
         * Turing+): device memory (DRAM) or on-chip SRAM. */
        struct nv_u64 ecc_volatile_uncorrected_dram;
        struct nv_u64 ecc_volatile_uncorrected_sram;
        struct nv_u64 ecc_aggregate_uncorrected_dram;
        struct nv_u64 ecc_aggregate_uncorrected_sram;
        /* nvmlDeviceGetSramEccErrorStatus (Ampere+, root): SRAM errors past the field
         * diagnostic's threshold (nvidia-smi: "SRAM Threshold Exceeded"). */
        struct nv_u32 sram_threshold_exceeded;
        /* Page retirement (pre-Ampere; Ampere+ answer NOT_SUPPORTED and remap rows) */
        struct nv_u32 retired_pages_sbe;     /* cause MULTIPLE_SINGLE_BIT_ECC_ERRORS */
        struct nv_u32 retired_pages_dbe;     /* cause DOUBLE_BIT_ECC_ERROR */
        struct nv_u32 retired_pages_pending; /* nvmlEnableState_t */
        /* Row remapping (Ampere+) */
        struct nv_u32 remap_corrected;
        struct nv_u32 remap_uncorrected;
        struct nv_u32 remap_pending;
        struct nv_u32 remap_failure;
        /* Banks by spare rows left (nvmlDeviceGetRowRemapperHistogram): max, high,
         * partial, low, none (no spare row left). */
        struct nv_u32 remap_hist[5];
        /* nvmlDeviceGetRepairStatus (Blackwell): an HBM channel repair, a TPC repair waiting
         * for a GPU reset to be applied (1 = yes); one call's two answers. */
        struct nv_u32 repair_channel_pending;
        struct nv_u32 repair_tpc_pending;
        /* The driver's recovery action (field NVML_FI_DEV_GET_GPU_RECOVERY_ACTION): 0 none,
         * 1 GPU reset, 2 node reboot, 3 drain P2P, 4 drain and reset ... */
        struct nv_u32 recovery_action;

        /* PCIe */
        struct nv_u32 pcie_gen;
        struct nv_u32 pcie_width;
        struct nv_u32 pcie_max_gen;
        struct nv_u32 pcie_max_width;
        struct nv_u32 pcie_replay;

        /* NVLink: links 0..nvlink_count-1 answered nvmlDeviceGetNvLinkState. The walk stops
         * at the first link index answering NOT_SUPPORTED or INVALID_ARGUMENT (as NVML's own
         * tools do), or on any NV_TIMEOUT / NV_NO_FUNCTION; nvlink_end is that reading
         * (NV_UNREAD when all NVML_NVLINK_MAX_LINKS answered). nvlink_count == 0 with
         * nvlink_end NOT_SUPPORTED: a board without NVLink. */
        unsigned int nvlink_count;
        struct nv_u32 nvlink_end;
        struct nvml_nvlink nvlink[NV_NVLINK_MAX];
        /* Each error counter summed over the active links, as dcgm-exporter's
         * DCGM_FI_DEV_NVLINK_*_ERROR_COUNT_TOTAL: NV_OK only when every link's state and that
         * counter of every active link were read; else the first failing reading's state, rc
         * and fn (NOT_SUPPORTED from nvmlDeviceGetNvLinkState on a board without NVLink), so
         * an unknown total is never written as a partial sum or a zero. 0 when links exist and
         * none is active. Derived from nvlink[], which the checks judge: one reading. */
        struct nv_u64 nvlink_errors_total[NVML_NVL_COUNTER_COUNT];
        /* NVLink5's counters (enum nvml_nvlink5_counter), each its field's own answer in the
         * one field call: NOT_SUPPORTED (or INVALID_ARGUMENT from a driver that does not know
         * the field) before Blackwell. */
        struct nv_u64 nvlink5[NVML_NVL5_COUNT];

        /* Modes */
        struct nv_u32 persistence_mode; /* nvmlEnableState_t */
        struct nv_u32 compute_mode;     /* nvmlComputeMode_t */
        struct nv_u32 display_mode;
        struct nv_u32 display_active;

        /* MIG: mode 1 = enabled. mig_device_count counts the MIG devices that exist
         * (nvmlDeviceGetMigDeviceHandleByIndex for 0..max-1), read when mig_mode_current is 1. */
        struct nv_u32 mig_mode_current;
        struct nv_u32 mig_mode_pending;
        struct nv_u32 mig_max_devices;
        struct nv_u32 mig_device_count;

        /* Running processes (_v3 entry points) */
        struct nvml_procs compute_procs;
        struct nvml_procs graphics_procs;
        struct nvml_proc_utils proc_utils;

        /* GPM (Hopper+), read only by a gather given an nvml_gpm_carry (NV_UNREAD
         * otherwise: a one-shot reading has no window): gpm_supported is
         * nvmlGpmQueryDeviceSupport's answer (1: yes); gpm[] what happened over the
         * gpm_window_ms between the GPU's previous sample and this round's (NV_UNREAD in
         * the first round, which has no previous sample). */
        struct nv_u32 gpm_supported;
        struct nv_f64 gpm[NVML_GPM_COUNT];
        unsigned int gpm_window_ms;

        /* GPU fabric (NVSwitch systems, Hopper+): state NVML_GPU_FABRIC_STATE_*, status the
         * nvmlReturn_t of the fabric registration, clique id */
        struct nv_u32 fabric_state;
        struct nv_u32 fabric_status;
        struct nv_u32 fabric_clique_id;
        struct nv_str fabric_cluster_uuid;   /* "8f1c...-...", all zero when in no cluster */
        /* nvmlDeviceGetGpuFabricInfoV (v3) only: NV_NO_FUNCTION / NOT_SUPPORTED before it */
        struct nv_u32 fabric_health_mask;    /* NVML_GPU_FABRIC_HEALTH_MASK_* fields */
        struct nv_u32 fabric_health_summary; /* NVML_GPU_FABRIC_HEALTH_SUMMARY_* */
};

/* How nvmlInit_v2 went: each failure its own state so that checks give their own result. */
enum nvml_init_state {
        NVML_INIT_NOT_TRIED = 0,
        NVML_INIT_OK,
        NVML_INIT_NO_LIBRARY,        /* no libnvidia-ml could be loaded (lib == NULL) */
        NVML_INIT_DRIVER_NOT_LOADED, /* NVML_ERROR_DRIVER_NOT_LOADED: no nvidia kernel module */
        NVML_INIT_VERSION_MISMATCH,  /* NVML_ERROR_LIB_RM_VERSION_MISMATCH: module != library */
        NVML_INIT_NO_PERMISSION,     /* NVML_ERROR_NO_PERMISSION: /dev/nvidia* not accessible */
        NVML_INIT_ERROR,             /* any other rc (init_rc) */
        NVML_INIT_TIMEOUT,           /* nvmlInit_v2 did not return within the init deadline */
        NVML_INIT_STATE_COUNT
};

/* One call abandoned because it exceeded its deadline (or its GPU's budget). */
struct nvml_timeout {
        const char *fn;          /* NVML function (string literal) */
        int gpu;                 /* NVML index, -1 for system calls (init, versions, count) */
        unsigned int elapsed_ms; /* how long it had run when abandoned */
        bool budget;             /* the GPU's budget (gpu_ms) ran out, not the call's own deadline */
};

/* What a gather reads: the GPU's handle always, then these groups, each one NVML call or
 * a few (docs/nvml.md). A reading of a group not asked for stays NV_UNREAD. The readers
 * run in this order, which is the order of the facts above. */
/* pid's share of g's SM time in its latest sample: 0 when the samples were read and none
 * was of pid (it ran no kernels in the window); -1 when they could not be read or the
 * driver gave a value above 100. gpuvet top's SM column, gpuvet serve's per-process series. */
int nvml_proc_sm_share(const struct nvml_gpu *g, unsigned int pid);

#define NVML_GROUP_LIST(X)                                                                           \
        X(NAME) X(UUID) X(SERIAL) X(PCI) X(VBIOS) X(INFOROM) X(MINOR) X(BRAND) X(ARCH) X(CC)        \
        X(MEMORY) X(BAR1) X(TEMP) X(TEMP_THRESHOLDS) X(TEMP_MARGIN) X(THERMAL_FIELDS) X(POWER_DRAW) \
        X(ENERGY) X(POWER_LIMIT) X(POWER_DEFAULT_LIMIT) X(POWER_ENFORCED_LIMIT) X(POWER_CONSTRAINTS)      \
        X(CLOCKS) X(CLOCKS_MAX) X(CLOCKS_APP) X(CLOCKS_DEFAULT_APP) X(CLOCK_REASONS) X(VIOLATIONS)      \
        X(UTIL) X(CODEC_UTIL) X(PSTATE) X(FAN) X(PCIE_THROUGHPUT)                                       \
        X(ECC_MODE) X(ECC_DEFAULT_MODE) X(ECC_COUNTS) X(ECC_LOCATION) X(RETIRED_PAGES) X(REMAP)      \
        X(REPAIR)                                                                                   \
        X(RECOVERY) X(REMAP_HIST) X(PCIE_LINK) X(PCIE_REPLAY) X(NVLINK) X(PERSISTENCE)               \
        X(COMPUTE_MODE) X(DISPLAY) X(MIG) X(PROCS) X(PROC_UTIL) X(FABRIC) X(GPM)

enum nvml_group {
#define NVML_GROUP_ENUM(name) NVML_GROUP_##name,
        NVML_GROUP_LIST(NVML_GROUP_ENUM)
#undef NVML_GROUP_ENUM
        NVML_GROUP_COUNT
};

/* A set of groups; NVML_GROUPS_ALL reads every fact but those read only when named:
 * PCIE_THROUGHPUT blocks 20 ms a GPU inside the driver, so only gpuvet top asks for it. */
typedef unsigned long long nvml_groups;
#define NVML_GROUPS_ALL (~0ULL & ~(1ULL << NVML_GROUP_PCIE_THROUGHPUT))
_Static_assert(NVML_GROUP_COUNT <= 64, "nvml_groups holds one bit per group");
static inline nvml_groups nvml_group_bit(enum nvml_group g) { return 1ULL << g; }

/* Deadlines in milliseconds; 0 in a field (or a NULL struct) means its default. */
struct nvml_deadlines {
        unsigned int call_ms; /* one NVML call */
        unsigned int gpu_ms;  /* all calls for one GPU */
        unsigned int init_ms; /* nvmlInit_v2 (slow without persistence mode: it wakes GPUs) */
        /* NULL, or polled while the calls run (see deadline_spec.stop_requested): true
         * cuts the gather short, leaving facts->stopped set. */
        bool (*stop_requested)(void *stop_ctx);
        void *stop_ctx;
};
#define NVML_DEADLINE_CALL_MS_DEFAULT 2000u
#define NVML_DEADLINE_GPU_MS_DEFAULT 20000u
#define NVML_DEADLINE_INIT_MS_DEFAULT 20000u

/* More GPUs than this are not read (NVML reports at most 64 on any shipping system). */
#define NVML_FACTS_MAX_GPUS 256u

struct nvml_facts {
        enum nvml_init_state init_state;
        int init_rc;               /* nvmlInit_v2's return (when tried and returned) */
        bool initialized;          /* nvmlInit_v2 succeeded; nvml_facts_done shuts down */

        struct nv_str driver_version;        /* "550.54.15" */
        struct nv_str nvml_version;          /* "12.550.54.15" */
        struct nv_i32 cuda_driver_version;   /* 12040 */
        char cuda_driver_version_str[16];    /* "12.4", "" when unknown */
        struct nv_u32 device_count;          /* nvmlDeviceGetCount_v2 */

        unsigned int n_gpus;  /* entries in gpus: device_count (capped), 0 when unknown */
        struct nvml_gpu *gpus;

        unsigned int n_timeouts;
        struct nvml_timeout *timeouts;

        /* Some call never returned. The stuck thread may hold NVML's locks and still run
         * library code: never nvmlShutdown, never unload the library (nvml_lib_free), and
         * leave with _exit once the report is written (exit handlers could block). Stays
         * valid after nvml_facts_done. */
        bool abandoned;
        /* The gather was cut short because dl->stop_requested said so: the facts are
         * incomplete and must not be reported. Implies abandoned. */
        bool stopped;

        unsigned int gather_ms; /* wall time of nvml_facts_gather */
        nvml_groups groups;     /* what was read (NVML_GROUPS_ALL: every fact read unasked) */

        /* private */
        struct nvml_lib *lib;
        struct nvml_deadlines dl;
};

/* Read every fact from lib (NULL: no library could be loaded, which gives
 * init_state NVML_INIT_NO_LIBRARY) under the deadlines dl (NULL: defaults). Calls
 * nvmlInit_v2; NVML stays initialised until nvml_facts_done. Failures of NVML calls are
 * recorded in the facts, never returned. Returns 0, -ENOMEM, or -EAGAIN when a thread
 * could not be created (the facts then hold what was read). */
int nvml_facts_gather(struct nvml_lib *lib, const struct nvml_deadlines *dl, struct nvml_facts *ret);

/* nvml_facts_gather, reading only the groups asked for: `query --query-gpu=name` makes two
 * calls per GPU (handle, name), not the ~190 of every fact. */
int nvml_facts_gather_some(struct nvml_lib *lib, const struct nvml_deadlines *dl, nvml_groups groups,
                           struct nvml_facts *ret);

/* GPM's samples of each GPU, kept from one gather to the next by a caller that reads
 * rounds (the sampler): each round samples every GPU again and reads gpm[] over the time
 * since its previous sample. One carry per sequence of gathers, never two at once. */
struct nvml_gpm_carry;
/* NULL when out of memory. */
struct nvml_gpm_carry *nvml_gpm_carry_new(void);
/* nvml_facts_gather_some, keeping GPM samples in carry (NULL: none, gpm[] stays NV_UNREAD).
 * A GPU abandoned in a call leaves its samples to the stuck thread. */
int nvml_facts_gather_carry(struct nvml_lib *lib, const struct nvml_deadlines *dl, nvml_groups groups,
                            struct nvml_gpm_carry *carry, struct nvml_facts *ret);
/* Free the carry and NVML's samples in it (nvmlGpmSampleFree under the call deadline):
 * while NVML is still initialised (before the last gather's nvml_facts_done), and with
 * abandoned true when a call was ever abandoned (then the samples are left, not freed).
 * Returns true when a free itself hung. Accepts NULL. */
bool nvml_gpm_carry_free(struct nvml_gpm_carry *carry, struct nvml_lib *lib, const struct nvml_deadlines *dl,
                         bool abandoned);

/* Free what gather allocated and nvmlShutdown (under the call deadline) unless a call was
 * abandoned. Safe while abandoned workers still run: they own their memory. Does not
 * unload lib. f->abandoned stays valid (and is set if nvmlShutdown itself hung). */
void nvml_facts_done(struct nvml_facts *f);

/* "00000000:1B:00.0" (NVML) -> "0000:1b:00.0" (sysfs). Returns 0, or -EINVAL when in is
 * not a PCI address (out then holds in as given, cut to fit). */
int nvml_bus_id_normalise(const char *in, char *out, unsigned int outsize);

/* Names for logs and reports: "ok", "error", "timeout", "no function", "unread";
 * "ok", "no library", "driver not loaded", "version mismatch", "no permission", "error",
 * "timeout", "not tried". */
const char *nv_state_name(unsigned char state);
const char *nvml_init_state_name(enum nvml_init_state s);

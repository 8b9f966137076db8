/* The part of the NVIDIA Management Library API that gpuvet uses, declared here so that
 * gpuvet builds without the NVML SDK and loads libnvidia-ml.so.1 at run time (dlopen).
 *
 * Names, values and layouts are NVML's own (nvml.h of CUDA 13, which keeps them
 * compatible back to the R450 drivers for everything here). tests/abi/ compiles these
 * declarations next to the official header from PyPI's nvidia-nvml-dev and fails on any
 * difference: a function's parameter list fails the build, an enum or constant value, a
 * struct size or a field's offset, size or type fails the nvml_abi test. Every item here
 * must be listed in tests/abi/abi_items.def (the nvml_abi_items test says which is not).
 * Only what gpuvet reads is declared; add to it, never guess. */
#pragma once

typedef enum nvmlReturn_enum {
        NVML_SUCCESS = 0,
        NVML_ERROR_UNINITIALIZED = 1,
        NVML_ERROR_INVALID_ARGUMENT = 2,
        NVML_ERROR_NOT_SUPPORTED = 3,
        NVML_ERROR_NO_PERMISSION = 4,
        NVML_ERROR_ALREADY_INITIALIZED = 5,
        NVML_ERROR_NOT_FOUND = 6,
        NVML_ERROR_INSUFFICIENT_SIZE = 7,
        NVML_ERROR_INSUFFICIENT_POWER = 8,
        NVML_ERROR_DRIVER_NOT_LOADED = 9,
        NVML_ERROR_TIMEOUT = 10,
        NVML_ERROR_IRQ_ISSUE = 11,
        NVML_ERROR_LIBRARY_NOT_FOUND = 12,
        NVML_ERROR_FUNCTION_NOT_FOUND = 13,
        NVML_ERROR_CORRUPTED_INFOROM = 14,
        NVML_ERROR_GPU_IS_LOST = 15,
        NVML_ERROR_RESET_REQUIRED = 16,
        NVML_ERROR_OPERATING_SYSTEM = 17,
        NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
        NVML_ERROR_IN_USE = 19,
        NVML_ERROR_MEMORY = 20,
        NVML_ERROR_NO_DATA = 21,
        NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
        NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
        NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
        NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
        NVML_ERROR_DEPRECATED = 26,
        NVML_ERROR_NOT_READY = 27,
        NVML_ERROR_GPU_NOT_FOUND = 28,
        NVML_ERROR_INVALID_STATE = 29,
        NVML_ERROR_RESET_TYPE_NOT_SUPPORTED = 30,
        NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;

typedef enum nvmlEnableState_enum {
        NVML_FEATURE_DISABLED = 0,
        NVML_FEATURE_ENABLED = 1
} nvmlEnableState_t;

typedef enum nvmlBrandType_enum {
        NVML_BRAND_UNKNOWN = 0,
        NVML_BRAND_QUADRO = 1,
        NVML_BRAND_TESLA = 2,
        NVML_BRAND_NVS = 3,
        NVML_BRAND_GRID = 4,
        NVML_BRAND_GEFORCE = 5,
        NVML_BRAND_TITAN = 6,
        NVML_BRAND_NVIDIA_VAPPS = 7,
        NVML_BRAND_NVIDIA_VPC = 8,
        NVML_BRAND_NVIDIA_VCS = 9,
        NVML_BRAND_NVIDIA_VWS = 10,
        NVML_BRAND_NVIDIA_CLOUD_GAMING = 11,
        NVML_BRAND_QUADRO_RTX = 12,
        NVML_BRAND_NVIDIA_RTX = 13,
        NVML_BRAND_NVIDIA = 14,
        NVML_BRAND_GEFORCE_RTX = 15,
        NVML_BRAND_TITAN_RTX = 16,
        NVML_BRAND_COUNT = 20
} nvmlBrandType_t;

typedef enum nvmlTemperatureSensors_enum {
        NVML_TEMPERATURE_GPU = 0
} nvmlTemperatureSensors_t;

typedef enum nvmlTemperatureThresholds_enum {
        NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = 0,
        NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1,
        NVML_TEMPERATURE_THRESHOLD_MEM_MAX = 2,
        NVML_TEMPERATURE_THRESHOLD_GPU_MAX = 3
} nvmlTemperatureThresholds_t;

typedef enum nvmlClockType_enum {
        NVML_CLOCK_GRAPHICS = 0,
        NVML_CLOCK_SM = 1,
        NVML_CLOCK_MEM = 2,
        NVML_CLOCK_VIDEO = 3
} nvmlClockType_t;

typedef enum nvmlMemoryErrorType_enum {
        NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
        NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
} nvmlMemoryErrorType_t;

typedef enum nvmlEccCounterType_enum {
        NVML_VOLATILE_ECC = 0,
        NVML_AGGREGATE_ECC = 1
} nvmlEccCounterType_t;

/* Where an ECC error happened (nvmlDeviceGetMemoryErrorCounter); the values gpuvet asks. */
typedef enum nvmlMemoryLocation_enum {
        NVML_MEMORY_LOCATION_DRAM = 2, /* Turing+: device memory (HBM/GDDR) */
        NVML_MEMORY_LOCATION_SRAM = 7, /* Turing+: on-chip SRAM (caches, register files) */
} nvmlMemoryLocation_t;

/* nvmlDeviceGetSramEccErrorStatus (Ampere+, root): SRAM uncorrectable errors and whether
 * they passed the field diagnostic's threshold. */
typedef struct {
        unsigned int version; /* nvmlEccSramErrorStatus_v1 */
        unsigned long long aggregateUncParity;
        unsigned long long aggregateUncSecDed;
        unsigned long long aggregateCor;
        unsigned long long volatileUncParity;
        unsigned long long volatileUncSecDed;
        unsigned long long volatileCor;
        unsigned long long aggregateUncBucketL2;
        unsigned long long aggregateUncBucketSm;
        unsigned long long aggregateUncBucketPcie;
        unsigned long long aggregateUncBucketMcu;
        unsigned long long aggregateUncBucketOther;
        unsigned int bThresholdExceeded;
} nvmlEccSramErrorStatus_v1_t;
#define nvmlEccSramErrorStatus_v1 ((unsigned int)(sizeof(nvmlEccSramErrorStatus_v1_t) | (1u << 24)))

typedef enum nvmlPStates_enum {
        NVML_PSTATE_0 = 0,
        NVML_PSTATE_15 = 15,
        NVML_PSTATE_UNKNOWN = 32
} nvmlPstates_t;

typedef enum nvmlPcieUtilCounter_enum {
        NVML_PCIE_UTIL_TX_BYTES = 0,
        NVML_PCIE_UTIL_RX_BYTES = 1
} nvmlPcieUtilCounter_t;

typedef enum nvmlComputeMode_enum {
        NVML_COMPUTEMODE_DEFAULT = 0,
        NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1,
        NVML_COMPUTEMODE_PROHIBITED = 2,
        NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3
} nvmlComputeMode_t;

typedef enum nvmlPageRetirementCause_enum {
        NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0,
        NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1
} nvmlPageRetirementCause_t;

typedef enum nvmlNvLinkErrorCounter_enum {
        NVML_NVLINK_ERROR_DL_REPLAY = 0,
        NVML_NVLINK_ERROR_DL_RECOVERY = 1,
        NVML_NVLINK_ERROR_DL_CRC_FLIT = 2,
        NVML_NVLINK_ERROR_DL_CRC_DATA = 3,
        NVML_NVLINK_ERROR_DL_ECC_DATA = 4
} nvmlNvLinkErrorCounter_t;

typedef enum nvmlGpuLevel_enum {
        NVML_TOPOLOGY_INTERNAL = 0,
        NVML_TOPOLOGY_SINGLE = 10,
        NVML_TOPOLOGY_MULTIPLE = 20,
        NVML_TOPOLOGY_HOSTBRIDGE = 30,
        NVML_TOPOLOGY_NODE = 40,
        NVML_TOPOLOGY_SYSTEM = 50
} nvmlGpuTopologyLevel_t;

typedef unsigned int nvmlDeviceArchitecture_t;
#define NVML_DEVICE_ARCH_VOLTA 5
#define NVML_DEVICE_ARCH_TURING 6
#define NVML_DEVICE_ARCH_AMPERE 7
#define NVML_DEVICE_ARCH_ADA 8
#define NVML_DEVICE_ARCH_HOPPER 9
#define NVML_DEVICE_ARCH_BLACKWELL 10
#define NVML_DEVICE_ARCH_UNKNOWN 0xffffffff

#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_SERIAL_BUFFER_SIZE 30
#define NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE 32
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE 80
#define NVML_NVLINK_MAX_LINKS 36
#define NVML_GPU_FABRIC_UUID_LEN 16
#define NVML_VALUE_NOT_AVAILABLE (-1)

/* Clock event ("throttle") reasons: a bit mask. */
#define nvmlClocksEventReasonGpuIdle 0x0000000000000001LL
#define nvmlClocksEventReasonApplicationsClocksSetting 0x0000000000000002LL
#define nvmlClocksEventReasonSwPowerCap 0x0000000000000004LL
#define nvmlClocksThrottleReasonHwSlowdown 0x0000000000000008LL
#define nvmlClocksEventReasonSyncBoost 0x0000000000000010LL
#define nvmlClocksEventReasonSwThermalSlowdown 0x0000000000000020LL
#define nvmlClocksThrottleReasonHwThermalSlowdown 0x0000000000000040LL
#define nvmlClocksThrottleReasonHwPowerBrakeSlowdown 0x0000000000000080LL
#define nvmlClocksEventReasonDisplayClockSetting 0x0000000000000100LL

/* Event types for nvmlDeviceRegisterEvents. */
#define nvmlEventTypeSingleBitEccError 0x0000000000000001LL
#define nvmlEventTypeDoubleBitEccError 0x0000000000000002LL
#define nvmlEventTypePState 0x0000000000000004LL
#define nvmlEventTypeXidCriticalError 0x0000000000000008LL

#define NVML_GPU_FABRIC_STATE_NOT_SUPPORTED 0
#define NVML_GPU_FABRIC_STATE_NOT_STARTED 1
#define NVML_GPU_FABRIC_STATE_IN_PROGRESS 2
#define NVML_GPU_FABRIC_STATE_COMPLETED 3

typedef struct nvmlPciInfo_st {
        char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
        unsigned int domain;
        unsigned int bus;
        unsigned int device;
        unsigned int pciDeviceId;    /* device id << 16 | vendor id */
        unsigned int pciSubSystemId;
        char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef struct nvmlMemory_st {
        unsigned long long total;
        unsigned long long free;
        unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlMemory_v2_st {
        unsigned int version;        /* nvmlMemory_v2 */
        unsigned long long total;
        unsigned long long reserved;
        unsigned long long free;
        unsigned long long used;
} nvmlMemory_v2_t;
/* NVML_STRUCT_VERSION(Memory, 2): the struct size with the version in the top byte. */
#define nvmlMemory_v2 ((unsigned int)(sizeof(nvmlMemory_v2_t) | (2u << 24)))

typedef struct nvmlBAR1Memory_st {
        unsigned long long bar1Total;
        unsigned long long bar1Free;
        unsigned long long bar1Used;
} nvmlBAR1Memory_t;

typedef struct nvmlUtilization_st {
        unsigned int gpu;
        unsigned int memory;
} nvmlUtilization_t;

/* nvmlDeviceGetViolationStatus's policies: how long each limiter held the clocks down
 * (violationTime, ns). NVML 13 deprecates the call for the fields below (same counters). */
typedef enum nvmlPerfPolicyType_enum {
        NVML_PERF_POLICY_POWER = 0,
        NVML_PERF_POLICY_THERMAL = 1,
        NVML_PERF_POLICY_SYNC_BOOST = 2,
        NVML_PERF_POLICY_BOARD_LIMIT = 3,
        NVML_PERF_POLICY_LOW_UTILIZATION = 4,
        NVML_PERF_POLICY_RELIABILITY = 5,
        NVML_PERF_POLICY_TOTAL_APP_CLOCKS = 10,
        NVML_PERF_POLICY_TOTAL_BASE_CLOCKS = 11,
        NVML_PERF_POLICY_COUNT
} nvmlPerfPolicyType_t;

typedef struct nvmlViolationTime_st {
        unsigned long long referenceTime; /* CPU timestamp, us */
        unsigned long long violationTime; /* ns */
} nvmlViolationTime_t;

typedef struct nvmlProcessInfo_v2_st {
        unsigned int pid;
        unsigned long long usedGpuMemory;
        unsigned int gpuInstanceId;
        unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t, nvmlProcessInfo_t;

typedef struct nvmlProcessUtilizationSample_st {
        unsigned int pid;
        unsigned long long timeStamp; /* CPU timestamp, us */
        unsigned int smUtil;
        unsigned int memUtil;
        unsigned int encUtil;
        unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

typedef struct nvmlEventData_st {
        nvmlDevice_t device;
        unsigned long long eventType;
        unsigned long long eventData;   /* the Xid, for nvmlEventTypeXidCriticalError */
        unsigned int gpuInstanceId;
        unsigned int computeInstanceId;
} nvmlEventData_t;

/* nvmlDeviceGetFieldValues: one request and answer per field id. */
typedef enum {
        NVML_VALUE_TYPE_DOUBLE = 0,
        NVML_VALUE_TYPE_UNSIGNED_INT = 1,
        NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
        NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
        NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
        NVML_VALUE_TYPE_SIGNED_INT = 5,
        NVML_VALUE_TYPE_UNSIGNED_SHORT = 6,
} nvmlValueType_t;
typedef union nvmlValue_st {
        double dVal;
        int siVal;
        unsigned int uiVal;
        unsigned long ulVal;
        unsigned long long ullVal;
        signed long long sllVal;
        unsigned short usVal;
} nvmlValue_t;
typedef struct nvmlFieldValue_st {
        unsigned int fieldId;
        unsigned int scopeId;
        long long timestamp;
        long long latencyUsec;
        nvmlValueType_t valueType;
        nvmlReturn_t nvmlReturn; /* this field's own answer */
        nvmlValue_t value;
} nvmlFieldValue_t;
/* The driver's recovery action for the GPU (R565+), nvmlDeviceGpuRecoveryAction_t. */
#define NVML_FI_DEV_GET_GPU_RECOVERY_ACTION 230
/* Memory (HBM) temperature, degrees C. */
#define NVML_FI_DEV_MEMORY_TEMP 82
/* The perf policy (violation) counters, ns: nvmlDeviceGetViolationStatus's, one field each. */
#define NVML_FI_DEV_PERF_POLICY_POWER 74
#define NVML_FI_DEV_PERF_POLICY_THERMAL 75
#define NVML_FI_DEV_PERF_POLICY_SYNC_BOOST 76
#define NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT 77
#define NVML_FI_DEV_PERF_POLICY_LOW_UTILIZATION 78
#define NVML_FI_DEV_PERF_POLICY_RELIABILITY 79
#define NVML_FI_DEV_PERF_POLICY_TOTAL_APP_CLOCKS 80
#define NVML_FI_DEV_PERF_POLICY_TOTAL_BASE_CLOCKS 81
/* The clock event reason counters, ns (nvidia-smi's "Clocks Event Reasons Counters"). SW
 * power cap and sync boost are the policy fields under another name. The other three are
 * numbered as in CUDA 13's header: an earlier header (an nvidia-ml-py of 2025) gave them
 * 251-253, numbers CUDA 13's gives to power smoothing, so those are never asked. */
#define NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP NVML_FI_DEV_PERF_POLICY_POWER
#define NVML_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST NVML_FI_DEV_PERF_POLICY_SYNC_BOOST
#define NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN 269
#define NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN 270
#define NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN 271
/* T.Limit thresholds (Ada and later): degrees C relative to the GPU's T.Limit, where the
 * margin (nvmlDeviceGetMarginTemperature) counts down to 0; H100: shutdown -8, slowdown -2. */
#define NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT 193
#define NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT 194
#define NVML_FI_DEV_TEMPERATURE_MEM_MAX_TLIMIT 195
#define NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT 196
/* NVLink: the number of links, each error counter summed over all links, and (Hopper and
 * later; scopeId = link) one link's state: NVML_NVLINK_STATE_INACTIVE 0, _ACTIVE 1 (the
 * values of nvmlEnableState_t), _SLEEP 2, _ACTIVE_TRAFFIC_DISABLED 3. */
#define NVML_FI_DEV_NVLINK_LINK_COUNT 91
#define NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL 38
#define NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL 45
#define NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL 52
#define NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL 59
#define NVML_FI_DEV_NVLINK_ECC_DATA_ERROR_COUNT_TOTAL 160
#define NVML_FI_DEV_NVLINK_GET_STATE 165
/* NVLink5 (Blackwell and later, where the error counters above answer NOT_SUPPORTED): each
 * counter since the driver loaded, summed over the links when scopeId is UINT_MAX (as
 * DCGM reads them). The two BERs are packed: mantissa in bits 8..11, exponent in bits
 * 0..7 (NVML_NVLINK_BER_*), the BER being mantissa * 10^-exponent. */
#define NVML_FI_DEV_NVLINK_COUNT_MALFORMED_PACKET_ERRORS 206
#define NVML_FI_DEV_NVLINK_COUNT_BUFFER_OVERRUN_ERRORS 207
#define NVML_FI_DEV_NVLINK_COUNT_RCV_ERRORS 208
#define NVML_FI_DEV_NVLINK_COUNT_RCV_REMOTE_ERRORS 209
#define NVML_FI_DEV_NVLINK_COUNT_RCV_GENERAL_ERRORS 210
#define NVML_FI_DEV_NVLINK_COUNT_LOCAL_LINK_INTEGRITY_ERRORS 211
#define NVML_FI_DEV_NVLINK_COUNT_LINK_RECOVERY_SUCCESSFUL_EVENTS 213
#define NVML_FI_DEV_NVLINK_COUNT_LINK_RECOVERY_FAILED_EVENTS 214
#define NVML_FI_DEV_NVLINK_COUNT_LINK_RECOVERY_EVENTS 215
#define NVML_FI_DEV_NVLINK_COUNT_EFFECTIVE_ERRORS 219
#define NVML_FI_DEV_NVLINK_COUNT_EFFECTIVE_BER 220
#define NVML_FI_DEV_NVLINK_COUNT_SYMBOL_ERRORS 221
#define NVML_FI_DEV_NVLINK_COUNT_SYMBOL_BER 222
/* The FEC history: bin N counts the codewords in which FEC corrected N symbols. */
#define NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_0 235
#define NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_1 236
#define NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_2 237
#define NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_3 238
#define NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_4 239
#define NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_5 240
#define NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_6 241
#define NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_7 242
#define NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_8 243
#define NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_9 244
#define NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_10 245
#define NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_11 246
#define NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_12 247
#define NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_13 248
#define NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_14 249
#define NVML_FI_DEV_NVLINK_COUNT_FEC_HISTORY_15 250
#define NVML_NVLINK_BER_MANTISSA_SHIFT 8
#define NVML_NVLINK_BER_MANTISSA_WIDTH 0xf
#define NVML_NVLINK_BER_EXP_SHIFT 0
#define NVML_NVLINK_BER_EXP_WIDTH 0xff
/* Memory health, PCIe and power limits, each the same counter as the call named (read in
 * one nvmlDeviceGetFieldValues call, the call kept as the fallback; docs/nvml.md).
 * ECC totals over the device, nvmlDeviceGetTotalEccErrors: SBE = corrected, DBE =
 * uncorrected (nvmlMemoryErrorType_t), VOL = volatile, AGG = aggregate. */
#define NVML_FI_DEV_ECC_SBE_VOL_TOTAL 3
#define NVML_FI_DEV_ECC_DBE_VOL_TOTAL 4
#define NVML_FI_DEV_ECC_SBE_AGG_TOTAL 5
#define NVML_FI_DEV_ECC_DBE_AGG_TOTAL 6
/* Uncorrected ECC errors in device memory, nvmlDeviceGetMemoryErrorCounter(UNCORRECTED,
 * ..., NVML_MEMORY_LOCATION_DEVICE_MEMORY = _DRAM). SRAM has no field. */
#define NVML_FI_DEV_ECC_DBE_VOL_DEV 12
#define NVML_FI_DEV_ECC_DBE_AGG_DEV 23
/* nvmlDeviceGetRetiredPages' counts per cause (single-bit, double-bit) and
 * nvmlDeviceGetRetiredPagesPendingStatus (1 = yes). */
#define NVML_FI_DEV_RETIRED_SBE 29
#define NVML_FI_DEV_RETIRED_DBE 30
#define NVML_FI_DEV_RETIRED_PENDING 31
/* nvmlDeviceGetPcieReplayCounter. */
#define NVML_FI_DEV_PCIE_REPLAY_COUNTER 94
/* nvmlDeviceGetRemappedRows' four answers (pending, failure: 1 = yes). */
#define NVML_FI_DEV_REMAPPED_COR 142
#define NVML_FI_DEV_REMAPPED_UNC 143
#define NVML_FI_DEV_REMAPPED_PENDING 144
#define NVML_FI_DEV_REMAPPED_FAILURE 145
/* Power limits in milliwatts; scopeId picks GPU or module (NVML_POWER_SCOPE_*): min and
 * max as nvmlDeviceGetPowerManagementLimitConstraints, the default as
 * ...PowerManagementDefaultLimit, the current (enforced, all limiters, out of band
 * included) as nvmlDeviceGetEnforcedPowerLimit. The power draw fields (AVERAGE, INSTANT)
 * are not nvmlDeviceGetPowerUsage's reading, which is averaged on Ampere and later
 * but instantaneous before; nor is REQUESTED_LIMIT documented as ...PowerManagementLimit. */
#define NVML_FI_DEV_POWER_MIN_LIMIT 187
#define NVML_FI_DEV_POWER_MAX_LIMIT 188
#define NVML_FI_DEV_POWER_DEFAULT_LIMIT 189
#define NVML_FI_DEV_POWER_CURRENT_LIMIT 190
#define NVML_POWER_SCOPE_GPU 0U

/* nvmlDeviceGetMarginTemperature (R570+): degrees C left to the nearest slowdown
 * threshold, what nvidia-smi prints as "GPU T.Limit Temp". */
typedef struct {
        unsigned int version; /* nvmlMarginTemperature_v1 */
        int marginTemperature;
} nvmlMarginTemperature_v1_t;
typedef nvmlMarginTemperature_v1_t nvmlMarginTemperature_t;
#define nvmlMarginTemperature_v1 ((unsigned int)(sizeof(nvmlMarginTemperature_v1_t) | (1u << 24)))

/* nvmlDeviceGetRepairStatus (Blackwell): an HBM channel or a TPC repair waits for a GPU
 * reset (each 1 = yes). */
typedef struct {
        unsigned int version; /* nvmlRepairStatus_v1 */
        unsigned int bChannelRepairPending;
        unsigned int bTpcRepairPending;
} nvmlRepairStatus_v1_t;
typedef nvmlRepairStatus_v1_t nvmlRepairStatus_t;
#define nvmlRepairStatus_v1 ((unsigned int)(sizeof(nvmlRepairStatus_v1_t) | (1u << 24)))

/* nvmlDeviceGetRowRemapperHistogram (Ampere+): how many memory banks have each level of
 * spare rows left; none = banks where no row can be remapped any more. */
typedef struct nvmlRowRemapperHistogramValues_st {
        unsigned int max;
        unsigned int high;
        unsigned int partial;
        unsigned int low;
        unsigned int none;
} nvmlRowRemapperHistogramValues_t;

typedef unsigned char nvmlGpuFabricState_t;
typedef struct {
        unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
        nvmlReturn_t status;
        unsigned int cliqueId;
        nvmlGpuFabricState_t state;
} nvmlGpuFabricInfo_t;
/* nvmlDeviceGetGpuFabricInfoV's v3 (drivers 550+ on NVLink-switch systems): v1's fields,
 * a version word first, and the fabric's health. */
typedef struct {
        unsigned int version; /* nvmlGpuFabricInfo_v3 */
        unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
        nvmlReturn_t status;
        unsigned int cliqueId;
        nvmlGpuFabricState_t state;
        unsigned int healthMask;     /* NVML_GPU_FABRIC_HEALTH_MASK_* fields */
        unsigned char healthSummary; /* NVML_GPU_FABRIC_HEALTH_SUMMARY_* */
} nvmlGpuFabricInfo_v3_t;
#define nvmlGpuFabricInfo_v3 ((unsigned int)(sizeof(nvmlGpuFabricInfo_v3_t) | (3u << 24)))
#define NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED 0
#define NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY 1
#define NVML_GPU_FABRIC_HEALTH_SUMMARY_UNHEALTHY 2
#define NVML_GPU_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY 3
/* Two-bit fields of healthMask (four bits for the configuration): value 1 is "true" (a
 * problem), 2 "false", 0 not supported. */
#define NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW 0
#define NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_RECOVERY 2
#define NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_UNHEALTHY 4
#define NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ACCESS_TIMEOUT_RECOVERY 6
#define NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_INCORRECT_CONFIGURATION 8
#define NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_INCORRECT_CONFIGURATION 0xf
#define NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NONE 1

/* GPM (GPU Performance Monitoring, Hopper and later): the GPU's own activity counters,
 * read as samples; nvmlGpmMetricsGet turns two samples into rates over the time between
 * them. The metric ids gpuvet asks (nvmlGpmMetricId_t has hundreds). */
typedef enum nvmlGpmMetricId_enum {
        NVML_GPM_METRIC_GRAPHICS_UTIL = 1,
        NVML_GPM_METRIC_SM_UTIL = 2,
        NVML_GPM_METRIC_SM_OCCUPANCY = 3,
        NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5,
        NVML_GPM_METRIC_DRAM_BW_UTIL = 10,
        NVML_GPM_METRIC_FP64_UTIL = 11,
        NVML_GPM_METRIC_FP32_UTIL = 12,
        NVML_GPM_METRIC_FP16_UTIL = 13,
        NVML_GPM_METRIC_PCIE_TX_PER_SEC = 20,
        NVML_GPM_METRIC_PCIE_RX_PER_SEC = 21,
        NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC = 60,
        NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC = 61,
        /* The header's bound on metric ids, which sizes nvmlGpmMetricsGet_t: 98 in R525's,
         * 477 in CUDA 13.5's. A library reads and writes only numMetrics entries, so the
         * newest (largest) size serves every driver. */
        NVML_GPM_METRIC_MAX = 477,
} nvmlGpmMetricId_t;
typedef struct nvmlGpmSample_st *nvmlGpmSample_t;
typedef struct {
        unsigned int metricId;   /* in */
        nvmlReturn_t nvmlReturn; /* out: value holds only when NVML_SUCCESS */
        double value;            /* out */
        struct {
                char *shortName;
                char *longName;
                char *unit;
        } metricInfo;            /* out: the library's strings, may be NULL */
} nvmlGpmMetric_t;
typedef struct {
        unsigned int version;    /* NVML_GPM_METRICS_GET_VERSION */
        unsigned int numMetrics; /* entries of metrics[] asked */
        nvmlGpmSample_t sample1; /* the older sample */
        nvmlGpmSample_t sample2; /* the newer sample */
        nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;
#define NVML_GPM_METRICS_GET_VERSION 1
typedef struct {
        unsigned int version; /* NVML_GPM_SUPPORT_VERSION */
        unsigned int isSupportedDevice;
} nvmlGpmSupport_t;
#define NVML_GPM_SUPPORT_VERSION 1

/* Function pointer types, <symbol>_fn, from the list of functions gpuvet calls. */
#define NVML_FN(required, name, params) typedef nvmlReturn_t(*name##_fn) params;
#include "bindings/nvml_functions.def"
#undef NVML_FN
typedef const char *(*nvmlErrorString_fn)(nvmlReturn_t result);

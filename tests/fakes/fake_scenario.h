/* The fake NVML's model of a machine: what a scenario file (tests/fakes/README.md) says,
 * parsed into plain structs. fake_nvml.c answers NVML calls from it. */
#pragma once

#include <stdbool.h>

#include "bindings/nvml_api.h"

#define FAKE_MAX_GPUS 32
#define FAKE_MAX_MIG 8
#define FAKE_MAX_RULES 256
#define FAKE_MAX_XIDS 64
#define FAKE_MAX_RETIRED 64
#define FAKE_NVLINK_COUNTERS 5
#define FAKE_STR_MAX 96 /* NVML's largest device string buffer (name, UUID v2) */

/* Per-device keys: KEY(id, "scenario name", kind, unit or enum table). */
#define FAKE_KEYS(KEY)                                                          \
        KEY(NAME, "name", KT_STR, NULL)                                         \
        KEY(UUID, "uuid", KT_STR, NULL)                                         \
        KEY(SERIAL, "serial", KT_STR, NULL)                                     \
        KEY(VBIOS, "vbios", KT_STR, NULL)                                       \
        KEY(INFOROM_IMAGE, "inforom_image", KT_STR, NULL)                       \
        KEY(PCI_BUS_ID, "pci_bus_id", KT_BUSID, NULL)                           \
        KEY(PCI_DEVICE_ID, "pci_device_id", KT_U32, NULL)                       \
        KEY(PCI_SUBSYSTEM_ID, "pci_subsystem_id", KT_U32, NULL)                 \
        KEY(MINOR, "minor_number", KT_U32, NULL)                                \
        KEY(BRAND, "brand", KT_ENUM, brand_names)                               \
        KEY(ARCH, "architecture", KT_ENUM, arch_names)                          \
        KEY(CC, "cuda_compute_capability", KT_CC, NULL)                         \
        KEY(MEM_TOTAL, "memory_total", KT_BYTES, NULL)                          \
        KEY(MEM_RESERVED, "memory_reserved", KT_BYTES, NULL)                    \
        KEY(MEM_USED, "memory_used", KT_BYTES, NULL)                            \
        KEY(MEM_FREE, "memory_free", KT_BYTES, NULL)                            \
        KEY(BAR1_TOTAL, "bar1_total", KT_BYTES, NULL)                           \
        KEY(BAR1_USED, "bar1_used", KT_BYTES, NULL)                             \
        KEY(BAR1_FREE, "bar1_free", KT_BYTES, NULL)                             \
        KEY(TEMP, "temperature", KT_U32, "C")                                   \
        KEY(TEMP_SHUTDOWN, "temperature_shutdown", KT_S32, "C")                 \
        KEY(TEMP_SLOWDOWN, "temperature_slowdown", KT_S32, "C")                 \
        KEY(TEMP_MEM_MAX, "temperature_memory_max", KT_S32, "C")                \
        KEY(TEMP_GPU_MAX, "temperature_gpu_max", KT_S32, "C")                   \
        KEY(TEMP_MARGIN, "temperature_margin", KT_S32, "C")                     \
        KEY(TEMP_MEMORY, "temperature_memory", KT_U32, "C")                     \
        KEY(TLIMIT_SHUTDOWN, "temperature_shutdown_tlimit", KT_S32, "C")        \
        KEY(TLIMIT_SLOWDOWN, "temperature_slowdown_tlimit", KT_S32, "C")        \
        KEY(TLIMIT_MEM_MAX, "temperature_memory_max_tlimit", KT_S32, "C")       \
        KEY(TLIMIT_GPU_MAX, "temperature_gpu_max_tlimit", KT_S32, "C")          \
        KEY(POWER_USAGE, "power_usage", KT_MW, NULL)                            \
        KEY(ENERGY, "total_energy_consumption", KT_U64, "mJ")                   \
        KEY(POWER_LIMIT, "power_limit", KT_MW, NULL)                            \
        KEY(POWER_DEFAULT, "power_default_limit", KT_MW, NULL)                  \
        KEY(POWER_ENFORCED, "power_enforced_limit", KT_MW, NULL)                \
        KEY(POWER_MIN, "power_min_limit", KT_MW, NULL)                          \
        KEY(POWER_MAX, "power_max_limit", KT_MW, NULL)                          \
        KEY(CLOCK_GRAPHICS, "clock_graphics", KT_U32, "MHz")                    \
        KEY(CLOCK_SM, "clock_sm", KT_U32, "MHz")                                \
        KEY(CLOCK_MEM, "clock_memory", KT_U32, "MHz")                           \
        KEY(CLOCK_VIDEO, "clock_video", KT_U32, "MHz")                          \
        KEY(MAX_CLOCK_GRAPHICS, "max_clock_graphics", KT_U32, "MHz")            \
        KEY(MAX_CLOCK_SM, "max_clock_sm", KT_U32, "MHz")                        \
        KEY(MAX_CLOCK_MEM, "max_clock_memory", KT_U32, "MHz")                   \
        KEY(MAX_CLOCK_VIDEO, "max_clock_video", KT_U32, "MHz")                  \
        KEY(APP_CLOCK_GRAPHICS, "app_clock_graphics", KT_U32, "MHz")            \
        KEY(APP_CLOCK_SM, "app_clock_sm", KT_U32, "MHz")                        \
        KEY(APP_CLOCK_MEM, "app_clock_memory", KT_U32, "MHz")                   \
        KEY(APP_CLOCK_VIDEO, "app_clock_video", KT_U32, "MHz")                  \
        KEY(DEF_CLOCK_GRAPHICS, "default_app_clock_graphics", KT_U32, "MHz")    \
        KEY(DEF_CLOCK_SM, "default_app_clock_sm", KT_U32, "MHz")                \
        KEY(DEF_CLOCK_MEM, "default_app_clock_memory", KT_U32, "MHz")           \
        KEY(DEF_CLOCK_VIDEO, "default_app_clock_video", KT_U32, "MHz")          \
        KEY(SUPPORTED_MEM_CLOCKS, "supported_memory_clocks", KT_STR, NULL)      \
        KEY(SUPPORTED_GR_CLOCKS, "supported_graphics_clocks", KT_STR, NULL)     \
        KEY(EVENT_REASONS, "clocks_event_reasons", KT_U64, NULL)                \
        KEY(EVENT_REASONS_SUPPORTED, "clocks_event_reasons_supported", KT_U64, NULL) \
        KEY(VIOL_POWER, "violation_power", KT_U64, "ns")                        \
        KEY(VIOL_THERMAL, "violation_thermal", KT_U64, "ns")                    \
        KEY(VIOL_SYNC_BOOST, "violation_sync_boost", KT_U64, "ns")              \
        KEY(VIOL_BOARD_LIMIT, "violation_board_limit", KT_U64, "ns")            \
        KEY(VIOL_LOW_UTIL, "violation_low_utilization", KT_U64, "ns")           \
        KEY(VIOL_RELIABILITY, "violation_reliability", KT_U64, "ns")            \
        KEY(VIOL_TOTAL_BASE, "violation_total_base_clocks", KT_U64, "ns")       \
        KEY(VIOL_HW_THERMAL, "violation_hw_thermal", KT_U64, "ns")              \
        KEY(VIOL_HW_POWER_BRAKE, "violation_hw_power_brake", KT_U64, "ns")      \
        KEY(VIOL_FIELDS, "violation_fields", KT_BOOL, NULL)                     \
        KEY(UTIL_GPU, "utilization_gpu", KT_U32, "%")                           \
        KEY(UTIL_MEM, "utilization_memory", KT_U32, "%")                        \
        KEY(UTIL_ENC, "utilization_encoder", KT_U32, "%")                       \
        KEY(UTIL_DEC, "utilization_decoder", KT_U32, "%")                       \
        KEY(PSTATE, "pstate", KT_PSTATE, NULL)                                  \
        KEY(FAN_SPEED, "fan_speed", KT_U32, "%")                                \
        KEY(NUM_FANS, "num_fans", KT_U32, NULL)                                 \
        KEY(PCIE_TX_KBS, "pcie_tx_throughput", KT_U32, "KB/s")                  \
        KEY(PCIE_RX_KBS, "pcie_rx_throughput", KT_U32, "KB/s")                  \
        KEY(ECC_CURRENT, "ecc_mode_current", KT_BOOL, NULL)                     \
        KEY(ECC_PENDING, "ecc_mode_pending", KT_BOOL, NULL)                     \
        KEY(ECC_DEFAULT, "ecc_mode_default", KT_BOOL, NULL)                     \
        KEY(ECC_VOL_CORR, "ecc_volatile_corrected", KT_U64, NULL)               \
        KEY(ECC_VOL_UNC, "ecc_volatile_uncorrected", KT_U64, NULL)              \
        KEY(ECC_AGG_CORR, "ecc_aggregate_corrected", KT_U64, NULL)              \
        KEY(ECC_AGG_UNC, "ecc_aggregate_uncorrected", KT_U64, NULL)             \
        KEY(ECC_VOL_UNC_DRAM, "ecc_volatile_uncorrected_dram", KT_U64, NULL)    \
        KEY(ECC_VOL_UNC_SRAM, "ecc_volatile_uncorrected_sram", KT_U64, NULL)    \
        KEY(ECC_AGG_UNC_DRAM, "ecc_aggregate_uncorrected_dram", KT_U64, NULL)   \
        KEY(ECC_AGG_UNC_SRAM, "ecc_aggregate_uncorrected_sram", KT_U64, NULL)   \
        KEY(SRAM_THRESHOLD, "sram_threshold_exceeded", KT_BOOL, NULL)           \
        KEY(RETIRED_SBE, "retired_pages_sbe", KT_U32, NULL)                     \
        KEY(RETIRED_DBE, "retired_pages_dbe", KT_U32, NULL)                     \
        KEY(RETIRED_PENDING, "retired_pages_pending", KT_BOOL, NULL)            \
        KEY(REMAP_CORR, "remapped_rows_correctable", KT_U32, NULL)              \
        KEY(REMAP_UNC, "remapped_rows_uncorrectable", KT_U32, NULL)             \
        KEY(REMAP_PENDING, "remapped_rows_pending", KT_BOOL, NULL)              \
        KEY(REMAP_FAILURE, "remapped_rows_failure", KT_BOOL, NULL)              \
        KEY(REMAP_HIST, "remapper_histogram", KT_STR, NULL)                     \
        KEY(REPAIR_CHANNEL, "repair_channel_pending", KT_BOOL, NULL)            \
        KEY(REPAIR_TPC, "repair_tpc_pending", KT_BOOL, NULL)                    \
        KEY(INFOROM_VALID, "inforom_valid", KT_BOOL, NULL)                      \
        KEY(RECOVERY_ACTION, "recovery_action", KT_U32, NULL)                   \
        KEY(PCIE_GEN_CUR, "pcie_gen_current", KT_U32, NULL)                     \
        KEY(PCIE_GEN_MAX, "pcie_gen_max", KT_U32, NULL)                         \
        KEY(PCIE_WIDTH_CUR, "pcie_width_current", KT_U32, "x")                  \
        KEY(PCIE_WIDTH_MAX, "pcie_width_max", KT_U32, "x")                      \
        KEY(PCIE_REPLAY, "pcie_replay_counter", KT_U32, NULL)                   \
        KEY(NVLINK_COUNT, "nvlink_count", KT_U32, NULL)                         \
        KEY(NVLINK_FIELDS, "nvlink_fields", KT_BOOL, NULL)                      \
        KEY(NVLINK_ERROR_COUNTERS, "nvlink_error_counters", KT_BOOL, NULL)      \
        KEY(NVL5_SYMBOL_ERRORS, "nvlink5_symbol_errors", KT_U64, NULL)          \
        KEY(NVL5_EFFECTIVE_ERRORS, "nvlink5_effective_errors", KT_U64, NULL)    \
        KEY(NVL5_RECOVERY_EVENTS, "nvlink5_recovery_events", KT_U64, NULL)      \
        KEY(NVL5_RECOVERY_SUCCESSFUL, "nvlink5_recovery_successful", KT_U64, NULL) \
        KEY(NVL5_RECOVERY_FAILED, "nvlink5_recovery_failed", KT_U64, NULL)      \
        KEY(NVL5_MALFORMED_PACKETS, "nvlink5_malformed_packets", KT_U64, NULL)  \
        KEY(NVL5_BUFFER_OVERRUN, "nvlink5_buffer_overrun", KT_U64, NULL)        \
        KEY(NVL5_RCV_ERRORS, "nvlink5_rcv_errors", KT_U64, NULL)                \
        KEY(NVL5_RCV_REMOTE_ERRORS, "nvlink5_rcv_remote_errors", KT_U64, NULL)  \
        KEY(NVL5_RCV_GENERAL_ERRORS, "nvlink5_rcv_general_errors", KT_U64, NULL) \
        KEY(NVL5_LOCAL_LINK_INTEGRITY, "nvlink5_local_link_integrity", KT_U64, NULL) \
        KEY(NVL5_SYMBOL_BER, "nvlink5_symbol_ber", KT_U64, NULL)                \
        KEY(NVL5_EFFECTIVE_BER, "nvlink5_effective_ber", KT_U64, NULL)          \
        KEY(NVL5_FEC_HISTORY, "nvlink5_fec_history", KT_STR, NULL)              \
        KEY(HEALTH_FIELDS, "health_fields", KT_BOOL, NULL)                      \
        KEY(PERSISTENCE, "persistence_mode", KT_BOOL, NULL)                     \
        KEY(COMPUTE_MODE, "compute_mode", KT_ENUM, compute_mode_names)          \
        KEY(DISPLAY_MODE, "display_mode", KT_BOOL, NULL)                        \
        KEY(DISPLAY_ACTIVE, "display_active", KT_BOOL, NULL)                    \
        KEY(MIG_CURRENT, "mig_mode_current", KT_BOOL, NULL)                     \
        KEY(MIG_PENDING, "mig_mode_pending", KT_BOOL, NULL)                     \
        KEY(MIG_MAX, "max_mig_devices", KT_U32, NULL)                           \
        KEY(GPU_INSTANCE_ID, "gpu_instance_id", KT_U32, NULL)                   \
        KEY(COMPUTE_INSTANCE_ID, "compute_instance_id", KT_U32, NULL)           \
        KEY(FABRIC_STATE, "fabric_state", KT_ENUM, fabric_state_names)          \
        KEY(FABRIC_STATUS, "fabric_status", KT_RETURN, NULL)                    \
        KEY(FABRIC_CLIQUE, "fabric_clique_id", KT_U32, NULL)                    \
        KEY(FABRIC_CLUSTER, "fabric_cluster_uuid", KT_UUID128, NULL)            \
        KEY(FABRIC_HEALTH_MASK, "fabric_health_mask", KT_U32, NULL)             \
        KEY(FABRIC_HEALTH_SUMMARY, "fabric_health_summary", KT_ENUM, fabric_health_names) \
        KEY(SUPPORTED_EVENTS, "supported_events", KT_U64, NULL)                 \
        KEY(TOPO_SWITCH, "topo_pcie_switch", KT_U32, NULL)                      \
        KEY(TOPO_HOSTBRIDGE, "topo_host_bridge", KT_U32, NULL)                  \
        KEY(TOPO_NUMA, "topo_numa_node", KT_U32, NULL)                          \
        KEY(GPM_ACTIVITY, "gpm_activity", KT_STR, NULL)                         \
        KEY(GPM_TRAFFIC, "gpm_traffic", KT_STR, NULL)                           \
        KEY(LOST, "lost", KT_U32, NULL)

enum fake_key {
#define FAKE_KEY_ENUM(id, name, kind, extra) K_##id,
        FAKE_KEYS(FAKE_KEY_ENUM)
#undef FAKE_KEY_ENUM
        K_COUNT
};

struct fake_link {
        bool state_set;
        bool state_up;
        bool err_set[FAKE_NVLINK_COUNTERS];
        unsigned long long err[FAKE_NVLINK_COUNTERS];
        char *remote_bus_id;
        bool remote_device_id_set;
        unsigned int remote_device_id;
};

struct fake_proc {
        unsigned int pid;
        unsigned long long used_bytes;
        unsigned int gpu_instance_id;
        unsigned int compute_instance_id;
        bool graphics;
        bool sampled;         /* has a utilization sample (sm=, mem=, enc=, dec=) */
        unsigned int util[4]; /* percent: SM, memory, encoder, decoder */
        char *name;
};

struct fake_dev {
        bool defined;
        bool set[K_COUNT];
        unsigned long long u[K_COUNT];
        char *s[K_COUNT];
        struct fake_link links[NVML_NVLINK_MAX_LINKS];
        struct fake_proc *procs;
        unsigned int nprocs;
        unsigned int xids[FAKE_MAX_XIDS];
        unsigned int nxids;
        unsigned int xid_next; /* the next XID event to deliver */
        unsigned long long retired_addr[2][FAKE_MAX_RETIRED];
        unsigned int nretired_addr[2];
};

enum fake_action { ACT_FAULT, ACT_HANG, ACT_LATENCY };
enum fake_when { WHEN_ALWAYS, WHEN_CALL, WHEN_AFTER };

struct fake_rule {
        enum fake_action action;
        int fn;           /* index in the function table, -1 = every function */
        int gpu;          /* -1 = every GPU (and calls without a GPU) */
        nvmlReturn_t err; /* ACT_FAULT */
        enum fake_when when;
        unsigned long long n;
        unsigned long long calls; /* matching calls so far */
        unsigned int ms;          /* ACT_LATENCY */
};

struct fake_scenario {
        char *driver_version;
        char *nvml_version;
        bool cuda_set;
        int cuda_driver_version;
        bool init_error_set;
        nvmlReturn_t init_error;
        unsigned int ngpus;
        /* devs[g] for g >= n_touched were never written: load and free leave them alone, so
         * that their pages are never faulted in (query's start-up, docs/perf.md). */
        unsigned int n_touched;
        unsigned int mig_touched[FAKE_MAX_GPUS]; /* bit m: devs[g][1 + m] was written */
        /* devs[g][0] is GPU g, devs[g][1 + m] its MIG device m */
        struct fake_dev devs[FAKE_MAX_GPUS][1 + FAKE_MAX_MIG];
        struct fake_rule rules[FAKE_MAX_RULES];
        unsigned int nrules;
};

/* The function names that rules may name: fn_lookup returns an index or -1. */
int fake_fn_lookup(const char *name);

/* Parses PATH (and what it includes) into a new scenario, then, when overlay names a file
 * that exists, that file over it (what the setters recorded: $FAKE_NVML_STATE). On error
 * prints "fake-nvml: FILE:LINE: problem" to stderr and returns NULL. */
struct fake_scenario *fake_scenario_load(const char *path, const char *overlay);
struct fake_scenario *fake_scenario_free(struct fake_scenario *sc);

/* NVML_ERROR_* name -> value; false if unknown. Accepts the name with or without the
 * "NVML_ERROR_" prefix, and NVML_SUCCESS. */
bool fake_return_from_name(const char *name, nvmlReturn_t *ret);

/* The metrics registry: every GPU metric gpuvet reads, one row each (docs/metrics.md).
 *
 * A row names the metric (id, Prometheus-style with its unit: "power_draw_watts"), says
 * what kind of number it is, where its reading sits in struct nvml_gpu and which NVML
 * reading group fills it, and how the tools operators already use call it: nvidia-smi's
 * --query-gpu name(s) and dcgm-exporter's field. `query`, `info --json` and the sampler
 * derive from this table; adding a metric is a row (plus its reading, when new). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "sys/nvml_facts.h"

enum metric_type {
        METRIC_GAUGE,   /* a level that goes up and down (temperature, power) */
        METRIC_COUNTER, /* only grows until the driver reloads or the GPU resets (ECC errors) */
        METRIC_INFO,    /* a property that does not change while the GPU is up (name, UUID) */
        METRIC_STATE,   /* a mode or flag (persistence mode, a clock event reason) */
};

/* How nvidia-smi writes the value; also how its JSON value is typed (metric_read). */
enum smi_format {
        SMI_DRIVER_VERSION, /* facts->driver_version */
        SMI_COUNT,          /* facts->device_count */
        SMI_INDEX,          /* the GPU's NVML index: no reading */
        SMI_STR,            /* nv_str as is */
        SMI_BUS_ID,         /* nv_str sysfs form -> "00000000:1B:00.0" */
        SMI_PCI_DOMAIN,     /* nv_str -> "0x0000" (DOMAIN, BUS, DEVICE in bus-id order) */
        SMI_PCI_BUS,        /* nv_str -> "0x1B" */
        SMI_PCI_DEVICE,     /* nv_str -> "0x00" */
        SMI_HEX32,          /* nv_u32 -> "0x233010DE" */
        SMI_U32,            /* nv_u32 -> "%u" [unit] */
        SMI_I32,            /* nv_i32 -> "%d" [unit] */
        SMI_U32_BARE_NA,    /* SMI_U32, but a missing value reads N/A, not [N/A] */
        SMI_U64,            /* nv_u64 -> "%llu" */
        SMI_F64,            /* nv_f64 -> a number (no nvidia-smi field has one) */
        SMI_ENABLED,        /* nv_u32 nvmlEnableState_t -> "Enabled"/"Disabled" */
        SMI_DISPLAY_MODE,   /* SMI_ENABLED, but deprecated from driver 580 on */
        SMI_YESNO,          /* nv_u32 -> "Yes"/"No" */
        SMI_PSTATE,         /* nv_u32 -> "P0" */
        SMI_REASONS,        /* nv_u64 -> "0x0000000000000001" */
        SMI_REASON_BIT,     /* nv_u64 & bit -> "Active"/"Not Active" */
        SMI_MIB,            /* nv_u64 bytes -> "81559 MiB" */
        SMI_US,             /* nv_u64 ns -> "200740215 us" (whole microseconds) */
        SMI_WATTS,          /* nv_u32 mW -> "69.85 W" */
        SMI_COMPUTE_MODE,
        SMI_COMPUTE_CAP,    /* nv_i32 cc_major, with cc_minor */
        SMI_FABRIC_STATE,
        SMI_FABRIC_STATUS,
        SMI_FABRIC_CLIQUE,
};

#define METRIC_SMI_NAMES 2
#define METRIC_SMI_ALIASES 2

struct metric {
        const char *id;
        enum metric_type type;
        const char *unit; /* of the JSON value: "bytes", "watts", "celsius", "hertz", "percent", "ratio"
                             (0-1), "bytes_per_second"; NULL: none */
        bool system;      /* a reading of struct nvml_facts (driver version, GPU count), not of a GPU */
        enum nvml_group group; /* the reading group that fills it (per GPU) */
        size_t off;            /* of the reading in struct nvml_gpu (or nvml_facts when system) */
        double scale;          /* JSON value = reading * scale (mW -> W: 0.001); 0: 1 */
        unsigned long long bit; /* SMI_REASON_BIT: the bit of the reading */
        struct {
                /* Names nvidia-smi prints in its header: a field under either name is this
                 * metric (pcie.link.gen.current and .gpucurrent are one reading). */
                const char *names[METRIC_SMI_NAMES];
                /* Older spellings: accepted, the header shows names[0]. */
                const char *aliases[METRIC_SMI_ALIASES];
                const char *unit; /* in the header and after the value ("MiB"); NULL: none */
                /* How the reading is typed (metric_read), also for a metric without names. */
                enum smi_format format;
                /* A metric --query-gpu has no field for: where `nvidia-smi -q` shows it
                 * ("PCI > Replays Since Reset", its sections and line, as printed), or, when
                 * nvidia-smi shows it nowhere, none: why ("only per link, `nvidia-smi nvlink
                 * -e`"). tests/golden/test_metrics.py holds every row to a field or one of these. */
                const char *q_section;
                const char *none;
        } smi;
        const char *dcgm; /* dcgm-exporter's field (DCGM_FI_*); NULL when DCGM has none */
        const char *help;
};

size_t metric_count(void);
const struct metric *metric_at(size_t i);
/* By id ("power_draw_watts"), or NULL. */
const struct metric *metric_lookup(const char *id);
/* The reading groups that fill these metrics (system metrics need none). */
nvml_groups metric_groups(const struct metric *const *metrics, size_t n);

/* One metric's value, typed for JSON and the exporter. state/rc/fn as the nv_* readings:
 * anything but NV_OK carries no value. */
enum metric_kind { METRIC_NUMBER, METRIC_BOOL, METRIC_TEXT };
struct metric_value {
        unsigned char state; /* enum nv_state */
        int rc;
        const char *fn;
        enum metric_kind kind;
        double number;
        bool flag;
        char text[NV_STR_MAX];
};

/* The value of m for gpu (ignored for system metrics) in facts. */
void metric_read(const struct metric *m, const struct nvml_facts *facts, const struct nvml_gpu *gpu,
                 struct metric_value *ret);

const char *metric_type_name(enum metric_type t); /* "gauge", "counter", "info", "state" */

/* nvmlComputeMode_t as nvidia-smi writes it ("Default", "Exclusive_Process"), "Unknown". */
const char *metric_compute_mode_name(unsigned int mode);

/* Domain, bus, device and function of a bus id "0000:1b:00.0" (any hex, NVML's
 * "00000000:1B:00.0" too); false when id is not one. */
bool metric_bus_id_parts(const char *id, unsigned int parts[4]);

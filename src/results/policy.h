/* A site policy as the checks judge by it: what an operator expects of a node, beyond
 * gpuvet's built-in rules. Read by policy/policy.h's parser, which knows the checks and
 * tune settings it names; the model is here, below the checks that read it.
 *
 * It is a YAML file (docs/policy.md), by default /etc/gpuvet/policy.yaml under the root
 * being judged. Sections:
 *   expect      GPU count and model, driver branch or version, minimum CUDA, MIG mode
 *   checks      per-check (or per-category) severity: fail, warn or off
 *   thresholds  the numbers some checks judge by (temperature margin, power cap, rates)
 *   exceptions  a result allowed on one subject (an x8 slot, a known warning), with why
 *   reference   the golden node written by `gpuvet policy capture`; drift from it fails
 *   tune        the site's gpuvet tune profile and the settings it overrides
 * */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/result.h"

#define POLICY_FORMAT_VERSION 1

enum policy_severity {
        POLICY_SEVERITY_DEFAULT = 0,
        POLICY_SEVERITY_FAIL, /* its warnings fail */
        POLICY_SEVERITY_WARN, /* its failures only warn */
        POLICY_SEVERITY_OFF,  /* not run: one skip result says so */
};

enum policy_mig {
        POLICY_MIG_UNSET = 0,
        POLICY_MIG_DISABLED, /* every GPU must have MIG off */
        POLICY_MIG_ENABLED,  /* every GPU must have MIG on, with instances */
        POLICY_MIG_MANAGED,  /* a MIG manager owns it: instances may come and go */
};

struct policy_override {
        char *check; /* a check id ("pcie.link_width") or a category ("cpu") */
        enum policy_severity severity;
        unsigned line;
};

/* A result allowed on one subject. With width or gen, the pcie.link_* check treats that
 * as the slot's capability (a narrower link still fails); without, any warning or failure
 * of the check on the subject becomes a pass that quotes the reason. */
struct policy_exception {
        char *check;   /* a check id */
        char *subject; /* "host" or a PCI address in sysfs form ("0000:17:00.0") */
        char *reason;
        unsigned width; /* pcie.link_width: allowed lanes, 0 when not given */
        unsigned gen;   /* pcie.link_speed: allowed PCIe generation, 0 when not given */
        unsigned line;
};

struct policy_thresholds {
        unsigned temp_margin_c;             /* warn this close to the slowdown temperature */
        double power_cap_fraction;          /* warn below this fraction of the default limit */
        double pcie_replays_per_minute;     /* DCGM: 8 */
        unsigned long long ecc_corrected_warn; /* volatile corrected ECC errors */
        unsigned retired_pages_warn;        /* DCGM soft limit: 15 */
        double burn_throughput_spread;      /* burn: fail this far below the best GPU of its model */
        double burn_throughput_drop;        /* burn: fail when the rate falls this much over the run */
        double burn_sm_clock_fraction;      /* burn: fail when the SM clock under load is below this of its max */
        double burn_power_fraction;         /* burn --mode power: fail below this of the enforced limit */
        double network_min_rate_gbps;       /* network.port_rate: fail an active RDMA port below this; 0 none */
        double host_memory_min_ratio;       /* memory.host_vs_gpu: warn below this host RAM / GPU memory */
};

/* gpuvet's own numbers, used where a policy sets none. */
extern const struct policy_thresholds policy_thresholds_default;

struct policy_ref_gpu {
        char *bus_id;    /* sysfs form */
        char *device_id; /* "10de:2330": what the PCI bus says, with or without a driver */
        char *model;     /* NVML name, or the GPU table's name without NVML */
        char *vbios;   /* NULL when not captured */
        char *inforom; /* InfoROM image version, NULL when not captured */
        int numa_node; /* -1 when not captured */
        unsigned line;
};

struct policy_ref_nic {
        char *bus_id;
        char *name; /* "mlx5_0" or "ens1f0np0", NULL when none */
        int numa_node;
        unsigned line;
};

struct policy_reference {
        bool present;
        unsigned line;
        char *captured; /* when, ISO 8601 */
        char *host;
        char *driver_version; /* NULL when not captured */
        struct policy_ref_gpu *gpus;
        size_t n_gpus;
        struct policy_ref_nic *nics;
        size_t n_nics;
        /* topology.devices: bus ids (GPUs, then NICs); pcie: n_topo x n_topo relations
         * (enum topo_pcie), row-major. nvlink: n_gpus x n_gpus link counts in gpus order,
         * NULL when the capture had no NVML. */
        char **topo_devices;
        size_t n_topo;
        unsigned char *pcie;
        unsigned *nvlink;
        unsigned topology_line;
};

/* One tune setting the site sets (tune.settings), over whatever the profile says. */
struct policy_tune_setting {
        char *key;   /* a gpuvet tune setting: "vm.swappiness" */
        char *value; /* valid for it (checked when the policy is read) */
        unsigned line;
};

struct policy {
        char *path;
        unsigned version;

        /* expect (0 / NULL / UNSET when not set) */
        unsigned gpu_count;
        char *gpu_model;
        unsigned driver_branch;  /* 570 */
        char *driver_version;    /* "570.133.20" */
        char *cuda_version;      /* minimum "12.8" */
        enum policy_mig mig;
        unsigned expect_line;

        struct policy_override *overrides;
        size_t n_overrides;
        struct policy_exception *exceptions;
        size_t n_exceptions;
        struct policy_thresholds thresholds;
        struct policy_reference reference;

        /* tune (NULL / 0 when not set) */
        char *tune_profile; /* the profile `gpuvet tune` uses when --profile is not given */
        unsigned tune_profile_line;
        struct policy_tune_setting *tune_settings;
        size_t n_tune_settings;

        /* container (NULL when not set): container.gpu_access's runtime and test image */
        char *container_runtime; /* "/usr/bin/podman" */
        char *container_image;   /* "registry.example.com/nvidia/cuda:12.8.1-base-ubuntu24.04" */
};

/* The exception for check_id on subject, or NULL. p may be NULL. */
const struct policy_exception *policy_exception_for(const struct policy *p, const char *check_id,
                                                    const char *subject);

/* gpu.fabric_manager: the NVLink fabric service (Fabric Manager or IMEX) and each GPU's place in it.
 * docs/checks/gpu.md documents each; the shared NVML judging is in nvml_common.c. */
#include "checks/check.h"
#include "checks/gpu/nvml_common.h"
#include "core/strbuf.h"
#include "core/strparse.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- gpu.fabric_manager ------------------------------------------------------------ */

static const char *fabric_state_name(unsigned int s) {
        switch (s) {
        case NV_FABRIC_STATE_NOT_SUPPORTED: return "not supported";
        case NV_FABRIC_STATE_NOT_STARTED: return "not started";
        case NV_FABRIC_STATE_IN_PROGRESS: return "in progress";
        case NV_FABRIC_STATE_COMPLETED: return "completed";
        default: return "unknown";
        }
}

static const char fm_remedy[] =
        "Start the Fabric Manager: `systemctl enable --now nvidia-fabricmanager` (package "
        "nvidia-fabricmanager-<branch>, the same version as the driver). Without it the GPUs never join the "
        "NVSwitch fabric and CUDA fails with error 802 (cudaErrorSystemNotReady, \"system not yet initialized\"). "
        "`journalctl -u nvidia-fabricmanager` shows why it stopped.";

static const char imex_remedy[] =
        "Start the IMEX daemon on every compute tray of the NVLink domain: `systemctl enable --now nvidia-imex` "
        "(package nvidia-imex-<branch>, the driver's version), with /etc/nvidia-imex/nodes_config.cfg listing the "
        "trays' addresses. Where the Kubernetes DRA driver or the scheduler starts IMEX per job, this is expected "
        "between jobs.";

/* A GPU registered with a multi-node NVLink fabric (GB200/GB300 NVL72 compute trays, whose
 * NVSwitches sit in switch trays with their own Fabric Manager): NVML gives it a cluster
 * UUID. Single-node HGX baseboards leave it zero. */
static bool in_fabric_cluster(const struct nvml_gpu *g) {
        if (!nv_ok(g->fabric_cluster_uuid))
                return false;
        for (const char *c = g->fabric_cluster_uuid.v; *c; c++)
                if (*c != '0' && *c != '-')
                        return true;
        return false;
}

static bool fabric_supported(const struct nvml_gpu *g) {
        return nv_ok(g->fabric_state) && g->fabric_state.v != NV_FABRIC_STATE_NOT_SUPPORTED;
}

/* The daemon the fabric needs on this node: the Fabric Manager where the NVSwitches are on
 * the PCI bus, the IMEX daemon on a multi-node NVLink compute tray, none in a VM or where
 * the switches are managed elsewhere (skip, saying so). */
static void judge_fabric_service(const struct check_info *self, const struct facts *f, struct report *rep,
                                 size_t n_switch, unsigned n_cluster) {
        const struct nvidia_facts *x = &f->nvidia;
        const struct nvml_facts *n = &f->nvml;
        struct result *r = result_new(rep, self, "host");
        /* Without the process list a daemon that runs looks absent. */
        if (x->proc_errno && (n_switch || n_cluster)) {
                if (check_skip_capture_lacks(r, f, "/proc"))
                        return;
                result_evidence(r, "source", "/proc/[0-9]*/comm");
                result_status(r, STATUS_ERROR, "cannot list /proc to look for the fabric's daemons: %s",
                              strerror(-x->proc_errno));
                result_remedy(r, "Check that /proc is mounted; `systemctl status nvidia-fabricmanager` shows the "
                                 "daemon's state.");
                return;
        }
        if (!n_switch && n_cluster) {
                result_expected(r, "nvidia-imex running (multi-node NVLink compute tray: the Fabric Manager runs on "
                                   "the switch trays)");
                result_evidence(r, "source", "/proc/[0-9]*/comm, nvmlDeviceGetGpuFabricInfoV (cluster UUID)");
                if (x->fabricmanager_pid)
                        result_evidence(r, "fabric_manager", "running here too (pid %d): not needed on a compute "
                                                             "tray", x->fabricmanager_pid);
                if (x->imex_pid) {
                        result_observed(r, "nvidia-imex running (pid %d)", x->imex_pid);
                        result_status(r, STATUS_PASS, "the IMEX daemon runs (pid %d) for this tray's %u GPU%s in the "
                                                      "NVLink cluster",
                                      x->imex_pid, n_cluster, n_cluster == 1 ? "" : "s");
                } else {
                        result_observed(r, "nvidia-imex not running");
                        result_status(r, STATUS_WARN, "no IMEX daemon on this multi-node NVLink compute tray: memory "
                                                      "sharing across trays (IMEX channels, NCCL's MNNVL) is "
                                                      "unavailable until one runs");
                        result_remedy(r, "%s", imex_remedy);
                }
                return;
        }
        if (!n_switch) {
                result_evidence(r, "source", "/sys/bus/pci/devices (class 0680 NVIDIA bridge)");
                result_status(r, STATUS_SKIP, "the GPUs support an NVSwitch fabric but no NVSwitch is on this node's "
                                              "PCI bus%s: the Fabric Manager runs where the switches are",
                              f->virt.is_vm ? " (a VM)" : "");
                return;
        }
        const char *drv = nv_ok(n->driver_version) ? n->driver_version.v
                          : x->have_version         ? x->driver_version
                                                    : NULL;
        result_expected(r, "nv-fabricmanager running, version %s", drv ? drv : "= driver");
        result_evidence(r, "source", "/proc/[0-9]*/comm, /var/lib/dpkg/status");
        result_evidence(r, "nvswitches", "%zu on the PCI bus", n_switch);
        if (x->fabricmanager_version[0])
                result_evidence(r, "package", "%s %s", x->fabricmanager_package, x->fabricmanager_version);
        else
                result_evidence(r, "package", "version unknown: no installed nvidia-fabricmanager package in "
                                              "/var/lib/dpkg/status (RPM databases are not read)");
        if (!x->fabricmanager_pid) {
                result_observed(r, "not running");
                result_status(r, STATUS_FAIL, "NVSwitch system without the Fabric Manager: CUDA fails with error 802");
                result_remedy(r, "%s", fm_remedy);
        } else if (drv && x->fabricmanager_version[0] && strcmp(drv, x->fabricmanager_version) != 0) {
                result_observed(r, "running (pid %d), version %s", x->fabricmanager_pid, x->fabricmanager_version);
                result_status(r, STATUS_FAIL, "Fabric Manager %s does not match driver %s: it refuses to start or "
                                              "manage the fabric",
                              x->fabricmanager_version, drv);
                result_remedy(r, "Install nvidia-fabricmanager of exactly the driver's version (%s) and restart it "
                                 "(`systemctl restart nvidia-fabricmanager`); hold both packages so that upgrades "
                                 "move them together.",
                              drv);
        } else {
                result_observed(r, "running (pid %d)%s%s", x->fabricmanager_pid,
                                x->fabricmanager_version[0] ? ", version " : "", x->fabricmanager_version);
                result_status(r, STATUS_PASS, "the Fabric Manager runs (pid %d)%s", x->fabricmanager_pid,
                              x->fabricmanager_version[0] ? ", same version as the driver" : "");
        }
}

/* healthMask's fields (nvml.h NVML_GPU_FABRIC_HEALTH_MASK_*): for the two-bit ones 1 means
 * the condition holds, 2 that it does not, 0 not supported. */
static unsigned health_field(unsigned mask, unsigned shift, unsigned width) { return (mask >> shift) & width; }

static const char *fabric_config_problem(unsigned v) {
        switch (v) {
        case 2: return "wrong system GUID";
        case 3: return "wrong chassis serial number";
        case 4: return "no fabric partition";
        case 5: return "too few NVLinks";
        case 6: return "GPU firmware incompatible with the fabric";
        case 7: return "invalid location in the rack";
        default: return "unknown configuration problem";
        }
}

/* One GPU's registration with the fabric and, from the v3 query, its health. */
static void judge_fabric_gpu(const struct check_info *self, const struct facts *f, struct report *rep,
                             const struct nvml_gpu *g, const char *remedy) {
        char desc[NV_DESC_MAX];
        struct result *rg = nv_result(self, f, rep, g, desc);
        result_expected(rg, "fabric registration completed, status NVML_SUCCESS, fabric healthy");
        if (UNUSABLE(rg, f, g, "fabric state", g->fabric_state))
                return;
        result_evidence(rg, "source", "%s", g->fabric_state.fn);
        const char *st = nv_rc_name(g->fabric_status.v);
        result_observed(rg, "%s, status %s", fabric_state_name(g->fabric_state.v), st);
        if (nv_ok(g->fabric_clique_id))
                result_evidence(rg, "clique_id", "%u", g->fabric_clique_id.v);
        if (in_fabric_cluster(g))
                result_evidence(rg, "cluster_uuid", "%s", g->fabric_cluster_uuid.v);
        if (g->fabric_state.v != NV_FABRIC_STATE_COMPLETED) {
                result_status(rg, STATUS_FAIL, "%s has not joined the NVLink fabric (state %s): CUDA fails "
                                               "with error 802 until it does",
                              desc, fabric_state_name(g->fabric_state.v));
                result_remedy(rg, "%s", remedy);
                return;
        }
        if (g->fabric_status.v != NV_RC_SUCCESS) {
                result_status(rg, STATUS_FAIL, "fabric registration of %s failed: %s", desc, st);
                result_remedy(rg, "The fabric daemon's log shows why (`journalctl -u nvidia-fabricmanager`, or on a "
                                  "compute tray the switch trays' Fabric Manager and `journalctl -u nvidia-imex`); "
                                  "then reset the GPUs or reboot.");
                return;
        }
        if (!nv_ok(g->fabric_health_mask) || !nv_ok(g->fabric_health_summary)) {
                result_evidence(rg, "health", "not reported (nvmlDeviceGetGpuFabricInfoV v3: %s)",
                                g->fabric_health_mask.state == NV_NO_FUNCTION ? "not in this driver"
                                : g->fabric_health_mask.state == NV_UNREAD    ? "not read"
                                        : nv_rc_name(g->fabric_health_mask.rc));
                result_status(rg, STATUS_PASS, "joined the NVLink fabric");
                return;
        }
        unsigned mask = g->fabric_health_mask.v, summary = g->fabric_health_summary.v;
        /* Single-node NVSwitch boards (HGX H100: "Summary : N/A") report no health. */
        if (summary == NV_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED && mask == 0) {
                result_status(rg, STATUS_PASS, "joined the NVLink fabric");
                return;
        }
        result_evidence(rg, "health_mask", "0x%x", mask);
        unsigned config = health_field(mask, NV_FABRIC_HEALTH_MASK_SHIFT_INCORRECT_CONFIGURATION,
                                       NV_FABRIC_HEALTH_MASK_WIDTH_INCORRECT_CONFIGURATION);
        bool route_bad = health_field(mask, NV_FABRIC_HEALTH_MASK_SHIFT_ROUTE_UNHEALTHY, 3) == 1;
        bool degraded = health_field(mask, NV_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW, 3) == 1;
        bool recovering = health_field(mask, NV_FABRIC_HEALTH_MASK_SHIFT_ROUTE_RECOVERY, 3) == 1 ||
                          health_field(mask, NV_FABRIC_HEALTH_MASK_SHIFT_ACCESS_TIMEOUT_RECOVERY, 3) == 1;
        if (config > NV_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NONE) {
                result_status(rg, STATUS_FAIL, "%s is in the NVLink fabric with a wrong configuration: %s", desc,
                              fabric_config_problem(config));
                result_remedy(rg, "Correct the tray's fabric configuration (its location, serial number and firmware "
                                  "as the rack's fabric expects; `nvidia-smi -q -d FABRIC` shows the state), then reset "
                                  "the GPUs.");
                return;
        }
        if (route_bad || summary == NV_FABRIC_HEALTH_SUMMARY_UNHEALTHY) {
                result_status(rg, STATUS_FAIL, "the NVLink fabric of %s is unhealthy%s", desc,
                              route_bad ? ": a route through it is down" : "");
                result_remedy(rg, "Drain the node; `nvidia-smi -q -d FABRIC` and the Fabric Manager's log on the "
                                  "switch trays show which link or switch failed; reset the GPUs once it is repaired.");
                return;
        }
        if (degraded || recovering || summary == NV_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY) {
                result_status(rg, STATUS_WARN, "the NVLink fabric of %s runs at %s", desc,
                              recovering ? "reduced capacity while a route recovers" : "degraded bandwidth");
                result_remedy(rg, "Check `nvidia-smi -q -d FABRIC` and the switch trays' Fabric Manager log for a "
                                  "failed link; collectives across the fabric run slower until it is repaired.");
                return;
        }
        result_status(rg, STATUS_PASS, "joined the NVLink fabric, healthy");
}

static void run_fabric_manager(const struct check_info *self, const struct facts *f, struct report *rep) {
        size_t n_switch = 0;
        for (size_t i = 0; i < f->pci.n; i++)
                if (pci_is_nvswitch(&f->pci.devs[i]))
                        n_switch++;
        const struct nvml_facts *n = &f->nvml;
        unsigned n_fabric = 0, n_cluster = 0;
        for (unsigned int i = 0; i < n->n_gpus; i++) {
                n_fabric += fabric_supported(&n->gpus[i]);
                n_cluster += in_fabric_cluster(&n->gpus[i]);
        }
        if (n_switch == 0 && n_fabric == 0) {
                struct result *r = result_new(rep, self, "host");
                result_evidence(r, "source", "/sys/bus/pci/devices (class 0680 NVIDIA bridge), nvmlDeviceGetGpuFabricInfo");
                if (f->gpus.n == 0)
                        result_status(r, STATUS_SKIP, "%s", check_no_gpu_reason(f));
                else
                        result_status(r, STATUS_SKIP, "no NVSwitch on this node: the Fabric Manager is not needed");
                return;
        }
        judge_fabric_service(self, f, rep, n_switch, n_cluster);

        /* Each GPU's registration with the fabric (Hopper and newer). */
        if (n->init_state != NVML_INIT_OK)
                return;
        const char *remedy = !n_switch && n_cluster ? imex_remedy : fm_remedy;
        for (unsigned int i = 0; i < n->n_gpus; i++) {
                const struct nvml_gpu *g = &n->gpus[i];
                if (nv_not_supported(g->fabric_state.state, g->fabric_state.rc) ||
                    (nv_ok(g->fabric_state) && g->fabric_state.v == NV_FABRIC_STATE_NOT_SUPPORTED))
                        continue; /* pre-Hopper: no per-GPU fabric state */
                judge_fabric_gpu(self, f, rep, g, remedy);
        }
        /* The GPUs of one tray belong to one NVLink partition: a GPU in another clique or
         * cluster cannot share memory with its neighbours over NVLink. */
        const struct nvml_gpu *first = NULL;
        for (unsigned int i = 0; i < n->n_gpus && n_cluster > 1; i++) {
                const struct nvml_gpu *g = &n->gpus[i];
                if (!in_fabric_cluster(g) || !nv_ok(g->fabric_clique_id))
                        continue;
                if (!first) {
                        first = g;
                        continue;
                }
                if (g->fabric_clique_id.v != first->fabric_clique_id.v ||
                    strcmp(g->fabric_cluster_uuid.v, first->fabric_cluster_uuid.v) != 0) {
                        struct result *r = result_new(rep, self, "host");
                        result_observed(r, "GPU %u: clique %u of cluster %s; GPU %u: clique %u of cluster %s",
                                        first->index, first->fabric_clique_id.v, first->fabric_cluster_uuid.v, g->index,
                                        g->fabric_clique_id.v, g->fabric_cluster_uuid.v);
                        result_expected(r, "one clique and cluster for every GPU of the node");
                        result_status(r, STATUS_WARN, "the GPUs of this node are in different NVLink partitions: "
                                                      "they cannot reach each other over NVLink");
                        result_remedy(r, "Check the fabric partition the Fabric Manager (switch trays) assigned to "
                                         "this tray; every GPU of a compute tray normally joins the same one.");
                        break;
                }
        }
}

/* ---- descriptors ---- */

CHECK_INFO(gpu_fabric_manager, "gpu", "gpu.fabric_manager", LEVEL_QUICK, CHECK_NEEDS_NVML,
           "NVLink fabric: the Fabric Manager (NVSwitch) or IMEX (multi-node tray) runs; each GPU joined, healthy",
           run_fabric_manager);

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

/* Fourth-generation NVSwitch baseboards (HGX B200, B300): the Fabric Manager starts only
 * once the NVLink Subnet Manager has configured the switches through the baseboard's
 * management ports, and exits NV_WARN_NOTHING_TO_DO without them. */
static const char fm_nvlsm_remedy[] =
        "Start the NVLink Subnet Manager and the Fabric Manager: install nvlsm and nvidia-fabricmanager-<branch> "
        "(the driver's version), load the InfiniBand management modules (`modprobe ib_umad mlx5_ib`) so that the "
        "baseboard's NVSwitch management ports (LPF) appear in /sys/class/infiniband, then `systemctl enable --now "
        "nvidia-fabricmanager` (its start-up script, nvidia-fabricmanager-start.sh, starts nvlsm on the management "
        "port first). Without both the GPUs never join the NVSwitch fabric and CUDA fails with error 802 "
        "(cudaErrorSystemNotReady). `journalctl -u nvidia-fabricmanager` and /var/log/nvlsm.log show why they "
        "stopped.";

static const char imex_remedy[] =
        "Start the IMEX daemon on every compute tray of the NVLink domain: `systemctl enable --now nvidia-imex` "
        "(package nvidia-imex-<branch>, the driver's version), with /etc/nvidia-imex/nodes_config.cfg listing the "
        "trays' addresses. Where the Kubernetes DRA driver or the scheduler starts IMEX per job, this is expected "
        "between jobs. The fabric itself (NVSwitches, Fabric Manager) is run from the NVLink switch trays.";

/* A compute tray's GPUs join the fabric that the rack's NVLink switch trays run: NVOS there
 * carries NMX-Controller, the Fabric Manager and NVLSM (NVIDIA's multi-node NVLink user
 * guide), so nothing on the tray itself starts it. */
static const char tray_gpu_remedy[] =
        "On a multi-node NVLink compute tray the GPUs join the fabric the rack's NVLink switch trays run (NVOS: "
        "NMX-Controller, the Fabric Manager and NVLSM), not a daemon on this tray: check the fabric and this tray's "
        "partition on the switch trays, that this tray's NVLinks are up (`nvidia-smi nvlink -s`), and `nvidia-smi "
        "-q -d FABRIC` here; then reset the GPUs or reboot the tray. nvidia-imex on this tray shares GPU memory "
        "across trays once they have joined.";

/* The fabric services the node's GPU boards need, by gpus.json (architecture and form),
 * and the first model that asks for them. */
struct fabric_need {
        unsigned services; /* GPU_FABRIC_* */
        const char *model;
};

static struct fabric_need fabric_need_of(const struct facts *f) {
        struct fabric_need need = {0};
        for (size_t i = 0; f->db && i < f->gpus.n; i++) {
                unsigned s = gpudb_fabric_services(f->db, f->gpus.gpus[i].model);
                if (s && !need.model)
                        need.model = f->gpus.gpus[i].model->name;
                need.services |= s;
        }
        return need;
}

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

/* Without the process list a daemon that runs looks absent: say that instead (a skip when
 * the capture left /proc out). True when it did. */
static bool judge_proc_unlisted(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct nvidia_facts *x = &f->nvidia;
        if (!x->proc_errno)
                return false;
        struct result *r = result_new(rep, self, "host");
        if (check_skip_capture_lacks(r, f, "/proc"))
                return true;
        result_evidence(r, "source", "/proc/[0-9]*/comm");
        result_status(r, STATUS_ERROR, "cannot list /proc to look for the fabric's daemons: %s",
                      strerror(-x->proc_errno));
        result_remedy(r, "Check that /proc is mounted; `systemctl status nvidia-fabricmanager` (or nvidia-imex) "
                         "shows the daemon's state.");
        return true;
}

/* A multi-node NVLink compute tray (GB200/GB300 NVL72): the IMEX daemon here, the Fabric
 * Manager on the switch trays. */
static void judge_imex(const struct check_info *self, const struct facts *f, struct report *rep,
                       const struct fabric_need *need, unsigned n_cluster) {
        const struct nvidia_facts *x = &f->nvidia;
        struct result *r = result_new(rep, self, "host");
        result_expected(r, "nvidia-imex running (multi-node NVLink compute tray: the Fabric Manager runs on "
                           "the switch trays)");
        result_evidence(r, "source", "/proc/[0-9]*/comm, nvmlDeviceGetGpuFabricInfoV (cluster UUID), gpu table");
        if (need->model && (need->services & GPU_FABRIC_IMEX))
                result_evidence(r, "board", "%s: a compute tray of a multi-node NVLink domain", need->model);
        if (x->fabricmanager_pid)
                result_evidence(r, "fabric_manager", "running here too (pid %d): not needed on a compute tray",
                                x->fabricmanager_pid);
        if (x->imex_pid) {
                result_observed(r, "nvidia-imex running (pid %d)", x->imex_pid);
                if (n_cluster)
                        result_status(r, STATUS_PASS, "the IMEX daemon runs (pid %d) for this tray's %u GPU%s in the "
                                                      "NVLink cluster",
                                      x->imex_pid, n_cluster, n_cluster == 1 ? "" : "s");
                else
                        result_status(r, STATUS_PASS, "the IMEX daemon runs (pid %d) on this compute tray",
                                      x->imex_pid);
                return;
        }
        result_observed(r, "nvidia-imex not running");
        result_status(r, STATUS_WARN, "no IMEX daemon on this multi-node NVLink compute tray: memory sharing across "
                                      "trays (IMEX channels, NCCL's MNNVL) is unavailable until one runs");
        result_remedy(r, "%s", imex_remedy);
}

/* The Fabric Manager (every NVSwitch baseboard) and, on fourth-generation ones, the NVLink
 * Subnet Manager beside it, at the driver's version. */
static void judge_fabric_manager(const struct check_info *self, const struct facts *f, struct report *rep,
                                 size_t n_switch, const struct fabric_need *need) {
        const struct nvidia_facts *x = &f->nvidia;
        const struct nvml_facts *n = &f->nvml;
        const bool want_nvlsm = need->services & GPU_FABRIC_NVLSM;
        struct result *r = result_new(rep, self, "host");
        const char *drv = nv_ok(n->driver_version) ? n->driver_version.v
                          : x->have_version         ? x->driver_version
                                                    : NULL;
        result_expected(r, "nv-fabricmanager running, version %s%s", drv ? drv : "= driver",
                        want_nvlsm ? "; nvlsm running" : "");
        result_evidence(r, "source", "/proc/[0-9]*/comm, /var/lib/dpkg/status%s",
                        want_nvlsm ? ", gpu table, /sys/class/infiniband/*/device/vpd" : "");
        if (want_nvlsm) {
                result_evidence(r, "board", "%s: fourth-generation NVSwitch baseboard (Fabric Manager and NVLSM)",
                                need->model);
                if (f->rdma.n_nvswitch_lpf)
                        result_evidence(r, "nvswitch_lpf", "%zu management port%s (%s%s)", f->rdma.n_nvswitch_lpf,
                                        f->rdma.n_nvswitch_lpf == 1 ? "" : "s", f->rdma.nvswitch_lpf[0],
                                        f->rdma.n_nvswitch_lpf > 1 ? ", ..." : "");
                else
                        result_evidence(r, "nvswitch_lpf", "none in /sys/class/infiniband (ib_umad/mlx5_ib not "
                                                           "loaded, or the capture lacks it)");
        } else {
                result_evidence(r, "nvswitches", "%zu on the PCI bus", n_switch);
        }
        if (x->fabricmanager_version[0])
                result_evidence(r, "package", "%s %s", x->fabricmanager_package, x->fabricmanager_version);
        else
                result_evidence(r, "package", "version unknown: no installed nvidia-fabricmanager package in "
                                              "/var/lib/dpkg/status (RPM databases are not read)");
        const bool nvlsm_missing = want_nvlsm && !x->nvlsm_pid;
        if (!x->fabricmanager_pid || nvlsm_missing) {
                if (!x->fabricmanager_pid && nvlsm_missing)
                        result_observed(r, "neither nv-fabricmanager nor nvlsm running");
                else if (nvlsm_missing)
                        result_observed(r, "nv-fabricmanager running (pid %d), nvlsm not running",
                                        x->fabricmanager_pid);
                else if (want_nvlsm)
                        result_observed(r, "nv-fabricmanager not running, nvlsm running (pid %d)", x->nvlsm_pid);
                else
                        result_observed(r, "not running");
                result_status(r, STATUS_FAIL, "NVSwitch system without %s: CUDA fails with error 802",
                              !x->fabricmanager_pid && nvlsm_missing ? "the Fabric Manager and the NVLink Subnet Manager"
                              : nvlsm_missing                         ? "the NVLink Subnet Manager (NVLSM)"
                                                                      : "the Fabric Manager");
                result_remedy(r, "%s", want_nvlsm ? fm_nvlsm_remedy : fm_remedy);
        } else if (drv && x->fabricmanager_version[0] && strcmp(drv, x->fabricmanager_version) != 0) {
                result_observed(r, "running (pid %d), version %s", x->fabricmanager_pid, x->fabricmanager_version);
                result_status(r, STATUS_FAIL, "Fabric Manager %s does not match driver %s: it refuses to start or "
                                              "manage the fabric",
                              x->fabricmanager_version, drv);
                result_remedy(r, "Install nvidia-fabricmanager of exactly the driver's version (%s) and restart it "
                                 "(`systemctl restart nvidia-fabricmanager`); hold both packages so that upgrades "
                                 "move them together.",
                              drv);
        } else if (want_nvlsm) {
                result_observed(r, "nv-fabricmanager running (pid %d)%s%s, nvlsm running (pid %d)",
                                x->fabricmanager_pid, x->fabricmanager_version[0] ? ", version " : "",
                                x->fabricmanager_version, x->nvlsm_pid);
                result_status(r, STATUS_PASS, "the Fabric Manager (pid %d) and the NVLink Subnet Manager (pid %d) "
                                              "run%s",
                              x->fabricmanager_pid, x->nvlsm_pid,
                              x->fabricmanager_version[0] ? "; the Fabric Manager has the driver's version" : "");
        } else {
                result_observed(r, "running (pid %d)%s%s", x->fabricmanager_pid,
                                x->fabricmanager_version[0] ? ", version " : "", x->fabricmanager_version);
                result_status(r, STATUS_PASS, "the Fabric Manager runs (pid %d)%s", x->fabricmanager_pid,
                              x->fabricmanager_version[0] ? ", same version as the driver" : "");
        }
}

/* The daemon the fabric needs on this node, from what the board is (gpus.json) and what
 * the node shows: IMEX on a multi-node NVLink compute tray; the Fabric Manager and NVLSM
 * on a fourth-generation NVSwitch baseboard, whose switches are not on the PCI bus; the
 * Fabric Manager where earlier NVSwitches are on the PCI bus. Which fabric daemon a VM
 * needs depends on the virtualisation model: without switches or their ports in sight,
 * the host or a service VM runs it (skip, saying so). Returns the remedy for a GPU that
 * has not joined the fabric. */
static const char *judge_fabric_service(const struct check_info *self, const struct facts *f, struct report *rep,
                                        size_t n_switch, unsigned n_fabric, unsigned n_cluster) {
        struct fabric_need need = fabric_need_of(f);
        if (f->gpus.n && check_gpus_bound_to(f, "nvidia") == 0) {
                /* A hypervisor passing the GPUs through: the VM that gets the baseboard, or
                 * the service VM, runs the fabric daemons. Without any driver the GPUs are
                 * gpu.driver_binding's finding. */
                struct result *r = result_new(rep, self, "host");
                result_evidence(r, "source", "/sys/bus/pci/devices/*/driver");
                result_status(r, STATUS_SKIP, "no GPU is bound to the nvidia driver: the fabric services run where "
                                              "the driver drives the GPUs (a VM given them, or a service VM)");
                return fm_remedy;
        }
        const bool nvml_ok = f->nvml.init_state == NVML_INIT_OK;
        /* A superchip board without NVLink to switches (GB200 NVL4) reports no fabric. */
        const bool tray = (need.services & GPU_FABRIC_IMEX) && !(nvml_ok && n_fabric == 0);
        const bool gen4 = need.services & GPU_FABRIC_NVLSM;
        /* The board decides before the cluster UUID: an HGX B200 is judged as the NVSwitch
         * baseboard it is, whatever its GPUs report, and a tray whose GPUs have not joined
         * the fabric yet (no cluster UUID) still needs IMEX, not a Fabric Manager. */
        if (!n_switch && (tray || (n_cluster && !gen4))) {
                if (!judge_proc_unlisted(self, f, rep))
                        judge_imex(self, f, rep, &need, n_cluster);
                return tray_gpu_remedy;
        }
        if (gen4 && !(f->virt.is_vm && f->rdma.n_nvswitch_lpf == 0)) {
                if (!judge_proc_unlisted(self, f, rep))
                        judge_fabric_manager(self, f, rep, n_switch, &need);
                return fm_nvlsm_remedy;
        }
        if (n_switch) {
                need.services &= ~(unsigned)GPU_FABRIC_NVLSM;
                if (!judge_proc_unlisted(self, f, rep))
                        judge_fabric_manager(self, f, rep, n_switch, &need);
                return fm_remedy;
        }
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", "/sys/bus/pci/devices (class 0680 NVIDIA bridge), /sys/class/infiniband "
                                     "(NVSwitch management ports), gpu table");
        if (gen4)
                result_status(r, STATUS_SKIP, "a VM with the GPUs of an NVSwitch baseboard (%s) but none of its NVSwitch "
                                              "management ports: the host or a service VM runs the Fabric Manager",
                              need.model);
        else
                result_status(r, STATUS_SKIP, "the GPUs support an NVSwitch fabric but no NVSwitch is on this node's "
                                              "PCI bus%s: the Fabric Manager runs where the switches are",
                              f->virt.is_vm ? " (a VM)" : "");
        return fm_remedy;
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
        /* Without NVML the board alone tells a compute tray; with it, GPUs that report no
         * fabric at all (a superchip board without switches) need none. */
        const unsigned need = fabric_need_of(f).services;
        const bool by_board = (need & GPU_FABRIC_NVLSM) || ((need & GPU_FABRIC_IMEX) && n->init_state != NVML_INIT_OK);
        if (n_switch == 0 && n_fabric == 0 && !by_board) {
                struct result *r = result_new(rep, self, "host");
                result_evidence(r, "source", "/sys/bus/pci/devices (class 0680 NVIDIA bridge), gpu table, "
                                             "nvmlDeviceGetGpuFabricInfo");
                if (f->gpus.n == 0)
                        result_status(r, STATUS_SKIP, "%s", check_no_gpu_reason(f));
                else
                        result_status(r, STATUS_SKIP, "no NVSwitch on this node: the Fabric Manager is not needed");
                return;
        }
        const char *remedy = judge_fabric_service(self, f, rep, n_switch, n_fabric, n_cluster);

        /* Each GPU's registration with the fabric (Hopper and newer). */
        if (n->init_state != NVML_INIT_OK)
                return;
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

CHECK_INFO(gpu_fabric_manager, "gpu", "gpu.fabric_manager", LEVEL_QUICK, NEED_VIRT | NEED_NVIDIA | NEED_RDMA | NEED_NVML,
           "NVLink fabric: the Fabric Manager (NVSwitch) or IMEX (multi-node tray) runs; each GPU joined, healthy",
           run_fabric_manager);

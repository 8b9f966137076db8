/* gpu.nvml, gpu.driver_compat and gpu.persistence_mode: NVML itself, the driver it reports against each GPU, persistence mode.
 * docs/checks/gpu.md documents each; the shared NVML judging is in nvml_common.c. */
#include "checks/check.h"
#include "checks/gpu/nvml_common.h"
#include "core/strbuf.h"
#include "core/strparse.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- gpu.nvml ------------------------------------------------------------------------ */

static const char mismatch_remedy[] =
        "The kernel module and libnvidia-ml come from different driver versions (an upgrade replaced the "
        "library but the old module is still loaded). Reload the module with no process using the GPUs "
        "(stop nvidia-persistenced, nvidia-fabricmanager and DCGM first): `rmmod nvidia_uvm nvidia_drm "
        "nvidia_modeset nvidia && modprobe nvidia`, or reboot.";

/* The version in the file name the library was loaded from: ".../libnvidia-ml.so.550.54.15"
 * -> "550.54.15"; "" when the name carries none (libnvidia-ml.so.1 is not a version). */
static void lib_version(const char *path, char *buf, size_t size) {
        buf[0] = '\0';
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        const char *v = strstr(base, ".so.");
        if (!v || !strchr(v + 4, '.'))
                return;
        snprintf(buf, size, "%s", v + 4);
}

/* nvmlInit_v2 returned the error named rc, which the node cannot work with. */
static void init_returned(struct result *r, const char *rc, const char *summary, const char *remedy) {
        result_observed(r, "nvmlInit_v2: %s", rc);
        result_evidence(r, "source", "nvmlInit_v2");
        result_status(r, STATUS_FAIL, "%s", summary);
        result_remedy(r, "%s", remedy);
}

static void nvml_init_failed(struct result *r, const struct facts *f) {
        const struct nvml_facts *n = &f->nvml;
        const char *kmod = f->nvidia.have_version ? f->nvidia.driver_version : "unknown";
        switch (n->init_state) {
        case NVML_INIT_NO_LIBRARY:
                result_observed(r, "no libnvidia-ml");
                result_evidence(r, "source", "dlopen libnvidia-ml.so.1");
                if (f->nvml_note[0])
                        result_evidence(r, "loader", "%s", f->nvml_note);
                result_status(r, STATUS_FAIL,
                              "libnvidia-ml.so.1 not found: the driver's user-space part is not installed");
                result_remedy(r,
                              "Install the user-space libraries of the same driver version as the kernel module "
                              "(%s): Ubuntu `apt install libnvidia-compute-<branch>` (with nvidia-utils-<branch>), "
                              "RHEL/Rocky `dnf install nvidia-driver-cuda-libs`. In a container, run it with the "
                              "NVIDIA Container Toolkit (`--gpus all`), which mounts the host's library.",
                              kmod);
                return;
        case NVML_INIT_DRIVER_NOT_LOADED:
                init_returned(r, "NVML_ERROR_DRIVER_NOT_LOADED",
                              "NVML cannot reach the driver: the nvidia kernel module is not loaded",
                              "Load it with `modprobe nvidia`; `dmesg | grep -i nvrm` shows why it refused to load (no "
                              "module for this kernel: reinstall the driver or its DKMS package).");
                return;
        case NVML_INIT_VERSION_MISMATCH: {
                char lib[64];
                lib_version(f->nvml_lib_path, lib, sizeof(lib));
                result_observed(r, "kernel module %s, libnvidia-ml %s", kmod, lib[0] ? lib : "of another version");
                result_expected(r, "kernel module and libnvidia-ml of the same version");
                result_evidence(r, "source", "nvmlInit_v2");
                result_evidence(r, "kernel_module", "%s (/proc/driver/nvidia/version)", kmod);
                result_evidence(r, "library", "%s", f->nvml_lib_path[0] ? f->nvml_lib_path : "unknown");
                if (lib[0])
                        result_status(r, STATUS_FAIL,
                                      "Driver/library version mismatch: kernel module %s, libnvidia-ml %s", kmod, lib);
                else
                        result_status(r, STATUS_FAIL,
                                      "Driver/library version mismatch: kernel module %s, libnvidia-ml of another "
                                      "version (%s)",
                                      kmod, f->nvml_lib_path[0] ? f->nvml_lib_path : "path unknown");
                result_remedy(r, "%s", mismatch_remedy);
                return;
        }
        case NVML_INIT_NO_PERMISSION:
                init_returned(r, "NVML_ERROR_NO_PERMISSION",
                              "NVML may not open the GPU device files (/dev/nvidiactl, /dev/nvidia*)",
                              "Check `ls -l /dev/nvidia*` (the driver's NVreg_DeviceFileMode/GID options set them); in "
                              "a container, pass the devices with the NVIDIA Container Toolkit.");
                return;
        case NVML_INIT_TIMEOUT: {
                unsigned int ms = 0;
                for (unsigned int i = 0; i < n->n_timeouts; i++)
                        if (n->timeouts[i].gpu < 0)
                                ms = n->timeouts[i].elapsed_ms;
                result_observed(r, "nvmlInit_v2 did not return");
                result_evidence(r, "source", "nvmlInit_v2");
                result_status(r, STATUS_ERROR, "nvmlInit_v2 did not return within %u ms", ms);
                result_remedy(r, "%s", nv_timeout_remedy);
                return;
        }
        default: {
                const char *name = nv_rc_name(n->init_rc);
                char summary[128];
                snprintf(summary, sizeof(summary), "NVML failed to initialise: nvmlInit_v2 returned %s", name);
                init_returned(r, name, summary, "Compare with `nvidia-smi`; look for NVRM messages in `dmesg`.");
                return;
        }
        }
}

/* NVML initialised but could not count its GPUs: no GPU can be read, so every per-GPU
 * check skips ("NVML sees no GPU"), and this result must not let the node pass. Unlike a
 * per-GPU reading (nv_reading_unusable), NOT_SUPPORTED is no reason to skip here: the count
 * is what every NVML client starts from. */
static void device_count_failed(struct result *r, const struct facts *f) {
        const struct nvml_facts *n = &f->nvml;
        const struct nv_u32 *c = &n->device_count;
        const char *func = c->fn ? c->fn : "nvmlDeviceGetCount_v2";
        result_evidence(r, "source", "%s", func);
        if (c->state == NV_TIMEOUT) {
                unsigned int ms = 0;
                for (unsigned int i = 0; i < n->n_timeouts; i++)
                        if (n->timeouts[i].gpu < 0)
                                ms = n->timeouts[i].elapsed_ms;
                result_observed(r, "unknown: %s did not return", func);
                result_evidence(r, "nvml_return", "timeout after %u ms", ms);
                result_status(r, STATUS_ERROR, "%s did not return within %u ms: the number of GPUs is unknown", func,
                              ms);
                result_remedy(r, "%s", nv_timeout_remedy);
                return;
        }
        const char *name = c->state == NV_NO_FUNCTION ? nv_rc_name(NV_RC_FUNCTION_NOT_FOUND)
                                                      : nv_rc_name(c->rc);
        result_evidence(r, "nvml_return", "%s", name);
        result_observed(r, "unknown: %s returned %s", func, name);
        if (c->state == NV_ERROR && c->rc == NV_RC_GPU_IS_LOST) {
                result_status(r, STATUS_FAIL, "NVML cannot count the GPUs: %s returned %s (a GPU has fallen off the "
                                              "bus)", func, name);
                result_remedy(r, "%s", nv_lost_remedy);
                return;
        }
        result_status(r, STATUS_ERROR, "NVML cannot count the GPUs: %s returned %s", func, name);
        result_remedy(r, "Compare with `nvidia-smi -L`; look for NVRM and Xid messages in `dmesg`.");
}

static void run_nvml(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (check_skip_without_gpus(self, f, rep))
                return;
        const struct nvml_facts *n = &f->nvml;
        size_t bound = check_gpus_bound_to(f, "nvidia");
        if (bound == 0) {
                struct result *r = result_new(rep, self, "host");
                result_evidence(r, "source", "/sys/bus/pci/devices/*/driver");
                if (check_count_host_gpus(f) == 0)
                        result_status(r, STATUS_SKIP, "every GPU is bound to vfio-pci for passthrough: NVML "
                                                      "on this host does not see them");
                else
                        result_status(r, STATUS_SKIP, "no GPU is bound to the nvidia driver (gpu.driver_binding "
                                                      "says why): NVML has nothing to see");
                return;
        }
        struct result *r = result_new(rep, self, "host");
        result_expected(r, "NVML initialises and sees the %zu GPU%s bound to nvidia", bound, bound == 1 ? "" : "s");
        if (n->init_state == NVML_INIT_NOT_TRIED) {
                result_status(r, STATUS_SKIP, "NVML not asked: %s", f->nvml_note[0] ? f->nvml_note : "not tried");
                return;
        }
        if (f->nvml_lib_path[0])
                result_evidence(r, "library", "%s", f->nvml_lib_path);
        if (n->init_state != NVML_INIT_OK) {
                nvml_init_failed(r, f);
                return;
        }
        if (!nv_ok(n->device_count)) {
                device_count_failed(r, f);
                return;
        }
        result_evidence(r, "source", "nvmlDeviceGetCount_v2, nvmlDeviceGetPciInfo_v3");
        if (nv_ok(n->nvml_version))
                result_evidence(r, "nvml_version", "%s", n->nvml_version.v);
        if (nv_ok(n->driver_version))
                result_evidence(r, "driver_version", "%s", n->driver_version.v);
        if (n->cuda_driver_version_str[0])
                result_evidence(r, "cuda_driver_version", "%s", n->cuda_driver_version_str);

        char missing[512] = "";
        size_t n_missing = 0;
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct pci_dev *d = gpu_pci(f, i);
                if (strcmp(d->driver, "nvidia") != 0 || nv_sees(f, d->addr))
                        continue;
                strbuf_appendf(missing, sizeof(missing), "%s%s", n_missing ? ", " : "", d->addr);
                n_missing++;
        }
        /* NVML devices whose address could not be read (a lost GPU, a hung call): they
         * may be the missing ones. */
        char unknown[512] = "";
        size_t n_unknown = 0;
        for (unsigned int i = 0; i < n->n_gpus; i++) {
                const struct nvml_gpu *g = &n->gpus[i];
                if (nv_ok(g->pci_bus_id))
                        continue;
                strbuf_appendf(unknown, sizeof(unknown), "%sGPU %u without an address (%s: %s)", n_unknown ? ", " : "",
                               g->index,
                               g->pci_bus_id.fn ? g->pci_bus_id.fn : "nvmlDeviceGetPciInfo_v3",
                               g->pci_bus_id.state == NV_TIMEOUT ? "timeout"
                                                                 : nv_rc_name(g->pci_bus_id.rc));
                n_unknown++;
        }
        if (n_unknown)
                result_evidence(r, "unidentified", "%s", unknown);
        /* GPUs NVML lists with their address but which answer GPU_IS_LOST. */
        char lost[512] = "";
        size_t n_lost = 0;
        for (unsigned int i = 0; i < n->n_gpus; i++) {
                const struct nvml_gpu *g = &n->gpus[i];
                const char *fn = nv_lost_by(g);
                if (!fn || !nv_ok(g->pci_bus_id))
                        continue;
                strbuf_appendf(lost, sizeof(lost), "%s%s (%s)", n_lost ? ", " : "", g->pci_bus_id.v, fn);
                n_lost++;
        }
        size_t seen = bound - n_missing;
        result_observed(r, "NVML %s sees %zu of the %zu GPUs bound to nvidia (device count %u)",
                        nv_ok(n->nvml_version) ? n->nvml_version.v : "(version unknown)", seen, bound,
                        n->device_count.v);
        if (n_lost) {
                result_evidence(r, "lost", "%s", lost);
                if (n_missing)
                        result_evidence(r, "missing", "%s", missing);
                result_status(r, STATUS_FAIL, "%zu GPU%s fallen off the bus: %s%s%s", n_lost + n_missing,
                              n_lost + n_missing == 1 ? " has" : "s have", lost, n_missing ? ", and NVML does not see " : "",
                              missing);
                result_remedy(r, "%s", nv_lost_remedy);
                return;
        }
        /* NVIDIA GPUs on the bus that no driver took: NVML cannot see them either. They are
         * named here, and fail once, in gpu.driver_binding (the cause). */
        char unbound[256] = "";
        size_t n_unbound = 0;
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct pci_dev *d = gpu_pci(f, i);
                if (d->driver[0])
                        continue;
                strbuf_appendf(unbound, sizeof(unbound), "%s%s", n_unbound ? ", " : "", d->addr);
                n_unbound++;
        }
        if (n_unbound)
                result_evidence(r, "no_driver", "%s", unbound);
        if (n_missing == 0) {
                result_status(r, STATUS_PASS, "NVML sees all %zu GPU%s%s (driver %s%s%s)%s%s", bound,
                              bound == 1 ? "" : "s", n_unbound ? " bound to nvidia" : "",
                              nv_ok(n->driver_version) ? n->driver_version.v : "version unknown",
                              n->cuda_driver_version_str[0] ? ", CUDA " : "", n->cuda_driver_version_str,
                              n_unbound ? "; not seen, no driver bound (gpu.driver_binding): " : "", unbound);
                return;
        }
        result_evidence(r, "missing", "%s", missing);
        if (n_unknown)
                result_status(r, STATUS_FAIL, "NVML does not identify %zu GPU%s on the PCI bus: %s; it lists %s", n_missing,
                              n_missing == 1 ? "" : "s", missing, unknown);
        else
                result_status(r, STATUS_FAIL, "NVML does not see %zu GPU%s on the PCI bus: %s", n_missing,
                              n_missing == 1 ? "" : "s", missing);
        result_remedy(r,
                      "A GPU bound to nvidia that NVML does not list failed to initialise: look for NVRM and Xid "
                      "messages about it in `dmesg` (\"RmInitAdapter failed\", Xid 79), check `nvidia-smi`, then "
                      "reset or power-cycle the node.");
}

CHECK_INFO(gpu_nvml, "gpu", "gpu.nvml", LEVEL_QUICK, NEED_NVIDIA | NEED_NVML,
           "NVML loads and sees every NVIDIA GPU on the PCI bus",
           run_nvml);

/* ---- gpu.driver_compat ------------------------------------------------------------- */

static void run_driver_compat(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (nv_unavailable(self, f, rep))
                return;
        const struct nvml_facts *n = &f->nvml;
        for (unsigned int i = 0; i < n->n_gpus; i++) {
                const struct nvml_gpu *g = &n->gpus[i];
                char desc[NV_DESC_MAX];
                struct result *r = nv_result(self, f, rep, g, desc);
                const struct gpu_model *m = nv_model(f, g);
                const struct gpu_arch *a = m && f->db ? gpudb_arch(f->db, m->arch) : NULL;
                if (a)
                        result_expected(r, "driver >= %s (%s)", a->min_driver, a->name);
                else
                        result_expected(r, "a driver that supports the GPU's architecture");
                if (UNUSABLE(r, f, g, "driver version", n->driver_version) ||
                    (!m && UNUSABLE(r, f, g, "PCI device id", g->pci_device_id)))
                        continue;
                result_observed(r, "driver %s", n->driver_version.v);
                result_evidence(r, "source", "nvmlSystemGetDriverVersion");
                if (f->db)
                        result_evidence(r, "compat_table", "%s", f->db->source);
                if (!a) {
                        result_status(r, STATUS_SKIP, "%s is not in gpuvet's GPU table: no minimum driver known",
                                      desc);
                        continue;
                }
                result_evidence(r, "architecture", "%s", a->id);
                int cmp;
                if (version_compare(n->driver_version.v, a->min_driver, &cmp) < 0) {
                        result_status(r, STATUS_ERROR, "cannot compare driver version \"%s\" with %s",
                                      n->driver_version.v, a->min_driver);
                        continue;
                }
                if (cmp < 0) {
                        result_status(r, STATUS_FAIL, "driver %s is older than %s, the first to support %s (%s)",
                                      n->driver_version.v, a->min_driver, a->name, m->name);
                        result_remedy(r, "Install a driver of %s or newer (a branch that supports %s), then reboot.",
                                      a->min_driver, a->name);
                        continue;
                }
                result_status(r, STATUS_PASS, "driver %s supports %s (%s needs >= %s)", n->driver_version.v, a->name,
                              m->name, a->min_driver);
        }
}

CHECK_INFO(gpu_driver_compat, "gpu", "gpu.driver_compat", LEVEL_QUICK, NEED_NVML,
           "The driver NVML reports supports each GPU's architecture",
           run_driver_compat);

/* ---- gpu.persistence_mode ----------------------------------------------------------- */

static void run_persistence_mode(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (nv_unavailable(self, f, rep))
                return;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                char subject[NV_STR_MAX];
                struct result *r = result_new(rep, self, nv_subject(f, g, subject, sizeof(subject)));
                result_expected(r, "persistence mode enabled (or nvidia-persistenced running)");
                if (UNUSABLE(r, f, g, "persistence mode", g->persistence_mode))
                        continue;
                result_evidence(r, "source", "nvmlDeviceGetPersistenceMode");
                if (g->persistence_mode.v == NV_ENABLED) {
                        result_observed(r, "enabled");
                        result_status(r, STATUS_PASS, "persistence mode is on");
                        continue;
                }
                result_observed(r, "disabled");
                if (f->nvidia.persistenced_running) {
                        result_evidence(r, "persistenced", "pid %d", f->nvidia.persistenced_pid);
                        result_status(r, STATUS_PASS,
                                      "persistence mode is off but nvidia-persistenced runs (pid %d) and keeps the "
                                      "GPU initialised",
                                      f->nvidia.persistenced_pid);
                        continue;
                }
                result_status(r, STATUS_WARN,
                              "persistence mode is off: the driver tears the GPU down when the last client exits, "
                              "so each job pays seconds of initialisation and GPU state is lost");
                result_remedy(r, "Enable the nvidia-persistenced service (`systemctl enable --now "
                                 "nvidia-persistenced`), NVIDIA's recommended way, or run `gpuvet tune apply --set "
                                 "gpu.persistence=on` (`gpuvet tune revert` undoes it; lost at reboot).");
        }
}

CHECK_INFO(gpu_persistence_mode, "gpu", "gpu.persistence_mode", LEVEL_QUICK, NEED_NVIDIA | NEED_NVML,
           "Persistence mode is on for every GPU",
           run_persistence_mode);

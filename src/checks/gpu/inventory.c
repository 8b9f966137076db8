/* gpu: the NVIDIA GPUs on the PCI bus, the driver each is bound to, nouveau, the nvidia
 * module version and the persistence daemon. */
#include "checks/check.h"
#include "core/strparse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVIDIA_VERSION_FILE "/proc/driver/nvidia/version"

static const char nouveau_remedy[] =
        "Blacklist nouveau: write /etc/modprobe.d/blacklist-nouveau.conf containing the two lines "
        "\"blacklist nouveau\" and \"options nouveau modeset=0\", rebuild the initramfs so early boot "
        "honours it (`update-initramfs -u` on Debian/Ubuntu, `dracut --force` on RHEL/Rocky/SUSE), "
        "reboot, then install or load the nvidia driver.";

static const char driver_remedy[] =
        "Install the NVIDIA driver (Ubuntu: `ubuntu-drivers install --gpgpu`; RHEL/Rocky with NVIDIA's "
        "CUDA repository: `dnf install nvidia-open` for Turing and newer, `dnf module install "
        "nvidia-driver:latest-dkms` for older GPUs) and load it with `modprobe nvidia`; `dmesg | grep -i nvrm` shows why a module refused to load.";

static void run_inventory(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (check_gpus_unknown(f)) {
                struct result *r = result_new(rep, self, "host");
                result_evidence(r, "source", "/sys/bus/pci/devices");
                result_expected(r, "the PCI devices listed");
                result_observed(r, "unlisted: %s", strerror(f->pci.list_errno));
                result_status(r, STATUS_ERROR, "cannot list /sys/bus/pci/devices (%s): the node's GPUs are unknown",
                              strerror(f->pci.list_errno));
                result_remedy(r, "Run gpuvet as root, or check that sysfs is mounted and readable "
                                 "(`ls /sys/bus/pci/devices`).");
                return;
        }
        if (check_skip_without_gpus(self, f, rep))
                return;
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct pci_dev *d = gpu_pci(f, i);
                const struct gpu_model *m = f->gpus.gpus[i].model;
                struct result *r = result_new(rep, self, d->addr);
                result_evidence(r, "source", "%s/device", d->sysfs_path);
                if (d->have_ids) {
                        result_evidence(r, "pci_id", "%04x:%04x", d->vendor, d->device);
                        result_evidence(r, "subsystem", "%04x:%04x", d->subsys_vendor, d->subsys_device);
                }
                if (f->db)
                        result_evidence(r, "gpu_table", "%s", f->db->source);
                result_expected(r, "a GPU model in gpuvet's table");
                if (!d->have_ids) {
                        /* Known as a GPU only from the driver's own list: its ids are damaged
                         * or missing, which no update of the table fixes. */
                        result_evidence(r, "source", "%s/%s", d->sysfs_path, d->ids_attr ? d->ids_attr : "vendor");
                        result_observed(r, "PCI ids unknown: %s unreadable (%s)", d->ids_attr ? d->ids_attr : "vendor",
                                        strerror(d->ids_errno ? d->ids_errno : EINVAL));
                        result_status(r, STATUS_ERROR, "cannot read the PCI %s of this GPU (%s): its model is unknown",
                                      d->ids_attr ? d->ids_attr : "ids", strerror(d->ids_errno ? d->ids_errno : EINVAL));
                        result_remedy(r, "Read %s/%s: a damaged or partial capture needs taking again; on a live "
                                         "node, check the device with `lspci -vs %s`.",
                                      d->sysfs_path, d->ids_attr ? d->ids_attr : "vendor", d->addr);
                        continue;
                }
                if (!m) {
                        char name[96];
                        gpu_describe(f, i, name, sizeof(name));
                        result_observed(r, "%s", name);
                        result_status(r, STATUS_WARN,
                                      "%s is not in gpuvet's GPU table: no architecture, compute capability or "
                                      "spec figures to check against",
                                      name);
                        result_remedy(r,
                                      "Update gpuvet, or add the device id to a copy of gpus.json and pass its "
                                      "directory with --data-dir DIR (or GPUVET_DATA_DIR).");
                        continue;
                }
                const struct gpu_arch *a = f->db ? gpudb_arch(f->db, m->arch) : NULL;
                const char *arch = a ? a->name : m->arch;
                result_observed(r, "%s, %s, compute capability %d.%d", m->name, arch, m->cc_major, m->cc_minor);
                result_evidence(r, "architecture", "%s", m->arch);
                if (a)
                        result_evidence(r, "sm", "%s", a->sm);
                result_status(r, STATUS_PASS, "%s (%s, compute capability %d.%d)", m->name, arch, m->cc_major,
                              m->cc_minor);
        }
}

CHECK_INFO(gpu_inventory, "gpu", "gpu.inventory", LEVEL_QUICK, 0,
           "Each NVIDIA GPU is known: model, architecture, compute capability",
           run_inventory);

static void run_driver_binding(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (check_skip_without_gpus(self, f, rep))
                return;
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct pci_dev *d = gpu_pci(f, i);
                struct result *r = result_new(rep, self, d->addr);
                char name[96];
                gpu_describe(f, i, name, sizeof(name));
                result_observed(r, "%s", d->driver[0] ? d->driver : "no driver");
                result_expected(r, "nvidia (vfio-pci when passed through to a VM)");
                result_evidence(r, "source", "%s/driver", d->sysfs_path);
                if (strcmp(d->driver, "nvidia") == 0) {
                        result_status(r, STATUS_PASS, "%s is bound to the nvidia driver", name);
                } else if (strcmp(d->driver, "vfio-pci") == 0) {
                        result_status(r, STATUS_PASS, "%s is bound to vfio-pci: reserved for passthrough to a VM",
                                      name);
                } else if (strcmp(d->driver, "nouveau") == 0) {
                        result_status(r, STATUS_FAIL, "%s is driven by nouveau, which runs no CUDA", name);
                        result_remedy(r, "%s", nouveau_remedy);
                } else if (!d->driver[0] && (f->nvidia.module_loaded || check_gpus_bound_to(f, "nvidia") > 0)) {
                        /* The driver runs (it drives other GPUs, or its module is loaded) yet
                         * did not take this one: its initialisation failed. Installing a driver
                         * would change nothing; the GPU or its slot is at fault. */
                        char log[200] = "";
                        size_t n_log = 0;
                        bool too_new = false;
                        for (size_t k = 0; k < f->xid.n_faults; k++) {
                                const struct xid_event *ev = &f->xid.faults[k];
                                if (ev->addr[0] && strncmp(ev->addr, d->addr, 10) != 0)
                                        continue;
                                too_new |= strstr(ev->text, "not supported by") != NULL;
                                if (!n_log++)
                                        snprintf(log, sizeof(log), "%s", ev->text);
                        }
                        if (too_new) {
                                result_evidence(r, "kernel_log", "%s", log);
                                result_status(r, STATUS_FAIL, "the installed nvidia driver does not support %s at %s: "
                                                              "CUDA cannot use it", name, d->addr);
                                result_remedy(r, "Install a driver branch that supports this GPU (`gpuvet detect` names "
                                                 "it), then reboot.");
                                continue;
                        }
                        if (n_log)
                                result_evidence(r, "kernel_log", "%s%s", log, n_log > 1 ? " (and more)" : "");
                        result_status(r, STATUS_FAIL,
                                      "the nvidia driver failed to initialise %s at %s%s%s: CUDA cannot use it", name,
                                      d->addr, n_log ? "; kernel log: " : "", n_log ? log : "");
                        result_remedy(r, "Drain the node and power-cycle it (a reboot may not retrain the link); if the "
                                         "GPU still fails, reseat it and its riser/cable, then have it replaced (RMA). "
                                         "`dmesg | grep -i nvrm` shows the driver's messages for %s.",
                                      d->addr);
                } else if (!d->driver[0]) {
                        result_status(r, STATUS_FAIL, "no driver is bound to %s: CUDA cannot use it", name);
                        result_remedy(r, "%s", driver_remedy);
                } else {
                        result_status(r, STATUS_WARN, "%s is bound to %s, neither nvidia nor vfio-pci", name,
                                      d->driver);
                        result_remedy(r,
                                      "Unbind it (`echo %s > /sys/bus/pci/drivers/%s/unbind`) and find what binds "
                                      "%s at boot (modprobe.d, driverctl, kernel command line); then `modprobe "
                                      "nvidia`.",
                                      d->addr, d->driver, d->driver);
                }
        }
}

CHECK_INFO(gpu_driver_binding, "gpu", "gpu.driver_binding", LEVEL_QUICK, NEED_NVIDIA | NEED_XID,
           "Each GPU is bound to the nvidia driver (or vfio-pci for passthrough)",
           run_driver_binding);

/* modprobe.blacklist= and module_blacklist= take comma-separated module names. */
static bool cmdline_lists(const char *cmdline, const char *key, const char *module) {
        char v[512];
        if (!cmdline || cmdline_get(cmdline, key, v, sizeof(v)) < 0)
                return false;
        char *save = NULL;
        for (char *t = strtok_r(v, ",", &save); t; t = strtok_r(NULL, ",", &save))
                if (strcmp(t, module) == 0)
                        return true;
        return false;
}

static void run_nouveau(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct nvidia_facts *x = &f->nvidia;
        struct result *r = check_host_result_with_gpus(self, f, rep);
        if (!r)
                return;
        result_evidence(r, "source", "/proc/modules");
        if (!f->host.have_modules && !x->nouveau_loaded) {
                if (check_skip_capture_lacks(r, f, "/proc/modules"))
                        return;
                result_status(r, STATUS_ERROR, "cannot read /proc/modules (%s): the loaded modules are unknown",
                              strerror(-f->host.modules_errno));
                result_remedy(r, "Check that /proc is mounted and readable (`cat /proc/modules`).");
                return;
        }
        bool on_cmdline = cmdline_lists(f->host.cmdline, "modprobe.blacklist", "nouveau") ||
                          cmdline_lists(f->host.cmdline, "module_blacklist", "nouveau");
        const char *how = x->nouveau_blacklisted ? x->nouveau_blacklist_file
                          : on_cmdline           ? "kernel command line"
                                                 : "";
        result_evidence(r, "blacklisted_in", "%s", how[0] ? how : "nowhere");
        result_evidence(r, "options_modeset_0", "%s", x->nouveau_modeset_off ? "yes" : "no");
        result_expected(r, "nouveau not loaded");
        if (!x->nouveau_loaded) {
                result_observed(r, "not loaded");
                if (how[0])
                        result_status(r, STATUS_PASS, "nouveau is not loaded (blacklisted in %s)", how);
                else
                        result_status(r, STATUS_PASS, "nouveau is not loaded (not blacklisted either)");
                return;
        }
        result_observed(r, "loaded");
        if (how[0])
                /* modprobe.d only stops udev's autoload after the initramfs has been rebuilt
                 * with it; an older initramfs still loads nouveau during early boot. */
                result_status(r, STATUS_FAIL,
                              "nouveau is loaded although %s blacklists it: the initramfs or boot predates the "
                              "blacklist",
                              how);
        else
                result_status(r, STATUS_FAIL,
                              "nouveau is loaded: it holds the GPUs and keeps the nvidia driver from binding");
        result_remedy(r, "%s", nouveau_remedy);
}

CHECK_INFO(gpu_nouveau, "gpu", "gpu.nouveau", LEVEL_QUICK, NEED_NVIDIA, "The nouveau driver is not loaded", run_nouveau);

/* The newest architecture among the GPUs decides the oldest usable driver. */
/* The highest driver floor among the node's GPUs (a model's own, else its
 * architecture's), and the lowest last branch (Pascal and Volta end at R580). */
struct driver_bounds {
        const char *floor;            /* NULL when no GPU is in the table */
        const char *floor_model;
        const char *floor_arch;       /* the architecture's name, or "this model" */
        unsigned last_branch;         /* 0 = no GPU has one */
        const char *last_branch_arch;
        const char *last_branch_model;
        /* The module flavours every GPU runs on (GPU_MODULES_*, intersected), and a GPU of
         * the most restrictive architecture, for the message. */
        unsigned modules;
        const char *modules_arch, *modules_model;
};

static struct driver_bounds driver_bounds_of(const struct facts *f) {
        struct driver_bounds b = {.modules = GPU_MODULES_OPEN | GPU_MODULES_PROPRIETARY};
        for (size_t i = 0; f->db && i < f->gpus.n; i++) {
                const struct gpu_model *m = f->gpus.gpus[i].model;
                const struct gpu_arch *a = m ? gpudb_arch(f->db, m->arch) : NULL;
                if (!a)
                        continue;
                const char *floor = gpudb_min_driver(f->db, m);
                int cmp;
                if (floor && (!b.floor || (version_compare(floor, b.floor, &cmp) == 0 && cmp > 0))) {
                        b.floor = floor;
                        b.floor_model = m->name;
                        b.floor_arch = m->min_driver ? "this model" : a->name;
                }
                unsigned modules = gpudb_kernel_modules(f->db, m);
                if (modules && (b.modules & modules) != b.modules) {
                        b.modules &= modules;
                        b.modules_arch = m->kernel_modules ? m->name : a->name;
                        b.modules_model = m->name;
                }
                if (a->last_branch && (!b.last_branch || a->last_branch < b.last_branch)) {
                        b.last_branch = a->last_branch;
                        b.last_branch_arch = a->name;
                        b.last_branch_model = m->name;
                }
        }
        return b;
}

/* A GPU the loaded module flavour does not drive stays uninitialised ("NVRM: ... is not
 * supported by the open/proprietary module"), and every later check points at hardware.
 * Blackwell and Grace Hopper run only on the open modules, Maxwell to Volta only on the
 * proprietary ones (gpus.json kernel_modules). True when it judged (FAIL). */
static bool judge_module_flavour(struct result *r, const struct nvidia_facts *x, const struct driver_bounds *b,
                                 unsigned branch) {
        const unsigned have = x->open_kernel_module ? GPU_MODULES_OPEN : GPU_MODULES_PROPRIETARY;
        if (!b->modules_model || (b->modules & have))
                return false;
        if (b->modules == 0) {
                result_status(r, STATUS_FAIL, "no one kernel module flavour drives all the GPUs: %s needs the %s "
                                              "kernel modules, other GPUs the other flavour",
                              b->modules_model, x->open_kernel_module ? "proprietary" : "open");
                result_remedy(r, "Split these GPUs across nodes: the open kernel modules (nvidia-open) drive Turing "
                                 "and newer, the proprietary ones Maxwell, Pascal and Volta, and one node loads one.");
                return true;
        }
        char who[160];
        if (strcmp(b->modules_arch, b->modules_model) == 0)
                snprintf(who, sizeof(who), "%s GPUs", b->modules_model);
        else
                snprintf(who, sizeof(who), "%s GPUs (%s)", b->modules_arch, b->modules_model);
        if (b->modules & GPU_MODULES_OPEN) {
                result_status(r, STATUS_FAIL, "%s run only on the open kernel modules, and the proprietary module is "
                                              "loaded: the GPUs do not initialise",
                              who);
                result_remedy(r, "Install the open kernel modules (nvidia-open): `apt install nvidia-open` or `dnf "
                                 "install nvidia-open` from NVIDIA's CUDA repository (Ubuntu's own packages: "
                                 "nvidia-driver-%u-server-open), which replaces the proprietary kernel module, then "
                                 "reboot.",
                              branch);
                return true;
        }
        result_status(r, STATUS_FAIL, "%s run only on the proprietary kernel modules, and the open module is "
                                      "loaded: the GPUs do not initialise",
                      who);
        result_remedy(r, "Install the proprietary kernel modules of an R580 or older branch (`apt install "
                         "cuda-drivers-580` from NVIDIA's CUDA repository, or Ubuntu's nvidia-driver-580-server), "
                         "which replaces nvidia-open, then reboot; R620 and later ship no proprietary modules.");
        return true;
}

static void run_driver_version(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct nvidia_facts *x = &f->nvidia;
        struct result *r = check_host_result_with_gpus(self, f, rep);
        if (!r)
                return;
        result_evidence(r, "source", "%s", x->module_loaded ? NVIDIA_VERSION_FILE : "/proc/modules");
        struct driver_bounds b = driver_bounds_of(f);
        if (b.floor && b.last_branch)
                result_expected(r, "nvidia module >= %s (%s, %s), of branch R%u or older (%s)", b.floor, b.floor_arch,
                                b.floor_model, b.last_branch, b.last_branch_arch);
        else if (b.floor)
                result_expected(r, "nvidia module >= %s (%s, %s)", b.floor, b.floor_arch, b.floor_model);
        else
                result_expected(r, "nvidia module loaded");

        if (!x->module_state_known) {
                if (check_skip_capture_lacks(r, f, "/proc/modules"))
                        return;
                result_observed(r, "unknown: /proc/modules unreadable, no /sys/module/nvidia, no %s",
                                NVIDIA_VERSION_FILE);
                result_status(r, STATUS_ERROR, "cannot read /proc/modules (%s): whether the nvidia module is loaded "
                                               "is unknown",
                              strerror(-f->host.modules_errno));
                result_remedy(r, "Check that /proc is mounted and readable (`cat /proc/modules`), then run the "
                                 "check again.");
                return;
        }
        if (!x->module_loaded) {
                result_observed(r, "nvidia module not loaded");
                if (check_count_host_gpus(f) == 0) {
                        result_status(r, STATUS_SKIP,
                                      "every GPU is bound to vfio-pci for passthrough: the host needs no nvidia "
                                      "driver");
                        return;
                }
                result_status(r, STATUS_FAIL, "the nvidia kernel module is not loaded: no CUDA on this host");
                result_remedy(r, "%s", driver_remedy);
                return;
        }
        if (!x->have_version) {
                if (check_skip_capture_lacks(r, f, NVIDIA_VERSION_FILE))
                        return;
                result_observed(r, "nvidia module loaded, version unknown");
                if (x->version_errno == -ENOENT)
                        result_status(r, STATUS_ERROR, "the nvidia module is loaded but %s is missing",
                                      NVIDIA_VERSION_FILE);
                else if (x->version_errno == -EINVAL)
                        result_status(r, STATUS_ERROR, "no driver version found in %s", NVIDIA_VERSION_FILE);
                else
                        result_status(r, STATUS_ERROR, "cannot read %s: %s", NVIDIA_VERSION_FILE,
                                      strerror(-x->version_errno));
                if (x->version_line[0])
                        result_evidence(r, "version_line", "%s", x->version_line);
                result_remedy(r, "Check `cat %s` and `dmesg | grep -i nvrm`; reinstall the driver if the module is "
                                 "damaged.",
                              NVIDIA_VERSION_FILE);
                return;
        }
        const char *flavour = x->open_kernel_module ? "open kernel module" : "proprietary kernel module";
        result_observed(r, "%s (%s)", x->driver_version, flavour);
        result_evidence(r, "version_line", "%s", x->version_line);
        int cmp;
        if (b.floor && version_compare(x->driver_version, b.floor, &cmp) == 0 && cmp < 0) {
                result_status(r, STATUS_FAIL, "driver %s is older than %s, the first to support %s (%s)",
                              x->driver_version, b.floor, b.floor_arch, b.floor_model);
                result_remedy(r, "Install a driver branch of %s or newer from NVIDIA's repository or your "
                                 "distribution, then reboot.",
                              b.floor);
                return;
        }
        /* NVIDIA ends support for old architectures at a branch: newer drivers do not drive
         * them, and the GPU then looks absent to NVML rather than unsupported. */
        unsigned branch = (unsigned)strtoul(x->driver_version, NULL, 10);
        if (b.last_branch && branch > b.last_branch) {
                result_status(r, STATUS_FAIL,
                              "driver %s (R%u) does not support %s (%s): R%u is the last branch that does",
                              x->driver_version, branch, b.last_branch_arch, b.last_branch_model, b.last_branch);
                result_remedy(r, "Install the newest R%u driver (e.g. `apt install nvidia-driver-%u-server` or "
                                 "`dnf module install nvidia-driver:%u`), then reboot; keep the node on CUDA 12.x.",
                              b.last_branch, b.last_branch, b.last_branch);
                return;
        }
        if (b.modules_model && b.modules)
                result_evidence(r, "module_flavours", "%s only (%s)",
                                b.modules == GPU_MODULES_OPEN ? "open" : b.modules == GPU_MODULES_PROPRIETARY
                                                                          ? "proprietary" : "open or proprietary",
                                b.modules_arch);
        if (judge_module_flavour(r, x, &b, branch))
                return;
        result_status(r, STATUS_PASS, "nvidia driver %s loaded (%s)", x->driver_version, flavour);
}

CHECK_INFO(gpu_driver_version, "gpu", "gpu.driver_version", LEVEL_QUICK, NEED_NVIDIA,
           "The nvidia module is loaded and new enough for the GPUs' architecture",
           run_driver_version);

static void run_persistenced(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct nvidia_facts *x = &f->nvidia;
        struct result *r = check_host_result_with_gpus(self, f, rep);
        if (!r)
                return;
        if (check_gpus_bound_to(f, "nvidia") == 0) {
                result_status(r, STATUS_SKIP, "no GPU is bound to the nvidia driver");
                result_evidence(r, "source", "/sys/bus/pci/devices/*/driver");
                return;
        }
        result_expected(r, "nvidia-persistenced running");
        if (x->persistenced_running) {
                result_observed(r, "running (pid %d)", x->persistenced_pid);
                result_evidence(r, "source", "%s", x->persistenced_source);
                result_status(r, STATUS_PASS, "nvidia-persistenced is running (pid %d)", x->persistenced_pid);
                return;
        }
        result_evidence(r, "source", "/proc/[0-9]*/comm, /run/nvidia-persistenced/nvidia-persistenced.pid");
        if (x->proc_errno) {
                if (check_skip_capture_lacks(r, f, "/proc"))
                        return;
                result_observed(r, "unknown");
                result_status(r, STATUS_ERROR, "cannot list /proc to look for nvidia-persistenced: %s",
                              strerror(-x->proc_errno));
                result_remedy(r, "Check that /proc is mounted; `systemctl status nvidia-persistenced` shows the "
                                 "daemon's state.");
                return;
        }
        /* Persistence mode set on every GPU (`nvidia-smi -pm 1`, the legacy way) keeps the
         * driver state just as the daemon does: nothing is torn down, so no warning. */
        unsigned int bound = check_gpus_bound_to(f, "nvidia"), persistent = 0;
        for (size_t i = 0; i < f->gpus.n && f->nvml.init_state == NVML_INIT_OK; i++) {
                const struct pci_dev *d = gpu_pci(f, i);
                const struct nvml_gpu *g = strcmp(d->driver, "nvidia") == 0 ? nvml_gpu_at(f, d->addr) : NULL;
                if (g && nv_ok(g->persistence_mode) && g->persistence_mode.v == NV_ENABLED)
                        persistent++;
        }
        if (persistent == bound) {
                result_observed(r, "not running; persistence mode on for all %u GPU%s", bound, bound == 1 ? "" : "s");
                result_evidence(r, "persistence_source", "nvmlDeviceGetPersistenceMode");
                result_status(r, STATUS_PASS,
                              "persistence mode is on for every GPU (set without the daemon, e.g. `nvidia-smi -pm 1`): "
                              "driver state is kept between clients");
                return;
        }
        result_observed(r, "not running");
        result_status(r, STATUS_WARN,
                      "nvidia-persistenced is not running: the driver tears GPU state down whenever the last "
                      "client exits (slow start-up, settings lost)");
        result_remedy(r, "`systemctl enable --now nvidia-persistenced` (the daemon ships with the driver; "
                         "install the nvidia-persistenced or nvidia-compute-utils package if the unit is missing).");
}

CHECK_INFO(gpu_persistenced, "gpu", "gpu.persistenced", LEVEL_QUICK, NEED_NVIDIA | NEED_NVML,
           "nvidia-persistenced keeps GPU state initialised",
           run_persistenced);

/* gpu.cuda_driver: what every CUDA program does first, done the way it does it (DCGM's
 * level-1 "CUDA main library" test): load libcuda.so.1, check it belongs to the loaded
 * kernel module, call cuInit under a deadline, count the devices. The probe itself is
 * bindings/cuda_probe.c; this file judges its facts. */
#include "checks/check.h"
#include "core/array.h"

#include <stdio.h>
#include <string.h>

#define SLOW_INIT_MS 5000u

/* How cuInit's failures read to an operator, and what fixes them; codes not listed get
 * the driver's own description and a generic remedy. */
static const struct init_failure {
        int rc;
        const char *why;
        const char *remedy;
} init_failures[] = {
        {34, "the CUDA toolkit's stub library %s is loaded instead of the driver's libcuda",
         "Stub libraries are for linking only: remove the toolkit's lib64/stubs directory from LD_LIBRARY_PATH and "
         "/etc/ld.so.conf.d, run `ldconfig`, and install the driver's libcuda if it is missing."},
        {100, "CUDA finds no device although the nvidia driver holds the GPUs",
         "Check the device files (gpu.device_nodes) and that job users may open them; in a container or a job the "
         "device cgroup hides them; `nvidia-smi` lists what the driver sees."},
        {102, "the vGPU is not licensed",
         "License the vGPU: set the license server or client token in /etc/nvidia/gridd.conf, restart nvidia-gridd, "
         "and check `nvidia-smi -q | grep -i -A2 license`."},
        {304, "an operating-system call failed while CUDA initialised",
         "Check that /dev/nvidiactl and /dev/nvidia-uvm open for job users (gpu.device_nodes), look for SELinux or "
         "AppArmor denials (`journalctl -k | grep -i denied`), and check the locked-memory limit (`ulimit -l`)."},
        {802, "the system is not ready for CUDA work",
         "On NVSwitch systems (HGX, DGX) CUDA waits for the NVIDIA Fabric Manager: `systemctl enable --now "
         "nvidia-fabricmanager` (its version must equal the driver's); on HGX/DGX B200 and B300 also for the NVLink "
         "Subnet Manager (package nvlsm, started by the Fabric Manager's service once ib_umad is loaded); on "
         "GB200/GB300 NVL72 compute trays for the rack's fabric (switch trays) and nvidia-imex. Then check "
         "`nvidia-smi -q | grep -A2 Fabric` shows the fabric completed (gpu.fabric_manager)."},
        {803, "the driver's user-space libraries and the loaded kernel module are different versions",
         "Load the kernel module that matches the installed libraries: reboot (or unload and reload the nvidia "
         "modules) after a driver upgrade; if the packages are mixed, reinstall one driver branch."},
        {804, "a CUDA forward-compatibility libcuda is loaded on a GPU that does not support forward compatibility",
         "Forward compatibility (cuda-compat) is for data-center GPUs only: remove the compat directory from "
         "LD_LIBRARY_PATH and /etc/ld.so.conf.d on this node, or upgrade the driver instead."},
        {46, "a GPU is busy or unavailable to new CUDA processes",
         "See `nvidia-smi -q -d COMPUTE`: a GPU in Prohibited mode takes no contexts (`nvidia-smi -i N -c DEFAULT`); "
         "an Exclusive_Process GPU takes one process at a time."},
        {999, "cuInit fails with an unknown error",
         "Most often the nvidia-uvm module is not loaded (`modprobe nvidia-uvm`) or a GPU is in a bad state: look "
         "for Xid errors (`journalctl -k | grep -i xid`) and reset the GPU (`nvidia-smi -r -i N`) or reboot."},
};

static const struct init_failure *failure_of(int rc) {
        for (size_t i = 0; i < ARRAY_COUNT(init_failures); i++)
                if (init_failures[i].rc == rc)
                        return &init_failures[i];
        return NULL;
}

/* "CUDA_ERROR_NO_DEVICE (100)" */
static void rc_label(const struct cuda_driver_facts *x, char *buf, size_t size) {
        const char *name = cuda_driver_rc_name(x->init_rc);
        if (!name && x->init_rc_name[0])
                name = x->init_rc_name;
        if (name)
                snprintf(buf, size, "%s (%d)", name, x->init_rc);
        else
                snprintf(buf, size, "CUDA error %d", x->init_rc);
}

static bool any_mig(const struct facts *f) {
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++)
                if (f->nvml.gpus[i].mig_mode_current.state == NV_OK && f->nvml.gpus[i].mig_mode_current.v == 1)
                        return true;
        return false;
}

static void add_evidence(struct result *r, const struct facts *f, const struct cuda_driver_facts *x) {
        result_evidence(r, "library", "%s", x->lib_path[0] ? x->lib_path : x->lib_name);
        if (x->lib_path[0])
                result_evidence(r, "library_version", "%s", x->lib_version[0] ? x->lib_version : "not in the file name");
        if (f->nvidia.have_version)
                result_evidence(r, "kernel_module_version", "%s", f->nvidia.driver_version);
        if (x->api_version > 0)
                result_evidence(r, "cuda_driver_api", "%d.%d", x->api_version / 1000, x->api_version % 1000 / 10);
        if (x->state == CUDA_DRIVER_OK || x->state == CUDA_DRIVER_INIT_FAILED ||
            (x->state == CUDA_DRIVER_TIMEOUT && x->stage == CUDA_STAGE_INIT))
                result_evidence(r, "cuinit_ms", "%u", x->init_ms);
        if (x->device_count >= 0)
                result_evidence(r, "cuda_devices", "%d", x->device_count);
        if (x->visible_devices_cleared)
                result_evidence(r, "probe_environment", "CUDA_VISIBLE_DEVICES unset for the probe (gpu.cuda_env judges it)");
}

static void judge_failed_init(struct result *r, const struct facts *f, const struct cuda_driver_facts *x) {
        char code[96];
        rc_label(x, code, sizeof(code));
        result_observed(r, "cuInit: %s", code);
        const struct init_failure *k = failure_of(x->init_rc);
        if (!k) {
                const char *text = cuda_driver_rc_text(x->init_rc);
                result_status(r, STATUS_FAIL, "CUDA cannot initialise: cuInit returned %s%s%s", code, text ? ": " : "",
                              text ? text : "");
                result_remedy(r, "Read the driver's own account in the kernel log (`journalctl -k | grep -i -e nvrm -e xid`) "
                                 "and what `nvidia-smi` reports; reload the driver or reboot.");
                return;
        }
        if (x->init_rc == 34)
                result_status(r, STATUS_FAIL, "CUDA cannot initialise: cuInit returned %s: the CUDA toolkit's stub library "
                              "%s is loaded instead of the driver's libcuda", code, x->lib_path[0] ? x->lib_path : x->lib_name);
        else if (x->init_rc == 803 && x->lib_version[0] && f->nvidia.have_version &&
                 strcmp(x->lib_version, f->nvidia.driver_version) != 0)
                result_status(r, STATUS_FAIL, "CUDA cannot initialise: cuInit returned %s: libcuda %s and the kernel module "
                              "%s are different driver versions", code, x->lib_version, f->nvidia.driver_version);
        else
                result_status(r, STATUS_FAIL, "CUDA cannot initialise: cuInit returned %s: %s", code, k->why);
        result_remedy(r, "%s", k->remedy);
}

/* cuInit worked: the library's version against the module's, and the device count
 * against the GPUs the driver holds. */
static void judge_working(struct result *r, const struct facts *f, const struct cuda_driver_facts *x, size_t bound) {
        result_expected(r, "cuInit succeeds and counts every GPU the nvidia driver holds (%zu)", bound);
        result_observed(r, "cuInit succeeded in %u ms; %d CUDA device%s", x->init_ms, x->device_count,
                        x->device_count == 1 ? "" : "s");
        bool versions_known = x->lib_version[0] && f->nvidia.have_version;
        bool same = versions_known && strcmp(x->lib_version, f->nvidia.driver_version) == 0;
        if (x->device_count_rc != 0) {
                char code[96];
                const char *name = cuda_driver_rc_name(x->device_count_rc);
                snprintf(code, sizeof(code), "%s (%d)", name ? name : "CUDA error", x->device_count_rc);
                result_status(r, STATUS_FAIL, "cuInit succeeded but cuDeviceGetCount returned %s", code);
                result_remedy(r, "Look for Xid errors (`journalctl -k | grep -i xid`) and check `nvidia-smi`; reset the GPU "
                                 "or reboot.");
                return;
        }
        if (versions_known && !same && !x->lib_in_compat) {
                result_status(r, STATUS_WARN, "libcuda %s and the kernel module %s are different driver versions (CUDA "
                              "initialised anyway)", x->lib_version, f->nvidia.driver_version);
                result_remedy(r, "Install one driver version: the libraries and the module come from the same release; "
                                 "reboot after an upgrade so the new module is loaded.");
                return;
        }
        if (!any_mig(f) && (size_t)x->device_count < bound) {
                result_status(r, STATUS_FAIL, "CUDA sees %d of the %zu GPUs the nvidia driver holds", x->device_count, bound);
                result_remedy(r, "A GPU the driver holds but CUDA cannot use has failed to initialise or is hidden: compare "
                                 "`nvidia-smi -L` with the PCI list, look for Xid errors (`journalctl -k | grep -i xid`), "
                                 "and check the device cgroup in containers and jobs.");
                return;
        }
        if (x->init_ms > SLOW_INIT_MS) {
                result_status(r, STATUS_WARN, "cuInit took %u ms: every CUDA program on this node starts that slowly",
                              x->init_ms);
                result_remedy(r, "Keep the GPUs initialised between jobs: `systemctl enable --now nvidia-persistenced` "
                                 "(gpu.persistence_mode).");
                return;
        }
        if (versions_known && !same)
                result_status(r, STATUS_PASS, "CUDA initialises through the forward-compatibility libcuda %s on kernel "
                              "module %s", x->lib_version, f->nvidia.driver_version);
        else
                result_status(r, STATUS_PASS, "CUDA initialises and counts %d device%s", x->device_count,
                              x->device_count == 1 ? "" : "s");
}

static void run_cuda_driver(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct cuda_driver_facts *x = &f->cuda_driver;
        struct result *r = check_host_result_with_gpus(self, f, rep);
        if (!r)
                return;
        size_t bound = check_gpus_bound_to(f, "nvidia");
        if (bound == 0) {
                result_status(r, STATUS_SKIP, "no GPU is bound to the nvidia driver");
                return;
        }
        if (x->state == CUDA_DRIVER_NOT_PROBED) {
                result_status(r, STATUS_SKIP, "%s", x->note[0] ? x->note : "the CUDA driver was not probed");
                return;
        }
        add_evidence(r, f, x);
        const char *lib = x->lib_path[0] ? x->lib_path : x->lib_name;
        switch (x->state) {
        case CUDA_DRIVER_NOT_PROBED:
                break;
        case CUDA_DRIVER_PROBE_ERROR:
                result_observed(r, "unknown");
                result_status(r, STATUS_ERROR, "cannot run the CUDA probe: %s", x->note);
                break;
        case CUDA_DRIVER_NO_LIBRARY:
                result_observed(r, "%s does not load: %s", x->lib_name, x->note);
                result_status(r, STATUS_FAIL, "CUDA programs cannot start: the driver's CUDA library %s does not load",
                              x->lib_name);
                result_remedy(r, "Install the driver's CUDA library for kernel module %s (Debian and Ubuntu: "
                                 "libnvidia-compute-<branch>; RHEL: nvidia-driver-cuda-libs), then run `ldconfig`.",
                              f->nvidia.have_version ? f->nvidia.driver_version : "version");
                break;
        case CUDA_DRIVER_NO_SYMBOL:
                result_observed(r, "%s has no %s", lib, x->note);
                result_status(r, STATUS_FAIL, "%s is not a CUDA driver library (it has no %s)", lib, x->note);
                result_remedy(r, "Find what shadows the driver's libcuda (`ldconfig -p | grep libcuda`, LD_LIBRARY_PATH) and "
                                 "remove it.");
                break;
        case CUDA_DRIVER_TIMEOUT:
                result_observed(r, "%s did not return within %u ms", cuda_driver_stage_call(x->stage), x->timeout_ms);
                result_status(r, STATUS_ERROR, "%s did not return within %u ms: CUDA programs on this node hang at start",
                              cuda_driver_stage_call(x->stage), x->timeout_ms);
                result_remedy(r, "A GPU or the driver is stuck: look for Xid errors (`journalctl -k | grep -i xid`) and "
                                 "processes in state D (`ps -eo pid,stat,comm | awk '$2 ~ /D/'`); reset the GPU "
                                 "(`nvidia-smi -r -i N`) or reboot. Without persistence mode cuInit also wakes every GPU, "
                                 "which takes seconds (gpu.persistence_mode).");
                break;
        case CUDA_DRIVER_CRASHED:
                result_observed(r, "the probe died in %s: %s", cuda_driver_stage_call(x->stage), x->note);
                result_status(r, STATUS_ERROR, "the CUDA probe process died in %s (%s)", cuda_driver_stage_call(x->stage),
                              x->note);
                result_remedy(r, "Run a CUDA program by hand (`nvidia-smi`, then any CUDA sample) and read the kernel log "
                                 "(`journalctl -k | grep -i -e nvrm -e xid`).");
                break;
        case CUDA_DRIVER_INIT_FAILED:
                judge_failed_init(r, f, x);
                break;
        case CUDA_DRIVER_OK:
                judge_working(r, f, x, bound);
                break;
        }
}

CHECK_INFO(gpu_cuda_driver, "gpu", "gpu.cuda_driver", LEVEL_QUICK, NEED_NVIDIA | NEED_CUDA_DRIVER | NEED_NVML,
           "libcuda loads, matches the kernel module, and cuInit counts every GPU",
           run_cuda_driver);

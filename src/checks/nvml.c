/* gpu (NVML): what the driver itself says about each GPU, read through NVML under
 * deadlines (sys/nvml_facts.h). docs/checks/gpu.md documents every check here.
 *
 * Each reading carries how it was obtained; reading_unusable() turns the ones without a
 * value into the same result everywhere: a call that never returned is an error naming
 * the function and the GPU, "not supported" is a skip, GPU_IS_LOST is a failure (the GPU
 * has fallen off the bus), any other NVML error is an error naming its code. */
#include "checks/check.h"
#include "core/strbuf.h"
#include "core/strparse.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The adjustable thresholds (temperature margin, corrected ECC errors, the retired-page
 * warning, the PCIe replay rate, the power-cap fraction) come from check_thresholds(): a
 * site policy's, else policy_thresholds_default, whose comments give their sources. */
/* Pre-Ampere page retirement keeps at most 64 pages (NVIDIA, "A100 GPU memory error
 * management": "a maximum of 64 retirements for the frame buffer"). DCGM's health check
 * and diagnostic fail a GPU at 63 retired pages in total (DCGM_LIMIT_MAX_RETIRED_PAGES in
 * its GPU hardware limits header) and use 15 as the soft limit; gpuvet
 * fails and warns at the same counts. */
#define RETIRED_PAGES_MAX 64u
#define RETIRED_PAGES_FAIL 63u

#define MW_TO_W(mw) ((mw) / 1000u)

static const char lost_remedy[] =
        "The GPU stopped answering on PCIe (Xid 79). Drain the node, look for Xid 79 and PCIe AER errors "
        "in `dmesg`, then power-cycle it (a warm reboot often does not bring the GPU back); if it happens "
        "again, reseat the GPU or have it replaced.";
static const char timeout_remedy[] =
        "An NVML call that never returns means a wedged GPU or driver: look for Xid errors in `dmesg | grep "
        "-E 'NVRM|Xid'`, then reset the GPU (`nvidia-smi -r -i <index>`, with no process using it) or "
        "reboot. gpuvet abandoned the call and exited once its report was written.";

/* ---- helpers ---------------------------------------------------------------------- */

/* The sysfs GPU (index into f->gpus) at NVML GPU g's address, or -1. */
static long sysfs_gpu_of(const struct facts *f, const struct nvml_gpu *g) {
        if (!nv_ok(g->pci_bus_id))
                return -1;
        for (size_t i = 0; i < f->gpus.n; i++)
                if (strcasecmp(gpu_pci(f, i)->addr, g->pci_bus_id.v) == 0)
                        return (long)i;
        return -1;
}

static bool nvml_sees(const struct facts *f, const char *addr) {
        return nvml_gpu_at(f, addr) != NULL;
}

/* The address of a GPU whose PCI address NVML cannot read (a GPU fallen off the bus answers
 * GPU_IS_LOST even there): when exactly one NVML GPU lacks its address and exactly one GPU
 * bound to nvidia on the PCI bus is missing from NVML, they are the same GPU. NULL when
 * that does not hold. */
static const char *inferred_addr(const struct facts *f) {
        unsigned int unknown = 0;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++)
                if (!nv_ok(f->nvml.gpus[i].pci_bus_id))
                        unknown++;
        if (unknown != 1)
                return NULL;
        const char *missing = NULL;
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct pci_dev *d = gpu_pci(f, i);
                if (strcmp(d->driver, "nvidia") != 0 || nvml_sees(f, d->addr))
                        continue;
                if (missing)
                        return NULL;
                missing = d->addr;
        }
        return missing;
}

/* The subject of a GPU's result: its PCI address as sysfs writes it (inferred when NVML
 * cannot read it, see inferred_addr), else "nvml:<index>". */
static const char *nv_subject(const struct facts *f, const struct nvml_gpu *g, char *buf, size_t size) {
        const char *addr = NULL;
        if (nv_ok(g->pci_bus_id) && g->pci_bus_id.v[0])
                addr = g->pci_bus_id.v;
        else if (f)
                addr = inferred_addr(f);
        if (addr)
                snprintf(buf, size, "%s", addr);
        else
                snprintf(buf, size, "nvml:%u", g->index);
        return buf;
}

/* gpuvet's table entry for g: by its PCI id from NVML, else that of the sysfs device at
 * its address. NULL when unknown. */
static const struct gpu_model *nv_model(const struct facts *f, const struct nvml_gpu *g) {
        const struct gpu_model *m = NULL;
        if (f->db && nv_ok(g->pci_device_id))
                m = gpudb_find_subsystem(f->db, g->pci_device_id.v & 0xffffu, g->pci_device_id.v >> 16,
                                         nv_ok(g->pci_subsystem_id) ? g->pci_subsystem_id.v >> 16 : 0);
        if (!m) {
                long i = sysfs_gpu_of(f, g);
                const char *addr = i < 0 && !nv_ok(g->pci_bus_id) ? inferred_addr(f) : NULL;
                for (size_t k = 0; addr && k < f->gpus.n && i < 0; k++)
                        if (strcmp(gpu_pci(f, k)->addr, addr) == 0)
                                i = (long)k;
                if (i >= 0)
                        m = f->gpus.gpus[i].model;
        }
        return m;
}

/* "NVIDIA H100 80GB HBM3 0000:1b:00.0" for summaries. */
static const char *nv_describe(const struct facts *f, const struct nvml_gpu *g, char *buf, size_t size) {
        char subject[NV_STR_MAX];
        nv_subject(f, g, subject, sizeof(subject));
        if (nv_ok(g->name) && g->name.v[0])
                snprintf(buf, size, "%s %s", g->name.v, subject);
        else
                snprintf(buf, size, "GPU %s", subject);
        return buf;
}

#define NV_DESC_MAX (2 * NV_STR_MAX + 8)

/* A result about NVML GPU g, its subject set; desc (NV_DESC_MAX bytes) gets the GPU's
 * description for summaries. */
static struct result *nv_result(const struct check_info *self, const struct facts *f, struct report *rep,
                                const struct nvml_gpu *g, char *desc) {
        char subject[NV_STR_MAX];
        struct result *r = result_new(rep, self, nv_subject(f, g, subject, sizeof(subject)));
        nv_describe(f, g, desc, NV_DESC_MAX);
        return r;
}

/* The function whose GPU_IS_LOST answer shows that g has fallen off the bus, or NULL. The
 * readings every collection makes, in the order it makes them. */
static const char *lost_by(const struct nvml_gpu *g) {
#define LOST(x)                                                              \
        if ((x).state == NV_ERROR && (x).rc == NVML_ERROR_GPU_IS_LOST)       \
                return (x).fn ? (x).fn : "NVML"
        LOST(g->name);
        LOST(g->uuid);
        LOST(g->pci_bus_id);
        LOST(g->mem_total_bytes);
        LOST(g->temp_c);
        LOST(g->power_mw);
        LOST(g->persistence_mode);
        LOST(g->ecc_mode_current);
        LOST(g->ecc_volatile_uncorrected);
        LOST(g->remap_pending);
        LOST(g->clocks_event_reasons);
        LOST(g->mig_mode_current);
#undef LOST
        return NULL;
}

/* The deadline g's hung call ran past: the GPU's budget or the per-call deadline. Reported
 * instead of the measured time, which a loaded machine stretches by a few ms. */
static unsigned int deadline_of(const struct facts *f, const struct nvml_gpu *g) {
        const struct nvml_facts *n = &f->nvml;
        bool budget = false;
        for (unsigned int i = 0; i < n->n_timeouts; i++)
                if (n->timeouts[i].gpu == (int)g->index)
                        budget = n->timeouts[i].budget;
        unsigned int call = n->dl.call_ms ? n->dl.call_ms : NVML_DEADLINE_CALL_MS_DEFAULT;
        unsigned int gpu = n->dl.gpu_ms ? n->dl.gpu_ms : NVML_DEADLINE_GPU_MS_DEFAULT;
        return budget ? gpu : call;
}

/* Judge a reading that holds no value into r (status, summary, observed, remedy, the
 * "source" evidence). Returns true when it did, so the caller stops judging this GPU;
 * false for NV_OK. what names the fact in the summary ("ECC mode"). */
static bool reading_unusable(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *what,
                             unsigned char state, int rc, const char *fn) {
        if (state == NV_OK)
                return false;
        char desc[2 * NV_STR_MAX + 8];
        nv_describe(f, g, desc, sizeof(desc));
        const char *func = fn ? fn : "NVML";
        result_evidence(r, "source", "%s", func);
        switch (state) {
        case NV_TIMEOUT:
                result_observed(r, "unknown: %s did not return", func);
                result_evidence(r, "nvml_return", "timeout after %u ms", g->timeout_ms);
                result_status(r, STATUS_ERROR, "%s did not return within %u ms on %s: %s unknown", func,
                              deadline_of(f, g), desc, what);
                result_remedy(r, "%s", timeout_remedy);
                return true;
        case NV_NO_FUNCTION:
                result_observed(r, "unknown: libnvidia-ml has no %s", func);
                result_evidence(r, "nvml_return", "%s", nvml_return_name(NVML_ERROR_FUNCTION_NOT_FOUND));
                result_status(r, STATUS_SKIP, "%s: not supported on this GPU/driver (libnvidia-ml lacks %s)", what,
                              func);
                return true;
        case NV_UNREAD:
                result_observed(r, "not read");
                result_status(r, STATUS_SKIP, "%s of %s was not read", what, desc);
                return true;
        default:
                break;
        }
        const char *name = nvml_return_name((nvmlReturn_t)rc);
        result_evidence(r, "nvml_return", "%s", name);
        result_observed(r, "unknown: %s returned %s", func, name);
        switch (rc) {
        case NVML_ERROR_NOT_SUPPORTED:
                result_status(r, STATUS_SKIP, "%s: not supported on this GPU/driver (%s)", what, func);
                break;
        case NVML_ERROR_GPU_IS_LOST:
                /* One cause, one failure: gpu.nvml fails for a GPU lost_by() finds and names
                 * it; the other checks of that GPU say why they could not judge. A lone
                 * GPU_IS_LOST that gpu.nvml does not see stays a failure here. */
                /* gpu.nvml names a lost GPU by its address, and fails for one whose address
                 * was lost too (it is then missing from NVML). */
                if (lost_by(g) && (nv_ok(g->pci_bus_id) || (g->pci_bus_id.state == NV_ERROR &&
                                                              g->pci_bus_id.rc == NVML_ERROR_GPU_IS_LOST))) {
                        result_status(r, STATUS_SKIP,
                                      "GPU lost: %s has fallen off the bus (%s returned %s; see gpu.nvml)", desc, func,
                                      name);
                        break;
                }
                result_status(r, STATUS_FAIL, "%s has fallen off the bus (%s returned %s)", desc, func, name);
                result_remedy(r, "%s", lost_remedy);
                break;
        case NVML_ERROR_NO_PERMISSION:
                result_status(r, STATUS_ERROR, "%s of %s: %s refused (%s)", what, desc, func, name);
                result_remedy(r, "Run gpuvet as root: NVML reads some facts only with CAP_SYS_ADMIN.");
                break;
        default:
                result_status(r, STATUS_ERROR, "%s of %s: %s failed with %s", what, desc, func, name);
                result_remedy(r, "Look for Xid errors in `dmesg | grep -E 'NVRM|Xid'` and compare with "
                                 "`nvidia-smi -q -i %u`; reset the GPU if NVML keeps failing.",
                              g->index);
                break;
        }
        return true;
}

/* A reading that is simply not there: the function or the feature is missing (an older
 * driver or GPU, a driver wanting another struct version), or it was not read. Checks
 * that can judge without it fall back; other failures are reported. Unlike
 * not_supported() (below), INVALID_ARGUMENT is a failure here: only the NVLink walk past a
 * board's last link meets it as "no such thing". */
static bool reading_absent(unsigned char state, int rc) {
        return state == NV_UNREAD || state == NV_NO_FUNCTION ||
               (state == NV_ERROR && (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH));
}

#define UNUSABLE(r, f, g, what, reading) \
        reading_unusable((r), (f), (g), (what), (reading).state, (reading).rc, (reading).fn)

/* Why the per-GPU NVML checks cannot judge anything, as one host result; false when
 * they can. */
static bool nvml_unavailable(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct nvml_facts *n = &f->nvml;
        const char *why = NULL;
        char buf[640];
        if (f->gpus.n == 0 && n->n_gpus == 0)
                why = check_no_gpu_reason(f);
        else if (f->gpus.n > 0 && check_count_host_gpus(f) == 0 && n->n_gpus == 0)
                why = "every GPU is bound to vfio-pci for passthrough: NVML on this host does not see them";
        else if (n->init_state == NVML_INIT_NOT_TRIED) {
                snprintf(buf, sizeof(buf), "NVML not asked: %s", f->nvml_note[0] ? f->nvml_note : "not tried");
                why = buf;
        } else if (n->init_state != NVML_INIT_OK) {
                snprintf(buf, sizeof(buf), "NVML unavailable (%s): gpu.nvml says why",
                         nvml_init_state_name(n->init_state));
                why = buf;
        } else if (n->n_gpus == 0) {
                why = "NVML sees no GPU: gpu.nvml says why";
        }
        if (!why)
                return false;
        struct result *r = result_new(rep, self, "host");
        result_status(r, STATUS_SKIP, "%s", why);
        return true;
}

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

static size_t count_bound(const struct facts *f, const char *driver) {
        size_t k = 0;
        for (size_t i = 0; i < f->gpus.n; i++)
                if (strcmp(gpu_pci(f, i)->driver, driver) == 0)
                        k++;
        return k;
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
                result_observed(r, "nvmlInit_v2: NVML_ERROR_DRIVER_NOT_LOADED");
                result_evidence(r, "source", "nvmlInit_v2");
                result_status(r, STATUS_FAIL, "NVML cannot reach the driver: the nvidia kernel module is not loaded");
                result_remedy(r, "Load it with `modprobe nvidia`; `dmesg | grep -i nvrm` shows why it refused to "
                                 "load (no module for this kernel: reinstall the driver or its DKMS package).");
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
                result_observed(r, "nvmlInit_v2: NVML_ERROR_NO_PERMISSION");
                result_evidence(r, "source", "nvmlInit_v2");
                result_status(r, STATUS_FAIL, "NVML may not open the GPU device files (/dev/nvidiactl, /dev/nvidia*)");
                result_remedy(r, "Check `ls -l /dev/nvidia*` (the driver's NVreg_DeviceFileMode/GID options set "
                                 "them); in a container, pass the devices with the NVIDIA Container Toolkit.");
                return;
        case NVML_INIT_TIMEOUT: {
                unsigned int ms = 0;
                for (unsigned int i = 0; i < n->n_timeouts; i++)
                        if (n->timeouts[i].gpu < 0)
                                ms = n->timeouts[i].elapsed_ms;
                result_observed(r, "nvmlInit_v2 did not return");
                result_evidence(r, "source", "nvmlInit_v2");
                result_status(r, STATUS_ERROR, "nvmlInit_v2 did not return within %u ms", ms);
                result_remedy(r, "%s", timeout_remedy);
                return;
        }
        default: {
                const char *name = nvml_return_name((nvmlReturn_t)n->init_rc);
                result_observed(r, "nvmlInit_v2: %s", name);
                result_evidence(r, "source", "nvmlInit_v2");
                result_status(r, STATUS_FAIL, "NVML failed to initialise: nvmlInit_v2 returned %s", name);
                result_remedy(r, "Compare with `nvidia-smi`; look for NVRM messages in `dmesg`.");
                return;
        }
        }
}

/* NVML initialised but could not count its GPUs: no GPU can be read, so every per-GPU
 * check skips ("NVML sees no GPU"), and this result must not let the node pass. Unlike a
 * per-GPU reading (reading_unusable), NOT_SUPPORTED is no reason to skip here: the count
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
                result_remedy(r, "%s", timeout_remedy);
                return;
        }
        const char *name = c->state == NV_NO_FUNCTION ? nvml_return_name(NVML_ERROR_FUNCTION_NOT_FOUND)
                                                      : nvml_return_name((nvmlReturn_t)c->rc);
        result_evidence(r, "nvml_return", "%s", name);
        result_observed(r, "unknown: %s returned %s", func, name);
        if (c->state == NV_ERROR && c->rc == NVML_ERROR_GPU_IS_LOST) {
                result_status(r, STATUS_FAIL, "NVML cannot count the GPUs: %s returned %s (a GPU has fallen off the "
                                              "bus)", func, name);
                result_remedy(r, "%s", lost_remedy);
                return;
        }
        result_status(r, STATUS_ERROR, "NVML cannot count the GPUs: %s returned %s", func, name);
        result_remedy(r, "Compare with `nvidia-smi -L`; look for NVRM and Xid messages in `dmesg`.");
}

static void run_nvml(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (check_skip_without_gpus(self, f, rep))
                return;
        const struct nvml_facts *n = &f->nvml;
        size_t bound = count_bound(f, "nvidia");
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
                if (strcmp(d->driver, "nvidia") != 0 || nvml_sees(f, d->addr))
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
                                                                 : nvml_return_name((nvmlReturn_t)g->pci_bus_id.rc));
                n_unknown++;
        }
        if (n_unknown)
                result_evidence(r, "unidentified", "%s", unknown);
        /* GPUs NVML lists with their address but which answer GPU_IS_LOST. */
        char lost[512] = "";
        size_t n_lost = 0;
        for (unsigned int i = 0; i < n->n_gpus; i++) {
                const struct nvml_gpu *g = &n->gpus[i];
                const char *fn = lost_by(g);
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
                result_remedy(r, "%s", lost_remedy);
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

/* ---- gpu.driver_compat ------------------------------------------------------------- */

static void run_driver_compat(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (nvml_unavailable(self, f, rep))
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

/* ---- gpu.persistence_mode ----------------------------------------------------------- */

static void run_persistence_mode(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (nvml_unavailable(self, f, rep))
                return;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                char subject[NV_STR_MAX];
                struct result *r = result_new(rep, self, nv_subject(f, g, subject, sizeof(subject)));
                result_expected(r, "persistence mode enabled (or nvidia-persistenced running)");
                if (UNUSABLE(r, f, g, "persistence mode", g->persistence_mode))
                        continue;
                result_evidence(r, "source", "nvmlDeviceGetPersistenceMode");
                if (g->persistence_mode.v == NVML_FEATURE_ENABLED) {
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

static bool not_supported(unsigned char state, int rc);

/* A reading the GPU or driver does not support: skip, saying so (why: "" or " (...)"). */
static bool skip_unsupported(struct result *r, unsigned char state, int rc, const char *fn, const char *what,
                             const char *desc, const char *why) {
        if (!not_supported(state, rc))
                return false;
        result_evidence(r, "source", "%s", fn);
        result_observed(r, "not supported");
        result_status(r, STATUS_SKIP, "%s not supported on %s%s", what, desc, why);
        return true;
}

/* ---- gpu.inforom --------------------------------------------------------------------- */

/* How many GPUs of g's model (by PCI device id) on the node report this firmware
 * version, and how many report one at all; the most common version is the node's. */
static void firmware_peers(const struct facts *f, const struct nvml_gpu *g, size_t field_offset, unsigned int *ret_same,
                           unsigned int *ret_peers, const char **ret_common) {
        const struct nv_str *mine = (const struct nv_str *)((const char *)g + field_offset);
        unsigned int same = 0, peers = 0, best = 0;
        *ret_common = NULL;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *o = &f->nvml.gpus[i];
                const struct nv_str *v = (const struct nv_str *)((const char *)o + field_offset);
                if (!nv_ok(o->pci_device_id) || !nv_ok(g->pci_device_id) || o->pci_device_id.v != g->pci_device_id.v ||
                    !nv_ok(*v))
                        continue;
                peers++;
                same += strcmp(v->v, mine->v) == 0;
                unsigned int count = 0;
                for (unsigned int k = 0; k < f->nvml.n_gpus; k++) {
                        const struct nvml_gpu *q = &f->nvml.gpus[k];
                        const struct nv_str *w = (const struct nv_str *)((const char *)q + field_offset);
                        count += nv_ok(q->pci_device_id) && q->pci_device_id.v == g->pci_device_id.v && nv_ok(*w) &&
                                 strcmp(w->v, v->v) == 0;
                }
                if (count > best) {
                        best = count;
                        *ret_common = v->v;
                }
        }
        *ret_same = same;
        *ret_peers = peers;
}

static void run_inforom(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (nvml_unavailable(self, f, rep))
                return;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                char desc[NV_DESC_MAX];
                struct result *r = nv_result(self, f, rep, g, desc);
                result_expected(r, "InfoROM checksum valid; VBIOS and InfoROM image as on the node's other GPUs of "
                                   "the model");
                const struct nv_u32 *valid = &g->inforom_valid;
                if (valid->state == NV_ERROR && valid->rc == NVML_ERROR_CORRUPTED_INFOROM) {
                        result_evidence(r, "source", "nvmlDeviceValidateInforom");
                        result_evidence(r, "nvml_return", "%s", nvml_return_name(NVML_ERROR_CORRUPTED_INFOROM));
                        result_observed(r, "InfoROM corrupted");
                        result_status(r, STATUS_FAIL,
                                      "the InfoROM of %s is corrupted (its checksum fails): ECC counts, retired pages "
                                      "and remapped rows are kept there",
                                      desc);
                        result_remedy(r, "`nvidia-smi -q` exits 14 on such a board. Drain the node and contact "
                                         "NVIDIA or the system vendor: the InfoROM is reflashed in service, or the "
                                         "board replaced.");
                        continue;
                }
                if (skip_unsupported(r, valid->state, valid->rc, "nvmlDeviceValidateInforom", "InfoROM validation", desc,
                                     ""))
                        continue;
                if (UNUSABLE(r, f, g, "InfoROM validity", *valid))
                        continue;
                result_evidence(r, "source", "nvmlDeviceValidateInforom, nvmlDeviceGetVbiosVersion, "
                                             "nvmlDeviceGetInforomImageVersion");
                const struct {
                        const char *what;
                        size_t offset;
                } firmware[] = {
                        {"VBIOS", offsetof(struct nvml_gpu, vbios)},
                        {"InfoROM image", offsetof(struct nvml_gpu, inforom_image)},
                };
                /* A version NVML failed to read (the GPU lost, a hung call) is reported like
                 * any reading; one the board does not give is left out. */
                bool unusable = false;
                for (size_t k = 0; k < sizeof(firmware) / sizeof(firmware[0]) && !unusable; k++) {
                        const struct nv_str *v = (const struct nv_str *)((const char *)g + firmware[k].offset);
                        if (!nv_ok(*v) && !not_supported(v->state, v->rc))
                                unusable = UNUSABLE(r, f, g, firmware[k].what, *v);
                }
                if (unusable)
                        continue;
                char observed[256] = "InfoROM valid", odd[384] = "";
                for (size_t k = 0; k < sizeof(firmware) / sizeof(firmware[0]); k++) {
                        const struct nv_str *v = (const struct nv_str *)((const char *)g + firmware[k].offset);
                        if (!nv_ok(*v))
                                continue;
                        strbuf_appendf(observed, sizeof(observed), "; %s %s", firmware[k].what, v->v);
                        unsigned int same, peers;
                        const char *common;
                        firmware_peers(f, g, firmware[k].offset, &same, &peers, &common);
                        /* One board differing from its siblings is the odd one out; with no
                         * majority (2 GPUs, 2 versions) both are reported. */
                        if (peers > 1 && same < peers && common && (strcmp(common, v->v) != 0 || same * 2 <= peers))
                                strbuf_appendf(odd, sizeof(odd), "%s%s %s, while %u of the node's %u GPUs of this model "
                                                                 "run %s",
                                               odd[0] ? "; " : "", firmware[k].what, v->v, peers - same, peers,
                                               strcmp(common, v->v) != 0 ? common : "another");
                }
                result_observed(r, "%s", observed);
                if (odd[0]) {
                        result_status(r, STATUS_WARN, "%s: firmware differs from its siblings (%s)", desc, odd);
                        result_remedy(r, "Bring every GPU of the node to the same firmware with the system vendor's "
                                         "firmware bundle (or NVIDIA's nvfwupd on HGX/DGX): mixed VBIOS versions "
                                         "behave differently under load and complicate support cases.");
                } else {
                        result_status(r, STATUS_PASS, "InfoROM of %s valid, firmware as on its siblings", desc);
                }
        }
}

/* ---- gpu.graphics_processes ---------------------------------------------------------- */

static void run_graphics_processes(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (nvml_unavailable(self, f, rep))
                return;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                char desc[NV_DESC_MAX];
                struct result *r = nv_result(self, f, rep, g, desc);
                const struct gpu_model *m = nv_model(f, g);
                bool compute_gpu = !m || m->datacenter;
                result_expected(r, compute_gpu ? "no graphics process on a compute GPU" : "any (a workstation GPU)");
                const struct nvml_procs *p = &g->graphics_procs;
                if (skip_unsupported(r, p->state, p->rc, "nvmlDeviceGetGraphicsRunningProcesses_v3",
                                     "graphics process list", desc, ""))
                        continue;
                if (reading_unusable(r, f, g, "graphics processes", p->state, p->rc, p->fn))
                        continue;
                result_evidence(r, "source", "nvmlDeviceGetGraphicsRunningProcesses_v3");
                if (p->count == 0) {
                        result_observed(r, "none");
                        result_status(r, STATUS_PASS, "no graphics process on %s", desc);
                        continue;
                }
                char pids[256] = "", pid_arg[256] = "";
                for (unsigned int k = 0; k < p->count && p->v; k++) {
                        strbuf_appendf(pids, sizeof(pids), "%s%u", pids[0] ? ", " : "", p->v[k].pid);
                        strbuf_appendf(pid_arg, sizeof(pid_arg), "%s%u", pid_arg[0] ? "," : "", p->v[k].pid);
                }
                result_observed(r, "%u graphics process%s (pid %s)", p->count, p->count == 1 ? "" : "es", pids);
                if (!compute_gpu) {
                        result_status(r, STATUS_PASS, "%u graphics process%s on %s, a workstation GPU that may drive "
                                                      "a display",
                                      p->count, p->count == 1 ? "" : "es", desc);
                        continue;
                }
                result_status(r, STATUS_WARN,
                              "%u graphics process%s (pid %s) on %s: a display server or desktop on a compute GPU "
                              "takes memory and time slices from jobs",
                              p->count, p->count == 1 ? "" : "es", pids, desc);
                result_remedy(r, "See what they are (`ps -o pid,comm -p %s`); stop the display manager and boot to "
                                 "text (`systemctl set-default multi-user.target`), or drive the console from the "
                                 "BMC's VGA device instead.",
                              pid_arg);
        }
}

/* ---- gpu.recovery_action -------------------------------------------------------------- */

/* The driver's own verdict on the GPU (R565+): what it takes to make the GPU usable
 * again. The values and remedies are xid.json's recovery_actions, shared with Xid 154. */
static void run_recovery_action(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (nvml_unavailable(self, f, rep))
                return;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                char desc[NV_DESC_MAX];
                struct result *r = nv_result(self, f, rep, g, desc);
                result_expected(r, "recovery action 0x0 (None)");
                const struct nv_u32 *a = &g->recovery_action;
                if (skip_unsupported(r, a->state, a->rc, "nvmlDeviceGetFieldValues", "the GPU recovery action field",
                                     desc, " (drivers before R565 do not report it)"))
                        continue;
                if (UNUSABLE(r, f, g, "recovery action", *a))
                        continue;
                result_evidence(r, "source", "nvmlDeviceGetFieldValues (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION)");
                const struct xid_recovery_action *known = f->db ? xiddb_find_recovery(&f->db->xids, a->v) : NULL;
                result_observed(r, "0x%x (%s)", a->v, known ? known->name : "unknown to gpuvet");
                if (a->v == 0) {
                        result_status(r, STATUS_PASS, "the driver asks for no recovery of %s", desc);
                        continue;
                }
                if (!known) {
                        result_status(r, STATUS_WARN, "the driver asks for recovery action 0x%x on %s, a value gpuvet "
                                                      "does not know",
                                      a->v, desc);
                        result_remedy(r, "See `nvidia-smi -q -i %u` (GPU Recovery Action) and NVIDIA's documentation "
                                         "for the driver in use.",
                                      g->index);
                        continue;
                }
                result_status(r, known->severity == XID_CRITICAL ? STATUS_FAIL : STATUS_WARN,
                              "the driver asks for \"%s\" on %s before new work", known->name, desc);
                result_remedy(r, "%s.", known->action);
        }
}

/* ---- gpu.row_remapper ---------------------------------------------------------------- */

static void run_row_remapper(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (nvml_unavailable(self, f, rep))
                return;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                char desc[NV_DESC_MAX];
                struct result *r = nv_result(self, f, rep, g, desc);
                result_expected(r, "every memory bank has spare rows left for remapping");
                const struct nv_u32 *h = g->remap_hist;
                if (skip_unsupported(r, h[0].state, h[0].rc, "nvmlDeviceGetRowRemapperHistogram", "row-remapper histogram",
                                     desc, " (GPUs before Ampere retire pages instead)"))
                        continue;
                if (UNUSABLE(r, f, g, "row remapper histogram", h[0]))
                        continue;
                result_evidence(r, "source", "nvmlDeviceGetRowRemapperHistogram");
                result_observed(r, "banks by spare rows left: max %u, high %u, partial %u, low %u, none %u", h[0].v,
                                h[1].v, h[2].v, h[3].v, h[4].v);
                if (h[4].v > 0) {
                        result_status(r, STATUS_FAIL,
                                      "%u memory bank%s of %s %s no spare row left: the next uncorrectable error "
                                      "there cannot be remapped",
                                      h[4].v, h[4].v == 1 ? "" : "s", desc, h[4].v == 1 ? "has" : "have");
                        result_remedy(r, "Drain the node and open an RMA with NVIDIA or the system vendor now, "
                                         "before a remap fails (Xid 64) and the GPU must be taken out in a hurry.");
                } else if (h[3].v > 0) {
                        result_status(r, STATUS_WARN, "%u memory bank%s of %s %s few spare rows left", h[3].v,
                                      h[3].v == 1 ? "" : "s", desc, h[3].v == 1 ? "has" : "have");
                        result_remedy(r, "Watch gpu.ecc_errors and gpu.memory_health; plan the board's replacement "
                                         "if remapped rows keep growing.");
                } else {
                        result_status(r, STATUS_PASS, "every memory bank of %s has spare rows", desc);
                }
        }
}

/* ---- gpu.ecc_mode -------------------------------------------------------------------- */

static const char *on_off(unsigned int v) { return v == NVML_FEATURE_ENABLED ? "enabled" : "disabled"; }

static void run_ecc_mode(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (nvml_unavailable(self, f, rep))
                return;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                char desc[NV_DESC_MAX];
                struct result *r = nv_result(self, f, rep, g, desc);
                const struct gpu_model *m = nv_model(f, g);
                /* The board's factory setting where the driver gives it, else our table. */
                bool have_default = nv_ok(g->ecc_mode_default);
                bool datacenter = have_default ? g->ecc_mode_default.v == NVML_FEATURE_ENABLED : m && m->datacenter;
                if (have_default)
                        result_expected(r, datacenter ? "ECC enabled (the board ships with it on)"
                                                      : "ECC as configured (the board ships with it off)");
                else
                        result_expected(r, datacenter ? "ECC enabled (a datacenter GPU)"
                                                      : "ECC as configured (optional on this GPU)");
                if (UNUSABLE(r, f, g, "ECC mode", g->ecc_mode_current))
                        continue;
                if (!reading_absent(g->ecc_mode_default.state, g->ecc_mode_default.rc) &&
                    UNUSABLE(r, f, g, "default ECC mode", g->ecc_mode_default))
                        continue;
                result_evidence(r, "source", "%s", have_default ? "nvmlDeviceGetEccMode, nvmlDeviceGetDefaultEccMode"
                                                                : "nvmlDeviceGetEccMode");
                if (have_default)
                        result_evidence(r, "default_mode", "%s", on_off(g->ecc_mode_default.v));
                bool cur = g->ecc_mode_current.v == NVML_FEATURE_ENABLED;
                bool have_pending = nv_ok(g->ecc_mode_pending);
                bool pend = have_pending ? g->ecc_mode_pending.v == NVML_FEATURE_ENABLED : cur;
                if (have_pending && pend != cur)
                        result_observed(r, "%s, %s pending", on_off(g->ecc_mode_current.v),
                                        on_off(g->ecc_mode_pending.v));
                else
                        result_observed(r, "%s", on_off(g->ecc_mode_current.v));
                if (pend != cur) {
                        result_status(r, STATUS_WARN, "ECC is %s but %s is pending: reboot or reset the GPU to apply",
                                      on_off(g->ecc_mode_current.v), on_off(g->ecc_mode_pending.v));
                        result_remedy(r, "Reset the GPU with no process using it (`nvidia-smi -r -i %u`) or reboot.",
                                      g->index);
                        continue;
                }
                if (cur) {
                        result_status(r, STATUS_PASS, "ECC is enabled");
                        continue;
                }
                if (!datacenter) {
                        if (have_default)
                                result_status(r, STATUS_PASS, "ECC is disabled, as %s ships", desc);
                        else
                                result_status(r, STATUS_PASS, "ECC is disabled (%s: optional on this GPU)", desc);
                        continue;
                }
                result_status(r, STATUS_FAIL,
                              "ECC is disabled on %s: memory errors go undetected and corrupt results silently", desc);
                result_remedy(r, "Enable it with `nvidia-smi -i %u -e 1`, then reset the GPU (`nvidia-smi -r -i %u`) "
                                 "or reboot.",
                              g->index, g->index);
        }
}

/* ---- gpu.ecc_errors ------------------------------------------------------------------ */

/* ", DRAM 2, SRAM 1" from the per-location counts, "" when the driver gives neither. */
static void where_text(const struct nv_u64 *dram, const struct nv_u64 *sram, char *buf, size_t size) {
        buf[0] = '\0';
        if (nv_ok(*dram))
                strbuf_appendf(buf, size, ", DRAM %llu", dram->v);
        if (nv_ok(*sram))
                strbuf_appendf(buf, size, ", SRAM %llu", sram->v);
}

static void run_ecc_errors(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (nvml_unavailable(self, f, rep))
                return;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                char desc[NV_DESC_MAX];
                struct result *r = nv_result(self, f, rep, g, desc);
                unsigned long long corrected_warn = check_thresholds(f)->ecc_corrected_warn;
                result_expected(r, "0 uncorrected and < %llu corrected volatile ECC errors", corrected_warn);
                if (nv_ok(g->ecc_mode_current) && g->ecc_mode_current.v != NVML_FEATURE_ENABLED) {
                        result_observed(r, "ECC disabled");
                        result_evidence(r, "source", "nvmlDeviceGetEccMode");
                        result_status(r, STATUS_SKIP, "ECC is disabled on %s: no error counters (gpu.ecc_mode)", desc);
                        continue;
                }
                if (UNUSABLE(r, f, g, "volatile uncorrected ECC errors", g->ecc_volatile_uncorrected) ||
                    UNUSABLE(r, f, g, "volatile corrected ECC errors", g->ecc_volatile_corrected))
                        continue;
                unsigned long long unc = g->ecc_volatile_uncorrected.v, cor = g->ecc_volatile_corrected.v;
                result_evidence(r, "source", "nvmlDeviceGetTotalEccErrors");
                result_observed(r, "volatile: %llu uncorrected, %llu corrected", unc, cor);
                if (nv_ok(g->ecc_aggregate_uncorrected) && nv_ok(g->ecc_aggregate_corrected))
                        result_evidence(r, "aggregate", "%llu uncorrected, %llu corrected (lifetime)",
                                        g->ecc_aggregate_uncorrected.v, g->ecc_aggregate_corrected.v);
                /* The optional readings below: a GPU lost or a call hung while reading them is
                 * reported like any other reading; only "not supported" is left out. */
                const struct nv_u64 *split[] = {&g->ecc_volatile_uncorrected_dram, &g->ecc_volatile_uncorrected_sram,
                                                &g->ecc_aggregate_uncorrected_dram, &g->ecc_aggregate_uncorrected_sram};
                bool unusable = false;
                for (size_t k = 0; k < sizeof(split) / sizeof(split[0]) && !unusable; k++)
                        if (!nv_ok(*split[k]) && split[k]->state != NV_UNREAD && !not_supported(split[k]->state, split[k]->rc))
                                unusable = UNUSABLE(r, f, g, "ECC errors by location", *split[k]);
                if (!unusable && !nv_ok(g->sram_threshold_exceeded) && g->sram_threshold_exceeded.state != NV_UNREAD &&
                    !not_supported(g->sram_threshold_exceeded.state, g->sram_threshold_exceeded.rc) &&
                    g->sram_threshold_exceeded.rc != NVML_ERROR_NO_PERMISSION)
                        unusable = UNUSABLE(r, f, g, "SRAM ECC error status", g->sram_threshold_exceeded);
                if (unusable)
                        continue;
                /* Where they happened, when the driver tells (Turing+): DRAM errors are
                 * repaired by row remapping, SRAM ones (caches, register files) are not. */
                char vol_where[96] = "", agg_where[96] = "";
                where_text(&g->ecc_volatile_uncorrected_dram, &g->ecc_volatile_uncorrected_sram, vol_where,
                           sizeof(vol_where));
                where_text(&g->ecc_aggregate_uncorrected_dram, &g->ecc_aggregate_uncorrected_sram, agg_where,
                           sizeof(agg_where));
                if (vol_where[0])
                        result_evidence(r, "volatile_uncorrected", "%s", vol_where + 2);
                if (agg_where[0])
                        result_evidence(r, "aggregate_uncorrected", "%s", agg_where + 2);
                bool sram_over = nv_ok(g->sram_threshold_exceeded) && g->sram_threshold_exceeded.v;
                if (nv_ok(g->sram_threshold_exceeded))
                        result_evidence(r, "sram_threshold_exceeded", "%s (nvmlDeviceGetSramEccErrorStatus)",
                                        sram_over ? "yes" : "no");
                if (sram_over) {
                        result_status(r, STATUS_FAIL, "SRAM uncorrectable errors on %s passed NVIDIA's field "
                                                      "threshold (\"SRAM Threshold Exceeded\")",
                                      desc);
                        result_remedy(r, "Take the GPU out of service and have it replaced (RMA): SRAM errors are not "
                                         "repaired by row remapping, and the board has passed the count NVIDIA's field "
                                         "diagnostic allows (`nvidia-smi -q -d ECC -i %u`).",
                                      g->index);
                        continue;
                }
                if (unc > 0) {
                        bool sram = nv_ok(g->ecc_volatile_uncorrected_sram) && g->ecc_volatile_uncorrected_sram.v > 0;
                        result_status(r, STATUS_FAIL, "%llu uncorrectable ECC error%s since the driver loaded on %s%s%s%s",
                                      unc, unc == 1 ? "" : "s", desc, vol_where[0] ? " (" : "",
                                      vol_where[0] ? vol_where + 2 : "", vol_where[0] ? ")" : "");
                        if (sram)
                                result_remedy(r, "Drain the GPU and reset it (`nvidia-smi -r -i %u`, or reboot): an "
                                                 "uncorrectable SRAM error (Xid 94/95) leaves the GPU unusable until "
                                                 "reset and is not repaired by row remapping. If SRAM errors recur, or "
                                                 "`nvidia-smi -q -d ECC` shows \"SRAM Threshold Exceeded: Yes\", have "
                                                 "the GPU replaced.",
                                              g->index);
                        else
                                result_remedy(r, "Drain the GPU; look for Xid 48/63/64/94/95 in `dmesg`; check "
                                                 "gpu.memory_health for a pending row remap or page retirement and reset "
                                                 "the GPU (`nvidia-smi -r -i %u`) to apply it. If uncorrectable errors "
                                                 "recur, have the GPU replaced.",
                                              g->index);
                        continue;
                }
                /* Lifetime counts survive resets: uncorrectable errors there with a clean volatile
                 * count mean the GPU failed before and was put back to work. */
                unsigned long long agg_unc = nv_ok(g->ecc_aggregate_uncorrected) ? g->ecc_aggregate_uncorrected.v : 0;
                if (agg_unc > 0) {
                        result_status(r, STATUS_WARN,
                                      "%llu uncorrectable ECC error%s in the lifetime of %s (%s%snone since the driver "
                                      "loaded)",
                                      agg_unc, agg_unc == 1 ? "" : "s", desc, agg_where[0] ? agg_where + 2 : "",
                                      agg_where[0] ? "; " : "");
                        result_remedy(r, "Check that the errors were serviced: gpu.memory_health shows the rows remapped "
                                         "or pages retired for them; `nvidia-smi -q -d ECC,ROW_REMAPPER -i %u` shows "
                                         "whether they are DRAM or SRAM. If uncorrectable errors keep accruing, have the "
                                         "GPU replaced.",
                                      g->index);
                        continue;
                }
                if (cor >= corrected_warn) {
                        result_status(r, STATUS_WARN, "%llu corrected ECC errors since the driver loaded on %s", cor, desc);
                        result_remedy(r, "Watch the count (`nvidia-smi -q -d ECC -i %u`): a growing number of corrected "
                                         "errors often precedes uncorrectable ones and row remapping.",
                                      g->index);
                        continue;
                }
                result_status(r, STATUS_PASS, "no uncorrectable ECC errors (%llu corrected)", cor);
        }
}

/* ---- gpu.memory_health ----------------------------------------------------------- */

static void judge_remap(struct result *r, const struct nvml_gpu *g, const char *desc) {
        result_evidence(r, "source", "nvmlDeviceGetRemappedRows");
        result_expected(r, "no remap failure, none pending");
        result_observed(r, "rows remapped: %u for uncorrectable, %u for correctable errors; pending %s; failure %s",
                        g->remap_uncorrected.v, g->remap_corrected.v, g->remap_pending.v ? "yes" : "no",
                        g->remap_failure.v ? "yes" : "no");
        if (g->remap_failure.v) {
                result_status(r, STATUS_FAIL,
                              "row remapping failed on %s: a bank ran out of spare rows and bad memory stays in use",
                              desc);
                result_remedy(r, "Take the GPU out of service and have it replaced (RMA); NVIDIA's row-remapping "
                                 "documentation treats a remapping failure as a replacement case.");
                return;
        }
        /* Pending, correctable or not: the faulty row stays in use until a reset, and DCGM
         * fails the GPU (DCGM_FR_ROW_REMAP_PENDING) until it has been reset. */
        if (g->remap_pending.v) {
                result_status(r, STATUS_FAIL, "a row remap is pending on %s: the GPU must be reset before it takes work",
                              desc);
                result_remedy(r, "Drain the GPU, then reset it with no process using it (`nvidia-smi -r -i %u`) or "
                                 "reboot; until then the faulty row stays in use.",
                              g->index);
                return;
        }
        unsigned int rows = g->remap_uncorrected.v + g->remap_corrected.v;
        result_status(r, STATUS_PASS, "no pending row remap and no remap failure (%u row%s remapped)", rows,
                      rows == 1 ? "" : "s");
}

static void judge_retired(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc) {
        unsigned warn_at = check_thresholds(f)->retired_pages_warn;
        result_evidence(r, "source", "nvmlDeviceGetRetiredPages, nvmlDeviceGetRetiredPagesPendingStatus");
        result_expected(r, "no retirement pending, fewer than %u of %u pages retired", warn_at, RETIRED_PAGES_MAX);
        result_evidence(r, "thresholds", "fail at %u retired pages (DCGM's limit), warn at %u", RETIRED_PAGES_FAIL,
                        warn_at);
        unsigned int total = g->retired_pages_sbe.v + g->retired_pages_dbe.v;
        bool pending = nv_ok(g->retired_pages_pending) && g->retired_pages_pending.v == NVML_FEATURE_ENABLED;
        result_observed(r, "retired pages: %u double-bit, %u single-bit; pending %s", g->retired_pages_dbe.v,
                        g->retired_pages_sbe.v,
                        nv_ok(g->retired_pages_pending) ? (pending ? "yes" : "no") : "unknown");
        if (pending) {
                result_status(r, STATUS_FAIL, "a page retirement is pending on %s: the GPU must be reset before it takes "
                                              "work", desc);
                result_remedy(r, "Drain the GPU, then reset it with no process using it (`nvidia-smi -r -i %u`), reload "
                                 "the driver or reboot; until then the bad page stays in use.",
                              g->index);
                return;
        }
        if (total >= RETIRED_PAGES_FAIL) {
                result_status(r, STATUS_FAIL, "%u of at most %u pages retired on %s: the retirement table is full",
                              total, RETIRED_PAGES_MAX, desc);
                result_remedy(r, "Take the GPU out of service and have it replaced: new bad cells can no longer be "
                                 "retired (DCGM fails a GPU at %u retired pages).",
                              RETIRED_PAGES_FAIL);
                return;
        }
        if (total >= warn_at) {
                result_status(r, STATUS_WARN, "%u of at most %u pages retired on %s: the memory is wearing out", total,
                              RETIRED_PAGES_MAX, desc);
                result_remedy(r, "Plan to replace the GPU: once the retirement table is full, new bad cells can no "
                                 "longer be retired.");
                return;
        }
        result_status(r, STATUS_PASS, "no page retirement pending (%u page%s retired)", total, total == 1 ? "" : "s");
}

static void run_memory_health(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (nvml_unavailable(self, f, rep))
                return;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                char desc[NV_DESC_MAX];
                struct result *r = nv_result(self, f, rep, g, desc);
                /* Ampere and newer remap rows and answer NOT_SUPPORTED for page retirement;
                 * older GPUs the other way round. */
                if (nv_ok(g->remap_pending)) {
                        judge_remap(r, g, desc);
                        continue;
                }
                if (nv_ok(g->retired_pages_dbe) && nv_ok(g->retired_pages_sbe)) {
                        judge_retired(r, f, g, desc);
                        continue;
                }
                /* Neither: report the more telling failure (a real error over not supported). */
                const struct nv_u32 *why = &g->remap_pending;
                bool remap_unsupported = g->remap_pending.state == NV_NO_FUNCTION ||
                                         (g->remap_pending.state == NV_ERROR && g->remap_pending.rc == NVML_ERROR_NOT_SUPPORTED);
                if (remap_unsupported) {
                        why = nv_ok(g->retired_pages_dbe) ? &g->retired_pages_sbe : &g->retired_pages_dbe;
                        if (why->state == NV_UNREAD)
                                why = &g->remap_pending;
                }
                result_expected(r, "no remap failure, no pending remap or page retirement");
                (void)UNUSABLE(r, f, g, "row remapping and page retirement", *why);
        }
}

/* ---- gpu.temperature ----------------------------------------------------------------- */

/* The T.Limit scale (Ada and later, R570+): the margin counts degrees down to the GPU's
 * T.Limit at 0; past it clocks may drop below base (GPU max operating, 0) and then the
 * hardware slows down (H100: -2) or shuts down (-8). The first of those the GPU reports
 * is the limit judged; 0 when it reports none. */
static int tlimit_first_limit(const struct nvml_gpu *g) {
        if (nv_ok(g->tlimit_gpu_max_c))
                return g->tlimit_gpu_max_c.v;
        if (nv_ok(g->tlimit_slowdown_c))
                return g->tlimit_slowdown_c.v;
        return 0;
}

static void tlimit_evidence(struct result *r, const struct nvml_gpu *g) {
        if (nv_ok(g->tlimit_gpu_max_c))
                result_evidence(r, "gpu_max_tlimit_c", "%d", g->tlimit_gpu_max_c.v);
        if (nv_ok(g->tlimit_slowdown_c))
                result_evidence(r, "slowdown_tlimit_c", "%d", g->tlimit_slowdown_c.v);
        if (nv_ok(g->tlimit_shutdown_c))
                result_evidence(r, "shutdown_tlimit_c", "%d", g->tlimit_shutdown_c.v);
}

static const char thermal_remedy_fmt[] =
        "Check the cooling: fans and their BMC policy, blocked airflow or a failed fan, inlet temperature, heatsink "
        "contact. `nvidia-smi -q -d TEMPERATURE,PERFORMANCE -i %u` shows the limits and active slowdowns.";

/* Ada and later: judged by the margin to T.Limit, as NVIDIA's own tools now report it. */
static void judge_margin(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc) {
        unsigned margin = check_thresholds(f)->temp_margin_c;
        int m = g->temp_margin_c.v, limit = tlimit_first_limit(g);
        result_expected(r, "more than %u C of margin to T.Limit (clocks drop at %d C)", margin, limit);
        if (nv_ok(g->temp_c))
                result_observed(r, "%u C, T.Limit margin %d C", g->temp_c.v, m);
        else
                result_observed(r, "T.Limit margin %d C", m);
        result_evidence(r, "source", "nvmlDeviceGetMarginTemperature, nvmlDeviceGetFieldValues (T.Limit fields)");
        result_evidence(r, "margin_c", "%d", m);
        tlimit_evidence(r, g);
        if (m <= limit) {
                result_status(r, STATUS_FAIL, "%s has %d C of margin to its T.Limit, at or past the %d C where clocks are "
                                              "cut", desc, m, limit);
                result_remedy(r, thermal_remedy_fmt, g->index);
        } else if (m <= limit + (int)margin) {
                result_status(r, STATUS_WARN, "%s has only %d C of margin to its T.Limit (clocks drop at %d C)", desc, m,
                              limit);
                result_remedy(r, "Check the cooling before the GPU starts slowing down: fans, airflow, inlet "
                                 "temperature.");
        } else {
                result_status(r, STATUS_PASS, "%d C of margin to T.Limit", m);
        }
}

static void run_temperature(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (nvml_unavailable(self, f, rep))
                return;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                char desc[NV_DESC_MAX];
                struct result *r = nv_result(self, f, rep, g, desc);
                if (nv_ok(g->temp_margin_c)) {
                        judge_margin(r, f, g, desc);
                        continue;
                }
                unsigned margin = check_thresholds(f)->temp_margin_c;
                if (nv_ok(g->temp_slowdown_c))
                        result_expected(r, "below %u C (slowdown %u C, margin %u C)",
                                        g->temp_slowdown_c.v > margin ? g->temp_slowdown_c.v - margin : 0,
                                        g->temp_slowdown_c.v, margin);
                else
                        result_expected(r, "at least %u C below the slowdown threshold", margin);
                /* A GPU or driver without the margin is judged by the absolute thresholds; a
                 * margin call that failed otherwise is reported, not papered over. */
                if (!reading_absent(g->temp_margin_c.state, g->temp_margin_c.rc) && UNUSABLE(r, f, g, "T.Limit margin", g->temp_margin_c))
                        continue;
                if (UNUSABLE(r, f, g, "GPU temperature", g->temp_c) ||
                    UNUSABLE(r, f, g, "slowdown temperature", g->temp_slowdown_c))
                        continue;
                unsigned int t = g->temp_c.v, slow = g->temp_slowdown_c.v;
                result_observed(r, "%u C", t);
                result_evidence(r, "source", "nvmlDeviceGetTemperature, nvmlDeviceGetTemperatureThreshold");
                if (nv_ok(g->temp_shutdown_c))
                        result_evidence(r, "shutdown_c", "%u", g->temp_shutdown_c.v);
                if (t >= slow) {
                        result_status(r, STATUS_FAIL, "%s is at %u C, at or above its slowdown threshold %u C: clocks "
                                                      "are being cut",
                                      desc, t, slow);
                        result_remedy(r, thermal_remedy_fmt, g->index);
                        continue;
                }
                if (t + margin >= slow) {
                        result_status(r, STATUS_WARN, "%s is at %u C, within %u C of its slowdown threshold %u C", desc,
                                      t, margin, slow);
                        result_remedy(r, "Check the cooling before the GPU starts slowing down: fans, airflow, inlet "
                                         "temperature.");
                        continue;
                }
                result_status(r, STATUS_PASS, "%u C, %u C below the slowdown threshold", t, slow - t);
        }
}

/* ---- gpu.memory_temperature ----------------------------------------------------------- */

/* HBM is often the first limit on H100/H200/B200. Judged against the memory's own
 * maximum where NVML gives it in degrees; newer drivers give it only on the T.Limit scale
 * (field 195, "Memory Max Operating T.Limit Temp"), where the margin to the nearest
 * slowdown threshold, core or memory, is what can be compared with it. */
static void run_memory_temperature(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (nvml_unavailable(self, f, rep))
                return;
        unsigned margin = check_thresholds(f)->temp_margin_c;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                char desc[NV_DESC_MAX];
                struct result *r = nv_result(self, f, rep, g, desc);
                if (UNUSABLE(r, f, g, "memory temperature", g->temp_memory_c))
                        continue;
                unsigned int t = g->temp_memory_c.v;
                result_evidence(r, "source", "nvmlDeviceGetFieldValues (NVML_FI_DEV_MEMORY_TEMP)");
                if (nv_ok(g->temp_mem_max_c) && g->temp_mem_max_c.v > 0) {
                        unsigned int max = g->temp_mem_max_c.v;
                        result_observed(r, "%u C", t);
                        result_expected(r, "below %u C (memory max %u C, margin %u C)", max > margin ? max - margin : 0,
                                        max, margin);
                        result_evidence(r, "memory_max_c", "%u", max);
                        if (t >= max) {
                                result_status(r, STATUS_FAIL, "%s memory is at %u C, at or above its maximum %u C: the "
                                                              "driver slows the GPU down", desc, t, max);
                                result_remedy(r, thermal_remedy_fmt, g->index);
                        } else if (t + margin >= max) {
                                result_status(r, STATUS_WARN, "%s memory is at %u C, within %u C of its maximum %u C",
                                              desc, t, margin, max);
                                result_remedy(r, "Check the cooling before the memory limit slows the GPU down: fans, "
                                                 "airflow, inlet temperature.");
                        } else {
                                result_status(r, STATUS_PASS, "memory %u C, %u C below its maximum", t, max - t);
                        }
                        continue;
                }
                if (nv_ok(g->temp_margin_c) && nv_ok(g->tlimit_mem_max_c)) {
                        int m = g->temp_margin_c.v, limit = g->tlimit_mem_max_c.v;
                        result_observed(r, "%u C, T.Limit margin %d C", t, m);
                        result_expected(r, "more than %u C of margin to the memory limit (%d C on the T.Limit scale)",
                                        margin, limit);
                        result_evidence(r, "margin_c", "%d", m);
                        result_evidence(r, "memory_max_tlimit_c", "%d", limit);
                        if (m <= limit) {
                                result_status(r, STATUS_FAIL, "%s (memory at %u C) is at or past its memory T.Limit: "
                                                              "the driver slows the GPU down", desc, t);
                                result_remedy(r, thermal_remedy_fmt, g->index);
                        } else if (m <= limit + (int)margin) {
                                result_status(r, STATUS_WARN, "%s (memory at %u C) has only %d C of margin to its "
                                                              "nearest thermal limit", desc, t, m - limit);
                                result_remedy(r, "Check the cooling before the memory limit slows the GPU down: fans, "
                                                 "airflow, inlet temperature.");
                        } else {
                                result_status(r, STATUS_PASS, "memory %u C; %d C of margin to the nearest thermal limit",
                                              t, m - limit);
                        }
                        continue;
                }
                result_observed(r, "%u C", t);
                result_status(r, STATUS_SKIP, "memory at %u C, but NVML reports no memory temperature limit to judge it "
                                              "against", t);
        }
}

/* ---- gpu.clock_events ---------------------------------------------------------------- */

static const struct {
        unsigned long long bit;
        const char *name;
        enum status status; /* PASS: informational */
} clock_reasons[] = {
        {nvmlClocksThrottleReasonHwSlowdown, "HW slowdown", STATUS_FAIL},
        {nvmlClocksThrottleReasonHwThermalSlowdown, "HW thermal slowdown", STATUS_FAIL},
        {nvmlClocksThrottleReasonHwPowerBrakeSlowdown, "HW power brake slowdown", STATUS_FAIL},
        {nvmlClocksEventReasonSwThermalSlowdown, "SW thermal slowdown", STATUS_WARN},
        {nvmlClocksEventReasonGpuIdle, "GPU idle", STATUS_PASS},
        {nvmlClocksEventReasonApplicationsClocksSetting, "applications clocks setting", STATUS_PASS},
        {nvmlClocksEventReasonSwPowerCap, "SW power cap", STATUS_PASS},
        {nvmlClocksEventReasonSyncBoost, "sync boost", STATUS_PASS},
        {nvmlClocksEventReasonDisplayClockSetting, "display clock setting", STATUS_PASS},
};

static void run_clock_events(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (nvml_unavailable(self, f, rep))
                return;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                char desc[NV_DESC_MAX];
                struct result *r = nv_result(self, f, rep, g, desc);
                result_expected(r, "no hardware, thermal or power-brake slowdown");
                if (UNUSABLE(r, f, g, "clock event reasons", g->clocks_event_reasons))
                        continue;
                unsigned long long v = g->clocks_event_reasons.v;
                result_evidence(r, "source", "%s", g->clocks_event_reasons.fn);
                result_evidence(r, "reasons", "0x%llx", v);
                char active[256] = "", bad[256] = "";
                enum status worst = STATUS_PASS;
                for (size_t k = 0; k < sizeof(clock_reasons) / sizeof(clock_reasons[0]); k++) {
                        if (!(v & clock_reasons[k].bit))
                                continue;
                        strbuf_appendf(active, sizeof(active), "%s%s", active[0] ? ", " : "", clock_reasons[k].name);
                        if (clock_reasons[k].status == STATUS_PASS)
                                continue;
                        strbuf_appendf(bad, sizeof(bad), "%s%s", bad[0] ? ", " : "", clock_reasons[k].name);
                        if (worst != STATUS_FAIL)
                                worst = clock_reasons[k].status;
                }
                result_observed(r, "%s", active[0] ? active : "none");
                if (worst == STATUS_FAIL) {
                        result_status(r, STATUS_FAIL, "%s is slowed down by hardware: %s", desc, bad);
                        result_remedy(r, "HW thermal: check cooling (fans, airflow, inlet temperature). HW power brake: "
                                         "the board or chassis signalled a power fault (PSU, power cable, BMC power "
                                         "capping). HW slowdown alone: external signal; check the BMC event log and "
                                         "`nvidia-smi -q -d PERFORMANCE -i %u`.",
                                      g->index);
                        continue;
                }
                if (worst == STATUS_WARN) {
                        result_status(r, STATUS_WARN, "%s is slowed down by the driver to stay within its thermal "
                                                      "limit: %s",
                                      desc, bad);
                        result_remedy(r, "Improve cooling: the GPU is running hot enough for the driver to lower its "
                                         "clocks (gpu.temperature).");
                        continue;
                }
                result_status(r, STATUS_PASS, "no slowdown active%s%s%s", active[0] ? " (" : "", active,
                              active[0] ? ")" : "");
        }
}

/* The same GPU in the read after the probes (facts.nvml_after), or NULL. */
static const struct nvml_gpu *gpu_after(const struct facts *f, const struct nvml_gpu *g) {
        if (!f->nvml_after || g->index >= f->nvml_after->n_gpus)
                return NULL;
        const struct nvml_gpu *a = &f->nvml_after->gpus[g->index];
        if (!nv_ok(a->pci_bus_id) || !nv_ok(g->pci_bus_id) || strcmp(a->pci_bus_id.v, g->pci_bus_id.v) != 0)
                return NULL;
        return a;
}

/* How much a counter grew between the reads; a counter that went down was reset (by
 * `nvidia-smi nvlink -r` or a GPU reset) and counts from zero. */
static unsigned long long grew(unsigned long long before, unsigned long long after) {
        return after >= before ? after - before : after;
}

/* ---- gpu.pcie_nvml --------------------------------------------------------------- */

static void run_pcie_nvml(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (nvml_unavailable(self, f, rep))
                return;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                char desc[NV_DESC_MAX];
                struct result *r = nv_result(self, f, rep, g, desc);
                double replay_max = check_thresholds(f)->pcie_replays_per_minute;
                if (nv_ok(g->pcie_max_gen) && nv_ok(g->pcie_max_width))
                        result_expected(r, "Gen%u x%u, at most %g replays a minute", g->pcie_max_gen.v,
                                        g->pcie_max_width.v, replay_max);
                else
                        result_expected(r, "the maximum link generation and width, at most %g replays a minute",
                                        replay_max);
                if (UNUSABLE(r, f, g, "PCIe link width", g->pcie_width) ||
                    UNUSABLE(r, f, g, "maximum PCIe link width", g->pcie_max_width) ||
                    UNUSABLE(r, f, g, "PCIe link generation", g->pcie_gen) ||
                    UNUSABLE(r, f, g, "maximum PCIe link generation", g->pcie_max_gen))
                        continue;
                /* The replay counter only adds to the link's judgement: when the GPU does not
                 * support it the link is still judged ("replays unknown"), but a lost GPU, a
                 * hung call or another error must not pass as a healthy link. */
                bool replay_unsupported = g->pcie_replay.state == NV_NO_FUNCTION ||
                                          (g->pcie_replay.state == NV_ERROR && g->pcie_replay.rc == NVML_ERROR_NOT_SUPPORTED);
                if (!replay_unsupported && g->pcie_replay.state != NV_UNREAD &&
                    UNUSABLE(r, f, g, "PCIe replay counter", g->pcie_replay))
                        continue;
                result_evidence(r, "source", "nvmlDeviceGetCurrPcieLinkWidth, nvmlDeviceGetCurrPcieLinkGeneration, "
                                             "nvmlDeviceGetMaxPcieLink{Width,Generation}, nvmlDeviceGetPcieReplayCounter");
                bool have_replay = nv_ok(g->pcie_replay);
                unsigned int replay = have_replay ? g->pcie_replay.v : 0;
                if (have_replay) {
                        result_observed(r, "Gen%u x%u, %u replay%s", g->pcie_gen.v, g->pcie_width.v, replay,
                                        replay == 1 ? "" : "s");
                } else {
                        result_observed(r, "Gen%u x%u, replays unknown", g->pcie_gen.v, g->pcie_width.v);
                        result_evidence(r, "replay_counter", "%s",
                                        g->pcie_replay.state == NV_TIMEOUT
                                                ? "timeout"
                                                : nvml_return_name((nvmlReturn_t)g->pcie_replay.rc));
                }
                if (g->pcie_width.v < g->pcie_max_width.v) {
                        result_status(r, STATUS_FAIL, "NVML reports the link of %s at x%u of x%u", desc, g->pcie_width.v,
                                      g->pcie_max_width.v);
                        result_remedy(r, "Reseat the GPU and inspect its riser/cable and slot; check the BIOS slot "
                                         "bifurcation setting (pcie.link_width shows the same from sysfs).");
                        continue;
                }
                if (g->pcie_gen.v < g->pcie_max_gen.v) {
                        /* As pcie.link_speed: GPUs drop to Gen1 at idle to save power. */
                        result_status(r, STATUS_WARN, "link of %s at Gen%u below its maximum Gen%u%s; normal at idle "
                                                      "(power saving), the standard level confirms it under load",
                                      desc, g->pcie_gen.v, g->pcie_max_gen.v,
                                      replay ? ", and the link has replayed packets" : "");
                        result_remedy(r, "Run `gpuvet check --level standard` to measure the link under load; if it "
                                         "stays below Gen%u there, reseat the GPU and check BIOS PCIe speed settings.",
                                      g->pcie_max_gen.v);
                        continue;
                }
                /* DCGM judges replays as a rate: more than 8 a minute is what RM recommends
                 * against (DCGM_LIMIT_MAX_PCIREPLAY_RATE). The counter runs since the driver
                 * loaded, a little after boot, so the rate over the uptime is a lower bound. */
                /* The standard level read the counter again after the probes pushed traffic
                 * over the link: what it did under load is the verdict, not its history. */
                const struct nvml_gpu *a = gpu_after(f, g);
                if (have_replay && a && nv_ok(a->pcie_replay) && f->nvml_window_s > 0) {
                        unsigned long long d = grew(replay, a->pcie_replay.v);
                        double w = f->nvml_window_s, rate = d / (w / 60.0);
                        result_evidence(r, "window", "%llu replay%s in %.1f s around the device probes (%u since boot)",
                                        d, d == 1 ? "" : "s", w, a->pcie_replay.v);
                        if (rate > replay_max) {
                                result_status(r, STATUS_WARN, "the PCIe link of %s replayed %llu packet%s while the probes "
                                                              "ran (%.0f s): %.3g a minute, over %g",
                                              desc, d, d == 1 ? "" : "s", w, rate, replay_max);
                                result_remedy(r, "Reseat the GPU and check its riser/cable; compare with the AER counters "
                                                 "(pcie.aer). Replays under load cost bandwidth and point at the slot or "
                                                 "cable.");
                                continue;
                        }
                        result_status(r, STATUS_PASS, "link at its maximum Gen%u x%u, %llu replay%s under load (%u since "
                                                      "boot)",
                                      g->pcie_max_gen.v, g->pcie_max_width.v, d, d == 1 ? "" : "s", a->pcie_replay.v);
                        continue;
                }
                double minutes = f->host.uptime_s / 60.0;
                if (replay > 0 && minutes > 0) {
                        double rate = replay / minutes;
                        result_evidence(r, "replay_rate", "%.3g per minute over %.0f minutes of uptime (limit %g)", rate,
                                        minutes, replay_max);
                        if (rate <= replay_max) {
                                bool dcgm = replay_max == policy_thresholds_default.pcie_replays_per_minute;
                                result_status(r, STATUS_PASS, "link at its maximum Gen%u x%u, %u replay%s since boot "
                                                              "(%.2g a minute, under %s %g)",
                                              g->pcie_max_gen.v, g->pcie_max_width.v, replay, replay == 1 ? "" : "s",
                                              rate, dcgm ? "DCGM's" : "the site's", replay_max);
                                continue;
                        }
                }
                if (replay > 0) {
                        char over[64] = "";
                        if (minutes > 0)
                                snprintf(over, sizeof(over), ", more than %g a minute since boot", replay_max);
                        result_status(r, STATUS_WARN, "the PCIe link of %s replayed %u packet%s%s: signal errors on the "
                                                      "link",
                                      desc, replay, replay == 1 ? "" : "s", over);
                        result_remedy(r, "Reseat the GPU and check its riser/cable; compare with the AER counters "
                                         "(pcie.aer). A count that keeps growing points at the slot or cable.");
                        continue;
                }
                result_status(r, STATUS_PASS, "link at its maximum Gen%u x%u%s", g->pcie_max_gen.v,
                              g->pcie_max_width.v, have_replay ? ", no replays" : "");
        }
}

/* ---- gpu.nvlink ---------------------------------------------------------------------- */

static bool not_supported(unsigned char state, int rc) {
        return state == NV_NO_FUNCTION ||
               (state == NV_ERROR && (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT));
}

/* NVLink error counters as DCGM's health watch judges them, over a window: any replay or
 * recovery error in it fails (DCGM_FR_NVLINK_ERROR_CRITICAL, DCGM_LIMIT_MAX_NVLINK_ERROR
 * = 1); CRC errors fail at 100 a second (DCGM_LIMIT_MAX_NVLINK_CRC_ERROR: "RM has informed
 * us that CRC errors only matter at rates of 100+ per second") and warn below. */
#define NVLINK_CRC_RATE_FAIL 100.0
/* The quick level has only the counts since the driver loaded: CRC errors by the same
 * per-second rate over the uptime, replays and recoveries warn from one an hour on average
 * (gpuvet's: DCGM has no since-boot limit; a handful in months of uptime is benign). */
#define NVLINK_REPLAY_PER_HOUR_WARN 1.0

/* Judge the error counters of g's active links: returns true when it set a warning or a
 * failure. totals: the counts since the driver loaded, summed over the active links. */
static bool judge_nvlink_errors(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc,
                                const unsigned long long totals[NVML_NVL_COUNTER_COUNT], unsigned n_err_links) {
        unsigned long long crc = totals[NVML_NVL_CRC_FLIT] + totals[NVML_NVL_CRC_DATA];
        unsigned long long replays = totals[NVML_NVL_REPLAY] + totals[NVML_NVL_RECOVERY];
        const struct nvml_gpu *a = gpu_after(f, g);
        if (a && f->nvml_window_s > 0) {
                unsigned long long d[NVML_NVL_COUNTER_COUNT] = {0};
                for (unsigned int l = 0; l < g->nvlink_count && l < NVML_NVLINK_MAX_LINKS && l < a->nvlink_count; l++)
                        for (int c = 0; c < NVML_NVL_COUNTER_COUNT; c++)
                                if (g->nvlink[l].state.v == NVML_FEATURE_ENABLED && nv_ok(g->nvlink[l].errors[c]) &&
                                    nv_ok(a->nvlink[l].errors[c]))
                                        d[c] += grew(g->nvlink[l].errors[c].v, a->nvlink[l].errors[c].v);
                unsigned long long d_crc = d[NVML_NVL_CRC_FLIT] + d[NVML_NVL_CRC_DATA];
                unsigned long long d_replay = d[NVML_NVL_REPLAY], d_recovery = d[NVML_NVL_RECOVERY];
                double w = f->nvml_window_s, crc_rate = d_crc / w;
                result_evidence(r, "window", "%.1f s around the device probes: %llu replay, %llu recovery, %llu CRC "
                                             "(since boot: %llu replay and recovery, %llu CRC)",
                                w, d_replay, d_recovery, d_crc, replays, crc);
                if (d_replay || d_recovery || crc_rate >= NVLINK_CRC_RATE_FAIL) {
                        result_status(r, STATUS_FAIL, "NVLink errors on %s while the probes ran (%.0f s): %llu replay, "
                                                      "%llu recovery, %llu CRC (%.3g a second)",
                                      desc, w, d_replay, d_recovery, d_crc, crc_rate);
                        result_remedy(r, "A link that replays or retrains under load is failing: drain the node, check "
                                         "`nvidia-smi nvlink -e -i %u` and `dmesg` (Xid 74), reset the GPU; if errors "
                                         "return, have the baseboard or GPU seen to.",
                                      g->index);
                        return true;
                }
                if (d_crc) {
                        result_status(r, STATUS_WARN, "%llu NVLink CRC error%s on %s while the probes ran (%.3g a "
                                                      "second, under DCGM's %.0f)",
                                      d_crc, d_crc == 1 ? "" : "s", desc, crc_rate, NVLINK_CRC_RATE_FAIL);
                        result_remedy(r, "Watch whether they keep coming (`nvidia-smi nvlink -e -i %u`); a steady "
                                         "stream points at a link that needs the board seen to.",
                                      g->index);
                        return true;
                }
                return false; /* counts from before the run are history: the links were clean under load */
        }
        if (!n_err_links)
                return false;
        double hours = f->host.uptime_s / 3600.0;
        if (hours > 0) {
                double crc_rate = crc / (hours * 3600.0), replay_rate = replays / hours;
                result_evidence(r, "rates", "since boot (%.1f h): %.3g CRC a second (fail at %.0f), %.3g replay and "
                                            "recovery an hour (warn at %.0f)",
                                hours, crc_rate, NVLINK_CRC_RATE_FAIL, replay_rate, NVLINK_REPLAY_PER_HOUR_WARN);
                if (crc_rate >= NVLINK_CRC_RATE_FAIL) {
                        result_status(r, STATUS_FAIL, "NVLink CRC errors on %s at %.3g a second since boot, over "
                                                      "DCGM's %.0f",
                                      desc, crc_rate, NVLINK_CRC_RATE_FAIL);
                        result_remedy(r, "Drain the node and have the link seen to; `nvidia-smi nvlink -e -i %u` shows "
                                         "which.",
                                      g->index);
                        return true;
                }
                if (replay_rate < NVLINK_REPLAY_PER_HOUR_WARN)
                        return false; /* a few since boot: history, named in evidence */
        }
        result_status(r, STATUS_WARN, "%u NVLink%s of %s logged errors since boot: %llu replay, %llu recovery, %llu CRC",
                      n_err_links, n_err_links == 1 ? "" : "s", desc, totals[NVML_NVL_REPLAY],
                      totals[NVML_NVL_RECOVERY], crc);
        result_remedy(r, "Run `gpuvet check --level standard`: it counts the errors while the links carry traffic. "
                         "`nvidia-smi nvlink -e -i %u` shows them per link; `nvidia-smi nvlink -r 0 -i %u` resets them.",
                      g->index, g->index);
        return true;
}

/* NVLink bridges join PCIe cards in pairs: every active link of a bridged card ends at the
 * same peer GPU, and the peer sees as many links coming back. Returns true when it set a
 * warning; else names the peer in peer (when NVML told the far ends). */
static bool bridge_pair_problem(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc,
                                unsigned active, char *peer, size_t size) {
        const char *first = NULL;
        unsigned to_first = 0, known = 0;
        for (unsigned int l = 0; l < g->nvlink_count && l < NVML_NVLINK_MAX_LINKS; l++) {
                const struct nvml_nvlink *k = &g->nvlink[l];
                if (k->state.v != NVML_FEATURE_ENABLED || !nv_ok(k->remote_bus_id))
                        continue;
                known++;
                if (!first)
                        first = k->remote_bus_id.v;
                to_first += strcasecmp(k->remote_bus_id.v, first) == 0;
        }
        if (!first)
                return false; /* the far ends are unknown: nothing to pair */
        if (to_first != known) {
                result_status(r, STATUS_WARN, "the bridged NVLinks of %s end at more than one GPU: a bridge joins one "
                                              "pair of cards",
                              desc);
                result_remedy(r, "Check the bridges with the node powered off: each must join the same two cards "
                                 "(`nvidia-smi nvlink -R -i %u` shows where each link ends).",
                              g->index);
                return true;
        }
        const struct nvml_gpu *p = NULL;
        for (unsigned int i = 0; i < f->nvml.n_gpus && !p; i++)
                if (nv_ok(f->nvml.gpus[i].pci_bus_id) && strcasecmp(f->nvml.gpus[i].pci_bus_id.v, first) == 0)
                        p = &f->nvml.gpus[i];
        snprintf(peer, size, "%s", first);
        if (!p)
                return false; /* a peer NVML does not list (another partition, a VM's neighbour) */
        unsigned back = 0;
        for (unsigned int l = 0; l < p->nvlink_count && l < NVML_NVLINK_MAX_LINKS; l++)
                back += p->nvlink[l].state.v == NVML_FEATURE_ENABLED && nv_ok(p->nvlink[l].remote_bus_id) &&
                        nv_ok(g->pci_bus_id) && strcasecmp(p->nvlink[l].remote_bus_id.v, g->pci_bus_id.v) == 0;
        if (back != active) {
                result_status(r, STATUS_WARN, "the NVLink bridge pair %s and %s is lopsided: %u active link%s from this "
                                              "card, %u from its peer",
                              desc, first, active, active == 1 ? "" : "s", back);
                result_remedy(r, "Reseat the bridges between the two cards with the node powered off; `nvidia-smi "
                                 "nvlink -s` on both shows which links are down.");
                return true;
        }
        return false;
}

static void run_nvlink(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (nvml_unavailable(self, f, rep))
                return;
        static const char *const counter_names[NVML_NVL_COUNTER_COUNT] = {
                [NVML_NVL_REPLAY] = "replay",     [NVML_NVL_RECOVERY] = "recovery", [NVML_NVL_CRC_FLIT] = "CRC flit",
                [NVML_NVL_CRC_DATA] = "CRC data", [NVML_NVL_ECC_DATA] = "ECC data",
        };
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                char desc[NV_DESC_MAX];
                struct result *r = nv_result(self, f, rep, g, desc);
                const struct gpu_model *m = nv_model(f, g);
                /* SXM boards carry their NVLinks on the baseboard; PCIe and NVL cards only
                 * through optional bridges, so no links there is not a fault. */
                bool bridged = m && (m->nvlink_bridge || (m->form && (strcmp(m->form, "pcie") == 0 ||
                                                                      strcmp(m->form, "nvl") == 0)));
                bool must_have = m && m->nvlink_links > 0 && !bridged;
                if (must_have)
                        result_expected(r, "%u NVLinks active, no errors", m->nvlink_links);
                else if (bridged && m->nvlink_links)
                        result_expected(r, "no NVLink bridge, or %u bridged links active, no errors", m->nvlink_links);
                else
                        result_expected(r, "every NVLink active, no errors");
                result_evidence(r, "source", "nvmlDeviceGetNvLinkState, nvmlDeviceGetNvLinkErrorCounter");
                bool end_bad = g->nvlink_end.state != NV_UNREAD && !not_supported(g->nvlink_end.state, g->nvlink_end.rc);
                if (end_bad) {
                        (void)UNUSABLE(r, f, g, "NVLink state", g->nvlink_end);
                        continue;
                }
                /* NVLink is not available while MIG is on (NVIDIA MIG user guide). */
                if (nv_ok(g->mig_mode_current) && g->mig_mode_current.v == NVML_FEATURE_ENABLED) {
                        result_observed(r, "%u NVLinks reported, MIG enabled", g->nvlink_count);
                        result_status(r, STATUS_SKIP, "MIG is enabled on %s: NVLink is not used in MIG mode", desc);
                        continue;
                }
                /* A link whose state NVML could not read (GPU lost, an error) says more
                 * than "down". */
                bool unreadable = false;
                for (unsigned int l = 0; l < g->nvlink_count && l < NVML_NVLINK_MAX_LINKS && !unreadable; l++)
                        if (g->nvlink[l].state.state != NV_OK)
                                unreadable = UNUSABLE(r, f, g, "NVLink state", g->nvlink[l].state);
                if (unreadable)
                        continue;
                if (g->nvlink_count == 0) {
                        result_observed(r, "no NVLink");
                        /* A hypervisor passes an SXM GPU's NVLinks through only with its whole
                         * NVLink domain (all GPUs of the baseboard, or a Fabric Manager
                         * partition); a guest given one GPU has none, and NVML answers
                         * NOT_SUPPORTED for every link (seen on an H100 SXM guest, driver 580). */
                        if (must_have && f->virt.is_vm && f->gpus.n == 1) {
                                result_status(r, STATUS_SKIP,
                                              "NVLink is not exposed to this VM: %s is its only GPU, so its %u links "
                                              "have no peer here (the host keeps them)",
                                              desc, m->nvlink_links);
                                continue;
                        }
                        if (must_have) {
                                result_status(r, STATUS_FAIL, "NVML reports no NVLink on %s, which has %u", desc,
                                              m->nvlink_links);
                                result_remedy(r, "Check `nvidia-smi nvlink -s -i %u` and the NVRM messages in `dmesg`; "
                                                 "NVLinks missing on an SXM board need a reset or the board seen to.",
                                              g->index);
                        } else {
                                result_status(r, STATUS_SKIP, "no NVLink on this board");
                        }
                        continue;
                }
                /* An error counter of an active link that NVML could not read: a lost GPU,
                 * a hung call or another error says more than "no errors". ECC data errors
                 * are not judged (below); a counter the board does not support is left out
                 * and evidence says so. */
                const struct nv_u64 *bad_counter = NULL;
                bool counter_unsupported = false;
                for (unsigned int l = 0; l < g->nvlink_count && l < NVML_NVLINK_MAX_LINKS && !bad_counter; l++) {
                        const struct nvml_nvlink *k = &g->nvlink[l];
                        if (k->state.v != NVML_FEATURE_ENABLED)
                                continue;
                        for (int c = 0; c < NVML_NVL_COUNTER_COUNT && !bad_counter; c++) {
                                const struct nv_u64 *e = &k->errors[c];
                                if (c == NVML_NVL_ECC_DATA || nv_ok(*e) || e->state == NV_UNREAD)
                                        continue;
                                if (not_supported(e->state, e->rc))
                                        counter_unsupported = true;
                                else
                                        bad_counter = e;
                        }
                }
                if (bad_counter && UNUSABLE(r, f, g, "NVLink error counters", *bad_counter))
                        continue;
                /* Where each active link ends (bridge pairs, the topology): a lost GPU or a hung
                 * call there is reported too, never read as "no peer". */
                const struct nv_str *bad_peer = NULL;
                for (unsigned int l = 0; l < g->nvlink_count && l < NVML_NVLINK_MAX_LINKS && !bad_peer; l++) {
                        const struct nv_str *e = &g->nvlink[l].remote_bus_id;
                        if (g->nvlink[l].state.v == NVML_FEATURE_ENABLED && !nv_ok(*e) && e->state != NV_UNREAD &&
                            !not_supported(e->state, e->rc))
                                bad_peer = e;
                }
                if (bad_peer && UNUSABLE(r, f, g, "NVLink remote PCI info", *bad_peer))
                        continue;
                if (counter_unsupported)
                        result_evidence(r, "counters", "some not supported on this GPU/driver "
                                                       "(nvmlDeviceGetNvLinkErrorCounter): not judged");
                char down[256] = "", errors[512] = "", bridge_peer[32] = "";
                unsigned int n_down = 0, n_err_links = 0;
                /* NVML numbers link slots, not wires: an H100 PCIe answers for 18 slots of
                 * which its bridges wire 12, an H800 for more than its 8. Only the SKU's link
                 * count is judged; the rest of the slots are expected down. */
                unsigned int wired = m && m->nvlink_links ? m->nvlink_links : g->nvlink_count;
                unsigned long long totals[NVML_NVL_COUNTER_COUNT] = {0};
                for (unsigned int l = 0; l < g->nvlink_count && l < NVML_NVLINK_MAX_LINKS; l++) {
                        const struct nvml_nvlink *k = &g->nvlink[l];
                        if (k->state.v != NVML_FEATURE_ENABLED) {
                                strbuf_appendf(down, sizeof(down), "%s%u", n_down ? ", " : "", l);
                                n_down++;
                                continue;
                        }
                        char one[160] = "";
                        for (int c = 0; c < NVML_NVL_COUNTER_COUNT; c++) {
                                /* ECC data errors are corrected by the link itself. */
                                if (c == NVML_NVL_ECC_DATA || !nv_ok(k->errors[c]) || k->errors[c].v == 0)
                                        continue;
                                totals[c] += k->errors[c].v;
                                strbuf_appendf(one, sizeof(one), "%s%s %llu", one[0] ? ", " : "", counter_names[c],
                                               k->errors[c].v);
                        }
                        if (one[0]) {
                                strbuf_appendf(errors, sizeof(errors), "%slink %u: %s", n_err_links ? "; " : "", l, one);
                                n_err_links++;
                        }
                }
                unsigned int active = g->nvlink_count - n_down;
                result_observed(r, "%u of %u links active%s%s", active, g->nvlink_count, n_down ? ", down: " : "", down);
                if (errors[0])
                        result_evidence(r, "errors", "%s", errors);
                if (bridged) {
                        if (active == 0) {
                                result_status(r, STATUS_PASS, "no NVLink bridge on %s (a PCIe card: links are optional)",
                                              desc);
                                continue;
                        }
                        if (active < wired) {
                                result_status(r, STATUS_WARN,
                                              "%u of the %u bridged NVLinks of %s are active: a bridge is missing or "
                                              "not seated",
                                              active, wired, desc);
                                result_remedy(r, "Every bridge between a pair of cards must be fitted (`nvidia-smi "
                                                 "nvlink -s -i %u` shows each link); reseat the bridges with the "
                                                 "node powered off.",
                                              g->index);
                                continue;
                        }
                        if (bridge_pair_problem(r, f, g, desc, active, bridge_peer, sizeof(bridge_peer)))
                                continue;
                }
                if (active >= wired)
                        n_down = 0; /* the remaining slots are not wired on this SKU */
                if (n_down) {
                        result_status(r, STATUS_FAIL, "NVLink%s %s of %s %s down", n_down == 1 ? "" : "s", down, desc,
                                      n_down == 1 ? "is" : "are");
                        result_remedy(r, "Check `nvidia-smi nvlink -s -i %u` and `dmesg` for NVLink errors (Xid 74); "
                                         "reset the GPU or reboot, and on NVSwitch systems make sure the Fabric "
                                         "Manager runs (gpu.fabric_manager). A link that stays down needs the "
                                         "baseboard or GPU seen to.",
                                      g->index);
                        continue;
                }
                if (must_have && active < m->nvlink_links) {
                        result_status(r, STATUS_FAIL, "NVML reports %u NVLinks on %s, which has %u", g->nvlink_count,
                                      desc, m->nvlink_links);
                        result_remedy(r, "Check `nvidia-smi nvlink -s -i %u`; reset the GPU or reboot.", g->index);
                        continue;
                }
                if (judge_nvlink_errors(r, f, g, desc, totals, n_err_links))
                        continue;
                result_status(r, STATUS_PASS, "all %u NVLinks active%s%s, %s", active, bridge_peer[0] ? ", bridged to " : "",
                              bridge_peer, counter_unsupported ? "error counters not supported" : "no errors");
        }
}

/* ---- gpu.fabric_manager ------------------------------------------------------------ */

static const char *fabric_state_name(unsigned int s) {
        switch (s) {
        case NVML_GPU_FABRIC_STATE_NOT_SUPPORTED: return "not supported";
        case NVML_GPU_FABRIC_STATE_NOT_STARTED: return "not started";
        case NVML_GPU_FABRIC_STATE_IN_PROGRESS: return "in progress";
        case NVML_GPU_FABRIC_STATE_COMPLETED: return "completed";
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
        return nv_ok(g->fabric_state) && g->fabric_state.v != NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;
}

/* The daemon the fabric needs on this node: the Fabric Manager where the NVSwitches are on
 * the PCI bus, the IMEX daemon on a multi-node NVLink compute tray, none in a VM or where
 * the switches are managed elsewhere (skip, saying so). */
static void judge_fabric_service(const struct check_info *self, const struct facts *f, struct report *rep,
                                 size_t n_switch, unsigned n_cluster) {
        const struct nvidia_facts *x = &f->nvidia;
        const struct nvml_facts *n = &f->nvml;
        struct result *r = result_new(rep, self, "host");
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
        const char *st = nvml_return_name((nvmlReturn_t)g->fabric_status.v);
        result_observed(rg, "%s, status %s", fabric_state_name(g->fabric_state.v), st);
        if (nv_ok(g->fabric_clique_id))
                result_evidence(rg, "clique_id", "%u", g->fabric_clique_id.v);
        if (in_fabric_cluster(g))
                result_evidence(rg, "cluster_uuid", "%s", g->fabric_cluster_uuid.v);
        if (g->fabric_state.v != NVML_GPU_FABRIC_STATE_COMPLETED) {
                result_status(rg, STATUS_FAIL, "%s has not joined the NVLink fabric (state %s): CUDA fails "
                                               "with error 802 until it does",
                              desc, fabric_state_name(g->fabric_state.v));
                result_remedy(rg, "%s", remedy);
                return;
        }
        if (g->fabric_status.v != NVML_SUCCESS) {
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
                                        : nvml_return_name((nvmlReturn_t)g->fabric_health_mask.rc));
                result_status(rg, STATUS_PASS, "joined the NVLink fabric");
                return;
        }
        unsigned mask = g->fabric_health_mask.v, summary = g->fabric_health_summary.v;
        /* Single-node NVSwitch boards (HGX H100: "Summary : N/A") report no health. */
        if (summary == NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED && mask == 0) {
                result_status(rg, STATUS_PASS, "joined the NVLink fabric");
                return;
        }
        result_evidence(rg, "health_mask", "0x%x", mask);
        unsigned config = health_field(mask, NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_INCORRECT_CONFIGURATION,
                                       NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_INCORRECT_CONFIGURATION);
        bool route_bad = health_field(mask, NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_UNHEALTHY, 3) == 1;
        bool degraded = health_field(mask, NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW, 3) == 1;
        bool recovering = health_field(mask, NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_RECOVERY, 3) == 1 ||
                          health_field(mask, NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ACCESS_TIMEOUT_RECOVERY, 3) == 1;
        if (config > NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NONE) {
                result_status(rg, STATUS_FAIL, "%s is in the NVLink fabric with a wrong configuration: %s", desc,
                              fabric_config_problem(config));
                result_remedy(rg, "Correct the tray's fabric configuration (its location, serial number and firmware "
                                  "as the rack's fabric expects; `nvidia-smi -q -d FABRIC` shows the state), then reset "
                                  "the GPUs.");
                return;
        }
        if (route_bad || summary == NVML_GPU_FABRIC_HEALTH_SUMMARY_UNHEALTHY) {
                result_status(rg, STATUS_FAIL, "the NVLink fabric of %s is unhealthy%s", desc,
                              route_bad ? ": a route through it is down" : "");
                result_remedy(rg, "Drain the node; `nvidia-smi -q -d FABRIC` and the Fabric Manager's log on the "
                                  "switch trays show which link or switch failed; reset the GPUs once it is repaired.");
                return;
        }
        if (degraded || recovering || summary == NVML_GPU_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY) {
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
                if (not_supported(g->fabric_state.state, g->fabric_state.rc) ||
                    (nv_ok(g->fabric_state) && g->fabric_state.v == NVML_GPU_FABRIC_STATE_NOT_SUPPORTED))
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

/* ---- gpu.power_limit ------------------------------------------------------------- */

static void run_power_limit(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (nvml_unavailable(self, f, rep))
                return;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                char desc[NV_DESC_MAX];
                struct result *r = nv_result(self, f, rep, g, desc);
                const struct nv_u32 *lim = nv_ok(g->power_enforced_limit_mw) ? &g->power_enforced_limit_mw
                                                                             : &g->power_limit_mw;
                if (nv_ok(g->power_default_limit_mw))
                        result_expected(r, ">= %u W (the default limit)", MW_TO_W(g->power_default_limit_mw.v));
                else
                        result_expected(r, "at or above the default power limit");
                if (UNUSABLE(r, f, g, "power limit", *lim) || UNUSABLE(r, f, g, "default power limit", g->power_default_limit_mw))
                        continue;
                unsigned int w = MW_TO_W(lim->v), def = MW_TO_W(g->power_default_limit_mw.v);
                result_evidence(r, "source", "%s, nvmlDeviceGetPowerManagementDefaultLimit", lim->fn);
                if (nv_ok(g->power_min_limit_mw) && nv_ok(g->power_max_limit_mw)) {
                        result_observed(r, "%u W (min %u W, default %u W, max %u W)", w,
                                        MW_TO_W(g->power_min_limit_mw.v), def, MW_TO_W(g->power_max_limit_mw.v));
                        result_evidence(r, "constraints", "nvmlDeviceGetPowerManagementLimitConstraints");
                } else {
                        result_observed(r, "%u W (default %u W)", w, def);
                }
                /* Values no working GPU reports (a 0 W limit, min above max, a default outside
                 * its own range) say NVML's power readings cannot be trusted, not that the
                 * GPU is fine or capped. */
                bool constraints = nv_ok(g->power_min_limit_mw) && nv_ok(g->power_max_limit_mw);
                const char *implausible = lim->v == 0                              ? "a power limit of 0 W"
                                          : g->power_default_limit_mw.v == 0      ? "a default power limit of 0 W"
                                          : constraints && g->power_min_limit_mw.v > g->power_max_limit_mw.v
                                                  ? "a minimum power limit above the maximum"
                                          : constraints && (g->power_default_limit_mw.v < g->power_min_limit_mw.v ||
                                                            g->power_default_limit_mw.v > g->power_max_limit_mw.v)
                                                  ? "a default power limit outside its own min-max range"
                                                  : NULL;
                if (implausible) {
                        result_status(r, STATUS_ERROR, "NVML reports %s for %s: its power readings cannot be judged",
                                      implausible, desc);
                        result_remedy(r, "Compare with `nvidia-smi -q -d POWER -i %u`; values like these point at a "
                                         "driver or firmware fault: update the driver, reset the GPU (`nvidia-smi -r "
                                         "-i %u`) or have it serviced if they stay.",
                                      g->index, g->index);
                        continue;
                }
                /* A site that caps power on purpose sets the fraction it accepts. */
                double fraction = check_thresholds(f)->power_cap_fraction;
                if (fraction < 1.0)
                        result_evidence(r, "threshold", "warn below %.0f%% of the default limit (site policy)",
                                        fraction * 100);
                if ((double)lim->v < fraction * g->power_default_limit_mw.v) {
                        result_status(r, STATUS_WARN, "the power limit of %s is capped at %u W, below its default %u W: "
                                                      "it runs slower under load",
                                      desc, w, def);
                        result_remedy(r, "If nobody capped it on purpose, restore the default: `gpuvet tune apply --set "
                                         "gpu.power_limit=default` (every GPU; `gpuvet tune revert` undoes it) or "
                                         "`nvidia-smi -i %u -pl %u`. Both are lost at reboot: look for a service or "
                                         "script that sets it, and the BMC's power capping.",
                                      g->index, def);
                        continue;
                }
                if (lim->v < g->power_default_limit_mw.v)
                        result_status(r, STATUS_PASS, "power limit %u W, %.0f%% of the default %u W: within the site's "
                                                      "cap",
                                      w, 100.0 * lim->v / g->power_default_limit_mw.v, def);
                else
                        result_status(r, STATUS_PASS, "power limit %u W (default %u W)", w, def);
        }
}

/* ---- gpu.app_clocks ------------------------------------------------------------------ */

static void run_app_clocks(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (nvml_unavailable(self, f, rep))
                return;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                char desc[NV_DESC_MAX];
                struct result *r = nv_result(self, f, rep, g, desc);
                const struct nv_u32 *sm = &g->clock_app_mhz[NVML_CLK_GRAPHICS], *mem = &g->clock_app_mhz[NVML_CLK_MEM];
                const struct nv_u32 *dsm = &g->clock_default_app_mhz[NVML_CLK_GRAPHICS],
                                    *dmem = &g->clock_default_app_mhz[NVML_CLK_MEM];
                if (nv_ok(*dsm) && nv_ok(*dmem))
                        result_expected(r, "graphics %u MHz, memory %u MHz (the defaults)", dsm->v, dmem->v);
                else
                        result_expected(r, "applications clocks at their defaults");
                if (UNUSABLE(r, f, g, "applications clocks", *sm) || UNUSABLE(r, f, g, "applications clocks", *mem) ||
                    UNUSABLE(r, f, g, "default applications clocks", *dsm) ||
                    UNUSABLE(r, f, g, "default applications clocks", *dmem))
                        continue;
                result_evidence(r, "source", "nvmlDeviceGetApplicationsClock, nvmlDeviceGetDefaultApplicationsClock");
                result_observed(r, "graphics %u MHz, memory %u MHz", sm->v, mem->v);
                if (sm->v != dsm->v || mem->v != dmem->v) {
                        result_status(r, STATUS_WARN, "applications clocks of %s are set to graphics %u MHz, memory %u "
                                                      "MHz instead of the defaults %u/%u MHz",
                                      desc, sm->v, mem->v, dsm->v, dmem->v);
                        result_remedy(r, "If nobody set them on purpose, reset them: `gpuvet tune apply --set "
                                         "gpu.app_clocks=default` (every GPU; `gpuvet tune revert` undoes it) or "
                                         "`nvidia-smi -rac -i %u`.",
                                      g->index);
                        continue;
                }
                result_status(r, STATUS_PASS, "applications clocks at their defaults");
        }
}

/* ---- gpu.mig --------------------------------------------------------------------------- */

static void run_mig(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (nvml_unavailable(self, f, rep))
                return;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                char desc[NV_DESC_MAX];
                struct result *r = nv_result(self, f, rep, g, desc);
                result_expected(r, "MIG mode as configured: no change pending; instances created when enabled");
                if (UNUSABLE(r, f, g, "MIG mode", g->mig_mode_current))
                        continue;
                result_evidence(r, "source", "nvmlDeviceGetMigMode");
                bool cur = g->mig_mode_current.v == NVML_FEATURE_ENABLED;
                enum policy_mig want_mig = f->policy ? f->policy->mig : POLICY_MIG_UNSET;
                bool have_pending = nv_ok(g->mig_mode_pending);
                bool pend = have_pending ? g->mig_mode_pending.v == NVML_FEATURE_ENABLED : cur;
                bool have_count = cur && nv_ok(g->mig_device_count);
                char count[48] = "";
                if (have_count)
                        snprintf(count, sizeof(count), ", %u MIG device%s", g->mig_device_count.v,
                                 g->mig_device_count.v == 1 ? "" : "s");
                result_observed(r, "%s%s%s%s", cur ? "enabled" : "disabled", pend != cur ? ", " : "",
                                pend != cur ? (pend ? "enabled pending" : "disabled pending") : "", count);
                if (have_count)
                        result_evidence(r, "mig_devices", "nvmlDeviceGetMigDeviceHandleByIndex (max %u)",
                                        nv_ok(g->mig_max_devices) ? g->mig_max_devices.v : 0);
                if (pend != cur) {
                        result_status(r, STATUS_WARN, "MIG mode of %s is %s with %s pending: reset the GPU to apply",
                                      desc, cur ? "enabled" : "disabled", pend ? "enabled" : "disabled");
                        result_remedy(r, "Reset the GPU with no process using it (`nvidia-smi -r -i %u`) or reboot.",
                                      g->index);
                        continue;
                }
                if ((want_mig == POLICY_MIG_ENABLED && !cur) || (want_mig == POLICY_MIG_DISABLED && cur)) {
                        result_status(r, STATUS_FAIL, "MIG is %s on %s; the site policy expects it %s", cur ? "enabled" : "disabled",
                                      desc, cur ? "disabled" : "enabled");
                        result_evidence(r, "policy", "%s:%u (expect.mig)", f->policy->path, f->policy->expect_line);
                        result_remedy(r, "Set it as the site expects: `nvidia-smi -i %u -mig %d`, then reset the GPU "
                                         "(`nvidia-smi -r -i %u`)%s.",
                                      g->index, cur ? 0 : 1, g->index,
                                      cur ? "" : " and create the instances the site's MIG layout names");
                        continue;
                }
                /* An admission gate: a job placed here finds no CUDA device at all, unless a MIG
                 * manager creates instances as jobs arrive. */
                if (cur && have_count && g->mig_device_count.v == 0 && want_mig == POLICY_MIG_MANAGED) {
                        result_status(r, STATUS_PASS, "MIG enabled with no instance yet: the site policy leaves "
                                                      "instances to its MIG manager");
                        result_evidence(r, "policy", "%s:%u (expect.mig: managed)", f->policy->path,
                                        f->policy->expect_line);
                        continue;
                }
                if (cur && have_count && g->mig_device_count.v == 0) {
                        result_status(r, STATUS_FAIL, "MIG is enabled on %s but no instance exists: CUDA sees no device "
                                                      "on it",
                                      desc);
                        result_remedy(r, "Create GPU and compute instances (`nvidia-smi mig -i %u -cgi <profiles> -C`, "
                                         "or your MIG manager), or disable MIG (`nvidia-smi -i %u -mig 0`).",
                                      g->index, g->index);
                        continue;
                }
                if (cur && !have_count && g->mig_device_count.state != NV_UNREAD &&
                    UNUSABLE(r, f, g, "MIG devices", g->mig_device_count))
                        continue;
                result_status(r, STATUS_PASS, "MIG %s%s", cur ? "enabled" : "disabled", count);
        }
}

/* ---- descriptors --------------------------------------------------------------------- */

#define GPU_CHECK(cname, cid, ctitle, crun)                                                             \
        const struct check_info check_gpu_##cname = {                                                   \
                .id = "gpu." cid, .category = "gpu", .level = LEVEL_QUICK, .title = ctitle, .run = crun, \
                .needs = CHECK_NEEDS_NVML,                                                              \
        }

GPU_CHECK(nvml, "nvml", "NVML loads and sees every NVIDIA GPU on the PCI bus", run_nvml);
GPU_CHECK(driver_compat, "driver_compat", "The driver NVML reports supports each GPU's architecture",
          run_driver_compat);
GPU_CHECK(persistence_mode, "persistence_mode", "Persistence mode is on for every GPU", run_persistence_mode);
GPU_CHECK(ecc_mode, "ecc_mode", "ECC is enabled on datacenter GPUs, with no change pending", run_ecc_mode);
GPU_CHECK(ecc_errors, "ecc_errors", "No uncorrectable ECC errors since the driver loaded", run_ecc_errors);
GPU_CHECK(memory_health, "memory_health", "No pending row remap or page retirement, no remap failure",
          run_memory_health);
GPU_CHECK(temperature, "temperature", "Each GPU runs below its slowdown temperature (or T.Limit) with margin",
          run_temperature);
GPU_CHECK(memory_temperature, "memory_temperature", "GPU memory (HBM) runs below its temperature limit with margin",
          run_memory_temperature);
GPU_CHECK(clock_events, "clock_events", "No hardware, thermal or power-brake clock slowdown active",
          run_clock_events);
GPU_CHECK(pcie_nvml, "pcie_nvml", "The PCIe link NVML reports is at its maximum, without replays", run_pcie_nvml);
GPU_CHECK(nvlink, "nvlink", "Every NVLink is up and error-free (boards with NVLink)", run_nvlink);
GPU_CHECK(fabric_manager, "fabric_manager",
          "NVLink fabric: the Fabric Manager (NVSwitch) or IMEX (multi-node tray) runs; each GPU joined, healthy",
          run_fabric_manager);
GPU_CHECK(power_limit, "power_limit", "The power limit is not capped below the default", run_power_limit);
GPU_CHECK(app_clocks, "app_clocks", "Applications clocks are not locked away from their defaults", run_app_clocks);
GPU_CHECK(mig, "mig", "MIG mode as configured: nothing pending, instances created", run_mig);

const struct check_info check_gpu_inforom = {
        .id = "gpu.inforom",
        .category = "gpu",
        .level = LEVEL_QUICK,
        .title = "InfoROM valid; VBIOS and InfoROM versions alike across the node's GPUs of a model",
        .run = run_inforom,
        .needs = CHECK_NEEDS_NVML,
};

const struct check_info check_gpu_row_remapper = {
        .id = "gpu.row_remapper",
        .category = "gpu",
        .level = LEVEL_QUICK,
        .title = "Every memory bank has spare rows left for remapping (row-remapper histogram)",
        .run = run_row_remapper,
        .needs = CHECK_NEEDS_NVML,
};

const struct check_info check_gpu_graphics_processes = {
        .id = "gpu.graphics_processes",
        .category = "gpu",
        .level = LEVEL_QUICK,
        .title = "No graphics process (display server, desktop) on a compute GPU",
        .run = run_graphics_processes,
        .needs = CHECK_NEEDS_NVML,
};

const struct check_info check_gpu_recovery_action = {
        .id = "gpu.recovery_action",
        .category = "gpu",
        .level = LEVEL_QUICK,
        .title = "The driver asks for no recovery of the GPU (reset, reboot, drain)",
        .run = run_recovery_action,
        .needs = CHECK_NEEDS_NVML,
};

/* iommu: whether an IOMMU is on and in which mode, judged by the node's role, and how
 * each GPU's IOMMU group is shared. See docs/checks/iommu.md. */
#include "checks/check.h"
#include "core/array.h"
#include "core/strbuf.h"
#include "core/strparse.h"

#include <stdio.h>
#include <string.h>

#define GROUPS_DIR "/sys/kernel/iommu_groups"
#define MAX_LISTED 8

static const char *kind_name(enum iommu_kind k) {
        switch (k) {
        case IOMMU_KIND_INTEL:
                return "Intel VT-d";
        case IOMMU_KIND_AMD:
                return "AMD-Vi";
        default:
                return "IOMMU";
        }
}

/* The IOMMU options of the command line, as written there ("intel_iommu=on iommu=pt"). */
static void cmdline_options(const char *cmdline, char *buf, size_t size) {
        static const char *const keys[] = {"intel_iommu", "amd_iommu", "iommu", "iommu.passthrough", "iommu.strict"};
        buf[0] = '\0';
        if (!cmdline) {
                snprintf(buf, size, "unknown (/proc/cmdline unreadable)");
                return;
        }
        for (size_t i = 0; i < ARRAY_COUNT(keys); i++) {
                char v[64];
                if (cmdline_get(cmdline, keys[i], v, sizeof(v)) == 0)
                        strbuf_appendf(buf, size, "%s%s%s%s", buf[0] ? " " : "", keys[i], v[0] ? "=" : "", v);
        }
        if (!buf[0])
                snprintf(buf, size, "no IOMMU options");
}

static bool cmdline_says_pt(const char *cmdline) {
        char v[64];
        if (!cmdline)
                return false;
        if (cmdline_get(cmdline, "iommu", v, sizeof(v)) == 0 && strcmp(v, "pt") == 0)
                return true;
        bool on;
        return cmdline_get(cmdline, "iommu.passthrough", v, sizeof(v)) == 0 && parse_bool(v, &on) == 0 && on;
}

enum dma_mode { DMA_MODE_PASSTHROUGH, DMA_MODE_TRANSLATED };

static bool type_translates(const char *type) {
        return strcmp(type, "DMA") == 0 || strcmp(type, "DMA-FQ") == 0;
}

/* The mode host-owned devices run in. The group "type" file (Linux >= 5.11) is the truth;
 * GPU groups are asked first, as they are what the mode costs. vfio-owned groups say
 * "unmanaged" and tell nothing about the default. Older kernels: the command line. */
static enum dma_mode dma_mode(const struct facts *f, char *how, size_t size) {
        const struct iommu_group *any = NULL;
        bool gpu_identity = false;
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct iommu_group *g = iommu_find_group(&f->iommu, gpu_pci(f, i)->iommu_group);
                if (!g)
                        continue;
                if (type_translates(g->type)) {
                        snprintf(how, size, "DMA translation (group %d type %s)", g->id, g->type);
                        return DMA_MODE_TRANSLATED;
                }
                if (strcmp(g->type, "identity") == 0 && !gpu_identity) {
                        gpu_identity = true;
                        snprintf(how, size, "passthrough (group %d type identity)", g->id);
                }
        }
        if (gpu_identity)
                return DMA_MODE_PASSTHROUGH;
        for (size_t i = 0; i < f->iommu.n_groups && !any; i++)
                if (type_translates(f->iommu.groups[i].type) || strcmp(f->iommu.groups[i].type, "identity") == 0)
                        any = &f->iommu.groups[i];
        if (any) {
                bool pt = strcmp(any->type, "identity") == 0;
                snprintf(how, size, "%s (group %d type %s)", pt ? "passthrough" : "DMA translation", any->id, any->type);
                return pt ? DMA_MODE_PASSTHROUGH : DMA_MODE_TRANSLATED;
        }
        if (cmdline_says_pt(f->host.cmdline)) {
                snprintf(how, size, "passthrough (iommu=pt on the command line)");
                return DMA_MODE_PASSTHROUGH;
        }
        snprintf(how, size, "DMA translation (kernel default: no iommu=pt)");
        return DMA_MODE_TRANSLATED;
}

static void units_text(const struct iommu_facts *x, char *buf, size_t size) {
        if (x->n_units == 0)
                snprintf(buf, size, "no /sys/class/iommu units");
        else
                snprintf(buf, size, "%zu %s unit%s", x->n_units, kind_name(x->units[0].kind), x->n_units == 1 ? "" : "s");
        strbuf_appendf(buf, size, ", %zu group%s", x->n_groups, x->n_groups == 1 ? "" : "s");
}

static void remedy_enable_iommu(const struct facts *f, struct result *r) {
        bool amd = strcmp(f->host.cpu_vendor, "AuthenticAMD") == 0;
        if (amd)
                result_remedy(r,
                              "Enable IOMMU (AMD-Vi) in the BIOS and remove amd_iommu=off/iommu=off from the kernel "
                              "command line (AMD-Vi is on by default); keep iommu=pt for host devices: "
                              "`sudo grubby --update-kernel=ALL --args=iommu=pt` or edit GRUB_CMDLINE_LINUX in "
                              "/etc/default/grub and run `sudo update-grub`; reboot.");
        else
                result_remedy(r,
                              "Enable VT-d in the BIOS and add intel_iommu=on iommu=pt to the kernel command line: "
                              "`sudo grubby --update-kernel=ALL --args=\"intel_iommu=on iommu=pt\"` or append them to "
                              "GRUB_CMDLINE_LINUX in /etc/default/grub and run `sudo update-grub`; reboot.");
}

static void run_enabled(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct iommu_facts *x = &f->iommu;
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", "/sys/class/iommu, " GROUPS_DIR "/*/type, /proc/cmdline");
        if (x->groups_errno || x->units_errno) {
                result_status(r, STATUS_ERROR, "cannot list %s: %s", x->groups_errno ? GROUPS_DIR : "/sys/class/iommu",
                              strerror(x->groups_errno ? x->groups_errno : x->units_errno));
                return;
        }
        char opts[256], units[128], how[128];
        cmdline_options(f->host.cmdline, opts, sizeof(opts));
        units_text(x, units, sizeof(units));
        result_evidence(r, "cmdline", "%s", opts);
        bool vfio_host = iommu_count_vfio_gpus(&f->gpus, &f->pci) > 0;
        bool on = iommu_active(x);

        if (vfio_host) {
                result_expected(r, "IOMMU on (GPUs bound to vfio-pci need it)");
                if (!on) {
                        result_observed(r, "off: %s; cmdline: %s", units, opts);
                        result_status(r, STATUS_FAIL, "IOMMU off on a passthrough host: vfio-pci cannot isolate its GPUs");
                        remedy_enable_iommu(f, r);
                        return;
                }
                (void)dma_mode(f, how, sizeof(how));
                result_observed(r, "on: %s; host devices in %s; cmdline: %s", units, how, opts);
                result_status(r, STATUS_PASS, "IOMMU on, as a passthrough host needs");
                return;
        }
        result_expected(r, "IOMMU off, or on with iommu=pt (passthrough) for host-owned GPUs");
        if (!on) {
                result_observed(r, "off: %s; cmdline: %s", units, opts);
                if (f->virt.is_vm) {
                        result_status(r, STATUS_SKIP, "%s guest without a virtual IOMMU: DMA isolation is the host's job",
                                      f->virt.hypervisor);
                        return;
                }
                result_status(r, STATUS_PASS, "IOMMU off: GPU DMA is not translated (no isolation, full bandwidth)");
                return;
        }
        enum dma_mode mode = dma_mode(f, how, sizeof(how));
        result_observed(r, "on: %s; %s; cmdline: %s", units, how, opts);
        if (mode == DMA_MODE_PASSTHROUGH) {
                result_status(r, STATUS_PASS, "IOMMU on in passthrough mode: GPU DMA bypasses translation");
                return;
        }
        if (f->gpus.n == 0) {
                result_status(r, STATUS_PASS, "IOMMU translates DMA; no NVIDIA GPU here pays for it");
                return;
        }
        result_status(r, STATUS_WARN,
                      "IOMMU translates GPU DMA: lowers host<->GPU bandwidth and can break GPUDirect RDMA/P2P");
        result_remedy(r,
                      "Put host-owned devices in passthrough mode, keeping the IOMMU for VFIO: "
                      "`sudo grubby --update-kernel=ALL --args=iommu=pt` (RHEL, Fedora) or append iommu=pt to "
                      "GRUB_CMDLINE_LINUX in /etc/default/grub and run `sudo update-grub` (Debian, Ubuntu); reboot.");
}

CHECK_INFO(iommu_enabled, "iommu", "iommu.enabled", LEVEL_QUICK, NEED_IOMMU | NEED_VIRT,
           "IOMMU state fits the node's role (off or iommu=pt for GPU work, on for passthrough)",
           run_enabled);

/* What a group member is, seen from the GPU; unrelated means it breaks isolation. */
static const char *member_role(const struct facts *f, const struct pci_dev *gpu, const char *addr, bool *unrelated) {
        const struct pci_dev *m = pci_find(&f->pci, addr);
        *unrelated = false;
        /* Same domain:bus:device: the GPU's own functions (HD audio .1, USB-C .2, UCSI .3). */
        if (strncmp(addr, gpu->addr, 10) == 0)
                return "same device";
        if (m && pci_is_bridge(m))
                return "bridge";
        *unrelated = true;
        if (!m)
                return "unknown device";
        if (pci_is_nvidia_gpu(&f->pci, m))
                return "GPU";
        if (pci_is_nvswitch(m))
                return "NVSwitch";
        if (pci_is_network(m))
                return "network";
        if (pci_class_sub(m) == 0x0108)
                return "NVMe";
        return "other endpoint";
}

static void run_gpu_groups(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (check_skip_without_gpus(self, f, rep))
                return;
        const struct iommu_facts *x = &f->iommu;
        if (x->groups_errno || x->n_groups == 0) {
                struct result *r = result_new(rep, self, "host");
                result_evidence(r, "source", GROUPS_DIR);
                if (x->groups_errno)
                        result_status(r, STATUS_ERROR, "cannot list " GROUPS_DIR ": %s", strerror(x->groups_errno));
                else
                        result_status(r, STATUS_SKIP, "no IOMMU groups in " GROUPS_DIR " (IOMMU off)");
                return;
        }
        bool vfio_host = iommu_count_vfio_gpus(&f->gpus, &f->pci) > 0;
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct pci_dev *d = gpu_pci(f, i);
                struct result *r = result_new(rep, self, d->addr);
                result_evidence(r, "source", "%s/iommu_group", d->sysfs_path);
                if (d->iommu_group < 0) {
                        result_status(r, STATUS_SKIP, "%s has no IOMMU group (no iommu_group link)", d->addr);
                        continue;
                }
                const struct iommu_group *g = iommu_find_group(x, d->iommu_group);
                result_evidence(r, "group", GROUPS_DIR "/%d/devices", d->iommu_group);
                if (!g || !g->devices) {
                        result_status(r, STATUS_ERROR, "cannot list the members of IOMMU group %d (" GROUPS_DIR "/%d/devices)",
                                      d->iommu_group, d->iommu_group);
                        continue;
                }
                char members[512] = "";
                size_t n_listed = 0, n_unrelated = 0, n_more = 0;
                for (char **m = g->devices; *m; m++) {
                        if (strcmp(*m, d->addr) == 0)
                                continue;
                        bool unrelated;
                        const char *role = member_role(f, d, *m, &unrelated);
                        n_unrelated += unrelated;
                        /* Name the devices that break isolation: those are the ones to move. */
                        const struct pci_dev *md = pci_find(&f->pci, *m);
                        const char *name = unrelated && md && md->name[0] ? md->name : NULL;
                        if (n_listed++ < MAX_LISTED)
                                strbuf_appendf(members, sizeof(members), "%s%s (%s%s%s)", members[0] ? ", " : "", *m, role,
                                        name ? ": " : "", name ? name : "");
                        else
                                n_more++;
                }
                if (n_more)
                        strbuf_appendf(members, sizeof(members), " and %zu more", n_more);
                result_observed(r, "group %d: %s", g->id, n_listed ? members : "GPU alone");
                result_expected(r, "group %d holds only the GPU, its own functions and PCI bridges", g->id);
                if (n_unrelated == 0) {
                        result_status(r, STATUS_PASS, "GPU is isolated in IOMMU group %d", g->id);
                        continue;
                }
                if (vfio_host) {
                        result_status(r, STATUS_FAIL,
                                      "IOMMU group %d also holds %zu unrelated device%s: the GPU cannot be passed "
                                      "through alone",
                                      g->id, n_unrelated, n_unrelated == 1 ? "" : "s");
                        result_remedy(r,
                                      "Move the GPU to a slot under a root port or switch port with ACS, or enable "
                                      "ACS in the BIOS (often \"PCIe ACS Control\" under IIO/PCIe settings); "
                                      "otherwise every device in group %d must go to the same VM.",
                                      g->id);
                        continue;
                }
                /* Outside passthrough, groups only describe isolation: with ACS off (what GPU
                 * P2P on bare metal wants) sharing is expected and costs nothing. */
                result_status(r, STATUS_PASS,
                              "IOMMU group %d shared with %zu unrelated device%s: harmless without passthrough, "
                              "but this GPU could not be passed through alone",
                              g->id, n_unrelated, n_unrelated == 1 ? "" : "s");
        }
}

CHECK_INFO(iommu_gpu_groups, "iommu", "iommu.gpu_groups", LEVEL_QUICK, NEED_IOMMU,
           "Each GPU's IOMMU group holds no unrelated device",
           run_gpu_groups);

/* passthrough: a host that hands GPUs to VMs through vfio-pci, and a guest that received
 * them. See docs/checks/passthrough.md. */
#include "checks/check.h"
#include "core/strbuf.h"

#include <stdio.h>
#include <string.h>

#define GROUPS_DIR "/sys/kernel/iommu_groups"

static void worsen(enum status *worst, enum status s) {
        if (s == STATUS_FAIL || (s == STATUS_WARN && *worst == STATUS_PASS))
                *worst = s;
}

static bool has_x86_iommu(const struct iommu_facts *x) {
        for (size_t i = 0; i < x->n_units; i++)
                if (x->units[i].kind != IOMMU_KIND_OTHER)
                        return true;
        return false;
}

/* Intel units whose ecap says the hardware cannot remap interrupts; 0 when unknown. */
static size_t intel_units_without_ir(const struct iommu_facts *x) {
        size_t n = 0;
        for (size_t i = 0; i < x->n_units; i++)
                if (x->units[i].kind == IOMMU_KIND_INTEL && x->units[i].have_ecap &&
                    !(x->units[i].ecap & IOMMU_INTEL_ECAP_IR))
                        n++;
        return n;
}

static const char *tristate_yn(enum iommu_tristate t) {
        return t == IOMMU_YES ? "Y" : t == IOMMU_NO ? "N" : "unknown";
}

static void host_aspects(const struct check_info *self, const struct facts *f, size_t n_vfio, struct report *rep) {
        const struct iommu_facts *x = &f->iommu;
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source",
                        "/proc/modules, /sys/module/{vfio,vfio_pci,vfio_iommu_type1,iommufd}, /sys/class/iommu, "
                        GROUPS_DIR ", /proc/interrupts, /sys/module/vfio_iommu_type1/parameters/allow_unsafe_interrupts");
        enum status worst = STATUS_PASS;
        char problems[512] = "", remedy[1024] = "", observed[512] = "";

        char missing[96] = "";
        if (!x->mod_vfio)
                strbuf_appendf(missing, sizeof(missing), "%svfio", missing[0] ? " " : "");
        if (!x->mod_vfio_pci)
                strbuf_appendf(missing, sizeof(missing), "%svfio_pci", missing[0] ? " " : "");
        /* Since Linux 6.2 iommufd can stand in for the type1 container backend. */
        if (!x->mod_vfio_iommu_type1 && !x->mod_iommufd)
                strbuf_appendf(missing, sizeof(missing), "%svfio_iommu_type1", missing[0] ? " " : "");
        strbuf_appendf(observed, sizeof(observed), "vfio modules: %s", missing[0] ? "missing " : "present");
        if (missing[0]) {
                strbuf_appendf(observed, sizeof(observed), "%s", missing);
                worsen(&worst, STATUS_FAIL);
                strbuf_appendf(problems, sizeof(problems), "%svfio modules missing (%s)", problems[0] ? "; " : "", missing);
                strbuf_appendf(remedy, sizeof(remedy),
                        "%sLoad them now with `sudo modprobe -a vfio vfio_pci vfio_iommu_type1` and at boot with "
                        "`printf 'vfio\\nvfio_pci\\nvfio_iommu_type1\\n' | sudo tee /etc/modules-load.d/vfio.conf`.",
                        remedy[0] ? " " : "");
        }

        bool on = iommu_active(x);
        strbuf_appendf(observed, sizeof(observed), "; IOMMU %s (%zu unit%s, %zu group%s)", on ? "on" : "off", x->n_units,
                x->n_units == 1 ? "" : "s", x->n_groups, x->n_groups == 1 ? "" : "s");
        if (!on) {
                worsen(&worst, STATUS_FAIL);
                strbuf_appendf(problems, sizeof(problems), "%sIOMMU off", problems[0] ? "; " : "");
                strbuf_appendf(remedy, sizeof(remedy),
                        "%sEnable VT-d/AMD-Vi in the BIOS and add intel_iommu=on iommu=pt (Intel) to the kernel "
                        "command line (`sudo grubby --update-kernel=ALL --args=\"intel_iommu=on iommu=pt\"`), reboot.",
                        remedy[0] ? " " : "");
        }

        enum iommu_tristate unsafe = x->allow_unsafe_interrupts;
        if (!has_x86_iommu(x)) {
                strbuf_appendf(observed, sizeof(observed), "; interrupt remapping not judged (no VT-d/AMD-Vi unit)");
        } else {
                const char *ir = x->irq_remapping == IOMMU_YES  ? "on"
                                 : x->irq_remapping == IOMMU_NO ? "off"
                                                                : "unknown (/proc/interrupts unreadable)";
                strbuf_appendf(observed, sizeof(observed), "; interrupt remapping %s", ir);
                if (x->irq_remapping == IOMMU_NO && unsafe != IOMMU_YES) {
                        worsen(&worst, STATUS_FAIL);
                        strbuf_appendf(problems, sizeof(problems),
                                "%sinterrupt remapping off: vfio refuses to hand devices to a VM", problems[0] ? "; " : "");
                        if (intel_units_without_ir(x))
                                strbuf_appendf(remedy, sizeof(remedy),
                                        "%sThe VT-d hardware lacks interrupt remapping (ecap IR bit clear): only "
                                        "`options vfio_iommu_type1 allow_unsafe_interrupts=1` in "
                                        "/etc/modprobe.d/vfio.conf makes it work, at the cost of guest isolation.",
                                        remedy[0] ? " " : "");
                        else
                                strbuf_appendf(remedy, sizeof(remedy),
                                        "%sEnable x2APIC and interrupt remapping in the BIOS and remove intremap=off / "
                                        "nointremap from the kernel command line; reboot.",
                                        remedy[0] ? " " : "");
                } else if (x->irq_remapping == IOMMU_NO) {
                        worsen(&worst, STATUS_WARN);
                        strbuf_appendf(problems, sizeof(problems),
                                "%sinterrupt remapping off, accepted only through allow_unsafe_interrupts: guests can "
                                "inject interrupts into the host",
                                problems[0] ? "; " : "");
                        strbuf_appendf(remedy, sizeof(remedy),
                                "%sEnable interrupt remapping (x2APIC, VT-d/AMD-Vi in the BIOS; no intremap=off) and "
                                "drop allow_unsafe_interrupts from /etc/modprobe.d.",
                                remedy[0] ? " " : "");
                }
        }
        strbuf_appendf(observed, sizeof(observed), "; allow_unsafe_interrupts=%s", tristate_yn(unsafe));
        if (unsafe == IOMMU_YES && x->irq_remapping != IOMMU_NO) {
                worsen(&worst, STATUS_WARN);
                strbuf_appendf(problems, sizeof(problems), "%sallow_unsafe_interrupts=Y: vfio accepts devices without "
                        "interrupt isolation", problems[0] ? "; " : "");
                strbuf_appendf(remedy, sizeof(remedy),
                        "%sRemove `allow_unsafe_interrupts=1` from /etc/modprobe.d/*.conf and reload vfio_iommu_type1 "
                        "(or reboot).",
                        remedy[0] ? " " : "");
        }

        result_observed(r, "%s", observed);
        result_expected(r, "vfio, vfio_pci, vfio_iommu_type1 (or iommufd) present; IOMMU on; interrupt remapping on; "
                           "allow_unsafe_interrupts=N");
        if (worst == STATUS_PASS) {
                result_status(r, STATUS_PASS, "passthrough host ready: %zu GPU%s on vfio-pci, vfio and IOMMU in place",
                              n_vfio, n_vfio == 1 ? "" : "s");
                return;
        }
        result_status(r, worst, "passthrough host: %s", problems);
        result_remedy(r, "%s", remedy);
}

/* vfio can own a group only when each member is on vfio-pci or pci-stub, has no driver,
 * or is a bridge (drivers/vfio/group.c, vfio_dev_viable). */
static bool member_viable(const struct facts *f, const char *addr, const char **driver) {
        const struct pci_dev *m = pci_find(&f->pci, addr);
        *driver = m ? m->driver : "unknown";
        if (!m)
                return false;
        return pci_is_bridge(m) || !m->driver[0] || strcmp(m->driver, "vfio-pci") == 0 ||
               strcmp(m->driver, "pci-stub") == 0;
}

static void gpu_group(const struct check_info *self, const struct facts *f, const struct pci_dev *d, struct report *rep) {
        struct result *r = result_new(rep, self, d->addr);
        result_evidence(r, "source", "%s/iommu_group", d->sysfs_path);
        result_expected(r, "every device of the GPU's IOMMU group on vfio-pci, unbound, or a bridge");
        if (d->iommu_group < 0) {
                result_observed(r, "no IOMMU group");
                result_status(r, STATUS_FAIL, "%s is bound to vfio-pci but has no IOMMU group", d->addr);
                result_remedy(r, "Turn the IOMMU on (see iommu.enabled) and reboot; vfio-pci needs an IOMMU group.");
                return;
        }
        const struct iommu_group *g = iommu_find_group(&f->iommu, d->iommu_group);
        if (!g || !g->devices) {
                result_status(r, STATUS_ERROR, "cannot list the members of IOMMU group %d (" GROUPS_DIR "/%d/devices)",
                              d->iommu_group, d->iommu_group);
                return;
        }
        result_evidence(r, "group", GROUPS_DIR "/%d/devices", g->id);
        char bad[384] = "", rebind[512] = "";
        size_t n_bad = 0, n_members = 0;
        for (char **m = g->devices; *m; m++) {
                n_members++;
                const char *driver;
                if (member_viable(f, *m, &driver))
                        continue;
                n_bad++;
                strbuf_appendf(bad, sizeof(bad), "%s%s on %s", bad[0] ? ", " : "", *m, driver);
                strbuf_appendf(rebind, sizeof(rebind), "%s`sudo driverctl set-override %s vfio-pci`", rebind[0] ? ", " : "", *m);
        }
        if (n_bad == 0) {
                result_observed(r, "group %d: %zu device%s, all viable", g->id, n_members, n_members == 1 ? "" : "s");
                result_status(r, STATUS_PASS, "IOMMU group %d of %s is clean for passthrough", g->id, d->addr);
                return;
        }
        result_observed(r, "group %d: %s", g->id, bad);
        result_status(r, STATUS_FAIL, "IOMMU group %d of %s holds %zu device%s on a host driver: the VM cannot start",
                      g->id, d->addr, n_bad, n_bad == 1 ? "" : "s");
        result_remedy(r,
                      "Bind them to vfio-pci as well: %s (or vfio-pci.ids=<vendor:device> on the kernel command "
                      "line). A NIC or disk there must not go to the VM: move the GPU to a slot with ACS.",
                      rebind);
}

static void run_host(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (check_skip_without_gpus(self, f, rep))
                return;
        size_t n_vfio = iommu_count_vfio_gpus(&f->gpus, &f->pci);
        if (n_vfio == 0) {
                struct result *r = result_new(rep, self, "host");
                result_evidence(r, "source", "/sys/bus/pci/devices/*/driver");
                result_status(r, STATUS_SKIP, "no GPU bound to vfio-pci: not a passthrough host");
                return;
        }
        host_aspects(self, f, n_vfio, rep);
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct pci_dev *d = gpu_pci(f, i);
                if (strcmp(d->driver, "vfio-pci") == 0)
                        gpu_group(self, f, d, rep);
        }
}

CHECK_INFO(passthrough_host, "passthrough", "passthrough.host", LEVEL_QUICK, NEED_IOMMU,
           "A host passing GPUs to VMs has vfio, an IOMMU, interrupt remapping and clean groups",
           run_host);

static void run_guest(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct virt_facts *v = &f->virt;
        struct result *r = result_new(rep, self, "host");
        if (!v->is_vm) {
                result_evidence(r, "source", "/proc/cpuinfo, /sys/class/dmi/id, /sys/hypervisor/type");
                result_status(r, STATUS_SKIP, "not a virtual machine (no hypervisor CPU flag, VM DMI vendor or Xen)");
                return;
        }
        result_evidence(r, "source", "%s", v->source);
        result_evidence(r, "hypervisor", "%s", v->hypervisor);
        if (f->gpus.n == 0) {
                result_status(r, STATUS_SKIP, "%s guest with no NVIDIA GPU passed through (a CPU-only VM)", v->hypervisor);
                return;
        }
        size_t n_nolink = 0;
        for (size_t i = 0; i < f->gpus.n; i++)
                n_nolink += !gpu_pci(f, i)->have_link;
        result_observed(r, "%s guest, %zu GPU%s passed through", v->hypervisor, f->gpus.n, f->gpus.n == 1 ? "" : "s");
        result_expected(r, "NVIDIA GPUs visible in the guest");
        if (n_nolink)
                result_status(r, STATUS_PASS,
                              "%s guest with %zu GPU%s; %zu without PCIe link attributes, normal behind an emulated "
                              "root port",
                              v->hypervisor, f->gpus.n, f->gpus.n == 1 ? "" : "s", n_nolink);
        else
                result_status(r, STATUS_PASS, "%s guest with %zu GPU%s passed through", v->hypervisor, f->gpus.n,
                              f->gpus.n == 1 ? "" : "s");
}

CHECK_INFO(passthrough_guest, "passthrough", "passthrough.guest", LEVEL_QUICK, NEED_VIRT,
           "In a VM: the hypervisor and the GPUs passed through",
           run_guest);

/* NVIDIA's guide to GPUDirect RDMA in VMs (AI Enterprise, "Optimizing VM configuration",
 * appendix "ATS and ACS configuration"): for full bandwidth the NIC passed to the VM needs ATS,
 * which a ConnectX exposes only with ATS_ENABLED set in its firmware. Judged on the host, where
 * the NIC's config space is the real one. */
static void run_nic_ats(const struct check_info *self, const struct facts *f, struct report *rep) {
        size_t judged = 0;
        for (size_t i = 0; i < f->pci.n; i++) {
                const struct pci_dev *d = &f->pci.devs[i];
                if (!pci_is_mellanox_nic(d) || strcmp(d->driver, "vfio-pci") != 0)
                        continue;
                judged++;
                struct result *r = result_new(rep, self, d->addr);
                result_evidence(r, "source", "/sys/bus/pci/devices/%s/config (extended capability 0x000f)", d->addr);
                result_expected(r, "the ATS capability, so GPUDirect RDMA in the VM runs at full bandwidth");
                if (d->ats == PCI_ATS_UNKNOWN) {
                        result_status(r, STATUS_SKIP, "%s: config space past 256 bytes not readable (run as root)",
                                      d->addr);
                        continue;
                }
                if (d->ats == PCI_ATS_PRESENT) {
                        result_observed(r, "ATS capability present (its enable bit %s)", d->ats_enabled ? "set" : "clear");
                        result_status(r, STATUS_PASS, "%s on vfio-pci has ATS", d->addr);
                        continue;
                }
                result_observed(r, "no ATS capability");
                result_status(r, STATUS_WARN,
                              "%s on vfio-pci has no ATS: GPUDirect RDMA in the VM goes through the host's root "
                              "complex at reduced bandwidth",
                              d->addr);
                result_remedy(r, "Turn ATS on in the NIC's firmware on this host: `mst start`, then `mlxconfig -d "
                                 "%s set ATS_ENABLED=true`, and reboot the host (a VM reboot is not enough); "
                                 "leave ACS on the PCIe switches and root ports on the path set to allow ATS "
                                 "(see pcie.acs).",
                              d->addr);
        }
        if (!judged) {
                struct result *r = result_new(rep, self, "host");
                result_evidence(r, "source", "/sys/bus/pci/devices/*/driver");
                result_status(r, STATUS_SKIP, "no NVIDIA (Mellanox) NIC bound to vfio-pci");
        }
}

CHECK_INFO(passthrough_nic_ats, "passthrough", "passthrough.nic_ats", LEVEL_QUICK, NEED_PCI_TREE,
           "ConnectX/BlueField NICs passed to VMs expose ATS, for GPUDirect RDMA at full bandwidth", run_nic_ats);

/* pcie: the PCIe link of every GPU, AER error counters, ACS on the path to the root
 * port, and BAR sizes. */
#include "checks/check.h"
#include "checks/gpu/nvml_common.h"
#include "core/array.h"
#include "core/strbuf.h"
#include "core/strparse.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void gen_text(unsigned mts, char *buf, size_t size) {
        unsigned gen = pcie_gen_from_mts(mts);
        if (gen)
                snprintf(buf, size, "Gen%u", gen);
        else
                snprintf(buf, size, "%.1f GT/s", mts / 1000.0);
}

/* source_attr names the file the caller's result is judged from, for evidence. */
static bool skip_without_link(const struct check_info *self, const struct facts *f, size_t i, struct report *rep,
                              const char *source_attr) {
        const struct pci_dev *d = gpu_pci(f, i);
        const struct gpu_model *m = f->gpus.gpus[i].model;
        /* GH200, GB200, GB300: the GPU's data path to the CPU is NVLink-C2C; whatever PCIe
         * link sysfs shows is not what jobs use, so its width and speed are not judged. */
        if (m && strcmp(m->host_link, "c2c") == 0) {
                struct result *r = result_new(rep, self, d->addr);
                result_status(r, STATUS_SKIP, "%s reaches the CPU over NVLink-C2C, not PCIe", m->name);
                result_evidence(r, "host_link", "c2c (%s)", f->db ? f->db->source : "GPU table");
                return true;
        }
        if (d->have_link)
                return false;
        struct result *r = result_new(rep, self, d->addr);
        if (d->link_errno == ENODATA) {
                result_status(r, STATUS_ERROR, "%s of %s reads \"Unknown\": the link is down", d->link_bad_attr, d->addr);
                result_remedy(r,
                              "A GPU whose link is down has fallen off the bus: check `dmesg` for Xid 79 and PCIe "
                              "errors, reseat the GPU, and power-cycle the node (a reboot may not retrain it).");
        } else if (d->link_errno) {
                result_status(r, STATUS_ERROR, "cannot read %s of %s: %s", d->link_bad_attr, d->addr,
                              d->link_errno == EINVAL ? "not a link speed/width value" : strerror(d->link_errno));
                result_remedy(r, "Read it by hand: `cat %s/%s`; a garbled value points at the kernel or the capture.",
                              d->sysfs_path, d->link_bad_attr);
        } else {
                result_status(r, STATUS_SKIP, "sysfs shows no PCIe link attributes for %s (virtual or integrated device)",
                              d->addr);
        }
        result_evidence(r, "source", "%s/%s", d->sysfs_path, d->link_errno ? d->link_bad_attr : source_attr);
        return true;
}

/* What the slot can give the GPU: the lesser of the GPU's and its upstream port's maximum
 * (the port's max_link_* is the slot's wiring and generation). A port whose link cannot
 * be read, or no port at all (a root bus device, as in most VMs), leaves the GPU's own. */
struct link_cap {
        unsigned width, speed_mts;
        const struct pci_dev *port; /* NULL when the port told us nothing */
};

static struct link_cap slot_cap(const struct facts *f, const struct pci_dev *d) {
        struct link_cap c = {.width = d->max_width, .speed_mts = d->max_speed_mts, .port = NULL};
        if (d->parent < 0 || (size_t)d->parent >= f->pci.n)
                return c;
        const struct pci_dev *p = &f->pci.devs[d->parent];
        if (!p->have_link || !p->max_width || !p->max_speed_mts)
                return c;
        /* An emulated port (QEMU's pcie-root-port reports 2.5 GT/s x1 above a GPU training at
         * Gen5 x16) describes nothing real: a port slower or narrower than the link that
         * trained through it is not the slot's capability. */
        if (f->virt.is_vm || d->cur_width > p->max_width || d->cur_speed_mts > p->max_speed_mts)
                return c;
        c.port = p;
        if (p->max_width < c.width)
                c.width = p->max_width;
        if (p->max_speed_mts < c.speed_mts)
                c.speed_mts = p->max_speed_mts;
        return c;
}

static void link_evidence(struct result *r, const struct pci_dev *d, const struct link_cap *c, const char *attr) {
        char gpu_max[32];
        pcie_link_text(d->max_speed_mts, d->max_width, gpu_max, sizeof(gpu_max));
        result_evidence(r, "source", "%s/%s", d->sysfs_path, attr);
        result_evidence(r, "gpu_max", "%s", gpu_max);
        if (c->port) {
                char port_max[32];
                pcie_link_text(c->port->max_speed_mts, c->port->max_width, port_max, sizeof(port_max));
                result_evidence(r, "port_max", "%s (upstream port %s)", port_max, c->port->addr);
        }
}

/* A slot the site accepts as narrower or slower than the GPU (policy exceptions with
 * width or gen): judged as if that were the slot's capability, so the accepted link
 * passes and a link below it still does not. */
static const struct policy_exception *allowance(const struct check_info *self, const struct facts *f,
                                                const struct pci_dev *d) {
        const struct policy_exception *e = policy_exception_for(f->policy, self->id, d->addr);
        return e && (e->width || e->gen) ? e : NULL;
}

static void allowance_evidence(struct result *r, const struct facts *f, const struct policy_exception *e) {
        result_evidence(r, "policy", "%s:%u allows %s%u: %s", f->policy->path, e->line, e->width ? "x" : "Gen",
                        e->width ? e->width : e->gen, e->reason);
}

/* A GPU passed to a virtual machine narrower than the card: the guest sees neither the
 * host's slot nor its riser, and several cloud instance types wire their GPUs x8 by design,
 * so this is the platform's shape, not a seating fault: warn with the bandwidth it leaves
 * (a site can make it fail in its policy), never a physical remedy. */
static void judge_guest_width(struct result *r, const struct facts *f, const struct pci_dev *d, const char *cur) {
        unsigned mts = d->max_speed_mts;
        char gen[16];
        gen_text(mts, gen, sizeof(gen));
        result_evidence(r, "guest", "%s guest: the host's slot and riser are not visible",
                        f->virt.hypervisor[0] ? f->virt.hypervisor : "virtual machine");
        result_observed(r, "%s", cur);
        result_expected(r, "x%u (the GPU's own width; the platform decides what a guest gets)", d->max_width);
        result_status(r, STATUS_WARN,
                      "the GPU's link in this %s guest is x%u of the card's x%u (now %s): %.0f of %.0f GB/s per "
                      "direction at %s; the platform wires it so",
                      f->virt.hypervisor[0] ? f->virt.hypervisor : "VM", d->cur_width, d->max_width, cur,
                      pci_link_gbps(mts, d->cur_width), pci_link_gbps(mts, d->max_width), gen);
        result_remedy(r, "Nothing inside the VM changes the width: the instance type (or the host's slot) gives the "
                         "GPU x%u. If the instance type should give x%u, ask its provider or move to one that does; "
                         "if x%u is what the site bought, allow it in the site policy (a pcie.link_width "
                         "exception), or make it fail there (`checks: {pcie.link_width: fail}`).",
                      d->cur_width, d->max_width, d->cur_width);
}

static void run_link_width(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (check_skip_without_gpus(self, f, rep))
                return;
        for (size_t i = 0; i < f->gpus.n; i++) {
                if (skip_without_link(self, f, i, rep, "current_link_width"))
                        continue;
                const struct pci_dev *d = gpu_pci(f, i);
                struct link_cap c = slot_cap(f, d);
                const struct policy_exception *allowed = allowance(self, f, d);
                bool by_policy = allowed && allowed->width < c.width;
                if (by_policy)
                        c.width = allowed->width;
                struct result *r = result_new(rep, self, d->addr);
                char cur[32];
                pcie_link_text(d->cur_speed_mts, d->cur_width, cur, sizeof(cur));
                result_observed(r, "%s", cur);
                result_expected(r, "x%u%s", c.width,
                                by_policy ? " (allowed by site policy)" : c.width < d->max_width ? " (the slot's width)" : "");
                link_evidence(r, d, &c, "current_link_width");
                if (allowed)
                        allowance_evidence(r, f, allowed);
                if (by_policy && d->cur_width >= c.width) {
                        result_status(r, STATUS_PASS, "link at x%u of the GPU's x%u (now %s), allowed by site policy: %s",
                                      d->cur_width, d->max_width, cur, allowed->reason);
                        continue;
                }
                if (d->cur_width >= c.width && c.width >= d->max_width) {
                        result_status(r, STATUS_PASS, "link runs at its full width x%u (now %s)", d->max_width, cur);
                        continue;
                }
                if (f->virt.is_vm && d->cur_width < d->max_width) {
                        judge_guest_width(r, f, d, cur);
                        continue;
                }
                if (d->cur_width >= c.width) {
                        /* The slot, not the GPU's seating: wired narrower than the card. */
                        result_status(r, STATUS_WARN,
                                      "slot limits the GPU to x%u of its x%u (now %s): %u%% of the host bandwidth",
                                      c.width, d->max_width, cur, 100 * c.width / d->max_width);
                        result_remedy(r, "Move the GPU to an x%u slot, or check the BIOS bifurcation of port %s; "
                                         "a site that accepts this slot can allow it in its policy.",
                                      d->max_width, c.port ? c.port->addr : "above it");
                        continue;
                }
                /* Unlike speed, width does not drop to save power at idle: a narrow link
                 * is a seating, riser or slot problem. */
                result_status(r, STATUS_FAIL, "link trained at x%u of the x%u its slot gives (now %s): %u%% of the "
                                              "lanes are missing",
                              d->cur_width, c.width, cur, 100 * (c.width - d->cur_width) / c.width);
                result_remedy(r,
                              "Reseat the GPU at %s and inspect its riser/cable and slot; check the BIOS slot "
                              "bifurcation setting. Confirm with `lspci -vv -s %s` (LnkSta).",
                              d->addr, d->addr);
        }
}

CHECK_INFO(pcie_link_width, "pcie", "pcie.link_width", LEVEL_QUICK, NEED_VIRT | NEED_PCI_TREE,
           "Each GPU's PCIe link runs at its full width",
           run_link_width);

static void run_link_speed(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (check_skip_without_gpus(self, f, rep))
                return;
        for (size_t i = 0; i < f->gpus.n; i++) {
                if (skip_without_link(self, f, i, rep, "current_link_speed"))
                        continue;
                const struct pci_dev *d = gpu_pci(f, i);
                struct link_cap c = slot_cap(f, d);
                const struct policy_exception *allowed = allowance(self, f, d);
                static const unsigned gen_mts[] = {0, 2500, 5000, 8000, 16000, 32000, 64000};
                unsigned allowed_mts = allowed && allowed->gen < ARRAY_COUNT(gen_mts) ? gen_mts[allowed->gen] : 0;
                bool by_policy = allowed_mts && allowed_mts < c.speed_mts;
                if (by_policy)
                        c.speed_mts = allowed_mts;
                struct result *r = result_new(rep, self, d->addr);
                char cur[32], max[32], gpu_gen[32];
                pcie_link_text(d->cur_speed_mts, d->cur_width, cur, sizeof(cur));
                pcie_link_text(c.speed_mts, c.width, max, sizeof(max));
                pcie_link_text(d->max_speed_mts, d->max_width, gpu_gen, sizeof(gpu_gen));
                result_observed(r, "%s", cur);
                result_expected(r, "%s%s", max,
                                by_policy ? " (allowed by site policy)"
                                          : c.speed_mts < d->max_speed_mts ? " (the port's maximum)" : "");
                link_evidence(r, d, &c, "current_link_speed");
                if (allowed)
                        allowance_evidence(r, f, allowed);
                if (by_policy && d->cur_speed_mts >= c.speed_mts) {
                        result_status(r, STATUS_PASS, "link at %s, allowed by site policy: %s", cur, allowed->reason);
                        continue;
                }
                if (d->cur_speed_mts >= c.speed_mts && c.speed_mts >= d->max_speed_mts) {
                        result_status(r, STATUS_PASS, "link runs at its maximum speed (%s)", cur);
                        continue;
                }
                if (d->cur_speed_mts >= c.speed_mts) {
                        char port_gen[16], own_gen[16];
                        gen_text(c.speed_mts, port_gen, sizeof(port_gen));
                        gen_text(d->max_speed_mts, own_gen, sizeof(own_gen));
                        result_status(r, STATUS_WARN, "the port above allows %s: the %s GPU runs at %s", port_gen,
                                      own_gen, cur);
                        result_remedy(r, "The GPU (%s capable) sits under a slower port %s: move it to a slot of its "
                                         "own generation, or accept the limit in the site policy.",
                                      gpu_gen, c.port ? c.port->addr : "");
                        continue;
                }
                /* GPUs drop the link to Gen1 when idle to save power (nvidia-smi
                 * --help-query-gpu: the current generation "may be reduced when the GPU is not
                 * in use"): a finding only while the GPU works, or once the standard level
                 * measured it under load (pcie.link_under_load). */
                enum nv_activity activity = nv_gpu_activity(nvml_gpu_at(f, d->addr));
                result_evidence(r, "activity", "%s",
                                activity == NV_ACTIVITY_IDLE   ? "idle (NVML clock event reason GPU idle)"
                                : activity == NV_ACTIVITY_BUSY ? "busy (no GPU-idle clock event reason)"
                                                               : "unknown (NVML not read)");
                if (activity != NV_ACTIVITY_BUSY) {
                        result_status(r, STATUS_PASS,
                                      "link at %s below the %s its slot gives while the GPU is %s: normal power "
                                      "saving; the standard level judges it under load",
                                      cur, max, activity == NV_ACTIVITY_IDLE ? "idle" : "maybe idle");
                        continue;
                }
                result_status(r, STATUS_WARN,
                              "link at %s below the %s its slot gives while the GPU is busy; the standard level "
                              "confirms it under load",
                              cur, max);
                result_remedy(r,
                              "Run `gpuvet check --level standard` to measure the link under load; if it stays "
                              "below %s there, reseat the GPU and check BIOS PCIe speed settings.",
                              max);
        }
}

CHECK_INFO(pcie_link_speed, "pcie", "pcie.link_speed", LEVEL_QUICK, NEED_VIRT | NEED_NVML | NEED_PCI_TREE,
           "Each GPU's PCIe link runs at its maximum speed while it works",
           run_link_speed);

/* ---- AER, ACS and BAR1 (docs/checks/pcie.md) ---- */

#define MIB (UINT64_C(1) << 20)
#define GIB (UINT64_C(1) << 30)
/* The legacy BAR1 aperture that fits below 4 GiB: what a GPU gets without Above 4G
 * decoding / Resizable BAR. */
#define BAR1_LEGACY_BYTES (256 * MIB)
/* Bridges between a GPU and its root port: deeper PCIe switch cascades are not built. */
#define MAX_UPSTREAM 16

/* ACS control register bits (PCIe base spec 7.7.8.3). */
#define ACS_SV 0x0001 /* source validation */
#define ACS_TB 0x0002 /* translation blocking */
#define ACS_RR 0x0004 /* P2P request redirect */
#define ACS_CR 0x0008 /* P2P completion redirect */
#define ACS_UF 0x0010 /* upstream forwarding */
#define ACS_EC 0x0020 /* P2P egress control */
#define ACS_DT 0x0040 /* direct translated P2P */
/* The bits that send peer-to-peer traffic up to the root complex instead of across the switch. */
#define ACS_P2P_REDIRECT (ACS_RR | ACS_CR | ACS_EC)

/* The devices above d, nearest first (at most MAX_UPSTREAM); returns how many. */
static size_t upstream(const struct facts *f, const struct pci_dev *d, const struct pci_dev **ret) {
        size_t n = 0;
        for (int p = d->parent; p >= 0 && (size_t)p < f->pci.n && n < MAX_UPSTREAM; p = f->pci.devs[p].parent)
                ret[n++] = &f->pci.devs[p];
        return n;
}

/* Judge one device's counters into worst; a clean bridge is only counted, so observed
 * names the devices that logged something (a deep switch tree has five or more bridges). */
static void aer_judge(const struct pci_dev *d, const char *role, char *observed, size_t size, enum status *worst,
                      size_t *clean_bridges) {
        if (!d->have_aer)
                return;
        if (clean_bridges && !d->aer_correctable && !d->aer_nonfatal && !d->aer_fatal) {
                (*clean_bridges)++;
                return;
        }
        strbuf_appendf(observed, size, "%s%s %s: correctable %llu, non-fatal %llu, fatal %llu", observed[0] ? "; " : "", role,
                d->addr, (unsigned long long)d->aer_correctable, (unsigned long long)d->aer_nonfatal,
                (unsigned long long)d->aer_fatal);
        enum status s = STATUS_PASS;
        if (d->aer_fatal || d->aer_nonfatal)
                s = STATUS_FAIL;
        else if (d->aer_correctable)
                s = STATUS_WARN;
        if (s == STATUS_FAIL || (s == STATUS_WARN && *worst == STATUS_PASS))
                *worst = s;
}

static void run_aer(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (check_skip_without_gpus(self, f, rep))
                return;
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct pci_dev *d = gpu_pci(f, i);
                struct result *r = result_new(rep, self, d->addr);
                result_evidence(r, "source", "%s/aer_dev_{correctable,nonfatal,fatal}", d->sysfs_path);
                if (!d->have_aer) {
                        if (d->read_errno)
                                result_status(r, STATUS_ERROR, "cannot read the AER counters of %s: %s", d->addr,
                                              "unreadable or malformed sysfs attributes (aer_dev_*)");
                        else
                                result_status(r, STATUS_SKIP,
                                              "the kernel exposes no AER counters for %s (no aer_dev_* files: AER "
                                              "off, firmware-first error handling, a VM, or Linux < 4.17)",
                                              d->addr);
                        continue;
                }
                char observed[768] = "";
                enum status worst = STATUS_PASS;
                size_t clean_bridges = 0;
                aer_judge(d, "GPU", observed, sizeof(observed), &worst, NULL);
                const struct pci_dev *up[MAX_UPSTREAM];
                size_t n_up = upstream(f, d, up);
                for (size_t k = 0; k < n_up; k++)
                        aer_judge(up[k], "bridge", observed, sizeof(observed), &worst, &clean_bridges);
                if (clean_bridges)
                        strbuf_appendf(observed, sizeof(observed), "; %zu bridge%s above: no errors", clean_bridges,
                                clean_bridges == 1 ? "" : "s");
                result_observed(r, "%s", observed);
                result_expected(r, "0 errors of every kind since boot");
                switch (worst) {
                case STATUS_FAIL:
                        result_status(r, STATUS_FAIL, "uncorrectable PCIe errors logged on the path of %s", d->addr);
                        result_remedy(r,
                                      "Read the error types with `journalctl -k | grep -i aer` and `sudo lspci -vvv -s "
                                      "%s` (UESta); reseat the GPU and its riser/cable, update BIOS and GPU firmware, "
                                      "and replace the part if errors return after a reboot (counters reset at boot).",
                                      d->addr);
                        break;
                case STATUS_WARN:
                        result_status(r, STATUS_WARN,
                                      "correctable PCIe errors on the path of %s: retried in hardware, a rising "
                                      "count means a marginal link",
                                      d->addr);
                        result_remedy(r,
                                      "Compare the counts again after a load run (`gpuvet check --level standard`); if "
                                      "they grow, reseat the GPU and its riser/cable and check `sudo lspci -vvv -s %s` "
                                      "(CESta).",
                                      d->addr);
                        break;
                default:
                        result_status(r, STATUS_PASS, "no PCIe errors logged on the path of %s", d->addr);
                        break;
                }
        }
}

CHECK_INFO(pcie_aer, "pcie", "pcie.aer", LEVEL_QUICK, NEED_PCI_TREE,
           "No PCIe AER errors logged on each GPU and the bridges above it",
           run_aer);

static void acs_bits(uint16_t ctrl, char *buf, size_t size) {
        static const struct {
                uint16_t bit;
                const char *name;
        } bits[] = {{ACS_SV, "SV"}, {ACS_TB, "TB"}, {ACS_RR, "RR"}, {ACS_CR, "CR"},
                    {ACS_UF, "UF"}, {ACS_EC, "EC"}, {ACS_DT, "DT"}};
        buf[0] = '\0';
        for (size_t i = 0; i < ARRAY_COUNT(bits); i++)
                if (ctrl & bits[i].bit)
                        strbuf_appendf(buf, size, "%s%s", buf[0] ? " " : "", bits[i].name);
        if (!buf[0])
                snprintf(buf, size, "none");
}

static bool node_has_peers(const struct facts *f) {
        if (f->gpus.n >= 2)
                return true;
        for (size_t i = 0; i < f->pci.n; i++)
                if (pci_is_network(&f->pci.devs[i]))
                        return true;
        return false;
}

static void run_acs(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (check_skip_without_gpus(self, f, rep))
                return;
        bool vfio_host = iommu_count_vfio_gpus(&f->gpus, &f->pci) > 0;
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct pci_dev *d = gpu_pci(f, i);
                struct result *r = result_new(rep, self, d->addr);
                const struct pci_dev *up[MAX_UPSTREAM];
                size_t n_up = upstream(f, d, up);
                if (n_up == 0) {
                        result_evidence(r, "source", "%s", d->sysfs_path);
                        result_status(r, STATUS_SKIP, "no PCIe bridge above %s (root bus device)", d->addr);
                        continue;
                }
                result_evidence(r, "source", "%s/config", up[0]->sysfs_path);
                if (f->virt.is_vm && !vfio_host) {
                        result_status(r, STATUS_SKIP, "%s guest: the bridges above %s are emulated", f->virt.hypervisor,
                                      d->addr);
                        continue;
                }
                bool unknown = false;
                for (size_t k = 0; k < n_up; k++)
                        unknown |= up[k]->acs == PCI_ACS_UNKNOWN;
                if (unknown) {
                        result_status(r, STATUS_SKIP,
                                      "needs root to read PCIe extended config space (%s/config past 256 bytes)",
                                      up[0]->sysfs_path);
                        continue;
                }
                char observed[768] = "", redirecting[256] = "";
                size_t n_redirect = 0, n_open = 0;
                for (size_t k = 0; k < n_up; k++) {
                        char bits[64];
                        if (up[k]->acs == PCI_ACS_ABSENT) {
                                strbuf_appendf(observed, sizeof(observed), "%s%s no ACS", observed[0] ? "; " : "", up[k]->addr);
                                n_open++;
                                continue;
                        }
                        acs_bits(up[k]->acs_ctrl, bits, sizeof(bits));
                        strbuf_appendf(observed, sizeof(observed), "%s%s ACS ctrl 0x%04x (%s)", observed[0] ? "; " : "",
                                up[k]->addr, up[k]->acs_ctrl, bits);
                        /* On bare metal only switch ports matter: peers below one switch turn
                         * around there unless redirected, while traffic between root ports
                         * crosses the root complex whatever a root port's ACS says. */
                        bool root_port = up[k]->parent < 0;
                        if (!(up[k]->acs_ctrl & ACS_P2P_REDIRECT)) {
                                n_open++;
                        } else if (vfio_host || !root_port) {
                                strbuf_appendf(redirecting, sizeof(redirecting), "%s%s", redirecting[0] ? " " : "",
                                        up[k]->addr);
                                n_redirect++;
                        }
                }
                result_observed(r, "%s", observed);
                if (vfio_host) {
                        result_expected(r, "P2P redirect (RR CR) on every bridge above the GPU, for isolation");
                        if (n_open == 0)
                                result_status(r, STATUS_PASS, "ACS redirect on every bridge above %s, as VM isolation needs",
                                              d->addr);
                        else {
                                result_status(r, STATUS_WARN,
                                              "%zu bridge%s above %s without ACS redirect: the devices below are "
                                              "not isolated from each other",
                                              n_open, n_open == 1 ? "" : "s", d->addr);
                                result_remedy(r,
                                              "Enable ACS in the BIOS (\"PCIe ACS Control\" under IIO/PCIe settings) "
                                              "and keep the IOMMU on (the kernel then turns ACS on); see "
                                              "iommu.gpu_groups for the groups that result.");
                        }
                        continue;
                }
                /* A GPU on a root port has one bridge above it; behind a switch, three or more. */
                bool switched = n_up > 1;
                result_expected(r, "no P2P redirect (RR CR EC) on the %s above the GPU (bare metal)",
                                switched ? "switch ports" : "root port");
                if (n_redirect == 0) {
                        if (switched)
                                result_status(r, STATUS_PASS,
                                              "no ACS redirect on the switch ports above %s: peers below a switch meet "
                                              "there",
                                              d->addr);
                        else
                                result_status(r, STATUS_PASS,
                                              "no ACS redirect on the root port above %s: its P2P traffic goes where "
                                              "the root complex routes it",
                                              d->addr);
                        continue;
                }
                if (!node_has_peers(f)) {
                        result_status(r, STATUS_PASS,
                                      "ACS redirect on %zu bridge%s above %s; harmless with one GPU and no NIC for "
                                      "GPUDirect RDMA",
                                      n_redirect, n_redirect == 1 ? "" : "s", d->addr);
                        continue;
                }
                result_status(r, STATUS_WARN,
                              "ACS redirect on %zu bridge%s above %s sends GPU P2P and GPUDirect RDMA traffic through "
                              "the root complex (slower, or P2P fails)",
                              n_redirect, n_redirect == 1 ? "" : "s", d->addr);
                result_remedy(r,
                              "On bare metal disable ACS in the BIOS (\"PCIe ACS Control\"), or after each boot run "
                              "`sudo setpci -s <bridge> ECAP_ACS+0x6.w=0000` for each of: %s (NCCL troubleshooting "
                              "guide). Not on a host that passes GPUs to VMs.",
                              redirecting);
        }
}

CHECK_INFO(pcie_acs, "pcie", "pcie.acs", LEVEL_QUICK, NEED_VIRT | NEED_PCI_TREE,
           "ACS on the bridges above each GPU fits the node's role (off for P2P, on for passthrough)",
           run_acs);

static void bytes_text(uint64_t bytes, char *buf, size_t size) {
        if (bytes >= GIB && bytes % GIB == 0)
                snprintf(buf, size, "%llu GiB", (unsigned long long)(bytes / GIB));
        else
                snprintf(buf, size, "%llu MiB", (unsigned long long)(bytes / MIB));
}

static void remedy_bar1(const struct facts *f, struct result *r) {
        if (f->virt.is_vm)
                result_remedy(r,
                              "Give the guest a 64-bit MMIO window larger than the GPU memory: QEMU q35 `-global "
                              "q35-pcihost.pci-hole64-size=2048G`, OVMF `-fw_cfg name=opt/ovmf/X-PciMmio64Mb,"
                              "string=262144`; on the host enable Above 4G decoding and Resizable BAR in the BIOS.");
        else
                result_remedy(r,
                              "Enable \"Above 4G Decoding\" (and \"Resizable BAR\" / \"Re-Size BAR Support\" where "
                              "offered) in the BIOS PCI settings; confirm with `sudo lspci -vv -s <gpu> | grep "
                              "Region` or `nvidia-smi -q -d MEMORY` (BAR1 Memory Usage).");
}

static void run_bar1(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (check_skip_without_gpus(self, f, rep))
                return;
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct pci_dev *d = gpu_pci(f, i);
                const struct gpu_model *m = f->gpus.gpus[i].model;
                const struct nvml_gpu *g = nvml_gpu_at(f, d->addr);
                uint64_t nvml_bar1 = g && nv_ok(g->bar1_total_bytes) ? g->bar1_total_bytes.v : 0;
                struct result *r = result_new(rep, self, d->addr);
                result_evidence(r, "source", "%s/resource", d->sysfs_path);
                if (nvml_bar1)
                        result_evidence(r, "nvml_bar1_total_bytes", "%llu", (unsigned long long)nvml_bar1);
                if (!d->have_bars && !nvml_bar1) {
                        result_status(r, STATUS_SKIP, "BAR sizes of %s unknown: %s/resource absent or unparsable",
                                      d->addr, d->sysfs_path);
                        continue;
                }
                int reg = pci_gpu_aperture(d);
                uint64_t bar1 = reg >= 0 ? d->bars[reg].size : 0;
                bool assigned = reg >= 0 && pci_bar_assigned(&d->bars[reg]);
                if (reg >= 0)
                        result_evidence(r, "aperture_register", "%d", reg);
                /* The driver maps the aperture it was given: NVML's size is the proof of an
                 * assigned BAR1 when the sysfs layout is one we do not recognise. */
                if (!assigned && nvml_bar1) {
                        bar1 = nvml_bar1;
                        assigned = true;
                        result_evidence(r, "size_source", "NVML (nvmlDeviceGetBAR1MemoryInfo)");
                }
                uint64_t mem = m && m->memory_gb > 0 ? (uint64_t)(m->memory_gb * (double)GIB) : 0;
                char size[32], memtext[32] = "";
                bytes_text(bar1, size, sizeof(size));
                if (mem)
                        bytes_text(mem, memtext, sizeof(memtext));
                if (mem)
                        result_expected(r, "BAR1 >= GPU memory (%s): Above 4G decoding / Resizable BAR on", memtext);
                else
                        result_expected(r, "BAR1 > 256 MiB: Above 4G decoding / Resizable BAR on");
                if (!assigned) {
                        if (bar1)
                                result_observed(r, "BAR1 (register %d) of %s has no address%s%s", reg, size,
                                                mem ? ", GPU memory " : "", memtext);
                        else
                                result_observed(r, "no framebuffer aperture among the BARs%s%s",
                                                mem ? ", GPU memory " : "", memtext);
                        result_status(r, STATUS_FAIL,
                                      "BAR1 of %s is not assigned: the firmware found no room for the framebuffer "
                                      "aperture; the driver cannot use the GPU",
                                      d->addr);
                        remedy_bar1(f, r);
                        continue;
                }
                result_observed(r, "BAR1 %s%s%s", size, mem ? ", GPU memory " : "", memtext);
                if (nvml_bar1 && nvml_bar1 != bar1)
                        result_evidence(r, "sysfs_bar1_bytes", "%llu", (unsigned long long)bar1);
                if (bar1 <= BAR1_LEGACY_BYTES) {
                        bool dc = !m || m->datacenter;
                        if (!dc) {
                                result_status(r, STATUS_PASS,
                                              "BAR1 %s: the default small aperture of a non-datacenter GPU "
                                              "(Resizable BAR off)",
                                              size);
                                continue;
                        }
                        result_status(r, STATUS_WARN,
                                      "BAR1 only %s: Above 4G decoding / Resizable BAR off; limits GPUDirect RDMA and "
                                      "peer mappings",
                                      size);
                        remedy_bar1(f, r);
                        continue;
                }
                if (mem && bar1 < mem) {
                        result_status(r, STATUS_PASS,
                                      "BAR1 %s: Above 4G decoding on; the aperture maps part of the %s of memory", size,
                                      memtext);
                        continue;
                }
                result_status(r, STATUS_PASS, "BAR1 %s%s: Above 4G decoding / Resizable BAR on", size,
                              mem ? " covers the GPU memory" : "");
        }
}

CHECK_INFO(pcie_bar1, "pcie", "pcie.bar1", LEVEL_QUICK, NEED_VIRT | NEED_NVML | NEED_PCI_TREE,
           "Each GPU's BAR1 aperture is large (Above 4G decoding / Resizable BAR on)",
           run_bar1);

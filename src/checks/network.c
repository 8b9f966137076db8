/* network: the RDMA devices of /sys/class/infiniband and their ports (state, rate, link layer,
 * firmware, error counters), each GPU's nearest RDMA NIC, and what GPUDirect RDMA and
 * GPUDirect Storage need loaded. Read-only. See docs/checks/network.md. */
#include "checks/check.h"
#include "core/array.h"
#include "core/strbuf.h"
#include "core/strparse.h"
#include "data/gpudb.h"
#include "sys/topo.h"

#include <stdio.h>
#include <string.h>

#define CLASS_DIR "/sys/class/infiniband"

/* The HCA models and their fastest port are data (data/nics.json, with their sources).
 * ib_core's hca_type is "MT" and the PCI device id in decimal ("MT4129" = 0x1021), which
 * names the model when the PCI facts do not. */
#define MELLANOX_VENDOR 0x15b3

/* The PCI device id of an RDMA device: its PCI function's, else hca_type's; 0 unknown. */
static unsigned hca_device_id(const struct facts *f, const struct rdma_dev *d) {
        const struct pci_dev *p = d->pci_addr[0] ? pci_find(&f->pci, d->pci_addr) : NULL;
        if (p && p->have_ids && p->vendor == MELLANOX_VENDOR)
                return p->device;
        uint64_t id;
        if (strncmp(d->hca_type, "MT", 2) == 0 && parse_u64(d->hca_type + 2, &id) == 0 && id > 0 && id <= 0xffff)
                return (unsigned)id;
        return 0;
}

static const struct nic_model *hca_model(const struct facts *f, const struct rdma_dev *d) {
        unsigned id = hca_device_id(f, d);
        return id ? nicdb_find(gpudb_nics(f->db), MELLANOX_VENDOR, id) : NULL;
}

/* "ConnectX-7", else "MT4129", else "unknown HCA". */
static const char *hca_name(const struct facts *f, const struct rdma_dev *d) {
        const struct nic_model *m = hca_model(f, d);
        return m ? m->name : d->hca_type[0] ? d->hca_type : "unknown HCA";
}

/* A new result about port p of d, named "mlx5_0/1". */
static struct result *port_result(const struct check_info *self, struct report *rep, const struct rdma_dev *d,
                                  const struct rdma_port *p) {
        char subj[80];
        snprintf(subj, sizeof(subj), "%.63s/%u", d->name, p->num);
        return result_new(rep, self, subj);
}

static size_t count_ports(const struct facts *f) {
        size_t n = 0;
        for (size_t i = 0; i < f->rdma.n; i++)
                n += f->rdma.devs[i].n_ports;
        return n;
}

/* Skip (or error, when the class could not be listed) on a node without RDMA ports; true
 * when it did. */
static bool skip_without_rdma(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (f->netdev.rdma_errno) {
                struct result *r = result_new(rep, self, "host");
                result_evidence(r, "source", CLASS_DIR);
                result_status(r, STATUS_ERROR, "cannot list " CLASS_DIR ": %s", strerror(f->netdev.rdma_errno));
                result_remedy(r, "List it by hand (`ls -l " CLASS_DIR "`); run gpuvet with the rights to read /sys.");
                return true;
        }
        if (count_ports(f) > 0)
                return false;
        for (size_t i = 0; i < f->rdma.n; i++)
                if (f->rdma.devs[i].ports_errno) {
                        /* Ports unknown, not absent: port_state reports the error, the others
                         * skip pointing at it. */
                        if (strcmp(self->id, "network.port_state") == 0)
                                return false;
                        struct result *r = result_new(rep, self, "host");
                        result_evidence(r, "source", CLASS_DIR "/*/ports");
                        result_status(r, STATUS_SKIP, "the RDMA devices' ports cannot be listed (network.port_state)");
                        return true;
                }
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", CLASS_DIR);
        result_status(r, STATUS_SKIP, "no RDMA device with ports in " CLASS_DIR "%s",
                      f->rdma.n ? "" : " (no RDMA NIC, or its driver is not loaded)");
        return true;
}

static bool port_active(const struct rdma_port *p) {
        return p->state == RDMA_PORT_ACTIVE;
}

/* ---- network.port_state ---- */

static void run_port_state(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (skip_without_rdma(self, f, rep))
                return;
        for (size_t i = 0; i < f->rdma.n; i++) {
                const struct rdma_dev *d = &f->rdma.devs[i];
                if (d->ports_errno) {
                        /* A device whose ports cannot be listed: its ports are unknown, not absent. */
                        struct result *r = result_new(rep, self, d->name);
                        result_evidence(r, "source", CLASS_DIR "/%s/ports", d->name);
                        result_status(r, STATUS_ERROR, "cannot list the ports of %s (" CLASS_DIR "/%s/ports): %s",
                                      d->name, d->name, strerror(d->ports_errno));
                        result_remedy(r, "List them by hand (`ls " CLASS_DIR "/%s/ports`, `ibstat %s`); an RDMA "
                                         "device without ports did not finish initialising: see `dmesg | grep %s`.",
                                      d->name, d->name, d->name);
                }
                for (size_t k = 0; k < d->n_ports; k++) {
                        const struct rdma_port *p = &d->ports[k];
                        struct result *r = port_result(self, rep, d, p);
                        result_evidence(r, "source", CLASS_DIR "/%s/ports/%u/{state,phys_state}", d->name, p->num);
                        result_evidence(r, "hca", "%s, %s", hca_name(f, d), rdma_link_layer_name(p->link_layer));
                        result_expected(r, "4: ACTIVE, 5: LinkUp");
                        if (p->state < 0 || p->phys_state < 0) {
                                result_observed(r, "state %s, phys_state %s", p->state < 0 ? "unreadable" : p->state_name,
                                                p->phys_state < 0 ? "unreadable" : p->phys_state_name);
                                result_status(r, STATUS_ERROR, "cannot read the state of %s port %u", d->name, p->num);
                                result_remedy(r, "Read it by hand: `cat " CLASS_DIR "/%s/ports/%u/state "
                                                 CLASS_DIR "/%s/ports/%u/phys_state` or `ibstat %s %u`.",
                                              d->name, p->num, d->name, p->num, d->name, p->num);
                                continue;
                        }
                        result_observed(r, "%d: %s, %d: %s", p->state, p->state_name, p->phys_state, p->phys_state_name);
                        if (port_active(p) && p->phys_state == RDMA_PHYS_LINKUP) {
                                result_status(r, STATUS_PASS, "%s port %u ACTIVE, LinkUp", d->name, p->num);
                        } else if (p->phys_state == RDMA_PHYS_LINKUP) {
                                /* Trained but not configured: INIT/ARMED wait for a subnet manager. */
                                result_status(r, STATUS_FAIL, "%s port %u is %s: the link is up but not active", d->name,
                                              p->num, p->state_name);
                                if (p->link_layer == RDMA_LL_ETHERNET)
                                        result_remedy(r, "Bring the interface up (`ip link set %s up`) and check the "
                                                         "switch port; `ibv_devinfo -d %s` shows the port once it is.",
                                                      p->netdev[0] ? p->netdev : "<netdev>", d->name);
                                else
                                        result_remedy(r, "An InfiniBand port stays INIT until a subnet manager "
                                                         "configures it: check that OpenSM or UFM runs on the fabric "
                                                         "(`sminfo -C %s -P %u`) and that this port's switch is in "
                                                         "its subnet.",
                                                      d->name, p->num);
                        } else if (p->phys_state == RDMA_PHYS_DISABLED) {
                                /* Disabled: switched off (an admin, the SM, or an Ethernet
                                 * interface set down), not a link that fails to train. */
                                result_status(r, STATUS_WARN, "%s port %u is disabled (%s, %s)", d->name, p->num,
                                              p->state_name, p->phys_state_name);
                                if (p->link_layer == RDMA_LL_ETHERNET && p->netdev[0])
                                        result_remedy(r, "Enable it if it should carry traffic (`ip link set %s up`); a "
                                                         "port left unused on purpose can be excused in the site "
                                                         "policy (exceptions).",
                                                      p->netdev);
                                else
                                        result_remedy(r, "Enable it if it should carry traffic (`mlxlink -d %s -p %u -a "
                                                         "UP`, or `ibportstate` on the switch port); a port left unused "
                                                         "on purpose can be excused in the site policy (exceptions).",
                                                      d->pci_addr[0] ? d->pci_addr : d->name, p->num);
                        } else {
                                result_status(r, STATUS_FAIL, "%s port %u is down (%s, %s)", d->name, p->num,
                                              p->state_name, p->phys_state_name);
                                result_remedy(r, "Check the cable and transceiver and the switch port (`mlxlink -d %s "
                                                 "-p %u` shows why the link does not train); a port left unused on "
                                                 "purpose can be excused in the site policy (exceptions).",
                                              d->pci_addr[0] ? d->pci_addr : d->name, p->num);
                        }
                }
        }
}

CHECK_INFO(network_port_state, "network", "network.port_state", LEVEL_QUICK, NEED_NETDEV | NEED_RDMA,
           "RDMA ports ACTIVE with the link up", run_port_state);

/* ---- network.port_rate ---- */

static double fastest_of_model(const struct facts *f, unsigned device_id, enum rdma_link_layer ll) {
        double best = 0;
        for (size_t i = 0; i < f->rdma.n; i++) {
                const struct rdma_dev *d = &f->rdma.devs[i];
                if (hca_device_id(f, d) != device_id)
                        continue;
                for (size_t k = 0; k < d->n_ports; k++)
                        if (port_active(&d->ports[k]) && d->ports[k].link_layer == ll && d->ports[k].rate_gbps > best)
                                best = d->ports[k].rate_gbps;
        }
        return best;
}

static void judge_rate(const struct facts *f, const struct rdma_dev *d, const struct rdma_port *p, struct result *r) {
        const struct nic_model *m = hca_model(f, d);
        double policy_min = check_thresholds(f)->network_min_rate_gbps;
        double node_best = fastest_of_model(f, hca_device_id(f, d), p->link_layer);
        char exp[160] = "";
        if (m)
                strbuf_appendf(exp, sizeof(exp), "up to %.0f Gb/s (%s)", m->max_port_gbps, m->name);
        if (policy_min > 0)
                strbuf_appendf(exp, sizeof(exp), "%sat least %g Gb/s (site policy)", exp[0] ? "; " : "", policy_min);
        if (node_best > p->rate_gbps)
                strbuf_appendf(exp, sizeof(exp), "%s%g Gb/s as the node's other %s ports", exp[0] ? "; " : "",
                               node_best, hca_name(f, d));
        result_expected(r, "%s", exp[0] ? exp : "the rate the HCA and the fabric support");
        if (policy_min > 0 && p->rate_gbps < policy_min) {
                result_status(r, STATUS_FAIL, "%s port %u runs at %g Gb/s, below the site's %g Gb/s", d->name, p->num,
                              p->rate_gbps, policy_min);
                result_remedy(r, "Check the cable and transceiver (an HDR cable holds an NDR port at 200 Gb/s) and the "
                                 "switch port's speed; `mlxlink -d %s -p %u` shows what both ends negotiated.",
                              d->pci_addr[0] ? d->pci_addr : d->name, p->num);
        } else if (node_best > p->rate_gbps) {
                result_status(r, STATUS_WARN, "%s port %u runs at %g Gb/s while other %s ports run at %g Gb/s", d->name,
                              p->num, p->rate_gbps, hca_name(f, d), node_best);
                result_remedy(r, "A port slower than its peers trained down: reseat or swap the cable and "
                                 "transceiver, check the switch port (`mlxlink -d %s -p %u` shows the negotiated "
                                 "speed and width and the cable's errors).",
                              d->pci_addr[0] ? d->pci_addr : d->name, p->num);
        } else if (m && p->rate_gbps < m->max_port_gbps && p->link_layer == RDMA_LL_INFINIBAND && policy_min <= 0) {
                result_status(r, STATUS_WARN, "%s port %u runs at %g Gb/s, below the %s's %.0f Gb/s", d->name, p->num,
                              p->rate_gbps, m->name, m->max_port_gbps);
                result_remedy(r, "Every port of this model runs below what the HCA can: the switches or cables are of "
                                 "an older generation, or the port is configured down. If the fabric is built so, "
                                 "set thresholds.network_min_rate_gbps in the site policy to its rate.");
        } else {
                result_status(r, STATUS_PASS, "%s port %u at %g Gb/s", d->name, p->num, p->rate_gbps);
        }
}

static void run_port_rate(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (skip_without_rdma(self, f, rep))
                return;
        for (size_t i = 0; i < f->rdma.n; i++) {
                const struct rdma_dev *d = &f->rdma.devs[i];
                for (size_t k = 0; k < d->n_ports; k++) {
                        const struct rdma_port *p = &d->ports[k];
                        struct result *r = port_result(self, rep, d, p);
                        result_evidence(r, "source", CLASS_DIR "/%s/ports/%u/rate", d->name, p->num);
                        if (!port_active(p)) {
                                result_status(r, STATUS_SKIP, "%s port %u is not active (network.port_state)", d->name,
                                              p->num);
                                continue;
                        }
                        if (p->rate_gbps <= 0) {
                                result_status(r, STATUS_ERROR, "cannot read the rate of %s port %u", d->name, p->num);
                                result_remedy(r, "Read it by hand: `cat " CLASS_DIR "/%s/ports/%u/rate` (ib_core "
                                                 "prints \"400 Gb/sec (4X NDR)\").",
                                              d->name, p->num);
                                continue;
                        }
                        if (p->width)
                                result_observed(r, "%g Gb/s (%uX%s%s)", p->rate_gbps, p->width, p->speed_name[0] ? " " : "",
                                                p->speed_name);
                        else
                                result_observed(r, "%g Gb/s", p->rate_gbps);
                        judge_rate(f, d, p, r);
                }
        }
}

CHECK_INFO(network_port_rate, "network", "network.port_rate", LEVEL_QUICK, NEED_NETDEV | NEED_RDMA,
           "RDMA port rate against the HCA, its peers and the site policy", run_port_rate);

/* ---- network.link_layer ---- */

/* The RDMA device nearest GPU g (the PCIe relation topo gives), or NULL. */
static const struct rdma_dev *nearest_rdma(const struct facts *f, const struct topo *t, size_t g,
                                           enum topo_pcie *ret_rel);

static void run_link_layer(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (skip_without_rdma(self, f, rep))
                return;
        size_t n[RDMA_LL_COUNT] = {0};
        char unknown[256] = "";
        for (size_t i = 0; i < f->rdma.n; i++)
                for (size_t k = 0; k < f->rdma.devs[i].n_ports; k++) {
                        const struct rdma_port *p = &f->rdma.devs[i].ports[k];
                        n[p->link_layer]++;
                        if (p->link_layer == RDMA_LL_UNKNOWN)
                                strbuf_appendf(unknown, sizeof(unknown), "%s%.63s/%u", unknown[0] ? " " : "",
                                               f->rdma.devs[i].name, p->num);
                }
        /* The NICs NCCL would pair with GPUs: each GPU's nearest. Mixed link layers there
         * mean rails on different fabrics; storage or management NICs elsewhere may differ. */
        size_t rail[RDMA_LL_COUNT] = {0};
        struct topo t;
        if (f->gpus.n && topo_build(f, NULL, &t) == 0) {
                for (size_t g = 0; g < t.n_gpus; g++) {
                        enum topo_pcie rel;
                        const struct rdma_dev *d = nearest_rdma(f, &t, g, &rel);
                        if (d && d->n_ports && (rel == TOPO_PIX || rel == TOPO_PXB))
                                rail[d->ports[0].link_layer]++;
                }
                topo_done(&t);
        }
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", CLASS_DIR "/*/ports/*/link_layer");
        result_observed(r, "%zu InfiniBand, %zu Ethernet (RoCE)%s%s", n[RDMA_LL_INFINIBAND], n[RDMA_LL_ETHERNET],
                        n[RDMA_LL_UNKNOWN] ? ", unknown: " : "", unknown);
        result_expected(r, "one link layer on the NICs next to the GPUs");
        if (n[RDMA_LL_UNKNOWN]) {
                result_status(r, STATUS_WARN, "the link layer of %zu port%s is unreadable: %s", n[RDMA_LL_UNKNOWN],
                              n[RDMA_LL_UNKNOWN] == 1 ? "" : "s", unknown);
                result_remedy(r, "Read it by hand (`cat " CLASS_DIR "/<dev>/ports/<n>/link_layer`, or `ibv_devinfo`); "
                                 "a VPI card's mode is set with `mlxconfig -d <pci> set LINK_TYPE_P1=1` (IB) or 2 "
                                 "(Ethernet).");
        } else if (rail[RDMA_LL_INFINIBAND] && rail[RDMA_LL_ETHERNET]) {
                result_status(r, STATUS_WARN, "the GPUs' nearest NICs mix link layers: %zu InfiniBand, %zu Ethernet",
                              rail[RDMA_LL_INFINIBAND], rail[RDMA_LL_ETHERNET]);
                result_remedy(r, "GPU rails on two fabrics cannot talk to each other: set every compute NIC to the "
                                 "fabric's link layer (`mlxconfig -d <pci> set LINK_TYPE_P1=1` for InfiniBand, 2 for "
                                 "Ethernet, then a firmware reset or reboot).");
        } else {
                result_status(r, STATUS_PASS, "%s", n[RDMA_LL_ETHERNET] == 0 ? "all ports InfiniBand"
                                                    : n[RDMA_LL_INFINIBAND] == 0 ? "all ports Ethernet (RoCE)"
                                                                                 : "InfiniBand and Ethernet ports, "
                                                                                   "one link layer next to the GPUs");
        }
}

CHECK_INFO(network_link_layer, "network", "network.link_layer", LEVEL_QUICK, NEED_NETDEV | NEED_RDMA,
           "one link layer (InfiniBand or RoCE) on the NICs next to the GPUs", run_link_layer);

/* ---- network.firmware ---- */

/* Devices d and e are of one model: one PCI device id, or (neither known) one hca_type. */
static bool same_model(const struct facts *f, const struct rdma_dev *d, const struct rdma_dev *e) {
        unsigned id = hca_device_id(f, d);
        return hca_device_id(f, e) == id && (id != 0 || strcmp(e->hca_type, d->hca_type) == 0);
}

static void run_firmware(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (skip_without_rdma(self, f, rep))
                return;
        for (size_t i = 0; i < f->rdma.n; i++) {
                const struct rdma_dev *d = &f->rdma.devs[i];
                bool seen = false;
                for (size_t j = 0; j < i && !seen; j++)
                        seen = same_model(f, d, &f->rdma.devs[j]);
                if (seen)
                        continue; /* judged with the first device of its model */
                char subj[96], observed[1024] = "", first_ver[64] = "";
                snprintf(subj, sizeof(subj), "%s", hca_name(f, d));
                size_t n = 0, unknown = 0;
                bool differ = false;
                for (size_t j = i; j < f->rdma.n; j++) {
                        const struct rdma_dev *e = &f->rdma.devs[j];
                        if (!same_model(f, d, e))
                                continue;
                        n++;
                        strbuf_appendf(observed, sizeof(observed), "%s%.63s %.63s", observed[0] ? ", " : "", e->name,
                                       e->fw_ver[0] ? e->fw_ver : "unknown");
                        if (!e->fw_ver[0]) {
                                unknown++;
                                continue;
                        }
                        if (!first_ver[0])
                                snprintf(first_ver, sizeof(first_ver), "%s", e->fw_ver);
                        else if (strcmp(first_ver, e->fw_ver) != 0)
                                differ = true;
                }
                struct result *r = result_new(rep, self, subj);
                result_evidence(r, "source", CLASS_DIR "/*/fw_ver");
                result_observed(r, "%s", observed);
                result_expected(r, "one firmware version on every %s", subj);
                if (differ) {
                        result_status(r, STATUS_WARN, "the %zu %s HCAs run different firmware", n, subj);
                        result_remedy(r, "Bring every HCA of a model to one firmware (the one NVIDIA's release notes "
                                         "pair with the installed MLNX_OFED/DOCA driver): `mlxfwmanager --query` lists "
                                         "them, `mlxfwmanager -u -i <image>` or `flint -d <pci> -i <image> burn` "
                                         "updates, then `mlxfwreset -d <pci> reset` or a reboot.");
                } else if (unknown == n) {
                        result_status(r, STATUS_SKIP, "no readable fw_ver on the %s HCAs", subj);
                } else if (unknown) {
                        result_status(r, STATUS_WARN, "%zu of %zu %s HCAs show no firmware version", unknown, n, subj);
                        result_remedy(r, "Read it by hand (`cat " CLASS_DIR "/<dev>/fw_ver`, `ibv_devinfo`); an "
                                         "HCA with no fw_ver did not finish initialising: see `dmesg | grep mlx5`.");
                } else {
                        result_status(r, STATUS_PASS, "%zu %s HCA%s on firmware %s", n, subj, n == 1 ? "" : "s",
                                      first_ver);
                }
        }
}

CHECK_INFO(network_firmware, "network", "network.firmware", LEVEL_QUICK, NEED_NETDEV | NEED_RDMA,
           "one firmware version across the HCAs of a model", run_firmware);

/* ---- network.port_errors ---- */

/* infiniband-diags' ibcheckerrs default thresholds (the counts above which it reported a
 * port), applied here per day of uptime: SymbolErrors, LinkRecovers, LinkDowned and
 * RcvErrors 10, XmtDiscards 100. */
static const double counter_per_day[RDMA_CTR_COUNT] = {
        [RDMA_CTR_SYMBOL_ERROR] = 10,      [RDMA_CTR_LINK_ERROR_RECOVERY] = 10, [RDMA_CTR_LINK_DOWNED] = 10,
        [RDMA_CTR_PORT_RCV_ERRORS] = 10,   [RDMA_CTR_PORT_XMIT_DISCARDS] = 100,
};

static void run_port_errors(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (skip_without_rdma(self, f, rep))
                return;
        /* A node up less than a day is judged as if a day had passed: a count is not a rate. */
        double days = f->host.uptime_s > 86400 ? f->host.uptime_s / 86400.0 : 1.0;
        /* Without the uptime a count is no rate: over a day's threshold it may be years old. */
        bool uptime_known = f->host.uptime_s > 0;
        for (size_t i = 0; i < f->rdma.n; i++) {
                const struct rdma_dev *d = &f->rdma.devs[i];
                for (size_t k = 0; k < d->n_ports; k++) {
                        const struct rdma_port *p = &d->ports[k];
                        char observed[512] = "", over[256] = "";
                        struct result *r = port_result(self, rep, d, p);
                        result_evidence(r, "source", CLASS_DIR "/%s/ports/%u/counters/", d->name, p->num);
                        result_evidence(r, "uptime", "%.0f s%s", f->host.uptime_s,
                                        f->host.uptime_s > 86400 ? "" : " (judged as one day)");
                        size_t n_known = 0;
                        for (size_t c = 0; c < RDMA_CTR_COUNT; c++) {
                                if (p->counters[c] == RDMA_CTR_UNKNOWN)
                                        continue;
                                n_known++;
                                double rate = (double)p->counters[c] / days;
                                strbuf_appendf(observed, sizeof(observed), "%s%s %llu", observed[0] ? ", " : "",
                                               rdma_counter_name(c), (unsigned long long)p->counters[c]);
                                if (rate > counter_per_day[c])
                                        strbuf_appendf(over, sizeof(over), "%s%s %.1f/day", over[0] ? ", " : "",
                                                       rdma_counter_name(c), rate);
                        }
                        if (n_known == 0) {
                                result_status(r, STATUS_SKIP, "%s port %u has no readable error counters", d->name, p->num);
                                continue;
                        }
                        result_observed(r, "%s", observed);
                        result_expected(r, "per day: symbol_error, link_error_recovery, link_downed, port_rcv_errors "
                                           "at most 10, port_xmit_discards at most 100 (ibcheckerrs' thresholds)");
                        if (over[0] && !uptime_known) {
                                result_status(r, STATUS_SKIP, "%s port %u: %s, counted since an unknown time (no "
                                                              "uptime in /proc/uptime): not judged as rates",
                                              d->name, p->num, observed);
                        } else if (over[0]) {
                                result_status(r, STATUS_WARN, "%s port %u: %s", d->name, p->num, over);
                                result_remedy(r, "Errors on the physical link: reseat or replace the cable and "
                                                 "transceiver at both ends and check the switch port (`mlxlink -d %s -p %u "
                                                 "-c` shows the BER and the cable); discards mean congestion or a "
                                                 "peer that stopped receiving. `perfquery -x` reads them again; "
                                                 "`perfquery -R` resets them after a repair.",
                                              d->pci_addr[0] ? d->pci_addr : d->name, p->num);
                        } else {
                                result_status(r, STATUS_PASS, "%s port %u: error counters within their rates", d->name,
                                              p->num);
                        }
                }
        }
}

CHECK_INFO(network_port_errors, "network", "network.port_errors", LEVEL_QUICK, NEED_NETDEV | NEED_RDMA,
           "RDMA port error counters since boot, as rates", run_port_errors);

/* ---- network.gpu_affinity ---- */

static const struct rdma_dev *rdma_at(const struct facts *f, const char *pci_addr) {
        for (size_t i = 0; i < f->rdma.n; i++)
                if (strcmp(f->rdma.devs[i].pci_addr, pci_addr) == 0)
                        return &f->rdma.devs[i];
        return NULL;
}

static const struct rdma_dev *nearest_rdma(const struct facts *f, const struct topo *t, size_t g,
                                           enum topo_pcie *ret_rel) {
        const struct rdma_dev *best = NULL;
        *ret_rel = TOPO_PCIE_COUNT;
        for (size_t j = t->n_gpus; j < t->n; j++) {
                const struct rdma_dev *d = rdma_at(f, f->pci.devs[t->devs[j].pci_index].addr);
                enum topo_pcie rel = topo_at(t, g, j)->pcie;
                if (d && rel < *ret_rel) {
                        *ret_rel = rel;
                        best = d;
                }
        }
        return best;
}

static void run_gpu_affinity(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (skip_without_rdma(self, f, rep) || check_skip_without_gpus(self, f, rep))
                return;
        struct topo t;
        if (topo_build(f, NULL, &t) < 0)
                return;
        for (size_t g = 0; g < t.n_gpus; g++) {
                struct result *r = result_new(rep, self, gpu_subject(f, t.devs[g].gpu_index));
                result_evidence(r, "source", "/sys/devices (PCIe parents), numa_node; as `gpuvet topo`");
                result_expected(r, "an RDMA NIC under the same PCIe switch (PIX/PXB), else on the same NUMA node");
                enum topo_pcie rel;
                const struct rdma_dev *d = nearest_rdma(f, &t, g, &rel);
                if (!d) {
                        result_status(r, STATUS_SKIP, "no RDMA device on a PCI function gpuvet knows");
                        continue;
                }
                result_observed(r, "%s (%s) %s", d->name, d->pci_addr, topo_pcie_name(rel));
                if (rel == TOPO_PIX || rel == TOPO_PXB) {
                        result_status(r, STATUS_PASS, "%s shares a PCIe switch with %s", d->name, t.devs[g].label);
                } else if (rel == TOPO_PHB || rel == TOPO_NODE) {
                        result_status(r, STATUS_PASS, "nearest RDMA NIC %s is on the same NUMA node (%s), not under "
                                      "the GPU's switch", d->name, topo_pcie_name(rel));
                } else {
                        result_status(r, STATUS_WARN, "%s's nearest RDMA NIC %s is on another NUMA node (SYS)",
                                      t.devs[g].label, d->name);
                        result_remedy(r, "GPUDirect RDMA across the CPU interconnect runs far below the NIC's rate and "
                                         "NCCL avoids it: put a NIC in a slot of this GPU's NUMA node (the board "
                                         "manual's slot map), or confine jobs on this GPU to the NICs near it "
                                         "(NCCL_IB_HCA); `gpuvet topo` shows the matrix.");
                }
        }
        topo_done(&t);
}

CHECK_INFO(network_gpu_affinity, "network", "network.gpu_affinity", LEVEL_QUICK, NEED_NETDEV | NEED_RDMA | NEED_PCI_TREE,
           "each GPU has an RDMA NIC under its PCIe switch or NUMA node", run_gpu_affinity);

/* ---- network.gpudirect ---- */

static bool kernel_at_least(const char *rel, unsigned want_major, unsigned want_minor) {
        unsigned major, minor;
        if (sscanf(rel, "%u.%u", &major, &minor) != 2)
                return false;
        return major > want_major || (major == want_major && minor >= want_minor);
}

static void run_gpudirect(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (skip_without_rdma(self, f, rep) || check_skip_without_gpus(self, f, rep))
                return;
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", "/proc/modules, /proc/driver/nvidia/version, /proc/sys/kernel/osrelease");
        result_evidence(r, "see_also", "pcie.acs (ACS redirect on the switches between GPU and NIC), iommu.enabled "
                                       "(iommu=pt), pcie.bar1 (BAR1 size)");
        result_expected(r, "nvidia_peermem loaded, or the open kernel modules on Linux 5.12+ (DMA-BUF)");
        if (!f->host.have_modules) {
                if (check_skip_capture_lacks(r, f, "/proc/modules"))
                        return;
                result_status(r, STATUS_ERROR, "cannot read /proc/modules: %s", strerror(-f->host.modules_errno));
                result_remedy(r, "Check that /proc is mounted; `lsmod | grep nvidia_peermem` tells by hand.");
                return;
        }
        bool peermem = host_module_loaded(&f->host, "nvidia_peermem");
        bool dmabuf = f->nvidia.have_version && f->nvidia.open_kernel_module &&
                      kernel_at_least(f->host.kernel_release, 5, 12);
        result_observed(r, "nvidia_peermem %s; %s kernel module; kernel %s", peermem ? "loaded" : "not loaded",
                        !f->nvidia.have_version ? "unknown" : f->nvidia.open_kernel_module ? "open" : "proprietary",
                        f->host.kernel_release[0] ? f->host.kernel_release : "unknown");
        const char *unknown = !f->nvidia.have_version        ? "the nvidia module's flavour (open or proprietary)"
                              : !f->host.kernel_release[0] ? "the kernel release"
                                                           : NULL;
        if (peermem)
                result_status(r, STATUS_PASS, "GPUDirect RDMA through nvidia_peermem");
        else if (!dmabuf && unknown)
                /* DMA-BUF needs both: without one the path can be there or not. */
                result_status(r, STATUS_SKIP, "nvidia_peermem is not loaded, and whether DMA-BUF serves GPUDirect "
                                              "RDMA is unknown: %s is unknown (gpu.driver_version, kernel.version)",
                              unknown);
        else if (dmabuf)
                result_status(r, STATUS_PASS, "GPUDirect RDMA through DMA-BUF (open kernel modules, Linux %s)",
                              f->host.kernel_release);
        else {
                result_status(r, STATUS_WARN, "no GPUDirect RDMA path: nvidia_peermem is not loaded%s",
                              f->nvidia.open_kernel_module ? " and the kernel is older than 5.12"
                                                           : " and the proprietary module has no DMA-BUF path");
                result_remedy(r, "Load it now and at boot: `sudo modprobe nvidia-peermem` and `echo nvidia-peermem | "
                                 "sudo tee /etc/modules-load.d/nvidia-peermem.conf` (it ships with the driver; it needs "
                                 "the RDMA stack, ib_core, loaded first). With the open kernel modules on Linux 5.12 "
                                 "or later, DMA-BUF needs no module (NVIDIA recommends it where supported; NCCL uses it there).");
        }
}

CHECK_INFO(network_gpudirect, "network", "network.gpudirect", LEVEL_QUICK, NEED_NVIDIA | NEED_NETDEV | NEED_RDMA | NEED_PCI_TREE,
           "a GPUDirect RDMA path: nvidia_peermem or DMA-BUF", run_gpudirect);

/* ---- network.gds ---- */

static void run_gds(const struct check_info *self, const struct facts *f, struct report *rep) {
        struct result *r = check_host_result_with_gpus(self, f, rep);
        if (!r)
                return;
        result_evidence(r, "source", "/etc/cufile.json, /proc/modules");
        bool loaded = host_module_loaded(&f->host, "nvidia_fs");
        if (!f->rdma.gds_config && !loaded) {
                result_status(r, STATUS_SKIP, "GPUDirect Storage not installed (no /etc/cufile.json)");
                return;
        }
        result_expected(r, "nvidia_fs loaded where GPUDirect Storage is installed");
        result_observed(r, "/etc/cufile.json %s; nvidia_fs %s", f->rdma.gds_config ? "present" : "absent",
                        loaded ? "loaded" : "not loaded");
        if (loaded)
                result_status(r, STATUS_PASS, "nvidia_fs loaded");
        else {
                result_status(r, STATUS_WARN, "GPUDirect Storage is installed but nvidia_fs is not loaded: cuFile "
                                              "falls back to compatibility mode (reads through host memory)");
                result_remedy(r, "`sudo modprobe nvidia-fs` (package nvidia-fs or nvidia-gds), and check with "
                                 "`/usr/local/cuda/gds/tools/gdscheck -p`; to run in compatibility mode on purpose, "
                                 "turn this check off in the site policy.");
        }
}

CHECK_INFO(network_gds, "network", "network.gds", LEVEL_QUICK, NEED_RDMA,
           "nvidia_fs loaded where GPUDirect Storage is installed", run_gds);

/* ---- network.roce_mtu ---- */

/* RoCE's IB MTU is the interface's MTU less the RoCE headers, rounded down to 256..4096
 * (iboe_get_mtu() in include/rdma/ib_addr.h takes off GRH, UDP, BTH, extension and ICRC
 * bytes): 4096-byte RDMA messages need an interface MTU of about 4200 or more. */
#define ROCE_MTU_MIN 4200

/* Judge every Ethernet (RoCE) port with judge, one result each; a node with none skips. */
static void each_roce_port(const struct check_info *self, const struct facts *f, struct report *rep,
                           void (*judge)(struct result *r, const struct facts *f, const struct rdma_dev *d,
                                         const struct rdma_port *p)) {
        if (skip_without_rdma(self, f, rep))
                return;
        size_t judged = 0;
        for (size_t i = 0; i < f->rdma.n; i++) {
                const struct rdma_dev *d = &f->rdma.devs[i];
                for (size_t k = 0; k < d->n_ports; k++) {
                        const struct rdma_port *p = &d->ports[k];
                        if (p->link_layer != RDMA_LL_ETHERNET)
                                continue;
                        judged++;
                        judge(port_result(self, rep, d, p), f, d, p);
                }
        }
        if (!judged) {
                struct result *r = result_new(rep, self, "host");
                result_evidence(r, "source", CLASS_DIR "/*/ports/*/link_layer");
                result_status(r, STATUS_SKIP, "no Ethernet (RoCE) RDMA port");
        }
}

static void judge_roce_mtu(struct result *r, const struct facts *f, const struct rdma_dev *d,
                           const struct rdma_port *p) {
        (void)f;
        result_expected(r, "interface MTU >= %d (4096-byte RoCE MTU)", ROCE_MTU_MIN);
        if (!p->netdev[0] || p->netdev_mtu < 0) {
                result_evidence(r, "source", "/sys/class/net/*/device");
                result_status(r, STATUS_SKIP, "no readable network interface on %s's PCI function %s",
                              d->name, d->pci_addr[0] ? d->pci_addr : "(unknown)");
                return;
        }
        result_evidence(r, "source", "/sys/class/net/%s/mtu", p->netdev);
        result_observed(r, "%s mtu %d", p->netdev, p->netdev_mtu);
        if (p->netdev_mtu >= ROCE_MTU_MIN)
                result_status(r, STATUS_PASS, "%s MTU %d", p->netdev, p->netdev_mtu);
        else {
                result_status(r, STATUS_WARN, "%s MTU %d: RoCE on %s runs below 4096-byte messages",
                              p->netdev, p->netdev_mtu, d->name);
                result_remedy(r, "Raise the MTU on the interface and every switch port on the path "
                                 "(jumbo frames, 9000 is usual): `ip link set %s mtu 9000`, and make "
                                 "it persistent in netplan/NetworkManager.",
                              p->netdev);
        }
}

static void run_roce_mtu(const struct check_info *self, const struct facts *f, struct report *rep) {
        each_roce_port(self, f, rep, judge_roce_mtu);
}

CHECK_INFO(network_roce_mtu, "network", "network.roce_mtu", LEVEL_QUICK, NEED_XID | NEED_NETDEV | NEED_RDMA,
           "RoCE interfaces' MTU allows 4096-byte RDMA messages", run_roce_mtu);

/* ---- network.roce_congestion ---- */

/* RoCE runs well either lossless (PFC on the priority it uses) or lossy with congestion
 * control (ECN marks, DCQCN's CNPs) keeping drops rare. What is judged is the outcome: a
 * port that keeps losing packets, or one that ignores the congestion notifications sent to
 * it. Both as rates per day of uptime over the same 10/day as network.port_errors; the
 * counters are the driver's (mlx5) hw_counters. */
#define ROCE_PER_DAY_MAX 10

static const enum rdma_hw_counter roce_loss[] = {RDMA_HW_OUT_OF_SEQUENCE, RDMA_HW_PACKET_SEQ_ERR,
                                                 RDMA_HW_LOCAL_ACK_TIMEOUT_ERR};

/* "PFC on priorities 3", "PFC off on every priority", or why it is unknown; pfc_off set
 * when it was read and is off everywhere. */
static void pfc_text(const struct rdma_port *p, char *buf, size_t size, bool *pfc_off) {
        *pfc_off = false;
        if (!p->pfc_asked) {
                snprintf(buf, size, "PFC not read (a capture has no kernel to ask)");
                return;
        }
        if (p->pfc_errno) {
                snprintf(buf, size, "PFC not readable from dcbnl: %s", strerror(p->pfc_errno));
                return;
        }
        if (!p->pfc.enabled) {
                *pfc_off = true;
                snprintf(buf, size, "PFC off on every priority");
                return;
        }
        snprintf(buf, size, "PFC on priorit%s", (p->pfc.enabled & (p->pfc.enabled - 1)) ? "ies" : "y");
        for (unsigned prio = 0, first = 1; prio < 8; prio++)
                if (p->pfc.enabled & (1u << prio)) {
                        strbuf_appendf(buf, size, "%s%u", first ? " " : ",", prio);
                        first = 0;
                }
}

static void judge_roce_port(struct result *r, const struct facts *f, const struct rdma_dev *d,
                            const struct rdma_port *p) {
        /* A node up less than a day is judged as if a day had passed: a count is not a rate. */
        double days = f->host.uptime_s > 86400 ? f->host.uptime_s / 86400.0 : 1.0;
        /* Without the uptime a count is no rate: over a day's threshold it may be years old. */
        bool uptime_known = f->host.uptime_s > 0;
        char pfc[96], counters[320] = "";
        bool pfc_off;
        pfc_text(p, pfc, sizeof(pfc), &pfc_off);
        size_t known = 0;
        uint64_t loss = 0;
        for (size_t c = 0; c < RDMA_HW_COUNT; c++) {
                if (p->hw[c] == RDMA_CTR_UNKNOWN)
                        continue;
                known++;
                strbuf_appendf(counters, sizeof(counters), "%s%s %llu", counters[0] ? ", " : "",
                               rdma_hw_counter_name(c), (unsigned long long)p->hw[c]);
        }
        for (size_t i = 0; i < ARRAY_COUNT(roce_loss); i++)
                if (p->hw[roce_loss[i]] != RDMA_CTR_UNKNOWN)
                        loss += p->hw[roce_loss[i]];
        result_evidence(r, "source", CLASS_DIR "/%s/ports/%u/hw_counters; dcbnl (`dcb pfc show dev %s`)", d->name,
                        p->num, p->netdev[0] ? p->netdev : "IF");
        result_expected(r, "per day: at most %d lost-packet signs (out_of_sequence, packet_seq_err, "
                           "local_ack_timeout_err) and %d ignored congestion notifications (rp_cnp_ignored)",
                        ROCE_PER_DAY_MAX, ROCE_PER_DAY_MAX);
        if (known == 0 && (!p->pfc_asked || p->pfc_errno)) {
                result_status(r, STATUS_SKIP, "%s port %u: no hw_counters and %s", d->name, p->num, pfc);
                return;
        }
        result_observed(r, "%s; %s", pfc, counters[0] ? counters : "no hw_counters");
        double loss_rate = (double)loss / days;
        uint64_t ignored = p->hw[RDMA_HW_RP_CNP_IGNORED];
        double ignored_rate = ignored == RDMA_CTR_UNKNOWN ? 0 : (double)ignored / days;
        char why[320] = "";
        if (loss_rate > ROCE_PER_DAY_MAX)
                strbuf_appendf(why, sizeof(why), "losing packets (%.1f lost-packet signs a day)%s", loss_rate,
                               pfc_off ? " with PFC off on every priority" : "");
        if (ignored_rate > ROCE_PER_DAY_MAX)
                strbuf_appendf(why, sizeof(why), "%signoring congestion notifications (%.1f a day)", why[0] ? "; " : "",
                               ignored_rate);
        if (!why[0]) {
                result_status(r, STATUS_PASS, "%s port %u: %s; no sustained loss", d->name, p->num, pfc);
                return;
        }
        if (!uptime_known) {
                result_status(r, STATUS_SKIP, "%s port %u: %llu lost-packet signs and %llu ignored congestion "
                                              "notifications, counted since an unknown time (no uptime in "
                                              "/proc/uptime): not judged as rates",
                              d->name, p->num, (unsigned long long)loss,
                              (unsigned long long)(ignored == RDMA_CTR_UNKNOWN ? 0 : ignored));
                return;
        }
        result_status(r, STATUS_WARN, "%s port %u: %s", d->name, p->num, why);
        if (ignored_rate > ROCE_PER_DAY_MAX)
                result_remedy(r, "The switches mark congestion but this NIC does not slow down: turn RoCE congestion "
                                 "control (DCQCN) on for the priority RoCE uses (`mlxconfig -d %s query | grep "
                                 "ROCE_CC` shows the per-port priority mask and algorithm), and keep ECN marking on the "
                                 "switches for the same traffic class.",
                              d->pci_addr[0] ? d->pci_addr : d->name);
        else if (pfc_off)
                result_remedy(r, "RoCE is running lossy and dropping: turn PFC on for the RoCE priority on the NIC and "
                                 "on every switch port of the path (`dcb pfc set dev %s prio-pfc 3:on`, or `mlnx_qos -i "
                                 "%s --pfc 0,0,0,1,0,0,0,0`; 3 is the usual RoCE priority), or make sure the switches "
                                 "mark ECN so DCQCN can act before buffers overflow.",
                              p->netdev[0] ? p->netdev : "IF", p->netdev[0] ? p->netdev : "IF");
        else
                result_remedy(r, "Packets are lost on the RoCE path: check the switch ports' drop and pause counters, "
                                 "that the RoCE traffic's DSCP/priority maps to the traffic class that has PFC and ECN, "
                                 "and the cables (`mlxlink -d %s -c`).",
                              d->pci_addr[0] ? d->pci_addr : d->name);
}

static void run_roce_congestion(const struct check_info *self, const struct facts *f, struct report *rep) {
        each_roce_port(self, f, rep, judge_roce_port);
}

CHECK_INFO(network_roce_congestion, "network", "network.roce_congestion", LEVEL_QUICK, NEED_XID | NEED_NETDEV | NEED_RDMA,
           "RoCE ports neither losing packets nor ignoring congestion notifications", run_roce_congestion);

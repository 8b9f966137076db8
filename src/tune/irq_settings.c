/* net.irq_affinity: the interrupts of the NICs that share a NUMA node with a GPU, handled
 * by that node's CPUs (docs/tune.md). One target per MSI interrupt of each such NIC:
 * /proc/irq/N/smp_affinity_list. */
#include "core/fsroot.h"
#include "core/strv.h"
#include "sys/pci.h"
#include "tune/settings.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* irqbalance moves interrupts by its own rules every ten seconds: a value set under it
 * would not hold. */
static bool irqbalance_runs(struct fsroot *fs) {
        char **pids;
        if (fsroot_list(fs, "/proc", &pids) < 0)
                return false;
        bool found = false;
        for (size_t i = 0; pids[i] && !found; i++) {
                char path[64], comm[32];
                if (!isdigit((unsigned char)pids[i][0]))
                        continue;
                snprintf(path, sizeof(path), "/proc/%.20s/comm", pids[i]);
                found = fsroot_read_str(fs, path, comm, sizeof(comm)) == 0 && strcmp(comm, "irqbalance") == 0;
        }
        strv_free(pids);
        return found;
}

static bool gpu_on_node(const struct pci_facts *pci, int node) {
        for (size_t i = 0; i < pci->n; i++)
                if (pci_is_nvidia_gpu(pci, &pci->devs[i]) && pci->devs[i].have_numa_node &&
                    pci->devs[i].numa_node == node)
                        return true;
        return false;
}

/* One NIC's interrupts: each wants the CPUs of the NIC's node (local) or every online CPU. */
static int add_nic(struct fsroot *fs, const struct tune_setting *s, const struct pci_dev *d, const char *cpus,
                   const char *irqbalance, struct tune_targets *out) {
        char dir[600], **irqs;
        snprintf(dir, sizeof(dir), "/sys/bus/pci/devices/%s/msi_irqs", d->addr);
        if (fsroot_list(fs, dir, &irqs) < 0) {
                char why[128];
                snprintf(why, sizeof(why), "NIC %s lists no MSI interrupts", d->addr);
                return tune_targets_add_absent(s, out, dir, why);
        }
        int r = 0;
        for (size_t i = 0; irqs[i] && r == 0; i++) {
                char path[TUNE_PATH_MAX];
                if (strspn(irqs[i], "0123456789") != strlen(irqs[i]))
                        continue;
                snprintf(path, sizeof(path), "/proc/irq/%s/smp_affinity_list", irqs[i]);
                struct tune_target *x = tune_targets_add(out, s, path);
                if (!x) {
                        r = -ENOMEM;
                        break;
                }
                int rr = tune_read_value(fs, path, x->current, sizeof(x->current));
                if (strlen(cpus) >= sizeof(x->wanted))
                        snprintf(x->cannot, sizeof(x->cannot), "%s: its CPU list is longer than tune keeps (%zu "
                                 "characters)", d->addr, strlen(cpus));
                else
                        memcpy(x->wanted, cpus, strlen(cpus) + 1);
                if (x->cannot[0])
                        continue;
                if (rr < 0)
                        snprintf(x->cannot, sizeof(x->cannot), "IRQ %.16s of %s: %s", irqs[i], d->addr, strerror(-rr));
                else if (irqbalance)
                        snprintf(x->cannot, sizeof(x->cannot), "%s", irqbalance);
        }
        strv_free(irqs);
        return r;
}

static int expand_irq_affinity(struct tune_ctx *c, const struct tune_setting *s, const char *value,
                               struct tune_targets *out) {
        struct pci_facts pci;
        int r = pci_gather(c->fs, &pci);
        if (r < 0)
                return r == -ENOMEM ? r : tune_targets_add_absent(s, out, "/sys/bus/pci/devices", strerror(-r));
        char online[256] = "";
        bool all = strcmp(value, "all") == 0;
        if (all && fsroot_read_str(c->fs, "/sys/devices/system/cpu/online", online, sizeof(online)) < 0) {
                pci_facts_done(&pci);
                return tune_targets_add_absent(s, out, "/sys/devices/system/cpu/online", "the online CPUs are unknown");
        }
        const char *irqbalance = irqbalance_runs(c->fs)
                                         ? "irqbalance runs and would move the interrupts back: stop it (`systemctl "
                                           "disable --now irqbalance`) or keep it off these CPUs "
                                           "(IRQBALANCE_BANNED_CPULIST)"
                                         : NULL;
        size_t before = out->n;
        for (size_t i = 0; i < pci.n && r == 0; i++) {
                const struct pci_dev *d = &pci.devs[i];
                if (!pci_is_network(d) || !d->driver[0] || !d->have_numa_node || d->numa_node < 0 ||
                    !gpu_on_node(&pci, d->numa_node))
                        continue;
                if (!all && !d->local_cpulist[0]) {
                        char path[600];
                        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/local_cpulist", d->addr);
                        r = tune_targets_add_absent(s, out, path, "the NIC's local CPUs are unknown");
                        continue;
                }
                r = add_nic(c->fs, s, d, all ? online : d->local_cpulist, irqbalance, out);
        }
        pci_facts_done(&pci);
        if (r == 0 && out->n == before)
                r = tune_targets_add_absent(s, out, "/proc/irq",
                                            "no NIC with a driver shares a NUMA node with an NVIDIA GPU");
        return r;
}

static int valid_affinity(const char *v) { return strcmp(v, "local") == 0 || strcmp(v, "all") == 0 ? 0 : -EINVAL; }

const struct tune_setting tune_net_irq_affinity = {
        "net.irq_affinity", "numa.gpu_affinity", "interrupts of the GPUs' NICs on their NUMA node's CPUs", "local|all",
        valid_affinity, expand_irq_affinity};

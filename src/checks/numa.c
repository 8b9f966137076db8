/* numa: the node layout, the node each GPU hangs off, and automatic NUMA balancing.
 * A process that drives a GPU from the far socket pays an interconnect hop on every
 * host-device copy; frameworks and Slurm bind by the GPU's node, so it must be known. */
#include "checks/check.h"
#include "core/strparse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The kernel's MAX_NUMNODES is at most 1024 (NODES_SHIFT 10). */
#define NODE_ID_BITS 1024

/* Skip (no NUMA in sysfs) or error (unreadable) when no node is known; true when it did. */
static bool skip_without_nodes(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct numa_facts *n = &f->numa;
        if (n->n_nodes > 0)
                return false;
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", "/sys/devices/system/node/online");
        if (n->nodes_err == -ENOENT || n->nodes_err == 0) {
                result_status(r, STATUS_SKIP, "the kernel exposes no NUMA nodes (/sys/devices/system/node absent: "
                              "kernel built without CONFIG_NUMA); all memory is equally local");
                return true;
        }
        result_status(r, STATUS_ERROR, "cannot read /sys/devices/system/node/online: %s", check_errtext(n->nodes_err));
        result_remedy(r, "Check that sysfs is mounted at /sys (or that the --root tree contains it).");
        return true;
}

static void run_nodes(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct numa_facts *n = &f->numa;
        if (skip_without_nodes(self, f, rep))
                return;
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", "/sys/devices/system/node/online, /sys/devices/system/node/node*/{cpulist,meminfo}");
        for (size_t i = 0; i < n->n_nodes; i++) {
                const struct numa_node *nd = &n->nodes[i];
                if (nd->cpulist_err < 0) {
                        result_status(r, STATUS_ERROR, "cannot read /sys/devices/system/node/node%d/cpulist: %s", nd->id,
                                      check_errtext(nd->cpulist_err));
                        result_remedy(r, "Read the file by hand (`cat /sys/devices/system/node/node%d/cpulist`).",
                                      nd->id);
                        return;
                }
        }

        char cpu_nodes[512] = "", mem_only[256] = "";
        size_t lc = 0, n_mem_only = 0;
        uint64_t mem_only_ids[NODE_ID_BITS / 64] = { 0 };
        for (size_t i = 0; i < n->n_nodes; i++) {
                const struct numa_node *nd = &n->nodes[i];
                char key[32], mem[48] = "memory unknown";
                if (nd->mem_err == 0)
                        snprintf(mem, sizeof(mem), "%" PRIu64 " MiB", nd->mem_total_kb / 1024);
                snprintf(key, sizeof(key), "node%d", nd->id);
                result_evidence(r, key, "cpus %s, %s", nd->n_cpus ? nd->cpulist : "none", mem);
                if (nd->n_cpus == 0) {
                        n_mem_only++;
                        if (nd->id >= 0 && nd->id < NODE_ID_BITS)
                                mem_only_ids[nd->id / 64] |= 1ull << (nd->id % 64);
                } else if (lc < sizeof(cpu_nodes)) {
                        lc += (size_t)snprintf(cpu_nodes + lc, sizeof(cpu_nodes) - lc, "%snode %d: CPUs %s",
                                               lc ? ", " : "", nd->id, nd->cpulist);
                }
        }
        if (n_mem_only && format_cpulist(mem_only_ids, NODE_ID_BITS, mem_only, sizeof(mem_only)) < 0)
                snprintf(mem_only, sizeof(mem_only), "too many to list");
        if (n_mem_only)
                result_observed(r, "%u node%s with CPUs (%s); %zu memory-only node%s (%s)", n->n_cpu_nodes,
                                n->n_cpu_nodes == 1 ? "" : "s", cpu_nodes, n_mem_only, n_mem_only == 1 ? "" : "s",
                                mem_only);
        else
                result_observed(r, "%u node%s with CPUs (%s)", n->n_cpu_nodes, n->n_cpu_nodes == 1 ? "" : "s",
                                cpu_nodes);
        result_expected(r, "reported only");
        result_status(r, STATUS_PASS, "%zu NUMA node%s: %u with CPUs, %zu memory-only", n->n_nodes,
                      n->n_nodes == 1 ? "" : "s", n->n_cpu_nodes, n_mem_only);
}

CHECK_INFO(numa_nodes, "numa", "numa.nodes", LEVEL_QUICK, 0,
           "NUMA nodes: with CPUs and memory-only, reported",
           run_nodes);

static void run_gpu_affinity(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct numa_facts *n = &f->numa;
        if (check_skip_without_gpus(self, f, rep) || skip_without_nodes(self, f, rep))
                return;
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct pci_dev *d = gpu_pci(f, i);
                const struct numa_gpu *g = i < n->n_gpus ? &n->gpus[i] : NULL;
                struct result *r = result_new(rep, self, d->addr);
                if (d->numa_node_errno) {
                        /* Falling back to local_cpulist would hide a broken sysfs attribute. */
                        result_evidence(r, "source", "%s/numa_node", d->sysfs_path);
                        result_status(r, STATUS_ERROR, "cannot read numa_node of %s: %s", d->addr,
                                      d->numa_node_errno == EINVAL ? "not a node number" : strerror(d->numa_node_errno));
                        result_remedy(r, "Read it by hand: `cat %s/numa_node`.", d->sysfs_path);
                        continue;
                }
                const bool by_cpulist = !d->have_numa_node || (g && g->source == NUMA_GPU_FROM_CPULIST);
                result_evidence(r, "source", "%s/%s", d->sysfs_path, by_cpulist ? "local_cpulist" : "numa_node");
                if (!d->have_numa_node && !*d->local_cpulist) {
                        if (d->read_errno) {
                                result_status(r, STATUS_ERROR, "cannot read the NUMA locality of %s: %s", d->addr,
                                              "unreadable or malformed numa_node/local_cpulist");
                                result_remedy(r, "Read the files by hand (`cat %s/numa_node %s/local_cpulist`).",
                                              d->sysfs_path, d->sysfs_path);
                        } else {
                                result_status(r, STATUS_SKIP, "sysfs gives neither numa_node nor local_cpulist for %s",
                                              d->addr);
                        }
                        continue;
                }
                const int node = g ? g->node : -1;
                if (g && g->source != NUMA_GPU_UNRESOLVED)
                        result_evidence(r, "resolved_from", "%s",
                                        g->source == NUMA_GPU_FROM_NUMA_NODE ? "numa_node" : "local_cpulist");
                if (d->have_numa_node)
                        result_evidence(r, "numa_node", "%d", d->numa_node);
                if (*d->local_cpulist)
                        result_evidence(r, "local_cpulist", "%s", d->local_cpulist);
                const char *cpus = *d->local_cpulist ? d->local_cpulist : "unknown";
                result_observed(r, "node %d, local CPUs %s", node, cpus);
                if (n->n_cpu_nodes <= 1) {
                        result_expected(r, "any node (the host has %u node with CPUs)", n->n_cpu_nodes);
                        result_status(r, STATUS_PASS, node >= 0 ? "GPU is on NUMA node %d; the host has one CPU node"
                                                                : "GPU has no NUMA node (%d), harmless with one CPU node",
                                      node);
                        continue;
                }
                result_expected(r, "a NUMA node >= 0 (the host has %u nodes with CPUs)", n->n_cpu_nodes);
                if (node >= 0) {
                        result_status(r, STATUS_PASS, "GPU is on NUMA node %d (local CPUs %s)", node, cpus);
                        continue;
                }
                result_status(r, STATUS_FAIL, "GPU has no NUMA node on a host with %u CPU nodes: schedulers and "
                              "frameworks cannot bind its processes to the near socket",
                              n->n_cpu_nodes);
                result_remedy(r, "The firmware does not describe PCIe locality: in the BIOS enable NUMA / ACPI SRAT "
                              "(disable \"Node Interleaving\"), keep \"Sub-NUMA Clustering\"/NPS at the vendor's "
                              "recommended value, and update the BIOS. Until then bind by hand after reading "
                              "`nvidia-smi topo -m`: `numactl --cpunodebind=N --membind=N`.");
        }
}

CHECK_INFO(numa_gpu_affinity, "numa", "numa.gpu_affinity", LEVEL_QUICK, NEED_NETDEV | NEED_RDMA | NEED_PCI_TREE,
           "Each GPU belongs to a NUMA node on a multi-node host",
           run_gpu_affinity);

static void run_balancing(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct numa_facts *n = &f->numa;
        if (check_skip_without_gpus(self, f, rep) || skip_without_nodes(self, f, rep))
                return;
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", "/proc/sys/kernel/numa_balancing");
        if (n->n_nodes <= 1) {
                result_status(r, STATUS_SKIP, "single NUMA node: automatic NUMA balancing has nowhere to move pages");
                return;
        }
        if (check_judge_read_error(r, n->balancing_err, "/proc/sys/kernel/numa_balancing",
                                   "/proc/sys/kernel/numa_balancing absent (kernel built without automatic NUMA "
                                   "balancing)",
                                   "Read it by hand: `sysctl kernel.numa_balancing`."))
                return;
        result_observed(r, "kernel.numa_balancing=%d", n->balancing);
        result_expected(r, "kernel.numa_balancing=0");
        if (n->balancing == 0) {
                result_status(r, STATUS_PASS, "automatic NUMA balancing is off");
                return;
        }
        result_status(r, STATUS_WARN, "automatic NUMA balancing is on across %zu nodes: it unmaps pages to sample "
                      "access and migrates them, which stalls processes bound next to their GPU",
                      n->n_nodes);
        result_remedy(r, "Run `gpuvet tune apply --set kernel.numa_balancing=0` (or `sysctl -w "
                      "kernel.numa_balancing=0`), and persist it: `echo 'kernel.numa_balancing = 0' "
                      "> /etc/sysctl.d/90-gpu-numa.conf` (or add `numa_balancing=disable` to the kernel command "
                      "line).");
}

CHECK_INFO(numa_balancing, "numa", "numa.balancing", LEVEL_QUICK, 0,
           "Automatic NUMA balancing is off on a multi-node GPU host",
           run_balancing);

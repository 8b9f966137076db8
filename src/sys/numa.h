/* NUMA topology: the online nodes with their CPUs and memory, automatic NUMA balancing,
 * and the node each GPU is attached to.
 *
 * A node with an empty cpulist is memory-only: on POWER9 with NVLink the V100's memory
 * appears as such nodes (250-255), on newer hosts CXL memory or a Grace Hopper GPU's HBM.
 * They are reported but never counted as CPU sockets.
 *
 * Values carry an errno beside them as in sys/cpu.h: 0 read, -ENOENT absent here, any
 * other negative errno unreadable or malformed. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fsroot;
struct facts;

struct numa_node {
        int id;
        char *cpulist;          /* as sysfs writes it, "" for a memory-only node; NULL when unreadable */
        int cpulist_err;
        unsigned n_cpus;
        uint64_t mem_total_kb;  /* "Node N MemTotal:" of nodeN/meminfo */
        int mem_err;
};

enum numa_gpu_source {
        NUMA_GPU_UNRESOLVED,    /* neither a usable numa_node nor a local_cpulist inside one node */
        NUMA_GPU_FROM_NUMA_NODE,
        NUMA_GPU_FROM_CPULIST,  /* no numa_node file (or -1): its local CPUs all lie in one node */
};

struct numa_gpu {
        int node;               /* resolved node, -1 when none */
        enum numa_gpu_source source;
};

struct numa_facts {
        int nodes_err;          /* /sys/devices/system/node/online; -ENOENT: kernel without NUMA */
        struct numa_node *nodes; /* ascending id */
        size_t n_nodes;
        unsigned n_cpu_nodes;   /* nodes with at least one CPU */
        int balancing;          /* /proc/sys/kernel/numa_balancing: 0 off, 1 normal, 2 tiering, 3 both */
        int balancing_err;
        struct numa_gpu *gpus;  /* indexed like facts.gpus */
        size_t n_gpus;
};

/* Gather f->numa; needs f->pci and f->gpus. Returns 0, or -ENOMEM. */
int numa_gather(struct fsroot *fs, struct facts *f);
void numa_facts_done(struct numa_facts *x);

/* The node with this id, or NULL. */
const struct numa_node *numa_find_node(const struct numa_facts *n, int id);

/* Resolve a device's node: its numa_node when sysfs gives one >= 0, otherwise the one node
 * whose CPUs contain all of local_cpulist's CPUs that belong to any node. Returns the node
 * id, or -1 (with NUMA_GPU_UNRESOLVED) when none or several match. Pure: no I/O. */
int numa_resolve_node(const struct numa_facts *n, bool have_numa_node, int numa_node, const char *local_cpulist,
                      enum numa_gpu_source *ret_source);

/* Everything gpuvet knows about a node after gathering: plain data, no I/O handles.
 * Checks are pure functions of this struct, so a fixture tree or a snapshot taken on
 * another machine is judged exactly like the live one. */
#pragma once

#include "data/gpudb.h"
#include "sys/container.h"
#include "sys/cpu.h"
#include "sys/gpu.h"
#include "sys/host.h"
#include "sys/iommu.h"
#include "sys/kernel.h"
#include "sys/memory.h"
#include "sys/numa.h"
#include "sys/nvidia.h"
#include "sys/pci.h"
#include "sys/virt.h"
#include "sys/xid.h"

struct fsroot;

struct facts {
        const struct gpudb *db;
        struct host_facts host;
        struct pci_facts pci;
        struct gpu_facts gpus;
        struct cpu_facts cpu;
        struct numa_facts numa;
        struct memory_facts memory;
        struct iommu_facts iommu;
        struct virt_facts virt;
        struct nvidia_facts nvidia;
        struct kernel_facts kernel;
        struct container_facts container;
        struct xid_facts xid;
};

/* Gather all facts from fs. Returns 0, or a negative errno only for failures that make a
 * report impossible (out of memory); unreadable files become "unknown" inside the facts. */
int facts_gather(struct fsroot *fs, const struct gpudb *db, struct facts *ret);
void facts_done(struct facts *f);

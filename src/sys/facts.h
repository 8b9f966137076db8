/* Everything gpuvet knows about a node after gathering: plain data, no I/O handles.
 * Checks are pure functions of this struct, so a fixture tree or a snapshot taken on
 * another machine is judged exactly like the live one. */
#pragma once

#include "data/gpudb.h"
#include "sys/container.h"
#include "sys/cpu.h"
#include "sys/cuda_driver.h"
#include "sys/cuda_env.h"
#include "sys/dcgm.h"
#include "sys/devnodes.h"
#include "sys/gpu.h"
#include "sys/host.h"
#include "sys/inputs.h"
#include "sys/iommu.h"
#include "sys/kernel.h"
#include "sys/memory.h"
#include "sys/netdev.h"
#include "sys/numa.h"
#include "sys/nvidia.h"
#include "sys/nvml_facts.h"
#include "sys/pci.h"
#include "sys/rdma.h"
#include "sys/virt.h"
#include "sys/xid.h"

struct fsroot;
struct policy;
struct probe_facts;
struct burn_facts;
struct container_gpu_facts;
struct bench_suite_facts;

/* The trees a capture can lack as a whole: another tool's capture of a node's files, or a
 * snapshot taken or unpacked without device nodes. Bits of facts.capture_lacks. */
enum capture_tree {
        CAPTURE_DEV = 1u << 0,         /* /dev */
        CAPTURE_PROC = 1u << 1,        /* /proc */
        CAPTURE_SYS = 1u << 2,         /* /sys */
        CAPTURE_NVIDIA_PROC = 1u << 3, /* /proc/driver/nvidia (its module made it on the node) */
        CAPTURE_PROC_SYS = 1u << 4,    /* /proc/sys */
};

struct facts {
        const struct gpudb *db;
        /* The trees the --root capture does not hold at all (enum capture_tree); always 0 on
         * the live root, where a missing /dev or /proc is the node's own fault. A check whose
         * input lies in one skips (check_skip_capture_lacks): the capture cannot tell. */
        unsigned int capture_lacks;
        /* The inputs read into this struct (NEED_* bits, sys/inputs.def): facts_gather_some
         * sets the facts', check the others'. A member whose input is not here is zero. */
        input_set inputs_read;
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
        struct netdev_facts netdev;
        struct rdma_facts rdma;     /* the RDMA devices of netdev.rdma, their ports */
        struct devnode_facts devnodes;
        struct cuda_env_facts cuda_env;

        /* NVML, gathered by the caller (cmd/check.c: on a thread while facts_gather runs,
         * moved in after it) and released with nvml_facts_done before facts_done; zero (init_state NVML_INIT_NOT_TRIED) when NVML
         * was not asked. nvml_note says why not, or why no library loaded (the loader's
         * message); nvml_lib_path names the library file that was loaded. */
        struct nvml_facts nvml;
        char nvml_note[512];
        char nvml_lib_path[512];

        /* The CUDA driver library and cuInit (sys/cuda_driver.h), probed by cmd/check.c
         * in a child process (forked before NVML's threads, released once the facts are
         * in) while NVML is read; NOT_PROBED (note saying why) otherwise. */
        struct cuda_driver_facts cuda_driver;

        /* DCGM's diagnostic (sys/dcgm.h), run by cmd/check.c with --with-dcgm; released by
         * facts_done. */
        struct dcgm_facts dcgm;

        /* container.gpu_access's container run (sys/container_gpu.h), by cmd/check.c at the
         * standard level; NULL when not run. Owned by the caller. */
        const struct container_gpu_facts *container_gpu;

        /* Device probes (bench/probes.h), run by cmd/check.c at --level standard and full;
         * NULL when not run. Owned by the caller, not released by facts_done. */
        const struct probe_facts *probes;

        /* The stress test (burn/burn.h), run by cmd/burn.c and by check at --level full;
         * NULL when not run. Owned by the caller. */
        const struct burn_facts *burn;

        /* Every benchmark (bench/suite.h), run by cmd/check.c at --level full; NULL when not
         * run. Owned by the caller. */
        const struct bench_suite_facts *bench_suite;

        /* NVML read again after the device probes (standard level), for the counters that
         * are judged by how much they grew while the GPUs worked (PCIe replays, NVLink
         * errors); NULL when not read. window_s: seconds between the two reads. Owned by
         * the caller. */
        const struct nvml_facts *nvml_after;
        double nvml_window_s;

        /* The site policy (policy/policy.h) that check runs under; NULL when none. Owned by
         * the caller. Checks read their thresholds through check_thresholds(). */
        const struct policy *policy;
};

/* Gather the facts of needs (NEED_* bits of sys/inputs.def, with what they read
 * themselves) from fs; the others stay zero. Returns as facts_gather. */
int facts_gather_some(struct fsroot *fs, const struct gpudb *db, input_set needs, struct facts *ret);
/* Gather all facts from fs. Returns 0, or a negative errno only for failures that make a
 * report impossible (out of memory); unreadable files become "unknown" inside the facts. */
int facts_gather(struct fsroot *fs, const struct gpudb *db, struct facts *ret);
void facts_done(struct facts *f);

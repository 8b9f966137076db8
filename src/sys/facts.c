#include "sys/facts.h"

#include "core/array.h"
#include "core/fsroot.h"

#include <string.h>

int facts_gather(struct fsroot *fs, const struct gpudb *db, struct facts *f) {
        memset(f, 0, sizeof(*f));
        f->db = db;
        if (!fsroot_is_live(fs)) {
                static const struct {
                        const char *dir;
                        unsigned int bit;
                } trees[] = {{"/dev", CAPTURE_DEV}, {"/proc", CAPTURE_PROC}, {"/sys", CAPTURE_SYS},
                             {"/proc/driver/nvidia", CAPTURE_NVIDIA_PROC}, {"/proc/sys", CAPTURE_PROC_SYS}};
                for (size_t i = 0; i < ARRAY_COUNT(trees); i++)
                        if (!fsroot_is_dir(fs, trees[i].dir))
                                f->capture_lacks |= trees[i].bit;
        }
        int r;
        if ((r = host_gather(fs, &f->host)) < 0 || (r = pci_gather(fs, &f->pci)) < 0 ||
            (r = gpu_gather(&f->pci, db, &f->gpus)) < 0)
                return r;
        /* Categories read what they need; each may use the host, PCI and GPU facts above. */
        int (*const gatherers[])(struct fsroot *, struct facts *) = {
                cpu_gather,   numa_gather,   memory_gather, iommu_gather,
                virt_gather,  nvidia_gather, kernel_gather, container_gather,
                xid_gather,   netdev_gather, rdma_gather, devnodes_gather, cuda_env_gather,
        };
        for (size_t i = 0; i < ARRAY_COUNT(gatherers); i++)
                if ((r = gatherers[i](fs, f)) < 0)
                        return r;
        return 0;
}

void facts_done(struct facts *f) {
        dcgm_facts_done(&f->dcgm);
        cuda_env_facts_done(&f->cuda_env);
        devnodes_facts_done(&f->devnodes);
        rdma_facts_done(&f->rdma);
        netdev_facts_done(&f->netdev);
        xid_facts_done(&f->xid);
        container_facts_done(&f->container);
        kernel_facts_done(&f->kernel);
        nvidia_facts_done(&f->nvidia);
        virt_facts_done(&f->virt);
        iommu_facts_done(&f->iommu);
        memory_facts_done(&f->memory);
        numa_facts_done(&f->numa);
        cpu_facts_done(&f->cpu);
        gpu_facts_done(&f->gpus);
        pci_facts_done(&f->pci);
        host_facts_done(&f->host);
}

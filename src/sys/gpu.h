/* NVIDIA GPUs seen on the PCI bus, each matched against gpuvet's GPU table. */
#pragma once

#include <stddef.h>

struct facts;
struct gpudb;
struct gpu_model;
struct nvml_gpu;
struct pci_dev;
struct pci_facts;

struct gpu {
        size_t pci_index;              /* into facts.pci.devs */
        const struct gpu_model *model; /* NULL when the device id is not in the table */
};

struct gpu_facts {
        struct gpu *gpus;
        size_t n;
};

int gpu_gather(const struct pci_facts *pci, const struct gpudb *db, struct gpu_facts *ret);
void gpu_facts_done(struct gpu_facts *g);

/* The PCI device of GPU gpu_index. */
const struct pci_dev *gpu_pci(const struct facts *f, size_t gpu_index);
/* "NVIDIA H100 80GB HBM3" or "NVIDIA GPU 10de:2330" when not in the table. */
void gpu_describe(const struct facts *f, size_t gpu_index, char *buf, size_t size);
/* The NVML GPU at this PCI address (sysfs form), or NULL when NVML was not asked or does
 * not see it. */
const struct nvml_gpu *nvml_gpu_at(const struct facts *f, const char *addr);

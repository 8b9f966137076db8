/* NVIDIA GPUs seen on the PCI bus, each matched against gpuvet's GPU table. */
#pragma once

#include <stddef.h>

struct gpudb;
struct gpu_model;
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

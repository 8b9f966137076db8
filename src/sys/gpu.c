#include "sys/gpu.h"
#include "data/gpudb.h"
#include "sys/facts.h"
#include "sys/pci.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int gpu_gather(const struct pci_facts *pci, const struct gpudb *db, struct gpu_facts *ret) {
        memset(ret, 0, sizeof(*ret));
        ret->gpus = calloc(pci->n ? pci->n : 1, sizeof(struct gpu));
        if (!ret->gpus)
                return -ENOMEM;
        for (size_t i = 0; i < pci->n; i++) {
                const struct pci_dev *d = &pci->devs[i];
                if (!pci_is_nvidia_gpu(pci, d))
                        continue;
                struct gpu *g = &ret->gpus[ret->n++];
                g->pci_index = i;
                g->model = d->have_ids ? gpudb_find_subsystem(db, d->vendor, d->device, d->subsys_device) : NULL;
        }
        return 0;
}

void gpu_facts_done(struct gpu_facts *g) {
        free(g->gpus);
        memset(g, 0, sizeof(*g));
}

const struct pci_dev *gpu_pci(const struct facts *f, size_t gpu_index) {
        return &f->pci.devs[f->gpus.gpus[gpu_index].pci_index];
}

const struct nvml_gpu *nvml_gpu_at(const struct facts *f, const char *addr) {
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                if (nv_ok(g->pci_bus_id) && strcasecmp(g->pci_bus_id.v, addr) == 0)
                        return g;
        }
        return NULL;
}

void gpu_describe(const struct facts *f, size_t gpu_index, char *buf, size_t size) {
        const struct gpu *g = &f->gpus.gpus[gpu_index];
        const struct pci_dev *d = gpu_pci(f, gpu_index);
        if (g->model)
                snprintf(buf, size, "%s", g->model->name);
        else if (d->have_ids)
                snprintf(buf, size, "NVIDIA GPU %04x:%04x", d->vendor, d->device);
        else
                snprintf(buf, size, "NVIDIA GPU");
}

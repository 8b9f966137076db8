#include "sys/gpu.h"
#include "data/gpudb.h"
#include "sys/pci.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

#include "results/golden.h"
#include "sys/facts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int golden_build(const struct facts *f, struct golden *ret) {
        memset(ret, 0, sizeof(*ret));
        bool nvml_read = f->nvml.init_state == NVML_INIT_OK;
        int r = topo_build(f, nvml_read ? &f->nvml : NULL, &ret->topo);
        if (r < 0)
                return r;
        ret->n_gpus = ret->topo.n_gpus;
        ret->n_nics = ret->topo.n_nics;
        ret->gpus = calloc(ret->n_gpus + 1, sizeof(*ret->gpus));
        ret->nics = calloc(ret->n_nics + 1, sizeof(*ret->nics));
        if (!ret->gpus || !ret->nics) {
                golden_done(ret);
                return -ENOMEM;
        }
        for (size_t i = 0; i < ret->n_gpus; i++) {
                const struct topo_dev *t = &ret->topo.devs[i];
                const struct pci_dev *d = &f->pci.devs[t->pci_index];
                struct golden_gpu *g = &ret->gpus[i];
                snprintf(g->bus_id, sizeof(g->bus_id), "%s", d->addr);
                snprintf(g->device_id, sizeof(g->device_id), "%04x:%04x", d->vendor & 0xffff, d->device & 0xffff);
                g->numa_node = d->have_numa_node ? d->numa_node : -1;
                const struct nvml_gpu *n = nvml_gpu_at(f, d->addr);
                if (n && nv_ok(n->name)) {
                        snprintf(g->model, sizeof(g->model), "%s", n->name.v);
                        g->model_from_nvml = true;
                } else {
                        gpu_describe(f, t->gpu_index, g->model, sizeof(g->model));
                }
                if (n && nv_ok(n->vbios))
                        snprintf(g->vbios, sizeof(g->vbios), "%s", n->vbios.v);
                if (n && nv_ok(n->inforom_image))
                        snprintf(g->inforom, sizeof(g->inforom), "%s", n->inforom_image.v);
        }
        for (size_t i = 0; i < ret->n_nics; i++) {
                const struct topo_dev *t = &ret->topo.devs[ret->n_gpus + i];
                const struct pci_dev *d = &f->pci.devs[t->pci_index];
                struct golden_nic *n = &ret->nics[i];
                snprintf(n->bus_id, sizeof(n->bus_id), "%s", d->addr);
                snprintf(n->name, sizeof(n->name), "%s", t->rdma[0] ? t->rdma : t->netdev);
                n->numa_node = d->have_numa_node ? d->numa_node : -1;
        }
        if (nvml_read && nv_ok(f->nvml.driver_version))
                snprintf(ret->driver_version, sizeof(ret->driver_version), "%s", f->nvml.driver_version.v);
        else if (f->nvidia.have_version)
                snprintf(ret->driver_version, sizeof(ret->driver_version), "%s", f->nvidia.driver_version);
        return 0;
}

void golden_done(struct golden *g) {
        free(g->gpus);
        free(g->nics);
        topo_done(&g->topo);
        memset(g, 0, sizeof(*g));
}

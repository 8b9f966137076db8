/* A result's scope from its subject (result_scope.h). */
#include "report/result_scope.h"

#include "core/json_text.h"
#include "core/strparse.h"
#include "sys/gpu.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_pci_address(const char *s) {
        unsigned dom, bus, dev, fn;
        int n = 0;
        return strlen(s) == 12 && strspn(s, "0123456789abcdef:.") == 12 &&
               sscanf(s, "%4x:%2x:%2x.%1x%n", &dom, &bus, &dev, &fn, &n) == 4 && n == 12;
}

/* Names from the machine's files go through json_text: any bytes give a string. */
static json_t *scope_of(const char *kind) {
        json_t *o = json_object();
        json_object_set_new(o, "kind", json_string(kind));
        return o;
}

static json_t *gpu_scope(const struct facts *f, size_t index, const char *addr) {
        json_t *o = scope_of("gpu");
        json_object_set_new(o, "index", index == (size_t)-1 ? json_null() : json_integer((json_int_t)index));
        json_object_set_new(o, "pci_bus_id", addr ? json_text(addr) : json_null());
        const struct nvml_gpu *g = addr ? nvml_gpu_at(f, addr) : NULL;
        json_object_set_new(o, "uuid", g && nv_ok(g->uuid) && g->uuid.v[0] ? json_text(g->uuid.v) : json_null());
        return o;
}

static json_t *pci_device_scope(const char *addr) {
        json_t *o = scope_of("pci_device");
        json_object_set_new(o, "pci_bus_id", json_string(addr));
        return o;
}

static const struct rdma_dev *rdma_named(const struct facts *f, const char *name, size_t len) {
        for (size_t i = 0; i < f->rdma.n; i++)
                if (strlen(f->rdma.devs[i].name) == len && strncmp(f->rdma.devs[i].name, name, len) == 0)
                        return &f->rdma.devs[i];
        return NULL;
}

static json_t *nic_scope(const struct rdma_dev *d, const char *port) {
        json_t *o = scope_of(port ? "nic_port" : "nic");
        json_object_set_new(o, "device", json_text(d->name));
        json_object_set_new(o, "pci_bus_id", d->pci_addr[0] ? json_text(d->pci_addr) : json_null());
        if (port) {
                uint64_t num;
                json_object_set_new(o, "port", parse_u64(port, &num) == 0 ? json_integer((json_int_t)num) : json_null());
        }
        return o;
}

void *result_scope_json(const struct facts *f, const char *subject) {
        if (!subject || strcmp(subject, "host") == 0)
                return scope_of("node");
        if (is_pci_address(subject)) {
                for (size_t i = 0; i < f->gpus.n; i++)
                        if (strcmp(gpu_pci(f, i)->addr, subject) == 0)
                                return gpu_scope(f, i, subject);
                for (size_t i = 0; i < f->rdma.n; i++)
                        if (strcmp(f->rdma.devs[i].pci_addr, subject) == 0)
                                return nic_scope(&f->rdma.devs[i], NULL);
                return pci_device_scope(subject);
        }
        /* "nvml:3": a GPU NVML lists without a PCI address gpuvet could match. */
        uint64_t index;
        if (strncmp(subject, "nvml:", 5) == 0 && parse_u64(subject + 5, &index) == 0)
                return gpu_scope(f, (size_t)index, NULL);
        /* "mlx5_0" or "mlx5_0/1" (an RDMA device, one of its ports). */
        const char *slash = strchr(subject, '/');
        const struct rdma_dev *d = rdma_named(f, subject, slash ? (size_t)(slash - subject) : strlen(subject));
        if (d)
                return nic_scope(d, slash ? slash + 1 : NULL);
        /* "gpu0 -> gpu1": a link the benchmarks measured between two devices. */
        const char *arrow = strstr(subject, " -> ");
        if (arrow) {
                json_t *o = scope_of("link"), *ends = json_array();
                char *from = strndup(subject, (size_t)(arrow - subject));
                json_array_append_new(ends, json_text(from));
                json_array_append_new(ends, json_text(arrow + 4));
                free(from);
                json_object_set_new(o, "ends", ends);
                return o;
        }
        /* The HCAs of one model, and any other name a check judges as a whole. */
        json_t *o = scope_of("group");
        json_object_set_new(o, "name", json_text(subject));
        return o;
}

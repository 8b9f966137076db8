#include "report/topo_report.h"
#include "report/report_text.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checks/check.h"
#include "core/json_text.h"
#include "report/text_safe.h"

static const char legend[] =
        "Legend:\n"
        "\n"
        "  X    = Self\n"
        "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
        "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
        "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
        "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
        "  PIX  = Connection traversing at most a single PCIe bridge\n"
        "  NV#  = Connection traversing a bonded set of # NVLinks\n"
        "  NV?  = NVLinks unknown: NVML failed to tell (the reason is on stderr)\n";

/* A NIC's name in the legend: its RDMA device as nvidia-smi shows, else its interface,
 * else its PCI address. */
static const char *nic_name(const struct facts *f, const struct topo_dev *d) {
        if (d->rdma[0])
                return d->rdma;
        if (d->netdev[0])
                return d->netdev;
        return f->pci.devs[d->pci_index].addr;
}

static void print_matrix(const struct facts *f, const struct topo *t) {
        /* nvidia-smi underlines the header; only on a terminal here, so files stay plain. */
        bool underline = text_want_color(stdout);
        printf("\t%s", underline ? "\033[4m" : "");
        for (size_t j = 0; j < t->n; j++)
                printf("%s%s", j ? "\t" : "", t->devs[j].label);
        printf("%sCPU Affinity\tNUMA Affinity\tGPU NUMA ID%s\n", t->n ? "\t" : "", underline ? "\033[0m" : "");
        char cell[16];
        for (size_t i = 0; i < t->n; i++) {
                const struct topo_dev *d = &t->devs[i];
                printf("%s", d->label);
                for (size_t j = 0; j < t->n; j++)
                        printf("\t%s", topo_cell_text(topo_at(t, i, j), cell, sizeof(cell)));
                if (d->kind == TOPO_GPU) {
                        const char *cpus = f->pci.devs[d->pci_index].local_cpulist;
                        char node[16] = "N/A";
                        if (d->numa_node >= 0)
                                snprintf(node, sizeof(node), "%d", d->numa_node);
                        /* GPU NUMA ID: the node of the GPU's own memory (Grace Hopper); N/A
                         * for every GPU whose memory is not a NUMA node. */
                        printf("\t");
                        text_safe_write(stdout, *cpus ? cpus : "N/A");
                        printf("\t%s\t\tN/A", node);
                }
                printf("\n");
        }
        printf("\n%s", legend);
        if (t->n_nics) {
                printf("\nNIC Legend:\n\n");
                for (size_t i = t->n_gpus; i < t->n; i++) {
                        printf("  %s: ", t->devs[i].label);
                        text_safe_write(stdout, nic_name(f, &t->devs[i]));
                        printf("\n");
                }
        }
        printf("\n");
}

/* Why NVML matched a GPU of the bus to none of its own, into buf: the device count
 * failed, or the first NVML GPU whose PCI address it could not give. NULL when every
 * address is known (NVML simply lacks the GPU). */
static const char *unmatched_problem(const struct nvml_use *use, char *buf, size_t size) {
        const struct nvml_facts *nv = use->nv;
        if (nv->init_state != NVML_INIT_OK)
                return NULL;
        if (!nv_ok(nv->device_count)) {
                snprintf(buf, size, "not matched to NVML: %.200s", use->problem);
                return buf;
        }
        for (unsigned i = 0; i < nv->n_gpus; i++) {
                const struct nv_str *b = &nv->gpus[i].pci_bus_id;
                char norm[32];
                if (nv_ok(*b) && nvml_bus_id_normalise(b->v, norm, sizeof(norm)) == 0)
                        continue;
                char why[192];
                if (!nvml_reading_problem(use, (int)i, b->state == NV_UNREAD ? NV_TIMEOUT : b->state, b->rc,
                                          b->fn ? b->fn : nv->gpus[i].timeout_fn, why, sizeof(why)))
                        snprintf(why, sizeof(why), "no PCI address");
                snprintf(buf, size, "not matched to NVML: NVML GPU %u: %s", i, why);
                return buf;
        }
        return NULL;
}

/* Why a GPU's NVLinks are unknown, in one line; "" when they are known. */
static const char *nvlink_problem(const struct nvml_use *use, const struct topo_dev *d, char *buf, size_t size) {
        buf[0] = '\0';
        if (d->kind == TOPO_GPU && d->nvml_index < 0) {
                if (!unmatched_problem(use, buf, size))
                        buf[0] = '\0';
                return buf;
        }
        if (!d->nvlinks_unknown)
                return buf;
        const struct nvml_gpu *g = &use->nv->gpus[d->nvml_index];
        unsigned char state = d->nvlink_state == NV_UNREAD ? NV_TIMEOUT : d->nvlink_state;
        if (!nvml_reading_problem(use, d->nvml_index, state, d->nvlink_rc, d->nvlink_fn, buf, size))
                snprintf(buf, size, "%s: %s", d->nvlink_fn ? d->nvlink_fn : "NVML",
                         g->timed_out ? "the GPU's reads were abandoned" : "no answer");
        return buf;
}

/* The NVML status topo reports: the system's, else the first GPU whose NVLinks are unknown. */
static const char *nvml_status(const struct nvml_use *use, const struct topo *t, char *reason, size_t size) {
        reason[0] = '\0';
        if (use->nv->init_state != NVML_INIT_OK) {
                snprintf(reason, size, "%s", use->why);
                return use->status;
        }
        if (use->problem[0]) {
                snprintf(reason, size, "%s", use->problem);
                return use->status;
        }
        for (size_t i = 0; i < t->n_gpus; i++) {
                const struct topo_dev *d = &t->devs[i];
                char why[256];
                if (!*nvlink_problem(use, d, why, sizeof(why)))
                        continue;
                snprintf(reason, size, "NVLinks of %s unknown: %s", d->label, why);
                /* A link state that hung, or a walk cut short by a hang, is a timeout. */
                return d->nvlinks_unknown && d->nvlink_state != NV_ERROR ? "timeout" : "error";
        }
        return use->status;
}

char *topo_json(const struct facts *f, const struct topo *t, const struct nvml_use *use) {
        json_t *root = json_object();
        json_object_set_new(root, "schema", json_string("gpuvet.topo/1"));
        json_t *nvml = json_object();
        json_object_set_new(nvml, "used", json_boolean(use->nv->init_state == NVML_INIT_OK));
        char reason[1024];
        json_object_set_new(nvml, "status", json_string(nvml_status(use, t, reason, sizeof(reason))));
        json_object_set_new(nvml, "reason", json_text(reason));
        json_object_set_new(root, "nvml", nvml);

        json_t *devs = json_array();
        for (size_t i = 0; i < t->n; i++) {
                const struct topo_dev *d = &t->devs[i];
                const struct pci_dev *pd = &f->pci.devs[d->pci_index];
                json_t *o = json_object();
                json_object_set_new(o, "label", json_string(d->label));
                json_object_set_new(o, "kind", json_string(d->kind == TOPO_GPU ? "gpu" : "nic"));
                json_object_set_new(o, "pci_bus_id", json_string(pd->addr));
                char buf[96];
                if (d->kind == TOPO_GPU) {
                        gpu_describe(f, d->gpu_index, buf, sizeof(buf));
                        json_object_set_new(o, "name", json_text(buf));
                        json_object_set_new(o, "gpu_index", json_integer((json_int_t)d->gpu_index));
                        json_object_set_new(o, "nvml_index", d->nvml_index >= 0 ? json_integer(d->nvml_index) : json_null());
                        json_object_set_new(o, "nvlink_error", json_text(nvlink_problem(use, d, buf, sizeof(buf))));
                } else {
                        json_object_set_new(o, "name", json_text(nic_name(f, d)));
                        json_object_set_new(o, "rdma_device", json_text(d->rdma));
                        json_object_set_new(o, "netdev", json_text(d->netdev));
                        json_object_set_new(o, "infiniband", json_boolean(pd->have_ids && pci_class_sub(pd) == 0x0207));
                }
                if (pd->have_ids) {
                        snprintf(buf, sizeof(buf), "%04x:%04x", pd->vendor, pd->device);
                        json_object_set_new(o, "pci_id", json_string(buf));
                } else {
                        json_object_set_new(o, "pci_id", json_null());
                }
                json_object_set_new(o, "driver", json_text(pd->driver));
                json_object_set_new(o, "host_bridge", json_text(d->host_bridge));
                json_object_set_new(o, "numa_node", d->numa_node >= 0 ? json_integer(d->numa_node) : json_null());
                json_object_set_new(o, "cpu_affinity", json_text(pd->local_cpulist));
                json_array_append_new(devs, o);
        }
        json_object_set_new(root, "devices", devs);

        json_t *matrix = json_array(), *pcie = json_array(), *nvlinks = json_array();
        char cell[16];
        for (size_t i = 0; i < t->n; i++) {
                json_t *mr = json_array(), *pr = json_array(), *nr = json_array();
                for (size_t j = 0; j < t->n; j++) {
                        const struct topo_cell *c = topo_at(t, i, j);
                        const char *text = topo_cell_text(c, cell, sizeof(cell));
                        json_array_append_new(mr, json_string(c->pcie == TOPO_SELF ? "X" : text));
                        json_array_append_new(pr, json_string(topo_pcie_name(c->pcie)));
                        /* null: not known (no NVML, a NIC, or a GPU NVML does not see). */
                        bool known = i != j && t->devs[i].nvml_index >= 0 && t->devs[j].nvml_index >= 0 &&
                                     !c->nvlinks_unknown;
                        json_array_append_new(nr, known ? json_integer(c->nvlinks) : json_null());
                }
                json_array_append_new(matrix, mr);
                json_array_append_new(pcie, pr);
                json_array_append_new(nvlinks, nr);
        }
        json_object_set_new(root, "matrix", matrix);
        json_object_set_new(root, "pcie", pcie);
        json_object_set_new(root, "nvlinks", nvlinks);
        char *out = json_dumps(root, JSON_INDENT(2));
        json_decref(root);
        return out;
}

void topo_text(const struct facts *f, const struct topo *t, const struct nvml_use *use) {
        print_matrix(f, t);
        /* Two GPUs or more: say why NV# cannot appear. */
        if (t->n_gpus >= 2 && use->nv->init_state != NVML_INIT_OK)
                fprintf(stderr, "gpuvet topo: NVLinks not shown: %s\n", use->why);
        else if (use->problem[0])
                fprintf(stderr, "gpuvet topo: NVML: %s\n", use->problem);
        for (size_t i = 0; use->nv->init_state == NVML_INIT_OK && i < t->n_gpus; i++) {
                char why[256];
                if (*nvlink_problem(use, &t->devs[i], why, sizeof(why)))
                        fprintf(stderr, "gpuvet topo: NVLinks of %s unknown: %s\n", t->devs[i].label, why);
        }
}

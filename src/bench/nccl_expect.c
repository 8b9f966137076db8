#include "bench/nccl_expect.h"

#include <stdio.h>
#include <string.h>

#include "bench/bench_devutil.h"
#include "data/gpudb.h"
#include "sys/pci.h"
#include "sys/rdma.h"

const char *nccl_baseline_shape(int nranks, int nodes, int per_node, const struct nccl_fabric *fabric) {
        if (nranks == 8 && nodes == 1)
                return "8gpu";
        if (nodes > 1 && per_node == 8 && fabric->n_ports == 8 && fabric->port_gbits_min == 200 &&
            fabric->port_gbits_max == 200)
                return "8gpu-hdr";
        return NULL;
}

/* The node's active RDMA ports' rates summed, in GB/s (0 when there is none), from the
 * gathered RDMA facts (sys/rdma.h). */
static double rdma_gbps(const struct facts *f, struct nccl_fabric *ret) {
        double sum = 0;
        for (size_t i = 0; i < f->rdma.n; i++)
                for (size_t k = 0; k < f->rdma.devs[i].n_ports; k++) {
                        const struct rdma_port *p = &f->rdma.devs[i].ports[k];
                        double gbits = p->rate_gbps;
                        if (p->state != RDMA_PORT_ACTIVE || !(gbits > 0))
                                continue;
                        sum += gbits / 8.0;
                        if (ret->n_ports == 0 || gbits < ret->port_gbits_min)
                                ret->port_gbits_min = gbits;
                        if (gbits > ret->port_gbits_max)
                                ret->port_gbits_max = gbits;
                        ret->n_ports++;
                }
        return sum;
}

void nccl_expect(const struct facts *f, const char *const *bus_ids, size_t n, int nodes, struct nccl_fabric *ret) {
        *ret = (struct nccl_fabric){0};
        const struct gpu_model *model = NULL;
        bool one_model = true, all_nvlink = true;
        double slowest_pcie = 0;
        size_t found = 0;
        for (size_t i = 0; i < n; i++) {
                const struct pci_dev *d = pci_find(&f->pci, bus_ids[i]);
                const struct gpu_model *m = NULL;
                for (size_t g = 0; d && g < f->gpus.n; g++)
                        if (&f->pci.devs[f->gpus.gpus[g].pci_index] == d)
                                m = f->gpus.gpus[g].model;
                if (!d || !m)
                        continue;
                found++;
                if (model && m != model)
                        one_model = false;
                model = m;
                bool board_links = m->nvlink_known && m->nvlink_links > 0 && !m->nvlink_bridge &&
                                   m->nvlink_gbps_per_dir > 0 && m->form &&
                                   (strcmp(m->form, "sxm") == 0 || strcmp(m->form, "superchip") == 0);
                all_nvlink = all_nvlink && board_links;
                unsigned mts, width;
                if (pci_link_best(&f->pci, d, &mts, &width) && mts && width) {
                        double g = pci_link_gbps(mts, width);
                        if (g > 0)
                                slowest_pcie = slowest_pcie == 0 || g < slowest_pcie ? g : slowest_pcie;
                }
        }
        if (found != n || n == 0)
                return; /* a GPU the facts do not know: nothing to judge by */
        ret->model = one_model ? model->name : NULL;
        if (n == 1 && nodes <= 1)
                return; /* one rank: nothing crosses a link */
        if (n > 1 && all_nvlink && one_model) {
                ret->path = "nvlink";
                ret->peak_gbps = model->nvlink_gbps_per_dir;
                snprintf(ret->source, sizeof(ret->source), "NVLink %u links, %.0f GB/s per direction (%s)",
                         model->nvlink_links, model->nvlink_gbps_per_dir, model->name);
        } else if (n > 1 && slowest_pcie > 0) {
                ret->path = "pcie";
                ret->peak_gbps = slowest_pcie;
                snprintf(ret->source, sizeof(ret->source), "PCIe %.1f GB/s per direction (the slowest GPU's link)",
                         slowest_pcie);
        }
        if (nodes > 1) {
                double net = rdma_gbps(f, ret);
                if (net > 0 && (ret->peak_gbps == 0 || net < ret->peak_gbps)) {
                        ret->path = "network";
                        ret->peak_gbps = net;
                        snprintf(ret->source, sizeof(ret->source),
                                 "the node's active RDMA ports, %.0f GB/s in all (%.0f Gb/s)", net, net * 8);
                } else if (net == 0) {
                        /* across nodes with no RDMA port known: the network is the unknown bound */
                        ret->path = NULL;
                        ret->peak_gbps = 0;
                        snprintf(ret->source, sizeof(ret->source), "no active RDMA port on this node");
                }
        }
}

/* What bus bandwidth a node's collectives should reach: the per-direction bandwidth of the
 * narrowest path every rank's traffic crosses (docs/bench.md, "nccl", "What is expected").
 *
 * One node: NVLink when every GPU is an SXM or superchip part whose links are part of the
 * board (links x per-link rate, data/gpus.json); else PCIe, the slowest GPU's best link
 * (generation x width, 128b/130b). Nodes over a network: the node's active RDMA ports
 * (their rates summed, bits to bytes), when lower. nccl-tests' busbw is normalised so that
 * it approaches this figure whatever the collective: ring algorithms reach ~80% of it,
 * NVLink SHARP (Hopper and later) slightly more than 100% for all_reduce
 * (shared/reference/gpu-specs-and-compat.md §4, §5.5). Pure: the RDMA ports come from the
 * gathered facts (sys/rdma.h). */
#pragma once

#include <stddef.h>

#include "sys/facts.h"

struct nccl_fabric {
        const char *path;   /* "nvlink", "pcie", "network", or NULL: unknown (nothing to judge by) */
        double peak_gbps;   /* GB/s per direction; 0 when unknown */
        char source[128];   /* "NVLink 18 links, 450 GB/s per direction (NVIDIA H100 80GB HBM3)" */
        const char *model;  /* the GPUs' model name when all are one model, else NULL */
        /* the node's active RDMA ports (read for jobs across nodes only) */
        unsigned n_ports;
        double port_gbits_min, port_gbits_max;
};

/* bus_ids: the job's GPUs on this node (CUDA's PCI bus ids, any case); nodes: how many
 * nodes the job spans. */
void nccl_expect(const struct facts *f, const char *const *bus_ids, size_t n, int nodes, struct nccl_fabric *ret);

/* The shape of the seed's baselines this job has, as data/baselines.json names them after
 * the collective ("all_reduce/8gpu"): "8gpu" for exactly 8 ranks on one node, "8gpu-hdr"
 * for nodes of 8 ranks (per_node) whose fabric has exactly 8 active ports, all at 200 Gb/s
 * (HDR); NULL for any other job, which is judged against its links alone. */
const char *nccl_baseline_shape(int nranks, int nodes, int per_node, const struct nccl_fabric *fabric);

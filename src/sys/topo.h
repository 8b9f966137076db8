/* The GPU/NIC connection matrix of `gpuvet topo`, as `nvidia-smi topo -m` prints it.
 *
 * The PCIe relation of two devices comes from sysfs alone (the parent chains of
 * facts.pci), never from NVML, so a snapshot judged elsewhere gives the same matrix:
 *
 *   PIX   at most one PCIe switch between them: their closest common ancestor is a
 *         bridge and each device sits at most one bridge below it (two GPUs on downstream
 *         ports of one switch, a GPU and its audio function)
 *   PXB   several switches, the host bridge not crossed: a common ancestor bridge with a
 *         device two or more bridges below it
 *   PHB   no common bridge but the same host bridge: the root bus "pciDDDD:BB" at the top
 *         of both sysfs paths (two root ports of one root complex)
 *   NODE  different host bridges, the same NUMA node
 *   SYS   different NUMA nodes (or a node unknown on a multi-node host)
 *
 * NVML's "bridge" in the legend is a PCIe switch (an upstream port and its downstream
 * ports), which is why two GPUs on downstream ports of one switch are PIX although three
 * bridge functions lie between them.
 *
 * NV# counts the active NVLinks between two GPUs, from NVML (remote PCI info per link). On
 * NVSwitch systems every link of a GPU ends at a switch, and nvidia-smi counts those links
 * as connecting the GPU to every other GPU of the fabric (NV18 for each H100 SXM pair):
 * for two GPUs that is the smaller of their switch link counts. Everything here is pure:
 * facts in, matrix out. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct facts;
struct nvml_facts;
struct nvml_gpu;
struct pci_facts;

enum topo_pcie {
        TOPO_SELF = 0,  /* "X": the diagonal */
        TOPO_PIX,
        TOPO_PXB,
        TOPO_PHB,
        TOPO_NODE,
        TOPO_SYS,
        TOPO_PCIE_COUNT
};

enum topo_kind {
        TOPO_GPU,
        TOPO_NIC,
};

struct topo_dev {
        enum topo_kind kind;
        size_t pci_index;      /* into facts.pci.devs */
        size_t gpu_index;      /* into facts.gpus (GPUs only) */
        int nvml_index;        /* NVML's index for a GPU NVML knows by bus id, else -1 */
        char label[24];        /* "GPU0", "NIC3" */
        char rdma[64];         /* "mlx5_0" (NICs with an RDMA device), else "" */
        char netdev[64];       /* "ens1f0np0", else "" */
        char host_bridge[24];  /* "pci0000:16", "" when the sysfs path tells none */
        int numa_node;         /* resolved node, -1 when unknown */
        /* A GPU whose NVLinks NVML could not tell (a call failed or hung): the reading
         * that says why (state NV_ERROR/NV_TIMEOUT/NV_UNREAD, rc, fn; fn may be NULL
         * when the GPU's reads stopped before its links). */
        bool nvlinks_unknown;
        unsigned char nvlink_state;
        int nvlink_rc;
        const char *nvlink_fn;
};

struct topo_cell {
        enum topo_pcie pcie;
        unsigned nvlinks;      /* 0 unless NVML told; NV# when > 0 */
        bool nvlinks_unknown;  /* NVML failed to tell for one of the two GPUs: "NV?" */
};

struct topo {
        struct topo_dev *devs; /* GPUs first (facts.gpus order), then NICs (PCI order) */
        size_t n, n_gpus, n_nics;
        struct topo_cell *cells; /* n x n, row-major */
        bool nvlink_known;     /* NVML was read: NV# cells can be trusted */
        unsigned n_cpu_nodes;  /* NUMA nodes with CPUs (0 when unknown) */
};

/* Build the matrix of f's NVIDIA GPUs and network controllers (class 0x02: InfiniBand,
 * Ethernet). nv may be NULL (no NVML: no NV# cells). Returns 0 or -ENOMEM. */
int topo_build(const struct facts *f, const struct nvml_facts *nv, struct topo *ret);
void topo_done(struct topo *t);

static inline const struct topo_cell *topo_at(const struct topo *t, size_t a, size_t b) {
        return &t->cells[a * t->n + b];
}

/* The host bridge of device i: "pciDDDD:BB", the root bus component of its sysfs path,
 * else the domain:bus of the device at the top of its parent chain. Returns 0, or -ENOENT. */
int topo_host_bridge(const struct pci_facts *p, size_t i, char *buf, size_t size);

/* PCIe relation of devices a and b (indexes into p->devs) with NUMA nodes node_a and
 * node_b (-1: unknown) on a host with n_cpu_nodes NUMA nodes with CPUs. */
enum topo_pcie topo_pcie_relation(const struct pci_facts *p, size_t a, size_t b, int node_a, int node_b,
                                  unsigned n_cpu_nodes);

/* Active NVLinks between two GPUs as NVML reports them (see above); p tells which remote
 * bus ids are NVSwitches when NVML gives no remote device id. */
unsigned topo_nvlinks(const struct pci_facts *p, const struct nvml_gpu *a, const struct nvml_gpu *b);

/* False when NVML could not tell g's NVLinks: a link state that failed (other than "no
 * such link") or hung, a walk cut short, or an active link whose far end is unknown.
 * *ret_state, *ret_rc and *ret_fn then name the reading at fault. */
bool topo_nvlinks_readable(const struct nvml_gpu *g, unsigned char *ret_state, int *ret_rc, const char **ret_fn);

/* True for the PCI id (device << 16 | vendor, as NVML's pciDeviceId) of an NVSwitch. */
bool topo_is_nvswitch_id(unsigned int pci_device_id);

/* "X", "PIX", "PXB", "PHB", "NODE", "SYS". */
const char *topo_pcie_name(enum topo_pcie r);
/* A cell as nvidia-smi prints it: " X ", "NV18", "PXB" ... into buf. */
const char *topo_cell_text(const struct topo_cell *c, char *buf, size_t size);

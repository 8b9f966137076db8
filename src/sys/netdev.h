/* Network devices by name: the RDMA devices (/sys/class/infiniband: "mlx5_0") and the
 * network interfaces (/sys/class/net: "ens1f0np0") with the PCI function each belongs to.
 *
 * `gpuvet topo` names the NICs of its matrix with these, as `nvidia-smi topo -m` does in its
 * NIC legend. A class directory that is absent (no RDMA stack loaded, a fixture without it)
 * leaves its list empty with errno 0; any other failure keeps the errno. */
#pragma once

#include <stddef.h>

struct fsroot;
struct facts;

struct netdev {
        char name[64];     /* "mlx5_0", "ens1f0np0" */
        char pci_addr[16]; /* "0000:1c:00.0": the PCI function its device link leads to
                            * (through a virtio or auxiliary device when there is one) */
};

struct netdev_facts {
        struct netdev *rdma;  /* /sys/class/infiniband, sorted by name */
        size_t n_rdma;
        int rdma_errno;       /* 0, or why the class could not be listed (not ENOENT) */
        struct netdev *net;   /* /sys/class/net entries with a PCI device, sorted by name */
        size_t n_net;
        int net_errno;
};

/* Gather f->netdev. Returns 0, or -ENOMEM; unreadable entries are left out. */
int netdev_gather(struct fsroot *fs, struct facts *f);
void netdev_facts_done(struct netdev_facts *x);

/* The first RDMA device / interface (by name) on PCI function addr, or NULL. */
const char *netdev_rdma_name(const struct netdev_facts *x, const char *pci_addr);
const char *netdev_net_name(const struct netdev_facts *x, const char *pci_addr);

/* The last component of a sysfs path that is a PCI address ("dddd:bb:dd.f"), copied to
 * ret; 0, or -ENOENT when there is none. Pure. */
int netdev_pci_from_path(const char *path, char *ret, size_t size);

/* sys/topo.c: the GPU/NIC matrix from hand-built PCI trees, one test per relation, and
 * sys/netdev.c: RDMA and interface names from a fake /sys/class. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fsroot.h"
#include "sys/facts.h"
#include "sys/nvml_facts.h"
#include "bindings/nvml.h"
#include "sys/topo.h"
#include "tree.h"

/* ---- a PCI tree builder --------------------------------------------------------------- */

#define MAX_DEVS 32

struct tree {
        struct pci_dev devs[MAX_DEVS];
        struct pci_facts pci;
};

static void tree_init(struct tree *t) {
        memset(t, 0, sizeof(*t));
        t->pci.devs = t->devs;
}

/* Add addr below parent (-1: on the root bus of its own domain:bus), class 0x030200 for a
 * GPU, 0x020700 for an InfiniBand NIC, 0x060400 for a bridge. Returns its index. */
static int add(struct tree *t, const char *addr, int parent, uint32_t vendor, uint32_t device, uint32_t class_code) {
        assert_true(t->pci.n < MAX_DEVS);
        int i = (int)t->pci.n++;
        struct pci_dev *d = &t->devs[i];
        snprintf(d->addr, sizeof(d->addr), "%s", addr);
        d->parent = parent;
        d->have_ids = true;
        d->vendor = vendor;
        d->device = device;
        d->class_code = class_code;
        d->numa_node = -1;
        d->iommu_group = -1;
        if (parent < 0)
                snprintf(d->sysfs_path, sizeof(d->sysfs_path), "/sys/devices/pci%.7s/%s", addr, addr);
        else {
                char up[sizeof(d->sysfs_path)];
                memcpy(up, t->devs[parent].sysfs_path, sizeof(up));
                snprintf(d->sysfs_path, sizeof(d->sysfs_path), "%.480s/%s", up, addr);
        }
        return i;
}

static int bridge(struct tree *t, const char *addr, int parent) {
        return add(t, addr, parent, 0x1000, 0xc030, 0x060400);
}
static int gpu(struct tree *t, const char *addr, int parent) {
        return add(t, addr, parent, 0x10de, 0x2330, 0x030200);
}
static int nic(struct tree *t, const char *addr, int parent) {
        return add(t, addr, parent, 0x15b3, 0x1021, 0x020700);
}

static enum topo_pcie rel(struct tree *t, int a, int b, int na, int nb, unsigned nodes) {
        enum topo_pcie r = topo_pcie_relation(&t->pci, (size_t)a, (size_t)b, na, nb, nodes);
        /* Always symmetric. */
        assert_int_equal(r, topo_pcie_relation(&t->pci, (size_t)b, (size_t)a, nb, na, nodes));
        return r;
}

/* ---- PCIe relations -------------------------------------------------------------------- */

static void test_self(void **state) {
        (void)state;
        struct tree t;
        tree_init(&t);
        int g = gpu(&t, "0000:01:00.0", -1);
        assert_int_equal(topo_pcie_relation(&t.pci, (size_t)g, (size_t)g, 0, 0, 1), TOPO_SELF);
        struct topo_cell c = {.pcie = TOPO_SELF};
        char buf[16];
        assert_string_equal(topo_cell_text(&c, buf, sizeof(buf)), " X ");
}

/* Two GPUs on downstream ports of one switch (below a root port): one switch, PIX. A GPU
 * and its audio function on the same port: PIX too. */
static void test_pix(void **state) {
        (void)state;
        struct tree t;
        tree_init(&t);
        int rp = bridge(&t, "0000:b0:02.0", -1);
        int up = bridge(&t, "0000:b1:00.0", rp);
        int dp0 = bridge(&t, "0000:b2:08.0", up);
        int dp1 = bridge(&t, "0000:b2:10.0", up);
        int g0 = gpu(&t, "0000:b3:00.0", dp0);
        int audio = add(&t, "0000:b3:00.1", dp0, 0x10de, 0x22ba, 0x040300);
        int n0 = add(&t, "0000:b4:00.0", dp1, 0x8086, 0x1572, 0x020000);
        assert_int_equal(rel(&t, g0, n0, 1, 1, 2), TOPO_PIX);
        assert_int_equal(rel(&t, g0, audio, 1, 1, 2), TOPO_PIX);
        /* A device and the bridge right above it. */
        assert_int_equal(rel(&t, g0, dp0, 1, 1, 2), TOPO_PIX);
}

/* The DGX H100 layout: GPU two switches below the common switch, its NIC one: PXB. */
static void test_pxb(void **state) {
        (void)state;
        struct tree t;
        tree_init(&t);
        int rp = bridge(&t, "0000:16:02.0", -1);
        int up1 = bridge(&t, "0000:17:00.0", rp);
        int dp_gpu = bridge(&t, "0000:18:00.0", up1);
        int dp_nic = bridge(&t, "0000:18:01.0", up1);
        int up2 = bridge(&t, "0000:19:00.0", dp_gpu);
        int dp2 = bridge(&t, "0000:1a:00.0", up2);
        int g = gpu(&t, "0000:1b:00.0", dp2);
        int n = nic(&t, "0000:1c:00.0", dp_nic);
        assert_int_equal(rel(&t, g, n, 0, 0, 2), TOPO_PXB);
        /* The GPU and the upstream port of the common switch: two bridges between. */
        assert_int_equal(rel(&t, g, up1, 0, 0, 2), TOPO_PXB);
}

/* Two root ports of one root complex (pci0000:40): through the host bridge, PHB. */
static void test_phb(void **state) {
        (void)state;
        struct tree t;
        tree_init(&t);
        int rp1 = bridge(&t, "0000:40:01.1", -1);
        int rp5 = bridge(&t, "0000:40:05.1", -1);
        int g = gpu(&t, "0000:41:00.0", rp1);
        int n = add(&t, "0000:43:00.0", rp5, 0x8086, 0x1533, 0x020000);
        assert_int_equal(rel(&t, g, n, 0, 0, 1), TOPO_PHB);
        /* Devices directly on the root bus (a VM's Q35 bus 0) share the host bridge too. */
        int a = gpu(&t, "0000:40:07.0", -1);
        int b = nic(&t, "0000:40:08.0", -1);
        assert_int_equal(rel(&t, a, b, -1, -1, 1), TOPO_PHB);
        assert_int_equal(rel(&t, a, g, -1, 0, 1), TOPO_PHB);
}

static void test_node_and_sys(void **state) {
        (void)state;
        struct tree t;
        tree_init(&t);
        int rp_a = bridge(&t, "0000:16:02.0", -1);
        int rp_b = bridge(&t, "0000:3e:02.0", -1);
        int rp_c = bridge(&t, "0000:98:02.0", -1);
        int a = gpu(&t, "0000:17:00.0", rp_a);
        int b = gpu(&t, "0000:3f:00.0", rp_b);
        int c = gpu(&t, "0000:99:00.0", rp_c);
        /* Different host bridges, one node: NODE; across nodes: SYS. */
        assert_int_equal(rel(&t, a, b, 0, 0, 2), TOPO_NODE);
        assert_int_equal(rel(&t, a, c, 0, 1, 2), TOPO_SYS);
        assert_int_equal(rel(&t, b, c, 0, 1, 2), TOPO_SYS);
        /* A node unknown: SYS on a two-node host (it may be the other socket), NODE on a
         * host with a single node (or none known). */
        assert_int_equal(rel(&t, a, b, -1, 0, 2), TOPO_SYS);
        assert_int_equal(rel(&t, a, b, -1, -1, 2), TOPO_SYS);
        assert_int_equal(rel(&t, a, b, -1, 0, 1), TOPO_NODE);
        assert_int_equal(rel(&t, a, b, -1, -1, 0), TOPO_NODE);
}

static void test_host_bridge(void **state) {
        (void)state;
        struct tree t;
        tree_init(&t);
        int rp = bridge(&t, "0000:16:02.0", -1);
        int g = gpu(&t, "0000:17:00.0", rp);
        char buf[24];
        assert_int_equal(topo_host_bridge(&t.pci, (size_t)g, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "pci0000:16");
        /* A root complex under a platform device (arm64): the pci component anywhere. */
        snprintf(t.devs[g].sysfs_path, sizeof(t.devs[g].sysfs_path),
                 "/sys/devices/platform/4000000000.pcie/pci0004:00/0004:00:00.0/0004:01:00.0");
        assert_int_equal(topo_host_bridge(&t.pci, (size_t)g, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "pci0004:00");
        /* No sysfs path: the bus of the top of the parent chain. */
        t.devs[g].sysfs_path[0] = '\0';
        t.devs[rp].sysfs_path[0] = '\0';
        assert_int_equal(topo_host_bridge(&t.pci, (size_t)g, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "pci0000:16");
}

/* A corrupt capture whose parents loop must not hang the walk. */
static void test_parent_cycle(void **state) {
        (void)state;
        struct tree t;
        tree_init(&t);
        int x = bridge(&t, "0000:10:00.0", -1);
        int y = bridge(&t, "0000:11:00.0", x);
        t.devs[x].parent = y;
        int g = gpu(&t, "0000:12:00.0", y);
        int n = nic(&t, "0000:13:00.0", -1);
        enum topo_pcie r = topo_pcie_relation(&t.pci, (size_t)g, (size_t)n, 0, 0, 1);
        assert_true(r > TOPO_SELF && r < TOPO_PCIE_COUNT);
        char buf[24];
        t.devs[g].sysfs_path[0] = '\0';
        (void)topo_host_bridge(&t.pci, (size_t)g, buf, sizeof(buf));
}

/* ---- NVLink counting ------------------------------------------------------------------- */

static void set_str(struct nv_str *s, const char *v) {
        s->state = NV_OK;
        snprintf(s->v, sizeof(s->v), "%s", v);
}

static void set_u32(struct nv_u32 *s, unsigned v) {
        s->state = NV_OK;
        s->v = v;
}

/* n links, up, to remote (an NVML bus id) with remote PCI id id (0: not reported). */
static void links(struct nvml_gpu *g, const char *bus_id, unsigned n, const char *remote, unsigned id) {
        memset(g, 0, sizeof(*g));
        set_str(&g->pci_bus_id, bus_id);
        g->nvlink_count = n;
        /* As the gather ends its walk: the first index past the last link. */
        g->nvlink_end = (struct nv_u32){.state = NV_ERROR, .rc = NVML_ERROR_NOT_SUPPORTED,
                                        .fn = "nvmlDeviceGetNvLinkState"};
        for (unsigned l = 0; l < n; l++) {
                set_u32(&g->nvlink[l].state, 1);
                set_str(&g->nvlink[l].remote_bus_id, remote);
                if (id)
                        set_u32(&g->nvlink[l].remote_device_id, id);
        }
}

static void test_nvlink_switch(void **state) {
        (void)state;
        static struct nvml_gpu a, b;
        links(&a, "00000000:1B:00.0", 18, "00000000:07:00.0", 0x22a310de);
        links(&b, "00000000:43:00.0", 18, "00000000:08:00.0", 0x22a310de);
        assert_int_equal(topo_nvlinks(NULL, &a, &b), 18);
        assert_int_equal(topo_nvlinks(NULL, &a, &a), 0);
        /* One link down on b: the pair has 17. */
        b.nvlink[7].state.v = 0;
        assert_int_equal(topo_nvlinks(NULL, &a, &b), 17);
        assert_int_equal(topo_nvlinks(NULL, &b, &a), 17);
        /* Fabric Manager partitioned them into two cliques. */
        set_u32(&a.fabric_clique_id, 1);
        set_u32(&b.fabric_clique_id, 2);
        assert_int_equal(topo_nvlinks(NULL, &a, &b), 0);
        set_u32(&b.fabric_clique_id, 1);
        assert_int_equal(topo_nvlinks(NULL, &a, &b), 17);
        /* A state NVML would not give: not counted. */
        a.nvlink[0].state.state = NV_ERROR;
        b.nvlink[7].state.v = 1;
        assert_int_equal(topo_nvlinks(NULL, &a, &b), 17);
}

/* No remote PCI id (older NVML): the remote bus id names an NVSwitch in sysfs. */
static void test_nvlink_switch_by_bus(void **state) {
        (void)state;
        struct tree t;
        tree_init(&t);
        int rp = bridge(&t, "0000:06:00.0", -1);
        add(&t, "0000:07:00.0", rp, 0x10de, 0x22a3, 0x068000);
        static struct nvml_gpu a, b;
        links(&a, "00000000:1B:00.0", 18, "00000000:07:00.0", 0);
        links(&b, "00000000:43:00.0", 18, "00000000:07:00.0", 0);
        assert_int_equal(topo_nvlinks(&t.pci, &a, &b), 18);
        /* Without the PCI facts nothing tells it is a switch. */
        assert_int_equal(topo_nvlinks(NULL, &a, &b), 0);
        assert_true(topo_is_nvswitch_id(0x1af110de));
        assert_false(topo_is_nvswitch_id(0x233010de));
        assert_false(topo_is_nvswitch_id(0x22a31000));
}

/* NVLink bridges between pairs of PCIe cards (A100/L40-class boards, DGX-1 meshes). */
static void test_nvlink_direct(void **state) {
        (void)state;
        static struct nvml_gpu a, b, c;
        links(&a, "00000000:17:00.0", 4, "00000000:31:00.0", 0x20b510de);
        links(&b, "00000000:31:00.0", 4, "00000000:17:00.0", 0x20b510de);
        links(&c, "00000000:98:00.0", 0, "", 0);
        assert_int_equal(topo_nvlinks(NULL, &a, &b), 4);
        assert_int_equal(topo_nvlinks(NULL, &b, &a), 4);
        assert_int_equal(topo_nvlinks(NULL, &a, &c), 0);
        /* Only one side reports its links (the other timed out): still 4. */
        b.nvlink_count = 0;
        assert_int_equal(topo_nvlinks(NULL, &a, &b), 4);
        assert_int_equal(topo_nvlinks(NULL, &b, &a), 4);
}

/* ---- the whole matrix -------------------------------------------------------------------- */

static void test_build(void **state) {
        (void)state;
        static struct tree t;
        tree_init(&t);
        int rp0 = bridge(&t, "0000:16:02.0", -1);
        int up = bridge(&t, "0000:17:00.0", rp0);
        int d0 = bridge(&t, "0000:18:00.0", up);
        int d1 = bridge(&t, "0000:18:01.0", up);
        int g0 = gpu(&t, "0000:19:00.0", d0);
        int n0 = nic(&t, "0000:1a:00.0", d1);
        int rp1 = bridge(&t, "0000:98:02.0", -1);
        int g1 = gpu(&t, "0000:99:00.0", rp1);
        t.devs[n0].have_numa_node = true;
        t.devs[n0].numa_node = 0;
        snprintf(t.devs[g0].local_cpulist, sizeof(t.devs[g0].local_cpulist), "0-55");

        static struct facts f;
        memset(&f, 0, sizeof(f));
        f.pci = t.pci;
        struct gpu gpus[2] = {{.pci_index = (size_t)g0}, {.pci_index = (size_t)g1}};
        f.gpus.gpus = gpus;
        f.gpus.n = 2;
        struct numa_gpu ng[2] = {{.node = 0, .source = NUMA_GPU_FROM_NUMA_NODE},
                                 {.node = 1, .source = NUMA_GPU_FROM_NUMA_NODE}};
        f.numa.gpus = ng;
        f.numa.n_gpus = 2;
        f.numa.n_cpu_nodes = 2;
        struct netdev rdma = {.name = "mlx5_0", .pci_addr = "0000:1a:00.0"};
        struct netdev net = {.name = "ibp26s0", .pci_addr = "0000:1a:00.0"};
        f.netdev.rdma = &rdma;
        f.netdev.n_rdma = 1;
        f.netdev.net = &net;
        f.netdev.n_net = 1;

        /* NVML lists the GPUs in the other order: matched by bus id, not by index. */
        static struct nvml_facts nv;
        memset(&nv, 0, sizeof(nv));
        static struct nvml_gpu ngpus[2];
        links(&ngpus[0], "00000000:99:00.0", 18, "00000000:07:00.0", 0x22a310de);
        links(&ngpus[1], "00000000:19:00.0", 18, "00000000:07:00.0", 0x22a310de);
        nv.init_state = NVML_INIT_OK;
        nv.gpus = ngpus;
        nv.n_gpus = 2;

        struct topo m;
        assert_int_equal(topo_build(&f, &nv, &m), 0);
        assert_int_equal(m.n, 3);
        assert_int_equal(m.n_gpus, 2);
        assert_int_equal(m.n_nics, 1);
        assert_true(m.nvlink_known);
        assert_string_equal(m.devs[0].label, "GPU0");
        assert_string_equal(m.devs[2].label, "NIC0");
        assert_string_equal(m.devs[2].rdma, "mlx5_0");
        assert_string_equal(m.devs[2].netdev, "ibp26s0");
        assert_string_equal(m.devs[0].host_bridge, "pci0000:16");
        assert_int_equal(m.devs[0].nvml_index, 1);
        assert_int_equal(m.devs[1].nvml_index, 0);
        assert_int_equal(m.devs[2].nvml_index, -1);
        assert_int_equal(m.devs[2].numa_node, 0);

        char buf[16];
        assert_string_equal(topo_cell_text(topo_at(&m, 0, 0), buf, sizeof(buf)), " X ");
        assert_string_equal(topo_cell_text(topo_at(&m, 0, 1), buf, sizeof(buf)), "NV18");
        assert_int_equal(topo_at(&m, 0, 1)->pcie, TOPO_SYS);
        assert_string_equal(topo_cell_text(topo_at(&m, 0, 2), buf, sizeof(buf)), "PIX");
        assert_string_equal(topo_cell_text(topo_at(&m, 2, 0), buf, sizeof(buf)), "PIX");
        assert_string_equal(topo_cell_text(topo_at(&m, 1, 2), buf, sizeof(buf)), "SYS");
        topo_done(&m);

        /* A link NVML failed to read: that GPU's cells say NV?, never a guessed 0. */
        ngpus[0].nvlink[3].state = (struct nv_u32){.state = NV_ERROR, .rc = NVML_ERROR_UNKNOWN,
                                                   .fn = "nvmlDeviceGetNvLinkState"};
        assert_int_equal(topo_build(&f, &nv, &m), 0);
        assert_true(m.devs[1].nvlinks_unknown);
        assert_false(m.devs[0].nvlinks_unknown);
        assert_string_equal(m.devs[1].nvlink_fn, "nvmlDeviceGetNvLinkState");
        assert_int_equal(m.devs[1].nvlink_rc, NVML_ERROR_UNKNOWN);
        assert_string_equal(topo_cell_text(topo_at(&m, 0, 1), buf, sizeof(buf)), "NV?");
        assert_string_equal(topo_cell_text(topo_at(&m, 1, 0), buf, sizeof(buf)), "NV?");
        assert_string_equal(topo_cell_text(topo_at(&m, 0, 2), buf, sizeof(buf)), "PIX");
        topo_done(&m);
        /* A walk cut short by a hang: unknown too. */
        set_u32(&ngpus[0].nvlink[3].state, 1);
        ngpus[0].nvlink_end = (struct nv_u32){.state = NV_TIMEOUT, .fn = "nvmlDeviceGetNvLinkState"};
        assert_int_equal(topo_build(&f, &nv, &m), 0);
        assert_true(m.devs[1].nvlinks_unknown);
        assert_int_equal(m.devs[1].nvlink_state, NV_TIMEOUT);
        topo_done(&m);
        links(&ngpus[0], "00000000:99:00.0", 18, "00000000:07:00.0", 0x22a310de);

        /* Without NVML: the PCIe relation shows, never a guessed NV#. */
        nv.init_state = NVML_INIT_NO_LIBRARY;
        assert_int_equal(topo_build(&f, &nv, &m), 0);
        assert_false(m.nvlink_known);
        assert_string_equal(topo_cell_text(topo_at(&m, 0, 1), buf, sizeof(buf)), "SYS");
        topo_done(&m);
        assert_int_equal(topo_build(&f, NULL, &m), 0);
        assert_int_equal(topo_at(&m, 1, 0)->nvlinks, 0);
        topo_done(&m);
}

static void test_build_empty(void **state) {
        (void)state;
        static struct facts f;
        memset(&f, 0, sizeof(f));
        struct topo m;
        assert_int_equal(topo_build(&f, NULL, &m), 0);
        assert_int_equal(m.n, 0);
        topo_done(&m);
}

/* ---- netdev ------------------------------------------------------------------------------- */

static void test_netdev_path(void **state) {
        (void)state;
        char buf[16];
        assert_int_equal(netdev_pci_from_path("/sys/devices/pci0000:16/0000:16:02.0/0000:1c:00.0", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "0000:1c:00.0");
        /* virtio-net: the interface's device is virtio0 below the PCI function. */
        assert_int_equal(netdev_pci_from_path("/sys/devices/pci0000:00/0000:00:02.0/0000:01:00.0/virtio0", buf,
                                              sizeof(buf)), 0);
        assert_string_equal(buf, "0000:01:00.0");
        assert_int_equal(netdev_pci_from_path("/sys/devices/virtual/net/lo", buf, sizeof(buf)), -ENOENT);
        assert_int_equal(netdev_pci_from_path("/sys/devices/pci0000:00/0000:00:02.0x", buf, sizeof(buf)), -ENOENT);
        assert_int_equal(netdev_pci_from_path("", buf, sizeof(buf)), -ENOENT);
}

static void test_netdev_gather(void **state) {
        (void)state;
        char *root = tree_new("netdev");
        tree_put(root, "sys/devices/pci0000:16/0000:16:02.0/0000:1c:00.0/vendor", "0x15b3\n");
        tree_put(root, "sys/devices/pci0000:16/0000:16:02.0/0000:1c:00.0/infiniband/mlx5_0/node_type", "1: CA\n");
        tree_put(root, "sys/devices/pci0000:16/0000:16:02.0/0000:1c:00.0/net/ibp28s0/type", "32\n");
        tree_link(root, "sys/devices/pci0000:16/0000:16:02.0/0000:1c:00.0/infiniband/mlx5_0/device", "../../../0000:1c:00.0");
        tree_link(root, "sys/devices/pci0000:16/0000:16:02.0/0000:1c:00.0/net/ibp28s0/device", "../../../0000:1c:00.0");
        tree_link(root, "sys/class/infiniband/mlx5_0",
                  "../../devices/pci0000:16/0000:16:02.0/0000:1c:00.0/infiniband/mlx5_0");
        tree_link(root, "sys/class/net/ibp28s0", "../../devices/pci0000:16/0000:16:02.0/0000:1c:00.0/net/ibp28s0");
        tree_put(root, "sys/devices/virtual/net/lo/type", "772\n");
        tree_link(root, "sys/class/net/lo", "../../devices/virtual/net/lo");

        struct fsroot *fs;
        assert_int_equal(fsroot_open(root, &fs), 0);
        static struct facts f;
        memset(&f, 0, sizeof(f));
        assert_int_equal(netdev_gather(fs, &f), 0);
        assert_int_equal(f.netdev.n_rdma, 1);
        assert_int_equal(f.netdev.n_net, 1);
        assert_string_equal(netdev_rdma_name(&f.netdev, "0000:1c:00.0"), "mlx5_0");
        assert_string_equal(netdev_net_name(&f.netdev, "0000:1c:00.0"), "ibp28s0");
        assert_null(netdev_rdma_name(&f.netdev, "0000:1d:00.0"));
        netdev_facts_done(&f.netdev);
        fsroot_free(fs);

        /* Neither class present: empty lists, no error. */
        char *empty = tree_new("netdev-empty");
        assert_int_equal(fsroot_open(empty, &fs), 0);
        memset(&f, 0, sizeof(f));
        assert_int_equal(netdev_gather(fs, &f), 0);
        assert_int_equal(f.netdev.n_rdma + f.netdev.n_net, 0);
        assert_int_equal(f.netdev.rdma_errno, 0);
        netdev_facts_done(&f.netdev);
        fsroot_free(fs);
        tree_remove(empty);
        tree_remove(root);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_self),
                cmocka_unit_test(test_pix),
                cmocka_unit_test(test_pxb),
                cmocka_unit_test(test_phb),
                cmocka_unit_test(test_node_and_sys),
                cmocka_unit_test(test_host_bridge),
                cmocka_unit_test(test_parent_cycle),
                cmocka_unit_test(test_nvlink_switch),
                cmocka_unit_test(test_nvlink_switch_by_bus),
                cmocka_unit_test(test_nvlink_direct),
                cmocka_unit_test(test_build),
                cmocka_unit_test(test_build_empty),
                cmocka_unit_test(test_netdev_path),
                cmocka_unit_test(test_netdev_gather),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

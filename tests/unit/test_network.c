#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "core/fsroot.h"
#include "core/strv.h"
#include "data/gpudb.h"
#include "sys/dcb.h"

#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>
#include "tree.h"

/* ---- parsers ---- */

static void test_parse_state(void **state) {
        (void)state;
        int num = -1;
        char name[32];
        assert_int_equal(rdma_parse_state("4: ACTIVE", &num, name, sizeof(name)), 0);
        assert_int_equal(num, 4);
        assert_string_equal(name, "ACTIVE");
        assert_int_equal(rdma_parse_state("7: Phy Test\n", &num, name, sizeof(name)), 0);
        assert_int_equal(num, 7);
        assert_string_equal(name, "Phy Test");
        assert_int_equal(rdma_parse_state("4: PortConfigurationTraining", &num, name, sizeof(name)), 0);
        char tiny[4];
        assert_int_equal(rdma_parse_state("5: LinkUp", &num, tiny, sizeof(tiny)), 0);
        assert_string_equal(tiny, "Lin");
        static const char *const bad[] = {"", "ACTIVE", "4:ACTIVE", "4: ", "4:  ACTIVE", "300: X", "-1: X",
                                          "4: ACT\x01VE", "4: ACTIVE!", "99999999999: X",
                                          "4: AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                num = -7;
                assert_int_equal(rdma_parse_state(bad[i], &num, name, sizeof(name)), -EINVAL);
                assert_int_equal(num, -7);
        }
}

static void test_parse_rate(void **state) {
        (void)state;
        double g = 0;
        unsigned w = 99;
        char sp[16];
        assert_int_equal(rdma_parse_rate("400 Gb/sec (4X NDR)\n", &g, &w, sp, sizeof(sp)), 0);
        assert_true(g == 400 && w == 4);
        assert_string_equal(sp, "NDR");
        assert_int_equal(rdma_parse_rate("2.5 Gb/sec (1X SDR)", &g, &w, sp, sizeof(sp)), 0);
        assert_true(g == 2.5 && w == 1);
        assert_int_equal(rdma_parse_rate("10 Gb/sec (4X)", &g, &w, sp, sizeof(sp)), 0);
        assert_true(g == 10 && w == 4);
        assert_string_equal(sp, "");
        assert_int_equal(rdma_parse_rate("100 Gb/sec", &g, &w, sp, sizeof(sp)), 0);
        assert_true(g == 100 && w == 0);
        static const char *const bad[] = {"", "fast", "400", "400 Gb/s", "-400 Gb/sec (4X NDR)", "0 Gb/sec (4X)",
                                          "nan Gb/sec", "1e999 Gb/sec (4X NDR)", "400 Gb/sec (0X NDR)",
                                          "400 Gb/sec (99X NDR)", "400 Gb/sec (4X NDR", "400 Gb/sec (4 NDR)",
                                          "400 Gb/sec (4X NDR) extra", "400 Gb/sec (4X VERYLONGSPEEDNAME)",
                                          "400 Gb/sec (4X N\x02R)"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                g = -1;
                assert_int_equal(rdma_parse_rate(bad[i], &g, &w, sp, sizeof(sp)), -EINVAL);
                assert_true(g == -1);
        }
}

static void test_parse_link_layer(void **state) {
        (void)state;
        enum rdma_link_layer l = RDMA_LL_UNKNOWN;
        assert_int_equal(rdma_parse_link_layer("InfiniBand\n", &l), 0);
        assert_int_equal(l, RDMA_LL_INFINIBAND);
        assert_int_equal(rdma_parse_link_layer("Ethernet", &l), 0);
        assert_int_equal(l, RDMA_LL_ETHERNET);
        assert_int_equal(rdma_parse_link_layer("Token Ring", &l), -EINVAL);
        assert_int_equal(rdma_parse_link_layer("", &l), -EINVAL);
        assert_int_equal(rdma_parse_link_layer("InfiniBandX", &l), -EINVAL);
        assert_string_equal(rdma_link_layer_name(RDMA_LL_ETHERNET), "Ethernet");
        assert_string_equal(rdma_counter_name(RDMA_CTR_SYMBOL_ERROR), "symbol_error");
}

/* ---- the gatherer on a tiny tree: one good port, one garbled, a RoCE device ---- */

#define NIC0 "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
#define NIC1 "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.1"

static void test_gather(void **state) {
        (void)state;
        char *root = tree_new("rdma");
        tree_link(root, "sys/class/infiniband/mlx5_0", "../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/infiniband/mlx5_0");
        tree_link(root, NIC0 "/infiniband/mlx5_0/device", "../../../0000:01:00.0");
        tree_put(root, NIC0 "/infiniband/mlx5_0/fw_ver", "28.39.1002\n");
        tree_put(root, NIC0 "/infiniband/mlx5_0/hca_type", "MT4129\n");
        tree_put(root, NIC0 "/infiniband/mlx5_0/node_type", "1: CA\n");
        tree_put(root, NIC0 "/infiniband/mlx5_0/board_id", "bad\x01id\n");
        tree_put(root, NIC0 "/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
        tree_put(root, NIC0 "/infiniband/mlx5_0/ports/1/phys_state", "5: LinkUp\n");
        tree_put(root, NIC0 "/infiniband/mlx5_0/ports/1/rate", "400 Gb/sec (4X NDR)\n");
        tree_put(root, NIC0 "/infiniband/mlx5_0/ports/1/link_layer", "InfiniBand\n");
        tree_put(root, NIC0 "/infiniband/mlx5_0/ports/1/counters/symbol_error", "12\n");
        tree_put(root, NIC0 "/infiniband/mlx5_0/ports/1/counters/link_downed", "18446744073709551615\n");
        tree_put(root, NIC0 "/infiniband/mlx5_0/ports/1/counters/port_rcv_errors", "-1\n");
        tree_put(root, NIC0 "/infiniband/mlx5_0/ports/2/state", "garbage\n");
        tree_put(root, NIC0 "/infiniband/mlx5_0/ports/2/rate", "fast\n");
        tree_put(root, NIC0 "/infiniband/mlx5_0/ports/2/link_layer", "Token Ring\n");
        tree_mkdir(root, NIC0 "/infiniband/mlx5_0/ports/abc");
        tree_link(root, "sys/class/infiniband/mlx5_1", "../../devices/pci0000:00/0000:00:01.0/0000:01:00.1/infiniband/mlx5_1");
        tree_link(root, NIC1 "/infiniband/mlx5_1/device", "../../../0000:01:00.1");
        tree_put(root, NIC1 "/infiniband/mlx5_1/ports/1/state", "4: ACTIVE\n");
        tree_put(root, NIC1 "/infiniband/mlx5_1/ports/1/link_layer", "Ethernet\n");
        tree_link(root, "sys/class/net/ens1f1np1", "../../devices/pci0000:00/0000:00:01.0/0000:01:00.1/net/ens1f1np1");
        tree_link(root, NIC1 "/net/ens1f1np1/device", "../../../0000:01:00.1");
        tree_put(root, NIC1 "/net/ens1f1np1/mtu", "9000\n");
        tree_put(root, NIC1 "/net/ens1f1np1/operstate", "up\n");
        tree_put(root, "etc/cufile.json", "{}\n");

        struct fsroot *fs;
        assert_int_equal(fsroot_open(root, &fs), 0);
        struct facts f;
        memset(&f, 0, sizeof(f));
        assert_int_equal(netdev_gather(fs, &f), 0);
        assert_int_equal(rdma_gather(fs, &f), 0);
        assert_true(f.rdma.gds_config);
        assert_int_equal(f.rdma.n, 2);
        const struct rdma_dev *d = &f.rdma.devs[0];
        assert_string_equal(d->name, "mlx5_0");
        assert_string_equal(d->pci_addr, "0000:01:00.0");
        assert_string_equal(d->fw_ver, "28.39.1002");
        assert_string_equal(d->hca_type, "MT4129");
        assert_string_equal(d->node_type, "CA");
        assert_string_equal(d->board_id, ""); /* not printable: unknown */
        assert_int_equal(d->n_ports, 2);       /* "abc" is no port */
        const struct rdma_port *p = &d->ports[0];
        assert_int_equal(p->num, 1);
        assert_int_equal(p->state, RDMA_PORT_ACTIVE);
        assert_int_equal(p->phys_state, RDMA_PHYS_LINKUP);
        assert_true(p->rate_gbps == 400 && p->width == 4);
        assert_int_equal(p->link_layer, RDMA_LL_INFINIBAND);
        assert_true(p->counters[RDMA_CTR_SYMBOL_ERROR] == 12);
        assert_true(p->counters[RDMA_CTR_LINK_DOWNED] == RDMA_CTR_UNKNOWN);
        assert_true(p->counters[RDMA_CTR_PORT_RCV_ERRORS] == RDMA_CTR_UNKNOWN);
        assert_true(p->counters[RDMA_CTR_PORT_XMIT_DISCARDS] == RDMA_CTR_UNKNOWN);
        p = &d->ports[1];
        assert_int_equal(p->num, 2);
        assert_int_equal(p->state, -1);
        assert_int_equal(p->phys_state, -1);
        assert_true(p->rate_gbps == 0);
        assert_int_equal(p->link_layer, RDMA_LL_UNKNOWN);
        d = &f.rdma.devs[1];
        assert_int_equal(d->n_ports, 1);
        assert_int_equal(d->ports[0].link_layer, RDMA_LL_ETHERNET);
        assert_string_equal(d->ports[0].netdev, "ens1f1np1");
        assert_int_equal(d->ports[0].netdev_mtu, 9000);
        assert_string_equal(d->ports[0].netdev_operstate, "up");
        rdma_facts_done(&f.rdma);
        netdev_facts_done(&f.netdev);
        fsroot_free(fs);

        /* No RDMA stack: nothing, and no error. */
        char *empty = tree_new("rdma-empty");
        assert_int_equal(fsroot_open(empty, &fs), 0);
        memset(&f, 0, sizeof(f));
        assert_int_equal(netdev_gather(fs, &f), 0);
        assert_int_equal(rdma_gather(fs, &f), 0);
        assert_int_equal(f.rdma.n, 0);
        assert_int_equal(f.netdev.rdma_errno, 0);
        assert_false(f.rdma.gds_config);
        rdma_facts_done(&f.rdma);
        netdev_facts_done(&f.netdev);
        fsroot_free(fs);
        tree_remove(empty);
        tree_remove(root);
}

/* ---- checks on hand-made facts ----
 * PCI: host bridge pci0000:00 (node 0) with root port 00:01.0 holding GPU 01:00.0 and NICs
 * 01:00.1 (CX7) and 01:00.2 (CX7); host bridge pci0000:80 (node 1) with root port 80:01.0
 * holding NIC 81:00.0 (CX7). */

#define MAX_DEVS 4
#define MAX_PORTS 2

struct fixture {
        struct facts f;
        struct pci_dev pci[6];
        struct gpu gpu;
        struct netdev nd[MAX_DEVS];
        struct rdma_dev devs[MAX_DEVS];
        struct rdma_port ports[MAX_DEVS][MAX_PORTS];
        char *modules[8];
        struct report rep;
        struct policy_thresholds thresholds;
};

static void pci(struct pci_dev *d, const char *addr, const char *path, uint32_t vendor, uint32_t device, uint32_t cls,
                int parent, int node) {
        snprintf(d->addr, sizeof(d->addr), "%s", addr);
        snprintf(d->sysfs_path, sizeof(d->sysfs_path), "%s", path);
        d->have_ids = true;
        d->vendor = vendor;
        d->device = device;
        d->class_code = cls;
        d->parent = parent;
        d->numa_node = node;
        d->have_numa_node = true;
        d->parts = ~0u;
}

static struct fixture *fx;

static void port_ok(struct rdma_port *p, unsigned num) {
        memset(p, 0, sizeof(*p));
        p->num = num;
        p->state = 4;
        snprintf(p->state_name, sizeof(p->state_name), "ACTIVE");
        p->phys_state = 5;
        snprintf(p->phys_state_name, sizeof(p->phys_state_name), "LinkUp");
        p->rate_gbps = 400;
        p->width = 4;
        snprintf(p->speed_name, sizeof(p->speed_name), "NDR");
        p->link_layer = RDMA_LL_INFINIBAND;
        p->netdev_mtu = -1;
        for (size_t c = 0; c < RDMA_CTR_COUNT; c++)
                p->counters[c] = 0;
}

/* n RDMA devices, mlx5_0.. on the NICs (01:00.1, 01:00.2, 81:00.0), one healthy port each. */
static void with_rdma(size_t n) {
        static const char *const addrs[] = {"0000:01:00.1", "0000:01:00.2", "0000:81:00.0"};
        for (size_t i = 0; i < n; i++) {
                struct rdma_dev *d = &fx->devs[i];
                snprintf(d->name, sizeof(d->name), "mlx5_%zu", i);
                snprintf(d->pci_addr, sizeof(d->pci_addr), "%s", addrs[i]);
                snprintf(d->fw_ver, sizeof(d->fw_ver), "28.39.1002");
                snprintf(d->hca_type, sizeof(d->hca_type), "MT4129");
                d->ports = fx->ports[i];
                d->n_ports = 1;
                port_ok(&fx->ports[i][0], 1);
                fx->nd[i] = (struct netdev){0};
                snprintf(fx->nd[i].name, sizeof(fx->nd[i].name), "mlx5_%zu", i);
                snprintf(fx->nd[i].pci_addr, sizeof(fx->nd[i].pci_addr), "%s", addrs[i]);
        }
        fx->f.rdma.devs = fx->devs;
        fx->f.rdma.n = n;
        fx->f.netdev.rdma = fx->nd;
        fx->f.netdev.n_rdma = n;
}

static int setup(void **state) {
        (void)state;
        fx = calloc(1, sizeof(*fx));
        pci(&fx->pci[0], "0000:00:01.0", "/sys/devices/pci0000:00/0000:00:01.0", 0x8086, 0x352a, 0x060400, -1, 0);
        pci(&fx->pci[1], "0000:01:00.0", "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0", 0x10de, 0x2330,
            0x030200, 0, 0);
        snprintf(fx->pci[1].driver, sizeof(fx->pci[1].driver), "nvidia");
        pci(&fx->pci[2], "0000:01:00.1", "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.1", 0x15b3, 0x1021,
            0x020700, 0, 0);
        pci(&fx->pci[3], "0000:80:01.0", "/sys/devices/pci0000:80/0000:80:01.0", 0x8086, 0x352a, 0x060400, -1, 1);
        pci(&fx->pci[4], "0000:81:00.0", "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0", 0x15b3, 0x1021,
            0x020700, 3, 1);
        pci(&fx->pci[5], "0000:01:00.2", "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.2", 0x15b3, 0x1021,
            0x020700, 0, 0);
        fx->f.pci.devs = fx->pci;
        fx->f.pci.n = 6;
        fx->gpu.pci_index = 1;
        fx->f.gpus.gpus = &fx->gpu;
        fx->f.gpus.n = 1;
        fx->f.numa.n_cpu_nodes = 2;
        fx->modules[0] = "nvidia";
        fx->modules[1] = "nvidia_peermem";
        fx->f.host.modules = fx->modules;
        fx->f.host.have_modules = true;
        fx->f.host.uptime_s = 86400 * 2;
        snprintf(fx->f.host.kernel_release, sizeof(fx->f.host.kernel_release), "5.15.0-105-generic");
        fx->f.nvidia.have_version = true;
        char err[256];
        struct gpudb *db;
        assert_int_equal(gpudb_load(NULL, &db, err, sizeof(err)), 0);
        fx->f.db = db; /* the HCA models (data/nics.json) */
        report_init(&fx->rep);
        return 0;
}

static int teardown(void **state) {
        (void)state;
        report_done(&fx->rep);
        gpudb_free((struct gpudb *)fx->f.db);
        free(fx);
        return 0;
}

static const struct result *run(const struct check_info *c, size_t idx) {
        report_done(&fx->rep);
        report_init(&fx->rep);
        c->run(c, &fx->f, &fx->rep);
        assert_true(fx->rep.n_results > idx);
        return &fx->rep.results[idx];
}

static void assert_remedy(const struct result *r) {
        assert_non_null(r->remedy);
        assert_true(strlen(r->remedy) > 20);
}

static void test_no_rdma_skips(void **state) {
        (void)state;
        const struct check_info *cs[] = {&check_network_port_state, &check_network_port_rate,
                                         &check_network_link_layer, &check_network_firmware,
                                         &check_network_port_errors, &check_network_gpu_affinity,
                                         &check_network_gpudirect, &check_network_roce_mtu};
        for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
                const struct result *r = run(cs[i], 0);
                assert_int_equal(r->status, STATUS_SKIP);
                assert_non_null(strstr(r->summary, "no RDMA device"));
        }
        /* gds: GPUs, no cufile.json: skip. */
        assert_int_equal(run(&check_network_gds, 0)->status, STATUS_SKIP);
        /* The class unlistable: an error saying so. */
        fx->f.netdev.rdma_errno = EACCES;
        const struct result *r = run(&check_network_port_state, 0);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_non_null(strstr(r->summary, "/sys/class/infiniband"));
        assert_remedy(r);
}

static void test_port_state(void **state) {
        (void)state;
        with_rdma(1);
        struct rdma_port *p = &fx->ports[0][0];
        const struct result *r = run(&check_network_port_state, 0);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->subject, "mlx5_0/1");
        assert_string_equal(r->observed, "4: ACTIVE, 5: LinkUp");

        p->state = 2;
        snprintf(p->state_name, sizeof(p->state_name), "INIT");
        r = run(&check_network_port_state, 0);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_non_null(strstr(r->remedy, "subnet manager"));

        p->state = 1;
        snprintf(p->state_name, sizeof(p->state_name), "DOWN");
        p->phys_state = 2;
        snprintf(p->phys_state_name, sizeof(p->phys_state_name), "Polling");
        r = run(&check_network_port_state, 0);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->summary, "mlx5_0 port 1 is down (DOWN, Polling)");
        assert_non_null(strstr(r->remedy, "mlxlink -d 0000:01:00.1 -p 1"));

        p->phys_state = 3;
        snprintf(p->phys_state_name, sizeof(p->phys_state_name), "Disabled");
        r = run(&check_network_port_state, 0);
        assert_int_equal(r->status, STATUS_WARN);
        assert_remedy(r);

        p->state = -1;
        r = run(&check_network_port_state, 0);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_remedy(r);

        /* ports/ unlistable: the device's ports are unknown, not absent. */
        fx->devs[0].ports_errno = EACCES;
        fx->devs[0].n_ports = 0;
        r = run(&check_network_port_state, 0);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->subject, "mlx5_0");
        assert_non_null(strstr(r->summary, "/sys/class/infiniband/mlx5_0/ports"));
        assert_remedy(r);
        r = run(&check_network_port_rate, 0);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_non_null(strstr(r->summary, "network.port_state"));
}

static void test_port_rate(void **state) {
        (void)state;
        with_rdma(2);
        const struct result *r = run(&check_network_port_rate, 1);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "400 Gb/s (4X NDR)");

        /* Half rate beside a 400 Gb/s peer. */
        struct rdma_port *p = &fx->ports[1][0];
        p->rate_gbps = 200;
        snprintf(p->speed_name, sizeof(p->speed_name), "HDR");
        r = run(&check_network_port_rate, 1);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->summary, "mlx5_1 port 1 runs at 200 Gb/s while other ConnectX-7 ports run at 400 Gb/s");
        assert_remedy(r);

        /* Every port at HDR on NDR HCAs: below the HCA. */
        fx->ports[0][0].rate_gbps = 200;
        r = run(&check_network_port_rate, 0);
        assert_int_equal(r->status, STATUS_WARN);
        assert_non_null(strstr(r->summary, "below the ConnectX-7's 400 Gb/s"));
        assert_non_null(strstr(r->remedy, "network_min_rate_gbps"));

        /* The site says 200 is its fabric: pass; says 400: fail. */
        fx->thresholds = policy_thresholds_default;
        fx->thresholds.network_min_rate_gbps = 200;
        struct policy pol;
        memset(&pol, 0, sizeof(pol));
        pol.thresholds = fx->thresholds;
        fx->f.policy = &pol;
        r = run(&check_network_port_rate, 0);
        assert_int_equal(r->status, STATUS_PASS);
        pol.thresholds.network_min_rate_gbps = 400;
        r = run(&check_network_port_rate, 0);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_non_null(strstr(r->expected, "at least 400 Gb/s (site policy)"));
        assert_remedy(r);
        fx->f.policy = NULL;

        /* Ethernet below the HCA's maximum: the site's choice. */
        fx->ports[0][0].link_layer = fx->ports[1][0].link_layer = RDMA_LL_ETHERNET;
        fx->ports[0][0].rate_gbps = fx->ports[1][0].rate_gbps = 100;
        r = run(&check_network_port_rate, 0);
        assert_int_equal(r->status, STATUS_PASS);

        /* Not active: skip. Unreadable: error. */
        fx->ports[0][0].state = 1;
        assert_int_equal(run(&check_network_port_rate, 0)->status, STATUS_SKIP);
        fx->ports[1][0].rate_gbps = 0;
        r = run(&check_network_port_rate, 1);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_remedy(r);
}

static void test_firmware(void **state) {
        (void)state;
        with_rdma(3);
        const struct result *r = run(&check_network_firmware, 0);
        assert_int_equal(fx->rep.n_results, 1);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->subject, "ConnectX-7");
        assert_string_equal(r->summary, "3 ConnectX-7 HCAs on firmware 28.39.1002");
        snprintf(fx->devs[2].fw_ver, sizeof(fx->devs[2].fw_ver), "28.37.1014");
        r = run(&check_network_firmware, 0);
        assert_int_equal(r->status, STATUS_WARN);
        assert_non_null(strstr(r->observed, "mlx5_2 28.37.1014"));
        assert_remedy(r);
        /* A model known only by hca_type is its own group. */
        fx->pci[4].vendor = 0x8086;
        snprintf(fx->devs[2].hca_type, sizeof(fx->devs[2].hca_type), "MT4125");
        r = run(&check_network_firmware, 0);
        assert_int_equal(fx->rep.n_results, 2);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(fx->rep.results[1].subject, "ConnectX-6 Dx");
        fx->devs[0].fw_ver[0] = '\0';
        r = run(&check_network_firmware, 0);
        assert_int_equal(r->status, STATUS_WARN);
        assert_remedy(r);
}

static void test_port_errors(void **state) {
        (void)state;
        with_rdma(1);
        struct rdma_port *p = &fx->ports[0][0];
        p->counters[RDMA_CTR_SYMBOL_ERROR] = 20; /* 10/day over 2 days: at the limit */
        const struct result *r = run(&check_network_port_errors, 0);
        assert_int_equal(r->status, STATUS_PASS);
        p->counters[RDMA_CTR_SYMBOL_ERROR] = 21;
        r = run(&check_network_port_errors, 0);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->summary, "mlx5_0 port 1: symbol_error 10.5/day");
        assert_remedy(r);
        /* Up an hour: judged as a day (101 discards is over 100). */
        fx->f.host.uptime_s = 3600;
        p->counters[RDMA_CTR_SYMBOL_ERROR] = 5;
        p->counters[RDMA_CTR_PORT_XMIT_DISCARDS] = 101;
        r = run(&check_network_port_errors, 0);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->summary, "mlx5_0 port 1: port_xmit_discards 101.0/day");
        for (size_t c = 0; c < RDMA_CTR_COUNT; c++)
                p->counters[c] = RDMA_CTR_UNKNOWN;
        assert_int_equal(run(&check_network_port_errors, 0)->status, STATUS_SKIP);
}

static void test_gpu_affinity(void **state) {
        (void)state;
        with_rdma(1); /* mlx5_0 on 01:00.1, beside the GPU */
        const struct result *r = run(&check_network_gpu_affinity, 0);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->subject, "0000:01:00.0");
        assert_string_equal(r->observed, "mlx5_0 (0000:01:00.1) PIX");
        /* Only the NIC on the other node. */
        snprintf(fx->devs[0].pci_addr, sizeof(fx->devs[0].pci_addr), "0000:81:00.0");
        r = run(&check_network_gpu_affinity, 0);
        assert_int_equal(r->status, STATUS_WARN);
        assert_non_null(strstr(r->summary, "another NUMA node (SYS)"));
        assert_remedy(r);
}

static void test_link_layer(void **state) {
        (void)state;
        with_rdma(2);
        const struct result *r = run(&check_network_link_layer, 0);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->summary, "all ports InfiniBand");
        fx->ports[1][0].link_layer = RDMA_LL_UNKNOWN;
        r = run(&check_network_link_layer, 0);
        assert_int_equal(r->status, STATUS_WARN);
        assert_non_null(strstr(r->summary, "mlx5_1/1"));
        assert_remedy(r);
        /* Two GPUs, each with its NIC under its switch: mlx5_0 InfiniBand, mlx5_1 RoCE. */
        struct gpu gpus[2] = {{.pci_index = 1}, {.pci_index = 5}};
        pci(&fx->pci[5], "0000:81:00.1", "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.1", 0x10de, 0x2330,
            0x030200, 3, 1);
        snprintf(fx->devs[1].pci_addr, sizeof(fx->devs[1].pci_addr), "0000:81:00.0");
        fx->ports[1][0].link_layer = RDMA_LL_ETHERNET;
        fx->f.gpus.gpus = gpus;
        fx->f.gpus.n = 2;
        r = run(&check_network_link_layer, 0);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->summary, "the GPUs' nearest NICs mix link layers: 1 InfiniBand, 1 Ethernet");
        assert_remedy(r);
        fx->f.gpus.gpus = &fx->gpu;
        fx->f.gpus.n = 1;
        /* A RoCE NIC away from the GPUs beside an InfiniBand rail: pass. */
        fx->ports[1][0].link_layer = RDMA_LL_ETHERNET;
        snprintf(fx->devs[1].pci_addr, sizeof(fx->devs[1].pci_addr), "0000:81:00.0");
        r = run(&check_network_link_layer, 0);
        assert_int_equal(r->status, STATUS_PASS);
}

static void test_gpudirect(void **state) {
        (void)state;
        with_rdma(1);
        const struct result *r = run(&check_network_gpudirect, 0);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->summary, "GPUDirect RDMA through nvidia_peermem");
        fx->modules[1] = NULL;
        r = run(&check_network_gpudirect, 0);
        assert_int_equal(r->status, STATUS_WARN);
        assert_non_null(strstr(r->remedy, "modprobe nvidia-peermem"));
        fx->f.nvidia.open_kernel_module = true;
        r = run(&check_network_gpudirect, 0);
        assert_int_equal(r->status, STATUS_PASS);
        assert_non_null(strstr(r->summary, "DMA-BUF"));
        snprintf(fx->f.host.kernel_release, sizeof(fx->f.host.kernel_release), "5.4.0-150-generic");
        r = run(&check_network_gpudirect, 0);
        assert_int_equal(r->status, STATUS_WARN);
        assert_non_null(strstr(r->summary, "older than 5.12"));
        fx->f.host.have_modules = false;
        fx->f.host.modules_errno = -EACCES;
        r = run(&check_network_gpudirect, 0);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_remedy(r);
}

static void test_gds(void **state) {
        (void)state;
        fx->f.rdma.gds_config = true;
        const struct result *r = run(&check_network_gds, 0);
        assert_int_equal(r->status, STATUS_WARN);
        assert_remedy(r);
        fx->modules[1] = "nvidia_fs";
        assert_int_equal(run(&check_network_gds, 0)->status, STATUS_PASS);
        fx->f.gpus.n = 0;
        assert_int_equal(run(&check_network_gds, 0)->status, STATUS_SKIP);
}

static void test_roce_mtu(void **state) {
        (void)state;
        with_rdma(2);
        assert_int_equal(run(&check_network_roce_mtu, 0)->status, STATUS_SKIP); /* all InfiniBand */
        for (size_t i = 0; i < 2; i++)
                fx->ports[i][0].link_layer = RDMA_LL_ETHERNET;
        snprintf(fx->ports[0][0].netdev, sizeof(fx->ports[0][0].netdev), "ens1f0np0");
        fx->ports[0][0].netdev_mtu = 1500;
        const struct result *r = run(&check_network_roce_mtu, 0);
        assert_int_equal(r->status, STATUS_WARN);
        assert_non_null(strstr(r->remedy, "ip link set ens1f0np0 mtu 9000"));
        assert_int_equal(fx->rep.results[1].status, STATUS_SKIP); /* no interface */
        fx->ports[0][0].netdev_mtu = 4200;
        assert_int_equal(run(&check_network_roce_mtu, 0)->status, STATUS_PASS);
}

static void test_roce_congestion(void **state) {
        (void)state;
        with_rdma(1);
        assert_int_equal(run(&check_network_roce_congestion, 0)->status, STATUS_SKIP); /* InfiniBand */
        struct rdma_port *p = &fx->ports[0][0];
        p->link_layer = RDMA_LL_ETHERNET;
        snprintf(p->netdev, sizeof(p->netdev), "ens1f0np0");
        const struct result *r = run(&check_network_roce_congestion, 0);
        assert_int_equal(r->status, STATUS_PASS); /* counters at zero, PFC not asked (a capture) */
        assert_non_null(strstr(r->observed, "PFC not read"));

        for (size_t c = 0; c < RDMA_HW_COUNT; c++)
                p->hw[c] = RDMA_CTR_UNKNOWN;
        assert_int_equal(run(&check_network_roce_congestion, 0)->status, STATUS_SKIP); /* nothing readable */
        p->pfc_asked = true;
        p->pfc_errno = EOPNOTSUPP;
        r = run(&check_network_roce_congestion, 0);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_non_null(strstr(r->summary, "PFC not readable from dcbnl: Operation not supported"));

        p->pfc_errno = 0;
        p->pfc.enabled = 0x08;
        r = run(&check_network_roce_congestion, 0);
        assert_int_equal(r->status, STATUS_PASS); /* PFC alone is readable and is on */
        assert_non_null(strstr(r->observed, "PFC on priority 3; no hw_counters"));
        p->pfc.enabled = 0x28;
        assert_non_null(strstr(run(&check_network_roce_congestion, 0)->observed, "PFC on priorities 3,5"));

        /* Two days up: 15 a day is over, 10 a day is not. */
        for (size_t c = 0; c < RDMA_HW_COUNT; c++)
                p->hw[c] = 0;
        p->hw[RDMA_HW_OUT_OF_SEQUENCE] = 12;
        p->hw[RDMA_HW_PACKET_SEQ_ERR] = 8;
        assert_int_equal(run(&check_network_roce_congestion, 0)->status, STATUS_PASS);
        p->hw[RDMA_HW_LOCAL_ACK_TIMEOUT_ERR] = 10;
        r = run(&check_network_roce_congestion, 0);
        assert_int_equal(r->status, STATUS_WARN);
        assert_non_null(strstr(r->summary, "losing packets (15.0 lost-packet signs a day)"));
        assert_non_null(strstr(r->remedy, "DSCP")); /* PFC is on: look at the path */
        p->pfc.enabled = 0;
        r = run(&check_network_roce_congestion, 0);
        assert_non_null(strstr(r->summary, "with PFC off on every priority"));
        assert_non_null(strstr(r->remedy, "dcb pfc set dev ens1f0np0 prio-pfc 3:on"));

        p->hw[RDMA_HW_LOCAL_ACK_TIMEOUT_ERR] = 0;
        p->hw[RDMA_HW_RP_CNP_IGNORED] = 30;
        r = run(&check_network_roce_congestion, 0);
        assert_int_equal(r->status, STATUS_WARN);
        assert_non_null(strstr(r->summary, "ignoring congestion notifications (15.0 a day)"));
        assert_non_null(strstr(r->remedy, "ROCE_CC"));
}

/* Netlink answers to DCB_CMD_IEEE_GET built by hand as the kernel lays them out
 * (dcbnl_ieee_fill): the interface name, then DCB_ATTR_IEEE nesting DCB_ATTR_IEEE_PFC. */
static size_t put_attr(char *at, unsigned type, const void *data, size_t len) {
        struct nlattr *a = (struct nlattr *)at;
        a->nla_type = (uint16_t)type;
        a->nla_len = (uint16_t)(NLA_HDRLEN + len);
        if (data)
                memcpy(at + NLA_HDRLEN, data, len);
        return NLA_ALIGN(a->nla_len);
}

static size_t ieee_reply(char *buf, bool with_pfc, uint8_t pfc_en) {
        memset(buf, 0, 512);
        struct nlmsghdr *h = (struct nlmsghdr *)buf;
        h->nlmsg_type = RTM_GETDCB;
        h->nlmsg_seq = 1;
        struct dcbmsg *d = NLMSG_DATA(h);
        d->cmd = DCB_CMD_IEEE_GET;
        char *at = buf + NLMSG_LENGTH(sizeof(*d));
        at += put_attr(at, DCB_ATTR_IFNAME, "ens1f0np0", 10);
        char *nest = at;
        size_t inner = 0;
        uint8_t ets[24] = {0};
        inner += put_attr(nest + NLA_HDRLEN + inner, DCB_ATTR_IEEE_ETS, ets, sizeof(ets));
        if (with_pfc) {
                struct ieee_pfc pfc = {.pfc_cap = 8, .pfc_en = pfc_en};
                inner += put_attr(nest + NLA_HDRLEN + inner, DCB_ATTR_IEEE_PFC, &pfc, sizeof(pfc));
        }
        ((struct nlattr *)nest)->nla_type = DCB_ATTR_IEEE | NLA_F_NESTED;
        ((struct nlattr *)nest)->nla_len = (uint16_t)(NLA_HDRLEN + inner);
        at += NLA_HDRLEN + inner;
        uint8_t mode = DCB_CAP_DCBX_VER_IEEE;
        at += put_attr(at, DCB_ATTR_DCBX, &mode, 1);
        h->nlmsg_len = (uint32_t)(at - buf);
        return h->nlmsg_len;
}

static void test_dcb(void **state) {
        (void)state;
        char buf[512] __attribute__((aligned(8)));
        struct dcb_pfc pfc = {0};
        size_t len = ieee_reply(buf, true, 0x08);
        assert_int_equal(dcb_parse_ieee_reply(buf, len, &pfc), 0);
        assert_int_equal(pfc.enabled, 0x08);
        assert_int_equal(pfc.capable, 8);
        assert_int_equal(dcb_parse_ieee_reply(buf, len - 8, &pfc), -EINVAL); /* cut short */
        len = ieee_reply(buf, false, 0);
        assert_int_equal(dcb_parse_ieee_reply(buf, len, &pfc), -EOPNOTSUPP); /* no PFC from the driver */

        struct {
                struct nlmsghdr h;
                struct nlmsgerr e;
        } err = {.h = {.nlmsg_len = sizeof(err), .nlmsg_type = NLMSG_ERROR}, .e = {.error = -EOPNOTSUPP}};
        assert_int_equal(dcb_parse_ieee_reply(&err, sizeof(err), &pfc), -EOPNOTSUPP);
        err.e.error = 0; /* an acknowledgement is no answer */
        assert_int_equal(dcb_parse_ieee_reply(&err, sizeof(err), &pfc), -EINVAL);

        /* The kernel for real: lo has no DCB support, and no interface has this name. Where
         * the sandbox forbids netlink sockets there is nothing to ask. */
        int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        if (fd < 0)
                return;
        close(fd);
        assert_int_equal(dcb_read_pfc("lo", 2000, &pfc), -EOPNOTSUPP);
        assert_int_equal(dcb_read_pfc("gpuvet-none0", 2000, &pfc), -ENODEV);
        assert_int_equal(dcb_read_pfc("", 2000, &pfc), -ENODEV);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_state),
                cmocka_unit_test(test_parse_rate),
                cmocka_unit_test(test_parse_link_layer),
                cmocka_unit_test(test_gather),
                cmocka_unit_test_setup_teardown(test_no_rdma_skips, setup, teardown),
                cmocka_unit_test_setup_teardown(test_port_state, setup, teardown),
                cmocka_unit_test_setup_teardown(test_port_rate, setup, teardown),
                cmocka_unit_test_setup_teardown(test_firmware, setup, teardown),
                cmocka_unit_test_setup_teardown(test_port_errors, setup, teardown),
                cmocka_unit_test_setup_teardown(test_gpu_affinity, setup, teardown),
                cmocka_unit_test_setup_teardown(test_link_layer, setup, teardown),
                cmocka_unit_test_setup_teardown(test_gpudirect, setup, teardown),
                cmocka_unit_test_setup_teardown(test_gds, setup, teardown),
                cmocka_unit_test_setup_teardown(test_roce_mtu, setup, teardown),
                cmocka_unit_test_setup_teardown(test_roce_congestion, setup, teardown),
                cmocka_unit_test(test_dcb),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

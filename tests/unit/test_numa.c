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
#include "tree.h"

static const struct result *run_one(const struct check_info *check, const struct facts *f, struct report *rep) {
        report_init(rep);
        check->run(check, f, rep);
        assert_int_equal(rep->n_results, 1);
        return &rep->results[0];
}

static const char *evidence(const struct result *r, const char *key) {
        for (size_t i = 0; i < r->n_evidence; i++)
                if (strcmp(r->evidence[i].key, key) == 0)
                        return r->evidence[i].value;
        return NULL;
}

/* The POWER9 of hwloc's nvidiagpunumanodes capture: two sockets (nodes 0 and 8) and the
 * V100s' memory as CPU-less nodes 250-255. */
static char cpus0[] = "0-87", cpus8[] = "88-175", none[] = "";
static struct numa_node power9_nodes[] = {
        { .id = 0, .cpulist = cpus0, .n_cpus = 88, .mem_total_kb = 129839104 },
        { .id = 8, .cpulist = cpus8, .n_cpus = 88, .mem_total_kb = 133951488 },
        { .id = 250, .cpulist = none, .mem_total_kb = 15728640 },
        { .id = 251, .cpulist = none, .mem_total_kb = 15728640 },
};

/* GPUs on a host: n PCI devices, all GPUs, with the given locality. */
struct host {
        struct facts f;
        struct pci_dev devs[4];
        struct gpu gpus[4];
        struct numa_gpu numa_gpus[4];
};

static void make_host(struct host *h, struct numa_node *nodes, size_t n_nodes, size_t n_gpus) {
        memset(h, 0, sizeof(*h));
        h->f.numa.nodes = nodes;
        h->f.numa.n_nodes = n_nodes;
        for (size_t i = 0; i < n_nodes; i++)
                if (nodes[i].n_cpus)
                        h->f.numa.n_cpu_nodes++;
        h->f.numa.balancing_err = -ENOENT;
        for (size_t i = 0; i < n_gpus; i++) {
                char addr[16];
                snprintf(addr, sizeof(addr), "0000:%02zx:00.0", 0x10 + i);
                memcpy(h->devs[i].addr, addr, sizeof(addr));
                snprintf(h->devs[i].sysfs_path, sizeof(h->devs[i].sysfs_path), "/sys/devices/pci0000:00/%s", addr);
                h->devs[i].numa_node = -1;
                h->gpus[i].pci_index = i;
                h->numa_gpus[i].node = -1;
        }
        h->f.pci.devs = h->devs;
        h->f.pci.n = n_gpus;
        h->f.gpus.gpus = h->gpus;
        h->f.gpus.n = n_gpus;
        h->f.numa.gpus = h->numa_gpus;
        h->f.numa.n_gpus = n_gpus;
}

static void test_resolve(void **state) {
        (void)state;
        struct numa_facts n = { .nodes = power9_nodes, .n_nodes = 4, .n_cpu_nodes = 2 };
        enum numa_gpu_source src;
        assert_int_equal(numa_resolve_node(&n, true, 8, "", &src), 8);
        assert_int_equal(src, NUMA_GPU_FROM_NUMA_NODE);
        /* No numa_node file: the local CPUs decide. */
        assert_int_equal(numa_resolve_node(&n, false, -1, "0-15", &src), 0);
        assert_int_equal(src, NUMA_GPU_FROM_CPULIST);
        assert_int_equal(numa_resolve_node(&n, false, -1, "88-103", &src), 8);
        /* numa_node -1 is not a node; its cpulist is tried. */
        assert_int_equal(numa_resolve_node(&n, true, -1, "90", &src), 8);
        /* Spanning both sockets (what the kernel writes for a device without a node). */
        assert_int_equal(numa_resolve_node(&n, true, -1, "0-175", &src), -1);
        assert_int_equal(src, NUMA_GPU_UNRESOLVED);
        assert_int_equal(numa_resolve_node(&n, false, -1, "", &src), -1);
        assert_int_equal(numa_resolve_node(&n, false, -1, "garbage", &src), -1);
        assert_int_equal(numa_resolve_node(&n, false, -1, "500-501", &src), -1);
        assert_ptr_equal(numa_find_node(&n, 250), &power9_nodes[2]);
        assert_null(numa_find_node(&n, 1));
}

static void test_nodes(void **state) {
        (void)state;
        struct host h;
        struct report rep;
        make_host(&h, power9_nodes, 4, 0);
        const struct result *r = run_one(&check_numa_nodes, &h.f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->summary, "4 NUMA nodes: 2 with CPUs, 2 memory-only");
        assert_string_equal(r->observed, "2 nodes with CPUs (node 0: CPUs 0-87, node 8: CPUs 88-175); 2 memory-only "
                                         "nodes (250-251)");
        assert_string_equal(r->expected, "reported only");
        assert_string_equal(evidence(r, "node250"), "cpus none, 15360 MiB");
        assert_string_equal(evidence(r, "node0"), "cpus 0-87, 126796 MiB");
        report_done(&rep);

        make_host(&h, NULL, 0, 0);
        h.f.numa.nodes_err = -ENOENT;
        r = run_one(&check_numa_nodes, &h.f, &rep);
        assert_int_equal(r->status, STATUS_SKIP);
        report_done(&rep);

        h.f.numa.nodes_err = -EACCES;
        r = run_one(&check_numa_nodes, &h.f, &rep);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->summary, "cannot read /sys/devices/system/node/online: Permission denied");
        report_done(&rep);
}

static void test_gpu_affinity(void **state) {
        (void)state;
        struct host h;
        struct report rep;
        make_host(&h, power9_nodes, 4, 2);
        snprintf(h.devs[0].local_cpulist, sizeof(h.devs[0].local_cpulist), "0-15");
        h.numa_gpus[0] = (struct numa_gpu){ .node = 0, .source = NUMA_GPU_FROM_CPULIST };
        h.devs[1].have_numa_node = true;
        snprintf(h.devs[1].local_cpulist, sizeof(h.devs[1].local_cpulist), "0-175");
        report_init(&rep);
        check_numa_gpu_affinity.run(&check_numa_gpu_affinity, &h.f, &rep);
        assert_int_equal(rep.n_results, 2);
        const struct result *r = &rep.results[0];
        assert_string_equal(r->subject, "0000:10:00.0");
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "node 0, local CPUs 0-15");
        assert_string_equal(r->expected, "a NUMA node >= 0 (the host has 2 nodes with CPUs)");
        assert_string_equal(evidence(r, "resolved_from"), "local_cpulist");
        assert_string_equal(evidence(r, "source"), "/sys/devices/pci0000:00/0000:10:00.0/local_cpulist");
        r = &rep.results[1];
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->observed, "node -1, local CPUs 0-175");
        assert_string_equal(r->summary, "GPU has no NUMA node on a host with 2 CPU nodes: schedulers and frameworks "
                                        "cannot bind its processes to the near socket");
        assert_non_null(strstr(r->remedy, "ACPI SRAT"));
        report_done(&rep);

        /* One socket: -1 is what the kernel writes and harmless. */
        static char all[] = "0-31";
        struct numa_node one[] = { { .id = 0, .cpulist = all, .n_cpus = 32 } };
        make_host(&h, one, 1, 1);
        h.devs[0].have_numa_node = true;
        r = run_one(&check_numa_gpu_affinity, &h.f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "node -1, local CPUs unknown");
        assert_string_equal(r->expected, "any node (the host has 1 node with CPUs)");
        report_done(&rep);

        /* A garbled numa_node is an error naming the file, not a quiet fallback. */
        h.devs[0].numa_node_errno = EINVAL;
        r = run_one(&check_numa_gpu_affinity, &h.f, &rep);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->summary, "cannot read numa_node of 0000:10:00.0: not a node number");
        assert_string_equal(evidence(r, "source"), "/sys/devices/pci0000:00/0000:10:00.0/numa_node");
        report_done(&rep);
        h.devs[0].numa_node_errno = 0;

        /* Nothing known about the device's locality. */
        h.devs[0].have_numa_node = false;
        r = run_one(&check_numa_gpu_affinity, &h.f, &rep);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "sysfs gives neither numa_node nor local_cpulist for 0000:10:00.0");
        report_done(&rep);

        make_host(&h, one, 1, 0);
        r = run_one(&check_numa_gpu_affinity, &h.f, &rep);
        assert_int_equal(r->status, STATUS_SKIP);
        report_done(&rep);
}

static void test_balancing(void **state) {
        (void)state;
        struct host h;
        struct report rep;
        make_host(&h, power9_nodes, 4, 1);
        const struct result *r = run_one(&check_numa_balancing, &h.f, &rep);
        assert_int_equal(r->status, STATUS_SKIP);
        report_done(&rep);

        h.f.numa.balancing_err = 0;
        h.f.numa.balancing = 1;
        r = run_one(&check_numa_balancing, &h.f, &rep);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->observed, "kernel.numa_balancing=1");
        assert_string_equal(r->expected, "kernel.numa_balancing=0");
        assert_non_null(strstr(r->remedy, "sysctl -w kernel.numa_balancing=0"));
        report_done(&rep);

        h.f.numa.balancing = 0;
        r = run_one(&check_numa_balancing, &h.f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        report_done(&rep);

        h.f.numa.balancing_err = -EINVAL;
        r = run_one(&check_numa_balancing, &h.f, &rep);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->summary, "cannot read /proc/sys/kernel/numa_balancing: malformed value");
        report_done(&rep);

        h.f.numa.balancing_err = 0;
        h.f.numa.balancing = 1;
        h.f.numa.n_nodes = 1;
        r = run_one(&check_numa_balancing, &h.f, &rep);
        assert_int_equal(r->status, STATUS_SKIP);
        report_done(&rep);
}

/* Gathering from a tiny tree. */

static void test_gather(void **state) {
        (void)state;
        char *tree = tree_new("numa");
        tree_put(tree, "sys/devices/system/node/online", "0,8,250\n");
        tree_put(tree, "sys/devices/system/node/node0/cpulist", "0-87\n");
        tree_put(tree, "sys/devices/system/node/node0/meminfo", "\nNode 0 MemTotal:       129839104 kB\nNode 0 MemFree: 1 kB\n");
        tree_put(tree, "sys/devices/system/node/node8/cpulist", "88-175\n");
        tree_put(tree, "sys/devices/system/node/node8/meminfo", "Node 8 MemFree:        1 kB\n");
        tree_put(tree, "sys/devices/system/node/node250/cpulist", "\n");
        tree_put(tree, "sys/devices/system/node/node250/meminfo", "Node 250 MemTotal:       15728640 kB\n");
        tree_put(tree, "proc/sys/kernel/numa_balancing", "1\n");

        struct fsroot *fs;
        assert_int_equal(fsroot_open(tree, &fs), 0);
        struct host h;
        make_host(&h, NULL, 0, 3);
        snprintf(h.devs[0].local_cpulist, sizeof(h.devs[0].local_cpulist), "0-15");
        snprintf(h.devs[1].local_cpulist, sizeof(h.devs[1].local_cpulist), "88-103");
        h.devs[2].have_numa_node = true;
        h.devs[2].numa_node = 8;
        assert_int_equal(numa_gather(fs, &h.f), 0);
        const struct numa_facts *n = &h.f.numa;
        assert_int_equal(n->nodes_err, 0);
        assert_int_equal(n->n_nodes, 3);
        assert_int_equal(n->n_cpu_nodes, 2);
        assert_string_equal(n->nodes[0].cpulist, "0-87");
        assert_int_equal(n->nodes[0].mem_total_kb, 129839104);
        assert_int_equal(n->nodes[1].id, 8);
        assert_int_equal(n->nodes[1].mem_err, -EINVAL);
        assert_int_equal(n->nodes[2].id, 250);
        assert_string_equal(n->nodes[2].cpulist, "");
        assert_int_equal(n->nodes[2].n_cpus, 0);
        assert_int_equal(n->balancing, 1);
        assert_int_equal(n->n_gpus, 3);
        assert_int_equal(n->gpus[0].node, 0);
        assert_int_equal(n->gpus[1].node, 8);
        assert_int_equal(n->gpus[1].source, NUMA_GPU_FROM_CPULIST);
        assert_int_equal(n->gpus[2].node, 8);
        assert_int_equal(n->gpus[2].source, NUMA_GPU_FROM_NUMA_NODE);
        numa_facts_done(&h.f.numa);

        /* Garbled balancing value, and a node list recovered from the directories. */
        tree_unlink(tree, "sys/devices/system/node/online");
        tree_put(tree, "proc/sys/kernel/numa_balancing", "yes\n");
        assert_int_equal(numa_gather(fs, &h.f), 0);
        assert_int_equal(h.f.numa.nodes_err, -ENOENT);
        assert_int_equal(h.f.numa.n_nodes, 3);
        assert_int_equal(h.f.numa.balancing_err, -EINVAL);
        numa_facts_done(&h.f.numa);

        fsroot_free(fs);
        tree_remove(tree);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_resolve),   cmocka_unit_test(test_nodes),  cmocka_unit_test(test_gpu_affinity),
                cmocka_unit_test(test_balancing), cmocka_unit_test(test_gather),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

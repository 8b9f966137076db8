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
#include "policy/policy.h"
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

/* A stock Ubuntu host with 1 TiB of RAM and no swap. */
static void make_host(struct facts *f) {
        memset(f, 0, sizeof(*f));
        struct memory_facts *m = &f->memory;
        snprintf(m->thp_enabled, sizeof(m->thp_enabled), "madvise");
        snprintf(m->thp_defrag, sizeof(m->thp_defrag), "madvise");
        m->swappiness = 60;
        m->dirty_ratio = 20;
        m->dirty_background_ratio = 10;
        m->mem_total_kb = 1056474864; /* 1007.5 GiB */
}

static void test_thp(void **state) {
        (void)state;
        struct facts f;
        struct report rep;
        make_host(&f);
        const struct result *r = run_one(&check_memory_thp, &f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "enabled=madvise, defrag=madvise");
        assert_string_equal(r->expected, "enabled=always or enabled=madvise");
        assert_string_equal(evidence(r, "defrag"), "madvise");
        report_done(&rep);

        snprintf(f.memory.thp_enabled, sizeof(f.memory.thp_enabled), "never");
        f.memory.thp_defrag_err = -ENOENT;
        r = run_one(&check_memory_thp, &f, &rep);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->observed, "enabled=never, defrag=unknown");
        assert_non_null(strstr(r->remedy, "gpuvet tune apply --set memory.thp=madvise"));
        assert_non_null(strstr(r->remedy, "transparent_hugepage=madvise"));
        report_done(&rep);

        f.memory.thp_enabled_err = -ENOENT;
        r = run_one(&check_memory_thp, &f, &rep);
        assert_int_equal(r->status, STATUS_SKIP);
        report_done(&rep);

        f.memory.thp_enabled_err = -EINVAL;
        r = run_one(&check_memory_thp, &f, &rep);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->summary, "cannot read /sys/kernel/mm/transparent_hugepage/enabled: malformed value");
        report_done(&rep);
}

static void test_swappiness(void **state) {
        (void)state;
        struct facts f;
        struct report rep;
        make_host(&f);
        const struct result *r = run_one(&check_memory_swappiness, &f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "vm.swappiness=60 (no swap active)");
        assert_string_equal(r->expected, "vm.swappiness <= 10 while swap is active");
        assert_string_equal(r->summary, "no swap is active, so vm.swappiness=60 has no effect");
        report_done(&rep);

        f.memory.n_swaps = 1;
        r = run_one(&check_memory_swappiness, &f, &rep);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->observed, "vm.swappiness=60");
        assert_non_null(strstr(r->remedy, "sysctl -w vm.swappiness=10"));
        report_done(&rep);

        f.memory.swappiness = 10;
        r = run_one(&check_memory_swappiness, &f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        report_done(&rep);

        f.memory.swappiness_err = -ERANGE;
        r = run_one(&check_memory_swappiness, &f, &rep);
        assert_int_equal(r->status, STATUS_ERROR);
        report_done(&rep);
}

static void test_dirty(void **state) {
        (void)state;
        struct facts f;
        struct report rep;
        make_host(&f);
        const struct result *r = run_one(&check_memory_dirty_ratio, &f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "vm.dirty_ratio=20, vm.dirty_background_ratio=10");
        assert_string_equal(r->expected, "dirty limit <= 40% of RAM");
        report_done(&rep);

        f.memory.dirty_ratio = 80;
        r = run_one(&check_memory_dirty_ratio, &f, &rep);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->summary, "dirty page cache may grow to 80% of RAM: a large checkpoint write then blocks "
                                        "for minutes while storage drains it");
        report_done(&rep);

        /* The byte form, 512 GiB of a 1007.5 GiB host. */
        f.memory.dirty_ratio = 0;
        f.memory.dirty_bytes = 512ull << 30;
        r = run_one(&check_memory_dirty_ratio, &f, &rep);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->observed, "vm.dirty_bytes=549755813888 (51% of RAM), vm.dirty_background_ratio=10");
        report_done(&rep);

        f.memory.mem_total_err = -EINVAL;
        r = run_one(&check_memory_dirty_ratio, &f, &rep);
        assert_int_equal(r->status, STATUS_ERROR);
        report_done(&rep);
}

static void test_swap(void **state) {
        (void)state;
        struct facts f;
        struct report rep;
        make_host(&f);
        const struct result *r = run_one(&check_memory_swap, &f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "no swap");
        report_done(&rep);

        f.memory.n_swaps = 2;
        f.memory.swaps_size_kb = 16 << 20;
        f.memory.swaps_used_kb = 1024;
        r = run_one(&check_memory_swap, &f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "2 areas, 16384 MiB, 1 MiB used");
        report_done(&rep);

        f.memory.swaps_err = -ENOENT;
        r = run_one(&check_memory_swap, &f, &rep);
        assert_int_equal(r->status, STATUS_SKIP);
        report_done(&rep);
}

static void test_host_vs_gpu(void **state) {
        (void)state;
        struct facts f;
        struct report rep;
        make_host(&f);
        const struct result *r = run_one(&check_memory_host_vs_gpu, &f, &rep);
        assert_int_equal(r->status, STATUS_SKIP);
        report_done(&rep);

        struct gpu_model h100 = { .name = "NVIDIA H100 80GB HBM3", .memory_gb = 80 };
        struct pci_dev devs[8];
        struct gpu gpus[8];
        memset(devs, 0, sizeof(devs));
        for (size_t i = 0; i < 8; i++) {
                snprintf(devs[i].addr, sizeof(devs[i].addr), "0000:%02zx:00.0", 0x18 + i);
                gpus[i] = (struct gpu){ .pci_index = i, .model = &h100 };
        }
        f.pci.devs = devs;
        f.pci.n = 8;
        f.gpus.gpus = gpus;
        f.gpus.n = 8;
        r = run_one(&check_memory_host_vs_gpu, &f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "host 1007.5 GiB, GPUs 640 GiB (8 GPUs): 1.57x");
        assert_string_equal(r->expected,
                            ">= 0.50x the GPUs' memory (NVIDIA states no ratio; its DGX systems ship 0.87x to 3.2x)");
        report_done(&rep);

        /* Below 1x is how NVIDIA builds a DGX B300 (2 TB for 2.3 TB of HBM): it passes. */
        f.memory.mem_total_kb = 512ull << 20;
        r = run_one(&check_memory_host_vs_gpu, &f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "host 512.0 GiB, GPUs 640 GiB (8 GPUs): 0.80x");
        assert_null(r->remedy);
        report_done(&rep);

        /* Well below: warns, with no claim of NVIDIA's sizing. */
        f.memory.mem_total_kb = 256ull << 20;
        r = run_one(&check_memory_host_vs_gpu, &f, &rep);
        assert_int_equal(r->status, STATUS_WARN);
        assert_non_null(strstr(r->remedy, "at least 320 GiB"));
        assert_null(strstr(r->remedy, "twice"));
        report_done(&rep);

        /* A site that sizes host RAM at 1x says so in its policy. */
        struct policy pol = {0};
        pol.thresholds = policy_thresholds_default;
        pol.thresholds.host_memory_min_ratio = 1.0;
        f.policy = &pol;
        f.memory.mem_total_kb = 512ull << 20;
        r = run_one(&check_memory_host_vs_gpu, &f, &rep);
        assert_int_equal(r->status, STATUS_WARN);
        assert_non_null(strstr(r->remedy, "at least 640 GiB"));
        report_done(&rep);
        f.policy = NULL;

        /* Grace superchips: CPU and GPU memory are one address space over C2C. */
        struct gpu_model gb200 = { .name = "NVIDIA GB200", .memory_gb = 186, .host_link = "c2c" };
        for (size_t i = 0; i < 8; i++)
                gpus[i].model = &gb200;
        r = run_one(&check_memory_host_vs_gpu, &f, &rep);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_non_null(strstr(r->summary, "NVLink-C2C"));
        report_done(&rep);
        for (size_t i = 0; i < 8; i++)
                gpus[i].model = &h100;

        gpus[3].model = NULL;
        r = run_one(&check_memory_host_vs_gpu, &f, &rep);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "the memory size of GPU 0000:1b:00.0 (NVIDIA GPU) is unknown: not in gpuvet's "
                                        "GPU table");
        report_done(&rep);
}

static void test_parse_swaps(void **state) {
        (void)state;
        unsigned n;
        uint64_t size, used;
        assert_int_equal(memory_parse_swaps("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n", &n, &size, &used), 0);
        assert_int_equal(n, 0);
        assert_int_equal(memory_parse_swaps("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
                                            "/dev/dm-1                               partition\t8388604\t\t512\t\t-2\n"
                                            "/swap\\040file                              file\t\t1048572\t\t0\t\t-3\n",
                                            &n, &size, &used),
                         0);
        assert_int_equal(n, 2);
        assert_int_equal(size, 9437176);
        assert_int_equal(used, 512);
        assert_int_equal(memory_parse_swaps("", &n, &size, &used), -EINVAL);
        assert_int_equal(memory_parse_swaps("Filename Type\n/dev/sda2 partition lots 0 -2\n", &n, &size, &used), -EINVAL);
        assert_int_equal(memory_parse_swaps("Filename Type\n/dev/sda2 partition 10 20 -2\n", &n, &size, &used), -EINVAL);
}

static void test_gather(void **state) {
        (void)state;
        char *tree = tree_new("memory");
        tree_put(tree, "sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
        tree_put(tree, "sys/kernel/mm/transparent_hugepage/defrag", "always defer defer+madvise [madvise] never\n");
        tree_put(tree, "proc/sys/vm/swappiness", "60\n");
        tree_put(tree, "proc/sys/vm/dirty_ratio", "20\n");
        tree_put(tree, "proc/sys/vm/dirty_background_ratio", "");
        tree_put(tree, "proc/sys/vm/dirty_bytes", "0\n");
        tree_put(tree, "proc/meminfo", "MemTotal:       1056474864 kB\nMemFree:        1000 kB\nSwapTotal:       8388604 kB\n");
        tree_put(tree, "proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/dm-1 partition\t8388604\t0\t-2\n");

        struct fsroot *fs;
        assert_int_equal(fsroot_open(tree, &fs), 0);
        struct facts f;
        memset(&f, 0, sizeof(f));
        assert_int_equal(memory_gather(fs, &f), 0);
        const struct memory_facts *m = &f.memory;
        assert_string_equal(m->thp_enabled, "madvise");
        assert_string_equal(m->thp_defrag, "madvise");
        assert_int_equal(m->swappiness, 60);
        assert_int_equal(m->dirty_ratio, 20);
        assert_int_equal(m->dirty_background_ratio_err, -EINVAL);
        assert_int_equal(m->dirty_bytes_err, 0);
        assert_int_equal(m->dirty_background_bytes_err, -ENOENT);
        assert_int_equal(m->mem_total_kb, 1056474864);
        assert_int_equal(m->swap_total_kb, 8388604);
        assert_int_equal(m->n_swaps, 1);
        assert_int_equal(m->swaps_size_kb, 8388604);
        memory_facts_done(&f.memory);

        tree_put(tree, "sys/kernel/mm/transparent_hugepage/enabled", "always madvise never\n");
        tree_put(tree, "proc/meminfo", "MemFree: 1 kB\n");
        assert_int_equal(memory_gather(fs, &f), 0);
        assert_int_equal(f.memory.thp_enabled_err, -EINVAL);
        assert_int_equal(f.memory.mem_total_err, -EINVAL);
        assert_int_equal(f.memory.swap_total_err, -ENOENT);
        memory_facts_done(&f.memory);

        fsroot_free(fs);
        tree_remove(tree);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_thp),         cmocka_unit_test(test_swappiness),  cmocka_unit_test(test_dirty),
                cmocka_unit_test(test_swap),        cmocka_unit_test(test_host_vs_gpu), cmocka_unit_test(test_parse_swaps),
                cmocka_unit_test(test_gather),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

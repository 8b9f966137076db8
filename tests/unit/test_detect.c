#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "report/detect_report.h"
#include "core/fsroot.h"
#include "data/compat.h"
#include "data/gpudb.h"
#include "sys/facts.h"
#include "tree.h"

static char *root;

static void put_gpu(const char *addr, const char *device) {
        char rel[256];
        snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/vendor", addr);
        tree_put(root, rel, "0x10de\n");
        snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/device", addr);
        tree_put(root, rel, device);
        snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/class", addr);
        tree_put(root, rel, "0x030200\n");
}

static int make_root(void **state) {
        (void)state;
        root = tree_new("detect");
        tree_put(root, "sys/bus/pci/devices/.keep", "");
        return 0;
}

static int remove_root(void **state) {
        (void)state;
        tree_remove(root);
        root = NULL;
        return 0;
}

/* Gather the temp root and build the document. */
static json_t *detect_root(void) {
        struct fsroot *fs;
        struct gpudb *db;
        struct compat *c;
        char err[512];
        assert_int_equal(fsroot_open(root, &fs), 0);
        assert_int_equal(gpudb_load(NULL, &db, err, sizeof(err)), 0);
        assert_int_equal(compat_load(NULL, &c, err, sizeof(err)), 0);
        struct facts f;
        assert_int_equal(facts_gather(fs, db, &f), 0);
        json_t *doc = detect_report(&f, c, root, NULL);
        assert_non_null(doc);
        facts_done(&f);
        compat_free(c);
        gpudb_free(db);
        fsroot_free(fs);
        return doc;
}

static const char *str(const json_t *o, const char *key) {
        const char *s = json_string_value(json_object_get(o, key));
        assert_non_null(s);
        return s;
}

static const json_t *find(const json_t *list, const char *key, const char *value) {
        size_t i;
        const json_t *item;
        json_array_foreach(list, i, item) if (strcmp(str(item, key), value) == 0) return item;
        fail_msg("no %s %s", key, value);
        return NULL;
}

static void test_h100_node(void **state) {
        (void)state;
        put_gpu("0000:18:00.0", "0x2330\n");
        put_gpu("0000:2a:00.0", "0x2330\n");
        put_gpu("0000:3b:00.0", "0x1db5\n");
        tree_put(root, "proc/driver/nvidia/version",
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:39 UTC 2024\n"
            "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n");
        json_t *doc = detect_root();
        assert_string_equal(str(doc, "schema"), "gpuvet.detect/1");
        const json_t *d = json_object_get(doc, "driver");
        assert_true(json_is_true(json_object_get(d, "installed")));
        assert_string_equal(str(d, "version"), "550.54.15");
        assert_string_equal(str(d, "branch"), "R550");
        assert_true(json_is_false(json_object_get(d, "branch_supported")));
        assert_string_equal(str(d, "max_cuda_native"), "12.4");
        assert_string_equal(str(d, "max_cuda_minor_compat"), "12.9");

        const json_t *gpus = json_object_get(doc, "gpus");
        assert_int_equal(json_array_size(gpus), 2);
        const json_t *h = json_array_get(gpus, 0);
        assert_string_equal(str(h, "model"), "NVIDIA H100 80GB HBM3");
        assert_int_equal(json_integer_value(json_object_get(h, "count")), 2);
        assert_string_equal(str(h, "architecture"), "hopper");
        assert_string_equal(str(h, "compute_capability"), "9.0");
        assert_string_equal(str(json_object_get(h, "recommended"), "driver_branch"), "R580");
        assert_string_equal(str(json_object_get(h, "recommended"), "cuda"), "13.0");
        assert_true(json_is_false(json_object_get(h, "driver_assumed")));
        assert_string_equal(str(h, "newest_cuda"), "12.9");
        assert_string_equal(str(find(json_object_get(h, "cuda"), "version", "13.0"), "verdict"), "driver_too_old");
        assert_string_equal(str(find(json_object_get(h, "pytorch"), "wheel", "cu126"), "verdict"), "minor_compat");
        assert_string_equal(str(find(json_object_get(h, "ngc"), "release", "24.04"), "verdict"), "native");

        const json_t *v = json_array_get(gpus, 1);
        assert_string_equal(str(v, "model"), "Tesla V100-SXM2-32GB");
        assert_string_equal(str(json_object_get(v, "recommended"), "cuda"), "12.9");
        const json_t *cu130 = find(json_object_get(v, "pytorch"), "wheel", "cu130");
        assert_string_equal(str(cu130, "verdict"), "arch_unsupported");
        assert_true(json_is_false(json_object_get(cu130, "runs")));
        assert_string_equal(str(find(json_object_get(v, "ngc"), "release", "25.08"), "verdict"), "arch_unsupported");

        char *text = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&text, &len);
        detect_write_text(out, doc);
        fclose(out);
        assert_non_null(strstr(text, "2x NVIDIA H100 80GB HBM3 (Hopper, compute capability 9.0, sm_90, datacenter)\n"));
        assert_non_null(strstr(text, "1x Tesla V100-SXM2-32GB"));
        free(text);
        json_decref(doc);
}

static void test_no_driver(void **state) {
        (void)state;
        put_gpu("0000:01:00.0", "0x2b85\n");
        json_t *doc = detect_root();
        const json_t *d = json_object_get(doc, "driver");
        assert_true(json_is_false(json_object_get(d, "installed")));
        assert_true(json_is_null(json_object_get(d, "version")));
        assert_string_equal(str(d, "problem"), "/proc/driver/nvidia/version is absent: no NVIDIA driver is loaded");
        const json_t *g = json_array_get(json_object_get(doc, "gpus"), 0);
        assert_string_equal(str(g, "architecture"), "blackwell_consumer");
        assert_true(json_is_true(json_object_get(g, "driver_assumed")));
        assert_string_equal(str(g, "evaluated_driver"), "580.95.05");
        assert_string_equal(str(find(json_object_get(g, "pytorch"), "wheel", "cu126"), "verdict"), "arch_unsupported");
        assert_string_equal(str(find(json_object_get(g, "pytorch"), "wheel", "cu128"), "verdict"), "native");
        json_decref(doc);
}

static void test_unknown_and_none(void **state) {
        (void)state;
        json_t *doc = detect_root();
        assert_int_equal(json_array_size(json_object_get(doc, "gpus")), 0);
        json_decref(doc);

        put_gpu("0000:05:00.0", "0xffff\n");
        doc = detect_root();
        const json_t *g = json_array_get(json_object_get(doc, "gpus"), 0);
        assert_true(json_is_false(json_object_get(g, "known")));
        assert_true(json_is_null(json_object_get(g, "model")));
        assert_string_equal(str(g, "problem"),
                            "PCI device 10de:ffff is not in gpuvet's GPU table: add it to gpus.json (see docs/data-files.md)");
        json_decref(doc);
}

static void test_gpu_table(void **state) {
        (void)state;
        struct gpudb *db;
        char err[512];
        assert_int_equal(gpudb_load(NULL, &db, err, sizeof(err)), 0);
        json_t *doc = detect_gpu_table(db);
        assert_non_null(doc);
        assert_string_equal(str(doc, "schema"), "gpuvet.gpus/1");
        assert_int_equal(json_array_size(json_object_get(doc, "architectures")), db->n_archs);
        assert_int_equal(json_array_size(json_object_get(doc, "gpus")), db->n_models);
        const json_t *h100 = find(json_object_get(doc, "gpus"), "name", "NVIDIA H100 80GB HBM3");
        assert_string_equal(str(h100, "architecture"), "hopper");
        assert_string_equal(str(h100, "compute_capability"), "9.0");
        const json_t *ids = json_object_get(h100, "pci_ids");
        bool has_2330 = false;
        for (size_t i = 0; i < json_array_size(ids); i++)
                has_2330 = has_2330 || strcmp(json_string_value(json_array_get(ids, i)), "10de:2330") == 0;
        assert_true(has_2330);
        const json_t *hopper = find(json_object_get(doc, "architectures"), "id", "hopper");
        assert_string_equal(str(hopper, "sm"), "sm_90");
        char *mem = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&mem, &len);
        assert_non_null(f);
        detect_write_gpu_table(f, doc);
        fclose(f);
        assert_non_null(strstr(mem, "NVIDIA H100 80GB HBM3"));
        assert_non_null(strstr(mem, "10de:2330"));
        assert_non_null(strstr(mem, "sm_90"));
        free(mem);
        json_decref(doc);
        gpudb_free(db);
        char *list[] = {"detect", "--list-gpus", "--data-dir", "/nonexistent/gpuvet", NULL};
        assert_int_equal(cmd_detect(4, list), EXIT_USAGE);
}

static void test_usage(void **state) {
        (void)state;
        char *bad_option[] = {"detect", "--bogus", NULL};
        assert_int_equal(cmd_detect(2, bad_option), EXIT_USAGE);
        char *extra[] = {"detect", "extra", NULL};
        assert_int_equal(cmd_detect(2, extra), EXIT_USAGE);
        char *no_root[] = {"detect", "--root", "/nonexistent/gpuvet", NULL};
        assert_int_equal(cmd_detect(3, no_root), EXIT_USAGE);
        char *no_data[] = {"detect", "--data-dir", "/nonexistent/gpuvet", NULL};
        assert_int_equal(cmd_detect(3, no_data), EXIT_USAGE);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_h100_node, make_root, remove_root),
                cmocka_unit_test_setup_teardown(test_no_driver, make_root, remove_root),
                cmocka_unit_test_setup_teardown(test_unknown_and_none, make_root, remove_root),
                cmocka_unit_test(test_gpu_table),
                cmocka_unit_test(test_usage),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

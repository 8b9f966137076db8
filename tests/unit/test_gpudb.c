#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/gpudb.h"
#include "tree.h"

static struct gpudb *builtin(void) {
        struct gpudb *db = NULL;
        char err[512] = "";
        assert_int_equal(gpudb_load(NULL, &db, err, sizeof(err)), 0);
        return db;
}

static void test_lookups(void **state) {
        (void)state;
        struct gpudb *db = builtin();
        const struct gpu_model *m = gpudb_find(db, 0x10de, 0x2330);
        assert_non_null(m);
        assert_string_equal(m->name, "NVIDIA H100 80GB HBM3");
        assert_string_equal(m->arch, "hopper");
        assert_int_equal(m->nvlink_links, 18);
        assert_string_equal(gpudb_find(db, 0x10de, 0x26b9)->name, "NVIDIA L40S");
        assert_string_equal(gpudb_find(db, 0x10de, 0x2335)->name, "NVIDIA H200");
        m = gpudb_find(db, 0x10de, 0x1db5);
        assert_string_equal(m->name, "Tesla V100-SXM2-32GB");
        assert_int_equal(m->cc_major, 7);
        assert_int_equal(m->cc_minor, 0);
        /* GA102 is cc 8.6 although the Ampere entry says 8.0: the model's own cc counts. */
        m = gpudb_find(db, 0x10de, 0x2236);
        assert_string_equal(m->name, "NVIDIA A10");
        assert_int_equal(m->cc_minor, 6);
        m = gpudb_find(db, 0x10de, 0x2b85);
        assert_string_equal(m->arch, "blackwell_consumer");
        assert_int_equal(m->cc_major, 12);
        /* Second ids of a model are matched too. */
        assert_string_equal(gpudb_find(db, 0x10de, 0x1df5)->name, "Tesla V100-SXM2-16GB");
        assert_string_equal(gpudb_find(db, 0x10de, 0x230e)->name, "NVIDIA H20 NVL16");
        assert_null(gpudb_find(db, 0x10de, 0xffff));
        assert_null(gpudb_find(db, 0x8086, 0x2330));
        assert_string_equal(gpudb_arch(db, "volta")->last_cuda_major, "12");
        assert_null(gpudb_arch(db, "hopper")->last_cuda_major);
        assert_int_equal(gpudb_arch(db, "pascal")->last_branch, 580);
        assert_int_equal(gpudb_arch(db, "volta")->last_branch, 580);
        assert_int_equal(gpudb_arch(db, "hopper")->last_branch, 0);
        assert_string_equal(gpudb_arch(db, "blackwell_ultra")->sm, "sm_103");
        /* Host link, memory and NVLink expectations per model. */
        m = gpudb_find(db, 0x10de, 0x2941);
        assert_string_equal(m->host_link, "c2c");
        assert_string_equal(gpudb_find(db, 0x10de, 0x2330)->host_link, "pcie");
        assert_string_equal(gpudb_find(db, 0x10de, 0x2330)->memory_type, "HBM3");
        m = gpudb_find(db, 0x10de, 0x26b9);
        assert_true(m->nvlink_known);
        assert_int_equal(m->nvlink_links, 0);
        assert_true(gpudb_find(db, 0x10de, 0x2321)->nvlink_bridge);
        assert_false(gpudb_find(db, 0x10de, 0x2330)->nvlink_bridge);
        assert_string_equal(gpudb_find(db, 0x10de, 0x3182)->arch, "blackwell_ultra");
        assert_string_equal(gpudb_find(db, 0x10de, 0x20b1)->name, "NVIDIA A100-PCIE-40GB");
        /* A16 and A2 share 10de:25b6: the subsystem id tells them apart. */
        assert_string_equal(gpudb_find_subsystem(db, 0x10de, 0x25b6, 0x14a9)->name, "NVIDIA A16");
        assert_string_equal(gpudb_find_subsystem(db, 0x10de, 0x25b6, 0x157e)->name, "NVIDIA A2");
        assert_string_equal(gpudb_min_driver(db, gpudb_find(db, 0x10de, 0x2235)), "455.23");
        assert_string_equal(gpudb_min_driver(db, gpudb_find(db, 0x10de, 0x2330)), "520.61.05");
        /* Figures from NVIDIA's own pages and datasheets (data/gpus.json cites each). Dense
         * FP4 per GPU: HGX B200 and B300 tables / 8, GB200 NVL72 (1440 PF sparse) / 72 / 2,
         * GB300 NVL72 per GPU. */
        assert_true(gpudb_find(db, 0x10de, 0x2901)->tflops.fp4 == 9000);
        assert_true(gpudb_find(db, 0x10de, 0x3182)->tflops.fp4 == 13500);
        assert_true(gpudb_find(db, 0x10de, 0x2941)->tflops.fp4 == 10000);
        assert_true(gpudb_find(db, 0x10de, 0x31c2)->tflops.fp4 == 15000);
        assert_true(gpudb_find(db, 0x10de, 0x2330)->tflops.fp4 == 0); /* Hopper has no FP4 */
        m = gpudb_find(db, 0x10de, 0x2bb5); /* RTX PRO 6000 Blackwell Server Edition */
        assert_true(m->mem_bw_gbps == 1597 && m->tflops.fp32 == 120);
        m = gpudb_find(db, 0x10de, 0x1df6); /* V100S PCIe */
        assert_true(m->tflops.fp64 == 8.2 && m->tflops.fp32 == 16.4 && m->tflops.fp16 == 130);
        assert_true(gpudb_find(db, 0x10de, 0x15f8)->mem_bw_gbps == 732); /* P100 PCIe 16GB */
        assert_true(gpudb_find(db, 0x10de, 0x15f7)->mem_bw_gbps == 549); /* P100 PCIe 12GB */
        gpudb_free(db);
}

/* Each device id names one model, and every model's architecture knows its cc major. */
static void test_table_consistent(void **state) {
        (void)state;
        struct gpudb *db = builtin();
        assert_true(db->n_models >= 40);
        for (size_t i = 0; i < db->n_models; i++) {
                const struct gpu_model *m = &db->models[i];
                const struct gpu_arch *a = gpudb_arch(db, m->arch);
                assert_non_null(a);
                assert_int_equal(m->cc_major, a->cc_major);
                for (size_t k = 0; k < m->n_device_ids; k++)
                        if (m->n_subsystem_ids == 0)
                                assert_ptr_equal(gpudb_find(db, 0x10de, m->device_ids[k]), m);
                        else
                                assert_ptr_equal(gpudb_find_subsystem(db, 0x10de, m->device_ids[k], m->subsystem_ids[0]), m);
        }
        gpudb_free(db);
}

static char *dir;

static int make_dir(void **state) {
        (void)state;
        dir = tree_new("gpudb");
        return 0;
}

static int remove_dir(void **state) {
        (void)state;
        tree_remove(dir);
        dir = NULL;
        return 0;
}

static void write_table(const char *text) { tree_put(dir, "gpus.json", text); }

#define ARCHS "{\"schema\": \"gpuvet.gpus/1\", \"architectures\": [{\"id\": \"hopper\", \"name\": \"Hopper\", " \
              "\"sm\": \"sm_90\", \"cc\": \"9.0\", \"min_driver\": \"520.61.05\", \"min_cuda\": \"11.8\"}],\n"

static void expect_error(const char *text, const char *message) {
        write_table(text);
        struct gpudb *db = NULL;
        char err[512] = "", want[640];
        assert_int_equal(gpudb_load(dir, &db, err, sizeof(err)), -EINVAL);
        assert_null(db);
        snprintf(want, sizeof(want), "%s/gpus.json: %s", dir, message);
        assert_string_equal(err, want);
}

static void test_load_errors(void **state) {
        (void)state;
        expect_error(ARCHS "\"gpus\": [{\"name\": \"X\", \"device_ids\": [\"2330\"], \"arch\": \"hopper\", \"cc\": \"9.0\"}]}",
                     "GPU X lacks name, arch or form");
        expect_error(ARCHS "\"gpus\": [{\"name\": \"X\", \"device_ids\": [\"2330\"], \"arch\": \"hopper\", \"cc\": \"9\", "
                           "\"form\": \"sxm\"}]}",
                     "GPU X: \"cc\" must look like \"9.0\"");
        expect_error(ARCHS "\"gpus\": [{\"name\": \"X\", \"device_ids\": [\"2330\"], \"arch\": \"pascal\", \"cc\": \"6.0\", "
                           "\"form\": \"sxm\"}]}",
                     "GPU X: unknown architecture \"pascal\"");
        expect_error(ARCHS "\"gpus\": [{\"name\": \"X\", \"device_ids\": [\"23g0\"], \"arch\": \"hopper\", \"cc\": \"9.0\", "
                           "\"form\": \"sxm\"}]}",
                     "GPU X: device id 0 is not a 4-digit hex string");
        expect_error("{\"schema\": \"gpuvet.gpus/2\", \"architectures\": [], \"gpus\": []}",
                     "\"schema\" must be \"gpuvet.gpus/1\"");
        expect_error(ARCHS "\"gpus\": [\n{\"name\": \"X\",,}]}", "line 3: string or '}' expected near ','");
}

static void test_load_override(void **state) {
        (void)state;
        write_table(ARCHS "\"gpus\": [{\"name\": \"Test GPU\", \"device_ids\": [\"abcd\"], \"arch\": \"hopper\", "
                          "\"cc\": \"9.0\", \"form\": \"pcie\", \"memory_gb\": 80}]}");
        struct gpudb *db = NULL;
        char err[512] = "";
        assert_int_equal(gpudb_load(dir, &db, err, sizeof(err)), 0);
        assert_int_equal(db->n_models, 1);
        assert_string_equal(gpudb_find(db, 0x10de, 0xabcd)->name, "Test GPU");
        assert_null(gpudb_find(db, 0x10de, 0x2330));
        gpudb_free(db);
}

/* The compiled-in Xid table is parsed on first use; a --data-dir xid.json at load, so a
 * bad one is refused at once. */
static void test_xid_table(void **state) {
        (void)state;
        struct gpudb *db = builtin();
        assert_false(db->xids_loaded);
        const struct xiddb *x = gpudb_xids(db);
        assert_true(db->xids_loaded);
        assert_non_null(xiddb_find(x, 79));
        assert_ptr_equal(gpudb_xids(db), x);
        gpudb_free(db);
        assert_null(gpudb_xids(NULL));

        write_table(ARCHS "\"gpus\": []}");
        tree_put(dir, "xid.json", "{\"schema\": \"gpuvet.xid/1\", \"xids\": [{\"code\": 79, \"name\": \"gone\", "
                                  "\"severity\": \"critical\", \"action\": \"reboot\"}]}");
        char err[512] = "";
        assert_int_equal(gpudb_load(dir, &db, err, sizeof(err)), 0);
        assert_true(db->xids_loaded);
        assert_string_equal(xiddb_find(gpudb_xids(db), 79)->name, "gone");
        assert_null(xiddb_find(gpudb_xids(db), 13));
        gpudb_free(db);

        tree_put(dir, "xid.json", "{\"schema\": \"gpuvet.xid/1\", \"xids\": [,]}");
        db = NULL;
        assert_int_equal(gpudb_load(dir, &db, err, sizeof(err)), -EINVAL);
        assert_null(db);
        assert_non_null(strstr(err, "xid.json"));
}

/* The NIC table, likewise: compiled in and parsed on first use, or DIR/nics.json at load;
 * each refusal names the file and what is wrong. */
static void test_nic_table(void **state) {
        (void)state;
        struct gpudb *db = builtin();
        assert_false(db->nics_loaded);
        const struct nicdb *n = gpudb_nics(db);
        assert_true(db->nics_loaded);
        const struct nic_model *cx7 = nicdb_find(n, 0x15b3, 0x1021);
        assert_non_null(cx7);
        assert_string_equal(cx7->name, "ConnectX-7");
        assert_true(cx7->max_port_gbps == 400);
        assert_null(nicdb_find(n, 0x10de, 0x1021)); /* another vendor's id */
        assert_ptr_equal(gpudb_nics(db), n);
        gpudb_free(db);
        assert_null(gpudb_nics(NULL));

        write_table(ARCHS "\"gpus\": []}");
        tree_put(dir, "nics.json", "{\"schema\": \"gpuvet.nics/1\", \"nics\": [{\"name\": \"Test NIC\", "
                                   "\"vendor\": \"15b3\", \"device_ids\": [\"1021\", \"beef\"], \"max_port_gbps\": 100}]}");
        char err[512] = "";
        assert_int_equal(gpudb_load(dir, &db, err, sizeof(err)), 0);
        assert_true(db->nics_loaded);
        assert_string_equal(nicdb_find(gpudb_nics(db), 0x15b3, 0xbeef)->name, "Test NIC");
        assert_true(nicdb_find(gpudb_nics(db), 0x15b3, 0x1021)->max_port_gbps == 100);
        gpudb_free(db);

        static const struct {
                const char *json, *words;
        } bad[] = {
                {"{\"schema\": \"gpuvet.nics/9\", \"nics\": []}", "\"schema\" must be \"gpuvet.nics/1\""},
                {"{\"schema\": \"gpuvet.nics/1\", \"nics\": [{\"name\": \"A\", \"vendor\": \"15B3\", "
                 "\"device_ids\": [\"1021\"], \"max_port_gbps\": 1}]}",
                 "NIC 0 needs a string \"name\" and a \"vendor\" of four hex digits"},
                {"{\"schema\": \"gpuvet.nics/1\", \"nics\": [{\"name\": \"A\", \"vendor\": \"15b3\", "
                 "\"device_ids\": [\"1021\"], \"max_port_gbps\": 0}]}",
                 "NIC A: \"max_port_gbps\" must be a number above 0"},
                {"{\"schema\": \"gpuvet.nics/1\", \"nics\": [{\"name\": \"A\", \"vendor\": \"15b3\", "
                 "\"device_ids\": [\"1021\"], \"max_port_gbps\": 1}, {\"name\": \"B\", \"vendor\": \"15b3\", "
                 "\"device_ids\": [\"1021\"], \"max_port_gbps\": 2}]}",
                 "device 15b3:1021 is listed for both A and B"},
                {"{\"schema\": \"gpuvet.nics/1\", \"nics\": [{\"name\": \"A\", \"vendor\": \"15b3\", "
                 "\"device_ids\": [\"10210\"], \"max_port_gbps\": 1}]}",
                 "NIC A: device id 0 must be four lowercase hex digits"},
                {"{\"schema\": \"gpuvet.nics/1\", \"nics\": [,]}", "nics.json: line 1"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                tree_put(dir, "nics.json", bad[i].json);
                db = NULL;
                err[0] = '\0';
                assert_int_equal(gpudb_load(dir, &db, err, sizeof(err)), -EINVAL);
                assert_null(db);
                if (!strstr(err, "nics.json") || !strstr(err, bad[i].words))
                        fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err, bad[i].words);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_lookups),
                cmocka_unit_test(test_table_consistent),
                cmocka_unit_test_setup_teardown(test_load_errors, make_dir, remove_dir),
                cmocka_unit_test_setup_teardown(test_load_override, make_dir, remove_dir),
                cmocka_unit_test_setup_teardown(test_xid_table, make_dir, remove_dir),
                cmocka_unit_test_setup_teardown(test_nic_table, make_dir, remove_dir),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

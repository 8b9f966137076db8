/* gpu.cuda_driver (src/checks/gpu/cuda_driver.c) on hand-built facts, for the cases a fake
 * libcuda cannot play end to end (a slow cuInit, a GPU in MIG mode), and the probe's
 * parsing of library file names (src/bindings/cuda_probe.c). The probe itself runs for real
 * against the fake libcuda in tests/golden/test_cuda_driver.py. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "checks/check.h"

#define N_GPUS 2

struct node {
        struct facts f;
        struct pci_dev devs[N_GPUS];
        struct gpu gpus[N_GPUS];
        struct nvml_gpu ngpus[N_GPUS];
        struct report rep;
};

/* Two GPUs on the nvidia driver 570.86.10, and a probe that found libcuda of the same
 * version, cuInit fine in 120 ms, two devices. */
static void node_init(struct node *n) {
        memset(n, 0, sizeof(*n));
        for (int i = 0; i < N_GPUS; i++) {
                struct pci_dev *d = &n->devs[i];
                snprintf(d->addr, sizeof(d->addr), "0000:%02x:00.0", 0x1b + 0x10 * i);
                d->have_ids = true;
                d->vendor = 0x10de;
                d->device = 0x2330;
                d->class_code = 0x030200;
                snprintf(d->driver, sizeof(d->driver), "nvidia");
                n->gpus[i].pci_index = (size_t)i;
                n->ngpus[i].index = (unsigned)i;
        }
        n->f.pci.devs = n->devs;
        n->f.pci.n = N_GPUS;
        n->f.gpus.gpus = n->gpus;
        n->f.gpus.n = N_GPUS;
        n->f.nvidia.module_loaded = true;
        n->f.nvidia.have_version = true;
        snprintf(n->f.nvidia.driver_version, sizeof(n->f.nvidia.driver_version), "570.86.10");
        n->f.nvml.gpus = n->ngpus;
        n->f.nvml.n_gpus = N_GPUS;
        struct cuda_driver_facts *x = &n->f.cuda_driver;
        x->state = CUDA_DRIVER_OK;
        x->stage = CUDA_STAGE_DONE;
        snprintf(x->lib_name, sizeof(x->lib_name), "libcuda.so.1");
        snprintf(x->lib_path, sizeof(x->lib_path), "/usr/lib/x86_64-linux-gnu/libcuda.so.570.86.10");
        snprintf(x->lib_version, sizeof(x->lib_version), "570.86.10");
        x->api_version = 12080;
        x->init_ms = 120;
        x->device_count = N_GPUS;
        x->timeout_ms = 20000;
        report_init(&n->rep);
}

static const struct result *run(struct node *n) {
        const struct check_info *c = check_find("gpu.cuda_driver");
        assert_non_null(c);
        report_done(&n->rep);
        report_init(&n->rep);
        c->run(c, &n->f, &n->rep);
        assert_int_equal(n->rep.n_results, 1);
        return &n->rep.results[0];
}

static const char *evidence(const struct result *r, const char *key) {
        for (size_t i = 0; i < r->n_evidence; i++)
                if (strcmp(r->evidence[i].key, key) == 0)
                        return r->evidence[i].value;
        return NULL;
}

static void test_healthy(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        const struct result *r = run(&n);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->summary, "CUDA initialises and counts 2 devices");
        assert_string_equal(r->observed, "cuInit succeeded in 120 ms; 2 CUDA devices");
        assert_string_equal(evidence(r, "cuda_driver_api"), "12.8");
        assert_string_equal(evidence(r, "library_version"), "570.86.10");
        assert_string_equal(evidence(r, "kernel_module_version"), "570.86.10");
        report_done(&n.rep);
}

static void test_slow_init(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        n.f.cuda_driver.init_ms = 7400;
        const struct result *r = run(&n);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->summary, "cuInit took 7400 ms: every CUDA program on this node starts that slowly");
        assert_non_null(strstr(r->remedy, "nvidia-persistenced"));
        report_done(&n.rep);
}

static void test_missing_device(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        n.f.cuda_driver.device_count = 1;
        const struct result *r = run(&n);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->summary, "CUDA sees 1 of the 2 GPUs the nvidia driver holds");
        report_done(&n.rep);
}

/* With MIG on, CUDA counts MIG devices, not GPUs: the count says nothing. */
static void test_mig_count_not_judged(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        n.f.cuda_driver.device_count = 1;
        n.ngpus[1].mig_mode_current = (struct nv_u32){NV_OK, 0, "nvmlDeviceGetMigMode", 1};
        const struct result *r = run(&n);
        assert_int_equal(r->status, STATUS_PASS);
        report_done(&n.rep);
}

static void test_mismatch_names_both_versions(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct cuda_driver_facts *x = &n.f.cuda_driver;
        x->state = CUDA_DRIVER_INIT_FAILED;
        x->init_rc = 803;
        x->device_count = -1;
        snprintf(x->lib_version, sizeof(x->lib_version), "580.95.05");
        const struct result *r = run(&n);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->summary, "CUDA cannot initialise: cuInit returned CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803): "
                                        "libcuda 580.95.05 and the kernel module 570.86.10 are different driver versions");
        assert_null(evidence(r, "cuda_devices"));
        report_done(&n.rep);
}

/* A code outside our table is named by the driver's own cuGetErrorName. */
static void test_unlisted_code_uses_driver_name(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct cuda_driver_facts *x = &n.f.cuda_driver;
        x->state = CUDA_DRIVER_INIT_FAILED;
        x->init_rc = 916;
        snprintf(x->init_rc_name, sizeof(x->init_rc_name), "CUDA_ERROR_EXTERNAL_DEVICE");
        const struct result *r = run(&n);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->summary, "CUDA cannot initialise: cuInit returned CUDA_ERROR_EXTERNAL_DEVICE (916)");
        report_done(&n.rep);
}

static void test_vfio_only_skips(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        for (int i = 0; i < N_GPUS; i++)
                snprintf(n.devs[i].driver, sizeof(n.devs[i].driver), "vfio-pci");
        const struct result *r = run(&n);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "no GPU is bound to the nvidia driver");
        report_done(&n.rep);
}

static void test_version_from_name(void **state) {
        (void)state;
        char v[32];
        assert_true(cuda_driver_version_from_name("/usr/lib64/libcuda.so.570.86.10", v, sizeof(v)));
        assert_string_equal(v, "570.86.10");
        assert_true(cuda_driver_version_from_name("libcuda.so.418.87", v, sizeof(v)));
        assert_string_equal(v, "418.87");
        assert_false(cuda_driver_version_from_name("/usr/lib64/libcuda.so.1", v, sizeof(v)));
        assert_string_equal(v, "");
        assert_false(cuda_driver_version_from_name("/usr/local/cuda/lib64/stubs/libcuda.so", v, sizeof(v)));
        assert_false(cuda_driver_version_from_name("/opt/libcudart.so.12.8.90", v, sizeof(v)));
        assert_false(cuda_driver_version_from_name("libcuda.so.570..", v, sizeof(v)));
        assert_false(cuda_driver_version_from_name("libcuda.so.570.86.10-custom", v, sizeof(v)));
        char tiny[6];
        assert_false(cuda_driver_version_from_name("libcuda.so.570.86.10", tiny, sizeof(tiny)));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_healthy),
                cmocka_unit_test(test_slow_init),
                cmocka_unit_test(test_missing_device),
                cmocka_unit_test(test_mig_count_not_judged),
                cmocka_unit_test(test_mismatch_names_both_versions),
                cmocka_unit_test(test_unlisted_code_uses_driver_name),
                cmocka_unit_test(test_vfio_only_skips),
                cmocka_unit_test(test_version_from_name),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

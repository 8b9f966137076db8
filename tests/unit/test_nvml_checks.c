/* The NVML checks (src/checks/gpu/) on hand-built facts: one healthy H100 SXM as sysfs
 * and NVML see it, then each fault and each way a reading can lack a value (not
 * supported, no function, an NVML error, a timeout, GPU lost), asserting the exact status,
 * observed and expected of the result. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "bindings/nvml.h"
#include "data/gpudb.h"

#define ADDR "0000:1b:00.0"
#define DESC "NVIDIA H100 80GB HBM3"
#define DESC_PCIE "NVIDIA H100 PCIe"

struct node {
        struct facts f;
        struct pci_dev devs[2];
        struct gpu gpus[2];
        struct nvml_gpu ngpus[2];
        struct gpudb *db;
        struct report rep;
};

static void ok32(struct nv_u32 *r, unsigned int v, const char *fn) { *r = (struct nv_u32){NV_OK, 0, fn, v}; }
static void ok64(struct nv_u64 *r, unsigned long long v, const char *fn) { *r = (struct nv_u64){NV_OK, 0, fn, v}; }
static void okstr(struct nv_str *r, const char *v, const char *fn) {
        r->state = NV_OK;
        r->rc = 0;
        r->fn = fn;
        snprintf(r->v, sizeof(r->v), "%s", v);
}
static void err32(struct nv_u32 *r, unsigned char state, int rc, const char *fn) {
        *r = (struct nv_u32){state, rc, fn, 0};
}

static void healthy_gpu(struct nvml_gpu *g, unsigned int index, const char *addr) {
        memset(g, 0, sizeof(*g));
        g->index = index;
        okstr(&g->name, "NVIDIA H100 80GB HBM3", "nvmlDeviceGetName");
        okstr(&g->pci_bus_id, addr, "nvmlDeviceGetPciInfo_v3");
        ok32(&g->pci_device_id, 0x233010de, "nvmlDeviceGetPciInfo_v3");
        ok32(&g->persistence_mode, 1, "nvmlDeviceGetPersistenceMode");
        ok32(&g->ecc_mode_current, 1, "nvmlDeviceGetEccMode");
        ok32(&g->ecc_mode_pending, 1, "nvmlDeviceGetEccMode");
        ok64(&g->ecc_volatile_corrected, 0, "nvmlDeviceGetTotalEccErrors");
        ok64(&g->ecc_volatile_uncorrected, 0, "nvmlDeviceGetTotalEccErrors");
        ok64(&g->ecc_aggregate_corrected, 3, "nvmlDeviceGetTotalEccErrors");
        ok64(&g->ecc_aggregate_uncorrected, 0, "nvmlDeviceGetTotalEccErrors");
        err32(&g->retired_pages_sbe, NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetRetiredPages");
        err32(&g->retired_pages_dbe, NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetRetiredPages");
        err32(&g->retired_pages_pending, NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetRetiredPagesPendingStatus");
        ok32(&g->remap_corrected, 0, "nvmlDeviceGetRemappedRows");
        ok32(&g->remap_uncorrected, 0, "nvmlDeviceGetRemappedRows");
        ok32(&g->remap_pending, 0, "nvmlDeviceGetRemappedRows");
        ok32(&g->remap_failure, 0, "nvmlDeviceGetRemappedRows");
        ok32(&g->temp_c, 41, "nvmlDeviceGetTemperature");
        ok32(&g->temp_slowdown_c, 89, "nvmlDeviceGetTemperatureThreshold");
        ok32(&g->temp_shutdown_c, 92, "nvmlDeviceGetTemperatureThreshold");
        ok64(&g->clocks_event_reasons, 0x1, "nvmlDeviceGetCurrentClocksEventReasons");
        ok32(&g->pcie_gen, 5, "nvmlDeviceGetCurrPcieLinkGeneration");
        ok32(&g->pcie_width, 16, "nvmlDeviceGetCurrPcieLinkWidth");
        ok32(&g->pcie_max_gen, 5, "nvmlDeviceGetMaxPcieLinkGeneration");
        ok32(&g->pcie_max_width, 16, "nvmlDeviceGetMaxPcieLinkWidth");
        ok32(&g->pcie_replay, 0, "nvmlDeviceGetPcieReplayCounter");
        g->nvlink_count = 18;
        for (unsigned int l = 0; l < 18; l++) {
                ok32(&g->nvlink[l].state, 1, "nvmlDeviceGetNvLinkState");
                for (int c = 0; c < NVML_NVL_COUNTER_COUNT; c++)
                        ok64(&g->nvlink[l].errors[c], 0, "nvmlDeviceGetNvLinkErrorCounter");
        }
        err32(&g->nvlink_end, NV_ERROR, NVML_ERROR_INVALID_ARGUMENT, "nvmlDeviceGetNvLinkState");
        ok32(&g->fabric_state, NVML_GPU_FABRIC_STATE_COMPLETED, "nvmlDeviceGetGpuFabricInfo");
        ok32(&g->fabric_status, NVML_SUCCESS, "nvmlDeviceGetGpuFabricInfo");
        ok32(&g->power_limit_mw, 700000, "nvmlDeviceGetPowerManagementLimit");
        ok32(&g->power_enforced_limit_mw, 700000, "nvmlDeviceGetEnforcedPowerLimit");
        ok32(&g->power_default_limit_mw, 700000, "nvmlDeviceGetPowerManagementDefaultLimit");
        ok32(&g->power_min_limit_mw, 200000, "nvmlDeviceGetPowerManagementLimitConstraints");
        ok32(&g->power_max_limit_mw, 700000, "nvmlDeviceGetPowerManagementLimitConstraints");
        ok32(&g->clock_app_mhz[NVML_CLK_GRAPHICS], 1755, "nvmlDeviceGetApplicationsClock");
        ok32(&g->clock_app_mhz[NVML_CLK_MEM], 2619, "nvmlDeviceGetApplicationsClock");
        ok32(&g->clock_default_app_mhz[NVML_CLK_GRAPHICS], 1755, "nvmlDeviceGetDefaultApplicationsClock");
        ok32(&g->clock_default_app_mhz[NVML_CLK_MEM], 2619, "nvmlDeviceGetDefaultApplicationsClock");
        ok32(&g->mig_mode_current, 0, "nvmlDeviceGetMigMode");
        ok32(&g->mig_mode_pending, 0, "nvmlDeviceGetMigMode");
        ok32(&g->mig_max_devices, 7, "nvmlDeviceGetMaxMigDeviceCount");
}

/* One H100 SXM at ADDR bound to nvidia, NVML initialised and seeing it healthy. */
static void node_init(struct node *n) {
        memset(n, 0, sizeof(*n));
        char err[256];
        assert_int_equal(gpudb_load(NULL, &n->db, err, sizeof(err)), 0);
        n->f.db = n->db;
        struct pci_dev *d = &n->devs[0];
        snprintf(d->addr, sizeof(d->addr), "%s", ADDR);
        snprintf(d->sysfs_path, sizeof(d->sysfs_path), "/sys/devices/pci0000:00/%s", ADDR);
        d->have_ids = true;
        d->vendor = 0x10de;
        d->device = 0x2330;
        d->class_code = 0x030200;
        snprintf(d->driver, sizeof(d->driver), "nvidia");
        n->gpus[0].pci_index = 0;
        n->gpus[0].model = gpudb_find(n->db, 0x10de, 0x2330);
        n->f.pci.devs = n->devs;
        n->f.pci.n = 1;
        n->f.gpus.gpus = n->gpus;
        n->f.gpus.n = 1;
        n->f.nvidia.module_loaded = true;
        n->f.nvidia.have_version = true;
        snprintf(n->f.nvidia.driver_version, sizeof(n->f.nvidia.driver_version), "550.54.15");

        struct nvml_facts *x = &n->f.nvml;
        x->init_state = NVML_INIT_OK;
        x->initialized = true;
        okstr(&x->driver_version, "550.54.15", "nvmlSystemGetDriverVersion");
        okstr(&x->nvml_version, "12.550.54.15", "nvmlSystemGetNVMLVersion");
        snprintf(x->cuda_driver_version_str, sizeof(x->cuda_driver_version_str), "12.4");
        ok32(&x->device_count, 1, "nvmlDeviceGetCount_v2");
        healthy_gpu(&n->ngpus[0], 0, ADDR);
        x->gpus = n->ngpus;
        x->n_gpus = 1;
        snprintf(n->f.nvml_lib_path, sizeof(n->f.nvml_lib_path), "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.15");
        report_init(&n->rep);
}

static void node_done(struct node *n) {
        report_done(&n->rep);
        gpudb_free(n->db);
}

static const struct result *run_id(struct node *n, const char *id, size_t k) {
        const struct check_info *c = check_find(id);
        assert_non_null(c);
        report_done(&n->rep);
        report_init(&n->rep);
        c->run(c, &n->f, &n->rep);
        assert_true(n->rep.n_results > k);
        return &n->rep.results[k];
}
#define run(n, id) run_id((n), (id), 0)

static const char *evidence(const struct result *r, const char *key) {
        for (size_t i = 0; i < r->n_evidence; i++)
                if (strcmp(r->evidence[i].key, key) == 0)
                        return r->evidence[i].value;
        return NULL;
}

static void expect_str(const char *got, const char *want, const char *what) {
        if (!want) {
                if (got)
                        fail_msg("%s: want unset, got \"%s\"", what, got);
                return;
        }
        if (!got || strcmp(got, want) != 0)
                fail_msg("%s: want \"%s\", got \"%s\"", what, want, got ? got : "(unset)");
}

/* Exact status, summary, observed and expected (NULL: unset). */
static void expect(const struct result *r, enum status s, const char *summary, const char *observed,
                   const char *expected) {
        if (r->status != s)
                fail_msg("status: want %s, got %s (%s)", status_name(s), status_name(r->status),
                         r->summary ? r->summary : "");
        expect_str(r->summary, summary, "summary");
        expect_str(r->observed, observed, "observed");
        expect_str(r->expected, expected, "expected");
}

static const char *const nvml_checks[] = {
        "gpu.nvml",          "gpu.driver_compat", "gpu.persistence_mode", "gpu.ecc_mode",    "gpu.ecc_errors",
        "gpu.memory_health", "gpu.temperature",   "gpu.clock_events",     "gpu.pcie_nvml",   "gpu.nvlink",
        "gpu.power_limit",   "gpu.app_clocks",    "gpu.mig",
};
#define N_CHECKS (sizeof(nvml_checks) / sizeof(nvml_checks[0]))

static void test_healthy(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        for (size_t i = 0; i < N_CHECKS; i++) {
                const struct result *r = run(&n, nvml_checks[i]);
                if (r->status != STATUS_PASS)
                        fail_msg("%s: %s: %s", nvml_checks[i], status_name(r->status), r->summary);
                assert_non_null(evidence(r, "source"));
                assert_non_null(r->observed);
                assert_non_null(r->expected);
        }
        expect(run(&n, "gpu.nvml"), STATUS_PASS, "NVML sees all 1 GPU (driver 550.54.15, CUDA 12.4)",
               "NVML 12.550.54.15 sees 1 of the 1 GPUs bound to nvidia (device count 1)",
               "NVML initialises and sees the 1 GPU bound to nvidia");
        expect(run(&n, "gpu.temperature"), STATUS_PASS, "41 C, 48 C below the slowdown threshold", "41 C",
               "below 84 C (slowdown 89 C, margin 5 C)");
        const struct result *r = run(&n, "gpu.ecc_errors");
        expect(r, STATUS_PASS, "no uncorrectable ECC errors (0 corrected)", "volatile: 0 uncorrected, 0 corrected",
               "0 uncorrected and < 100 corrected volatile ECC errors");
        expect_str(evidence(r, "aggregate"), "0 uncorrected, 3 corrected (lifetime)", "aggregate");
        expect_str(evidence(r, "source"), "nvmlDeviceGetTotalEccErrors", "source");
        expect(run(&n, "gpu.power_limit"), STATUS_PASS, "power limit 700 W (default 700 W)",
               "700 W (min 200 W, default 700 W, max 700 W)", ">= 700 W (the default limit)");
        expect(run(&n, "gpu.nvlink"), STATUS_PASS, "all 18 NVLinks active, no errors", "18 of 18 links active",
               "18 NVLinks active, no errors");
        node_done(&n);
}

/* Each way a reading can lack a value, on one check (ecc_mode) and one GPU. */
static void test_reading_states(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct nvml_gpu *g = &n.ngpus[0];

        err32(&g->ecc_mode_current, NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetEccMode");
        const struct result *r = run(&n, "gpu.ecc_mode");
        expect(r, STATUS_SKIP, "ECC mode: not supported on this GPU/driver (nvmlDeviceGetEccMode)",
               "unknown: nvmlDeviceGetEccMode returned NVML_ERROR_NOT_SUPPORTED", "ECC enabled (a datacenter GPU)");
        expect_str(evidence(r, "source"), "nvmlDeviceGetEccMode", "source");

        err32(&g->ecc_mode_current, NV_NO_FUNCTION, NVML_ERROR_FUNCTION_NOT_FOUND, "nvmlDeviceGetEccMode");
        expect(run(&n, "gpu.ecc_mode"), STATUS_SKIP,
               "ECC mode: not supported on this GPU/driver (libnvidia-ml lacks nvmlDeviceGetEccMode)",
               "unknown: libnvidia-ml has no nvmlDeviceGetEccMode", "ECC enabled (a datacenter GPU)");

        err32(&g->ecc_mode_current, NV_ERROR, NVML_ERROR_UNKNOWN, "nvmlDeviceGetEccMode");
        r = run(&n, "gpu.ecc_mode");
        expect(r, STATUS_ERROR, "ECC mode of " DESC ": nvmlDeviceGetEccMode failed with NVML_ERROR_UNKNOWN",
               "unknown: nvmlDeviceGetEccMode returned NVML_ERROR_UNKNOWN", "ECC enabled (a datacenter GPU)");
        assert_non_null(r->remedy);

        err32(&g->ecc_mode_current, NV_ERROR, NVML_ERROR_GPU_IS_LOST, "nvmlDeviceGetEccMode");
        r = run(&n, "gpu.ecc_mode");
        /* One cause, one failure: gpu.nvml fails for the lost GPU; this check says why it
         * could not judge. */
        expect(r, STATUS_SKIP,
               "GPU lost: " DESC " has fallen off the bus (nvmlDeviceGetEccMode returned NVML_ERROR_GPU_IS_LOST; see "
               "gpu.nvml)",
               "unknown: nvmlDeviceGetEccMode returned NVML_ERROR_GPU_IS_LOST", "ECC enabled (a datacenter GPU)");
        assert_null(r->remedy);
        r = run(&n, "gpu.nvml");
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->summary, "1 GPU has fallen off the bus: 0000:1b:00.0 (nvmlDeviceGetEccMode)");
        assert_non_null(strstr(r->remedy, "Xid 79"));

        /* A call that hung: this fact and the ones read after it name the hung function. */
        g->timed_out = true;
        g->timeout_fn = "nvmlDeviceGetPowerUsage";
        g->timeout_ms = 2000;
        err32(&g->ecc_mode_current, NV_TIMEOUT, NVML_ERROR_TIMEOUT, "nvmlDeviceGetPowerUsage");
        r = run(&n, "gpu.ecc_mode");
        expect(r, STATUS_ERROR,
               "nvmlDeviceGetPowerUsage did not return within 2000 ms on " DESC ": ECC mode unknown",
               "unknown: nvmlDeviceGetPowerUsage did not return", "ECC enabled (a datacenter GPU)");
        expect_str(evidence(r, "source"), "nvmlDeviceGetPowerUsage", "source");
        expect_str(evidence(r, "nvml_return"), "timeout after 2000 ms", "nvml_return");
        node_done(&n);
}

/* The same states reach every per-GPU check: a lost GPU fails each one. */
static void test_lost_everywhere(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct nvml_gpu *g = &n.ngpus[0];
        /* As the collector leaves a lost GPU: the readings each check starts from answer
         * GPU_IS_LOST. */
#define LOST(field) err32(&g->field, NV_ERROR, NVML_ERROR_GPU_IS_LOST, "nvmlDeviceGetX")
        LOST(persistence_mode);
        LOST(ecc_mode_current);
        LOST(remap_pending);
        LOST(temp_c);
        LOST(pcie_width);
        LOST(power_enforced_limit_mw);
        LOST(power_limit_mw);
        LOST(clock_app_mhz[NVML_CLK_GRAPHICS]);
        LOST(mig_mode_current);
        LOST(nvlink[0].state);
        g->ecc_volatile_uncorrected = (struct nv_u64){NV_ERROR, NVML_ERROR_GPU_IS_LOST, "nvmlDeviceGetX", 0};
        g->clocks_event_reasons = (struct nv_u64){NV_ERROR, NVML_ERROR_GPU_IS_LOST, "nvmlDeviceGetX", 0};
        /* gpu.nvml fails once for it; every other check skips, pointing there. */
        const struct result *nv = run(&n, "gpu.nvml");
        if (nv->status != STATUS_FAIL || !strstr(nv->summary, "fallen off the bus"))
                fail_msg("gpu.nvml: %s: %s", status_name(nv->status), nv->summary);
        for (size_t i = 2; i < N_CHECKS; i++) {
                const struct result *r = run(&n, nvml_checks[i]);
                if (r->status != STATUS_SKIP || !strstr(r->summary, "GPU lost:") || !strstr(r->summary, "see gpu.nvml"))
                        fail_msg("%s: %s: %s", nvml_checks[i], status_name(r->status), r->summary);
        }
        node_done(&n);
}

static void test_nvml_init_states(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct nvml_facts *x = &n.f.nvml;
        const char *exp = "NVML initialises and sees the 1 GPU bound to nvidia";

        x->init_state = NVML_INIT_NOT_TRIED;
        snprintf(n.f.nvml_note, sizeof(n.f.nvml_note), "--no-nvml");
        expect(run(&n, "gpu.nvml"), STATUS_SKIP, "NVML not asked: --no-nvml", NULL, exp);
        expect(run(&n, "gpu.ecc_errors"), STATUS_SKIP, "NVML not asked: --no-nvml", NULL, NULL);

        x->init_state = NVML_INIT_NO_LIBRARY;
        snprintf(n.f.nvml_note, sizeof(n.f.nvml_note), "libnvidia-ml.so.1: cannot open shared object file");
        const struct result *r = run(&n, "gpu.nvml");
        expect(r, STATUS_FAIL, "libnvidia-ml.so.1 not found: the driver's user-space part is not installed",
               "no libnvidia-ml", exp);
        expect_str(evidence(r, "loader"), "libnvidia-ml.so.1: cannot open shared object file", "loader");
        expect(run(&n, "gpu.temperature"), STATUS_SKIP, "NVML unavailable (no library): gpu.nvml says why", NULL, NULL);

        x->init_state = NVML_INIT_DRIVER_NOT_LOADED;
        expect(run(&n, "gpu.nvml"), STATUS_FAIL,
               "NVML cannot reach the driver: the nvidia kernel module is not loaded",
               "nvmlInit_v2: NVML_ERROR_DRIVER_NOT_LOADED", exp);

        x->init_state = NVML_INIT_VERSION_MISMATCH;
        snprintf(n.f.nvidia.driver_version, sizeof(n.f.nvidia.driver_version), "535.154.05");
        r = run(&n, "gpu.nvml");
        expect(r, STATUS_FAIL, "Driver/library version mismatch: kernel module 535.154.05, libnvidia-ml 550.54.15",
               "kernel module 535.154.05, libnvidia-ml 550.54.15",
               "kernel module and libnvidia-ml of the same version");
        assert_non_null(strstr(r->remedy, "rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && modprobe nvidia"));

        x->init_state = NVML_INIT_NO_PERMISSION;
        expect(run(&n, "gpu.nvml"), STATUS_FAIL,
               "NVML may not open the GPU device files (/dev/nvidiactl, /dev/nvidia*)",
               "nvmlInit_v2: NVML_ERROR_NO_PERMISSION", exp);

        struct nvml_timeout t = {.fn = "nvmlInit_v2", .gpu = -1, .elapsed_ms = 20000};
        x->timeouts = &t;
        x->n_timeouts = 1;
        x->init_state = NVML_INIT_TIMEOUT;
        expect(run(&n, "gpu.nvml"), STATUS_ERROR, "nvmlInit_v2 did not return within 20000 ms",
               "nvmlInit_v2 did not return", exp);
        x->timeouts = NULL;
        x->n_timeouts = 0;

        x->init_state = NVML_INIT_ERROR;
        x->init_rc = NVML_ERROR_UNKNOWN;
        expect(run(&n, "gpu.nvml"), STATUS_FAIL, "NVML failed to initialise: nvmlInit_v2 returned NVML_ERROR_UNKNOWN",
               "nvmlInit_v2: NVML_ERROR_UNKNOWN", exp);

        /* Passthrough: nothing bound to nvidia, nothing for NVML to see. */
        snprintf(n.devs[0].driver, sizeof(n.devs[0].driver), "vfio-pci");
        expect(run(&n, "gpu.nvml"), STATUS_SKIP,
               "every GPU is bound to vfio-pci for passthrough: NVML on this host does not see them", NULL, NULL);
        node_done(&n);
}

static void test_nvml_missing_gpu(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        /* A second GPU on the bus, bound to nvidia, that NVML does not list. */
        n.devs[1] = n.devs[0];
        snprintf(n.devs[1].addr, sizeof(n.devs[1].addr), "0000:43:00.0");
        n.gpus[1] = (struct gpu){.pci_index = 1, .model = n.gpus[0].model};
        n.f.pci.n = 2;
        n.f.gpus.n = 2;
        const struct result *r = run(&n, "gpu.nvml");
        expect(r, STATUS_FAIL, "NVML does not see 1 GPU on the PCI bus: 0000:43:00.0",
               "NVML 12.550.54.15 sees 1 of the 2 GPUs bound to nvidia (device count 1)",
               "NVML initialises and sees the 2 GPUs bound to nvidia");
        expect_str(evidence(r, "missing"), "0000:43:00.0", "missing");

        /* NVML lists it but cannot read its address (fallen off the bus): the results use
         * the one missing address. */
        healthy_gpu(&n.ngpus[1], 1, "");
        err32((struct nv_u32 *)&n.ngpus[1].pci_device_id, NV_ERROR, NVML_ERROR_GPU_IS_LOST, "nvmlDeviceGetPciInfo_v3");
        n.ngpus[1].pci_bus_id.state = NV_ERROR;
        n.ngpus[1].pci_bus_id.rc = NVML_ERROR_GPU_IS_LOST;
        n.ngpus[1].pci_bus_id.fn = "nvmlDeviceGetPciInfo_v3";
        err32(&n.ngpus[1].temp_c, NV_ERROR, NVML_ERROR_GPU_IS_LOST, "nvmlDeviceGetTemperature");
        n.f.nvml.n_gpus = 2;
        ok32(&n.f.nvml.device_count, 2, "nvmlDeviceGetCount_v2");
        r = run(&n, "gpu.nvml");
        expect(r, STATUS_FAIL,
               "NVML does not identify 1 GPU on the PCI bus: 0000:43:00.0; it lists GPU 1 without an address "
               "(nvmlDeviceGetPciInfo_v3: NVML_ERROR_GPU_IS_LOST)",
               "NVML 12.550.54.15 sees 1 of the 2 GPUs bound to nvidia (device count 2)",
               "NVML initialises and sees the 2 GPUs bound to nvidia");
        r = run_id(&n, "gpu.temperature", 1);
        assert_string_equal(r->subject, "0000:43:00.0");
        expect(r, STATUS_SKIP,
               "GPU lost: NVIDIA H100 80GB HBM3 has fallen off the bus (nvmlDeviceGetTemperature returned "
               "NVML_ERROR_GPU_IS_LOST; see gpu.nvml)",
               "unknown: nvmlDeviceGetTemperature returned NVML_ERROR_GPU_IS_LOST",
               "below 84 C (slowdown 89 C, margin 5 C)");
        node_done(&n);
}

static void test_driver_compat(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        okstr(&n.f.nvml.driver_version, "515.65.01", "nvmlSystemGetDriverVersion");
        const struct result *r = run(&n, "gpu.driver_compat");
        expect(r, STATUS_FAIL,
               "driver 515.65.01 is older than 520.61.05, the first to support Hopper (NVIDIA H100 80GB HBM3)",
               "driver 515.65.01", "driver >= 520.61.05 (Hopper)");
        expect_str(evidence(r, "source"), "nvmlSystemGetDriverVersion", "source");
        n.f.nvml.driver_version.state = NV_TIMEOUT;
        n.f.nvml.driver_version.fn = "nvmlSystemGetDriverVersion";
        expect(run(&n, "gpu.driver_compat"), STATUS_ERROR,
               "nvmlSystemGetDriverVersion did not return within 2000 ms on " DESC ": driver version unknown",
               "unknown: nvmlSystemGetDriverVersion did not return", "driver >= 520.61.05 (Hopper)");
        node_done(&n);
}

static void test_persistence_mode(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        ok32(&n.ngpus[0].persistence_mode, 0, "nvmlDeviceGetPersistenceMode");
        const struct result *r = run(&n, "gpu.persistence_mode");
        assert_int_equal(r->status, STATUS_WARN);
        expect_str(r->observed, "disabled", "observed");
        assert_non_null(strstr(r->remedy, "gpuvet tune apply --set gpu.persistence=on"));
        n.f.nvidia.persistenced_running = true;
        n.f.nvidia.persistenced_pid = 2417;
        expect(run(&n, "gpu.persistence_mode"), STATUS_PASS,
               "persistence mode is off but nvidia-persistenced runs (pid 2417) and keeps the GPU initialised",
               "disabled", "persistence mode enabled (or nvidia-persistenced running)");
        node_done(&n);
}

static void test_ecc_mode(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct nvml_gpu *g = &n.ngpus[0];
        ok32(&g->ecc_mode_current, 0, "nvmlDeviceGetEccMode");
        ok32(&g->ecc_mode_pending, 0, "nvmlDeviceGetEccMode");
        expect(run(&n, "gpu.ecc_mode"), STATUS_FAIL,
               "ECC is disabled on " DESC ": memory errors go undetected and corrupt results silently", "disabled",
               "ECC enabled (a datacenter GPU)");
        ok32(&g->ecc_mode_pending, 1, "nvmlDeviceGetEccMode");
        expect(run(&n, "gpu.ecc_mode"), STATUS_WARN,
               "ECC is disabled but enabled is pending: reboot or reset the GPU to apply", "disabled, enabled pending",
               "ECC enabled (a datacenter GPU)");

        /* The driver's word on the board's factory setting wins over gpuvet's table. */
        ok32(&g->ecc_mode_pending, 0, "nvmlDeviceGetEccMode");
        ok32(&g->ecc_mode_default, 0, "nvmlDeviceGetDefaultEccMode");
        expect(run(&n, "gpu.ecc_mode"), STATUS_PASS, "ECC is disabled, as " DESC " ships", "disabled",
               "ECC as configured (the board ships with it off)");
        ok32(&g->ecc_mode_default, 1, "nvmlDeviceGetDefaultEccMode");
        expect(run(&n, "gpu.ecc_mode"), STATUS_FAIL,
               "ECC is disabled on " DESC ": memory errors go undetected and corrupt results silently", "disabled",
               "ECC enabled (the board ships with it on)");
        err32(&g->ecc_mode_default, NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetDefaultEccMode");
        expect(run(&n, "gpu.ecc_mode"), STATUS_FAIL,
               "ECC is disabled on " DESC ": memory errors go undetected and corrupt results silently", "disabled",
               "ECC enabled (a datacenter GPU)");
        err32(&g->ecc_mode_default, NV_ERROR, NVML_ERROR_UNKNOWN, "nvmlDeviceGetDefaultEccMode");
        expect(run(&n, "gpu.ecc_mode"), STATUS_ERROR,
               "default ECC mode of " DESC ": nvmlDeviceGetDefaultEccMode failed with NVML_ERROR_UNKNOWN",
               "unknown: nvmlDeviceGetDefaultEccMode returned NVML_ERROR_UNKNOWN", "ECC enabled (a datacenter GPU)");
        node_done(&n);
}

static void test_ecc_errors(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct nvml_gpu *g = &n.ngpus[0];
        ok64(&g->ecc_volatile_uncorrected, 2, "nvmlDeviceGetTotalEccErrors");
        expect(run(&n, "gpu.ecc_errors"), STATUS_FAIL, "2 uncorrectable ECC errors since the driver loaded on " DESC,
               "volatile: 2 uncorrected, 0 corrected", "0 uncorrected and < 100 corrected volatile ECC errors");
        ok64(&g->ecc_volatile_uncorrected, 0, "nvmlDeviceGetTotalEccErrors");
        /* Lifetime uncorrectable errors with a clean volatile count: judged on their own. */
        ok64(&g->ecc_aggregate_uncorrected, 3, "nvmlDeviceGetTotalEccErrors");
        ok64(&g->ecc_aggregate_corrected, 44, "nvmlDeviceGetTotalEccErrors");
        expect(run(&n, "gpu.ecc_errors"), STATUS_WARN,
               "3 uncorrectable ECC errors in the lifetime of " DESC " (none since the driver loaded)",
               "volatile: 0 uncorrected, 0 corrected", "0 uncorrected and < 100 corrected volatile ECC errors");
        ok64(&g->ecc_aggregate_uncorrected, 0, "nvmlDeviceGetTotalEccErrors");
        expect(run(&n, "gpu.ecc_errors"), STATUS_PASS, "no uncorrectable ECC errors (0 corrected)",
               "volatile: 0 uncorrected, 0 corrected", "0 uncorrected and < 100 corrected volatile ECC errors");
        /* SRAM vs DRAM (nvmlDeviceGetMemoryErrorCounter): the split is named, and an SRAM
         * error's remedy is a reset, not a row remap. */
        const char *mec = "nvmlDeviceGetMemoryErrorCounter";
        ok64(&g->ecc_volatile_uncorrected, 1, "nvmlDeviceGetTotalEccErrors");
        ok64(&g->ecc_volatile_uncorrected_dram, 0, mec);
        ok64(&g->ecc_volatile_uncorrected_sram, 1, mec);
        const struct result *r = run(&n, "gpu.ecc_errors");
        expect(r, STATUS_FAIL, "1 uncorrectable ECC error since the driver loaded on " DESC " (DRAM 0, SRAM 1)",
               "volatile: 1 uncorrected, 0 corrected", "0 uncorrected and < 100 corrected volatile ECC errors");
        assert_non_null(strstr(r->remedy, "not repaired by row remapping"));
        ok64(&g->ecc_volatile_uncorrected_dram, 1, mec);
        ok64(&g->ecc_volatile_uncorrected_sram, 0, mec);
        r = run(&n, "gpu.ecc_errors");
        assert_non_null(strstr(r->summary, "(DRAM 1, SRAM 0)"));
        assert_non_null(strstr(r->remedy, "pending row remap"));
        ok64(&g->ecc_volatile_uncorrected, 0, "nvmlDeviceGetTotalEccErrors");
        ok64(&g->ecc_volatile_uncorrected_dram, 0, mec);
        ok64(&g->ecc_aggregate_uncorrected, 2, "nvmlDeviceGetTotalEccErrors");
        ok64(&g->ecc_aggregate_uncorrected_dram, 0, mec);
        ok64(&g->ecc_aggregate_uncorrected_sram, 2, mec);
        expect(run(&n, "gpu.ecc_errors"), STATUS_WARN,
               "2 uncorrectable ECC errors in the lifetime of " DESC " (DRAM 0, SRAM 2; none since the driver loaded)",
               "volatile: 0 uncorrected, 0 corrected", "0 uncorrected and < 100 corrected volatile ECC errors");
        /* Past NVIDIA's SRAM field threshold: replace, whatever the volatile count. */
        ok32(&g->sram_threshold_exceeded, 1, "nvmlDeviceGetSramEccErrorStatus");
        r = run(&n, "gpu.ecc_errors");
        assert_int_equal(r->status, STATUS_FAIL);
        expect_str(r->summary, "SRAM uncorrectable errors on " DESC " passed NVIDIA's field threshold (\"SRAM Threshold "
                               "Exceeded\")", "summary");
        assert_non_null(strstr(r->remedy, "RMA"));
        ok32(&g->sram_threshold_exceeded, 0, "nvmlDeviceGetSramEccErrorStatus");
        ok64(&g->ecc_aggregate_uncorrected, 0, "nvmlDeviceGetTotalEccErrors");
        ok64(&g->ecc_aggregate_uncorrected_sram, 0, mec);
        ok64(&g->ecc_volatile_corrected, 100, "nvmlDeviceGetTotalEccErrors");
        expect(run(&n, "gpu.ecc_errors"), STATUS_WARN, "100 corrected ECC errors since the driver loaded on " DESC,
               "volatile: 0 uncorrected, 100 corrected", "0 uncorrected and < 100 corrected volatile ECC errors");
        ok32(&g->ecc_mode_current, 0, "nvmlDeviceGetEccMode");
        expect(run(&n, "gpu.ecc_errors"), STATUS_SKIP,
               "ECC is disabled on " DESC ": no error counters (gpu.ecc_mode)", "ECC disabled",
               "0 uncorrected and < 100 corrected volatile ECC errors");
        node_done(&n);
}

static void test_memory_health(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct nvml_gpu *g = &n.ngpus[0];
        /* A pending remap is a failure whether the row was remapped for a correctable or an
         * uncorrectable error: the GPU must be reset before it takes work (DCGM). */
        ok32(&g->remap_corrected, 1, "nvmlDeviceGetRemappedRows");
        ok32(&g->remap_pending, 1, "nvmlDeviceGetRemappedRows");
        expect(run(&n, "gpu.memory_health"), STATUS_FAIL,
               "a row remap is pending on " DESC ": the GPU must be reset before it takes work",
               "rows remapped: 0 for uncorrectable, 1 for correctable errors; pending yes; failure no",
               "no remap failure, none pending");
        ok32(&g->remap_corrected, 0, "nvmlDeviceGetRemappedRows");
        ok32(&g->remap_uncorrected, 1, "nvmlDeviceGetRemappedRows");
        expect(run(&n, "gpu.memory_health"), STATUS_FAIL,
               "a row remap is pending on " DESC ": the GPU must be reset before it takes work",
               "rows remapped: 1 for uncorrectable, 0 for correctable errors; pending yes; failure no",
               "no remap failure, none pending");
        ok32(&g->remap_failure, 1, "nvmlDeviceGetRemappedRows");
        const struct result *r = run(&n, "gpu.memory_health");
        assert_int_equal(r->status, STATUS_FAIL);
        assert_non_null(strstr(r->remedy, "RMA"));

        /* Blackwell's channel and TPC repairs wait for a reset as a remap does. */
        ok32(&g->remap_failure, 0, "nvmlDeviceGetRemappedRows");
        ok32(&g->remap_pending, 0, "nvmlDeviceGetRemappedRows");
        ok32(&g->repair_channel_pending, 1, "nvmlDeviceGetRepairStatus");
        ok32(&g->repair_tpc_pending, 0, "nvmlDeviceGetRepairStatus");
        r = run(&n, "gpu.memory_health");
        expect(r, STATUS_FAIL, "an HBM channel repair is pending on " DESC ": the GPU must be reset to apply it",
               "channel repair pending yes, TPC repair pending no",
               "no channel or TPC repair pending, no remap failure, none pending");
        assert_non_null(strstr(r->remedy, "nvidia-smi -r -i 0"));
        ok32(&g->repair_channel_pending, 0, "nvmlDeviceGetRepairStatus");
        ok32(&g->repair_tpc_pending, 1, "nvmlDeviceGetRepairStatus");
        assert_non_null(strstr(run(&n, "gpu.memory_health")->summary, "a TPC repair is pending on " DESC));
        ok32(&g->repair_tpc_pending, 0, "nvmlDeviceGetRepairStatus");
        r = run(&n, "gpu.memory_health");
        assert_int_equal(r->status, STATUS_PASS);
        expect_str(evidence(r, "repair_status"), "channel repair pending: no; TPC repair pending: no", "repair_status");
        /* A driver or GPU without the call: the remap alone decides. */
        static const int not_offered[] = {NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_DEPRECATED,
                                          NVML_ERROR_FUNCTION_NOT_FOUND, NVML_ERROR_ARGUMENT_VERSION_MISMATCH};
        for (size_t i = 0; i < sizeof(not_offered) / sizeof(not_offered[0]); i++) {
                err32(&g->repair_channel_pending, NV_ERROR, not_offered[i], "nvmlDeviceGetRepairStatus");
                err32(&g->repair_tpc_pending, NV_ERROR, not_offered[i], "nvmlDeviceGetRepairStatus");
                r = run(&n, "gpu.memory_health");
                assert_int_equal(r->status, STATUS_PASS);
                assert_null(evidence(r, "repair_status"));
        }
        err32(&g->repair_channel_pending, NV_NO_FUNCTION, NVML_ERROR_FUNCTION_NOT_FOUND, "nvmlDeviceGetRepairStatus");
        err32(&g->repair_tpc_pending, NV_NO_FUNCTION, NVML_ERROR_FUNCTION_NOT_FOUND, "nvmlDeviceGetRepairStatus");
        assert_int_equal(run(&n, "gpu.memory_health")->status, STATUS_PASS);
        /* A call that hung says the memory's state is unknown, never "healthy". */
        g->timeout_ms = 2000;
        err32(&g->repair_channel_pending, NV_TIMEOUT, NVML_ERROR_TIMEOUT, "nvmlDeviceGetRepairStatus");
        err32(&g->repair_tpc_pending, NV_TIMEOUT, NVML_ERROR_TIMEOUT, "nvmlDeviceGetRepairStatus");
        r = run(&n, "gpu.memory_health");
        assert_int_equal(r->status, STATUS_ERROR);
        assert_non_null(strstr(r->summary, "nvmlDeviceGetRepairStatus"));
        g->repair_channel_pending = (struct nv_u32){0};
        g->repair_tpc_pending = (struct nv_u32){0};

        /* Pre-Ampere: page retirement. */
        err32(&g->remap_pending, NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetRemappedRows");
        ok32(&g->retired_pages_sbe, 2, "nvmlDeviceGetRetiredPages");
        ok32(&g->retired_pages_dbe, 1, "nvmlDeviceGetRetiredPages");
        ok32(&g->retired_pages_pending, 1, "nvmlDeviceGetRetiredPagesPendingStatus");
        expect(run(&n, "gpu.memory_health"), STATUS_FAIL,
               "a page retirement is pending on " DESC ": the GPU must be reset before it takes work",
               "retired pages: 1 double-bit, 2 single-bit; pending yes",
               "no retirement pending, fewer than 15 of 64 pages retired");
        ok32(&g->retired_pages_pending, 0, "nvmlDeviceGetRetiredPagesPendingStatus");
        /* DCGM's limits: 63 in total fails, 15 (its soft limit) warns. */
        ok32(&g->retired_pages_dbe, 61, "nvmlDeviceGetRetiredPages");
        expect(run(&n, "gpu.memory_health"), STATUS_FAIL,
               "63 of at most 64 pages retired on " DESC ": the retirement table is full",
               "retired pages: 61 double-bit, 2 single-bit; pending no",
               "no retirement pending, fewer than 15 of 64 pages retired");
        ok32(&g->retired_pages_dbe, 60, "nvmlDeviceGetRetiredPages");
        expect(run(&n, "gpu.memory_health"), STATUS_WARN,
               "62 of at most 64 pages retired on " DESC ": the memory is wearing out",
               "retired pages: 60 double-bit, 2 single-bit; pending no",
               "no retirement pending, fewer than 15 of 64 pages retired");
        ok32(&g->retired_pages_dbe, 13, "nvmlDeviceGetRetiredPages");
        assert_int_equal(run(&n, "gpu.memory_health")->status, STATUS_WARN);
        ok32(&g->retired_pages_dbe, 12, "nvmlDeviceGetRetiredPages");
        assert_int_equal(run(&n, "gpu.memory_health")->status, STATUS_PASS);
        ok32(&g->retired_pages_dbe, 1, "nvmlDeviceGetRetiredPages");
        expect(run(&n, "gpu.memory_health"), STATUS_PASS, "no page retirement pending (3 pages retired)",
               "retired pages: 1 double-bit, 2 single-bit; pending no",
               "no retirement pending, fewer than 15 of 64 pages retired");

        /* Neither mechanism (a consumer GPU). */
        err32(&g->retired_pages_sbe, NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetRetiredPages");
        err32(&g->retired_pages_dbe, NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetRetiredPages");
        expect(run(&n, "gpu.memory_health"), STATUS_SKIP,
               "row remapping and page retirement: not supported on this GPU/driver (nvmlDeviceGetRetiredPages)",
               "unknown: nvmlDeviceGetRetiredPages returned NVML_ERROR_NOT_SUPPORTED",
               "no remap failure, no pending remap or page retirement");
        node_done(&n);
}

static void test_temperature(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct nvml_gpu *g = &n.ngpus[0];
        ok32(&g->temp_c, 84, "nvmlDeviceGetTemperature");
        expect(run(&n, "gpu.temperature"), STATUS_WARN,
               DESC " is at 84 C, within 5 C of its slowdown threshold 89 C", "84 C",
               "below 84 C (slowdown 89 C, margin 5 C)");
        ok32(&g->temp_c, 89, "nvmlDeviceGetTemperature");
        expect(run(&n, "gpu.temperature"), STATUS_FAIL,
               DESC " is at 89 C, at or above its slowdown threshold 89 C: clocks are being cut", "89 C",
               "below 84 C (slowdown 89 C, margin 5 C)");
        err32(&g->temp_slowdown_c, NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetTemperatureThreshold");
        expect(run(&n, "gpu.temperature"), STATUS_SKIP,
               "slowdown temperature: not supported on this GPU/driver (nvmlDeviceGetTemperatureThreshold)",
               "unknown: nvmlDeviceGetTemperatureThreshold returned NVML_ERROR_NOT_SUPPORTED",
               "at least 5 C below the slowdown threshold");

        /* The T.Limit scale, when the GPU reports it, wins over absolute thresholds. */
        struct nv_i32 *m = &g->temp_margin_c;
        ok32(&g->temp_c, 84, "nvmlDeviceGetTemperature");
        *m = (struct nv_i32){NV_OK, 0, "nvmlDeviceGetMarginTemperature", 40};
        g->tlimit_gpu_max_c = (struct nv_i32){NV_OK, 0, "nvmlDeviceGetFieldValues", 0};
        g->tlimit_slowdown_c = (struct nv_i32){NV_OK, 0, "nvmlDeviceGetFieldValues", -2};
        const char *tl_exp = "more than 5 C of margin to T.Limit (clocks drop at 0 C)";
        expect(run(&n, "gpu.temperature"), STATUS_PASS, "40 C of margin to T.Limit", "84 C, T.Limit margin 40 C", tl_exp);
        m->v = 5;
        expect(run(&n, "gpu.temperature"), STATUS_WARN,
               DESC " has only 5 C of margin to its T.Limit (clocks drop at 0 C)", "84 C, T.Limit margin 5 C", tl_exp);
        m->v = -3;
        expect(run(&n, "gpu.temperature"), STATUS_FAIL,
               DESC " has -3 C of margin to its T.Limit, at or past the 0 C where clocks are cut",
               "84 C, T.Limit margin -3 C", tl_exp);
        /* Without the GPU max operating limit, the slowdown one is the limit. */
        g->tlimit_gpu_max_c = (struct nv_i32){NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetFieldValues", 0};
        m->v = -1;
        expect(run(&n, "gpu.temperature"), STATUS_WARN,
               DESC " has only -1 C of margin to its T.Limit (clocks drop at -2 C)", "84 C, T.Limit margin -1 C",
               "more than 5 C of margin to T.Limit (clocks drop at -2 C)");
        /* A margin call that failed is an error, not a quiet fall-back. */
        *m = (struct nv_i32){NV_ERROR, NVML_ERROR_UNKNOWN, "nvmlDeviceGetMarginTemperature", 0};
        expect(run(&n, "gpu.temperature"), STATUS_ERROR,
               "T.Limit margin of " DESC ": nvmlDeviceGetMarginTemperature failed with NVML_ERROR_UNKNOWN",
               "unknown: nvmlDeviceGetMarginTemperature returned NVML_ERROR_UNKNOWN",
               "at least 5 C below the slowdown threshold");
        node_done(&n);
}

static void test_memory_temperature(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct nvml_gpu *g = &n.ngpus[0];
        err32(&g->temp_memory_c, NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetFieldValues");
        expect(run(&n, "gpu.memory_temperature"), STATUS_SKIP,
               "memory temperature: not supported on this GPU/driver (nvmlDeviceGetFieldValues)",
               "unknown: nvmlDeviceGetFieldValues returned NVML_ERROR_NOT_SUPPORTED", NULL);
        ok32(&g->temp_memory_c, 60, "nvmlDeviceGetFieldValues");
        ok32(&g->temp_mem_max_c, 95, "nvmlDeviceGetTemperatureThreshold");
        const char *abs_exp = "below 90 C (memory max 95 C, margin 5 C)";
        expect(run(&n, "gpu.memory_temperature"), STATUS_PASS, "memory 60 C, 35 C below its maximum", "60 C", abs_exp);
        ok32(&g->temp_memory_c, 91, "nvmlDeviceGetFieldValues");
        expect(run(&n, "gpu.memory_temperature"), STATUS_WARN,
               DESC " memory is at 91 C, within 5 C of its maximum 95 C", "91 C", abs_exp);
        ok32(&g->temp_memory_c, 95, "nvmlDeviceGetFieldValues");
        expect(run(&n, "gpu.memory_temperature"), STATUS_FAIL,
               DESC " memory is at 95 C, at or above its maximum 95 C: the driver slows the GPU down", "95 C", abs_exp);
        /* Newer drivers: the memory limit only on the T.Limit scale. */
        err32(&g->temp_mem_max_c, NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetTemperatureThreshold");
        ok32(&g->temp_memory_c, 70, "nvmlDeviceGetFieldValues");
        expect(run(&n, "gpu.memory_temperature"), STATUS_SKIP,
               "memory at 70 C, but NVML reports no memory temperature limit to judge it against", "70 C", NULL);
        g->temp_margin_c = (struct nv_i32){NV_OK, 0, "nvmlDeviceGetMarginTemperature", 3};
        g->tlimit_mem_max_c = (struct nv_i32){NV_OK, 0, "nvmlDeviceGetFieldValues", 0};
        expect(run(&n, "gpu.memory_temperature"), STATUS_WARN,
               DESC " (memory at 70 C) has only 3 C of margin to its nearest thermal limit", "70 C, T.Limit margin 3 C",
               "more than 5 C of margin to the memory limit (0 C on the T.Limit scale)");
        g->temp_margin_c.v = 0;
        expect(run(&n, "gpu.memory_temperature"), STATUS_FAIL,
               DESC " (memory at 70 C) is at or past its memory T.Limit: the driver slows the GPU down",
               "70 C, T.Limit margin 0 C", "more than 5 C of margin to the memory limit (0 C on the T.Limit scale)");
        node_done(&n);
}

static void test_clock_events(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct nvml_gpu *g = &n.ngpus[0];
        const char *exp = "no hardware, thermal or power-brake slowdown";
        ok64(&g->clocks_event_reasons, 0x48, "nvmlDeviceGetCurrentClocksEventReasons");
        expect(run(&n, "gpu.clock_events"), STATUS_FAIL,
               DESC " is slowed down by hardware: HW slowdown, HW thermal slowdown", "HW slowdown, HW thermal slowdown",
               exp);
        ok64(&g->clocks_event_reasons, 0x88, "nvmlDeviceGetCurrentClocksEventReasons");
        expect(run(&n, "gpu.clock_events"), STATUS_FAIL,
               DESC " is slowed down by hardware: HW slowdown, HW power brake slowdown",
               "HW slowdown, HW power brake slowdown", exp);
        ok64(&g->clocks_event_reasons, 0x20, "nvmlDeviceGetCurrentClocksEventReasons");
        expect(run(&n, "gpu.clock_events"), STATUS_WARN,
               DESC " is slowed down by the driver to stay within its thermal limit: SW thermal slowdown",
               "SW thermal slowdown", exp);
        ok64(&g->clocks_event_reasons, 0x6, "nvmlDeviceGetCurrentClocksThrottleReasons");
        const struct result *r = run(&n, "gpu.clock_events");
        expect(r, STATUS_PASS, "no slowdown active (applications clocks setting, SW power cap)",
               "applications clocks setting, SW power cap", exp);
        expect_str(evidence(r, "source"), "nvmlDeviceGetCurrentClocksThrottleReasons", "source");
        ok64(&g->clocks_event_reasons, 0, "nvmlDeviceGetCurrentClocksEventReasons");
        expect(run(&n, "gpu.clock_events"), STATUS_PASS, "no slowdown active", "none", exp);
        node_done(&n);
}

static void test_pcie_nvml(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct nvml_gpu *g = &n.ngpus[0];
        ok32(&g->pcie_width, 8, "nvmlDeviceGetCurrPcieLinkWidth");
        expect(run(&n, "gpu.pcie_nvml"), STATUS_FAIL, "NVML reports the link of " DESC " at x8 of x16", "Gen5 x8, 0 replays",
               "Gen5 x16, at most 8 replays a minute");
        /* In a VM the platform wires the link: a warning without a physical remedy. */
        n.f.virt.is_vm = true;
        const struct result *r = run(&n, "gpu.pcie_nvml");
        expect(r, STATUS_WARN,
               "NVML reports the link of " DESC " at x8 of x16 in this VM: the platform wires it so "
               "(pcie.link_width gives the bandwidth it leaves)",
               "Gen5 x8, 0 replays", "Gen5 x16, at most 8 replays a minute");
        assert_null(strstr(r->remedy, "Reseat"));
        n.f.virt.is_vm = false;
        ok32(&g->pcie_width, 16, "nvmlDeviceGetCurrPcieLinkWidth");
        ok32(&g->pcie_gen, 1, "nvmlDeviceGetCurrPcieLinkGeneration");
        /* Gen1 on an idle GPU is power saving; on a busy one it warns. */
        ok64(&g->clocks_event_reasons, NV_CLOCKS_EVENT_GPU_IDLE, "nvmlDeviceGetCurrentClocksEventReasons");
        r = run(&n, "gpu.pcie_nvml");
        expect(r, STATUS_PASS,
               "link of " DESC " at Gen1 below its maximum Gen5 while the GPU is idle: normal power saving; the "
               "standard level judges it under load",
               "Gen1 x16, 0 replays", "Gen5 x16, at most 8 replays a minute");
        ok64(&g->clocks_event_reasons, 0, "nvmlDeviceGetCurrentClocksEventReasons");
        r = run(&n, "gpu.pcie_nvml");
        assert_int_equal(r->status, STATUS_WARN);
        expect_str(r->observed, "Gen1 x16, 0 replays", "observed");
        assert_non_null(strstr(r->summary, "while the GPU is busy"));
        ok32(&g->pcie_gen, 5, "nvmlDeviceGetCurrPcieLinkGeneration");
        ok32(&g->pcie_replay, 1, "nvmlDeviceGetPcieReplayCounter");
        /* Uptime unknown: a count since the driver loaded is no rate. */
        expect(run(&n, "gpu.pcie_nvml"), STATUS_PASS,
               "link at its maximum Gen5 x16, 1 replay since the driver loaded (uptime unknown: not judged as a "
               "rate; the standard level counts them under load)",
               "Gen5 x16, 1 replay", "Gen5 x16, at most 8 replays a minute");
        /* As a rate (DCGM: 8 a minute): a handful over a year of uptime passes ... */
        n.f.host.uptime_s = 365.0 * 24 * 3600;
        ok32(&g->pcie_replay, 12, "nvmlDeviceGetPcieReplayCounter");
        expect(run(&n, "gpu.pcie_nvml"), STATUS_PASS,
               "link at its maximum Gen5 x16, 12 replays since boot (2.3e-05 a minute, under DCGM's 8)",
               "Gen5 x16, 12 replays", "Gen5 x16, at most 8 replays a minute");
        /* ... a burst in the ten minutes since boot does not. */
        n.f.host.uptime_s = 600;
        ok32(&g->pcie_replay, 500, "nvmlDeviceGetPcieReplayCounter");
        expect(run(&n, "gpu.pcie_nvml"), STATUS_WARN,
               "the PCIe link of " DESC " replayed 500 packets, more than 8 a minute since boot: signal errors on the "
               "link",
               "Gen5 x16, 500 replays", "Gen5 x16, at most 8 replays a minute");
        /* The standard level: under load, 2 more in 30 s pass (4 a minute); 10 more warn. */
        struct nvml_facts after = n.f.nvml;
        struct nvml_gpu ga = *g;
        after.gpus = &ga;
        n.f.nvml_after = &after;
        n.f.nvml_window_s = 30.0;
        ok32(&ga.pcie_replay, 502, "nvmlDeviceGetPcieReplayCounter");
        r = run(&n, "gpu.pcie_nvml");
        expect(r, STATUS_PASS, "link at its maximum Gen5 x16, 2 replays under load (502 since boot)",
               "Gen5 x16, 500 replays", "Gen5 x16, at most 8 replays a minute");
        expect_str(evidence(r, "window"), "2 replays in 30.0 s around the device probes (502 since boot)", "window");
        ok32(&ga.pcie_replay, 510, "nvmlDeviceGetPcieReplayCounter");
        expect(run(&n, "gpu.pcie_nvml"), STATUS_WARN,
               "the PCIe link of " DESC " replayed 10 packets while the probes ran (30 s): 20 a minute, over 8",
               "Gen5 x16, 500 replays", "Gen5 x16, at most 8 replays a minute");
        n.f.nvml_after = NULL;
        n.f.host.uptime_s = 0;
        err32(&g->pcie_replay, NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetPcieReplayCounter");
        r = run(&n, "gpu.pcie_nvml");
        expect(r, STATUS_PASS, "link at its maximum Gen5 x16", "Gen5 x16, replays unknown", "Gen5 x16, at most 8 replays a minute");
        expect_str(evidence(r, "replay_counter"), "NVML_ERROR_NOT_SUPPORTED", "replay_counter");
        node_done(&n);
}

static void test_nvlink(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct nvml_gpu *g = &n.ngpus[0];
        const char *exp = "18 NVLinks active, no errors";
        ok32(&g->nvlink[7].state, 0, "nvmlDeviceGetNvLinkState");
        expect(run(&n, "gpu.nvlink"), STATUS_FAIL, "NVLink 7 of " DESC " is down", "17 of 18 links active, down: 7", exp);
        ok32(&g->nvlink[7].state, 1, "nvmlDeviceGetNvLinkState");
        ok64(&g->nvlink[2].errors[NVML_NVL_CRC_FLIT], 1523, "nvmlDeviceGetNvLinkErrorCounter");
        ok64(&g->nvlink[2].errors[NVML_NVL_REPLAY], 40, "nvmlDeviceGetNvLinkErrorCounter");
        ok64(&g->nvlink[2].errors[NVML_NVL_RECOVERY], 3, "nvmlDeviceGetNvLinkErrorCounter");
        const struct result *r = run(&n, "gpu.nvlink");
        /* No uptime: any error since boot warns. */
        expect(r, STATUS_WARN, "1 NVLink of " DESC " logged errors since boot: 40 replay, 3 recovery, 1523 CRC",
               "18 of 18 links active", exp);
        expect_str(evidence(r, "errors"), "link 2: replay 40, recovery 3, CRC flit 1523", "errors");
        /* Up for 100 days: 43 replays and recoveries (0.018 an hour) and 1523 CRC are history. */
        n.f.host.uptime_s = 100 * 86400.0;
        r = run(&n, "gpu.nvlink");
        assert_int_equal(r->status, STATUS_PASS);
        assert_non_null(strstr(evidence(r, "rates"), "since boot (2400.0 h)"));
        /* Up for 10 hours with 43: 4.3 an hour warns. */
        n.f.host.uptime_s = 36000.0;
        assert_int_equal(run(&n, "gpu.nvlink")->status, STATUS_WARN);
        /* CRC at 100 a second since boot fails (DCGM's CRC limit). */
        ok64(&g->nvlink[2].errors[NVML_NVL_CRC_FLIT], 3600000ull, "nvmlDeviceGetNvLinkErrorCounter");
        r = run(&n, "gpu.nvlink");
        assert_int_equal(r->status, STATUS_FAIL);
        assert_non_null(strstr(r->summary, "CRC errors on " DESC " at 100 a second since boot"));

        /* The standard level: the counters read again after the probes, 20 s later. */
        ok64(&g->nvlink[2].errors[NVML_NVL_CRC_FLIT], 1523, "nvmlDeviceGetNvLinkErrorCounter");
        struct nvml_facts after = n.f.nvml;
        struct nvml_gpu ga = *g;
        after.gpus = &ga;
        n.f.nvml_after = &after;
        n.f.nvml_window_s = 20.0;
        r = run(&n, "gpu.nvlink");
        expect(r, STATUS_PASS, "all 18 NVLinks active, no errors", "18 of 18 links active", exp);
        assert_non_null(strstr(evidence(r, "window"), "20.0 s around the device probes: 0 replay, 0 recovery, 0 CRC"));
        ok64(&ga.nvlink[2].errors[NVML_NVL_CRC_FLIT], 1530, "nvmlDeviceGetNvLinkErrorCounter");
        r = run(&n, "gpu.nvlink");
        assert_int_equal(r->status, STATUS_WARN);
        expect_str(r->summary, "7 NVLink CRC errors on " DESC " while the probes ran (0.35 a second, under DCGM's 100)",
                   "summary");
        ok64(&ga.nvlink[2].errors[NVML_NVL_REPLAY], 41, "nvmlDeviceGetNvLinkErrorCounter");
        r = run(&n, "gpu.nvlink");
        assert_int_equal(r->status, STATUS_FAIL);
        expect_str(r->summary, "NVLink errors on " DESC " while the probes ran (20 s): 1 replay, 0 recovery, 7 CRC "
                               "(0.35 a second)", "summary");
        /* A counter reset between the reads (nvidia-smi nvlink -r) counts from zero. */
        ok64(&ga.nvlink[2].errors[NVML_NVL_REPLAY], 0, "nvmlDeviceGetNvLinkErrorCounter");
        ok64(&ga.nvlink[2].errors[NVML_NVL_CRC_FLIT], 0, "nvmlDeviceGetNvLinkErrorCounter");
        ok64(&ga.nvlink[2].errors[NVML_NVL_RECOVERY], 0, "nvmlDeviceGetNvLinkErrorCounter");
        assert_int_equal(run(&n, "gpu.nvlink")->status, STATUS_PASS);
        n.f.nvml_after = NULL;
        n.f.host.uptime_s = 0;
        ok64(&g->nvlink[2].errors[NVML_NVL_CRC_FLIT], 0, "nvmlDeviceGetNvLinkErrorCounter");
        ok64(&g->nvlink[2].errors[NVML_NVL_REPLAY], 0, "nvmlDeviceGetNvLinkErrorCounter");
        ok64(&g->nvlink[2].errors[NVML_NVL_RECOVERY], 0, "nvmlDeviceGetNvLinkErrorCounter");

        /* An SXM board whose links NVML does not report. */
        g->nvlink_count = 0;
        err32(&g->nvlink_end, NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetNvLinkState");
        expect(run(&n, "gpu.nvlink"), STATUS_FAIL, "NVML reports no NVLink on " DESC ", which has 18", "no NVLink", exp);
        /* MIG mode: NVLink is not used. */
        ok32(&g->mig_mode_current, 1, "nvmlDeviceGetMigMode");
        expect(run(&n, "gpu.nvlink"), STATUS_SKIP, "MIG is enabled on " DESC ": NVLink is not used in MIG mode",
               "0 NVLinks reported, MIG enabled", exp);
        ok32(&g->mig_mode_current, 0, "nvmlDeviceGetMigMode");
        /* A PCIe card (L40S): no NVLink is not a fault. */
        ok32(&g->pci_device_id, 0x26b910de, "nvmlDeviceGetPciInfo_v3");
        n.gpus[0].model = gpudb_find(n.db, 0x10de, 0x26b9);
        n.devs[0].device = 0x26b9;
        okstr(&g->name, "NVIDIA L40S", "nvmlDeviceGetName");
        expect(run(&n, "gpu.nvlink"), STATUS_SKIP, "no NVLink on this board", "no NVLink", "every NVLink active, no errors");
        /* The link walk itself timed out. */
        g->timeout_ms = 2000;
        err32(&g->nvlink_end, NV_TIMEOUT, NVML_ERROR_TIMEOUT, "nvmlDeviceGetNvLinkState");
        expect(run(&n, "gpu.nvlink"), STATUS_ERROR,
               "nvmlDeviceGetNvLinkState did not return within 2000 ms on NVIDIA L40S: NVLink state unknown",
               "unknown: nvmlDeviceGetNvLinkState did not return", "every NVLink active, no errors");
        node_done(&n);
}

/* A Blackwell GPU: its links answer NOT_SUPPORTED for the legacy error counters and count
 * in the NVLink5 fields, summed over the links (NVML's zero BER: mantissa 15, exponent 255). */
#define NVL5_BER(m, e) (((unsigned long long)(m) << 8) | (e))
static void blackwell_links(struct nvml_gpu *g) {
        for (unsigned int l = 0; l < 18; l++)
                for (int c = 0; c < NVML_NVL_COUNTER_COUNT; c++)
                        g->nvlink[l].errors[c] = (struct nv_u64){NV_ERROR, NVML_ERROR_NOT_SUPPORTED,
                                                                 "nvmlDeviceGetFieldValues", 0};
        for (int k = 0; k < NVML_NVL5_COUNT; k++)
                ok64(&g->nvlink5[k], 0, "nvmlDeviceGetFieldValues");
        ok64(&g->nvlink5[NVML_NVL5_SYMBOL_BER], NVL5_BER(15, 255), "nvmlDeviceGetFieldValues");
        ok64(&g->nvlink5[NVML_NVL5_EFFECTIVE_BER], NVL5_BER(15, 255), "nvmlDeviceGetFieldValues");
}

/* NVLink5 as DCGM 4.6 judges it: the BERs against their limits whenever read, any growth of
 * an error counter under load fails; since boot, the counts warn at one an hour. Before,
 * every Blackwell link passed with "error counters not supported". */
static void test_nvlink5(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct nvml_gpu *g = &n.ngpus[0];
        const char *exp = "18 NVLinks active, no errors";
        blackwell_links(g);
        const struct result *r = run(&n, "gpu.nvlink");
        expect(r, STATUS_PASS, "all 18 NVLinks active, no errors", "18 of 18 links active", exp);
        expect_str(evidence(r, "nvlink5"), "since the driver loaded, over all links: no errors", "nvlink5");
        expect_str(evidence(r, "nvlink5_ber"),
                   "symbol BER 0 (fail above 15e-238, DCGM's floor for the sum over the links), effective BER 0 "
                   "(fail above 1e-12)",
                   "nvlink5_ber");
        assert_non_null(strstr(evidence(r, "counters"), "the NVLink5 counters are judged instead"));
        assert_non_null(strstr(evidence(r, "source"), "NVML_FI_DEV_NVLINK_COUNT_*"));
        assert_null(evidence(r, "nvlink5_fec_history")); /* all 0: nothing to tell */
        /* The FEC history is told, not judged: no published limit. */
        ok64(&g->nvlink5[NVML_NVL5_FEC_HISTORY_0], 900000, "nvmlDeviceGetFieldValues");
        ok64(&g->nvlink5[NVML_NVL5_FEC_HISTORY_0 + 1], 1200, "nvmlDeviceGetFieldValues");
        ok64(&g->nvlink5[NVML_NVL5_FEC_HISTORY_0 + 2], 3, "nvmlDeviceGetFieldValues");
        r = run(&n, "gpu.nvlink");
        assert_int_equal(r->status, STATUS_PASS);
        expect_str(evidence(r, "nvlink5_fec_history"),
                   "codewords by symbols FEC corrected, bins 0-15: 900000 1200 3 0 0 0 0 0 0 0 0 0 0 0 0 0",
                   "nvlink5_fec_history");
        /* A bin NVML failed to read leaves the links judged on the rest. */
        g->nvlink5[NVML_NVL5_FEC_HISTORY_0 + 5] = (struct nv_u64){NV_ERROR, NVML_ERROR_UNKNOWN, "nvmlDeviceGetFieldValues", 0};
        r = run(&n, "gpu.nvlink");
        assert_int_equal(r->status, STATUS_PASS);
        assert_null(evidence(r, "nvlink5_fec_history"));

        /* The effective BER: 1e-12 (or 10e-13) passes, more fails. */
        ok64(&g->nvlink5[NVML_NVL5_EFFECTIVE_BER], NVL5_BER(1, 12), "nvmlDeviceGetFieldValues");
        assert_int_equal(run(&n, "gpu.nvlink")->status, STATUS_PASS);
        ok64(&g->nvlink5[NVML_NVL5_EFFECTIVE_BER], NVL5_BER(10, 13), "nvmlDeviceGetFieldValues");
        assert_int_equal(run(&n, "gpu.nvlink")->status, STATUS_PASS);
        ok64(&g->nvlink5[NVML_NVL5_EFFECTIVE_BER], NVL5_BER(9, 15), "nvmlDeviceGetFieldValues");
        assert_int_equal(run(&n, "gpu.nvlink")->status, STATUS_PASS);
        ok64(&g->nvlink5[NVML_NVL5_EFFECTIVE_BER], NVL5_BER(11, 13), "nvmlDeviceGetFieldValues");
        assert_int_equal(run(&n, "gpu.nvlink")->status, STATUS_FAIL);
        /* A raw 0 is a rate of 0, not 0e-0 "over 1e-12". */
        ok64(&g->nvlink5[NVML_NVL5_EFFECTIVE_BER], 0, "nvmlDeviceGetFieldValues");
        assert_int_equal(run(&n, "gpu.nvlink")->status, STATUS_PASS);
        ok64(&g->nvlink5[NVML_NVL5_EFFECTIVE_BER], NVL5_BER(2, 12), "nvmlDeviceGetFieldValues");
        r = run(&n, "gpu.nvlink");
        expect(r, STATUS_FAIL, "the NVLink effective BER of " DESC " is 2e-12, over DCGM's 1e-12",
               "18 of 18 links active", exp);
        assert_non_null(strstr(r->remedy, "nvidia-smi -r -i 0"));
        ok64(&g->nvlink5[NVML_NVL5_EFFECTIVE_BER], NVL5_BER(15, 255), "nvmlDeviceGetFieldValues");
        /* The symbol BER: any but 0 fails (errors FEC did not correct). */
        ok64(&g->nvlink5[NVML_NVL5_SYMBOL_BER], NVL5_BER(3, 20), "nvmlDeviceGetFieldValues");
        expect(run(&n, "gpu.nvlink"), STATUS_FAIL,
               "the NVLink symbol BER of " DESC " is 3e-20: errors the links' FEC did not correct",
               "18 of 18 links active", exp);
        ok64(&g->nvlink5[NVML_NVL5_SYMBOL_BER], NVL5_BER(15, 238), "nvmlDeviceGetFieldValues");
        assert_int_equal(run(&n, "gpu.nvlink")->status, STATUS_PASS);
        ok64(&g->nvlink5[NVML_NVL5_SYMBOL_BER], NVL5_BER(15, 237), "nvmlDeviceGetFieldValues");
        assert_int_equal(run(&n, "gpu.nvlink")->status, STATUS_FAIL);
        /* A healthy B200's sum as DCGM's tests read it: 73710, bits above the exponent and
         * mantissa set, 15e-238. */
        ok64(&g->nvlink5[NVML_NVL5_SYMBOL_BER], 73710, "nvmlDeviceGetFieldValues");
        assert_int_equal(run(&n, "gpu.nvlink")->status, STATUS_PASS);
        ok64(&g->nvlink5[NVML_NVL5_SYMBOL_BER], NVL5_BER(0, 0), "nvmlDeviceGetFieldValues");
        assert_int_equal(run(&n, "gpu.nvlink")->status, STATUS_PASS);

        /* Since the driver loaded, no uptime: any count warns ... */
        ok64(&g->nvlink5[NVML_NVL5_SYMBOL_ERRORS], 4, "nvmlDeviceGetFieldValues");
        ok64(&g->nvlink5[NVML_NVL5_RECOVERY_EVENTS], 1, "nvmlDeviceGetFieldValues");
        ok64(&g->nvlink5[NVML_NVL5_RECOVERY_SUCCESSFUL], 1, "nvmlDeviceGetFieldValues");
        r = run(&n, "gpu.nvlink");
        expect(r, STATUS_WARN,
               "the NVLinks of " DESC " logged errors since the driver loaded: 4 symbol errors, 1 recovery events, "
               "1 successful recovery events",
               "18 of 18 links active", exp);
        /* ... over 100 days of uptime, 5 are history. */
        n.f.host.uptime_s = 100 * 86400.0;
        r = run(&n, "gpu.nvlink");
        expect(r, STATUS_PASS, "all 18 NVLinks active, no errors", "18 of 18 links active", exp);
        assert_non_null(strstr(evidence(r, "nvlink5_rates"), "since boot (2400.0 h)"));

        /* The standard level: read again after the probes, 20 s later. Unchanged passes. */
        struct nvml_facts after = n.f.nvml;
        struct nvml_gpu ga = *g;
        after.gpus = &ga;
        n.f.nvml_after = &after;
        n.f.nvml_window_s = 20.0;
        r = run(&n, "gpu.nvlink");
        expect(r, STATUS_PASS, "all 18 NVLinks active, no errors", "18 of 18 links active", exp);
        expect_str(evidence(r, "nvlink5_window"), "20.0 s around the device probes: no NVLink5 errors", "window");
        /* Symbol errors growing under load fail ... */
        ok64(&ga.nvlink5[NVML_NVL5_SYMBOL_ERRORS], 6, "nvmlDeviceGetFieldValues");
        expect(run(&n, "gpu.nvlink"), STATUS_FAIL,
               "NVLink errors on " DESC " while the probes ran (20 s): 2 symbol errors", "18 of 18 links active", exp);
        /* ... and a failed recovery (DCGM counts every recovery event). */
        ok64(&ga.nvlink5[NVML_NVL5_SYMBOL_ERRORS], 4, "nvmlDeviceGetFieldValues");
        ok64(&ga.nvlink5[NVML_NVL5_RECOVERY_EVENTS], 2, "nvmlDeviceGetFieldValues");
        ok64(&ga.nvlink5[NVML_NVL5_RECOVERY_FAILED], 1, "nvmlDeviceGetFieldValues");
        expect(run(&n, "gpu.nvlink"), STATUS_FAIL,
               "NVLink errors on " DESC " while the probes ran (20 s): 1 recovery events, 1 failed recovery events",
               "18 of 18 links active", exp);
        /* A BER read after the probes is the one judged. */
        ok64(&ga.nvlink5[NVML_NVL5_RECOVERY_EVENTS], 1, "nvmlDeviceGetFieldValues");
        ok64(&ga.nvlink5[NVML_NVL5_RECOVERY_FAILED], 0, "nvmlDeviceGetFieldValues");
        ok64(&ga.nvlink5[NVML_NVL5_EFFECTIVE_BER], NVL5_BER(5, 9), "nvmlDeviceGetFieldValues");
        expect(run(&n, "gpu.nvlink"), STATUS_FAIL, "the NVLink effective BER of " DESC " is 5e-9, over DCGM's 1e-12",
               "18 of 18 links active", exp);
        n.f.nvml_after = NULL;

        /* An NVLink5 counter NVML failed to read leaves the links unjudged ... */
        g->nvlink5[NVML_NVL5_RCV_ERRORS] = (struct nv_u64){NV_ERROR, NVML_ERROR_UNKNOWN, "nvmlDeviceGetFieldValues", 0};
        assert_int_equal(run(&n, "gpu.nvlink")->status, STATUS_ERROR);
        /* ... a driver without them is "not supported", as before. */
        for (int k = 0; k < NVML_NVL5_COUNT; k++)
                g->nvlink5[k] = (struct nv_u64){NV_ERROR, NVML_ERROR_INVALID_ARGUMENT, "nvmlDeviceGetFieldValues", 0};
        expect(run(&n, "gpu.nvlink"), STATUS_PASS, "all 18 NVLinks active, error counters not supported",
               "18 of 18 links active", exp);
        node_done(&n);
}

/* NVML numbers link slots, not wires: an H100 PCIe answers for 18 slots of which its
 * bridges wire 12. A bridged card without a bridge passes, a partial bridge warns, and the
 * unwired slots are never "down"; an SXM board with its links all up ignores spare slots. */
static void test_nvlink_wired_links(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct nvml_gpu *g = &n.ngpus[0];
        ok32(&g->pci_device_id, 0x233110de, "nvmlDeviceGetPciInfo_v3");
        n.gpus[0].model = gpudb_find(n.db, 0x10de, 0x2331);
        n.devs[0].device = 0x2331;
        okstr(&g->name, "NVIDIA H100 PCIe", "nvmlDeviceGetName");
        const char *exp = "no NVLink bridge, or 12 bridged links active, no errors";
        for (unsigned int l = 0; l < 18; l++)
                ok32(&g->nvlink[l].state, 0, "nvmlDeviceGetNvLinkState");
        const struct result *r = run(&n, "gpu.nvlink");
        assert_int_equal(r->status, STATUS_PASS);
        assert_non_null(strstr(r->summary, "no NVLink bridge on"));
        expect_str(r->expected, exp, "expected");
        for (unsigned int l = 0; l < 8; l++)
                ok32(&g->nvlink[l].state, 1, "nvmlDeviceGetNvLinkState");
        r = run(&n, "gpu.nvlink");
        assert_int_equal(r->status, STATUS_WARN);
        assert_non_null(strstr(r->summary, "8 of the 12 bridged NVLinks"));
        for (unsigned int l = 0; l < 12; l++)
                ok32(&g->nvlink[l].state, 1, "nvmlDeviceGetNvLinkState");
        r = run(&n, "gpu.nvlink");
        assert_int_equal(r->status, STATUS_PASS);
        expect_str(r->summary, "all 12 NVLinks active, no errors", "summary");

        /* Bridges by pairs: its peer, an H100 PCIe at 0000:2a:00.0, sees the 12 links back. */
        struct nvml_gpu *p = &n.ngpus[1];
        healthy_gpu(p, 1, "0000:2a:00.0");
        ok32(&p->pci_device_id, 0x233110de, "nvmlDeviceGetPciInfo_v3");
        okstr(&p->name, "NVIDIA H100 PCIe", "nvmlDeviceGetName");
        for (unsigned int l = 0; l < 18; l++) {
                ok32(&p->nvlink[l].state, l < 12, "nvmlDeviceGetNvLinkState");
                if (l < 12) {
                        okstr(&g->nvlink[l].remote_bus_id, "0000:2a:00.0", "nvmlDeviceGetNvLinkRemotePciInfo_v2");
                        okstr(&p->nvlink[l].remote_bus_id, ADDR, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
                }
        }
        n.f.nvml.n_gpus = 2;
        r = run(&n, "gpu.nvlink");
        expect_str(r->summary, "all 12 NVLinks active, bridged to 0000:2a:00.0, no errors", "summary");
        /* The peer has only 8 of them up: lopsided. */
        for (unsigned int l = 8; l < 12; l++)
                ok32(&p->nvlink[l].state, 0, "nvmlDeviceGetNvLinkState");
        r = run(&n, "gpu.nvlink");
        assert_int_equal(r->status, STATUS_WARN);
        expect_str(r->summary, "the NVLink bridge pair with 0000:2a:00.0 is lopsided: 12 active links from "
                               "this card, 8 from its peer", "summary");
        for (unsigned int l = 8; l < 12; l++)
                ok32(&p->nvlink[l].state, 1, "nvmlDeviceGetNvLinkState");
        /* One link ends at a third GPU: a bridge joins one pair. */
        okstr(&g->nvlink[11].remote_bus_id, "0000:99:00.0", "nvmlDeviceGetNvLinkRemotePciInfo_v2");
        r = run(&n, "gpu.nvlink");
        assert_int_equal(r->status, STATUS_WARN);
        assert_non_null(strstr(r->summary, "end at more than one GPU"));
        node_done(&n);

        /* An SXM H100 (18 links) whose NVML answered for 20 slots, two of them down. */
        node_init(&n);
        g = &n.ngpus[0];
        g->nvlink_count = 20;
        ok32(&g->nvlink[18].state, 0, "nvmlDeviceGetNvLinkState");
        ok32(&g->nvlink[19].state, 0, "nvmlDeviceGetNvLinkState");
        r = run(&n, "gpu.nvlink");
        assert_int_equal(r->status, STATUS_PASS);
        expect_str(r->summary, "all 18 NVLinks active, no errors", "summary");
        ok32(&g->nvlink[3].state, 0, "nvmlDeviceGetNvLinkState");
        assert_int_equal(run(&n, "gpu.nvlink")->status, STATUS_FAIL);
        node_done(&n);
}

static void test_fabric_manager(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct nvml_gpu *g = &n.ngpus[0];
        /* A fabric GPU without an NVSwitch on this PCI bus (a VM given GPUs while the
         * switches stay with the host): the Fabric Manager runs elsewhere; the GPU's own
         * registration is still judged. */
        const struct result *r = run(&n, "gpu.fabric_manager");
        assert_int_equal(r->status, STATUS_SKIP);
        assert_non_null(strstr(r->summary, "the Fabric Manager runs where the switches are"));
        expect(run_id(&n, "gpu.fabric_manager", 1), STATUS_PASS, "joined the NVLink fabric",
               "completed, status NVML_SUCCESS", "fabric registration completed, status NVML_SUCCESS, fabric healthy");
        /* An HGX baseboard: its NVSwitch on the PCI bus. */
        struct pci_dev *sw = &n.devs[1];
        snprintf(sw->addr, sizeof(sw->addr), "0000:05:00.0");
        sw->have_ids = true;
        sw->vendor = 0x10de;
        sw->device = 0x22a3;
        sw->class_code = 0x068000;
        n.f.pci.n = 2;
        r = run(&n, "gpu.fabric_manager");
        expect(r, STATUS_FAIL, "NVSwitch system without the Fabric Manager: CUDA fails with error 802", "not running",
               "nv-fabricmanager running, version 550.54.15");
        assert_non_null(strstr(r->remedy, "systemctl enable --now nvidia-fabricmanager"));
        n.f.nvidia.fabricmanager_pid = 3302;
        snprintf(n.f.nvidia.fabricmanager_version, sizeof(n.f.nvidia.fabricmanager_version), "535.154.05");
        snprintf(n.f.nvidia.fabricmanager_package, sizeof(n.f.nvidia.fabricmanager_package), "nvidia-fabricmanager-535");
        expect(run(&n, "gpu.fabric_manager"), STATUS_FAIL,
               "Fabric Manager 535.154.05 does not match driver 550.54.15: it refuses to start or manage the fabric",
               "running (pid 3302), version 535.154.05", "nv-fabricmanager running, version 550.54.15");
        snprintf(n.f.nvidia.fabricmanager_version, sizeof(n.f.nvidia.fabricmanager_version), "550.54.15");
        r = run(&n, "gpu.fabric_manager");
        expect(r, STATUS_PASS, "the Fabric Manager runs (pid 3302), same version as the driver",
               "running (pid 3302), version 550.54.15", "nv-fabricmanager running, version 550.54.15");
        expect(run_id(&n, "gpu.fabric_manager", 1), STATUS_PASS, "joined the NVLink fabric",
               "completed, status NVML_SUCCESS", "fabric registration completed, status NVML_SUCCESS, fabric healthy");
        ok32(&g->fabric_state, NVML_GPU_FABRIC_STATE_IN_PROGRESS, "nvmlDeviceGetGpuFabricInfo");
        expect(run_id(&n, "gpu.fabric_manager", 1), STATUS_FAIL,
               DESC " has not joined the NVLink fabric (state in progress): CUDA fails with error 802 until it does",
               "in progress, status NVML_SUCCESS", "fabric registration completed, status NVML_SUCCESS, fabric healthy");
        ok32(&g->fabric_state, NVML_GPU_FABRIC_STATE_COMPLETED, "nvmlDeviceGetGpuFabricInfo");
        ok32(&g->fabric_status, NVML_ERROR_UNKNOWN, "nvmlDeviceGetGpuFabricInfo");
        expect(run_id(&n, "gpu.fabric_manager", 1), STATUS_FAIL, "fabric registration of " DESC " failed: NVML_ERROR_UNKNOWN",
               "completed, status NVML_ERROR_UNKNOWN", "fabric registration completed, status NVML_SUCCESS, fabric healthy");
        /* No NVSwitch and no fabric: not needed. */
        n.f.pci.n = 1;
        ok32(&g->fabric_state, NVML_GPU_FABRIC_STATE_NOT_SUPPORTED, "nvmlDeviceGetGpuFabricInfo");
        expect(run(&n, "gpu.fabric_manager"), STATUS_SKIP, "no NVSwitch on this node: the Fabric Manager is not needed",
               NULL, NULL);
        node_done(&n);
}

/* Make the node's GPU a model of gpus.json by its device id (a B200 of an HGX baseboard, a
 * GB200 of an NVL72 compute tray). */
static void node_model(struct node *n, uint16_t device) {
        n->devs[0].device = device;
        n->gpus[0].model = gpudb_find(n->db, 0x10de, device);
        assert_non_null(n->gpus[0].model);
}

/* An HGX B200 (fourth-generation NVSwitches): the switches are not on the PCI bus but
 * behind the baseboard's management ports, and the Fabric Manager needs NVLSM beside it.
 * The board decides, with or without NVML, whatever cluster UUID its GPUs report. */
static void test_fabric_fourth_generation(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        node_model(&n, 0x2901);
        const struct result *r = run(&n, "gpu.fabric_manager");
        expect(r, STATUS_FAIL,
               "NVSwitch system without the Fabric Manager and the NVLink Subnet Manager: CUDA fails with error 802",
               "neither nv-fabricmanager nor nvlsm running", "nv-fabricmanager running, version 550.54.15; nvlsm running");
        assert_non_null(strstr(r->remedy, "nvlsm"));
        expect_str(evidence(r, "board"), "NVIDIA B200: fourth-generation NVSwitch baseboard (Fabric Manager and NVLSM)",
                   "board");
        /* The Fabric Manager alone does not make the fabric: NVLSM missing fails. */
        n.f.nvidia.fabricmanager_pid = 3302;
        r = run(&n, "gpu.fabric_manager");
        expect(r, STATUS_FAIL, "NVSwitch system without the NVLink Subnet Manager (NVLSM): CUDA fails with error 802",
               "nv-fabricmanager running (pid 3302), nvlsm not running",
               "nv-fabricmanager running, version 550.54.15; nvlsm running");
        n.f.nvidia.nvlsm_pid = 3290;
        snprintf(n.f.rdma.nvswitch_lpf[0], sizeof(n.f.rdma.nvswitch_lpf[0]), "mlx5_8");
        n.f.rdma.n_nvswitch_lpf = 2;
        r = run(&n, "gpu.fabric_manager");
        expect(r, STATUS_PASS, "the Fabric Manager (pid 3302) and the NVLink Subnet Manager (pid 3290) run",
               "nv-fabricmanager running (pid 3302), nvlsm running (pid 3290)",
               "nv-fabricmanager running, version 550.54.15; nvlsm running");
        expect_str(evidence(r, "nvswitch_lpf"), "2 management ports (mlx5_8, ...)", "nvswitch_lpf");
        /* A GPU that reports a cluster UUID is still on an NVSwitch baseboard, not a tray. */
        okstr(&n.ngpus[0].fabric_cluster_uuid, "5c2b7e1a-9d0f-4c1e-8a77-3b6f0e2d9a41", "nvmlDeviceGetGpuFabricInfoV");
        expect_str(run(&n, "gpu.fabric_manager")->summary,
                   "the Fabric Manager (pid 3302) and the NVLink Subnet Manager (pid 3290) run", "summary");
        /* A GPU that has not joined: the remedy names NVLSM too. */
        n.f.nvidia.nvlsm_pid = 0;
        ok32(&n.ngpus[0].fabric_state, NVML_GPU_FABRIC_STATE_NOT_STARTED, "nvmlDeviceGetGpuFabricInfo");
        r = run_id(&n, "gpu.fabric_manager", 1);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_non_null(strstr(r->remedy, "NVLink Subnet Manager"));
        /* Without NVML the board alone decides. */
        n.f.nvml.init_state = NVML_INIT_NOT_TRIED;
        expect_str(run(&n, "gpu.fabric_manager")->summary,
                   "NVSwitch system without the NVLink Subnet Manager (NVLSM): CUDA fails with error 802", "summary");
        /* A hypervisor that passes the GPUs through (vfio-pci): the VM runs the fabric. */
        snprintf(n.devs[0].driver, sizeof(n.devs[0].driver), "vfio-pci");
        r = run(&n, "gpu.fabric_manager");
        assert_int_equal(r->status, STATUS_SKIP);
        assert_non_null(strstr(r->summary, "no GPU is bound to the nvidia driver"));
        snprintf(n.devs[0].driver, sizeof(n.devs[0].driver), "nvidia");
        /* A VM given the GPUs but none of the switch ports: the host or a service VM runs the fabric. */
        n.f.virt.is_vm = true;
        n.f.rdma.n_nvswitch_lpf = 0;
        r = run(&n, "gpu.fabric_manager");
        assert_int_equal(r->status, STATUS_SKIP);
        assert_non_null(strstr(r->summary, "the host or a service VM runs the Fabric Manager"));
        node_done(&n);
}

/* An NVL72 compute tray is known by its board: before its GPUs join the fabric (no cluster
 * UUID yet) it still needs IMEX here, and a GPU that has not joined is not told to start a
 * Fabric Manager (that runs on the switch trays). */
static void test_fabric_tray_by_model(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        node_model(&n, 0x2941);
        ok32(&n.ngpus[0].fabric_state, NVML_GPU_FABRIC_STATE_NOT_STARTED, "nvmlDeviceGetGpuFabricInfo");
        const struct result *r = run(&n, "gpu.fabric_manager");
        assert_int_equal(r->status, STATUS_WARN);
        assert_non_null(strstr(r->summary, "no IMEX daemon on this multi-node NVLink compute tray"));
        r = run_id(&n, "gpu.fabric_manager", 1);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_non_null(strstr(r->remedy, "the rack's NVLink switch trays run"));
        assert_null(strstr(r->remedy, "Start the Fabric Manager"));
        n.f.nvidia.imex_pid = 4242;
        expect_str(run(&n, "gpu.fabric_manager")->summary, "the IMEX daemon runs (pid 4242) on this compute tray",
                   "summary");
        /* A superchip board whose GPUs have no fabric at all (GB200 NVL4): nothing to run. */
        ok32(&n.ngpus[0].fabric_state, NVML_GPU_FABRIC_STATE_NOT_SUPPORTED, "nvmlDeviceGetGpuFabricInfo");
        expect(run(&n, "gpu.fabric_manager"), STATUS_SKIP, "no NVSwitch on this node: the Fabric Manager is not needed",
               NULL, NULL);
        node_done(&n);
}

/* A GB200/GB300 NVL72 compute tray: no NVSwitch on its PCI bus (they sit in the switch
 * trays), GPUs in a fabric cluster; IMEX, not the Fabric Manager, runs here. */
static void test_fabric_compute_tray(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct nvml_gpu *g = &n.ngpus[0];
        const char *fn = "nvmlDeviceGetGpuFabricInfoV";
        okstr(&g->fabric_cluster_uuid, "5c2b7e1a-9d0f-4c1e-8a77-3b6f0e2d9a41", fn);
        ok32(&g->fabric_clique_id, 32766, fn);
        ok32(&g->fabric_health_summary, NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY, fn);
        ok32(&g->fabric_health_mask, 0x1aa, fn); /* every field "false": healthy, configuration NONE */
        const struct result *r = run(&n, "gpu.fabric_manager");
        assert_int_equal(r->status, STATUS_WARN);
        assert_non_null(strstr(r->summary, "no IMEX daemon on this multi-node NVLink compute tray"));
        assert_non_null(strstr(r->remedy, "systemctl enable --now nvidia-imex"));
        n.f.nvidia.imex_pid = 4242;
        r = run(&n, "gpu.fabric_manager");
        assert_int_equal(r->status, STATUS_PASS);
        expect_str(r->summary, "the IMEX daemon runs (pid 4242) for this tray's 1 GPU in the NVLink cluster", "summary");
        expect(run_id(&n, "gpu.fabric_manager", 1), STATUS_PASS, "joined the NVLink fabric, healthy",
               "completed, status NVML_SUCCESS", "fabric registration completed, status NVML_SUCCESS, fabric healthy");
        /* Degraded bandwidth (bits 0-1 = 1): warn. */
        ok32(&g->fabric_health_mask, 0x1a9, fn);
        r = run_id(&n, "gpu.fabric_manager", 1);
        assert_int_equal(r->status, STATUS_WARN);
        expect_str(r->summary, "the NVLink fabric of " DESC " runs at degraded bandwidth", "summary");
        /* A route unhealthy (bits 4-5 = 1): fail. */
        ok32(&g->fabric_health_mask, 0x19a, fn);
        r = run_id(&n, "gpu.fabric_manager", 1);
        assert_int_equal(r->status, STATUS_FAIL);
        expect_str(r->summary, "the NVLink fabric of " DESC " is unhealthy: a route through it is down", "summary");
        /* Too few NVLinks for the partition (configuration field 5): fail, named. */
        ok32(&g->fabric_health_mask, 0x5aa, fn);
        r = run_id(&n, "gpu.fabric_manager", 1);
        assert_int_equal(r->status, STATUS_FAIL);
        expect_str(r->summary, DESC " is in the NVLink fabric with a wrong configuration: too few NVLinks", "summary");
        /* The summary alone says limited capacity: warn. */
        ok32(&g->fabric_health_mask, 0x1aa, fn);
        ok32(&g->fabric_health_summary, NVML_GPU_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY, fn);
        assert_int_equal(run_id(&n, "gpu.fabric_manager", 1)->status, STATUS_WARN);
        node_done(&n);
}

static void test_power_limit(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        ok32(&n.ngpus[0].power_enforced_limit_mw, 500000, "nvmlDeviceGetEnforcedPowerLimit");
        const struct result *r = run(&n, "gpu.power_limit");
        expect(r, STATUS_WARN,
               "the power limit of " DESC " is capped at 500 W, below its default 700 W: it runs slower under load",
               "500 W (min 200 W, default 700 W, max 700 W)", ">= 700 W (the default limit)");
        assert_non_null(strstr(r->remedy, "gpuvet tune apply --set gpu.power_limit=default"));

        /* Values no working GPU reports are an error, never a pass (review B18). */
        ok32(&n.ngpus[0].power_enforced_limit_mw, 0, "nvmlDeviceGetEnforcedPowerLimit");
        ok32(&n.ngpus[0].power_default_limit_mw, 0, "nvmlDeviceGetPowerManagementDefaultLimit");
        ok32(&n.ngpus[0].power_min_limit_mw, 4294967295u, "nvmlDeviceGetPowerManagementLimitConstraints");
        ok32(&n.ngpus[0].power_max_limit_mw, 0, "nvmlDeviceGetPowerManagementLimitConstraints");
        r = run(&n, "gpu.power_limit");
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->summary, "NVML reports a power limit of 0 W for " DESC ": its power readings cannot be "
                                        "judged");
        ok32(&n.ngpus[0].power_enforced_limit_mw, 700000, "nvmlDeviceGetEnforcedPowerLimit");
        ok32(&n.ngpus[0].power_default_limit_mw, 700000, "nvmlDeviceGetPowerManagementDefaultLimit");
        r = run(&n, "gpu.power_limit");
        assert_int_equal(r->status, STATUS_ERROR);
        assert_non_null(strstr(r->summary, "a minimum power limit above the maximum"));
        node_done(&n);
}

static void test_app_clocks(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        ok32(&n.ngpus[0].clock_app_mhz[NVML_CLK_GRAPHICS], 1410, "nvmlDeviceGetApplicationsClock");
        const struct result *r = run(&n, "gpu.app_clocks");
        expect(r, STATUS_WARN,
               "applications clocks of " DESC " are set to graphics 1410 MHz, memory 2619 MHz instead of the "
               "defaults 1755/2619 MHz",
               "graphics 1410 MHz, memory 2619 MHz", "graphics 1755 MHz, memory 2619 MHz (the defaults)");
        assert_non_null(strstr(r->remedy, "gpuvet tune apply --set gpu.app_clocks=default"));
        err32(&n.ngpus[0].clock_app_mhz[NVML_CLK_GRAPHICS], NV_ERROR, NVML_ERROR_NOT_SUPPORTED,
              "nvmlDeviceGetApplicationsClock");
        expect(run(&n, "gpu.app_clocks"), STATUS_SKIP,
               "applications clocks: not supported on this GPU/driver (nvmlDeviceGetApplicationsClock)",
               "unknown: nvmlDeviceGetApplicationsClock returned NVML_ERROR_NOT_SUPPORTED",
               "graphics 1755 MHz, memory 2619 MHz (the defaults)");
        /* R590 and later: the readings are withdrawn, the GPU is fine (a captured H100 on
         * 590.48.01 answers DEPRECATED for both calls). */
        err32(&n.ngpus[0].clock_app_mhz[NVML_CLK_GRAPHICS], NV_ERROR, NVML_ERROR_DEPRECATED,
              "nvmlDeviceGetApplicationsClock");
        err32(&n.ngpus[0].clock_default_app_mhz[NVML_CLK_GRAPHICS], NV_ERROR, NVML_ERROR_DEPRECATED,
              "nvmlDeviceGetDefaultApplicationsClock");
        r = run(&n, "gpu.app_clocks");
        assert_int_equal(r->status, STATUS_SKIP);
        assert_non_null(strstr(r->summary, "deprecated: this driver no longer offers them"));
        assert_non_null(strstr(r->summary, "locked clocks"));
        assert_null(r->remedy);
        /* Any reading a newer driver withdrew or never implemented is a skip, never an error. */
        ok32(&n.ngpus[0].clock_app_mhz[NVML_CLK_GRAPHICS], 1755, "nvmlDeviceGetApplicationsClock");
        ok32(&n.ngpus[0].clock_default_app_mhz[NVML_CLK_GRAPHICS], 1755, "nvmlDeviceGetDefaultApplicationsClock");
        err32(&n.ngpus[0].power_default_limit_mw, NV_ERROR, NVML_ERROR_DEPRECATED,
              "nvmlDeviceGetPowerManagementDefaultLimit");
        expect(run(&n, "gpu.power_limit"), STATUS_SKIP,
               "default power limit: deprecated: this driver no longer offers it "
               "(nvmlDeviceGetPowerManagementDefaultLimit)",
               "unknown: nvmlDeviceGetPowerManagementDefaultLimit returned NVML_ERROR_DEPRECATED", "at or above the default power limit");
        err32(&n.ngpus[0].power_default_limit_mw, NV_ERROR, NVML_ERROR_FUNCTION_NOT_FOUND,
              "nvmlDeviceGetPowerManagementDefaultLimit");
        expect(run(&n, "gpu.power_limit"), STATUS_SKIP,
               "default power limit: not implemented by this driver's libnvidia-ml "
               "(nvmlDeviceGetPowerManagementDefaultLimit)",
               "unknown: nvmlDeviceGetPowerManagementDefaultLimit returned NVML_ERROR_FUNCTION_NOT_FOUND", "at or above the default power limit");
        node_done(&n);
}

static void test_mig(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct nvml_gpu *g = &n.ngpus[0];
        const char *exp = "MIG mode as configured: no change pending; instances created when enabled";
        ok32(&g->mig_mode_pending, 1, "nvmlDeviceGetMigMode");
        expect(run(&n, "gpu.mig"), STATUS_WARN,
               "MIG mode of " DESC " is disabled with enabled pending: reset the GPU to apply", "disabled, enabled pending",
               exp);
        ok32(&g->mig_mode_current, 1, "nvmlDeviceGetMigMode");
        ok32(&g->mig_device_count, 0, "nvmlDeviceGetMigDeviceHandleByIndex");
        expect(run(&n, "gpu.mig"), STATUS_FAIL, "MIG is enabled on " DESC " but no instance exists: CUDA sees no device on it",
               "enabled, 0 MIG devices", exp);
        ok32(&g->mig_device_count, 4, "nvmlDeviceGetMigDeviceHandleByIndex");
        expect(run(&n, "gpu.mig"), STATUS_PASS, "MIG enabled, 4 MIG devices", "enabled, 4 MIG devices", exp);
        err32(&g->mig_mode_current, NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetMigMode");
        expect(run(&n, "gpu.mig"), STATUS_SKIP, "MIG mode: not supported on this GPU/driver (nvmlDeviceGetMigMode)",
               "unknown: nvmlDeviceGetMigMode returned NVML_ERROR_NOT_SUPPORTED", exp);
        node_done(&n);
}

static void test_row_remapper(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct nvml_gpu *g = &n.ngpus[0];
        unsigned int banks[5] = {2560, 0, 0, 0, 0};
        for (int i = 0; i < 5; i++)
                ok32(&g->remap_hist[i], banks[i], "nvmlDeviceGetRowRemapperHistogram");
        const char *want = "every memory bank has spare rows left for remapping";
        expect(run(&n, "gpu.row_remapper"), STATUS_PASS, "every memory bank of " DESC " has spare rows",
               "banks by spare rows left: max 2560, high 0, partial 0, low 0, none 0", want);
        ok32(&g->remap_hist[3], 2, "nvmlDeviceGetRowRemapperHistogram");
        expect(run(&n, "gpu.row_remapper"), STATUS_WARN, "2 memory banks of " DESC " have few spare rows left",
               "banks by spare rows left: max 2560, high 0, partial 0, low 2, none 0", want);
        ok32(&g->remap_hist[4], 1, "nvmlDeviceGetRowRemapperHistogram");
        const struct result *r = run(&n, "gpu.row_remapper");
        expect(r, STATUS_FAIL,
               "1 memory bank of " DESC " has no spare row left: the next uncorrectable error there cannot be remapped",
               "banks by spare rows left: max 2560, high 0, partial 0, low 2, none 1", want);
        assert_non_null(strstr(r->remedy, "RMA"));
        /* Not supported: the reason given must hold for the GPU at hand. An H100 (Hopper,
         * compute capability 9.0 in gpuvet's table) remaps rows, so "before Ampere" is not
         * why; a V100 retires pages instead. */
        for (int i = 0; i < 5; i++)
                err32(&g->remap_hist[i], NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetRowRemapperHistogram");
        expect(run(&n, "gpu.row_remapper"), STATUS_SKIP, "row-remapper histogram not supported on " DESC,
               "not supported", want);
        /* NVML's own compute capability wins over the table: a Blackwell (10.x) likewise. */
        g->cc_major = (struct nv_i32){NV_OK, 0, "nvmlDeviceGetCudaComputeCapability", 10};
        expect(run(&n, "gpu.row_remapper"), STATUS_SKIP, "row-remapper histogram not supported on " DESC,
               "not supported", want);
        g->cc_major = (struct nv_i32){NV_OK, 0, "nvmlDeviceGetCudaComputeCapability", 7};
        expect(run(&n, "gpu.row_remapper"), STATUS_SKIP,
               "row-remapper histogram not supported on " DESC " (GPUs before Ampere retire pages instead: "
               "gpu.memory_health judges them)",
               "not supported", want);
        /* Neither NVML nor the table knows the GPU: no reason is made up. */
        g->cc_major = (struct nv_i32){NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetCudaComputeCapability", 0};
        ok32(&g->pci_device_id, 0xffff10de, "nvmlDeviceGetPciInfo_v3");
        n.gpus[0].model = NULL;
        const struct result *u = run(&n, "gpu.row_remapper");
        assert_int_equal(u->status, STATUS_SKIP);
        assert_null(strstr(u->summary, "Ampere"));
        node_done(&n);
}

static void test_inforom(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct nvml_gpu *g = &n.ngpus[0];
        ok32(&g->inforom_valid, 1, "nvmlDeviceValidateInforom");
        okstr(&g->vbios, "96.00.74.00.1A", "nvmlDeviceGetVbiosVersion");
        okstr(&g->inforom_image, "G520.0200.00.05", "nvmlDeviceGetInforomImageVersion");
        const char *want = "InfoROM checksum valid; VBIOS and InfoROM image as on the node's other GPUs of the model";
        expect(run(&n, "gpu.inforom"), STATUS_PASS, "InfoROM of " DESC " valid, firmware as on its siblings",
               "InfoROM valid; VBIOS 96.00.74.00.1A; InfoROM image G520.0200.00.05", want);
        err32(&g->inforom_valid, NV_ERROR, NVML_ERROR_CORRUPTED_INFOROM, "nvmlDeviceValidateInforom");
        expect(run(&n, "gpu.inforom"), STATUS_FAIL,
               "the InfoROM of " DESC " is corrupted (its checksum fails): ECC counts, retired pages and remapped rows "
               "are kept there",
               "InfoROM corrupted", want);
        err32(&g->inforom_valid, NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceValidateInforom");
        expect(run(&n, "gpu.inforom"), STATUS_SKIP, "InfoROM validation not supported on " DESC, "not supported", want);
        err32(&g->inforom_valid, NV_ERROR, NVML_ERROR_UNKNOWN, "nvmlDeviceValidateInforom");
        assert_int_equal(run(&n, "gpu.inforom")->status, STATUS_ERROR);
        node_done(&n);
}

static void test_recovery_action(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct nvml_gpu *g = &n.ngpus[0];
        const char *want = "recovery action 0x0 (None)";
        ok32(&g->recovery_action, 0, "nvmlDeviceGetFieldValues");
        expect(run(&n, "gpu.recovery_action"), STATUS_PASS, "the driver asks for no recovery of " DESC, "0x0 (None)",
               want);
        ok32(&g->recovery_action, 2, "nvmlDeviceGetFieldValues");
        const struct result *r = run(&n, "gpu.recovery_action");
        expect(r, STATUS_FAIL, "the driver asks for \"Node Reboot Required\" on " DESC " before new work",
               "0x2 (Node Reboot Required)", want);
        assert_non_null(strstr(r->remedy, "reboot"));
        /* xid.json's `nvidia-smi -r -i <index>` names this GPU's index (ux-review) */
        ok32(&g->recovery_action, 1, "nvmlDeviceGetFieldValues");
        g->index = 3;
        r = run(&n, "gpu.recovery_action");
        assert_non_null(strstr(r->remedy, "nvidia-smi -r -i 3)"));
        assert_null(strstr(r->remedy, "<index>"));
        g->index = 0;
        ok32(&g->recovery_action, 42, "nvmlDeviceGetFieldValues");
        expect(run(&n, "gpu.recovery_action"), STATUS_WARN,
               "the driver asks for recovery action 0x2a on " DESC ", a value gpuvet does not know",
               "0x2a (unknown to gpuvet)", want);
        /* Not supported: "drivers before R565" is the reason only on such a driver (550 here). */
        err32(&g->recovery_action, NV_ERROR, NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetFieldValues");
        expect(run(&n, "gpu.recovery_action"), STATUS_SKIP,
               "the GPU recovery action field not supported on " DESC " (drivers before R565 do not report it)",
               "not supported", want);
        okstr(&n.f.nvml.driver_version, "580.95.05", "nvmlSystemGetDriverVersion");
        expect(run(&n, "gpu.recovery_action"), STATUS_SKIP,
               "the GPU recovery action field not supported on " DESC, "not supported", want);
        node_done(&n);
}

static void test_graphics_processes(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct nvml_gpu *g = &n.ngpus[0];
        struct nvml_process procs[2] = {{.pid = 2301}, {.pid = 2455}};
        g->graphics_procs = (struct nvml_procs){NV_OK, 0, "nvmlDeviceGetGraphicsRunningProcesses_v3", 0, NULL};
        const char *want = "no graphics process on a compute GPU";
        expect(run(&n, "gpu.graphics_processes"), STATUS_PASS, "no graphics process on " DESC, "none", want);
        g->graphics_procs.count = 2;
        g->graphics_procs.v = procs;
        const struct result *r = run(&n, "gpu.graphics_processes");
        expect(r, STATUS_WARN,
               "2 graphics processes (pid 2301, 2455) on " DESC ": a display server or desktop on a compute GPU takes "
               "memory and time slices from jobs",
               "2 graphics processes (pid 2301, 2455)", want);
        assert_non_null(strstr(r->remedy, "`ps -o pid,comm -p 2301,2455`"));
        g->graphics_procs.v = NULL;
        g->graphics_procs.count = 0;
        node_done(&n);
}

static void test_no_gpus(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        n.f.gpus.n = 0;
        n.f.pci.n = 0;
        n.f.nvml.n_gpus = 0;
        n.f.nvml.init_state = NVML_INIT_NO_LIBRARY;
        for (size_t i = 0; i < N_CHECKS; i++)
                expect(run(&n, nvml_checks[i]), STATUS_SKIP, "no NVIDIA GPU on the PCI bus", NULL, NULL);
        expect(run(&n, "gpu.fabric_manager"), STATUS_SKIP, "no NVIDIA GPU on the PCI bus", NULL, NULL);
        node_done(&n);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_healthy),        cmocka_unit_test(test_reading_states),
                cmocka_unit_test(test_lost_everywhere), cmocka_unit_test(test_nvml_init_states),
                cmocka_unit_test(test_nvml_missing_gpu), cmocka_unit_test(test_driver_compat),
                cmocka_unit_test(test_persistence_mode), cmocka_unit_test(test_ecc_mode),
                cmocka_unit_test(test_ecc_errors),     cmocka_unit_test(test_memory_health),
                cmocka_unit_test(test_temperature),    cmocka_unit_test(test_memory_temperature),
                cmocka_unit_test(test_clock_events),
                cmocka_unit_test(test_pcie_nvml),      cmocka_unit_test(test_nvlink),
                cmocka_unit_test(test_nvlink_wired_links), cmocka_unit_test(test_nvlink5),
                cmocka_unit_test(test_fabric_manager),
                cmocka_unit_test(test_fabric_compute_tray), cmocka_unit_test(test_fabric_fourth_generation),
                cmocka_unit_test(test_fabric_tray_by_model), cmocka_unit_test(test_power_limit),
                cmocka_unit_test(test_app_clocks),     cmocka_unit_test(test_mig),
                cmocka_unit_test(test_no_gpus),        cmocka_unit_test(test_row_remapper),
                cmocka_unit_test(test_inforom),        cmocka_unit_test(test_recovery_action),
                cmocka_unit_test(test_graphics_processes),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

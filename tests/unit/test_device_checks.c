/* The device checks (src/checks/device.c) and pcie.link_under_load on hand-built probe
 * measurements: two H100 SXM GPUs, healthy, then each fault the probes can report (a
 * slow copy, a wrong kernel, a device that cannot be opened or is missing, a timed-out
 * probe, a link that stays down under load, a peer copy that corrupts, no peer access),
 * and a node whose only device is PoCL's CPU device. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/probes.h"
#include "checks/check.h"
#include "data/gpudb.h"

#define ADDR0 "0000:1b:00.0"
#define ADDR1 "0000:43:00.0"

struct node {
        struct facts f;
        struct pci_dev devs[3];
        struct gpu gpus[2];
        struct gpudb *db;
        struct probe_facts p;
        struct report rep;
};

static const char *const addrs[2] = {ADDR0, ADDR1};

static struct measurement *add(struct node *n, const char *bench, const char *name, int gpu, const char *unit,
                               double value, size_t reps) {
        char subject[48];
        snprintf(subject, sizeof(subject), "gpu%d (%s)", gpu, addrs[gpu]);
        struct measurement *m = bench_measurement_new(&n->p.rep, bench, name, subject, unit, true);
        double s[8];
        for (size_t i = 0; i < reps && i < 8; i++)
                s[i] = value;
        assert_int_equal(measurement_set_samples(m, s, reps, 1), 0);
        m->verified = true;
        return m;
}

static void judge(struct measurement *m, double peak, double baseline, double pass, double warn) {
        m->peak = peak;
        m->baseline = baseline;
        if (peak)
                snprintf(m->peak_source, sizeof(m->peak_source), "test peak");
        if (baseline)
                snprintf(m->baseline_source, sizeof(m->baseline_source), "test baseline");
        struct bench_limits lim = {pass, warn};
        bench_judge(m, &lim);
}

/* Two H100 SXM at ADDR0/ADDR1 (Gen5 x16, idle at Gen1), every probe healthy. */
static void node_init(struct node *n) {
        memset(n, 0, sizeof(*n));
        char err[256];
        assert_int_equal(gpudb_load(NULL, &n->db, err, sizeof(err)), 0);
        n->f.db = n->db;
        for (int i = 0; i < 2; i++) {
                struct pci_dev *d = &n->devs[i];
                snprintf(d->addr, sizeof(d->addr), "%s", addrs[i]);
                snprintf(d->sysfs_path, sizeof(d->sysfs_path), "/sys/devices/pci0000:00/%s", addrs[i]);
                d->have_ids = true;
                d->vendor = 0x10de;
                d->device = 0x2330;
                d->class_code = 0x030200;
                d->parent = -1;
                d->have_link = true;
                d->cur_speed_mts = 2500; /* idle: power saving */
                d->max_speed_mts = 32000;
                d->cur_width = d->max_width = 16;
                snprintf(d->driver, sizeof(d->driver), "nvidia");
                n->gpus[i].pci_index = (size_t)i;
                n->gpus[i].model = gpudb_find(n->db, 0x10de, 0x2330);
                assert_non_null(n->gpus[i].model);
        }
        n->f.pci.devs = n->devs;
        n->f.pci.n = 2;
        n->f.gpus.gpus = n->gpus;
        n->f.gpus.n = 2;

        struct probe_facts *p = &n->p;
        probes_not_run(p, "");
        p->skip_reason[0] = '\0';
        snprintf(p->backend, sizeof(p->backend), "auto");
        for (int id = 0; id < _PROBE_COUNT; id++) {
                p->runs[id].ran = true;
                p->runs[id].not_run[0] = '\0';
                snprintf(p->runs[id].backend, sizeof(p->runs[id].backend), "cuda");
        }
        p->runs[PROBE_FUNCTIONAL].first = p->rep.n;
        for (int g = 0; g < 2; g++) {
                struct measurement *m = add(n, "functional", "functional", g, "GB/s", 1500, 1);
                measurement_param(m, "size_bytes", "%d", 64 << 20);
                judge(m, 0, 0, 0.9, 0.8);
        }
        p->runs[PROBE_FUNCTIONAL].count = p->rep.n - p->runs[PROBE_FUNCTIONAL].first;
        p->runs[PROBE_TRANSFER].first = p->rep.n;
        for (int g = 0; g < 2; g++) {
                judge(add(n, "transfer", "h2d_pinned", g, "GB/s", 55, 5), 63.0, 55, 0.9, 0.75);
                judge(add(n, "transfer", "d2h_pinned", g, "GB/s", 55, 5), 63.0, 55, 0.9, 0.75);
                struct measurement *m = add(n, "pcie", "link_under_load", g, "GT/s", 32.0, 6);
                measurement_param(m, "min_width_under_load", "16");
                judge(m, 0, 0, 0.9, 0.8);
        }
        p->runs[PROBE_TRANSFER].count = p->rep.n - p->runs[PROBE_TRANSFER].first;
        p->runs[PROBE_MEMORY].first = p->rep.n;
        for (int g = 0; g < 2; g++)
                judge(add(n, "memory", "triad", g, "GB/s", 2900, 5), 3350, 2848, 0.9, 0.8);
        p->runs[PROBE_MEMORY].count = p->rep.n - p->runs[PROBE_MEMORY].first;
        p->runs[PROBE_P2P].first = p->rep.n;
        for (int g = 0; g < 2; g++) {
                /* as bench_p2p names a pair */
                struct measurement *m = add(n, "p2p", "write_uni", g, "GB/s", 380, 3);
                snprintf(m->subject, sizeof(m->subject), "gpu%d->gpu%d", g, 1 - g);
                measurement_param(m, "from", "gpu%d (%s)", g, addrs[g]);
                measurement_param(m, "to", "gpu%d (%s)", 1 - g, addrs[1 - g]);
                judge(m, 450, 376, 0.85, 0.7);
        }
        p->runs[PROBE_P2P].count = p->rep.n - p->runs[PROBE_P2P].first;
        n->f.probes = p;
        report_init(&n->rep);
}

static void node_done(struct node *n) {
        report_done(&n->rep);
        probes_done(&n->p);
        gpudb_free(n->db);
}

static struct measurement *find(struct node *n, const char *bench, const char *name, int gpu) {
        return (struct measurement *)probe_find(&n->p, bench, name, addrs[gpu], NULL);
}

static void run(struct node *n, const char *id) {
        const struct check_info *c = check_find(id);
        assert_non_null(c);
        c->run(c, &n->f, &n->rep);
}

static const struct result *result_of(struct node *n, const char *id, const char *subject) {
        for (size_t i = 0; i < n->rep.n_results; i++)
                if (!strcmp(n->rep.results[i].check->id, id) && !strcmp(n->rep.results[i].subject, subject))
                        return &n->rep.results[i];
        fail_msg("no result of %s for %s", id, subject);
        return NULL;
}

static void assert_contains(const char *s, const char *want) {
        if (!s || !strstr(s, want))
                fail_msg("\"%s\" does not contain \"%s\"", s ? s : "(null)", want);
}

static const char *const all_checks[] = {"device.functional", "device.h2d", "device.d2h", "device.memory_bandwidth",
                                          "device.p2p", "pcie.link_under_load"};

static void test_healthy(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        for (size_t c = 0; c < 6; c++)
                run(&n, all_checks[c]);
        assert_int_equal(n.rep.n_results, 12);
        for (size_t i = 0; i < n.rep.n_results; i++)
                if (n.rep.results[i].status != STATUS_PASS)
                        fail_msg("%s %s: %s", n.rep.results[i].check->id, n.rep.results[i].subject,
                                 n.rep.results[i].summary);
        const struct result *r = result_of(&n, "device.h2d", ADDR1);
        assert_contains(r->observed, "55 GB/s (median of 5");
        assert_contains(r->observed, "100% of the 55 GB/s baseline");
        assert_contains(r->expected, "test baseline");
        r = result_of(&n, "pcie.link_under_load", ADDR0);
        assert_contains(r->summary, "link reaches Gen5 x16 under load (lower at idle: power saving)");
        r = result_of(&n, "device.p2p", ADDR0);
        assert_contains(r->observed, "1 of 1 peers verified, 380 GB/s");
        r = result_of(&n, "device.functional", ADDR1);
        assert_contains(r->summary, "allocated 64 MiB");
        node_done(&n);
}

static void test_slow_h2d(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct measurement *m = find(&n, "transfer", "h2d_pinned", 1);
        m->status = STATUS_PASS;
        m->samples[0] = m->samples[1] = m->samples[2] = m->samples[3] = m->samples[4] = 20;
        judge(m, 63.0, 55, 0.9, 0.75);
        run(&n, "device.h2d");
        assert_int_equal(result_of(&n, "device.h2d", ADDR0)->status, STATUS_PASS);
        const struct result *r = result_of(&n, "device.h2d", ADDR1);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_contains(r->observed, "20 GB/s");
        assert_contains(r->observed, "36% of the 55 GB/s baseline");
        assert_non_null(r->remedy);
        node_done(&n);

        /* The benchmark could not allocate on GPU 1: no h2d_pinned, its "setup" says why. */
        node_init(&n);
        m = find(&n, "transfer", "h2d_pinned", 1);
        snprintf(m->name, sizeof(m->name), "setup");
        measurement_fail(m, STATUS_ERROR, "allocating 67108864 bytes: CUDA_ERROR_UNKNOWN");
        run(&n, "device.h2d");
        r = result_of(&n, "device.h2d", ADDR1);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_contains(r->summary, "allocating 67108864 bytes");
        node_done(&n);
}

static void test_wrong_kernel_and_missing_devices(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct measurement *m = find(&n, "functional", "functional", 0);
        snprintf(m->verify_error, sizeof(m->verify_error), "word 7 is 0x00000000, expected 0xf00d0007");
        m->status = STATUS_PASS;
        judge(m, 0, 0, 0.9, 0.8);
        run(&n, "device.functional");
        const struct result *r = result_of(&n, "device.functional", ADDR0);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_contains(r->summary, "wrong kernel result: word 7");
        node_done(&n);

        /* GPU 1 fails to open; then GPU 1 absent from the backend altogether */
        node_init(&n);
        m = find(&n, "functional", "functional", 1);
        snprintf(m->name, sizeof(m->name), "open");
        measurement_fail(m, STATUS_ERROR, "cuDevicePrimaryCtxRetain: CUDA_ERROR_ECC_UNCORRECTABLE");
        run(&n, "device.functional");
        r = result_of(&n, "device.functional", ADDR1);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_contains(r->summary, "cannot open " ADDR1 ": cuDevicePrimaryCtxRetain");
        node_done(&n);

        node_init(&n);
        m = find(&n, "functional", "functional", 1);
        snprintf(m->subject, sizeof(m->subject), "gpu9 (0000:99:00.0)");
        run(&n, "device.functional");
        r = result_of(&n, "device.functional", ADDR1);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_contains(r->summary, "on the PCI bus but the cuda backend does not show it");
        node_done(&n);

        /* a launch that fails is a failure of the GPU, not of the check */
        node_init(&n);
        m = find(&n, "functional", "functional", 1);
        measurement_fail(m, STATUS_ERROR, "cuLaunchKernel: CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)");
        run(&n, "device.functional");
        r = result_of(&n, "device.functional", ADDR1);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_contains(r->summary, "device error: cuLaunchKernel");
        node_done(&n);
}

static void test_probe_timed_out(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        snprintf(n.p.runs[PROBE_TRANSFER].note, sizeof(n.p.runs[0].note), "timed out after 15 s in probe-transfer");
        run(&n, "device.h2d");
        run(&n, "pcie.link_under_load");
        run(&n, "device.memory_bandwidth");
        const struct result *r = result_of(&n, "device.h2d", "host");
        assert_int_equal(r->status, STATUS_ERROR);
        assert_contains(r->summary, "the transfer probe failed: timed out after 15 s in probe-transfer");
        assert_int_equal(result_of(&n, "pcie.link_under_load", "host")->status, STATUS_ERROR);
        assert_int_equal(result_of(&n, "device.memory_bandwidth", ADDR0)->status, STATUS_PASS);
        node_done(&n);
}

static void test_link_under_load(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct measurement *m = find(&n, "pcie", "link_under_load", 1);
        for (size_t i = 0; i < m->n_samples; i++)
                m->samples[i] = 16.0;
        judge(m, 0, 0, 0.9, 0.8);
        run(&n, "pcie.link_under_load");
        const struct result *r = result_of(&n, "pcie.link_under_load", ADDR1);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_contains(r->summary, "link stays at Gen4 x16 under load, below its maximum Gen5");
        assert_contains(r->observed, "highest of 6 readings");
        node_done(&n);

        /* the port above is Gen4: Gen4 under load is the best this link can do */
        node_init(&n);
        struct pci_dev *port = &n.devs[2];
        snprintf(port->addr, sizeof(port->addr), "0000:40:01.0");
        port->have_link = true;
        port->max_speed_mts = port->cur_speed_mts = 16000;
        port->max_width = port->cur_width = 16;
        port->parent = -1;
        n.f.pci.n = 3;
        n.devs[1].parent = 2;
        m = find(&n, "pcie", "link_under_load", 1);
        for (size_t i = 0; i < m->n_samples; i++)
                m->samples[i] = 16.0;
        judge(m, 0, 0, 0.9, 0.8);
        run(&n, "pcie.link_under_load");
        assert_int_equal(result_of(&n, "pcie.link_under_load", ADDR1)->status, STATUS_PASS);
        node_done(&n);

        /* a reading that failed is an error naming the file */
        node_init(&n);
        m = find(&n, "pcie", "link_under_load", 0);
        measurement_fail(m, STATUS_ERROR, "reading /sys/bus/pci/devices/" ADDR0 "/current_link_speed under load: "
                                          "\"Unknown\": the link is down");
        run(&n, "pcie.link_under_load");
        r = result_of(&n, "pcie.link_under_load", ADDR0);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_contains(r->summary, "the link is down");
        node_done(&n);
}

static void test_p2p_faults(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        struct measurement *m = find(&n, "p2p", "write_uni", 0);
        snprintf(m->verify_error, sizeof(m->verify_error), "word 3 on gpu1 (" ADDR1 ") is 0x0, expected 0x9e000003");
        m->status = STATUS_PASS;
        judge(m, 450, 376, 0.85, 0.7);
        m = find(&n, "p2p", "write_uni", 1);
        measurement_fail(m, STATUS_SKIP, "no peer access from gpu1 to gpu0: cuCtxEnablePeerAccess: CUDA_ERROR_PEER_ACCESS_UNSUPPORTED");
        run(&n, "device.p2p");
        const struct result *r = result_of(&n, "device.p2p", ADDR0);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_contains(r->observed, "0 of 1 peers verified");
        assert_contains(r->summary, "word 3 on gpu1");
        /* an NVLink board without peer access is a fault */
        r = result_of(&n, "device.p2p", ADDR1);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_contains(r->observed, "no peer access to gpu0 (" ADDR0 ")");
        node_done(&n);

        /* one GPU: the p2p probe did not run */
        node_init(&n);
        n.p.runs[PROBE_P2P].ran = false;
        snprintf(n.p.runs[PROBE_P2P].not_run, sizeof(n.p.runs[0].not_run), "p2p needs two or more GPUs, 1 probed");
        run(&n, "device.p2p");
        r = result_of(&n, "device.p2p", "host");
        assert_int_equal(r->status, STATUS_SKIP);
        assert_contains(r->summary, "needs two or more GPUs");
        node_done(&n);
}

/* This machine's case: PoCL's CPU device is the only device, and it is not judged. */
static void cpu_only_probes(struct node *n) {
        probes_done(&n->p);
        probes_not_run(&n->p, "");
        n->p.skip_reason[0] = '\0';
        n->p.runs[PROBE_FUNCTIONAL].ran = true;
        n->p.runs[PROBE_FUNCTIONAL].not_run[0] = '\0';
        snprintf(n->p.runs[PROBE_FUNCTIONAL].backend, sizeof(n->p.runs[0].backend), "opencl");
        struct measurement *m = bench_measurement_new(&n->p.rep, "functional", "device", "gpu0", "", true);
        measurement_param(m, "backend", "opencl");
        measurement_param(m, "name", "cpu-haswell-AMD EPYC 7B13");
        measurement_param(m, "pci_bus_id", "%s", "");
        measurement_param(m, "unified_memory", "yes");
        measurement_fail(m, STATUS_SKIP, "opencl device cpu-haswell is not an NVIDIA GPU of this node: not probed");
        n->p.runs[PROBE_FUNCTIONAL].count = 1;
        for (int id = 1; id < _PROBE_COUNT; id++) {
                char why[256];
                assert_true(probes_no_gpu(&n->p, why, sizeof(why)));
                snprintf(n->p.runs[id].not_run, sizeof(n->p.runs[id].not_run), "%.159s", why);
        }
}

static void test_cpu_opencl_device_only(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        n.f.gpus.n = 0; /* no NVIDIA GPU on the bus, like this machine */
        cpu_only_probes(&n);
        for (size_t c = 0; c < 6; c++)
                run(&n, all_checks[c]);
        assert_int_equal(n.rep.n_results, 6);
        for (size_t i = 0; i < n.rep.n_results; i++) {
                assert_int_equal(n.rep.results[i].status, STATUS_SKIP);
                assert_contains(n.rep.results[i].summary,
                                "no GPU device for the probes (only a CPU OpenCL device: cpu-haswell-AMD EPYC 7B13)");
        }
        node_done(&n);

        /* the node has GPUs, yet only the CPU device opened: device.functional errors */
        node_init(&n);
        cpu_only_probes(&n);
        run(&n, "device.functional");
        run(&n, "device.h2d");
        const struct result *r = result_of(&n, "device.functional", "host");
        assert_int_equal(r->status, STATUS_ERROR);
        assert_contains(r->summary, "cannot probe the node's 2 GPU(s): no GPU device for the probes (only a CPU");
        assert_int_equal(result_of(&n, "device.h2d", "host")->status, STATUS_SKIP);
        node_done(&n);
}

static void test_not_run(void **state) {
        (void)state;
        struct node n;
        node_init(&n);
        n.f.probes = NULL;
        run(&n, "device.h2d");
        assert_int_equal(result_of(&n, "device.h2d", "host")->status, STATUS_SKIP);
        node_done(&n);

        node_init(&n);
        probes_done(&n.p);
        probes_not_run(&n.p, "device probes not run: --root names a capture");
        for (size_t c = 0; c < 6; c++)
                run(&n, all_checks[c]);
        assert_int_equal(n.rep.n_results, 6);
        for (size_t i = 0; i < n.rep.n_results; i++) {
                assert_int_equal(n.rep.results[i].status, STATUS_SKIP);
                assert_contains(n.rep.results[i].summary, "--root names a capture");
        }
        node_done(&n);
}

static void test_helpers(void **state) {
        (void)state;
        assert_true(probe_same_bus("0000:1B:00.0", "0000:1b:00.0"));
        assert_true(probe_same_bus("00000000:1b:00.0", "0000:1b:00.0"));
        assert_true(probe_same_bus("1b:00.0", "0000:1b:00.0"));
        assert_false(probe_same_bus("0000:1b:00.0", "0000:2b:00.0"));
        assert_false(probe_same_bus("b:00.0", "0000:1b:00.0"));
        assert_false(probe_same_bus("", "0000:1b:00.0"));
        /* The probes each check judges, from its needs; the functional probe comes with any
         * other, as it finds the GPUs the others measure. */
        const unsigned functional = NEED_PROBE_FUNCTIONAL;
        assert_int_equal(check_find("device.functional")->needs & INPUTS_PROBES, functional);
        assert_int_equal(check_find("device.h2d")->needs & INPUTS_PROBES, functional | NEED_PROBE_TRANSFER);
        assert_int_equal(check_find("device.d2h")->needs & INPUTS_PROBES, functional | NEED_PROBE_TRANSFER);
        assert_int_equal(check_find("pcie.link_under_load")->needs & INPUTS_PROBES, functional | NEED_PROBE_TRANSFER);
        assert_int_equal(check_find("device.memory_bandwidth")->needs & INPUTS_PROBES, functional | NEED_PROBE_MEMORY);
        assert_int_equal(check_find("device.p2p")->needs & INPUTS_PROBES, functional | NEED_PROBE_P2P);
        assert_int_equal(check_find("pcie.link_speed")->needs & INPUTS_PROBES, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_healthy),
                cmocka_unit_test(test_slow_h2d),
                cmocka_unit_test(test_wrong_kernel_and_missing_devices),
                cmocka_unit_test(test_probe_timed_out),
                cmocka_unit_test(test_link_under_load),
                cmocka_unit_test(test_p2p_faults),
                cmocka_unit_test(test_cpu_opencl_device_only),
                cmocka_unit_test(test_not_run),
                cmocka_unit_test(test_helpers),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

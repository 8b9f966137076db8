/* gpuvet serve's pure parts: the Accept negotiation, value formatting, the DCGM units, the
 * exposition of a hand-made sample and its processes (escaped labels, --workload-labels'
 * samples per workload), the check report reader, and the periodic check's series and
 * default deadline (src/serve/). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "core/utf8.h"
#include "metrics/metrics.h"
#include "serve/accept.h"
#include "serve/check_runner.h"
#include "serve/check_status.h"
#include "serve/dcgm_series.h"
#include "serve/exposition.h"
#include "serve/proc_workloads.h"

static enum expo_format fmt_of(const char *h) { return accept_format(h, h ? strlen(h) : 0); }

static void test_accept(void **state) {
        (void)state;
        assert_int_equal(fmt_of(NULL), EXPO_TEXT);
        assert_int_equal(fmt_of(""), EXPO_TEXT);
        assert_int_equal(fmt_of("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                                "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
                         EXPO_OPENMETRICS);
        assert_int_equal(fmt_of("text/plain;version=0.0.4"), EXPO_TEXT);
        assert_int_equal(fmt_of("application/openmetrics-text;q=0.2, text/plain"), EXPO_TEXT);
        assert_int_equal(fmt_of("application/openmetrics-text;q=0.5, */*;q=0.4"), EXPO_OPENMETRICS);
        assert_int_equal(fmt_of("application/openmetrics-text;q=0"), EXPO_TEXT);
        assert_int_equal(fmt_of("APPLICATION/OpenMetrics-Text"), EXPO_OPENMETRICS);
        assert_int_equal(fmt_of("application/openmetrics-text;q=1.5"), EXPO_TEXT); /* not a qvalue */
        assert_int_equal(fmt_of("application/openmetrics-text;q=0.1234"), EXPO_TEXT);
        assert_int_equal(fmt_of("application/openmetrics-textual"), EXPO_TEXT);
        assert_string_equal(expo_content_type(EXPO_TEXT), "text/plain; version=0.0.4; charset=utf-8");
}

static void test_values(void **state) {
        (void)state;
        char b[32];
        expo_format_value(b, sizeof(b), 69.62);
        assert_string_equal(b, "69.62");
        expo_format_value(b, sizeof(b), 1980);
        assert_string_equal(b, "1980");
        expo_format_value(b, sizeof(b), 0.1 + 0.2); /* needs 17 digits to read back */
        assert_string_equal(b, "0.30000000000000004");
        expo_format_value(b, sizeof(b), 1.0 / 0.0);
        assert_string_equal(b, "+Inf");
}

static void test_dcgm_units(void **state) {
        (void)state;
        const struct metric *sm = metric_lookup("clock_sm_hertz");
        const struct metric *fb = metric_lookup("memory_used_bytes");
        const struct metric *viol = metric_lookup("clocks_event_sw_power_cap_seconds");
        const struct metric *name = metric_lookup("name");
        assert_non_null(sm);
        assert_non_null(fb);
        assert_non_null(viol);
        assert_non_null(name);
        assert_true(dcgm_series_exported(sm));
        assert_string_equal(dcgm_series_unit(sm), "MHz");
        assert_true(dcgm_series_scale(sm) == 1e-6);
        assert_string_equal(dcgm_series_unit(fb), "MiB");
        /* DCGM >= 4.1 and dcgm-exporter count the violation times in ns (dcgm_fields.h). */
        assert_string_equal(dcgm_series_unit(viol), "ns");
        assert_true(dcgm_series_value(viol, 200740215123e-9) == 200740215123.0);
        assert_string_equal(dcgm_series_type(viol), "counter");
        assert_false(dcgm_series_exported(name)); /* text: a label, not a series */

        /* Energy: joules in the registry, whole millijoules in DCGM's field. 60480123457 mJ
         * * 0.001 * 1000 is not 60480123457 in doubles for every value; the series is. */
        const struct metric *energy = metric_lookup("energy_consumption_joules");
        assert_non_null(energy);
        assert_true(dcgm_series_exported(energy));
        assert_string_equal(dcgm_series_unit(energy), "mJ");
        assert_string_equal(dcgm_series_type(energy), "counter");
        unsigned long long misses = 0;
        for (unsigned long long mj = 60480000000ULL; mj < 60480000000ULL + 100000; mj++) {
                double v = dcgm_series_value(energy, (double)mj * energy->scale);
                misses += v != (double)mj;
        }
        assert_int_equal(misses, 0);
        assert_true(dcgm_series_value(sm, 1980e6) == 1980.0);
        const struct metric *crc = metric_lookup("nvlink_crc_flit_errors_total");
        assert_non_null(crc);
        assert_string_equal(dcgm_series_type(crc), "counter");
        assert_null(dcgm_series_unit(crc));
}

static void test_render(void **state) {
        (void)state;
        struct nvml_gpu g[2];
        memset(g, 0, sizeof(g));
        struct nvml_facts f = {.n_gpus = 2, .gpus = g};
        for (unsigned i = 0; i < 2; i++) {
                g[i].index = i;
                g[i].handle.state = NV_OK;
                g[i].name.state = NV_OK;
                snprintf(g[i].name.v, sizeof(g[i].name.v), "Model \"X\"");
                g[i].minor_number.state = NV_OK;
                g[i].minor_number.v = i;
                g[i].pci_bus_id.state = NV_OK;
                snprintf(g[i].pci_bus_id.v, sizeof(g[i].pci_bus_id.v), "0000:1b:00.0");
        }
        g[0].temp_c.state = NV_OK;
        g[0].temp_c.v = 55;
        g[1].temp_c.state = NV_ERROR; /* no value: no sample, never 0 */
        g[1].timed_out = true;
        char *body;
        size_t len;
        assert_int_equal(expo_render_sample(&f, NULL, "h", EXPO_TEXT, false, &body, &len), 0);
        assert_non_null(strstr(body, "# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n"));
        assert_non_null(strstr(body, "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"\",pci_bus_id=\"00000000:1B:00.0\","
                                     "device=\"nvidia0\",modelName=\"Model \\\"X\\\"\",Hostname=\"h\"} 55\n"));
        assert_null(strstr(body, "DCGM_FI_DEV_GPU_TEMP{gpu=\"1\""));
        assert_non_null(strstr(body, "gpuvet_gpu_up{gpu=\"1\""));
        assert_non_null(strstr(body, "Hostname=\"h\"} 0\n"));
        assert_null(strstr(body, "DCGM_FI_DRIVER_VERSION")); /* the version unread: no label */
        free(body);
        /* The driver version NVML gives: dcgm-exporter's label after Hostname on the DCGM
         * series, none on gpuvet's own. */
        f.driver_version.state = NV_OK;
        snprintf(f.driver_version.v, sizeof(f.driver_version.v), "550.54.15");
        assert_int_equal(expo_render_sample(&f, NULL, "h", EXPO_TEXT, false, &body, &len), 0);
        assert_non_null(strstr(body, "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"\",pci_bus_id=\"00000000:1B:00.0\","
                                     "device=\"nvidia0\",modelName=\"Model \\\"X\\\"\",Hostname=\"h\","
                                     "DCGM_FI_DRIVER_VERSION=\"550.54.15\"} 55\n"));
        assert_non_null(strstr(body, "gpuvet_gpu_up{gpu=\"1\",UUID=\"\",pci_bus_id=\"00000000:1B:00.0\","
                                     "device=\"nvidia1\",modelName=\"Model \\\"X\\\"\",Hostname=\"h\"} 0\n"));
        free(body);
        f.driver_version.state = NV_UNREAD;
        /* stale: no value at all, every GPU down */
        assert_int_equal(expo_render_sample(&f, NULL, "h", EXPO_TEXT, true, &body, &len), 0);
        assert_null(strstr(body, "DCGM_"));
        assert_null(strstr(body, "} 1\n"));
        free(body);
        char tail[EXPO_TAIL_MAX];
        size_t n = expo_render_tail(tail, sizeof(tail), EXPO_OPENMETRICS, 1.5, false);
        assert_int_equal(n, strlen(tail));
        assert_non_null(strstr(tail, "gpuvet_sampler_up 0\n"));
        assert_non_null(strstr(tail, "gpuvet_sample_age_seconds 1.5\n"));
        assert_true(n > 6 && strcmp(tail + n - 6, "# EOF\n") == 0);
}

/* Count of non-overlapping occurrences of needle in hay. */
static int count_of(const char *hay, const char *needle) {
        int n = 0;
        for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

static void test_processes(void **state) {
        (void)state;
        struct nvml_gpu g[3];
        memset(g, 0, sizeof(g));
        struct nvml_facts f = {.n_gpus = 3, .gpus = g};
        for (unsigned i = 0; i < 3; i++) {
                g[i].index = i;
                g[i].handle.state = NV_OK;
                g[i].temp_c.state = NV_OK;
                g[i].temp_c.v = 40 + i;
        }
        struct gpu_procs *procs = calloc(3, sizeof(*procs));
        assert_non_null(procs);
        /* GPU 0: a process naming itself with a quote and a backslash, in a pod; another
         * process of the same container; one whose memory NVML does not know. */
        procs[0].known = true;
        procs[0].count = 3;
        procs[0].n = 3;
        procs[0].v = calloc(3, sizeof(*procs[0].v));
        procs[1].v = calloc(2, sizeof(*procs[1].v));
        assert_true(procs[0].v && procs[1].v);
        struct attributed_proc *p = &procs[0].v[0];
        p->pid = 10;
        p->used_bytes = 1024;
        snprintf(p->process, sizeof(p->process), "a\"b\\c");
        snprintf(p->user, sizeof(p->user), "alice");
        snprintf(p->w.pod, sizeof(p->w.pod), "web-1");
        snprintf(p->w.pod_namespace, sizeof(p->w.pod_namespace), "prod");
        snprintf(p->w.container, sizeof(p->w.container), "app");
        snprintf(p->w.pod_uid, sizeof(p->w.pod_uid), "0f2b6e1c-4d3a-4b8e-9c1d-2a3b4c5d6e7f");
        procs[0].v[1] = *p;
        procs[0].v[1].pid = 11;
        procs[0].v[2].pid = 12;
        procs[0].v[2].used_bytes = ~0ULL;
        /* SM shares: 10 sampled at 55 %, 11 unknown, 12 not sampled (0); GPU 1's job at 7 %. */
        procs[0].v[0].sm_pct = 55;
        procs[0].v[1].sm_pct = -1;
        /* GPU 1: a Slurm job and a pod whose names are unknown (no labels from it). */
        procs[1].known = true;
        procs[1].count = 2;
        procs[1].n = 2;
        procs[1].v[0].pid = 20;
        procs[1].v[0].used_bytes = 2048;
        snprintf(procs[1].v[0].w.slurm_job, sizeof(procs[1].v[0].w.slurm_job), "4242");
        procs[1].v[1].pid = 21;
        procs[1].v[1].used_bytes = 4096;
        procs[1].v[0].sm_pct = 7;
        procs[1].v[1].sm_pct = -1;
        snprintf(procs[1].v[1].w.pod_uid, sizeof(procs[1].v[1].w.pod_uid), "5a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d");
        /* GPU 2: NVML gave no list. */
        char *body;
        size_t len;
        assert_int_equal(expo_render_processes(&f, procs, "h", EXPO_TEXT, &body, &len), 0);
        assert_int_equal(strlen(body), len);
        assert_non_null(strstr(body, "gpuvet_gpu_processes{gpu=\"0\",UUID=\"\",pci_bus_id=\"\",device=\"\","
                                     "modelName=\"\",Hostname=\"h\"} 3\n"));
        assert_null(strstr(body, "gpuvet_gpu_processes{gpu=\"2\""));
        assert_non_null(strstr(body, ",pid=\"10\",process=\"a\\\"b\\\\c\",user=\"alice\",slurm_job=\"\",pod=\"web-1\","
                                     "namespace=\"prod\",container=\"app\",container_id=\"\"} 1024\n"));
        assert_null(strstr(body, "gpuvet_process_gpu_memory_bytes{gpu=\"0\",UUID=\"\",pci_bus_id=\"\",device=\"\","
                                 "modelName=\"\",Hostname=\"h\",pid=\"12\"")); /* unknown memory: no sample */
        assert_int_equal(count_of(body, "gpuvet_process_sm_utilization_percent{"), 3);
        assert_non_null(strstr(body, "# TYPE gpuvet_process_sm_utilization_percent gauge\n"));
        assert_non_null(strstr(body, "modelName=\"\",Hostname=\"h\",pid=\"10\",process=\"a\\\"b\\\\c\",user=\"alice\","
                                     "slurm_job=\"\",pod=\"web-1\",namespace=\"prod\",container=\"app\",container_id=\"\"} 55\n"));
        assert_non_null(strstr(body, ",pid=\"12\",process=\"\",user=\"\",slurm_job=\"\",pod=\"\",namespace=\"\","
                                     "container=\"\",container_id=\"\"} 0\n"));
        assert_non_null(strstr(body, ",slurm_job=\"4242\",pod=\"\",namespace=\"\",container=\"\",container_id=\"\"} 7\n"));
        assert_non_null(strstr(body, ",pid=\"20\",process=\"\",user=\"\",slurm_job=\"4242\",pod=\"\""));
        assert_int_equal(count_of(body, "gpuvet_process_gpu_memory_bytes{"), 4);
        free(body);
        /* --workload-labels: GPU 0's two processes are one workload; GPU 1 has the job only;
         * GPU 2 none. */
        assert_int_equal(expo_render_sample_workloads(&f, NULL, procs, "h", EXPO_TEXT, false, &body, &len), 0);
        assert_int_equal(count_of(body, "DCGM_FI_DEV_GPU_TEMP{"), 3);
        assert_non_null(strstr(body, "Hostname=\"h\",container=\"app\",namespace=\"prod\",pod=\"web-1\"} 40\n"));
        assert_non_null(strstr(body, "DCGM_FI_DEV_GPU_TEMP{gpu=\"1\",UUID=\"\",pci_bus_id=\"\",device=\"\",modelName=\"\","
                                     "Hostname=\"h\",hpc_job=\"4242\"} 41\n"));
        assert_non_null(strstr(body, "Hostname=\"h\"} 42\n"));
        assert_null(strstr(body, "gpuvet_gpu_up{gpu=\"0\",UUID=\"\",pci_bus_id=\"\",device=\"\",modelName=\"\",Hostname=\"h\","));
        free(body);
        /* A Slurm job inside a pod: dcgm-exporter's order, by name. */
        snprintf(procs[0].v[1].w.slurm_job, sizeof(procs[0].v[1].w.slurm_job), "7");
        assert_int_equal(expo_render_sample_workloads(&f, NULL, procs, "h", EXPO_TEXT, false, &body, &len), 0);
        assert_non_null(strstr(body, "Hostname=\"h\",container=\"app\",hpc_job=\"7\",namespace=\"prod\",pod=\"web-1\"} 40\n"));
        assert_int_equal(count_of(body, "DCGM_FI_DEV_GPU_TEMP{"), 4);
        free(body);
        /* Stale: no DCGM sample at all, labelled or not. */
        assert_int_equal(expo_render_sample_workloads(&f, NULL, procs, "h", EXPO_TEXT, true, &body, &len), 0);
        assert_null(strstr(body, "DCGM_"));
        free(body);
        gpu_procs_free(procs, 3);
}

/* Every byte of a body is valid UTF-8. */
static bool body_is_utf8(const char *body) {
        for (const unsigned char *p = (const unsigned char *)body; *p;) {
                size_t n = utf8_sequence(p);
                if (n == 0)
                        return false;
                p += n;
        }
        return true;
}

/* A process name that is not UTF-8 (anyone may set one; the kernel cuts a non-ASCII comm
 * mid-character at 15 bytes) is written with U+FFFD: Prometheus drops a scrape with one
 * invalid label value, the node's every series with it. */
/* Two GPUs with their identity, handle read. */
static void known_pair(struct nvml_gpu *g) {
        memset(g, 0, 2 * sizeof(*g));
        for (unsigned i = 0; i < 2; i++) {
                g[i].index = i;
                g[i].handle.state = NV_OK;
                g[i].uuid.state = NV_OK;
                snprintf(g[i].uuid.v, sizeof(g[i].uuid.v), "GPU-%u", i);
                g[i].name.state = NV_OK;
                snprintf(g[i].name.v, sizeof(g[i].name.v), "M");
                g[i].pci_bus_id.state = NV_OK;
                snprintf(g[i].pci_bus_id.v, sizeof(g[i].pci_bus_id.v), "0000:%02x:00.0", 0x1b + i);
                g[i].minor_number.state = NV_OK;
                g[i].minor_number.v = i;
        }
}

/* GPUs seen before keep their labels: a lost one (no handle, nothing read) and one NVML
 * no longer counts are gpuvet_gpu_up 0 under the UUID, bus id, device and model they had
 * (review N10, N16). */
static void test_known_gpus(void **state) {
        (void)state;
        struct nvml_gpu g[2];
        known_pair(g);
        struct nvml_facts f = {.n_gpus = 2, .gpus = g};
        struct expo_known_gpus known = {0};
        assert_int_equal(expo_known_learn(&known, &f), 0);
        assert_int_equal(expo_known_learn(&known, &f), 0); /* once per UUID */
        assert_int_equal(known.n, 2);
        static const char up1[] = "gpuvet_gpu_up{gpu=\"1\",UUID=\"GPU-1\",pci_bus_id=\"00000000:1C:00.0\","
                                  "device=\"nvidia1\",modelName=\"M\",Hostname=\"h\"} 0\n";
        /* GPU 1 lost: its handle fails, so nothing of it is read. */
        memset(&g[1], 0, sizeof(g[1]));
        g[1].index = 1;
        g[1].handle.state = NV_ERROR;
        char *body;
        size_t len;
        assert_int_equal(expo_render_sample_known(&f, NULL, NULL, &known, "h", EXPO_TEXT, false, &body, &len), 0);
        assert_non_null(strstr(body, up1));
        assert_non_null(strstr(body, "gpuvet_gpu_up{gpu=\"0\",UUID=\"GPU-0\""));
        assert_null(strstr(body, "UUID=\"\""));
        free(body);
        /* Without what was seen: the lost GPU's labels are empty (as before). */
        assert_int_equal(expo_render_sample(&f, NULL, "h", EXPO_TEXT, false, &body, &len), 0);
        assert_non_null(strstr(body, "gpuvet_gpu_up{gpu=\"1\",UUID=\"\""));
        free(body);
        /* nvmlDeviceGetCount_v2 fails: no GPU in the round, both kept, once each, at 0. */
        struct nvml_facts none = {.n_gpus = 0};
        assert_int_equal(expo_render_sample_known(&none, NULL, NULL, &known, "h", EXPO_OPENMETRICS, false, &body, &len),
                         0);
        assert_non_null(strstr(body, "# TYPE gpuvet_gpu_up gauge\n"));
        assert_non_null(strstr(body, up1));
        assert_non_null(strstr(body, "gpuvet_gpu_up{gpu=\"0\",UUID=\"GPU-0\""));
        assert_null(strstr(body, "} 1\n"));
        free(body);
        /* Re-enumerated: GPU-1 now at index 0 and GPU-0 gone; GPU-1 is not repeated, GPU-0
         * keeps index 0 under its own UUID. */
        known_pair(g);
        g[0] = g[1];
        g[0].index = 0;
        struct nvml_facts one = {.n_gpus = 1, .gpus = g};
        assert_int_equal(expo_render_sample_known(&one, NULL, NULL, &known, "h", EXPO_TEXT, false, &body, &len), 0);
        assert_non_null(strstr(body, "gpuvet_gpu_up{gpu=\"0\",UUID=\"GPU-1\""));
        assert_non_null(strstr(body, "gpuvet_gpu_up{gpu=\"0\",UUID=\"GPU-0\""));
        const char *first = strstr(body, "UUID=\"GPU-1\"");
        assert_null(strstr(first + 1, "UUID=\"GPU-1\""));
        free(body);
        expo_known_done(&known);
        assert_int_equal(known.n, 0);
}

static void test_label_utf8(void **state) {
        (void)state;
        struct nvml_gpu g;
        memset(&g, 0, sizeof(g));
        g.handle.state = NV_OK;
        g.name.state = NV_OK;
        snprintf(g.name.v, sizeof(g.name.v), "NVIDIA H100 \xc3"); /* cut as the kernel cuts */
        struct nvml_facts f = {.n_gpus = 1, .gpus = &g};
        struct gpu_procs *procs = calloc(1, sizeof(*procs));
        assert_non_null(procs);
        procs[0].known = true;
        procs[0].count = procs[0].n = 2;
        procs[0].v = calloc(2, sizeof(*procs[0].v));
        assert_non_null(procs[0].v);
        procs[0].v[0].pid = 5001;
        procs[0].v[0].used_bytes = 1024;
        snprintf(procs[0].v[0].process, sizeof(procs[0].v[0].process), "\xff\xfe" "evil");
        procs[0].v[1].pid = 5002;
        procs[0].v[1].used_bytes = 2048;
        /* './\xc3\xa9...' cut at 15 bytes: seven whole 'é' and the first byte of the eighth */
        snprintf(procs[0].v[1].process, sizeof(procs[0].v[1].process),
                 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3");
        char *body;
        size_t len;
        assert_int_equal(expo_render_processes(&f, procs, "h\x80st", EXPO_TEXT, &body, &len), 0);
        assert_true(body_is_utf8(body));
        assert_non_null(strstr(body, ",pid=\"5001\",process=\"\xEF\xBF\xBD\xEF\xBF\xBD" "evil\","));
        assert_non_null(strstr(body, ",pid=\"5002\",process=\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                                     "\xc3\xa9\xEF\xBF\xBD\","));
        assert_non_null(strstr(body, "modelName=\"NVIDIA H100 \xEF\xBF\xBD\",Hostname=\"h\xEF\xBF\xBDst\""));
        free(body);
        gpu_procs_free(procs, 1);
}

static void test_check_report(void **state) {
        (void)state;
        const char *doc = "{\"schema\":\"gpuvet.report/1\",\"checks\":[{\"id\":\"b\",\"status\":\"pass\"},"
                          "{\"id\":\"a\",\"status\":\"skip\"},{\"id\":\"b\",\"status\":\"fail\"},"
                          "{\"id\":\"b\",\"status\":\"warn\"}]}";
        struct check_status_set set;
        char err[256] = "";
        assert_int_equal(check_status_parse(doc, strlen(doc), &set, err, sizeof(err)), 0);
        assert_int_equal(set.n, 2);
        assert_string_equal(set.items[0].id, "a");
        assert_int_equal(set.items[0].status, STATUS_SKIP);
        assert_string_equal(set.items[1].id, "b");
        assert_int_equal(set.items[1].status, STATUS_FAIL);
        check_status_done(&set);
        const char *bad[] = {"", "{", "[]", "{\"schema\":\"gpuvet.fleet/1\",\"checks\":[]}",
                             "{\"schema\":\"gpuvet.report/1\"}",
                             "{\"schema\":\"gpuvet.report/1\",\"checks\":[{\"id\":\"a\",\"status\":\"ok\"}]}",
                             "{\"schema\":\"gpuvet.report/1\",\"checks\":[{\"id\":7,\"status\":\"pass\"}]}"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                err[0] = '\0';
                assert_int_equal(check_status_parse(bad[i], strlen(bad[i]), &set, err, sizeof(err)), -EINVAL);
                assert_true(err[0] != '\0');
        }
}

/* The check series of a view, rendered in fmt, into a malloc'd string. */
static char *render_checks(const struct check_view *v, enum expo_format fmt) {
        char *body = NULL;
        size_t len = 0;
        assert_int_equal(expo_render_checks(v, fmt, &body, &len), 0);
        assert_int_equal(strlen(body), len);
        return body;
}

static void test_check_runs(void **state) {
        (void)state;
        struct check_view v = {.state = CHECK_REPORT_ABSENT, .runs = {.periodic = true}};
        /* Before the first run: down, every result at 0, no time. */
        char *b = render_checks(&v, EXPO_TEXT);
        assert_non_null(strstr(b, "gpuvet_check_report_up 0\n"));
        assert_non_null(strstr(b, "# TYPE gpuvet_check_runs_total counter\n"));
        assert_non_null(strstr(b, "gpuvet_check_runs_total{result=\"ok\"} 0\ngpuvet_check_runs_total{result=\"timeout\"} 0\n"
                                  "gpuvet_check_runs_total{result=\"failed\"} 0\n"));
        assert_null(strstr(b, "gpuvet_check_last_run_timestamp_seconds"));
        assert_null(strstr(b, "gpuvet_check_duration_seconds"));
        free(b);
        /* After a timeout: still down, no statuses, the run's time and duration. */
        v.state = CHECK_REPORT_UNREADABLE;
        v.runs.total[CHECK_RUN_OK] = 3;
        v.runs.total[CHECK_RUN_TIMEOUT] = 1;
        v.runs.last_run_s = 1795622717.5;
        v.runs.last_duration_s = 2.25;
        b = render_checks(&v, EXPO_OPENMETRICS);
        assert_non_null(strstr(b, "gpuvet_check_report_up 0\n"));
        assert_non_null(strstr(b, "# TYPE gpuvet_check_runs counter\n"));
        assert_non_null(strstr(b, "gpuvet_check_runs_total{result=\"ok\"} 3\n"));
        assert_non_null(strstr(b, "gpuvet_check_runs_total{result=\"timeout\"} 1\n"));
        assert_non_null(strstr(b, "gpuvet_check_last_run_timestamp_seconds 1795622717.5\n"));
        assert_non_null(strstr(b, "gpuvet_check_duration_seconds 2.25\n"));
        assert_null(strstr(b, "gpuvet_check_status{"));
        free(b);
        /* --check-report's views have no run series. */
        struct check_view file = {.state = CHECK_REPORT_ABSENT};
        b = render_checks(&file, EXPO_TEXT);
        assert_null(strstr(b, "gpuvet_check_runs"));
        assert_null(strstr(b, "gpuvet_check_last_run"));
        free(b);
}

static void test_check_timeout_default(void **state) {
        (void)state;
        /* NVML's defaults: init 20 s + 4 calls of 2 s + one GPU's 20 s, past the 30 s watchdog. */
        assert_int_equal(check_runner_default_timeout_s(LEVEL_QUICK, NULL, 30), 48 + 10);
        /* Short NVML deadlines: the watchdog bounds it. */
        struct nvml_deadlines dl = {.call_ms = 500, .gpu_ms = 2000, .init_ms = 1000};
        assert_int_equal(check_runner_default_timeout_s(LEVEL_QUICK, &dl, 30), 30 + 10);
        /* Standard: the probes (15 + 15 + 10 + 15 s) and the container run (60 s) on top. */
        assert_int_equal(check_runner_default_timeout_s(LEVEL_STANDARD, NULL, 30), 48 + 10 + 55 + 60);
        /* Huge deadlines are capped at a day. */
        struct nvml_deadlines huge = {.call_ms = 4000000000u, .gpu_ms = 4000000000u, .init_ms = 4000000000u};
        assert_int_equal(check_runner_default_timeout_s(LEVEL_QUICK, &huge, 30), 86400);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_accept),     cmocka_unit_test(test_values),
                cmocka_unit_test(test_dcgm_units), cmocka_unit_test(test_render),
                cmocka_unit_test(test_check_report), cmocka_unit_test(test_processes),
                cmocka_unit_test(test_check_runs),   cmocka_unit_test(test_check_timeout_default),
                cmocka_unit_test(test_label_utf8), cmocka_unit_test(test_known_gpus),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

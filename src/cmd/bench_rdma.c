/* gpuvet bench rdma: RDMA write and read bandwidth and write latency between two nodes
 * through libibverbs, as perftest's ib_write_bw / ib_read_bw / ib_write_lat measure them,
 * every size's data verified; the largest size's bandwidth judged against the port's link
 * rate (docs/bench.md, "rdma"). One node runs --server, the other --peer HOST. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/baselines.h"
#include "bench/rdma_conn.h"
#include "bench/rdma_run.h"
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/specs.h"
#include "core/deadline.h"
#include "core/fsroot.h"
#include "sys/rdma.h"
#include "report/rdma_report.h"

#define DEFAULT_STEP_S 60
#define DEFAULT_CONNECT_S 30
#define DEFAULT_ACCEPT_S 600

struct rdma_cli {
        struct rdma_options run;
        char device[64];
        const char *json_path;
        bool quiet, server_given, size_given, all_given;
        unsigned step_s, connect_s;
        char host[256];
};

enum rdma_opt {
        RDMA_OPT_PORT = 'p', RDMA_OPT_DEVICE = 'd', RDMA_OPT_IB_PORT = 'i', RDMA_OPT_GID_INDEX = 'x',
        RDMA_OPT_ALL = 'a', RDMA_OPT_SIZE = 's', RDMA_OPT_ITERS = 'n', RDMA_OPT_TX_DEPTH = 't', RDMA_OPT_JSON = 'j',
        RDMA_OPT_QUIET = 'q',
        RDMA_OPT_SERVER = 0x100, RDMA_OPT_PEER, RDMA_OPT_TESTS, RDMA_OPT_LAT_ITERS, RDMA_OPT_GPU,
        RDMA_OPT_CONNECT_TIMEOUT, RDMA_OPT_STEP_TIMEOUT,
};

/* "mlx5_0" or "mlx5_0:2" (perftest's -d, with the port as ibv_devinfo writes it). */
static int device_option(struct rdma_cli *o, const char *arg) {
        const char *colon = strchr(arg, ':');
        size_t n = colon ? (size_t)(colon - arg) : strlen(arg);
        if (n == 0 || n >= sizeof(o->device))
                return cmd_usage_error("bench rdma", "--device: expected a device name such as mlx5_0, not \"%s\"", arg);
        memcpy(o->device, arg, n);
        o->device[n] = 0;
        o->run.device = o->device;
        if (colon && !cmd_parse_uint(colon + 1, 1, 255, &o->run.ib_port))
                return cmd_usage_error("bench rdma", "--device: expected NAME:PORT with a port 1-255, not \"%s\"", arg);
        return -1;
}

static int tests_option(struct rdma_plan *p, const char *arg) {
        p->tests = 0;
        if (strcmp(arg, "all") == 0) {
                p->tests = (1u << RDMA_TEST_COUNT) - 1;
                return -1;
        }
        char copy[128];
        snprintf(copy, sizeof(copy), "%s", arg);
        for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                enum rdma_test t = rdma_test_from_name(tok, strlen(tok));
                if (t == RDMA_TEST_INVALID)
                        return cmd_usage_error("bench rdma", "--tests: no test \"%s\" (write_bw, read_bw, write_lat, all)",
                                               tok);
                p->tests |= 1u << t;
        }
        if (!p->tests)
                return cmd_usage_error("bench rdma", "--tests: name at least one test");
        return -1;
}

static int rdma_option(int id, const struct opt_value *v, void *ctx) {
        struct rdma_cli *o = ctx;
        struct rdma_plan *p = &o->run.plan;
        switch ((enum rdma_opt)id) {
        case RDMA_OPT_SERVER: o->server_given = true; break;
        case RDMA_OPT_PEER:
                if (rdma_parse_peer(v->text, o->host, sizeof(o->host), &o->run.port, o->run.port) < 0)
                        return cmd_usage_error("bench rdma", "--peer: expected HOST, HOST:PORT or [IPV6]:PORT, not \"%s\"",
                                               v->text);
                o->run.peer_host = o->host;
                break;
        case RDMA_OPT_PORT: o->run.port = (unsigned)v->n; break;
        case RDMA_OPT_DEVICE: return device_option(o, v->text);
        case RDMA_OPT_IB_PORT: o->run.ib_port = (unsigned)v->n; break;
        case RDMA_OPT_GID_INDEX: o->run.gid_index = (int)v->n; break;
        case RDMA_OPT_ALL: o->all_given = true; break;
        case RDMA_OPT_SIZE:
                p->min_bytes = p->max_bytes = v->n;
                o->size_given = true;
                break;
        case RDMA_OPT_TESTS: return tests_option(p, v->text);
        case RDMA_OPT_ITERS: p->iters = (unsigned)v->n; break;
        case RDMA_OPT_LAT_ITERS: p->lat_iters = (unsigned)v->n; break;
        case RDMA_OPT_TX_DEPTH: p->tx_depth = (unsigned)v->n; break;
        case RDMA_OPT_GPU: o->run.gpu = (int)v->n; break;
        case RDMA_OPT_CONNECT_TIMEOUT: o->connect_s = opt_seconds(v); break;
        case RDMA_OPT_STEP_TIMEOUT: o->step_s = opt_seconds(v); break;
        case RDMA_OPT_JSON: o->json_path = v->text; break;
        case RDMA_OPT_QUIET: o->quiet = true; break;
        }
        return -1;
}

#define DAY_MS (24ull * 3600 * 1000)

static const struct opt rdma_options[] = {
        {.name = "server", .kind = ARG_FLAG, .id = RDMA_OPT_SERVER, .help = "wait for a client on --port"},
        {.name = "peer", .kind = ARG_HOST, .id = RDMA_OPT_PEER, .metavar = "HOST[:PORT]",
         .help = "the server to run against"},
        {.name = "port", .letter = 'p', .kind = ARG_NUMBER, .min = 1, .max = 65535, .def = "18515, perftest's",
         .help = "TCP port of the handshake"},
        {.name = "device", .letter = 'd', .kind = ARG_TEXT, .metavar = "NAME[:PORT]",
         .def = "the first with an ACTIVE port", .help = "RDMA device and port"},
        {.name = "ib-port", .letter = 'i', .kind = ARG_NUMBER, .min = 1, .max = 255,
         .def = "1, or the first ACTIVE one", .help = "the device's port"},
        {.name = "gid-index", .letter = 'x', .kind = ARG_NUMBER, .min = 0, .max = 255,
         .def = "RoCE v2 with an IPv4 address, as perftest", .help = "GID index"},
        {.name = "all", .letter = 'a', .kind = ARG_FLAG, .help = "sweep 2 bytes to 8 MiB in powers of two (the default)"},
        {.name = "size", .letter = 's', .kind = ARG_SIZE, .min = 1, .max = 512ull << 20,
         .help = "one message size instead (K, M are 1024-based; at most 512M)"},
        {.name = "tests", .kind = ARG_LIST, .id = RDMA_OPT_TESTS, .choices = "write_bw|read_bw|write_lat|all",
         .def = "all", .help = "write_bw, read_bw, write_lat or all; comma-separated"},
        {.name = "iters", .letter = 'n', .kind = ARG_NUMBER, .min = 2, .max = 10000000, .def = "5000",
         .help = "bandwidth messages per size"},
        {.name = "lat-iters", .kind = ARG_NUMBER, .id = RDMA_OPT_LAT_ITERS, .min = 2, .max = 10000000, .def = "1000",
         .help = "latency round trips per size"},
        {.name = "tx-depth", .letter = 't', .kind = ARG_NUMBER, .min = 1, .max = 4096, .def = "128",
         .help = "bandwidth requests in flight"},
        {.name = "gpu", .kind = ARG_NUMBER, .id = RDMA_OPT_GPU, .min = 0, .max = 255,
         .help = "CUDA device N's memory (GPUDirect RDMA: dma-buf, else nvidia_peermem); write_lat is then left "
                 "out (the CPU cannot poll device memory)"},
        {.name = "connect-timeout", .kind = ARG_DURATION, .id = RDMA_OPT_CONNECT_TIMEOUT, .min = 1000, .max = DAY_MS,
         .def = "30s", .help = "how long the client tries to reach the server"},
        {.name = "step-timeout", .kind = ARG_DURATION, .id = RDMA_OPT_STEP_TIMEOUT, .min = 1000, .max = DAY_MS,
         .def = "60s",
         .help = "each step's deadline: the handshake, each test at each size; a peer silent for longer is a hung "
                 "peer"},
        OPT_JSON("gpuvet.bench-rdma/1"),
        {.name = "quiet", .letter = 'q', .kind = ARG_FLAG, .help = "no text report"},
        {0},
};

const struct cmd_spec cmd_bench_rdma_spec = {
        .name = "bench rdma",
        .synopsis = "--server [OPTIONS]          (on one node)\n--peer HOST[:PORT] [OPTIONS] (on the other)",
        .summary = "RDMA write and read bandwidth and write latency between two nodes over one RC queue pair, as "
                   "perftest's ib_write_bw, ib_read_bw and ib_write_lat report them (Gb/s, Mpps, usec), every "
                   "size's data verified once, the largest size's bandwidth judged against the port's link rate.",
        .description = "The client (--peer) chooses the tests and sizes; the server follows. The options take "
                       "perftest's letters where they mean the same.",
        .opts = rdma_options,
        .notes = "The library is libibverbs.so.1 (rdma-core), or $GPUVET_VERBS_LIB. --data-dir gives baselines.json "
                 "(the thresholds); under --root, the port's rate is read from DIR/sys when verbs' speed code is "
                 "unknown (a fixture).",
        .exit_status = "0 passed or warned, 1 a test failed, gave corrupt data or could not run (no library, no "
                       "device, port down, peer unreachable or hung), 2 usage or bad input (a device or port that "
                       "does not exist), 3 internal error.",
        .timeout_help = "how long the server waits for a client (default: 600s)",
        .no_default_timeout = true,
        .color = true,
        .on_option = rdma_option,
};

/* The port's rate when ibv_query_port's speed code is one rdma_rate.h does not know (XDR
 * and later report through active_speed_ex): ports/N/rate under /sys/class/infiniband, as
 * the network checks read it (sys/rdma.h), which ib_core prints as the data rate from EDR
 * on ("800 Gb/sec (4X XDR)"). Under --root for a fixture. Fills res->rate; false when the
 * file is absent or unreadable. */
static bool sysfs_rate(const char *root, struct rdma_result *res) {
        struct fsroot *fs = NULL;
        if (!res->device[0] || fsroot_open(root ? root : "/", &fs) < 0)
                return false;
        char path[256], v[128];
        snprintf(path, sizeof(path), "sys/class/infiniband/%s/ports/%u/rate", res->device, res->ib_port);
        double gbps = 0;
        unsigned width = 0;
        static char speed[16]; /* res->rate.speed points here: one call per process */
        bool ok = fsroot_read_str(fs, path, v, sizeof(v)) == 0 &&
                  rdma_parse_rate(v, &gbps, &width, speed, sizeof(speed)) == 0 && gbps > 0;
        fsroot_free(fs);
        if (!ok)
                return false;
        res->rate = (struct rdma_link_rate){.lanes = width, .speed = speed[0] ? speed : "?", .signal_gbps = gbps,
                                            .data_gbps = gbps};
        res->have_rate = true;
        res->rate_from_sysfs = true;
        return true;
}

/* The verdicts: every size's data verified, and the largest size's average bandwidth of
 * each bandwidth test against the link's data rate (limits "rdma" of baselines.json). */
static size_t judge(const struct rdma_cli *o, const struct rdma_result *res, const struct bench_limit_set *ls,
                    struct rdma_verdict *v) {
        size_t n = 0;
        if (res->failure != RDMA_OK) {
                v[n] = (struct rdma_verdict){.test = "run", .status = STATUS_ERROR, .observed_gbps = -1, .link_gbps = -1,
                                             .ratio = -1};
                snprintf(v[n].summary, sizeof(v[n].summary), "%.*s", (int)sizeof(v[n].summary) - 1, res->error);
                n++;
        }
        size_t corrupt = 0, checked = 0;
        const char *first = NULL;
        for (size_t i = 0; i < res->n_bw; i++) {
                checked++;
                /* the server cannot check what the client read: its read rows count as checked */
                if (!res->bw[i].verified && !(o->run.server && res->bw[i].test == RDMA_TEST_READ_BW)) {
                        corrupt++;
                        if (!first)
                                first = res->bw[i].verify_error;
                }
        }
        for (size_t i = 0; i < res->n_lat; i++) {
                checked++;
                if (!res->lat[i].verified) {
                        corrupt++;
                        if (!first)
                                first = res->lat[i].verify_error;
                }
        }
        if (checked) {
                struct rdma_verdict *x = &v[n++];
                *x = (struct rdma_verdict){.test = "verification", .status = corrupt ? STATUS_FAIL : STATUS_PASS,
                                           .observed_gbps = -1, .link_gbps = -1, .ratio = -1};
                if (corrupt)
                        snprintf(x->summary, sizeof(x->summary), "%zu of %zu steps moved corrupt data; the first: %s",
                                 corrupt, checked, first ? first : "?");
                else
                        snprintf(x->summary, sizeof(x->summary), "every size's data arrived intact (%zu steps checked)",
                                 checked);
        }
        if (o->run.server)
                return n; /* the client measures and judges the bandwidth */
        for (int t = 0; t < RDMA_TEST_WRITE_LAT; t++) {
                const struct rdma_bw_row *last = NULL;
                for (size_t i = 0; i < res->n_bw; i++)
                        if ((int)res->bw[i].test == t)
                                last = &res->bw[i];
                if (!last)
                        continue;
                struct rdma_verdict *x = &v[n++];
                *x = (struct rdma_verdict){.test = rdma_test_name((enum rdma_test)t), .bytes = last->bytes,
                                           .observed_gbps = last->avg_gbps, .link_gbps = -1, .ratio = -1};
                if (!res->have_rate || res->rate.data_gbps <= 0) {
                        x->status = STATUS_PASS;
                        snprintf(x->summary, sizeof(x->summary),
                                 "%.2f Gb/s at %llu bytes; the port's rate is unknown (active_speed %u), not judged",
                                 last->avg_gbps, (unsigned long long)last->bytes, res->active_speed);
                        continue;
                }
                x->link_gbps = res->rate.data_gbps;
                x->ratio = last->avg_gbps / res->rate.data_gbps;
                x->pass_ratio = ls ? ls->peak.pass_ratio : 0.9;
                x->warn_ratio = ls ? ls->peak.warn_ratio : 0.75;
                x->status = x->ratio >= x->pass_ratio ? STATUS_PASS : x->ratio >= x->warn_ratio ? STATUS_WARN : STATUS_FAIL;
                snprintf(x->summary, sizeof(x->summary),
                         "%.2f Gb/s at %llu bytes = %.0f%% of the link's %.4g Gb/s data rate (%uX %s%s; pass >= %.0f%%, "
                         "warn >= %.0f%%)%s",
                         last->avg_gbps, (unsigned long long)last->bytes, x->ratio * 100, res->rate.data_gbps,
                         res->rate.lanes, res->rate.speed, res->rate_from_sysfs ? ", from sysfs" : "",
                         x->pass_ratio * 100, x->warn_ratio * 100,
                         last->bytes < 65536 ? "; a message this small cannot fill the link: sweep up to MiB sizes" : "");
        }
        return n;
}

int cmd_bench_rdma(int argc, char **argv) {
        struct rdma_cli o = {
                .run = {.port = RDMA_DEFAULT_PORT, .gid_index = -1, .gpu = -1,
                        .plan = {.tests = (1u << RDMA_TEST_COUNT) - 1, .min_bytes = 2, .max_bytes = (uint64_t)8 << 20,
                                 .iters = 5000, .lat_iters = 1000, .tx_depth = 128}},
                .step_s = DEFAULT_STEP_S, .connect_s = DEFAULT_CONNECT_S,
        };
        struct cmd_args args;
        int code = cmd_parse(&cmd_bench_rdma_spec, argc, argv, &o, &args);
        if (code >= 0)
                return code;
        o.run.server = o.server_given;
        if (o.server_given == (o.run.peer_host != NULL))
                return cmd_usage_error("bench rdma", "give either --server (on one node) or --peer HOST (on the other)");
        if (o.size_given && o.all_given)
                return cmd_usage_error("bench rdma", "--size and --all exclude each other");
        o.run.step_ms = o.step_s * 1000.0;
        o.run.connect_ms = o.connect_s * 1000.0;
        o.run.accept_ms = (args.common.timeout_s ? args.common.timeout_s : DEFAULT_ACCEPT_S) * 1000.0;
        if (rdma_plan_check(&o.run.plan) < 0)
                return cmd_usage_error("bench rdma", "the plan is not runnable (check --size, --iters, --tx-depth)");

        double start = monotonic_ms();
        char err[512];
        struct baselines *bl = NULL;
        if (baselines_load(args.common.data_dir, &bl, err, sizeof(err)) < 0) {
                fprintf(stderr, "gpuvet bench rdma: %s\n", err);
                return EXIT_USAGE;
        }
        const struct bench_limit_set *ls = baselines_limits(bl, "rdma");

        struct rdma_result res;
        (void)rdma_run(&o.run, &res);
        if (!res.have_rate && res.device[0])
                (void)sysfs_rate(args.common.root, &res);
        struct rdma_verdict verdicts[8];
        size_t nv = judge(&o, &res, ls, verdicts);
        enum status verdict = STATUS_SKIP;
        for (size_t i = 0; i < nv; i++)
                verdict = status_worse(verdict, verdicts[i].status);
        struct rdma_report rep = {.opt = &o.run, .res = &res, .verdicts = verdicts, .n_verdicts = nv,
                                  .verdict = verdict, .rationale = ls ? ls->rationale : NULL,
                                  .duration_ms = monotonic_ms() - start};
        code = verdict == STATUS_FAIL || verdict == STATUS_ERROR ? EXIT_FAILED : EXIT_PASS;
        if (res.failure == RDMA_FAIL_BAD_INPUT)
                code = EXIT_USAGE;
        bool json_to_stdout = o.json_path && strcmp(o.json_path, "-") == 0;
        if (o.json_path && write_json_output("bench rdma", o.json_path, rdma_report_json(&rep)) != EXIT_PASS)
                code = EXIT_INTERNAL;
        if (!o.quiet && !json_to_stdout) {
                struct text_options text = {.color = text_want_color(stdout)};
                rdma_report_text(stdout, &rep, &text);
        }
        if (res.failure != RDMA_OK)
                fprintf(stderr, "gpuvet bench rdma: %s\n", res.error);
        rdma_result_done(&res);
        baselines_free(bl);
        return code;
}

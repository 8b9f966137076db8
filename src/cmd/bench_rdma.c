/* gpuvet bench rdma: RDMA write and read bandwidth and write latency between two nodes
 * through libibverbs, as perftest's ib_write_bw / ib_read_bw / ib_write_lat measure them,
 * every size's data verified; the largest size's bandwidth judged against the port's link
 * rate (docs/bench.md, "rdma"). One node runs --server, the other --peer HOST. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/baselines.h"
#include "bench/nccl_math.h"
#include "bench/rdma_conn.h"
#include "bench/rdma_run.h"
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "core/deadline.h"
#include "core/fsroot.h"
#include "sys/rdma.h"
#include "report/rdma_report.h"

#define DEFAULT_STEP_S 60
#define DEFAULT_CONNECT_S 30
#define DEFAULT_ACCEPT_S 600
#define MAX_SIZE_BYTES ((size_t)512 << 20)

static const char usage[] =
        "Usage: gpuvet bench rdma --server [OPTIONS]          (on one node)\n"
        "       gpuvet bench rdma --peer HOST[:PORT] [OPTIONS] (on the other)\n"
        "\n"
        "RDMA write and read bandwidth and write latency between two nodes over one RC queue pair,\n"
        "as perftest's ib_write_bw, ib_read_bw and ib_write_lat report them (Gb/s, Mpps, usec), every\n"
        "size's data verified once, the largest size's bandwidth judged against the port's link\n"
        "rate. The client (--peer) chooses the tests and sizes; the server follows.\n"
        "\n"
        "Options (perftest's letters where they mean the same):\n"
        "      --server          wait for a client on --port\n"
        "      --peer HOST[:PORT]  the server to run against\n"
        "  -p, --port N          TCP port of the handshake (default 18515, perftest's)\n"
        "  -d, --device NAME[:PORT]  RDMA device and port (default: the first with an ACTIVE port)\n"
        "  -i, --ib-port N       the device's port (default 1, or the first ACTIVE one)\n"
        "  -x, --gid-index N     GID index (default: RoCE v2 with an IPv4 address, as perftest)\n"
        "  -a, --all             sweep 2 bytes .. 8 MiB in powers of two (the default)\n"
        "  -s, --size SIZE       one message size instead (K, M are 1024-based; at most 512M)\n"
        "      --tests LIST      write_bw, read_bw, write_lat or all (default all)\n"
        "  -n, --iters N         bandwidth messages per size, 2-10000000 (default 5000)\n"
        "      --lat-iters N     latency round trips per size, 2-10000000 (default 1000)\n"
        "  -t, --tx-depth N      bandwidth requests in flight, 1-4096 (default 128)\n"
        "      --gpu N           CUDA device N's memory (GPUDirect RDMA: dma-buf, else nvidia_peermem);\n"
        "                        write_lat is then left out (the CPU cannot poll device memory)\n"
        "      --connect-timeout SEC  how long the client tries to reach the server (default 30)\n"
        "      --step-timeout SEC  each step's deadline: the handshake, each test at each size\n"
        "                        (default 60); a peer silent for longer is a hung peer\n"
        "      --timeout SEC     how long the server waits for a client (default 600)\n"
        "  -j, --json FILE       also write the JSON report (schema gpuvet.bench-rdma/1) to FILE\n"
        "                        (\"-\": standard output, which then holds only the JSON)\n"
        "  -q, --quiet           no text report\n"
        "      --data-dir DIR    baselines.json (the thresholds) from DIR ($GPUVET_DATA_DIR)\n"
        "  -r, --root DIR        read the port's rate under DIR/sys when verbs' speed code is\n"
        "                        unknown (a fixture)\n"
        "  -h, --help            this help\n"
        "\n"
        "The library is libibverbs.so.1 (rdma-core), or $GPUVET_VERBS_LIB.\n"
        "Exit status: 0 passed or warned, 1 a test failed, gave corrupt data or could not run (no\n"
        "library, no device, port down, peer unreachable or hung), 2 usage or bad input (a device\n"
        "or port that does not exist), 3 internal error.\n";

struct rdma_cli {
        struct rdma_options run;
        char device[64];
        const char *json_path;
        bool quiet, server_given, size_given, all_given;
        unsigned step_s, connect_s;
        char host[256];
};

static int rdma_option(int opt, const char *arg, void *ctx) {
        struct rdma_cli *o = ctx;
        struct rdma_plan *p = &o->run.plan;
        unsigned u;
        switch (opt) {
        case 'S': o->server_given = true; break;
        case 'P':
                if (rdma_parse_peer(arg, o->host, sizeof(o->host), &o->run.port, o->run.port) < 0)
                        return cmd_usage_error("bench rdma", "--peer: expected HOST, HOST:PORT or [IPV6]:PORT, not \"%s\"",
                                               arg);
                o->run.peer_host = o->host;
                break;
        case 'p':
                if (!cmd_parse_uint(arg, 1, 65535, &o->run.port))
                        return cmd_usage_error("bench rdma", "--port: expected a TCP port 1-65535, not \"%s\"", arg);
                break;
        case 'd': {
                const char *colon = strchr(arg, ':');
                size_t n = colon ? (size_t)(colon - arg) : strlen(arg);
                if (n == 0 || n >= sizeof(o->device))
                        return cmd_usage_error("bench rdma", "--device: expected a device name such as mlx5_0, not \"%s\"",
                                               arg);
                memcpy(o->device, arg, n);
                o->device[n] = 0;
                o->run.device = o->device;
                if (colon && !cmd_parse_uint(colon + 1, 1, 255, &o->run.ib_port))
                        return cmd_usage_error("bench rdma", "--device: expected NAME:PORT with a port 1-255, not \"%s\"",
                                               arg);
                break;
        }
        case 'i':
                if (!cmd_parse_uint(arg, 1, 255, &o->run.ib_port))
                        return cmd_usage_error("bench rdma", "--ib-port: expected a port 1-255, not \"%s\"", arg);
                break;
        case 'x':
                if (!cmd_parse_uint(arg, 0, 255, &u))
                        return cmd_usage_error("bench rdma", "--gid-index: expected 0-255, not \"%s\"", arg);
                o->run.gid_index = (int)u;
                break;
        case 'a': o->all_given = true; break;
        case 's': {
                size_t v;
                if (nccl_parse_size(arg, &v) < 0 || v < 1 || v > MAX_SIZE_BYTES)
                        return cmd_usage_error("bench rdma", "--size: expected a size 1 to 512M such as 65536 or 1M, not \"%s\"",
                                               arg);
                p->min_bytes = p->max_bytes = v;
                o->size_given = true;
                break;
        }
        case 'E': {
                p->tests = 0;
                if (strcmp(arg, "all") == 0) {
                        p->tests = (1u << RDMA_TEST_COUNT) - 1;
                        break;
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
                break;
        }
        case 'n':
                if (!cmd_parse_uint(arg, 2, 10000000, &p->iters))
                        return cmd_usage_error("bench rdma", "--iters: expected a whole number 2-10000000, not \"%s\"", arg);
                break;
        case 'L':
                if (!cmd_parse_uint(arg, 2, 10000000, &p->lat_iters))
                        return cmd_usage_error("bench rdma", "--lat-iters: expected a whole number 2-10000000, not \"%s\"",
                                               arg);
                break;
        case 't':
                if (!cmd_parse_uint(arg, 1, 4096, &p->tx_depth))
                        return cmd_usage_error("bench rdma", "--tx-depth: expected a whole number 1-4096, not \"%s\"", arg);
                break;
        case 'g':
                if (!cmd_parse_uint(arg, 0, 255, &u))
                        return cmd_usage_error("bench rdma", "--gpu: expected a CUDA device index 0-255, not \"%s\"", arg);
                o->run.gpu = (int)u;
                break;
        case 'C':
                if (!parse_seconds(arg, &o->connect_s) || o->connect_s == 0)
                        return cmd_usage_error("bench rdma", "--connect-timeout: expected seconds 1-86400, not \"%s\"", arg);
                break;
        case 'W':
                if (!parse_seconds(arg, &o->step_s) || o->step_s == 0)
                        return cmd_usage_error("bench rdma", "--step-timeout: expected seconds 1-86400, not \"%s\"", arg);
                break;
        case 'j': o->json_path = arg; break;
        case 'q': o->quiet = true; break;
        }
        return -1;
}

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
        static const struct option own[] = {
                {"server", no_argument, NULL, 'S'},          {"peer", required_argument, NULL, 'P'},
                {"port", required_argument, NULL, 'p'},      {"device", required_argument, NULL, 'd'},
                {"ib-port", required_argument, NULL, 'i'},   {"gid-index", required_argument, NULL, 'x'},
                {"all", no_argument, NULL, 'a'},             {"size", required_argument, NULL, 's'},
                {"tests", required_argument, NULL, 'E'},     {"iters", required_argument, NULL, 'n'},
                {"lat-iters", required_argument, NULL, 'L'}, {"tx-depth", required_argument, NULL, 't'},
                {"gpu", required_argument, NULL, 'g'},       {"connect-timeout", required_argument, NULL, 'C'},
                {"step-timeout", required_argument, NULL, 'W'},
                {"json", required_argument, NULL, 'j'},      {"quiet", no_argument, NULL, 'q'},
                {NULL, 0, NULL, 0},
        };
        static const struct cmd_spec spec = {
                .name = "bench rdma", .usage = usage, .short_opts = "p:d:i:x:as:n:t:j:q", .own = own,
                .no_default_timeout = true, .own_option = rdma_option,
        };
        struct rdma_cli o = {
                .run = {.port = RDMA_DEFAULT_PORT, .gid_index = -1, .gpu = -1,
                        .plan = {.tests = (1u << RDMA_TEST_COUNT) - 1, .min_bytes = 2, .max_bytes = (uint64_t)8 << 20,
                                 .iters = 5000, .lat_iters = 1000, .tx_depth = 128}},
                .step_s = DEFAULT_STEP_S, .connect_s = DEFAULT_CONNECT_S,
        };
        struct cmd_args args;
        int code = cmd_parse(&spec, argc, argv, &o, &args);
        if (code >= 0)
                return code;
        o.run.server = o.server_given;
        if (o.server_given == (o.run.peer_host != NULL))
                return cmd_usage_error("bench rdma", "give either --server (on one node) or --peer HOST (on the other)");
        if (o.size_given && o.all_given)
                return cmd_usage_error("bench rdma", "--size and --all exclude each other");
        if (o.json_path && (code = output_path_usable("bench rdma", "--json", o.json_path)) != 0)
                return code;
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

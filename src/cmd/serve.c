/* gpuvet serve: a Prometheus exporter with dcgm-exporter's metric names and labels
 * (docs/serve.md). The sampler reads the GPUs on its own thread; scrapes are served from
 * the latest round (src/serve/), so a wedged GPU never blocks /metrics. */
#include "cmd/cmd.h"
#include "cmd/nvml_use.h"
#include "cmd/options.h"
#include "cmd/specs.h"
#include "core/array.h"
#include "core/clock.h"
#include "core/fsroot.h"
#include "metrics/metrics.h"
#include "metrics/sampler.h"
#include "serve/body_cache.h"
#include "serve/check_runner.h"
#include "serve/check_watch.h"
#include "serve/dcgm_series.h"
#include "serve/http_server.h"
#include "serve/listen_addr.h"
#include "serve/proc_workloads.h"
#include "serve/web_config.h"
#include "serve/xid_counter.h"
#include "sys/nvml_facts.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_LISTEN ":9400"
#define DEFAULT_INTERVAL_MS 1000u
#define SHUTDOWN_GRACE_MS 1000u
#define HOSTNAME_MAX 255

/* The periodic check (--check-interval, src/serve/check_runner.h). */
struct serve_check_opts {
        unsigned interval_s;  /* 0: none */
        enum level level;
        unsigned timeout_s;   /* 0: check_runner_default_timeout_s */
        const char *level_arg, *timeout_arg; /* as given, for the usage errors */
};

struct serve_opts {
        const char *listen;
        unsigned interval_ms;
        unsigned stale_after_ms; /* 0: interval + GPU deadline */
        unsigned max_connections;
        unsigned max_connections_per_ip;
        unsigned connection_timeout_s;
        bool help_metrics;
        const char *check_report;
        const char *web_config;
        bool workload_labels;
        struct serve_check_opts check; /* --check-interval's */
        const char *hostname;
};

enum serve_opt {
        SERVE_LISTEN = 'l',
        SERVE_INTERVAL_MS = 0x100, SERVE_STALE_AFTER_MS, SERVE_MAX_CONNECTIONS, SERVE_MAX_CONNECTIONS_PER_IP,
        SERVE_CONNECTION_TIMEOUT, SERVE_CHECK_REPORT, SERVE_CHECK_INTERVAL, SERVE_CHECK_LEVEL, SERVE_CHECK_TIMEOUT,
        SERVE_WEB_CONFIG, SERVE_HOSTNAME, SERVE_WORKLOAD_LABELS, SERVE_HELP_METRICS,
};

/* --check-level's choices, in the order of serve_options' "quick|standard". */
static const enum level check_levels[] = {LEVEL_QUICK, LEVEL_STANDARD};

static int serve_option(int id, const struct opt_value *v, void *ctx) {
        struct serve_opts *o = ctx;
        switch ((enum serve_opt)id) {
        case SERVE_LISTEN: o->listen = v->text; break;
        case SERVE_INTERVAL_MS: o->interval_ms = (unsigned)v->n; break;
        case SERVE_STALE_AFTER_MS: o->stale_after_ms = (unsigned)v->n; break;
        case SERVE_MAX_CONNECTIONS: o->max_connections = (unsigned)v->n; break;
        case SERVE_MAX_CONNECTIONS_PER_IP: o->max_connections_per_ip = (unsigned)v->n; break;
        case SERVE_CONNECTION_TIMEOUT: o->connection_timeout_s = opt_seconds(v); break;
        case SERVE_CHECK_REPORT: o->check_report = v->text; break;
        case SERVE_CHECK_INTERVAL: o->check.interval_s = opt_seconds(v); break;
        case SERVE_CHECK_LEVEL:
                o->check.level = check_levels[v->n];
                o->check.level_arg = v->text;
                break;
        case SERVE_CHECK_TIMEOUT:
                o->check.timeout_s = opt_seconds(v);
                o->check.timeout_arg = v->text;
                break;
        case SERVE_WEB_CONFIG: o->web_config = v->text; break;
        case SERVE_HOSTNAME:
                /* A pod's own host name is the pod's: the node's comes in from the downward API. */
                if (strlen(v->text) > HOSTNAME_MAX)
                        return cmd_usage_error("serve", "--hostname: expected a name of 1 to %d bytes, not \"%s\"",
                                               HOSTNAME_MAX, v->text);
                o->hostname = v->text;
                break;
        case SERVE_WORKLOAD_LABELS: o->workload_labels = true; break;
        case SERVE_HELP_METRICS: o->help_metrics = true; break;
        }
        return -1;
}

#define HOUR_MS (3600ull * 1000)

static const struct opt serve_options[] = {
        {.name = "listen", .letter = 'l', .kind = ARG_HOST, .metavar = "ADDR:PORT", .def = ":9400, every address",
         .help = "where to listen: \"127.0.0.1:9400\", \"[::1]:9400\", \"localhost:9400\"; port 0 takes a free one "
                 "(the start line names it)"},
        {.name = "interval-ms", .kind = ARG_DURATION_MS, .id = SERVE_INTERVAL_MS, .min = 10, .max = HOUR_MS,
         .def = "1s", .help = "start a round of NVML readings this often (a bare number is milliseconds)"},
        {.name = "stale-after-ms", .kind = ARG_DURATION_MS, .id = SERVE_STALE_AFTER_MS, .min = 1, .max = 24 * HOUR_MS,
         .def = "the interval plus the GPU deadline",
         .help = "a round older than this is stale: its values are left out and /health says 503"},
        {.name = "max-connections", .kind = ARG_NUMBER, .id = SERVE_MAX_CONNECTIONS, .min = 1, .max = 1000000,
         .def = "4096", .help = "connections open at once"},
        {.name = "max-connections-per-ip", .kind = ARG_NUMBER, .id = SERVE_MAX_CONNECTIONS_PER_IP, .min = 0,
         .max = 1000000, .def = "64", .help = "of them from one client address; 0: no limit"},
        {.name = "connection-timeout", .kind = ARG_DURATION, .id = SERVE_CONNECTION_TIMEOUT, .min = 1000,
         .max = HOUR_MS, .def = "10s",
         .help = "close a connection idle this long, or whose request has not come in whole this long after it "
                 "opened or was last answered"},
        {.name = "check-report", .kind = ARG_FILE, .id = SERVE_CHECK_REPORT,
         .help = "export the statuses of this `gpuvet check --json` report (gpuvet_check_status), read again "
                 "whenever it changes"},
        {.name = "check-interval", .kind = ARG_DURATION, .id = SERVE_CHECK_INTERVAL, .min = 1000,
         .max = 7 * 24 * HOUR_MS,
         .help = "instead, run `gpuvet check --json -` this often (the first at start) and export its statuses "
                 "and runs"},
        {.name = "check-level", .kind = ARG_ENUM, .id = SERVE_CHECK_LEVEL, .metavar = "LEVEL",
         .choices = "quick|standard", .def = "quick",
         .help = "the periodic check's level (full is refused: it runs a stress test for minutes; run it apart, "
                 "not beside the exporter)"},
        {.name = "check-timeout", .kind = ARG_DURATION, .id = SERVE_CHECK_TIMEOUT, .min = 1000, .max = 24 * HOUR_MS,
         .def = "the check's own bound plus 10s; 58s for quick with the default NVML deadlines",
         .help = "kill a periodic check run after this long"},
        {.name = "web.config.file", .kind = ARG_FILE, .id = SERVE_WEB_CONFIG,
         .help = "TLS and basic auth, in the Prometheus exporter-toolkit format (tls_server_config, "
                 "basic_auth_users with bcrypt)"},
        {.name = "hostname", .kind = ARG_TEXT, .id = SERVE_HOSTNAME, .metavar = "NAME",
         .def = "this machine's host name",
         .help = "the Hostname label (1 to 255 bytes); in a Kubernetes pod, give the node's name"},
        {.name = "workload-labels", .kind = ARG_FLAG, .id = SERVE_WORKLOAD_LABELS,
         .help = "add dcgm-exporter's pod, namespace, container and hpc_job labels to the DCGM series of a GPU "
                 "whose processes belong to a Kubernetes pod or a Slurm job (series change identity as jobs do)"},
        {.name = "help-metrics", .kind = ARG_FLAG, .id = SERVE_HELP_METRICS,
         .help = "list the exported series (name, type, unit, gpuvet metric, help; tab-separated) and exit"},
        {0},
};

const struct cmd_spec cmd_serve_spec = {
        .name = "serve",
        .summary = "A Prometheus exporter: /metrics in the Prometheus text format (OpenMetrics when the Accept "
                   "header asks for it) with dcgm-exporter's metric names, units and labels, so its dashboards read "
                   "it unchanged; /health answers 200 while the readings are fresh, else 503.",
        .description = "The GPUs are read on a thread of their own under NVML deadlines; a scrape is served from "
                       "the latest round and never waits for a GPU. Runs until SIGTERM or SIGINT (or --timeout). "
                       "docs/serve.md has the rest.",
        .opts = serve_options,
        .nvml = true,
        .no_default_timeout = true,
        .timeout_help = "stop after this long, as on SIGTERM (default: run until a signal)",
        .notes = "--root is where the processes' workloads are read: /proc, /etc/passwd and /var/log/{pods,containers} under DIR. "
                 "--no-nvml is refused: the exporter has nothing to export without NVML.",
        .exit_status = "0 stopped by a signal (or --timeout); 1 NVML could not be loaded or initialised, or sees no "
                       "GPU; 2 usage or bad input (an unusable --listen address, a --root that is not a directory); "
                       "3 internal error.",
        .on_option = serve_option,
};

static void print_metrics_table(void) {
        for (size_t k = 0; k < metric_count(); k++) {
                const struct metric *m = metric_at(k);
                if (!dcgm_series_exported(m))
                        continue;
                const char *unit = dcgm_series_unit(m);
                printf("%s\t%s\t%s\t%s\t%s\n", m->dcgm, dcgm_series_type(m), unit ? unit : "", m->id, m->help);
        }
}

/* What every round reads: the exported series and the labels. */
static nvml_groups serve_groups(void) {
        const struct metric *shown[512];
        size_t n = 0;
        for (size_t k = 0; k < metric_count() && n < ARRAY_COUNT(shown); k++)
                if (dcgm_series_exported(metric_at(k)))
                        shown[n++] = metric_at(k);
        return metric_groups(shown, n) | nvml_group_bit(NVML_GROUP_NAME) | nvml_group_bit(NVML_GROUP_UUID) |
               nvml_group_bit(NVML_GROUP_PCI) | nvml_group_bit(NVML_GROUP_MINOR) | nvml_group_bit(NVML_GROUP_PROCS) |
               nvml_group_bit(NVML_GROUP_PROC_UTIL);
}

/* The processes' attribution under --root, handed to the body cache. Returns -1 (then
 * *ret_fs and *ret_pw are the caller's to free), else the exit code after a message. */
static int start_workloads(const char *root, struct fsroot **ret_fs, struct proc_workloads **ret_pw) {
        int r = fsroot_open(root, ret_fs);
        if (r < 0) {
                fprintf(stderr, "gpuvet serve: --root %s: %s\n", root, strerror(-r));
                return r == -ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
        }
        if (proc_workloads_new(*ret_fs, ret_pw) < 0) {
                fprintf(stderr, "gpuvet serve: out of memory\n");
                *ret_fs = fsroot_free(*ret_fs);
                return EXIT_INTERNAL;
        }
        return -1;
}

#define WEB_FILE_MAX (1u << 20)

/* A whole small file as a string; NULL with errno (EFBIG past WEB_FILE_MAX). */
static char *read_small(const char *path, size_t *ret_len) {
        FILE *f = fopen(path, "rbe");
        if (!f)
                return NULL;
        char *buf = malloc(WEB_FILE_MAX + 1);
        size_t n = buf ? fread(buf, 1, WEB_FILE_MAX + 1, f) : 0;
        int e = ferror(f) ? EIO : 0;
        fclose(f);
        if (!buf || e || n > WEB_FILE_MAX) {
                free(buf);
                errno = !buf ? ENOMEM : e ? e : EFBIG;
                return NULL;
        }
        buf[n] = '\0';
        if (ret_len)
                *ret_len = n;
        return buf;
}

/* --web.config.file: the file, then its certificate and key. Returns -1 with *sec filled
 * (the strings owned by *cfg and the pem pointers), else the exit code after a message. */
static int load_web_config(const char *path, struct web_config *cfg, struct http_security *sec) {
        size_t len;
        char *text = read_small(path, &len);
        if (!text) {
                fprintf(stderr, "gpuvet serve: --web.config.file %s: %s\n", path, strerror(errno));
                return EXIT_USAGE;
        }
        char *slash = strrchr(path, '/');
        char *dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : NULL;
        char err[256];
        int r = web_config_parse(text, len, dir, cfg, err, sizeof(err));
        free(text);
        free(dir);
        if (r < 0) {
                fprintf(stderr, "gpuvet serve: --web.config.file %s: %s\n", path, err);
                return r == -ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
        }
        *sec = (struct http_security){.users = cfg->users, .n_users = cfg->n_users,
                                      .tls_min_version = cfg->tls_min_version};
        if (cfg->cert_file) {
                char *cert = read_small(cfg->cert_file, NULL);
                if (!cert) {
                        fprintf(stderr, "gpuvet serve: --web.config.file %s: cert_file %s: %s\n", path, cfg->cert_file,
                                strerror(errno));
                        return EXIT_USAGE;
                }
                char *key = read_small(cfg->key_file, NULL);
                if (!key) {
                        fprintf(stderr, "gpuvet serve: --web.config.file %s: key_file %s: %s\n", path, cfg->key_file,
                                strerror(errno));
                        free(cert);
                        return EXIT_USAGE;
                }
                sec->cert_pem = cert;
                sec->key_pem = key;
        }
        return -1;
}

/* Thousands of scrapers need as many descriptors: the soft limit up to the hard one. */
static void raise_fd_limit(void) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void)setrlimit(RLIMIT_NOFILE, &rl); /* the lower limit still works, ignoring */
        }
}

/* Why the first round has nothing to serve, said; -1 when it has GPUs. */
static int first_round_problem(const struct nvml_facts *f, const char *load_err) {
        int code = nvml_explain_init("serve", f, load_err);
        if (code >= 0)
                return code;
        if (f->n_gpus == 0) {
                fprintf(stderr, "gpuvet serve: NVML sees no GPU, nothing to export\n");
                return EXIT_FAILED;
        }
        return -1;
}

/* --check-interval's companions need it, and it excludes --check-report. Returns -1 to
 * go on, else EXIT_USAGE after a message naming the options. */
static int serve_check_options_valid(const struct serve_opts *o) {
        if (o->check.interval_s && o->check_report)
                return cmd_usage_error("serve", "--check-interval and --check-report %s: one source of check verdicts, "
                                       "not both (serve's own periodic check, or a report another run writes)",
                                       o->check_report);
        if (!o->check.interval_s && o->check.level_arg)
                return cmd_usage_error("serve", "--check-level %s: only with --check-interval", o->check.level_arg);
        if (!o->check.interval_s && o->check.timeout_arg)
                return cmd_usage_error("serve", "--check-timeout %s: only with --check-interval", o->check.timeout_arg);
        return -1;
}

struct check_command {
        const char *argv[24];
        char call_ms[16], gpu_ms[16], init_ms[16];
};

/* The periodic check's command line: this same binary (/proc/self/exe: the running
 * version, even after an upgrade replaced the file), the level, the JSON report on
 * standard output, and what makes its verdict that of a manual `gpuvet check` here with
 * serve's options: the root, the data directory, the NVML library and deadlines. The
 * environment (GPUVET_NVML_LIB, GPUVET_FSROOT...) is inherited as it is. */
static void check_command_line(const struct serve_check_opts *c, const struct cmd_args *args, struct check_command *cmd) {
        size_t n = 0;
        const char **a = cmd->argv;
        a[n++] = "/proc/self/exe";
        a[n++] = "check";
        a[n++] = "--level";
        a[n++] = level_name(c->level);
        a[n++] = "--json";
        a[n++] = "-";
        a[n++] = "--no-progress"; /* standard error's tail is kept for a failure's message */
        a[n++] = "--root";
        a[n++] = args->common.root;
        if (args->common.data_dir) {
                a[n++] = "--data-dir";
                a[n++] = args->common.data_dir;
        }
        if (args->nvml.lib) {
                a[n++] = "--nvml-lib";
                a[n++] = args->nvml.lib;
        }
        const struct { const char *opt; unsigned ms; char *buf; } dl[] = {
                {"--nvml-call-timeout-ms", args->nvml.dl.call_ms, cmd->call_ms},
                {"--nvml-gpu-timeout-ms", args->nvml.dl.gpu_ms, cmd->gpu_ms},
                {"--nvml-init-timeout-ms", args->nvml.dl.init_ms, cmd->init_ms},
        };
        for (size_t i = 0; i < ARRAY_COUNT(dl); i++)
                if (dl[i].ms) {
                        snprintf(dl[i].buf, sizeof(cmd->call_ms), "%u", dl[i].ms);
                        a[n++] = dl[i].opt;
                        a[n++] = dl[i].buf;
                }
        a[n] = NULL;
}

/* --check-interval: a watch fed by the runner, which starts its first run now. Returns -1
 * to go on, else the exit code after a message. */
static int start_periodic_check(const struct serve_opts *o, const struct cmd_args *args, struct check_watch **ret_watch,
                                struct check_runner **ret_runner) {
        struct check_command cmd;
        check_command_line(&o->check, args, &cmd);
        unsigned timeout_s = o->check.timeout_s ? o->check.timeout_s
                                                : check_runner_default_timeout_s(o->check.level, &args->nvml.dl,
                                                                                 COMMON_TIMEOUT_S_DEFAULT);
        struct check_runner_options ro = {.argv = (char *const *)cmd.argv, .interval_s = o->check.interval_s,
                                          .timeout_s = timeout_s, .log = stderr};
        if (check_watch_new_fed(ret_watch) < 0) {
                fprintf(stderr, "gpuvet serve: out of memory\n");
                return EXIT_INTERNAL;
        }
        int e = check_runner_start(&ro, *ret_watch, ret_runner);
        if (e < 0) {
                fprintf(stderr, "gpuvet serve: --check-interval: the check's thread could not start: %s\n", strerror(-e));
                return EXIT_INTERNAL;
        }
        fprintf(stderr, "gpuvet serve: --check-interval: gpuvet check --level %s every %u s, killed after %u s\n",
                level_name(o->check.level), o->check.interval_s, timeout_s);
        return -1;
}

/* Why the sampler stopped, naming the call that hung and its GPU when the last round
 * recorded it ("nvmlGpmSampleGet on GPU 3 did not return within 300 ms"). */
static void sampler_end_reason(struct sampler *smp, const struct sampler_status *st, char *buf, size_t size) {
        if (st->end != SAMPLER_CALL_HUNG) {
                snprintf(buf, size, "%s", st->end == SAMPLER_SHUTDOWN_HUNG ? "nvmlShutdown never returned"
                                                                           : "the sampler stopped");
                return;
        }
        snprintf(buf, size, "an NVML call never returned");
        struct sample *x = sampler_latest(smp);
        if (x && x->facts.n_timeouts && x->facts.timeouts[0].fn) {
                const struct nvml_timeout *t = &x->facts.timeouts[0];
                char gpu[32] = "";
                if (t->gpu >= 0)
                        snprintf(gpu, sizeof(gpu), " on GPU %d", t->gpu);
                snprintf(buf, size, "%s%s did not return within %u ms", t->fn, gpu, t->elapsed_ms);
        }
        sample_put(smp, x);
}

/* A stop signal taken, or the --timeout (end_ms, 0: none) past, after waiting up to one
 * slice for it. */
static bool stop_now(const sigset_t *stop, unsigned long long end_ms) {
        struct timespec slice = {0, 200 * 1000000L};
        int sig = sigtimedwait(stop, NULL, &slice);
        return sig == SIGINT || sig == SIGTERM || (end_ms && deadline_now_ms() >= end_ms);
}

/* Serve until a stop signal or the --timeout; say once when the sampler stops; look at the
 * --check-report file every slice. */
static void serve_until_stopped(const sigset_t *stop, struct sampler *smp, struct body_cache *cache,
                                struct check_watch *checks, unsigned long long end_ms) {
        bool told = false;
        unsigned told_missing = 0;
        while (!stop_now(stop, end_ms)) {
                if (checks)
                        check_watch_poll(checks);
                char lost[192];
                unsigned missing = body_cache_gpus_missing(cache, lost, sizeof(lost));
                if (missing && !told_missing)
                        fprintf(stderr, "gpuvet serve: %s; /metrics shows them with gpuvet_gpu_up 0 and /health "
                                        "answers 503 while it lasts\n", lost);
                else if (!missing && told_missing)
                        fprintf(stderr, "gpuvet serve: NVML counts every GPU seen before again\n");
                told_missing = missing;
                struct sampler_status st;
                if (!told && sampler_ended(smp, &st)) {
                        char why[192];
                        sampler_end_reason(smp, &st, why, sizeof(why));
                        fprintf(stderr, "gpuvet serve: the GPUs are no longer read (%s); /metrics shows them stale "
                                        "and /health answers 503 until gpuvet serve is restarted\n",
                                why);
                        told = true;
                }
        }
}

/* The first round, waited for while the server already answers 503: with slow GPUs it
 * takes up to nvmlInit's and a GPU's deadlines, and a stop signal or the --timeout must
 * not wait for it (systemd's TimeoutStopSec is 15 s). NULL with *ret_stopped when stopped,
 * NULL alone when no round came within bound_ms. */
static struct sample *await_first_round(const sigset_t *stop, struct sampler *smp, unsigned bound_ms,
                                        unsigned long long end_ms, bool *ret_stopped) {
        unsigned long long give_up = deadline_now_ms() + bound_ms;
        *ret_stopped = false;
        for (;;) {
                /* Woken by the publish itself: the round judged is the first, not a later one
                 * (with a short interval the second may fail where the first did not). */
                struct sample *x = sampler_next(smp, 0, 100);
                if (x || sampler_ended(smp, NULL) || deadline_now_ms() >= give_up)
                        return x;
                struct timespec now = {0, 0};
                int sig = sigtimedwait(stop, NULL, &now);
                if (sig == SIGINT || sig == SIGTERM || (end_ms && deadline_now_ms() >= end_ms)) {
                        *ret_stopped = true;
                        return NULL;
                }
        }
}

/* What serving needs beside the HTTP server, built once the first round is read. */
struct serve_state {
        struct xid_counter *xids;
        struct check_watch *checks;
        struct check_runner *runner;
};

/* From the first round on: judge it, start the Xid counter and the check statuses, hand
 * them to the cache, serve until stopped. Returns the exit code. */
static int serve_gpus(const struct serve_opts *o, const struct cmd_args *args, const sigset_t *stop,
                      struct sampler *smp, struct nvml_lib *lib, const char *load_err, struct body_cache *cache,
                      unsigned port, const struct http_security *sec, unsigned long long end_ms,
                      struct serve_state *st) {
        unsigned gpu_ms = args->nvml.dl.gpu_ms ? args->nvml.dl.gpu_ms : NVML_DEADLINE_GPU_MS_DEFAULT;
        unsigned init_ms = args->nvml.dl.init_ms ? args->nvml.dl.init_ms : NVML_DEADLINE_INIT_MS_DEFAULT;
        bool stopped;
        struct sample *first = await_first_round(stop, smp, init_ms + gpu_ms + 1000, end_ms, &stopped);
        if (stopped)
                return EXIT_PASS;
        if (!first) {
                fprintf(stderr, "gpuvet serve: the first round of the GPUs did not finish\n");
                return EXIT_FAILED;
        }
        int code = first_round_problem(&first->facts, load_err);
        unsigned n_gpus = first->facts.n_gpus;
        body_cache_learn(cache, first);
        if (code < 0 && xid_counter_start(lib, &first->facts, &args->nvml.dl, &st->xids) < 0)
                fprintf(stderr, "gpuvet serve: NVML events could not be started; Xids are not exported\n");
        sample_put(smp, first);
        if (code >= 0)
                return code;
        if (o->check_report && check_watch_new(o->check_report, stderr, &st->checks) < 0) {
                fprintf(stderr, "gpuvet serve: out of memory\n");
                return EXIT_INTERNAL;
        }
        if (o->check.interval_s && (code = start_periodic_check(o, args, &st->checks, &st->runner)) >= 0)
                return code;
        body_cache_attach(cache, st->xids, st->checks);
        fprintf(stderr, "gpuvet serve: listening on %s (port %u%s%s): %u GPU%s, a round every %u ms\n", o->listen, port,
                sec->cert_pem ? ", TLS" : "", sec->n_users ? ", basic auth" : "", n_gpus, n_gpus == 1 ? "" : "s",
                o->interval_ms);
        serve_until_stopped(stop, smp, cache, st->checks, end_ms);
        return EXIT_PASS;
}

/* The body cache and the HTTP server on fd (theirs from now on), answering 503 until the
 * first round. Returns -1 to go on, else the exit code after a message. */
static int start_serving(const struct serve_opts *o, int fd, struct sampler *smp, struct proc_workloads *pw,
                         const char *hostname, unsigned stale_ms, const struct http_security *sec,
                         struct body_cache **ret_cache, struct http_server **ret_http) {
        /* One serving thread: libmicrohttpd splits the connection limit evenly over a pool's
         * threads and closes what a thread accepts beyond its share, so with two a flood under
         * --max-connections lost connections whenever the kernel handed one thread more than
         * half. A scrape sends a body already rendered (about 0.1 ms of CPU), so one thread
         * still serves well over 5,000 a second (docs/perf.md). */
        struct http_limits lim = {.connections = o->max_connections, .timeout_s = o->connection_timeout_s,
                                  .connection_memory = 32 * 1024, .threads = 1,
                                  .per_address = o->max_connections_per_ip};
        if (body_cache_new(smp, NULL, NULL, hostname, stale_ms, ret_cache) < 0) {
                close(fd);
                fprintf(stderr, "gpuvet serve: out of memory\n");
                return EXIT_INTERNAL;
        }
        body_cache_set_workloads(*ret_cache, pw, o->workload_labels);
        char err[512] = "";
        if (http_server_start(fd, &lim, sec, *ret_cache, ret_http, err, sizeof(err)) < 0) {
                if (sec->cert_pem)
                        fprintf(stderr, "gpuvet serve: --web.config.file %s: %s\n", o->web_config, err);
                else
                        fprintf(stderr, "gpuvet serve: %s\n", err);
                return sec->cert_pem ? EXIT_USAGE : EXIT_INTERNAL;
        }
        return -1;
}

static int run(const struct serve_opts *o, const struct cmd_args *args) {
        unsigned long long end_ms = args->common.timeout_s ? deadline_now_ms() + args->common.timeout_s * 1000ULL : 0;
        char hostname[HOSTNAME_MAX + 1] = "";
        if (o->hostname)
                snprintf(hostname, sizeof(hostname), "%s", o->hostname);
        else if (gethostname(hostname, sizeof(hostname) - 1) < 0)
                snprintf(hostname, sizeof(hostname), "localhost");
        raise_fd_limit();
        char err[512] = "";
        struct web_config web = {0};
        struct http_security sec = {0};
        if (o->web_config) {
                int e = load_web_config(o->web_config, &web, &sec);
                if (e >= 0) {
                        free((char *)sec.cert_pem);
                        web_config_done(&web);
                        return e;
                }
        }
        if (http_server_load(&sec, err, sizeof(err)) < 0) {
                fprintf(stderr, "gpuvet serve: %s\n", err);
                free((char *)sec.cert_pem);
                free((char *)sec.key_pem);
                web_config_done(&web);
                return EXIT_INTERNAL;
        }
        struct fsroot *fs = NULL;
        struct proc_workloads *pw = NULL;
        int early = start_workloads(args->common.root, &fs, &pw);
        int fd = early >= 0 ? -1 : listen_addr_open(o->listen, 1024, err, sizeof(err));
        if (fd < 0) {
                if (early < 0)
                        fprintf(stderr, "gpuvet serve: %s\n", err);
                proc_workloads_free(pw);
                fsroot_free(fs);
                free((char *)sec.cert_pem);
                free((char *)sec.key_pem);
                web_config_done(&web);
                return early >= 0 ? early : EXIT_USAGE;
        }
        unsigned port = listen_addr_port(fd);
        /* Blocked before any thread starts, so that only sigtimedwait takes them. */
        sigset_t stop;
        sigemptyset(&stop);
        sigaddset(&stop, SIGINT);
        sigaddset(&stop, SIGTERM);
        sigprocmask(SIG_BLOCK, &stop, NULL);
        signal(SIGPIPE, SIG_IGN);

        struct nvml_lib *lib = NULL;
        if (nv_lib_open(args->nvml.lib, &lib, err, sizeof(err)) == -ENOMEM) {
                close(fd);
                proc_workloads_free(pw);
                fsroot_free(fs);
                fprintf(stderr, "gpuvet serve: out of memory\n");
                return EXIT_INTERNAL;
        }
        struct sampler *smp = NULL;
        struct sampler_options so = {.lib = lib, .dl = args->nvml.dl, .groups = serve_groups(),
                                     .interval_ms = o->interval_ms};
        if (sampler_start(&so, &smp) < 0) {
                close(fd);
                proc_workloads_free(pw);
                fsroot_free(fs);
                fprintf(stderr, "gpuvet serve: could not start the sampler\n");
                return EXIT_INTERNAL;
        }
        unsigned gpu_ms = args->nvml.dl.gpu_ms ? args->nvml.dl.gpu_ms : NVML_DEADLINE_GPU_MS_DEFAULT;
        unsigned stale_ms = o->stale_after_ms ? o->stale_after_ms : o->interval_ms + gpu_ms;
        struct body_cache *cache = NULL;
        struct http_server *http = NULL;
        struct serve_state st = {0};
        int code = start_serving(o, fd, smp, pw, hostname, stale_ms, &sec, &cache, &http);
        if (code < 0) {
                fprintf(stderr, "gpuvet serve: port %u open on %s; /metrics and /health answer 503 until the first "
                                "round of the GPUs is read\n", port, o->listen);
                code = serve_gpus(o, args, &stop, smp, lib, err, cache, port, &sec, end_ms, &st);
        }
        check_runner_stop(st.runner); /* a run in flight is killed and reaped */
        http_server_stop(http, SHUTDOWN_GRACE_MS);
        body_cache_free(cache);
        check_watch_free(st.checks);
        bool abandoned = xid_counter_stop(st.xids);
        free((char *)sec.cert_pem);
        free((char *)sec.key_pem);
        web_config_done(&web);
        abandoned = sampler_stop(smp) || abandoned;
        proc_workloads_free(pw);
        fsroot_free(fs);
        fflush(stderr);
        if (abandoned)
                _exit(stdout_finish(code)); /* a call still runs inside NVML: no unload, no exit handlers */
        (void)nv_lib_close(lib);
        return code;
}

int cmd_serve(int argc, char **argv) {
        struct serve_opts o = {.listen = DEFAULT_LISTEN, .interval_ms = DEFAULT_INTERVAL_MS, .max_connections = 4096,
                               .max_connections_per_ip = 64, .connection_timeout_s = 10};
        struct cmd_args args;
        int code = cmd_parse(&cmd_serve_spec, argc, argv, &o, &args);
        if (code >= 0)
                return code;
        if (o.help_metrics) {
                print_metrics_table();
                return stdout_finish(EXIT_PASS);
        }
        if (args.nvml.off)
                return cmd_usage_error("serve", "--no-nvml: the exporter has nothing to export without NVML");
        if ((code = serve_check_options_valid(&o)) >= 0)
                return code;
        return run(&o, &args);
}

/* gpuvet top: a live view of the GPUs and their processes, from the sampler's rounds
 * (docs/top.md). The view is src/top/; this file parses, starts the sampler, waits for
 * the first round, then runs the screen or prints one frame (--once). */
#include "cmd/cmd.h"
#include "cmd/nvml_use.h"
#include "cmd/options.h"
#include "cmd/specs.h"
#include "core/array.h"
#include "core/strparse.h"
#include "core/fsroot.h"
#include "metrics/sampler.h"
#include "top/top_feed.h"
#include "top/top_frame.h"
#include "sys/proc.h"
#include "top/top_screen.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct top_cli {
        unsigned long long interval_ms;
        bool once;
        unsigned int width;
        enum top_sort sort;
        bool tree;
};

#define INTERVAL_MIN_MS 100ull
#define INTERVAL_MAX_MS 3600000ull

enum top_opt { TOP_INTERVAL = 'd', TOP_ONCE = '1', TOP_WIDTH = 0x100, TOP_SORT, TOP_TREE };

static int top_option(int id, const struct opt_value *v, void *ctx) {
        struct top_cli *o = ctx;
        switch ((enum top_opt)id) {
        case TOP_INTERVAL: o->interval_ms = v->n; break;
        case TOP_ONCE: o->once = true; break;
        case TOP_WIDTH: o->width = (unsigned)v->n; break;
        case TOP_SORT: o->sort = (enum top_sort)v->n; break; /* the choices in enum top_sort's order */
        case TOP_TREE: o->tree = true; break;
        }
        return -1;
}

static const struct opt top_options[] = {
        {.name = "interval", .letter = 'd', .kind = ARG_DURATION, .min = INTERVAL_MIN_MS, .max = INTERVAL_MAX_MS,
         .def = "1s", .help = "from one reading round to the next (\"0.5\", \"2s\"); the screen redraws at this pace"},
        {.name = "once", .letter = '1', .kind = ARG_FLAG,
         .help = "print one frame to standard output and exit (no terminal needed)"},
        {.name = "width", .kind = ARG_NUMBER, .id = TOP_WIDTH, .metavar = "COLS", .min = 40, .max = 1000,
         .def = "the terminal's, else 100", .help = "--once: the frame's width"},
        {.name = "sort", .kind = ARG_ENUM, .id = TOP_SORT, .metavar = "KEY", .choices = "memory|utilization|pid|cpu|rss|time",
         .def = "memory", .help = "the process order at start"},
        {.name = "tree", .kind = ARG_FLAG, .id = TOP_TREE,
         .help = "show each GPU process under its launchers (its host ancestors) at start; t toggles it"},
        {0},
};

const struct cmd_spec cmd_top_spec = {
        .name = "top",
        .synopsis = "[OPTIONS]\n--once [--width COLS] [OPTIONS]",
        .summary = "A live view of every GPU (utilization, memory, temperature, power and clocks as bars with their "
                   "recent history, clock event reasons, ECC) and the processes on them, as nvtop and nvitop show "
                   "it.",
        .description = "Every NVML call runs under a deadline: a GPU that does not answer is shown STALE, one that "
                       "fell off the bus LOST, never old values as live.",
        .opts = top_options,
        .color = true,
        .nvml = true,
        .no_default_timeout = true,
        .timeout_help = "not used: top runs until q or a signal",
        .notes = "--root: read /proc, /etc/passwd and /var/log/{pods,containers} under DIR (a snapshot or a "
                 "fixture). --no-nvml is refused: top shows what NVML reads.\n\n"
                 "Keys: Up/Down select; s, or m/u/p/c/r/e, sort by GPU memory, SM share, PID, host %CPU, RSS or "
                 "elapsed time; t (or F5) the process tree; K/T/I send SIGKILL/SIGTERM/SIGINT to the selected "
                 "process after a y/N question; Left/Right scroll GPUs; h help; q quit. docs/top.md has the rest.",
        .exit_status = "0 quit by q or a signal, or --once with every GPU live; 1 NVML or a GPU could not answer (no "
                       "driver, no GPU, a GPU stale or lost in --once); 2 usage; 3 internal error.",
        .on_option = top_option,
};

/* What top reads each round: no NVLink walk, no identity beyond the name. */
static nvml_groups top_groups(void) {
        static const enum nvml_group g[] = {NVML_GROUP_NAME,       NVML_GROUP_MEMORY,        NVML_GROUP_TEMP,
                                            NVML_GROUP_TEMP_THRESHOLDS, NVML_GROUP_POWER_DRAW, NVML_GROUP_POWER_LIMIT,
                                            NVML_GROUP_POWER_ENFORCED_LIMIT, NVML_GROUP_CLOCKS, NVML_GROUP_CLOCKS_MAX,
                                            NVML_GROUP_CLOCK_REASONS, NVML_GROUP_UTIL, NVML_GROUP_ECC_MODE,
                                            NVML_GROUP_ECC_COUNTS, NVML_GROUP_PROCS, NVML_GROUP_PROC_UTIL,
                                            NVML_GROUP_FAN, NVML_GROUP_CODEC_UTIL, NVML_GROUP_PCIE_THROUGHPUT};
        nvml_groups set = 0;
        for (size_t i = 0; i < ARRAY_COUNT(g); i++)
                set |= nvml_group_bit(g[i]);
        return set;
}

/* Why the first round shows no GPU; -1 when it shows some. */
static int explain_first(const struct nvml_facts *f, const char *load_err) {
        int code = nvml_explain_init("top", f, load_err);
        if (code >= 0)
                return code;
        if (!nv_ok(f->device_count)) {
                fprintf(stderr, "gpuvet top: nvmlDeviceGetCount_v2: %s\n",
                        f->device_count.state == NV_TIMEOUT ? "did not return in time" : nv_rc_text(f->lib, f->device_count.rc));
                return EXIT_FAILED;
        }
        if (f->n_gpus == 0) {
                fprintf(stderr, "gpuvet top: no GPU found\n");
                return EXIT_FAILED;
        }
        return -1;
}

static volatile sig_atomic_t stop_signal;
static void on_stop(int sig) { stop_signal = sig; }

/* Block the stop signals and SIGWINCH before any thread starts, so that they are taken
 * only where the main thread waits (ppoll with open_mask). */
static void block_signals(sigset_t *open_mask) {
        struct sigaction sa = {.sa_handler = on_stop};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGWINCH);
        sigprocmask(SIG_BLOCK, &mask, open_mask);
        sigdelset(open_mask, SIGINT);
        sigdelset(open_mask, SIGTERM);
        sigdelset(open_mask, SIGWINCH);
}

static unsigned int frame_width(unsigned int asked) {
        struct winsize ws;
        if (asked)
                return asked;
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
                return ws.ws_col;
        return 100;
}

/* --once: the first round as one frame; 1 when a GPU is not live. */
static int print_once(struct top_model *m, struct top_view *v, unsigned int width) {
        top_model_sort(m, v->sort);
        v->no_chart = true;
        struct top_frame f = {0};
        if (top_frame_render(m, v, top_frame_rows_for_all(m, v), width, &f) < 0) {
                fprintf(stderr, "gpuvet top: out of memory\n");
                return EXIT_INTERNAL;
        }
        for (unsigned int r = 0; r < f.rows; r++) {
                const char *line = top_frame_line(&f, r);
                size_t n = strlen(line);
                while (n && line[n - 1] == ' ')
                        n--;
                printf("%.*s\n", (int)n, line);
        }
        top_frame_done(&f);
        int code = EXIT_PASS;
        for (unsigned int i = 0; i < m->n_gpus; i++)
                if (m->gpus[i].state != TOP_GPU_LIVE) {
                        fprintf(stderr, "gpuvet top: GPU %u is %s: %s\n", i,
                                m->gpus[i].state == TOP_GPU_LOST ? "lost" : "stale", m->gpus[i].why);
                        code = EXIT_FAILED;
                }
        return code;
}

/* The first round: the model from it, or the exit code. Waits for it as long as NVML's
 * own deadlines allow, and for a stop signal. */
static int first_round(struct top_feed *feed, struct top_model *m, const struct nvml_options *n, const char *load_err,
                       const sigset_t *open_mask) {
        unsigned long long budget_ms = (n->dl.init_ms ? n->dl.init_ms : NVML_DEADLINE_INIT_MS_DEFAULT) +
                                       (n->dl.gpu_ms ? n->dl.gpu_ms : NVML_DEADLINE_GPU_MS_DEFAULT) + 2000;
        for (unsigned long long waited = 0; waited < budget_ms && !stop_signal; waited += 100) {
                struct sample *x = sampler_next(feed->smp, 0, 100);
                if (x) {
                        int e = explain_first(&x->facts, load_err);
                        if (e < 0 && top_model_update(m, &x->facts, x->started_ns, &feed->look) < 0)
                                e = EXIT_INTERNAL;
                        feed->seq = m->seq = x->seq;
                        sample_put(feed->smp, x);
                        return e;
                }
                if (sampler_ended(feed->smp, NULL))
                        break;
                struct timespec zero = {0, 0};
                (void)ppoll(NULL, 0, &zero, open_mask); /* take a stop signal that came */
        }
        if (stop_signal)
                return EXIT_PASS;
        fprintf(stderr, "gpuvet top: NVML gave no reading within %llu ms\n", budget_ms);
        return EXIT_FAILED;
}

static int run(const struct top_cli *o, const struct cmd_args *args) {
        if (!o->once && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
                fprintf(stderr, "gpuvet top: standard input and output must be a terminal (or use --once)\n");
                return EXIT_USAGE;
        }
        struct fsroot *fs = NULL;
        int r = fsroot_open(args->common.root, &fs);
        if (r < 0) {
                fprintf(stderr, "gpuvet top: --root %s: %s\n", args->common.root, strerror(-r));
                return EXIT_USAGE;
        }
        struct proc_users *users = NULL;
        char err[512] = "";
        struct nvml_lib *lib = NULL;
        if (proc_users_load(fs, &users) < 0 || nv_lib_open(args->nvml.lib, &lib, err, sizeof(err)) == -ENOMEM) {
                fprintf(stderr, "gpuvet top: out of memory\n");
                proc_users_free(users);
                fsroot_free(fs);
                return EXIT_INTERNAL;
        }
        sigset_t open_mask;
        block_signals(&open_mask);
        struct top_feed feed = {
                .look = {.fs = fs, .users = users, .nested = proc_self_nested(fs)},
                .interval_ms = o->interval_ms,
                .stale_after_ms = 2 * o->interval_ms +
                                  (args->nvml.dl.call_ms ? args->nvml.dl.call_ms : NVML_DEADLINE_CALL_MS_DEFAULT),
        };
        struct sampler_options so = {.lib = lib, .dl = args->nvml.dl, .groups = top_groups(), .interval_ms = o->interval_ms};
        struct top_model m = {0};
        /* Signals only to this machine's processes, as gpuvet's own namespace sees them. */
        struct top_signal_env signals = {.fs = fs, .live = fsroot_is_live(fs) && !feed.look.nested};
        struct top_view v = {.sort = o->sort, .tree = o->tree, .interval_ms = o->interval_ms, .signals = &signals};
        int code;
        if (sampler_start(&so, &feed.smp) < 0) {
                fprintf(stderr, "gpuvet top: could not start the sampler\n");
                code = EXIT_INTERNAL;
        } else {
                code = first_round(&feed, &m, &args->nvml, err, &open_mask);
                if (code < 0 && o->once)
                        code = print_once(&m, &v, frame_width(o->width));
                else if (code < 0)
                        code = top_screen_run(&feed, &m, &v, &open_mask, &stop_signal);
        }
        bool abandoned = feed.smp && sampler_stop(feed.smp);
        top_model_done(&m);
        proc_users_free(users);
        fsroot_free(fs);
        if (abandoned) /* a call still runs inside NVML: no unload, no exit handlers */
                _exit(stdout_finish(code));
        (void)nv_lib_close(lib);
        return code;
}

int cmd_top(int argc, char **argv) {
        struct top_cli o = {.interval_ms = 1000, .sort = TOP_SORT_MEMORY};
        struct cmd_args args;
        int code = cmd_parse(&cmd_top_spec, argc, argv, &o, &args);
        if (code >= 0)
                return code;
        if (args.nvml.off)
                return cmd_usage_error("top", "--no-nvml: top shows what NVML reads; it has nothing to show without it");
        return run(&o, &args);
}

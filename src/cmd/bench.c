/* gpuvet bench: run benchmarks (src/bench), each in a child under a deadline, judge every
 * measurement against peaks and baselines, and print tables and/or the JSON report. */
#include "bench/baselines.h"
#include "bench/bench.h"
#include "bench/runner.h"
#include "cmd/cmd.h"
#include "cmd/machine.h"
#include "cmd/options.h"
#include "cmd/specs.h"
#include "core/array.h"
#include "core/deadline.h"
#include "core/fsroot.h"
#include "core/strparse.h"
#include "report/bench_json.h"
#include "report/bench_text.h"
#include "report/text_wrap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_GPUS 256

/* The benchmarks with options of their own (bench.def's BENCH_COMMAND), each with its
 * command: a BENCH_COMMAND without its cmd_bench_<name> does not compile. */
static const struct {
        const struct bench_info *info;
        int (*run)(int argc, char **argv);
} bench_commands[] = {
#define BENCH(name)
#define BENCH_COMMAND(name) {&bench_##name, cmd_bench_##name},
#include "bench/bench.def"
#undef BENCH_COMMAND
#undef BENCH
};

static int list_benchmarks(void) {
        for (size_t i = 0; i < bench_registry_count; i++) {
                const struct bench_info *b = bench_registry[i];
                printf("%-14s %-6s %s\n", b->name, b->on_nic ? "nic" : b->needs_device ? "gpu" : "host", b->title);
        }
        return EXIT_PASS;
}

/* The selected benchmarks in registry order; false (message printed) on an unknown name. */
static bool select_benchmarks(const char *arg, const struct bench_info **sel, size_t *ret_n) {
        size_t n = 0;
        if (strcmp(arg, "all") == 0) {
                for (size_t i = 0; i < bench_all_count; i++)
                        sel[n++] = bench_registry[i];
                *ret_n = n;
                return true;
        }
        char *copy = strdup(arg);
        if (!copy)
                return false;
        bool ok = true;
        bool want[64] = {false};
        for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                const struct bench_info *b = bench_find(tok);
                if (!b) {
                        fprintf(stderr, "gpuvet bench: no benchmark named \"%s\" (see gpuvet bench --list)\n", tok);
                        ok = false;
                        continue;
                }
                for (size_t i = 0; i < bench_all_count && i < 64; i++)
                        if (bench_registry[i] == b)
                                want[i] = true;
        }
        free(copy);
        for (size_t i = 0; i < bench_all_count && i < 64; i++)
                if (want[i])
                        sel[n++] = bench_registry[i];
        *ret_n = n;
        if (ok && n == 0)
                fprintf(stderr, "gpuvet bench: \"%s\" names no benchmark (see gpuvet bench --list)\n", arg);
        return ok && n > 0;
}

/* What `gpuvet bench` was asked to do. */
struct bench_cli {
        struct bench_options bopt;
        int gpus[MAX_GPUS];
        const char *json_path;
        bool list, quiet, no_progress;
};

enum bench_opt {
        BENCH_BACKEND = 'b', BENCH_GPUS = 'g', BENCH_REPS = 'n', BENCH_WARMUP = 'w', BENCH_SIZE = 's',
        BENCH_THREADS = 't', BENCH_PRECISION = 'p', BENCH_JSON = 'j', BENCH_QUIET = 'q',
        BENCH_LIST = 0x100, BENCH_NO_PROGRESS,
};

static int bench_option(int id, const struct opt_value *v, void *ctx) {
        struct bench_cli *o = ctx;
        struct bench_options *b = &o->bopt;
        switch ((enum bench_opt)id) {
        case BENCH_LIST: o->list = true; break;
        case BENCH_BACKEND: b->backend = v->text; break;
        case BENCH_GPUS:
                if (!cmd_parse_device_list(v->text, MAX_GPUS, o->gpus, &b->n_gpus))
                        return cmd_usage_error("bench",
                                               "--gpus: expected device indices 0-%d such as \"0,2\" or \"0-3\", not \"%s\"",
                                               MAX_GPUS - 1, v->text);
                b->gpus = o->gpus;
                break;
        case BENCH_REPS: b->reps = (unsigned)v->n; break;
        case BENCH_WARMUP: b->warmup = (unsigned)v->n; break;
        case BENCH_SIZE: b->size_bytes = v->n; break;
        case BENCH_THREADS: b->threads = (unsigned)v->n; break;
        case BENCH_PRECISION: b->precision = v->text; break;
        case BENCH_JSON: o->json_path = v->text; break;
        case BENCH_QUIET: o->quiet = true; break;
        case BENCH_NO_PROGRESS: o->no_progress = true; break;
        }
        return -1;
}

static const struct opt bench_options[] = {
        {.name = "list", .kind = ARG_FLAG, .id = BENCH_LIST, .help = "list the benchmarks and exit"},
        {.name = "backend", .letter = 'b', .kind = ARG_ENUM, .metavar = "NAME", .choices = "cuda|opencl|auto",
         .def = "auto: CUDA when it has a device, else OpenCL", .help = "run the GPU benchmarks through cuda or opencl"},
        {.name = "gpus", .letter = 'g', .kind = ARG_LIST, .def = "all",
         .help = "device indices to use: \"0,2\", \"0-3\""},
        {.name = "reps", .letter = 'n', .kind = ARG_NUMBER, .min = 1, .max = 100000, .def = "per benchmark",
         .help = "repetitions after warm-up"},
        {.name = "warmup", .letter = 'w', .kind = ARG_NUMBER, .min = 1, .max = 10000, .def = "per benchmark",
         .help = "warm-up repetitions"},
        {.name = "size", .letter = 's', .kind = ARG_SIZE, .min = 4096, .max = 1ull << 40, .def = "per benchmark",
         .help = "working set per buffer or array, 4K to 1T: 268435456, 256M, 1G (K, M, G, T are 2^10, 2^20, 2^30, "
                 "2^40)"},
        {.name = "threads", .letter = 't', .kind = ARG_NUMBER, .min = 1, .max = 4096,
         .def = "every CPU this process may use", .help = "host threads"},
        {.name = "precision", .letter = 'p', .kind = ARG_ENUM, .metavar = "P", .choices = "fp64|fp32|tf32|fp16|bf16|fp8",
         .def = "all that apply", .help = "fp64, fp32, tf32, fp16, bf16 or fp8: measure only this one"},
        OPT_JSON("gpuvet.bench/2"),
        {.name = "quiet", .letter = 'q', .kind = ARG_FLAG, .help = "no text report and no progress"},
        {.name = "no-progress", .kind = ARG_FLAG, .id = BENCH_NO_PROGRESS, .help = "no progress line on standard error"},
        {0},
};

const struct cmd_spec cmd_bench_spec = {
        .name = "bench",
        .synopsis = "NAME[,NAME...]|all [OPTIONS]\nnccl [OPTIONS]\ntrain [OPTIONS]\nrdma --server | --peer HOST "
                    "[OPTIONS]\n--list",
        .summary = "Measure bandwidth, compute and host memory; compare each figure with the GPU's theoretical peak "
                   "and with achieved baselines (docs/bench.md).",
        .description = "nccl (NCCL collectives: gpuvet bench nccl --help), train (a training-step proxy: gpuvet bench "
                       "train --help) and rdma (RDMA between two nodes: gpuvet bench rdma --help) have options of "
                       "their own and come first.",
        .opts = bench_options,
        .exit_status = "0 every measurement passed or warned, 1 one failed or could not be measured (error, "
                       "timeout), 2 usage or bad input, 3 internal error.",
        .timeout_help = "the deadline of each benchmark (default: per benchmark, 120s for most); a benchmark past it "
                        "is killed and reported as an error",
        .operand_words = "all|host-memory|transfer|memory|compute|p2p|gemm|nccl|train|rdma",
        .takes_operands = true,
        /* No default --timeout: 0 lets each benchmark keep its own deadline. */
        .no_default_timeout = true,
        .color = true,
        .on_option = bench_option,
};

/* Run the selected benchmarks, each in a child under its deadline, judge them and write
 * the reports. Returns the exit code. */
static int bench_run(const struct bench_cli *o, const struct common_options *common, const char *names,
                     const struct bench_info *const *sel, size_t n_sel) {
        double start = monotonic_ms();
        struct machine m;
        int code = machine_open("bench", common, &m);
        if (code)
                return code;
        char err[512];
        struct baselines *bl = NULL;
        if (baselines_load(common->data_dir, &bl, err, sizeof(err)) < 0) {
                fprintf(stderr, "gpuvet bench: %s\n", err);
                code = EXIT_USAGE;
                goto done;
        }
        /* The facts give the peaks and the node's GPUs; the benchmarks' own deadlines start
         * after them (common->timeout_s is per benchmark). */
        if ((code = machine_gather(&m, 30)) != 0)
                goto done;
        const struct facts *facts = m.facts;

        struct bench_progress progress;
        bench_progress_init(&progress, "bench", n_sel, !o->quiet && !o->no_progress);
        struct bench_ctx ctx = {.opt = &o->bopt, .facts = facts, .baselines = bl, .fs = m.fs, .progress = &progress};
        struct bench_report rep;
        bench_report_init(&rep);
        struct bench_run_result runs[64];
        enum status verdict = STATUS_SKIP;
        bool json_to_stdout = o->json_path && strcmp(o->json_path, "-") == 0, text = !o->quiet && !json_to_stdout;
        struct text_options text_opt = {.color = text_want_color(stdout), .width = text_wrap_width(stdout)};
        double later_s = 0;
        for (size_t i = 0; i < n_sel; i++)
                later_s += bench_deadline_s(sel[i], common->timeout_s);
        for (size_t i = 0; i < n_sel; i++) {
                later_s -= bench_deadline_s(sel[i], common->timeout_s);
                bench_progress_next(&progress, later_s);
                bench_run_child(sel[i], &ctx, common->timeout_s, &rep, &runs[i]);
                bench_judge_range(&rep, runs[i].first, facts, bl);
                /* GPUs of one node against each other; a spread of ~5% is normal (gpu-specs
                 * §4). Siblings are measurements of one benchmark, all in its range. */
                bench_compare_siblings_from(&rep, runs[i].first, 0.10);
                runs[i].status = STATUS_SKIP;
                for (size_t k = runs[i].first; k < runs[i].first + runs[i].count; k++)
                        runs[i].status = status_worse(runs[i].status, rep.m[k].status);
                verdict = status_worse(verdict, runs[i].status);
                /* each table as soon as it is measured, as nccl-tests prints each size */
                progress_clear(&progress.out);
                if (text) {
                        bench_text_run(stdout, &rep, &runs[i], &text_opt);
                        fflush(stdout);
                }
        }

        struct bench_json_run jrun = {.benchmarks = names, .backend = o->bopt.backend, .opt = &o->bopt,
                                      .timeout_s = common->timeout_s, .duration_ms = monotonic_ms() - start, .verdict = verdict};
        code = verdict == STATUS_FAIL || verdict == STATUS_ERROR ? EXIT_FAILED : EXIT_PASS;
        if (o->json_path &&
            write_json_output("bench", o->json_path, bench_json_report(&jrun, facts, &rep, runs, n_sel)) != EXIT_PASS)
                code = EXIT_INTERNAL;
        if (text)
                bench_text_verdict(stdout, &rep, verdict, jrun.duration_ms, &text_opt);
        if (rep.out_of_memory)
                code = EXIT_INTERNAL;
        bench_report_done(&rep);
done:
        baselines_free(bl);
        return machine_done(&m, code);
}

int cmd_bench(int argc, char **argv) {
        /* train (a model's shape), nccl (nccl-tests' options), rdma (two nodes, perftest's) */
        for (size_t i = 0; argc > 1 && i < ARRAY_COUNT(bench_commands); i++)
                if (strcmp(argv[1], bench_commands[i].info->name) == 0)
                        return bench_commands[i].run(argc - 1, argv + 1);
        struct bench_cli o = {.bopt = {.backend = "auto"}};
        struct cmd_args args;
        int code = cmd_parse(&cmd_bench_spec, argc, argv, &o, &args);
        if (code >= 0)
                return code;
        int next = args.first_operand;
        if (o.list && next < argc)
                return cmd_usage_error("bench", "unexpected argument \"%s\" (see gpuvet bench --help)", argv[next]);
        if (o.list)
                return list_benchmarks();
        /* --json [FILE|-] takes the next word that is no option: "--json all" wrote to "all" */
        if (next >= argc && o.json_path &&
            (!strcmp(o.json_path, "all") || bench_find(o.json_path) || strchr(o.json_path, ',')))
                return cmd_usage_error("bench", "--json took \"%s\" for its file: write --json - %s, or name the "
                                       "benchmarks first", o.json_path, o.json_path);
        if (next >= argc)
                return cmd_usage_error("bench", "name a benchmark, or all (see gpuvet bench --list)");
        if (next + 1 < argc)
                return cmd_usage_error("bench", "unexpected argument \"%s\" (see gpuvet bench --help)", argv[next + 1]);
        const char *names = argv[next];
        /* options before it were read as bench's own */
        for (size_t i = 0; i < ARRAY_COUNT(bench_commands); i++)
                if (strcmp(names, bench_commands[i].info->name) == 0)
                        return cmd_usage_error("bench", "%s takes options of its own: put it first, gpuvet bench %s "
                                               "[OPTIONS]", names, names);
        const struct bench_info *sel[64];
        size_t n_sel = 0;
        if (!select_benchmarks(names, sel, &n_sel))
                return EXIT_USAGE;
        return bench_run(&o, &args.common, names, sel, n_sel);
}

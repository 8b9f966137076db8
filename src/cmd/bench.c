/* gpuvet bench: run benchmarks (src/bench), each in a child under a deadline, judge every
 * measurement against peaks and baselines, and print tables and/or the JSON report. */
#include "bench/baselines.h"
#include "bench/bench.h"
#include "bench/bench_train.h"
#include "bench/runner.h"
#include "cmd/cmd.h"
#include "cmd/machine.h"
#include "cmd/options.h"
#include "core/deadline.h"
#include "core/fsroot.h"
#include "core/strparse.h"
#include "report/bench_json.h"
#include "report/bench_text.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_GPUS 256

static const char usage[] =
        "Usage: gpuvet bench NAME[,NAME...]|all [OPTIONS]\n"
        "       gpuvet bench nccl [OPTIONS]    (NCCL collectives: gpuvet bench nccl --help)\n"
        "       gpuvet bench train [OPTIONS]   (a training-step proxy: gpuvet bench train --help)\n"
        "       gpuvet bench rdma --server | --peer HOST [OPTIONS]  (RDMA between two nodes: gpuvet bench rdma --help)\n"
        "       gpuvet bench --list\n"
        "\n"
        "Measure bandwidth, compute and host memory; compare each figure with the GPU's\n"
        "theoretical peak and with achieved baselines (docs/bench.md).\n"
        "\n"
        "Options:\n"
        "      --list            list the benchmarks and exit\n"
        "  -b, --backend B       cuda, opencl or auto (default: CUDA when it has a device,\n"
        "                        else OpenCL)\n"
        "  -g, --gpus LIST       device indices to use: \"0,2\", \"0-3\" (default all)\n"
        "  -n, --reps N          repetitions after warm-up, 1-100000 (default per benchmark)\n"
        "  -w, --warmup N        warm-up repetitions, 1-10000 (default per benchmark)\n"
        "  -s, --size BYTES      working set per buffer/array: 268435456, 256M, 1G\n"
        "                        (K/M/G/T = 2^10/2^20/2^30/2^40; 4K-1T)\n"
        "  -t, --threads N       host threads, 1-4096 (default: every CPU this process may use)\n"
        "  -p, --precision P     fp64, fp32, tf32, fp16, bf16 or fp8 (default all that apply)\n"
        "  -j, --json FILE       also write the JSON report (schema gpuvet.bench/2) to FILE\n"
        "                        (\"-\": standard output, which then holds only the JSON)\n"
        "  -q, --quiet           no text report and no progress\n"
        "      --no-progress     no progress line on standard error\n"
        "      --timeout SEC     deadline per benchmark (default per benchmark, 120 s for most);\n"
        "                        a benchmark past it is killed and reported as an error\n"
        "  -r, --root DIR        read /sys, /proc under DIR for the node's facts\n"
        "      --data-dir DIR    GPU table and baselines.json from DIR ($GPUVET_DATA_DIR)\n"
        "  -h, --help            this help\n"
        "\n"
        "Exit status: 0 every measurement passed or warned, 1 one failed or could not be\n"
        "measured (error, timeout), 2 usage or bad input, 3 internal error.\n";

static const char *const precisions[] = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8"};

/* "268435456", "256M", "1G", "64MiB", "512k": binary multiples. */
static bool parse_size(const char *s, uint64_t *ret) {
        char *end;
        errno = 0;
        if (!isdigit((unsigned char)*s))
                return false;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || end == s)
                return false;
        unsigned shift = 0;
        switch (toupper((unsigned char)*end)) {
        case 'K': shift = 10; end++; break;
        case 'M': shift = 20; end++; break;
        case 'G': shift = 30; end++; break;
        case 'T': shift = 40; end++; break;
        }
        if (shift && (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0))
                end += strlen(end);
        else if (!shift && strcmp(end, "B") == 0)
                end++;
        if (*end)
                return false;
        if (v > (1ull << 40) >> shift)
                return false;
        v <<= shift;
        if (v < 4096 || v > (1ull << 40))
                return false;
        *ret = v;
        return true;
}

static int list_benchmarks(void) {
        for (size_t i = 0; i < bench_registry_count; i++) {
                const struct bench_info *b = bench_registry[i];
                printf("%-14s %-6s %s\n", b->name, b->needs_device ? "gpu" : "host", b->title);
        }
        /* commands of their own (gpuvet bench NAME --help), not part of "all" */
        printf("%-14s %-6s %s\n", "train", "gpu", bench_train.title);
        printf("%-14s %-6s %s\n", "nccl", "gpu", "NCCL collectives' bus bandwidth (gpuvet bench nccl --help)");
        printf("%-14s %-6s %s\n", "rdma", "nic", "RDMA write/read bandwidth and latency between two nodes (gpuvet bench rdma --help)");
        return EXIT_PASS;
}

/* The selected benchmarks in registry order; false (message printed) on an unknown name. */
static bool select_benchmarks(const char *arg, const struct bench_info **sel, size_t *ret_n) {
        size_t n = 0;
        if (strcmp(arg, "all") == 0) {
                for (size_t i = 0; i < bench_registry_count; i++)
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
                for (size_t i = 0; i < bench_registry_count && i < 64; i++)
                        if (bench_registry[i] == b)
                                want[i] = true;
        }
        free(copy);
        for (size_t i = 0; i < bench_registry_count && i < 64; i++)
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

static bool known_precision(const char *name) {
        for (size_t i = 0; i < sizeof(precisions) / sizeof(precisions[0]); i++)
                if (strcmp(name, precisions[i]) == 0)
                        return true;
        return false;
}

static int bench_option(int opt, const char *arg, void *ctx) {
        struct bench_cli *o = ctx;
        struct bench_options *b = &o->bopt;
        switch (opt) {
        case 'L': o->list = true; break;
        case 'b': return cmd_backend_option("bench", arg, &b->backend);
        case 'g':
                if (!cmd_parse_device_list(arg, MAX_GPUS, o->gpus, &b->n_gpus))
                        return cmd_usage_error("bench",
                                               "--gpus: expected device indices 0-%d such as \"0,2\" or \"0-3\", not \"%s\"",
                                           MAX_GPUS - 1, arg);
                b->gpus = o->gpus;
                break;
        case 'n':
                if (!cmd_parse_uint(arg, 1, 100000, &b->reps))
                        return cmd_usage_error("bench", "--reps: expected a whole number 1-100000, not \"%s\"", arg);
                break;
        case 'w':
                if (!cmd_parse_uint(arg, 1, 10000, &b->warmup))
                        return cmd_usage_error("bench", "--warmup: expected a whole number 1-10000, not \"%s\"", arg);
                break;
        case 's':
                if (!parse_size(arg, &b->size_bytes))
                        return cmd_usage_error("bench",
                                               "--size: expected bytes 4K-1T such as 268435456, 256M or 1G, not \"%s\"", arg);
                break;
        case 't':
                if (!cmd_parse_uint(arg, 1, 4096, &b->threads))
                        return cmd_usage_error("bench", "--threads: expected a whole number 1-4096, not \"%s\"", arg);
                break;
        case 'p':
                if (!known_precision(arg))
                        return cmd_usage_error("bench",
                                               "--precision: unknown precision \"%s\" (fp64, fp32, tf32, fp16, bf16, fp8)",
                                           arg);
                b->precision = arg;
                break;
        case 'j': o->json_path = arg; break;
        case 'q': o->quiet = true; break;
        case 'N' | 0x100: o->no_progress = true; break;
        }
        return -1;
}

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
        struct text_options text_opt = {.color = text_want_color(stdout)};
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
        if (argc > 1 && !strcmp(argv[1], "train"))
                return cmd_bench_train(argc - 1, argv + 1);
        /* the collective benchmark has nccl-tests' options, not the per-GPU benchmarks' */
        if (argc > 1 && strcmp(argv[1], "nccl") == 0)
                return cmd_bench_nccl(argc - 1, argv + 1);
        /* two nodes, perftest's options */
        if (argc > 1 && strcmp(argv[1], "rdma") == 0)
                return cmd_bench_rdma(argc - 1, argv + 1);
        static const struct option own[] = {
                {"list", no_argument, NULL, 'L'},          {"backend", required_argument, NULL, 'b'},
                {"gpus", required_argument, NULL, 'g'},    {"reps", required_argument, NULL, 'n'},
                {"warmup", required_argument, NULL, 'w'},  {"size", required_argument, NULL, 's'},
                {"threads", required_argument, NULL, 't'}, {"precision", required_argument, NULL, 'p'},
                {"json", required_argument, NULL, 'j'},    {"quiet", no_argument, NULL, 'q'},
                {"no-progress", no_argument, NULL, 'N' | 0x100},
                {NULL, 0, NULL, 0},
        };
        /* No default --timeout: 0 lets each benchmark keep its own deadline. */
        static const struct cmd_spec spec = {
                .name = "bench", .usage = usage, .short_opts = "b:g:n:w:s:t:p:j:q", .own = own, .operands = true,
                .no_default_timeout = true, .own_option = bench_option,
        };
        struct bench_cli o = {.bopt = {.backend = "auto"}};
        struct cmd_args args;
        int code = cmd_parse(&spec, argc, argv, &o, &args);
        if (code >= 0)
                return code;
        int next = args.first_operand;
        if (o.list && next < argc)
                return cmd_usage_error("bench", "unexpected argument \"%s\" (see gpuvet bench --help)", argv[next]);
        if (o.list)
                return list_benchmarks();
        if (next >= argc)
                return cmd_usage_error("bench", "name a benchmark, or all (see gpuvet bench --list)");
        if (next + 1 < argc)
                return cmd_usage_error("bench", "unexpected argument \"%s\" (see gpuvet bench --help)", argv[next + 1]);
        const char *names = argv[next];
        if (!strcmp(names, "train")) /* options before it were read as bench's own */
                return cmd_usage_error("bench", "train takes options of its own: put it first, gpuvet bench train [OPTIONS]");
        const struct bench_info *sel[64];
        size_t n_sel = 0;
        if (!select_benchmarks(names, sel, &n_sel))
                return EXIT_USAGE;
        if (o.json_path && (code = output_path_usable("bench", "--json", o.json_path)) != 0)
                return code;
        return bench_run(&o, &args.common, names, sel, n_sel);
}

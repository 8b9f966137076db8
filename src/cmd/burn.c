/* gpuvet burn: the stress test alone (docs/burn.md). It is `check --level full --only burn`
 * with the stress test's own options: the same facts, site policy, verdict and report. */
#include "burn/burn.h"
#include "cmd/check_run.h"
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "core/strparse.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
        "Usage: gpuvet burn [OPTIONS]\n"
        "\n"
        "Stress every GPU at once and verify what it computes; one verdict (docs/burn.md).\n"
        "\n"
        "Options:\n"
        "  -d, --duration D      the whole run, shared by the modes: 5m (default), 90s, 1h30m\n"
        "  -m, --mode LIST       gemm (default), power, pulse, memtest, or all; comma-separated\n"
        "                        modes run one after another\n"
        "  -p, --precision P     fp64, fp32, tf32, bf16, fp16 or fp8 (default fp32 for gemm,\n"
        "                        the densest the GPU has for power and pulse)\n"
        "      --gpus LIST       device indices of the backend: \"0,2\", \"0-3\" (default every GPU)\n"
        "      --backend NAME    cuda, opencl or auto (default: CUDA when it has a device)\n"
        "      --verify-every N  gemm: check every Nth product against the host reference and\n"
        "                        the first result, 1-1000000 (default 10)\n"
        "      --pulse-period D  pulse: one full-load/idle cycle, 100ms-60s (default 2s)\n"
        "      --memtest-size B  memtest: bytes per GPU, 1M-16T (default 90% of free memory\n"
        "                        on a GPU)\n"
        "      --seed N          inputs and the random memory pattern (default from the clock;\n"
        "                        the report gives it, so a run can be repeated)\n"
        "      --sample-interval D  telemetry (NVML) every D, 100ms-60s (default 1s)\n"
        "      --hang-timeout D  a worker silent this long is reported hung and killed\n"
        "                        (default 30s)\n"
        "      --allow-cpu       also load CPU OpenCL devices (tests, demos; never judged as\n"
        "                        GPUs by check)\n"
        "      --no-progress     no live progress lines on standard error\n"
        "  -j, --json FILE       also write the JSON report (schema gpuvet.report/1) to FILE\n"
        "                        (\"-\" for standard output, which then holds only the JSON)\n"
        "  -q, --quiet           no text report and no progress (use with --json)\n"
        "      --strict          exit 1 on warnings too\n"
        "      --policy FILE     judge by this site policy (docs/policy.md); default\n"
        "                        /etc/gpuvet/policy.yaml under --root when it exists\n"
        "      --no-policy       ignore the default policy file\n"
        "  -v, --verbose         show observed and expected values of passing checks too\n"
        "      --color WHEN      auto (default), always or never\n"
        "      --timeout SEC     give up (exit 3) if gathering the facts blocks this long\n"
        "  -r, --root DIR        read /sys, /proc, /etc under DIR; the devices are loaded\n"
        "                        only on the live root, or with --backend\n"
        "      --data-dir DIR    GPU table and compatibility data from DIR\n"
        "      --nvml-lib PATH   load this libnvidia-ml instead of libnvidia-ml.so.1\n"
        "      --no-nvml         do not call NVML\n"
        "  -h, --help            this help\n"
        "\n"
        "SIGINT or SIGTERM stops every worker within a second; the partial report is written\n"
        "and the run is judged an error (the GPUs were not cleared).\n"
        "\n"
        "Exit status: 0 pass (warnings allowed), 1 a GPU failed, hung or could not be\n"
        "loaded, there was no GPU to stress (a CPU device only with --allow-cpu), or the\n"
        "run was interrupted (--strict: or warned), 2 usage or bad input, 3 internal error.\n";

#define MAX_GPUS 1024

struct burn_cli {
        struct check_cli check;
        int gpus[MAX_GPUS];
};

static int duration_option(const char *opt, const char *arg, uint64_t min_ms, uint64_t max_ms, const char *range,
                           uint64_t *ret) {
        uint64_t ms;
        if (parse_duration_ms(arg, &ms) < 0 || ms < min_ms || ms > max_ms)
                return cmd_usage_error("burn", "%s: expected a duration %s (\"5m\", \"90s\", \"1h30m\"), not \"%s\"",
                                       opt, range, arg);
        *ret = ms;
        return -1;
}

static int count_option(const char *opt, const char *arg, uint64_t min, uint64_t max, uint64_t *ret) {
        uint64_t v;
        if (parse_u64(arg, &v) < 0 || v < min || v > max)
                return cmd_usage_error("burn", "%s: expected a whole number %llu..%llu, not \"%s\"", opt,
                                       (unsigned long long)min, (unsigned long long)max, arg);
        *ret = v;
        return -1;
}

/* "256M", "1G", "64MiB": binary multiples, as bench --size. */
static int size_option(const char *arg, uint64_t *ret) {
        char *end;
        unsigned long long v = strtoull(arg, &end, 10);
        unsigned shift = 0;
        if (end != arg && *end) {
                switch (*end) {
                case 'K': case 'k': shift = 10; break;
                case 'M': case 'm': shift = 20; break;
                case 'G': case 'g': shift = 30; break;
                case 'T': case 't': shift = 40; break;
                default: shift = 99;
                }
                end++;
                if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0)
                        end += strlen(end);
        }
        if (end == arg || *end || shift == 99 || arg[0] == '-' || v == 0 || v > (16ull << 40) >> shift ||
            (v << shift) < (1ull << 20))
                return cmd_usage_error("burn", "--memtest-size: expected bytes from 1M to 16T (\"4G\", \"512M\"), not "
                                       "\"%s\"", arg);
        *ret = v << shift;
        return -1;
}

static int gpus_option(struct burn_cli *c, const char *arg) {
        uint64_t mask[MAX_GPUS / 64];
        unsigned count;
        if (parse_cpulist(arg, mask, MAX_GPUS, &count) < 0 || count == 0)
                return cmd_usage_error("burn", "--gpus: expected device indices such as \"0,2\" or \"0-3\" (0-%d), not "
                                       "\"%s\"", MAX_GPUS - 1, arg);
        size_t n = 0;
        for (int i = 0; i < MAX_GPUS; i++)
                if (mask[i / 64] >> (i % 64) & 1)
                        c->gpus[n++] = i;
        c->check.burn.gpus = c->gpus;
        c->check.burn.n_gpus = n;
        return -1;
}

static int burn_option(int opt, const char *arg, void *ctx) {
        struct burn_cli *c = ctx;
        struct check_cli *o = &c->check;
        struct burn_options *b = &o->burn;
        uint64_t v = 0;
        int r;
        switch (opt) {
        case 'd':
                return duration_option("--duration", arg, 1000, 7ull * 24 * 3600 * 1000, "from 1s to 7d", &b->duration_ms);
        case 'm':
                if (!(b->modes = burn_modes_parse(arg)))
                        return cmd_usage_error("burn", "--mode: expected gemm, power, pulse, memtest or all "
                                               "(comma-separated), not \"%s\"", arg);
                break;
        case 'p': {
                static const char *const known[] = {"fp64", "fp32", "tf32", "bf16", "fp16", "fp8"};
                bool ok = false;
                for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
                        ok |= strcmp(arg, known[i]) == 0;
                if (!ok)
                        return cmd_usage_error("burn", "--precision: expected fp64, fp32, tf32, bf16, fp16 or fp8, not "
                                               "\"%s\"", arg);
                b->precision = arg;
                break;
        }
        case 'g' | 0x200: return gpus_option(c, arg);
        case 'B': return cmd_backend_option("burn", arg, &o->backend);
        case 'V' | 0x100:
                if ((r = count_option("--verify-every", arg, 1, 1000000, &v)) >= 0)
                        return r;
                b->verify_every = (unsigned)v;
                break;
        case 'P' | 0x200:
                return duration_option("--pulse-period", arg, 100, 60000, "from 100ms to 60s", &b->pulse_period_ms);
        case 'M' | 0x100: return size_option(arg, &b->memtest_bytes);
        case 'S' | 0x200:
                if ((r = count_option("--seed", arg, 1, UINT64_MAX, &v)) >= 0)
                        return r;
                b->seed = v;
                break;
        case 'H' | 0x100:
                if ((r = duration_option("--hang-timeout", arg, 1000, 3600000, "from 1s to 1h", &v)) >= 0)
                        return r;
                b->hang_ms = (unsigned)v;
                break;
        case 'I' | 0x200:
                if ((r = duration_option("--sample-interval", arg, 100, 60000, "from 100ms to 60s", &v)) >= 0)
                        return r;
                b->sample_ms = (unsigned)v;
                break;
        case 'A' | 0x100: b->allow_cpu = true; break;
        case 'N' | 0x100: b->progress = false; break;
        case 'j': o->json_path = arg; break;
        case 'q': o->quiet = true; break;
        case 'S': o->strict = true; break;
        case 'P': o->policy_path = arg; break;
        case 'p' | 0x100: o->no_policy = true; break;
        case 'v': o->text.verbose = true; break;
        case 'C':
                if (strcmp(arg, "auto") != 0 && strcmp(arg, "always") != 0 && strcmp(arg, "never") != 0)
                        return cmd_usage_error("burn", "--color: expected auto, always or never, not \"%s\"", arg);
                o->color = arg;
                break;
        }
        return -1;
}

int cmd_burn(int argc, char **argv) {
        static const struct option own[] = {
                {"duration", required_argument, NULL, 'd'},
                {"mode", required_argument, NULL, 'm'},
                {"precision", required_argument, NULL, 'p'},
                {"gpus", required_argument, NULL, 'g' | 0x200},
                {"backend", required_argument, NULL, 'B'},
                {"verify-every", required_argument, NULL, 'V' | 0x100},
                {"pulse-period", required_argument, NULL, 'P' | 0x200},
                {"memtest-size", required_argument, NULL, 'M' | 0x100},
                {"seed", required_argument, NULL, 'S' | 0x200},
                {"hang-timeout", required_argument, NULL, 'H' | 0x100},
                {"sample-interval", required_argument, NULL, 'I' | 0x200},
                {"allow-cpu", no_argument, NULL, 'A' | 0x100},
                {"no-progress", no_argument, NULL, 'N' | 0x100},
                {"json", required_argument, NULL, 'j'},
                {"quiet", no_argument, NULL, 'q'},
                {"strict", no_argument, NULL, 'S'},
                {"policy", required_argument, NULL, 'P'},
                {"no-policy", no_argument, NULL, 'p' | 0x100},
                {"verbose", no_argument, NULL, 'v'},
                {"color", required_argument, NULL, 'C'},
                {NULL, 0, NULL, 0},
        };
        static const struct cmd_spec spec = {
                .name = "burn", .usage = usage, .short_opts = "d:m:p:j:qv", .own = own, .nvml = true,
                .own_option = burn_option,
        };
        struct burn_cli c = {
                .check = {.command = "burn", .level = LEVEL_FULL, .only = "burn", .color = "auto",
                          .burn = {.modes = BURN_MODE_BIT(BURN_MODE_GEMM), .duration_ms = BURN_DEFAULT_DURATION_MS,
                                   .progress = true}},
        };
        struct cmd_args args;
        int code = cmd_parse(&spec, argc, argv, &c, &args);
        if (code >= 0)
                return code;
        if (c.check.json_path && (code = output_path_usable("burn", "--json", c.check.json_path)) != 0)
                return code;
        if (c.check.quiet && !c.check.json_path)
                fputs("gpuvet burn: -q without --json writes no report: only the exit status tells the verdict\n",
                      stderr);
        return check_execute(&c.check, &args);
}

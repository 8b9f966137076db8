/* gpuvet burn: the stress test alone (docs/burn.md). It is `check --level full --only burn`
 * with the stress test's own options: the same facts, site policy, verdict and report. */
#include "burn/burn.h"
#include "cmd/check_run.h"
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/specs.h"
#include "core/strparse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GPUS 1024
#define HOUR_MS (3600ull * 1000)

struct burn_cli {
        struct check_cli check;
        int gpus[MAX_GPUS];
};

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

enum burn_opt {
        BURN_DURATION = 'd', BURN_MODE = 'm', BURN_PRECISION = 'p', BURN_JSON = 'j', BURN_QUIET = 'q',
        BURN_VERBOSE = 'v',
        BURN_GPUS = 0x100, BURN_BACKEND, BURN_VERIFY_EVERY, BURN_PULSE_PERIOD, BURN_MEMTEST_SIZE, BURN_SEED,
        BURN_SAMPLE_INTERVAL, BURN_HANG_TIMEOUT, BURN_ALLOW_CPU, BURN_NO_PROGRESS, BURN_STRICT, BURN_POLICY,
        BURN_NO_POLICY,
};

static int burn_option(int id, const struct opt_value *v, void *ctx) {
        struct burn_cli *c = ctx;
        struct check_cli *o = &c->check;
        struct burn_options *b = &o->burn;
        switch ((enum burn_opt)id) {
        case BURN_DURATION: b->duration_ms = v->n; break;
        case BURN_MODE:
                if (!(b->modes = burn_modes_parse(v->text)))
                        return cmd_usage_error("burn", "--mode: expected gemm, power, pulse, memtest or all "
                                               "(comma-separated), not \"%s\"", v->text);
                break;
        case BURN_PRECISION: b->precision = v->text; break;
        case BURN_GPUS: return gpus_option(c, v->text);
        case BURN_BACKEND: o->backend = v->text; break;
        case BURN_VERIFY_EVERY: b->verify_every = (unsigned)v->n; break;
        case BURN_PULSE_PERIOD: b->pulse_period_ms = v->n; break;
        case BURN_MEMTEST_SIZE: b->memtest_bytes = v->n; break;
        case BURN_SEED: b->seed = v->n; break;
        case BURN_HANG_TIMEOUT: b->hang_ms = (unsigned)v->n; break;
        case BURN_SAMPLE_INTERVAL: b->sample_ms = (unsigned)v->n; break;
        case BURN_ALLOW_CPU: b->allow_cpu = true; break;
        case BURN_NO_PROGRESS: b->progress = false; break;
        case BURN_JSON: o->json_path = v->text; break;
        case BURN_QUIET: o->quiet = true; break;
        case BURN_STRICT: o->strict = true; break;
        case BURN_POLICY: o->policy_path = v->text; break;
        case BURN_NO_POLICY: o->no_policy = true; break;
        case BURN_VERBOSE: o->text.verbose = true; break;
        }
        return -1;
}

static const struct opt burn_options[] = {
        {.name = "duration", .letter = 'd', .kind = ARG_DURATION, .min = 1000, .max = 7 * 24 * HOUR_MS, .def = "5m",
         .help = "the whole run, shared by the modes: 90s, 1h30m"},
        {.name = "mode", .letter = 'm', .kind = ARG_LIST, .choices = "gemm|power|pulse|memtest|all", .def = "gemm",
         .help = "gemm, power, pulse, memtest, or all; comma-separated modes run one after another"},
        {.name = "precision", .letter = 'p', .kind = ARG_ENUM, .metavar = "P", .choices = "fp64|fp32|tf32|bf16|fp16|fp8",
         .def = "fp32 for gemm, the densest the GPU has for power and pulse", .help = "fp64, fp32, tf32, bf16, fp16 or fp8"},
        {.name = "gpus", .kind = ARG_LIST, .id = BURN_GPUS, .def = "every GPU",
         .help = "device indices of the backend: \"0,2\", \"0-3\""},
        {.name = "backend", .kind = ARG_ENUM, .id = BURN_BACKEND, .metavar = "NAME", .choices = "cuda|opencl|auto",
         .def = "auto: CUDA when it has a device", .help = "load the GPUs through cuda or opencl"},
        {.name = "verify-every", .kind = ARG_NUMBER, .id = BURN_VERIFY_EVERY, .min = 1, .max = 1000000, .def = "10",
         .help = "gemm: check every Nth product against the host reference and the first result"},
        {.name = "pulse-period", .kind = ARG_DURATION, .id = BURN_PULSE_PERIOD, .min = 100, .max = 60000,
         .def = "2s", .help = "pulse: one full-load/idle cycle"},
        {.name = "memtest-size", .kind = ARG_SIZE, .id = BURN_MEMTEST_SIZE, .min = 1ull << 20, .max = 16ull << 40,
         .def = "90% of free memory on a GPU", .help = "memtest: bytes per GPU (\"4G\", \"512M\")"},
        {.name = "seed", .kind = ARG_NUMBER, .id = BURN_SEED, .min = 1, .def = "from the clock",
         .help = "inputs and the random memory pattern; the report gives it, so a run can be repeated"},
        {.name = "sample-interval", .kind = ARG_DURATION, .id = BURN_SAMPLE_INTERVAL, .min = 100, .max = 60000,
         .def = "1s", .help = "telemetry (NVML) every DURATION"},
        {.name = "hang-timeout", .kind = ARG_DURATION, .id = BURN_HANG_TIMEOUT, .min = 1000, .max = HOUR_MS,
         .def = "30s", .help = "a worker silent this long is reported hung and killed"},
        {.name = "allow-cpu", .kind = ARG_FLAG, .id = BURN_ALLOW_CPU,
         .help = "also load CPU OpenCL devices (tests, demos; never judged as GPUs by check)"},
        {.name = "no-progress", .kind = ARG_FLAG, .id = BURN_NO_PROGRESS,
         .help = "no live progress lines on standard error"},
        OPT_JSON("gpuvet.report/1"),
        {.name = "quiet", .letter = 'q', .kind = ARG_FLAG, .help = "no text report and no progress (use with --json)"},
        {.name = "strict", .kind = ARG_FLAG, .id = BURN_STRICT, .help = "exit 1 on warnings too"},
        {.name = "policy", .kind = ARG_FILE, .id = BURN_POLICY, .def = "/etc/gpuvet/policy.yaml under --root when it exists",
         .help = "judge by this site policy (docs/policy.md)"},
        {.name = "no-policy", .kind = ARG_FLAG, .id = BURN_NO_POLICY, .help = "ignore the default policy file"},
        {.name = "verbose", .letter = 'v', .kind = ARG_FLAG,
         .help = "show observed and expected values of passing checks too"},
        {0},
};

const struct cmd_spec cmd_burn_spec = {
        .name = "burn",
        .summary = "Stress every GPU at once and verify what it computes; one verdict (docs/burn.md).",
        .opts = burn_options,
        .nvml = true,
        .color = true,
        .notes = "The devices are loaded only on the live root (--root /), or with --backend.\n\n"
                 "SIGINT or SIGTERM stops every worker within a second; the partial report is written and the run "
                 "is judged an error (the GPUs were not cleared).",
        .exit_status = "0 pass (warnings allowed), 1 a GPU failed, hung or could not be loaded, there was no GPU to "
                       "stress (a CPU device only with --allow-cpu), or the run was interrupted (--strict: or "
                       "warned), 2 usage or bad input, 3 internal error.",
        .on_option = burn_option,
};

int cmd_burn(int argc, char **argv) {
        struct burn_cli c = {
                .check = {.command = "burn", .level = LEVEL_FULL, .only = "burn", .color = "auto",
                          .burn = {.modes = BURN_MODE_BIT(BURN_MODE_GEMM), .duration_ms = BURN_DEFAULT_DURATION_MS,
                                   .progress = true}},
        };
        struct cmd_args args;
        int code = cmd_parse(&cmd_burn_spec, argc, argv, &c, &args);
        if (code >= 0)
                return code;
        if (c.check.quiet && !c.check.json_path)
                fputs("gpuvet burn: -q without --json writes no report: only the exit status tells the verdict\n",
                      stderr);
        return check_execute(&c.check, &args);
}

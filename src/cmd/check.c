#include "bench/probes.h"
#include "bench/suite.h"
#include "burn/burn.h"
#include "checks/check.h"
#include "cmd/check_run.h"
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/specs.h"
#include "cmd/machine.h"
#include "cmd/site_policy.h"
#include "core/deadline.h"
#include "core/fsroot.h"
#include "core/progress.h"
#include "core/strparse.h"
#include "policy/policy.h"
#include "report/report_json.h"
#include "report/report_text.h"
#include "report/text_wrap.h"
#include "sys/cuda_driver.h"
#include "sys/container_gpu.h"
#include "sys/dcgm.h"
#include "sys/nvml_facts.h"

#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static bool selected(const struct check_info *c, const char *only) {
        if (!only)
                return true;
        char *copy = strdup(only);
        if (!copy)
                return true;
        bool hit = false;
        for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && !hit; tok = strtok_r(NULL, ",", &save))
                hit = strcmp(tok, c->id) == 0 || strcmp(tok, c->category) == 0;
        free(copy);
        return hit;
}

bool check_only_is_valid(const char *cmd, const char *only) {
        char *copy = strdup(only);
        if (!copy)
                return false;
        bool ok = true;
        size_t n = 0;
        for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                bool known = false;
                n++;
                for (size_t i = 0; i < check_registry_count && !known; i++)
                        known = strcmp(tok, check_registry[i]->id) == 0 || strcmp(tok, check_registry[i]->category) == 0;
                if (!known) {
                        fprintf(stderr, "gpuvet %s: --only: no check or category named \"%s\" (see gpuvet check --list)\n",
                                cmd, tok);
                        ok = false;
                }
        }
        free(copy);
        if (n == 0) {
                /* Running nothing would print a PASS for a node nobody looked at. */
                fprintf(stderr, "gpuvet %s: --only \"%s\" names no check or category (see gpuvet check --list)\n", cmd,
                        only);
                return false;
        }
        return ok;
}

static int list_checks(enum level level, const char *only) {
        for (size_t i = 0; i < check_registry_count; i++) {
                const struct check_info *c = check_registry[i];
                if (c->level <= level && selected(c, only))
                        printf("%-32s %-8s %s\n", c->id, level_name(c->level), c->title);
        }
        return EXIT_PASS;
}

/* Whether check c runs: in the level, selected by --only, not turned off by the policy. */
static bool will_run(const struct check_info *c, enum level level, const char *only, const struct policy *policy) {
        return c && c->level <= level && selected(c, only) && policy_severity_of(policy, c, NULL) != POLICY_SEVERITY_OFF;
}

/* The inputs the checks that run need, with what each reads itself: only these are read. */
static input_set needed_inputs(enum level level, const char *only, const struct policy *policy) {
        input_set needs = INPUTS_ALWAYS;
        for (size_t i = 0; i < check_registry_count; i++)
                if (will_run(check_registry[i], level, only, policy))
                        needs |= check_registry[i]->needs;
        return inputs_closure(needs);
}

/* The probes' need bits follow enum probe_id, so that bit i of the probes is need bit
 * NEED_PROBE_FUNCTIONAL << i. */
_Static_assert(NEED_PROBE_TRANSFER == NEED_PROBE_FUNCTIONAL << PROBE_TRANSFER &&
                       NEED_PROBE_MEMORY == NEED_PROBE_FUNCTIONAL << PROBE_MEMORY &&
                       NEED_PROBE_P2P == NEED_PROBE_FUNCTIONAL << PROBE_P2P && PROBE_FUNCTIONAL == 0 &&
                       _PROBE_COUNT == 4,
               "sys/inputs.def lists the probes in bench/probes.h's order");

#define NO_GPU_ON_NVIDIA "no GPU is bound to the nvidia driver"

/* Probe libcuda and cuInit (gpu.cuda_driver) when the check runs and this machine's
 * driver is the one judged: the live root with a GPU on the nvidia driver, or a library
 * named by $GPUVET_CUDA_LIB (tests, and captures judged with a library on purpose).
 * What can be told before the facts: why the probe is not run, or NULL when it may be
 * (check_gather then forks it, held, before any thread exists). */
static const char *cuda_probe_unwanted(struct fsroot *fs, input_set needs) {
        if (!(needs & NEED_CUDA_DRIVER))
                return "not selected";
        if (!fsroot_is_live(fs) && !cuda_driver_lib_named())
                return "not probed: --root names a capture, not this machine's driver "
                       "($" CUDA_DRIVER_LIB_ENV " probes a library anyway)";
        /* Without the driver's directory no GPU can be bound to it: no child to fork. */
        if (!cuda_driver_lib_named() && !fsroot_is_dir(fs, "/sys/bus/pci/drivers/nvidia"))
                return NO_GPU_ON_NVIDIA;
        return NULL;
}

/* Once the facts are in: release the held probe p (NULL when it could not be made), or
 * send it away with the reason f->cuda_driver gives. Returns the probe to finish, or NULL. */
static struct cuda_driver_probe *settle_cuda_probe(struct cuda_driver_probe *p, const char *unwanted,
                                                   struct facts *f) {
        const char *why = unwanted;
        if (!why && !cuda_driver_lib_named() && check_gpus_bound_to(f, "nvidia") == 0)
                why = NO_GPU_ON_NVIDIA;
        if (!why && !p)
                why = "not probed: out of memory";
        if (!why) {
                cuda_driver_probe_release(p);
                return p;
        }
        /* The child leaves without loading libcuda; whether it left by itself changes
         * nothing in the report, ignoring. */
        if (p)
                (void)cuda_driver_probe_cancel(p, NULL, "");
        cuda_driver_not_probed(&f->cuda_driver, why);
        return NULL;
}


/* "--probe-timeout 30" (every probe) or "--probe-timeout p2p=5" (one); a later one wins. */
static int probe_timeout_option(const char *arg, unsigned timeout_s[_PROBE_COUNT]) {
        const char *eq = strchr(arg, '=');
        char name[16] = "";
        int id = -1;
        if (eq) {
                if ((size_t)(eq - arg) < sizeof(name))
                        memcpy(name, arg, (size_t)(eq - arg));
                id = probe_by_name(name);
                if (id < 0)
                        return cmd_usage_error("check", "--probe-timeout: no probe named \"%.*s\" (functional, "
                                               "transfer, memory, p2p)", (int)(eq - arg), arg);
        }
        uint64_t ms;
        if (parse_duration_ms(eq ? eq + 1 : arg, &ms) < 0 || ms < 1000 || ms > 3600 * 1000)
                return cmd_usage_error("check", "--probe-timeout: expected a duration from 1s to 1h (\"30s\", "
                                       "\"2m\"), not \"%s\"", eq ? eq + 1 : arg);
        unsigned v = (unsigned)((ms + 999) / 1000);
        for (int i = 0; i < _PROBE_COUNT; i++)
                if (id < 0 || i == id)
                        timeout_s[i] = v;
        return -1;
}

enum check_opt {
        CHECK_LEVEL = 'l', CHECK_JSON = 'j', CHECK_VERBOSE = 'v', CHECK_QUIET = 'q',
        CHECK_BURN_DURATION = 0x100, CHECK_BACKEND, CHECK_PROBE_TIMEOUT, CHECK_WITH_DCGM, CHECK_DCGM_TIMEOUT,
        CHECK_CONTAINER_RUNTIME, CHECK_CONTAINER_IMAGE, CHECK_CONTAINER_TIMEOUT, CHECK_STRICT, CHECK_POLICY,
        CHECK_NO_POLICY, CHECK_ONLY, CHECK_LIST, CHECK_CUDA_INIT_TIMEOUT, CHECK_PROBLEMS, CHECK_NO_PROGRESS,
};

static int check_option(int id, const struct opt_value *v, void *ctx) {
        struct check_cli *o = ctx;
        switch ((enum check_opt)id) {
        case CHECK_LEVEL: o->level = level_from_name(v->text); break;
        case CHECK_JSON: o->json_path = v->text; break;
        case CHECK_STRICT: o->strict = true; break;
        case CHECK_BACKEND: o->backend = v->text; break;
        case CHECK_PROBE_TIMEOUT: return probe_timeout_option(v->text, o->probe_timeout_s);
        case CHECK_CUDA_INIT_TIMEOUT: o->cuda_timeout_ms = (unsigned)v->n; break;
        case CHECK_WITH_DCGM: o->dcgm_level = (int)v->n; break;
        case CHECK_DCGM_TIMEOUT: o->dcgm_timeout_s = opt_seconds(v); break;
        case CHECK_BURN_DURATION: o->burn.duration_ms = v->n; break;
        case CHECK_CONTAINER_RUNTIME: o->container_runtime = v->text; break;
        case CHECK_CONTAINER_IMAGE: o->container_image = v->text; break;
        case CHECK_CONTAINER_TIMEOUT: o->container_timeout_s = opt_seconds(v); break;
        case CHECK_ONLY: o->only = v->text; break;
        case CHECK_POLICY: o->policy_path = v->text; break;
        case CHECK_NO_POLICY: o->no_policy = true; break;
        case CHECK_LIST: o->list = true; break;
        case CHECK_VERBOSE: o->text.verbose = true; break;
        case CHECK_PROBLEMS: o->text.problems = true; break;
        case CHECK_QUIET: o->quiet = true; break;
        case CHECK_NO_PROGRESS: o->burn.progress = false; break;
        }
        return -1;
}

#define HOUR_MS (3600ull * 1000)

static const struct opt check_options[] = {
        {.name = "level", .letter = 'l', .kind = ARG_ENUM, .metavar = "LEVEL", .choices = "quick|standard|full",
         .def = "quick",
         .help = "quick: OS and PCI state, under a second. standard: adds device probes on every GPU (a verified "
                 "kernel, H2D/D2H, memory bandwidth, P2P, the PCIe link under load; under 60 s on 8 GPUs). full: "
                 "adds the stress test (GEMM with verified results, then the memory test; docs/burn.md)"},
        {.name = "burn-duration", .kind = ARG_DURATION, .id = CHECK_BURN_DURATION, .min = 1000, .max = 7 * 24 * HOUR_MS,
         .def = "5m", .help = "how long the full level's stress test runs"},
        {.name = "backend", .kind = ARG_ENUM, .id = CHECK_BACKEND, .metavar = "NAME", .choices = "cuda|opencl|auto",
         .def = "auto: CUDA when it has a device, else OpenCL",
         .help = "run the device probes through cuda, opencl or auto; a CPU OpenCL device is never judged as a GPU"},
        {.name = "probe-timeout", .kind = ARG_TEXT, .id = CHECK_PROBE_TIMEOUT, .metavar = "[PROBE=]DURATION",
         .def = "10-15s per probe",
         .help = "the deadline of each device probe, or of the one named (functional, transfer, memory, p2p; "
                 "repeatable); a probe past it is an error naming it"},
        {.name = "with-dcgm", .kind = ARG_NUMBER, .id = CHECK_WITH_DCGM, .metavar = "LEVEL", .min = 1, .max = 4,
         .help = "also run DCGM's diagnostic, `dcgmi diag -r LEVEL -j`, and fold its results in (dcgm.diag)"},
        {.name = "dcgm-timeout", .kind = ARG_DURATION, .id = CHECK_DCGM_TIMEOUT, .min = 1000, .max = 24 * HOUR_MS,
         .def = "per level: 5m, 15m, 1h, 4h", .help = "kill dcgmi after this long"},
        {.name = "container-runtime", .kind = ARG_PROGRAM, .id = CHECK_CONTAINER_RUNTIME,
         .def = "the site policy's container.runtime, $GPUVET_CONTAINER_RUNTIME, else docker then podman in PATH",
         .help = "docker or podman for container.gpu_access (standard level)"},
        {.name = "container-image", .kind = ARG_TEXT, .id = CHECK_CONTAINER_IMAGE, .metavar = "IMAGE",
         .def = "the site policy's container.image, else NVIDIA's CUDA base image of the newest CUDA the driver runs",
         .help = "container.gpu_access's test image; never pulled"},
        {.name = "container-timeout", .kind = ARG_DURATION, .id = CHECK_CONTAINER_TIMEOUT, .min = 1000,
         .max = HOUR_MS, .def = "60s", .help = "kill the container run after this long"},
        OPT_JSON("gpuvet.report/1"),
        {.name = "strict", .kind = ARG_FLAG, .id = CHECK_STRICT, .help = "exit 1 on warnings too"},
        {.name = "policy", .kind = ARG_FILE, .id = CHECK_POLICY,
         .def = "/etc/gpuvet/policy.yaml (or .yml) under --root when it exists",
         .help = "judge by this site policy (docs/policy.md): expected GPUs, driver and CUDA, severities, "
                 "thresholds, exceptions and a reference node"},
        {.name = "no-policy", .kind = ARG_FLAG, .id = CHECK_NO_POLICY, .help = "ignore the default policy file"},
        {.name = "only", .kind = ARG_LIST, .id = CHECK_ONLY,
         .help = "run only these checks: ids or categories, comma-separated (\"pcie,gpu.nouveau\")"},
        {.name = "list", .kind = ARG_FLAG, .id = CHECK_LIST, .help = "list the checks of the level and exit"},
        {.name = "verbose", .letter = 'v', .kind = ARG_FLAG,
         .help = "show observed and expected values of passing checks too"},
        {.name = "problems", .kind = ARG_FLAG, .id = CHECK_PROBLEMS,
         .help = "show only warnings, failures and errors, with their remedies, and the verdict"},
        {.name = "quiet", .letter = 'q', .kind = ARG_FLAG, .help = "no text report and no progress (use with --json)"},
        {.name = "no-progress", .kind = ARG_FLAG, .id = CHECK_NO_PROGRESS,
         .help = "no progress line on standard error while the probes, benchmarks and stress test run"},
        {.name = "cuda-init-timeout-ms", .kind = ARG_DURATION_MS, .id = CHECK_CUDA_INIT_TIMEOUT, .min = 1,
         .max = 600000, .def = "20s", .help = "give up on loading libcuda and cuInit after this long"},
        {0},
};

const struct cmd_spec cmd_check_spec = {
        .name = "check",
        .summary = "Check the node for GPU work: one verdict, one line per check, a remedy for each problem.",
        .opts = check_options,
        .nvml = true,
        .color = true,
        .notes = "NVML is asked about the live system (--root /) unless --no-nvml. Under another --root it is "
                 "asked only when a library is named (--nvml-lib or $GPUVET_NVML_LIB): a capture replayed "
                 "elsewhere must not be judged by this machine's GPUs. A hung NVML call becomes an error result "
                 "naming the function and GPU; the report is still written.\n\n"
                 "gpu.cuda_driver loads libcuda.so.1 ($GPUVET_CUDA_LIB) and calls cuInit in a child process "
                 "while NVML is read, under the same rule. The device probes follow the same rule: under another "
                 "--root they run only with --backend or $GPUVET_CUDA_LIB. Each runs in a child process under a "
                 "deadline (docs/checks/device.md); a hung probe becomes an error result naming it.",
        .exit_status = "0 pass (warnings allowed), 1 a check failed (--strict: or warned), 2 usage or bad input, "
                       "3 internal error.",
        .on_option = check_option,
};

/* Everything one run holds; check_run_end frees it. */
struct check_run {
        const struct check_cli *cli;
        const struct cmd_args *args;
        struct machine m;
        struct policy policy;
        bool have_policy, have_after, have_report;
        struct cuda_driver_probe *cuda; /* forked and held until the facts are in */
        input_set needs;      /* the inputs the selected checks need (sys/inputs.def) */
        unsigned want_probes; /* the probes the selected checks judge (bench/probes.h) */
        double nvml_read_at;
        struct probe_facts probes;
        bool have_burn, have_suite;
        struct burn_facts burn;
        struct bench_suite_facts suite;
        struct nvml_facts nvml_after;
        struct nvml_options nvml_opts; /* the command's, reading CHECK_NVML_GROUPS */
        struct container_gpu_facts *container_gpu; /* container.gpu_access's run; NULL when not selected */
        struct report rep;
        struct text_options text; /* header_shown once the text report has begun on stdout */
};

/* The progress lines of the slow steps (probes, stress test, benchmarks): --no-progress
 * (burn.progress, the stress test's own switch) and -q turn them off. */
static bool want_progress(const struct check_cli *o) { return o->burn.progress && !o->quiet; }

void check_step_line(struct progress *p, const struct check_cli *o, const char *what, unsigned deadline_s) {
        char limit[16];
        progress_init(p, want_progress(o));
        progress_duration(limit, sizeof(limit), deadline_s);
        if (progress_begin(p, 0)) {
                progress_line(p, "%s: %s, up to %s (its deadline)", o->command, what, limit);
                progress_end(p);
        }
}

static struct run_info check_run_info(const struct check_run *c, double start) {
        const struct check_cli *o = c->cli;
        return (struct run_info){
                .command = o->command, .level = o->level, .root = c->args->common.root, .strict = o->strict,
                .duration_ms = monotonic_ms() - start, .policy = c->have_policy ? c->policy.path : NULL,
        };
}

/* The text report's header as soon as the facts are in, before the slow steps: the run
 * shows what it judges at once, not after the probes. */
static void check_text_begin(struct check_run *c) {
        const struct check_cli *o = c->cli;
        if (o->quiet || (o->json_path && strcmp(o->json_path, "-") == 0))
                return;
        c->text = o->text;
        /* o->color: what a command running check for its own ends wants (slurm-health: never);
         * else --color, which text_want_color honours */
        c->text.color = strcmp(o->color, "never") != 0 && (strcmp(o->color, "always") == 0 || text_want_color(stdout));
        c->text.width = text_wrap_width(stdout);
        struct run_info run = check_run_info(c, 0);
        report_text_header(stdout, c->m.facts, &run, &c->text);
        fflush(stdout);
        c->text.header_shown = true;
}

/* The inputs, the site policy, the facts, the CUDA driver probe, and NVML when a selected
 * check reads it. NVML is read on a thread while the facts are gathered (neither needs the
 * other); the probe's child is forked before that thread, held, and released (or sent
 * away) once the facts tell whether a GPU is on the nvidia driver. Returns 0 or an exit
 * code after printing why. */
static int check_gather(struct check_run *c) {
        const struct check_cli *o = c->cli;
        int code = machine_open(o->command, &c->args->common, &c->m);
        if (code)
                return code;
        /* Before gathering: a bad policy is bad input, named before any slow work. */
        code = site_policy_load(o->command, o->policy_path, o->no_policy, c->m.fs, &c->policy, &c->have_policy);
        if (code)
                return code;
        const struct policy *policy = c->have_policy ? &c->policy : NULL;
        c->needs = needed_inputs(o->level, o->only, policy);

        /* Before any thread: the probe's child runs library code after fork. */
        const char *cuda_unwanted = cuda_probe_unwanted(c->m.fs, c->needs);
        if (!cuda_unwanted)
                c->cuda = cuda_driver_probe_hold(NULL, o->cuda_timeout_ms);
        /* No selected check reads NVML: loading libnvidia-ml would wake the GPUs for nothing. */
        bool want_nvml = c->needs & NEED_NVML;
        if (want_nvml) {
                c->nvml_opts = c->args->nvml;
                c->nvml_opts.groups = CHECK_NVML_GROUPS;
                if ((code = machine_nvml_begin(&c->m, &c->nvml_opts)) != 0)
                        return code;
        }

        if ((code = machine_gather_some(&c->m, c->args->common.timeout_s, c->needs)) != 0)
                return code;
        struct facts *f = c->m.facts;
        f->inputs_read |= c->needs & (NEED_POLICY | NEED_CUDA_DRIVER | NEED_NVML);
        struct cuda_driver_probe *cuda = settle_cuda_probe(c->cuda, cuda_unwanted, f);
        c->cuda = NULL;
        if (!want_nvml) {
                snprintf(f->nvml_note, sizeof(f->nvml_note), "not needed by the selected checks");
        } else {
                code = machine_nvml_join(&c->m);
                c->nvml_read_at = c->m.nvml.read_ms ? c->m.nvml.read_ms : monotonic_ms();
        }
        if (cuda)
                cuda_driver_probe_finish(cuda, &f->cuda_driver);
        f->policy = policy;
        return code;
}

/* The device probes, when a selected check judges them (bench/probes.h); then the counters
 * again, after the probes loaded every GPU and link: what grew while they ran is judged as
 * a rate over that window (DCGM's health watches do the same). */
static void check_probe(struct check_run *c) {
        const struct check_cli *o = c->cli;
        struct facts *f = c->m.facts;
        for (int i = 0; i < _PROBE_COUNT; i++)
                if (c->needs & (NEED_PROBE_FUNCTIONAL << i))
                        c->want_probes |= PROBE_BIT(i);
        if (!c->want_probes)
                return;
        f->inputs_read |= c->needs & INPUTS_PROBES;
        if (fsroot_is_live(c->m.fs) || o->backend || cuda_driver_lib_named())
                probes_run(c->m.fs, f, o->backend ? o->backend : "auto", c->args->common.data_dir, o->probe_timeout_s,
                           c->want_probes, want_progress(o), &c->probes);
        else
                probes_not_run(&c->probes, "device probes not run: --root names a capture, not this machine's "
                                           "devices (--backend probes them anyway)");
        f->probes = &c->probes;

        if (f->nvml.init_state != NVML_INIT_OK || f->nvml.abandoned || !c->m.nvml.lib)
                return;
        int r = nvml_facts_gather_some(c->m.nvml.lib, &c->args->nvml.dl, CHECK_NVML_GROUPS, &c->nvml_after);
        c->have_after = true;
        f->inputs_read |= NEED_NVML_AFTER;
        if (c->nvml_after.abandoned)
                f->nvml.abandoned = true; /* nvml_use_end then leaves with _exit */
        if (r == 0 && c->nvml_after.init_state == NVML_INIT_OK) {
                f->nvml_after = &c->nvml_after;
                f->nvml_window_s = (monotonic_ms() - c->nvml_read_at) / 1e3;
        }
}

/* container.gpu_access's container: after the probes, which must find the GPUs idle. */
static void check_container(struct check_run *c) {
        const struct check_cli *o = c->cli;
        struct facts *f = c->m.facts;
        if (!(c->needs & NEED_CONTAINER_GPU))
                return;
        f->inputs_read |= NEED_CONTAINER_GPU;
        if (!(c->container_gpu = malloc(sizeof(*c->container_gpu)))) {
                fprintf(stderr, "gpuvet %s: out of memory for container.gpu_access, ignoring\n", o->command);
                return;
        }
        check_container_gpu(o, c->m.fs, c->args->common.data_dir, f, c->container_gpu);
        f->container_gpu = c->container_gpu;
}

/* DCGM's diagnostic loads the GPUs: after the probes and their second NVML read. */
static void check_dcgm(struct check_run *c) {
        const struct check_cli *o = c->cli;
        struct facts *f = c->m.facts;
        if (!o->dcgm_level)
                return;
        const char *named = secure_getenv(DCGMI_ENV);
        f->dcgm.state = DCGM_NOT_RUN;
        f->dcgm.level = o->dcgm_level;
        if (!fsroot_is_live(c->m.fs) && !(named && *named))
                snprintf(f->dcgm.note, sizeof(f->dcgm.note),
                         "not run: --root names a capture, and dcgmi would test this machine's GPUs");
        else if ((c->needs & NEED_DCGM) && f->gpus.n > 0) {
                struct progress line;
                char what[48];
                snprintf(what, sizeof(what), "DCGM's diagnostic (dcgmi diag -r %d)", o->dcgm_level);
                check_step_line(&line, o, what, o->dcgm_timeout_s ? o->dcgm_timeout_s : dcgm_default_timeout_s(o->dcgm_level));
                dcgm_run(o->dcgm_level, o->dcgm_timeout_s, &f->dcgm);
                progress_clear(&line);
        }
}

static void on_stop_signal(int sig) {
        (void)sig;
        burn_request_stop();
}

/* The stress test, when a selected check judges it (category burn): after the probes, on
 * the live devices (under another --root only with --backend or $GPUVET_CUDA_LIB, as the
 * probes). SIGINT and SIGTERM stop it within a second, and what it found is judged and
 * reported as the run's partial result. */
static void check_burn(struct check_run *c) {
        const struct check_cli *o = c->cli;
        struct facts *f = c->m.facts;
        if (!(c->needs & NEED_BURN))
                return;
        c->have_burn = true;
        f->inputs_read |= NEED_BURN;
        f->burn = &c->burn;
        if (!fsroot_is_live(c->m.fs) && !o->backend && !cuda_driver_lib_named()) {
                burn_not_run(&c->burn, "not run: --root names a capture, not this machine's devices (--backend "
                                       "loads them anyway)");
                return;
        }
        struct burn_options bo = o->burn;
        bo.backend = o->backend ? o->backend : "auto";
        bo.progress = want_progress(o);
        struct sigaction sa = {.sa_handler = on_stop_signal}, old_int, old_term;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        burn_run(&bo, f, c->m.nvml.lib, &c->args->nvml.dl, &c->burn);
        if (c->burn.nvml_abandoned)
                f->nvml.abandoned = true; /* nvml_use_end then leaves with _exit */
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
}

/* Every benchmark, when device.benchmarks is selected (the full level): after the stress
 * test, so that the GPUs are warm as a job finds them. Only on a node with NVIDIA GPUs, on
 * the live devices (or with --backend / $GPUVET_CUDA_LIB), as the probes. */
static void check_bench_suite(struct check_run *c) {
        const struct check_cli *o = c->cli;
        struct facts *f = c->m.facts;
        if (!(c->needs & NEED_BENCH_SUITE))
                return;
        c->have_suite = true;
        f->inputs_read |= NEED_BENCH_SUITE;
        f->bench_suite = &c->suite;
        if (!fsroot_is_live(c->m.fs) && !o->backend && !cuda_driver_lib_named())
                bench_suite_not_run(&c->suite, "not run: --root names a capture, not this machine's devices "
                                               "(--backend runs them anyway)");
        else if (f->gpus.n == 0 && !o->backend)
                bench_suite_not_run(&c->suite, "no NVIDIA GPU on the PCI bus");
        else
                bench_suite_run(c->m.fs, f, o->backend ? o->backend : "auto", c->args->common.data_dir, want_progress(o),
                                &c->suite);
}

#ifdef GPUVET_TEST_HOOKS
/* GPUVET_TEST_POISON_UNDECLARED=1 (gpuvet-test-hooks only): each check runs with the facts
 * of every input it did not declare (needs, uses, INPUTS_ALWAYS) overwritten with a byte
 * no reading leaves there, then restored: a check that reads an input it did not declare
 * judges garbage or crashes, where alone (--only) it would judge zeros
 * (tests/golden/test_check_needs.py). */
#define POISON_BYTE 0xA5
static const struct {
        size_t off, size;
} input_members[INPUT_COUNT] = {
#define INPUT(id, member, phase, live, worst_ms, deps, gather, done)                                               \
        [INPUT_##id] = {offsetof(struct facts, member), sizeof(((struct facts *)0)->member)},
#include "sys/inputs.def"
#undef INPUT
};

static void poison_undeclared(struct facts *f, const struct check_info *ci) {
        input_set declared = inputs_closure(ci->needs | INPUTS_ALWAYS) | ci->uses;
        for (size_t i = 0; i < INPUT_COUNT; i++) {
                bool shared = false; /* the probes share one member: poisoned when none is declared */
                for (size_t j = 0; j < INPUT_COUNT && !shared; j++)
                        shared = (declared & (1u << j)) && input_members[j].off == input_members[i].off;
                if (!shared)
                        memset((char *)f + input_members[i].off, POISON_BYTE, input_members[i].size);
        }
        if (!(declared & NEED_NVML)) {
                memset(f->nvml_note, POISON_BYTE, sizeof(f->nvml_note));
                memset(f->nvml_lib_path, POISON_BYTE, sizeof(f->nvml_lib_path));
        }
        if (!(declared & NEED_NVML_AFTER))
                memset(&f->nvml_window_s, POISON_BYTE, sizeof(f->nvml_window_s));
}

static void run_check(const struct check_info *ci, struct facts *f, struct report *rep) {
        const char *poison = getenv("GPUVET_TEST_POISON_UNDECLARED");
        struct facts *kept = poison && *poison == '1' ? malloc(sizeof(*f)) : NULL;
        if (kept) {
                memcpy(kept, f, sizeof(*f));
                poison_undeclared(f, ci);
        }
        ci->run(ci, f, rep);
        if (kept) {
                memcpy(f, kept, sizeof(*f));
                free(kept);
        }
}
#else
static void run_check(const struct check_info *ci, struct facts *f, struct report *rep) { ci->run(ci, f, rep); }
#endif

/* Run the selected checks (one the policy turns off is a skip naming the policy line). */
static void check_judge(struct check_run *c) {
        const struct check_cli *o = c->cli;
        report_init(&c->rep);
        c->have_report = true;
        for (size_t i = 0; i < check_registry_count; i++) {
                const struct check_info *ci = check_registry[i];
                if (!(ci->level <= o->level && selected(ci, o->only)))
                        continue;
                unsigned line = 0;
                if (policy_severity_of(c->m.facts->policy, ci, &line) == POLICY_SEVERITY_OFF) {
                        struct result *off = result_new(&c->rep, ci, "host");
                        result_status(off, STATUS_SKIP, "off by site policy (%s:%u)", c->policy.path, line);
                        continue;
                }
                run_check(ci, c->m.facts, &c->rep);
        }
        report_tally(&c->rep);
        policy_apply(c->m.facts->policy, &c->rep);
}

/* The JSON report and the text; the exit code from the verdict. */
static int check_output(struct check_run *c, double start) {
        const struct check_cli *o = c->cli;
        struct run_info run = check_run_info(c, start);
        int code = EXIT_PASS;
        if (o->json_path &&
            write_json_output(o->command, o->json_path, report_json(c->m.facts, &c->rep, &run)) != EXIT_PASS)
                code = EXIT_INTERNAL;
        if (c->text.header_shown)
                report_text(stdout, c->m.facts, &c->rep, &run, &c->text);
        if (code == EXIT_PASS) {
                enum status verdict = report_verdict(&c->rep);
                if (verdict == STATUS_FAIL || (o->strict && verdict == STATUS_WARN))
                        code = EXIT_FAILED;
        }
        return c->rep.out_of_memory ? EXIT_INTERNAL : code;
}

static int check_run_end(struct check_run *c, int code) {
        if (c->cuda) /* held when the facts failed: the child leaves without loading libcuda */
                (void)cuda_driver_probe_cancel(c->cuda, NULL, "");
        if (c->have_report)
                report_done(&c->rep);
        if (c->want_probes)
                probes_done(&c->probes);
        if (c->have_burn)
                burn_done(&c->burn);
        if (c->have_suite)
                bench_suite_done(&c->suite);
        if (c->have_after)
                nvml_facts_done(&c->nvml_after);
        free(c->container_gpu);
        code = machine_done(&c->m, code); /* _exits when an NVML call never returned */
        if (c->have_policy)
                policy_free(&c->policy);
        return code;
}

int check_execute(const struct check_cli *o, const struct cmd_args *args) {
        double start = monotonic_ms();
        struct check_run c = {.cli = o, .args = args};
        int code = check_gather(&c);
        if (code == 0) {
                check_text_begin(&c);
                check_probe(&c);
                check_burn(&c);
                check_bench_suite(&c);
                check_container(&c);
                check_dcgm(&c);
                check_judge(&c);
                if (o->judged)
                        o->judged(&c.rep, o->judged_ctx);
                code = check_output(&c, start);
        }
        return check_run_end(&c, code);
}

int cmd_check(int argc, char **argv) {
        struct check_cli o = {
                .command = "check", .level = LEVEL_QUICK, .color = "auto",
                /* The full level's stress test: the GEMM load, then the memory test. */
                .burn = {.modes = BURN_MODE_BIT(BURN_MODE_GEMM) | BURN_MODE_BIT(BURN_MODE_MEMTEST),
                         .duration_ms = BURN_DEFAULT_DURATION_MS, .progress = true},
        };
        struct cmd_args args;
        int code = cmd_parse(&cmd_check_spec, argc, argv, &o, &args);
        if (code >= 0)
                return code;
        if (o.only && !check_only_is_valid("check", o.only))
                return EXIT_USAGE;
        if (o.list)
                return list_checks(o.level, o.only);
        if (o.quiet && !o.json_path) /* a run that says nothing looks like one that did nothing */
                fputs("gpuvet check: -q without --json writes no report: only the exit status tells the verdict\n",
                      stderr);
        return check_execute(&o, &args);
}

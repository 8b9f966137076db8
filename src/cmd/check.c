#include "bench/probes.h"
#include "bench/suite.h"
#include "burn/burn.h"
#include "checks/check.h"
#include "cmd/check_run.h"
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/machine.h"
#include "cmd/site_policy.h"
#include "core/deadline.h"
#include "core/fsroot.h"
#include "core/progress.h"
#include "core/strparse.h"
#include "policy/policy.h"
#include "report/report_json.h"
#include "report/report_text.h"
#include "sys/cuda_driver.h"
#include "sys/container_gpu.h"
#include "sys/dcgm.h"
#include "sys/nvml_facts.h"

#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
        "Usage: gpuvet check [OPTIONS]\n"
        "\n"
        "Check the node for GPU work: one verdict, one line per check, a remedy for each problem.\n"
        "\n"
        "Options:\n"
        "  -l, --level LEVEL     quick (default; OS and PCI state, under a second),\n"
        "                        standard (adds device probes on every GPU: a verified\n"
        "                        kernel, H2D/D2H, memory bandwidth, P2P, the PCIe link\n"
        "                        under load; under 60 s on 8 GPUs); full (adds the\n"
        "                        stress test: GEMM with verified results, then the memory\n"
        "                        test; docs/burn.md)\n"
        "      --burn-duration D the full level's stress test: 5m (default), 90s, 1h30m\n"
        "      --backend NAME    device probes through cuda, opencl or auto (default: CUDA\n"
        "                        when it has a device, else OpenCL); a CPU OpenCL device\n"
        "                        is never judged as a GPU\n"
        "      --probe-timeout [PROBE=]SEC  deadline of each device probe, or of the one\n"
        "                        named (functional, transfer, memory, p2p; repeatable;\n"
        "                        default 10-15 s per probe); a probe past it is an error\n"
        "                        naming it\n"
        "      --with-dcgm LEVEL also run DCGM's diagnostic, `dcgmi diag -r LEVEL -j` (1-4),\n"
        "                        and fold its results in (dcgm.diag)\n"
        "      --dcgm-timeout SEC  kill dcgmi after SEC (default per level: 300, 900,\n"
        "                        3600, 14400)\n"
        "      --container-runtime PATH  docker or podman for container.gpu_access (standard\n"
        "                        level; default: the site policy's container.runtime,\n"
        "                        $GPUVET_CONTAINER_RUNTIME, else docker then podman in PATH)\n"
        "      --container-image IMAGE  its test image (default: the site policy's\n"
        "                        container.image, else NVIDIA's CUDA base image of the\n"
        "                        newest CUDA the driver runs); never pulled\n"
        "      --container-timeout SEC  kill the container run after SEC (default 60)\n"
        "  -j, --json FILE       also write the JSON report (schema gpuvet.report/1) to FILE\n"
        "                        (\"-\" for standard output, which then holds only the JSON)\n"
        "      --strict          exit 1 on warnings too\n"
        "      --policy FILE     judge by this site policy (docs/policy.md): expected GPUs,\n"
        "                        driver and CUDA, severities, thresholds, exceptions and a\n"
        "                        reference node; default /etc/gpuvet/policy.yaml (or .yml)\n"
        "                        under --root when it exists\n"
        "      --no-policy       ignore the default policy file\n"
        "      --only LIST       run only these checks: ids or categories, comma-separated\n"
        "                        (\"pcie,gpu.nouveau\")\n"
        "      --list            list the checks of the level and exit\n"
        "  -v, --verbose         show observed and expected values of passing checks too\n"
        "  -q, --quiet           no text report and no progress (use with --json)\n"
        "      --no-progress     no progress line on standard error (device probes,\n"
        "                        stress test, benchmarks)\n"
        "      --color WHEN      auto (default), always or never; NO_COLOR is honoured\n"
        "      --timeout SEC     give up (exit 3) if gathering blocks this long (default 30)\n"
        "  -r, --root DIR        read /sys, /proc, /etc under DIR (a fixture or snapshot);\n"
        "                        default / or $GPUVET_FSROOT\n"
        "      --data-dir DIR    GPU table and compatibility data from DIR ($GPUVET_DATA_DIR)\n"
        "      --nvml-lib PATH   load this libnvidia-ml instead of libnvidia-ml.so.1\n"
        "                        ($GPUVET_NVML_LIB)\n"
        "      --no-nvml         do not call NVML (the gpu.* checks that need it skip)\n"
        "      --nvml-call-timeout-ms MS  abandon an NVML call after MS ms (default 2000)\n"
        "      --nvml-gpu-timeout-ms MS   abandon a GPU's NVML reads after MS ms (default 20000)\n"
        "      --nvml-init-timeout-ms MS  give up on nvmlInit after MS ms (default 20000)\n"
        "      --cuda-init-timeout-ms MS  give up on loading libcuda and cuInit after MS ms\n"
        "                        (default 20000)\n"
        "  -h, --help            this help\n"
        "\n"
        "NVML is asked about the live system (--root /) unless --no-nvml. Under another --root\n"
        "it is asked only when a library is named (--nvml-lib or $GPUVET_NVML_LIB): a capture\n"
        "replayed elsewhere must not be judged by this machine's GPUs. A hung NVML call becomes\n"
        "an error result naming the function and GPU; the report is still written.\n"
        "gpu.cuda_driver loads libcuda.so.1 ($GPUVET_CUDA_LIB) and calls cuInit in a child\n"
        "process while NVML is read, under the same rule.\n"
        "The device probes follow the same rule: under another --root they run only with\n"
        "--backend or $GPUVET_CUDA_LIB. Each runs in a child process under a deadline\n"
        "(docs/checks/device.md); a hung probe becomes an error result naming it.\n"
        "\n"
        "Exit status: 0 pass (warnings allowed), 1 a check failed (--strict: or warned),\n"
        "2 usage or bad input, 3 internal error.\n";

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

#define NO_GPU_ON_NVIDIA "no GPU is bound to the nvidia driver"

/* Probe libcuda and cuInit (gpu.cuda_driver) when the check runs and this machine's
 * driver is the one judged: the live root with a GPU on the nvidia driver, or a library
 * named by $GPUVET_CUDA_LIB (tests, and captures judged with a library on purpose).
 * What can be told before the facts: why the probe is not run, or NULL when it may be
 * (check_gather then forks it, held, before any thread exists). */
static const char *cuda_probe_unwanted(struct fsroot *fs, const struct policy *policy, enum level level,
                                       const char *only) {
        if (!will_run(check_find("gpu.cuda_driver"), level, only, policy))
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

static bool one_of(const char *arg, const char *a, const char *b, const char *c) {
        return strcmp(arg, a) == 0 || strcmp(arg, b) == 0 || strcmp(arg, c) == 0;
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
        unsigned v;
        if (!parse_seconds(eq ? eq + 1 : arg, &v) || v > 3600)
                return cmd_usage_error("check", "--probe-timeout: expected whole seconds 1..3600, not \"%s\"",
                                       eq ? eq + 1 : arg);
        for (int i = 0; i < _PROBE_COUNT; i++)
                if (id < 0 || i == id)
                        timeout_s[i] = v;
        return -1;
}

static int check_option(int opt, const char *arg, void *ctx) {
        struct check_cli *o = ctx;
        int v;
        switch (opt) {
        case 'l':
                o->level = level_from_name(arg);
                if (o->level == _LEVEL_INVALID)
                        return cmd_usage_error("check", "--level: unknown level \"%s\" (quick, standard, full)", arg);
                break;
        case 'j': o->json_path = arg; break;
        case 'S': o->strict = true; break;
        case 'B': return cmd_backend_option("check", arg, &o->backend);
        case 'T' | 0x100:
                return probe_timeout_option(arg, o->probe_timeout_s);
        case 'c' | 0x200:
                if (parse_int(arg, &v) < 0 || v < 1 || v > 600000)
                        return cmd_usage_error("check",
                                               "--cuda-init-timeout-ms: expected milliseconds 1..600000, not \"%s\"", arg);
                o->cuda_timeout_ms = (unsigned)v;
                break;
        case 'D' | 0x200:
                if (parse_int(arg, &o->dcgm_level) < 0 || o->dcgm_level < 1 || o->dcgm_level > 4)
                        return cmd_usage_error("check",
                                               "--with-dcgm: expected a dcgmi diag level 1..4, not \"%s\"", arg);
                break;
        case 'd' | 0x200:
                if (!parse_seconds(arg, &o->dcgm_timeout_s))
                        return cmd_usage_error("check",
                                               "--dcgm-timeout: expected whole seconds 1..86400, not \"%s\"", arg);
                break;
        case 'b' | 0x200: {
                uint64_t ms;
                if (parse_duration_ms(arg, &ms) < 0 || ms < 1000 || ms > 7ull * 24 * 3600 * 1000)
                        return cmd_usage_error("check", "--burn-duration: expected a duration from 1s to 7d (\"5m\", "
                                               "\"90s\", \"1h30m\"), not \"%s\"", arg);
                o->burn.duration_ms = ms;
                break;
        }
        case 'r' | 0x400: o->container_runtime = arg; break;
        case 'i' | 0x400: o->container_image = arg; break;
        case 't' | 0x400:
                if (!parse_seconds(arg, &o->container_timeout_s) || o->container_timeout_s > 3600)
                        return cmd_usage_error("check",
                                               "--container-timeout: expected whole seconds 1..3600, not \"%s\"", arg);
                break;
        case 'O': o->only = arg; break;
        case 'P': o->policy_path = arg; break;
        case 'p' | 0x100: o->no_policy = true; break;
        case 'L': o->list = true; break;
        case 'v': o->text.verbose = true; break;
        case 'q': o->quiet = true; break;
        case 'N' | 0x100: o->burn.progress = false; break;
        case 'C':
                if (!one_of(arg, "auto", "always", "never"))
                        return cmd_usage_error("check", "--color: expected auto, always or never, not \"%s\"", arg);
                o->color = arg;
                break;
        }
        return -1;
}

/* Everything one run holds; check_run_end frees it. */
struct check_run {
        const struct check_cli *cli;
        const struct cmd_args *args;
        struct machine m;
        struct policy policy;
        bool have_policy, have_after, have_report;
        struct cuda_driver_probe *cuda; /* forked and held until the facts are in */
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
        c->text.color = strcmp(o->color, "always") == 0 || (strcmp(o->color, "auto") == 0 && text_want_color(stdout));
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

        /* Before any thread: the probe's child runs library code after fork. */
        const char *cuda_unwanted = cuda_probe_unwanted(c->m.fs, policy, o->level, o->only);
        if (!cuda_unwanted)
                c->cuda = cuda_driver_probe_hold(NULL, o->cuda_timeout_ms);
        unsigned needs = 0;
        for (size_t i = 0; i < check_registry_count; i++)
                if (will_run(check_registry[i], o->level, o->only, policy))
                        needs |= check_registry[i]->needs;
        /* No selected check reads NVML: loading libnvidia-ml would wake the GPUs for nothing. */
        bool want_nvml = needs & CHECK_NEEDS_NVML;
        if (want_nvml) {
                c->nvml_opts = c->args->nvml;
                c->nvml_opts.groups = CHECK_NVML_GROUPS;
                if ((code = machine_nvml_begin(&c->m, &c->nvml_opts)) != 0)
                        return code;
        }

        if ((code = machine_gather(&c->m, c->args->common.timeout_s)) != 0)
                return code;
        struct facts *f = c->m.facts;
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
        for (size_t i = 0; i < check_registry_count && o->level >= LEVEL_STANDARD; i++)
                if (will_run(check_registry[i], o->level, o->only, f->policy))
                        c->want_probes |= probes_wanted_by(check_registry[i]->id);
        if (!c->want_probes)
                return;
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
        if (!will_run(check_find("container.gpu_access"), o->level, o->only, f->policy))
                return;
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
        else if (will_run(check_find("dcgm.diag"), o->level, o->only, f->policy) && f->gpus.n > 0) {
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
        bool wanted = false;
        for (size_t i = 0; i < check_registry_count; i++)
                wanted |= strcmp(check_registry[i]->category, "burn") == 0 && will_run(check_registry[i], o->level, o->only, f->policy);
        if (!wanted)
                return;
        c->have_burn = true;
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
        if (!will_run(check_find("device.benchmarks"), o->level, o->only, f->policy))
                return;
        c->have_suite = true;
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
                ci->run(ci, c->m.facts, &c->rep);
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
        static const struct option own[] = {
                {"level", required_argument, NULL, 'l'},  {"json", required_argument, NULL, 'j'},
                {"strict", no_argument, NULL, 'S'},       {"only", required_argument, NULL, 'O'},
                {"list", no_argument, NULL, 'L'},         {"verbose", no_argument, NULL, 'v'},
                {"quiet", no_argument, NULL, 'q'},        {"color", required_argument, NULL, 'C'},
                {"backend", required_argument, NULL, 'B'},
                {"probe-timeout", required_argument, NULL, 'T' | 0x100},
                {"burn-duration", required_argument, NULL, 'b' | 0x200},
                {"cuda-init-timeout-ms", required_argument, NULL, 'c' | 0x200},
                {"with-dcgm", required_argument, NULL, 'D' | 0x200},
                {"dcgm-timeout", required_argument, NULL, 'd' | 0x200},
                {"container-runtime", required_argument, NULL, 'r' | 0x400},
                {"container-image", required_argument, NULL, 'i' | 0x400},
                {"container-timeout", required_argument, NULL, 't' | 0x400},
                {"policy", required_argument, NULL, 'P'}, {"no-policy", no_argument, NULL, 'p' | 0x100},
                {"no-progress", no_argument, NULL, 'N' | 0x100},
                {NULL, 0, NULL, 0},
        };
        static const struct cmd_spec spec = {
                .name = "check", .usage = usage, .short_opts = "l:j:vq", .own = own, .nvml = true,
                .own_option = check_option,
        };
        struct check_cli o = {
                .command = "check", .level = LEVEL_QUICK, .color = "auto",
                /* The full level's stress test: the GEMM load, then the memory test. */
                .burn = {.modes = BURN_MODE_BIT(BURN_MODE_GEMM) | BURN_MODE_BIT(BURN_MODE_MEMTEST),
                         .duration_ms = BURN_DEFAULT_DURATION_MS, .progress = true},
        };
        struct cmd_args args;
        int code = cmd_parse(&spec, argc, argv, &o, &args);
        if (code >= 0)
                return code;
        if (o.only && !check_only_is_valid("check", o.only))
                return EXIT_USAGE;
        if (o.json_path && (code = output_path_usable("check", "--json", o.json_path)) != 0)
                return code;
        if (o.list)
                return list_checks(o.level, o.only);
        return check_execute(&o, &args);
}

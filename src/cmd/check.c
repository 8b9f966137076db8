#include "bench/probes.h"
#include "checks/check.h"
#include "cmd/cmd.h"
#include "cmd/nvml_use.h"
#include "cmd/site_policy.h"
#include "core/fsroot.h"
#include "core/strparse.h"
#include "policy/policy.h"
#include "report/report_json.h"
#include "report/report_text.h"
#include "sys/cuda_driver.h"
#include "sys/dcgm.h"
#include "sys/nvml_facts.h"
#include "vendor/nvml.h"

#include <errno.h>
#include <getopt.h>
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
        "                        under load; under 60 s on 8 GPUs); full (the stress test)\n"
        "                        is not in this version yet and exits 2\n"
        "      --backend NAME    device probes through cuda, opencl or auto (default: CUDA\n"
        "                        when it has a device, else OpenCL); a CPU OpenCL device\n"
        "                        is never judged as a GPU\n"
        "      --probe-timeout SEC  deadline of each device probe (default 10-15 s per\n"
        "                        probe); a probe past it is an error naming it\n"
        "      --with-dcgm LEVEL also run DCGM's diagnostic, `dcgmi diag -r LEVEL -j` (1-4),\n"
        "                        and fold its results in (dcgm.diag)\n"
        "      --dcgm-timeout SEC  kill dcgmi after SEC (default per level: 300, 900,\n"
        "                        3600, 14400)\n"
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
        "  -q, --quiet           no text report (use with --json)\n"
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

/* Every word of --only must name a check or a category, so a typo is an error, not an
 * empty pass. */
static bool only_is_valid(const char *only) {
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
                        fprintf(stderr, "gpuvet check: --only: no check or category named \"%s\" (see --list)\n", tok);
                        ok = false;
                }
        }
        free(copy);
        if (n == 0) {
                /* Running nothing would print a PASS for a node nobody looked at. */
                fprintf(stderr, "gpuvet check: --only \"%s\" names no check or category (see --list)\n", only);
                return false;
        }
        return ok;
}

static double now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
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

/* Probe libcuda and cuInit (gpu.cuda_driver) when the check runs and this machine's
 * driver is the one judged: the live root with a GPU on the nvidia driver, or a library
 * named by $GPUVET_CUDA_LIB (tests, and captures judged with a library on purpose). */
static struct cuda_driver_probe *start_cuda_probe(struct fsroot *fs, struct facts *f, const struct policy *policy,
                                                  enum level level, const char *only, unsigned timeout_ms) {
        const struct check_info *c = check_find("gpu.cuda_driver");
        bool named_lib = cuda_driver_lib_named();
        if (!will_run(c, level, only, policy)) {
                cuda_driver_not_probed(&f->cuda_driver, "not selected");
                return NULL;
        }
        if (!fsroot_is_live(fs) && !named_lib) {
                cuda_driver_not_probed(&f->cuda_driver, "not probed: --root names a capture, not this machine's driver "
                                                        "($" CUDA_DRIVER_LIB_ENV " probes a library anyway)");
                return NULL;
        }
        if (!named_lib && check_gpus_bound_to(f, "nvidia") == 0) {
                cuda_driver_not_probed(&f->cuda_driver, "no GPU is bound to the nvidia driver");
                return NULL;
        }
        struct cuda_driver_probe *p = cuda_driver_probe_start(NULL, timeout_ms);
        if (!p)
                cuda_driver_not_probed(&f->cuda_driver, "not probed: out of memory");
        return p;
}

int cmd_check(int argc, char **argv) {
        static const struct option options[] = {
                {"level", required_argument, NULL, 'l'},  {"json", required_argument, NULL, 'j'},
                {"strict", no_argument, NULL, 'S'},       {"only", required_argument, NULL, 'O'},
                {"list", no_argument, NULL, 'L'},         {"verbose", no_argument, NULL, 'v'},
                {"quiet", no_argument, NULL, 'q'},        {"color", required_argument, NULL, 'C'},
                {"backend", required_argument, NULL, 'B'},
                {"probe-timeout", required_argument, NULL, 'T' | 0x100},
                {"cuda-init-timeout-ms", required_argument, NULL, 'c' | 0x200},
                {"with-dcgm", required_argument, NULL, 'D' | 0x200},
                {"dcgm-timeout", required_argument, NULL, 'd' | 0x200},
                {"policy", required_argument, NULL, 'P'}, {"no-policy", no_argument, NULL, 'p' | 0x100},
                NVML_LONG_OPTIONS,
                COMMON_LONG_OPTIONS,
        };
        struct common_options common;
        common_options_init(&common);
        enum level level = LEVEL_QUICK;
        const char *json_path = NULL, *only = NULL, *color = "auto", *backend = NULL, *policy_path = NULL;
        bool strict = false, list = false, quiet = false, no_policy = false;
        unsigned probe_timeout_s = 0; /* 0: each probe's own */
        unsigned cuda_timeout_ms = 0;  /* 0: CUDA_DRIVER_TIMEOUT_MS_DEFAULT */
        int dcgm_level = 0;            /* 0: DCGM not run */
        unsigned dcgm_timeout_s = 0;   /* 0: the level's default */
        struct nvml_options nopt = {0};
        struct text_options text = {0};

        optind = 1;
        opterr = 0;
        int opt, code;
        while ((opt = getopt_long(argc, argv, COMMON_SHORT_OPTIONS "l:j:vq", options, NULL)) != -1) {
                switch (opt) {
                case 'l':
                        level = level_from_name(optarg);
                        if (level == _LEVEL_INVALID) {
                                fprintf(stderr, "gpuvet check: --level: unknown level \"%s\" (quick, standard, full)\n", optarg);
                                return EXIT_USAGE;
                        }
                        break;
                case 'j': json_path = optarg; break;
                case 'S': strict = true; break;
                case 'B':
                        if (strcmp(optarg, "cuda") && strcmp(optarg, "opencl") && strcmp(optarg, "auto")) {
                                fprintf(stderr, "gpuvet check: --backend: expected cuda, opencl or auto, not \"%s\"\n",
                                        optarg);
                                return EXIT_USAGE;
                        }
                        backend = optarg;
                        break;
                case 'T' | 0x100:
                        if (!parse_seconds(optarg, &probe_timeout_s) || probe_timeout_s > 3600) {
                                fprintf(stderr, "gpuvet check: --probe-timeout: expected whole seconds 1..3600, not "
                                                "\"%s\"\n", optarg);
                                return EXIT_USAGE;
                        }
                        break;
                case 'c' | 0x200: {
                        int v;
                        if (parse_int(optarg, &v) < 0 || v < 1 || v > 600000) {
                                fprintf(stderr, "gpuvet check: --cuda-init-timeout-ms: expected milliseconds 1..600000, "
                                                "not \"%s\"\n", optarg);
                                return EXIT_USAGE;
                        }
                        cuda_timeout_ms = (unsigned)v;
                        break;
                }
                case 'D' | 0x200:
                        if (parse_int(optarg, &dcgm_level) < 0 || dcgm_level < 1 || dcgm_level > 4) {
                                fprintf(stderr, "gpuvet check: --with-dcgm: expected a dcgmi diag level 1..4, not \"%s\"\n",
                                        optarg);
                                return EXIT_USAGE;
                        }
                        break;
                case 'd' | 0x200:
                        if (!parse_seconds(optarg, &dcgm_timeout_s)) {
                                fprintf(stderr, "gpuvet check: --dcgm-timeout: expected whole seconds 1..86400, not "
                                                "\"%s\"\n", optarg);
                                return EXIT_USAGE;
                        }
                        break;
                case 'O': only = optarg; break;
                case 'P': policy_path = optarg; break;
                case 'p' | 0x100: no_policy = true; break;
                case 'L': list = true; break;
                case 'v': text.verbose = true; break;
                case 'q': quiet = true; break;
                case 'C':
                        if (strcmp(optarg, "auto") && strcmp(optarg, "always") && strcmp(optarg, "never")) {
                                fprintf(stderr, "gpuvet check: --color: expected auto, always or never, not \"%s\"\n", optarg);
                                return EXIT_USAGE;
                        }
                        color = optarg;
                        break;
                default:
                        if ((code = nvml_option("check", opt, &nopt)) != 0) {
                                if (code < 0)
                                        return EXIT_USAGE;
                                break;
                        }
                        if ((code = common_option("check", opt, usage, &common, argv)) >= 0)
                                return code;
                }
        }
        if ((code = common_no_operands("check", argc, argv)) >= 0)
                return code;
        if (only && !only_is_valid(only))
                return EXIT_USAGE;
        if (json_path && (code = output_path_usable("check", "--json", json_path)) != 0)
                return code;
        if (list)
                return list_checks(level, only);
        /* Running standard under the name full would let a gate pass a node that was never
         * stressed. --list still shows what the level will hold. */
        if (level == LEVEL_FULL) {
                fprintf(stderr, "gpuvet check: --level full needs the stress test (gpuvet burn), which this "
                                "version does not have yet; use --level standard\n");
                return EXIT_USAGE;
        }

        double start = now_ms();
        struct fsroot *fs;
        struct gpudb *db;
        code = open_inputs(&common, &fs, &db);
        if (code)
                return code;
        /* Before gathering: a bad policy is bad input, named before any slow work. */
        struct policy policy;
        bool have_policy;
        code = site_policy_load("check", policy_path, no_policy, fs, &policy, &have_policy);
        if (code) {
                gpudb_free(db);
                fsroot_free(fs);
                return code;
        }

        watchdog_arm(common.timeout_s, "gathering facts");
        struct facts facts;
        int r = facts_gather(fs, db, &facts);
        watchdog_arm(0, "");
        struct nvml_use nvml = {0};
        double nvml_read_at = 0;
        /* Before NVML starts its threads: the probe forks, and overlaps NVML's reads. */
        struct cuda_driver_probe *cuda = NULL;
        if (r == 0)
                cuda = start_cuda_probe(fs, &facts, have_policy ? &policy : NULL, level, only, cuda_timeout_ms);
        unsigned needs = 0;
        for (size_t i = 0; i < check_registry_count; i++)
                if (will_run(check_registry[i], level, only, have_policy ? &policy : NULL))
                        needs |= check_registry[i]->needs;
        if (r == 0 && !(needs & CHECK_NEEDS_NVML)) {
                /* No selected check reads it: loading libnvidia-ml would wake the GPUs for nothing. */
                snprintf(facts.nvml_note, sizeof(facts.nvml_note), "not needed by the selected checks");
        } else if (r == 0) {
                /* NVML keeps its own deadlines (per call, per GPU, for init): it returns on
                 * time even when a call never does, so the watchdog is not armed here. */
                code = nvml_use_start(&nvml, &nopt, fs, &facts);
                nvml_read_at = now_ms();
                if (code) {
                        if (cuda)
                                cuda_driver_probe_finish(cuda, &facts.cuda_driver);
                        code = nvml_use_end(&nvml, code);
                        facts_done(&facts);
                        if (have_policy)
                                policy_free(&policy);
                        gpudb_free(db);
                        fsroot_free(fs);
                        return code;
                }
        }
        if (r < 0) {
                fprintf(stderr, "gpuvet check: gathering facts: %s\n", strerror(-r));
                facts_done(&facts);
                if (have_policy)
                        policy_free(&policy);
                gpudb_free(db);
                fsroot_free(fs);
                return EXIT_INTERNAL;
        }

        facts.policy = have_policy ? &policy : NULL;
        if (cuda)
                cuda_driver_probe_finish(cuda, &facts.cuda_driver);

        /* Device probes, when a selected check judges them (bench/probes.h). */
        struct probe_facts probes;
        bool want_probes = false;
        for (size_t i = 0; i < check_registry_count && level >= LEVEL_STANDARD; i++)
                want_probes |= will_run(check_registry[i], level, only, facts.policy) &&
                               probes_wanted_by(check_registry[i]->id);
        if (want_probes) {
                if (fsroot_is_live(fs) || backend || secure_getenv("GPUVET_CUDA_LIB"))
                        probes_run(fs, &facts, backend ? backend : "auto", common.data_dir, probe_timeout_s,
                                   &probes);
                else
                        probes_not_run(&probes, "device probes not run: --root names a capture, not this machine's "
                                                "devices (--backend probes them anyway)");
                facts.probes = &probes;
        }
        /* The counters again, after the probes loaded every GPU and link: what grew while
         * they ran is judged as a rate over that window (DCGM's health watches do the same). */
        struct nvml_facts nvml_after;
        bool have_after = false;
        if (want_probes && facts.nvml.init_state == NVML_INIT_OK && !facts.nvml.abandoned && nvml.lib) {
                int ra = nvml_facts_gather(nvml.lib, &nopt.dl, &nvml_after);
                have_after = true;
                if (nvml_after.abandoned)
                        facts.nvml.abandoned = true; /* nvml_use_end then leaves with _exit */
                if (ra == 0 && nvml_after.init_state == NVML_INIT_OK) {
                        facts.nvml_after = &nvml_after;
                        facts.nvml_window_s = (now_ms() - nvml_read_at) / 1e3;
                }
        }

        /* DCGM's diagnostic loads the GPUs: after the probes and their second NVML read. */
        if (dcgm_level && r == 0) {
                const struct check_info *dc = check_find("dcgm.diag");
                const char *named = secure_getenv(DCGMI_ENV);
                facts.dcgm.state = DCGM_NOT_RUN;
                facts.dcgm.level = dcgm_level;
                if (!fsroot_is_live(fs) && !(named && *named))
                        snprintf(facts.dcgm.note, sizeof(facts.dcgm.note),
                                 "not run: --root names a capture, and dcgmi would test this machine's GPUs");
                else if (will_run(dc, level, only, facts.policy) && facts.gpus.n > 0)
                        dcgm_run(dcgm_level, dcgm_timeout_s, &facts.dcgm);
        }

        struct report rep;
        report_init(&rep);
        for (size_t i = 0; i < check_registry_count; i++) {
                const struct check_info *c = check_registry[i];
                if (!(c->level <= level && selected(c, only)))
                        continue;
                unsigned line = 0;
                if (policy_severity_of(facts.policy, c, &line) == POLICY_SEVERITY_OFF) {
                        struct result *off = result_new(&rep, c, "host");
                        result_status(off, STATUS_SKIP, "off by site policy (%s:%u)", policy.path, line);
                        continue;
                }
                c->run(c, &facts, &rep);
        }
        report_tally(&rep);
        policy_apply(facts.policy, &rep);

        struct run_info run = {
                .command = "check", .level = level, .root = common.root, .strict = strict,
                .duration_ms = now_ms() - start, .policy = have_policy ? policy.path : NULL,
        };
        bool json_to_stdout = json_path && strcmp(json_path, "-") == 0;
        code = EXIT_PASS;
        if (json_path && write_json_output("check", json_path, report_json(&facts, &rep, &run)) != EXIT_PASS)
                code = EXIT_INTERNAL;
        if (!quiet && !json_to_stdout) {
                text.color = strcmp(color, "always") == 0 || (strcmp(color, "auto") == 0 && text_want_color(stdout));
                report_text(stdout, &facts, &rep, &run, &text);
        }

        if (code == EXIT_PASS) {
                enum status verdict = report_verdict(&rep);
                if (verdict == STATUS_FAIL || (strict && verdict == STATUS_WARN))
                        code = EXIT_FAILED;
        }
        if (rep.out_of_memory)
                code = EXIT_INTERNAL;
        report_done(&rep);
        if (want_probes)
                probes_done(&probes);
        if (have_after)
                nvml_facts_done(&nvml_after);
        code = nvml_use_end(&nvml, code); /* _exits when an NVML call never returned */
        facts_done(&facts);
        if (have_policy)
                policy_free(&policy);
        gpudb_free(db);
        fsroot_free(fs);
        return code;
}

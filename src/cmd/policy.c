/* gpuvet policy capture | validate: write this node as a site policy's reference, or read
 * a policy and name every problem in it (policy/policy.h, docs/policy.md). */
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/registry.h"
#include "cmd/specs.h"
#include "cmd/machine.h"
#include "core/atomic_file.h"
#include "policy/capture.h"
#include "results/golden.h"
#include "policy/policy.h"
#include "sys/facts.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void iso_now(char *buf, size_t size) {
        time_t t = time(NULL);
        struct tm tm;
        if (!gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
                snprintf(buf, size, "unknown");
}

static int capture_option(int id, const struct opt_value *v, void *ctx) {
        (void)id; /* -o is its one option */
        *(const char **)ctx = v->text;
        return -1;
}

static const struct opt capture_options[] = {
        {.name = "output", .letter = 'o', .kind = ARG_OUT_FILE, .def = "standard output",
         .help = "write the policy to FILE (atomically)"},
        {0},
};

const struct cmd_spec cmd_policy_capture_spec = {
        .name = "policy capture",
        .synopsis = "[-o FILE] [OPTIONS]",
        .summary = "Write this node as a site policy: a reference of its GPUs (models, VBIOS, InfoROM, NUMA node), "
                   "NICs, driver and PCIe/NVLink matrix, with the other sections as comments to edit. `gpuvet check "
                   "--policy FILE` then fails on any drift from it.",
        .opts = capture_options,
        .nvml = true,
        .notes = "Without NVML (--no-nvml, or no library) the reference has no VBIOS, InfoROM or NVLink to compare.",
        .exit_status = "0 written, 2 usage or bad input, 3 internal error.",
        .on_option = capture_option,
};

const struct cmd_spec cmd_policy_validate_spec = {
        .name = "policy validate",
        .synopsis = "FILE",
        .summary = "Read FILE as gpuvet check would and name every problem (file:line).",
        .help_only = true,
        .exit_status = "0 valid, 2 a bad policy or usage, 3 internal error.",
};

static int capture(int argc, char **argv) {
        const char *output = NULL;
        struct cmd_args args;
        int code = cmd_parse(&cmd_policy_capture_spec, argc, argv, &output, &args);
        if (code >= 0)
                return code;

        struct machine m;
        if ((code = machine_read("policy capture", &args.common, &args.nvml, &m)) != 0)
                return code;
        code = EXIT_PASS;
        struct golden g;
        char when[32];
        iso_now(when, sizeof(when));
        char *text = NULL;
        if (golden_build(m.facts, &g) < 0 || !(text = policy_capture_text(m.facts, &g, when))) {
                fprintf(stderr, "gpuvet policy capture: out of memory\n");
                code = EXIT_INTERNAL;
        }
        if (text && m.facts->nvml.init_state != NVML_INIT_OK)
                fprintf(stderr, "gpuvet policy capture: NVML not read (%s): the reference has no VBIOS, InfoROM or "
                                "NVLink to compare\n",
                        m.nvml.why[0] ? m.nvml.why : "no library");
        if (text && (!output || strcmp(output, "-") == 0)) {
                if (fputs(text, stdout) == EOF || fflush(stdout) != 0) {
                        fprintf(stderr, "gpuvet policy capture: writing standard output: %s\n", strerror(errno));
                        code = EXIT_INTERNAL;
                }
        } else if (text) {
                int r = atomic_write(output, text, strlen(text));
                if (r < 0) {
                        fprintf(stderr, "gpuvet policy capture: %s: %s\n", output, atomic_write_strerror(r));
                        code = EXIT_INTERNAL;
                }
        }
        free(text);
        golden_done(&g);
        return machine_done(&m, code);
}

static int validate(int argc, char **argv) {
        if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
                cmd_print_help(&cmd_policy_validate_spec, stdout);
                return EXIT_PASS;
        }
        if (argc != 2) {
                fprintf(stderr, "gpuvet policy validate: expected one FILE (see gpuvet policy validate --help)\n");
                return EXIT_USAGE;
        }
        struct policy p;
        char *errors = NULL;
        int r = policy_load(argv[1], &p, &errors);
        if (r == -EINVAL && errors) {
                fputs(errors, stderr);
                free(errors);
                return EXIT_USAGE;
        }
        if (r < 0) {
                fprintf(stderr, "gpuvet policy validate: %s: %s\n", argv[1], strerror(-r));
                return r == -ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
        }
        printf("%s: valid (%zu severity override%s, %zu exception%s, %s", argv[1], p.n_overrides,
               p.n_overrides == 1 ? "" : "s", p.n_exceptions, p.n_exceptions == 1 ? "" : "s",
               p.reference.present ? "a reference node" : "no reference node");
        if (p.tune_profile || p.n_tune_settings)
                printf(", tune: profile %s and %zu setting%s", p.tune_profile ? p.tune_profile : "(default)",
                       p.n_tune_settings, p.n_tune_settings == 1 ? "" : "s");
        printf(")\n");
        policy_free(&p);
        return EXIT_PASS;
}

int cmd_policy(int argc, char **argv) {
        if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
                cmd_print_group_help("policy", argc < 2 ? stderr : stdout);
                return argc < 2 ? EXIT_USAGE : EXIT_PASS;
        }
        if (strcmp(argv[1], "capture") == 0)
                return capture(argc - 1, argv + 1);
        if (strcmp(argv[1], "validate") == 0)
                return validate(argc - 1, argv + 1);
        fprintf(stderr, "gpuvet policy: unknown subcommand \"%s\" (capture, validate)\n", argv[1]);
        return EXIT_USAGE;
}

/* gpuvet policy capture | validate: write this node as a site policy's reference, or read
 * a policy and name every problem in it (policy/policy.h, docs/policy.md). */
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/machine.h"
#include "core/atomic_file.h"
#include "policy/capture.h"
#include "policy/golden.h"
#include "policy/policy.h"
#include "sys/facts.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
        "Usage: gpuvet policy capture [-o FILE] [OPTIONS]\n"
        "       gpuvet policy validate FILE\n"
        "\n"
        "capture   write this node as a site policy: a reference of its GPUs (models, VBIOS,\n"
        "          InfoROM, NUMA node), NICs, driver and PCIe/NVLink matrix, with the other\n"
        "          sections as comments to edit. `gpuvet check --policy FILE` then fails on\n"
        "          any drift from it.\n"
        "validate  read FILE as gpuvet check would and name every problem (file:line).\n"
        "\n"
        "Options (capture):\n"
        "  -o, --output FILE     write the policy to FILE (atomically; default standard output)\n"
        "      --nvml-lib PATH   read GPUs through this libnvidia-ml ($GPUVET_NVML_LIB)\n"
        "      --no-nvml         do not load NVML: no VBIOS, InfoROM or NVLink in the reference\n"
        "      --nvml-call-timeout-ms MS  abandon an NVML call after MS ms (default 2000)\n"
        "      --nvml-gpu-timeout-ms MS   abandon a GPU's NVML reads after MS ms (default 20000)\n"
        "      --nvml-init-timeout-ms MS  give up on nvmlInit after MS ms (default 20000)\n"
        "      --timeout SEC     give up (exit 3) if gathering blocks this long (default 30)\n"
        "  -r, --root DIR        read /sys, /proc under DIR (a fixture or snapshot)\n"
        "      --data-dir DIR    GPU table from DIR ($GPUVET_DATA_DIR)\n"
        "  -h, --help            this help\n"
        "\n"
        "Exit status: 0 written (or valid), 2 usage or a bad policy, 3 internal error.\n";

static void iso_now(char *buf, size_t size) {
        time_t t = time(NULL);
        struct tm tm;
        if (!gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
                snprintf(buf, size, "unknown");
}

static int capture_option(int opt, const char *arg, void *ctx) {
        (void)opt; /* -o is its one option */
        *(const char **)ctx = arg;
        return -1;
}

static int capture(int argc, char **argv) {
        static const struct option own[] = {{"output", required_argument, NULL, 'o'}, {NULL, 0, NULL, 0}};
        static const struct cmd_spec spec = {
                .name = "policy capture", .usage = usage, .short_opts = "o:", .own = own, .nvml = true,
                .own_option = capture_option,
        };
        const char *output = NULL;
        struct cmd_args args;
        int code = cmd_parse(&spec, argc, argv, &output, &args);
        if (code >= 0)
                return code;
        if (output && (code = output_path_usable("policy capture", "-o", output)) != 0)
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
                fputs(usage, stdout);
                return EXIT_PASS;
        }
        if (argc != 2) {
                fprintf(stderr, "gpuvet policy validate: expected one FILE\n%s", usage);
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
                fputs(usage, argc < 2 ? stderr : stdout);
                return argc < 2 ? EXIT_USAGE : EXIT_PASS;
        }
        if (strcmp(argv[1], "capture") == 0)
                return capture(argc - 1, argv + 1);
        if (strcmp(argv[1], "validate") == 0)
                return validate(argc - 1, argv + 1);
        fprintf(stderr, "gpuvet policy: unknown subcommand \"%s\" (capture, validate)\n", argv[1]);
        return EXIT_USAGE;
}

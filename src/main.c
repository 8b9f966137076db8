/* gpuvet: discover, check, benchmark and monitor NVIDIA GPU nodes. */
#include "cmd/cmd.h"
#include "cmd/registry.h"
#include "version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* No setlocale here: reports are bytes, and nothing but top's screen (top_screen.c) reads
 * the character set, while loading it costs every command a dozen calls at start-up. */
int main(int argc, char **argv) {
        if (argc < 2) {
                print_global_usage(stderr);
                return EXIT_USAGE;
        }
        const char *name = argv[1];
        if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) {
                print_global_usage(stdout);
                return stdout_finish(EXIT_PASS);
        }
        if (strcmp(name, "-V") == 0 || strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
                static const char builtin[] = "built in (gpus.json, compat.json, xid.json, baselines.json, "
                                              "models.json, nics.json, ngc.json, fleet_rules.json)";
                const char *env = secure_getenv("GPUVET_DATA_DIR"), *installed = installed_data_dir();
                printf("gpuvet %s\ndata: %s\n", GPUVET_VERSION, env && *env ? env : installed ? installed : builtin);
                return stdout_finish(EXIT_PASS);
        }
        for (size_t i = 0; i < subcommand_count; i++)
                if (strcmp(name, subcommands[i].name) == 0)
                        return stdout_finish(subcommands[i].run(argc - 1, argv + 1));
        fprintf(stderr, "gpuvet: unknown command \"%s\" (see gpuvet --help)\n", name);
        return EXIT_USAGE;
}

/* gpuvet: discover, check, benchmark and monitor NVIDIA GPU nodes. */
#include "cmd/cmd.h"
#include "version.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct subcommand {
        const char *name;
        int (*run)(int argc, char **argv);
        const char *help;
};

static const struct subcommand subcommands[] = {
        {"check", cmd_check, "check the node: one verdict, a remedy for every problem"},
        {"info", cmd_info, "inventory of the host and its GPUs (deviceQuery, nvidia-smi -q, lspci)"},
        {"topo", cmd_topo, "GPU/NIC connection matrix with CPU and NUMA affinity (nvidia-smi topo -m)"},
        {"bench", cmd_bench, "bandwidth, memory, compute, GEMM and host memory against peaks and baselines"},
        {"burn", cmd_burn, "stress every GPU with verified GEMM, power, pulse and memory tests; one verdict"},
        {"detect", cmd_detect, "GPU -> architecture -> driver, CUDA, PyTorch wheels and NGC images to use"},
        {"estimate", cmd_estimate, "memory per GPU and time of training or serving a model; fits or what to change"},
        {"snapshot", cmd_snapshot, "capture the files checks read, to replay with --root elsewhere"},
        {"query", cmd_query, "nvidia-smi --query-gpu compatible CSV, hang-proof"},
        {"top", cmd_top, "live view of the GPUs and their processes (nvtop, nvitop); stale and lost GPUs shown"},
        {"policy", cmd_policy, "capture this node as the site's reference, or validate a policy file"},
        {"fleet", cmd_fleet, "aggregate many nodes' reports: verdicts, failing checks, outliers, drift"},
        {"ngc", cmd_ngc, "the newest NGC image that runs on this driver and GPUs, pulled and tested"},
        {"slurm-health", cmd_slurm_health, "Slurm HealthCheckProgram: drain this node on failed checks, resume it later"},
        {"report", cmd_report, "one node's check, bench and burn documents as a self-contained HTML page"},
        {"serve", cmd_serve, "Prometheus exporter with dcgm-exporter's metric names, hang-proof"},
        {"tune", cmd_tune, "apply the OS settings check recommends (plan, apply, revert, status)"},
};

static void print_usage(FILE *out) {
        fprintf(out,
                "Usage: gpuvet COMMAND [OPTIONS]\n"
                "\n"
                "Validate NVIDIA GPU servers: bare metal, passthrough hosts and VMs.\n"
                "\n"
                "Commands:\n");
        for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
                fprintf(out, "  %-12s %s\n", subcommands[i].name, subcommands[i].help);
        fprintf(out,
                "\n"
                "Run `gpuvet COMMAND --help` for a command's options.\n"
                "  -h, --help     this help\n"
                "  -V, --version  print the version\n"
                "\n"
                "Exit status: 0 pass, 1 a check failed, 2 usage or bad input, 3 internal error.\n");
}

int main(int argc, char **argv) {
        setlocale(LC_CTYPE, "");
        if (argc < 2) {
                print_usage(stderr);
                return EXIT_USAGE;
        }
        const char *name = argv[1];
        if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
                print_usage(stdout);
                return stdout_finish(EXIT_PASS);
        }
        if (strcmp(name, "-V") == 0 || strcmp(name, "--version") == 0) {
                static const char builtin[] = "built in (gpus.json, compat.json, xid.json, baselines.json, "
                                              "models.json, nics.json, ngc.json, fleet_rules.json)";
                const char *env = secure_getenv("GPUVET_DATA_DIR"), *installed = installed_data_dir();
                printf("gpuvet %s\ndata: %s\n", GPUVET_VERSION, env && *env ? env : installed ? installed : builtin);
                return stdout_finish(EXIT_PASS);
        }
        for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
                if (strcmp(name, subcommands[i].name) == 0)
                        return stdout_finish(subcommands[i].run(argc - 1, argv + 1));
        fprintf(stderr, "gpuvet: unknown command \"%s\" (see gpuvet --help)\n", name);
        return EXIT_USAGE;
}

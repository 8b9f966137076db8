/* Subcommands. Each takes argc/argv starting at its own name and returns the process
 * exit code (core/exit.h). */
#pragma once

#include <stdbool.h>

#include "core/exit.h"

int cmd_check(int argc, char **argv);
int cmd_detect(int argc, char **argv);
int cmd_estimate(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_topo(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_bench_train(int argc, char **argv); /* gpuvet bench train (cmd/bench_train.c) */
/* `gpuvet bench nccl`: argv[0] is "nccl". */
int cmd_bench_nccl(int argc, char **argv);
/* `gpuvet bench rdma`: argv[0] is "rdma" (cmd/bench_rdma.c). */
int cmd_bench_rdma(int argc, char **argv);
int cmd_burn(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_fleet(int argc, char **argv); /* gpuvet fleet REPORT... (cmd/fleet.c) */
int cmd_ngc(int argc, char **argv); /* gpuvet ngc list|pick|pull|test (cmd/ngc.c) */
int cmd_slurm_health(int argc, char **argv); /* gpuvet slurm-health (cmd/slurm_health.c) */
int cmd_report(int argc, char **argv); /* gpuvet report --html (cmd/report.c) */
int cmd_serve(int argc, char **argv);  /* gpuvet serve: the Prometheus exporter (cmd/serve.c) */

/* Shared by subcommands: --root/--data-dir defaults from the environment. */
struct common_options {
        const char *root;     /* --root or GPUVET_FSROOT, default "/" */
        const char *data_dir; /* --data-dir or GPUVET_DATA_DIR, default built-in */
        unsigned timeout_s;   /* --timeout, default COMMON_TIMEOUT_S_DEFAULT */
};

/* --timeout's default: how long a command's gathering may block. */
#define COMMON_TIMEOUT_S_DEFAULT 30u

/* The options every command takes (--timeout, --root, --data-dir, --help) are parsed by
 * cmd_parse (cmd/options.h) into this. */
void common_options_init(struct common_options *o);
/* The installed data directory (GPUVET_INSTALLED_DATADIR) when this process is the
 * installed gpuvet and the directory holds the tables, else NULL: then the tables built
 * into the binary are used. */
const char *installed_data_dir(void);


/* Open the root and the GPU table, printing a message naming command cmd and the input on
 * failure. Returns 0 or an exit code. */
struct fsroot;
struct gpudb;
int open_inputs(const char *cmd, const struct common_options *o, struct fsroot **ret_fs, struct gpudb **ret_db);

/* A data table's loader failed with r (a negative errno; err: its message naming the file
 * and the problem): say so on standard error and return the exit code, EXIT_INTERNAL when
 * memory ran out, else EXIT_USAGE (a bad table under --data-dir). */
int table_load_failed(const char *file, int r, const char *err);

/* Stop a run whose gathering blocks (a wedged device can make a sysfs read hang):
 * after seconds, print what was stuck and _exit(3). 0 disarms. */
void watchdog_arm(unsigned seconds, const char *what);

/* Write a JSON report for --json PATH: "-" prints it on standard output, anything else is
 * written atomically. Takes json (NULL: out of memory) and frees it. Returns EXIT_PASS or
 * EXIT_INTERNAL after printing why. */
int write_json_output(const char *cmd, const char *path, char *json);

/* Refuse a bad output path (opt names the option, e.g. "--json") before any work: its
 * directory must exist and be writable, and it must not be a directory. "-" (standard
 * output) is always usable. Returns 0, or EXIT_USAGE after a message naming path. */
int output_path_usable(const char *cmd, const char *opt, const char *path);

/* Flush standard output and check that every write to it succeeded (a full disk,
 * /dev/full, an I/O error): a truncated report must not pass for success. Returns code,
 * or EXIT_INTERNAL after a message. Call it before any _exit, and main calls it last. */
int stdout_finish(int code);
/* Report a failed write to standard output (err: its errno, 0 if unknown), once. */
void stdout_failed(int err);

/* Option parsing for the commands: each declares its own options in a table and which
 * shared fragments it takes (the common one always: --timeout, --root, --data-dir, --help;
 * NVML's when it reads NVML: --nvml-lib, --no-nvml, the deadlines); cmd_parse merges them,
 * refuses a table whose letters collide with a fragment's, and reports bad options the same
 * way for every command. `query` parses nvidia-smi's syntax itself (single-dash long
 * options) and is the one exception. */
#pragma once

#include <getopt.h>
#include <stdbool.h>

#include "cmd/cmd.h"
#include "cmd/machine.h"

struct cmd_spec {
        const char *name;         /* "check", "policy capture": messages say "gpuvet <name>: ..." */
        const char *usage;        /* printed by --help */
        const char *short_opts;   /* its own short letters in getopt syntax ("l:j:vq"), or NULL */
        const struct option *own; /* its own long options, ended by a zeroed entry, or NULL */
        bool nvml;                /* takes the NVML fragment */
        bool operands;            /* leaves operands (argv[first_operand..]) to the command */
        bool no_default_timeout;  /* --timeout defaults to 0 (the command's own deadlines), not 30 s */
        /* One of its own options, with its value in arg; returns -1 to go on, else the
         * exit code to leave with (after printing why). */
        int (*own_option)(int opt, const char *arg, void *ctx);
};

struct cmd_args {
        struct common_options common;
        struct nvml_options nvml; /* zero unless spec->nvml */
        int first_operand;
};

/* Parse argv (argv[0] is the command's name) into out, handing the command's own options
 * to spec->own_option with ctx. Returns -1 when the command should run, else its exit code:
 * 0 after --help, EXIT_USAGE after a message naming the bad option or value, EXIT_INTERNAL
 * when the command's table reuses a fragment's letter (a programming error every test of
 * the command would show). */
int cmd_parse(const struct cmd_spec *spec, int argc, char **argv, void *ctx, struct cmd_args *out);

/* own_option for a command whose one option of its own is --json (val 'J'): ctx is a bool. */
int cmd_json_flag(int opt, const char *arg, void *ctx);

/* The front of a command that shows the machine and has --json as its one option of its own
 * (info, topo): parse, then machine_read. Returns -1 with *m read and *json set, else the
 * exit code to leave with. */
int cmd_show_machine(const char *name, const char *usage, int argc, char **argv, bool *json, struct machine *m);

/* Print "gpuvet <cmd>: <message>" on standard error; returns EXIT_USAGE. */
int cmd_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --backend of check and bench: "cuda", "opencl" or "auto" into *ret and -1 (an own_option's
 * "go on"); else cmd's usage error, its exit code. */
int cmd_backend_option(const char *cmd, const char *arg, const char **ret);

/* A whole number from min to max into *ret; false for anything else. */
bool cmd_parse_uint(const char *s, unsigned min, unsigned max, unsigned *ret);
/* --gpus of the bench commands: "0,2,5-7" -> device indices, ascending and each once, into
 * out (room for max); false for an empty or malformed list or an index past max - 1. max is
 * at most CMD_MAX_DEVICES. */
#define CMD_MAX_DEVICES 256
bool cmd_parse_device_list(const char *s, int max, int *out, size_t *ret_n);

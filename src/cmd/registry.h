/* The command table main dispatches on, and the global usage. */
#pragma once

#include "cmd/options.h"

#include <stddef.h>
#include <stdio.h>

struct subcommand {
        const char *name;
        int (*run)(int argc, char **argv);
        const char *help; /* one line, for `gpuvet --help` and gpuvet(1) */
};

extern const struct subcommand subcommands[];
extern const size_t subcommand_count;

void print_global_usage(FILE *out);
/* "gpuvet policy --help": the usage lines of the group's subcommands; -1 for no such group. */
int cmd_print_group_help(const char *group, FILE *out);

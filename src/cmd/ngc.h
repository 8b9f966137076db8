/* `gpuvet ngc`: the pieces its subcommands share (cmd/ngc.c: list, pick and the command;
 * cmd/ngc_run.c: pull and test); the logic under them is in src/ngc/. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "ngc/ngc.h"

#define NGC_SCHEMA "gpuvet.ngc/1"

/* Write doc for --json PATH: "-" on standard output, else to the file, atomically;
 * EXIT_PASS, or EXIT_INTERNAL after a failed write. Frees doc. */
int ngc_print_json(json_t *doc, const char *path);
/* Whether the text answer is printed: not when --json puts the JSON on standard output. */
static inline bool ngc_text_wanted(const char *json_path) { return !json_path || json_path[0] != '-'; }

int ngc_pull(int argc, char **argv);
int ngc_test(int argc, char **argv);

/* NVML for the inventory commands (info, topo): --nvml-lib PATH, --no-nvml, and the rule
 * that decides whether NVML describes the machine being shown.
 *
 * On the live system (--root /) NVML is loaded from --nvml-lib, $GPUVET_NVML_LIB or the
 * sonames. Under another --root it is loaded only when a library is named (--nvml-lib or
 * $GPUVET_NVML_LIB): a replayed snapshot must not be described with the local GPUs. */
#pragma once

#include <stdbool.h>

#include "sys/nvml_facts.h"

struct fsroot;

struct nvml_options {
        const char *lib; /* --nvml-lib */
        bool off;        /* --no-nvml */
};

/* Put these in the command's long options (before COMMON_LONG_OPTIONS). */
#define NVML_LONG_OPTIONS {"nvml-lib", required_argument, NULL, 'N'}, {"no-nvml", no_argument, NULL, 'n'}

/* Handle opt if it is one of NVML_LONG_OPTIONS (reads optarg); false otherwise. */
bool nvml_option(int opt, struct nvml_options *o);

struct nvml_use {
        struct nvml_lib *lib;  /* NULL when not loaded */
        struct nvml_facts nv;  /* init_state NOT_TRIED when NVML was not to be used */
        char why[768];         /* when nv.init_state != NVML_INIT_OK: one line saying why */
};

/* Decide, load and gather (under nvml_facts' default deadlines). Failures to load or
 * initialise are recorded in u (state and why), not returned. Returns 0, or EXIT_INTERNAL
 * after printing a message when memory ran out. */
int nvml_use_start(struct nvml_use *u, const struct nvml_options *o, struct fsroot *fs);

/* Shut NVML down and unload it. When a call was abandoned (a hung GPU), flush the output
 * and _exit(code) instead: the stuck thread may hold the library's locks. Returns code. */
int nvml_use_end(struct nvml_use *u, int code);

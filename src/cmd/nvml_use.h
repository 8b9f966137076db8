/* NVML for the commands that read a machine (check, info, topo): --nvml-lib PATH,
 * --no-nvml, the deadline options, and the rule that decides whether NVML describes the
 * machine being shown.
 *
 * On the live system (--root /) NVML is loaded from --nvml-lib, $GPUVET_NVML_LIB or the
 * sonames. Under another --root it is loaded only when a library is named (--nvml-lib or
 * $GPUVET_NVML_LIB): a replayed snapshot must not be described with the local GPUs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "sys/nvml_facts.h"

struct fsroot;

struct facts;

struct nvml_options {
        const char *lib;          /* --nvml-lib */
        bool off;                 /* --no-nvml */
        struct nvml_deadlines dl; /* --nvml-{call,gpu,init}-timeout-ms (0: default) */
        nvml_groups groups;       /* what to read; 0: every group */
};


/* Decide, load and gather into f->nvml (with f->nvml_note saying why NVML was not asked or
 * why no library loaded, and f->nvml_lib_path the file loaded). Failures to load or
 * initialise are recorded, not returned. Returns 0, or EXIT_INTERNAL after printing a
 * message when memory ran out. */
int nvml_use_start(struct nvml_use *u, const struct nvml_options *o, struct fsroot *fs, struct facts *f);



/* The same reading on a thread of its own, so that the caller gathers the facts meanwhile
 * (check: docs/nvml.md, "Using it"). nvml_use_begin decides on the caller's thread (the
 * options, --root) and, when NVML is to be read, starts a thread that loads the library
 * and gathers into memory of its own, not into struct facts (facts_gather clears it).
 * Fork nothing between begin and join that runs code after fork: the thread and the
 * gather's workers exist. When no thread can be created the reading is made at once.
 * Returns 0, or EXIT_INTERNAL after a message when memory ran out. */
int nvml_use_begin(struct nvml_use *u, const struct nvml_options *o, struct fsroot *fs);
/* Wait for the reading (its deadlines bound the wait) and move it into f->nvml,
 * f->nvml_note and f->nvml_lib_path, then say what went wrong as nvml_use_start does.
 * Returns 0, or EXIT_INTERNAL after a message when memory ran out. A reading begun and
 * never joined is cut short and ended by nvml_use_end. */
int nvml_use_join(struct nvml_use *u, struct facts *f);

/* Say on standard error why NVML did not initialise for command cmd (load_err: why the
 * library did not load, when it did not); returns EXIT_FAILED, or -1 when it initialised. */
int nvml_explain_init(const char *cmd, const struct nvml_facts *f, const char *load_err);

/* Shut NVML down and unload it. When a call was abandoned (a hung GPU), flush the output
 * and _exit(code) instead: the stuck thread may hold the library's locks. Returns code. */
int nvml_use_end(struct nvml_use *u, int code);

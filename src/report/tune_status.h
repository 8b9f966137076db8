/* The answer of `gpuvet tune status` (docs/tune.md): whether what `apply` set still holds,
 * as text or as JSON (schema gpuvet.tune-status/1). The command judges each recorded value
 * against the machine; this writes what it found. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "tune/tune.h"

enum tune_held { TUNE_HELD, TUNE_DRIFTED, TUNE_REFUSED, TUNE_RESET };

/* One recorded value, judged. */
struct tune_status_entry {
        const struct tune_entry *e;
        enum tune_held held;
        bool readable;    /* now holds the value read now; else why says why (or it was reset) */
        char now[TUNE_VALUE_MAX];
        char why[256];
        bool boot;        /* a kernel command-line value in a boot loader file */
        bool in_effect;   /* boot: the running kernel booted with it */
};

struct tune_status {
        const char *state_path;
        const struct tune_state *st; /* NULL: nothing applied (no state file) */
        bool other_boot;             /* the state was written on another boot */
        struct tune_status_entry *entries; /* st->n of them */
        size_t drifted, waiting, persistent;
};

void tune_status_text(FILE *out, const struct tune_status *s);
/* NULL when memory ran out. */
json_t *tune_status_json(const struct tune_status *s);

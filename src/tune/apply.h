/* gpuvet tune apply and revert, apart from the command's options and printing: the state
 * file written before any change, each value set and read back, and put back on revert;
 * each narrates what it sets or restores as it acts (docs/tune.md). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "tune/tune.h"

struct tune_apply_options {
        const char *profile;     /* recorded in the state file; NULL: none */
        unsigned lock_timeout_s; /* how long to wait for another gpuvet tune's lock */
        bool no_progress;        /* no progress line on standard error */
};

/* Apply the plan t of req: snapshot under the lock into state_path, write each change, read
 * each back. Returns an exit code (EXIT_FAILED when a value did not take). */
int tune_apply(const struct tune_apply_options *o, struct tune_ctx *c, const struct tune_request *req,
               struct tune_targets *t, const char *state_path);

/* Put back what state_path recorded, newest first; removes it when all went back. Returns
 * an exit code. */
int tune_revert(unsigned lock_timeout_s, struct tune_ctx *c, const char *state_path);

/* Load state_path and check that every entry names a file its setting writes, with a value
 * of that file's shape; *other_boot: it was taken on another boot. Returns 0, -ENOENT when
 * there is none, else a negative errno after a message naming cmd. */
int tune_state_load_checked(const char *cmd, const char *state_path, struct tune_ctx *c, struct tune_state *st,
                            bool *other_boot);

/* A kernel command-line value in a boot loader file: the only kind that survives a reboot. */
bool tune_is_boot_path(const char *path);

/* The targets of t that need a write. */
size_t tune_count_changes(const struct tune_targets *t);

#ifdef GPUVET_TEST_HOOKS
/* Test hook (tests/golden/test_tune.py): apply kills itself after step n (-1: never). */
void tune_apply_stop_after(int n);
#endif

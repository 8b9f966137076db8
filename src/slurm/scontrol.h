/* Slurm's scontrol, run under a deadline (core/run_command): reading one node's state and
 * changing it. Nothing here prints; a failure leaves its message in the caller's buffer. */
#pragma once

#include <stddef.h>

#include "slurm/decide.h"
#include "slurm/node_state.h"

struct scontrol {
        const char *path;    /* "scontrol" (PATH, else /bin:/usr/bin) or a path */
        unsigned timeout_ms; /* each call's deadline */
};

/* `scontrol show node -o NODE` into *out. The caller sets SLURM_TIME_FORMAT=standard in
 * the environment first (the reason's suffix is then parseable). Returns 0, or a negative
 * errno with err saying what went wrong, naming scontrol: -ENOENT it cannot be started,
 * -ETIMEDOUT past the deadline, -EIO it failed (exit status and its message), -EBADMSG
 * its output holds no usable record of node, -ENOMEM. */
int scontrol_show_node(const struct scontrol *sc, const char *node, struct slurm_node *out, char *err, size_t err_size);

/* `scontrol update NodeName=NODE State=DRAIN Reason=REASON` (drain, update-reason) or
 * `State=RESUME` (resume). Returns 0 or a negative errno with err as above. */
int scontrol_update_node(const struct scontrol *sc, const char *node, enum slurm_action action, const char *reason,
                         char *err, size_t err_size);

/* The argument vector scontrol_update_node runs (for --dry-run's line and its messages):
 * at most 5 words into argv, pointing into buf. Returns the count, 0 for SLURM_ACTION_NONE. */
int scontrol_update_argv(const struct scontrol *sc, const char *node, enum slurm_action action, const char *reason,
                         char *buf, size_t buf_size, const char *argv[6]);

/* What slurm-health does to a node, from its state and reason and the check's verdict: the
 * ownership rule (only drains whose reason starts with SLURM_REASON_PREFIX are gpuvet's)
 * as one pure function, so that the table is tested whole (tests/unit/test_slurm.c). */
#pragma once

#include <stdbool.h>

#include "slurm/node_state.h"

enum slurm_action {
        SLURM_ACTION_NONE,          /* leave the node as it is */
        SLURM_ACTION_DRAIN,         /* State=DRAIN Reason=<new> */
        SLURM_ACTION_UPDATE_REASON, /* still ours and drained, other checks: State=DRAIN Reason=<new> */
        SLURM_ACTION_RESUME,        /* our drain, and the node is healthy again: State=RESUME */
        _SLURM_ACTION_COUNT,
};

struct slurm_decision {
        enum slurm_action action;
        const char *why; /* a static phrase for the text output */
};

/* healthy: the verdict is below the drain threshold; reason: the one slurm-health would
 * write when it is not (ignored when healthy). A DOWN or FAIL node is never touched; a
 * node drained with a reason that is not ours (or none) is left drained as it is. */
struct slurm_decision slurm_decide(const struct slurm_node *node, bool healthy, const char *reason);

/* "drain", "update-reason", "resume", "none". */
const char *slurm_action_name(enum slurm_action a);

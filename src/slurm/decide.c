#include "slurm/decide.h"

#include <string.h>

#include "slurm/drain_reason.h"

static struct slurm_decision decision(enum slurm_action a, const char *why) {
        return (struct slurm_decision){.action = a, .why = why};
}

struct slurm_decision slurm_decide(const struct slurm_node *node, bool healthy, const char *reason) {
        bool drained = node->flags & SLURM_NODE_DRAIN;
        bool ours = slurm_reason_is_ours(node->reason);
        /* A DOWN node is Slurm's (not responding, a failed prolog) or an administrator's:
         * resuming it would undo their decision, and draining it would replace their reason
         * (LBNL NHC leaves down nodes alone for the same reason). */
        if (node->flags & SLURM_NODE_DOWN)
                return decision(SLURM_ACTION_NONE, "the node is DOWN: left to Slurm and its administrators");
        if (node->flags & SLURM_NODE_FAIL)
                return decision(SLURM_ACTION_NONE, "the node is marked FAIL by an administrator: left as it is");
        if (drained && !ours)
                return decision(SLURM_ACTION_NONE, node->reason && *node->reason
                                                           ? "drained by someone else: left drained with its reason"
                                                           : "drained without a reason: left drained");
        if (healthy)
                return drained ? decision(SLURM_ACTION_RESUME, "gpuvet's drain, and the checks pass now")
                               : decision(SLURM_ACTION_NONE, "healthy and in service");
        if (!drained)
                return decision(SLURM_ACTION_DRAIN, "checks failed");
        if (reason && node->reason && strcmp(reason, node->reason) == 0)
                return decision(SLURM_ACTION_NONE, "already drained by gpuvet for the same checks");
        return decision(SLURM_ACTION_UPDATE_REASON, "drained by gpuvet for other checks: reason updated");
}

const char *slurm_action_name(enum slurm_action a) {
        static const char *const names[_SLURM_ACTION_COUNT] = {
                [SLURM_ACTION_NONE] = "none", [SLURM_ACTION_DRAIN] = "drain",
                [SLURM_ACTION_UPDATE_REASON] = "update-reason", [SLURM_ACTION_RESUME] = "resume",
        };
        return (unsigned)a < _SLURM_ACTION_COUNT ? names[a] : "none";
}

/* A Slurm node's state and reason as `scontrol show node -o NAME` prints them: the one
 * reading slurm-health acts on. A pure parser over (buf, len), fuzzed (fuzz_slurm_node). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The flags of a compound state ("IDLE+DRAIN", "DOWN+DRAIN+NOT_RESPONDING") that decide
 * what slurm-health may do; older releases' whole-word states (DRAINED, DRAINING) set
 * SLURM_NODE_DRAIN too. */
enum slurm_node_flag {
        SLURM_NODE_DRAIN = 1u << 0,          /* DRAIN, DRAINED, DRAINING */
        SLURM_NODE_DOWN = 1u << 1,           /* base state DOWN */
        SLURM_NODE_FAIL = 1u << 2,           /* FAIL, FAILING: an administrator's */
        SLURM_NODE_NOT_RESPONDING = 1u << 3, /* NOT_RESPONDING (sinfo's "*") */
};

#define SLURM_NODE_STATE_MAX 128

struct slurm_node {
        char state[SLURM_NODE_STATE_MAX]; /* as printed, for messages ("IDLE+DRAIN") */
        unsigned flags;                   /* enum slurm_node_flag */
        /* The reason without Slurm's " [user@time]" suffix; NULL when the node has none.
         * Its bytes are Slurm's, not checked for UTF-8. */
        char *reason;
};

/* Parse the one-line record of node name from scontrol's output (buf, len; NUL bytes end
 * nothing, the length does). The reason is the text after the first " Reason=" that follows
 * " State=", up to Slurm's " [user@YYYY-MM-DDTHH:MM:SS]" (scontrol run with
 * SLURM_TIME_FORMAT=standard), else to the end of the line. Returns 0, -ENOENT when no line
 * is name's record, -EBADMSG when the record does not end with a newline (cut short), has
 * no State=, an empty one, or one with a byte that is not printable ASCII, -ENOMEM.
 * On success *out holds a reason to free with slurm_node_done. */
int slurm_node_parse(const char *buf, size_t len, const char *name, struct slurm_node *out);
void slurm_node_done(struct slurm_node *n);

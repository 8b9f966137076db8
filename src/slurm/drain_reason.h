/* The reason slurm-health gives Slurm when it drains a node: gpuvet's prefix, then the ids
 * of the checks that failed, cut to a length every Slurm tool shows whole. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* What marks a drain as gpuvet's own (as LBNL NHC's "NHC:"): only a node whose reason
 * starts with it is resumed or re-reasoned by slurm-health. */
#define SLURM_REASON_PREFIX "gpuvet:"

/* The longest reason written, prefix included, in bytes. slurmctld 22.05 takes far longer
 * ones (5,000 bytes set with scontrol were stored whole, checked by hand), but `sinfo -R` shows 20 characters
 * and `sinfo -l` 20 too: the ids that matter come first, and 128 keeps `scontrol show node`
 * and slurmctld's log line readable. docs/slurm.md, "The reason". */
#define SLURM_REASON_MAX 128

/* Whether reason (NULL: none) is one slurm-health wrote. */
bool slurm_reason_is_ours(const char *reason);

/* "gpuvet: id1,id2 +N more" into buf (size > SLURM_REASON_MAX) from the n ids, in their
 * order, each once: the first ids, whole, that fit in SLURM_REASON_MAX with room for the
 * " +N more" of those left out. An id with a byte outside [A-Za-z0-9._-] is left out and
 * counted among the "more" (ids are gpuvet's own; this keeps the reason one token list).
 * With no id: "gpuvet: " then fallback (cut to fit). Returns buf. */
char *slurm_reason_build(char *buf, size_t size, const char *const *ids, size_t n, const char *fallback);

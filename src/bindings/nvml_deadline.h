/* NVML's calls under deadlines (core/deadline.h), as the readers (nvml_facts.c,
 * nvml_events.c) and the writer (nvml_tune.c) make them: the limits a caller left at 0
 * filled in, and one call on its own worker. */
#pragma once

#include "core/deadline.h"
#include "sys/nvml_facts.h"

/* in, or the defaults when NULL, with each limit left at 0 set to its
 * NVML_DEADLINE_*_MS_DEFAULT. */
void nvml_deadlines_normalise(const struct nvml_deadlines *in, struct nvml_deadlines *out);

/* Run work on block (ownership passes, freed with free, even on failure) on one worker,
 * each call limited to call_ms, publishing into dest. deadline_run's return; *ret_o its
 * outcome. */
int nvml_run_one(unsigned int call_ms, void (*work)(struct deadline_worker *w, void *block),
                 void (*publish)(void *block, void *dest, unsigned int index, const char *hung,
                                 unsigned int elapsed_ms, void *userdata),
                 void *block, void *dest, struct deadline_outcome *ret_o);

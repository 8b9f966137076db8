/* The stress test: `gpuvet burn` and the burn part of `check --level full` (docs/burn.md).
 *
 * Each selected device gets a worker: a forked child (its own process group) that opens the
 * device backend itself, runs the modes in order (gemm, power, pulse, memtest), and tells
 * the parent what happens as one JSON object per line (burn/wire.h). A worker that falls
 * silent past the hang deadline is reported as hung and killed; it never holds up the
 * others or the report. The parent meanwhile samples NVML (metrics/sampler.h) and listens
 * for Xid and ECC events, and keeps everything as facts: the checks of category burn
 * (checks/burn.c) judge them, under the site policy, as every other check judges its facts.
 *
 * A device is first listed by a census child under a deadline (the backend's devices, their
 * PCI addresses and whether each is a CPU), so a wedged driver stops the census, not gpuvet. */
#pragma once

#include <stdint.h>

#include "results/burn.h"

/* How long each selected mode runs, in ms, in enum order (0 for a mode not selected): the
 * duration split evenly, memtest taking what its passes need first when it is alone. */
void burn_mode_slices(const struct burn_options *o, uint64_t slices[_BURN_MODE_COUNT]);

struct facts;
struct nvml_lib;
struct nvml_deadlines;

/* Run the stress test on this machine. lib: the NVML library the facts were read with
 * (NULL: no telemetry); dl its deadlines. Never fails: problems become facts (not_run, a
 * device's end and error). When ret->nvml_abandoned, the caller must not unload NVML and
 * should leave with _exit, as after any abandoned NVML call. Free with burn_done. */
void burn_run(const struct burn_options *o, const struct facts *f, struct nvml_lib *lib,
              const struct nvml_deadlines *dl, struct burn_facts *ret);
void burn_done(struct burn_facts *b);
/* Facts without running anything (a capture, a level without the burn), saying why. */
void burn_not_run(struct burn_facts *ret, const char *why);

/* Set by a SIGINT/SIGTERM handler of the caller's: burn_run stops every worker within a
 * second and returns what it has. */
void burn_request_stop(void);

/* Reading the machine, the one front of every command that judges or shows it (check,
 * bench, info, topo, policy capture): open the inputs (--root, the GPU table), gather the
 * facts under the watchdog, read NVML under its own deadlines. The steps are separate so a
 * command can act between them — check loads the site policy once the inputs are open,
 * forks the CUDA driver probe before any thread and reads NVML on a thread while the facts
 * are gathered (machine_nvml_begin, machine_gather, machine_nvml_join); bench reads no
 * NVML — and machine_read takes all three, one after the other. machine_done frees
 * whatever was reached. */
#pragma once

#include "cmd/nvml_use.h"

struct common_options;
struct facts;
struct fsroot;
struct gpudb;

struct machine {
        const char *cmd;     /* "check": messages are "gpuvet check: ..." */
        struct fsroot *fs;
        struct gpudb *db;
        struct facts *facts; /* NULL before machine_gather */
        struct nvml_use nvml;
};

/* The inputs: --root and the GPU table. Returns 0, or an exit code after printing why. */
int machine_open(const char *cmd, const struct common_options *common, struct machine *m);
/* The facts, under a watchdog of timeout_s (0: none). Returns 0 or an exit code. */
int machine_gather(struct machine *m, unsigned timeout_s);
/* Only the facts of needs (NEED_* bits of sys/inputs.def, with what they read themselves). */
int machine_gather_some(struct machine *m, unsigned timeout_s, unsigned needs);
/* NVML on a thread of its own (nvml_use_begin), begun after machine_open and before
 * machine_gather, so that the two overlap; then machine_nvml_join after machine_gather
 * moves it into facts->nvml. Both return 0, or EXIT_INTERNAL when memory ran out. */
int machine_nvml_begin(struct machine *m, const struct nvml_options *nopt);
int machine_nvml_join(struct machine *m);
/* All three, with common's timeout for the facts. On failure everything is freed. */
int machine_read(const char *cmd, const struct common_options *common, const struct nvml_options *nopt,
                 struct machine *m);
/* nvml_use_end (which _exits when an NVML call never returned; a reading begun and not
 * joined is cut short first), then free. Returns code. */
int machine_done(struct machine *m, int code);

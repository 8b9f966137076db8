/* The device probes of `gpuvet check --level standard` (and full): a short functional and
 * bandwidth set run through the bench runner, so each probe is a forked child under its
 * own deadline whose report comes back checksummed (bench/runner.h). The judged
 * measurements become facts (facts.probes); the pure checks of checks/device.c and
 * pcie.link_under_load judge them.
 *
 * The probes, in order (sizes and repetitions fixed for the 60 s budget on 8 GPUs; the
 * arithmetic is in docs/checks/device.md):
 *   functional  per GPU: allocate 64 MiB, fill it with the fill_u32 kernel, read it back
 *               and verify every word. Also lists every device the backend shows, so the
 *               checks can say why none was probed (a CPU OpenCL device is not a GPU).
 *   transfer    per GPU: the transfer benchmark's pinned H2D and D2H (bench_transfer with
 *               fixed options) of 64 MiB, 1 warm-up + 5 timed copies each, verified; then
 *               200 ms of back-to-back H2D copies while the GPU's current_link_speed/width
 *               are read through fsroot (the link under load).
 *   memory      per GPU: the memory benchmark's triad (bench_memory with fixed options,
 *               not a copy of it) over three arrays of min(256 MiB, memory / 16),
 *               1 + 5 repetitions, verified.
 *   p2p         every ordered pair of GPUs (two or more): the p2p benchmark's
 *               unidirectional copy (bench_p2p with fixed options) of 32 MiB, 1 + 3
 *               repetitions, the destination verified.
 * The functional probe is the probes' own: no benchmark allocates, fills and verifies
 * every GPU and lists the devices it did not probe.
 * Only devices whose PCI address is one of the node's NVIDIA GPUs (facts.gpus) are probed;
 * other devices (PoCL's CPU device, a GPU of another vendor) are listed, never judged. */
#pragma once

#include <stdbool.h>

#include "bench/measurement.h"
#include "results/probes.h"

struct facts;
struct fsroot;

/* Per-probe deadlines, s: their sum (55) plus gathering stays under the 60 s budget even
 * when every probe hangs (docs/checks/device.md). */
#define PROBE_FUNCTIONAL_TIMEOUT_S 15
#define PROBE_TRANSFER_TIMEOUT_S 15
#define PROBE_MEMORY_TIMEOUT_S 10
#define PROBE_P2P_TIMEOUT_S 15

/* The probe named name ("functional", "transfer", "memory", "p2p"), or -1. */
int probe_by_name(const char *name);

/* Run the probes in `wanted` (a probe_set) on the live devices: backend "auto", "cuda" or
 * "opencl"; data_dir as --data-dir (baselines.json), NULL for the built-in table;
 * timeout_s[id] the deadline of each probe (0: its own default); fs is read by the
 * children for the link under load; progress: a progress line on standard error while
 * they run (bench/runner.h). A probe left out is marked not run, saying so.
 * Never fails: problems become measurements, notes or skip_reason. Free with probes_done. */
void probes_run(struct fsroot *fs, const struct facts *f, const char *backend, const char *data_dir,
                const unsigned timeout_s[_PROBE_COUNT], unsigned wanted, bool progress, struct probe_facts *ret);
void probes_done(struct probe_facts *p);

/* Facts without running anything: every probe marked as not run because of why (replayed
 * captures, tests). */
void probes_not_run(struct probe_facts *ret, const char *why);

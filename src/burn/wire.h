/* What a burn worker tells the parent: one JSON object per line on a pipe, each line at
 * most BURN_WIRE_LINE_MAX bytes, so that every write(2) of one is atomic (PIPE_BUF) and a
 * worker killed mid-run leaves whole lines behind, never half a line followed by another.
 *
 *   {"k":"device","name":...,"bus":...,"cpu":false,"backend":"cuda"}      once, first
 *   {"k":"mode","mode":"gemm","workload":...,"precision":"fp32"}          a mode begins
 *   {"k":"tick","mode":"gemm","products":40,"flops":1.1e15,"seconds":1.02,"device_seconds":1.0}
 *                                                  every BURN_TICK_MS (device_seconds: 0 untimed)
 *   {"k":"verify","sampled":..,"faulty_host":..,"compared":..,"faulty_first":..,
 *    "digest":"0123456789abcdef","faults":[{"row":..,"col":..,"expected":..,"got":..,"what":..}]}
 *   {"k":"memtest","pass":1,"bytes":..,"words":..,"errors":..,"seconds":..,"seed":"..",
 *    "faults":[{"offset":..,"expected":"0x..","got":"0x..","pattern":".."}]}
 *   {"k":"beat"}                          alive, inside a long step (a memtest pass)
 *   {"k":"error","msg":"cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY"}         the worker gives up
 *   {"k":"done","stopped":false}                                          last
 *
 * Counts in tick, verify and memtest lines are increments since the previous line of the
 * kind. The parent reads lines with burn_wire_apply, which trusts nothing: a line that does
 * not parse, names an unknown kind or carries a value of the wrong type is refused with a
 * reason (the worker is then treated as crashed: its report cannot be trusted). */
#pragma once

#include <stddef.h>

#include "burn/burn.h"

#define BURN_WIRE_LINE_MAX 4000
#define BURN_WIRE_FAULTS_PER_LINE 8

/* Apply one line (without its newline) to d, t_s seconds into the run. Returns 0, 1 after
 * the "done" line, or -EINVAL with why. */
int burn_wire_apply(struct burn_device *d, const char *line, double t_s, char *why, size_t whysize);

/* The worker's side: each returns a malloc'd line with its newline, at most
 * BURN_WIRE_LINE_MAX bytes (fault lists are cut to fit), or NULL when out of memory. */
char *burn_wire_device(const char *name, const char *bus, bool is_cpu, const char *backend);
char *burn_wire_mode(enum burn_mode m, const char *workload, const char *precision);
char *burn_wire_tick(enum burn_mode m, unsigned long long products, double flops, double seconds,
                     double device_seconds);
char *burn_wire_verify(unsigned long long sampled, unsigned long long faulty_host, unsigned long long compared,
                       unsigned long long faulty_first, unsigned long long digest, const struct burn_fault *faults,
                       size_t n_faults);
char *burn_wire_memtest(unsigned long long pass, unsigned long long bytes, unsigned long long words,
                        unsigned long long errors, double seconds, const char *seed, const struct burn_fault *faults,
                        size_t n_faults);
char *burn_wire_beat(void);
char *burn_wire_error(const char *msg);
char *burn_wire_done(bool stopped);

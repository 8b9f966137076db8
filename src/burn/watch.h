/* The burn's telemetry: NVML sampled every interval (metrics/sampler.h) and its Xid and
 * ECC events (sys/nvml_events.h), filed under each loaded device by PCI address. The
 * parent's loop polls burn_watch_fd beside the workers' pipes and calls burn_watch_pump;
 * nothing here blocks on NVML (the sampler and the event module have their deadlines). */
#pragma once

#include "burn/burn.h"

struct nvml_lib;
struct nvml_facts;
struct nvml_deadlines;
struct burn_watch;

/* The NVML readings a sample takes. */
unsigned long long burn_watch_groups(void);

/* Start watching. nv: the facts NVML was read into (the GPUs to register for events).
 * Returns 0, or -errno with why in b->telemetry_note (then there is no telemetry). */
int burn_watch_start(struct nvml_lib *lib, const struct nvml_facts *nv, const struct nvml_deadlines *dl,
                     unsigned interval_ms, struct burn_facts *b, struct burn_watch **ret);
/* Readable when a sample is there; -1 when none will come. */
int burn_watch_fd(const struct burn_watch *w);
/* Take new samples and events into b's devices, t_s seconds into the run. */
void burn_watch_pump(struct burn_watch *w, struct burn_facts *b, double t_s);
/* Stop and free; sets b->nvml_abandoned when an NVML call never returned. */
void burn_watch_stop(struct burn_watch *w, struct burn_facts *b);

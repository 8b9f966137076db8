/* Xid errors counted per GPU and code while `gpuvet serve` runs (docs/serve.md, "Xids"),
 * from NVML's events (sys/nvml_events.h) on a thread of their own.
 *
 * dcgm-exporter's DCGM_FI_DEV_XID_ERRORS is the last Xid a GPU reported: two Xids between
 * scrapes show as one, and the same Xid twice as none. The counters here
 * (gpuvet_xid_errors_total{xid="79"}) lose neither. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "sys/nvml_facts.h"

struct xid_counter;

struct xid_count {
        unsigned int gpu;
        unsigned long long xid;
        unsigned long long count;
};

/* Register f's GPUs for Xid events and start counting. Returns 0, -ENOMEM, -EAGAIN (no
 * thread), or nvml_events_start's -EINVAL. */
int xid_counter_start(struct nvml_lib *lib, const struct nvml_facts *f, const struct nvml_deadlines *dl,
                      struct xid_counter **ret);

/* Changes whenever a count does (and when a GPU turns out not to deliver Xid events). */
unsigned long long xid_counter_generation(struct xid_counter *x);

/* The counts (at most max, ordered by GPU then code) into out, *ret_n of them; per GPU
 * index below n_gpus, whether its Xids are watched and the last Xid seen (0: none yet).
 * Returns the generation they belong to. */
unsigned long long xid_counter_read(struct xid_counter *x, struct xid_count *out, size_t max, size_t *ret_n,
                                    unsigned int n_gpus, bool *watched, unsigned long long *last);

/* Stop and free (accepts NULL). Returns true when an NVML call was abandoned: the caller
 * must then leave with _exit and never unload the library. */
bool xid_counter_stop(struct xid_counter *x);

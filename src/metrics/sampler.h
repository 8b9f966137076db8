/* The sampler: reads selected NVML metrics of every GPU at an interval, on a thread of its
 * own, and publishes each round as an immutable sample (docs/metrics.md, "Sampling").
 *
 * A reader never waits for a slow GPU: it takes the latest published sample, whatever the
 * round in progress is doing. A GPU that did not answer within its deadline in a round is
 * published as it is, its unread readings NV_TIMEOUT naming the call that hung: shown as
 * missing, never as the last value again, never as zero. A round in which a call never
 * returned is the last: another would strand one more thread inside the library.
 *
 * NVML stays initialised for the sampler's life: each round's gather initialises it before
 * the previous round's sample is released. */
#pragma once

#include <stdbool.h>
#include <time.h>

#include "sys/nvml_facts.h"

struct sampler_options {
        struct nvml_lib *lib;
        struct nvml_deadlines dl;      /* 0 fields: defaults; stop_requested is the sampler's own */
        nvml_groups groups;            /* what each round reads (metric_groups) */
        unsigned long long interval_ms; /* from the start of one round to the next */
};

/* One round, immutable once published. */
struct sample {
        unsigned long long seq;        /* 1, 2, ... */
        struct timespec taken;         /* CLOCK_REALTIME when the round began */
        unsigned long long started_ns; /* CLOCK_MONOTONIC when the round began */
        struct nvml_facts facts;
        /* private */
        unsigned int refs;
        struct sample *next_retired;
};

/* Why the sampler stopped publishing. */
enum sampler_end {
        SAMPLER_RUNNING = 0,
        SAMPLER_STOPPED,        /* sampler_stop */
        SAMPLER_CALL_HUNG,      /* a call never returned: its round was published, then no more */
        SAMPLER_SHUTDOWN_HUNG,  /* nvmlShutdown releasing an old round never returned */
        SAMPLER_FAILED,         /* out of memory, or no thread could be started (end_errno) */
};

struct sampler_status {
        enum sampler_end end;
        int end_errno;          /* SAMPLER_FAILED */
        unsigned int call_ms;   /* the call deadline in force (for messages) */
};

struct sampler;

/* Start sampling: the first round begins at once. Returns 0, -ENOMEM, or -errno of
 * pthread_create. The caller's blocked signals are the thread's. */
int sampler_start(const struct sampler_options *o, struct sampler **ret);

/* A sample newer than after_seq, waiting at most timeout_ms for one (0: do not wait);
 * NULL when none came or the sampler ended. Give it back with sample_put. */
struct sample *sampler_next(struct sampler *s, unsigned long long after_seq, unsigned int timeout_ms);

/* The latest sample without waiting, NULL before the first. Give it back with sample_put. */
struct sample *sampler_latest(struct sampler *s);

void sample_put(struct sampler *s, struct sample *x);

/* A descriptor that turns readable when a sample is published or the sampler ends, for
 * poll/ppoll beside other waits; sampler_next(s, seq, 0) drains it. */
int sampler_fd(const struct sampler *s);

/* Whether the sampler stopped publishing, and why. */
bool sampler_ended(struct sampler *s, struct sampler_status *ret);

/* Stop and free. Every sample must have been given back. Returns true when a call was
 * abandoned inside NVML: the caller must then leave with _exit and never unload the
 * library. */
bool sampler_stop(struct sampler *s);

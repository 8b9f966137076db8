/* NVML events during long runs: Xid errors and ECC errors as the driver reports them.
 *
 * The kernel log (sys/xid.c) tells what happened since boot; a command that runs for a
 * while (query -l, and later the standard/full levels of check, bench, burn) also wants
 * what happens while it runs, as it happens. NVML delivers that through an event set:
 *
 *     nvml_events_start(lib, facts, dl, &ev);      once, after nvml_facts_gather
 *     nvml_events_poll(ev, ms, callback, data);    repeatedly: waits up to ms
 *     nvml_events_stop(ev);                        tear-down
 *
 * start registers every GPU of facts for Xid events (nvmlEventTypeXidCriticalError) and
 * for double- and single-bit ECC events, each only where nvmlDeviceGetSupportedEventTypes
 * says the GPU supports it. It takes its own NVML reference (nvmlInit_v2, released by
 * stop), so the event set outlives the facts it was started from: a loop may gather and
 * release facts round after round (docs/nvml.md, "Events").
 *
 * Never hang: every NVML call runs under a deadline (core/deadline.c) - a wedged GPU can
 * block nvmlEventSetWait for ever. A wait may run for its ms plus the call deadline; past
 * that it is abandoned, an NVML_EVENT_HUNG record says so, nvml_events_abandoned() turns
 * true, and from then on no call is made: the caller must not nvmlShutdown (stop does
 * not), must not unload the library, and should leave with _exit, as with an abandoned
 * nvml_facts gather. Stuck threads write only their own memory.
 *
 * Nothing here logs: what happens comes to the caller as records (struct nvml_event),
 * events and notices alike. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "sys/nvml_facts.h"

struct xid_event;

enum nvml_event_kind {
        /* events, as nvmlEventSetWait_v2 delivered them */
        NVML_EVENT_XID,      /* nvmlEventTypeXidCriticalError: data = the Xid */
        NVML_EVENT_ECC_DBE,  /* nvmlEventTypeDoubleBitEccError: an uncorrectable memory error */
        NVML_EVENT_ECC_SBE,  /* nvmlEventTypeSingleBitEccError: a corrected one */
        NVML_EVENT_OTHER,    /* another event type (type says which) */
        /* notices, each said once */
        NVML_EVENT_UNSUPPORTED, /* this GPU delivers none of the event types asked for (data: what it
                                   supports, when known); fn/rc: the call that said so */
        NVML_EVENT_GPU_LOST,    /* NVML answered NVML_ERROR_GPU_IS_LOST to fn */
        NVML_EVENT_ERROR,       /* fn failed with rc */
        NVML_EVENT_HUNG,        /* fn did not return within elapsed_ms: the module is abandoned */
        NVML_EVENT_KIND_COUNT
};

/* What one record names. A notice that names no GPU (creating the set, the library)
 * has gpu -1 and addr "". */
struct nvml_event {
        enum nvml_event_kind kind;
        int gpu;                 /* NVML index; -1 when unknown */
        char addr[16];           /* the GPU's PCI address "0000:c3:00.0" (sysfs form); "" when NVML did not give it */
        unsigned long long type; /* nvmlEventType* bit of an event; for a notice, the types asked for */
        unsigned long long data; /* eventData: the Xid of NVML_EVENT_XID */
        unsigned int gpu_instance_id;     /* MIG: where the event happened; 0xFFFFFFFF when not MIG */
        unsigned int compute_instance_id;
        const char *fn;          /* the NVML function (a string literal) */
        int rc;                  /* its nvmlReturn_t (NVML_SUCCESS for events) */
        unsigned int elapsed_ms; /* NVML_EVENT_HUNG: how long fn had run */
        /* When gpuvet received it (NVML gives no time): microseconds on CLOCK_BOOTTIME,
         * comparable with the kernel log's (struct xid_event.usec), and on CLOCK_REALTIME. */
        int64_t usec;
        int64_t wall_usec;
};

typedef void (*nvml_event_fn)(const struct nvml_event *ev, void *userdata);

/* The event types start asks for by default. */
#define NVML_EVENTS_DEFAULT_TYPES (NV_EVENT_XID_CRITICAL | NV_EVENT_DOUBLE_BIT_ECC | NV_EVENT_SINGLE_BIT_ECC)
/* NVML's event type bits (nvmlEventType*; nvml_events.c asserts they match). */
#define NV_EVENT_SINGLE_BIT_ECC 0x1ULL
#define NV_EVENT_DOUBLE_BIT_ECC 0x2ULL
#define NV_EVENT_XID_CRITICAL 0x8ULL

/* Most events one poll returns; more stay queued in NVML for the next poll. */
#define NVML_EVENTS_BATCH 64u

struct nvml_events;

/* Create an event set and register facts' GPUs on it (those with a device handle; a GPU
 * whose gather hung is left out, with a notice). types 0 means NVML_EVENTS_DEFAULT_TYPES;
 * dl NULL or 0 fields: defaults (call_ms bounds each call, init_ms nvmlInit_v2). What
 * start has to say (GPUs without events, a lost GPU, failed calls) is queued and handed
 * to the callback of the next poll. Returns 0 with *ret set (possibly with no GPU
 * registered: then poll has nothing to wait for), -EINVAL (no facts, lib, or NVML not
 * initialised by facts), -ENOMEM, -EAGAIN (no thread). */
int nvml_events_start(struct nvml_lib *lib, const struct nvml_facts *facts, const struct nvml_deadlines *dl,
                      unsigned long long types, struct nvml_events **ret);

/* Hand queued notices to cb, then wait up to ms for events and hand each to cb (in
 * order; a burst already queued in NVML comes in the same call, up to
 * NVML_EVENTS_BATCH). Returns as soon as something was received, else after ms. A wait
 * that fails at once (a lost GPU, an error) is reported (once per distinct answer in a
 * row) and the rest of ms is slept, so a loop around poll never spins. Returns the
 * number of records handed over, or:
 *   -ENODEV     no GPU registered: nothing to wait for (returns at once; sleep yourself);
 *   -ETIMEDOUT  the module is abandoned (a call hung now, reported as NVML_EVENT_HUNG,
 *               or earlier): no more calls; leave with _exit;
 *   -ENOMEM, -EAGAIN.
 * cb may be NULL (records are dropped). Not thread-safe: one caller at a time. */
int nvml_events_poll(struct nvml_events *ev, unsigned int ms, nvml_event_fn cb, void *userdata);

/* GPUs registered for at least one event type. */
unsigned int nvml_events_registered(const struct nvml_events *ev);
/* Event types GPU index (NVML's) was registered for; 0 when none or not ours. */
unsigned long long nvml_events_types_of(const struct nvml_events *ev, unsigned int index);
/* Some call never returned (see the top of this file). */
bool nvml_events_abandoned(const struct nvml_events *ev);

/* Free the event set (nvmlEventSetFree) and release start's NVML reference
 * (nvmlShutdown), each under the deadline, unless a call was abandoned; then free ev.
 * Accepts NULL. Returns true when some call was abandoned, now or before: the library
 * must stay loaded and the process should leave with _exit. */
bool nvml_events_stop(struct nvml_events *ev);

/* An NVML_EVENT_XID as a kernel-log Xid record (sys/xid.h), so that both sources can be
 * judged together: addr, code, usec, text "NVML event". Returns 0, or -EINVAL for any
 * other kind. */
int nvml_event_to_xid(const struct nvml_event *ev, struct xid_event *ret);

/* "xid", "dbe", "sbe", "other", "unsupported", "gpu lost", "error", "hung". */
const char *nvml_event_kind_name(enum nvml_event_kind k);

/* NVML events (Xid, ECC) under deadlines: see nvml_events.h and docs/nvml.md, "Events".
 *
 * Every batch of NVML calls runs on a worker of core/deadline.c: start (init, create the
 * set, register each GPU), each poll (one nvmlEventSetWait_v2, then a drain of what is
 * already queued), stop (free the set, shutdown). A worker lets NVML write only into its
 * locals and copies outcomes into its own heap block after deadline_end() said the call
 * returned in time; publish copies the block into the caller's memory. So an abandoned
 * worker, which may come back at any time or never, writes nothing the caller reads or
 * frees, and struct nvml_events itself is never seen by a worker. */
#include "sys/nvml_events.h"
#include "bindings/nvml.h"
#include "bindings/nvml_deadline.h"

_Static_assert(NV_EVENT_SINGLE_BIT_ECC == (unsigned long long)nvmlEventTypeSingleBitEccError, "event bit");
_Static_assert(NV_EVENT_DOUBLE_BIT_ECC == (unsigned long long)nvmlEventTypeDoubleBitEccError, "event bit");
_Static_assert(NV_EVENT_XID_CRITICAL == (unsigned long long)nvmlEventTypeXidCriticalError, "event bit");

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/array.h"
#include "core/deadline.h"
#include "sys/xid.h"

#define NO_INSTANCE 0xFFFFFFFFu

struct ev_gpu {
        nvmlDevice_t device;
        unsigned int index;
        char addr[16];
        bool usable;              /* has a handle and its gather did not hang */
        unsigned long long types; /* registered for */
        bool lost_said;
};

struct nvml_events {
        struct nvml_lib *lib;
        struct nvml_deadlines dl;
        unsigned long long types;
        nvmlEventSet_t set;
        bool set_ok;
        bool init_ok; /* holds an nvmlInit_v2 reference of its own */
        bool abandoned;
        unsigned int n_gpus;
        struct ev_gpu *gpus;
        unsigned int n_registered;

        struct nvml_event *queue; /* notices waiting for a poll */
        unsigned int n_queue;
        unsigned int cap_queue;

        int last_wait_rc;        /* the last failed wait's rc (NVML_SUCCESS: none): said once in a row */
        bool lost_unknown_said;  /* GPU_IS_LOST naming no GPU of ours */
};

/* --- small helpers -------------------------------------------------------------------- */

static int64_t clock_usec(clockid_t id) {
        struct timespec ts;
        if (clock_gettime(id, &ts) != 0)
                return -1;
        return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void sleep_ms(unsigned long long ms) {
        struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
                ;
}

static unsigned int add_ms(unsigned int a, unsigned int b) {
        return a > UINT_MAX - b ? UINT_MAX : a + b;
}

static struct ev_gpu *gpu_by_index(const struct nvml_events *ev, int index) {
        for (unsigned int i = 0; i < ev->n_gpus; i++)
                if (index >= 0 && ev->gpus[i].index == (unsigned int)index)
                        return &ev->gpus[i];
        return NULL;
}

static struct ev_gpu *gpu_by_device(const struct nvml_events *ev, nvmlDevice_t d) {
        if (!d)
                return NULL;
        for (unsigned int i = 0; i < ev->n_gpus; i++)
                if (ev->gpus[i].device == d)
                        return &ev->gpus[i];
        return NULL;
}

/* A record naming g (NULL: no GPU), stamped now. */
static struct nvml_event record_for(const struct ev_gpu *g, enum nvml_event_kind kind) {
        struct nvml_event r = {
                .kind = kind,
                .gpu = g ? (int)g->index : -1,
                .gpu_instance_id = NO_INSTANCE,
                .compute_instance_id = NO_INSTANCE,
                .rc = NVML_SUCCESS,
                .usec = clock_usec(CLOCK_BOOTTIME),
                .wall_usec = clock_usec(CLOCK_REALTIME),
        };
        if (g)
                memcpy(r.addr, g->addr, sizeof(r.addr));
        return r;
}

static int queue_notice(struct nvml_events *ev, const struct ev_gpu *g, enum nvml_event_kind kind, const char *fn,
                        int rc, unsigned long long data) {
        if (ev->n_queue == ev->cap_queue) {
                unsigned int cap = ev->cap_queue ? ev->cap_queue * 2 : 8;
                struct nvml_event *q = realloc(ev->queue, cap * sizeof(*q));
                if (!q)
                        return -ENOMEM;
                ev->queue = q;
                ev->cap_queue = cap;
        }
        struct nvml_event r = record_for(g, kind);
        r.fn = fn;
        r.rc = rc;
        r.type = ev->types;
        r.data = data;
        ev->queue[ev->n_queue++] = r;
        return 0;
}

/* --- start ------------------------------------------------------------------------------ */

struct start_gpu {
        nvmlDevice_t device;
        bool skip;                  /* not to be registered (no handle, or its gather hung) */
        bool sup_called;            /* nvmlDeviceGetSupportedEventTypes answered */
        nvmlReturn_t sup_rc;
        unsigned long long supported;
        const char *reg_fn;         /* the call that decided the outcome (NULL: none made) */
        nvmlReturn_t reg_rc;
        unsigned long long registered;
};

struct start_block {
        const struct nvml_lib *lib;
        unsigned long long types;
        unsigned int init_ms;
        bool init_called;
        nvmlReturn_t init_rc;
        const char *missing_fn;     /* an event function the library lacks */
        bool create_called;
        nvmlReturn_t create_rc;
        nvmlEventSet_t set;
        bool set_ok;
        int cur;                    /* GPU the worker is on (-1: none); written only between calls */
        const char *hung;           /* set by publish at abandonment */
        unsigned int hung_ms;
        unsigned int n;
        struct start_gpu gpus[];
};

static size_t start_block_size(unsigned int n) {
        return sizeof(struct start_block) + n * sizeof(struct start_gpu);
}

/* Register one GPU for what it supports of b->types. */
static bool start_gpu(struct deadline_worker *w, struct start_block *b, struct start_gpu *g) {
        const struct nvml_lib *lib = b->lib;
        unsigned long long want;

        if (lib->nvmlDeviceGetSupportedEventTypes) {
                unsigned long long sup = 0;
                if (!deadline_begin(w, "nvmlDeviceGetSupportedEventTypes", 0))
                        return false;
                nvmlReturn_t rc = lib->nvmlDeviceGetSupportedEventTypes(g->device, &sup);
                if (!deadline_end(w))
                        return false;
                g->sup_called = true;
                g->sup_rc = rc;
                g->supported = rc == NVML_SUCCESS ? sup : 0;
        } else {
                g->sup_rc = NVML_ERROR_FUNCTION_NOT_FOUND;
        }
        g->reg_fn = "nvmlDeviceGetSupportedEventTypes";
        g->reg_rc = g->sup_rc;
        if (g->sup_rc == NVML_SUCCESS)
                want = b->types & g->supported;
        else if (g->sup_rc == NVML_ERROR_NOT_SUPPORTED)
                want = 0;
        else
                /* Unknown support (a lost GPU, an old library): try Xid alone. NVML reports
                 * a GPU's loss as Xid 79 on it, and a lost GPU may still register. */
                want = b->types & (unsigned long long)nvmlEventTypeXidCriticalError;
        if (want == 0)
                return true;

        for (;;) {
                if (!deadline_begin(w, "nvmlDeviceRegisterEvents", 0))
                        return false;
                nvmlReturn_t rc = lib->nvmlDeviceRegisterEvents(g->device, want, b->set);
                if (!deadline_end(w))
                        return false;
                g->reg_fn = "nvmlDeviceRegisterEvents";
                g->reg_rc = rc;
                if (rc == NVML_SUCCESS) {
                        g->registered = want;
                        return true;
                }
                /* Some boards list ECC events and refuse them while ECC is off: keep Xid. */
                unsigned long long xid = want & (unsigned long long)nvmlEventTypeXidCriticalError;
                if (rc != NVML_ERROR_NOT_SUPPORTED || !xid || xid == want)
                        return true;
                want = xid;
        }
}

static void start_work(struct deadline_worker *w, void *block) {
        struct start_block *b = block;
        const struct nvml_lib *lib = b->lib;

        if (!deadline_begin(w, "nvmlInit_v2", b->init_ms))
                return;
        nvmlReturn_t rc = lib->nvmlInit_v2();
        if (!deadline_end(w))
                return;
        b->init_called = true;
        b->init_rc = rc;
        if (rc != NVML_SUCCESS)
                return;

        static const char *const needed[] = {"nvmlEventSetCreate", "nvmlDeviceRegisterEvents", "nvmlEventSetWait_v2",
                                             "nvmlEventSetFree"};
        const bool present[] = {lib->nvmlEventSetCreate != NULL, lib->nvmlDeviceRegisterEvents != NULL,
                                lib->nvmlEventSetWait_v2 != NULL, lib->nvmlEventSetFree != NULL};
        for (unsigned int i = 0; i < ARRAY_COUNT(needed); i++)
                if (!present[i]) {
                        b->missing_fn = needed[i];
                        return;
                }

        nvmlEventSet_t set = NULL;
        if (!deadline_begin(w, "nvmlEventSetCreate", 0))
                return;
        rc = lib->nvmlEventSetCreate(&set);
        if (!deadline_end(w))
                return;
        b->create_called = true;
        b->create_rc = rc;
        if (rc != NVML_SUCCESS)
                return;
        b->set = set;
        b->set_ok = true;

        for (unsigned int i = 0; i < b->n; i++) {
                if (b->gpus[i].skip)
                        continue;
                b->cur = (int)i;
                if (!start_gpu(w, b, &b->gpus[i]))
                        return;
        }
        b->cur = -1;
}

static void start_publish(void *block, void *dest, unsigned int index, const char *hung, unsigned int elapsed_ms,
                          void *userdata) {
        struct start_block *b = block;
        (void)index;
        (void)userdata;
        memcpy(dest, b, start_block_size(b->n));
        ((struct start_block *)dest)->hung = hung;
        ((struct start_block *)dest)->hung_ms = elapsed_ms;
}

/* Copy facts' GPUs into ev, with a notice for each that cannot be registered. */
static int take_gpus(struct nvml_events *ev, const struct nvml_facts *facts) {
        ev->n_gpus = facts->n_gpus;
        ev->gpus = ev->n_gpus ? calloc(ev->n_gpus, sizeof(*ev->gpus)) : NULL;
        if (ev->n_gpus && !ev->gpus)
                return -ENOMEM;
        for (unsigned int i = 0; i < ev->n_gpus; i++) {
                const struct nvml_gpu *fg = &facts->gpus[i];
                struct ev_gpu *g = &ev->gpus[i];
                g->index = fg->index;
                g->device = fg->device;
                if (nv_ok(fg->pci_bus_id) && strlen(fg->pci_bus_id.v) < sizeof(g->addr))
                        memcpy(g->addr, fg->pci_bus_id.v, strlen(fg->pci_bus_id.v) + 1);
                int r = 0;
                if (fg->timed_out) {
                        /* Its gather hung: a thread may still be inside NVML for this GPU. */
                        r = queue_notice(ev, g, NVML_EVENT_ERROR, fg->timeout_fn, NVML_ERROR_TIMEOUT, 0);
                } else if (!nv_ok(fg->handle)) {
                        const char *fn = fg->handle.fn ? fg->handle.fn : "nvmlDeviceGetHandleByIndex_v2";
                        if (fg->handle.state == NV_ERROR && fg->handle.rc == NVML_ERROR_GPU_IS_LOST) {
                                g->lost_said = true;
                                r = queue_notice(ev, g, NVML_EVENT_GPU_LOST, fn, fg->handle.rc, 0);
                        } else {
                                r = queue_notice(ev, g, NVML_EVENT_ERROR, fn,
                                                 fg->handle.state == NV_TIMEOUT ? NVML_ERROR_TIMEOUT : fg->handle.rc, 0);
                        }
                } else {
                        g->usable = true;
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Turn the start worker's outcome into ev's state and notices. */
static int settle_start(struct nvml_events *ev, const struct start_block *s, const struct deadline_outcome *o) {
        int r = 0;
        if (s->init_called && s->init_rc == NVML_SUCCESS)
                ev->init_ok = true;
        if (s->set_ok) {
                ev->set = s->set;
                ev->set_ok = true;
        }
        if (s->init_called && s->init_rc != NVML_SUCCESS)
                r = queue_notice(ev, NULL, NVML_EVENT_ERROR, "nvmlInit_v2", s->init_rc, 0);
        else if (s->missing_fn)
                r = queue_notice(ev, NULL, NVML_EVENT_ERROR, s->missing_fn, NVML_ERROR_FUNCTION_NOT_FOUND, 0);
        else if (s->create_called && s->create_rc != NVML_SUCCESS)
                r = queue_notice(ev, NULL, NVML_EVENT_ERROR, "nvmlEventSetCreate", s->create_rc, 0);
        if (r < 0)
                return r;

        for (unsigned int i = 0; i < s->n && r == 0; i++) {
                const struct start_gpu *sg = &s->gpus[i];
                struct ev_gpu *g = &ev->gpus[i];
                if (sg->skip || !sg->reg_fn)
                        continue; /* not reached */
                g->types = sg->registered;
                if (g->types)
                        ev->n_registered++;
                if (sg->sup_called && sg->sup_rc == NVML_ERROR_GPU_IS_LOST && !g->lost_said) {
                        g->lost_said = true;
                        r = queue_notice(ev, g, NVML_EVENT_GPU_LOST, "nvmlDeviceGetSupportedEventTypes", sg->sup_rc, 0);
                        if (r < 0 || g->types)
                                continue;
                }
                if (g->types)
                        continue;
                if (sg->reg_rc == NVML_ERROR_GPU_IS_LOST) {
                        if (!g->lost_said) {
                                g->lost_said = true;
                                r = queue_notice(ev, g, NVML_EVENT_GPU_LOST, sg->reg_fn, sg->reg_rc, 0);
                        }
                } else if (sg->reg_rc == NVML_SUCCESS || sg->reg_rc == NVML_ERROR_NOT_SUPPORTED ||
                           sg->reg_rc == NVML_ERROR_FUNCTION_NOT_FOUND) {
                        /* SUCCESS here: supported, but none of the types asked for. */
                        r = queue_notice(ev, g, NVML_EVENT_UNSUPPORTED, sg->reg_fn, sg->reg_rc, sg->supported);
                } else if (!(sg->sup_called && sg->sup_rc == NVML_ERROR_GPU_IS_LOST)) {
                        r = queue_notice(ev, g, NVML_EVENT_ERROR, sg->reg_fn, sg->reg_rc, 0);
                }
        }
        if (r < 0)
                return r;

        if (o->state == DEADLINE_ABANDONED) {
                ev->abandoned = true;
                const struct ev_gpu *g = s->cur >= 0 && (unsigned int)s->cur < ev->n_gpus ? &ev->gpus[s->cur] : NULL;
                r = queue_notice(ev, g, NVML_EVENT_HUNG, o->what, NVML_ERROR_TIMEOUT, 0);
                if (r == 0)
                        ev->queue[ev->n_queue - 1].elapsed_ms = o->elapsed_ms;
        }
        return r;
}

int nvml_events_start(struct nvml_lib *lib, const struct nvml_facts *facts, const struct nvml_deadlines *dl,
                      unsigned long long types, struct nvml_events **ret) {
        if (!ret)
                return -EINVAL;
        *ret = NULL;
        if (!lib || !facts || !facts->initialized || !lib->nvmlInit_v2)
                return -EINVAL;

        struct nvml_events *ev = calloc(1, sizeof(*ev));
        if (!ev)
                return -ENOMEM;
        ev->lib = lib;
        nvml_deadlines_normalise(dl, &ev->dl);
        ev->types = types ? types : NVML_EVENTS_DEFAULT_TYPES;
        ev->last_wait_rc = NVML_SUCCESS;
        int r = take_gpus(ev, facts);
        if (r < 0)
                goto fail;

        size_t size = start_block_size(ev->n_gpus);
        struct start_block *b = calloc(1, size);
        struct start_block *s = calloc(1, size);
        if (!b || !s) {
                free(b);
                free(s);
                r = -ENOMEM;
                goto fail;
        }
        b->lib = lib;
        b->types = ev->types;
        b->init_ms = ev->dl.init_ms;
        b->cur = -1;
        b->n = ev->n_gpus;
        for (unsigned int i = 0; i < ev->n_gpus; i++) {
                b->gpus[i].device = ev->gpus[i].device;
                b->gpus[i].skip = !ev->gpus[i].usable;
        }
        s->n = ev->n_gpus;
        struct deadline_outcome o;
        r = nvml_run_one(ev->dl.call_ms, start_work, start_publish, b, s, &o);
        if (r == 0)
                r = settle_start(ev, s, &o);
        free(s);
        if (r < 0)
                goto fail;
        *ret = ev;
        return 0;

fail:
        /* A worker that did not start made no call; one that ran has published, and its
         * set and reference are released by stop. */
        if (ev->set_ok || ev->init_ok || ev->abandoned) {
                *ret = ev;
                (void)nvml_events_stop(ev); /* r says what went wrong, ignoring stop's answer */
                *ret = NULL;
        } else {
                free(ev->gpus);
                free(ev->queue);
                free(ev);
        }
        return r;
}

/* --- poll ------------------------------------------------------------------------------- */

struct poll_block {
        const struct nvml_lib *lib;
        nvmlEventSet_t set;
        unsigned int ms;
        unsigned int call_ms;
        unsigned int n;
        nvmlEventData_t data[NVML_EVENTS_BATCH];
        int64_t usec[NVML_EVENTS_BATCH];
        int64_t wall_usec[NVML_EVENTS_BATCH];
        nvmlReturn_t end_rc;        /* the answer that ended the wait (TIMEOUT: nothing more) */
        nvmlDevice_t end_device;    /* its data.device, for GPU_IS_LOST */
};

static void poll_work(struct deadline_worker *w, void *block) {
        struct poll_block *b = block;
        unsigned int timeout = b->ms;
        for (;;) {
                nvmlEventData_t d;
                memset(&d, 0, sizeof(d));
                if (!deadline_begin(w, "nvmlEventSetWait_v2", add_ms(timeout, b->call_ms)))
                        return;
                nvmlReturn_t rc = b->lib->nvmlEventSetWait_v2(b->set, &d, timeout);
                if (!deadline_end(w))
                        return;
                if (rc != NVML_SUCCESS) {
                        b->end_rc = rc;
                        b->end_device = d.device;
                        return;
                }
                b->data[b->n] = d;
                b->usec[b->n] = clock_usec(CLOCK_BOOTTIME);
                b->wall_usec[b->n] = clock_usec(CLOCK_REALTIME);
                if (++b->n == NVML_EVENTS_BATCH) {
                        b->end_rc = NVML_SUCCESS;
                        return;
                }
                timeout = 0; /* drain what is already queued, then return */
        }
}

static void poll_publish(void *block, void *dest, unsigned int index, const char *hung, unsigned int elapsed_ms,
                         void *userdata) {
        (void)index;
        (void)hung;
        (void)elapsed_ms;
        (void)userdata;
        memcpy(dest, block, sizeof(struct poll_block));
}

static enum nvml_event_kind kind_of(unsigned long long type) {
        switch (type) {
        case nvmlEventTypeXidCriticalError:
                return NVML_EVENT_XID;
        case nvmlEventTypeDoubleBitEccError:
                return NVML_EVENT_ECC_DBE;
        case nvmlEventTypeSingleBitEccError:
                return NVML_EVENT_ECC_SBE;
        default:
                return NVML_EVENT_OTHER;
        }
}

static unsigned int deliver_queue(struct nvml_events *ev, nvml_event_fn cb, void *userdata) {
        unsigned int n = ev->n_queue;
        for (unsigned int i = 0; i < n; i++)
                if (cb)
                        cb(&ev->queue[i], userdata);
        ev->n_queue = 0;
        return n;
}

int nvml_events_poll(struct nvml_events *ev, unsigned int ms, nvml_event_fn cb, void *userdata) {
        if (!ev)
                return -EINVAL;
        unsigned int delivered = deliver_queue(ev, cb, userdata);
        if (ev->abandoned)
                return -ETIMEDOUT;
        if (!ev->set_ok || ev->n_registered == 0)
                return -ENODEV;

        unsigned long long t0 = deadline_now_ms();
        struct poll_block *b = calloc(1, sizeof(*b));
        struct poll_block *s = calloc(1, sizeof(*s));
        if (!b || !s) {
                free(b);
                free(s);
                return -ENOMEM;
        }
        b->lib = ev->lib;
        b->set = ev->set;
        b->ms = ms;
        b->call_ms = ev->dl.call_ms;
        struct deadline_outcome o;
        int r = nvml_run_one(ev->dl.call_ms, poll_work, poll_publish, b, s, &o);
        if (r < 0) {
                free(s);
                return r;
        }

        /* What arrived before a hang is real: hand it over first. */
        for (unsigned int i = 0; i < s->n && i < NVML_EVENTS_BATCH; i++) {
                const nvmlEventData_t *d = &s->data[i];
                struct nvml_event e = record_for(gpu_by_device(ev, d->device), kind_of(d->eventType));
                e.type = d->eventType;
                e.data = d->eventData;
                e.gpu_instance_id = d->gpuInstanceId;
                e.compute_instance_id = d->computeInstanceId;
                e.fn = "nvmlEventSetWait_v2";
                e.usec = s->usec[i];
                e.wall_usec = s->wall_usec[i];
                if (cb)
                        cb(&e, userdata);
                delivered++;
        }

        if (o.state == DEADLINE_ABANDONED) {
                ev->abandoned = true;
                struct nvml_event e = record_for(NULL, NVML_EVENT_HUNG);
                e.fn = o.what;
                e.rc = NVML_ERROR_TIMEOUT;
                e.type = ev->types;
                e.elapsed_ms = o.elapsed_ms;
                if (cb)
                        cb(&e, userdata);
                free(s);
                return -ETIMEDOUT;
        }

        nvmlReturn_t end = s->end_rc;
        nvmlDevice_t end_device = s->end_device;
        unsigned int n = s->n;
        free(s);
        if (end == NVML_SUCCESS || end == NVML_ERROR_TIMEOUT) {
                ev->last_wait_rc = NVML_SUCCESS;
                return (int)delivered;
        }

        /* A wait that failed. Said once in a row: a lost GPU makes every wait fail. */
        struct ev_gpu *g = gpu_by_device(ev, end_device);
        bool say;
        if (end == NVML_ERROR_GPU_IS_LOST) {
                bool *said = g ? &g->lost_said : &ev->lost_unknown_said;
                say = !*said;
                *said = true;
        } else {
                say = (int)end != ev->last_wait_rc;
        }
        ev->last_wait_rc = (int)end;
        if (say) {
                struct nvml_event e =
                        record_for(g, end == NVML_ERROR_GPU_IS_LOST ? NVML_EVENT_GPU_LOST : NVML_EVENT_ERROR);
                e.fn = "nvmlEventSetWait_v2";
                e.rc = (int)end;
                e.type = ev->types;
                if (cb)
                        cb(&e, userdata);
                delivered++;
        }
        /* It did not wait: sleep the rest, so that a loop around poll does not spin. */
        if (n == 0) {
                unsigned long long now = deadline_now_ms();
                if (now < t0 + ms)
                        sleep_ms(t0 + ms - now);
        }
        return (int)delivered;
}

unsigned int nvml_events_registered(const struct nvml_events *ev) {
        return ev ? ev->n_registered : 0;
}

unsigned long long nvml_events_types_of(const struct nvml_events *ev, unsigned int index) {
        const struct ev_gpu *g = ev ? gpu_by_index(ev, (int)index) : NULL;
        return g ? g->types : 0;
}

bool nvml_events_abandoned(const struct nvml_events *ev) {
        return ev && ev->abandoned;
}

/* --- stop ------------------------------------------------------------------------------- */

struct stop_block {
        const struct nvml_lib *lib;
        nvmlEventSet_t set;
        bool set_ok;
        bool init_ok;
};

static void stop_work(struct deadline_worker *w, void *block) {
        struct stop_block *b = block;
        if (b->set_ok) {
                if (!deadline_begin(w, "nvmlEventSetFree", 0))
                        return;
                /* Its error changes nothing: the set is gone with the shutdown, ignoring. */
                (void)b->lib->nvmlEventSetFree(b->set);
                if (!deadline_end(w))
                        return;
        }
        if (b->init_ok && b->lib->nvmlShutdown) {
                if (!deadline_begin(w, "nvmlShutdown", 0))
                        return;
                (void)b->lib->nvmlShutdown(); /* nothing to do about a failure, ignoring */
                (void)deadline_end(w);
        }
}

static void stop_publish(void *block, void *dest, unsigned int index, const char *hung, unsigned int elapsed_ms,
                         void *userdata) {
        (void)block;
        (void)dest;
        (void)index;
        (void)hung;
        (void)elapsed_ms;
        (void)userdata;
}

bool nvml_events_stop(struct nvml_events *ev) {
        if (!ev)
                return false;
        if (!ev->abandoned && (ev->set_ok || ev->init_ok)) {
                struct stop_block *b = calloc(1, sizeof(*b));
                if (b) {
                        *b = (struct stop_block){.lib = ev->lib, .set = ev->set, .set_ok = ev->set_ok, .init_ok = ev->init_ok};
                        struct deadline_outcome o;
                        if (nvml_run_one(ev->dl.call_ms, stop_work, stop_publish, b, NULL, &o) == 0 &&
                            o.state == DEADLINE_ABANDONED)
                                ev->abandoned = true;
                }
                /* Out of memory: the set and the reference stay with NVML until exit, ignoring. */
        }
        bool abandoned = ev->abandoned;
        free(ev->gpus);
        free(ev->queue);
        free(ev);
        return abandoned;
}

/* --- conversions -------------------------------------------------------------------------- */

int nvml_event_to_xid(const struct nvml_event *ev, struct xid_event *ret) {
        if (!ev || !ret || ev->kind != NVML_EVENT_XID)
                return -EINVAL;
        memset(ret, 0, sizeof(*ret));
        memcpy(ret->addr, ev->addr, sizeof(ret->addr) < sizeof(ev->addr) ? sizeof(ret->addr) : sizeof(ev->addr));
        ret->addr[sizeof(ret->addr) - 1] = '\0';
        ret->code = ev->data > INT_MAX ? INT_MAX : (int)ev->data;
        strcpy(ret->text, "NVML event");
        ret->usec = ev->usec;
        return 0;
}

const char *nvml_event_kind_name(enum nvml_event_kind k) {
        static const char *const names[NVML_EVENT_KIND_COUNT] = {
                [NVML_EVENT_XID] = "xid",
                [NVML_EVENT_ECC_DBE] = "dbe",
                [NVML_EVENT_ECC_SBE] = "sbe",
                [NVML_EVENT_OTHER] = "other",
                [NVML_EVENT_UNSUPPORTED] = "unsupported",
                [NVML_EVENT_GPU_LOST] = "gpu lost",
                [NVML_EVENT_ERROR] = "error",
                [NVML_EVENT_HUNG] = "hung",
        };
        return (unsigned int)k < NVML_EVENT_KIND_COUNT ? names[k] : "invalid";
}

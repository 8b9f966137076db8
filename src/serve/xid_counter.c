/* Xid counting on NVML's events (xid_counter.h). */
#include "serve/xid_counter.h"

#include "sys/nvml_events.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define POLL_SLICE_MS 200u
#define MAX_COUNTS 4096u /* distinct (GPU, Xid) pairs kept; more are folded into the last */

struct xid_counter {
        struct nvml_events *ev;
        pthread_t thread;
        atomic_bool stopping;
        pthread_mutex_t lock;
        /* under lock */
        unsigned long long generation;
        struct xid_count *counts; /* sorted by gpu, xid */
        size_t n;
        unsigned int n_gpus;
        bool *unwatched;          /* per GPU: said it delivers no Xid events, or was lost */
        unsigned long long *last; /* per GPU: the last Xid, 0 none */
};

static void count_locked(struct xid_counter *x, unsigned int gpu, unsigned long long xid) {
        size_t i = 0;
        while (i < x->n && (x->counts[i].gpu < gpu || (x->counts[i].gpu == gpu && x->counts[i].xid < xid)))
                i++;
        if (i < x->n && x->counts[i].gpu == gpu && x->counts[i].xid == xid) {
                x->counts[i].count++;
        } else if (x->n < MAX_COUNTS) {
                memmove(&x->counts[i + 1], &x->counts[i], (x->n - i) * sizeof(x->counts[0]));
                x->counts[i] = (struct xid_count){.gpu = gpu, .xid = xid, .count = 1};
                x->n++;
        }
        x->last[gpu] = xid;
}

static void on_event(const struct nvml_event *e, void *userdata) {
        struct xid_counter *x = userdata;
        if (e->gpu < 0 || (unsigned int)e->gpu >= x->n_gpus)
                return;
        pthread_mutex_lock(&x->lock);
        switch (e->kind) {
        case NVML_EVENT_XID:
                count_locked(x, (unsigned int)e->gpu, e->data);
                x->generation++;
                break;
        case NVML_EVENT_UNSUPPORTED:
        case NVML_EVENT_GPU_LOST:
                if (!x->unwatched[e->gpu]) {
                        x->unwatched[e->gpu] = true;
                        x->generation++;
                }
                break;
        default:
                break;
        }
        pthread_mutex_unlock(&x->lock);
}

static void *run(void *arg) {
        struct xid_counter *x = arg;
        while (!atomic_load(&x->stopping)) {
                int r = nvml_events_poll(x->ev, POLL_SLICE_MS, on_event, x);
                if (r == -ETIMEDOUT) {
                        /* A wait hung: no more calls, so no GPU's Xids are watched any more. */
                        pthread_mutex_lock(&x->lock);
                        for (unsigned int i = 0; i < x->n_gpus; i++)
                                x->unwatched[i] = true;
                        x->generation++;
                        pthread_mutex_unlock(&x->lock);
                        break;
                }
                if (r == -ENODEV) {
                        /* No GPU delivers events: the notices were handed over; nothing to wait for. */
                        break;
                }
        }
        return NULL;
}

int xid_counter_start(struct nvml_lib *lib, const struct nvml_facts *f, const struct nvml_deadlines *dl,
                      struct xid_counter **ret) {
        struct xid_counter *x = calloc(1, sizeof(*x));
        if (!x)
                return -ENOMEM;
        x->n_gpus = f->n_gpus;
        x->counts = calloc(MAX_COUNTS, sizeof(*x->counts));
        x->unwatched = calloc(f->n_gpus ? f->n_gpus : 1, sizeof(*x->unwatched));
        x->last = calloc(f->n_gpus ? f->n_gpus : 1, sizeof(*x->last));
        int r = -ENOMEM;
        if (!x->counts || !x->unwatched || !x->last)
                goto fail;
        for (unsigned int i = 0; i < f->n_gpus; i++)
                x->unwatched[i] = f->gpus[i].timed_out || f->gpus[i].handle.state != NV_OK;
        pthread_mutex_init(&x->lock, NULL);
        r = nvml_events_start(lib, f, dl, NV_EVENT_XID_CRITICAL, &x->ev);
        if (r < 0)
                goto fail_lock;
        r = pthread_create(&x->thread, NULL, run, x);
        if (r != 0) {
                (void)nvml_events_stop(x->ev);
                r = -r;
                goto fail_lock;
        }
        *ret = x;
        return 0;
fail_lock:
        pthread_mutex_destroy(&x->lock);
fail:
        free(x->counts);
        free(x->unwatched);
        free(x->last);
        free(x);
        return r;
}

unsigned long long xid_counter_generation(struct xid_counter *x) {
        pthread_mutex_lock(&x->lock);
        unsigned long long g = x->generation;
        pthread_mutex_unlock(&x->lock);
        return g;
}

unsigned long long xid_counter_read(struct xid_counter *x, struct xid_count *out, size_t max, size_t *ret_n,
                                    unsigned int n_gpus, bool *watched, unsigned long long *last) {
        pthread_mutex_lock(&x->lock);
        size_t n = x->n < max ? x->n : max;
        memcpy(out, x->counts, n * sizeof(*out));
        *ret_n = n;
        for (unsigned int i = 0; i < n_gpus; i++) {
                watched[i] = i < x->n_gpus && !x->unwatched[i];
                last[i] = i < x->n_gpus ? x->last[i] : 0;
        }
        unsigned long long g = x->generation;
        pthread_mutex_unlock(&x->lock);
        return g;
}

bool xid_counter_stop(struct xid_counter *x) {
        if (!x)
                return false;
        atomic_store(&x->stopping, true);
        pthread_join(x->thread, NULL); /* a poll returns within its slice plus the call deadline */
        bool abandoned = nvml_events_stop(x->ev);
        pthread_mutex_destroy(&x->lock);
        free(x->counts);
        free(x->unwatched);
        free(x->last);
        free(x);
        return abandoned;
}

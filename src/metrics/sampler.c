/* The sampler (sampler.h): one thread gathering rounds, readers taking published samples.
 *
 * A sample is reference-counted: one reference for being the latest, one per reader. The
 * last reference to go puts it on the retired list, and the sampler thread releases its
 * facts (nvmlShutdown under the call deadline) after publishing the next round, so that
 * neither a reader nor a publish ever waits on NVML, and NVML's init count never drops to
 * zero between rounds. */
#include "metrics/sampler.h"
#include "core/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

struct sampler {
        struct sampler_options o;
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t published; /* a sample was published, or the sampler ended */
        pthread_cond_t wake;      /* the thread's sleep between rounds: sampler_stop */
        int pipe[2];              /* a byte per publish, for sampler_fd */
        atomic_bool stopping;

        /* under lock */
        struct sample *latest;
        struct sample *retired;
        unsigned long long seq;
        /* The sampler thread's own: GPM's samples from one round to the next. */
        struct nvml_gpm_carry *gpm;
        struct sampler_status status;
        bool abandoned; /* a call was abandoned inside NVML: no nvmlShutdown any more */
};

static struct timespec monotonic_at(unsigned long long ns) {
        return (struct timespec){.tv_sec = (time_t)(ns / 1000000000ULL), .tv_nsec = (long)(ns % 1000000000ULL)};
}

static void notify(struct sampler *s) {
        pthread_cond_broadcast(&s->published);
        char b = 1;
        /* Non-blocking: a full pipe already says "something new". */
        if (write(s->pipe[1], &b, 1) < 0 && errno != EAGAIN)
                return;
}

/* Drop a reference, under lock; the last one retires the sample. */
static void unref_locked(struct sampler *s, struct sample *x) {
        if (--x->refs > 0)
                return;
        x->next_retired = s->retired;
        s->retired = x;
}

/* Release retired samples' facts, outside the lock. Returns true when an nvmlShutdown hung. */
static bool release_retired(struct sampler *s) {
        pthread_mutex_lock(&s->lock);
        struct sample *list = s->retired;
        s->retired = NULL;
        bool abandoned = s->abandoned;
        pthread_mutex_unlock(&s->lock);
        bool hung = false;
        while (list) {
                struct sample *x = list;
                list = x->next_retired;
                if (abandoned || hung)
                        x->facts.abandoned = true; /* free only: a call may still run in NVML */
                bool was = x->facts.abandoned;
                nvml_facts_done(&x->facts);
                if (!was && x->facts.abandoned)
                        hung = true;
                free(x);
        }
        return hung;
}

static bool stop_requested(void *ctx) { return atomic_load(&((struct sampler *)ctx)->stopping); }

static void end(struct sampler *s, enum sampler_end why, int err) {
        pthread_mutex_lock(&s->lock);
        if (s->status.end == SAMPLER_RUNNING) {
                s->status.end = why;
                s->status.end_errno = err;
        }
        notify(s);
        pthread_mutex_unlock(&s->lock);
}

/* The rounds run below the threads that answer: a round is a few ms of CPU a second, and
 * a scrape or a screen that waits behind it on a busy CPU is the exporter's latency tail
 * (docs/perf.md, "serve's tail"). Raising one's own nice is always allowed; on Linux it is
 * the thread's own, and the deadline workers a round starts inherit it. */
#define SAMPLER_NICE_STEP 10

static void lower_own_priority(void) {
        id_t tid = (id_t)syscall(SYS_gettid);
        errno = 0;
        int nice = getpriority(PRIO_PROCESS, tid);
        if (nice == -1 && errno != 0)
                return;
        int want = nice + SAMPLER_NICE_STEP < 19 ? nice + SAMPLER_NICE_STEP : 19;
        (void)setpriority(PRIO_PROCESS, tid, want); /* best effort: the rounds run either way */
}

static void *run(void *arg) {
        struct sampler *s = arg;
        lower_own_priority();
        struct nvml_deadlines dl = s->o.dl;
        dl.stop_requested = stop_requested;
        dl.stop_ctx = s;
        unsigned long long next_ns = monotonic_ns();

        while (!atomic_load(&s->stopping)) {
                struct sample *x = calloc(1, sizeof(*x));
                if (!x) {
                        end(s, SAMPLER_FAILED, ENOMEM);
                        break;
                }
                x->started_ns = monotonic_ns();
                clock_gettime(CLOCK_REALTIME, &x->taken);
                int r = nvml_facts_gather_carry(s->o.lib, &dl, s->o.groups, s->gpm, &x->facts);
                if (x->facts.stopped || r < 0) {
                        /* Cut short on request, or half-read: never published. */
                        pthread_mutex_lock(&s->lock);
                        s->abandoned = s->abandoned || x->facts.abandoned;
                        x->refs = 1;
                        unref_locked(s, x);
                        pthread_mutex_unlock(&s->lock);
                        if (r < 0)
                                end(s, SAMPLER_FAILED, -r);
                        break;
                }
                pthread_mutex_lock(&s->lock);
                x->seq = ++s->seq;
                x->refs = 1;
                struct sample *old = s->latest;
                s->latest = x;
                if (old)
                        unref_locked(s, old);
                s->abandoned = s->abandoned || x->facts.abandoned;
                notify(s);
                pthread_mutex_unlock(&s->lock);

                if (release_retired(s)) {
                        pthread_mutex_lock(&s->lock);
                        s->abandoned = true;
                        pthread_mutex_unlock(&s->lock);
                        end(s, SAMPLER_SHUTDOWN_HUNG, 0);
                        break;
                }
                if (x->facts.abandoned) {
                        end(s, SAMPLER_CALL_HUNG, 0);
                        break;
                }

                next_ns += s->o.interval_ms * 1000000ULL;
                unsigned long long now = monotonic_ns();
                if (next_ns < now)
                        next_ns = now; /* a slow round: no burst of catch-up rounds */
                struct timespec at = monotonic_at(next_ns);
                pthread_mutex_lock(&s->lock);
                while (!atomic_load(&s->stopping) && pthread_cond_timedwait(&s->wake, &s->lock, &at) != ETIMEDOUT)
                        ;
                pthread_mutex_unlock(&s->lock);
        }
        end(s, SAMPLER_STOPPED, 0);
        return NULL;
}

int sampler_start(const struct sampler_options *o, struct sampler **ret) {
        struct sampler *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->o = *o;
        if ((o->groups & nvml_group_bit(NVML_GROUP_GPM)) && !(s->gpm = nvml_gpm_carry_new())) {
                free(s);
                return -ENOMEM;
        }
        s->status.call_ms = o->dl.call_ms ? o->dl.call_ms : NVML_DEADLINE_CALL_MS_DEFAULT;
        atomic_init(&s->stopping, false);
        pthread_condattr_t ca;
        int r = -ENOMEM;
        if (pthread_condattr_init(&ca) != 0)
                goto fail_free;
        if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 || pthread_cond_init(&s->wake, &ca) != 0) {
                pthread_condattr_destroy(&ca);
                goto fail_free;
        }
        if (pthread_cond_init(&s->published, &ca) != 0) {
                pthread_condattr_destroy(&ca);
                goto fail_wake;
        }
        pthread_condattr_destroy(&ca);
        pthread_mutex_init(&s->lock, NULL);
        if (pipe2(s->pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
                r = -errno;
                goto fail_conds;
        }
        r = pthread_create(&s->thread, NULL, run, s);
        if (r != 0) {
                r = -r;
                close(s->pipe[0]);
                close(s->pipe[1]);
                goto fail_conds;
        }
        *ret = s;
        return 0;

fail_conds:
        pthread_mutex_destroy(&s->lock);
        pthread_cond_destroy(&s->published);
fail_wake:
        pthread_cond_destroy(&s->wake);
fail_free:
        nvml_gpm_carry_free(s->gpm, NULL, NULL, true);
        free(s);
        return r;
}

static void drain(struct sampler *s) {
        char buf[64];
        while (read(s->pipe[0], buf, sizeof(buf)) > 0)
                ;
}

struct sample *sampler_next(struct sampler *s, unsigned long long after_seq, unsigned int timeout_ms) {
        struct timespec at = monotonic_at(monotonic_ns() + timeout_ms * 1000000ULL);
        struct sample *x = NULL;
        pthread_mutex_lock(&s->lock);
        drain(s);
        while (!(s->latest && s->latest->seq > after_seq) && s->status.end == SAMPLER_RUNNING && timeout_ms &&
               pthread_cond_timedwait(&s->published, &s->lock, &at) != ETIMEDOUT)
                ;
        if (s->latest && s->latest->seq > after_seq) {
                x = s->latest;
                x->refs++;
        }
        pthread_mutex_unlock(&s->lock);
        return x;
}

struct sample *sampler_latest(struct sampler *s) { return sampler_next(s, 0, 0); }

void sample_put(struct sampler *s, struct sample *x) {
        if (!x)
                return;
        pthread_mutex_lock(&s->lock);
        unref_locked(s, x);
        pthread_mutex_unlock(&s->lock);
}

int sampler_fd(const struct sampler *s) { return s->pipe[0]; }

bool sampler_ended(struct sampler *s, struct sampler_status *ret) {
        pthread_mutex_lock(&s->lock);
        struct sampler_status st = s->status;
        pthread_mutex_unlock(&s->lock);
        if (ret)
                *ret = st;
        return st.end != SAMPLER_RUNNING;
}

bool sampler_stop(struct sampler *s) {
        if (!s)
                return false;
        pthread_mutex_lock(&s->lock);
        atomic_store(&s->stopping, true);
        pthread_cond_broadcast(&s->wake);
        pthread_mutex_unlock(&s->lock);
        /* Bounded: a round in progress is cut short within DEADLINE_STOP_POLL_MS. */
        pthread_join(s->thread, NULL);
        /* GPM's samples go while the latest round still holds NVML initialised. */
        if (nvml_gpm_carry_free(s->gpm, s->o.lib, &s->o.dl, s->abandoned))
                s->abandoned = true;
        s->gpm = NULL;
        pthread_mutex_lock(&s->lock);
        if (s->latest)
                unref_locked(s, s->latest);
        s->latest = NULL;
        pthread_mutex_unlock(&s->lock);
        if (release_retired(s))
                s->abandoned = true;
        bool abandoned = s->abandoned;
        close(s->pipe[0]);
        close(s->pipe[1]);
        pthread_mutex_destroy(&s->lock);
        pthread_cond_destroy(&s->published);
        pthread_cond_destroy(&s->wake);
        free(s);
        return abandoned;
}

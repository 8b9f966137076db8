/* Running calls that may never return, under deadlines: see deadline.h for the contract.
 *
 * One mutex and one condition variable per group. Workers publish, under the mutex, what
 * they call and when it started; the supervisor sleeps until the earliest deadline and
 * abandons a worker still inside a call past it. The group's memory is reference counted
 * (the supervisor plus one per started worker) because an abandoned worker may come back
 * at any time, or never: the last one out frees it. */
#include "core/deadline.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct deadline_group;

struct deadline_worker {
        struct deadline_group *g;
        unsigned int index;
        void *block;
        void *dest;
        pthread_t thread;
        bool started;
        bool in_call;
        bool finished; /* published or abandoned: the supervisor no longer waits for it */
        bool abandoned;
        const char *what;
        unsigned long long call_start_ms;
        unsigned long long call_limit_ms;
        unsigned long long work_start_ms;
        struct deadline_outcome out;
};

struct deadline_group {
        pthread_mutex_t mu;
        pthread_cond_t cv;
        unsigned int refs;
        struct deadline_spec spec;
        unsigned long long start_ms;
        /* When the supervisor will next wake on its own; a call whose deadline is earlier
         * must wake it. ULLONG_MAX: it sleeps until signalled. */
        unsigned long long sup_wake_ms;
        bool stopping; /* stop_requested said yes: no call starts any more */
        unsigned int n;
        struct deadline_worker *workers;
};

static atomic_uint threads_alive;

unsigned int deadline_threads_alive(void) {
        return atomic_load(&threads_alive);
}

void deadline_thread_enter(void) {
        atomic_fetch_add(&threads_alive, 1);
}

void deadline_thread_leave(void) {
        atomic_fetch_sub(&threads_alive, 1);
}

static unsigned int clamp_ms(unsigned long long ms) {
        return ms > UINT_MAX ? UINT_MAX : (unsigned int)ms;
}

static void group_unref(struct deadline_group *g) {
        pthread_mutex_lock(&g->mu);
        unsigned int refs = --g->refs;
        pthread_mutex_unlock(&g->mu);
        if (refs > 0)
                return;
        pthread_cond_destroy(&g->cv);
        pthread_mutex_destroy(&g->mu);
        free(g->workers);
        free(g);
}

/* Called with the mutex held. */
static void abandon_locked(struct deadline_worker *w, const char *what, unsigned long long elapsed_ms, bool budget) {
        struct deadline_group *g = w->g;
        w->out.stopped = g->stopping && !budget;
        g->spec.publish(w->block, w->dest, w->index, what, clamp_ms(elapsed_ms), g->spec.userdata);
        w->abandoned = true;
        w->finished = true;
        w->out.state = DEADLINE_ABANDONED;
        w->out.what = what;
        w->out.elapsed_ms = clamp_ms(elapsed_ms);
        w->out.budget = budget;
        pthread_cond_signal(&g->cv);
}

/* Called with the mutex held: whether w may start a call at *now (read here), else it is
 * abandoned already or now (the run stopping, or its budget spent). */
static bool call_may_start_locked(struct deadline_worker *w, const char *what, unsigned long long *now) {
        struct deadline_group *g = w->g;
        if (w->abandoned)
                return false;
        if (g->stopping) {
                abandon_locked(w, what, 0, false);
                return false;
        }
        *now = deadline_now_ms();
        if (g->spec.budget_ms > 0 && *now - g->start_ms >= g->spec.budget_ms) {
                /* Between calls the worker runs our own code, which does not hang, so the
                 * budget is enforced here and, for a call in flight, by the supervisor. */
                abandon_locked(w, what, 0, true);
                return false;
        }
        return true;
}

/* Called with the mutex held: w is in a call from start_ms for limit ms; the supervisor is
 * woken when that (or the budget) ends before the time it sleeps to. */
static void call_enter_locked(struct deadline_worker *w, const char *what, unsigned long long start_ms,
                              unsigned long long limit) {
        struct deadline_group *g = w->g;
        w->in_call = true;
        w->what = what;
        w->call_start_ms = start_ms;
        w->call_limit_ms = limit;
        unsigned long long end = start_ms + limit;
        if (g->spec.budget_ms > 0 && g->start_ms + g->spec.budget_ms < end)
                end = g->start_ms + g->spec.budget_ms;
        if (end < g->sup_wake_ms)
                pthread_cond_signal(&g->cv);
}

bool deadline_begin(struct deadline_worker *w, const char *what, unsigned int limit_ms) {
        struct deadline_group *g = w->g;
        pthread_mutex_lock(&g->mu);
        unsigned long long now;
        bool ok = call_may_start_locked(w, what, &now);
        if (ok)
                call_enter_locked(w, what, now, limit_ms > 0 ? limit_ms : g->spec.call_ms);
        pthread_mutex_unlock(&g->mu);
        return ok;
}

bool deadline_begin_at(struct deadline_worker *w, const char *what, unsigned int limit_ms, unsigned long long start_ms,
                       unsigned long long end_ms) {
        struct deadline_group *g = w->g;
        bool ok = false;

        pthread_mutex_lock(&g->mu);
        unsigned long long now;
        if (!call_may_start_locked(w, what, &now))
                goto out;
        unsigned long long limit = limit_ms > 0 ? limit_ms : g->spec.call_ms;
        if (start_ms > now)
                start_ms = now;
        bool returned = end_ms != 0;
        if ((returned && end_ms - start_ms > limit) || (!returned && now - start_ms >= limit)) {
                /* Past its limit before the worker came to it: abandoned as a supervisor
                 * watching it would have abandoned it, at the limit. */
                abandon_locked(w, what, limit, false);
                goto out;
        }
        /* A call that returned in time is taken now (a fresh window: nothing to wait
         * for); one still running keeps its own start. */
        call_enter_locked(w, what, returned ? now : start_ms, limit);
        ok = true;
out:
        pthread_mutex_unlock(&g->mu);
        return ok;
}

bool deadline_end(struct deadline_worker *w) {
        struct deadline_group *g = w->g;
        pthread_mutex_lock(&g->mu);
        bool ok = !w->abandoned;
        w->in_call = false;
        pthread_mutex_unlock(&g->mu);
        return ok;
}

static void *worker_main(void *arg) {
        struct deadline_worker *w = arg;
        struct deadline_group *g = w->g;

        w->work_start_ms = deadline_now_ms();
        g->spec.work(w, w->block);

        pthread_mutex_lock(&g->mu);
        if (!w->abandoned) {
                g->spec.publish(w->block, w->dest, w->index, NULL, 0, g->spec.userdata);
                w->finished = true;
                w->out.state = DEADLINE_DONE;
                w->out.elapsed_ms = clamp_ms(deadline_now_ms() - w->work_start_ms);
                pthread_cond_signal(&g->cv);
        }
        pthread_mutex_unlock(&g->mu);

        /* The block is ours whatever happened: publish copied or moved what the caller
         * keeps, and an abandoned block is read by no one. */
        g->spec.free_block(w->block);
        group_unref(g);
        atomic_fetch_sub(&threads_alive, 1);
        return NULL;
}

/* Supervise until every worker has finished or been abandoned. Mutex held. */
static void supervise_locked(struct deadline_group *g) {
        for (;;) {
                unsigned long long now = deadline_now_ms();
                unsigned long long wake = ULLONG_MAX;
                unsigned int pending = 0;

                if (!g->stopping && g->spec.stop_requested && g->spec.stop_requested(g->spec.stop_ctx))
                        g->stopping = true;

                for (unsigned int i = 0; i < g->n; i++) {
                        struct deadline_worker *w = &g->workers[i];
                        if (w->finished)
                                continue;
                        pending++;
                        if (!w->in_call)
                                continue; /* it will check its budget at its next begin */
                        unsigned long long call_end = w->call_start_ms + w->call_limit_ms;
                        unsigned long long budget_end =
                                g->spec.budget_ms > 0 ? g->start_ms + g->spec.budget_ms : ULLONG_MAX;
                        unsigned long long end = call_end < budget_end ? call_end : budget_end;
                        if (g->stopping) {
                                abandon_locked(w, w->what, now - w->call_start_ms, false);
                                pending--;
                        } else if (now >= end) {
                                abandon_locked(w, w->what, now - w->call_start_ms, end == budget_end && end < call_end);
                                pending--;
                        } else if (end < wake) {
                                wake = end;
                        }
                }
                if (pending == 0)
                        return;
                /* Workers between calls reach deadline_begin soon and stop there. */
                if (g->spec.stop_requested && !g->stopping && wake - now > DEADLINE_STOP_POLL_MS)
                        wake = now + DEADLINE_STOP_POLL_MS;

                g->sup_wake_ms = wake;
                if (wake == ULLONG_MAX) {
                        pthread_cond_wait(&g->cv, &g->mu);
                } else {
                        struct timespec ts = {
                                .tv_sec = (time_t)(wake / 1000ull),
                                .tv_nsec = (long)(wake % 1000ull) * 1000000L,
                        };
                        /* ETIMEDOUT and spurious wake-ups both lead to a fresh look. */
                        (void)pthread_cond_timedwait(&g->cv, &g->mu, &ts);
                }
                g->sup_wake_ms = 0; /* awake: no worker needs to signal */
        }
}

int deadline_run(const struct deadline_spec *spec, unsigned int n, void **blocks, void **dests,
                 struct deadline_outcome *outcomes) {
        if (!spec || !spec->work || !spec->publish || !spec->free_block || (n > 0 && (!blocks || !dests || !outcomes)))
                return -EINVAL;
        if (n == 0)
                return 0;
        memset(outcomes, 0, n * sizeof(*outcomes));

        struct deadline_group *g = calloc(1, sizeof(*g));
        struct deadline_worker *workers = calloc(n, sizeof(*workers));
        pthread_condattr_t ca;
        bool ca_ok = false;
        int r = -ENOMEM;
        if (!g || !workers)
                goto fail;
        if (pthread_condattr_init(&ca) != 0)
                goto fail;
        ca_ok = true;
        if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 || pthread_cond_init(&g->cv, &ca) != 0)
                goto fail;
        pthread_condattr_destroy(&ca);
        ca_ok = false;
        if (pthread_mutex_init(&g->mu, NULL) != 0) {
                pthread_cond_destroy(&g->cv);
                goto fail;
        }

        g->spec = *spec;
        g->n = n;
        g->workers = workers;
        g->refs = 1;
        g->start_ms = deadline_now_ms();
        for (unsigned int i = 0; i < n; i++) {
                workers[i].g = g;
                workers[i].index = i;
                workers[i].block = blocks[i];
                workers[i].dest = dests[i];
        }

        /* Workers take no signals: SIGINT/SIGTERM belong to the main thread's loops. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        r = 0;
        pthread_mutex_lock(&g->mu);
        for (unsigned int i = 0; i < n; i++) {
                struct deadline_worker *w = &workers[i];
                g->refs++;
                atomic_fetch_add(&threads_alive, 1);
                int e = pthread_create(&w->thread, NULL, worker_main, w);
                if (e != 0) {
                        atomic_fetch_sub(&threads_alive, 1);
                        g->refs--;
                        w->finished = true;
                        w->out.state = DEADLINE_NOT_STARTED;
                        spec->free_block(w->block);
                        r = -e;
                        continue;
                }
                w->started = true;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);

        supervise_locked(g);
        for (unsigned int i = 0; i < n; i++)
                outcomes[i] = workers[i].out;
        pthread_mutex_unlock(&g->mu);

        for (unsigned int i = 0; i < n; i++) {
                if (!workers[i].started)
                        continue;
                /* A finished worker is at most freeing its block: join it so no thread of
                 * ours outlives the run. An abandoned one may never return. */
                if (outcomes[i].state == DEADLINE_DONE)
                        pthread_join(workers[i].thread, NULL);
                else
                        pthread_detach(workers[i].thread);
        }
        group_unref(g);
        return r;

fail:
        if (ca_ok)
                pthread_condattr_destroy(&ca);
        free(workers);
        free(g);
        for (unsigned int i = 0; i < n; i++)
                spec->free_block(blocks[i]);
        return r;
}

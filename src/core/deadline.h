/* Running calls that may never return, under deadlines.
 *
 * deadline_run() starts one thread per worker; each runs work(w, block) and brackets every
 * call that may hang with deadline_begin()/deadline_end(). The calling thread supervises:
 * when a call runs past its limit, or a worker past its budget, the worker is abandoned
 * and deadline_run() moves on; the stuck thread is left alone (detached) for ever.
 *
 * Memory discipline, so that an abandoned thread never writes memory the caller reads or
 * frees:
 *  - block is the worker's own heap block: the worker writes its results there, and frees
 *    it (free_block) when work() returns, whatever happened. The caller never touches it
 *    after deadline_run() starts, except inside publish().
 *  - publish(block, dest) copies (or moves) results from block into dest, the caller's
 *    memory. It runs under the group mutex exactly once per started worker: on the worker
 *    thread when work() returns in time (hung = NULL), or at abandonment (hung = what was
 *    running), on the supervisor or, for an exhausted budget, on the worker thread.
 *  - A worker is abandoned only while inside a call (between begin and end) or in
 *    deadline_begin, so publish never races the worker's own writes to block, provided
 *    the call itself writes its outputs to the worker's locals, not into block: store them
 *    into block only after deadline_end() returned true.
 *  - Once abandoned, deadline_begin/deadline_end return false; work() should return
 *    promptly without further calls. Writing block then is harmless (no one else reads it).
 *
 * Nothing here knows what the calls are (NVML, CUDA ...). */
#pragma once

#include <stdbool.h>
#include "core/clock.h"

struct deadline_worker;

enum deadline_outcome_state {
        DEADLINE_NOT_STARTED = 0, /* its thread could not be created; publish not called */
        DEADLINE_DONE,            /* work() returned in time */
        DEADLINE_ABANDONED,       /* a call ran past its deadline, or the budget ran out */
};

struct deadline_outcome {
        enum deadline_outcome_state state;
        const char *what;        /* ABANDONED: the call that was running (as given to begin) */
        unsigned int elapsed_ms; /* ABANDONED: how long that call had run; DONE: work() time */
        bool budget;             /* ABANDONED because the worker's budget ran out */
        bool stopped;            /* ABANDONED because spec.stop_requested said so */
};

/* How often the supervisor asks spec.stop_requested while workers run. */
#define DEADLINE_STOP_POLL_MS 100u

struct deadline_spec {
        unsigned int call_ms;   /* default limit of one call (deadline_begin with limit 0) */
        unsigned int budget_ms; /* limit of one worker's whole run, from deadline_run's start */
        void (*work)(struct deadline_worker *w, void *block);
        /* Runs under the group mutex: keep it short, no calls that may block. */
        void (*publish)(void *block, void *dest, unsigned int index, const char *hung, unsigned int elapsed_ms,
                        void *userdata);
        void (*free_block)(void *block);
        void *userdata;
        /* NULL, or asked on the supervising thread at least every DEADLINE_STOP_POLL_MS
         * (under the group mutex: keep it short). Once it returns true, a call in flight
         * is abandoned at once and every later deadline_begin fails, so deadline_run
         * returns promptly: how a loop honours Ctrl-C during a slow round. */
        bool (*stop_requested)(void *stop_ctx);
        void *stop_ctx;
};

/* Run n workers: worker i gets blocks[i] (ownership passes to it, even on failure) and
 * publishes into dests[i]. Returns when every worker has finished or been abandoned,
 * with outcomes[i] filled. Returns 0, -EINVAL, -ENOMEM, or -EAGAIN when some thread
 * could not be created (those are DEADLINE_NOT_STARTED, their blocks freed). */
int deadline_run(const struct deadline_spec *spec, unsigned int n, void **blocks, void **dests,
                 struct deadline_outcome *outcomes);

/* Before a call that may hang: publish what runs (a string that outlives the process,
 * e.g. a literal) and its start time; limit_ms 0 = spec.call_ms. Returns false when the
 * worker is abandoned or its budget is spent (then it is abandoned now, naming what):
 * do not make the call, return. */
bool deadline_begin(struct deadline_worker *w, const char *what, unsigned int limit_ms);
/* deadline_begin for a call another thread made on the worker's behalf (ahead of the
 * worker, which waits for its answer where it would have made the call itself): it started
 * at start_ms (deadline_now_ms's clock) and returned at end_ms, 0 while it has not. Its
 * limit (limit_ms, 0 = spec.call_ms) counts from start_ms, so it is judged as if the
 * worker had made it: a call past its limit (returned too late, or still running) abandons
 * the worker now, naming what, with the limit as the elapsed time a supervisor would have
 * recorded, and returns false; otherwise as deadline_begin (the budget included), the
 * supervisor watching the rest of a running call's limit. The worker then waits for the
 * answer, writing nothing of block, and calls deadline_end. */
bool deadline_begin_at(struct deadline_worker *w, const char *what, unsigned int limit_ms, unsigned long long start_ms,
                       unsigned long long end_ms);
/* After the call returned. Returns false when the worker was abandoned meanwhile: the
 * call's outputs must be dropped (not stored into block); return. */
bool deadline_end(struct deadline_worker *w);

/* Worker threads of ours still running, abandoned ones included (for tests and for
 * deciding whether the process must leave with _exit). */
unsigned int deadline_threads_alive(void);
/* A thread of the caller's own that makes calls on a worker's behalf, and so may be stuck
 * in one as a worker may: counted by deadline_threads_alive from deadline_thread_enter
 * (call it before creating the thread; once more deadline_thread_leave when that fails)
 * until the thread calls deadline_thread_leave, last. */
void deadline_thread_enter(void);
void deadline_thread_leave(void);


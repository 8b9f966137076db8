/* core/deadline: workers that finish, hang, come back late, or overrun their budget.
 * Hung workers wait on a gate the test opens at the end, so that under ASan the late
 * return path runs too (an abandoned worker must touch only its own block). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/deadline.h"
#include "timescale.h"

static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static bool gate_open;

static void gate_wait(void) {
        pthread_mutex_lock(&gate_mu);
        while (!gate_open)
                pthread_cond_wait(&gate_cv, &gate_mu);
        pthread_mutex_unlock(&gate_mu);
}

static void gate_set(bool open) {
        pthread_mutex_lock(&gate_mu);
        gate_open = open;
        pthread_cond_broadcast(&gate_cv);
        pthread_mutex_unlock(&gate_mu);
}

/* Let every worker still blocked come back, and wait until all our threads are gone. */
static void drain(void) {
        gate_set(true);
        for (int i = 0; i < 5000 && deadline_threads_alive() > 0; i++) {
                struct timespec ts = {0, 1000000};
                nanosleep(&ts, NULL);
        }
        assert_int_equal(deadline_threads_alive(), 0);
        gate_set(false);
}

static void sleep_ms(unsigned int ms) {
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
}

/* What a worker does: `calls` calls of `call_ms` each; the one numbered hang_at waits at
 * the gate instead. */
struct block {
        unsigned int calls;
        unsigned int call_ms;
        int hang_at;
        unsigned int done; /* calls completed */
        int late;          /* set after an abandoned call came back */
        char *heap;        /* something to free, so leaks and double frees show */
};

struct dest {
        unsigned int done;
        const char *hung;
        unsigned int elapsed_ms;
        unsigned int publishes;
};

static const char *const call_names[] = {"call0", "call1", "call2", "call3", "call4", "call5", "call6", "call7",
                                         "call8", "call9"};

static void work(struct deadline_worker *w, void *p) {
        struct block *b = p;
        for (unsigned int i = 0; i < b->calls; i++) {
                if (!deadline_begin(w, call_names[i % 10], 0))
                        return;
                if ((int)i == b->hang_at)
                        gate_wait();
                else if (b->call_ms)
                        sleep_ms(b->call_ms);
                if (!deadline_end(w)) {
                        b->late = 1; /* our own block: allowed */
                        return;
                }
                b->done++;
        }
}

static void publish(void *p, void *d, unsigned int index, const char *hung, unsigned int elapsed_ms, void *userdata) {
        struct block *b = p;
        struct dest *dst = d;
        (void)index;
        (void)userdata;
        dst->done = b->done;
        dst->hung = hung;
        dst->elapsed_ms = elapsed_ms;
        dst->publishes++;
}

static void free_block(void *p) {
        struct block *b = p;
        free(b->heap);
        free(b);
}

static struct block *new_block(unsigned int calls, unsigned int call_ms, int hang_at) {
        struct block *b = calloc(1, sizeof(*b));
        assert_non_null(b);
        b->calls = calls;
        b->call_ms = call_ms;
        b->hang_at = hang_at;
        b->heap = malloc(64);
        assert_non_null(b->heap);
        return b;
}

static const struct deadline_spec spec_default = {
        .call_ms = 200,
        .budget_ms = 5000,
        .work = work,
        .publish = publish,
        .free_block = free_block,
};

static void test_all_done(void **state) {
        (void)state;
        enum { N = 6 };
        void *blocks[N], *dests[N];
        struct dest d[N];
        struct deadline_outcome o[N];
        memset(d, 0, sizeof(d));
        for (int i = 0; i < N; i++) {
                blocks[i] = new_block(5, 1, -1);
                dests[i] = &d[i];
        }
        assert_int_equal(deadline_run(&spec_default, N, blocks, dests, o), 0);
        for (int i = 0; i < N; i++) {
                assert_int_equal(o[i].state, DEADLINE_DONE);
                assert_int_equal(d[i].done, 5);
                assert_null(d[i].hung);
                assert_int_equal(d[i].publishes, 1);
        }
        /* Finished workers are joined: none outlives the run. */
        assert_int_equal(deadline_threads_alive(), 0);
}

static void test_hang_abandoned_then_late(void **state) {
        (void)state;
        enum { N = 3 };
        void *blocks[N], *dests[N];
        /* Heap dests, freed before the hung worker comes back: ASan catches any write. */
        struct dest *d = calloc(N, sizeof(*d));
        struct deadline_outcome o[N];
        assert_non_null(d);
        for (int i = 0; i < N; i++) {
                blocks[i] = new_block(4, 1, i == 1 ? 2 : -1);
                dests[i] = &d[i];
        }
        unsigned long long t0 = deadline_now_ms();
        assert_int_equal(deadline_run(&spec_default, N, blocks, dests, o), 0);
        unsigned long long took = deadline_now_ms() - t0;
        print_message("hung worker abandoned after %llu ms (call deadline 200 ms)\n", took);
        assert_true(took >= 200);
        assert_true(took < 200 + SCALED_MS(200));

        assert_int_equal(o[0].state, DEADLINE_DONE);
        assert_int_equal(o[2].state, DEADLINE_DONE);
        assert_int_equal(o[1].state, DEADLINE_ABANDONED);
        assert_string_equal(o[1].what, "call2");
        assert_false(o[1].budget);
        assert_true(o[1].elapsed_ms >= 200);
        assert_int_equal(d[1].done, 2);
        assert_string_equal(d[1].hung, "call2");
        assert_int_equal(d[1].publishes, 1);
        assert_int_equal(deadline_threads_alive(), 1);

        free(d);
        drain();
}

static void test_budget(void **state) {
        (void)state;
        void *blocks[1], *dests[1];
        struct dest d = {0};
        struct deadline_outcome o;
        struct deadline_spec spec = spec_default;
        spec.budget_ms = 100;
        spec.call_ms = 1000;
        blocks[0] = new_block(100, 30, -1);
        dests[0] = &d;
        unsigned long long t0 = deadline_now_ms();
        assert_int_equal(deadline_run(&spec, 1, blocks, dests, &o), 0);
        unsigned long long took = deadline_now_ms() - t0;
        assert_int_equal(o.state, DEADLINE_ABANDONED);
        assert_true(o.budget);
        assert_true(took < 100 + SCALED_MS(150));
        assert_true(d.done >= 1 && d.done <= 4); /* 30 ms calls in a 100 ms budget */
        assert_int_equal(d.publishes, 1);
        drain();
}

static void test_budget_in_call(void **state) {
        (void)state;
        /* A call hanging past the budget, well inside its own limit. */
        void *blocks[1], *dests[1];
        struct dest d = {0};
        struct deadline_outcome o;
        struct deadline_spec spec = spec_default;
        spec.budget_ms = 150;
        spec.call_ms = 10000;
        blocks[0] = new_block(3, 1, 1);
        dests[0] = &d;
        unsigned long long t0 = deadline_now_ms();
        assert_int_equal(deadline_run(&spec, 1, blocks, dests, &o), 0);
        unsigned long long took = deadline_now_ms() - t0;
        assert_int_equal(o.state, DEADLINE_ABANDONED);
        assert_true(o.budget);
        assert_string_equal(o.what, "call1");
        assert_true(took < 100 + SCALED_MS(300));
        drain();
}

static void test_many_hang(void **state) {
        (void)state;
        /* Every worker hangs: the run still ends on time. */
        enum { N = 16 };
        void *blocks[N], *dests[N];
        struct dest d[N];
        struct deadline_outcome o[N];
        struct deadline_spec spec = spec_default;
        spec.call_ms = 100;
        memset(d, 0, sizeof(d));
        for (int i = 0; i < N; i++) {
                blocks[i] = new_block(3, 0, 0);
                dests[i] = &d[i];
        }
        unsigned long long t0 = deadline_now_ms();
        assert_int_equal(deadline_run(&spec, N, blocks, dests, o), 0);
        assert_true(deadline_now_ms() - t0 < 300);
        for (int i = 0; i < N; i++)
                assert_int_equal(o[i].state, DEADLINE_ABANDONED);
        drain();
}

/* Stop on request: the hung call is given up at once and the busy worker at its next
 * begin, both reported as stopped (not as timeouts), each published once. */
static unsigned long long stop_at_ms;
static bool stop_after(void *ctx) {
        (*(unsigned int *)ctx)++;
        return deadline_now_ms() >= stop_at_ms;
}

static void test_stop_requested(void **state) {
        (void)state;
        enum { N = 2 };
        void *blocks[N], *dests[N];
        struct dest d[N];
        struct deadline_outcome o[N];
        memset(d, 0, sizeof(d));
        unsigned int asked = 0;
        struct deadline_spec spec = spec_default;
        spec.call_ms = 60000;
        spec.budget_ms = 0;
        spec.stop_requested = stop_after;
        spec.stop_ctx = &asked;
        blocks[0] = new_block(4, 1, 1);      /* hangs in call1 */
        blocks[1] = new_block(100000, 1, -1); /* busy for ~100 s */
        dests[0] = &d[0];
        dests[1] = &d[1];
        unsigned long long t0 = deadline_now_ms();
        stop_at_ms = t0 + 150;
        assert_int_equal(deadline_run(&spec, N, blocks, dests, o), 0);
        unsigned long long took = deadline_now_ms() - t0;
        print_message("stopped after %llu ms (asked %u times)\n", took, asked);
        assert_true(took >= 150);
        assert_true(took < 150 + DEADLINE_STOP_POLL_MS + 5000); /* bounded, not 60 s or 100 s */
        assert_true(asked >= 2);
        for (int i = 0; i < N; i++) {
                assert_int_equal(o[i].state, DEADLINE_ABANDONED);
                assert_true(o[i].stopped);
                assert_false(o[i].budget);
                assert_int_equal(d[i].publishes, 1);
        }
        assert_string_equal(o[0].what, "call1");
        assert_true(d[1].done > 0 && d[1].done < 100000);
        drain();
}

/* deadline_begin_at: a call another thread made for the worker, judged from its own start.
 * The block says when it started (start_back ms ago) and how long it ran (ran_ms; -1:
 * still running, and then the worker waits at the gate for it). */
struct at_block {
        struct block b; /* first: publish and free_block take it as a struct block */
        unsigned int start_back_ms;
        int ran_ms;
        bool begun;
        unsigned long long begun_at;
};

static void at_work(struct deadline_worker *w, void *p) {
        struct at_block *a = p;
        unsigned long long now = deadline_now_ms();
        unsigned long long start = now - a->start_back_ms;
        unsigned long long end = a->ran_ms >= 0 ? start + (unsigned long long)a->ran_ms : 0;
        a->begun_at = now;
        if (!deadline_begin_at(w, "ahead", 0, start, end))
                return;
        a->begun = true;
        if (a->ran_ms < 0)
                gate_wait();
        if (deadline_end(w))
                a->b.done++;
        else
                a->b.late = 1;
}

static struct at_block *new_at_block(unsigned int start_back_ms, int ran_ms) {
        struct at_block *a = calloc(1, sizeof(*a));
        assert_non_null(a);
        a->b.heap = malloc(64);
        assert_non_null(a->b.heap);
        a->start_back_ms = start_back_ms;
        a->ran_ms = ran_ms;
        return a;
}

static void test_begin_at(void **state) {
        (void)state;
        enum { N = 3 };
        void *blocks[N], *dests[N];
        struct dest d[N];
        struct deadline_outcome o[N];
        memset(d, 0, sizeof(d));
        struct deadline_spec spec = spec_default;
        spec.work = at_work;
        spec.call_ms = 200;
        blocks[0] = new_at_block(1000, 50);  /* returned in time long ago: taken */
        blocks[1] = new_at_block(500, 300);  /* returned, but past its limit: abandoned */
        blocks[2] = new_at_block(300, -1);   /* still running, past its limit: abandoned */
        for (int i = 0; i < N; i++)
                dests[i] = &d[i];
        assert_int_equal(deadline_run(&spec, N, blocks, dests, o), 0);
        assert_int_equal(o[0].state, DEADLINE_DONE);
        assert_int_equal(d[0].done, 1);
        for (int i = 1; i < N; i++) {
                assert_int_equal(o[i].state, DEADLINE_ABANDONED);
                assert_string_equal(o[i].what, "ahead");
                assert_false(o[i].budget);
                /* As a supervisor would have recorded it, at the limit. */
                assert_int_equal(o[i].elapsed_ms, 200);
                assert_string_equal(d[i].hung, "ahead");
                assert_int_equal(d[i].publishes, 1);
                assert_int_equal(d[i].done, 0);
        }
        /* None is left waiting: the overdue calls were never waited for, so every worker
         * leaves (drain's gate is for nothing here). */
        drain();
}

static void test_begin_at_running(void **state) {
        (void)state;
        /* Started 1000 ms ago with a 1100 ms limit and still running: abandoned about 100 ms
         * after the worker came to it, not 1100 ms. */
        void *blocks[1], *dests[1];
        struct dest d = {0};
        struct deadline_outcome o;
        struct deadline_spec spec = spec_default;
        spec.work = at_work;
        spec.call_ms = 1100;
        struct at_block *a = new_at_block(1000, -1);
        blocks[0] = a;
        dests[0] = &d;
        assert_int_equal(deadline_run(&spec, 1, blocks, dests, &o), 0);
        unsigned long long took = deadline_now_ms() - a->begun_at; /* a is alive: its worker waits */
        print_message("abandoned %llu ms after the worker came to the call (limit 1100 ms from its start)\n", took);
        assert_int_equal(o.state, DEADLINE_ABANDONED);
        assert_string_equal(o.what, "ahead");
        assert_true(o.elapsed_ms >= 1100);
        assert_true(took >= 90);
        assert_true(took < 1000);
        assert_int_equal(deadline_threads_alive(), 1);
        drain();
}

static void test_bad_args(void **state) {
        (void)state;
        struct deadline_spec spec = spec_default;
        spec.work = NULL;
        void *blocks[1] = {NULL};
        void *dests[1] = {NULL};
        struct deadline_outcome o;
        assert_int_equal(deadline_run(&spec, 1, blocks, dests, &o), -EINVAL);
        assert_int_equal(deadline_run(&spec_default, 0, NULL, NULL, NULL), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_all_done),
                cmocka_unit_test(test_hang_abandoned_then_late),
                cmocka_unit_test(test_budget),
                cmocka_unit_test(test_budget_in_call),
                cmocka_unit_test(test_many_hang),
                cmocka_unit_test(test_stop_requested),
                cmocka_unit_test(test_begin_at),
                cmocka_unit_test(test_begin_at_running),
                cmocka_unit_test(test_bad_args),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

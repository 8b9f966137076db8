/* run_command under a deadline and run_command_cancellable stopped through its fd
 * (src/core/run_command.h): the command and what it started go with their process group. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/run_command.h"

/* A shell that prints its pid, then waits on a child of its own: both in its group. */
static char *const waits_argv[] = {"/bin/sh", "-c", "echo $$; sleep 30 & wait", NULL};

static void *write_later(void *arg) {
        int fd = *(int *)arg;
        struct timespec t = {0, 300 * 1000000L};
        nanosleep(&t, NULL);
        char byte = 1;
        if (write(fd, &byte, 1) != 1)
                abort();
        return NULL;
}

/* The pid the command printed; its group must be gone. Its orphaned sleep is reaped by
 * init, which here (a container's process manager) takes about a second: until then the
 * zombie still counts as a member, so wait up to 5 s. */
static void assert_group_gone(const struct command_result *r) {
        assert_non_null(r->out);
        pid_t pid = (pid_t)atoi(r->out);
        assert_true(pid > 1);
        for (int i = 0; i < 500 && kill(-pid, 0) == 0; i++) {
                struct timespec t = {0, 10 * 1000000L};
                nanosleep(&t, NULL);
        }
        assert_int_equal(kill(-pid, 0), -1);
        assert_int_equal(errno, ESRCH);
}

static void test_cancelled(void **state) {
        (void)state;
        int p[2];
        assert_int_equal(pipe(p), 0);
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, write_later, &p[1]), 0);
        struct command_result r;
        assert_int_equal(run_command_cancellable(waits_argv, 20000, 4096, p[0], &r), 0);
        pthread_join(t, NULL);
        assert_true(r.cancelled);
        assert_false(r.timed_out);
        assert_int_equal(r.signal, SIGKILL);
        assert_true(r.elapsed_ms < 5000);
        assert_group_gone(&r);
        command_result_done(&r);
        /* Already readable: it is stopped at once, however long its deadline. */
        assert_int_equal(run_command_cancellable(waits_argv, 20000, 4096, p[0], &r), 0);
        assert_true(r.cancelled);
        assert_true(r.elapsed_ms < 5000);
        command_result_done(&r);
        close(p[0]);
        close(p[1]);
}

static void test_deadline(void **state) {
        (void)state;
        struct command_result r;
        assert_int_equal(run_command_cancellable(waits_argv, 300, 4096, -1, &r), 0);
        assert_true(r.timed_out);
        assert_false(r.cancelled);
        assert_group_gone(&r);
        command_result_done(&r);
        char *const ok[] = {"/bin/sh", "-c", "echo out; echo err >&2; exit 4", NULL};
        int p[2];
        assert_int_equal(pipe(p), 0);
        assert_int_equal(run_command_cancellable(ok, 20000, 4096, p[0], &r), 0);
        assert_false(r.timed_out || r.cancelled);
        assert_int_equal(r.exit_status, 4);
        assert_string_equal(r.out, "out\n");
        assert_string_equal(r.err_tail, "err\n");
        command_result_done(&r);
        close(p[0]);
        close(p[1]);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_cancelled),
                cmocka_unit_test(test_deadline),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

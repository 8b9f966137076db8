/* The CUDA driver probe held at its gate (src/bindings/cuda_probe.c): `check` forks it before
 * any thread exists and decides once the facts are in. Released, it probes the fake libcuda
 * (argv[1]) with its deadline counted from the release, not from the fork; sent away, it
 * leaves with status 0 without loading the library. The loads are counted by the fake
 * ($FAKE_CUDA_LOAD_LOG).
 *
 *     test_cuda_probe FAKE_LIBCUDA */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/deadline.h"
#include "sys/cuda_driver.h"
#include "timescale.h"

static const char *fake_lib;
static char load_log[] = "/tmp/gpuvet-test-cuda-probe-XXXXXX";

static void sleep_ms(unsigned ms) {
        struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* Lines in the load log: one per process that loaded the fake. */
static int loads(void) {
        FILE *f = fopen(load_log, "r");
        if (!f)
                return 0;
        int n = 0, c;
        while ((c = fgetc(f)) != EOF)
                n += c == '\n';
        fclose(f);
        return n;
}

static int setup(void **state) {
        (void)state;
        FILE *f = fopen(load_log, "w"); /* empty */
        if (f)
                fclose(f);
        setenv("FAKE_CUDA_LOAD_LOG", load_log, 1);
        setenv("FAKE_CUDA_DEVICES", "3", 1);
        unsetenv("FAKE_CUDA_INIT_MS");
        unsetenv("FAKE_CUDA_HANG");
        return 0;
}

static void *idle_thread(void *arg) {
        (void)arg;
        sleep_ms(50);
        return NULL;
}

/* Held longer than its deadline, then released: it probes, and the deadline counts from the
 * release (from the fork it would have run out while held). Threads started while it is
 * held change nothing for it: it was forked before them. */
static void test_released(void **state) {
        (void)state;
        const unsigned timeout_ms = (unsigned)SCALED_MS(1500);
        struct cuda_driver_probe *p = cuda_driver_probe_hold(fake_lib, timeout_ms);
        assert_non_null(p);
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, idle_thread, NULL), 0);
        sleep_ms(timeout_ms + 300);
        assert_int_equal(loads(), 0); /* held: nothing loaded yet */
        pthread_join(t, NULL);

        unsigned long long t0 = deadline_now_ms();
        cuda_driver_probe_release(p);
        struct cuda_driver_facts out;
        cuda_driver_probe_finish(p, &out);
        assert_int_equal(out.state, CUDA_DRIVER_OK);
        assert_int_equal(out.stage, CUDA_STAGE_DONE);
        assert_int_equal(out.device_count, 3);
        assert_int_equal(out.timeout_ms, timeout_ms);
        assert_true(out.elapsed_ms <= deadline_now_ms() - t0); /* from the release */
        assert_string_equal(out.lib_name, fake_lib);
        assert_int_equal(loads(), 1);
}

/* Released with a cuInit slower than the deadline: a timeout naming cuInit, the deadline
 * counted from the release. */
static void test_released_then_hangs(void **state) {
        (void)state;
        setenv("FAKE_CUDA_HANG", "cuInit", 1);
        struct cuda_driver_probe *p = cuda_driver_probe_hold(fake_lib, 300);
        assert_non_null(p);
        sleep_ms(100);
        unsigned long long t0 = deadline_now_ms();
        cuda_driver_probe_release(p);
        struct cuda_driver_facts out;
        cuda_driver_probe_finish(p, &out);
        unsigned long long waited = deadline_now_ms() - t0;
        assert_int_equal(out.state, CUDA_DRIVER_TIMEOUT);
        assert_int_equal(out.stage, CUDA_STAGE_INIT);
        assert_true(waited >= 300); /* never early */
        assert_true(waited < SCALED_MS(300 + 1500));
}

/* Sent away unopened: the child leaves by itself, status 0, without loading libcuda; the
 * facts say why. */
static void test_cancelled(void **state) {
        (void)state;
        struct cuda_driver_probe *p = cuda_driver_probe_hold(fake_lib, 1000);
        assert_non_null(p);
        sleep_ms(50);
        struct cuda_driver_facts out;
        memset(&out, 0x5a, sizeof(out));
        assert_true(cuda_driver_probe_cancel(p, &out, "no GPU is bound to the nvidia driver"));
        assert_int_equal(out.state, CUDA_DRIVER_NOT_PROBED);
        assert_int_equal(out.device_count, -1);
        assert_string_equal(out.note, "no GPU is bound to the nvidia driver");
        assert_int_equal(loads(), 0);
        /* Reaped: no child of ours is left. */
        assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
        assert_int_equal(errno, ECHILD);
}

/* Sent away at once, before the child could even reach its gate. */
static void test_cancelled_at_once(void **state) {
        (void)state;
        struct cuda_driver_probe *p = cuda_driver_probe_hold(fake_lib, 1000);
        assert_non_null(p);
        assert_true(cuda_driver_probe_cancel(p, NULL, ""));
        assert_int_equal(loads(), 0);
        assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
}

/* The parent goes away without a word (killed, or the watchdog's _exit): its end of the
 * gate closes with it, and the held child leaves without loading libcuda. A middle process
 * plays the parent; the test waits for the grandchild through the report pipe it shares. */
static void test_parent_gone(void **state) {
        (void)state;
        int ready[2];
        assert_int_equal(pipe(ready), 0);
        pid_t mid = fork();
        assert_true(mid >= 0);
        if (mid == 0) {
                close(ready[0]);
                struct cuda_driver_probe *p = cuda_driver_probe_hold(fake_lib, 1000);
                (void)p;
                /* ready[1] is inherited by the held grandchild too: it closes when both
                 * are gone. */
                _exit(p ? 0 : 1);
        }
        close(ready[1]);
        int status = 0;
        assert_int_equal(waitpid(mid, &status, 0), mid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        char c;
        unsigned long long t0 = deadline_now_ms();
        assert_int_equal(read(ready[0], &c, 1), 0); /* the grandchild left */
        assert_true(deadline_now_ms() - t0 < SCALED_MS(2000));
        close(ready[0]);
        assert_int_equal(loads(), 0);
}

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: %s FAKE_LIBCUDA\n", argv[0]);
                return 2;
        }
        fake_lib = argv[1];
        int fd = mkstemp(load_log);
        if (fd < 0) {
                perror("mkstemp");
                return 1;
        }
        close(fd);
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(test_released, setup),
                cmocka_unit_test_setup(test_released_then_hangs, setup),
                cmocka_unit_test_setup(test_cancelled, setup),
                cmocka_unit_test_setup(test_cancelled_at_once, setup),
                cmocka_unit_test_setup(test_parent_gone, setup),
        };
        int r = cmocka_run_group_tests(tests, NULL, NULL);
        unlink(load_log);
        return r;
}

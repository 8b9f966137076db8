/* burn.run's verdict on hand-built burn facts (src/checks/burn.c): a worker that died says
 * how once, whatever the cause the runner recorded (a signal, an exit without a report, an
 * untrustworthy report), and a worker that never started says why. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "burn/burn.h"
#include "checks/check.h"

static const struct result *run_on(struct report *rep, enum burn_end end, const char *error) {
        static struct burn_device dev;
        static struct burn_facts burn;
        static struct facts f;
        memset(&dev, 0, sizeof(dev));
        memset(&burn, 0, sizeof(burn));
        memset(&f, 0, sizeof(f));
        snprintf(dev.name, sizeof(dev.name), "cpu");
        snprintf(dev.backend, sizeof(dev.backend), "opencl");
        dev.end = end;
        dev.ended_s = 4;
        snprintf(dev.error, sizeof(dev.error), "%s", error);
        burn.ran = burn.attempted = true;
        burn.devs = &dev;
        burn.n_devs = 1;
        f.burn = &burn;
        const struct check_info *c = check_find("burn.run");
        assert_non_null(c);
        report_init(rep);
        c->run(c, &f, rep);
        assert_int_equal(rep->n_results, 1);
        return &rep->results[0];
}

static void says_once(enum burn_end end, const char *error, const char *expected) {
        struct report rep;
        const struct result *r = run_on(&rep, end, error);
        assert_int_equal(r->status, STATUS_ERROR);
        if (strcmp(r->summary, expected) != 0)
                fail_msg("summary \"%s\", expected \"%s\"", r->summary, expected);
        report_done(&rep);
}

static void test_killed_worker(void **state) {
        (void)state;
        says_once(BURN_END_CRASHED, "the worker died: Killed", "the worker died: Killed");
}

static void test_exited_worker(void **state) {
        (void)state;
        says_once(BURN_END_CRASHED, "the worker exited (status 3) without a report",
                  "the worker exited (status 3) without a report");
        says_once(BURN_END_CRASHED, "untrustworthy report from the worker: bad line",
                  "untrustworthy report from the worker: bad line");
        says_once(BURN_END_CRASHED, "", "the worker died without saying why");
}

static void test_never_started(void **state) {
        (void)state;
        says_once(BURN_END_NOT_RUN, "fork: Resource temporarily unavailable",
                  "the worker never started: fork: Resource temporarily unavailable");
        says_once(BURN_END_NOT_RUN, "", "the worker never started: no reason given");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_killed_worker),
                cmocka_unit_test(test_exited_worker),
                cmocka_unit_test(test_never_started),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

/* burn.run's verdict on hand-built burn facts (src/checks/burn.c): a worker that died says
 * how once, whatever the cause the runner recorded (a signal, an exit without a report, an
 * untrustworthy report), and a worker that never started says why. A burn that found no GPU
 * to load is an error said once by burn.run (ux-review: it passed), a replay only skips. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "burn/burn.h"
#include "burn/wire.h"
#include "checks/check.h"
#include "report/burn_json.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>

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

/* Every burn check on facts of a burn that loaded nothing; the results of check id. */
static void judge_unrun(struct report *rep, struct burn_facts *burn) {
        static struct facts f;
        memset(&f, 0, sizeof(f));
        f.burn = burn;
        report_init(rep);
        for (size_t i = 0; i < check_registry_count; i++)
                if (strcmp(check_registry[i]->category, "burn") == 0)
                        check_registry[i]->run(check_registry[i], &f, rep);
        report_tally(rep);
}

static const struct result *result_of(const struct report *rep, const char *id) {
        for (size_t i = 0; i < rep->n_results; i++)
                if (strcmp(rep->results[i].check->id, id) == 0)
                        return &rep->results[i];
        fail_msg("no result of %s", id);
        return NULL;
}

static void test_nothing_to_stress(void **state) {
        (void)state;
        static struct burn_facts burn;
        memset(&burn, 0, sizeof(burn));
        burn.attempted = true;
        snprintf(burn.not_run, sizeof(burn.not_run), "no GPU to stress: 1 CPU device of opencl not loaded");
        struct report rep;
        judge_unrun(&rep, &burn);
        unsigned errors = 0;
        for (size_t i = 0; i < rep.n_results; i++)
                errors += rep.results[i].status == STATUS_ERROR;
        const struct result *run = result_of(&rep, "burn.run");
        assert_int_equal(run->status, STATUS_ERROR);
        assert_string_equal(run->summary, "no GPU to stress: 1 CPU device of opencl not loaded");
        assert_non_null(run->remedy);
        assert_non_null(strstr(run->remedy, "--allow-cpu"));
        assert_int_equal(errors, 1); /* one cause, one line: the others skip */
        assert_int_equal(result_of(&rep, "burn.compute")->status, STATUS_SKIP);
        assert_int_equal(report_verdict(&rep), STATUS_FAIL);
        report_done(&rep);

        /* A census that failed outright is named after the same words. */
        snprintf(burn.not_run, sizeof(burn.not_run), "device census: no OpenCL platform");
        judge_unrun(&rep, &burn);
        assert_string_equal(result_of(&rep, "burn.run")->summary, "no GPU to stress: device census: no OpenCL platform");
        report_done(&rep);

        /* A replayed capture never ran the burn: skips, the verdict stays the capture's. */
        memset(&burn, 0, sizeof(burn));
        snprintf(burn.not_run, sizeof(burn.not_run), "not run: --root names a capture");
        judge_unrun(&rep, &burn);
        assert_int_equal(result_of(&rep, "burn.run")->status, STATUS_SKIP);
        assert_int_equal(report_verdict(&rep), STATUS_PASS);
        report_done(&rep);
}

/* A faulty GPU's NaN crosses the wire and reaches the report as null, and the fault stays
 * in the list (json_pack refuses NaN: the fault had vanished while faults_total counted it). */
static void test_nan_fault(void **state) {
        (void)state;
        struct burn_fault f = {.mode = BURN_MODE_GEMM, .where_a = 3, .where_b = 7, .expected = 2.5, .got = NAN};
        snprintf(f.what, sizeof(f.what), "host reference");
        char *line = burn_wire_verify(64, 1, 0, 0, 0x1234, &f, 1);
        assert_non_null(line);
        assert_non_null(strstr(line, "\"got\":null"));
        static struct burn_device dev;
        memset(&dev, 0, sizeof(dev));
        char why[128] = "";
        line[strcspn(line, "\n")] = '\0';
        if (burn_wire_apply(&dev, line, 1.0, why, sizeof(why)) != 0)
                fail_msg("the verify line was refused: %s", why);
        free(line);
        assert_int_equal(dev.n_faults, 1);
        assert_true(isnan(dev.faults[0].got));
        assert_true(dev.faults[0].expected == 2.5);

        struct burn_facts burn = {.ran = true, .attempted = true, .devs = &dev, .n_devs = 1};
        json_t *doc = burn_json(&burn);
        assert_non_null(doc);
        json_t *faults = json_object_get(json_array_get(json_object_get(doc, "devices"), 0), "faults");
        assert_int_equal(json_array_size(faults), 1);
        json_t *x = json_array_get(faults, 0);
        assert_true(json_is_null(json_object_get(x, "got")));
        assert_true(json_real_value(json_object_get(x, "expected")) == 2.5);
        json_decref(doc);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_nan_fault),
                cmocka_unit_test(test_killed_worker),
                cmocka_unit_test(test_exited_worker),
                cmocka_unit_test(test_never_started),
                cmocka_unit_test(test_nothing_to_stress),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

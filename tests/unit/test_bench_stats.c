/* Statistics, judging, sibling comparison, the baselines loader and the runner's frame
 * and child handling (src/bench/{stats,measurement,baselines,runner}.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/baselines.h"
#include "bench/runner.h"
#include "results/stats.h"

static void test_stats_known_sets(void **state) {
        (void)state;
        struct bench_stats s;
        const double odd[] = {3, 1, 2};
        assert_int_equal(bench_stats_compute(odd, 3, &s), 0);
        assert_int_equal(s.n, 3);
        assert_true(s.min == 1 && s.max == 3 && s.median == 2 && s.mean == 2);
        assert_true(fabs(s.cv - 0.5) < 1e-12); /* sample sd 1, mean 2 */
        assert_true(odd[0] == 3);                /* input not sorted in place */

        const double even[] = {4, 1, 3, 2};
        assert_int_equal(bench_stats_compute(even, 4, &s), 0);
        assert_true(s.median == 2.5 && s.mean == 2.5);
        assert_true(fabs(s.cv - sqrt(5.0 / 3.0) / 2.5) < 1e-12);

        const double one[] = {7};
        assert_int_equal(bench_stats_compute(one, 1, &s), 0);
        assert_true(s.median == 7 && s.cv == 0);

        assert_int_equal(bench_stats_compute(one, 0, &s), -EINVAL);
        const double bad[] = {1, NAN, 3};
        assert_int_equal(bench_stats_compute(bad, 3, &s), -EINVAL);
        const double inf[] = {1, INFINITY};
        assert_int_equal(bench_stats_compute(inf, 2, &s), -EINVAL);
}

static struct measurement *with_samples(struct bench_report *r, const char *subject, double median, bool higher) {
        struct measurement *m = bench_measurement_new(r, "memory", "triad", subject, higher ? "GB/s" : "us", higher);
        const double s[3] = {median * 0.99, median, median * 1.01};
        assert_int_equal(measurement_set_samples(m, s, 3, 1), 0);
        return m;
}

static void test_judge_thresholds(void **state) {
        (void)state;
        struct bench_limits lim = {.pass_ratio = 0.9, .warn_ratio = 0.8};
        struct bench_report r;
        bench_report_init(&r);

        struct measurement *m = with_samples(&r, "gpu0", 95, true);
        m->baseline = 100;
        bench_judge(m, &lim);
        assert_int_equal(m->status, STATUS_PASS);
        assert_true(fabs(m->ratio_baseline - 0.95) < 1e-12);
        assert_non_null(strstr(m->summary, "95% of baseline"));

        m = with_samples(&r, "gpu0", 90, true); /* exactly at the threshold passes */
        m->baseline = 100;
        bench_judge(m, &lim);
        assert_int_equal(m->status, STATUS_PASS);

        m = with_samples(&r, "gpu0", 85, true);
        m->baseline = 100;
        bench_judge(m, &lim);
        assert_int_equal(m->status, STATUS_WARN);

        m = with_samples(&r, "gpu0", 70, true);
        m->baseline = 100;
        m->peak = 80; /* the baseline decides when both exist */
        bench_judge(m, &lim);
        assert_int_equal(m->status, STATUS_FAIL);
        assert_true(m->ratio_peak > 0.87 && m->ratio_peak < 0.88);

        /* Lower is better (latency): ratio = reference / median. */
        m = with_samples(&r, "gpu0", 10, false);
        m->baseline = 8;
        bench_judge(m, &lim);
        assert_true(fabs(m->ratio_baseline - 0.8) < 1e-12);
        assert_int_equal(m->status, STATUS_WARN);

        /* A wrong result fails whatever its figure. */
        m = with_samples(&r, "gpu0", 200, true);
        m->baseline = 100;
        snprintf(m->verify_error, sizeof(m->verify_error), "a[3] = 1, expected 2");
        bench_judge(m, &lim);
        assert_int_equal(m->status, STATUS_FAIL);
        assert_non_null(strstr(m->summary, "verification failed"));

        /* No reference: passes, and says so. */
        m = with_samples(&r, "host", 40, true);
        bench_judge(m, &lim);
        assert_int_equal(m->status, STATUS_PASS);
        assert_non_null(strstr(m->summary, "no reference"));

        /* No samples: error. A benchmark's own skip stays. */
        m = bench_measurement_new(&r, "memory", "triad", "gpu1", "GB/s", true);
        bench_judge(m, &lim);
        assert_int_equal(m->status, STATUS_ERROR);
        m = bench_measurement_new(&r, "memory", "triad", "gpu1", "GB/s", true);
        measurement_fail(m, STATUS_SKIP, "fp16 not supported");
        bench_judge(m, &lim);
        assert_int_equal(m->status, STATUS_SKIP);
        assert_string_equal(m->summary, "fp16 not supported");
        bench_report_done(&r);
}

static void test_compare_siblings(void **state) {
        (void)state;
        struct bench_limits lim = {.pass_ratio = 0.5, .warn_ratio = 0.4};
        struct bench_report r;
        bench_report_init(&r);
        for (int i = 0; i < 8; i++) {
                char subject[32];
                snprintf(subject, sizeof(subject), "gpu%d (0000:%02x:00.0)", i, 0x10 + i);
                struct measurement *m = with_samples(&r, subject, i == 5 ? 80 : 100, true);
                m->baseline = 100;
                bench_judge(m, &lim);
                assert_int_equal(m->status, STATUS_PASS);
        }
        bench_compare_siblings(&r, 0.10);
        for (int i = 0; i < 8; i++)
                assert_int_equal(r.m[i].status, i == 5 ? STATUS_WARN : STATUS_PASS);
        assert_non_null(strstr(r.m[5].summary, "20% below the node's median"));
        bench_report_done(&r);

        /* Two GPUs: no median to speak of. */
        bench_report_init(&r);
        for (int i = 0; i < 2; i++) {
                struct measurement *m = with_samples(&r, i ? "gpu1" : "gpu0", i ? 50 : 100, true);
                bench_judge(m, &lim);
        }
        bench_compare_siblings(&r, 0.10);
        assert_int_equal(r.m[1].status, STATUS_PASS);
        bench_report_done(&r);
}

static void test_baselines_builtin(void **state) {
        (void)state;
        struct baselines *b = NULL;
        char err[512] = "";
        assert_int_equal(baselines_load(NULL, &b, err, sizeof(err)), 0);
        const struct baseline *x = baselines_find(b, "NVIDIA H100 80GB HBM3", "transfer", "h2d_pinned");
        assert_non_null(x);
        assert_true(x->value > 50 && x->value < 60);
        assert_string_equal(x->unit, "GB/s");
        assert_non_null(baselines_find(b, "NVIDIA H200", "memory", "triad"));
        assert_null(baselines_find(b, "NVIDIA H200", "memory", "no-such"));
        const struct bench_limit_set *l = baselines_limits(b, "memory");
        assert_non_null(l);
        assert_string_equal(l->bench, "memory");
        assert_true(l->baseline.pass_ratio > l->peak.pass_ratio);
        l = baselines_limits(b, "unknown-bench");
        assert_non_null(l);
        assert_string_equal(l->bench, "default");
        baselines_free(b);
}

static void expect_error(const char *text, const char *want) {
        struct baselines *b = NULL;
        char err[512] = "";
        assert_int_equal(baselines_load_buffer(text, strlen(text), "t/baselines.json", &b, err, sizeof(err)), -EINVAL);
        assert_null(b);
        if (!strstr(err, want))
                fail_msg("error \"%s\" lacks \"%s\"", err, want);
}

static void test_baselines_errors(void **state) {
        (void)state;
        expect_error("{\"schema\": \"gpuvet.baselines/1\",\n \"limits\": [,]}", "t/baselines.json: line 2:");
        expect_error("{\"schema\": \"x/1\", \"limits\": [], \"baselines\": []}", "line 1: \"schema\" must be");
        const char *lim = "  \"limits\": [\n"
                          "    {\"bench\": \"memory\", \"rationale\": \"r\", \"baseline\": {\"pass_ratio\": 0.9, "
                          "\"warn_ratio\": 0.8}, \"peak\": {\"pass_ratio\": 0.7, \"warn_ratio\": 0.5}},\n"
                          "    {\"bench\": \"gemm\", \"rationale\": \"r\", \"baseline\": {\"pass_ratio\": 0.5, "
                          "\"warn_ratio\": 0.8}, \"peak\": {\"pass_ratio\": 0.7, \"warn_ratio\": 0.5}}\n"
                          "  ],\n";
        char doc[2048];
        snprintf(doc, sizeof(doc), "{\n  \"schema\": \"gpuvet.baselines/1\",\n%s  \"baselines\": []\n}\n", lim);
        expect_error(doc, "line 5: limits of gemm"); /* warn above pass */
        snprintf(doc, sizeof(doc),
                 "{\n  \"schema\": \"gpuvet.baselines/1\",\n  \"limits\": [],\n  \"baselines\": [\n"
                 "    {\"gpu\": \"A\", \"bench\": \"memory\", \"name\": \"triad\", \"value\": 1, \"unit\": \"GB/s\", "
                 "\"source\": \"s\"},\n"
                 "    {\"gpu\": \"B\", \"bench\": \"memory\",\n      \"name\": \"triad\", \"value\": 1, \"unit\": \"GB/s\", "
                 "\"source\": \"s\"},\n"
                 "    {\"gpu\": \"C\", \"bench\": \"memory\", \"name\": \"triad\", \"value\": -3, \"unit\": \"GB/s\", "
                 "\"source\": \"s\"}\n  ]\n}\n");
        expect_error(doc, "line 8: baseline C memory/triad: \"value\" must be a positive number");
        expect_error("{\"schema\": \"gpuvet.baselines/1\", \"limits\": {}, \"baselines\": []}", "must be lists");
}

static void test_frame(void **state) {
        (void)state;
        const char *payload = "{\"measurements\": []}";
        size_t len;
        char *f = bench_frame(payload, strlen(payload), &len);
        assert_non_null(f);
        char why[128];
        char *copy = malloc(len + 1);
        memcpy(copy, f, len + 1);
        char *p = bench_unframe(copy, len, why, sizeof(why));
        assert_non_null(p);
        assert_string_equal(p, payload);

        memcpy(copy, f, len + 1);
        assert_null(bench_unframe(copy, len - 3, why, sizeof(why)));
        assert_non_null(strstr(why, "torn frame"));

        memcpy(copy, f, len + 1);
        copy[len - 2] ^= 1;
        assert_null(bench_unframe(copy, len, why, sizeof(why)));
        assert_string_equal(why, "checksum mismatch");

        assert_null(bench_unframe(copy, 0, why, sizeof(why)));
        free(copy);
        free(f);
}

/* ---- the runner with benchmarks of our own ---- */

static void run_good(const struct bench_ctx *ctx, struct bench_report *rep) {
        (void)ctx;
        struct measurement *m = bench_measurement_new(rep, "fake", "triad", "gpu0 (0000:1b:00.0)", "GB/s", true);
        const double s[] = {1.5, 2.5, 2.0};
        measurement_set_samples(m, s, 3, 2);
        measurement_param(m, "size_bytes", "%d", 4096);
        m->verified = true;
        m->peak = 3.0;
}
static void run_hang(const struct bench_ctx *ctx, struct bench_report *rep) {
        (void)ctx, (void)rep;
        signal(SIGTERM, SIG_IGN);
        for (;;)
                pause();
}
static void run_crash(const struct bench_ctx *ctx, struct bench_report *rep) {
        (void)ctx, (void)rep;
        raise(SIGSEGV);
}

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_runner(void **state) {
        (void)state;
        struct bench_options opt = {.backend = "auto"};
        struct bench_ctx ctx = {.opt = &opt};
        struct bench_report rep;
        bench_report_init(&rep);
        struct bench_run_result res;

        const struct bench_info good = {.name = "fake", .title = "t", .run = run_good};
        assert_int_equal(bench_run_child(&good, &ctx, 30, &rep, &res), 0);
        assert_int_equal(res.count, 1);
        struct measurement *m = &rep.m[0];
        assert_string_equal(m->subject, "gpu0 (0000:1b:00.0)");
        assert_int_equal(m->n_samples, 3);
        assert_true(m->samples[0] == 1.5 && m->samples[2] == 2.0);
        assert_int_equal(m->warmup, 2);
        assert_true(m->verified && m->peak == 3.0);
        assert_string_equal(m->params[0].value, "4096");
        bench_judge_range(&rep, 0, NULL, NULL);
        assert_int_equal(m->status, STATUS_PASS);
        assert_true(fabs(m->ratio_peak - 2.0 / 3.0) < 1e-12);

        const struct bench_info hang = {.name = "hang", .title = "t", .run = run_hang};
        double t0 = now_s();
        bench_run_child(&hang, &ctx, 1, &rep, &res);
        double took = now_s() - t0;
        assert_true(took < 1 + BENCH_GRACE_S + 2);
        assert_int_equal(res.count, 1);
        assert_int_equal(rep.m[1].status, STATUS_ERROR);
        assert_non_null(strstr(rep.m[1].summary, "timed out after 1 s in hang"));

        const struct bench_info crash = {.name = "crash", .title = "t", .run = run_crash};
        bench_run_child(&crash, &ctx, 30, &rep, &res);
        assert_int_equal(rep.m[2].status, STATUS_ERROR);
        assert_non_null(strstr(rep.m[2].summary, "untrustworthy report"));
        assert_non_null(strstr(rep.m[2].summary, "signal 11"));

        setenv("GPUVET_BENCH_TEST_GARBLE", "fake", 1);
        bench_run_child(&good, &ctx, 30, &rep, &res);
        unsetenv("GPUVET_BENCH_TEST_GARBLE");
        assert_int_equal(res.count, 1);
        assert_non_null(strstr(rep.m[3].summary, "untrustworthy report from fake: torn frame"));
        bench_report_done(&rep);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_stats_known_sets), cmocka_unit_test(test_judge_thresholds),
                cmocka_unit_test(test_compare_siblings), cmocka_unit_test(test_baselines_builtin),
                cmocka_unit_test(test_baselines_errors), cmocka_unit_test(test_frame),
                cmocka_unit_test(test_runner),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

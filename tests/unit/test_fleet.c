/* gpuvet fleet: the statistics, the outlier rules (data/fleet_rules.json and their
 * resolution), drift, the report reader, and an aggregation of a few documents. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/fleet_rules.h"
#include "fleet/fleet.h"
#include "fleet/fleet_doc.h"
#include "fleet/fleet_judge.h"
#include "fleet/fleet_stats.h"

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

static void test_percentiles(void **state) {
        (void)state;
        /* numpy.percentile([1, 2, 3, 4, 10], [10, 50, 90]) = 1.4, 3, 7.6 */
        double v[] = {10, 3, 1, 4, 2};
        struct fleet_stats st;
        assert_int_equal(fleet_stats_compute(v, 5, &st), 0);
        assert_int_equal(st.n, 5);
        NEAR(st.min, 1);
        NEAR(st.max, 10);
        NEAR(st.p10, 1.4);
        NEAR(st.median, 3);
        NEAR(st.p90, 7.6);
        NEAR(st.mean, 4);
        /* sample stddev: sum of squares 50 / 4 */
        NEAR(st.stddev, sqrt(12.5));
        /* |x - 3| = 2 1 0 1 7: median 1 */
        NEAR(st.mad, 1);
        /* Even count: the median between the middle two. */
        double w[] = {4, 1, 3, 2};
        assert_int_equal(fleet_stats_compute(w, 4, &st), 0);
        NEAR(st.median, 2.5);
        NEAR(fleet_percentile(w, 4, 0), 1);
        NEAR(fleet_percentile(w, 4, 100), 4);
        /* One value: everything is it, no spread. */
        double one[] = {7};
        assert_int_equal(fleet_stats_compute(one, 1, &st), 0);
        NEAR(st.p10, 7);
        NEAR(st.p90, 7);
        NEAR(st.stddev, 0);
        assert_int_equal(fleet_stats_compute(NULL, 0, &st), 0);
        assert_int_equal(st.n, 0);
}

static struct fleet_rule variance_rule(void) {
        return (struct fleet_rule){.warn_pct = 5, .fail_pct = 10, .mads = 3, .min_samples = 5};
}

static struct fleet_stats stats_of(double *v, size_t n) {
        struct fleet_stats st;
        assert_int_equal(fleet_stats_compute(v, n, &st), 0);
        return st;
}

static void test_judge_variance(void **state) {
        (void)state;
        /* Median 100, MAD 1 (scaled 1.4826). */
        double v[] = {99, 100, 101, 100, 99, 101, 100, 100, 80};
        struct fleet_stats st = stats_of(v, 9);
        struct fleet_rule rule = variance_rule();
        struct fleet_outlier o;
        /* 20% below: fail; 7% below: warn; 4% below: within tolerance. */
        assert_true(fleet_judge_figure(&rule, FLEET_HIGHER_BETTER, &st, 80, &o));
        assert_int_equal(o.status, STATUS_FAIL);
        assert_int_equal(o.rule, FLEET_RULE_VARIANCE);
        NEAR(o.deviation_pct, -20);
        NEAR(o.mads, 20 / 1.4826);
        assert_true(fleet_judge_figure(&rule, FLEET_HIGHER_BETTER, &st, 93, &o));
        assert_int_equal(o.status, STATUS_WARN);
        assert_false(fleet_judge_figure(&rule, FLEET_HIGHER_BETTER, &st, 96, &o));
        assert_int_equal(o.status, STATUS_PASS);
        /* Better than the median is never an outlier of its direction. */
        assert_false(fleet_judge_figure(&rule, FLEET_HIGHER_BETTER, &st, 130, &o));
        /* Lower is better: above the median is worse. */
        assert_true(fleet_judge_figure(&rule, FLEET_LOWER_BETTER, &st, 115, &o));
        assert_int_equal(o.status, STATUS_FAIL);
        assert_false(fleet_judge_figure(&rule, FLEET_LOWER_BETTER, &st, 80, &o));
        /* No direction: no variance rule. */
        assert_false(fleet_judge_figure(&rule, FLEET_DIRECTION_NONE, &st, 50, &o));
        /* Too few figures of the model: no variance rule. */
        rule.min_samples = 10;
        assert_false(fleet_judge_figure(&rule, FLEET_HIGHER_BETTER, &st, 50, &o));
}

static void test_judge_mads(void **state) {
        (void)state;
        /* A noisy metric: median 100, MAD 10 (scaled 14.8). 12% below is beyond fail_pct but
         * within 3 MADs (0.81), so the spread is normal: not flagged. */
        double v[] = {80, 90, 100, 110, 120, 100, 90, 110, 100};
        struct fleet_stats st = stats_of(v, 9);
        NEAR(st.mad, 10);
        struct fleet_rule rule = variance_rule();
        struct fleet_outlier o;
        assert_false(fleet_judge_figure(&rule, FLEET_HIGHER_BETTER, &st, 88, &o));
        /* 50% below is also 3.4 MADs below: fail. */
        assert_true(fleet_judge_figure(&rule, FLEET_HIGHER_BETTER, &st, 50, &o));
        assert_int_equal(o.status, STATUS_FAIL);
        /* mads 0: the percentage alone decides. */
        rule.mads = 0;
        assert_true(fleet_judge_figure(&rule, FLEET_HIGHER_BETTER, &st, 88, &o));
        /* MAD 0 (most figures equal): any difference is beyond it. */
        double flat[] = {100, 100, 100, 100, 100, 100, 90};
        st = stats_of(flat, 7);
        NEAR(st.mad, 0);
        rule.mads = 3;
        assert_true(fleet_judge_figure(&rule, FLEET_HIGHER_BETTER, &st, 90, &o));
        NEAR(o.mads, 0);
}

static void test_judge_bounds(void **state) {
        (void)state;
        double v[] = {10, 10, 10};
        struct fleet_stats st = stats_of(v, 3);
        struct fleet_rule rule = variance_rule();
        rule.has_min = true;
        rule.min = 5;
        rule.has_max = true;
        rule.max = 20;
        struct fleet_outlier o;
        /* Bounds apply below min_samples and without a direction. */
        assert_true(fleet_judge_figure(&rule, FLEET_DIRECTION_NONE, &st, 4, &o));
        assert_int_equal(o.rule, FLEET_RULE_VALUE_MIN);
        assert_int_equal(o.status, STATUS_FAIL);
        assert_true(fleet_judge_figure(&rule, FLEET_DIRECTION_NONE, &st, 21, &o));
        assert_int_equal(o.rule, FLEET_RULE_VALUE_MAX);
        assert_false(fleet_judge_figure(&rule, FLEET_DIRECTION_NONE, &st, 5, &o));
}

static void test_drift(void **state) {
        (void)state;
        struct fleet_drift_node nodes[] = {
                {"a", (char *)"550.54.15"}, {"b", (char *)"550.54.15"}, {"c", (char *)"535.161.08"},
                {"d", NULL},                {"e", (char *)"550.54.15"},
        };
        struct fleet_drift d;
        assert_int_equal(fleet_drift_compute("driver_version", NULL, nodes, 5, &d), 0);
        assert_string_equal(d.majority, "550.54.15");
        assert_int_equal(d.n_majority, 3);
        assert_int_equal(d.n_reporting, 4);
        assert_int_equal(d.n_odd, 1);
        assert_string_equal(d.odd[0].node, "c");
        assert_string_equal(d.odd[0].value, "535.161.08");
        fleet_drift_clear(&d);
        /* A tie goes to the smaller string; every other value is odd. */
        struct fleet_drift_node tie[] = {{"a", (char *)"B"}, {"b", (char *)"A"}, {"c", (char *)"B"}, {"d", (char *)"A"}};
        assert_int_equal(fleet_drift_compute("vbios", "GPU", tie, 4, &d), 0);
        assert_string_equal(d.majority, "A");
        assert_int_equal(d.n_odd, 2);
        assert_string_equal(d.odd[0].node, "a");
        assert_string_equal(d.odd[1].node, "c");
        assert_string_equal(d.model, "GPU");
        fleet_drift_clear(&d);
        /* No node reports it. */
        struct fleet_drift_node none[] = {{"a", NULL}};
        assert_int_equal(fleet_drift_compute("cuda_version", NULL, none, 1, &d), 0);
        assert_int_equal(d.n_reporting, 0);
        assert_null(d.majority);
        fleet_drift_clear(&d);
}

static const char rules_json[] = "{\"schema\": \"gpuvet.fleet-rules/1\","
                                 " \"defaults\": {\"warn_pct\": 5, \"fail_pct\": 10, \"mads\": 3, \"min_samples\": 5},"
                                 " \"direction_by_unit\": {\"GB/s\": \"higher\", \"us\": \"lower\"},"
                                 " \"metrics\": ["
                                 "  {\"metric\": \"p2p/latency\", \"warn_pct\": 25, \"fail_pct\": 50},"
                                 "  {\"metric\": \"memory/*\", \"model\": \"*A100*\", \"min\": 1000},"
                                 "  {\"metric\": \"memory/*\", \"direction\": \"lower\", \"mads\": 0}]}";

static void test_rules(void **state) {
        (void)state;
        struct fleet_rules rules;
        char err[512];
        assert_int_equal(fleet_rules_load_buffer(rules_json, strlen(rules_json), "t.json", &rules, err, sizeof(err)), 0);
        struct fleet_rule r;
        const char *pattern;
        fleet_rules_resolve(&rules, "p2p/latency", "H100", &r, &pattern);
        assert_string_equal(pattern, "p2p/latency");
        NEAR(r.warn_pct, 25);
        NEAR(r.fail_pct, 50);
        NEAR(r.mads, 3); /* from the defaults */
        assert_int_equal(r.min_samples, 5);
        assert_false(r.has_direction);
        /* The model pattern chooses between two entries for the same metric. */
        fleet_rules_resolve(&rules, "memory/triad", "NVIDIA A100-SXM4-80GB", &r, &pattern);
        assert_true(r.has_min);
        NEAR(r.min, 1000);
        fleet_rules_resolve(&rules, "memory/triad", "NVIDIA H100 80GB HBM3", &r, &pattern);
        assert_false(r.has_min);
        assert_true(r.has_direction);
        assert_int_equal(r.direction, FLEET_LOWER_BETTER);
        NEAR(r.mads, 0);
        /* No entry: the defaults. */
        fleet_rules_resolve(&rules, "compute/fp32_fma", "H100", &r, &pattern);
        assert_string_equal(pattern, "*");
        NEAR(r.fail_pct, 10);
        assert_int_equal(fleet_rules_unit_direction(&rules, "GB/s"), FLEET_HIGHER_BETTER);
        assert_int_equal(fleet_rules_unit_direction(&rules, "us"), FLEET_LOWER_BETTER);
        assert_int_equal(fleet_rules_unit_direction(&rules, "parsecs"), FLEET_DIRECTION_NONE);
        fleet_rules_done(&rules);

        /* The built-in table loads. */
        assert_int_equal(fleet_rules_load(NULL, NULL, &rules, err, sizeof(err)), 0);
        assert_string_equal(rules.source, "built-in fleet_rules.json");
        fleet_rules_done(&rules);

        /* Bad tables are refused, naming the file and what is wrong. */
        static const struct {
                const char *json, *want;
        } bad[] = {
                {"{\"schema\": \"gpuvet.fleet-rules/2\", \"defaults\": {}}", "\"schema\" must be"},
                {"{\"schema\": \"gpuvet.fleet-rules/1\", \"defaults\": {\"warn_pct\": 5}}", "must give warn_pct"},
                {"{\"schema\": \"gpuvet.fleet-rules/1\", \"defaults\": {\"warn_pct\": 20, \"fail_pct\": 10, \"mads\": 3,"
                 " \"min_samples\": 5}}",
                 "above \"fail_pct\""},
                {"{\"schema\": \"gpuvet.fleet-rules/1\", \"defaults\": {\"warn_pct\": 5, \"fail_pct\": 10, \"mads\": 3,"
                 " \"min_samples\": 5}, \"metrics\": [{\"warn_pct\": 1}]}",
                 "metrics[0] needs a \"metric\""},
                {"{\"schema\": \"gpuvet.fleet-rules/1\", \"defaults\": {\"warn_pct\": 5, \"fail_pct\": 10, \"mads\": 3,"
                 " \"min_samples\": 5}, \"metrics\": [{\"metric\": \"x\", \"direction\": \"up\"}]}",
                 "\"direction\" must be"},
                {"{\"schema\": \"gpuvet.fleet-rules/1\", \"defaults\": {\"warn_pct\": 5, \"fail_pct\": 10, \"mads\": 3,"
                 " \"min_samples\": 5, \"min\": 3}}",
                 "unknown key \"min\""},
                {"{\"schema\": \"gpuvet.fleet-rules/1\", \"defaults\": {\"warn_pct\": -1}}", "from 0 to 1000"},
                {"{\"schema\": ", "line 1"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                err[0] = '\0';
                assert_int_equal(fleet_rules_load_buffer(bad[i].json, strlen(bad[i].json), "bad.json", &rules, err,
                                                         sizeof(err)),
                                 -EINVAL);
                if (!strstr(err, bad[i].want) || strncmp(err, "bad.json: ", 10) != 0)
                        fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err, bad[i].want);
        }
}

static const char check_doc[] =
        "{\"schema\": \"gpuvet.report/1\", \"command\": \"check\", \"host\": {\"hostname\": \"n\\u00e9-1\","
        " \"kernel_release\": \"6.8.0\"}, \"gpus\": [{\"pci_bus_id\": \"0000:1b:00.0\", \"name\": \"H100\"}],"
        " \"checks\": ["
        "  {\"id\": \"gpu.nvml\", \"subject\": \"host\", \"status\": \"pass\", \"evidence\": {\"driver_version\": "
        "\"550.54.15\", \"cuda_driver_version\": \"12.4\"}},"
        "  {\"id\": \"gpu.inforom\", \"subject\": \"0000:1b:00.0\", \"status\": \"pass\", \"observed\": \"InfoROM valid;"
        " VBIOS 96.00.74.00.1A; InfoROM image G520\"},"
        "  {\"id\": \"pcie.link_width\", \"subject\": \"0000:1b:00.0\", \"status\": \"fail\"},"
        "  {\"id\": \"cpu.governor\", \"subject\": \"host\", \"status\": \"warn\"}],"
        " \"summary\": {\"verdict\": \"fail\"}}";

static void test_doc_parse(void **state) {
        (void)state;
        struct fleet_scratch s = {0};
        struct fleet_doc doc;
        char why[256];
        assert_int_equal(fleet_doc_parse(check_doc, strlen(check_doc), &s, &doc, why, sizeof(why)), 0);
        assert_int_equal(doc.kind, FLEET_DOC_REPORT);
        assert_string_equal(doc.hostname, "n\xc3\xa9-1");
        assert_string_equal(doc.kernel_release, "6.8.0");
        assert_string_equal(doc.driver_version, "550.54.15");
        assert_string_equal(doc.cuda_version, "12.4");
        assert_int_equal(doc.verdict, STATUS_FAIL);
        assert_int_equal(doc.n_gpus, 1);
        assert_string_equal(doc.gpus[0].vbios, "96.00.74.00.1A");
        assert_int_equal(doc.n_checks, 2);
        assert_string_equal(doc.checks[0].id, "pcie.link_width");
        assert_int_equal(doc.checks[1].status, STATUS_WARN);
        fleet_doc_clear(&doc);

        static const char bench_doc[] =
                "{\"schema\": \"gpuvet.bench/2\", \"summary\": {\"verdict\": \"pass\"}, \"measurements\": ["
                "{\"bench\": \"memory\", \"name\": \"triad\", \"subject\": \"gpu0 (0000:1b:00.0)\", \"unit\": \"GB/s\","
                " \"higher_is_better\": true, \"status\": \"pass\", \"stats\": {\"median\": 1.5e3}},"
                "{\"bench\": \"memory\", \"name\": \"copy\", \"status\": \"error\", \"stats\": {\"median\": 1}},"
                "{\"bench\": \"p2p\", \"name\": \"latency\", \"subject\": \"gpu0->gpu1\", \"unit\": \"us\","
                " \"higher_is_better\": false, \"status\": \"warn\", \"stats\": {\"median\": 2}}]}";
        assert_int_equal(fleet_doc_parse(bench_doc, strlen(bench_doc), &s, &doc, why, sizeof(why)), 0);
        assert_null(doc.hostname);
        assert_int_equal(doc.n_metrics, 2);
        assert_string_equal(doc.metrics[0].name, "memory/triad");
        NEAR(doc.metrics[0].value, 1500);
        assert_int_equal(doc.metrics[0].higher_is_better, 1);
        assert_int_equal(doc.metrics[1].higher_is_better, 0);
        fleet_doc_clear(&doc);

        static const struct {
                const char *json, *want;
                int r;
        } bad[] = {
                {"{\"schema\": \"gpuvet.report/1\", \"summ", "truncated JSON", -EINVAL},
                {"hello", "not JSON", -EINVAL},
                {"", "empty", -EINVAL},
                {"[1, 2]", "not a JSON object", -EINVAL},
                {"{\"a\": 1} x", "not JSON", -EINVAL},
                {"{\"a\": 1}", "no \"schema\"", -EINVAL},
                {"{\"schema\": \"gpuvet.report/2\", \"summary\": {\"verdict\": \"pass\"}}", "gpuvet.report/2", -EPROTO},
                /* fleet's own --json, beside the reports it aggregated (the Ansible play) */
                {"{\"schema\": \"gpuvet.fleet/1\", \"summary\": {\"verdict\": \"pass\"}}", "a fleet aggregate",
                 FLEET_DOC_AGGREGATE},
                {"{\"schema\": \"gpuvet.report/1\"}", "no summary.verdict", -EINVAL},
                {"{\"schema\": \"gpuvet.report/1\", \"summary\": {\"verdict\": \"great\"}}", "no summary.verdict", -EINVAL},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                why[0] = '\0';
                int r = fleet_doc_parse(bad[i].json, strlen(bad[i].json), &s, &doc, why, sizeof(why));
                if (r != bad[i].r || !strstr(why, bad[i].want))
                        fail_msg("case %zu: %d \"%s\", wanted %d \"%s\"", i, r, why, bad[i].r, bad[i].want);
        }
        fleet_scratch_free(&s);
}

/* A document nested n deep inside a report: {"schema": ..., "x": [[...]]} (n counts the
 * report's own object), padded with more than n brackets in a string, which do not nest. */
static char *nested_report(size_t n) {
        static const char head[] = "{\"schema\": \"gpuvet.report/1\", \"summary\": {\"verdict\": \"pass\"}, "
                                   "\"s\": \"\\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\", \"x\": ";
        size_t len = strlen(head) + 2 * (n - 1) + 2;
        char *s = malloc(len);
        assert_non_null(s);
        memcpy(s, head, strlen(head));
        char *p = s + strlen(head);
        memset(p, '[', n - 1);
        memset(p + n - 1, ']', n - 1);
        p[2 * (n - 1)] = '}';
        p[2 * (n - 1) + 1] = '\0';
        return s;
}

/* Nesting is capped before jsmn tokenizes: its closing brackets walk the parent chain, so
 * 100,000 levels took 36 s and 1 MB never finished (reliability review N4). Under the cap,
 * a megabyte of brackets is refused at once (this test's time limit is the bound). */
static void test_doc_depth(void **state) {
        (void)state;
        struct fleet_scratch s = {0};
        struct fleet_doc doc;
        char why[256];
        char *ok = nested_report(FLEET_DOC_MAX_DEPTH);
        assert_int_equal(fleet_doc_parse(ok, strlen(ok), &s, &doc, why, sizeof(why)), 0);
        assert_int_equal(doc.verdict, STATUS_PASS);
        fleet_doc_clear(&doc);
        free(ok);

        static const size_t deep[] = {FLEET_DOC_MAX_DEPTH + 1, 100000, 500000};
        for (size_t i = 0; i < sizeof(deep) / sizeof(deep[0]); i++) {
                char *d = nested_report(deep[i]);
                why[0] = '\0';
                int r = fleet_doc_parse(d, strlen(d), &s, &doc, why, sizeof(why));
                if (r != -EINVAL || !strstr(why, "nested deeper than 64 levels"))
                        fail_msg("%zu levels: %d \"%s\"", deep[i], r, why);
                free(d);
        }
        /* Bare brackets, as the review's reproducer wrote them. */
        size_t n = 100000;
        char *bare = malloc(2 * n);
        assert_non_null(bare);
        memset(bare, '[', n);
        memset(bare + n, ']', n);
        assert_int_equal(fleet_doc_parse(bare, 2 * n, &s, &doc, why, sizeof(why)), -EINVAL);
        assert_non_null(strstr(why, "nested deeper"));
        free(bare);
        fleet_scratch_free(&s);
}

/* A slow node's many outliers are one finding per side of the median; failing findings go
 * first, and each names its worst figure (ux-review papercut 11: 98 rows for one node). */
static void test_group_outliers(void **state) {
        (void)state;
        struct fleet_outlier o[] = {
                {.node = "node-b", .metric = "m/a", .deviation_pct = -6, .status = STATUS_WARN},
                {.node = "node-a", .metric = "m/a", .deviation_pct = -25, .status = STATUS_FAIL},
                {.node = "node-a", .metric = "m/b", .deviation_pct = -31, .status = STATUS_FAIL},
                {.node = "node-a", .metric = "m/c", .deviation_pct = -40, .status = STATUS_WARN},
                {.node = "node-a", .metric = "m/d", .deviation_pct = 12, .status = STATUS_WARN},
                {.node = "node-a", .metric = "m/e", .deviation_pct = -8, .status = STATUS_WARN},
        };
        struct fleet_outlier_group *g;
        size_t n, *members;
        assert_int_equal(fleet_group_outliers(o, 6, &g, &n, &members), 0);
        assert_int_equal(n, 3);
        assert_string_equal(g[0].node, "node-a");
        assert_true(g[0].below);
        assert_int_equal(g[0].status, STATUS_FAIL);
        assert_int_equal(g[0].n, 4);
        assert_int_equal(g[0].n_fail, 2);
        NEAR(g[0].least_pct, 8);
        NEAR(g[0].most_pct, 40);
        assert_int_equal(g[0].worst, 2); /* a failing figure before a further warning one */
        const size_t want[] = {1, 2, 3, 5};
        for (size_t i = 0; i < 4; i++)
                assert_int_equal(g[0].members[i], want[i]);
        assert_string_equal(g[1].node, "node-a");
        assert_false(g[1].below);
        assert_int_equal(g[1].n, 1);
        assert_int_equal(g[1].members[0], 4);
        assert_string_equal(g[2].node, "node-b");
        assert_int_equal(g[2].status, STATUS_WARN);
        assert_int_equal(g[2].worst, 0);
        free(g);
        free(members);
        assert_int_equal(fleet_group_outliers(o, 0, &g, &n, &members), 0);
        assert_int_equal(n, 0);
        assert_null(g);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_percentiles), cmocka_unit_test(test_judge_variance),
                cmocka_unit_test(test_judge_mads),  cmocka_unit_test(test_judge_bounds),
                cmocka_unit_test(test_drift),       cmocka_unit_test(test_rules),
                cmocka_unit_test(test_doc_parse),   cmocka_unit_test(test_doc_depth),
                cmocka_unit_test(test_group_outliers),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

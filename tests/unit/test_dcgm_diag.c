/* The dcgmi diag JSON reader (src/sys/dcgm_diag.c) on the shapes DCGM versions print
 * that the captures in tests/fakes/dcgmi lack: 3.2's string warnings with error_id
 * beside them and "0,1" gpu_ids (a result for each GPU listed), 3.3's gpu_id with
 * warning objects (and the "warnings" message key of its failing Deployment entries),
 * 4.x CPU entities and test_summary messages, versions beside the top key; text before
 * and after the document (DCGM's own readers cut from the first '{' to the last '}');
 * and the documents it must refuse. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "sys/dcgm_diag.h"

static struct dcgm_diag parse_ok(const char *text) {
        struct dcgm_diag d;
        char err[256] = "";
        int r = dcgm_diag_parse(text, strlen(text), &d, err, sizeof(err));
        if (r != 0)
                fail_msg("parse failed (%d): %s", r, err);
        return d;
}

static void test_dcgm_3_2(void **state) {
        (void)state;
        struct dcgm_diag d = parse_ok(
                "{\"DCGM GPU Diagnostic\": {\"test_categories\": [{\"category\": \"Hardware\", \"tests\": [{\"name\": "
                "\"GPU Memory\", \"results\": [{\"gpu_ids\": \"0,1\", \"status\": \"Fail\", \"warnings\": \"Error "
                "using CUDA API cudaMalloc\", \"error_id\": 23, \"info\": \"Allocated 1 bytes\"}]}]}]}, \"version\": "
                "\"3.2.6\", \"Driver Version Detected\": \"535.86.10\", \"GPU Device IDs\": [\"20b5\"]}");
        assert_string_equal(d.top_key, "DCGM GPU Diagnostic");
        assert_string_equal(d.version, "3.2.6");
        assert_string_equal(d.driver_version, "535.86.10");
        /* "0,1": the one result speaks for GPU 0 and GPU 1 alike. */
        assert_int_equal(d.n, 2);
        for (int i = 0; i < 2; i++) {
                const struct dcgm_result *r = &d.results[i];
                assert_string_equal(r->test, "GPU Memory");
                assert_string_equal(r->category, "Hardware");
                assert_string_equal(r->entity, "GPU");
                assert_int_equal(r->entity_id, i);
                assert_int_equal(r->status, DCGM_FAIL);
                assert_string_equal(r->message, "Error using CUDA API cudaMalloc");
                assert_string_equal(r->error_ids, "23");
                assert_string_equal(r->info, "Allocated 1 bytes");
        }
        dcgm_diag_done(&d);
}

static void test_dcgm_3_3(void **state) {
        (void)state;
        struct dcgm_diag d = parse_ok(
                "{\"DCGM GPU Diagnostic\": {\"test_categories\": [{\"category\": \"Deployment\", \"tests\": [{\"name\": "
                "\"Persistence Mode\", \"results\": [{\"gpu_id\": 2, \"status\": \"Fail\", \"warnings\": [{\"warnings\": "
                "\"Persistence mode for GPU 2 is disabled.\", \"error_id\": 29}]}]}, {\"name\": \"Inforom\", \"results\": "
                "[{\"gpu_id\": \"3\", \"status\": \"Warn\", \"warnings\": [{\"warning\": \"a\", \"error_id\": 1}, "
                "{\"warning\": \"b\", \"error_id\": 2}]}]}]}]}}");
        assert_int_equal(d.n, 2);
        assert_int_equal(d.results[0].entity_id, 2);
        assert_string_equal(d.results[0].message, "Persistence mode for GPU 2 is disabled.");
        assert_string_equal(d.results[0].error_ids, "29");
        assert_int_equal(d.results[1].entity_id, 3);
        assert_int_equal(d.results[1].status, DCGM_FAIL); /* text output's Warn, should it appear */
        assert_string_equal(d.results[1].message, "a; b");
        assert_string_equal(d.results[1].error_ids, "1, 2");
        dcgm_diag_done(&d);
}

static void test_dcgm_4_summary_and_cpu(void **state) {
        (void)state;
        struct dcgm_diag d = parse_ok(
                "{\"DCGM Diagnostic\": {\"test_categories\": [{\"category\": \"Hardware\", \"tests\": [{\"name\": "
                "\"cpu_eud\", \"results\": [{\"entity_group\": \"CPU\", \"entity_group_id\": 7, \"entity_id\": 1, "
                "\"status\": \"Skip\", \"info\": [\"not licensed\", \"second\"]}], \"test_summary\": {\"status\": "
                "\"Fail\", \"warnings\": [{\"warning\": \"plugin crashed\", \"error_id\": 91}]}}, {\"name\": \"memory\", "
                "\"results\": [], \"test_summary\": {\"status\": \"Strange\"}}]}]}, \"metadata\": {\"version\": \"4.6.0\"}}");
        assert_string_equal(d.version, "4.6.0");
        assert_int_equal(d.n, 3);
        assert_string_equal(d.results[0].entity, "CPU");
        assert_int_equal(d.results[0].entity_id, 1);
        assert_int_equal(d.results[0].status, DCGM_SKIP);
        assert_string_equal(d.results[0].info, "not licensed");
        assert_true(d.results[1].is_summary);
        assert_int_equal(d.results[1].entity_id, -1);
        assert_string_equal(d.results[1].message, "plugin crashed");
        assert_int_equal(d.results[2].status, DCGM_OTHER);
        assert_string_equal(d.results[2].status_text, "Strange");
        dcgm_diag_done(&d);
}

/* 3.x Deployment tests list every GPU of the run in one string; each GPU gets the
 * result, in the order listed, and a list with a bad member keeps the good ones. */
static void test_gpu_id_lists(void **state) {
        (void)state;
        struct dcgm_diag d = parse_ok(
                "{\"DCGM GPU Diagnostic\": {\"test_categories\": [{\"category\": \"Deployment\", \"tests\": [{\"name\": "
                "\"Denylist\", \"results\": [{\"gpu_ids\": \"0,1,2,3,4,5,6,7\", \"status\": \"PASS\"}]}, null, "
                "{\"name\": \"Inforom\", \"results\": [{\"gpu_ids\": \"5, x,6\", \"status\": \"Fail\"}]}]}, "
                "{\"category\": \"Custom\", \"tests\": [{\"name\": \"software\", \"results\": [{\"gpu_ids\": 3, "
                "\"status\": \"PASS\"}]}]}]}}");
        assert_int_equal(d.n, 8 + 2 + 1);
        for (int i = 0; i < 8; i++) {
                assert_string_equal(d.results[i].test, "Denylist");
                assert_string_equal(d.results[i].entity, "GPU");
                assert_int_equal(d.results[i].entity_id, i);
                assert_int_equal(d.results[i].status, DCGM_PASS);
        }
        assert_int_equal(d.results[8].entity_id, 5);
        assert_int_equal(d.results[9].entity_id, 6);
        assert_int_equal(d.results[9].status, DCGM_FAIL);
        assert_int_equal(d.results[10].entity_id, 3);
        dcgm_diag_done(&d);
}

/* What dcgmi or its wrapper prints around the document (a warning line, a kubectl exec
 * banner, a shell prompt after it) does not hide the result; the first line of it is
 * kept to be shown. */
static void test_text_around_the_document(void **state) {
        (void)state;
        static const char *const texts[] = {
                "\tWARNING: a line before\n\t{\"DCGM GPU Diagnostic\": {\"test_categories\": [{\"tests\": [{\"name\": "
                "\"Denylist\", \"results\": [{\"gpu_ids\": \"0\", \"status\": \"Pass\"}]}]}], \"version\": "
                "\"3.1.0\"}}\n",
                "WARNING: a line before\nand {braces} in a second one\n{\"DCGM GPU Diagnostic\": {\"test_categories\": "
                "[{\"tests\": [{\"name\": \"Denylist\", \"results\": [{\"gpu_ids\": \"0\", \"status\": \"Pass\"}]}]}], "
                "\"version\": \"3.1.0\"}}\nroot@node:~# \n",
        };
        for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
                struct dcgm_diag d = parse_ok(texts[i]);
                assert_int_equal(d.n, 1);
                assert_string_equal(d.version, "3.1.0");
                assert_string_equal(d.results[0].test, "Denylist");
                assert_string_equal(d.preamble, "WARNING: a line before");
                dcgm_diag_done(&d);
        }
        struct dcgm_diag d = parse_ok("{\"DCGM Diagnostic\": {\"runtime_error\": \"x\"}}");
        assert_string_equal(d.preamble, "");
        dcgm_diag_done(&d);
}

static void test_runtime_error(void **state) {
        (void)state;
        struct dcgm_diag d = parse_ok("{\"DCGM Diagnostic\": {\"runtime_error\": \"no GPUs\", \"version\": \"4.1.0\"}}");
        assert_string_equal(d.runtime_error, "no GPUs");
        assert_string_equal(d.version, "4.1.0");
        assert_int_equal(d.n, 0);
        dcgm_diag_done(&d);
}

static void test_refused(void **state) {
        (void)state;
        static const char *const bad[] = {
                "", "not json", "[]", "{}", "{\"DCGM Diagnostic\": 3}", "{\"DCGM Diagnostic\": {}}",
                "{\"DCGM Diagnostic\": {\"test_categories\": {}}}",
                "Successfully ran diagnostic for group.\n+----+\n| Diagnostic | Result |\n",
                "Error: {not the document}\n", "text {\"x\": 1} text",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct dcgm_diag d;
                char err[256] = "";
                assert_int_equal(dcgm_diag_parse(bad[i], strlen(bad[i]), &d, err, sizeof(err)), -EINVAL);
                assert_true(err[0] != '\0');
                assert_null(d.results);
                assert_int_equal(d.n, 0);
        }
}

/* Wrong types inside a good document are skipped, not crashed on. */
static void test_odd_types(void **state) {
        (void)state;
        struct dcgm_diag d = parse_ok(
                "{\"DCGM Diagnostic\": {\"test_categories\": [1, {\"tests\": 2}, {\"tests\": [3, {\"name\": 4}, {\"name\": "
                "\"x\", \"results\": [5, {\"status\": 6, \"gpu_id\": -4, \"warnings\": [7, {\"warning\": 8}], \"info\": "
                "[9]}]}]}]}}");
        assert_int_equal(d.n, 1);
        assert_int_equal(d.results[0].status, DCGM_OTHER);
        assert_int_equal(d.results[0].entity_id, -1);
        assert_string_equal(d.results[0].entity, "");
        assert_string_equal(d.results[0].message, "");
        dcgm_diag_done(&d);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_dcgm_3_2),       cmocka_unit_test(test_dcgm_3_3),
                cmocka_unit_test(test_dcgm_4_summary_and_cpu), cmocka_unit_test(test_runtime_error),
                cmocka_unit_test(test_refused),        cmocka_unit_test(test_odd_types),
                cmocka_unit_test(test_gpu_id_lists),   cmocka_unit_test(test_text_around_the_document),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The result model, JSON text sanitising and the report writers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "core/result.h"
#include "core/json_text.h"
#include "report/result_scope.h"
#include "report/text_safe.h"
#include "report/report_text.h"
#include "report/text_wrap.h"

static const struct check_info dummy = {.id = "test.dummy", .category = "test", .level = LEVEL_QUICK, .title = "t"};

static void test_json_text_sanitises(void **state) {
        (void)state;
        json_t *j = json_text("ok \xc3\xa9");
        assert_string_equal(json_string_value(j), "ok \xc3\xa9");
        json_decref(j);
        j = json_text("bad \xff\xc3 end");
        assert_string_equal(json_string_value(j), "bad \xef\xbf\xbd\xef\xbf\xbd end");
        json_decref(j);
        j = json_text("");
        assert_true(json_is_null(j));
        json_decref(j);
        j = json_text("\xed\xa0\x80"); /* a UTF-16 surrogate encoded as UTF-8 */
        assert_string_equal(json_string_value(j), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
        json_decref(j);
}

static void test_json_text_keep_empty(void **state) {
        (void)state;
        json_t *j = json_text_keep_empty("");
        assert_string_equal(json_string_value(j), "");
        json_decref(j);
        j = json_text_keep_empty(NULL);
        assert_true(json_is_null(j));
        json_decref(j);
        j = json_text_keep_empty("bad \xff");
        assert_string_equal(json_string_value(j), "bad \xef\xbf\xbd");
        json_decref(j);
}

static void test_text_safe(void **state) {
        (void)state;
        char buf[64];
        const char *clean = "GPU \xc3\xa9 \xe2\x9c\x93 \\ [31m";
        assert_ptr_equal(text_safe(clean, buf, sizeof(buf)), clean); /* nothing to do: no copy */
        /* ESC, BEL, DEL, a C1 CSI (U+009B) and a byte that is not UTF-8 */
        assert_string_equal(text_safe("a\x1b[31mb\x07" "c\x7f\xc2\x9b" "d\xff", buf, sizeof(buf)),
                            "a\\x1b[31mb\\x07c\\x7f\\xc2\\x9bd\\xff");
        assert_string_equal(text_safe("\x1b\x1b\x1b", buf, 9), "\\x1b\\x1b"); /* cut at an escape's end */
        assert_string_equal(text_safe(NULL, buf, sizeof(buf)), "");
        char *mem = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&mem, &len);
        assert_non_null(f);
        text_safe_write(f, "x\ny\x1b");
        fclose(f);
        assert_string_equal(mem, "x\\x0ay\\x1b");
        free(mem);
}

static void test_report_tally_and_verdict(void **state) {
        (void)state;
        struct report rep;
        report_init(&rep);
        for (int i = 0; i < 100; i++) { /* past the first growth of the array */
                struct result *r = result_new(&rep, &dummy, "host");
                result_status(r, STATUS_PASS, "fine %d", i);
        }
        report_tally(&rep);
        assert_int_equal(report_verdict(&rep), STATUS_PASS);

        struct result *r = result_new(&rep, &dummy, "0000:1b:00.0");
        result_status(r, STATUS_WARN, "meh");
        result_evidence(r, "source", "/sys/%s", "x");
        report_tally(&rep);
        assert_int_equal(report_verdict(&rep), STATUS_WARN);
        assert_string_equal(rep.results[100].evidence[0].value, "/sys/x");

        r = result_new(&rep, &dummy, "host");
        result_status(r, STATUS_ERROR, "could not read");
        report_tally(&rep);
        assert_int_equal(rep.counts[STATUS_PASS], 100);
        assert_int_equal(rep.counts[STATUS_ERROR], 1);
        assert_int_equal(report_verdict(&rep), STATUS_FAIL);
        report_done(&rep);
}

static void test_new_result_defaults_to_error(void **state) {
        (void)state;
        /* A check that forgets to set a status must not pass silently. */
        struct report rep;
        report_init(&rep);
        result_new(&rep, &dummy, NULL);
        report_tally(&rep);
        assert_int_equal(rep.results[0].status, STATUS_ERROR);
        assert_string_equal(rep.results[0].subject, "host");
        report_done(&rep);
}

static void test_levels(void **state) {
        (void)state;
        assert_int_equal(level_from_name("standard"), LEVEL_STANDARD);
        assert_int_equal(level_from_name("extreme"), _LEVEL_INVALID);
        assert_string_equal(status_name(STATUS_SKIP), "skip");
}

static void test_registry_ids_unique_and_well_formed(void **state) {
        (void)state;
        for (size_t i = 0; i < check_registry_count; i++) {
                const struct check_info *c = check_registry[i];
                assert_non_null(c->run);
                assert_non_null(c->title);
                /* id = category + "." + name */
                size_t n = strlen(c->category);
                assert_int_equal(strncmp(c->id, c->category, n), 0);
                assert_int_equal(c->id[n], '.');
                for (size_t k = i + 1; k < check_registry_count; k++)
                        assert_string_not_equal(c->id, check_registry[k]->id);
                assert_ptr_equal(check_find(c->id), c);
        }
        assert_null(check_find("no.such"));
}

/* The same remedy for many subjects is printed once, under the last, with the list. */
static void test_text_remedy_once(void **state) {
        (void)state;
        struct report rep;
        report_init(&rep);
        const char *subjects[] = {"0000:1b:00.0", "0000:43:00.0", "0000:52:00.0"};
        for (int i = 0; i < 3; i++) {
                struct result *r = result_new(&rep, &dummy, subjects[i]);
                result_status(r, STATUS_FAIL, "too hot");
                result_remedy(r, "Check the fans.");
        }
        struct result *r = result_new(&rep, &dummy, "0000:61:00.0");
        result_status(r, STATUS_WARN, "warm");
        result_remedy(r, "Watch it.");
        report_tally(&rep);
        struct facts f;
        memset(&f, 0, sizeof(f));
        struct run_info run = {.command = "check", .level = LEVEL_QUICK};
        struct text_options opt = {0};
        char *buf = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&buf, &len);
        assert_non_null(out);
        report_text(out, &f, &rep, &run, &opt);
        fclose(out);
        const char *once = "remedy (the 3 above: 0000:1b:00.0, 0000:43:00.0, 0000:52:00.0): Check the fans.";
        const char *at = strstr(buf, once);
        assert_non_null(at);
        assert_null(strstr(at + strlen(once), "Check the fans."));
        assert_true(strstr(buf, "Check the fans.") == at + strlen("remedy (the 3 above: 0000:1b:00.0, 0000:43:00.0, "
                                                                  "0000:52:00.0): "));
        assert_non_null(strstr(buf, "remedy: Watch it."));
        free(buf);
        report_done(&rep);
}

/* The text of rep as check prints it (strict or not); the caller frees it. */
static char *text_of(const struct report *rep, bool strict) {
        struct facts f;
        memset(&f, 0, sizeof(f));
        struct run_info run = {.command = "check", .level = LEVEL_QUICK, .strict = strict};
        struct text_options opt = {0};
        char *buf = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&buf, &len);
        assert_non_null(out);
        report_text(out, &f, rep, &run, &opt);
        fclose(out);
        return buf;
}

/* The verdict line names the checks that failed or erred (ux-review: "the verdict line does
 * not name the failing checks"): each id once, in report order, five then a count. */
static void test_verdict_names_checks(void **state) {
        (void)state;
        assert_true(check_registry_count > 10);
        struct report rep;
        report_init(&rep);
        struct result *r = result_new(&rep, check_registry[0], "host");
        result_status(r, STATUS_PASS, "fine");
        for (size_t i = 1; i <= 7; i++) { /* seven failing checks, the first on two GPUs */
                r = result_new(&rep, check_registry[i], "0000:1b:00.0");
                result_status(r, STATUS_FAIL, "bad");
                if (i == 1) {
                        r = result_new(&rep, check_registry[i], "0000:43:00.0");
                        result_status(r, STATUS_FAIL, "bad");
                }
        }
        r = result_new(&rep, check_registry[8], "host");
        result_status(r, STATUS_ERROR, "could not tell");
        r = result_new(&rep, check_registry[9], "host");
        result_status(r, STATUS_WARN, "meh");
        report_tally(&rep);

        char want[1024];
        snprintf(want, sizeof(want), " — fail: %s, %s, %s, %s, %s and 2 more; error: %s\n", check_registry[1]->id,
                 check_registry[2]->id, check_registry[3]->id, check_registry[4]->id, check_registry[5]->id,
                 check_registry[8]->id);
        char *text = text_of(&rep, false);
        const char *verdict = strstr(text, "Verdict: FAIL — 1 pass, 1 warn, 8 fail, 0 skip, 1 error (");
        assert_non_null(verdict);
        const char *tail = strstr(verdict, ")");
        assert_non_null(tail);
        assert_string_equal(tail + 1, want);
        free(text);

        /* --strict: the warnings fail the node too, so they are named. */
        text = text_of(&rep, true);
        snprintf(want, sizeof(want), "; warn: %s\n", check_registry[9]->id);
        assert_true(strlen(text) > strlen(want));
        assert_string_equal(text + strlen(text) - strlen(want), want);
        free(text);
        report_done(&rep);

        /* A passing report's line is the counts alone. */
        report_init(&rep);
        r = result_new(&rep, check_registry[0], "host");
        result_status(r, STATUS_WARN, "meh");
        report_tally(&rep);
        text = text_of(&rep, false);
        assert_non_null(strstr(text, "Verdict: PASS with warnings — 0 pass, 1 warn, 0 fail, 0 skip, 0 error ("));
        assert_string_equal(text + strlen(text) - 4, "ms)\n");
        free(text);
        report_done(&rep);
}

/* The text of rep with opt; the caller frees it. */
static char *text_with(const struct report *rep, const struct text_options *opt) {
        struct facts f;
        memset(&f, 0, sizeof(f));
        struct run_info run = {.command = "check", .level = LEVEL_QUICK};
        char *buf = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&buf, &len);
        assert_non_null(out);
        report_text(out, &f, rep, &run, opt);
        fclose(out);
        return buf;
}

static size_t count_of(const char *text, const char *what) {
        size_t n = 0;
        for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
                n++;
        return n;
}

static void hung_call(struct report *rep, const struct check_info *c, const char *gpu) {
        struct result *r = result_new(rep, c, gpu);
        result_status(r, STATUS_ERROR, "nvmlDeviceGetPowerUsage did not return within 2000 ms on %s: x unknown", gpu);
        result_observed(r, "unknown: nvmlDeviceGetPowerUsage did not return");
        result_cause(r, "nvmlDeviceGetPowerUsage did not return within 2000 ms");
        result_remedy(r, "Reset the GPU.");
}

/* One hung NVML call stops many checks: one line naming the call, the checks and the GPU,
 * one remedy (ux-review papercut 9: fourteen identical lines). */
static void test_text_one_cause_one_line(void **state) {
        (void)state;
        struct report rep;
        report_init(&rep);
        struct result *r = result_new(&rep, check_registry[0], "0000:1b:00.0");
        result_status(r, STATUS_PASS, "fine");
        for (size_t i = 1; i <= 3; i++)
                hung_call(&rep, check_registry[i], "0000:61:00.0");
        r = result_new(&rep, check_registry[4], "0000:61:00.0"); /* another error: its own line */
        result_status(r, STATUS_ERROR, "could not read");
        report_tally(&rep);
        struct text_options opt = {0};
        char *text = text_with(&rep, &opt);
        assert_int_equal(count_of(text, "\n ! "), 2);
        char want[512];
        snprintf(want, sizeof(want), " 3 checks %*s0000:61:00.0 nvmlDeviceGetPowerUsage did not return within 2000 ms: "
                 "no verdict from %s, %s, %s\n", (int)(strlen(check_registry[4]->id) - strlen("3 checks")), "",
                 check_registry[1]->id, check_registry[2]->id, check_registry[3]->id);
        assert_non_null(strstr(text, want));
        assert_int_equal(count_of(text, "Reset the GPU."), 1);
        assert_int_equal(count_of(text, "x unknown"), 0);
        assert_non_null(strstr(text, "could not read"));
        free(text);

        /* The same call hung on a second GPU: still one line, naming both. */
        for (size_t i = 1; i <= 3; i++)
                hung_call(&rep, check_registry[i], "0000:9d:00.0");
        report_tally(&rep);
        text = text_with(&rep, &opt);
        assert_int_equal(count_of(text, "\n ! "), 2);
        assert_non_null(strstr(text, "2 GPUs       nvmlDeviceGetPowerUsage did not return within 2000 ms on "
                                     "0000:61:00.0, 0000:9d:00.0: no verdict from"));
        assert_int_equal(count_of(text, "Reset the GPU."), 1);
        free(text);
        report_done(&rep);
}

/* --problems: warnings, failures and errors, a count of the rest, the verdict. */
static void test_text_problems_only(void **state) {
        (void)state;
        struct report rep;
        report_init(&rep);
        struct result *r = result_new(&rep, check_registry[0], "host");
        result_status(r, STATUS_PASS, "all good here");
        r = result_new(&rep, check_registry[1], "host");
        result_status(r, STATUS_SKIP, "not applicable here");
        r = result_new(&rep, check_registry[2], "host");
        result_status(r, STATUS_SKIP, "not applicable either");
        r = result_new(&rep, check_registry[3], "0000:61:00.0");
        result_status(r, STATUS_WARN, "warm");
        result_remedy(r, "Watch it.");
        report_tally(&rep);
        struct text_options opt = {.problems = true};
        char *text = text_with(&rep, &opt);
        assert_null(strstr(text, "all good here"));
        assert_null(strstr(text, "not applicable"));
        assert_non_null(strstr(text, "warm\n"));
        assert_non_null(strstr(text, "remedy: Watch it.\n"));
        assert_non_null(strstr(text, "\n 1 passed and 2 skipped not shown (--problems)\nVerdict: PASS with warnings"));
        free(text);
        opt.problems = false;
        text = text_with(&rep, &opt);
        assert_non_null(strstr(text, "all good here"));
        assert_null(strstr(text, "not shown"));
        free(text);
        report_done(&rep);
}

/* At a width, no line is wider and no word is cut; continuations keep their column. */
static void test_text_fits_width(void **state) {
        (void)state;
        struct report rep;
        report_init(&rep);
        struct result *r = result_new(&rep, check_registry[0], "0000:61:00.0");
        result_status(r, STATUS_FAIL, "uncorrectable PCIe errors logged on the path of the GPU, which is a long way");
        result_observed(r, "correctable 127, non-fatal 2, fatal 0 at "
                           "/sys/devices/pci0000:50/0000:50:01.1/0000:51:00.0/0000:52:00.0/0000:53:00.0/aer");
        result_expected(r, "0 errors of every kind since boot");
        result_remedy(r, "Read the error types with `journalctl -k | grep -i aer` and `sudo lspci -vvv -s "
                         "0000:61:00.0` (UESta); reseat the GPU and its riser/cable.");
        report_tally(&rep);
        struct text_options opt = {.width = 60};
        char *text = text_with(&rep, &opt);
        char *save = NULL;
        size_t detail = 4 + strlen(check_registry[0]->id);
        assert_non_null(strstr(text, "`journalctl -k | grep -i aer`")); /* no word cut */
        bool verdict = false;
        for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                assert_true(text_display_width(l) <= 60);
                verdict = verdict || strncmp(l, "Verdict: ", 9) == 0;
                if (!verdict && l[0] == ' ' && l[1] == ' ') /* a continuation or a detail line */
                        assert_true(strspn(l, " ") >= detail);
        }
        free(text);
        report_done(&rep);
}

/* The scope of subjects no golden fixture has: a GPU NVML lists without an address, a
 * measured link, a name judged as a whole; and the node. */
static char *scope_of_subject(const char *subject) {
        struct facts f;
        memset(&f, 0, sizeof(f));
        json_t *o = result_scope_json(&f, subject);
        assert_non_null(o);
        char *text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(o);
        assert_non_null(text);
        return text;
}

static void test_result_scope(void **state) {
        (void)state;
        static const struct {
                const char *subject, *scope;
        } cases[] = {
                {"host", "{\"kind\":\"node\"}"},
                {"nvml:3", "{\"index\":3,\"kind\":\"gpu\",\"pci_bus_id\":null,\"uuid\":null}"},
                {"gpu0 -> gpu1", "{\"ends\":[\"gpu0\",\"gpu1\"],\"kind\":\"link\"}"},
                {"0000:c1:00.0", "{\"kind\":\"pci_device\",\"pci_bus_id\":\"0000:c1:00.0\"}"},
                {"0000:C1:00.0", "{\"kind\":\"group\",\"name\":\"0000:C1:00.0\"}"}, /* not sysfs's form */
                {"ConnectX-7", "{\"kind\":\"group\",\"name\":\"ConnectX-7\"}"},
                {"mlx5_9/1", "{\"kind\":\"group\",\"name\":\"mlx5_9/1\"}"}, /* no such RDMA device here */
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *got = scope_of_subject(cases[i].subject);
                assert_string_equal(got, cases[i].scope);
                free(got);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_json_text_sanitises),
                cmocka_unit_test(test_result_scope),
                cmocka_unit_test(test_json_text_keep_empty),
                cmocka_unit_test(test_text_one_cause_one_line),
                cmocka_unit_test(test_text_problems_only),
                cmocka_unit_test(test_text_fits_width),
                cmocka_unit_test(test_text_safe),
                cmocka_unit_test(test_report_tally_and_verdict),
                cmocka_unit_test(test_new_result_defaults_to_error),
                cmocka_unit_test(test_levels),
                cmocka_unit_test(test_registry_ids_unique_and_well_formed),
                cmocka_unit_test(test_text_remedy_once),
                cmocka_unit_test(test_verdict_names_checks),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

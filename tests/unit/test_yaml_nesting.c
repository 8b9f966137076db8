/* YAML nesting is measured before a policy or a web config is loaded: libyaml's loader is
 * quadratic in flow nesting, 100,000 levels took 15 s (reliability review N24). The deep
 * inputs below are refused at once; this test's time limit is the bound. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/yaml_lib.h"
#include "core/yaml_nesting.h"
#include "policy/policy.h"
#include "serve/web_config.h"

static const struct yaml_lib *yaml_lib(void) {
        char err[512];
        const struct yaml_lib *y = yaml_lib_load(err, sizeof(err));
        if (!y)
                fail_msg("%s", err);
        return y;
}

/* prefix, n opening brackets of kind open, the same number closing, suffix. */
static char *nested(const char *prefix, const char *open, const char *close, size_t n, const char *suffix) {
        size_t lp = strlen(prefix), lo = strlen(open), lc = strlen(close), ls = strlen(suffix);
        char *s = malloc(lp + n * (lo + lc) + ls + 1);
        assert_non_null(s);
        char *p = s;
        memcpy(p, prefix, lp);
        p += lp;
        for (size_t i = 0; i < n; i++, p += lo)
                memcpy(p, open, lo);
        for (size_t i = 0; i < n; i++, p += lc)
                memcpy(p, close, lc);
        memcpy(p, suffix, ls + 1);
        return s;
}

static void test_check(void **state) {
        (void)state;
        unsigned long line = 0;
        /* The top-level mapping is one level: 63 more in it make 64. */
        char *ok = nested("policy: 1\nchecks: ", "[", "]", YAML_MAX_NESTING - 1, "\n");
        assert_int_equal(yaml_nesting_check(yaml_lib(), ok, strlen(ok), YAML_MAX_NESTING, &line), 0);
        free(ok);
        char *over = nested("policy: 1\nchecks: ", "[", "]", YAML_MAX_NESTING, "\n");
        assert_int_equal(yaml_nesting_check(yaml_lib(), over, strlen(over), YAML_MAX_NESTING, &line), -E2BIG);
        assert_int_equal(line, 2);
        free(over);
        /* Flow mappings, and block sequences on one line ("- - - x"). */
        char *maps = nested("a:\n  b: ", "{k: ", "}", 100000, "\n");
        assert_int_equal(yaml_nesting_check(yaml_lib(), maps, strlen(maps), YAML_MAX_NESTING, &line), -E2BIG);
        assert_int_equal(line, 2);
        free(maps);
        char *dashes = nested("policy: 1\nchecks:\n", "- ", "", 100000, "x\n");
        assert_int_equal(yaml_nesting_check(yaml_lib(), dashes, strlen(dashes), YAML_MAX_NESTING, &line), -E2BIG);
        assert_int_equal(line, 3);
        free(dashes);
        /* Brackets in quoted scalars and comments do not nest; bytes that are not YAML are
         * left to the loader to name. */
        char *quoted = nested("a: '", "[", "", 1000, "'\nb: \"{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{\"\n");
        assert_int_equal(yaml_nesting_check(yaml_lib(), quoted, strlen(quoted), YAML_MAX_NESTING, &line), 0);
        free(quoted);
        static const char bad[] = "a: [1, 2\nb: }\n";
        assert_int_equal(yaml_nesting_check(yaml_lib(), bad, strlen(bad), YAML_MAX_NESTING, &line), 0);
        /* A later document counts on its own. */
        char *second = nested("a: 1\n---\nb: ", "[", "]", 1000, "\n");
        assert_int_equal(yaml_nesting_check(yaml_lib(), second, strlen(second), YAML_MAX_NESTING, &line), -E2BIG);
        assert_int_equal(line, 3);
        free(second);
}

/* The review's reproducers, 100,000 levels and a megabyte, through both loaders. */
static void test_loaders(void **state) {
        (void)state;
        static const size_t levels[] = {100000, 500000};
        for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
                char *text = nested("policy: 1\nchecks: ", "[", "]", levels[i], "\n");
                struct policy p;
                char *errors = NULL;
                assert_int_equal(policy_parse("deep.yaml", text, strlen(text), &p, &errors), -EINVAL);
                assert_non_null(errors);
                if (!strstr(errors, "deep.yaml:2: nested deeper than 64 levels"))
                        fail_msg("policy, %zu levels: %s", levels[i], errors);
                free(errors);
                free(text);

                text = nested("basic_auth_users:\n  alice: ", "[", "]", levels[i], "\n");
                struct web_config c;
                char err[256] = "";
                assert_int_equal(web_config_parse(text, strlen(text), NULL, &c, err, sizeof(err)), -EINVAL);
                if (strcmp(err, "line 2: nested deeper than 64 levels") != 0)
                        fail_msg("web config, %zu levels: %s", levels[i], err);
                free(text);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_check),
                cmocka_unit_test(test_loaders),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

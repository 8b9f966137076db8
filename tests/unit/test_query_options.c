/* query parses nvidia-smi's syntax with its own getopt table (src/cmd/query.c); its --help,
 * man page and completions come from cmd_query_spec's table. The two must name the same
 * options, each taking a value or not alike, or the help lists an option query refuses. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "cmd/options.h"
#include "cmd/query.h"
#include "cmd/specs.h"

/* nvidia-smi's other spellings in query's getopt table -> the option cmd_query_spec lists. */
static const char *const aliases[][2] = {{"lms", "loop-ms"}};

static const struct opt *spec_option(const char *name) {
        for (const struct opt *o = cmd_query_spec.opts; o->name; o++)
                if (strcmp(o->name, name) == 0)
                        return o;
        for (const struct opt *o = cmd_fragment(2); cmd_query_spec.help_only && o->name; o++)
                if (strcmp(o->name, name) == 0)
                        return o;
        return NULL;
}

static const struct option *getopt_option(const char *name) {
        for (const struct option *g = cmd_query_getopt; g->name; g++)
                if (strcmp(g->name, name) == 0)
                        return g;
        return NULL;
}

static void check_pair(const struct opt *o, const struct option *g) {
        if (!o || !g)
                fail_msg("query's option %s is in %s only", o ? o->name : g->name,
                         o ? "cmd_query_spec's table" : "its getopt table");
        bool flag = o->kind == ARG_FLAG;
        if (flag != (g->has_arg == no_argument))
                fail_msg("--%s: a flag in one table, taking a value in the other", o->name);
        /* nvidia-smi's short letters (-l, -f, -i, -h) are getopt's values of those options */
        if (o->letter && g->val != o->letter)
                fail_msg("-%c: the spec's letter of --%s, not its getopt value", o->letter, o->name);
}

static void test_spec_options_accepted(void **state) {
        (void)state;
        assert_true(cmd_query_spec.help_only); /* no --timeout, --root or --data-dir: query takes none */
        for (const struct opt *o = cmd_query_spec.opts; o->name; o++)
                check_pair(o, getopt_option(o->name));
        for (const struct opt *o = cmd_fragment(2); o->name; o++)
                check_pair(o, getopt_option(o->name));
}

static void test_getopt_options_described(void **state) {
        (void)state;
        for (const struct option *g = cmd_query_getopt; g->name; g++) {
                const char *name = g->name;
                for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
                        if (strcmp(name, aliases[i][0]) == 0) {
                                const struct option *canon = getopt_option(aliases[i][1]);
                                assert_non_null(canon);
                                assert_int_equal(canon->val, g->val); /* -lms is --loop-ms */
                                name = aliases[i][1];
                        }
                check_pair(spec_option(name), g);
        }
}

/* The spec is the one `gpuvet help query` and the man page generator read. */
static void test_registered(void **state) {
        (void)state;
        assert_ptr_equal(cmd_spec_find("query"), &cmd_query_spec);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_spec_options_accepted),
                cmocka_unit_test(test_getopt_options_described),
                cmocka_unit_test(test_registered),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

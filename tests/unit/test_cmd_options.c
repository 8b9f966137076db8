/* cmd_parse (src/cmd/options.c): the shared fragments merged with a command's own table,
 * a table that reuses a fragment's letter refused as an internal error, own options handed
 * to the command, operands refused or left to it, and the defaults. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cmd/options.h"

struct seen {
        int n;
        int opts[8];
        const char *args[8];
};

static int record(int opt, const char *arg, void *ctx) {
        struct seen *s = ctx;
        if (s->n < 8) {
                s->opts[s->n] = opt;
                s->args[s->n] = arg;
        }
        s->n++;
        return opt == 'x' ? EXIT_USAGE : -1; /* 'x': the command refuses its value */
}

static const struct option own[] = {
        {"json", no_argument, NULL, 'J'},
        {"level", required_argument, NULL, 'l'},
        {"refuse", required_argument, NULL, 'x'},
        {NULL, 0, NULL, 0},
};

static int parse(const struct cmd_spec *spec, struct seen *s, struct cmd_args *a, int argc, ...) {
        static char *argv[16];
        va_list ap;
        va_start(ap, argc);
        for (int i = 0; i < argc; i++)
                argv[i] = va_arg(ap, char *);
        va_end(ap);
        argv[argc] = NULL;
        memset(s, 0, sizeof(*s));
        return cmd_parse(spec, argc, argv, s, a);
}

static void test_own_and_shared(void **state) {
        (void)state;
        const struct cmd_spec spec = {.name = "t", .usage = "u\n", .short_opts = "l:", .own = own, .nvml = true,
                                      .own_option = record};
        struct seen s;
        struct cmd_args a;
        assert_int_equal(parse(&spec, &s, &a, 8, "t", "--json", "-l", "standard", "--root", "/tmp", "--nvml-lib",
                               "/x.so"),
                         -1);
        assert_int_equal(s.n, 2);
        assert_int_equal(s.opts[0], 'J');
        assert_int_equal(s.opts[1], 'l');
        assert_string_equal(s.args[1], "standard");
        assert_string_equal(a.common.root, "/tmp");
        assert_string_equal(a.nvml.lib, "/x.so");
        assert_int_equal(a.common.timeout_s, 30);
        assert_int_equal(a.first_operand, 8);
}

static void test_errors(void **state) {
        (void)state;
        const struct cmd_spec spec = {.name = "t", .usage = "u\n", .own = own, .own_option = record};
        struct seen s;
        struct cmd_args a;
        assert_int_equal(parse(&spec, &s, &a, 2, "t", "--bogus"), EXIT_USAGE);
        assert_int_equal(parse(&spec, &s, &a, 2, "t", "--level"), EXIT_USAGE);
        assert_int_equal(parse(&spec, &s, &a, 2, "t", "operand"), EXIT_USAGE);
        assert_int_equal(parse(&spec, &s, &a, 3, "t", "--timeout", "0"), EXIT_USAGE);
        /* The command's own refusal is its exit code; parsing stops there. */
        assert_int_equal(parse(&spec, &s, &a, 4, "t", "--refuse", "v", "--json"), EXIT_USAGE);
        assert_int_equal(s.n, 1);
        /* Without the NVML fragment its options are unknown. */
        assert_int_equal(parse(&spec, &s, &a, 2, "t", "--no-nvml"), EXIT_USAGE);
        assert_int_equal(parse(&spec, &s, &a, 2, "t", "--help"), EXIT_PASS);
}

static void test_operands_and_timeout(void **state) {
        (void)state;
        const struct cmd_spec spec = {.name = "t", .usage = "u\n", .own = own, .operands = true,
                                      .no_default_timeout = true, .own_option = record};
        struct seen s;
        struct cmd_args a;
        assert_int_equal(parse(&spec, &s, &a, 4, "t", "--json", "memory", "more"), -1);
        assert_int_equal(a.first_operand, 2);
        assert_int_equal(a.common.timeout_s, 0);
}

/* A table reusing a shared option's value would lose one of the two options silently. */
/* --backend: the three names go on (-1), anything else is a usage error. */
static void test_backend(void **state) {
        (void)state;
        const char *b = NULL;
        assert_int_equal(cmd_backend_option("bench", "opencl", &b), -1);
        assert_string_equal(b, "opencl");
        assert_int_equal(cmd_backend_option("check", "auto", &b), -1);
        assert_string_equal(b, "auto");
        assert_int_equal(cmd_backend_option("check", "rocm", &b), EXIT_USAGE);
        assert_string_equal(b, "auto"); /* untouched */
        assert_int_equal(cmd_backend_option("check", "", &b), EXIT_USAGE);
}

static void test_collisions(void **state) {
        (void)state;
        static const struct option root_again[] = {{"rank", required_argument, NULL, 'r'}, {NULL, 0, NULL, 0}};
        static const struct option nvml_again[] = {{"name", no_argument, NULL, 'n'}, {NULL, 0, NULL, 0}};
        struct seen s;
        struct cmd_args a;
        struct cmd_spec spec = {.name = "t", .usage = "u\n", .own = root_again, .own_option = record};
        assert_int_equal(parse(&spec, &s, &a, 1, "t"), EXIT_INTERNAL);
        spec.own = nvml_again;
        assert_int_equal(parse(&spec, &s, &a, 1, "t"), -1); /* no NVML fragment: 'n' is free */
        spec.nvml = true;
        assert_int_equal(parse(&spec, &s, &a, 1, "t"), EXIT_INTERNAL);
        spec.own = own;
        spec.short_opts = "h";
        assert_int_equal(parse(&spec, &s, &a, 1, "t"), EXIT_INTERNAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_own_and_shared),
                cmocka_unit_test(test_errors),
                cmocka_unit_test(test_operands_and_timeout),
                cmocka_unit_test(test_backend),
                cmocka_unit_test(test_collisions),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

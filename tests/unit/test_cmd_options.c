/* cmd_parse and cmd_print_help (src/cmd/options.c): a command's typed table merged with the
 * shared fragments, each value checked by its kind (durations and sizes with units, bounds,
 * choices), --json's optional value, the messages naming what was typed, a value that is an
 * option refused, tables that reuse a fragment's name or letter refused as internal errors,
 * and the help printed from the table within 80 columns. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/options.h"

enum { T_LEVEL = 'l', T_JSON = 'j', T_REFUSE = 0x100, T_WAIT, T_WAIT_MS, T_SIZE, T_COUNT, T_NAME };

struct seen {
        int n;
        int ids[8];
        struct opt_value values[8];
};

static int record(int id, const struct opt_value *v, void *ctx) {
        struct seen *s = ctx;
        if (s->n < 8) {
                s->ids[s->n] = id;
                s->values[s->n] = *v;
        }
        s->n++;
        return id == T_REFUSE ? EXIT_USAGE : -1; /* the command refuses its value */
}

static const struct opt own[] = {
        {.name = "level", .letter = 'l', .kind = ARG_ENUM, .choices = "quick|standard|full", .help = "the level"},
        OPT_JSON("test/1"),
        {.name = "refuse", .kind = ARG_TEXT, .id = T_REFUSE, .help = "always refused"},
        {.name = "wait", .kind = ARG_DURATION, .id = T_WAIT, .min = 1000, .max = 3600 * 1000, .help = "a duration"},
        {.name = "wait-ms", .kind = ARG_DURATION_MS, .id = T_WAIT_MS, .min = 1, .max = 60000, .help = "in ms"},
        {.name = "size", .kind = ARG_SIZE, .id = T_SIZE, .min = 4096, .max = 1ull << 40, .help = "a size"},
        {.name = "count", .kind = ARG_NUMBER, .id = T_COUNT, .min = 2, .max = 64, .help = "a count"},
        {.name = "name", .kind = ARG_TEXT, .id = T_NAME, .help = "a name, with a help text long enough to be wrapped "
                                                                 "onto a second and a third line by the printer"},
        {0},
};

static const struct cmd_spec spec = {
        .name = "t", .summary = "A test command.", .opts = own, .nvml = true, .on_option = record,
};

static char *argv_buf[16];

static int parse_with(const struct cmd_spec *sp, struct seen *s, struct cmd_args *a, int argc, va_list ap) {
        for (int i = 0; i < argc; i++)
                argv_buf[i] = va_arg(ap, char *);
        argv_buf[argc] = NULL;
        memset(s, 0, sizeof(*s));
        return cmd_parse(sp, argc, argv_buf, s, a);
}

static int parse(struct seen *s, struct cmd_args *a, int argc, ...) {
        va_list ap;
        va_start(ap, argc);
        int r = parse_with(&spec, s, a, argc, ap);
        va_end(ap);
        return r;
}

/* Standard error of one parse, to check the message names what was typed. */
static char message[512];

static int parse_err(struct seen *s, struct cmd_args *a, int argc, ...) {
        fflush(stderr);
        int saved = dup(STDERR_FILENO);
        FILE *tmp = tmpfile();
        assert_non_null(tmp);
        dup2(fileno(tmp), STDERR_FILENO);
        va_list ap;
        va_start(ap, argc);
        int r = parse_with(&spec, s, a, argc, ap);
        va_end(ap);
        fflush(stderr);
        dup2(saved, STDERR_FILENO);
        close(saved);
        rewind(tmp);
        size_t n = fread(message, 1, sizeof(message) - 1, tmp);
        message[n] = '\0';
        fclose(tmp);
        return r;
}

static void test_own_and_shared(void **state) {
        (void)state;
        struct seen s;
        struct cmd_args a;
        assert_int_equal(parse(&s, &a, 8, "t", "--json", "-l", "standard", "--root", "/tmp", "--nvml-lib", "/x.so"), -1);
        assert_int_equal(s.n, 2);
        assert_int_equal(s.ids[0], T_JSON);
        assert_string_equal(s.values[0].text, "-"); /* --json before an option: standard output */
        assert_int_equal(s.ids[1], T_LEVEL);
        assert_string_equal(s.values[1].text, "standard");
        assert_int_equal(s.values[1].n, 1); /* the choice's index */
        assert_string_equal(a.common.root, "/tmp");
        assert_string_equal(a.nvml.lib, "/x.so");
        assert_int_equal(a.common.timeout_s, 30);
        assert_int_equal(a.first_operand, 8);
}

static void test_kinds(void **state) {
        (void)state;
        struct seen s;
        struct cmd_args a;
        assert_int_equal(parse(&s, &a, 5, "t", "--wait", "1m30s", "--wait-ms", "250"), -1);
        assert_int_equal(s.values[0].n, 90000);
        assert_int_equal(s.values[1].n, 250); /* a bare number of an *-ms option is milliseconds */
        assert_int_equal(parse(&s, &a, 2, "t", "--wait-ms=2s"), -1);
        assert_int_equal(s.values[0].n, 2000);
        assert_int_equal(parse(&s, &a, 2, "t", "--wait=45"), -1); /* bare: seconds */
        assert_int_equal(s.values[0].n, 45000);
        assert_int_equal(parse(&s, &a, 3, "t", "--size", "256MiB"), -1);
        assert_int_equal(s.values[0].n, 256ull << 20);
        assert_int_equal(parse(&s, &a, 3, "t", "--count", "64"), -1);
        assert_int_equal(s.values[0].n, 64);
        assert_int_equal(parse(&s, &a, 3, "t", "--timeout", "2m"), -1);
        assert_int_equal(a.common.timeout_s, 120);
        assert_int_equal(parse(&s, &a, 3, "t", "--nvml-call-timeout-ms", "3s"), -1);
        assert_int_equal(a.nvml.dl.call_ms, 3000);

        assert_int_equal(parse_err(&s, &a, 3, "t", "--wait", "2h"), EXIT_USAGE);
        assert_non_null(strstr(message, "--wait: expected a duration from 1s to 1h"));
        assert_int_equal(parse_err(&s, &a, 3, "t", "--size", "1K"), EXIT_USAGE);
        assert_non_null(strstr(message, "--size: expected a size from 4K to 1T"));
        assert_int_equal(parse_err(&s, &a, 3, "t", "--count", "1"), EXIT_USAGE);
        assert_non_null(strstr(message, "--count: expected a whole number from 2 to 64, not \"1\""));
        assert_int_equal(parse_err(&s, &a, 3, "t", "--count", "-3"), EXIT_USAGE);
        assert_int_equal(parse_err(&s, &a, 3, "t", "-l", "nope"), EXIT_USAGE);
        assert_non_null(strstr(message, "-l: expected quick, standard or full, not \"nope\""));
        assert_int_equal(parse_err(&s, &a, 3, "t", "--name", ""), EXIT_USAGE);
        assert_non_null(strstr(message, "--name: empty value"));
        assert_int_equal(s.n, 0); /* nothing reached the command */
}

static void test_json_value(void **state) {
        (void)state;
        struct seen s;
        struct cmd_args a;
        assert_int_equal(parse(&s, &a, 2, "t", "--json"), -1);
        assert_string_equal(s.values[0].text, "-");
        assert_int_equal(parse(&s, &a, 3, "t", "--json", "-"), -1);
        assert_string_equal(s.values[0].text, "-");
        assert_int_equal(parse(&s, &a, 3, "t", "-j", "/tmp/out.json"), -1);
        assert_string_equal(s.values[0].text, "/tmp/out.json");
        assert_int_equal(parse(&s, &a, 2, "t", "--json=/tmp/o.json"), -1);
        assert_string_equal(s.values[0].text, "/tmp/o.json");
        /* the option after it is an option, not its file */
        assert_int_equal(parse(&s, &a, 4, "t", "--json", "-l", "full"), -1);
        assert_int_equal(s.n, 2);
        assert_string_equal(s.values[0].text, "-");
        assert_string_equal(s.values[1].text, "full");
        /* a file where none can be written is refused before any work */
        assert_int_equal(parse_err(&s, &a, 3, "t", "--json", "/nonexistent/dir/x.json"), EXIT_USAGE);
        assert_non_null(strstr(message, "--json /nonexistent/dir/x.json"));
}

static void test_errors(void **state) {
        (void)state;
        struct seen s;
        struct cmd_args a;
        assert_int_equal(parse_err(&s, &a, 2, "t", "--bogus"), EXIT_USAGE);
        assert_non_null(strstr(message, "unknown option --bogus"));
        assert_int_equal(parse_err(&s, &a, 2, "t", "--bogus=3"), EXIT_USAGE);
        assert_non_null(strstr(message, "unknown option --bogus ("));
        /* an unknown letter in a cluster or with its value is named, not the argument before it */
        assert_int_equal(parse_err(&s, &a, 4, "t", "--name", "cpu", "-Z2"), EXIT_USAGE);
        assert_non_null(strstr(message, "unknown option -Z"));
        assert_int_equal(parse_err(&s, &a, 3, "t", "--no-nvml", "-Zx"), EXIT_USAGE);
        assert_non_null(strstr(message, "unknown option -Z"));
        assert_int_equal(parse_err(&s, &a, 2, "t", "--level"), EXIT_USAGE);
        assert_non_null(strstr(message, "option --level needs a value"));
        assert_int_equal(parse_err(&s, &a, 2, "t", "-l"), EXIT_USAGE);
        assert_non_null(strstr(message, "option -l needs a value"));
        assert_int_equal(parse_err(&s, &a, 2, "t", "--no-nvml=yes"), EXIT_USAGE);
        assert_non_null(strstr(message, "option --no-nvml takes no value"));
        /* a value that is an option: the user forgot the value */
        assert_int_equal(parse_err(&s, &a, 3, "t", "--name", "--no-nvml"), EXIT_USAGE);
        assert_non_null(strstr(message, "option --name needs a value, not the option \"--no-nvml\""));
        assert_int_equal(parse(&s, &a, 2, "t", "--name=-dash"), -1); /* attached: meant */
        assert_string_equal(s.values[0].text, "-dash");
        assert_int_equal(parse_err(&s, &a, 2, "t", "operand"), EXIT_USAGE);
        assert_non_null(strstr(message, "unexpected argument \"operand\""));
        assert_int_equal(parse(&s, &a, 3, "t", "--timeout", "0"), EXIT_USAGE);
        /* The command's own refusal is its exit code; parsing stops there. */
        assert_int_equal(parse(&s, &a, 4, "t", "--refuse", "v", "--json"), EXIT_USAGE);
        assert_int_equal(s.n, 1);
}

static void test_operands_and_timeout(void **state) {
        (void)state;
        const struct cmd_spec sp = {.name = "t", .summary = "T.", .opts = own, .takes_operands = true,
                                    .no_default_timeout = true, .on_option = record};
        struct seen s;
        struct cmd_args a;
        char *argv[] = {"t", "-l", "full", "memory", "more", NULL};
        memset(&s, 0, sizeof(s));
        assert_int_equal(cmd_parse(&sp, 5, argv, &s, &a), -1);
        assert_int_equal(a.first_operand, 3);
        assert_int_equal(a.common.timeout_s, 0);
        /* Without the NVML fragment its options are unknown. */
        char *nvml[] = {"t", "--no-nvml", NULL};
        assert_int_equal(cmd_parse(&sp, 2, nvml, &s, &a), EXIT_USAGE);
}

static void test_backend(void **state) {
        (void)state;
        const char *b = NULL;
        assert_int_equal(cmd_backend_option("bench", "opencl", &b), -1);
        assert_string_equal(b, "opencl");
        assert_int_equal(cmd_backend_option("check", "rocm", &b), EXIT_USAGE);
        assert_string_equal(b, "opencl"); /* untouched */
}

/* A table reusing a shared option's name or letter would lose one of the two silently. */
static void test_collisions(void **state) {
        (void)state;
        static const struct opt root_letter[] = {{.name = "rank", .letter = 'r', .kind = ARG_NUMBER, .help = "r"}, {0}};
        static const struct opt nvml_name[] = {{.name = "no-nvml", .kind = ARG_FLAG, .help = "n"}, {0}};
        static const struct opt help_letter[] = {{.name = "hosts", .letter = 'h', .kind = ARG_LIST, .help = "h"}, {0}};
        struct seen s;
        struct cmd_args a;
        char *argv[] = {"t", NULL};
        struct cmd_spec sp = {.name = "t", .summary = "T.", .opts = root_letter, .on_option = record};
        assert_int_equal(cmd_parse(&sp, 1, argv, &s, &a), EXIT_INTERNAL);
        sp.opts = nvml_name;
        assert_int_equal(cmd_parse(&sp, 1, argv, &s, &a), -1); /* no NVML fragment: the name is free */
        sp.nvml = true;
        assert_int_equal(cmd_parse(&sp, 1, argv, &s, &a), EXIT_INTERNAL);
        sp.opts = help_letter;
        assert_int_equal(cmd_parse(&sp, 1, argv, &s, &a), EXIT_INTERNAL);
}

static void test_help(void **state) {
        (void)state;
        FILE *tmp = tmpfile();
        assert_non_null(tmp);
        cmd_print_help(&spec, tmp);
        rewind(tmp);
        char line[256];
        bool saw[8] = {false};
        const char *const want[] = {"  -l, --level WORD", "  -j, --json [FILE|-]", "      --wait DURATION",
                                    "      --size SIZE", "NVML options:", "  -T, --timeout DURATION",
                                    "Common options:", "      --nvml-lib PATH"};
        while (fgets(line, sizeof(line), tmp)) {
                size_t cols = 0;
                for (const char *p = line; *p && *p != '\n'; p++)
                        cols += ((unsigned char)*p & 0xC0) != 0x80;
                assert_true(cols <= 80);
                for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
                        saw[i] |= strncmp(line, want[i], strlen(want[i])) == 0;
        }
        fclose(tmp);
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
                if (!saw[i])
                        fail_msg("help lacks \"%s\"", want[i]);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_own_and_shared), cmocka_unit_test(test_kinds),
                cmocka_unit_test(test_json_value),     cmocka_unit_test(test_errors),
                cmocka_unit_test(test_operands_and_timeout), cmocka_unit_test(test_backend),
                cmocka_unit_test(test_collisions),     cmocka_unit_test(test_help),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

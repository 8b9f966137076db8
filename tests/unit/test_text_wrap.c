/* Text lines fitted to the terminal (src/report/text_wrap.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "report/text_wrap.h"

/* text_wrap_line's output for line; the caller frees it. */
static char *wrapped(const char *line, size_t indent, size_t width) {
        char *buf = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&buf, &len);
        assert_non_null(out);
        text_wrap_line(out, line, indent, width);
        assert_int_equal(fclose(out), 0);
        return buf;
}

/* Every output line no wider than width, and each continuation starting with indent
 * spaces and then a non-space. */
static void assert_fits(const char *text, size_t indent, size_t width) {
        char *copy = strdup(text);
        assert_non_null(copy);
        size_t n = 0;
        for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save), n++) {
                if (text_display_width(l) > width)
                        fail_msg("line wider than %zu: \"%s\"", width, l);
                if (n > 0) {
                        assert_true(strspn(l, " ") == indent);
                        assert_true(l[indent] != '\0');
                }
        }
        free(copy);
}

/* The words of text (split at spaces and newlines), joined by one space. */
static char *words(const char *text) {
        char *out = calloc(1, strlen(text) + 1), *copy = strdup(text);
        assert_non_null(out);
        assert_non_null(copy);
        for (char *save = NULL, *w = strtok_r(copy, " \n", &save); w; w = strtok_r(NULL, " \n", &save)) {
                if (*out)
                        strcat(out, " ");
                strcat(out, w);
        }
        free(copy);
        return out;
}

static const char *const remedy =
        "                   remedy: Read the error types with `journalctl -k | grep -i aer` and `sudo lspci -vvv -s "
        "0000:61:00.0` (UESta); reseat the GPU and its riser/cable, update BIOS and GPU firmware, and replace the "
        "part if errors return after a reboot (counters reset at boot).";

static void test_wraps_at_words_within_80_columns(void **state) {
        (void)state;
        char *text = wrapped(remedy, 19, 80);
        assert_fits(text, 19, 80);
        char *got = words(text), *want = words(remedy);
        assert_string_equal(got, want); /* no word cut, none lost */
        /* Each line is as full as the next word allows. */
        assert_non_null(strstr(text, "\n                   aer` and `sudo"));
        const char *first = "                   remedy: Read the error types with `journalctl -k | grep -i\n";
        assert_true(strncmp(text, first, strlen(first)) == 0);
        free(got);
        free(want);
        free(text);
}

static void test_no_width_no_wrapping(void **state) {
        (void)state;
        char *text = wrapped(remedy, 19, 0);
        assert_int_equal(strlen(text), strlen(remedy) + 1);
        assert_string_equal(text + strlen(remedy), "\n");
        free(text);
        text = wrapped("short line  ", 4, 80); /* fits: as is, trailing spaces dropped */
        assert_string_equal(text, "short line\n");
        free(text);
}

static void test_long_path_breaks_after_a_slash(void **state) {
        (void)state;
        const char *line = "    observed: /sys/devices/pci0000:50/0000:50:01.1/0000:51:00.0/0000:52:00.0/0000:53:00.0/"
                           "aer_dev_nonfatal unreadable";
        char *text = wrapped(line, 4, 40);
        assert_fits(text, 4, 40);
        /* Every line that ends inside the path ends at a '/'. */
        for (const char *nl = strchr(text, '\n'); nl && nl[1]; nl = strchr(nl + 1, '\n'))
                if (nl[-1] != 'd' && nl[-1] != ':') /* "observed:" alone, "...nonfatal unreadable" */
                        assert_int_equal(nl[-1], '/');
        /* Put back together, the path is whole. */
        char *joined = calloc(1, strlen(text) + 1);
        assert_non_null(joined);
        for (const char *p = text; *p; p++) {
                if (*p != '\n') {
                        strncat(joined, p, 1);
                        continue;
                }
                for (int k = 0; k < 4 && p[1] == ' '; k++) /* the continuation's indent */
                        p++;
        }
        assert_non_null(strstr(joined, "/sys/devices/pci0000:50/0000:50:01.1/0000:51:00.0/0000:52:00.0/"
                                       "0000:53:00.0/aer_dev_nonfatal"));
        free(joined);
        free(text);
}

static void test_long_word_without_slash_hard_breaks(void **state) {
        (void)state;
        char line[128] = "x ";
        memset(line + 2, 'a', 70);
        char *text = wrapped(line, 2, 30);
        assert_fits(text, 2, 30);
        /* 'x', then the word from column 2: 28 + 28 + 14 characters. */
        assert_int_equal(strlen(text), 2 + 28 + 1 + 2 + 28 + 1 + 2 + 14 + 1);
        free(text);
}

static void test_utf8_and_escapes_have_their_display_width(void **state) {
        (void)state;
        const char *first;
        assert_int_equal(text_display_width("\xe2\x9c\x93 \xe2\x9a\xa0 \xe2\x9c\x97"), 5); /* ✓ ⚠ ✗ */
        assert_int_equal(text_display_width("caf\xc3\xa9"), 4);                             /* café */
        assert_int_equal(text_display_width("e\xcc\x81"), 1);                    /* e + combining acute */
        assert_int_equal(text_display_width("\xe6\xbc\xa2\xe5\xad\x97"), 4);     /* two CJK ideographs */
        assert_int_equal(text_display_width("\033[31m\xe2\x9c\x97\033[0m x"), 3); /* coloured ✗, space, x */
        assert_int_equal(text_display_width("\xff"), 1);                          /* not UTF-8: one cell */

        /* 20 columns of "é" words fit 20 although they are 37 bytes; 21 columns do not. */
#define E5 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
        char *text = wrapped(E5 " " E5 " " E5 " \xc3\xa9\xc3\xa9", 0, 20);
        assert_ptr_equal(strchr(text, '\n'), text + strlen(text) - 1);
        free(text);
        text = wrapped(E5 " " E5 " " E5 " \xc3\xa9\xc3\xa9\xc3\xa9", 0, 20);
        assert_string_equal(text, E5 " " E5 " " E5 "\n\xc3\xa9\xc3\xa9\xc3\xa9\n");
        free(text);
#undef E5
        text = wrapped(" \033[31m\xe2\x9c\x97\033[0m pcie.aer 0000:61:00.0 uncorrectable PCIe errors", 14, 40);
        assert_fits(text, 14, 40);
        /* The colour codes stay whole, on the first line with their ✗. */
        first = " \033[31m\xe2\x9c\x97\033[0m pcie.aer 0000:61:00.0 uncorrectable\n";
        assert_true(strncmp(text, first, strlen(first)) == 0);
        free(text);
}

static void test_deep_indent_on_a_narrow_line(void **state) {
        (void)state;
        /* Continuations keep half the line even when asked to indent past it. */
        char *text = wrapped("aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj", 30, 20);
        assert_fits(text, 10, 20);
        free(text);
}

/* A whole report: each line wrapped on its own, continuations under the line's own text. */
static void test_block(void **state) {
        (void)state;
        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        assert_non_null(mem);
        text_wrap_block(mem, "Nodes: 9\n  gpu.driver_version: 5 nodes: alpha, beta, gamma, delta, epsilon\nend\n", 40);
        fclose(mem);
        assert_string_equal(text, "Nodes: 9\n"
                                  "  gpu.driver_version: 5 nodes: alpha,\n"
                                  "    beta, gamma, delta, epsilon\n"
                                  "end\n");
        free(text);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_block),
                cmocka_unit_test(test_wraps_at_words_within_80_columns),
                cmocka_unit_test(test_no_width_no_wrapping),
                cmocka_unit_test(test_long_path_breaks_after_a_slash),
                cmocka_unit_test(test_long_word_without_slash_hard_breaks),
                cmocka_unit_test(test_utf8_and_escapes_have_their_display_width),
                cmocka_unit_test(test_deep_indent_on_a_narrow_line),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The HTML writer (src/html/): escaping of hostile strings, the chart scales (round ticks,
 * value -> pixel, tick labels, text fitting), box statistics, and the charts' output for
 * empty, single-value and NaN/inf series. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "html/html_buf.h"
#include "html/html_escape.h"
#include "html/html_page.h"
#include "html/svg_bars.h"
#include "html/svg_distribution.h"
#include "html/svg_scale.h"
#include "html/svg_series.h"
#include "report/fleet_html.h"
#include "report/html_report.h"

#include <errno.h>
#include <jansson.h>

static char *escaped(const char *s) {
        struct html_buf b = {0};
        html_escape(&b, s);
        char *out = html_buf_take(&b, NULL);
        assert_non_null(out);
        return out;
}

static void expect_escape(const char *in, const char *want) {
        char *out = escaped(in);
        assert_string_equal(out, want);
        free(out);
}

static void test_escape(void **state) {
        (void)state;
        expect_escape("plain text 1.5", "plain text 1.5");
        expect_escape("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;");
        expect_escape("a\"b'c&d", "a&quot;b&#39;c&amp;d");
        expect_escape("tab\tnew\nline", "tab\tnew\nline");
        expect_escape("esc\x1b[31mred\x7f", "esc\\x1B[31mred\\x7F");
        expect_escape("bad \xff byte", "bad &#xFFFD; byte");
        expect_escape("cut \xe2\x82", "cut &#xFFFD;&#xFFFD;");          /* a sequence cut by the end */
        expect_escape("overlong \xc0\xaf", "overlong &#xFFFD;&#xFFFD;"); /* an overlong '/' */
        expect_escape("C1 \xc2\x9b", "C1 \\xC2\\x9B");
        expect_escape("\xe2\x9c\x93 \xc2\xb0" "C", "\xe2\x9c\x93 \xc2\xb0" "C");
        expect_escape("", "");
        struct html_buf b = {0};
        html_escape(&b, NULL);
        html_escape_n(&b, "ab<cd", 3);
        html_escapef(&b, "%d<%s", 1, "\"");
        char *out = html_buf_take(&b, NULL);
        assert_string_equal(out, "ab&lt;1&lt;&quot;");
        free(out);
}

static void expect_code_spans(const char *in, const char *want) {
        struct html_buf b = {0};
        html_escape_code_spans(&b, in);
        char *out = html_buf_take(&b, NULL);
        assert_string_equal(out, want);
        free(out);
}

/* Remedies quote commands in backticks; the page showed them literally (ux-review). */
static void test_code_spans(void **state) {
        (void)state;
        expect_code_spans("run `lspci -vv -s 0000:61:00.0` as root",
                          "run <code>lspci -vv -s 0000:61:00.0</code> as root");
        expect_code_spans("`a<b` and `c&d`", "<code>a&lt;b</code> and <code>c&amp;d</code>");
        expect_code_spans("a lone ` backtick", "a lone ` backtick");
        expect_code_spans("`x` then ` alone", "<code>x</code> then ` alone");
        expect_code_spans("empty `` pair", "empty `` pair");
        expect_code_spans("`<script>`", "<code>&lt;script&gt;</code>");
        expect_code_spans("", "");
}

static void expect_href(const char *from_dir, const char *to, const char *want) {
        struct html_buf b = {0};
        fleet_html_href(&b, from_dir, to);
        char *out = html_buf_take(&b, NULL);
        assert_string_equal(out, want);
        free(out);
}

/* The fleet page's links to the nodes' pages: relative to the page, percent-encoded. */
static void test_href(void **state) {
        (void)state;
        expect_href("/r", "/r/node-bad/gpuvet-check-quick.html", "node-bad/gpuvet-check-quick.html");
        expect_href("/r/pages", "/r/node 1/a#b?.html", "../node%201/a%23b%3F.html");
        expect_href("/r/ab", "/r/a/x.html", "../a/x.html"); /* a shared prefix is not a shared directory */
        expect_href("/a/b/c", "/x.html", "../../../x.html");
        expect_href("/", "/a/x.html", "a/x.html");
        expect_href("/r", "/r/x.html", "x.html");
        expect_href(NULL, "/srv/r/x\".html", "/srv/r/x%22.html");
}

static void test_element_and_table(void **state) {
        (void)state;
        struct html_buf b = {0};
        html_element(&b, "td", "x", "<b>");
        static const char *const h[] = {"a\"", "b"};
        const char *cells[] = {"<i>", NULL};
        html_table_begin(&b, NULL, h, 2);
        html_table_row(&b, cells, 2);
        html_table_end(&b);
        char *out = html_buf_take(&b, NULL);
        assert_non_null(strstr(out, "<td class=\"x\">&lt;b&gt;</td>"));
        assert_non_null(strstr(out, "<th>a&quot;</th>"));
        assert_non_null(strstr(out, "<td>&lt;i&gt;</td><td class=\"muted\">\xE2\x80\x94</td>"));
        free(out);
}

static void test_axis(void **state) {
        (void)state;
        struct svg_axis a;
        svg_axis_nice(0, 3350, 8, &a);
        assert_true(a.lo == 0 && a.hi == 3500 && a.step == 500 && a.n_ticks == 8);
        /* steps of 5 would take 6 intervals once both ends are rounded out: the next step */
        svg_axis_nice(65.9, 90.2, 5, &a);
        assert_true(a.lo == 60 && a.hi == 100 && a.step == 10 && a.n_ticks == 5);
        svg_axis_nice(66, 90, 6, &a);
        assert_true(a.lo == 65 && a.hi == 90 && a.step == 5 && a.n_ticks == 6);
        svg_axis_nice(0, 0.3, 3, &a);
        assert_true(fabs(a.step - 0.1) < 1e-12 && a.n_ticks == 4);
        assert_true(svg_axis_tick(&a, 3) == 0.3); /* not 0.30000000000000004 */
        svg_axis_nice(-7, 12, 4, &a);
        assert_true(a.lo <= -7 && a.hi >= 12 && a.n_ticks - 1 <= 4);
        /* one value: from 0 when positive; around 0 when 0 */
        svg_axis_nice(42, 42, 5, &a);
        assert_true(a.lo == 0 && a.hi >= 42);
        svg_axis_nice(0, 0, 5, &a);
        assert_true(a.lo == 0 && a.hi == 1);
        svg_axis_nice(-3, -3, 5, &a);
        assert_true(a.lo <= -3 && a.hi == 0);
        /* not finite: the unit axis */
        svg_axis_nice(NAN, 5, 5, &a);
        assert_true(a.lo == 0 && a.hi == 1);
        svg_axis_nice(0, INFINITY, 5, &a);
        assert_true(a.lo == 0 && a.hi == 1);
        svg_axis_nice(-1e308, 1e308, 5, &a);
        assert_true(a.lo == 0 && a.hi == 1);
        /* reversed bounds are put in order; 0 intervals means 1 */
        svg_axis_nice(10, 0, 0, &a);
        assert_true(a.lo == 0 && a.hi >= 10 && a.n_ticks == 2);
        /* every axis covers its data, with at most the intervals asked */
        for (double hi = 0.001; hi < 1e7; hi *= 1.37)
                for (unsigned k = 2; k <= 10; k++) {
                        svg_axis_nice(hi / 3, hi, k, &a);
                        assert_true(a.lo <= hi / 3 && a.hi >= hi && a.n_ticks >= 2 && a.n_ticks - 1 <= k);
                }
}

static void test_map(void **state) {
        (void)state;
        struct svg_axis a = {.lo = 0, .hi = 100, .step = 20, .n_ticks = 6};
        assert_true(svg_axis_map(&a, 0, 10, 110) == 10);
        assert_true(svg_axis_map(&a, 50, 10, 110) == 60);
        assert_true(svg_axis_map(&a, 100, 10, 110) == 110);
        assert_true(svg_axis_map(&a, 150, 10, 110) == 110); /* clamped */
        assert_true(svg_axis_map(&a, -5, 10, 110) == 10);
        assert_true(svg_axis_map(&a, 25, 300, 100) == 250); /* a y axis runs upwards */
        assert_true(svg_axis_map(&a, NAN, 10, 110) == 10);
        struct svg_axis flat = {.lo = 5, .hi = 5, .step = 1, .n_ticks = 1};
        assert_true(svg_axis_map(&flat, 5, 10, 110) == 10);
}

static void test_format(void **state) {
        (void)state;
        char buf[32];
        assert_string_equal(svg_format_tick(500, 100, buf, sizeof(buf)), "500");
        assert_string_equal(svg_format_tick(0.25, 0.25, buf, sizeof(buf)), "0.25");
        assert_string_equal(svg_format_tick(1.5, 0.5, buf, sizeof(buf)), "1.5");
        assert_string_equal(svg_format_tick(0.3, 0.1, buf, sizeof(buf)), "0.3");
        assert_string_equal(svg_format_tick(-1e-17, 0.1, buf, sizeof(buf)), "0.0");
        assert_string_equal(svg_format_value(49994.71914, buf, sizeof(buf)), "49995");
        assert_string_equal(svg_format_value(24.99069107, buf, sizeof(buf)), "24.99");
        assert_string_equal(svg_format_value(NAN, buf, sizeof(buf)), "-");
}

static void test_fit(void **state) {
        (void)state;
        char buf[64];
        assert_false(svg_text_fit("GPU 0", 100, 10, buf, sizeof(buf)));
        assert_string_equal(buf, "GPU 0");
        /* 10 px font: 6 px a character; 60 px holds the ellipsis and 9 characters */
        assert_true(svg_text_fit("NVIDIA H100 80GB HBM3 0000:1b:00.0", 60, 10, buf, sizeof(buf)));
        assert_string_equal(buf, "NVIDIA H1\xE2\x80\xA6");
        assert_true(svg_text_width(buf, 10) <= 60);
        /* never cut inside a character */
        assert_true(svg_text_fit("\xc2\xb0\xc2\xb0\xc2\xb0\xc2\xb0\xc2\xb0", 24, 10, buf, sizeof(buf)));
        assert_string_equal(buf, "\xc2\xb0\xc2\xb0\xc2\xb0\xE2\x80\xA6");
        char tiny[3];
        assert_true(svg_text_fit("long text here", 30, 10, tiny, sizeof(tiny)));
        assert_string_equal(tiny, "");
        assert_false(svg_text_fit(NULL, 10, 10, buf, sizeof(buf)));
        assert_string_equal(buf, "");
}

static void test_box(void **state) {
        (void)state;
        struct svg_box box;
        const double v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 100, NAN, INFINITY};
        assert_int_equal(svg_box_stats(v, 12, &box), 10);
        assert_true(box.q1 == 3.25 && box.median == 5.5 && box.q3 == 7.75);
        assert_true(box.high_fence == 7.75 + 1.5 * 4.5 && box.whisker_high == 9 && box.whisker_low == 1);
        assert_int_equal(svg_box_stats(v, 0, &box), 0);
        const double one[] = {NAN, 7};
        assert_int_equal(svg_box_stats(one, 2, &box), 1);
        assert_true(box.q1 == 7 && box.median == 7 && box.q3 == 7 && box.whisker_low == 7 && box.whisker_high == 7);
}

static size_t count(const char *hay, const char *needle) {
        size_t n = 0;
        for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
                n++;
        return n;
}

static char *take(struct html_buf *b) {
        char *out = html_buf_take(b, NULL);
        assert_non_null(out);
        return out;
}

static void test_charts(void **state) {
        (void)state;
        struct html_buf b = {0};
        /* nothing to draw: nothing written */
        svg_bars(&b, "t", "GB/s", NULL, 0);
        svg_series_chart(&b, "t", "s", "W", NULL, 0);
        svg_distribution(&b, "t", "W", NULL, 0);
        char *out = take(&b);
        assert_string_equal(out, "");
        free(out);

        const struct svg_bar bars[] = {
                {.label = "<triad>", .value = 1951.5, .reference = 3350, .threshold = 2512, .status = STATUS_FAIL},
                {.label = "copy", .value = NAN, .reference = NAN, .threshold = NAN, .status = STATUS_ERROR},
        };
        svg_bars(&b, "memory \"GB/s\"", "GB/s", bars, 2);
        out = take(&b);
        assert_int_equal(count(out, "<svg"), 1);
        assert_int_equal(count(out, "<rect class=\"bar "), 1);
        assert_int_equal(count(out, "<g class=\"row\""), 2);
        assert_int_equal(count(out, "class=\"threshold\""), 2); /* the bar's and the legend's */
        assert_non_null(strstr(out, "&lt;triad&gt;"));
        assert_non_null(strstr(out, "no figure"));
        assert_non_null(strstr(out, "aria-label=\"memory &quot;GB/s&quot;\""));
        assert_null(strstr(out, "<triad>"));
        free(out);

        /* NaN and infinite points are skipped and break the line; a single point is a dot;
         * a series with none is named "(no data)" */
        const double x[] = {0, 1, 2, 3, 4}, y[] = {60, NAN, 70, 71, INFINITY};
        const double x1[] = {2}, y1[] = {5};
        const double xn[] = {NAN}, yn[] = {1};
        const struct svg_series series[] = {
                {.name = "GPU 0", .x = x, .y = y, .n = 5},
                {.name = "GPU 1", .x = x1, .y = y1, .n = 1},
                {.name = "GPU 2", .x = xn, .y = yn, .n = 1},
        };
        svg_series_chart(&b, "temperature", "s", "C", series, 3);
        out = take(&b);
        assert_int_equal(count(out, "<path class=\"series"), 3);
        assert_non_null(strstr(out, "data-points=\"3\""));
        assert_non_null(strstr(out, "data-points=\"1\""));
        assert_non_null(strstr(out, "data-points=\"0\""));
        assert_non_null(strstr(out, "d=\"M64.0 "));  /* the first point at the plot's left edge */
        assert_int_equal(count(out, "<circle"), 2); /* GPU 0's isolated first point, GPU 1's one */
        assert_non_null(strstr(out, "GPU 2 (no data)"));
        assert_null(strstr(out, "nan"));
        assert_null(strstr(out, "inf"));
        free(out);

        /* Limits: a labelled dashed line each, the axis stretched to reach them (60-71 C
         * against a slowdown at 89 C); one that is not finite is left out (ux-review: no
         * threshold lines on burn charts). */
        const struct svg_limit limits[] = {{"slowdown 89 \xC2\xB0" "C", 89}, {"none", NAN}, {"floor 50 C", 50}};
        svg_series_chart_limits(&b, "temperature", "s", "C", series, 1, limits, 3);
        out = take(&b);
        assert_int_equal(count(out, "<line class=\"limit\""), 2);
        assert_non_null(strstr(out, "data-limit=\"89\""));
        assert_non_null(strstr(out, "data-limit=\"50\""));
        assert_non_null(strstr(out, ">slowdown 89 \xC2\xB0" "C<"));
        assert_null(strstr(out, ">none<"));
        assert_non_null(strstr(out, ">90<")); /* a tick past the slowdown */
        assert_non_null(strstr(out, ">50<"));
        free(out);

        const double fleet[] = {100, 101, 99, 100.5, 40, NAN};
        const char *const names[] = {"n1", "n2", "n3", "n4", "<slow-node>", "n6"};
        const struct svg_group groups[] = {{.label = "H100 triad", .values = fleet, .value_labels = names, .n = 6},
                                           {.label = "empty", .values = NULL, .n = 0}};
        svg_distribution(&b, "fleet", "GB/s", groups, 2);
        out = take(&b);
        assert_non_null(strstr(out, "data-values=\"5\" data-outliers=\"1\""));
        assert_non_null(strstr(out, "data-values=\"0\" data-outliers=\"0\""));
        assert_int_equal(count(out, "class=\"outlier\""), 1);
        assert_non_null(strstr(out, "&lt;slow-node&gt;: 40"));
        assert_int_equal(count(out, "class=\"point\""), 4);
        free(out);
}

/* Render one or two documents given as JSON text; returns the result, the page or the error. */
static int render(const char *a, const char *b, char **html, char *err, size_t errsize) {
        struct html_report_input in[2] = {{0}};
        const char *texts[2] = {a, b};
        size_t n = b ? 2 : 1;
        for (size_t i = 0; i < n; i++) {
                json_error_t e;
                in[i] = (struct html_report_input){.file = i ? "b.json" : "a.json", .doc = json_loads(texts[i], 0, &e)};
                assert_non_null(in[i].doc);
        }
        size_t len = 0;
        err[0] = '\0';
        int r = html_report_render(in, n, NULL, html, &len, err, errsize);
        for (size_t i = 0; i < n; i++)
                json_decref(in[i].doc);
        return r;
}

#define DOC(host, status, extra)                                                                               \
        "{\"schema\": \"gpuvet.report/1\", \"tool\": {\"name\": \"gpuvet\", \"version\": \"0.1.0\"}, "                 \
        "\"command\": \"check\", \"host\": {\"hostname\": \"" host "\"}, \"gpus\": [], \"checks\": [{\"id\": "       \
        "\"pcie.aer\", \"subject\": \"host\", \"status\": " status ", \"summary\": \"s<\", \"remedy\": \"fix it\"}]" \
        extra ", \"summary\": {\"pass\": 0, \"warn\": 0, \"fail\": 1, \"skip\": 0, \"error\": 0, "                 \
        "\"verdict\": \"fail\"}}"

static void test_render(void **state) {
        (void)state;
        char *html = NULL, err[512];
        assert_int_equal(render(DOC("n1", "\"fail\"", ""), DOC("n1", "\"fail\"", ""), &html, err, sizeof(err)), 0);
        assert_non_null(html);
        assert_non_null(strstr(html, "data-status=\"fail\" data-id=\"pcie.aer\""));
        assert_non_null(strstr(html, "<dd class=\"remedy\">fix it</dd>"));
        assert_non_null(strstr(html, "s&lt;"));
        assert_non_null(strstr(html, "written unknown"));
        free(html);
        /* a status of the wrong type, an unknown one, a field of the wrong type, two nodes,
         * an unknown schema, no schema: refused, naming the file and the field */
        const struct {
                const char *a, *b, *want;
        } bad[] = {
                {DOC("n1", "3", ""), NULL, "a.json: checks[0].status: expected a string, found an integer"},
                {DOC("n1", "\"bad\"", ""), NULL, "a.json: checks[0].status: unknown status \"bad\""},
                {DOC("n1", "\"fail\"", ", \"burn\": []"), NULL, "a.json: burn: expected an object, found an array"},
                {DOC("n1", "\"fail\"", ""), DOC("n2", "\"fail\"", ""), "b.json: of node \"n2\", but a.json is of \"n1\""},
                {"{\"schema\": \"gpuvet.report/2\"}", NULL, "a.json: schema: \"gpuvet.report/2\" is not one"},
                {"{\"checks\": []}", NULL, "a.json: no \"schema\" field"},
                {"[1]", NULL, "a.json: not a JSON object"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                html = NULL;
                assert_int_equal(render(bad[i].a, bad[i].b, &html, err, sizeof(err)), -EINVAL);
                assert_null(html);
                if (!strstr(err, bad[i].want))
                        fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err, bad[i].want);
        }
}

/* A page mailed to a vendor: the remedy's commands as code, the document by its file name
 * only, not the directory it had on the machine that wrote the page (ux-review). */
static void test_render_papercuts(void **state) {
        (void)state;
        json_error_t e;
        struct html_report_input in = {
                .file = "/home/ops/secret-project/results/check-quick.json",
                .doc = json_loads("{\"schema\": \"gpuvet.report/1\", \"tool\": {\"name\": \"gpuvet\", \"version\": "
                                  "\"0.1.0\"}, \"command\": \"check\", \"host\": {\"hostname\": \"n1\"}, \"gpus\": [], "
                                  "\"checks\": [{\"id\": \"pcie.aer\", \"subject\": \"host\", \"status\": \"fail\", "
                                  "\"summary\": \"s\", \"remedy\": \"run `lspci -vv -s 0000:61:00.0` & reseat\"}], "
                                  "\"summary\": {\"pass\": 0, \"warn\": 0, \"fail\": 1, \"skip\": 0, \"error\": 0, "
                                  "\"verdict\": \"fail\"}}",
                                  0, &e),
        };
        assert_non_null(in.doc);
        char *html = NULL, err[512] = "";
        size_t len = 0;
        assert_int_equal(html_report_render(&in, 1, NULL, &html, &len, err, sizeof(err)), 0);
        json_decref(in.doc);
        assert_non_null(strstr(html, "<dd class=\"remedy\">run <code>lspci -vv -s 0000:61:00.0</code> &amp; reseat</dd>"));
        assert_non_null(strstr(html, "check: check-quick.json, written"));
        assert_null(strstr(html, "secret-project"));
        free(html);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_escape), cmocka_unit_test(test_element_and_table),
                cmocka_unit_test(test_code_spans), cmocka_unit_test(test_href),
                cmocka_unit_test(test_axis),   cmocka_unit_test(test_map),
                cmocka_unit_test(test_format), cmocka_unit_test(test_fit),
                cmocka_unit_test(test_box),    cmocka_unit_test(test_charts),
                cmocka_unit_test(test_render), cmocka_unit_test(test_render_papercuts),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

/* gpuvet top on wide terminals and the readings nvtop shows: the history chart (its grid,
 * where it takes rows, how it is drawn in a frame) and the fan, ENC/DEC and PCIe pieces of
 * a GPU's line, which go in whole or not at all and never stand for a reading the driver
 * does not give. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "top/top_draw.h"
#include "top/top_frame.h"
#include "top/top_layout.h"
#include "top/top_model.h"

static const char *row(const char *grid, size_t width, size_t r) { return grid + r * (width + 1); }

static void test_chart_grid(void **state) {
        (void)state;
        struct top_series a = {0}, b = {0};
        char grid[4 * 7];
        const struct top_series *both[] = {&a, &b};
        top_chart(grid, 6, 4, both, "01", 2);
        for (size_t r = 0; r < 4; r++)
                assert_string_equal(row(grid, 6, r), "      ");
        /* a: 0, 1, gap, 0.5, 0.3 (oldest first); b: 0.3 at the newest sample only */
        top_series_push(&a, 0, true);
        top_series_push(&a, 1, true);
        top_series_push(&a, 0.9, false);
        top_series_push(&a, 0.5, true);
        top_series_push(&a, 0.3, true);
        top_series_push(&b, 0.3, true);
        top_chart(grid, 6, 4, both, "01", 2);
        assert_string_equal(row(grid, 6, 0), "  0   "); /* 100 %: the top row */
        assert_string_equal(row(grid, 6, 1), "    0 "); /* 50 %: the lower half's top */
        assert_string_equal(row(grid, 6, 2), "     *"); /* 0.3 x 4 = 1.2: row 2; both there */
        assert_string_equal(row(grid, 6, 3), " 0    "); /* 0 %, and no mark for the gap above it */
        /* narrower than the history: the newest samples, newest at the right */
        char narrow[4 * 3];
        top_chart(narrow, 2, 4, both, "01", 2);
        assert_string_equal(row(narrow, 2, 1), "0 ");
        assert_string_equal(row(narrow, 2, 2), " *");
}

static void test_layout_chart(void **state) {
        (void)state;
        struct top_layout l;
        top_layout_compute(50, 200, 8, &l);
        unsigned int procs = l.proc_rows, top = l.proc_top;
        top_layout_chart(&l, 200);
        assert_int_equal(l.chart_rows, TOP_CHART_LINES);
        assert_int_equal(l.chart_top, top);
        assert_int_equal(l.proc_top, top + TOP_CHART_LINES);
        assert_int_equal(l.proc_rows, procs - TOP_CHART_LINES);
        assert_true(l.proc_rows >= TOP_CHART_MIN_PROC_ROWS);
        /* the sizes the other tests and the review use keep their process rows */
        const unsigned int sizes[][3] = {{40, 120, 8}, {24, 80, 8}, {50, TOP_CHART_MIN_COLS - 1, 8}, {60, 200, 64}};
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
                top_layout_compute(sizes[i][0], sizes[i][1], sizes[i][2], &l);
                procs = l.proc_rows;
                top_layout_chart(&l, sizes[i][1]);
                assert_int_equal(l.chart_rows, 0);
                assert_int_equal(l.proc_rows, procs);
        }
        /* just enough rows, then one fewer */
        unsigned int rows = 3 + 8 * TOP_FULL_LINES + TOP_CHART_LINES + TOP_CHART_MIN_PROC_ROWS;
        top_layout_compute(rows, TOP_CHART_MIN_COLS, 8, &l);
        top_layout_chart(&l, TOP_CHART_MIN_COLS);
        assert_int_equal(l.chart_rows, TOP_CHART_LINES);
        top_layout_compute(rows - 1, TOP_CHART_MIN_COLS, 8, &l);
        top_layout_chart(&l, TOP_CHART_MIN_COLS);
        assert_int_equal(l.chart_rows, 0);
        for (unsigned int r = 0; r < 80; r++)
                for (unsigned int c = 0; c < 260; c += 13) {
                        top_layout_compute(r, c, 8, &l);
                        top_layout_chart(&l, c);
                        if (!l.too_small)
                                assert_int_equal(1 + l.gpus_shown * l.gpu_lines + (l.more_line ? 1 : 0) + l.chart_rows + 1 +
                                                         l.proc_rows + 1,
                                                 r);
                }
}

static struct top_model two_gpus(void) {
        struct top_model m = {0};
        m.n_gpus = 2;
        m.gpus = calloc(2, sizeof(*m.gpus));
        assert_non_null(m.gpus);
        for (unsigned int i = 0; i < 2; i++) {
                struct top_gpu *g = &m.gpus[i];
                g->index = i;
                snprintf(g->name, sizeof(g->name), "NVIDIA H100 80GB HBM3");
                g->util_pct = (struct top_reading){true, 0};
                g->have_reasons = true;
                g->have_ecc_mode = g->ecc_on = g->have_ecc_counts = true;
        }
        return m;
}

static const char *find_line(const struct top_frame *f, const char *what) {
        for (unsigned int r = 0; r < f->rows; r++)
                if (strstr(top_frame_line(f, r), what))
                        return top_frame_line(f, r);
        return NULL;
}

/* The pieces after the throttle reasons: each where the driver gives it, whole or not at
 * all, within the line. */
static void test_frame_extras(void **state) {
        (void)state;
        struct top_model m = two_gpus();
        struct top_gpu *g = &m.gpus[0];
        g->fan_pct = (struct top_reading){true, 45};
        g->enc_pct = (struct top_reading){true, 3};
        g->dec_pct = (struct top_reading){true, 0};
        g->pcie_tx_kbs = (struct top_reading){true, 352};
        g->pcie_rx_kbs = (struct top_reading){true, 6346};
        m.gpus[1].pcie_tx_kbs = (struct top_reading){true, 25.0 * 1024 * 1024}; /* rx missing: no piece */
        struct top_view v = {.interval_ms = 1000};
        struct top_frame f = {0};
        assert_int_equal(top_frame_render(&m, &v, 20, 160, &f), 0);
        const char *l0 = find_line(&f, " 0 NVIDIA");
        assert_non_null(l0);
        assert_non_null(strstr(l0, "throttle: none  fan 45%  enc 3% dec 0%  PCIe tx 352KB/s rx 6.2MB/s"));
        const char *l1 = find_line(&f, " 1 NVIDIA");
        assert_non_null(l1);
        assert_null(strstr(l1, "PCIe"));
        assert_null(strstr(l1, "fan"));
        assert_null(strstr(l1, "enc"));
        /* 80 columns: the line holds the fan; enc/dec and PCIe go whole, not in part */
        assert_int_equal(top_frame_render(&m, &v, 20, 80, &f), 0);
        l0 = find_line(&f, " 0 NVIDIA");
        assert_non_null(strstr(l0, "throttle: none  fan 45% "));
        assert_null(strstr(l0, "enc"));
        assert_null(strstr(l0, "PCIe"));
        assert_int_equal(l0[79], ' ');
        /* the one-line form of many GPUs at 80 columns has no room: nothing is cut */
        assert_int_equal(top_frame_render(&m, &v, 8, 80, &f), 0);
        l0 = find_line(&f, " 0 H100");
        assert_non_null(l0);
        assert_null(strstr(l0, "fan"));
        assert_int_equal(top_frame_render(&m, &v, 8, 200, &f), 0);
        l0 = find_line(&f, " 0 H100");
        assert_non_null(strstr(l0, "fan 45%  enc 3% dec 0%  PCIe tx 352KB/s rx 6.2MB/s"));
        top_frame_done(&f);
        top_model_done(&m);
}

/* A wide terminal draws the history as a chart of each GPU's index; --once, with one
 * sample, does not. */
static void test_frame_chart(void **state) {
        (void)state;
        struct top_model m = two_gpus();
        for (int i = 0; i < 10; i++) {
                top_series_push(&m.gpus[0].h_util, 1.0, true);
                top_series_push(&m.gpus[1].h_util, 0.0, true);
                top_series_push(&m.gpus[0].h_mem, 0.5, true);
                top_series_push(&m.gpus[1].h_mem, 0.5, true);
        }
        struct top_view v = {.interval_ms = 2000};
        struct top_frame f = {0};
        assert_int_equal(top_frame_render(&m, &v, 40, 200, &f), 0);
        unsigned int title = 1 + 2 * TOP_FULL_LINES;
        const char *t = top_frame_line(&f, title);
        assert_non_null(strstr(t, "UTIL %, last 3m (mark: GPU index, * several)"));
        assert_non_null(strstr(t, "MEM used %, last 3m"));
        /* GPU 0 at 100 % in the top row, GPU 1 at 0 % in the bottom one, both at 50 % */
        const char *top_row = top_frame_line(&f, title + 1);
        assert_non_null(strstr(top_row, "100|"));
        assert_non_null(strstr(top_row, "0000000000  100|"));
        assert_non_null(strstr(top_frame_line(&f, title + TOP_CHART_PLOT_ROWS), "  0|"));
        assert_non_null(strstr(top_frame_line(&f, title + TOP_CHART_PLOT_ROWS), "1111111111 "));
        const char *half = top_frame_line(&f, title + TOP_CHART_PLOT_ROWS - TOP_CHART_PLOT_ROWS / 2);
        assert_non_null(strstr(half, " 50|"));
        assert_non_null(strstr(half, "**********"));
        assert_non_null(strstr(top_frame_line(&f, title + TOP_CHART_LINES), "GPU     PID"));
        v.no_chart = true;
        assert_int_equal(top_frame_render(&m, &v, 40, 200, &f), 0);
        assert_null(find_line(&f, "UTIL %, last"));
        assert_non_null(strstr(top_frame_line(&f, title), "GPU     PID"));
        top_frame_done(&f);
        top_model_done(&m);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_chart_grid),
                cmocka_unit_test(test_layout_chart),
                cmocka_unit_test(test_frame_extras),
                cmocka_unit_test(test_frame_chart),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

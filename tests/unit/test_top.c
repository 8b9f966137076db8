/* gpuvet top's pure parts: the layout at small sizes, bars and sparklines, /proc status
 * lines (NSpid, Uid), the process sort orders, keys on the view, a frame at 80x24, a
 * frame of multibyte and invalid text at every width. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/fsroot.h"
#include "core/utf8.h"
#include "top/top_draw.h"
#include "top/top_frame.h"
#include "top/top_layout.h"
#include "top/top_model.h"
#include "sys/proc.h"
#include "top/top_screen.h"
#include "top/top_signal.h"

static void layout_fits(unsigned int rows, unsigned int cols, unsigned int gpus) {
        struct top_layout l;
        top_layout_compute(rows, cols, gpus, &l);
        if (l.too_small)
                return;
        unsigned int used = 1 + l.gpus_shown * l.gpu_lines + (l.more_line ? 1 : 0) + 1 + l.proc_rows + 1;
        assert_int_equal(used, rows);
        assert_int_equal(l.help_row, rows - 1);
        assert_true(3 * l.cell_width + 4 <= cols - 1);
        assert_true(l.gpus_shown <= gpus);
        assert_true(l.more_line == (l.gpus_shown < gpus));
}

static void test_layout(void **state) {
        (void)state;
        struct top_layout l;
        top_layout_compute(24, 80, 8, &l);
        assert_false(l.too_small);
        assert_false(l.full); /* 8 x 3 lines do not fit in 24 */
        assert_int_equal(l.gpus_shown, 8);
        assert_int_equal(l.proc_top, 9);
        assert_int_equal(l.proc_rows, 13);
        assert_int_equal(l.cell_width, 25);
        assert_int_equal(l.spark_width, 7);
        assert_false(l.workload_column);
        top_layout_compute(40, 120, 8, &l);
        assert_true(l.full);
        assert_true(l.workload_column); /* JOB/POD from 119 columns, 28 left for the command */
        top_layout_compute(40, TOP_WORKLOAD_MIN_COLS - 1, 8, &l);
        assert_false(l.workload_column);
        top_layout_compute(40, 120, 8, &l);
        assert_int_equal(l.gpu_lines, 3);
        assert_int_equal(l.proc_rows, 40 - 3 - 24);
        top_layout_compute(24, 80, 64, &l); /* more GPUs than rows: a count line, 3 process rows */
        assert_true(l.more_line);
        assert_int_equal(l.proc_rows, TOP_MIN_PROC_ROWS);
        assert_int_equal(l.gpus_shown, 24 - 3 - TOP_MIN_PROC_ROWS - 1);
        top_layout_compute(TOP_MIN_ROWS - 1, 80, 1, &l);
        assert_true(l.too_small);
        top_layout_compute(24, TOP_MIN_COLS - 1, 1, &l);
        assert_true(l.too_small);
        top_layout_compute(TOP_MIN_ROWS, TOP_MIN_COLS, 0, &l);
        assert_false(l.too_small);
        assert_int_equal(l.spark_width, 0); /* too narrow for a sparkline beside the bar */
        for (unsigned int rows = 0; rows < 60; rows++)
                for (unsigned int cols = 0; cols < 200; cols += 7)
                        for (unsigned int gpus = 0; gpus < 20; gpus++)
                                layout_fits(rows, cols, gpus);
}

static void test_bar(void **state) {
        (void)state;
        char b[64];
        top_bar(b, 12, 0.5, true, "50%");
        assert_string_equal(b, "[|||||  50%]");
        top_bar(b, 12, 1.5, true, "");
        assert_string_equal(b, "[||||||||||]");
        top_bar(b, 12, -1, true, "0%");
        assert_string_equal(b, "[        0%]");
        top_bar(b, 12, 0.9, false, "--"); /* no reading: no fill */
        assert_string_equal(b, "[        --]");
        top_bar(b, 6, 0, true, "123456789"); /* too long: its start kept */
        assert_string_equal(b, "[1234]");
        top_bar(b, 2, 1, true, "x");
        assert_string_equal(b, "[]");
        top_bar(b, 1, 1, true, "x");
        assert_string_equal(b, "[");
        top_bar(b, 0, 1, true, "x");
        assert_string_equal(b, "");
}

static void test_spark(void **state) {
        (void)state;
        struct top_series s = {0};
        char b[TOP_HISTORY + 2];
        top_spark(b, 5, &s);
        assert_string_equal(b, "     ");
        top_series_push(&s, 0, true);
        top_series_push(&s, 1, true);
        top_series_push(&s, 0.5, false); /* a gap */
        top_series_push(&s, 0.5, true);
        top_spark(b, 6, &s);
        assert_string_equal(b, "  _# -");
        top_spark(b, 2, &s); /* the newest at the right */
        assert_string_equal(b, " -");
        for (int i = 0; i < 3 * TOP_HISTORY; i++)
                top_series_push(&s, (double)(i % 9) / 8.0, true);
        assert_int_equal(s.n, TOP_HISTORY);
        top_spark(b, 9, &s);
        assert_int_equal(strlen(b), 9);
        assert_string_equal(b + 9 - 1, (3 * TOP_HISTORY - 1) % 9 == 8 ? "#" : b + 8);
        top_spark(b, TOP_HISTORY + 1, &s); /* wider than the history: padded */
        assert_int_equal(b[0], ' ');
        assert_int_not_equal(b[1], ' ');
}

static void test_status(void **state) {
        (void)state;
        struct proc_status st;
        const char *text = "Name:\tpython3\nUmask:\t0022\nState:\tS (sleeping)\nPid:\t4242\n"
                           "Uid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\nNSpid:\t4242\t17\n";
        assert_int_equal(proc_status_parse(text, strlen(text), &st), 0);
        assert_string_equal(st.name, "python3");
        assert_true(st.have_uid);
        assert_int_equal(st.uid, 1000);
        assert_int_equal(st.n_nspid, 2);
        assert_int_equal(st.nspid[0], 4242);
        assert_int_equal(st.nspid[1], 17);

        const char *old = "Name:\tx\nPid:\t5\nUid:\t0\t0\t0\t0\n"; /* before Linux 4.1: no NSpid */
        assert_int_equal(proc_status_parse(old, strlen(old), &st), 0);
        assert_int_equal(st.n_nspid, 0);

        const char *bad = "Name:\tx\nUid:\t0\t0\nNSpid:\t12a\t3\n"; /* malformed lines leave fields unset */
        assert_int_equal(proc_status_parse(bad, strlen(bad), &st), 0);
        assert_false(st.have_uid);
        assert_int_equal(st.n_nspid, 0);

        const char *big = "Pid:\t1\nNSpid:\t4294967296\n"; /* does not fit */
        assert_int_equal(proc_status_parse(big, strlen(big), &st), 0);
        assert_int_equal(st.n_nspid, 0);

        const char *deep = "Pid:\t1\nNSpid:\t1 2 3 4 5 6 7 8 9\n"; /* deeper than we keep: refused */
        assert_int_equal(proc_status_parse(deep, strlen(deep), &st), 0);
        assert_int_equal(st.n_nspid, 0);

        /* Not NUL-terminated: the length bounds the parse. */
        const char cut[] = {'P', 'i', 'd', ':', '1', '\n', 'N', 'S', 'p', 'i', 'd', ':', '7', '7'};
        assert_int_equal(proc_status_parse(cut, sizeof(cut), &st), 0);
        assert_int_equal(st.n_nspid, 1);
        assert_int_equal(st.nspid[0], 77);

        const char *evil = "Name:\t\x1b[2Jx\x7f\nPid:\t3\n"; /* a process names itself */
        assert_int_equal(proc_status_parse(evil, strlen(evil), &st), 0);
        assert_string_equal(st.name, "?[2Jx?");
        assert_int_equal(proc_status_parse("garbage\n", 8, &st), -EINVAL);
        assert_int_equal(proc_status_parse("", 0, &st), -EINVAL);
        const char *longname = "Name:\taaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n";
        assert_int_equal(proc_status_parse(longname, strlen(longname), &st), 0);
        assert_int_equal(strlen(st.name), sizeof(st.name) - 1);
}

static struct top_model model_with(unsigned int n) {
        struct top_model m = {0};
        m.n_procs = n;
        m.procs = calloc(n, sizeof(*m.procs));
        m.n_gpus = 2;
        m.gpus = calloc(2, sizeof(*m.gpus));
        return m;
}

static void pids(const struct top_model *m, const unsigned int *want, unsigned int n) {
        for (unsigned int i = 0; i < n; i++)
                assert_int_equal(m->procs[i].pid, want[i]);
}

static void test_sort(void **state) {
        (void)state;
        struct top_model m = model_with(5);
        struct top_proc_row rows[5] = {
                {.gpu = 1, .pid = 30, .have_mem = true, .used_bytes = 100, .sm_pct = 50, .gpu_util = 10},
                {.gpu = 0, .pid = 20, .have_mem = true, .used_bytes = 500, .sm_pct = 5, .gpu_util = 90},
                {.gpu = 0, .pid = 10, .have_mem = false, .sm_pct = -1, .gpu_util = 90},
                {.gpu = 1, .pid = 5, .have_mem = true, .used_bytes = 100, .sm_pct = 0, .gpu_util = 10},
                {.gpu = 0, .pid = 40, .have_mem = true, .used_bytes = 100, .sm_pct = -1, .gpu_util = -1},
        };
        memcpy(m.procs, rows, sizeof(rows));
        top_model_sort(&m, TOP_SORT_MEMORY); /* largest first, unknown last, ties by GPU then PID */
        pids(&m, (unsigned int[]){20, 40, 5, 30, 10}, 5);
        /* the busiest process first; unknown shares after, by their GPU's utilization */
        top_model_sort(&m, TOP_SORT_UTIL);
        pids(&m, (unsigned int[]){30, 20, 5, 10, 40}, 5);
        top_model_sort(&m, TOP_SORT_PID);
        pids(&m, (unsigned int[]){5, 10, 20, 30, 40}, 5);
        assert_string_equal(top_sort_name(TOP_SORT_UTIL), "utilization");
        /* the host's columns: largest first, unknown last, ties by GPU then PID */
        for (unsigned int i = 0; i < 5; i++) {
                struct top_proc_row *r = &m.procs[i];
                r->cpu_pct = r->pid == 10 ? 250 : r->pid == 40 ? -1 : r->pid / 10.0; /* 5: 0.5, 20: 2, 30: 3 */
                r->info.have_rss = r->pid != 30;
                r->info.rss_kib = r->pid == 5 ? 1u << 20 : 1000u + r->pid; /* ties broken by size, then GPU/PID */
                r->info.elapsed_s = r->pid == 20 ? -1 : r->pid == 40 ? 7200 : 60;
        }
        top_model_sort(&m, TOP_SORT_CPU);
        pids(&m, (unsigned int[]){10, 30, 20, 5, 40}, 5);
        top_model_sort(&m, TOP_SORT_RSS);
        pids(&m, (unsigned int[]){5, 40, 20, 10, 30}, 5);
        top_model_sort(&m, TOP_SORT_TIME); /* 60 s ties: GPU 0 before GPU 1, then PID */
        pids(&m, (unsigned int[]){40, 10, 5, 30, 20}, 5);
        assert_string_equal(top_sort_name(TOP_SORT_TIME), "time");
        top_model_done(&m);
}

static void test_keys(void **state) {
        (void)state;
        struct top_model m = model_with(3);
        for (unsigned int i = 0; i < 3; i++)
                m.procs[i] = (struct top_proc_row){.gpu = 0, .pid = 100 + i};
        struct top_view v = {0};
        assert_true(top_view_key(&v, &m, KEY_DOWN, 10));
        assert_true(v.have_selected);
        assert_int_equal(v.sel_pid, 100);
        top_view_key(&v, &m, 'j', 10);
        top_view_key(&v, &m, KEY_DOWN, 10);
        top_view_key(&v, &m, KEY_DOWN, 10); /* stops at the last */
        assert_int_equal(v.sel_pid, 102);
        top_view_key(&v, &m, KEY_PPAGE, 10);
        assert_int_equal(v.sel_pid, 100);
        top_view_key(&v, &m, 's', 10);
        assert_int_equal(v.sort, TOP_SORT_UTIL);
        top_view_key(&v, &m, 'p', 10);
        assert_int_equal(v.sort, TOP_SORT_PID);
        top_view_key(&v, &m, 'c', 10);
        assert_int_equal(v.sort, TOP_SORT_CPU);
        top_view_key(&v, &m, 'r', 10);
        assert_int_equal(v.sort, TOP_SORT_RSS);
        top_view_key(&v, &m, 'e', 10); /* elapsed */
        assert_int_equal(v.sort, TOP_SORT_TIME);
        assert_false(v.tree);
        top_view_key(&v, &m, 't', 10); /* t is the tree's now, as in nvitop; the sort stays */
        assert_true(v.tree);
        assert_int_equal(v.sort, TOP_SORT_TIME);
        top_view_key(&v, &m, KEY_F(5), 10); /* F5 as in htop */
        assert_false(v.tree);
        top_view_key(&v, &m, 's', 10); /* wraps to the first */
        assert_int_equal(v.sort, TOP_SORT_MEMORY);
        top_view_key(&v, &m, 'p', 10);
        top_view_key(&v, &m, 'h', 10);
        assert_true(v.help);
        assert_true(top_view_key(&v, &m, 'x', 10)); /* closes the help */
        assert_false(v.help);
        top_view_key(&v, &m, 'h', 10);
        assert_false(top_view_key(&v, &m, 'q', 10)); /* q quits from the help too */
        v.help = false;
        assert_true(top_view_key(&v, &m, 27, 10)); /* Esc clears the selection */
        assert_false(v.have_selected);
        top_model_done(&m);
}

/* A frame at 80x24 from a model: every line exactly as wide, the lost GPU said, the
 * selection marked; and at every small size, no line past the width. */
static void test_frame(void **state) {
        (void)state;
        struct top_model m = model_with(2);
        snprintf(m.gpus[0].name, sizeof(m.gpus[0].name), "NVIDIA H100 80GB HBM3");
        m.gpus[0].util_pct = (struct top_reading){true, 50};
        m.gpus[1].index = 1;
        snprintf(m.gpus[1].name, sizeof(m.gpus[1].name), "NVIDIA H100 80GB HBM3");
        m.gpus[1].state = TOP_GPU_LOST;
        snprintf(m.gpus[1].why, sizeof(m.gpus[1].why), "nvmlDeviceGetName: GPU is lost");
        m.procs[0] = (struct top_proc_row){.gpu = 0, .pid = 1, .info = {.where = PROC_OTHER_NS}};
        m.procs[1] = (struct top_proc_row){.gpu = 0, .pid = 2, .sm_pct = -1, .info = {.where = PROC_GONE}};
        m.procs[0].sm_pct = 73;
        struct top_view v = {.interval_ms = 1000, .have_selected = true, .sel_gpu = 0, .sel_pid = 2};
        struct top_frame f = {0};
        assert_int_equal(top_frame_render(&m, &v, 24, 80, &f), 0);
        for (unsigned int r = 0; r < 24; r++)
                assert_int_equal(strlen(top_frame_line(&f, r)), 80);
        assert_non_null(strstr(top_frame_line(&f, 0), "2 GPUs"));
        assert_non_null(strstr(top_frame_line(&f, 1), "ECC ?  throttle: ?"));
        assert_non_null(strstr(top_frame_line(&f, 2), "UTIL [|||||  50%]"));
        assert_non_null(strstr(top_frame_line(&f, 4), "LOST: nvmlDeviceGetName: GPU is lost"));
        assert_int_equal(f.attr[4], TOP_ATTR_LOST);
        assert_non_null(strstr(top_frame_line(&f, 7), "  SM T  %CPU   RSS     TIME COMMAND"));
        assert_non_null(strstr(top_frame_line(&f, 8), "other-ns"));
        assert_non_null(strstr(top_frame_line(&f, 8), " 73% C "));
        assert_non_null(strstr(top_frame_line(&f, 9), "    - C "));
        assert_non_null(strstr(top_frame_line(&f, 9), "(exited)"));
        assert_int_equal(top_frame_line(&f, 9)[0], '>');
        assert_int_equal(f.attr[9], TOP_ATTR_SELECTED);
        for (unsigned int rows = 1; rows < 30; rows++)
                for (unsigned int cols = 1; cols < 100; cols += 3) {
                        assert_int_equal(top_frame_render(&m, &v, rows, cols, &f), 0);
                        for (unsigned int r = 0; r < rows; r++) {
                                assert_int_equal(strlen(top_frame_line(&f, r)), cols);
                                assert_int_equal(top_frame_line(&f, r)[cols - 1], ' ');
                        }
                }
        top_frame_done(&f);
        top_model_done(&m);
}

/* Every byte of s is part of a valid UTF-8 sequence and no C0 or C1 control is there. */
static void assert_clean_utf8(const char *s) {
        for (const unsigned char *u = (const unsigned char *)s; *u;) {
                size_t n = utf8_sequence(u);
                if (n == 0 || u[0] < 0x20 || u[0] == 0x7f || (n == 2 && u[0] == 0xC2 && u[1] < 0xA0))
                        fail_msg("byte 0x%02x at %zu of '%s'", u[0], (size_t)((const char *)u - s), s);
                u += n;
        }
}

/* A command of multibyte characters is cut at a character whatever the width, and bytes
 * that are not UTF-8 or are C1 controls show as '?' (review N22). */
static void test_frame_utf8(void **state) {
        (void)state;
        struct top_model m = model_with(2);
        m.procs[0] = (struct top_proc_row){.gpu = 0, .pid = 1, .sm_pct = -1, .info = {.where = PROC_FOUND}};
        m.procs[1] = m.procs[0];
        m.procs[1].pid = 2;
        char *cmd = m.procs[0].info.command;
        cmd[0] = '\0';
        for (int i = 0; i < 6; i++) /* 6 x 24 bytes, within the 160 of the command */
                strcat(cmd, "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe3\x83\x97\xe3\x83\xad"
                            "\xe3\x82\xbb\xe3\x82\xb9"); /* 日本語のプロセス */
        snprintf(m.procs[0].info.user, sizeof(m.procs[0].info.user), "\xc3\xa9l\xc3\xa8ve-\xc3\xa9t\xc3\xa9");
        snprintf(m.procs[1].info.command, sizeof(m.procs[1].info.command), "x\xff\xfey\xc2\x9bz\xe6\x97");
        struct top_view v = {.interval_ms = 1000};
        struct top_frame f = {0};
        for (unsigned int cols = 40; cols <= 240; cols++) {
                assert_int_equal(top_frame_render(&m, &v, 24, cols, &f), 0);
                for (unsigned int r = 0; r < 24; r++) {
                        assert_int_equal(strlen(top_frame_line(&f, r)), cols);
                        assert_clean_utf8(top_frame_line(&f, r));
                }
        }
        assert_int_equal(top_frame_render(&m, &v, 24, 240, &f), 0);
        bool seen = false;
        for (unsigned int r = 0; r < 24; r++)
                seen = seen || strstr(top_frame_line(&f, r), "x??y?z?") != NULL;
        assert_true(seen);
        top_frame_done(&f);
        top_model_done(&m);
}

/* The help at 80x24 with 8 GPUs (one line each): every line whole, as it is at 200
 * columns, and none left out for want of rows (review: "sort by memory, utilization, p"). */
static void test_help_fits_80(void **state) {
        (void)state;
        struct top_model m = model_with(0);
        free(m.gpus);
        m.n_gpus = 8;
        m.gpus = calloc(8, sizeof(*m.gpus));
        for (unsigned int i = 0; i < 8; i++) {
                m.gpus[i].index = i;
                snprintf(m.gpus[i].name, sizeof(m.gpus[i].name), "NVIDIA H100 80GB HBM3");
        }
        struct top_view v = {.interval_ms = 1000, .help = true};
        struct top_frame narrow = {0}, wide = {0};
        assert_int_equal(top_frame_render(&m, &v, 24, 80, &narrow), 0);
        assert_int_equal(top_frame_render(&m, &v, 24, 200, &wide), 0);
        struct top_layout l;
        top_layout_compute(24, 80, 8, &l);
        unsigned int shown = 0;
        for (unsigned int r = l.proc_top + 1; r < l.help_row; r++) {
                char a[256], b[256];
                snprintf(a, sizeof(a), "%s", top_frame_line(&narrow, r));
                snprintf(b, sizeof(b), "%s", top_frame_line(&wide, r));
                for (size_t n = strlen(a); n && a[n - 1] == ' ';)
                        a[--n] = '\0';
                for (size_t n = strlen(b); n && b[n - 1] == ' ';)
                        b[--n] = '\0';
                assert_string_equal(a, b);
                shown += a[0] != '\0';
        }
        /* the last line of the help is on the screen: nothing below the rows left out */
        bool sparklines = false;
        for (unsigned int r = 0; r < 24; r++)
                sparklines = sparklines || strstr(top_frame_line(&narrow, r), "Sparklines") != NULL;
        assert_true(sparklines);
        assert_true(shown >= 8);
        top_frame_done(&narrow);
        top_frame_done(&wide);
        top_model_done(&m);
}

static struct top_model eight_gpus(void) {
        struct top_model m = {0};
        m.n_gpus = 8;
        m.gpus = calloc(8, sizeof(*m.gpus));
        for (unsigned int i = 0; i < 8; i++) {
                struct top_gpu *g = &m.gpus[i];
                g->index = i;
                snprintf(g->name, sizeof(g->name), "NVIDIA H100 80GB HBM3");
                g->util_pct = (struct top_reading){true, 0};
                g->mem_used_bytes = (struct top_reading){true, 0};
                g->mem_total_bytes = (struct top_reading){true, 80.0 * 1024 * 1024 * 1024};
                g->temp_c = (struct top_reading){true, 41};
                g->power_w = (struct top_reading){true, 70};
                g->sm_mhz = (struct top_reading){true, 345};
                g->have_reasons = true;
                g->reasons = NV_CLOCKS_EVENT_GPU_IDLE;
                g->have_ecc_mode = g->ecc_on = g->have_ecc_counts = true;
        }
        return m;
}

/* The classes in one place: a GPU at its power cap is normal, the hardware holding it down
 * or uncorrected ECC errors a fault, the driver slowing it for heat a warning (review: GPU 2
 * drawn bold yellow like GPU 0 at its power cap). */
static void test_classify(void **state) {
        (void)state;
        struct top_gpu g = {.have_reasons = true, .have_ecc_mode = true, .ecc_on = true, .have_ecc_counts = true};
        assert_int_equal(top_gpu_classify(&g), TOP_CLASS_NORMAL);
        g.reasons = NV_CLOCKS_EVENT_SW_POWER_CAP;
        assert_int_equal(top_gpu_classify(&g), TOP_CLASS_NORMAL);
        g.reasons = NV_CLOCKS_EVENT_GPU_IDLE | NV_CLOCKS_EVENT_APPLICATIONS_CLOCKS_SETTING |
                    NV_CLOCKS_EVENT_SYNC_BOOST | NV_CLOCKS_EVENT_DISPLAY_CLOCK_SETTING;
        assert_int_equal(top_gpu_classify(&g), TOP_CLASS_NORMAL);
        g.reasons = NV_CLOCKS_EVENT_SW_THERMAL_SLOWDOWN | NV_CLOCKS_EVENT_SW_POWER_CAP;
        assert_int_equal(top_gpu_classify(&g), TOP_CLASS_WARN);
        const unsigned long long hw[] = {NV_CLOCKS_EVENT_HW_SLOWDOWN, NV_CLOCKS_EVENT_HW_THERMAL_SLOWDOWN,
                                         NV_CLOCKS_EVENT_HW_POWER_BRAKE_SLOWDOWN};
        for (size_t i = 0; i < sizeof(hw) / sizeof(hw[0]); i++) {
                g.reasons = hw[i] | NV_CLOCKS_EVENT_SW_THERMAL_SLOWDOWN;
                assert_int_equal(top_gpu_classify(&g), TOP_CLASS_FAULT);
        }
        g.reasons = NV_CLOCKS_EVENT_SW_POWER_CAP;
        g.ecc_uncorrected = 2;
        assert_int_equal(top_gpu_classify(&g), TOP_CLASS_FAULT);
        g.ecc_uncorrected = 0;
        g.ecc_corrected = 100; /* corrected errors are ECC doing its work */
        assert_int_equal(top_gpu_classify(&g), TOP_CLASS_NORMAL);
        g.have_reasons = false; /* bits of a reading that failed mean nothing */
        g.reasons = NV_CLOCKS_EVENT_HW_SLOWDOWN;
        assert_int_equal(top_gpu_classify(&g), TOP_CLASS_NORMAL);
        g.have_ecc_counts = false;
        g.ecc_uncorrected = 5;
        assert_int_equal(top_gpu_classify(&g), TOP_CLASS_NORMAL);
        g.have_ecc_counts = true;
        g.state = TOP_GPU_STALE;
        assert_int_equal(top_gpu_classify(&g), TOP_CLASS_STALE);
        g.state = TOP_GPU_LOST;
        assert_int_equal(top_gpu_classify(&g), TOP_CLASS_LOST);
        for (unsigned int i = 0; i < top_n_reasons; i++)
                assert_non_null(top_reasons[i].name);
}

/* 80x24 with 8 GPUs, one line each: ECC labelled (c corrected, u uncorrected) and never
 * cut, the reasons faults first, the line's attribute from its class. */
static void test_frame_ecc_and_classes(void **state) {
        (void)state;
        struct top_model m = eight_gpus();
        m.gpus[0].reasons = NV_CLOCKS_EVENT_SW_POWER_CAP;
        m.gpus[2].reasons = NV_CLOCKS_EVENT_SW_POWER_CAP | NV_CLOCKS_EVENT_HW_THERMAL_SLOWDOWN |
                            NV_CLOCKS_EVENT_SW_THERMAL_SLOWDOWN;
        m.gpus[2].ecc_uncorrected = 2;
        m.gpus[2].temp_c.v = 100;
        m.gpus[2].power_w.v = 1000;
        m.gpus[3].reasons = NV_CLOCKS_EVENT_SW_THERMAL_SLOWDOWN;
        m.gpus[4].ecc_on = false;
        m.gpus[5].ecc_corrected = 7;
        struct top_view v = {.interval_ms = 1000};
        struct top_frame f = {0};
        assert_int_equal(top_frame_render(&m, &v, 24, 80, &f), 0);
        assert_int_equal(f.attr[1], TOP_ATTR_NORMAL);
        assert_non_null(strstr(top_frame_line(&f, 1), "ECC c0 u0 sw-power"));
        assert_int_equal(f.attr[3], TOP_ATTR_FAULT);
        /* 100C and 1000W take a column more each: the reasons are cut, faults first, not ECC */
        assert_non_null(strstr(top_frame_line(&f, 3), "100C 1000W  345MHz ECC c0 u2 hw-thermal "));
        assert_int_equal(f.attr[4], TOP_ATTR_WARN);
        assert_non_null(strstr(top_frame_line(&f, 5), "ECC off"));
        assert_non_null(strstr(top_frame_line(&f, 6), "ECC c7 u0 idle"));
        for (unsigned int r = 1; r <= 8; r++)
                assert_int_equal(top_frame_line(&f, r)[79], ' ');
        /* the three-line form says the words */
        assert_int_equal(top_frame_render(&m, &v, 40, 120, &f), 0);
        assert_non_null(strstr(top_frame_line(&f, 7), "ECC corr 0 uncorr 2  throttle: hw-thermal,sw-thermal,sw-power"));
        assert_int_equal(f.attr[7], TOP_ATTR_FAULT);
        assert_int_equal(f.attr[1], TOP_ATTR_NORMAL);
        /* the three-line form at 80 columns: the reasons cut, not the counts */
        assert_int_equal(top_frame_render(&m, &v, 40, 80, &f), 0);
        assert_non_null(strstr(top_frame_line(&f, 7), " 2 NVIDIA H100 80GB HBM3  ECC corr 0 uncorr 2  throttle: hw-"));
        top_frame_done(&f);
        top_model_done(&m);
}

/* /proc/PID/stat: the fields after the command counted from its last ')', whatever the
 * command holds; /proc/uptime; VmRSS; CPU % from two readings. */
static void test_stat(void **state) {
        (void)state;
        struct proc_stat st;
        const char *line = "4242 (python3) S 1 4242 4242 0 -1 4194560 1000 0 0 0 1500 250 0 0 20 0 8 0 123456 "
                           "1000000 5000 18446744073709551615\n";
        assert_int_equal(proc_stat_parse(line, strlen(line), &st), 0);
        assert_int_equal(st.utime, 1500);
        assert_int_equal(st.stime, 250);
        assert_int_equal(st.start_ticks, 123456);
        assert_int_equal(st.ppid, 1);
        /* a parent that is no number: no parent for the tree, the rest read as before */
        const char *noparent = "4242 (python3) S x 4242 4242 0 -1 4194560 1000 0 0 0 1500 250 0 0 20 0 8 0 123456\n";
        assert_int_equal(proc_stat_parse(noparent, strlen(noparent), &st), 0);
        assert_int_equal(st.ppid, 0);
        assert_int_equal(st.utime, 1500);
        const char *bigparent = "4242 (p) S 4294967296 1 1 0 -1 0 0 0 0 0 15 25 0 0 20 0 8 0 12\n";
        assert_int_equal(proc_stat_parse(bigparent, strlen(bigparent), &st), 0);
        assert_int_equal(st.ppid, 0);
        assert_int_equal(st.start_ticks, 12);
        /* a real capture's line: prometheus/procfs's fixture proc/26231/stat (vim; in its
         * testdata/fixtures.ttar, tests/fixtures/SOURCES.md) */
        const char *procfs = "26231 (vim) R 5392 7446 5392 34835 7446 4218880 32533 309516 26 82 1677 44 0 0 20 0 1 0 "
                             "82375 56274944 1981 18446744073709551615 4194304 6294284 140736914091744 "
                             "140736914087944 139965136429984 0 0 12288 1870679807 0 0 0 17 0 0 0 31 0 0\n";
        assert_int_equal(proc_stat_parse(procfs, strlen(procfs), &st), 0);
        assert_int_equal(st.utime, 1677);
        assert_int_equal(st.stime, 44);
        assert_int_equal(st.start_ticks, 82375);
        /* a command that names itself with spaces and parentheses */
        assert_int_equal(st.ppid, 5392);
        const char *evil = "77 (a) S 9 9 9 (b)) R 1 2 3 0 -1 0 0 0 0 0 7 8 0 0 20 0 1 0 99\n";
        assert_int_equal(proc_stat_parse(evil, strlen(evil), &st), 0);
        assert_int_equal(st.ppid, 1);
        assert_int_equal(st.utime, 7);
        assert_int_equal(st.stime, 8);
        assert_int_equal(st.start_ticks, 99);
        /* ends at field 22, not NUL-terminated */
        const char cut[] = "5 (x) S 1 5 5 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 42";
        assert_int_equal(proc_stat_parse(cut, sizeof(cut) - 1, &st), 0);
        assert_int_equal(st.start_ticks, 42);
        assert_int_equal(proc_stat_parse(cut, sizeof(cut) - 2, &st), 0); /* "4": another start, still a number */
        assert_int_equal(st.start_ticks, 4);
        assert_int_equal(proc_stat_parse(cut, sizeof(cut) - 3, &st), -EINVAL); /* no field 22 */
        const char *short_line = "5 (x) S 1 5 5 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0\n";
        assert_int_equal(proc_stat_parse(short_line, strlen(short_line), &st), -EINVAL);
        const char *word = "5 (x) S 1 5 5 0 -1 0 0 0 0 0 3x 4 0 0 20 0 1 0 42\n";
        assert_int_equal(proc_stat_parse(word, strlen(word), &st), -EINVAL);
        const char *huge = "5 (x) S 1 5 5 0 -1 0 0 0 0 0 99999999999999999999999 4 0 0 20 0 1 0 42\n";
        assert_int_equal(proc_stat_parse(huge, strlen(huge), &st), -EINVAL);
        assert_int_equal(proc_stat_parse("5 (x", 4, &st), -EINVAL);
        assert_int_equal(proc_stat_parse("", 0, &st), -EINVAL);

        double up = 0;
        assert_int_equal(proc_uptime_parse("12345.67 98765.43\n", 18, &up), 0);
        assert_true(up > 12345.66 && up < 12345.68);
        assert_int_equal(proc_uptime_parse("100\n", 4, &up), 0);
        assert_true(up == 100);
        assert_int_equal(proc_uptime_parse("up 5", 4, &up), -EINVAL);
        assert_int_equal(proc_uptime_parse("12x", 3, &up), -EINVAL);

        struct proc_status ps;
        const char *status = "Name:\tpython3\nPid:\t1\nVmRSS:\t  1572864 kB\n";
        assert_int_equal(proc_status_parse(status, strlen(status), &ps), 0);
        assert_true(ps.have_rss);
        assert_int_equal(ps.rss_kib, 1572864);
        const char *odd = "Name:\tx\nPid:\t1\nVmRSS:\t12 MB\n"; /* not the kernel's unit: unknown */
        assert_int_equal(proc_status_parse(odd, strlen(odd), &ps), 0);
        assert_false(ps.have_rss);
        const char *kthread = "Name:\tkworker\nPid:\t2\n";
        assert_int_equal(proc_status_parse(kthread, strlen(kthread), &ps), 0);
        assert_false(ps.have_rss);

        /* 50 ticks of 100 Hz in a second: half a CPU; 4 CPUs busy: 400 % */
        assert_true(proc_cpu_percent(100, 150, 1000000000ULL, 100) == 50.0);
        assert_true(proc_cpu_percent(0, 800, 2000000000ULL, 100) == 400.0);
        assert_true(proc_cpu_percent(150, 100, 1000000000ULL, 100) < 0); /* went back: another process */
        assert_true(proc_cpu_percent(100, 150, 0, 100) < 0);
        assert_true(proc_cpu_percent(100, 150, 1000000000ULL, 0) < 0);
}

/* CPU % needs two rounds: unknown at a process's first, then from the ticks between;
 * a PID reused by a process with another start time begins again. */
static void test_model_cpu(void **state) {
        (void)state;
        struct top_model m = model_with(3);
        for (unsigned int i = 0; i < 3; i++) {
                m.procs[i] = (struct top_proc_row){.gpu = 0, .pid = 10 + i,
                                                   .info = {.where = PROC_FOUND, .have_stat = true}};
                m.procs[i].info.stat = (struct proc_stat){.utime = 100, .stime = 50, .start_ticks = 1000};
        }
        m.procs[2].info.where = PROC_GONE;
        assert_int_equal(top_model_cpu(&m, 5000000000ULL, 100), 0);
        for (unsigned int i = 0; i < 3; i++)
                assert_true(m.procs[i].cpu_pct < 0);
        m.procs[0].info.stat.utime += 150; /* 150 ticks in 2 s at 100 Hz: 75 % */
        m.procs[1].info.stat.start_ticks = 2000; /* PID 11 is another process now */
        m.procs[2].info.where = PROC_FOUND;
        assert_int_equal(top_model_cpu(&m, 7000000000ULL, 100), 0);
        assert_true(m.procs[0].cpu_pct == 75.0);
        assert_true(m.procs[1].cpu_pct < 0);
        assert_true(m.procs[2].cpu_pct < 0); /* first seen now */
        assert_int_equal(top_model_cpu(&m, 8000000000ULL, 100), 0);
        assert_true(m.procs[0].cpu_pct == 0.0);
        assert_true(m.procs[1].cpu_pct == 0.0);
        top_model_done(&m);
}

/* The host columns as a row shows them: %CPU, RSS, TIME; "-" when unknown. */
static void test_frame_host_columns(void **state) {
        (void)state;
        struct top_model m = model_with(4);
        const struct {
                double cpu, elapsed;
                bool have_rss;
                unsigned long long kib;
                const char *want;
        } cases[] = {
                {50, 3723, true, 1572864, "  50.0  1.5G  1:02:03 "},
                {1234.4, 307, true, 980, "  1234  980K    05:07 "},
                {-1, 1.1e6, true, 524288, "     -  512M   12d17h "},
                {0.04, 0, false, 0, "   0.0     -    00:00 "},
        };
        for (unsigned int i = 0; i < 4; i++) {
                m.procs[i] = (struct top_proc_row){.gpu = 0, .pid = 100 + i, .sm_pct = -1, .cpu_pct = cases[i].cpu,
                                                   .info = {.where = PROC_FOUND, .elapsed_s = cases[i].elapsed,
                                                            .have_rss = cases[i].have_rss, .rss_kib = cases[i].kib}};
                snprintf(m.procs[i].info.command, sizeof(m.procs[i].info.command), "cmd%u", i);
        }
        struct top_view v = {.interval_ms = 1000};
        struct top_frame f = {0};
        assert_int_equal(top_frame_render(&m, &v, 24, 80, &f), 0);
        struct top_layout l;
        top_layout_compute(24, 80, 2, &l);
        for (unsigned int i = 0; i < 4; i++) {
                const char *row = top_frame_line(&f, l.proc_top + 1 + i);
                if (!strstr(row, cases[i].want))
                        fail_msg("row %u: '%s' lacks '%s'", i, row, cases[i].want);
                assert_int_equal(strstr(row, "cmd") - row, TOP_PROC_PREFIX_WIDTH);
        }
        top_frame_done(&f);
        top_model_done(&m);
}

static int delivered_sig, delivered_pid, deliver_rc;
static int fake_deliver(int pidfd, unsigned int pid, int sig) {
        (void)pidfd;
        delivered_sig = sig;
        delivered_pid = (int)pid;
        return deliver_rc;
}

static void write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        assert_true(fputs(text, f) >= 0);
        assert_int_equal(fclose(f), 0);
}

/* K, T, I: asked only for a process of this machine whose start is known; sent only
 * when the PID still names it; EPERM said; never under --root. The fixture /proc holds
 * our own PID (a pidfd of it opens), the delivery is the test's. */
static void test_signal(void **state) {
        (void)state;
        char dir[] = "/tmp/gpuvet-top-sig-XXXXXX", path[256];
        assert_non_null(mkdtemp(dir));
        unsigned int me = (unsigned int)getpid();
        snprintf(path, sizeof(path), "%s/proc", dir);
        assert_int_equal(mkdir(path, 0700), 0);
        snprintf(path, sizeof(path), "%s/proc/%u", dir, me);
        assert_int_equal(mkdir(path, 0700), 0);
        snprintf(path, sizeof(path), "%s/proc/%u/stat", dir, me);
        char stat[256];
        snprintf(stat, sizeof(stat), "%u (python3) S 1 1 1 0 -1 0 0 0 0 0 5 5 0 0 20 0 1 0 1000 0 0\n", me);
        write_file(path, stat);
        struct fsroot *fs = NULL;
        assert_int_equal(fsroot_open(dir, &fs), 0);

        struct top_proc_row row = {.gpu = 0, .pid = me,
                                   .info = {.where = PROC_FOUND, .have_stat = true, .stat = {.start_ticks = 1000}}};
        snprintf(row.info.command, sizeof(row.info.command), "python3 train.py");
        struct top_signal_env fixture = {.fs = fs, .live = false, .deliver = fake_deliver};
        struct top_pending_signal p;
        char msg[160];
        assert_false(top_signal_ask(&fixture, &row, SIGKILL, &p, msg, sizeof(msg)));
        assert_non_null(strstr(msg, "SIGKILL not sent: under --root"));
        assert_false(p.active);
        assert_false(top_signal_ask(NULL, &row, SIGKILL, &p, msg, sizeof(msg)));

        /* "live" over the fixture: what the checks do, with the delivery the test's */
        struct top_signal_env env = {.fs = fs, .live = true, .deliver = fake_deliver};
        assert_false(top_signal_ask(&env, NULL, SIGTERM, &p, msg, sizeof(msg)));
        assert_non_null(strstr(msg, "select a process"));
        struct top_proc_row other = row;
        other.info.where = PROC_GONE;
        assert_false(top_signal_ask(&env, &other, SIGTERM, &p, msg, sizeof(msg)));
        assert_non_null(strstr(msg, "has exited"));
        other.info.where = PROC_OTHER_NS;
        assert_false(top_signal_ask(&env, &other, SIGTERM, &p, msg, sizeof(msg)));
        assert_non_null(strstr(msg, "another PID namespace"));
        other.info.where = PROC_FOUND;
        other.info.have_stat = false;
        assert_false(top_signal_ask(&env, &other, SIGTERM, &p, msg, sizeof(msg)));
        assert_non_null(strstr(msg, "stat could not be read"));

        assert_true(top_signal_ask(&env, &row, SIGTERM, &p, msg, sizeof(msg)));
        assert_true(p.active);
        char prompt[256], want[128];
        top_signal_prompt(&p, prompt, sizeof(prompt));
        snprintf(want, sizeof(want), "Send SIGTERM to PID %u (python3 train.py)? y/N", me);
        assert_string_equal(prompt, want);

        delivered_sig = delivered_pid = 0;
        deliver_rc = 0;
        assert_int_equal(top_signal_send(&env, &p, msg, sizeof(msg)), 0);
        assert_int_equal(delivered_sig, SIGTERM);
        assert_int_equal(delivered_pid, (int)me);
        assert_non_null(strstr(msg, "SIGTERM sent to PID"));

        deliver_rc = -EPERM;
        assert_int_equal(top_signal_send(&env, &p, msg, sizeof(msg)), -EPERM);
        assert_non_null(strstr(msg, "not permitted (EPERM)"));
        assert_true(strlen(msg) < 80);

        /* the PID now names a process that started at another time: nothing delivered */
        delivered_sig = 0;
        p.start_ticks = 999;
        assert_int_equal(top_signal_send(&env, &p, msg, sizeof(msg)), -ESRCH);
        assert_int_equal(delivered_sig, 0);
        assert_non_null(strstr(msg, "another process now"));
        p.start_ticks = 1000;
        assert_int_equal(unlink(path), 0); /* its /proc entry gone */
        assert_int_equal(top_signal_send(&env, &p, msg, sizeof(msg)), -ESRCH);
        assert_int_equal(delivered_sig, 0);
        assert_non_null(strstr(msg, "has exited"));
        assert_int_equal(top_signal_send(&fixture, &p, msg, sizeof(msg)), -EPERM);
        assert_int_equal(delivered_sig, 0);
        fsroot_free(fs);
        snprintf(path, sizeof(path), "%s/proc/%u", dir, me);
        rmdir(path);
        snprintf(path, sizeof(path), "%s/proc", dir);
        rmdir(path);
        rmdir(dir);
}

/* The real delivery on the live root: SIGTERM reaches a child of ours, checked by its
 * start time in the machine's /proc. */
static void test_signal_live(void **state) {
        (void)state;
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                for (;;)
                        pause();
        }
        struct fsroot *fs = NULL;
        assert_int_equal(fsroot_open("/", &fs), 0);
        char path[64], *text = NULL;
        size_t len = 0;
        struct top_proc_row row = {.pid = (unsigned int)child, .info = {.where = PROC_FOUND}};
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)child);
        assert_int_equal(fsroot_read_alloc(fs, path, &text, &len), 0);
        assert_int_equal(proc_stat_parse(text, len, &row.info.stat), 0);
        free(text);
        row.info.have_stat = true;
        struct top_signal_env env = {.fs = fs, .live = fsroot_is_live(fs)};
        assert_true(env.live);
        struct top_pending_signal p;
        char msg[160];
        assert_true(top_signal_ask(&env, &row, SIGTERM, &p, msg, sizeof(msg)));
        int r = top_signal_send(&env, &p, msg, sizeof(msg));
        int status = 0;
        if (r != 0)
                kill(child, SIGKILL);
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_int_equal(r, 0);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
        fsroot_free(fs);
}

/* K asks, any key but y cancels, y sends; the status line says so until the next key. */
static void test_keys_signal(void **state) {
        (void)state;
        struct top_model m = model_with(1);
        m.procs[0] = (struct top_proc_row){.gpu = 0, .pid = 4242,
                                           .info = {.where = PROC_FOUND, .have_stat = true}};
        snprintf(m.procs[0].info.command, sizeof(m.procs[0].info.command), "python3 train.py");
        struct top_signal_env fixture = {.live = false};
        struct top_view v = {.interval_ms = 1000, .signals = &fixture};
        top_view_key(&v, &m, 'K', 10); /* nothing selected */
        assert_false(v.confirm.active);
        assert_non_null(strstr(v.status, "select a process"));
        top_view_key(&v, &m, KEY_DOWN, 10);
        assert_string_equal(v.status, "");
        top_view_key(&v, &m, 'K', 10); /* under --root: refused at once, no prompt */
        assert_false(v.confirm.active);
        assert_non_null(strstr(v.status, "under --root"));

        struct top_view w = {.interval_ms = 1000, .have_selected = true, .sel_gpu = 0, .sel_pid = 4242};
        struct top_signal_env live = {.live = true, .deliver = fake_deliver};
        w.signals = &live;
        assert_true(top_view_key(&w, &m, 'I', 10));
        assert_true(w.confirm.active);
        assert_int_equal(w.confirm.sig, SIGINT);
        struct top_frame f = {0};
        assert_int_equal(top_frame_render(&m, &w, 24, 80, &f), 0);
        assert_non_null(strstr(top_frame_line(&f, 23), "Send SIGINT to PID 4242 (python3 train.py)? y/N"));
        assert_true(top_view_key(&w, &m, 'q', 10)); /* q cancels the prompt; it does not quit */
        assert_false(w.confirm.active);
        assert_non_null(strstr(w.status, "SIGINT not sent to PID 4242"));
        assert_int_equal(top_frame_render(&m, &w, 24, 80, &f), 0);
        assert_non_null(strstr(top_frame_line(&f, 23), "SIGINT not sent"));
        top_view_key(&w, &m, 'x', 10);
        assert_int_equal(top_frame_render(&m, &w, 24, 80, &f), 0);
        assert_non_null(strstr(top_frame_line(&f, 23), "q quit"));
        top_frame_done(&f);
        top_model_done(&m);
}

/* A fixture /proc for the tree: proc/PID/{status,stat,cmdline} of a process with its
 * parent, its command's words separated by NULs as the kernel has them. */
static void fixture_proc(const char *dir, unsigned int pid, unsigned int ppid, unsigned int uid, const char *cmd) {
        char path[256], text[512], name[16];
        snprintf(path, sizeof(path), "%s/proc/%u", dir, pid);
        assert_int_equal(mkdir(path, 0700), 0);
        snprintf(name, sizeof(name), "%.*s", (int)strcspn(cmd, " "), cmd);
        snprintf(path, sizeof(path), "%s/proc/%u/status", dir, pid);
        snprintf(text, sizeof(text),
                 "Name:\t%s\nPid:\t%u\nPPid:\t%u\nUid:\t%u\t%u\t%u\t%u\nNSpid:\t%u\nVmRSS:\t 2048 kB\n", name, pid,
                 ppid, uid, uid, uid, uid, pid);
        write_file(path, text);
        snprintf(path, sizeof(path), "%s/proc/%u/stat", dir, pid);
        /* started 100 s after boot, 10 + 5 ticks of CPU */
        snprintf(text, sizeof(text), "%u (%s) S %u %u %u 0 -1 0 0 0 0 0 10 5 0 0 20 0 1 0 10000 0 0\n", pid, name,
                 ppid, pid, pid);
        write_file(path, text);
        snprintf(path, sizeof(path), "%s/proc/%u/cmdline", dir, pid);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        for (const char *c = cmd; *c; c++)
                assert_true(fputc(*c == ' ' ? '\0' : *c, f) != EOF);
        assert_true(fputc('\0', f) != EOF);
        assert_int_equal(fclose(f), 0);
}

/* The lines of the tree as "PID glyphs", host rows "PID* glyphs". */
static void assert_tree(const struct top_model *m, const char *const *want, unsigned int n_want, bool whole) {
        struct top_tree_line *lines = NULL;
        unsigned int n = 0;
        assert_int_equal(top_model_tree(m, &lines, &n), 0);
        for (unsigned int i = 0; i < n && i < n_want; i++) {
                char got[128];
                const struct top_tree_line *l = &lines[i];
                snprintf(got, sizeof(got), "%u%s %s", l->host ? m->hosts[l->index].pid : m->procs[l->index].pid,
                         l->host ? "*" : "", l->glyphs);
                if (strcmp(got, want[i]) != 0)
                        fail_msg("line %u: '%s', not '%s'", i, got, want[i]);
                assert_int_equal(strlen(l->glyphs), 3 * l->depth);
        }
        if (whole)
                assert_int_equal(n, n_want);
        else
                assert_true(n >= n_want);
        free(lines);
}

static void rm_tree(const char *dir) {
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
}

/* The tree from a fixture /proc: torchrun with two workers on two GPUs (one on both, with
 * a child of its own on a GPU), slurmstepd > bash > a worker (3 levels), a PPid cycle
 * (3002 <-> 3003), an exited PID, a chain deeper than 16; then the order of siblings
 * under another sort key, and the host rows' %CPU at a second round. */
static void test_tree_fixture(void **state) {
        (void)state;
        char dir[] = "/tmp/gpuvet-top-tree-XXXXXX", path[256];
        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/proc", dir);
        assert_int_equal(mkdir(path, 0700), 0);
        snprintf(path, sizeof(path), "%s/proc/uptime", dir);
        write_file(path, "1000.00 8000.00\n");
        fixture_proc(dir, 1000, 1, 0, "torchrun --nproc-per-node 2 train.py");
        fixture_proc(dir, 1001, 1000, 1000, "python3 train.py --rank 0");
        fixture_proc(dir, 1002, 1000, 1000, "python3 train.py --rank 1");
        fixture_proc(dir, 1003, 1002, 1000, "python3 loader");
        fixture_proc(dir, 2000, 1, 0, "slurmstepd: [42.0]");
        fixture_proc(dir, 2001, 2000, 1000, "/bin/bash job.sh");
        fixture_proc(dir, 2002, 2001, 1000, "python3 eval.py");
        fixture_proc(dir, 3001, 3002, 1000, "python3 looped.py");
        fixture_proc(dir, 3002, 3003, 1000, "sh a");
        fixture_proc(dir, 3003, 3002, 1000, "sh b");
        fixture_proc(dir, 5000, 5001, 1000, "python3 deep.py");
        for (unsigned int pid = 5001; pid <= 5020; pid++)
                fixture_proc(dir, pid, pid + 1, 1000, "sh deep");
        struct fsroot *fs = NULL;
        assert_int_equal(fsroot_open(dir, &fs), 0);

        /* MiB: the memory sort's order is 1002, 1001, 2002, 3001, 1002, 1003, 5000, 4000 */
        struct nvml_process g0[] = {{.pid = 1001, .used_bytes = 500ULL << 20},
                                    {.pid = 2002, .used_bytes = 100ULL << 20},
                                    {.pid = 1002, .used_bytes = 10ULL << 20},
                                    {.pid = 4000, .used_bytes = 1ULL << 20},
                                    {.pid = 5000, .used_bytes = 2ULL << 20}};
        struct nvml_process g1[] = {{.pid = 1002, .used_bytes = 800ULL << 20}, {.pid = 3001, .used_bytes = 50ULL << 20},
                                    {.pid = 1003, .used_bytes = 5ULL << 20}};
        struct nvml_gpu *gpus = calloc(2, sizeof(*gpus));
        assert_non_null(gpus);
        gpus[0].compute_procs = (struct nvml_procs){.state = NV_OK, .count = 5, .v = g0};
        gpus[1].index = 1;
        gpus[1].compute_procs = (struct nvml_procs){.state = NV_OK, .count = 3, .v = g1};
        struct nvml_facts facts = {.n_gpus = 2, .gpus = gpus};
        struct top_lookup look = {.fs = fs};
        struct top_model m = {0};
        assert_int_equal(top_model_update(&m, &facts, 1, &look), 0);
        /* 1000, 2000, 2001, 3002, 3003 and 16 of the deep chain; not PID 1, not 4000 */
        assert_int_equal(m.n_hosts, 5 + TOP_TREE_MAX_DEPTH);
        for (unsigned int i = 0; i < m.n_hosts; i++) {
                assert_true(m.hosts[i].pid != 1 && m.hosts[i].pid != 4000 && m.hosts[i].pid != 5017);
                assert_true(m.hosts[i].cpu_pct < 0); /* first round */
                assert_string_equal(m.hosts[i].info.workload, ""); /* not looked up for a host row */
        }
        top_model_sort(&m, TOP_SORT_MEMORY);
        char deep[TOP_TREE_MAX_DEPTH + 1][64];
        const char *want[12 + 17];
        unsigned int n = 0;
        want[n++] = "1000* ";
        want[n++] = "1002 |- "; /* GPU 1, 800 MiB */
        want[n++] = "1002 |- "; /* GPU 0, 10 MiB: the same process, its children under its last row */
        want[n++] = "1003 |  `- ";
        want[n++] = "1001 `- ";
        want[n++] = "2000* ";
        want[n++] = "2001* `- ";
        want[n++] = "2002    `- ";
        want[n++] = "3002* "; /* the cycle cut at its lowest PID; 3003 then has no worker: left out */
        want[n++] = "3001 `- ";
        for (unsigned int d = 0; d <= TOP_TREE_MAX_DEPTH; d++) { /* 5016 at the top, 5000 16 deep */
                char g[3 * TOP_TREE_MAX_DEPTH + 1] = "";
                for (unsigned int k = 1; k < d; k++)
                        strcat(g, "   ");
                if (d)
                        strcat(g, "`- ");
                snprintf(deep[d], sizeof(deep[d]), "%u%s %s", d == TOP_TREE_MAX_DEPTH ? 5000 : 5016 - d,
                         d == TOP_TREE_MAX_DEPTH ? "" : "*", g);
                want[n++] = deep[d];
        }
        want[n++] = "4000 "; /* exited: no ancestry */
        assert_tree(&m, want, n, true);

        /* by PID the siblings swap: 1001 before 1002, whose GPU 0 row comes first now */
        top_model_sort(&m, TOP_SORT_PID);
        const char *by_pid[] = {"1000* ", "1001 |- ", "1002 |- ", "1002 `- ", "1003    `- ", "2000* ", "2001* `- ",
                                "2002    `- ", "3002* ", "3001 `- "};
        assert_tree(&m, by_pid, sizeof(by_pid) / sizeof(by_pid[0]), false);

        /* the host rows' %CPU from two rounds, as the GPU rows' */
        assert_int_equal(top_model_update(&m, &facts, 2, &look), 0);
        for (unsigned int i = 0; i < m.n_hosts; i++)
                assert_true(m.hosts[i].cpu_pct == 0.0);

        /* drawn: the glyphs before the command, the columns before it in place, a host row's
         * GPU columns "-" */
        top_model_sort(&m, TOP_SORT_MEMORY);
        struct top_view v = {.interval_ms = 1000, .tree = true};
        struct top_frame f = {0};
        assert_int_equal(top_frame_render(&m, &v, 40, 100, &f), 0);
        struct top_layout l;
        top_layout_compute(40, 100, 2, &l);
        assert_non_null(strstr(top_frame_line(&f, l.proc_top), "TIME COMMAND (tree)"));
        const char *host = top_frame_line(&f, l.proc_top + 1), *child = top_frame_line(&f, l.proc_top + 4);
        const char *want_host = "  -    1000      - 0                -    - -   0.0  2.0M    15:00 torchrun --nproc";
        if (strncmp(host, want_host, strlen(want_host)) != 0)
                fail_msg("the launcher's row: '%s'", host);
        assert_int_equal(strstr(child, "|  `- python3 loader") - child, TOP_PROC_PREFIX_WIDTH);
        assert_non_null(strstr(child, "  1    1003 "));
        assert_int_equal(strstr(top_frame_line(&f, l.proc_top + 3), "|- python3 train.py --rank 1") -
                                 top_frame_line(&f, l.proc_top + 3),
                         TOP_PROC_PREFIX_WIDTH);
        top_frame_done(&f);
        top_model_done(&m);
        fsroot_free(fs);
        free(gpus);
        rm_tree(dir);
}

/* The selection in the tree: the first Down, Home and End and each step go to GPU rows in
 * the order shown, past the host rows, which are never marked nor signalled; the
 * selection is scrolled into view. */
static void test_tree_select(void **state) {
        (void)state;
        struct top_model m = model_with(5);
        m.n_hosts = 3;
        m.hosts = calloc(3, sizeof(*m.hosts));
        assert_non_null(m.hosts);
        const struct {
                unsigned int pid, ppid, gpu, mib;
        } rows[] = {{11, 10, 0, 500}, {12, 10, 1, 400}, {21, 20, 0, 300}, {31, 30, 1, 200}, {40, 1, 0, 100}};
        for (unsigned int i = 0; i < 5; i++) {
                m.procs[i] = (struct top_proc_row){.gpu = rows[i].gpu, .pid = rows[i].pid, .have_mem = true,
                                                   .used_bytes = (unsigned long long)rows[i].mib << 20, .sm_pct = -1,
                                                   .info = {.where = PROC_FOUND, .have_stat = true}};
                m.procs[i].info.stat.ppid = rows[i].ppid;
                snprintf(m.procs[i].info.command, sizeof(m.procs[i].info.command), "worker%u", rows[i].pid);
        }
        for (unsigned int i = 0; i < 3; i++) {
                m.hosts[i] = (struct top_host_row){.pid = 10 * (i + 1), .cpu_pct = -1,
                                                   .info = {.where = PROC_FOUND, .have_stat = true}};
                m.hosts[i].info.stat.ppid = 1;
                snprintf(m.hosts[i].info.command, sizeof(m.hosts[i].info.command), "launcher%u", 10 * (i + 1));
        }
        top_model_sort(&m, TOP_SORT_MEMORY);
        struct top_view v = {.interval_ms = 1000, .tree = true};
        /* shown: 10*, 11, 12, 20*, 21, 30*, 31, 40 */
        const unsigned int steps[] = {11, 12, 21, 31, 40, 40};
        for (unsigned int i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
                assert_true(top_view_key(&v, &m, KEY_DOWN, 10));
                assert_int_equal(v.sel_pid, steps[i]);
        }
        top_view_key(&v, &m, KEY_UP, 10);
        top_view_key(&v, &m, KEY_UP, 10);
        assert_int_equal(v.sel_pid, 21); /* up past host 30 */
        top_view_key(&v, &m, KEY_HOME, 10);
        assert_int_equal(v.sel_pid, 11); /* not host 10 above it */
        top_view_key(&v, &m, KEY_NPAGE, 3);
        assert_int_equal(v.sel_pid, 31); /* a page of three GPU rows */
        top_view_key(&v, &m, KEY_END, 10);
        assert_int_equal(v.sel_pid, 40);
        assert_int_equal(top_view_selected(&v, &m)->pid, 40);

        /* 9 rows: 3 process rows; the selection at the end scrolled into view, marked */
        struct top_frame f = {0};
        assert_int_equal(top_frame_render(&m, &v, 9, 80, &f), 0);
        struct top_layout l;
        top_layout_compute(9, 80, 2, &l);
        unsigned int marked = 0;
        for (unsigned int r = l.proc_top + 1; r < l.proc_top + 1 + l.proc_rows; r++)
                if (top_frame_line(&f, r)[0] == '>') {
                        marked++;
                        assert_non_null(strstr(top_frame_line(&f, r), " 40 "));
                }
        assert_int_equal(marked, 1);
        /* a host row under a selection is never marked, and K asks for the GPU row only */
        for (unsigned int i = 0; i < 8; i++) {
                top_view_key(&v, &m, KEY_UP, 10);
                assert_int_equal(top_frame_render(&m, &v, 24, 80, &f), 0);
                for (unsigned int r = 0; r < 24; r++)
                        if (top_frame_line(&f, r)[0] == '>')
                                assert_null(strstr(top_frame_line(&f, r), "launcher"));
                const struct top_proc_row *sel = top_view_selected(&v, &m);
                assert_non_null(sel);
                assert_true(sel->pid % 10 != 0);
        }
        /* flat again: m->procs' order, the host rows gone */
        top_view_key(&v, &m, 't', 10);
        assert_int_equal(top_frame_render(&m, &v, 24, 80, &f), 0);
        for (unsigned int r = 0; r < 24; r++)
                assert_null(strstr(top_frame_line(&f, r), "launcher"));
        assert_null(strstr(top_frame_line(&f, 7), "(tree)"));
        top_frame_done(&f);
        top_model_done(&m);
}

/* Ancestry that cannot be trusted: a PPid cycle between GPU processes is cut at its lowest
 * PID; a process in another PID namespace has none (whatever its stat says) and is no
 * one's parent; an exited one neither. */
static void test_tree_cycles_and_namespaces(void **state) {
        (void)state;
        struct top_model m = model_with(5);
        const struct {
                unsigned int pid, ppid, mib;
                int where;
        } rows[] = {{10, 11, 100, PROC_FOUND}, {11, 10, 200, PROC_FOUND}, {12, 10, 400, PROC_OTHER_NS},
                    {13, 12, 300, PROC_FOUND}, {14, 11, 50, PROC_GONE}};
        for (unsigned int i = 0; i < 5; i++) {
                m.procs[i] = (struct top_proc_row){.gpu = 0, .pid = rows[i].pid, .have_mem = true,
                                                   .used_bytes = rows[i].mib, .sm_pct = -1};
                m.procs[i].info.where = rows[i].where;
                m.procs[i].info.have_stat = rows[i].where == PROC_FOUND;
                m.procs[i].info.stat.ppid = rows[i].ppid;
        }
        top_model_sort(&m, TOP_SORT_MEMORY); /* 12, 13, 11, 10, 14 */
        const char *want[] = {"12 ", "13 ", "10 ", "11 `- ", "14 "};
        assert_tree(&m, want, 5, true);
        /* 12 found now: under 10; 13's parent PID 1: top level */
        m.procs[0].info.where = PROC_FOUND;
        m.procs[0].info.have_stat = true;
        m.procs[1].info.stat.ppid = 1;
        const char *found[] = {"10 ", "12 |- ", "11 `- ", "13 ", "14 "};
        assert_tree(&m, found, 5, true);
        top_model_done(&m);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_layout), cmocka_unit_test(test_bar),  cmocka_unit_test(test_spark),
                cmocka_unit_test(test_status), cmocka_unit_test(test_sort), cmocka_unit_test(test_keys),
                cmocka_unit_test(test_frame),  cmocka_unit_test(test_frame_utf8),
                cmocka_unit_test(test_help_fits_80),
                cmocka_unit_test(test_classify), cmocka_unit_test(test_frame_ecc_and_classes),
                cmocka_unit_test(test_stat), cmocka_unit_test(test_model_cpu), cmocka_unit_test(test_frame_host_columns),
                cmocka_unit_test(test_signal), cmocka_unit_test(test_signal_live), cmocka_unit_test(test_keys_signal),
                cmocka_unit_test(test_tree_fixture), cmocka_unit_test(test_tree_select),
                cmocka_unit_test(test_tree_cycles_and_namespaces),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

/* A frame from the model (top_frame.h). */
#include "top/top_frame.h"

#include "core/array.h"
#include "core/utf8.h"
#include "top/top_layout.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *line_at(struct top_frame *f, unsigned int r) { return f->text + (unsigned long)r * (f->cols + 1); }

/* Write text at row r from column c, clipped to the width (the last column stays blank).
 * A line holds bytes: a UTF-8 character goes in whole or not at all, and a byte that is
 * not UTF-8 or a control goes in as '?' (user names, commands and workloads are others'
 * text; a terminal shown a cut sequence can swallow the rest of the line). */
static void put(struct top_frame *f, unsigned int r, unsigned int c, const char *s) {
        if (r >= f->rows)
                return;
        char *line = line_at(f, r);
        unsigned int end = f->cols ? f->cols - 1 : 0;
        while (*s && c < end) {
                const unsigned char *u = (const unsigned char *)s;
                size_t n = utf8_sequence(u);
                bool control = u[0] < 0x20 || u[0] == 0x7f || (n == 2 && u[0] == 0xC2 && u[1] < 0xA0);
                if (n == 0 || control) {
                        line[c++] = '?';
                        s += n ? n : 1;
                        continue;
                }
                if (c + n > end)
                        break;
                memcpy(line + c, s, n);
                c += (unsigned int)n;
                s += n;
        }
}

__attribute__((format(printf, 4, 5))) static void putf(struct top_frame *f, unsigned int r, unsigned int c,
                                                       const char *fmt, ...) {
        char buf[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        put(f, r, c, buf);
}

/* "12.3/79.6G" */
static void mem_text(char *out, size_t size, const struct top_gpu *g) {
        const double gib = 1024.0 * 1024.0 * 1024.0;
        if (g->mem_used_bytes.have && g->mem_total_bytes.have)
                snprintf(out, size, "%.1f/%.1fG", g->mem_used_bytes.v / gib, g->mem_total_bytes.v / gib);
        else
                snprintf(out, size, "--");
}

/* "hw-thermal,sw-power": faults first, so that a line cut at the edge keeps them. */
static void reasons_text(char *out, size_t size, const struct top_gpu *g) {
        if (!g->have_reasons) {
                snprintf(out, size, "?");
                return;
        }
        if (g->reasons == 0) {
                snprintf(out, size, "none");
                return;
        }
        size_t o = 0;
        out[0] = '\0';
        for (int c = TOP_CLASS_FAULT; c >= TOP_CLASS_NORMAL; c--)
                for (unsigned int i = 0; i < top_n_reasons; i++)
                        if ((g->reasons & top_reasons[i].bit) && (int)top_reasons[i].class == c) {
                                int n = snprintf(out + o, size - o, "%s%s", o ? "," : "", top_reasons[i].name);
                                if (n > 0 && (size_t)n < size - o)
                                        o += (size_t)n;
                        }
}

/* Which count is which, said on the line: "ECC corr 0 uncorr 2", or "ECC c0 u2" where
 * the one-line form has 80 columns (review: "ECC 0/2" left the reader guessing). */
static void ecc_text(char *out, size_t size, const struct top_gpu *g, bool one_line) {
        if (!g->have_ecc_mode)
                snprintf(out, size, "ECC ?");
        else if (!g->ecc_on)
                snprintf(out, size, "ECC off");
        else if (!g->have_ecc_counts)
                snprintf(out, size, "ECC on");
        else if (one_line)
                snprintf(out, size, "ECC c%llu u%llu", g->ecc_corrected, g->ecc_uncorrected);
        else
                snprintf(out, size, "ECC corr %llu uncorr %llu", g->ecc_corrected, g->ecc_uncorrected);
}

/* "352KB/s", "6.3MB/s", "25.1GB/s": NVML counts PCIe traffic in KB/s. */
static void rate_text(char *out, size_t size, double kbs) {
        if (kbs < 1000)
                snprintf(out, size, "%.0fKB/s", kbs);
        else if (kbs < 1000 * 1024)
                snprintf(out, size, "%.1fMB/s", kbs / 1024);
        else
                snprintf(out, size, "%.1fGB/s", kbs / (1024 * 1024));
}

/* After a GPU line's text (len columns of cols), what else the driver gave, in whole
 * pieces while they fit: "fan 45%", "enc 3% dec 0%", "PCIe tx 352KB/s rx 6.3MB/s". A
 * piece the driver does not offer is left out, never shown as a fault. */
static void put_extras(struct top_frame *f, unsigned int r, unsigned int len, const struct top_gpu *g) {
        char piece[3][64], a[24], b[24];
        unsigned int n = 0;
        if (g->fan_pct.have)
                snprintf(piece[n++], sizeof(piece[0]), "fan %.0f%%", g->fan_pct.v);
        if (g->enc_pct.have && g->dec_pct.have)
                snprintf(piece[n++], sizeof(piece[0]), "enc %.0f%% dec %.0f%%", g->enc_pct.v, g->dec_pct.v);
        if (g->pcie_tx_kbs.have && g->pcie_rx_kbs.have) {
                rate_text(a, sizeof(a), g->pcie_tx_kbs.v);
                rate_text(b, sizeof(b), g->pcie_rx_kbs.v);
                snprintf(piece[n++], sizeof(piece[0]), "PCIe tx %s rx %s", a, b);
        }
        unsigned int c = len, end = f->cols ? f->cols - 1 : 0;
        for (unsigned int i = 0; i < n; i++) {
                unsigned int w = 2 + (unsigned int)strlen(piece[i]);
                if (c + w > end)
                        return;
                putf(f, r, c, "  %s", piece[i]);
                c += w;
        }
}

/* One cell: "UTIL [|||   45%] _.,:-=+" in width columns. */
static void cell(struct top_frame *f, const struct top_layout *l, unsigned int r, unsigned int c, const char *label,
                 double frac, bool have, const char *text, const struct top_series *s) {
        char buf[256];
        unsigned int spark = l->spark_width;
        unsigned int bar = l->cell_width - 5 - (spark ? spark + 1 : 0);
        if (bar >= sizeof(buf) || spark >= sizeof(buf))
                return;
        putf(f, r, c, "%-4.4s", label);
        top_bar(buf, bar, frac, have, have ? text : "--");
        put(f, r, c + 5, buf);
        if (spark) {
                top_spark(buf, spark, s);
                put(f, r, c + 5 + bar + 1, buf);
        }
}

static double ratio(struct top_reading a, struct top_reading b) { return a.have && b.have && b.v > 0 ? a.v / b.v : 0; }

static enum top_attr gpu_attr(const struct top_gpu *g) {
        switch (top_gpu_classify(g)) {
        case TOP_CLASS_LOST: return TOP_ATTR_LOST;
        case TOP_CLASS_STALE: return TOP_ATTR_STALE;
        case TOP_CLASS_FAULT: return TOP_ATTR_FAULT;
        case TOP_CLASS_WARN: return TOP_ATTR_WARN;
        case TOP_CLASS_NORMAL: break;
        }
        return TOP_ATTR_NORMAL;
}

static const char *state_word(const struct top_gpu *g) {
        return g->state == TOP_GPU_LOST ? "LOST" : g->state == TOP_GPU_STALE ? "STALE" : NULL;
}

static void gpu_full(struct top_frame *f, const struct top_layout *l, unsigned int r, const struct top_gpu *g) {
        char reasons[160], ecc[64], t[64];
        f->attr[r] = gpu_attr(g);
        const char *word = state_word(g);
        reasons_text(reasons, sizeof(reasons), g);
        ecc_text(ecc, sizeof(ecc), g, false);
        if (word) {
                putf(f, r, 0, "%2u %s  %s: %s", g->index, g->name, word, g->why);
        } else {
                /* ECC first, as on the one-line form: a long list of reasons never hides it */
                char head[512];
                int n = snprintf(head, sizeof(head), "%2u %s  %s  throttle: %s", g->index, g->name, ecc, reasons);
                put(f, r, 0, head);
                if (n > 0)
                        put_extras(f, r, (unsigned int)n, g);
        }
        bool live = g->state == TOP_GPU_LIVE;
        unsigned int c2 = l->cell_width + 2, c3 = 2 * (l->cell_width + 2);
        snprintf(t, sizeof(t), "%.0f%%", g->util_pct.v);
        cell(f, l, r + 1, 0, "UTIL", g->util_pct.v / 100, live && g->util_pct.have, t, &g->h_util);
        mem_text(t, sizeof(t), g);
        cell(f, l, r + 1, c2, "MEM", ratio(g->mem_used_bytes, g->mem_total_bytes),
             live && g->mem_used_bytes.have && g->mem_total_bytes.have, t, &g->h_mem);
        snprintf(t, sizeof(t), "%.0fC", g->temp_c.v);
        cell(f, l, r + 1, c3, "TEMP", ratio(g->temp_c, g->temp_slowdown_c.have ? g->temp_slowdown_c
                                                                              : (struct top_reading){true, 100}),
             live && g->temp_c.have, t, &g->h_temp);
        if (g->power_limit_w.have)
                snprintf(t, sizeof(t), "%.0f/%.0fW", g->power_w.v, g->power_limit_w.v);
        else
                snprintf(t, sizeof(t), "%.0fW", g->power_w.v);
        cell(f, l, r + 2, 0, "PWR", ratio(g->power_w, g->power_limit_w), live && g->power_w.have, t, &g->h_power);
        snprintf(t, sizeof(t), "%.0fMHz", g->sm_mhz.v);
        cell(f, l, r + 2, c2, "SM", ratio(g->sm_mhz, g->sm_max_mhz), live && g->sm_mhz.have, t, &g->h_sm);
        snprintf(t, sizeof(t), "%.0fMHz", g->mem_mhz.v);
        cell(f, l, r + 2, c3, "MCLK", ratio(g->mem_mhz, g->mem_max_mhz), live && g->mem_mhz.have, t, &g->h_mclk);
}

/* The name without the vendor, which every row would repeat. */
static const char *short_name(const char *name) { return strncmp(name, "NVIDIA ", 7) == 0 ? name + 7 : name; }

static void gpu_compact(struct top_frame *f, unsigned int r, const struct top_gpu *g) {
        char reasons[160], ecc[64], bar1[32], bar2[32], t[64];
        f->attr[r] = gpu_attr(g);
        const char *word = state_word(g);
        if (word) {
                putf(f, r, 0, "%2u %-14.14s %s: %s", g->index, short_name(g->name), word, g->why);
                return;
        }
        reasons_text(reasons, sizeof(reasons), g);
        ecc_text(ecc, sizeof(ecc), g, true);
        snprintf(t, sizeof(t), "%.0f%%", g->util_pct.v);
        top_bar(bar1, 8, g->util_pct.v / 100, g->util_pct.have, g->util_pct.have ? t : "--");
        mem_text(t, sizeof(t), g);
        top_bar(bar2, 12, ratio(g->mem_used_bytes, g->mem_total_bytes), g->mem_used_bytes.have, t);
        char temp[16] = "--", pwr[16] = "--", sm[16] = "--";
        if (g->temp_c.have)
                snprintf(temp, sizeof(temp), "%.0fC", g->temp_c.v);
        if (g->power_w.have)
                snprintf(pwr, sizeof(pwr), "%.0fW", g->power_w.v);
        if (g->sm_mhz.have)
                snprintf(sm, sizeof(sm), "%.0fMHz", g->sm_mhz.v);
        /* ECC before the reasons: a long list of reasons is cut at the edge, never the
         * errors; 100C or 1000W take one column more on their line. */
        char line[512];
        int n = snprintf(line, sizeof(line), "%2u %-14.14s %s %s %3s %4s %7s %-9s %s", g->index, short_name(g->name),
                         bar1, bar2, temp, pwr, sm, ecc, reasons);
        put(f, r, 0, line);
        if (n > 0)
                put_extras(f, r, (unsigned int)n, g);
}

static void bytes_text(char *out, size_t size, const struct top_proc_row *p) {
        if (!p->have_mem)
                snprintf(out, size, "?");
        else
                snprintf(out, size, "%lluMiB", p->used_bytes / (1024ULL * 1024ULL));
}

/* Host memory as "980K", "12.3M", "512M", "1.5G": at most 5 columns. */
static void rss_text(char *out, size_t size, const struct proc_info *in) {
        if (!in->have_rss) {
                snprintf(out, size, "-");
                return;
        }
        if (in->rss_kib < 1000) {
                snprintf(out, size, "%lluK", in->rss_kib);
                return;
        }
        static const char units[] = "MGTP";
        double v = (double)in->rss_kib / 1024.0;
        unsigned int u = 0;
        while (v >= 999.5 && u + 1 < sizeof(units) - 1) {
                v /= 1024.0;
                u++;
        }
        snprintf(out, size, v < 9.95 ? "%.1f%c" : "%.0f%c", v, units[u]);
}

/* Elapsed time as ps shows it, in at most 8 columns: "05:07", "1:02:03", "12d04h". */
static void elapsed_text(char *out, size_t size, double seconds) {
        if (seconds < 0) {
                snprintf(out, size, "-");
                return;
        }
        unsigned long long s = (unsigned long long)seconds;
        if (s < 3600)
                snprintf(out, size, "%02llu:%02llu", s / 60, s % 60);
        else if (s < 86400)
                snprintf(out, size, "%llu:%02llu:%02llu", s / 3600, s / 60 % 60, s % 60);
        else
                snprintf(out, size, "%llud%02lluh", s / 86400 > 9999 ? 9999 : s / 86400, s / 3600 % 24);
}

static void cpu_text(char *out, size_t size, double pct) {
        if (pct < 0)
                snprintf(out, size, "-");
        else
                snprintf(out, size, pct < 99.95 ? "%.1f" : "%.0f", pct);
}

/* The command after the tree's glyphs (none in the flat view): the columns before it stay
 * where they are, so the tree reads down the COMMAND column. */
static void command(struct top_frame *f, unsigned int r, bool workload_column, const char *workload,
                    const char *glyphs, const char *cmd) {
        char text[sizeof(((struct top_tree_line *)0)->glyphs) + sizeof(((struct proc_info *)0)->command) + 64];
        snprintf(text, sizeof(text), "%s%s", glyphs, cmd);
        if (workload_column)
                putf(f, r, TOP_PROC_PREFIX_WIDTH, "%-*.*s %s", TOP_WORKLOAD_WIDTH, TOP_WORKLOAD_WIDTH, workload, text);
        else
                put(f, r, TOP_PROC_PREFIX_WIDTH, text);
}

/* A GPU process's ancestor that uses no GPU: the host columns only, the GPU ones "-", and
 * no JOB/POD (not looked up for it: its workers' rows say it). */
static void host_row(struct top_frame *f, unsigned int r, const struct top_host_row *h, bool workload_column,
                     const char *glyphs) {
        char ns[16] = "-", cpu[16], rss[16], age[32];
        cpu_text(cpu, sizeof(cpu), h->cpu_pct);
        rss_text(rss, sizeof(rss), &h->info);
        elapsed_text(age, sizeof(age), h->info.elapsed_s);
        if (h->info.ns_pid)
                snprintf(ns, sizeof(ns), "%u", h->info.ns_pid);
        putf(f, r, 0, "%3s %7u %6s %-8.8s %9s %4s %c %5s %5s %8s", "-", h->pid, ns, h->info.user, "-", "-", '-', cpu,
             rss, age);
        command(f, r, workload_column, "", glyphs, h->info.command);
}

static void proc_row(struct top_frame *f, unsigned int r, const struct top_proc_row *p, bool workload_column,
                     const char *glyphs) {
        char mem[32], ns[16] = "-", sm[16] = "-", cpu[16], rss[16], age[32];
        cpu_text(cpu, sizeof(cpu), p->info.where == PROC_FOUND ? p->cpu_pct : -1);
        rss_text(rss, sizeof(rss), &p->info);
        elapsed_text(age, sizeof(age), p->info.where == PROC_FOUND ? p->info.elapsed_s : -1);
        if (p->sm_pct >= 0)
                snprintf(sm, sizeof(sm), "%d%%", p->sm_pct);
        bytes_text(mem, sizeof(mem), p);
        const char *user = p->info.user, *cmd = p->info.command;
        switch (p->info.where) {
        case PROC_OTHER_NS:
                snprintf(ns, sizeof(ns), "?");
                user = "other-ns";
                cmd = "(other namespace: NVML's PID is not visible from here)";
                break;
        case PROC_GONE:
                user = "-";
                cmd = "(exited)";
                break;
        case PROC_FOUND:
                if (p->info.ns_pid)
                        snprintf(ns, sizeof(ns), "%u", p->info.ns_pid);
                break;
        }
        /* TOP_PROC_PREFIX_WIDTH columns before the workload or the command */
        putf(f, r, 0, "%3u %7u %6s %-8.8s %9s %4s %c %5s %5s %8s", p->gpu, p->pid, ns, user, mem, sm,
             p->graphics ? 'G' : 'C', cpu, rss, age);
        command(f, r, workload_column, p->info.workload[0] ? p->info.workload : "-", glyphs, cmd);
}

/* Each line within 79 columns (the last is left blank) and no more lines than the rows
 * under the process header at 80x24 with 8 GPUs (13): the help is read on small terminals
 * first (test_help_fits_80). */
static const char *const help_lines[] = {
        "Keys",
        "  Up/Down, k/j  select a process      PgUp/PgDn, Home/End  a page, first, last",
        "  s, F6         next sort key         m u p  sort by GPU memory, SM share, PID",
        "  t, F5         process tree on/off   c r e  sort by host %CPU, RSS, TIME",
        "  Left/Right    scroll the GPUs when they do not all fit      q  quit",
        "  K T I         SIGKILL, SIGTERM, SIGINT to the selected process (asks y/N)",
        "  Esc           no selection          h ? F1  this help (any key closes it)",
        "Columns: GPU, PID (the host's), NS-PID (in its container), USER, GPU-MEM, SM",
        "  share, T (C compute, G graphics), %CPU, RSS and TIME (elapsed) on the host.",
        "ECC c0 u2: volatile ECC errors, c corrected, u uncorrected (since driver load).",
        "Red: a fault (uncorrected ECC, HW slowdown, LOST). Yellow: SW thermal slowdown.",
        "STALE: readings did not come in time. LOST: NVML says the GPU fell off the bus.",
        "Sparklines: the last samples, _.,:-=+*# from low to high, blank: no reading.",
};

/* Index of the selected row, or -1. */
static int selected_index(const struct top_view *v, const struct top_model *m) {
        if (!v->have_selected)
                return -1;
        for (unsigned int i = 0; i < m->n_procs; i++)
                if (m->procs[i].gpu == v->sel_gpu && m->procs[i].pid == v->sel_pid)
                        return (int)i;
        return -1;
}

const struct top_proc_row *top_view_selected(const struct top_view *v, const struct top_model *m) {
        int i = selected_index(v, m);
        return i < 0 ? NULL : &m->procs[i];
}

/* The process lines as shown: m->procs in its order, or the tree's lines. */
struct shown {
        struct top_tree_line *tree; /* NULL: the flat view */
        unsigned int n;
};

static int shown_get(const struct top_view *v, const struct top_model *m, struct shown *ret) {
        ret->tree = NULL;
        ret->n = m->n_procs;
        return v->tree ? top_model_tree(m, &ret->tree, &ret->n) : 0;
}

/* Line i's row in m->procs, or -1 for a host row: never selected, so never signalled. */
static int shown_row(const struct shown *s, unsigned int i) {
        if (!s->tree)
                return (int)i;
        return s->tree[i].host ? -1 : (int)s->tree[i].index;
}

/* The line of the selected row, or -1. */
static int selected_line(const struct top_view *v, const struct top_model *m, const struct shown *s) {
        int sel = selected_index(v, m);
        for (unsigned int i = 0; sel >= 0 && i < s->n; i++)
                if (shown_row(s, i) == sel)
                        return (int)i;
        return -1;
}

/* Select the pos-th process line (host rows not counted), clamped to the first and last;
 * returns its line, or -1 when there is no process. */
static int select_pos(struct top_view *v, const struct top_model *m, const struct shown *s, int pos) {
        int count = 0;
        for (unsigned int i = 0; i < s->n; i++)
                count += shown_row(s, i) >= 0;
        if (count == 0) {
                v->have_selected = false;
                return -1;
        }
        if (pos < 0)
                pos = 0;
        if (pos >= count)
                pos = count - 1;
        for (unsigned int i = 0; i < s->n; i++) {
                int row = shown_row(s, i);
                if (row >= 0 && pos-- == 0) {
                        v->have_selected = true;
                        v->sel_gpu = m->procs[row].gpu;
                        v->sel_pid = m->procs[row].pid;
                        return (int)i;
                }
        }
        return -1;
}

void top_view_move(struct top_view *v, const struct top_model *m, int delta) {
        struct shown s;
        if (shown_get(v, m, &s) < 0) /* no memory for the tree: move in m->procs' order rather than not at all */
                s = (struct shown){.n = m->n_procs};
        int line = selected_line(v, m, &s), pos = 0;
        for (int i = 0; i < line; i++)
                pos += shown_row(&s, (unsigned int)i) >= 0;
        select_pos(v, m, &s, line < 0 ? 0 : pos + delta);
        free(s.tree);
}

static int processes(struct top_frame *f, const struct top_layout *l, const struct top_model *m, struct top_view *v) {
        unsigned int r = l->proc_top;
        const char *cmd_title = v->tree ? "COMMAND (tree)" : "COMMAND";
        f->attr[r] = TOP_ATTR_TITLE;
        putf(f, r, 0, "%3s %7s %6s %-8s %9s %4s %c %5s %5s %8s", "GPU", "PID", "NS-PID", "USER", "GPU-MEM", "SM", 'T',
             "%CPU", "RSS", "TIME");
        if (l->workload_column)
                putf(f, r, TOP_PROC_PREFIX_WIDTH, "%-*s %s", TOP_WORKLOAD_WIDTH, "JOB/POD", cmd_title);
        else
                put(f, r, TOP_PROC_PREFIX_WIDTH, cmd_title);
        r++;
        if (v->help) {
                for (unsigned int i = 0; i < ARRAY_COUNT(help_lines) && i < l->proc_rows; i++)
                        put(f, r + i, 0, help_lines[i]);
                return 0;
        }
        if (m->n_procs == 0) {
                if (l->proc_rows)
                        put(f, r, 0, "  no processes on the GPUs");
                return 0;
        }
        struct shown s;
        if (shown_get(v, m, &s) < 0)
                return -ENOMEM;
        int sel = selected_line(v, m, &s);
        if (sel < 0 && v->have_selected) /* it exited: the row that took its place */
                sel = select_pos(v, m, &s, 0);
        if (sel >= 0) {
                if ((unsigned int)sel < v->proc_scroll)
                        v->proc_scroll = (unsigned int)sel;
                if (l->proc_rows && (unsigned int)sel >= v->proc_scroll + l->proc_rows)
                        v->proc_scroll = (unsigned int)sel - l->proc_rows + 1;
        }
        if (v->proc_scroll >= s.n)
                v->proc_scroll = 0;
        for (unsigned int i = 0; i < l->proc_rows && v->proc_scroll + i < s.n; i++) {
                unsigned int k = v->proc_scroll + i;
                int row = shown_row(&s, k);
                if (row < 0)
                        host_row(f, r + i, &m->hosts[s.tree[k].index], l->workload_column, s.tree[k].glyphs);
                else
                        proc_row(f, r + i, &m->procs[row], l->workload_column, s.tree ? s.tree[k].glyphs : "");
                if ((int)k == sel) {
                        /* a mark as well as the highlight: visible without attributes */
                        line_at(f, r + i)[0] = '>';
                        f->attr[r + i] = TOP_ATTR_SELECTED;
                }
        }
        free(s.tree);
        return 0;
}

/* "45s", "12m", "3h20m": how far back a chart reaches. */
static void span_text(char *out, size_t size, unsigned long long ms) {
        unsigned long long s = ms / 1000;
        if (s < 120)
                snprintf(out, size, "%llus", s);
        else if (s < 7200)
                snprintf(out, size, "%llum", s / 60);
        else
                snprintf(out, size, "%lluh%02llum", s / 3600, s / 60 % 60);
}

/* One panel of the chart: its title, then the plot with a scale at the left. */
static int chart_panel(struct top_frame *f, const struct top_layout *l, unsigned int left, unsigned int width,
                       const char *title, const struct top_series *const *series, const char *marks, size_t n) {
        enum { SCALE = 4 }; /* "100|" */
        if (width <= SCALE + 1)
                return 0;
        size_t plot = width - SCALE;
        char *grid = malloc(TOP_CHART_PLOT_ROWS * (plot + 1));
        if (!grid)
                return -ENOMEM;
        top_chart(grid, plot, TOP_CHART_PLOT_ROWS, series, marks, n);
        put(f, l->chart_top, left, title);
        for (unsigned int r = 0; r < TOP_CHART_PLOT_ROWS; r++) {
                /* 100 % plots in the top row, 50 % in the one labelled 50, 0 % in the bottom one */
                const unsigned int half = TOP_CHART_PLOT_ROWS - 1 - TOP_CHART_PLOT_ROWS / 2;
                const char *scale = r == 0 ? "100" : r == half ? "50" : r == TOP_CHART_PLOT_ROWS - 1 ? "0" : "";
                putf(f, l->chart_top + 1 + r, left, "%3s|%s", scale, grid + r * (plot + 1));
        }
        free(grid);
        return 0;
}

/* Every GPU's utilization and memory in use over the history top keeps, side by side,
 * each GPU drawn with its index (0-9, then a-z), as nvtop charts its GPUs. */
static int chart(struct top_frame *f, const struct top_layout *l, const struct top_model *m,
                 const struct top_view *v) {
        static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
        const struct top_series **util = calloc(m->n_gpus ? m->n_gpus : 1, sizeof(*util));
        const struct top_series **mem = calloc(m->n_gpus ? m->n_gpus : 1, sizeof(*mem));
        char *marks = malloc(m->n_gpus + 1);
        int rc = -ENOMEM;
        if (!util || !mem || !marks)
                goto out;
        for (unsigned int i = 0; i < m->n_gpus; i++) {
                util[i] = &m->gpus[i].h_util;
                mem[i] = &m->gpus[i].h_mem;
                unsigned int index = m->gpus[i].index;
                marks[i] = index < sizeof(digits) - 1 ? digits[index] : '#';
        }
        unsigned int panel = (f->cols - 1 - 2) / 2;
        char span[32], title[160];
        span_text(span, sizeof(span), (unsigned long long)(panel - 4) * v->interval_ms);
        snprintf(title, sizeof(title), "UTIL %%, last %s (mark: GPU index, * several)", span);
        rc = chart_panel(f, l, 0, panel, title, util, marks, m->n_gpus);
        if (rc == 0) {
                snprintf(title, sizeof(title), "MEM used %%, last %s", span);
                rc = chart_panel(f, l, panel + 2, panel, title, mem, marks, m->n_gpus);
        }
out:
        free(util);
        free(mem);
        free(marks);
        return rc;
}

unsigned int top_frame_rows_for_all(const struct top_model *m, const struct top_view *v) {
        unsigned int lines = m->n_procs + (v->tree ? m->n_hosts : 0);
        unsigned int procs = lines > TOP_MIN_PROC_ROWS ? lines : TOP_MIN_PROC_ROWS;
        unsigned int rows = 3 + m->n_gpus * TOP_FULL_LINES + procs;
        return rows < TOP_MIN_ROWS ? TOP_MIN_ROWS : rows;
}

int top_frame_render(const struct top_model *m, struct top_view *v, unsigned int rows, unsigned int cols,
                     struct top_frame *ret) {
        top_frame_done(ret);
        if (rows == 0 || cols == 0)
                return 0;
        ret->text = malloc((size_t)rows * (cols + 1));
        ret->attr = calloc(rows, sizeof(*ret->attr));
        if (!ret->text || !ret->attr) {
                top_frame_done(ret);
                return -ENOMEM;
        }
        ret->rows = rows;
        ret->cols = cols;
        for (unsigned int r = 0; r < rows; r++) {
                memset(line_at(ret, r), ' ', cols);
                line_at(ret, r)[cols] = '\0';
        }
        struct top_layout l;
        top_layout_compute(rows, cols, m->n_gpus, &l);
        if (!v->no_chart)
                top_layout_chart(&l, cols);
        if (l.too_small) {
                putf(ret, 0, 0, "gpuvet top: %ux%u is too small (%ux%u at least); q quits", cols, rows, TOP_MIN_COLS,
                     TOP_MIN_ROWS);
                return 0;
        }
        ret->attr[0] = TOP_ATTR_TITLE;
        putf(ret, 0, 0, "gpuvet top  driver %s  %u GPU%s  every %.1fs  sort: %s%s%s", m->driver[0] ? m->driver : "?",
             m->n_gpus, m->n_gpus == 1 ? "" : "s", (double)v->interval_ms / 1000.0, top_sort_name(v->sort),
             m->problem[0] ? "  " : "", m->problem);
        unsigned int hidden = m->n_gpus > l.gpus_shown ? m->n_gpus - l.gpus_shown : 0;
        if (v->gpu_scroll > hidden)
                v->gpu_scroll = hidden;
        unsigned int r = 1;
        for (unsigned int i = 0; i < l.gpus_shown; i++, r += l.gpu_lines) {
                const struct top_gpu *g = &m->gpus[v->gpu_scroll + i];
                if (l.full)
                        gpu_full(ret, &l, r, g);
                else
                        gpu_compact(ret, r, g);
        }
        if (l.more_line)
                putf(ret, r, 0, "   GPUs %u-%u of %u shown (Left/Right scroll)", v->gpu_scroll,
                     v->gpu_scroll + l.gpus_shown - 1, m->n_gpus);
        if ((l.chart_rows && chart(ret, &l, m, v) < 0) || processes(ret, &l, m, v) < 0) {
                top_frame_done(ret);
                return -ENOMEM;
        }
        if (v->confirm.active || v->status[0]) {
                char prompt[256];
                if (v->confirm.active)
                        top_signal_prompt(&v->confirm, prompt, sizeof(prompt));
                ret->attr[l.help_row] = TOP_ATTR_TITLE;
                put(ret, l.help_row, 0, v->confirm.active ? prompt : v->status);
        } else {
                put(ret, l.help_row, 0,
                    "q quit  Up/Down select  s sort  m/u/p mem/util/pid  t tree  K/T/I kill  h help");
        }
        return 0;
}

void top_frame_done(struct top_frame *f) {
        free(f->text);
        free(f->attr);
        memset(f, 0, sizeof(*f));
}

/* The stress test: how it ran, each device's end, and its telemetry over time (per device
 * temperature, power, SM clock, memory temperature, and the GEMM rate), so a GPU that ran
 * hot, hit its power brake or dropped its clocks shows where in the run it did. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "html/html_escape.h"
#include "html/html_page.h"
#include "html/svg_series.h"
#include "report/html_sections.h"

/* The telemetry charts: a sample field, its chart title and unit. */
static const struct {
        const char *field, *title, *unit;
} telemetry_charts[] = {
        {"temperature_c", "GPU temperature", "\xC2\xB0" "C"},
        {"memory_temperature_c", "Memory (HBM) temperature", "\xC2\xB0" "C"},
        {"power_w", "Power draw", "W"},
        {"sm_clock_mhz", "SM clock", "MHz"},
        {"utilization_pct", "GPU utilization", "%"},
};
#define N_CHARTS (ARRAY_COUNT(telemetry_charts))

/* The levels the burn's verdicts compare each device with, where its document tells them
 * (NaN where it does not), drawn on the charts so that a failed verdict shows why. */
enum limit { LIMIT_SLOWDOWN, LIMIT_MEMORY, LIMIT_POWER, LIMIT_CLOCK_FLOOR, N_LIMITS };
static const struct {
        const char *field; /* the telemetry chart it goes on */
        const char *what, *unit;
} limit_info[N_LIMITS] = {
        [LIMIT_SLOWDOWN] = {"temperature_c", "slowdown", "\xC2\xB0" "C"},
        [LIMIT_MEMORY] = {"memory_temperature_c", "memory limit", "\xC2\xB0" "C"},
        [LIMIT_POWER] = {"power_w", "power limit", "W"},
        [LIMIT_CLOCK_FLOOR] = {"sm_clock_mhz", "verdict's floor", "MHz"},
};

struct device_series {
        char name[160];
        double limit[N_LIMITS];
        double *t;          /* sample times */
        double *y[N_CHARTS]; /* one column per chart */
        size_t n;
        double *tp_t, *tp_y; /* the GEMM rate per tick */
        size_t n_tp;
};

static void fmt_number(double v, const char *fmt, char *buf, size_t size) {
        if (isfinite(v))
                snprintf(buf, size, fmt, v);
        else
                snprintf(buf, size, "\xE2\x80\x94");
}

static void run_table(struct html_buf *b, struct doc_reader *r, json_t *burn) {
        char duration[32], interval[32], modes[256] = "";
        fmt_number(doc_number(r, burn, "burn", "duration_s", false), "%.1f s", duration, sizeof(duration));
        fmt_number(doc_number(r, burn, "burn", "sample_interval_ms", false), "%.0f ms", interval, sizeof(interval));
        json_t *m = doc_object(r, burn, "burn", "modes_s", false);
        const char *key;
        json_t *v;
        json_object_foreach(m, key, v) {
                size_t len = strlen(modes);
                if (json_is_number(v))
                        snprintf(modes + len, sizeof(modes) - len, "%s%s %.0f s", len ? ", " : "", key,
                                 json_number_value(v));
        }
        const char *const rows[][2] = {
                {"Backend", doc_string(r, burn, "burn", "backend", false)},
                {"Duration", duration},
                {"Modes", modes[0] ? modes : NULL},
                {"Seed", doc_string(r, burn, "burn", "seed", false)},
                {"Telemetry interval", interval},
                {"Note", doc_string(r, burn, "burn", "note", false)},
                {"Telemetry note", doc_string(r, burn, "burn", "telemetry_note", false)},
        };
        static const char *const headers[] = {"Run", ""};
        html_table_begin(b, "kv burn-run", headers, 2);
        for (size_t i = 0; i < ARRAY_COUNT(rows); i++)
                if (rows[i][1])
                        html_table_row(b, rows[i], 2);
        html_table_end(b);
}

static void device_row(struct html_buf *b, struct doc_reader *r, json_t *d, const char *where) {
        char index[32], products[32], faults[32], mem_errors[32];
        json_t *gemm = doc_object(r, d, where, "gemm", false), *memtest = doc_object(r, d, where, "memtest", false);
        fmt_number(doc_number(r, d, where, "index", false), "%.0f", index, sizeof(index));
        fmt_number(doc_number(r, gemm, "gemm", "products", false), "%.0f", products, sizeof(products));
        fmt_number(doc_number(r, d, where, "faults_total", false), "%.0f", faults, sizeof(faults));
        fmt_number(doc_number(r, memtest, "memtest", "errors", false), "%.0f", mem_errors, sizeof(mem_errors));
        const char *cells[] = {index,
                               doc_string(r, d, where, "name", false),
                               doc_string(r, d, where, "pci_bus_id", false),
                               doc_string(r, d, where, "end", false),
                               products,
                               faults,
                               mem_errors,
                               doc_string(r, d, where, "error", false)};
        html_table_row(b, cells, ARRAY_COUNT(cells));
}

static void free_series(struct device_series *s) {
        free(s->t);
        for (size_t c = 0; c < N_CHARTS; c++)
                free(s->y[c]);
        free(s->tp_t);
        free(s->tp_y);
}

/* The device's samples and throughput ticks into s; false on a malformed sample (recorded)
 * or out of memory (b marked failed). */
/* The floor burn.sm_clock judged the device's clock against: its evidence, in documents
 * that carry it (gpuvet after 0.1.0). */
static double clock_floor(json_t *root, const char *pci) {
        json_t *checks = json_object_get(root, "checks"), *c;
        size_t i;
        json_array_foreach(checks, i, c) {
                const char *id = json_string_value(json_object_get(c, "id"));
                const char *subject = json_string_value(json_object_get(c, "subject"));
                if (!id || !subject || !pci || strcmp(id, "burn.sm_clock") || strcmp(subject, pci))
                        continue;
                const char *v = json_string_value(json_object_get(json_object_get(c, "evidence"), "clock_floor_mhz"));
                char *end;
                double floor = v ? strtod(v, &end) : NAN;
                return v && end != v && !*end ? floor : NAN;
        }
        return NAN;
}

static bool read_series(struct html_buf *b, struct doc_reader *r, json_t *root, json_t *d, const char *where,
                        struct device_series *s) {
        const char *pci = doc_string(r, d, where, "pci_bus_id", false);
        snprintf(s->name, sizeof(s->name), "%.0f: %s", doc_number(r, d, where, "index", false), pci ? pci : "");
        char at[96];
        snprintf(at, sizeof(at), "%s.telemetry", where);
        json_t *tel = doc_object(r, d, where, "telemetry", false);
        s->limit[LIMIT_SLOWDOWN] = doc_number(r, tel, at, "temperature_slowdown_c", false);
        s->limit[LIMIT_MEMORY] = doc_number(r, tel, at, "memory_temperature_max_c", false);
        s->limit[LIMIT_POWER] = NAN; /* the enforced limit of the last sample that tells it */
        s->limit[LIMIT_CLOCK_FLOOR] = clock_floor(root, pci);
        json_t *samples = doc_array(r, tel, at, "samples", false);
        size_t n = json_array_size(samples);
        s->t = calloc(n ? n : 1, sizeof(double));
        for (size_t c = 0; c < N_CHARTS; c++)
                s->y[c] = calloc(n ? n : 1, sizeof(double));
        json_t *tp = doc_array(r, d, where, "throughput", false);
        size_t n_tp = json_array_size(tp);
        s->tp_t = calloc(n_tp ? n_tp : 1, sizeof(double));
        s->tp_y = calloc(n_tp ? n_tp : 1, sizeof(double));
        bool ok = s->t && s->tp_t && s->tp_y;
        for (size_t c = 0; c < N_CHARTS; c++)
                ok = ok && s->y[c];
        if (!ok) {
                b->failed = true;
                return false;
        }
        snprintf(at, sizeof(at), "%s.telemetry.samples", where);
        for (size_t i = 0; i < n; i++) {
                json_t *o = doc_array_object(r, samples, at, i);
                if (!o)
                        return false;
                s->t[i] = doc_number(r, o, at, "t_s", true);
                for (size_t c = 0; c < N_CHARTS; c++)
                        s->y[c][i] = doc_number(r, o, at, telemetry_charts[c].field, false);
                double limit = doc_number(r, o, at, "power_limit_w", false);
                if (isfinite(limit))
                        s->limit[LIMIT_POWER] = limit;
        }
        s->n = n;
        snprintf(at, sizeof(at), "%s.throughput", where);
        for (size_t i = 0; i < n_tp; i++) {
                json_t *o = doc_array_object(r, tp, at, i);
                if (!o)
                        return false;
                s->tp_t[i] = doc_number(r, o, at, "t_s", true);
                s->tp_y[i] = doc_number(r, o, at, "tflops", false);
        }
        s->n_tp = n_tp;
        return !r->failed;
}

static bool any_finite(const struct device_series *s, size_t n_dev, size_t c) {
        for (size_t k = 0; k < n_dev; k++)
                for (size_t i = 0; i < s[k].n; i++)
                        if (isfinite(s[k].y[c][i]))
                                return true;
        return false;
}

#define MAX_LIMIT_LINES 4

/* The chart's limit lines: one when every device that tells the limit has the same, else
 * one per device (at most MAX_LIMIT_LINES), named by its index. */
static size_t chart_limits(const struct device_series *s, size_t n_dev, size_t c, struct svg_limit *ret,
                           char labels[][96]) {
        size_t n = 0;
        for (int l = 0; l < N_LIMITS; l++) {
                if (strcmp(limit_info[l].field, telemetry_charts[c].field))
                        continue;
                size_t first = n_dev, distinct = 0;
                for (size_t k = 0; k < n_dev; k++) {
                        if (!isfinite(s[k].limit[l]))
                                continue;
                        if (first == n_dev)
                                first = k;
                        distinct += s[k].limit[l] != s[first].limit[l];
                }
                if (first == n_dev)
                        continue;
                for (size_t k = first; k < n_dev && n < MAX_LIMIT_LINES; k++) {
                        if (!isfinite(s[k].limit[l]) || (distinct == 0 && k != first))
                                continue;
                        char device[24] = "";
                        if (distinct)
                                snprintf(device, sizeof(device), " (GPU %.*s)", (int)strcspn(s[k].name, ":"), s[k].name);
                        snprintf(labels[n], sizeof(labels[n]), "%s %.0f %s%s", limit_info[l].what, s[k].limit[l],
                                 limit_info[l].unit, device);
                        ret[n] = (struct svg_limit){labels[n], s[k].limit[l]};
                        n++;
                }
        }
        return n;
}

static void telemetry(struct html_buf *b, struct device_series *s, size_t n_dev) {
        struct svg_series *series = calloc(n_dev ? n_dev : 1, sizeof(*series));
        if (!series) {
                b->failed = true;
                return;
        }
        for (size_t c = 0; c < N_CHARTS; c++) {
                if (!any_finite(s, n_dev, c))
                        continue;
                for (size_t k = 0; k < n_dev; k++)
                        series[k] = (struct svg_series){.name = s[k].name, .x = s[k].t, .y = s[k].y[c], .n = s[k].n};
                struct svg_limit limits[MAX_LIMIT_LINES];
                char labels[MAX_LIMIT_LINES][96];
                size_t n_limits = chart_limits(s, n_dev, c, limits, labels);
                svg_series_chart_limits(b, telemetry_charts[c].title, "time (s)", telemetry_charts[c].unit, series,
                                        n_dev, limits, n_limits);
        }
        bool rate = false;
        for (size_t k = 0; k < n_dev; k++) {
                series[k] = (struct svg_series){.name = s[k].name, .x = s[k].tp_t, .y = s[k].tp_y, .n = s[k].n_tp};
                rate = rate || s[k].n_tp;
        }
        if (rate)
                svg_series_chart(b, "GEMM rate (device-timed)", "time (s)", "TFLOPS", series, n_dev);
        free(series);
}

static void burn_doc(struct html_buf *b, struct node_doc *d, json_t *burn) {
        struct doc_reader *r = d->reader;
        html_buf_puts(b, "<h3>");
        html_escapef(b, "%s: %s", d->command ? d->command : "burn", doc_file_name(r));
        html_buf_puts(b, "</h3>\n");
        json_t *ran = json_object_get(burn, "ran");
        if (!json_is_true(ran)) {
                const char *why = doc_string(r, burn, "burn", "not_run", false);
                html_element(b, "p", "muted", why ? why : "The stress test did not run.");
                return;
        }
        run_table(b, r, burn);
        json_t *devs = doc_array(r, burn, "burn", "devices", false);
        size_t n_dev = json_array_size(devs);
        if (!n_dev)
                return;
        static const char *const headers[] = {"#", "Device", "PCI bus id", "End", "GEMM products", "Faults",
                                              "Memory errors", "Error"};
        html_table_begin(b, "burn-devices", headers, 8);
        for (size_t k = 0; k < n_dev; k++) {
                char where[48];
                snprintf(where, sizeof(where), "burn.devices[%zu]", k);
                json_t *o = doc_array_object(r, devs, "burn.devices", k);
                if (!o)
                        break;
                device_row(b, r, o, where);
        }
        html_table_end(b);
        struct device_series *s = calloc(n_dev, sizeof(*s));
        if (!s) {
                b->failed = true;
                return;
        }
        bool ok = true;
        for (size_t k = 0; k < n_dev && ok; k++) {
                char where[48];
                snprintf(where, sizeof(where), "burn.devices[%zu]", k);
                json_t *o = json_array_get(devs, k);
                ok = json_is_object(o) && read_series(b, r, d->doc, o, where, &s[k]);
        }
        if (ok)
                telemetry(b, s, n_dev);
        for (size_t k = 0; k < n_dev; k++)
                free_series(&s[k]);
        free(s);
}

void html_burn_section(struct html_buf *b, struct node_doc *docs, size_t n) {
        struct html_lazy_section section = {.id = "burn", .heading = "Burn"};
        for (size_t i = 0; i < n; i++) {
                if (docs[i].kind != NODE_DOC_CHECK)
                        continue;
                json_t *burn = doc_object(docs[i].reader, docs[i].doc, "", "burn", false);
                if (!burn)
                        continue;
                html_lazy_section_entry(b, &section);
                burn_doc(b, &docs[i], burn);
        }
        html_lazy_section_end(b, &section);
}

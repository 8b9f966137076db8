/* The --query-gpu field table (see query_fields.h). Formats were taken from nvidia-smi
 * 590.48/595.80 captures (tests/golden/test_query.py compares against them). */
#include "report/query_fields.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "core/strbuf.h"
#include "report/text_safe.h"
#include "metrics/metrics.h"

/* A --query-gpu field: one of a metric's nvidia-smi names, or the row's timestamp. */
struct query_field {
        const char *name;
        const struct metric *m; /* NULL: timestamp */
};

/* timestamp, then every nvidia-smi name of every metric in registry order. */
static struct query_field fields[1 + 2 * 128];
static size_t n_fields;
static pthread_once_t fields_once = PTHREAD_ONCE_INIT;

/* Every name a field answers to (its own, and a metric's old spellings under its first
 * name), sorted by name and then by table order, so that a lookup is a binary search and
 * the first field in table order wins a name two share. */
struct field_name {
        const char *name;
        const struct query_field *f;
        unsigned order;
};
static struct field_name by_name[ARRAY_COUNT(fields) * (1 + METRIC_SMI_ALIASES)];
static size_t n_by_name;

static int field_name_cmp(const void *a, const void *b) {
        const struct field_name *x = a, *y = b;
        int c = strcmp(x->name, y->name);
        return c ? c : (x->order > y->order) - (x->order < y->order);
}

static void add_name(const char *name, const struct query_field *f) {
        if (n_by_name < ARRAY_COUNT(by_name)) {
                by_name[n_by_name] = (struct field_name){.name = name, .f = f, .order = (unsigned)n_by_name};
                n_by_name++;
        }
}

static void build_fields(void) {
        fields[n_fields++] = (struct query_field){.name = "timestamp"};
        for (size_t i = 0; i < metric_count(); i++) {
                const struct metric *m = metric_at(i);
                for (size_t k = 0; k < METRIC_SMI_NAMES && m->smi.names[k]; k++)
                        if (n_fields < ARRAY_COUNT(fields))
                                fields[n_fields++] = (struct query_field){.name = m->smi.names[k], .m = m};
        }
        for (size_t i = 0; i < n_fields; i++) {
                const struct query_field *f = &fields[i];
                add_name(f->name, f);
                if (f->m && f->name == f->m->smi.names[0])
                        for (size_t a = 0; a < METRIC_SMI_ALIASES; a++)
                                if (f->m->smi.aliases[a])
                                        add_name(f->m->smi.aliases[a], f);
        }
        qsort(by_name, n_by_name, sizeof(by_name[0]), field_name_cmp);
}

/* Every supported field, in --help-query-gpu order. */
static size_t query_field_count(void) {
        pthread_once(&fields_once, build_fields);
        return n_fields;
}


const struct query_field *query_field_lookup(const char *name) {
        pthread_once(&fields_once, build_fields);
        size_t lo = 0, hi = n_by_name; /* the first entry not below name */
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strcmp(by_name[mid].name, name) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < n_by_name && strcmp(by_name[lo].name, name) == 0 ? by_name[lo].f : NULL;
}

const struct metric *query_field_metric(const struct query_field *f) { return f->m; }

/* The header cell: the canonical name, then " [unit]" when the field has one
 * ("memory.total [MiB]"). nvidia-smi keeps the unit in the header with nounits too. */
static void query_field_header(const struct query_field *f, char *buf, size_t size) {
        if (f->m && f->m->smi.unit)
                snprintf(buf, size, "%s [%s]", f->name, f->m->smi.unit);
        else
                snprintf(buf, size, "%s", f->name);
}

void query_fields_help(FILE *out) {
        fputs("List of valid properties to query for the switch \"--query-gpu\" (gpuvet supports these;\n"
              "other nvidia-smi fields are refused):\n",
              out);
        fputs("\n\"timestamp\"\nWhen the query was made, \"YYYY/MM/DD HH:MM:SS.msec\" (local time).\n", out);
        /* As nvidia-smi's list: each name its own entry, old spellings after the first. */
        for (size_t i = 1; i < query_field_count(); i++) {
                const struct metric *m = fields[i].m;
                fprintf(out, "\n\"%s\"", fields[i].name);
                if (fields[i].name == m->smi.names[0])
                        for (size_t a = 0; a < METRIC_SMI_ALIASES; a++)
                                if (m->smi.aliases[a])
                                        fprintf(out, " or \"%s\"", m->smi.aliases[a]);
                const char *unit = m->smi.unit;
                fprintf(out, "\n%s%s%s%s\n", m->help, unit ? " Unit: " : "", unit ? unit : "", unit ? "." : "");
        }
}

void query_metrics_help(FILE *out) {
        fputs("id\ttype\tunit\tnvidia-smi\tnvidia-smi -q\tdcgm-exporter\tdescription\n", out);
        for (size_t i = 0; i < metric_count(); i++) {
                const struct metric *m = metric_at(i);
                fprintf(out, "%s\t%s\t%s\t", m->id, metric_type_name(m->type), m->unit ? m->unit : "-");
                for (size_t k = 0; k < METRIC_SMI_NAMES && m->smi.names[k]; k++)
                        fprintf(out, "%s%s", k ? " " : "", m->smi.names[k]);
                if (!m->smi.names[0])
                        fputc('-', out);
                if (m->smi.q_section)
                        fprintf(out, "\t%s", m->smi.q_section);
                else if (m->smi.none)
                        fprintf(out, "\tnone: %s", m->smi.none);
                else
                        fputs("\t-", out);
                fprintf(out, "\t%s\t%s\n", m->dcgm ? m->dcgm : "-", m->help);
        }
}

void query_timestamp(const struct timespec *ts, char *buf, size_t size) {
        struct tm tm;
        time_t t = ts->tv_sec;
        if (!localtime_r(&t, &tm)) {
                snprintf(buf, size, "[N/A]");
                return;
        }
        char date[32];
        strftime(date, sizeof(date), "%Y/%m/%d %H:%M:%S", &tm);
        snprintf(buf, size, "%s.%03ld", date, ts->tv_nsec / 1000000L);
}

/* --- values -------------------------------------------------------------------------- */

/* The head all nv_* readings share. */
struct reading_head {
        unsigned char state;
        int rc;
};

#define head_of(r) ((struct reading_head){(r)->state, (r)->rc})

/* The head of the reading a field points at, read through its own type. */
static struct reading_head field_head(enum smi_format fmt, const void *p) {
        switch (fmt) {
        case SMI_STR:
        case SMI_BUS_ID:
        case SMI_PCI_DOMAIN:
        case SMI_PCI_BUS:
        case SMI_PCI_DEVICE:
                return head_of((const struct nv_str *)p);
        case SMI_U64:
        case SMI_REASONS:
        case SMI_REASON_BIT:
        case SMI_MIB:
        case SMI_US:
                return head_of((const struct nv_u64 *)p);
        case SMI_COMPUTE_CAP:
        case SMI_I32:
                return head_of((const struct nv_i32 *)p);
        case SMI_F64:
                return head_of((const struct nv_f64 *)p);
        default:
                return head_of((const struct nv_u32 *)p);
        }
}

/* The cell as text: most cells are words ("Enabled", "[N/A]") or whole numbers, and
 * snprintf's format parsing was most of query's own time (docs/perf.md, issue 41). */
static void cell_text(char *buf, size_t size, const char *text) {
        size_t n = strlen(text);
        if (n >= size)
                n = size - 1;
        memcpy(buf, text, n);
        buf[n] = '\0';
}

static void cell_u64(char *buf, size_t size, unsigned long long v) {
        char digits[24];
        size_t i = sizeof(digits);
        digits[--i] = '\0';
        do
                digits[--i] = (char)('0' + v % 10);
        while ((v /= 10) != 0);
        cell_text(buf, size, digits + i);
}

/* Write the cell for a reading that holds no value; false when it holds one. */
/* The driver's major version ("580" of "580.159.04"), 0 when unknown. */
static unsigned int driver_major(const struct query_row *row) {
        const struct nv_str *v = &row->facts->driver_version;
        return nv_ok(*v) ? (unsigned int)strtoul(v->v, NULL, 10) : 0;
}

static bool missing(const struct query_row *row, struct reading_head h, char *buf, size_t size) {
        if (h.state == NV_OK)
                return false;
        if (h.state == NV_ERROR && h.rc != NV_RC_NOT_SUPPORTED)
                snprintf(buf, size, "[%s]", nv_rc_text(row->lib, h.rc));
        else
                cell_text(buf, size, "[N/A]"); /* not supported, no entry point, timed out, not read */
        return true;
}

static void with_unit(const struct query_row *row, const char *unit, char *buf, size_t size) {
        if (!unit || row->nounits)
                return;
        size_t len = strlen(buf);
        if (len + 1 < size) {
                buf[len] = ' ';
                cell_text(buf + len + 1, size - len - 1, unit);
        }
}

static const char *enabled_text(unsigned int v) { return v ? "Enabled" : "Disabled"; }

/* The value cell for row, as nvidia-smi prints it ("81559 MiB", "69.85 W", "P0",
 * "Not Active", "[N/A]"). buf is always terminated. */
static void query_field_value(const struct query_field *f, const struct query_row *row, char *buf, size_t size) {
        const struct nvml_gpu *g = row->gpu;
        const struct metric *m = f->m;
        buf[0] = '\0';
        if (!m) {
                cell_text(buf, size, row->timestamp);
                return;
        }
        const enum smi_format fmt = m->smi.format;
        const void *p = (const char *)(m->system ? (const void *)row->facts : (const void *)g) + m->off;

        switch (fmt) {
        case SMI_DRIVER_VERSION:
                if (!missing(row, head_of(&row->facts->driver_version), buf, size))
                        cell_text(buf, size, row->facts->driver_version.v);
                return;
        case SMI_COUNT:
                if (!missing(row, head_of(&row->facts->device_count), buf, size))
                        cell_u64(buf, size, row->facts->device_count.v);
                return;
        case SMI_INDEX:
                cell_u64(buf, size, g->index);
                return;
        case SMI_DISPLAY_MODE:
                /* nvidia-smi of drivers 580 on prints this whatever NVML answers (NVML 580.159.04
                 * still returned Enabled; 535.86.05 printed the mode; 590.48.01 and 595.80
                 * captures print this too). */
                if (driver_major(row) >= 580) {
                        cell_text(buf, size, "[Requested functionality has been deprecated]");
                        return;
                }
                break;
        default:
                break;
        }

        if (missing(row, field_head(fmt, p), buf, size)) {
                /* nvidia-smi prints the fabric fields of a board without a fabric bare, and
                 * the memory temperature of a board without the sensor (L40S, 595.80). */
                if ((fmt == SMI_U32_BARE_NA || fmt == SMI_FABRIC_STATE || fmt == SMI_FABRIC_STATUS ||
                     fmt == SMI_FABRIC_CLIQUE) &&
                    strcmp(buf, "[N/A]") == 0)
                        cell_text(buf, size, "N/A");
                return;
        }
        const struct nv_u32 *u32 = p;
        const struct nv_u64 *u64 = p;
        const struct nv_str *str = p;
        unsigned int bus_id[4] = {0};

        switch (fmt) {
        case SMI_STR:
                cell_text(buf, size, str->v);
                break;
        case SMI_BUS_ID:
        case SMI_PCI_DOMAIN:
        case SMI_PCI_BUS:
        case SMI_PCI_DEVICE:
                if (!metric_bus_id_parts(str->v, bus_id)) {
                        /* The collector keeps an id it could not parse as NVML gave it. */
                        cell_text(buf, size, fmt == SMI_BUS_ID ? str->v : "[N/A]");
                        break;
                }
                if (fmt == SMI_BUS_ID)
                        snprintf(buf, size, "%08X:%02X:%02X.%X", bus_id[0], bus_id[1], bus_id[2], bus_id[3]);
                else if (fmt == SMI_PCI_DOMAIN)
                        snprintf(buf, size, "0x%04X", bus_id[0]);
                else
                        snprintf(buf, size, "0x%02X", bus_id[fmt - SMI_PCI_DOMAIN]);
                break;
        case SMI_HEX32:
                snprintf(buf, size, "0x%08X", u32->v);
                break;
        case SMI_U32:
        case SMI_U32_BARE_NA:
                cell_u64(buf, size, u32->v);
                with_unit(row, m->smi.unit, buf, size);
                break;
        case SMI_I32:
                snprintf(buf, size, "%d", ((const struct nv_i32 *)p)->v);
                with_unit(row, m->smi.unit, buf, size);
                break;
        case SMI_U64:
                cell_u64(buf, size, u64->v);
                break;
        case SMI_F64:
                snprintf(buf, size, "%g", ((const struct nv_f64 *)p)->v);
                break;
        case SMI_ENABLED:
        case SMI_DISPLAY_MODE:
                cell_text(buf, size, enabled_text(u32->v));
                break;
        case SMI_YESNO:
                cell_text(buf, size, u32->v ? "Yes" : "No");
                break;
        case SMI_PSTATE:
                if (u32->v == NV_PSTATE_UNKNOWN)
                        cell_text(buf, size, "Unknown");
                else
                        snprintf(buf, size, "P%u", u32->v);
                break;
        case SMI_REASONS:
                snprintf(buf, size, "0x%016llX", u64->v);
                break;
        case SMI_REASON_BIT:
                cell_text(buf, size, (u64->v & m->bit) ? "Active" : "Not Active");
                break;
        case SMI_MIB:
                cell_u64(buf, size, u64->v / (1024ULL * 1024ULL));
                with_unit(row, m->smi.unit, buf, size);
                break;
        case SMI_US:
                cell_u64(buf, size, u64->v / 1000ULL);
                with_unit(row, m->smi.unit, buf, size);
                break;
        case SMI_WATTS:
                snprintf(buf, size, "%.2f", u32->v / 1000.0);
                with_unit(row, m->smi.unit, buf, size);
                break;
        case SMI_COMPUTE_MODE:
                cell_text(buf, size, metric_compute_mode_name(u32->v));
                break;
        case SMI_COMPUTE_CAP: {
                const struct nv_i32 *minor = &g->cc_minor;
                if (!missing(row, head_of(minor), buf, size))
                        snprintf(buf, size, "%d.%d", ((const struct nv_i32 *)p)->v, minor->v);
                break;
        }
        case SMI_FABRIC_STATE: {
                static const char *const states[] = {"N/A", "Not Started", "In Progress", "Completed"};
                /* NV_FABRIC_STATE_NOT_SUPPORTED (0) reads as the call's NOT_SUPPORTED. */
                if (u32->v < ARRAY_COUNT(states))
                        cell_text(buf, size, states[u32->v]);
                else
                        cell_text(buf, size, "Unknown");
                break;
        }
        case SMI_FABRIC_STATUS:
                /* The status means something only once registration completed. */
                if (nv_ok(g->fabric_state) && g->fabric_state.v == NV_FABRIC_STATE_COMPLETED)
                        cell_text(buf, size, nv_rc_text(row->lib, u32->v));
                else
                        cell_text(buf, size, "N/A");
                break;
        case SMI_FABRIC_CLIQUE:
                if (nv_ok(g->fabric_state) && g->fabric_state.v != NV_FABRIC_STATE_NOT_SUPPORTED)
                        cell_u64(buf, size, u32->v);
                else
                        cell_text(buf, size, "N/A");
                break;
        case SMI_DRIVER_VERSION:
        case SMI_COUNT:
        case SMI_INDEX:
                break;
        }
}

void query_csv_header(FILE *out, const struct query_field *const *cols, unsigned n_cols) {
        char cell[QUERY_CELL_MAX];
        for (unsigned int k = 0; k < n_cols; k++) {
                query_field_header(cols[k], cell, sizeof(cell));
                fprintf(out, "%s%s", k ? ", " : "", cell);
        }
        fputc('\n', out);
}

int query_csv_rows(FILE *out, const struct query_field *const *cols, unsigned n_cols, bool nounits,
                   const struct nvml_facts *f, const bool *selected, unsigned n_sel, bool *lost) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        char ts[64];
        query_timestamp(&now, ts, sizeof(ts));

        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        if (!mem)
                return -ENOMEM;
        char cell[QUERY_CELL_MAX];
        for (unsigned int i = 0; i < f->n_gpus && i < n_sel; i++) {
                if (!selected[i])
                        continue;
                struct query_row row = {
                        .facts = f, .gpu = &f->gpus[i], .lib = f->lib, .timestamp = ts, .nounits = nounits};
                for (unsigned int k = 0; k < n_cols; k++) {
                        query_field_value(cols[k], &row, cell, sizeof(cell));
                        if (strcmp(cell, "[GPU is lost]") == 0)
                                lost[i] = true;
                        if (k)
                                fputs(", ", mem);
                        text_safe_write(mem, cell); /* NVML strings: no raw control bytes */
                }
                fputc('\n', mem);
        }
        if (fclose(mem) != 0) {
                free(text);
                return -ENOMEM;
        }
        int r = 0;
        if (len && fwrite(text, 1, len, out) != len)
                r = -errno;
        if (fflush(out) != 0 && r == 0)
                r = -errno;
        free(text);
        return r;
}

/* Say on stderr what did not answer: GPUs without a handle, calls that never returned.
 * Returns true when something did not. */

/* The exposition writer (exposition.h). */
#include "serve/exposition.h"

#include "core/utf8.h"
#include "metrics/metrics.h"
#include "serve/dcgm_series.h"
#include "serve/proc_workloads.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void expo_format_value(char *buf, size_t size, double v) {
        if (isnan(v)) {
                snprintf(buf, size, "NaN");
                return;
        }
        if (isinf(v)) {
                snprintf(buf, size, v > 0 ? "+Inf" : "-Inf");
                return;
        }
        for (int prec = 15; prec <= 17; prec++) {
                snprintf(buf, size, "%.*g", prec, v);
                if (strtod(buf, NULL) == v)
                        return;
        }
}

/* A label value: backslash, double quote and newline escaped (both formats), and every
 * byte that does not start a valid UTF-8 sequence written as U+FFFD. Prometheus rejects a
 * whole scrape over one invalid label value ("invalid UTF-8 label value"), and a process
 * name is anyone's to set: the kernel itself cuts a non-ASCII comm mid-character at 15
 * bytes. */
static void put_label_value(FILE *out, const char *s) {
        while (*s) {
                size_t n = utf8_sequence((const unsigned char *)s);
                if (n == 0) {
                        fputs("\xEF\xBF\xBD", out);
                        s++;
                } else if (*s == '\\' || *s == '"') {
                        fputc('\\', out), fputc(*s++, out);
                } else if (*s == '\n') {
                        fputs("\\n", out);
                        s++;
                } else {
                        fwrite(s, 1, n, out);
                        s += n;
                }
        }
}

/* HELP text: backslash and newline escaped (and the double quote for OpenMetrics). */
static void put_help(FILE *out, const char *name, const char *help, const char *unit, enum expo_format fmt) {
        fprintf(out, "# HELP %s ", name);
        for (const char *s = help; *s; s++) {
                if (*s == '\\')
                        fputs("\\\\", out);
                else if (*s == '\n')
                        fputs("\\n", out);
                else if (*s == '"' && fmt == EXPO_OPENMETRICS)
                        fputs("\\\"", out);
                else
                        fputc(*s, out);
        }
        if (unit)
                fprintf(out, " (in %s)", unit);
        fputc('\n', out);
}

/* dcgm-exporter's labels of one GPU, in its order. bus id as NVML writes it
 * ("00000000:1B:00.0"), device as the node (/dev/nvidia<minor>). */
static void put_labels(FILE *out, const struct nvml_gpu *g, const char *hostname) {
        fprintf(out, "gpu=\"%u\",UUID=\"", g->index);
        put_label_value(out, nv_ok(g->uuid) ? g->uuid.v : "");
        fputs("\",pci_bus_id=\"", out);
        unsigned int p[4];
        if (nv_ok(g->pci_bus_id) && metric_bus_id_parts(g->pci_bus_id.v, p))
                fprintf(out, "%08X:%02X:%02X.%X", p[0], p[1], p[2], p[3]);
        fputs("\",device=\"", out);
        if (nv_ok(g->minor_number))
                fprintf(out, "nvidia%u", g->minor_number.v);
        fputs("\",modelName=\"", out);
        put_label_value(out, nv_ok(g->name) ? g->name.v : "");
        fputs("\",Hostname=\"", out);
        put_label_value(out, hostname);
        fputc('"', out);
}

/* OpenMetrics counters are sample names ending in _total; DCGM's names do not, so that
 * dashboards keep them, they are declared "unknown" there (docs/serve.md). */
static const char *family_type(const struct metric *m, enum expo_format fmt) {
        const char *t = dcgm_series_type(m);
        if (fmt == EXPO_OPENMETRICS && strcmp(t, "counter") == 0)
                return "unknown";
        return t;
}

/* --workload-labels: per GPU, the distinct label suffixes of its workloads (",container=
 * ...,namespace=...,pod=..." or ",hpc_job=..."); a GPU with none is written once without. */
struct label_sets {
        size_t n;
        char **v;
};

/* One label as dcgm-exporter writes an attribute: ,name="value" (escaped). */
static void put_attribute(FILE *out, const char *name, const char *value) {
        fprintf(out, ",%s=\"", name);
        put_label_value(out, value);
        fputc('"', out);
}

/* The GPU's samples: one per label suffix of its workloads, else one plain. The system's
 * driver version follows the GPU's labels, as dcgm-exporter adds its DCGM_FI_DRIVER_VERSION
 * "label" field after Hostname and before the workload attributes; an unread version adds
 * nothing (Prometheus reads an empty label as none). */
static void put_gpu_samples(FILE *out, const char *name, const struct nvml_gpu *g, const char *hostname,
                            const struct nv_str *driver, const struct label_sets *sets, const char *value) {
        size_t n = sets && sets->n ? sets->n : 1;
        for (size_t k = 0; k < n; k++) {
                fprintf(out, "%s{", name);
                put_labels(out, g, hostname);
                if (nv_ok(*driver) && driver->v[0])
                        put_attribute(out, "DCGM_FI_DRIVER_VERSION", driver->v);
                fprintf(out, "%s} %s\n", sets && sets->n ? sets->v[k] : "", value);
        }
}

static void put_family(FILE *out, const struct metric *m, const struct nvml_facts *f, const char *hostname,
                       enum expo_format fmt, const struct label_sets *sets) {
        bool head = false;
        for (unsigned int i = 0; i < f->n_gpus; i++) {
                const struct nvml_gpu *g = &f->gpus[i];
                struct metric_value v;
                metric_read(m, f, g, &v);
                if (v.state != NV_OK || (v.kind != METRIC_NUMBER && v.kind != METRIC_BOOL))
                        continue; /* an unknown value gives no sample, never a zero */
                if (!head) {
                        put_help(out, m->dcgm, m->help, dcgm_series_unit(m), fmt);
                        fprintf(out, "# TYPE %s %s\n", m->dcgm, family_type(m, fmt));
                        head = true;
                }
                char num[32];
                expo_format_value(num, sizeof(num), v.kind == METRIC_BOOL ? (v.flag ? 1.0 : 0.0)
                                                                          : dcgm_series_value(m, v.number));
                put_gpu_samples(out, m->dcgm, g, hostname, &f->driver_version, sets ? &sets[i] : NULL, num);
        }
}

/* A GPU is up in this round when NVML gave its handle and no call on it hung. */
static bool gpu_up(const struct nvml_gpu *g) {
        return !g->timed_out && g->handle.state == NV_OK;
}

/* DCGM_FI_DEV_XID_ERRORS (dcgm-exporter's: the last Xid, 0 before any) and gpuvet's
 * per-code counters. */
static void put_xids(FILE *out, const struct nvml_facts *f, const struct expo_xids *x, const char *hostname,
                     enum expo_format fmt, bool stale, const struct label_sets *sets) {
        /* A stale body has no DCGM series (dashboards read them as current); the counts since
         * the start stay true. */
        bool any = false;
        for (unsigned int i = 0; i < f->n_gpus && !stale; i++)
                any = any || x->watched[i];
        if (any) {
                put_help(out, "DCGM_FI_DEV_XID_ERRORS", "Value of the last Xid error the GPU reported (0: none since "
                         "gpuvet serve started)", NULL, fmt);
                fputs("# TYPE DCGM_FI_DEV_XID_ERRORS gauge\n", out);
                for (unsigned int i = 0; i < f->n_gpus; i++) {
                        if (!x->watched[i])
                                continue;
                        char num[32];
                        snprintf(num, sizeof(num), "%llu", x->last[i]);
                        put_gpu_samples(out, "DCGM_FI_DEV_XID_ERRORS", &f->gpus[i], hostname, &f->driver_version,
                                        sets ? &sets[i] : NULL, num);
                }
        }
        if (x->n == 0)
                return;
        /* OpenMetrics names the counter family without _total, its samples with it. */
        const char *family = fmt == EXPO_OPENMETRICS ? "gpuvet_xid_errors" : "gpuvet_xid_errors_total";
        put_help(out, family, "Xid errors the GPU reported since gpuvet serve started, per Xid code", NULL, fmt);
        fprintf(out, "# TYPE %s counter\n", family);
        for (size_t k = 0; k < x->n; k++) {
                const struct xid_count *c = &x->counts[k];
                if (c->gpu >= f->n_gpus)
                        continue;
                fputs("gpuvet_xid_errors_total{", out);
                put_labels(out, &f->gpus[c->gpu], hostname);
                fprintf(out, ",xid=\"%llu\"} %llu\n", c->xid, c->count);
        }
}

static struct label_sets *label_sets_free(struct label_sets *s, unsigned int n) {
        for (unsigned int i = 0; s && i < n; i++) {
                for (size_t k = 0; k < s[i].n; k++)
                        free(s[i].v[k]);
                free(s[i].v);
        }
        free(s);
        return NULL;
}

/* A process's workload labels as dcgm-exporter names them, in its order (Go's templates
 * range over the attributes sorted by name): container, hpc_job, namespace, pod. Only
 * what is known: a Kubernetes pod whose names were not found adds none. Malloc'd; "" when
 * nothing, NULL out of memory. */
static char *workload_suffix(const struct workload *w) {
        char *s = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&s, &len);
        if (!out)
                return NULL;
        bool pod = w->pod[0] && w->pod_namespace[0];
        if (pod && w->container[0])
                put_attribute(out, "container", w->container);
        if (w->slurm_job[0])
                put_attribute(out, "hpc_job", w->slurm_job);
        if (pod) {
                put_attribute(out, "namespace", w->pod_namespace);
                put_attribute(out, "pod", w->pod);
        }
        if (fclose(out) != 0) {
                free(s);
                return NULL;
        }
        return s;
}

/* The distinct non-empty suffixes of each GPU's processes. NULL out of memory. */
static struct label_sets *label_sets_of(const struct gpu_procs *procs, unsigned int n_gpus) {
        struct label_sets *sets = calloc(n_gpus ? n_gpus : 1, sizeof(*sets));
        if (!sets)
                return NULL;
        for (unsigned int i = 0; i < n_gpus; i++) {
                const struct gpu_procs *g = &procs[i];
                sets[i].v = calloc(g->n ? g->n : 1, sizeof(char *));
                if (!sets[i].v)
                        return label_sets_free(sets, n_gpus);
                for (unsigned int k = 0; k < g->n; k++) {
                        char *s = workload_suffix(&g->v[k].w);
                        if (!s)
                                return label_sets_free(sets, n_gpus);
                        bool seen = !s[0];
                        for (size_t j = 0; j < sets[i].n && !seen; j++)
                                seen = strcmp(sets[i].v[j], s) == 0;
                        if (seen)
                                free(s);
                        else
                                sets[i].v[sets[i].n++] = s;
                }
        }
        return sets;
}

int expo_render_sample(const struct nvml_facts *f, const struct expo_xids *xids, const char *hostname,
                       enum expo_format fmt, bool stale, char **ret, size_t *ret_len) {
        return expo_render_sample_workloads(f, xids, NULL, hostname, fmt, stale, ret, ret_len);
}

static bool uuid_read(const struct nvml_gpu *g) { return nv_ok(g->uuid) && g->uuid.v[0]; }

int expo_known_learn(struct expo_known_gpus *k, const struct nvml_facts *f) {
        for (unsigned int i = 0; i < f->n_gpus; i++) {
                const struct nvml_gpu *g = &f->gpus[i];
                if (!uuid_read(g))
                        continue;
                bool seen = false;
                for (unsigned int j = 0; j < k->n && !seen; j++)
                        seen = strcmp(k->v[j].uuid.v, g->uuid.v) == 0;
                if (seen)
                        continue;
                struct expo_gpu_identity *grown = realloc(k->v, (k->n + 1) * sizeof(*grown));
                if (!grown)
                        return -ENOMEM;
                k->v = grown;
                k->v[k->n++] = (struct expo_gpu_identity){.index = g->index, .uuid = g->uuid, .name = g->name,
                                                          .pci_bus_id = g->pci_bus_id,
                                                          .minor_number = g->minor_number};
        }
        return 0;
}

void expo_known_done(struct expo_known_gpus *k) {
        free(k->v);
        *k = (struct expo_known_gpus){0};
}

static void take_identity(struct nvml_gpu *g, const struct expo_gpu_identity *id) {
        g->uuid = id->uuid;
        g->name = id->name;
        g->pci_bus_id = id->pci_bus_id;
        g->minor_number = id->minor_number;
}

static bool in_round(const struct nvml_facts *f, const char *uuid) {
        for (unsigned int i = 0; i < f->n_gpus; i++)
                if (uuid_read(&f->gpus[i]) && strcmp(f->gpus[i].uuid.v, uuid) == 0)
                        return true;
        return false;
}

/* The identity f's GPU i had when its UUID was not read this round (lost): the known GPU
 * of its index, unless that one is elsewhere in the round. NULL when none. */
static const struct expo_gpu_identity *identity_for(const struct nvml_facts *f, unsigned int i,
                                                    const struct expo_known_gpus *k) {
        if (!k || uuid_read(&f->gpus[i]))
                return NULL;
        for (unsigned int j = 0; j < k->n; j++)
                if (k->v[j].index == f->gpus[i].index && !in_round(f, k->v[j].uuid.v))
                        return &k->v[j];
        return NULL;
}

/* A copy of f's GPUs with their known identities where lost; NULL when none is (or, with
 * *ret_oom, out of memory). */
static struct nvml_gpu *with_known_identities(const struct nvml_facts *f, const struct expo_known_gpus *k,
                                              bool *ret_oom) {
        *ret_oom = false;
        bool any = false;
        for (unsigned int i = 0; i < f->n_gpus && !any; i++)
                any = identity_for(f, i, k) != NULL;
        if (!any)
                return NULL;
        struct nvml_gpu *gpus = malloc(f->n_gpus * sizeof(*gpus));
        if (!gpus) {
                *ret_oom = true;
                return NULL;
        }
        memcpy(gpus, f->gpus, f->n_gpus * sizeof(*gpus));
        for (unsigned int i = 0; i < f->n_gpus; i++) {
                const struct expo_gpu_identity *id = identity_for(f, i, k);
                if (id)
                        take_identity(&gpus[i], id);
        }
        return gpus;
}

static void put_gpu_up(FILE *out, const struct nvml_gpu *g, const char *hostname, enum expo_format fmt, bool *head,
                       bool up) {
        if (!*head) {
                put_help(out, "gpuvet_gpu_up",
                         "1 when every NVML call on the GPU answered within its deadline in the latest fresh round; "
                         "0 when one hung, the GPU is lost or no longer counted, or the round is stale (its values "
                         "are then left out, never repeated)",
                         NULL, fmt);
                fputs("# TYPE gpuvet_gpu_up gauge\n", out);
                *head = true;
        }
        fputs("gpuvet_gpu_up{", out);
        put_labels(out, g, hostname);
        fprintf(out, "} %d\n", up);
}

/* gpuvet_gpu_up of f's GPUs, then 0 for each known GPU f does not show (NVML no longer
 * counts it). Returns 0 or -ENOMEM. */
static int put_gpus_up(FILE *out, const struct nvml_facts *f, const struct expo_known_gpus *k, const char *hostname,
                       enum expo_format fmt, bool stale) {
        bool head = false;
        for (unsigned int i = 0; i < f->n_gpus; i++)
                put_gpu_up(out, &f->gpus[i], hostname, fmt, &head, !stale && gpu_up(&f->gpus[i]));
        struct nvml_gpu *gone = NULL;
        for (unsigned int j = 0; k && j < k->n; j++) {
                if (in_round(f, k->v[j].uuid.v))
                        continue;
                if (!gone && !(gone = calloc(1, sizeof(*gone))))
                        return -ENOMEM;
                gone->index = k->v[j].index;
                take_identity(gone, &k->v[j]);
                put_gpu_up(out, gone, hostname, fmt, &head, false);
        }
        free(gone);
        return 0;
}

int expo_render_sample_workloads(const struct nvml_facts *f, const struct expo_xids *xids,
                                 const struct gpu_procs *workloads, const char *hostname, enum expo_format fmt,
                                 bool stale, char **ret, size_t *ret_len) {
        return expo_render_sample_known(f, xids, workloads, NULL, hostname, fmt, stale, ret, ret_len);
}

int expo_render_sample_known(const struct nvml_facts *f, const struct expo_xids *xids,
                             const struct gpu_procs *workloads, const struct expo_known_gpus *known,
                             const char *hostname, enum expo_format fmt, bool stale, char **ret, size_t *ret_len) {
        bool oom;
        struct nvml_gpu *relabelled = with_known_identities(f, known, &oom);
        if (oom)
                return -ENOMEM;
        struct nvml_facts view;
        if (relabelled) {
                view = *f;
                view.gpus = relabelled;
                f = &view;
        }
        struct label_sets *sets = NULL;
        if (workloads && !stale && !(sets = label_sets_of(workloads, f->n_gpus))) {
                free(relabelled);
                return -ENOMEM;
        }
        char *body = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&body, &len);
        if (!out) {
                label_sets_free(sets, f->n_gpus);
                free(relabelled);
                return -ENOMEM;
        }
        if (!stale)
                for (size_t k = 0; k < metric_count(); k++) {
                        const struct metric *m = metric_at(k);
                        if (dcgm_series_exported(m))
                                put_family(out, m, f, hostname, fmt, sets);
                }
        if (xids)
                put_xids(out, f, xids, hostname, fmt, stale, sets);
        label_sets_free(sets, f->n_gpus);
        int e = put_gpus_up(out, f, known, hostname, fmt, stale);
        free(relabelled);
        if (fclose(out) != 0 || e < 0) {
                free(body);
                return -ENOMEM;
        }
        *ret = body;
        *ret_len = len;
        return 0;
}

/* --check-interval's runs: how many ended each way, when the last one ended and how long it took. */
static void put_check_runs(FILE *out, const struct check_runs *r, enum expo_format fmt) {
        static const char *const result[_CHECK_RUN_RESULT_COUNT] = {"ok", "timeout", "failed"};
        const char *family = fmt == EXPO_OPENMETRICS ? "gpuvet_check_runs" : "gpuvet_check_runs_total";
        put_help(out, family,
                 "Periodic gpuvet check runs since gpuvet serve started, by result: ok (a verdict and its report), "
                 "timeout (killed at --check-timeout), failed (another exit, a signal, or no report)", NULL, fmt);
        fprintf(out, "# TYPE %s counter\n", family);
        for (int k = 0; k < _CHECK_RUN_RESULT_COUNT; k++)
                fprintf(out, "gpuvet_check_runs_total{result=\"%s\"} %llu\n", result[k], r->total[k]);
        if (r->last_run_s <= 0)
                return; /* none ended yet: no time to give, never a zero */
        char num[32];
        expo_format_value(num, sizeof(num), r->last_run_s);
        put_help(out, "gpuvet_check_last_run_timestamp_seconds", "When the last periodic gpuvet check run ended, "
                 "whatever its result", NULL, fmt);
        fprintf(out, "# TYPE gpuvet_check_last_run_timestamp_seconds gauge\ngpuvet_check_last_run_timestamp_seconds %s\n",
                num);
        expo_format_value(num, sizeof(num), r->last_duration_s);
        put_help(out, "gpuvet_check_duration_seconds", "Wall time of the last periodic gpuvet check run", NULL, fmt);
        fprintf(out, "# TYPE gpuvet_check_duration_seconds gauge\ngpuvet_check_duration_seconds %s\n", num);
}

int expo_render_checks(const struct check_view *v, enum expo_format fmt, char **ret, size_t *ret_len) {
        char *body = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&body, &len);
        if (!out)
                return -ENOMEM;
        bool periodic = v->runs.periodic;
        put_help(out, "gpuvet_check_report_up",
                 periodic ? "1 when the last periodic gpuvet check run gave a check report; 0 before the first, and "
                            "after one that timed out or failed (then no gpuvet_check_status)"
                          : "1 when the --check-report file was read as a check report; 0 when it is missing or "
                            "unreadable (then no gpuvet_check_status)", NULL, fmt);
        fputs("# TYPE gpuvet_check_report_up gauge\n", out);
        fprintf(out, "gpuvet_check_report_up %d\n", v->state == CHECK_REPORT_OK);
        if (periodic)
                put_check_runs(out, &v->runs, fmt);
        if (v->state == CHECK_REPORT_OK) {
                char num[32];
                expo_format_value(num, sizeof(num), v->mtime_s);
                put_help(out, "gpuvet_check_report_timestamp_seconds",
                         periodic ? "When the periodic gpuvet check run that gave these statuses ended"
                                  : "Modification time of the --check-report file", NULL, fmt);
                fprintf(out, "# TYPE gpuvet_check_report_timestamp_seconds gauge\ngpuvet_check_report_timestamp_seconds %s\n",
                        num);
                put_help(out, "gpuvet_check_status",
                         periodic ? "1 for the status of each check id in the last periodic check's report (worst "
                                    "over its subjects), 0 for the others"
                                  : "1 for the status of each check id in the --check-report file (worst over its "
                                    "subjects), 0 for the others", NULL, fmt);
                fputs("# TYPE gpuvet_check_status gauge\n", out);
                for (size_t i = 0; i < v->set.n; i++)
                        for (int k = 0; k < _STATUS_COUNT; k++) {
                                fputs("gpuvet_check_status{id=\"", out);
                                put_label_value(out, v->set.items[i].id);
                                fprintf(out, "\",status=\"%s\"} %d\n", status_name((enum status)k),
                                        v->set.items[i].status == (enum status)k);
                        }
        }
        if (fclose(out) != 0) {
                free(body);
                return -ENOMEM;
        }
        *ret = body;
        *ret_len = len;
        return 0;
}

size_t expo_render_tail(char *buf, size_t size, enum expo_format fmt, double age_s, bool sampler_up) {
        size_t n = 0;
        int w = snprintf(buf, size,
                         "# HELP gpuvet_sampler_up 1 while the sampler publishes rounds; 0 once it stopped "
                         "(an NVML call never returned)\n"
                         "# TYPE gpuvet_sampler_up gauge\n"
                         "gpuvet_sampler_up %d\n",
                         sampler_up);
        if (w > 0)
                n = (size_t)w < size ? (size_t)w : size - 1;
        if (age_s >= 0 && n < size) {
                char num[32];
                expo_format_value(num, sizeof(num), age_s);
                w = snprintf(buf + n, size - n,
                             "# HELP gpuvet_sample_age_seconds Seconds since the round these values come from began\n"
                             "# TYPE gpuvet_sample_age_seconds gauge\n"
                             "gpuvet_sample_age_seconds %s\n",
                             num);
                if (w > 0)
                        n += (size_t)w < size - n ? (size_t)w : size - n - 1;
        }
        if (fmt == EXPO_OPENMETRICS && n < size) {
                w = snprintf(buf + n, size - n, "# EOF\n");
                if (w > 0)
                        n += (size_t)w < size - n ? (size_t)w : size - n - 1;
        }
        return n;
}

/* The per-process sample's labels after the GPU's: pid, process, user, then the
 * workload's (empty when not found). */
static void put_process_labels(FILE *out, const struct attributed_proc *p) {
        fprintf(out, ",pid=\"%u\"", p->pid);
        put_attribute(out, "process", p->process);
        put_attribute(out, "user", p->user);
        put_attribute(out, "slurm_job", p->w.slurm_job);
        put_attribute(out, "pod", p->w.pod);
        put_attribute(out, "namespace", p->w.pod_namespace);
        put_attribute(out, "container", p->w.container);
        put_attribute(out, "container_id", p->w.container_id);
}

/* The per-process families: one sample per process that has the value. */
enum proc_family { PROC_MEMORY_BYTES, PROC_SM_PERCENT };

static void put_process_family(FILE *out, const struct nvml_facts *f, const struct gpu_procs *procs,
                               const char *hostname, enum expo_format fmt, enum proc_family which) {
        static const struct {
                const char *name, *help;
        } families[] = {
                [PROC_MEMORY_BYTES] = {"gpuvet_process_gpu_memory_bytes",
                                       "GPU memory a process uses, with its command, user and workload (Slurm job, "
                                       "Kubernetes pod, container; empty when not found)"},
                [PROC_SM_PERCENT] = {"gpuvet_process_sm_utilization_percent",
                                     "A process's share of the GPU's SM time in the driver's latest sample of it "
                                     "(nvmlDeviceGetProcessUtilization, the last 3 s; 0 when it ran no kernels)"},
        };
        bool head = false;
        for (unsigned int i = 0; i < f->n_gpus; i++)
                for (unsigned int k = 0; k < procs[i].n; k++) {
                        const struct attributed_proc *p = &procs[i].v[k];
                        /* an unknown value gives no sample, never a zero */
                        if (which == PROC_MEMORY_BYTES ? p->used_bytes == ~0ULL : p->sm_pct < 0)
                                continue;
                        if (!head) {
                                put_help(out, families[which].name, families[which].help, NULL, fmt);
                                fprintf(out, "# TYPE %s gauge\n", families[which].name);
                                head = true;
                        }
                        fprintf(out, "%s{", families[which].name);
                        put_labels(out, &f->gpus[i], hostname);
                        put_process_labels(out, p);
                        if (which == PROC_MEMORY_BYTES)
                                fprintf(out, "} %llu\n", p->used_bytes);
                        else
                                fprintf(out, "} %d\n", p->sm_pct);
                }
}

int expo_render_processes(const struct nvml_facts *f, const struct gpu_procs *procs, const char *hostname,
                          enum expo_format fmt, char **ret, size_t *ret_len) {
        char *body = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&body, &len);
        if (!out)
                return -ENOMEM;
        bool any = false;
        for (unsigned int i = 0; i < f->n_gpus; i++)
                any = any || procs[i].known;
        if (any) {
                put_help(out, "gpuvet_gpu_processes",
                         "Processes NVML lists on the GPU (compute and graphics, each PID once)", NULL, fmt);
                fputs("# TYPE gpuvet_gpu_processes gauge\n", out);
                for (unsigned int i = 0; i < f->n_gpus; i++) {
                        if (!procs[i].known)
                                continue;
                        fputs("gpuvet_gpu_processes{", out);
                        put_labels(out, &f->gpus[i], hostname);
                        fprintf(out, "} %u\n", procs[i].count);
                }
        }
        put_process_family(out, f, procs, hostname, fmt, PROC_MEMORY_BYTES);
        put_process_family(out, f, procs, hostname, fmt, PROC_SM_PERCENT);
        if (fclose(out) != 0) {
                free(body);
                return -ENOMEM;
        }
        *ret = body;
        *ret_len = len;
        return 0;
}

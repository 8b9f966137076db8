/* gpuvet query: nvidia-smi's --query-gpu CSV, from NVML facts read under deadlines
 * (docs/query.md). */
#include "cmd/cmd.h"
#include "cmd/nvml_use.h"
#include "cmd/options.h"
#include "cmd/query.h"
#include "cmd/specs.h"
#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/strparse.h"
#include "data/xiddb.h"
#include "metrics/sampler.h"
#include "report/event_text.h"
#include "report/query_fields.h"
#include "report/text_safe.h"
#include "sys/nvml_events.h"
#include "sys/nvml_facts.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_LOOP_S 5
#define MAX_FIELDS 256

struct query_opts {
        const struct query_field *fields[MAX_FIELDS];
        unsigned int n_fields;
        bool noheader;
        bool nounits;
        unsigned long long loop_ms; /* 0: once */
        const char *file;
        const char *ids;
        const char *nvml_lib;
        struct nvml_deadlines dl; /* 0 fields: the defaults */
};

/* ---- options ---- */

static char *trim(char *s) {
        while (*s == ' ' || *s == '\t')
                s++;
        size_t n = strlen(s);
        while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n'))
                s[--n] = '\0';
        return s;
}

/* Calls each(item, ctx) for every comma-separated item of list, trimmed, until one returns
 * other than -1: that value, else -1 (EXIT_INTERNAL when out of memory). */
static int each_listed(const char *list, int (*each)(const char *item, void *ctx), void *ctx) {
        char *copy = strdup(list);
        if (!copy) {
                fprintf(stderr, "gpuvet query: out of memory\n");
                return EXIT_INTERNAL;
        }
        int r = -1;
        char *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok && r == -1; tok = strtok_r(NULL, ",", &save))
                r = each(trim(tok), ctx);
        free(copy);
        return r;
}

static int add_field(const char *name, void *ctx) {
        struct query_opts *o = ctx;
        const struct query_field *f = query_field_lookup(name);
        if (!f) {
                /* nvidia-smi's own sentence, so scripts that grep it keep working. */
                fprintf(stderr, "Field \"%s\" is not a valid field to query.\n", name);
                fprintf(stderr, "gpuvet query: see gpuvet query --help-query-gpu for the supported fields\n");
                return EXIT_USAGE;
        }
        if (o->n_fields == MAX_FIELDS) {
                fprintf(stderr, "gpuvet query: more than %d fields\n", MAX_FIELDS);
                return EXIT_USAGE;
        }
        o->fields[o->n_fields++] = f;
        return -1;
}

static int parse_fields(const char *arg, struct query_opts *o) {
        int r = each_listed(arg, add_field, o);
        if (r == -1 && o->n_fields == 0) {
                fprintf(stderr, "gpuvet query: --query-gpu names no field\n");
                r = EXIT_USAGE;
        }
        return r;
}

struct format_words {
        struct query_opts *o;
        bool csv;
};

static int add_format_word(const char *t, void *ctx) {
        struct format_words *w = ctx;
        if (strcmp(t, "csv") == 0) {
                w->csv = true;
        } else if (strcmp(t, "noheader") == 0) {
                w->o->noheader = true;
        } else if (strcmp(t, "nounits") == 0) {
                w->o->nounits = true;
        } else {
                fprintf(stderr, "gpuvet query: --format: \"%s\" is not csv, noheader or nounits\n", t);
                return EXIT_USAGE;
        }
        return -1;
}

static int parse_format(const char *arg, struct query_opts *o) {
        struct format_words w = {.o = o};
        int r = each_listed(arg, add_format_word, &w);
        if (r == -1 && !w.csv) {
                fprintf(stderr, "gpuvet query: --format must include csv (e.g. --format=csv,noheader)\n");
                r = EXIT_USAGE;
        }
        return r;
}

/* ---- GPU selection (-i) ---- */

/* An -i id names GPU g: its index, its UUID (case-insensitive) or its PCI bus id in any
 * form NVML or sysfs writes ("00000000:1B:00.0", "0000:1b:00.0", "1B:00.0"). */
static bool id_matches(const char *id, const struct nvml_gpu *g) {
        int idx;
        if (parse_int(id, &idx) == 0)
                return idx >= 0 && (unsigned int)idx == g->index;
        if (nv_ok(g->uuid) && strcasecmp(id, g->uuid.v) == 0)
                return true;
        if (!nv_ok(g->pci_bus_id))
                return false;
        unsigned int want[4] = {0}, have[4];
        int end = 0;
        if (!metric_bus_id_parts(id, want)) {
                want[0] = 0; /* "1b:00.0": domain 0 (a failed parse may have set it) */
                if (sscanf(id, "%x:%x.%x%n", &want[1], &want[2], &want[3], &end) != 3 || id[end] != '\0')
                        return false;
        }
        if (!metric_bus_id_parts(g->pci_bus_id.v, have))
                return false;
        return memcmp(want, have, sizeof(want)) == 0;
}

/* Mark the GPUs -i names in selected (all when ids is NULL). */
struct gpu_selection {
        const struct nvml_facts *f;
        bool *selected;
};

static int select_gpu(const char *id, void *ctx) {
        struct gpu_selection *sel = ctx;
        const struct nvml_facts *f = sel->f;
        bool found = false;
        for (unsigned int i = 0; i < f->n_gpus; i++)
                if (id_matches(id, &f->gpus[i])) {
                        sel->selected[i] = true;
                        found = true;
                }
        if (!found) {
                fprintf(stderr, "gpuvet query: -i %s: no GPU with that index, UUID or PCI bus id (%u GPU%s)\n", id,
                        f->n_gpus, f->n_gpus == 1 ? "" : "s");
                return EXIT_USAGE;
        }
        return -1;
}

static int select_gpus(const char *ids, const struct nvml_facts *f, bool *selected) {
        if (!ids) {
                for (unsigned int i = 0; i < f->n_gpus; i++)
                        selected[i] = true;
                return -1;
        }
        struct gpu_selection sel = {.f = f, .selected = selected};
        return each_listed(ids, select_gpu, &sel);
}

/* ---- output ---- */

static bool report_problems(const struct nvml_facts *f, const bool *selected, unsigned int n_sel, const bool *lost) {
        bool any = false;
        for (unsigned int i = 0; i < f->n_gpus && i < n_sel; i++) {
                const struct nvml_gpu *g = &f->gpus[i];
                if (!selected[i] || g->timed_out)
                        continue;
                /* No handle, or a handle to a GPU that fell off the bus (NVML may hand
                 * one out and then answer GPU_IS_LOST to every call). */
                const struct nv_u32 *h = &g->handle;
                const struct nv_str *n = &g->name;
                const char *fn = NULL;
                int rc = 0;
                if (h->state == NV_ERROR) {
                        fn = h->fn;
                        rc = h->rc;
                } else if (n->state == NV_ERROR && n->rc == NV_RC_GPU_IS_LOST) {
                        fn = n->fn;
                        rc = n->rc;
                }
                if (!fn && lost[i]) {
                        /* One call said so while others answered: the GPU is going or gone. */
                        fprintf(stderr, "gpuvet query: GPU %u: a call answered \"GPU is lost\" ([GPU is lost] cells): "
                                        "it may have fallen off the bus\n", i);
                        any = true;
                        continue;
                }
                if (!fn)
                        continue;
                fprintf(stderr, "gpuvet query: GPU %u: %s: %s\n", i, fn, nv_rc_text(f->lib, rc));
                any = true;
        }
        for (unsigned int t = 0; t < f->n_timeouts; t++) {
                const struct nvml_timeout *to = &f->timeouts[t];
                if (to->gpu >= 0 && ((unsigned int)to->gpu >= n_sel || !selected[to->gpu]))
                        continue;
                if (to->gpu >= 0)
                        fprintf(stderr, "gpuvet query: GPU %d: %s did not return within %u ms; its unread fields are [N/A]\n",
                                to->gpu, to->fn, to->elapsed_ms);
                else
                        fprintf(stderr, "gpuvet query: %s did not return within %u ms\n", to->fn, to->elapsed_ms);
                any = true;
        }
        return any;
}

/* Say why NVML gave no GPU to query and return the exit code; -1 when it gave some. */
static int explain_no_gpus(const struct nvml_facts *f, const char *load_err) {
        if (f->init_state == NVML_INIT_VERSION_MISMATCH) {
                fprintf(stderr,
                        "gpuvet query: nvmlInit: Driver/library version mismatch: the loaded nvidia kernel module "
                        "and libnvidia-ml differ; reload the module (or reboot)\n");
                return EXIT_FAILED;
        }
        int code = nvml_explain_init("query", f, load_err);
        if (code >= 0)
                return code;
        if (!nv_ok(f->device_count)) {
                fprintf(stderr, "gpuvet query: %s: %s\n", f->device_count.fn ? f->device_count.fn : "nvmlDeviceGetCount_v2",
                        f->device_count.state == NV_TIMEOUT
                                ? "did not return in time"
                                : nv_rc_text(f->lib, f->device_count.rc));
                return EXIT_FAILED;
        }
        if (f->n_gpus == 0) {
                fprintf(stderr, "No devices were found\n");
                return EXIT_FAILED;
        }
        return -1;
}

/* ---- the loop ---- */

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig) { stop_signal = sig; }

/* ---- NVML events between rounds (docs/query.md, "Xid events while logging") ---- */

/* Polls last at most this long, so that a stop signal, blocked while NVML is waited
 * on, is taken within it. */
#define EVENT_SLICE_MS 100

struct event_ctx {
        const struct xiddb *db; /* NULL: meanings unavailable */
        const bool *selected;
        unsigned int n_sel;
};

/* One line per record on stderr; records of GPUs -i left out are dropped. */
static void print_event(const struct nvml_event *e, void *userdata) {
        const struct event_ctx *c = userdata;
        if (e->gpu >= 0 && ((unsigned int)e->gpu >= c->n_sel || !c->selected[e->gpu]))
                return;
        event_text(stderr, e, c->db);
}

/* Leave without exit handlers or nvmlShutdown when a call still runs inside the library. */
static int finish(FILE *out, bool abandoned, int code) {
        if (out && out != stdout)
                fclose(out);
        fflush(stderr);
        if (abandoned)
                _exit(stdout_finish(code));
        return code;
}

/* Only what the fields show is read (two calls per GPU for "name", not every fact), plus
 * what -i matches on and the bus id the event lines name. */
static nvml_groups query_groups(const struct query_opts *o) {
        const struct metric *shown[MAX_FIELDS];
        size_t n = 0;
        for (unsigned int k = 0; k < o->n_fields; k++)
                if (query_field_metric(o->fields[k]))
                        shown[n++] = query_field_metric(o->fields[k]);
        nvml_groups g = metric_groups(shown, n);
        if (o->ids)
                g |= nvml_group_bit(NVML_GROUP_UUID) | nvml_group_bit(NVML_GROUP_PCI);
        if (o->loop_ms)
                g |= nvml_group_bit(NVML_GROUP_PCI);
        return g;
}

/* What the rounds share: the GPUs -i selected (fixed at the first round), the output. */
struct rounds {
        bool *selected;
        bool *lost; /* per GPU, this round: a [GPU is lost] cell was printed */
        unsigned int n_sel;
        FILE *out;
        int code; /* EXIT_FAILED once something did not answer */
};

/* The first round: say why there is no GPU, select, open the output, print the header.
 * Returns -1 to go on, else the exit code. */
static int first_round(const struct query_opts *o, const struct nvml_facts *f, const char *load_err,
                       struct rounds *st) {
        int e = explain_no_gpus(f, load_err);
        if (e >= 0)
                return e;
        st->selected = calloc(f->n_gpus, sizeof(*st->selected));
        st->lost = calloc(f->n_gpus ? f->n_gpus : 1, sizeof(*st->lost));
        if (!st->selected || !st->lost) {
                fprintf(stderr, "gpuvet query: out of memory\n");
                return EXIT_INTERNAL;
        }
        e = select_gpus(o->ids, f, st->selected);
        if (e >= 0)
                return e;
        /* Opened only now: a bad query or a missing driver leaves the file be. */
        st->out = stdout;
        if (o->file) {
                /* A new file renamed into place, never the one there opened: see atomic_file.h. */
                mode_t mask = umask(0);
                umask(mask);
                int fd = atomic_create(o->file, 0666 & ~mask);
                st->out = fd >= 0 ? fdopen(fd, "w") : NULL;
                if (!st->out) {
                        int why = fd >= 0 ? -errno : fd;
                        if (fd >= 0)
                                close(fd);
                        fprintf(stderr, "gpuvet query: -f %s: %s\n", o->file, atomic_write_strerror(why));
                        return EXIT_USAGE;
                }
        }
        if (!o->noheader)
                query_csv_header(st->out, o->fields, o->n_fields);
        st->n_sel = f->n_gpus;
        return -1;
}

/* One round's rows, then what did not answer. Returns -1 to go on, else the exit code. */
static int print_round(const struct query_opts *o, const struct nvml_facts *f, struct rounds *st) {
        /* A GPU NVML lists later than the first round was not selected. */
        memset(st->lost, 0, st->n_sel * sizeof(*st->lost));
        int r = query_csv_rows(st->out, o->fields, o->n_fields, o->nounits, f, st->selected, st->n_sel, st->lost);
        if (r < 0) {
                fprintf(stderr, "gpuvet query: writing %s: %s\n", o->file ? o->file : "stdout", strerror(-r));
                return EXIT_INTERNAL;
        }
        if (report_problems(f, st->selected, st->n_sel, st->lost))
                st->code = EXIT_FAILED;
        return -1;
}

static int run_once(const struct query_opts *o, struct nvml_lib *lib, const char *load_err) {
        struct rounds st = {.code = EXIT_PASS};
        struct nvml_facts *f = calloc(1, sizeof(*f));
        int code = EXIT_INTERNAL;
        if (!f) {
                fprintf(stderr, "gpuvet query: out of memory\n");
                goto done;
        }
        int r = nvml_facts_gather_some(lib, &o->dl, query_groups(o), f);
        if (r == -ENOMEM || r == -EAGAIN) {
                fprintf(stderr, "gpuvet query: %s\n", r == -ENOMEM ? "out of memory" : "could not start the NVML threads");
                goto done;
        }
        code = first_round(o, f, load_err, &st);
        if (code < 0)
                code = print_round(o, f, &st);
        if (code < 0)
                code = st.code;
done:;
        bool abandoned = false;
        if (f) {
                nvml_facts_done(f);
                abandoned = f->abandoned;
        }
        free(f);
        free(st.selected);
        free(st.lost);
        if (!abandoned)
                (void)nv_lib_close(lib);
        return finish(st.out, abandoned, code);
}

enum wait_outcome { WAIT_SAMPLE, WAIT_STOP, WAIT_ENDED, WAIT_EVENTS_HUNG, WAIT_EVENTS_GONE };

/* Wait for a sample newer than after (due about expect_ns), taking NVML events meanwhile
 * and a stop signal at any time: the signals are blocked except inside ppoll, and the
 * sampler's threads never unblock them. */
static enum wait_outcome wait_sample(struct sampler *smp, unsigned long long after, unsigned long long expect_ns,
                                     struct nvml_events *ev, const sigset_t *open_mask, struct event_ctx *c,
                                     struct sample **ret) {
        for (;;) {
                if (stop_signal)
                        return WAIT_STOP;
                struct sample *x = sampler_next(smp, after, 0);
                if (x) {
                        *ret = x;
                        return WAIT_SAMPLE;
                }
                if (sampler_ended(smp, NULL))
                        return WAIT_ENDED;
                unsigned long long now = monotonic_ns();
                if (ev && now < expect_ns) {
                        /* Until the next round is due; NVML queues events meanwhile. */
                        unsigned long long left_ms = (expect_ns - now + 999999ULL) / 1000000ULL;
                        int r = nvml_events_poll(ev, left_ms < EVENT_SLICE_MS ? (unsigned int)left_ms : EVENT_SLICE_MS,
                                                 print_event, c);
                        struct timespec zero = {0, 0};
                        (void)ppoll(NULL, 0, &zero, open_mask); /* take a stop signal that came meanwhile */
                        if (r == -ETIMEDOUT)
                                return WAIT_EVENTS_HUNG;
                        if (r < 0)
                                return WAIT_EVENTS_GONE; /* none registered, or no memory */
                        continue;
                }
                struct pollfd p = {.fd = sampler_fd(smp), .events = POLLIN};
                struct timespec slice = {.tv_sec = 0, .tv_nsec = EVENT_SLICE_MS * 1000000L};
                (void)ppoll(&p, 1, ev ? &slice : NULL, open_mask); /* a sample, a signal, or back to events */
        }
}

/* Why the sampler stopped, said; the exit code. */
static int sampler_end_code(struct sampler *smp) {
        struct sampler_status st;
        sampler_ended(smp, &st);
        switch (st.end) {
        case SAMPLER_CALL_HUNG:
                /* Another round would strand one more thread in the library each time. */
                fprintf(stderr, "gpuvet query: stopping the loop: an NVML call never returned\n");
                break;
        case SAMPLER_SHUTDOWN_HUNG:
                fprintf(stderr, "gpuvet query: stopping the loop: nvmlShutdown did not return within %u ms\n",
                        st.call_ms);
                break;
        case SAMPLER_FAILED:
                fprintf(stderr, "gpuvet query: %s\n",
                        st.end_errno == ENOMEM ? "out of memory" : "could not start the NVML threads");
                break;
        default:
                fprintf(stderr, "gpuvet query: the sampler stopped unasked\n");
                break;
        }
        return EXIT_INTERNAL;
}

/* -l / -lms: rows from the sampler's rounds until a stop signal (docs/query.md). */
static int run_loop(const struct query_opts *o, struct nvml_lib *lib, const char *load_err) {
        /* Blocked before the sampler starts, so its threads and NVML's inherit the mask and
         * a stop signal is taken only in wait_sample. */
        sigset_t stop_mask, open_mask;
        sigemptyset(&stop_mask);
        sigaddset(&stop_mask, SIGINT);
        sigaddset(&stop_mask, SIGTERM);
        struct sigaction sa = {.sa_handler = on_stop};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigprocmask(SIG_BLOCK, &stop_mask, &open_mask);
        sigdelset(&open_mask, SIGINT);
        sigdelset(&open_mask, SIGTERM);

        struct rounds st = {.code = EXIT_PASS};
        struct nvml_events *events = NULL;
        struct xiddb xids = {0};
        struct event_ctx ectx = {0};
        bool abandoned = false;
        int code = -1;
        struct sampler *smp = NULL;
        struct sampler_options so = {.lib = lib, .dl = o->dl, .groups = query_groups(o), .interval_ms = o->loop_ms};
        int r = sampler_start(&so, &smp);
        if (r < 0) {
                fprintf(stderr, "gpuvet query: %s\n", r == -ENOMEM ? "out of memory" : "could not start the sampler");
                code = EXIT_INTERNAL;
        }
        unsigned long long seq = 0, expect_ns = 0;
        while (code < 0) {
                struct sample *x = NULL;
                switch (wait_sample(smp, seq, expect_ns, events, &open_mask, &ectx, &x)) {
                case WAIT_STOP: code = EXIT_PASS; continue; /* the problems were reported as they came */
                case WAIT_ENDED: code = sampler_end_code(smp); continue;
                case WAIT_EVENTS_HUNG:
                        fprintf(stderr, "gpuvet query: stopping the loop: an NVML call never returned\n");
                        code = EXIT_INTERNAL;
                        continue;
                case WAIT_EVENTS_GONE:
                        abandoned = nvml_events_stop(events) || abandoned;
                        events = NULL;
                        continue;
                case WAIT_SAMPLE: break;
                }
                const struct nvml_facts *f = &x->facts;
                bool first = seq == 0;
                seq = x->seq;
                expect_ns = x->started_ns + o->loop_ms * 1000000ULL;
                if (first)
                        code = first_round(o, f, load_err, &st);
                if (code < 0)
                        code = print_round(o, f, &st);
                if (code < 0 && first && !f->abandoned) {
                        /* After the first rows, so that they never wait for it. */
                        char xerr[256];
                        if (xiddb_load(NULL, &xids, xerr, sizeof(xerr)) == 0)
                                ectx.db = &xids;
                        else
                                fprintf(stderr, "gpuvet query: %s; Xids are shown without meaning\n", xerr);
                        ectx.selected = st.selected;
                        ectx.n_sel = st.n_sel;
                        r = nvml_events_start(lib, f, NULL, 0, &events);
                        if (r < 0)
                                fprintf(stderr, "gpuvet query: NVML events: %s, logging without them\n", strerror(-r));
                }
                sample_put(smp, x);
        }
        if (events)
                abandoned = nvml_events_stop(events) || abandoned;
        xiddb_done(&xids);
        if (smp)
                abandoned = sampler_stop(smp) || abandoned;
        free(st.selected);
        free(st.lost);
        if (!abandoned)
                (void)nv_lib_close(lib);
        return finish(st.out, abandoned, code);
}

static int run(const struct query_opts *o) {
        char err[512] = "";
        struct nvml_lib *lib = NULL;
        int r = nv_lib_open(o->nvml_lib, &lib, err, sizeof(err));
        if (r == -ENOMEM) {
                fprintf(stderr, "gpuvet query: out of memory\n");
                return EXIT_INTERNAL;
        }
        return o->loop_ms ? run_loop(o, lib, err) : run_once(o, lib, err);
}

/* The command line beyond the output options: what to print and the help switches. */
struct query_args {
        const char *query, *format;
        bool help_fields, help_metrics;
};

enum query_opt {
        QUERY_LOOP = 'l', QUERY_FILENAME = 'f', QUERY_ID = 'i', QUERY_HELP = 'h',
        QUERY_QUERY_GPU = 0x100, QUERY_FORMAT, QUERY_LOOP_MS, QUERY_HELP_FIELDS, QUERY_HELP_METRICS, QUERY_NVML_LIB,
        QUERY_NVML_CALL_TIMEOUT, QUERY_NVML_GPU_TIMEOUT, QUERY_NVML_INIT_TIMEOUT,
};

#define DAY_MS (24ull * 3600 * 1000)

/* nvidia-smi's syntax: getopt_long_only, so that every long option also takes one dash
 * (-lms, -query-gpu); "lms" is nvidia-smi's spelling of --loop-ms. cmd_query_spec's table
 * describes these for --help, the man page and the completions (a unit test holds the two
 * to the same names). */
const struct option cmd_query_getopt[] = {
        {"query-gpu", required_argument, NULL, QUERY_QUERY_GPU},
        {"format", required_argument, NULL, QUERY_FORMAT},
        {"loop", required_argument, NULL, QUERY_LOOP},
        {"loop-ms", required_argument, NULL, QUERY_LOOP_MS},
        {"lms", required_argument, NULL, QUERY_LOOP_MS},
        {"filename", required_argument, NULL, QUERY_FILENAME},
        {"id", required_argument, NULL, QUERY_ID},
        {"help-query-gpu", no_argument, NULL, QUERY_HELP_FIELDS},
        {"help-metrics", no_argument, NULL, QUERY_HELP_METRICS},
        {"nvml-lib", required_argument, NULL, QUERY_NVML_LIB},
        {"nvml-call-timeout-ms", required_argument, NULL, QUERY_NVML_CALL_TIMEOUT},
        {"nvml-gpu-timeout-ms", required_argument, NULL, QUERY_NVML_GPU_TIMEOUT},
        {"nvml-init-timeout-ms", required_argument, NULL, QUERY_NVML_INIT_TIMEOUT},
        {"help", no_argument, NULL, QUERY_HELP},
        {NULL, 0, NULL, 0},
};

static const struct opt query_options[] = {
        {.name = "query-gpu", .kind = ARG_LIST, .id = QUERY_QUERY_GPU, .metavar = "FIELDS",
         .help = "comma-separated fields (--help-query-gpu lists them); required"},
        {.name = "format", .kind = ARG_TEXT, .id = QUERY_FORMAT, .metavar = "csv[,noheader][,nounits]",
         .def = "csv",
         .help = "noheader: no header line; nounits: values without units (the header keeps them, as "
                 "nvidia-smi's does)"},
        {.name = "loop", .letter = 'l', .kind = ARG_DURATION, .metavar = "[DURATION]", .min = 1000, .max = DAY_MS,
         .help = "query this often (5s when not given) until SIGINT/SIGTERM; a bare number is seconds"},
        {.name = "loop-ms", .kind = ARG_DURATION_MS, .id = QUERY_LOOP_MS, .min = 1, .max = DAY_MS,
         .help = "also -lms, as nvidia-smi spells it: query this often until SIGINT/SIGTERM (a bare number is "
                 "milliseconds)"},
        {.name = "filename", .letter = 'f', .kind = ARG_OUT_FILE,
         .help = "write to FILE (truncated first, as nvidia-smi does)"},
        {.name = "id", .letter = 'i', .kind = ARG_LIST, .metavar = "ID[,ID...]",
         .help = "only these GPUs: NVML index, UUID or PCI bus id"},
        {.name = "help-query-gpu", .kind = ARG_FLAG, .id = QUERY_HELP_FIELDS, .help = "list the supported fields"},
        {.name = "help-metrics", .kind = ARG_FLAG, .id = QUERY_HELP_METRICS,
         .help = "list gpuvet's metrics: id, type, unit, nvidia-smi and dcgm-exporter names (tab-separated; "
                 "docs/metrics.md)"},
        {.name = "nvml-lib", .kind = ARG_FILE, .id = QUERY_NVML_LIB, .metavar = "PATH",
         .def = "$" NV_LIB_ENV ", then libnvidia-ml.so.1", .help = "load NVML from PATH"},
        {.name = "nvml-call-timeout-ms", .kind = ARG_DURATION_MS, .id = QUERY_NVML_CALL_TIMEOUT, .min = 1,
         .max = 600000, .def = "2s", .help = "abandon an NVML call after this long (a bare number is milliseconds)"},
        {.name = "nvml-gpu-timeout-ms", .kind = ARG_DURATION_MS, .id = QUERY_NVML_GPU_TIMEOUT, .min = 1,
         .max = 600000, .def = "20s", .help = "abandon a GPU's NVML reads after this long"},
        {.name = "nvml-init-timeout-ms", .kind = ARG_DURATION_MS, .id = QUERY_NVML_INIT_TIMEOUT, .min = 1,
         .max = 600000, .def = "20s", .help = "give up on nvmlInit after this long"},
        {0},
};

const struct cmd_spec cmd_query_spec = {
        .name = "query",
        .synopsis = "--query-gpu=FIELDS [--format=csv[,noheader][,nounits]]\n"
                    "--query-gpu=FIELDS [-i ID,...] [-f FILE] [-l [SEC]|-lms MS]\n"
                    "--help-query-gpu | --help-metrics",
        .summary = "nvidia-smi's --query-gpu, same field names, values and CSV layout: a script switches by changing "
                   "the command name.",
        .description = "Every NVML call runs under a deadline, so a wedged GPU gives \"[N/A]\" cells and a message, "
                       "never a hang. The options are nvidia-smi's, parsed as it parses them: a long option also "
                       "takes one dash (-lms, -query-gpu), and -l alone, or followed by another option, loops every "
                       "5 s.",
        .opts = query_options,
        .help_only = true,
        .notes = "While looping, Xid and ECC errors NVML reports as events are printed to stderr as they happen, "
                 "one line each with meaning and action (docs/query.md).",
        .exit_status = "0 rows written; 1 NVML or a GPU could not answer (no driver, no GPU, a GPU lost, a call that "
                       "never returned; rows are still written when there are GPUs); 2 usage or bad input (an "
                       "unknown field); 3 internal error, or a loop stopped because a call never returned.",
};

/* A duration value of one of query's options, checked as cmd_parse checks the DURATION
 * kinds (bare_ms: a bare number is milliseconds); false after a message naming it. */
static bool query_duration(const char *name, const char *arg, bool bare_ms, uint64_t min_ms, uint64_t max_ms,
                           uint64_t *ret) {
        bool bare = arg[0] && strspn(arg, "0123456789") == strlen(arg);
        int r = bare && bare_ms ? parse_u64(arg, ret) : parse_duration_ms(arg, ret);
        if (r == 0 && *ret >= min_ms && *ret <= max_ms)
                return true;
        fprintf(stderr, "gpuvet query: %s: expected a duration from %s to %s (\"30s\", \"5m\"%s), not \"%s\"\n", name,
                min_ms >= 1000 ? "1s" : "1ms", max_ms == DAY_MS ? "1d" : "10m",
                bare_ms ? "; a bare number is milliseconds" : "; a bare number is seconds", arg);
        return false;
}

/* nvidia-smi's syntax, so this parses itself rather than through cmd_parse: long options
 * with one dash (-lms), -l with an optional value. Returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, struct query_opts *o, struct query_args *a) {
        int opt;
        uint64_t ms;
        optind = 1;
        opterr = 0;
        /* getopt_long_only: nvidia-smi spells -lms with one dash. A lone "-l" stays short. */
        while ((opt = getopt_long_only(argc, argv, ":l:f:i:h", cmd_query_getopt, NULL)) != -1) {
                switch (opt) {
                case QUERY_QUERY_GPU: a->query = optarg; break;
                case QUERY_FORMAT: a->format = optarg; break;
                case QUERY_LOOP:
                        /* nvidia-smi's -l takes an optional interval: "-l --format=csv" and a
                         * trailing "-l" mean 5 s. */
                        if (optarg[0] == '-') {
                                optind--;
                                o->loop_ms = DEFAULT_LOOP_S * 1000ULL;
                        } else if (!query_duration("-l", optarg, false, 1000, DAY_MS, &ms)) {
                                return EXIT_USAGE;
                        } else {
                                o->loop_ms = ms;
                        }
                        break;
                case QUERY_LOOP_MS:
                        if (!query_duration("-lms", optarg, true, 1, DAY_MS, &ms))
                                return EXIT_USAGE;
                        o->loop_ms = ms;
                        break;
                case QUERY_FILENAME: o->file = optarg; break;
                case QUERY_ID: o->ids = optarg; break;
                case QUERY_HELP_FIELDS: a->help_fields = true; break;
                case QUERY_HELP_METRICS: a->help_metrics = true; break;
                case QUERY_NVML_LIB: o->nvml_lib = optarg; break;
                case QUERY_NVML_CALL_TIMEOUT:
                case QUERY_NVML_GPU_TIMEOUT:
                case QUERY_NVML_INIT_TIMEOUT: {
                        const char *name = opt == QUERY_NVML_CALL_TIMEOUT  ? "--nvml-call-timeout-ms"
                                           : opt == QUERY_NVML_GPU_TIMEOUT ? "--nvml-gpu-timeout-ms"
                                                                           : "--nvml-init-timeout-ms";
                        if (!query_duration(name, optarg, true, 1, 600000, &ms))
                                return EXIT_USAGE;
                        *(opt == QUERY_NVML_CALL_TIMEOUT  ? &o->dl.call_ms
                          : opt == QUERY_NVML_GPU_TIMEOUT ? &o->dl.gpu_ms
                                                          : &o->dl.init_ms) = (unsigned)ms;
                        break;
                }
                case QUERY_HELP: cmd_print_help(&cmd_query_spec, stdout); return EXIT_PASS;
                case ':':
                        if (optopt == 'l') {
                                o->loop_ms = DEFAULT_LOOP_S * 1000ULL;
                                break;
                        }
                        fprintf(stderr, "gpuvet query: option %s needs a value\n", argv[optind - 1]);
                        return EXIT_USAGE;
                default:
                        fprintf(stderr, "gpuvet query: unknown option %s (see gpuvet query --help)\n", argv[optind - 1]);
                        return EXIT_USAGE;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "gpuvet query: unexpected argument \"%s\" (see gpuvet query --help)\n", argv[optind]);
                return EXIT_USAGE;
        }
        return -1;
}

int cmd_query(int argc, char **argv) {
        struct query_opts o = {0};
        struct query_args a = {.format = "csv"};
        int r = parse_args(argc, argv, &o, &a);
        if (r >= 0)
                return r;
        if (a.help_fields) {
                query_fields_help(stdout);
                return EXIT_PASS;
        }
        if (a.help_metrics) {
                query_metrics_help(stdout);
                return EXIT_PASS;
        }
        if (!a.query) {
                fprintf(stderr, "gpuvet query: --query-gpu=FIELDS is required (see gpuvet query --help)\n");
                return EXIT_USAGE;
        }
        r = parse_fields(a.query, &o);
        if (r >= 0)
                return r;
        if (o.ids && strspn(o.ids, ", \t") == strlen(o.ids)) {
                /* Selecting nothing would print a header and pass. */
                fprintf(stderr, "gpuvet query: -i \"%s\" names no GPU: give an index, UUID or PCI bus id\n", o.ids);
                return EXIT_USAGE;
        }
        r = parse_format(a.format, &o);
        if (r >= 0)
                return r;
        return run(&o);
}

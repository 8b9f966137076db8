#include "bench/runner.h"
#include "bench/baselines.h"
#include "core/deadline.h"
#include "core/run_command.h"
#include "bench/measurement_json.h"
#include "core/write_fd.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FRAME_MAGIC "GPUVET-BENCH/1"
/* A report larger than this is not one a benchmark writes: refuse rather than grow. */
#define FRAME_MAX (64u << 20)

uint32_t bench_fnv1a32(const void *data, size_t len) {
        const unsigned char *p = data;
        uint32_t h = 2166136261u;
        for (size_t i = 0; i < len; i++) {
                h ^= p[i];
                h *= 16777619u;
        }
        return h;
}

char *bench_frame(const char *payload, size_t len, size_t *ret_len) {
        char head[64];
        int hl = snprintf(head, sizeof(head), FRAME_MAGIC " %zu %08x\n", len, (unsigned)bench_fnv1a32(payload, len));
        char *out = malloc((size_t)hl + len + 1);
        if (!out)
                return NULL;
        memcpy(out, head, (size_t)hl);
        memcpy(out + hl, payload, len);
        out[hl + len] = '\0';
        *ret_len = (size_t)hl + len;
        return out;
}

char *bench_unframe(char *buf, size_t len, char *why, size_t whysize) {
        char *nl = memchr(buf, '\n', len < 64 ? len : 64);
        if (!nl) {
                snprintf(why, whysize, len ? "no frame header" : "empty report");
                return NULL;
        }
        *nl = '\0';
        size_t plen;
        unsigned sum;
        char magic[32], tail;
        if (sscanf(buf, "%31s %zu %8x%c", magic, &plen, &sum, &tail) != 3 || strcmp(magic, FRAME_MAGIC) != 0) {
                snprintf(why, whysize, "malformed frame header");
                return NULL;
        }
        char *payload = nl + 1;
        size_t have = len - (size_t)(payload - buf);
        if (have != plen) {
                snprintf(why, whysize, "torn frame: %zu of %zu bytes", have, plen);
                return NULL;
        }
        if (bench_fnv1a32(payload, plen) != sum) {
                snprintf(why, whysize, "checksum mismatch");
                return NULL;
        }
        payload[plen] = '\0'; /* the reader keeps a spare byte past len */
        return payload;
}

int bench_open_backend(const char *name, const struct dev_ops **ret_ops, struct dev_backend **ret_dev, char *err,
                       size_t errsize) {
        const char *order[2] = {name, NULL};
        if (strcmp(name, "auto") == 0) {
                order[0] = "cuda";
                order[1] = "opencl";
        }
        size_t used = 0;
        err[0] = '\0';
        int r = -ENODEV;
        for (size_t i = 0; i < 2 && order[i]; i++) {
                const struct dev_ops *ops = dev_ops_by_name(order[i]);
                char msg[256] = "";
                struct dev_backend *dev = NULL;
                if (!ops) {
                        snprintf(msg, sizeof(msg), "not built into this gpuvet");
                        r = -ENOTSUP;
                } else if ((r = ops->open(&dev, msg, sizeof(msg))) == 0) {
                        if (ops->count(dev) > 0) {
                                *ret_ops = ops;
                                *ret_dev = dev;
                                return 0;
                        }
                        snprintf(msg, sizeof(msg), "no device");
                        ops->close(dev);
                        r = -ENODEV;
                }
                if (used < errsize)
                        used += (size_t)snprintf(err + used, errsize - used, "%s%s: %s", used ? "; " : "", order[i], msg);
        }
        return r;
}

/* ---- what a child measures now: a page shared with the children --------------------- */

/* One writer (the child running), one reader (the parent, once a second): a sequence
 * number, odd while the text is being written, tells the reader to try again. */
struct live_note {
        unsigned seq;
        char text[120];
};
static struct live_note *live;
static bool live_in_child;

/* In the parent, before a child starts: a clean page (mapped once, shared by every child). */
static void live_reset(void) {
        if (!live) {
                void *m = mmap(NULL, sizeof(*live), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
                if (m == MAP_FAILED)
                        return; /* no note: the line names the benchmark only */
                live = m;
        }
        live->seq = 0;
        live->text[0] = '\0';
}

void bench_live_note(const char *what, const char *subject) {
        if (!live || !live_in_child)
                return;
        unsigned seq = __atomic_load_n(&live->seq, __ATOMIC_RELAXED);
        __atomic_store_n(&live->seq, seq + 1, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        snprintf(live->text, sizeof(live->text), "%s%s%s", what, subject[0] ? " on " : "", subject);
        __atomic_store_n(&live->seq, seq + 2, __ATOMIC_RELEASE);
}

static void live_read(char *buf, size_t size) {
        buf[0] = '\0';
        for (int tries = 0; live && tries < 4; tries++) {
                unsigned seq = __atomic_load_n(&live->seq, __ATOMIC_ACQUIRE);
                if (seq & 1)
                        continue;
                snprintf(buf, size, "%.*s", (int)sizeof(live->text) - 1, live->text);
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
                if (__atomic_load_n(&live->seq, __ATOMIC_RELAXED) != seq)
                        continue;
                /* the subject quotes what the driver said: no control character reaches the terminal */
                for (char *c = buf; *c; c++)
                        if ((unsigned char)*c < 0x20 || *c == 0x7f)
                                *c = '?';
                return;
        }
        buf[0] = '\0';
}

/* ---- progress ------------------------------------------------------------------------ */

void bench_progress_init(struct bench_progress *p, const char *command, size_t n_steps, bool on) {
        *p = (struct bench_progress){.command = command, .n_steps = n_steps};
        progress_init(&p->out, on);
}

void bench_progress_next(struct bench_progress *p, double later_s) {
        p->step++;
        p->later_s = later_s;
        progress_now(&p->out);
}

unsigned bench_deadline_s(const struct bench_info *b, unsigned timeout_s) {
        if (timeout_s)
                return timeout_s;
        return b->default_timeout_s ? b->default_timeout_s : BENCH_DEFAULT_TIMEOUT_S;
}

static void progress_tick(struct bench_progress *p, const struct bench_info *b, double start_ms, unsigned timeout_s) {
        double now = monotonic_ms();
        if (!p)
                return;
        /* On a terminal a new step of the child shows at once, however short it is: what runs
         * on which GPU is the point of the line. Logs keep their plain line every few seconds. */
        unsigned seq = live ? __atomic_load_n(&live->seq, __ATOMIC_ACQUIRE) : 0;
        if (p->out.tty && seq != p->note_seq && !(seq & 1)) {
                p->note_seq = seq;
                progress_now(&p->out);
        }
        if (!progress_begin(&p->out, now / 1e3))
                return;
        char note[sizeof(live->text)], spent[16], left[16];
        live_read(note, sizeof(note));
        double elapsed_s = (now - start_ms) / 1e3, this_left = timeout_s - elapsed_s;
        progress_duration(spent, sizeof(spent), elapsed_s);
        /* a bound, not a forecast: each benchmark may use its whole deadline */
        progress_duration(left, sizeof(left), (this_left > 0 ? this_left : 0) + p->later_s);
        progress_line(&p->out, "%s: %s (%zu of %zu)%s%s, %s, up to %s left (by the deadlines)", p->command, b->name,
                      p->step, p->n_steps, note[0] ? ": " : "", note, spent, left);
        progress_end(&p->out);
}

/* ---- child ------------------------------------------------------------------------- */

/* Test-only switches (GPUVET_BENCH_TEST_HANG, _GARBLE): in the test build alone
 * (-DGPUVET_TEST_HOOKS: gpuvet-test-hooks, the unit tests); the released gpuvet has none. */
static bool env_names(const char *var, const char *bench) {
#ifdef GPUVET_TEST_HOOKS
        const char *v = getenv(var);
        return v && strcmp(v, bench) == 0;
#else
        (void)var, (void)bench;
        return false;
#endif
}

static void child_main(const struct bench_info *b, const struct bench_ctx *parent_ctx, int fd) {
        struct bench_ctx ctx = *parent_ctx;
        ctx.progress = NULL; /* the parent's */
        live_in_child = true;
        struct bench_report rep;
        bench_report_init(&rep);
        char backend[16] = "";

        if (env_names("GPUVET_BENCH_TEST_HANG", b->name)) {
                /* Test-only: a device call that never returns, deaf to SIGTERM. */
                signal(SIGTERM, SIG_IGN);
                for (;;)
                        pause();
        }
        if (b->needs_device) {
                char err[512];
                bench_live_note("opening the device backend", "");
                int r = bench_open_backend(ctx.opt->backend ? ctx.opt->backend : "auto", &ctx.ops, &ctx.dev, err,
                                           sizeof(err));
                if (r < 0) {
                        struct measurement *m = bench_measurement_new(&rep, b->name, "backend", "host", "", true);
                        measurement_fail(m, STATUS_SKIP, "no GPU backend with a device: %s", err);
                } else {
                        snprintf(backend, sizeof(backend), "%s", ctx.ops->name);
                }
        }
        if (!b->needs_device || ctx.ops)
                b->run(&ctx, &rep);
        if (ctx.ops && ctx.dev)
                ctx.ops->close(ctx.dev);

        json_t *root = json_object();
        json_object_set_new(root, "backend", json_string(backend));
        json_object_set_new(root, "out_of_memory", json_boolean(rep.out_of_memory));
        json_t *list = json_array();
        for (size_t i = 0; i < rep.n; i++)
                json_array_append_new(list, bench_json_measurement(&rep.m[i]));
        json_object_set_new(root, "measurements", list);
        char *payload = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(17));
        json_decref(root);
        if (!payload)
                _exit(3);
        size_t len = strlen(payload), flen;
        char *frame = bench_frame(payload, len, &flen);
        if (!frame)
                _exit(3);
        if (env_names("GPUVET_BENCH_TEST_GARBLE", b->name))
                flen = flen / 2 + 1; /* test-only: a child that dies half-way through */
        (void)write_fd_all(fd, frame, flen); /* a parent that went away has nothing to hear */
        _exit(0);
}

/* ---- parent ------------------------------------------------------------------------ */

static struct measurement *runner_error(struct bench_report *rep, const struct bench_info *b, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static struct measurement *runner_error(struct bench_report *rep, const struct bench_info *b, const char *fmt, ...) {
        struct measurement *m = bench_measurement_new(rep, b->name, "run", "host", "", true);
        char msg[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        measurement_fail(m, STATUS_ERROR, "%s", msg);
        return m;
}

static void describe_exit(int wstatus, char *buf, size_t size) {
        if (WIFEXITED(wstatus))
                snprintf(buf, size, "exit status %d", WEXITSTATUS(wstatus));
        else if (WIFSIGNALED(wstatus))
                snprintf(buf, size, "killed by signal %d (%s)", WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
        else
                snprintf(buf, size, "status 0x%x", (unsigned)wstatus);
}

struct child_arg {
        const struct bench_info *b;
        const struct bench_ctx *ctx;
};

static void child_body(const void *varg, int fd) {
        const struct child_arg *arg = varg;
        child_main(arg->b, arg->ctx, fd);
}

int bench_run_child(const struct bench_info *b, const struct bench_ctx *ctx, unsigned timeout_s,
                    struct bench_report *rep, struct bench_run_result *ret) {
        memset(ret, 0, sizeof(*ret));
        ret->info = b;
        ret->first = rep->n;
        timeout_s = bench_deadline_s(b, timeout_s);
        double start = monotonic_ms();
        live_reset();
        /* A crash must kill the child, not run handlers it inherited (a test harness's,
         * the watchdog's); an alarm armed by the parent is not ours: spawn_watched. */
        struct child_arg arg = {.b = b, .ctx = ctx};
        int readfd;
        pid_t pid = spawn_watched(child_body, &arg, &readfd);
        if (pid < 0) {
                runner_error(rep, b, "cannot start the benchmark process: %s", strerror((int)-pid));
                ret->count = rep->n - ret->first;
                return (int)pid;
        }

        char *buf = NULL;
        size_t len = 0, cap = 0;
        bool timed_out = false, too_big = false;
        double deadline = start + timeout_s * 1e3;
        for (;;) {
                progress_tick(ctx->progress, b, start, timeout_s);
                double left = deadline - monotonic_ms();
                if (left <= 0) {
                        timed_out = true;
                        break;
                }
                struct pollfd p = {.fd = readfd, .events = POLLIN};
                /* a terminal's line follows the child's steps within a tick */
                int tick = ctx->progress && ctx->progress->out.tty ? 100 : 1000;
                int pr = poll(&p, 1, left > tick ? tick : (int)left + 1);
                if (pr < 0 && errno != EINTR)
                        break;
                if (pr <= 0)
                        continue;
                if (len + 65536 + 1 > cap) {
                        size_t ncap = cap ? cap * 2 : 262144;
                        char *grown = ncap <= FRAME_MAX ? realloc(buf, ncap) : NULL;
                        if (!grown) {
                                too_big = true;
                                break;
                        }
                        buf = grown;
                        cap = ncap;
                }
                ssize_t got = read(readfd, buf + len, cap - len - 1);
                if (got < 0 && errno == EINTR)
                        continue;
                if (got <= 0)
                        break; /* EOF: the child is done (or died) */
                len += (size_t)got;
        }
        close(readfd);

        int wstatus = 0;
        bool reaped = false;
        if (!timed_out && !too_big) {
                /* The report is complete; give the child the rest of the deadline to exit. */
                double left = deadline - monotonic_ms();
                reaped = child_reap(pid, left > 0 ? (unsigned int)left : 0, &wstatus);
                timed_out = !reaped;
        }
        if (!reaped) {
                kill(-pid, SIGTERM);
                kill(pid, SIGTERM);
                if (!(reaped = child_reap(pid, (unsigned int)(BENCH_GRACE_S * 1e3), &wstatus))) {
                        kill(-pid, SIGKILL);
                        kill(pid, SIGKILL);
                        /* A process in uninterruptible sleep in a driver outlives SIGKILL; do
                         * not wait for it forever. */
                        reaped = child_reap(pid, 5000, &wstatus);
                }
        }
        ret->duration_ms = monotonic_ms() - start;

        char exitdesc[96];
        describe_exit(wstatus, exitdesc, sizeof(exitdesc));
        if (timed_out) {
                char what[160];
                snprintf(what, sizeof(what), "timed out after %u s in %s", timeout_s, b->name);
                runner_error(rep, b, "%s%s", what,
                             reaped ? "; the benchmark process was killed"
                                    : "; the benchmark process did not exit after SIGKILL (stuck in the kernel, "
                                      "likely a wedged device)");
                snprintf(ret->note, sizeof(ret->note), "%s", what);
        } else if (too_big) {
                runner_error(rep, b, "untrustworthy report: larger than 64 MiB");
                snprintf(ret->note, sizeof(ret->note), "untrustworthy report");
        } else {
                char why[128] = "";
                char *payload = buf ? bench_unframe(buf, len, why, sizeof(why)) : NULL;
                json_error_t jerr;
                json_t *root = payload ? json_loads(payload, 0, &jerr) : NULL;
                json_t *list = json_object_get(root, "measurements");
                if (payload && !json_is_array(list))
                        snprintf(why, sizeof(why), "payload is not a measurement list");
                if (!json_is_array(list)) {
                        if (!buf && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)
                                snprintf(why, sizeof(why), "empty report");
                        else if (!buf)
                                snprintf(why, sizeof(why), "no report");
                        runner_error(rep, b, "untrustworthy report from %s: %s", b->name, why);
                        size_t l = strlen(rep->m[rep->n - 1].summary);
                        snprintf(rep->m[rep->n - 1].summary + l, sizeof(rep->m[0].summary) - l,
                                 " (benchmark process: %s)", exitdesc);
                        snprintf(ret->note, sizeof(ret->note), "untrustworthy report: %s", why);
                } else {
                        const char *backend = json_string_value(json_object_get(root, "backend"));
                        snprintf(ret->backend, sizeof(ret->backend), "%s", backend ? backend : "");
                        size_t i;
                        json_t *e;
                        json_array_foreach(list, i, e) {
                                char mwhy[128];
                                if (bench_json_parse_measurement(e, rep, mwhy, sizeof(mwhy)) < 0) {
                                        runner_error(rep, b, "untrustworthy report: %s", mwhy);
                                        break;
                                }
                        }
                        if (json_is_true(json_object_get(root, "out_of_memory")))
                                runner_error(rep, b, "the benchmark ran out of memory recording measurements");
                        if (rep->n == ret->first)
                                runner_error(rep, b, "%s reported no measurement", b->name);
                }
                json_decref(root);
        }
        free(buf);
        ret->count = rep->n - ret->first;
        return 0;
}

/* ---- judging ----------------------------------------------------------------------- */

/* The GPU model named by a subject "gpu0 (0000:1b:00.0)": the PCI address in brackets. */
const struct gpu_model *bench_subject_model(const struct facts *f, const char *subject) {
        if (!f || strncmp(subject, "gpu", 3) != 0)
                return NULL;
        const char *open = strchr(subject, '(');
        if (!open)
                return NULL;
        char addr[32];
        size_t n = 0;
        for (const char *p = open + 1; *p && *p != ')' && n + 1 < sizeof(addr); p++)
                addr[n++] = (char)tolower((unsigned char)*p);
        addr[n] = '\0';
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct pci_dev *d = &f->pci.devs[f->gpus.gpus[i].pci_index];
                /* Some APIs omit the domain or print 8 hex digits of it. */
                size_t al = strlen(d->addr), bl = strlen(addr);
                if (strcasecmp(d->addr, addr) == 0 || (bl < al && strcasecmp(d->addr + al - bl, addr) == 0) ||
                    (al < bl && strcasecmp(addr + bl - al, d->addr) == 0))
                        return f->gpus.gpus[i].model;
        }
        return NULL;
}

void bench_judge_range(struct bench_report *rep, size_t first, const struct facts *facts,
                       const struct baselines *baselines) {
        for (size_t i = first; i < rep->n; i++) {
                struct measurement *m = &rep->m[i];
                if (m->baseline <= 0) {
                        const struct gpu_model *model = bench_subject_model(facts, m->subject);
                        const struct baseline *bl =
                                model ? baselines_find(baselines, model->name, m->bench, m->name) : NULL;
                        if (bl && strcmp(bl->unit, m->unit) == 0) {
                                m->baseline = bl->value;
                                snprintf(m->baseline_source, sizeof(m->baseline_source), "%s", bl->source);
                        }
                }
                const struct bench_limit_set *ls = baselines_limits(baselines, m->bench);
                const struct bench_limits *lim = NULL;
                if (ls)
                        lim = m->baseline > 0 ? &ls->baseline : &ls->peak;
                bench_judge(m, lim);
        }
}

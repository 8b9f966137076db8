/* The parent's side of the stress test: the census, one worker per device, and the loop
 * that hears them, notices the silent ones and stops them all on request (burn/burn.h). */
#include "burn/burn.h"
#include "bench/runner.h"
#include "burn/progress.h"
#include "burn/watch.h"
#include "burn/wire.h"
#include "burn/worker.h"
#include "core/array.h"
#include "core/deadline.h"
#include "core/run_command.h"
#include "sys/facts.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The census lists devices only; a driver that needs longer than this to enumerate is
 * wedged (cuInit on 8 GPUs takes a few seconds at worst). */
#define CENSUS_TIMEOUT_MS 30000u
/* After SIGTERM a worker finishes its launch batch (BATCH_TARGET_MS) and verifies: then
 * SIGKILL, so that every worker is gone within a second of a stop request. */
#define STOP_GRACE_MS 800u
#define POLL_SLICE_MS 100

static atomic_bool stop_requested;

void burn_request_stop(void) { atomic_store(&stop_requested, true); }

void burn_mode_slices(const struct burn_options *o, uint64_t slices[_BURN_MODE_COUNT]) {
        unsigned modes = o->modes ? o->modes : BURN_MODE_BIT(BURN_MODE_GEMM);
        unsigned n = 0;
        for (int m = 0; m < _BURN_MODE_COUNT; m++)
                n += (modes & BURN_MODE_BIT(m)) != 0;
        uint64_t each = o->duration_ms / n, left = o->duration_ms - each * n;
        for (int m = 0; m < _BURN_MODE_COUNT; m++) {
                slices[m] = modes & BURN_MODE_BIT(m) ? each + left : 0;
                if (slices[m])
                        left = 0; /* the remainder of the division goes to the first mode */
        }
}

void burn_not_run(struct burn_facts *ret, const char *why) {
        memset(ret, 0, sizeof(*ret));
        snprintf(ret->not_run, sizeof(ret->not_run), "%s", why);
}

void burn_done(struct burn_facts *b) {
        for (size_t i = 0; i < b->n_devs; i++) {
                free(b->devs[i].rates);
                free(b->devs[i].tele.samples);
        }
        free(b->devs);
        b->devs = NULL;
        b->n_devs = 0;
}

/* ---- children ---------------------------------------------------------------------- */

static void kill_group(pid_t pid, int sig) {
        kill(-pid, sig);
        kill(pid, sig);
}

/* Lines from one child: buffered until their newline. */
struct line_reader {
        int fd;
        char buf[2 * BURN_WIRE_LINE_MAX];
        size_t len;
        bool eof;
        bool overlong; /* a line past the limit: the child is not one of ours, or broken */
};

/* Read what is there and call on_line(ctx, line) for each whole line; stops early when
 * on_line returns false. */
static void reader_pump(struct line_reader *r, bool (*on_line)(void *ctx, char *line), void *ctx) {
        ssize_t n;
        do
                n = read(r->fd, r->buf + r->len, sizeof(r->buf) - r->len - 1);
        while (n < 0 && errno == EINTR);
        if (n <= 0) {
                if (n == 0 || errno != EAGAIN)
                        r->eof = true;
                return;
        }
        r->len += (size_t)n;
        char *start = r->buf;
        char *nl;
        while ((nl = memchr(start, '\n', r->len - (size_t)(start - r->buf)))) {
                *nl = '\0';
                bool go_on = on_line(ctx, start);
                start = nl + 1;
                if (!go_on)
                        break;
        }
        r->len -= (size_t)(start - r->buf);
        memmove(r->buf, start, r->len);
        if (r->len >= BURN_WIRE_LINE_MAX) {
                r->overlong = true;
                r->eof = true;
        }
}

/* ---- the census -------------------------------------------------------------------- */

struct census_arg {
        const char *backend;
};

static void census_body(const void *arg, int fd) {
        const struct census_arg *c = arg;
        const struct dev_ops *ops = NULL;
        struct dev_backend *b = NULL;
        char err[512];
        if (bench_open_backend(c->backend, &ops, &b, err, sizeof(err)) < 0) {
                char *line = burn_wire_error(err);
                if (line && write(fd, line, strlen(line)) < 0)
                        _exit(3);
                _exit(0);
        }
        int n = ops->count(b);
        for (int i = 0; i < n; i++) {
                struct dev_info info;
                memset(&info, 0, sizeof(info));
                char *line = ops->info(b, i, &info) == 0 ? burn_wire_device(info.name, info.pci_bus_id, info.is_cpu, ops->name)
                                                         : burn_wire_error(ops->last_error(b));
                if (line && write(fd, line, strlen(line)) < 0)
                        _exit(3);
                free(line);
        }
        ops->close(b);
        char *done = burn_wire_done(false);
        if (done && write(fd, done, strlen(done)) < 0)
                _exit(3);
        _exit(0);
}

struct census {
        struct burn_device devs[64];
        size_t n;
        int seen; /* device lines and error lines: the next device's index */
        char error[256];
        bool done;
        bool broken;
};

static bool census_line(void *ctx, char *line) {
        struct census *c = ctx;
        if (c->n == ARRAY_COUNT(c->devs)) {
                c->broken = true;
                return false;
        }
        struct burn_device *d = &c->devs[c->n];
        memset(d, 0, sizeof(*d));
        char why[128];
        int r = burn_wire_apply(d, line, 0, why, sizeof(why));
        if (r < 0) {
                snprintf(c->error, sizeof(c->error), "device census: %s", why);
                c->broken = true;
                return false;
        }
        if (r == 1) {
                c->done = true;
                return false;
        }
        if (d->end == BURN_END_ERROR) {
                /* the backend could not be opened, or device `seen` not described */
                snprintf(c->error, sizeof(c->error), "%s", d->error);
                c->seen++;
                return true;
        }
        d->index = c->seen++;
        c->n++;
        return true;
}

/* List the backend's devices in a child under CENSUS_TIMEOUT_MS. Returns 0, or -1 with
 * why in c->error. */
static int take_census(const char *backend, struct census *c) {
        memset(c, 0, sizeof(*c));
        struct census_arg arg = {.backend = backend};
        struct line_reader r = {0};
        pid_t pid = spawn_watched(census_body, &arg, &r.fd);
        if (pid < 0) {
                snprintf(c->error, sizeof(c->error), "cannot start the device census: %s", strerror((int)-pid));
                return -1;
        }
        unsigned long long end = deadline_now_ms() + CENSUS_TIMEOUT_MS;
        while (!r.eof && !c->done && !c->broken && deadline_now_ms() < end) {
                struct pollfd p = {.fd = r.fd, .events = POLLIN};
                if (poll(&p, 1, POLL_SLICE_MS) > 0)
                        reader_pump(&r, census_line, c);
        }
        close(r.fd);
        int status;
        if (!child_reap(pid, c->done ? 2000 : 0, &status)) {
                kill_group(pid, SIGKILL);
                (void)child_reap(pid, 2000, &status);
                if (!c->done && !c->broken) {
                        snprintf(c->error, sizeof(c->error), "the device census did not answer within %u s (a wedged driver?)",
                                 CENSUS_TIMEOUT_MS / 1000);
                        return -1;
                }
        }
        if (!c->done && !c->error[0])
                snprintf(c->error, sizeof(c->error), "the device census ended without a device list");
        return c->done ? 0 : -1;
}

/* ---- the workers ------------------------------------------------------------------- */

struct slot {
        struct burn_device *d;
        struct burn_worker_spec spec;
        pid_t pid;
        struct line_reader r;
        bool finished;     /* done line, or given up on */
        bool term_sent;
        unsigned long long start_ms;
};

struct run_state {
        struct slot *slots;
        size_t n;
        unsigned long long t0;
};

static void worker_body(const void *arg, int fd) { burn_worker_main(arg, fd); }

struct line_ctx {
        struct slot *s;
        double t_s;
};

static bool worker_line(void *ctx, char *line) {
        struct line_ctx *lc = ctx;
        struct slot *s = lc->s;
        char why[160];
        int r = burn_wire_apply(s->d, line, lc->t_s, why, sizeof(why));
        s->d->last_heard_ms = deadline_now_ms();
        if (r < 0) {
                s->d->end = BURN_END_CRASHED;
                snprintf(s->d->error, sizeof(s->d->error), "untrustworthy report from the worker: %s", why);
                s->finished = true;
                return false;
        }
        if (r == 1)
                s->finished = true;
        return r == 0;
}

static void slot_close(struct slot *s, double t_s) {
        if (s->r.fd >= 0) {
                close(s->r.fd);
                s->r.fd = -1;
        }
        if (s->pid > 0) {
                int status = 0;
                bool reaped = child_reap(s->pid, s->finished ? 2000 : 200, &status);
                if (!reaped) {
                        kill_group(s->pid, SIGKILL);
                        reaped = child_reap(s->pid, 2000, &status);
                }
                if (!s->finished && s->d->end != BURN_END_HUNG && s->d->end != BURN_END_STOPPED) {
                        s->d->end = BURN_END_CRASHED;
                        if (reaped && WIFSIGNALED(status))
                                snprintf(s->d->error, sizeof(s->d->error), "the worker died: %s",
                                         strsignal(WTERMSIG(status)));
                        else if (reaped)
                                snprintf(s->d->error, sizeof(s->d->error), "the worker exited (status %d) without a report",
                                         WIFEXITED(status) ? WEXITSTATUS(status) : -1);
                        else
                                snprintf(s->d->error, sizeof(s->d->error), "the worker stopped answering and did not exit");
                }
                s->pid = 0;
        }
        s->finished = true;
        s->d->ended_s = t_s;
}

/* ---- the run ----------------------------------------------------------------------- */

static bool want_device(const struct burn_options *o, const struct burn_device *d) {
        if (o->gpus) {
                for (size_t i = 0; i < o->n_gpus; i++)
                        if (o->gpus[i] == d->index)
                                return !d->is_cpu || o->allow_cpu;
                return false;
        }
        return !d->is_cpu || o->allow_cpu;
}

static uint64_t clock_seed(void) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return ((uint64_t)ts.tv_sec * 1000000007ull) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
}

void burn_run(const struct burn_options *o, const struct facts *f, struct nvml_lib *lib,
              const struct nvml_deadlines *dl, struct burn_facts *ret) {
        memset(ret, 0, sizeof(*ret));
        ret->attempted = true;
        ret->opt = *o;
        ret->opt.gpus = NULL;
        ret->opt.n_gpus = 0;
        if (!ret->opt.modes)
                ret->opt.modes = BURN_MODE_BIT(BURN_MODE_GEMM);
        if (!ret->opt.seed)
                ret->opt.seed = clock_seed() | 1;
        if (!ret->opt.hang_ms)
                ret->opt.hang_ms = BURN_DEFAULT_HANG_MS;
        burn_mode_slices(&ret->opt, ret->slices_ms);

        struct census census;
        if (take_census(o->backend ? o->backend : "auto", &census) < 0) {
                snprintf(ret->not_run, sizeof(ret->not_run), "%s", census.error);
                return;
        }
        for (size_t i = 0; o->gpus && i < o->n_gpus; i++)
                if (o->gpus[i] < 0 || (size_t)o->gpus[i] >= census.n) {
                        snprintf(ret->not_run, sizeof(ret->not_run), "--gpus names device %d, but %s has %zu device%s",
                                 o->gpus[i], census.n ? census.devs[0].backend : "the backend", census.n,
                                 census.n == 1 ? "" : "s");
                        return;
                }
        size_t cpus_left_out = 0;
        ret->devs = calloc(census.n ? census.n : 1, sizeof(*ret->devs));
        if (!ret->devs) {
                snprintf(ret->not_run, sizeof(ret->not_run), "out of memory");
                return;
        }
        for (size_t i = 0; i < census.n; i++) {
                if (want_device(o, &census.devs[i])) {
                        struct burn_device *d = &ret->devs[ret->n_devs++];
                        *d = census.devs[i];
                        d->temp_c = d->power_w = NAN;
                }
                else if (census.devs[i].is_cpu)
                        cpus_left_out++;
        }
        if (census.n)
                snprintf(ret->backend, sizeof(ret->backend), "%s", census.devs[0].backend);
        if (cpus_left_out)
                snprintf(ret->census_note, sizeof(ret->census_note),
                         "%zu CPU device%s of %s not loaded (a CPU is not a GPU; --allow-cpu loads it)", cpus_left_out,
                         cpus_left_out == 1 ? "" : "s", ret->backend);
        if (ret->n_devs == 0) {
                snprintf(ret->not_run, sizeof(ret->not_run), "no GPU to stress%s%.200s%s",
                         ret->census_note[0] ? ": " : "", ret->census_note,
                         o->allow_cpu ? " (and no CPU device for --allow-cpu)" : "");
                return;
        }
        ret->ran = true;

        struct slot *slots = calloc(ret->n_devs, sizeof(*slots));
        if (!slots) {
                snprintf(ret->not_run, sizeof(ret->not_run), "out of memory");
                ret->ran = false;
                return;
        }
        unsigned long long t0 = deadline_now_ms();
        for (size_t i = 0; i < ret->n_devs; i++) {
                struct slot *s = &slots[i];
                s->d = &ret->devs[i];
                s->r.fd = -1;
                s->spec = (struct burn_worker_spec){.backend = ret->backend, .index = s->d->index, .opt = &ret->opt,
                                                    .seed = ret->opt.seed};
                memcpy(s->spec.slices_ms, ret->slices_ms, sizeof(s->spec.slices_ms));
                s->d->end = BURN_END_NOT_RUN;
                s->d->last_heard_ms = t0;
                s->start_ms = t0;
                s->pid = spawn_watched(worker_body, &s->spec, &s->r.fd);
                if (s->pid < 0) {
                        snprintf(s->d->error, sizeof(s->d->error), "cannot start the worker: %s", strerror((int)-s->pid));
                        s->pid = 0;
                        s->finished = true;
                }
        }

        struct burn_watch *watch = NULL;
        (void)burn_watch_start(lib, &f->nvml, dl, o->sample_ms ? o->sample_ms : BURN_DEFAULT_SAMPLE_MS, ret, &watch);
        struct burn_progress *prog = o->progress ? burn_progress_start(ret) : NULL;
        unsigned long long stop_at = 0;
        for (;;) {
                struct pollfd pfd[ret->n_devs + 1];
                size_t live = 0;
                for (size_t i = 0; i < ret->n_devs; i++) {
                        pfd[i] = (struct pollfd){.fd = slots[i].finished ? -1 : slots[i].r.fd, .events = POLLIN};
                        live += !slots[i].finished;
                }
                if (!live)
                        break;
                pfd[ret->n_devs] = (struct pollfd){.fd = burn_watch_fd(watch), .events = POLLIN};
                int pr = poll(pfd, ret->n_devs + 1, POLL_SLICE_MS);
                unsigned long long now = deadline_now_ms();
                double t_s = (now - t0) / 1e3;
                if (pr > 0 && pfd[ret->n_devs].revents)
                        burn_watch_pump(watch, ret, t_s);
                for (size_t i = 0; pr > 0 && i < ret->n_devs; i++) {
                        struct slot *s = &slots[i];
                        if (s->finished || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        struct line_ctx lc = {.s = s, .t_s = t_s};
                        if (!s->d->started_s && s->d->end == BURN_END_NOT_RUN)
                                s->d->started_s = t_s;
                        reader_pump(&s->r, worker_line, &lc);
                        if (s->r.overlong && !s->finished) {
                                s->d->end = BURN_END_CRASHED;
                                snprintf(s->d->error, sizeof(s->d->error), "untrustworthy report: a line over %d bytes",
                                         BURN_WIRE_LINE_MAX);
                        }
                        if (s->finished || s->r.eof)
                                slot_close(s, t_s);
                }
                if (atomic_load(&stop_requested) && !stop_at) {
                        ret->interrupted = true;
                        stop_at = now;
                        for (size_t i = 0; i < ret->n_devs; i++)
                                if (!slots[i].finished && slots[i].pid > 0) {
                                        kill_group(slots[i].pid, SIGTERM);
                                        slots[i].term_sent = true;
                                }
                }
                for (size_t i = 0; i < ret->n_devs; i++) {
                        struct slot *s = &slots[i];
                        if (s->finished)
                                continue;
                        if (stop_at && now - stop_at >= STOP_GRACE_MS) {
                                s->d->end = BURN_END_STOPPED;
                                snprintf(s->d->error, sizeof(s->d->error),
                                         "stopped by a signal; the worker did not finish its launch within %u ms",
                                         STOP_GRACE_MS);
                                kill_group(s->pid, SIGKILL);
                                slot_close(s, t_s);
                        } else if (now > s->d->last_heard_ms && now - s->d->last_heard_ms >= ret->opt.hang_ms) {
                                s->d->end = BURN_END_HUNG;
                                snprintf(s->d->error, sizeof(s->d->error),
                                         "silent for %.0f s (hang deadline %u s): the device stopped answering; "
                                         "the worker was killed",
                                         (now - s->d->last_heard_ms) / 1e3, ret->opt.hang_ms / 1000);
                                kill_group(s->pid, SIGKILL);
                                slot_close(s, t_s);
                        }
                }
                if (prog)
                        burn_progress_update(prog, ret, t_s);
        }
        ret->duration_s = (deadline_now_ms() - t0) / 1e3;
        burn_watch_pump(watch, ret, ret->duration_s); /* the last sample and events */
        burn_watch_stop(watch, ret);
        if (prog)
                burn_progress_end(prog, ret);
        free(slots);
}

#include "burn/worker.h"
#include "bench/device.h"
#include "bench/runner.h"
#include "burn/gemm_load.h"
#include "burn/memtest.h"
#include "burn/wire.h"
#include "core/deadline.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One launch batch is sized to take about this long: short enough that a stop request
 * and the tick are answered in time, long enough that the host's gap between batches
 * (one wait and one enqueue) is a small fraction of the device's time (docs/burn.md). */
#define BATCH_TARGET_MS 100.0
/* The most of the GEMM mode's time verification may take when the interval is gpuvet's to
 * choose (issue 14: host work under 2% of the run, gaps between launches included). */
#define VERIFY_SHARE 0.015

static volatile sig_atomic_t stop_signalled;

static void on_stop_signal(int sig) {
        (void)sig;
        stop_signalled = 1;
}

struct worker {
        int fd;
        const struct burn_worker_spec *spec;
        const struct dev_ops *ops;
        struct dev_backend *backend;
        struct dev_ctx *ctx;
        struct dev_info info;
        unsigned long long last_line_ms; /* when the parent last heard from us */
};

static void send_line(struct worker *w, char *line) {
        if (!line)
                return; /* out of memory: the parent hears the next line, or the hang deadline */
        size_t len = strlen(line);
        const char *p = line;
        while (len) {
                ssize_t n = write(w->fd, p, len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        _exit(3); /* the parent is gone: nobody to load the device for */
                p += n;
                len -= (size_t)n;
        }
        free(line);
        w->last_line_ms = deadline_now_ms();
}

/* Alive, when nothing else was said for a tick: the parent's hang deadline counts silence. */
static void beat_if_quiet(struct worker *w) {
        if (deadline_now_ms() - w->last_line_ms >= BURN_TICK_MS)
                send_line(w, burn_wire_beat());
}

static _Noreturn void give_up(struct worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static _Noreturn void give_up(struct worker *w, const char *fmt, ...) {
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        send_line(w, burn_wire_error(msg));
        send_line(w, burn_wire_done(false));
        _exit(0);
}

static bool should_stop(unsigned long long end_ms) { return stop_signalled || deadline_now_ms() >= end_ms; }

/* The precision a mode runs when none was asked: fp32 for gemm (exact enough to compare
 * with the host, as gpu-burn's default); for power and pulse the densest the device has,
 * since tensor-core products draw the most power. */
static const char *mode_precision(const struct worker *w, enum burn_mode m) {
        if (w->spec->opt->precision)
                return w->spec->opt->precision;
        if (m == BURN_MODE_GEMM || w->ops->kind != DEV_CUDA)
                return "fp32";
        return w->info.cc_major >= 7 ? "fp16" : "fp32";
}

static void sleep_ms(double ms) {
        if (ms <= 0)
                return;
        struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(((long long)ms % 1000) * 1000000)};
        nanosleep(&ts, NULL); /* a stop signal cuts it short: that is wanted */
}

/* Verify the last product and tell the parent; *since_verify (products since the last
 * verification) starts again. The parent counts products from the ticks. */
static void verify_now(struct worker *w, struct gemm_load *g, unsigned long long *since_verify) {
        struct gemm_check c;
        if (gemm_load_verify(g, &c) < 0)
                give_up(w, "verifying a product: %s", gemm_load_error(g));
        /* The module names one wrong element: against the host when the host saw one. */
        struct burn_fault faults[1];
        size_t n = 0;
        if (c.faulty_vs_host || c.faulty_vs_first) {
                faults[0] = (struct burn_fault){.mode = BURN_MODE_GEMM, .where_a = c.fault.row, .where_b = c.fault.col,
                                                .expected = c.fault.expected, .got = c.fault.got};
                snprintf(faults[0].what, sizeof(faults[0].what), "%s",
                         c.faulty_vs_host ? "host reference" : "first result");
                n = 1;
        }
        send_line(w, burn_wire_verify(c.elements_sampled, c.faulty_vs_host, c.elements_compared, c.faulty_vs_first,
                                      c.digest, faults, n));
        *since_verify = 0;
}

/* gemm, power and pulse: products back to back (pulse: in the first half of each period
 * only), verified every verify_every products and once at the end. */
static void run_gemm(struct worker *w, enum burn_mode m, unsigned long long slice_ms) {
        unsigned long long start = deadline_now_ms(), end = start + slice_ms;
        const struct burn_options *opt = w->spec->opt;
        const char *precision = mode_precision(w, m);
        struct gemm_load_options go = {.seed = w->spec->seed, .precision = burn_precision_parse(precision)};
        if (go.precision == _BURN_PRECISION_INVALID)
                give_up(w, "unknown precision \"%s\"", precision);
        struct gemm_load *g = NULL;
        char err[512];
        int r = gemm_load_open(w->ops, w->backend, w->ctx, &w->info, &go, &g, err, sizeof(err));
        if (r < 0)
                give_up(w, "%s: %s", burn_mode_name(m), err);
        send_line(w, burn_wire_mode(m, gemm_load_describe(g), precision));

        /* Size the batch from one product timed on the host's clock (after one untimed:
         * first-use costs): the batch bounds how long the worker is deaf to a stop request
         * and silent to the parent, which is wall time whatever the device's clock says. */
        if (gemm_load_enqueue(g, 1) < 0 || gemm_load_wait(g, NULL) < 0)
                give_up(w, "%s: %s", burn_mode_name(m), gemm_load_error(g));
        double t_one = monotonic_ms(), one_device_ms = 0;
        if (gemm_load_enqueue(g, 1) < 0 || gemm_load_wait(g, &one_device_ms) < 0)
                give_up(w, "%s: %s", burn_mode_name(m), gemm_load_error(g));
        double ms = monotonic_ms() - t_one;
        double target = BATCH_TARGET_MS;
        unsigned long long period = opt->pulse_period_ms ? opt->pulse_period_ms : BURN_DEFAULT_PULSE_MS;
        if (m == BURN_MODE_PULSE && target > period / 8.0)
                target = period / 8.0; /* the load half must start and end on time */
        unsigned batch = ms > 0 ? (unsigned)(target / ms) : 1;
        batch = batch < 1 ? 1 : batch > 100000 ? 100000 : batch;
        unsigned verify_every = opt->verify_every ? opt->verify_every : BURN_DEFAULT_VERIFY_EVERY;
        double flops = gemm_load_flops(g);

        unsigned long long since_verify = 2;
        double t_verify = monotonic_ms();
        verify_now(w, g, &since_verify); /* the first result: what every later one is compared with */
        t_verify = monotonic_ms() - t_verify;
        /* Unless asked for an interval: at least as many products between verifications
         * as keep them under VERIFY_SHARE of the time. On PoCL one costs ~7% of a product,
         * so the default 10 holds; on a GPU copying D back and comparing it can cost
         * several products (docs/burn.md). */
        if (!opt->verify_every && ms > 0) {
                double needed = t_verify / (VERIFY_SHARE * ms);
                if (needed > verify_every)
                        verify_every = needed > 1e6 ? 1000000u : (unsigned)needed + 1;
        }
        /* The timed product counts in the first tick: on a slow device (or a short mode)
         * it may be most of what the mode runs. */
        unsigned long long tick_start = (unsigned long long)t_one, tick_products = 1;
        double tick_device_ms = one_device_ms;
        while (!should_stop(end)) {
                unsigned long long now = deadline_now_ms();
                if (m == BURN_MODE_PULSE && (now - start) % period >= period / 2) {
                        unsigned long long idle_end = now + (period - (now - start) % period);
                        while (!should_stop(end) && deadline_now_ms() < idle_end) {
                                beat_if_quiet(w);
                                sleep_ms(idle_end - deadline_now_ms() < 50 ? (double)(idle_end - deadline_now_ms()) : 50);
                        }
                        continue;
                }
                double device_ms = 0;
                if (gemm_load_enqueue(g, batch) < 0 || gemm_load_wait(g, &device_ms) < 0)
                        give_up(w, "%s: %s", burn_mode_name(m), gemm_load_error(g));
                tick_device_ms += device_ms;
                since_verify += batch;
                tick_products += batch;
                if (since_verify >= verify_every)
                        verify_now(w, g, &since_verify);
                now = deadline_now_ms();
                if (now - tick_start >= BURN_TICK_MS) {
                        send_line(w, burn_wire_tick(m, tick_products, tick_products * flops, (now - tick_start) / 1e3,
                                                    tick_device_ms / 1e3));
                        tick_start = now;
                        tick_products = 0;
                        tick_device_ms = 0;
                }
        }
        if (since_verify)
                verify_now(w, g, &since_verify);
        unsigned long long now = deadline_now_ms();
        if (tick_products)
                send_line(w, burn_wire_tick(m, tick_products, tick_products * flops, (now - tick_start) / 1e3,
                                            tick_device_ms / 1e3));
        gemm_load_close(g);
}

struct memtest_watch {
        struct worker *w;
        unsigned long long end_ms;
};

static bool memtest_should_stop(void *ctx) {
        struct memtest_watch *mw = ctx;
        beat_if_quiet(mw->w);
        return should_stop(mw->end_ms);
}

/* memtest: whole passes over the region until the slice ends (at least one pass). */
static void run_memtest(struct worker *w, unsigned long long slice_ms) {
        unsigned long long start = deadline_now_ms();
        struct memtest_watch mw = {.w = w, .end_ms = start + slice_ms};
        struct memtest_options mo = {
                .bytes = w->spec->opt->memtest_bytes, .seed = w->spec->seed, .stop = memtest_should_stop,
                .stop_ctx = &mw,
        };
        char seed[24] = "";
        send_line(w, burn_wire_mode(BURN_MODE_MEMTEST, "memory patterns", ""));
        do {
                struct memtest_result res;
                int r = memtest_run(w->ops, w->backend, w->ctx, &w->info, &mo, &res);
                if (r < 0)
                        give_up(w, "memtest: %s", res.error);
                snprintf(seed, sizeof(seed), "%llu", (unsigned long long)res.seed);
                struct burn_fault faults[BURN_WIRE_FAULTS_PER_LINE];
                size_t n = 0;
                for (; n < res.n_faults && n < BURN_WIRE_FAULTS_PER_LINE; n++) {
                        const struct memtest_fault *x = &res.faults[n];
                        faults[n] = (struct burn_fault){.mode = BURN_MODE_MEMTEST, .where_a = x->offset,
                                                        .mem_expected = x->expected, .mem_got = x->actual};
                        snprintf(faults[n].what, sizeof(faults[n].what), "%s", memtest_pattern_name(x->pattern));
                }
                send_line(w, burn_wire_memtest(res.stopped ? 0 : 1, res.bytes_tested, res.words_checked, res.errors,
                                               res.seconds, seed, faults, n));
                if (res.stopped)
                        break;
        } while (!should_stop(mw.end_ms));
}

_Noreturn void burn_worker_main(const struct burn_worker_spec *spec, int fd) {
        struct worker w = {.fd = fd, .spec = spec, .last_line_ms = deadline_now_ms()};
        struct sigaction sa = {.sa_handler = on_stop_signal};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);

        w.ops = dev_ops_by_name(spec->backend);
        char err[512] = "";
        if (!w.ops)
                give_up(&w, "backend %s is not built into this gpuvet", spec->backend);
        if (w.ops->open(&w.backend, err, sizeof(err)) < 0)
                give_up(&w, "%s: %s", spec->backend, err);
        if (w.ops->info(w.backend, spec->index, &w.info) < 0)
                give_up(&w, "device %d: %s", spec->index, w.ops->last_error(w.backend));
        send_line(&w, burn_wire_device(w.info.name, w.info.pci_bus_id, w.info.is_cpu, w.ops->name));
        if (w.ops->ctx_open(w.backend, spec->index, &w.ctx) < 0)
                give_up(&w, "device %d: %s", spec->index, w.ops->last_error(w.backend));

        for (int m = 0; m < _BURN_MODE_COUNT && !stop_signalled; m++) {
                if (!spec->slices_ms[m])
                        continue;
                if (m == BURN_MODE_MEMTEST)
                        run_memtest(&w, spec->slices_ms[m]);
                else
                        run_gemm(&w, (enum burn_mode)m, spec->slices_ms[m]);
        }
        w.ops->ctx_close(w.ctx);
        w.ops->close(w.backend);
        send_line(&w, burn_wire_done(stop_signalled));
        _exit(0);
}

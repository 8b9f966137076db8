/* bench compute: peak FMA throughput in FP32, FP64 and FP16, and kernel launch latency.
 *
 * FMA: the fma_* kernels run 8 independent FMA chains per work item (kernels.def); the
 * iteration count is calibrated so that one launch takes about COMPUTE_TARGET_MS, and
 * FLOPs = work items x 8 chains x iterations x 2. Every work item's result is checked on
 * the host against the same chains computed here (bench_fma_reference_*), with a
 * tolerance for the order of the final sum.
 * Latency: the empty kernel, host-measured (launch + synchronize round trip, one launch
 * per sample) and device-measured (events around LAT_BATCH back-to-back launches, divided
 * by LAT_BATCH: the device's per-launch cost with the queue kept full). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench.h"
#include "bench/bench_devutil.h"
#include "core/array.h"
#include "core/clock.h"

#define COMPUTE_TARGET_MS 50.0
#define COMPUTE_LOCAL 256
#define CALIBRATE_ITERS 256u
#define MAX_ITERS (1u << 24)
#define FMA_SEED 0.5f
#define LAT_BATCH 64

/* The FMA chains of kernels.def's fma_* kernels, as the kernels compute them:
 * chain k = 0..7 starts at seed + 0.125 k, steps x = fma(x, A, B) iters times, and the
 * result is ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7)).
 * f32/f64: A = 0.999, B = 0.001. f16: A = 0.875, B = 0.125, every operation rounded to
 * half precision, the result widened to float. */
static float bench_fma_reference_f32(unsigned iters, float seed) {
        float x[8];
        for (int k = 0; k < 8; k++)
                x[k] = seed + 0.125f * (float)k;
        for (unsigned i = 0; i < iters; i++)
                for (int k = 0; k < 8; k++)
                        x[k] = fmaf(x[k], 0.999f, 0.001f);
        return ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]));
}

static double bench_fma_reference_f64(unsigned iters, double seed) {
        double x[8];
        for (int k = 0; k < 8; k++)
                x[k] = seed + 0.125 * k;
        for (unsigned i = 0; i < iters; i++)
                for (int k = 0; k < 8; k++)
                        x[k] = fma(x[k], 0.999, 0.001);
        return ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]));
}

/* Round to the nearest half-precision value (normal range only: the chains stay in
 * [0.125, 3]). */
static double to_half(double v) {
        if (v == 0)
                return 0;
        int e;
        double m = frexp(v, &e); /* v = m 2^e, 0.5 <= |m| < 1: 11 significant bits */
        return ldexp(nearbyint(ldexp(m, 11)), e - 11);
}

static float bench_fma_reference_f16(unsigned iters, float seed) {
        double x[8];
        for (int k = 0; k < 8; k++)
                x[k] = to_half((double)(seed + 0.125f * (float)k));
        for (unsigned i = 0; i < iters; i++)
                for (int k = 0; k < 8; k++)
                        x[k] = to_half(x[k] * 0.875 + 0.125); /* exact in double, one rounding: an FMA */
        double s01 = to_half(x[0] + x[1]), s23 = to_half(x[2] + x[3]), s45 = to_half(x[4] + x[5]),
               s67 = to_half(x[6] + x[7]);
        return (float)to_half(to_half(s01 + s23) + to_half(s45 + s67));
}

static const struct prec {
        const char *name, *kernel;
        size_t elem;
        double tolerance; /* relative */
} precs[] = {
        {"fp32_fma", "fma_f32", sizeof(float), 1e-5},
        {"fp64_fma", "fma_f64", sizeof(double), 1e-12},
        {"fp16_fma", "fma_f16", sizeof(float), 2e-2},
};

struct fma_run {
        const struct prec *p;
        struct dev_buf *out;
        size_t global;
        unsigned iters;
};

static int fma_enqueue(const struct bench_ctx *ctx, struct bench_dev *d, void *arg) {
        struct fma_run *r = arg;
        struct dev_arg args[3] = {{.kind = DEV_ARG_BUF, .v.buf = r->out}, {.kind = DEV_ARG_U32, .v.u32 = r->iters}};
        if (!strcmp(r->p->kernel, "fma_f64"))
                args[2] = (struct dev_arg){.kind = DEV_ARG_F64, .v.f64 = FMA_SEED};
        else
                args[2] = (struct dev_arg){.kind = DEV_ARG_F32, .v.f32 = FMA_SEED};
        return ctx->ops->launch(d->ctx, r->p->kernel, r->global, COMPUTE_LOCAL, args, 3);
}

static bool precision_wanted(const struct bench_ctx *ctx, const char *name) {
        const char *want = ctx->opt ? ctx->opt->precision : NULL;
        return !want || !strncmp(want, name, strlen(want)); /* "fp32" selects "fp32_fma" */
}

static void verify_fma(const struct bench_ctx *ctx, struct bench_dev *d, struct fma_run *r, struct measurement *m) {
        void *host = malloc(r->global * r->p->elem);
        if (!host) {
                measurement_fail(m, STATUS_ERROR, "out of memory");
                return;
        }
        if (ctx->ops->copy_d2h(d->ctx, host, r->out, 0, r->global * r->p->elem) < 0 ||
            ctx->ops->synchronize(d->ctx) < 0) {
                measurement_fail(m, STATUS_ERROR, "reading the result back: %s", bench_dev_error(ctx));
                free(host);
                return;
        }
        double want = !strcmp(r->p->kernel, "fma_f64")   ? bench_fma_reference_f64(r->iters, FMA_SEED)
                      : !strcmp(r->p->kernel, "fma_f16") ? bench_fma_reference_f16(r->iters, FMA_SEED)
                                                         : bench_fma_reference_f32(r->iters, FMA_SEED);
        for (size_t i = 0; i < r->global; i++) {
                double got = r->p->elem == sizeof(double) ? ((double *)host)[i] : ((float *)host)[i];
                if (!(fabs(got - want) <= r->p->tolerance * fabs(want))) {
                        snprintf(m->verify_error, sizeof(m->verify_error),
                                 "work item %zu computed %.9g, expected %.9g (%u iterations)", i, got, want, r->iters);
                        free(host);
                        return;
                }
        }
        m->verified = true;
        free(host);
}

static void run_fma(const struct bench_ctx *ctx, struct bench_report *rep, struct bench_dev *d, const struct prec *p) {
        const struct dev_ops *ops = ctx->ops;
        struct measurement *m = bench_measurement_new(rep, "compute", p->name, d->subject, "GFLOPS", true);
        measurement_param(m, "device", "%s", d->info.name);
        if ((!strcmp(p->kernel, "fma_f64") && !d->info.fp64) || (!strcmp(p->kernel, "fma_f16") && !d->info.fp16)) {
                measurement_fail(m, STATUS_SKIP, "%s: the device does not support %s in kernels", d->info.name,
                                 strcmp(p->kernel, "fma_f64") ? "FP16" : "FP64");
                return;
        }
        if (d->model) {
                double tf = !strcmp(p->kernel, "fma_f32") ? d->model->tflops.fp32
                            : !strcmp(p->kernel, "fma_f64") ? d->model->tflops.fp64
                                                            : 0; /* gpus.json's fp16 is the tensor-core figure */
                if (tf > 0) {
                        m->peak = tf * 1000;
                        snprintf(m->peak_source, sizeof(m->peak_source), "%s spec sheet (data/gpus.json)",
                                 d->model->name);
                }
        }
        struct fma_run r = {.p = p};
        size_t cu = d->info.compute_units ? d->info.compute_units : 1;
        r.global = cu * 2048 * 4;
        int e = ops->alloc(d->ctx, r.global * p->elem, &r.out);
        if (e < 0) {
                measurement_fail(m, e == -ENOMEM ? STATUS_SKIP : STATUS_ERROR, "%s", bench_dev_error(ctx));
                return;
        }
        /* The kernel's shape on this device (OpenCL CPU devices: calibrated here, at the
         * first use, so not inside any timed launch). */
        char shape[256] = "";
        if (ops->kernel_shape && (e = ops->kernel_shape(d->ctx, p->kernel, shape, sizeof(shape))) == 0 && shape[0])
                measurement_param(m, "kernel_shape", "%s", shape);
        /* Calibrate: one launch (also builds and warms the kernel), one timed, then scale. */
        double one = 0;
        r.iters = CALIBRATE_ITERS;
        if (e == 0 && (e = ops->memset(d->ctx, r.out, 0xff, r.global * p->elem)) == 0 &&
            (e = bench_time_reps(ctx, d, m, 1, 1, fma_enqueue, &r, 1, &one)) == 0) {
                double ms = 1e3 / one; /* one = 1 / seconds */
                double scale = COMPUTE_TARGET_MS / ms;
                double iters = CALIBRATE_ITERS * (scale > 1 ? scale : 1);
                r.iters = iters > MAX_ITERS ? MAX_ITERS : (unsigned)iters;
        }
        if (e < 0) {
                if (e == -ENOTSUP)
                        measurement_fail(m, STATUS_SKIP, "%s", bench_dev_error(ctx));
                else if (!m->summary[0])
                        measurement_fail(m, STATUS_ERROR, "%s", bench_dev_error(ctx));
                ops->free(d->ctx, r.out);
                return;
        }
        measurement_param(m, "work_items", "%zu", r.global);
        measurement_param(m, "iterations", "%u", r.iters);
        measurement_param(m, "flops_per_item", "8 chains x %u x 2", r.iters);
        unsigned reps = bench_reps(ctx, 5), warmup = bench_warmup(ctx, 1);
        double *samples = calloc(reps, sizeof(double));
        double gflop = (double)r.global * 8 * r.iters * 2 / 1e9;
        if (!samples)
                measurement_fail(m, STATUS_ERROR, "out of memory");
        else if (ops->memset(d->ctx, r.out, 0xff, r.global * p->elem) < 0)
                measurement_fail(m, STATUS_ERROR, "%s", bench_dev_error(ctx));
        else if (bench_time_reps(ctx, d, m, warmup, reps, fma_enqueue, &r, gflop, samples) == 0)
                verify_fma(ctx, d, &r, m);
        free(samples);
        ops->free(d->ctx, r.out);
}

static int empty_batch(const struct bench_ctx *ctx, struct bench_dev *d, void *arg) {
        (void)arg;
        for (int i = 0; i < LAT_BATCH; i++) {
                int e = ctx->ops->launch(d->ctx, "empty", 1, 1, NULL, 0);
                if (e < 0)
                        return e;
        }
        return 0;
}

static void run_latency(const struct bench_ctx *ctx, struct bench_report *rep, struct bench_dev *d) {
        const struct dev_ops *ops = ctx->ops;
        unsigned reps = bench_reps(ctx, 100), warmup = bench_warmup(ctx, 5);
        double *samples = calloc(reps, sizeof(double));

        struct measurement *m = bench_measurement_new(rep, "compute", "launch_latency_host", d->subject, "us", false);
        measurement_param(m, "device", "%s", d->info.name);
        measurement_param(m, "method", "host clock around launch + synchronize, one empty kernel");
        size_t got = 0;
        int e = 0;
        for (unsigned i = 0; samples && i < warmup + reps; i++) {
                double t0 = monotonic_s();
                if ((e = ops->launch(d->ctx, "empty", 1, 1, NULL, 0)) < 0 || (e = ops->synchronize(d->ctx)) < 0)
                        break;
                double us = (monotonic_s() - t0) * 1e6;
                if (i >= warmup)
                        samples[got++] = us;
        }
        if (!samples)
                measurement_fail(m, STATUS_ERROR, "out of memory");
        else if (e < 0)
                measurement_fail(m, STATUS_ERROR, "%s", bench_dev_error(ctx));
        else if (measurement_set_samples(m, samples, got, warmup) < 0)
                measurement_fail(m, STATUS_ERROR, "out of memory");
        if (e < 0 || !samples) {
                free(samples);
                return; /* the device-side figure would fail the same way */
        }

        m = bench_measurement_new(rep, "compute", "launch_latency_device", d->subject, "us", false);
        measurement_param(m, "device", "%s", d->info.name);
        measurement_param(m, "method", "device events around %d back-to-back empty kernels, per launch", LAT_BATCH);
        unsigned dreps = reps > 20 ? 20 : reps;
        /* bench_time_reps gives work/second: work = LAT_BATCH x 1e-6 makes it launches per
         * microsecond; inverted below to microseconds per launch */
        if (bench_time_reps(ctx, d, m, warmup > 2 ? 2 : warmup, dreps, empty_batch, NULL, LAT_BATCH * 1e-6,
                            samples) == 0) {
                for (unsigned i = 0; i < dreps; i++)
                        samples[i] = 1 / samples[i];
                if (measurement_set_samples(m, samples, dreps, m->warmup) < 0)
                        measurement_fail(m, STATUS_ERROR, "out of memory");
        }
        free(samples);
}

static void compute_run(const struct bench_ctx *ctx, struct bench_report *rep) {
        size_t n;
        if (bench_dev_count(ctx, rep, "compute", &n) < 0)
                return;
        const char *want = ctx->opt ? ctx->opt->precision : NULL;
        if (want && strcmp(want, "fp32") && strcmp(want, "fp64") && strcmp(want, "fp16")) {
                struct measurement *m = bench_measurement_new(rep, "compute", "setup", "node", "GFLOPS", true);
                measurement_fail(m, STATUS_ERROR, "unknown precision '%s' for compute: fp32, fp64 or fp16", want);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                struct bench_dev d;
                if (bench_dev_open(ctx, rep, "compute", bench_dev_index(ctx, i), &d) == 0) {
                        for (size_t p = 0; p < ARRAY_COUNT(precs); p++)
                                if (precision_wanted(ctx, precs[p].name))
                                        run_fma(ctx, rep, &d, &precs[p]);
                        if (!want)
                                run_latency(ctx, rep, &d);
                }
                bench_dev_close(ctx, &d);
        }
}

const struct bench_info bench_compute = {
        .name = "compute",
        .title = "Peak FMA throughput (FP32, FP64, FP16) and kernel launch latency",
        .remedy = "FMA throughput below its reference: look at SM clocks and what limits them "
                  "(gpu.clock_events: power, thermal; gpu.power_limit, gpu.app_clocks), the temperature "
                  "(gpu.temperature) and other processes on the GPU (`nvidia-smi`). FP64 far below FP32 on a "
                  "part built for FP32 is its design: compare with the model's peak.",
        .needs_device = true,
        .run = compute_run,
};

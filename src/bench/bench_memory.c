/* bench memory: device memory bandwidth with STREAM's kernels (copy, scale, add, triad),
 * read-only and write-only kernels, and a device-local copy through the backend's copy
 * engine (dev_ops.copy_d2d).
 *
 * Byte counting (docs/bench.md): STREAM's for the kernels — copy and scale move 2 arrays,
 * add and triad 3, read-only and write-only 1 — so figures compare with STREAM and
 * BabelStream. The device-local copy counts the copied bytes once, like nvbandwidth and
 * bandwidthTest's device-to-device figure (half what STREAM counting would say).
 * GB/s are 10^9 bytes per second, timed on the device with events around each repetition.
 *
 * Every result is verified on the host: the input arrays hold small integers, so every
 * kernel's output is exact and compared bit for bit (the read-only kernel's partial sums
 * are added up and compared with the exact sum). Outputs are set to 0xff bytes (NaN)
 * before each measurement, so a kernel that writes nothing fails. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/bench_devutil.h"
#include "core/array.h"

/* Per array, on a discrete GPU. 256 MiB (well past any L2, B200: 126 MB) lasts ~0.3 ms per
 * triad on an H100, short enough that launch and ramp cost 3-6%: an H100's triad read 84% of
 * the spec there and 86% at 4 GiB, read 85% and 91% (docs/perf.md). 1 GiB sits within 1% of
 * the 4 GiB figures. A device sharing host memory (PoCL) keeps 256 MiB: its bandwidth is
 * the host's, reached at that size, and three 1 GiB arrays would crowd a small host. */
#define MEM_DEFAULT_BYTES (1ull << 30)
#define MEM_DEFAULT_UNIFIED_BYTES (256ull << 20)
/* A repetition that moves its bytes in less than this at the peak rate measures launch
 * latency, not memory (a 1 MB run on an H100 read 4-13% of peak): such a run has no peak. */
#define MEM_MIN_JUDGED_US 50.0
#define MEM_MIN_BYTES 4096ull
#define MEM_RETRY_MIN_BYTES (1ull << 20)
#define MIB (1ull << 20)
#define MEM_LOCAL 256
#define SCALAR 3.0f
#define WRITE_VALUE 1.5f

struct mem_run {
        struct dev_buf *a, *b, *out, *partial;
        uint64_t n;           /* floats per array */
        size_t global;        /* work items per launch (a multiple of MEM_LOCAL) */
        const char *kernel;   /* NULL: device-local copy */
        float *ha, *hb, *hcheck; /* the run's host arrays (struct mem_host), not owned */
};

/* Host arrays shared by every device of a run: filled once, at the largest size asked (a
 * fill per GPU faulted in and wrote 2 x size again for each). */
struct mem_host {
        float *a, *b, *check;
        uint64_t n, n_check; /* floats filled in a and b; floats in check */
};

static void mem_host_free(struct mem_host *h) {
        free(h->a);
        free(h->b);
        free(h->check);
        memset(h, 0, sizeof(*h));
}

static void free_bufs(const struct bench_ctx *ctx, struct bench_dev *d, struct mem_run *r) {
        struct dev_buf **bufs[] = {&r->a, &r->b, &r->out, &r->partial};
        for (size_t i = 0; i < 4; i++)
                if (*bufs[i]) {
                        ctx->ops->free(d->ctx, *bufs[i]);
                        *bufs[i] = NULL;
                }
        r->ha = r->hb = r->hcheck = NULL;
}

static float pat_a(uint64_t i) { return (float)((i * 7) & 15); }
static float pat_b(uint64_t i) { return (float)((i * 3 + 1) & 7); }

/* Make h hold n floats of the patterns and a check array of n_check floats. */
static int mem_host_fit(struct mem_host *h, uint64_t n, uint64_t n_check) {
        if (n > h->n) {
                float *a = realloc(h->a, n * sizeof(float)), *b = a ? realloc(h->b, n * sizeof(float)) : NULL;
                if (a)
                        h->a = a;
                if (b)
                        h->b = b;
                if (!a || !b)
                        return -ENOMEM;
                for (uint64_t i = h->n; i < n; i++) {
                        h->a[i] = pat_a(i);
                        h->b[i] = pat_b(i);
                }
                h->n = n;
        }
        if (n_check > h->n_check) {
                float *c = realloc(h->check, n_check * sizeof(float));
                if (!c)
                        return -ENOMEM;
                h->check = c;
                h->n_check = n_check;
        }
        return 0;
}

/* Allocate and fill the arrays of bytes each; -ENOMEM to let the caller retry smaller. */
static int setup(const struct bench_ctx *ctx, struct bench_dev *d, struct mem_run *r, struct mem_host *h,
                 uint64_t bytes) {
        const struct dev_ops *ops = ctx->ops;
        r->n = bytes / sizeof(float);
        size_t cu = d->info.compute_units ? d->info.compute_units : 1;
        size_t want = cu * 2048, max = (size_t)((r->n + MEM_LOCAL - 1) / MEM_LOCAL) * MEM_LOCAL;
        r->global = want < max ? want : max;
        r->global = (r->global + MEM_LOCAL - 1) / MEM_LOCAL * MEM_LOCAL;
        if (mem_host_fit(h, r->n, r->n > r->global ? r->n : r->global) < 0)
                return -ENOMEM;
        r->ha = h->a;
        r->hb = h->b;
        r->hcheck = h->check;
        int e;
        if ((e = ops->alloc(d->ctx, bytes, &r->a)) < 0 || (e = ops->alloc(d->ctx, bytes, &r->b)) < 0 ||
            (e = ops->alloc(d->ctx, bytes, &r->out)) < 0 ||
            (e = ops->alloc(d->ctx, r->global * sizeof(float), &r->partial)) < 0)
                return e;
        /* OpenCL allocates lazily: running out of memory may only show here */
        if ((e = ops->copy_h2d(d->ctx, r->a, 0, r->ha, bytes)) < 0 ||
            (e = ops->copy_h2d(d->ctx, r->b, 0, r->hb, bytes)) < 0 ||
            (e = ops->memset(d->ctx, r->out, 0xff, bytes)) < 0 || (e = ops->synchronize(d->ctx)) < 0)
                return e;
        return 0;
}

static int enqueue(const struct bench_ctx *ctx, struct bench_dev *d, void *arg) {
        struct mem_run *r = arg;
        const struct dev_ops *ops = ctx->ops;
        const char *k = r->kernel;
        if (!k)
                return ops->copy_d2d(d->ctx, r->out, 0, r->a, 0, r->n * sizeof(float));
        struct dev_arg out = {.kind = DEV_ARG_BUF, .v.buf = r->out}, a = {.kind = DEV_ARG_BUF, .v.buf = r->a},
                       b = {.kind = DEV_ARG_BUF, .v.buf = r->b}, n = {.kind = DEV_ARG_U64, .v.u64 = r->n},
                       s = {.kind = DEV_ARG_F32, .v.f32 = SCALAR};
        if (!strcmp(k, "copy_f32"))
                return ops->launch(d->ctx, k, r->global, MEM_LOCAL, (struct dev_arg[]){out, a, n}, 3);
        if (!strcmp(k, "scale_f32"))
                return ops->launch(d->ctx, k, r->global, MEM_LOCAL, (struct dev_arg[]){out, a, s, n}, 4);
        if (!strcmp(k, "add_f32"))
                return ops->launch(d->ctx, k, r->global, MEM_LOCAL, (struct dev_arg[]){out, a, b, n}, 4);
        if (!strcmp(k, "triad_f32"))
                return ops->launch(d->ctx, k, r->global, MEM_LOCAL, (struct dev_arg[]){out, a, b, s, n}, 5);
        if (!strcmp(k, "read_f32")) {
                struct dev_arg p = {.kind = DEV_ARG_BUF, .v.buf = r->partial};
                return ops->launch(d->ctx, k, r->global, MEM_LOCAL, (struct dev_arg[]){p, a, n}, 3);
        }
        struct dev_arg v = {.kind = DEV_ARG_F32, .v.f32 = WRITE_VALUE};
        return ops->launch(d->ctx, k, r->global, MEM_LOCAL, (struct dev_arg[]){out, v, n}, 3);
}

static float want_copy(uint64_t i) { return pat_a(i); } /* copy, device_copy */
static float want_scale(uint64_t i) { return SCALAR * pat_a(i); }
static float want_add(uint64_t i) { return pat_a(i) + pat_b(i); }
static float want_triad(uint64_t i) { return pat_a(i) + SCALAR * pat_b(i); }
static float want_write(uint64_t i) {
        (void)i;
        return WRITE_VALUE;
}

/* What element i of the output holds after the test of this name: chosen once per
 * verification, not per element (a name compare per element cost more than the check). */
static float (*expected(const char *name))(uint64_t) {
        if (!strcmp(name, "scale"))
                return want_scale;
        if (!strcmp(name, "add"))
                return want_add;
        if (!strcmp(name, "triad"))
                return want_triad;
        if (!strcmp(name, "write"))
                return want_write;
        return want_copy;
}

/* Read the result back and compare; fills m->verify_error on a mismatch. */
static int verify(const struct bench_ctx *ctx, struct bench_dev *d, struct mem_run *r, const char *name,
                  struct measurement *m) {
        const struct dev_ops *ops = ctx->ops;
        int e;
        if (!strcmp(name, "read")) {
                if ((e = ops->copy_d2h(d->ctx, r->hcheck, r->partial, 0, r->global * sizeof(float))) < 0 ||
                    (e = ops->synchronize(d->ctx)) < 0)
                        return e;
                double got = 0;
                uint64_t want = 0;
                for (size_t i = 0; i < r->global; i++)
                        got += r->hcheck[i];
                for (uint64_t i = 0; i < r->n; i++)
                        want += (uint64_t)pat_a(i);
                if (!(fabs(got - (double)want) <= 1e-6 * (double)want))
                        snprintf(m->verify_error, sizeof(m->verify_error),
                                 "sum of the partial sums is %.17g, expected %" PRIu64, got, want);
                else
                        m->verified = true;
                return 0;
        }
        if ((e = ops->copy_d2h(d->ctx, r->hcheck, r->out, 0, r->n * sizeof(float))) < 0 ||
            (e = ops->synchronize(d->ctx)) < 0)
                return e;
        float (*want_at)(uint64_t) = expected(name);
        for (uint64_t i = 0; i < r->n; i++) {
                float want = want_at(i);
                if (r->hcheck[i] != want) {
                        snprintf(m->verify_error, sizeof(m->verify_error), "element %" PRIu64 " is %g, expected %g",
                                 i, (double)r->hcheck[i], (double)want);
                        return 0;
                }
        }
        m->verified = true;
        return 0;
}

static const struct {
        const char *name, *kernel;
        unsigned arrays; /* bytes counted per element: arrays x 4 */
} tests[] = {
        {"copy", "copy_f32", 2}, {"scale", "scale_f32", 2}, {"add", "add_f32", 3}, {"triad", "triad_f32", 3},
        {"read", "read_f32", 1}, {"write", "write_f32", 1}, {"device_copy", NULL, 1},
};

static void run_device(const struct bench_ctx *ctx, struct bench_report *rep, struct bench_dev *d, struct mem_host *h) {
        const struct dev_ops *ops = ctx->ops;
        uint64_t asked = ctx->opt ? ctx->opt->size_bytes : 0;
        unsigned share = ctx->opt ? ctx->opt->size_share : 0;
        if (asked && share && d->info.global_mem_bytes && asked > d->info.global_mem_bytes / share) {
                asked = d->info.global_mem_bytes / share / MIB * MIB;
                if (asked < MEM_RETRY_MIN_BYTES)
                        asked = MEM_RETRY_MIN_BYTES;
        }
        uint64_t bytes = asked ? asked : d->info.unified_memory ? MEM_DEFAULT_UNIFIED_BYTES : MEM_DEFAULT_BYTES;
        char reduced[96] = "";
        if (asked && (asked < MEM_MIN_BYTES || asked % sizeof(float))) {
                struct measurement *m = bench_measurement_new(rep, "memory", "setup", d->subject, "GB/s", true);
                measurement_fail(m, STATUS_ERROR, "invalid size %" PRIu64 " bytes: at least %llu and a multiple of 4",
                                 asked, MEM_MIN_BYTES);
                return;
        }
        if (asked && d->info.max_alloc_bytes && asked > d->info.max_alloc_bytes) {
                struct measurement *m = bench_measurement_new(rep, "memory", "setup", d->subject, "GB/s", true);
                measurement_fail(m, STATUS_ERROR, "size %" PRIu64 " bytes exceeds the device's largest allocation (%" PRIu64 " bytes)",
                                 asked, d->info.max_alloc_bytes);
                return;
        }
        if (!asked) { /* the default fits the device: 3 arrays in a quarter of its memory */
                if (d->info.max_alloc_bytes && bytes > d->info.max_alloc_bytes)
                        bytes = d->info.max_alloc_bytes;
                if (d->info.global_mem_bytes && bytes > d->info.global_mem_bytes / 12)
                        bytes = d->info.global_mem_bytes / 12;
                bytes = bytes / 4096 * 4096;
        }
        struct mem_run r = {0};
        int e;
        /* Out of memory: retry with half the size, down to 1 MiB, and say so. */
        while ((e = setup(ctx, d, &r, h, bytes)) == -ENOMEM && bytes / 2 >= MEM_RETRY_MIN_BYTES) {
                free_bufs(ctx, d, &r);
                (void)ops->synchronize(d->ctx); /* a failed queue may hold errors, ignoring */
                snprintf(reduced, sizeof(reduced), "%s", bench_dev_error(ctx));
                bytes = bytes / 2 / 4096 * 4096;
        }
        if (e < 0) {
                struct measurement *m = bench_measurement_new(rep, "memory", "setup", d->subject, "GB/s", true);
                if (e == -ENOMEM)
                        measurement_fail(m, STATUS_SKIP, "out of memory even at %" PRIu64 " bytes per array: %s", bytes,
                                         bench_dev_error(ctx));
                else
                        measurement_fail(m, STATUS_ERROR, "%s", bench_dev_error(ctx));
                free_bufs(ctx, d, &r);
                return;
        }
        unsigned reps = bench_reps(ctx, 10), warmup = bench_warmup(ctx, 2);
        double *samples = calloc(reps, sizeof(double));
        const char *only = ctx->opt ? ctx->opt->only : NULL;
        for (size_t t = 0; t < ARRAY_COUNT(tests); t++) {
                if (only && strcmp(only, tests[t].name) != 0)
                        continue;
                struct measurement *m = bench_measurement_new(rep, "memory", tests[t].name, d->subject, "GB/s", true);
                measurement_param(m, "size_bytes", "%" PRIu64, bytes);
                measurement_param(m, "bytes_counted", "%u x size", tests[t].arrays);
                measurement_param(m, "device", "%s", d->info.name);
                if (reduced[0])
                        measurement_param(m, "size_reduced", "out of memory at larger sizes");
                if (tests[t].kernel)
                        measurement_param(m, "work_items", "%zu", r.global);
                /* bytes through memory per repetition: device_copy reads and writes its one */
                unsigned traffic = tests[t].kernel ? tests[t].arrays : 2;
                double floor_us = d->model && d->model->mem_bw_gbps > 0
                                          ? (double)traffic * (double)bytes / (d->model->mem_bw_gbps * 1e3)
                                          : 0;
                if (floor_us > 0 && floor_us < MEM_MIN_JUDGED_US) {
                        measurement_param(m, "peak", "none: %.1f us per repetition at the spec rate is launch "
                                                     "latency, not memory; use --size of at least %.0f MiB",
                                          floor_us, MEM_MIN_JUDGED_US * d->model->mem_bw_gbps * 1e3 / traffic /
                                                            (1 << 20));
                } else if (d->model && d->model->mem_bw_gbps > 0 && tests[t].kernel) {
                        m->peak = d->model->mem_bw_gbps;
                        snprintf(m->peak_source, sizeof(m->peak_source), "%s spec sheet (data/gpus.json)",
                                 d->model->name);
                } else if (d->model && d->model->mem_bw_gbps > 0) {
                        /* device_copy counts each byte once, as nvbandwidth does, but moves it
                         * twice through memory (a read and a write): its ceiling is half the
                         * memory bandwidth. Against the full figure a healthy H100 read 44%. */
                        m->peak = d->model->mem_bw_gbps / 2;
                        snprintf(m->peak_source, sizeof(m->peak_source), "half of %.40s's spec bandwidth: read + write",
                                 d->model->name);
                }
                if (!samples) {
                        measurement_fail(m, STATUS_ERROR, "out of memory");
                        continue;
                }
                r.kernel = tests[t].kernel;
                if ((e = ops->memset(d->ctx, r.out, 0xff, r.n * sizeof(float))) < 0) {
                        measurement_fail(m, STATUS_ERROR, "%s", bench_dev_error(ctx));
                        continue;
                }
                double work = (double)tests[t].arrays * (double)r.n * sizeof(float) / 1e9;
                if (bench_time_reps(ctx, d, m, warmup, reps, enqueue, &r, work, samples) < 0)
                        continue;
                /* The kernel's shape, asked after the launches: OpenCL CPU devices choose it at
                 * the kernel's first launch (a warm-up, or else outside the timed interval). */
                char shape[400] = "";
                if (tests[t].kernel && ops->kernel_shape &&
                    ops->kernel_shape(d->ctx, tests[t].kernel, shape, sizeof(shape)) == 0 && shape[0])
                        measurement_param(m, "kernel_shape", "%s", shape);
                if ((e = verify(ctx, d, &r, tests[t].name, m)) < 0)
                        measurement_fail(m, STATUS_ERROR, "reading the result back: %s", bench_dev_error(ctx));
        }
        free(samples);
        free_bufs(ctx, d, &r);
}

static void memory_run(const struct bench_ctx *ctx, struct bench_report *rep) {
        size_t n;
        if (bench_dev_count(ctx, rep, "memory", &n) < 0)
                return;
        struct mem_host h = {0};
        for (size_t i = 0; i < n; i++) {
                struct bench_dev d;
                if (bench_dev_open(ctx, rep, "memory", bench_dev_index(ctx, i), &d) == 0)
                        run_device(ctx, rep, &d, &h);
                bench_dev_close(ctx, &d);
        }
        mem_host_free(&h);
}

const struct bench_info bench_memory = {
        .name = "memory",
        .title = "Device memory bandwidth (STREAM copy/scale/add/triad, read, write, device copy)",
        .remedy = "Device memory bandwidth below the reference: look at memory clocks and throttling "
                  "(gpu.clock_events), memory errors and remapped rows (gpu.ecc_errors, gpu.row_remapper) and "
                  "other processes (`nvidia-smi`). A GPU well below its siblings with clean counters is a "
                  "hardware case for the vendor.",
        .needs_device = true,
        .run = memory_run,
};

/* bench transfer: host->device and device->host bandwidth, from pinned and from pageable
 * host memory, over a sweep of sizes (64 KiB x4 up to 256 MiB, or up to --size), per
 * device. Each copy is timed on the device with events; GB/s = bytes copied (once) / s,
 * as nvbandwidth and bandwidthTest count.
 *
 * Pinned memory is the backend's (cuMemHostAlloc; an OpenCL CL_MEM_ALLOC_HOST_PTR buffer
 * kept mapped), pageable is plain malloc'd memory. Verified: after the timed H2D copies the
 * device buffer is read back and compared with the source; for D2H the device buffer is
 * filled by the fill_u32 kernel and the host copy is checked against its formula.
 * Peak: PCIe generation x width of the device's link at its best (facts.pci: max_link_*,
 * capped by the port above), else the model's (data/gpus.json), per direction after line
 * encoding; not the current link, which an idle GPU drops to Gen1. On a device that shares
 * memory with the host (PoCL, integrated GPUs) a "transfer" is a memcpy: no PCIe peak.
 *
 * Bidirectional (bidir_pinned, bidir_pageable): at every size, an H2D copy on the context's
 * first queue and a D2H copy of the same size (other buffers) on its second queue, enqueued
 * together; a repetition is timed on the device from the first start to the last end
 * (dev_ops.event_span_ms) and counts the bytes of both directions: GB/s = 2 x size / span,
 * the total the link carried (nvbandwidth's "total" convention; its
 * host_to_device_bidirectional_memcpy_ce prints one direction's rate instead, which we give
 * as the parameters h2d_gbps and d2h_gbps: docs/bench.md). Peak, pinned only: 2 x the
 * per-direction PCIe figure (PCIe is full duplex). Pageable copies are staged by the driver
 * through its own pinned buffers, so whether they overlap at all is the driver's business:
 * no peak. Both directions' data are verified as the unidirectional copies'.
 *
 * The standard level's transfer probe runs this benchmark with only = "pinned" (pinned H2D
 * and D2H at one size) and link_under_load: then, per GPU, back-to-back pinned H2D copies
 * run for 200 ms while the link's current speed and width are read through ctx->fs after
 * each copy is enqueued (measurement pcie/link_under_load, judged by the check of that
 * name): GPUs leave their idle link speed within a few ms of traffic. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench.h"
#include "bench/bench_devutil.h"
#include "core/deadline.h"
#include "core/fsroot.h"
#include "sys/facts.h"

#define XFER_MIN_BYTES (64ull << 10)
#define XFER_DEFAULT_MAX (256ull << 20)
/* The link under load: copies for this long, and at least this many link reads. */
#define LOAD_MS 200.0
#define LOAD_MIN_READS 4
#define LOAD_MAX_COPIES 4000

static void set_peak(const struct bench_ctx *ctx, const struct bench_dev *d, struct measurement *m) {
        if (d->info.unified_memory)
                measurement_param(m, "unified_memory", "yes: host and device share memory, a copy is a memcpy");
        else
                bench_set_pcie_peak(ctx, d, m);
}

/* H2D: read the device buffer back into check; D2H: the host buffer holds the result. */
static void verify(const struct bench_ctx *ctx, struct bench_dev *d, struct copy_run *r, uint32_t seed,
                   uint32_t *check, struct measurement *m) {
        if (r->h2d)
                (void)bench_read_verify(ctx, d, r->dev, r->bytes, seed, check, "", m);
        else
                bench_verify_words(r->host, r->bytes, seed, "", m);
}

static int fill_device(const struct bench_ctx *ctx, struct bench_dev *d, struct dev_buf *buf, uint32_t seed,
                       uint64_t bytes) {
        struct bench_fill f = {.buf = buf, .seed = seed, .bytes = bytes};
        int e = bench_fill_enqueue(ctx, d, &f);
        return e < 0 ? e : ctx->ops->synchronize(d->ctx);
}

/* The measurement's name: "h2d_pinned" for the largest size of the sweep, the one judged;
 * "h2d_pinned_64K" for the smaller ones, which show how the rate ramps up. Small copies are
 * bound by per-copy latency (a 64 KiB copy at 55 GB/s lasts 1.2 us), so holding them to the
 * link's peak failed a healthy H100 (docs/perf.md, 2026-11-23): they carry no peak. */
static void sized_name(char *buf, size_t size, const char *base, uint64_t bytes, bool headline) {
        if (headline)
                snprintf(buf, size, "%s", base);
        else if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0)
                snprintf(buf, size, "%s_%" PRIu64 "M", base, bytes >> 20);
        else
                snprintf(buf, size, "%s_%" PRIu64 "K", base, bytes >> 10);
}

static void run_one(const struct bench_ctx *ctx, struct bench_report *rep, struct bench_dev *d, struct copy_run *r,
                    bool headline, uint32_t *check, double *samples, unsigned warmup, unsigned reps) {
        const struct dev_ops *ops = ctx->ops;
        char base[32], name[64]; /* base, "_", up to 17 digits, unit */
        snprintf(base, sizeof(base), "%s_%s", r->h2d ? "h2d" : "d2h", r->pinned ? "pinned" : "pageable");
        sized_name(name, sizeof(name), base, r->bytes, headline);
        struct measurement *m = bench_measurement_new(rep, "transfer", name, d->subject, "GB/s", true);
        measurement_param(m, "size_bytes", "%" PRIu64, r->bytes);
        measurement_param(m, "device", "%s", d->info.name);
        /* Pageable copies are staged by the driver through its own pinned buffers, so the
         * host's memcpy bounds them (14-15 GB/s on an H100 whose pinned copies reach 55):
         * the link's peak says nothing of them. */
        if (!r->pinned)
                measurement_param(m, "peak", "none: pageable copies are staged through the driver's pinned buffers");
        else if (headline)
                set_peak(ctx, d, m);
        uint32_t seed = (uint32_t)(r->bytes >> 10) * 7919u + (r->pinned ? 1 : 0) + (r->h2d ? 2 : 0);
        int e;
        if (r->h2d) {
                bench_pattern_fill(r->host, r->bytes, seed);
                e = ops->memset(d->ctx, r->dev, 0, r->bytes);
        } else {
                memset(r->host, 0, r->bytes);
                e = fill_device(ctx, d, r->dev, seed, r->bytes);
        }
        if (e < 0) {
                measurement_fail(m, STATUS_ERROR, "%s", bench_dev_error(ctx));
                return;
        }
        if (bench_time_reps(ctx, d, m, warmup, reps, copy_enqueue, r, (double)r->bytes / 1e9, samples) == 0)
                verify(ctx, d, r, seed, check, m);
}

/* One bidirectional run: host -> dev on queue 0 while dev2 -> host2 on queue 1. */
struct bidir_run {
        bool pinned;
        void *host, *host2;
        struct dev_buf *dev, *dev2;
        uint64_t bytes;
};

static int bidir_rep(const struct dev_ops *ops, struct bench_dev *d, struct bidir_run *b, struct dev_event **s,
                     struct dev_event **e, double ms[3]) {
        int r;
        if ((r = ops->event_record_on(d->ctx, 0, s[0])) < 0 || (r = ops->event_record_on(d->ctx, 1, s[1])) < 0 ||
            (r = ops->copy_h2d_on(d->ctx, 0, b->dev, 0, b->host, b->bytes)) < 0 ||
            (r = ops->copy_d2h_on(d->ctx, 1, b->host2, b->dev2, 0, b->bytes)) < 0 ||
            (r = ops->event_record_on(d->ctx, 0, e[0])) < 0 || (r = ops->event_record_on(d->ctx, 1, e[1])) < 0 ||
            (r = ops->synchronize(d->ctx)) < 0 || (r = ops->event_span_ms(d->ctx, s, e, 2, &ms[0])) < 0 ||
            (r = ops->event_elapsed_ms(d->ctx, s[0], e[0], &ms[1])) < 0 ||
            (r = ops->event_elapsed_ms(d->ctx, s[1], e[1], &ms[2])) < 0)
                return r;
        return 0;
}

/* The median of n rates as a parameter ("" when a direction was too short to time). */
static void rate_param(struct measurement *m, const char *key, const double *v, size_t n) {
        struct bench_stats st;
        if (bench_stats_compute(v, n, &st) == 0)
                measurement_param(m, key, "%.3f", st.median);
}

static void run_bidir(const struct bench_ctx *ctx, struct bench_report *rep, struct bench_dev *d, struct bidir_run *b,
                      bool headline, uint32_t *check, double *samples, unsigned warmup, unsigned reps) {
        const struct dev_ops *ops = ctx->ops;
        char name[64];
        sized_name(name, sizeof(name), b->pinned ? "bidir_pinned" : "bidir_pageable", b->bytes, headline);
        struct measurement *m = bench_measurement_new(rep, "transfer", name, d->subject, "GB/s", true);
        measurement_param(m, "size_bytes", "%" PRIu64, b->bytes);
        measurement_param(m, "device", "%s", d->info.name);
        measurement_param(m, "bytes_counted", "2 x size: both directions");
        if (b->pinned && headline) {
                set_peak(ctx, d, m);
                if (m->peak > 0) {
                        char src[sizeof(m->peak_source)];
                        snprintf(src, sizeof(src), "%s", m->peak_source);
                        m->peak *= 2;
                        snprintf(m->peak_source, sizeof(m->peak_source), "2 directions x %.80s", src);
                }
        } else if (!b->pinned) {
                measurement_param(m, "peak", "none: pageable copies may not overlap");
        }
        uint32_t seed = (uint32_t)(b->bytes >> 10) * 7919u + (b->pinned ? 1 : 0);
        struct copy_run up = {.h2d = true, .pinned = b->pinned, .host = b->host, .dev = b->dev, .bytes = b->bytes};
        struct copy_run down = {.h2d = false, .pinned = b->pinned, .host = b->host2, .dev = b->dev2, .bytes = b->bytes};
        bench_pattern_fill(b->host, b->bytes, seed + 4);
        memset(b->host2, 0, b->bytes);
        int r = ops->memset(d->ctx, b->dev, 0, b->bytes);
        if (r == 0)
                r = fill_device(ctx, d, b->dev2, seed + 8, b->bytes);
        struct dev_event *s[2] = {NULL, NULL}, *e[2] = {NULL, NULL};
        for (int i = 0; i < 2 && r == 0; i++)
                if ((r = ops->event_create(d->ctx, &s[i])) == 0)
                        r = ops->event_create(d->ctx, &e[i]);
        double *dir = calloc(2 * (size_t)reps, sizeof(double)); /* per-direction rates */
        if (r == 0 && !dir)
                r = -ENOMEM;
        size_t got = 0, got_h2d = 0, got_d2h = 0;
        double gb = (double)b->bytes / 1e9;
        for (unsigned i = 0; r == 0 && i < warmup + reps; i++) {
                double ms[3] = {0, 0, 0};
                if ((r = bidir_rep(ops, d, b, s, e, ms)) < 0)
                        break;
                if (ms[0] <= 0) {
                        r = -ERANGE;
                        measurement_fail(m, STATUS_ERROR, "device timer gave %.3g ms for one repetition: too small to time, use a larger size",
                                         ms[0]);
                        break;
                }
                if (i < warmup)
                        continue;
                samples[got++] = 2 * gb / (ms[0] * 1e-3);
                if (ms[1] > 0)
                        dir[got_h2d++] = gb / (ms[1] * 1e-3);
                if (ms[2] > 0)
                        dir[reps + got_d2h++] = gb / (ms[2] * 1e-3);
        }
        if (r < 0 && !m->summary[0])
                measurement_fail(m, STATUS_ERROR, "%s", r == -ENOMEM && !dir ? "out of memory" : bench_dev_error(ctx));
        for (int i = 0; i < 2; i++) {
                if (s[i])
                        ops->event_destroy(d->ctx, s[i]);
                if (e[i])
                        ops->event_destroy(d->ctx, e[i]);
        }
        if (r == 0 && (r = measurement_set_samples(m, samples, got, warmup)) < 0)
                measurement_fail(m, STATUS_ERROR, "out of memory");
        if (r == 0) {
                /* each direction's own rate while the other ran: nvbandwidth's bidirectional figure */
                rate_param(m, "h2d_gbps", dir, got_h2d);
                rate_param(m, "d2h_gbps", dir + reps, got_d2h);
                verify(ctx, d, &up, seed + 4, check, m);
                const char *which = "h2d";
                if (m->verified) {
                        m->verified = false;
                        verify(ctx, d, &down, seed + 8, check, m);
                        which = "d2h";
                }
                if (m->verify_error[0]) {
                        char msg[sizeof(m->verify_error)];
                        snprintf(msg, sizeof(msg), "%s", m->verify_error);
                        snprintf(m->verify_error, sizeof(m->verify_error), "%s: %.150s", which, msg);
                }
        }
        free(dir);
}

/* The link under load: back-to-back H2D copies of the pinned buffer, the link read after
 * each is enqueued (while it is in flight), for LOAD_MS and at least LOAD_MIN_READS reads.
 * Without a buffer (why: the allocation's error), an error measurement says so. */
static void link_under_load(const struct bench_ctx *ctx, struct bench_report *rep, struct bench_dev *d,
                            const struct copy_run *r, const char *why) {
        struct measurement *m = bench_measurement_new(rep, "pcie", "link_under_load", d->subject, "GT/s", true);
        if (why) {
                measurement_fail(m, STATUS_ERROR, "no load to read the link under: %s", why);
                return;
        }
        if (!d->pci || !d->pci->have_link || !ctx->fs) {
                measurement_fail(m, STATUS_SKIP, "sysfs shows no PCIe link attributes for %s",
                                 d->pci ? d->pci->addr : d->subject);
                return;
        }
        double *speeds = calloc(LOAD_MAX_COPIES, sizeof(double));
        if (!speeds) {
                measurement_fail(m, STATUS_ERROR, "out of memory");
                return;
        }
        size_t reads = 0, copies = 0;
        unsigned min_width = UINT_MAX;
        double start = monotonic_ms(), elapsed = 0;
        int e = 0, read_err = 0;
        while (copies < LOAD_MAX_COPIES) {
                if ((e = ctx->ops->copy_h2d(d->ctx, r->dev, 0, r->host, r->bytes)) < 0)
                        break;
                copies++;
                unsigned mts = 0, width = 0;
                if ((read_err = pci_read_link_now(ctx->fs, d->pci, &mts, &width)) < 0) {
                        (void)ctx->ops->synchronize(d->ctx); /* the failure is the read's, ignoring */
                        break;
                }
                speeds[reads++] = mts / 1000.0;
                if (width < min_width)
                        min_width = width;
                if ((e = ctx->ops->synchronize(d->ctx)) < 0)
                        break;
                elapsed = monotonic_ms() - start;
                if (elapsed >= LOAD_MS && reads >= LOAD_MIN_READS)
                        break;
        }
        if (e < 0)
                measurement_fail(m, STATUS_ERROR, "H2D copy under load: %s", bench_dev_error(ctx));
        else if (read_err < 0)
                measurement_fail(m, STATUS_ERROR, "reading /sys/bus/pci/devices/%s/current_link_speed under load: %s",
                                 d->pci->addr,
                                 read_err == -ENODATA ? "\"Unknown\": the link is down"
                                 : read_err == -EINVAL ? "not a link speed/width value"
                                                       : strerror(-read_err));
        else {
                measurement_param(m, "load", "%zu H2D copies of %" PRIu64 " bytes in %.0f ms", copies, r->bytes, elapsed);
                measurement_param(m, "min_width_under_load", "%u", min_width);
                if (measurement_set_samples(m, speeds, reads, 0) < 0)
                        measurement_fail(m, STATUS_ERROR, "out of memory");
                m->verified = true; /* a reading, nothing computed */
        }
        free(speeds);
}

/* The host buffer device data is read back into for verification, shared by the run's
 * devices: allocated (and its pages faulted in) once, not once per GPU. */
struct read_back {
        uint32_t *buf;
        uint64_t size;
};

static bool read_back_fit(struct read_back *rb, uint64_t bytes) {
        if (rb->size >= bytes)
                return true;
        free(rb->buf);
        rb->buf = malloc(bytes);
        rb->size = rb->buf ? bytes : 0;
        return rb->buf != NULL;
}

/* The largest size asked for (or the default) that the device can allocate: *ret_dev
 * cleared, rb at least as large. On failure an error or skip measurement says why (out of
 * memory halves the size down to the smallest of the sweep first). */
static int alloc_largest(const struct bench_ctx *ctx, struct bench_report *rep, struct bench_dev *d,
                         uint64_t *ret_max, struct dev_buf **ret_dev, struct read_back *rb, char *why, size_t why_size) {
        const struct dev_ops *ops = ctx->ops;
        uint64_t asked = ctx->opt ? ctx->opt->size_bytes : 0;
        uint64_t max = asked ? asked : XFER_DEFAULT_MAX;
        struct measurement *m = NULL;
        if (asked && (asked < XFER_MIN_BYTES || asked % 4)) {
                m = bench_measurement_new(rep, "transfer", "setup", d->subject, "GB/s", true);
                measurement_fail(m, STATUS_ERROR, "invalid size %" PRIu64 " bytes: at least %llu and a multiple of 4",
                                 asked, XFER_MIN_BYTES);
        } else if (d->info.max_alloc_bytes && max > d->info.max_alloc_bytes && asked && !bench_only(ctx, "pinned")) {
                /* --size the user gave is refused; the probe's fixed size is an upper bound */
                m = bench_measurement_new(rep, "transfer", "setup", d->subject, "GB/s", true);
                measurement_fail(m, STATUS_ERROR, "size %" PRIu64 " bytes exceeds the device's largest allocation (%" PRIu64 " bytes)",
                                 asked, d->info.max_alloc_bytes);
        }
        if (m) {
                snprintf(why, why_size, "%s", m->summary);
                return -EINVAL;
        }
        if (d->info.max_alloc_bytes && max > d->info.max_alloc_bytes)
                max = d->info.max_alloc_bytes;
        struct dev_buf *dev = NULL;
        int e = -ENOMEM;
        for (; max >= XFER_MIN_BYTES; max /= 2) {
                if (read_back_fit(rb, max) && (e = ops->alloc(d->ctx, max, &dev)) == 0 &&
                    (e = ops->memset(d->ctx, dev, 0, max)) == 0 && (e = ops->synchronize(d->ctx)) == 0)
                        break;
                if (dev)
                        ops->free(d->ctx, dev);
                dev = NULL;
                if (e != -ENOMEM)
                        break;
        }
        if (!dev) {
                m = bench_measurement_new(rep, "transfer", "setup", d->subject, "GB/s", true);
                measurement_fail(m, e == -ENOMEM ? STATUS_SKIP : STATUS_ERROR, "allocating %" PRIu64 " bytes: %s", max,
                                 bench_dev_error(ctx));
                snprintf(why, why_size, "%s", m->summary);
                return e;
        }
        *ret_max = max;
        *ret_dev = dev;
        return 0;
}

struct device_run {
        struct bench_dev *d;
        uint64_t max;
        struct dev_buf *dev, *dev2; /* dev2: the second buffer of bidirectional runs, NULL without */
        uint32_t *check;
        double *samples;
        unsigned warmup, reps;
        bool sweep;                 /* sizes from XFER_MIN_BYTES up, else max only */
};

/* Every size of one host memory kind: H2D, D2H and (with a second buffer) bidirectional;
 * then, pinned and asked for, the link under load. */
static void run_host_kind(const struct bench_ctx *ctx, struct bench_report *rep, struct device_run *x, bool pinned,
                          const char *bidir_why, enum status bidir_status) {
        const struct dev_ops *ops = ctx->ops;
        struct bench_dev *d = x->d;
        bool under_load = pinned && ctx->opt && ctx->opt->link_under_load;
        void *host = NULL, *host2 = NULL;
        int e;
        if ((e = ops->host_alloc(d->ctx, x->max, pinned, &host)) < 0) {
                struct measurement *m = bench_measurement_new(rep, "transfer", pinned ? "h2d_pinned" : "h2d_pageable",
                                                              d->subject, "GB/s", true);
                measurement_fail(m, e == -ENOMEM ? STATUS_SKIP : STATUS_ERROR, "host allocation of %" PRIu64 " bytes: %s",
                                 x->max, bench_dev_error(ctx));
                if (under_load)
                        link_under_load(ctx, rep, d, NULL, m->summary);
                return;
        }
        if (x->dev2 && (e = ops->host_alloc(d->ctx, x->max, pinned, &host2)) < 0) {
                struct measurement *m = bench_measurement_new(rep, "transfer", pinned ? "bidir_pinned" : "bidir_pageable",
                                                              d->subject, "GB/s", true);
                measurement_fail(m, e == -ENOMEM ? STATUS_SKIP : STATUS_ERROR, "second host buffer of %" PRIu64 " bytes: %s",
                                 x->max, bench_dev_error(ctx));
                host2 = NULL;
        } else if (!x->dev2 && bidir_why) {
                struct measurement *m = bench_measurement_new(rep, "transfer", pinned ? "bidir_pinned" : "bidir_pageable",
                                                              d->subject, "GB/s", true);
                measurement_fail(m, bidir_status, "%s", bidir_why);
        }
        uint64_t max = x->max;
        for (uint64_t bytes = x->sweep ? XFER_MIN_BYTES : max; bytes <= max;
             bytes = bytes * 4 > max && bytes < max ? max : bytes * 4) {
                for (int h2d = 1; h2d >= 0; h2d--) {
                        struct copy_run r = {.h2d = h2d, .pinned = pinned, .host = host, .dev = x->dev, .bytes = bytes};
                        run_one(ctx, rep, d, &r, bytes == max, x->check, x->samples, x->warmup, x->reps);
                }
                if (host2) {
                        struct bidir_run b = {.pinned = pinned, .host = host, .host2 = host2, .dev = x->dev,
                                              .dev2 = x->dev2, .bytes = bytes};
                        run_bidir(ctx, rep, d, &b, bytes == max, x->check, x->samples, x->warmup, x->reps);
                }
        }
        if (under_load) {
                struct copy_run r = {.h2d = true, .pinned = true, .host = host, .dev = x->dev, .bytes = max};
                link_under_load(ctx, rep, d, &r, NULL);
        }
        if (host2)
                ops->host_free(d->ctx, host2, pinned);
        ops->host_free(d->ctx, host, pinned);
}

static void run_device(const struct bench_ctx *ctx, struct bench_report *rep, struct bench_dev *d, struct read_back *rb) {
        const struct dev_ops *ops = ctx->ops;
        /* The probe's part: pinned copies at one size, nothing bidirectional. */
        bool pinned_only = bench_only(ctx, "pinned");
        struct device_run x = {.d = d, .reps = bench_reps(ctx, 10), .warmup = bench_warmup(ctx, 2), .sweep = !pinned_only};
        char why[256];
        if (!(x.samples = calloc(x.reps, sizeof(double)))) {
                struct measurement *m = bench_measurement_new(rep, "transfer", "setup", d->subject, "GB/s", true);
                measurement_fail(m, STATUS_ERROR, "out of memory");
                snprintf(why, sizeof(why), "%s", m->summary);
        } else if (alloc_largest(ctx, rep, d, &x.max, &x.dev, rb, why, sizeof(why)) == 0) {
                why[0] = '\0';
                x.check = rb->buf;
        }
        if (why[0]) {
                if (ctx->opt && ctx->opt->link_under_load)
                        link_under_load(ctx, rep, d, NULL, why);
                free(x.samples);
                return;
        }
        /* Bidirectional: a second device buffer, and per host memory kind a second host one. */
        const char *bidir_why = NULL;
        enum status bidir_status = STATUS_SKIP;
        int e;
        if (pinned_only) {
                /* not measured, not reported */
        } else if (!ops->copy_h2d_on || !ops->copy_d2h_on || !ops->event_record_on || !ops->event_span_ms) {
                snprintf(why, sizeof(why), "not measured: the %s backend has no second queue", ops->name);
                bidir_why = why;
        } else if ((e = ops->alloc(d->ctx, x.max, &x.dev2)) < 0) {
                x.dev2 = NULL;
                bidir_status = e == -ENOMEM ? STATUS_SKIP : STATUS_ERROR;
                snprintf(why, sizeof(why), "second device buffer of %" PRIu64 " bytes: %s", x.max, bench_dev_error(ctx));
                bidir_why = why;
        }
        run_host_kind(ctx, rep, &x, true, bidir_why, bidir_status);
        if (!pinned_only)
                run_host_kind(ctx, rep, &x, false, bidir_why, bidir_status);
        if (x.dev2)
                ops->free(d->ctx, x.dev2);
        ops->free(d->ctx, x.dev);
        free(x.samples);
}

static void transfer_run(const struct bench_ctx *ctx, struct bench_report *rep) {
        size_t n;
        if (bench_dev_count(ctx, rep, "transfer", &n) < 0)
                return;
        struct read_back rb = {NULL, 0};
        for (size_t i = 0; i < n; i++) {
                struct bench_dev d;
                if (bench_dev_open(ctx, rep, "transfer", bench_dev_index(ctx, i), &d) == 0)
                        run_device(ctx, rep, &d, &rb);
                bench_dev_close(ctx, &d);
        }
        free(rb.buf);
}

const struct bench_info bench_transfer = {
        .name = "transfer",
        .title = "Host<->device bandwidth, pinned and pageable, over a sweep of sizes",
        .remedy = "Host-device bandwidth below the reference: look at the GPU's PCIe link (pcie.link_speed, "
                  "pcie.link_width; `lspci -vv` LnkSta), at the CPU socket the copy ran from (numa.*: bind it "
                  "to the GPU's node with `numactl`), and for pageable copies at the host's memory bandwidth "
                  "(`gpuvet bench host-memory`).",
        .needs_device = true,
        .run = transfer_run,
};

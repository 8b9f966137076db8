/* bench transfer: host->device and device->host bandwidth, from pinned and from pageable
 * host memory, over a sweep of sizes (64 KiB x4 up to 256 MiB, or up to --size), per
 * device. Each copy is timed on the device with events; GB/s = bytes copied (once) / s,
 * as nvbandwidth and bandwidthTest count.
 *
 * Pinned memory is the backend's (cuMemHostAlloc; an OpenCL CL_MEM_ALLOC_HOST_PTR buffer
 * kept mapped), pageable is plain malloc'd memory. Verified: after the timed H2D copies the
 * device buffer is read back and compared with the source; for D2H the device buffer is
 * filled by the fill_u32 kernel and the host copy is checked against its formula.
 * Peak: PCIe generation x width of the device's current link (facts.pci), else the
 * model's (data/gpus.json), per direction after line encoding. On a device that shares
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
 * no peak. Both directions' data are verified as the unidirectional copies'. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/bench_devutil.h"
#include "sys/facts.h"

#define XFER_MIN_BYTES (64ull << 10)
#define XFER_DEFAULT_MAX (256ull << 20)
#define XFER_LOCAL 256

static uint32_t fill_word(uint32_t seed, uint64_t i) { return seed ^ (uint32_t)(i * 2654435761ull); }

static void set_peak(struct bench_dev *d, struct measurement *m) {
        if (d->info.unified_memory) {
                measurement_param(m, "unified_memory", "yes: host and device share memory, a copy is a memcpy");
                return;
        }
        static const unsigned gen_mts[] = {0, 2500, 5000, 8000, 16000, 32000, 64000};
        if (d->pci && d->pci->have_link && d->pci->cur_width) {
                m->peak = bench_pcie_gbps(d->pci->cur_speed_mts, d->pci->cur_width);
                snprintf(m->peak_source, sizeof(m->peak_source), "PCIe link of %s: %.1f GT/s x%u (current)",
                         d->pci->addr, d->pci->cur_speed_mts / 1000.0, d->pci->cur_width);
        } else if (d->model && d->model->pcie_gen > 0 && d->model->pcie_gen <= 6 && d->model->pcie_width) {
                m->peak = bench_pcie_gbps(gen_mts[d->model->pcie_gen], d->model->pcie_width);
                snprintf(m->peak_source, sizeof(m->peak_source), "%s: PCIe Gen%u x%u (data/gpus.json)",
                         d->model->name, d->model->pcie_gen, d->model->pcie_width);
        }
}

static void verify(const struct bench_ctx *ctx, struct bench_dev *d, struct copy_run *r, uint32_t seed,
                   uint32_t *check, struct measurement *m) {
        const struct dev_ops *ops = ctx->ops;
        const uint32_t *got = r->host;
        if (r->h2d) {
                if (ops->copy_d2h(d->ctx, check, r->dev, 0, r->bytes) < 0 || ops->synchronize(d->ctx) < 0) {
                        measurement_fail(m, STATUS_ERROR, "reading back: %s", bench_dev_error(ctx));
                        return;
                }
                got = check;
        }
        for (uint64_t i = 0; i < r->bytes / 4; i++)
                if (got[i] != fill_word(seed, i)) {
                        snprintf(m->verify_error, sizeof(m->verify_error), "word %" PRIu64 " is 0x%08x, expected 0x%08x",
                                 i, got[i], fill_word(seed, i));
                        return;
                }
        m->verified = true;
}

static int fill_device(const struct bench_ctx *ctx, struct bench_dev *d, struct dev_buf *buf, uint32_t seed,
                       uint64_t bytes) {
        size_t cu = d->info.compute_units ? d->info.compute_units : 1;
        struct dev_arg args[] = {{.kind = DEV_ARG_BUF, .v.buf = buf},
                                 {.kind = DEV_ARG_U32, .v.u32 = seed},
                                 {.kind = DEV_ARG_U64, .v.u64 = bytes / 4}};
        int e = ctx->ops->launch(d->ctx, "fill_u32", cu * 2048, XFER_LOCAL, args, 3);
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
                set_peak(d, m);
        uint32_t seed = (uint32_t)(r->bytes >> 10) * 7919u + (r->pinned ? 1 : 0) + (r->h2d ? 2 : 0);
        uint32_t *host = r->host;
        int e;
        if (r->h2d) {
                for (uint64_t i = 0; i < r->bytes / 4; i++)
                        host[i] = fill_word(seed, i);
                e = ops->memset(d->ctx, r->dev, 0, r->bytes);
        } else {
                memset(host, 0, r->bytes);
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
                set_peak(d, m);
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
        uint32_t *host = b->host;
        for (uint64_t i = 0; i < b->bytes / 4; i++)
                host[i] = fill_word(seed + 4, i);
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

static void run_device(const struct bench_ctx *ctx, struct bench_report *rep, struct bench_dev *d) {
        const struct dev_ops *ops = ctx->ops;
        uint64_t asked = ctx->opt ? ctx->opt->size_bytes : 0;
        uint64_t max = asked ? asked : XFER_DEFAULT_MAX;
        if (asked && (asked < XFER_MIN_BYTES || asked % 4)) {
                struct measurement *m = bench_measurement_new(rep, "transfer", "setup", d->subject, "GB/s", true);
                measurement_fail(m, STATUS_ERROR, "invalid size %" PRIu64 " bytes: at least %llu and a multiple of 4",
                                 asked, XFER_MIN_BYTES);
                return;
        }
        if (d->info.max_alloc_bytes && max > d->info.max_alloc_bytes) {
                if (asked) {
                        struct measurement *m = bench_measurement_new(rep, "transfer", "setup", d->subject, "GB/s", true);
                        measurement_fail(m, STATUS_ERROR, "size %" PRIu64 " bytes exceeds the device's largest allocation (%" PRIu64 " bytes)",
                                         asked, d->info.max_alloc_bytes);
                        return;
                }
                max = d->info.max_alloc_bytes;
        }
        unsigned reps = bench_reps(ctx, 10), warmup = bench_warmup(ctx, 2);
        double *samples = calloc(reps, sizeof(double));
        uint32_t *check = NULL;
        struct dev_buf *dev = NULL;
        int e = -ENOMEM;
        /* Out of memory: retry with half the largest size, and say so in the setup result. */
        for (; max >= XFER_MIN_BYTES; max /= 2) {
                check = malloc(max);
                if (check && samples && (e = ops->alloc(d->ctx, max, &dev)) == 0 &&
                    (e = ops->memset(d->ctx, dev, 0, max)) == 0 && (e = ops->synchronize(d->ctx)) == 0)
                        break;
                if (dev)
                        ops->free(d->ctx, dev);
                dev = NULL;
                free(check);
                check = NULL;
                if (e != -ENOMEM)
                        break;
        }
        if (!dev) {
                struct measurement *m = bench_measurement_new(rep, "transfer", "setup", d->subject, "GB/s", true);
                measurement_fail(m, e == -ENOMEM ? STATUS_SKIP : STATUS_ERROR, "allocating %" PRIu64 " bytes: %s", max,
                                 e == -ENOMEM && !samples ? "out of memory" : bench_dev_error(ctx));
                free(samples);
                return;
        }
        /* Bidirectional: a second device buffer, and per host memory kind a second host one. */
        struct dev_buf *dev2 = NULL;
        char bidir_why[200] = "";
        enum status bidir_status = STATUS_SKIP;
        if (!ops->copy_h2d_on || !ops->copy_d2h_on || !ops->event_record_on || !ops->event_span_ms) {
                snprintf(bidir_why, sizeof(bidir_why), "not measured: the %s backend has no second queue", ops->name);
        } else if ((e = ops->alloc(d->ctx, max, &dev2)) < 0) {
                dev2 = NULL;
                bidir_status = e == -ENOMEM ? STATUS_SKIP : STATUS_ERROR;
                snprintf(bidir_why, sizeof(bidir_why), "second device buffer of %" PRIu64 " bytes: %s", max,
                         bench_dev_error(ctx));
        }
        for (int pinned = 1; pinned >= 0; pinned--) {
                void *host = NULL, *host2 = NULL;
                if ((e = ops->host_alloc(d->ctx, max, pinned, &host)) < 0) {
                        struct measurement *m = bench_measurement_new(rep, "transfer", pinned ? "h2d_pinned" : "h2d_pageable",
                                                                      d->subject, "GB/s", true);
                        measurement_fail(m, e == -ENOMEM ? STATUS_SKIP : STATUS_ERROR, "host allocation of %" PRIu64 " bytes: %s",
                                         max, bench_dev_error(ctx));
                        continue;
                }
                if (dev2 && (e = ops->host_alloc(d->ctx, max, pinned, &host2)) < 0) {
                        struct measurement *m = bench_measurement_new(rep, "transfer", pinned ? "bidir_pinned" : "bidir_pageable",
                                                                      d->subject, "GB/s", true);
                        measurement_fail(m, e == -ENOMEM ? STATUS_SKIP : STATUS_ERROR, "second host buffer of %" PRIu64 " bytes: %s",
                                         max, bench_dev_error(ctx));
                        host2 = NULL;
                } else if (!dev2) {
                        struct measurement *m = bench_measurement_new(rep, "transfer", pinned ? "bidir_pinned" : "bidir_pageable",
                                                                      d->subject, "GB/s", true);
                        measurement_fail(m, bidir_status, "%s", bidir_why);
                }
                for (uint64_t bytes = XFER_MIN_BYTES; bytes <= max; bytes = bytes * 4 > max && bytes < max ? max : bytes * 4) {
                        for (int h2d = 1; h2d >= 0; h2d--) {
                                struct copy_run r = {.h2d = h2d, .pinned = pinned, .host = host, .dev = dev, .bytes = bytes};
                                run_one(ctx, rep, d, &r, bytes == max, check, samples, warmup, reps);
                        }
                        if (host2) {
                                struct bidir_run b = {.pinned = pinned, .host = host, .host2 = host2, .dev = dev,
                                                      .dev2 = dev2, .bytes = bytes};
                                run_bidir(ctx, rep, d, &b, bytes == max, check, samples, warmup, reps);
                        }
                }
                if (host2)
                        ops->host_free(d->ctx, host2, pinned);
                ops->host_free(d->ctx, host, pinned);
        }
        if (dev2)
                ops->free(d->ctx, dev2);
        ops->free(d->ctx, dev);
        free(check);
        free(samples);
}

static void transfer_run(const struct bench_ctx *ctx, struct bench_report *rep) {
        int *idx;
        size_t n;
        if (bench_dev_indices(ctx, rep, "transfer", &idx, &n) < 0)
                return;
        for (size_t i = 0; i < n; i++) {
                struct bench_dev d;
                if (bench_dev_open(ctx, rep, "transfer", idx[i], &d) == 0)
                        run_device(ctx, rep, &d);
                bench_dev_close(ctx, &d);
        }
        free(idx);
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

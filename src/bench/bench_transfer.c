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
 * Bidirectional transfers need two queues copying at once; dev_ops has one queue per
 * context, so they are reported as skipped with that reason. */
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

struct xfer_run {
        bool h2d, pinned;
        void *host;
        struct dev_buf *dev;
        uint64_t bytes;
};

static int xfer_enqueue(const struct bench_ctx *ctx, struct bench_dev *d, void *arg) {
        struct xfer_run *r = arg;
        return r->h2d ? ctx->ops->copy_h2d(d->ctx, r->dev, 0, r->host, r->bytes)
                      : ctx->ops->copy_d2h(d->ctx, r->host, r->dev, 0, r->bytes);
}

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

static void verify(const struct bench_ctx *ctx, struct bench_dev *d, struct xfer_run *r, uint32_t seed,
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

static void run_one(const struct bench_ctx *ctx, struct bench_report *rep, struct bench_dev *d, struct xfer_run *r,
                    uint32_t *check, double *samples, unsigned warmup, unsigned reps) {
        const struct dev_ops *ops = ctx->ops;
        char name[32];
        snprintf(name, sizeof(name), "%s_%s", r->h2d ? "h2d" : "d2h", r->pinned ? "pinned" : "pageable");
        struct measurement *m = bench_measurement_new(rep, "transfer", name, d->subject, "GB/s", true);
        measurement_param(m, "size_bytes", "%" PRIu64, r->bytes);
        measurement_param(m, "device", "%s", d->info.name);
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
        if (bench_time_reps(ctx, d, m, warmup, reps, xfer_enqueue, r, (double)r->bytes / 1e9, samples) == 0)
                verify(ctx, d, r, seed, check, m);
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
        for (int pinned = 1; pinned >= 0; pinned--) {
                void *host = NULL;
                if ((e = ops->host_alloc(d->ctx, max, pinned, &host)) < 0) {
                        struct measurement *m = bench_measurement_new(rep, "transfer", pinned ? "h2d_pinned" : "h2d_pageable",
                                                                      d->subject, "GB/s", true);
                        measurement_fail(m, e == -ENOMEM ? STATUS_SKIP : STATUS_ERROR, "host allocation of %" PRIu64 " bytes: %s",
                                         max, bench_dev_error(ctx));
                        continue;
                }
                for (uint64_t bytes = XFER_MIN_BYTES; bytes <= max; bytes = bytes * 4 > max && bytes < max ? max : bytes * 4)
                        for (int h2d = 1; h2d >= 0; h2d--) {
                                struct xfer_run r = {.h2d = h2d, .pinned = pinned, .host = host, .dev = dev, .bytes = bytes};
                                run_one(ctx, rep, d, &r, check, samples, warmup, reps);
                        }
                ops->host_free(d->ctx, host, pinned);
        }
        struct measurement *m = bench_measurement_new(rep, "transfer", "bidirectional", d->subject, "GB/s", true);
        measurement_fail(m, STATUS_SKIP, "not measured: needs two queues copying at once, and the device interface has one per context");
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
        .needs_device = true,
        .run = transfer_run,
};

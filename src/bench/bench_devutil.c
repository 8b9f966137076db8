#include "bench/bench_devutil.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/strparse.h"
#include "sys/facts.h"

const char *bench_dev_error(const struct bench_ctx *ctx) {
        const char *e = ctx->ops && ctx->dev ? ctx->ops->last_error(ctx->dev) : NULL;
        return e && *e ? e : "unknown error";
}

int bench_dev_count(const struct bench_ctx *ctx, struct bench_report *rep, const char *bench, size_t *ret_n) {
        *ret_n = 0;
        if (!ctx->ops || !ctx->dev) {
                struct measurement *m = bench_measurement_new(rep, bench, "devices", "node", "", true);
                measurement_fail(m, STATUS_SKIP, "no GPU backend: no device to benchmark");
                return -ENODEV;
        }
        int count = ctx->ops->count(ctx->dev);
        if (count <= 0) {
                struct measurement *m = bench_measurement_new(rep, bench, "devices", "node", "", true);
                measurement_fail(m, STATUS_SKIP, "%s backend has no device", ctx->ops->name);
                return -ENODEV;
        }
        *ret_n = ctx->opt && ctx->opt->gpus ? ctx->opt->n_gpus : (size_t)count;
        return 0;
}

int bench_dev_index(const struct bench_ctx *ctx, size_t i) {
        return ctx->opt && ctx->opt->gpus ? ctx->opt->gpus[i] : (int)i;
}

static void find_model(const struct bench_ctx *ctx, struct bench_dev *d) {
        const struct facts *f = ctx->facts;
        if (!f || !d->info.pci_bus_id[0])
                return;
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct gpu *g = &f->gpus.gpus[i];
                if (g->pci_index >= f->pci.n)
                        continue;
                const struct pci_dev *p = &f->pci.devs[g->pci_index];
                if (!strcasecmp(p->addr, d->info.pci_bus_id)) {
                        d->pci = p;
                        d->model = g->model;
                        return;
                }
        }
}

int bench_dev_open(const struct bench_ctx *ctx, struct bench_report *rep, const char *bench, int index,
                   struct bench_dev *d) {
        memset(d, 0, sizeof(*d));
        d->index = index;
        snprintf(d->subject, sizeof(d->subject), "gpu%d", index);
        int r = ctx->ops->info(ctx->dev, index, &d->info);
        if (r < 0) {
                struct measurement *m = bench_measurement_new(rep, bench, "open", d->subject, "", true);
                measurement_fail(m, STATUS_ERROR, "device %d: %s", index, bench_dev_error(ctx));
                return r;
        }
        /* A CPU device (PoCL) is named as one: "gpu" subjects get GPU baselines and are
         * compared with their GPU siblings. */
        if (d->info.is_cpu)
                snprintf(d->subject, sizeof(d->subject), "cpu%d", index);
        else if (d->info.pci_bus_id[0])
                snprintf(d->subject, sizeof(d->subject), "gpu%d (%s)", index, d->info.pci_bus_id);
        find_model(ctx, d);
        r = ctx->ops->ctx_open(ctx->dev, index, &d->ctx);
        if (r < 0) {
                struct measurement *m = bench_measurement_new(rep, bench, "open", d->subject, "", true);
                measurement_fail(m, STATUS_ERROR, "%s: %s", d->info.name, bench_dev_error(ctx));
                d->ctx = NULL;
                return r;
        }
        return 0;
}

void bench_dev_close(const struct bench_ctx *ctx, struct bench_dev *d) {
        if (d->ctx)
                ctx->ops->ctx_close(d->ctx);
        d->ctx = NULL;
}

unsigned bench_reps(const struct bench_ctx *ctx, unsigned def) {
        return ctx->opt && ctx->opt->reps ? ctx->opt->reps : def;
}

unsigned bench_warmup(const struct bench_ctx *ctx, unsigned def) {
        return ctx->opt && ctx->opt->warmup ? ctx->opt->warmup : def;
}

int bench_time_reps(const struct bench_ctx *ctx, struct bench_dev *d, struct measurement *m, unsigned warmup,
                    unsigned reps, bench_enqueue_fn fn, void *arg, double work_per_rep, double *samples) {
        const struct dev_ops *ops = ctx->ops;
        struct dev_event *e0 = NULL, *e1 = NULL;
        int r = ops->event_create(d->ctx, &e0);
        if (r == 0)
                r = ops->event_create(d->ctx, &e1);
        size_t got = 0;
        for (unsigned i = 0; r == 0 && i < warmup + reps; i++) {
                double ms = 0;
                if ((r = ops->event_record(d->ctx, e0)) < 0 || (r = fn(ctx, d, arg)) < 0 ||
                    (r = ops->event_record(d->ctx, e1)) < 0 || (r = ops->synchronize(d->ctx)) < 0 ||
                    (r = ops->event_elapsed_ms(d->ctx, e0, e1, &ms)) < 0)
                        break;
                if (ms <= 0) {
                        /* below the timer's resolution: the figure would be infinite */
                        r = -ERANGE;
                        measurement_fail(m, STATUS_ERROR, "device timer gave %.3g ms for one repetition: too small to time, use a larger size",
                                         ms);
                        break;
                }
                if (i >= warmup)
                        samples[got++] = work_per_rep / (ms * 1e-3);
        }
        if (r < 0 && !m->summary[0])
                measurement_fail(m, STATUS_ERROR, "%s", bench_dev_error(ctx));
        if (e0)
                ops->event_destroy(d->ctx, e0);
        if (e1)
                ops->event_destroy(d->ctx, e1);
        if (r == 0 && (r = measurement_set_samples(m, samples, got, warmup)) < 0)
                measurement_fail(m, STATUS_ERROR, "out of memory");
        return r;
}

int copy_enqueue(const struct bench_ctx *ctx, struct bench_dev *d, void *arg) {
        struct copy_run *r = arg;
        return r->h2d ? ctx->ops->copy_h2d(d->ctx, r->dev, 0, r->host, r->bytes)
                      : ctx->ops->copy_d2h(d->ctx, r->host, r->dev, 0, r->bytes);
}

void bench_pattern_fill(uint32_t *host, uint64_t bytes, uint32_t seed) {
        for (uint64_t i = 0; i < bytes / 4; i++)
                host[i] = bench_pattern(seed, i);
}

void bench_verify_words(const uint32_t *host, uint64_t bytes, uint32_t seed, const char *where, struct measurement *m) {
        for (uint64_t i = 0; i < bytes / 4; i++)
                if (host[i] != bench_pattern(seed, i)) {
                        snprintf(m->verify_error, sizeof(m->verify_error), "word %" PRIu64 "%s is 0x%08x, expected 0x%08x",
                                 i, where, host[i], bench_pattern(seed, i));
                        return;
                }
        m->verified = true;
}

int bench_read_verify(const struct bench_ctx *ctx, struct bench_dev *d, struct dev_buf *buf, uint64_t bytes,
                      uint32_t seed, uint32_t *host, const char *where, struct measurement *m) {
        int e;
        if ((e = ctx->ops->copy_d2h(d->ctx, host, buf, 0, bytes)) < 0 || (e = ctx->ops->synchronize(d->ctx)) < 0) {
                measurement_fail(m, STATUS_ERROR, "reading the result back: %s", bench_dev_error(ctx));
                return e;
        }
        bench_verify_words(host, bytes, seed, where, m);
        return 0;
}

#define FILL_LOCAL 256

int bench_fill_enqueue(const struct bench_ctx *ctx, struct bench_dev *d, void *arg) {
        const struct bench_fill *f = arg;
        uint64_t words = f->bytes / 4;
        /* 2048 work items per compute unit fill any GPU; never more than the words (rounded
         * up to a work group), which the kernel's bounds check would idle. */
        size_t cu = d->info.compute_units ? d->info.compute_units : 1;
        size_t want = cu * 2048, max = (size_t)((words + FILL_LOCAL - 1) / FILL_LOCAL) * FILL_LOCAL;
        struct dev_arg args[] = {{.kind = DEV_ARG_BUF, .v.buf = f->buf},
                                 {.kind = DEV_ARG_U32, .v.u32 = f->seed},
                                 {.kind = DEV_ARG_U64, .v.u64 = words}};
        return ctx->ops->launch(d->ctx, "fill_u32", want < max ? want : max, FILL_LOCAL, args, 3);
}

double bench_pcie_peak(const struct bench_ctx *ctx, const struct bench_dev *d, char *source, size_t size) {
        static const unsigned gen_mts[] = {0, 2500, 5000, 8000, 16000, 32000, 64000};
        unsigned mts, width;
        source[0] = '\0';
        if (d->pci && ctx->facts && pci_link_best(&ctx->facts->pci, d->pci, &mts, &width) && width) {
                snprintf(source, size, "PCIe link of %s at its best: Gen%u x%u (sysfs max_link_*)", d->pci->addr,
                         pcie_gen_from_mts(mts), width);
                return pci_link_gbps(mts, width);
        }
        if (d->model && d->model->pcie_gen > 0 && d->model->pcie_gen <= 6 && d->model->pcie_width) {
                snprintf(source, size, "%.50s: PCIe Gen%u x%u (data/gpus.json)", d->model->name, d->model->pcie_gen,
                         d->model->pcie_width);
                return pci_link_gbps(gen_mts[d->model->pcie_gen], d->model->pcie_width);
        }
        return 0;
}

void bench_set_pcie_peak(const struct bench_ctx *ctx, const struct bench_dev *d, struct measurement *m) {
        char source[sizeof(m->peak_source)];
        double peak = bench_pcie_peak(ctx, d, source, sizeof(source));
        if (peak > 0) {
                m->peak = peak;
                snprintf(m->peak_source, sizeof(m->peak_source), "%s", source);
        }
}

#include "bench/probes.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench/baselines.h"
#include "bench/bench.h"
#include "bench/bench_devutil.h"
#include "bench/runner.h"
#include "core/array.h"
#include "core/deadline.h"
#include "sys/facts.h"

#define MIB (UINT64_C(1) << 20)
#define FUNC_BYTES (64 * MIB)
#define XFER_BYTES (64 * MIB)
#define XFER_WARMUP 1
#define XFER_REPS 5
#define MEM_BYTES (256ull << 20) /* per array: past any GPU's L2 (B200: 126 MB); halved on ENOMEM */
#define MEM_WARMUP 1
#define MEM_REPS 5
#define P2P_BYTES (32 * MIB)
#define P2P_WARMUP 1
#define P2P_REPS 3

/* ---- child side: which devices, and the probes ----------------------------------- */

static const struct pci_dev *node_gpu(const struct facts *f, const char *bus) {
        for (size_t i = 0; f && bus[0] && i < f->gpus.n; i++) {
                const struct gpu *g = &f->gpus.gpus[i];
                if (g->pci_index < f->pci.n && probe_same_bus(f->pci.devs[g->pci_index].addr, bus))
                        return &f->pci.devs[g->pci_index];
        }
        return NULL;
}

/* Open every backend device that is one of the node's GPUs; with inventory, list the
 * others as skipped "device" measurements. *ret is calloc'd (free it after closing). */
static void open_gpus(const struct bench_ctx *ctx, struct bench_report *rep, const char *bench, bool inventory,
                      struct bench_dev **ret, size_t *ret_n) {
        *ret = NULL;
        *ret_n = 0;
        int count = ctx->ops->count(ctx->dev);
        struct bench_dev *devs = calloc(count > 0 ? (size_t)count : 1, sizeof(*devs));
        if (!devs) {
                struct measurement *m = bench_measurement_new(rep, bench, "devices", "node", "", true);
                measurement_fail(m, STATUS_ERROR, "out of memory");
                return;
        }
        size_t n = 0;
        for (int i = 0; i < count; i++) {
                struct dev_info info;
                char subject[48];
                snprintf(subject, sizeof(subject), "gpu%d", i);
                if (ctx->ops->info(ctx->dev, i, &info) < 0) {
                        struct measurement *m = bench_measurement_new(rep, bench, "open", subject, "", true);
                        measurement_fail(m, STATUS_ERROR, "device %d: %s", i, bench_dev_error(ctx));
                        continue;
                }
                if (!node_gpu(ctx->facts, info.pci_bus_id)) {
                        if (inventory) {
                                if (info.pci_bus_id[0])
                                        snprintf(subject, sizeof(subject), "gpu%d (%s)", i, info.pci_bus_id);
                                struct measurement *m = bench_measurement_new(rep, bench, "device", subject, "", true);
                                measurement_param(m, "backend", "%s", ctx->ops->name);
                                measurement_param(m, "name", "%.46s", info.name);
                                measurement_param(m, "pci_bus_id", "%s", info.pci_bus_id);
                                measurement_param(m, "unified_memory", "%s", info.unified_memory ? "yes" : "no");
                                measurement_fail(m, STATUS_SKIP, "%s device %s%s%s is not an NVIDIA GPU of this node: not probed",
                                                 ctx->ops->name, info.name, info.pci_bus_id[0] ? " at " : "",
                                                 info.pci_bus_id);
                        }
                        continue;
                }
                if (bench_dev_open(ctx, rep, bench, i, &devs[n]) == 0)
                        n++;
                else
                        bench_dev_close(ctx, &devs[n]);
        }
        *ret = devs;
        *ret_n = n;
}

static void close_gpus(const struct bench_ctx *ctx, struct bench_dev *devs, size_t n) {
        for (size_t i = 0; i < n; i++)
                bench_dev_close(ctx, &devs[i]);
        free(devs);
}

static uint64_t cap_alloc(const struct bench_dev *d, uint64_t bytes) {
        if (d->info.max_alloc_bytes && bytes > d->info.max_alloc_bytes)
                bytes = d->info.max_alloc_bytes;
        return bytes / 4096 * 4096;
}

/* functional: allocation, a kernel, its result. */
static void functional_one(const struct bench_ctx *ctx, struct bench_report *rep, struct bench_dev *d, uint32_t *host) {
        const struct dev_ops *ops = ctx->ops;
        uint64_t bytes = cap_alloc(d, FUNC_BYTES);
        struct measurement *m = bench_measurement_new(rep, "functional", "functional", d->subject, "GB/s", true);
        measurement_param(m, "size_bytes", "%" PRIu64, bytes);
        measurement_param(m, "kernel", "fill_u32");
        measurement_param(m, "device", "%.46s", d->info.name);
        struct bench_fill r = {.seed = 0xf00d0000u + (uint32_t)d->index, .bytes = bytes};
        double sample;
        int e;
        if ((e = ops->alloc(d->ctx, bytes, &r.buf)) < 0) {
                measurement_fail(m, STATUS_ERROR, "allocating %" PRIu64 " bytes: %s", bytes, bench_dev_error(ctx));
                return;
        }
        if ((e = ops->memset(d->ctx, r.buf, 0, bytes)) < 0 || (e = ops->synchronize(d->ctx)) < 0)
                measurement_fail(m, STATUS_ERROR, "clearing the buffer: %s", bench_dev_error(ctx));
        else if (bench_time_reps(ctx, d, m, 0, 1, bench_fill_enqueue, &r, (double)bytes / 1e9, &sample) == 0)
                (void)bench_read_verify(ctx, d, r.buf, bytes, r.seed, host, "", m);
        ops->free(d->ctx, r.buf);
}

static void functional_run(const struct bench_ctx *ctx, struct bench_report *rep) {
        struct bench_dev *devs;
        size_t n;
        open_gpus(ctx, rep, "functional", true, &devs, &n);
        uint32_t *host = n ? malloc(FUNC_BYTES) : NULL;
        for (size_t i = 0; i < n; i++) {
                if (!host) {
                        struct measurement *m = bench_measurement_new(rep, "functional", "functional", devs[i].subject, "GB/s", true);
                        measurement_fail(m, STATUS_ERROR, "out of memory (host buffer)");
                        continue;
                }
                functional_one(ctx, rep, &devs[i], host);
        }
        free(host);
        close_gpus(ctx, devs, n);
}

/* ---- transfer, memory and p2p: the benchmarks, at the probes' sizes and repetitions ---- */

/* The backend indices of the node's GPUs (from each device's PCI address; nothing opened). */
static size_t node_gpu_indices(const struct bench_ctx *ctx, int *idx, size_t cap) {
        int count = ctx->ops->count(ctx->dev);
        size_t n = 0;
        for (int i = 0; i < count && n < cap; i++) {
                struct dev_info info;
                if (ctx->ops->info(ctx->dev, i, &info) == 0 && node_gpu(ctx->facts, info.pci_bus_id))
                        idx[n++] = i;
        }
        return n;
}

/* Run bench on the node's GPUs with opt (its gpus filled in here). */
static void run_fixed(const struct bench_ctx *ctx, struct bench_report *rep, const struct bench_info *bench,
                      struct bench_options opt) {
        int idx[64];
        size_t n = node_gpu_indices(ctx, idx, ARRAY_COUNT(idx));
        if (n == 0)
                return; /* device.functional says why no GPU was probed */
        opt.gpus = idx;
        opt.n_gpus = n;
        struct bench_ctx fixed = *ctx;
        fixed.opt = &opt;
        bench->run(&fixed, rep);
}

static void transfer_run(const struct bench_ctx *ctx, struct bench_report *rep) {
        run_fixed(ctx, rep, &bench_transfer,
                  (struct bench_options){.size_bytes = XFER_BYTES, .warmup = XFER_WARMUP, .reps = XFER_REPS,
                                         .only = "pinned", .link_under_load = true});
}

static void memory_run(const struct bench_ctx *ctx, struct bench_report *rep) {
        run_fixed(ctx, rep, &bench_memory,
                  (struct bench_options){.size_bytes = MEM_BYTES, .size_share = 16, .warmup = MEM_WARMUP,
                                         .reps = MEM_REPS, .only = "triad"});
}

static void p2p_run(const struct bench_ctx *ctx, struct bench_report *rep) {
        run_fixed(ctx, rep, &bench_p2p,
                  (struct bench_options){.size_bytes = P2P_BYTES, .warmup = P2P_WARMUP, .reps = P2P_REPS,
                                         .only = "write_uni"});
}

/* ---- parent side ------------------------------------------------------------------- */

static const struct bench_info probe_infos[_PROBE_COUNT] = {
        [PROBE_FUNCTIONAL] = {.name = "probe-functional", .title = "Allocation and a verified kernel on every GPU",
                              .needs_device = true, .default_timeout_s = PROBE_FUNCTIONAL_TIMEOUT_S, .run = functional_run},
        [PROBE_TRANSFER] = {.name = "probe-transfer", .title = "Pinned H2D/D2H per GPU; the PCIe link under load",
                            .needs_device = true, .default_timeout_s = PROBE_TRANSFER_TIMEOUT_S, .run = transfer_run},
        [PROBE_MEMORY] = {.name = "probe-memory", .title = "Device memory bandwidth (triad) per GPU",
                          .needs_device = true, .default_timeout_s = PROBE_MEMORY_TIMEOUT_S, .run = memory_run},
        [PROBE_P2P] = {.name = "probe-p2p", .title = "Peer copies between every ordered pair of GPUs",
                       .needs_device = true, .default_timeout_s = PROBE_P2P_TIMEOUT_S, .run = p2p_run},
};
static const char *const probe_names[_PROBE_COUNT] = {"functional", "transfer", "memory", "p2p"};

static void init(struct probe_facts *ret, const char *backend) {
        memset(ret, 0, sizeof(*ret));
        bench_report_init(&ret->rep);
        snprintf(ret->backend, sizeof(ret->backend), "%s", backend ? backend : "auto");
        for (size_t i = 0; i < _PROBE_COUNT; i++) {
                ret->runs[i].name = probe_names[i];
                ret->runs[i].timeout_s = probe_infos[i].default_timeout_s;
        }
}

void probes_not_run(struct probe_facts *ret, const char *why) {
        init(ret, NULL);
        snprintf(ret->skip_reason, sizeof(ret->skip_reason), "%.255s", why);
        for (size_t i = 0; i < _PROBE_COUNT; i++)
                snprintf(ret->runs[i].not_run, sizeof(ret->runs[i].not_run), "%.159s", why);
}

int probe_by_name(const char *name) {
        for (int i = 0; i < _PROBE_COUNT; i++)
                if (strcmp(name, probe_names[i]) == 0)
                        return i;
        return -1;
}

void probes_run(struct fsroot *fs, const struct facts *f, const char *backend, const char *data_dir,
                const unsigned timeout_s[_PROBE_COUNT], unsigned wanted, bool progress, struct probe_facts *ret) {
        init(ret, backend);
        for (size_t i = 0; i < _PROBE_COUNT; i++)
                if (timeout_s[i])
                        ret->runs[i].timeout_s = timeout_s[i];
        double start = monotonic_ms();
        char err[512];
        struct baselines *bl = NULL;
        if (baselines_load(data_dir, &bl, err, sizeof(err)) < 0) {
                char why[256];
                snprintf(why, sizeof(why), "baselines: %.240s", err);
                probes_not_run(ret, why);
                snprintf(ret->backend, sizeof(ret->backend), "%s", backend ? backend : "auto");
                return;
        }
        struct bench_options opt = {.backend = ret->backend};
        struct bench_progress line;
        size_t n_wanted = 0;
        double later_s = 0;
        for (size_t id = 0; id < _PROBE_COUNT; id++)
                if (wanted & PROBE_BIT(id)) {
                        n_wanted++;
                        later_s += ret->runs[id].timeout_s;
                }
        bench_progress_init(&line, "check", n_wanted, progress);
        struct bench_ctx ctx = {.opt = &opt, .facts = f, .baselines = bl, .fs = fs, .progress = &line};
        size_t probed = 0;
        for (size_t id = 0; id < _PROBE_COUNT; id++) {
                struct probe_run *pr = &ret->runs[id];
                if (!(wanted & PROBE_BIT(id))) {
                        snprintf(pr->not_run, sizeof(pr->not_run), "no selected check judges it");
                        continue;
                }
                later_s -= pr->timeout_s;
                bench_progress_next(&line, later_s);
                if (id != PROBE_FUNCTIONAL && probed == 0) {
                        char why[256];
                        (void)probes_no_gpu(ret, why, sizeof(why));
                        snprintf(pr->not_run, sizeof(pr->not_run), "%.159s", why);
                        continue;
                }
                if (id == PROBE_P2P && probed < 2) {
                        snprintf(pr->not_run, sizeof(pr->not_run), "p2p needs two or more GPUs, %zu probed", probed);
                        continue;
                }
                struct bench_run_result res;
                /* the run's deadline: its own, or --probe-timeout's */
                bench_run_child(&probe_infos[id], &ctx, pr->timeout_s, &ret->rep, &res);
                bench_judge_range(&ret->rep, res.first, f, bl);
                pr->ran = true;
                pr->duration_ms = res.duration_ms;
                pr->first = res.first;
                pr->count = res.count;
                snprintf(pr->backend, sizeof(pr->backend), "%s", res.backend);
                snprintf(pr->note, sizeof(pr->note), "%s", res.note);
                if (id == PROBE_FUNCTIONAL)
                        probed = probes_count_probed(ret);
        }
        /* GPUs of one node against each other, as gpuvet bench does (a spread of ~5% is
         * normal, gpu-specs §4): catches one slow GPU where no baseline exists. */
        bench_compare_siblings(&ret->rep, 0.10);
        progress_clear(&line.out);
        baselines_free(bl);
        ret->duration_ms = monotonic_ms() - start;
}

void probes_done(struct probe_facts *p) {
        if (p)
                bench_report_done(&p->rep);
}

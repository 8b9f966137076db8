/* bench p2p: GPU x GPU bandwidth (unidirectional and bidirectional) and latency
 * matrices, for every ordered pair of the selected GPUs, when there are two or more.
 *
 * - Unidirectional: copy_peer of --size bytes (default 64 MiB) from GPU a to GPU b, on
 *   a's queue (a's copy engine writes into b, as p2pBandwidthLatencyTest and nvbandwidth's
 *   default CE copies do), timed with events on a. GB/s = bytes / s, bytes counted once.
 * - Bidirectional: a->b on a's queue and b->a on b's queue enqueued together, each timed
 *   on its own queue; the figure is the sum of the two directions' rates. (dev_ops has no
 *   cross-queue wait, so the two are not fenced to start together; with both enqueued
 *   before either completes, they overlap for all but the launch skew.)
 * - Latency: 100 copies of 4 bytes a->b between two events; us per copy.
 * Verified: the destination is read back and compared with the source pattern.
 * Every measurement's subject is "gpuA->gpuB", its parameters "from" and "to" the two GPUs
 * with their PCI addresses. The standard level's p2p probe runs this benchmark with only =
 * "write_uni": the unidirectional copies alone.
 *
 * Link of each pair (a parameter of every measurement, and the peak): from NVML's
 * NVLink facts when the bench command gathered them (links whose remote PCI address is
 * the other GPU, or NVSwitch links on both), else from the GPU model (data/gpus.json: an
 * SXM part with NVLink is on NVLink, through NVSwitch on HGX boards), else PCIe. Which
 * source answered is the "link_source" parameter. Peak: NVLink per direction (links x
 * per-link rate) or the slower PCIe link of the two. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench/bench.h"
#include "bench/bench_devutil.h"
#include "data/gpudb.h"
#include "sys/facts.h"

#define P2P_DEFAULT_BYTES (64ull << 20)
#define P2P_LAT_BYTES 4
#define P2P_LAT_COPIES 100
#define P2P_DEFAULT_REPS 10
#define P2P_DEFAULT_WARMUP 2

struct p2p_link {
        char kind[32];    /* "nvlink x4", "nvlink (nvswitch)", "pcie" */
        char source[64];  /* "nvml", "data/gpus.json model", "default" */
        double peak_gbps; /* per direction; 0 unknown */
        char peak_source[96];
};

static const struct nvml_gpu *nvml_gpu_of(const struct facts *f, const char *bus) {
        if (!f || f->nvml.init_state != NVML_INIT_OK || !bus[0])
                return NULL;
        for (unsigned i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                if (g->pci_bus_id.state == NV_OK && !strcasecmp(g->pci_bus_id.v, bus))
                        return g;
        }
        return NULL;
}

static bool is_gpu_bus(const struct facts *f, const char *bus) {
        for (unsigned i = 0; f && i < f->nvml.n_gpus; i++)
                if (f->nvml.gpus[i].pci_bus_id.state == NV_OK && !strcasecmp(f->nvml.gpus[i].pci_bus_id.v, bus))
                        return true;
        return false;
}

/* Active links of g: to the GPU at bus (direct), and to anything that is not a GPU
 * (NVSwitch). */
static void count_links(const struct facts *f, const struct nvml_gpu *g, const char *bus, unsigned *direct,
                        unsigned *switched) {
        *direct = *switched = 0;
        for (unsigned l = 0; l < g->nvlink_count; l++) {
                const struct nvml_nvlink *k = &g->nvlink[l];
                if (k->state.state != NV_OK || k->state.v != 1 || k->remote_bus_id.state != NV_OK)
                        continue;
                if (!strcasecmp(k->remote_bus_id.v, bus))
                        (*direct)++;
                else if (!is_gpu_bus(f, k->remote_bus_id.v))
                        (*switched)++;
        }
}

static void find_link(const struct bench_ctx *ctx, const struct bench_dev *a, const struct bench_dev *b,
                      struct p2p_link *ret) {
        memset(ret, 0, sizeof(*ret));
        const struct nvml_gpu *ga = nvml_gpu_of(ctx->facts, a->info.pci_bus_id);
        const struct nvml_gpu *gb = nvml_gpu_of(ctx->facts, b->info.pci_bus_id);
        /* NVLink4 and older: 25 GB/s per link and direction; NVLink5: 50 (the model's figure
         * divided by its link count says which). */
        double per_link = a->model && a->model->nvlink_links ? a->model->nvlink_gbps_per_dir / a->model->nvlink_links : 25;
        if (ga && gb) {
                unsigned direct, sw_a, sw_b, unused;
                count_links(ctx->facts, ga, b->info.pci_bus_id, &direct, &sw_a);
                count_links(ctx->facts, gb, a->info.pci_bus_id, &unused, &sw_b);
                snprintf(ret->source, sizeof(ret->source), "nvml");
                if (direct) {
                        snprintf(ret->kind, sizeof(ret->kind), "nvlink x%u", direct);
                        ret->peak_gbps = direct * per_link;
                        snprintf(ret->peak_source, sizeof(ret->peak_source), "%u NVLink links x %.0f GB/s (NVML)", direct,
                                 per_link);
                        return;
                }
                if (sw_a && sw_b) {
                        unsigned n = sw_a < sw_b ? sw_a : sw_b;
                        snprintf(ret->kind, sizeof(ret->kind), "nvlink (nvswitch)");
                        ret->peak_gbps = n * per_link;
                        snprintf(ret->peak_source, sizeof(ret->peak_source), "%u NVSwitch links x %.0f GB/s (NVML)", n,
                                 per_link);
                        return;
                }
        } else if (a->model && b->model && a->model == b->model && a->model->nvlink_links > 0 && a->model->form &&
                   !strcmp(a->model->form, "sxm")) {
                snprintf(ret->source, sizeof(ret->source), "data/gpus.json model (NVML not read)");
                snprintf(ret->kind, sizeof(ret->kind), "nvlink (sxm, assumed)");
                ret->peak_gbps = a->model->nvlink_gbps_per_dir;
                snprintf(ret->peak_source, sizeof(ret->peak_source), "%s: NVLink %.0f GB/s per direction (data/gpus.json)",
                         a->model->name, a->model->nvlink_gbps_per_dir);
                return;
        } else {
                snprintf(ret->source, sizeof(ret->source), "default (NVML not read, model not SXM)");
        }
        snprintf(ret->kind, sizeof(ret->kind), "pcie");
        char unused[160];
        double pa = bench_pcie_peak(ctx, a, unused, sizeof(unused)), pb = bench_pcie_peak(ctx, b, unused, sizeof(unused));
        ret->peak_gbps = pa && pb ? (pa < pb ? pa : pb) : 0;
        if (ret->peak_gbps)
                snprintf(ret->peak_source, sizeof(ret->peak_source), "slower PCIe link of the pair: %.1f GB/s",
                         ret->peak_gbps);
}

/* Each GPU's two buffers: src, filled once with the GPU's own pattern by the fill kernel,
 * and dst, which every peer copies into (cleared before each measurement, so a copy that
 * moved nothing cannot pass on an earlier pair's data). */
struct p2p_bufs {
        struct dev_buf *src, *dst;
        uint32_t seed;
        bool ok;
        enum status status; /* when not ok: skip for out of memory, else error */
        char error[256];    /* why not ok */
};

struct p2p_pair {
        struct bench_dev *a, *b;
        struct p2p_bufs *ba, *bb;
        uint64_t bytes;
};

static int enqueue_uni(const struct bench_ctx *ctx, struct bench_dev *d, void *arg) {
        struct p2p_pair *p = arg;
        (void)d;
        return ctx->ops->copy_peer(p->b->ctx, p->bb->dst, p->a->ctx, p->ba->src, p->bytes);
}

static int enqueue_lat(const struct bench_ctx *ctx, struct bench_dev *d, void *arg) {
        struct p2p_pair *p = arg;
        (void)d;
        for (int i = 0; i < P2P_LAT_COPIES; i++) {
                int r = ctx->ops->copy_peer(p->b->ctx, p->bb->dst, p->a->ctx, p->ba->src, P2P_LAT_BYTES);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int clear(const struct bench_ctx *ctx, struct bench_dev *d, struct dev_buf *buf, uint64_t bytes) {
        int r = ctx->ops->memset(d->ctx, buf, 0, bytes);
        return r < 0 ? r : ctx->ops->synchronize(d->ctx);
}

/* The destination on d read back and compared with the source's pattern. */
static void verify(const struct bench_ctx *ctx, struct bench_dev *d, struct dev_buf *buf, uint64_t bytes, uint32_t seed,
                   uint32_t *host, struct measurement *m) {
        char where[64];
        snprintf(where, sizeof(where), " on %s", d->subject);
        (void)bench_read_verify(ctx, d, buf, bytes, seed, host, where, m);
}

static struct measurement *pair_measurement(struct bench_report *rep, const char *name, const struct bench_dev *a,
                                            const struct bench_dev *b, const char *unit, bool higher,
                                            const struct p2p_link *link, uint64_t bytes) {
        char subject[48];
        snprintf(subject, sizeof(subject), "gpu%d->gpu%d", a->index, b->index);
        struct measurement *m = bench_measurement_new(rep, "p2p", name, subject, unit, higher);
        measurement_param(m, "from", "%s", a->subject);
        measurement_param(m, "to", "%s", b->subject);
        measurement_param(m, "link", "%s", link->kind);
        measurement_param(m, "link_source", "%s", link->source);
        measurement_param(m, "size_bytes", "%" PRIu64, bytes);
        return m;
}

/* Bidirectional: both directions enqueued, each timed on its own queue. */
static int time_bidir(const struct bench_ctx *ctx, struct p2p_pair *p, struct measurement *m, unsigned warmup,
                      unsigned reps, double *samples) {
        const struct dev_ops *ops = ctx->ops;
        struct dev_event *ea0 = NULL, *ea1 = NULL, *eb0 = NULL, *eb1 = NULL;
        int r = ops->event_create(p->a->ctx, &ea0);
        if (r == 0)
                r = ops->event_create(p->a->ctx, &ea1);
        if (r == 0)
                r = ops->event_create(p->b->ctx, &eb0);
        if (r == 0)
                r = ops->event_create(p->b->ctx, &eb1);
        size_t got = 0;
        for (unsigned i = 0; r == 0 && i < warmup + reps; i++) {
                double ms_a = 0, ms_b = 0;
                if ((r = ops->event_record(p->a->ctx, ea0)) < 0 || (r = ops->event_record(p->b->ctx, eb0)) < 0 ||
                    (r = ops->copy_peer(p->b->ctx, p->bb->dst, p->a->ctx, p->ba->src, p->bytes)) < 0 ||
                    (r = ops->copy_peer(p->a->ctx, p->ba->dst, p->b->ctx, p->bb->src, p->bytes)) < 0 ||
                    (r = ops->event_record(p->a->ctx, ea1)) < 0 || (r = ops->event_record(p->b->ctx, eb1)) < 0 ||
                    (r = ops->synchronize(p->a->ctx)) < 0 || (r = ops->synchronize(p->b->ctx)) < 0 ||
                    (r = ops->event_elapsed_ms(p->a->ctx, ea0, ea1, &ms_a)) < 0 ||
                    (r = ops->event_elapsed_ms(p->b->ctx, eb0, eb1, &ms_b)) < 0)
                        break;
                if (ms_a <= 0 || ms_b <= 0) {
                        r = -ERANGE;
                        measurement_fail(m, STATUS_ERROR, "device timer gave %.3g / %.3g ms: too small to time", ms_a,
                                         ms_b);
                        break;
                }
                if (i >= warmup)
                        samples[got++] = (double)p->bytes / (ms_a * 1e-3) / 1e9 + (double)p->bytes / (ms_b * 1e-3) / 1e9;
        }
        if (r < 0 && !m->summary[0])
                measurement_fail(m, STATUS_ERROR, "%s", bench_dev_error(ctx));
        ops->event_destroy(p->a->ctx, ea0);
        ops->event_destroy(p->a->ctx, ea1);
        ops->event_destroy(p->b->ctx, eb0);
        ops->event_destroy(p->b->ctx, eb1);
        if (r == 0 && (r = measurement_set_samples(m, samples, got, warmup)) < 0)
                measurement_fail(m, STATUS_ERROR, "out of memory");
        return r;
}

static void run_pair(const struct bench_ctx *ctx, struct bench_report *rep, struct p2p_pair *p, uint32_t *host) {
        const struct dev_ops *ops = ctx->ops;
        struct bench_dev *a = p->a, *b = p->b;
        struct p2p_link link;
        find_link(ctx, a, b, &link);
        unsigned reps = bench_reps(ctx, P2P_DEFAULT_REPS), warmup = bench_warmup(ctx, P2P_DEFAULT_WARMUP);
        struct measurement *uni = pair_measurement(rep, "write_uni", a, b, "GB/s", true, &link, p->bytes);
        if (!p->ba->ok || !p->bb->ok) {
                struct p2p_bufs *bad = !p->ba->ok ? p->ba : p->bb;
                measurement_fail(uni, bad->status, "%s: %s", !p->ba->ok ? a->subject : b->subject, bad->error);
                return;
        }
        int r = ops->p2p_enable(a->ctx, b->ctx);
        if (r == -ENOTSUP) {
                /* Not a fault of the node by itself (PCIe peer access off behind some root
                 * complexes, IOMMU settings): a skip saying why. */
                measurement_fail(uni, STATUS_SKIP, "no peer access between %s and %s: %s", a->subject, b->subject,
                                 bench_dev_error(ctx));
                return;
        }
        if (r < 0) {
                measurement_fail(uni, STATUS_ERROR, "enabling peer access: %s", bench_dev_error(ctx));
                return;
        }
        double *samples = calloc(reps, sizeof(double));
        if (!samples) {
                measurement_fail(uni, STATUS_ERROR, "out of memory");
                return;
        }
        uni->peak = link.peak_gbps;
        snprintf(uni->peak_source, sizeof(uni->peak_source), "%s", link.peak_source);
        if ((r = clear(ctx, b, p->bb->dst, p->bytes)) < 0)
                measurement_fail(uni, STATUS_ERROR, "clearing the destination: %s", bench_dev_error(ctx));
        else if (bench_time_reps(ctx, a, uni, warmup, reps, enqueue_uni, p, (double)p->bytes / 1e9, samples) == 0)
                verify(ctx, b, p->bb->dst, p->bytes, p->ba->seed, host, uni);
        if (bench_only(ctx, "write_uni"))
                goto out; /* the standard level's probe */

        struct measurement *bi = pair_measurement(rep, "write_bidir", a, b, "GB/s", true, &link, p->bytes);
        bi->peak = 2 * link.peak_gbps;
        snprintf(bi->peak_source, sizeof(bi->peak_source), "%.70s, both directions", link.peak_source);
        if ((r = clear(ctx, a, p->ba->dst, p->bytes)) < 0 || (r = clear(ctx, b, p->bb->dst, p->bytes)) < 0)
                measurement_fail(bi, STATUS_ERROR, "clearing the destinations: %s", bench_dev_error(ctx));
        else if (time_bidir(ctx, p, bi, warmup, reps, samples) == 0) {
                verify(ctx, a, p->ba->dst, p->bytes, p->bb->seed, host, bi);
                if (bi->verified) {
                        bi->verified = false;
                        verify(ctx, b, p->bb->dst, p->bytes, p->ba->seed, host, bi);
                }
        }

        struct measurement *lat = pair_measurement(rep, "latency", a, b, "us", false, &link, P2P_LAT_BYTES);
        /* bench_time_reps' samples are work / s, here copies per second; 1e6 over that is
         * microseconds per copy */
        if (bench_time_reps(ctx, a, lat, warmup, reps, enqueue_lat, p, P2P_LAT_COPIES, samples) == 0) {
                for (size_t i = 0; i < lat->n_samples; i++)
                        lat->samples[i] = 1e6 / lat->samples[i];
                lat->verified = true; /* 4 bytes of the verified buffers */
        }
out:
        free(samples);
}

/* d's source (filled with its pattern) and destination buffers. */
static void alloc_bufs(const struct bench_ctx *ctx, struct bench_dev *d, uint64_t bytes, struct p2p_bufs *b) {
        const struct dev_ops *ops = ctx->ops;
        b->seed = 0x5eed0000u + (uint32_t)d->index;
        struct bench_fill f = {.seed = b->seed, .bytes = bytes};
        int r;
        if ((r = ops->alloc(d->ctx, bytes, &b->src)) < 0 || (r = ops->alloc(d->ctx, bytes, &b->dst)) < 0) {
                b->status = r == -ENOMEM ? STATUS_SKIP : STATUS_ERROR;
                snprintf(b->error, sizeof(b->error), "allocating 2 x %" PRIu64 " bytes: %.150s%s", bytes,
                         bench_dev_error(ctx), r == -ENOMEM ? " (try a smaller --size)" : "");
                return;
        }
        f.buf = b->src;
        if ((r = bench_fill_enqueue(ctx, d, &f)) < 0 || (r = ops->synchronize(d->ctx)) < 0) {
                b->status = STATUS_ERROR;
                snprintf(b->error, sizeof(b->error), "filling the source: %.150s", bench_dev_error(ctx));
                return;
        }
        b->ok = true;
}

static void p2p_run(const struct bench_ctx *ctx, struct bench_report *rep) {
        size_t n;
        if (bench_dev_count(ctx, rep, "p2p", &n) < 0)
                return;
        if (n < 2) {
                struct measurement *m = bench_measurement_new(rep, "p2p", "pairs", "node", "", true);
                measurement_fail(m, STATUS_SKIP, "p2p needs two or more GPUs, %zu selected", n);
                return;
        }
        uint64_t bytes = ctx->opt && ctx->opt->size_bytes ? ctx->opt->size_bytes : P2P_DEFAULT_BYTES;
        bytes &= ~(uint64_t)3;
        struct bench_dev *devs = calloc(n, sizeof(*devs));
        struct p2p_bufs *bufs = calloc(n, sizeof(*bufs));
        uint32_t *host = NULL;
        if (!devs || !bufs || bytes < 4 || !(host = malloc(bytes))) {
                struct measurement *m = bench_measurement_new(rep, "p2p", "pairs", "node", "", true);
                measurement_fail(m, STATUS_ERROR, bytes < 4 ? "size %" PRIu64 " bytes: at least 4" : "out of memory (%" PRIu64 " bytes)",
                                 bytes);
                goto out;
        }
        for (size_t i = 0; i < n; i++)
                if (bench_dev_open(ctx, rep, "p2p", bench_dev_index(ctx, i), &devs[i]) < 0)
                        devs[i].ctx = NULL;
                else
                        alloc_bufs(ctx, &devs[i], bytes, &bufs[i]);
        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++)
                        if (i != j && devs[i].ctx && devs[j].ctx) {
                                struct p2p_pair p = {.a = &devs[i], .b = &devs[j], .ba = &bufs[i], .bb = &bufs[j],
                                                     .bytes = bytes};
                                run_pair(ctx, rep, &p, host);
                        }
out:
        for (size_t i = 0; devs && bufs && i < n; i++) {
                if (bufs[i].src)
                        ctx->ops->free(devs[i].ctx, bufs[i].src);
                if (bufs[i].dst)
                        ctx->ops->free(devs[i].ctx, bufs[i].dst);
                bench_dev_close(ctx, &devs[i]);
        }
        free(bufs);
        free(devs);
        free(host);
}

const struct bench_info bench_p2p = {
        .name = "p2p",
        .title = "GPU x GPU bandwidth (uni- and bidirectional) and latency, NVLink or PCIe per pair",
        .remedy = "Peer bandwidth below the reference: over NVLink, look at the links (gpu.nvlink, `nvidia-smi "
                  "nvlink -s`); over PCIe, at the pair's path (`gpuvet topo`: PIX and PXB beat NODE and SYS) "
                  "and ACS redirecting peer traffic through the root complex (pcie.acs). In a VM the hypervisor "
                  "must expose peer access.",
        .needs_device = true,
        .run = p2p_run,
};

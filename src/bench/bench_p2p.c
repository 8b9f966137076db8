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

static double pcie_peak(const struct bench_dev *d) {
        static const unsigned gen_mts[] = {0, 2500, 5000, 8000, 16000, 32000, 64000};
        if (d->pci && d->pci->have_link && d->pci->cur_width)
                return bench_pcie_gbps(d->pci->cur_speed_mts, d->pci->cur_width);
        if (d->model && d->model->pcie_gen > 0 && d->model->pcie_gen <= 6)
                return bench_pcie_gbps(gen_mts[d->model->pcie_gen], d->model->pcie_width);
        return 0;
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
        double pa = pcie_peak(a), pb = pcie_peak(b);
        ret->peak_gbps = pa && pb ? (pa < pb ? pa : pb) : 0;
        if (ret->peak_gbps)
                snprintf(ret->peak_source, sizeof(ret->peak_source), "slower PCIe link of the pair: %.1f GB/s",
                         ret->peak_gbps);
}

struct p2p_pair {
        const struct bench_ctx *ctx;
        struct bench_dev *a, *b;
        struct dev_buf *src_a, *dst_b, *src_b, *dst_a;
        uint64_t bytes;
};

static int enqueue_uni(const struct bench_ctx *ctx, struct bench_dev *d, void *arg) {
        struct p2p_pair *p = arg;
        (void)d;
        return ctx->ops->copy_peer(p->b->ctx, p->dst_b, p->a->ctx, p->src_a, p->bytes);
}

static int enqueue_lat(const struct bench_ctx *ctx, struct bench_dev *d, void *arg) {
        struct p2p_pair *p = arg;
        (void)d;
        for (int i = 0; i < P2P_LAT_COPIES; i++) {
                int r = ctx->ops->copy_peer(p->b->ctx, p->dst_b, p->a->ctx, p->src_a, P2P_LAT_BYTES);
                if (r < 0)
                        return r;
        }
        return 0;
}

static uint32_t pattern(uint32_t seed, uint64_t i) {
        return seed ^ (uint32_t)(i * 2654435761ull);
}

/* Fill src from the host with the pattern of seed. */
static int fill(const struct bench_ctx *ctx, struct bench_dev *d, struct dev_buf *buf, uint64_t bytes, uint32_t seed,
                uint32_t *host) {
        for (uint64_t i = 0; i < bytes / 4; i++)
                host[i] = pattern(seed, i);
        int r = ctx->ops->copy_h2d(d->ctx, buf, 0, host, bytes);
        return r < 0 ? r : ctx->ops->synchronize(d->ctx);
}

static void verify(const struct bench_ctx *ctx, struct bench_dev *d, struct dev_buf *buf, uint64_t bytes, uint32_t seed,
                   uint32_t *host, struct measurement *m) {
        if (ctx->ops->copy_d2h(d->ctx, host, buf, 0, bytes) < 0 || ctx->ops->synchronize(d->ctx) < 0) {
                measurement_fail(m, STATUS_ERROR, "reading the destination back: %s", bench_dev_error(ctx));
                return;
        }
        for (uint64_t i = 0; i < bytes / 4; i++)
                if (host[i] != pattern(seed, i)) {
                        snprintf(m->verify_error, sizeof(m->verify_error),
                                 "word %" PRIu64 " on %s is 0x%08x, expected 0x%08x", i, d->subject, host[i],
                                 pattern(seed, i));
                        return;
                }
        m->verified = true;
}

static struct measurement *pair_measurement(struct bench_report *rep, const char *name, const struct bench_dev *a,
                                            const struct bench_dev *b, const char *unit, bool higher,
                                            const struct p2p_link *link, uint64_t bytes) {
        char subject[48];
        snprintf(subject, sizeof(subject), "gpu%d->gpu%d", a->index, b->index);
        struct measurement *m = bench_measurement_new(rep, "p2p", name, subject, unit, higher);
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
                    (r = ops->copy_peer(p->b->ctx, p->dst_b, p->a->ctx, p->src_a, p->bytes)) < 0 ||
                    (r = ops->copy_peer(p->a->ctx, p->dst_a, p->b->ctx, p->src_b, p->bytes)) < 0 ||
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

static void run_pair(const struct bench_ctx *ctx, struct bench_report *rep, struct bench_dev *a, struct bench_dev *b,
                     uint64_t bytes, uint32_t *host) {
        const struct dev_ops *ops = ctx->ops;
        struct p2p_link link;
        find_link(ctx, a, b, &link);
        unsigned reps = bench_reps(ctx, P2P_DEFAULT_REPS), warmup = bench_warmup(ctx, P2P_DEFAULT_WARMUP);
        struct measurement *uni = pair_measurement(rep, "write_uni", a, b, "GB/s", true, &link, bytes);
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
        struct p2p_pair p = {.ctx = ctx, .a = a, .b = b, .bytes = bytes};
        double *samples = calloc(reps, sizeof(double));
        if (!samples) {
                measurement_fail(uni, STATUS_ERROR, "out of memory");
                return;
        }
        if ((r = ops->alloc(a->ctx, bytes, &p.src_a)) < 0 || (r = ops->alloc(b->ctx, bytes, &p.dst_b)) < 0 ||
            (r = ops->alloc(b->ctx, bytes, &p.src_b)) < 0 || (r = ops->alloc(a->ctx, bytes, &p.dst_a)) < 0) {
                measurement_fail(uni, r == -ENOMEM ? STATUS_SKIP : STATUS_ERROR, "allocating 4 x %" PRIu64 " bytes: %s (try a smaller --size)",
                                 bytes, bench_dev_error(ctx));
                goto out;
        }
        if ((r = fill(ctx, a, p.src_a, bytes, 0x5eed0001u, host)) < 0 || (r = fill(ctx, b, p.src_b, bytes, 0x5eed0002u, host)) < 0) {
                measurement_fail(uni, STATUS_ERROR, "filling the source: %s", bench_dev_error(ctx));
                goto out;
        }

        uni->peak = link.peak_gbps;
        snprintf(uni->peak_source, sizeof(uni->peak_source), "%s", link.peak_source);
        if (bench_time_reps(ctx, a, uni, warmup, reps, enqueue_uni, &p, (double)bytes / 1e9, samples) == 0)
                verify(ctx, b, p.dst_b, bytes, 0x5eed0001u, host, uni);

        struct measurement *bi = pair_measurement(rep, "write_bidir", a, b, "GB/s", true, &link, bytes);
        bi->peak = 2 * link.peak_gbps;
        snprintf(bi->peak_source, sizeof(bi->peak_source), "%.70s, both directions", link.peak_source);
        if (time_bidir(ctx, &p, bi, warmup, reps, samples) == 0) {
                verify(ctx, a, p.dst_a, bytes, 0x5eed0002u, host, bi);
                if (bi->verified) {
                        bi->verified = false;
                        verify(ctx, b, p.dst_b, bytes, 0x5eed0001u, host, bi);
                }
        }

        struct measurement *lat = pair_measurement(rep, "latency", a, b, "us", false, &link, P2P_LAT_BYTES);
        /* bench_time_reps' samples are work / s, here copies per second; 1e6 over that is
         * microseconds per copy */
        if (bench_time_reps(ctx, a, lat, warmup, reps, enqueue_lat, &p, P2P_LAT_COPIES, samples) == 0) {
                for (size_t i = 0; i < lat->n_samples; i++)
                        lat->samples[i] = 1e6 / lat->samples[i];
                lat->verified = true; /* 4 bytes of the verified buffers */
        }
out:
        free(samples);
        ops->free(a->ctx, p.src_a);
        ops->free(b->ctx, p.dst_b);
        ops->free(b->ctx, p.src_b);
        ops->free(a->ctx, p.dst_a);
}

static void p2p_run(const struct bench_ctx *ctx, struct bench_report *rep) {
        int *idx = NULL;
        size_t n = 0;
        if (bench_dev_indices(ctx, rep, "p2p", &idx, &n) < 0)
                return;
        if (n < 2) {
                struct measurement *m = bench_measurement_new(rep, "p2p", "pairs", "node", "", true);
                measurement_fail(m, STATUS_SKIP, "p2p needs two or more GPUs, %zu selected", n);
                free(idx);
                return;
        }
        uint64_t bytes = ctx->opt && ctx->opt->size_bytes ? ctx->opt->size_bytes : P2P_DEFAULT_BYTES;
        bytes &= ~(uint64_t)3;
        struct bench_dev *devs = calloc(n, sizeof(*devs));
        uint32_t *host = NULL;
        if (!devs || bytes < 4 || !(host = malloc(bytes))) {
                struct measurement *m = bench_measurement_new(rep, "p2p", "pairs", "node", "", true);
                measurement_fail(m, STATUS_ERROR, bytes < 4 ? "size %" PRIu64 " bytes: at least 4" : "out of memory (%" PRIu64 " bytes)",
                                 bytes);
                goto out;
        }
        for (size_t i = 0; i < n; i++)
                if (bench_dev_open(ctx, rep, "p2p", idx[i], &devs[i]) < 0)
                        devs[i].ctx = NULL;
        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++)
                        if (i != j && devs[i].ctx && devs[j].ctx)
                                run_pair(ctx, rep, &devs[i], &devs[j], bytes, host);
out:
        for (size_t i = 0; devs && i < n; i++)
                bench_dev_close(ctx, &devs[i]);
        free(devs);
        free(host);
        free(idx);
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

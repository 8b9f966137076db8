#include "bench/probes.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "bench/baselines.h"
#include "bench/bench.h"
#include "bench/bench_devutil.h"
#include "bench/runner.h"
#include "core/fsroot.h"
#include "core/strparse.h"
#include "sys/facts.h"

#define MIB (UINT64_C(1) << 20)
#define FUNC_BYTES (64 * MIB)
#define XFER_BYTES (64 * MIB)
#define XFER_WARMUP 1
#define XFER_REPS 5
/* The link under load: back-to-back H2D copies for this long, reading the link after each
 * copy is enqueued (while it is in flight). GPUs leave their idle link speed within a few
 * ms of traffic; 200 ms of copies is ~150 reads on a Gen5 x16 link. */
#define LOAD_MS 200.0
#define LOAD_MIN_READS 4
#define LOAD_MAX_COPIES 4000
#define MEM_BYTES (256ull << 20) /* per array: past any GPU's L2 (B200: 126 MB); halved on ENOMEM */
#define MEM_WARMUP 1
#define MEM_REPS 5
#define P2P_BYTES (32 * MIB)
#define P2P_WARMUP 1
#define P2P_REPS 3
#define LOCAL 256

/* The root the children read the link under load from (they inherit it across fork). */
static struct fsroot *probe_fs;

static double now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint32_t fill_word(uint32_t seed, uint64_t i) { return seed ^ (uint32_t)(i * 2654435761ull); }

/* ---- pure helpers ---------------------------------------------------------------- */

/* Split "dddd:bb:dd.f" (any domain width, or none) into its domain and "bb:dd.f". */
static const char *split_bus(const char *addr, unsigned long *domain) {
        const char *first = strchr(addr, ':');
        *domain = 0;
        if (first && strchr(first + 1, ':')) {
                *domain = strtoul(addr, NULL, 16);
                return first + 1;
        }
        return addr;
}

bool probe_same_bus(const char *a, const char *b) {
        if (!a || !b || !*a || !*b)
                return false;
        /* Some APIs omit the PCI domain or print 8 hex digits of it. */
        unsigned long da, db;
        const char *ra = split_bus(a, &da), *rb = split_bus(b, &db);
        return da == db && strcasecmp(ra, rb) == 0;
}

/* The PCI address in a subject "gpu0 (0000:1b:00.0)", "" when none. */
static void subject_bus(const char *subject, char *buf, size_t size) {
        buf[0] = '\0';
        const char *open = strchr(subject, '(');
        if (!open)
                return;
        size_t n = strcspn(open + 1, ")");
        snprintf(buf, size, "%.*s", (int)n, open + 1);
}

const struct measurement *probe_find(const struct probe_facts *p, const char *bench, const char *name,
                                     const char *bus, const struct measurement *after) {
        if (!p)
                return NULL;
        size_t i = after ? (size_t)(after - p->rep.m) + 1 : 0;
        for (; i < p->rep.n; i++) {
                const struct measurement *m = &p->rep.m[i];
                char b[32];
                subject_bus(m->subject, b, sizeof(b));
                if (!strcmp(m->bench, bench) && !strcmp(m->name, name) && probe_same_bus(b, bus))
                        return m;
        }
        return NULL;
}

const char *probe_param(const struct measurement *m, const char *key) {
        for (size_t i = 0; m && i < m->n_params; i++)
                if (!strcmp(m->params[i].key, key))
                        return m->params[i].value;
        return "";
}

bool probes_wanted_by(const char *check_id) {
        return strncmp(check_id, "device.", 7) == 0 || strcmp(check_id, "pcie.link_under_load") == 0;
}

static size_t count_probed(const struct probe_facts *p) {
        size_t n = 0;
        for (size_t i = 0; i < p->rep.n; i++) {
                const struct measurement *m = &p->rep.m[i];
                char b[32];
                subject_bus(m->subject, b, sizeof(b));
                if (!strcmp(m->bench, "functional") && (!strcmp(m->name, "functional") || (!strcmp(m->name, "open") && b[0])))
                        n++;
        }
        return n;
}

bool probes_no_gpu(const struct probe_facts *p, char *why, size_t size) {
        why[0] = '\0';
        if (!p) {
                snprintf(why, size, "the device probes did not run");
                return true;
        }
        if (p->skip_reason[0]) {
                snprintf(why, size, "%s", p->skip_reason);
                return true;
        }
        if (count_probed(p))
                return false;
        const struct probe_run *fr = &p->runs[PROBE_FUNCTIONAL];
        if (fr->note[0]) {
                snprintf(why, size, "the functional probe failed: %s", fr->note);
                return true;
        }
        const struct measurement *backend = NULL, *first_dev = NULL;
        size_t devices = 0, cpu_like = 0;
        for (size_t i = fr->first; i < fr->first + fr->count && i < p->rep.n; i++) {
                const struct measurement *m = &p->rep.m[i];
                if (!strcmp(m->name, "backend"))
                        backend = m;
                if (!strcmp(m->name, "device")) {
                        devices++;
                        first_dev = first_dev ? first_dev : m;
                        /* PoCL's CPU device: OpenCL, no PCI address, memory shared with the host */
                        if (!strcmp(probe_param(m, "backend"), "opencl") && !probe_param(m, "pci_bus_id")[0] &&
                            !strcmp(probe_param(m, "unified_memory"), "yes"))
                                cpu_like++;
                }
        }
        if (backend)
                snprintf(why, size, "no GPU device for the probes: %s", backend->summary);
        else if (devices && cpu_like == devices)
                snprintf(why, size, "no GPU device for the probes (only a CPU OpenCL device: %s)",
                         probe_param(first_dev, "name"));
        else if (devices)
                snprintf(why, size, "no GPU device for the probes: the %s backend shows %zu device(s) (%s%s%s), none of them "
                         "an NVIDIA GPU of this node",
                         probe_param(first_dev, "backend"), devices, probe_param(first_dev, "name"),
                         probe_param(first_dev, "pci_bus_id")[0] ? " at " : "", probe_param(first_dev, "pci_bus_id"));
        else
                snprintf(why, size, "no GPU device for the probes");
        return true;
}

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

static size_t work_items(const struct bench_dev *d, uint64_t n) {
        size_t cu = d->info.compute_units ? d->info.compute_units : 1;
        size_t want = cu * 2048, max = (size_t)((n + LOCAL - 1) / LOCAL) * LOCAL;
        return want < max ? want : max;
}

struct fill_run {
        struct dev_buf *buf;
        uint32_t seed;
        uint64_t bytes;
};

static int fill_enqueue(const struct bench_ctx *ctx, struct bench_dev *d, void *arg) {
        struct fill_run *r = arg;
        struct dev_arg args[] = {{.kind = DEV_ARG_BUF, .v.buf = r->buf},
                                 {.kind = DEV_ARG_U32, .v.u32 = r->seed},
                                 {.kind = DEV_ARG_U64, .v.u64 = r->bytes / 4}};
        return ctx->ops->launch(d->ctx, "fill_u32", work_items(d, r->bytes / 4), LOCAL, args, 3);
}

/* Compare host with the fill pattern of seed; fills m->verify_error or sets verified. */
static void verify_words(const uint32_t *host, uint64_t bytes, uint32_t seed, const char *where, struct measurement *m) {
        for (uint64_t i = 0; i < bytes / 4; i++)
                if (host[i] != fill_word(seed, i)) {
                        snprintf(m->verify_error, sizeof(m->verify_error), "word %" PRIu64 "%s is 0x%08x, expected 0x%08x",
                                 i, where, host[i], fill_word(seed, i));
                        return;
                }
        m->verified = true;
}

/* Read d's buffer back into host and verify it against seed. */
static int read_verify(const struct bench_ctx *ctx, struct bench_dev *d, struct dev_buf *buf, uint64_t bytes,
                       uint32_t seed, uint32_t *host, const char *where, struct measurement *m) {
        int e;
        if ((e = ctx->ops->copy_d2h(d->ctx, host, buf, 0, bytes)) < 0 || (e = ctx->ops->synchronize(d->ctx)) < 0) {
                measurement_fail(m, STATUS_ERROR, "reading the result back: %s", bench_dev_error(ctx));
                return e;
        }
        verify_words(host, bytes, seed, where, m);
        return 0;
}

/* functional: allocation, a kernel, its result. */
static void functional_one(const struct bench_ctx *ctx, struct bench_report *rep, struct bench_dev *d, uint32_t *host) {
        const struct dev_ops *ops = ctx->ops;
        uint64_t bytes = cap_alloc(d, FUNC_BYTES);
        struct measurement *m = bench_measurement_new(rep, "functional", "functional", d->subject, "GB/s", true);
        measurement_param(m, "size_bytes", "%" PRIu64, bytes);
        measurement_param(m, "kernel", "fill_u32");
        measurement_param(m, "device", "%.46s", d->info.name);
        struct fill_run r = {.seed = 0xf00d0000u + (uint32_t)d->index, .bytes = bytes};
        double sample;
        int e;
        if ((e = ops->alloc(d->ctx, bytes, &r.buf)) < 0) {
                measurement_fail(m, STATUS_ERROR, "allocating %" PRIu64 " bytes: %s", bytes, bench_dev_error(ctx));
                return;
        }
        if ((e = ops->memset(d->ctx, r.buf, 0, bytes)) < 0 || (e = ops->synchronize(d->ctx)) < 0)
                measurement_fail(m, STATUS_ERROR, "clearing the buffer: %s", bench_dev_error(ctx));
        else if (bench_time_reps(ctx, d, m, 0, 1, fill_enqueue, &r, (double)bytes / 1e9, &sample) == 0)
                (void)read_verify(ctx, d, r.buf, bytes, r.seed, host, "", m);
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

/* ---- transfer and the link under load ---- */

bool probe_link_best(const struct facts *f, const struct pci_dev *p, unsigned *ret_mts, unsigned *ret_width) {
        *ret_mts = *ret_width = 0;
        if (!p || !p->have_link || !p->max_speed_mts)
                return false;
        *ret_mts = p->max_speed_mts;
        *ret_width = p->max_width;
        /* The port above caps what the link can train to (a Gen5 GPU in a Gen4 slot). */
        if (f && p->parent >= 0 && (size_t)p->parent < f->pci.n) {
                const struct pci_dev *up = &f->pci.devs[p->parent];
                if (up->have_link && up->max_speed_mts && up->max_speed_mts < *ret_mts)
                        *ret_mts = up->max_speed_mts;
                if (up->have_link && up->max_width && up->max_width < *ret_width)
                        *ret_width = up->max_width;
        }
        return true;
}

static void set_link_peak(const struct bench_ctx *ctx, const struct bench_dev *d, struct measurement *m) {
        static const unsigned gen_mts[] = {0, 2500, 5000, 8000, 16000, 32000, 64000};
        unsigned mts, width;
        if (probe_link_best(ctx->facts, d->pci, &mts, &width) && width) {
                m->peak = bench_pcie_gbps(mts, width);
                snprintf(m->peak_source, sizeof(m->peak_source), "PCIe link of %s at its best: Gen%u x%u (sysfs max_link_*)",
                         d->pci->addr, pcie_gen_from_mts(mts), width);
        } else if (d->model && d->model->pcie_gen > 0 && d->model->pcie_gen <= 6 && d->model->pcie_width) {
                m->peak = bench_pcie_gbps(gen_mts[d->model->pcie_gen], d->model->pcie_width);
                snprintf(m->peak_source, sizeof(m->peak_source), "%.50s: PCIe Gen%u x%u (data/gpus.json)", d->model->name,
                         d->model->pcie_gen, d->model->pcie_width);
        }
}

static int read_link(const struct pci_dev *p, unsigned *mts, unsigned *width) {
        char buf[64];
        int r = fsroot_read_strf(probe_fs, buf, sizeof(buf), "/sys/bus/pci/devices/%s/current_link_speed", p->addr);
        if (r < 0 || (r = parse_link_speed(buf, mts)) < 0)
                return r;
        int w;
        r = fsroot_read_strf(probe_fs, buf, sizeof(buf), "/sys/bus/pci/devices/%s/current_link_width", p->addr);
        if (r < 0)
                return r;
        if (parse_int(buf, &w) < 0 || w < 0 || w > 32)
                return -EINVAL;
        *width = (unsigned)w;
        return 0;
}

static void link_under_load(const struct bench_ctx *ctx, struct bench_report *rep, struct bench_dev *d,
                            struct copy_run *r) {
        struct measurement *m = bench_measurement_new(rep, "pcie", "link_under_load", d->subject, "GT/s", true);
        if (!d->pci || !d->pci->have_link || !probe_fs) {
                measurement_fail(m, STATUS_SKIP, "sysfs shows no PCIe link attributes for %s",
                                 d->pci ? d->pci->addr : d->subject);
                return;
        }
        double *speeds = calloc(LOAD_MAX_COPIES, sizeof(double));
        if (!speeds) {
                measurement_fail(m, STATUS_ERROR, "out of memory");
                return;
        }
        r->h2d = true;
        size_t reads = 0, copies = 0;
        unsigned min_width = UINT_MAX;
        double start = now_ms(), elapsed = 0;
        int e = 0, read_err = 0;
        while (copies < LOAD_MAX_COPIES) {
                if ((e = ctx->ops->copy_h2d(d->ctx, r->dev, 0, r->host, r->bytes)) < 0)
                        break;
                copies++;
                /* the copy is in flight on the device's queue: this is the link under load */
                unsigned mts = 0, width = 0;
                if ((read_err = read_link(d->pci, &mts, &width)) < 0) {
                        (void)ctx->ops->synchronize(d->ctx); /* the failure is the read's, ignoring */
                        break;
                }
                speeds[reads++] = mts / 1000.0;
                if (width < min_width)
                        min_width = width;
                if ((e = ctx->ops->synchronize(d->ctx)) < 0)
                        break;
                elapsed = now_ms() - start;
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

static void transfer_one(const struct bench_ctx *ctx, struct bench_report *rep, struct bench_dev *d, uint32_t *check) {
        const struct dev_ops *ops = ctx->ops;
        uint64_t bytes = cap_alloc(d, XFER_BYTES);
        struct copy_run r = {.bytes = bytes};
        double samples[XFER_REPS];
        int e = ops->alloc(d->ctx, bytes, &r.dev);
        if (e == 0 && (e = ops->host_alloc(d->ctx, bytes, true, &r.host)) < 0)
                r.host = NULL;
        for (int h2d = 1; h2d >= 0; h2d--) {
                struct measurement *m = bench_measurement_new(rep, "transfer", h2d ? "h2d_pinned" : "d2h_pinned", d->subject,
                                                              "GB/s", true);
                measurement_param(m, "size_bytes", "%" PRIu64, bytes);
                measurement_param(m, "device", "%.46s", d->info.name);
                set_link_peak(ctx, d, m);
                if (e < 0) {
                        measurement_fail(m, STATUS_ERROR, "allocating %" PRIu64 " bytes (device and pinned host): %s", bytes,
                                         bench_dev_error(ctx));
                        continue;
                }
                uint32_t seed = 0x7a000000u + (uint32_t)d->index * 2 + (uint32_t)h2d;
                uint32_t *host = r.host;
                int s;
                r.h2d = h2d;
                if (h2d) {
                        for (uint64_t i = 0; i < bytes / 4; i++)
                                host[i] = fill_word(seed, i);
                        s = ops->memset(d->ctx, r.dev, 0, bytes);
                } else {
                        memset(host, 0, bytes);
                        struct fill_run f = {.buf = r.dev, .seed = seed, .bytes = bytes};
                        s = fill_enqueue(ctx, d, &f);
                }
                if (s < 0 || (s = ops->synchronize(d->ctx)) < 0) {
                        measurement_fail(m, STATUS_ERROR, "preparing the copy: %s", bench_dev_error(ctx));
                        continue;
                }
                if (bench_time_reps(ctx, d, m, XFER_WARMUP, XFER_REPS, copy_enqueue, &r, (double)bytes / 1e9, samples) < 0)
                        continue;
                if (h2d)
                        (void)read_verify(ctx, d, r.dev, bytes, seed, check, " on the device", m);
                else
                        verify_words(host, bytes, seed, " on the host", m);
        }
        if (e == 0)
                link_under_load(ctx, rep, d, &r);
        else {
                struct measurement *m = bench_measurement_new(rep, "pcie", "link_under_load", d->subject, "GT/s", true);
                measurement_fail(m, STATUS_ERROR, "no load to read the link under: allocation failed");
        }
        if (r.host)
                ops->host_free(d->ctx, r.host, true);
        if (r.dev)
                ops->free(d->ctx, r.dev);
}

static void transfer_run(const struct bench_ctx *ctx, struct bench_report *rep) {
        struct bench_dev *devs;
        size_t n;
        open_gpus(ctx, rep, "transfer", false, &devs, &n);
        uint32_t *check = n ? malloc(XFER_BYTES) : NULL;
        for (size_t i = 0; i < n; i++) {
                if (!check) {
                        struct measurement *m = bench_measurement_new(rep, "transfer", "h2d_pinned", devs[i].subject, "GB/s", true);
                        measurement_fail(m, STATUS_ERROR, "out of memory (host buffer)");
                        continue;
                }
                transfer_one(ctx, rep, &devs[i], check);
        }
        free(check);
        close_gpus(ctx, devs, n);
}

/* ---- memory: the memory benchmark's triad, at the probe's size and repetitions ---- */

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

static void memory_run(const struct bench_ctx *ctx, struct bench_report *rep) {
        int idx[64];
        size_t n = node_gpu_indices(ctx, idx, sizeof(idx) / sizeof(idx[0]));
        if (n == 0)
                return; /* device.functional says why no GPU was probed */
        const struct bench_options opt = {.gpus = idx, .n_gpus = n, .size_bytes = MEM_BYTES, .size_share = 16,
                                          .warmup = MEM_WARMUP, .reps = MEM_REPS, .only = "triad"};
        struct bench_ctx fixed = *ctx;
        fixed.opt = &opt;
        bench_memory.run(&fixed, rep);
}

/* ---- p2p: every ordered pair copies and verifies ---- */

struct peer_bufs {
        struct dev_buf *src, *dst;
        uint32_t seed;
        bool ok;
};

struct peer_run {
        struct bench_dev *a, *b;
        struct peer_bufs *pa, *pb;
        uint64_t bytes;
};

static int peer_enqueue(const struct bench_ctx *ctx, struct bench_dev *d, void *arg) {
        struct peer_run *p = arg;
        (void)d;
        return ctx->ops->copy_peer(p->b->ctx, p->pb->dst, p->a->ctx, p->pa->src, p->bytes);
}

static void p2p_pair(const struct bench_ctx *ctx, struct bench_report *rep, struct peer_run *p, uint32_t *host) {
        const struct dev_ops *ops = ctx->ops;
        struct measurement *m = bench_measurement_new(rep, "p2p", "write_uni", p->a->subject, "GB/s", true);
        measurement_param(m, "peer", "%s", p->b->subject);
        measurement_param(m, "size_bytes", "%" PRIu64, p->bytes);
        if (!p->pa->ok || !p->pb->ok) {
                measurement_fail(m, STATUS_ERROR, "no buffers on %s: see its setup error", !p->pa->ok ? p->a->subject : p->b->subject);
                return;
        }
        int e = ops->p2p_enable(p->a->ctx, p->b->ctx);
        if (e == -ENOTSUP) {
                measurement_param(m, "peer_access", "no");
                measurement_fail(m, STATUS_SKIP, "no peer access from %s to %s: %s", p->a->subject, p->b->subject,
                                 bench_dev_error(ctx));
                return;
        }
        if (e < 0) {
                measurement_fail(m, STATUS_ERROR, "enabling peer access: %s", bench_dev_error(ctx));
                return;
        }
        double samples[P2P_REPS];
        if ((e = ops->memset(p->b->ctx, p->pb->dst, 0, p->bytes)) < 0 || (e = ops->synchronize(p->b->ctx)) < 0) {
                measurement_fail(m, STATUS_ERROR, "clearing the destination: %s", bench_dev_error(ctx));
                return;
        }
        if (bench_time_reps(ctx, p->a, m, P2P_WARMUP, P2P_REPS, peer_enqueue, p, (double)p->bytes / 1e9, samples) == 0) {
                char where[64];
                snprintf(where, sizeof(where), " on %s", p->b->subject);
                (void)read_verify(ctx, p->b, p->pb->dst, p->bytes, p->pa->seed, host, where, m);
        }
}

static void p2p_run(const struct bench_ctx *ctx, struct bench_report *rep) {
        const struct dev_ops *ops = ctx->ops;
        struct bench_dev *devs;
        size_t n;
        open_gpus(ctx, rep, "p2p", false, &devs, &n);
        if (n < 2) {
                struct measurement *m = bench_measurement_new(rep, "p2p", "pairs", "node", "", true);
                measurement_fail(m, STATUS_SKIP, "p2p needs two or more GPUs, %zu opened", n);
                close_gpus(ctx, devs, n);
                return;
        }
        uint64_t bytes = P2P_BYTES;
        for (size_t i = 0; i < n; i++)
                bytes = cap_alloc(&devs[i], bytes);
        struct peer_bufs *bufs = calloc(n, sizeof(*bufs));
        uint32_t *host = malloc(bytes);
        if (!bufs || !host) {
                struct measurement *m = bench_measurement_new(rep, "p2p", "pairs", "node", "", true);
                measurement_fail(m, STATUS_ERROR, "out of memory");
                goto out;
        }
        for (size_t i = 0; i < n; i++) {
                struct peer_bufs *b = &bufs[i];
                b->seed = 0x9e000000u + (uint32_t)devs[i].index;
                struct fill_run f = {.seed = b->seed, .bytes = bytes};
                int e;
                if ((e = ops->alloc(devs[i].ctx, bytes, &b->src)) < 0 || (e = ops->alloc(devs[i].ctx, bytes, &b->dst)) < 0 ||
                    (f.buf = b->src, e = fill_enqueue(ctx, &devs[i], &f)) < 0 || (e = ops->synchronize(devs[i].ctx)) < 0) {
                        struct measurement *m = bench_measurement_new(rep, "p2p", "setup", devs[i].subject, "GB/s", true);
                        measurement_fail(m, STATUS_ERROR, "allocating and filling 2 x %" PRIu64 " bytes: %s", bytes,
                                         bench_dev_error(ctx));
                        continue;
                }
                b->ok = true;
        }
        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++)
                        if (i != j) {
                                struct peer_run p = {.a = &devs[i], .b = &devs[j], .pa = &bufs[i], .pb = &bufs[j],
                                                     .bytes = bytes};
                                p2p_pair(ctx, rep, &p, host);
                        }
out:
        for (size_t i = 0; bufs && i < n; i++) {
                if (bufs[i].src)
                        ops->free(devs[i].ctx, bufs[i].src);
                if (bufs[i].dst)
                        ops->free(devs[i].ctx, bufs[i].dst);
        }
        free(bufs);
        free(host);
        close_gpus(ctx, devs, n);
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

void probes_run(struct fsroot *fs, const struct facts *f, const char *backend, const char *data_dir,
                unsigned timeout_s, struct probe_facts *ret) {
        init(ret, backend);
        for (size_t i = 0; timeout_s && i < _PROBE_COUNT; i++)
                ret->runs[i].timeout_s = timeout_s;
        double start = now_ms();
        char err[512];
        struct baselines *bl = NULL;
        if (baselines_load(data_dir, &bl, err, sizeof(err)) < 0) {
                char why[256];
                snprintf(why, sizeof(why), "baselines: %.240s", err);
                probes_not_run(ret, why);
                snprintf(ret->backend, sizeof(ret->backend), "%s", backend ? backend : "auto");
                return;
        }
        probe_fs = fs;
        struct bench_options opt = {.backend = ret->backend};
        struct bench_ctx ctx = {.opt = &opt, .facts = f, .baselines = bl};
        size_t probed = 0;
        for (size_t id = 0; id < _PROBE_COUNT; id++) {
                struct probe_run *pr = &ret->runs[id];
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
                bench_run_child(&probe_infos[id], &ctx, 0, &ret->rep, &res);
                bench_judge_range(&ret->rep, res.first, f, bl);
                pr->ran = true;
                pr->duration_ms = res.duration_ms;
                pr->first = res.first;
                pr->count = res.count;
                snprintf(pr->backend, sizeof(pr->backend), "%s", res.backend);
                snprintf(pr->note, sizeof(pr->note), "%s", res.note);
                if (id == PROBE_FUNCTIONAL)
                        probed = count_probed(ret);
        }
        /* GPUs of one node against each other, as gpuvet bench does (a spread of ~5% is
         * normal, gpu-specs §4): catches one slow GPU where no baseline exists. */
        bench_compare_siblings(&ret->rep, 0.10);
        baselines_free(bl);
        probe_fs = NULL;
        ret->duration_ms = now_ms() - start;
}

void probes_done(struct probe_facts *p) {
        if (p)
                bench_report_done(&p->rep);
}

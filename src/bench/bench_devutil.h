/* Helpers shared by the device benchmarks (bench_memory.c, bench_compute.c,
 * bench_transfer.c): which devices to run on, their names in reports, the GPU model and
 * PCI device behind an index (for the peaks), and one timed repetition loop.
 * Backend-agnostic: only struct dev_ops is used, so CUDA and OpenCL run the same code. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/bench.h"

struct pci_dev;

struct bench_dev {
        int index;
        struct dev_info info;
        char subject[48];                 /* "gpu0 (0000:1b:00.0)", "gpu0" */
        const struct gpu_model *model;    /* NULL: unknown (no PCI address, not in gpus.json) */
        const struct pci_dev *pci;        /* NULL when the PCI address is unknown */
        struct dev_ctx *ctx;
};

/* How many devices to run on (opt->gpus, or all) into *ret_n; -ENODEV with a measurement
 * naming the reason in rep when there is no backend or no device. */
int bench_dev_count(const struct bench_ctx *ctx, struct bench_report *rep, const char *bench, size_t *ret_n);
/* The device index of the i-th of them: opt->gpus[i], or i when all run. */
int bench_dev_index(const struct bench_ctx *ctx, size_t i);
/* Fill d for index i (info, subject, model) and open a context. On failure adds an error
 * measurement (name "open") and returns a negative errno. */
int bench_dev_open(const struct bench_ctx *ctx, struct bench_report *rep, const char *bench, int index,
                   struct bench_dev *d);
void bench_dev_close(const struct bench_ctx *ctx, struct bench_dev *d);

/* The backend's last error message. */
const char *bench_dev_error(const struct bench_ctx *ctx);

/* One host<->device copy for bench_time_reps (transfer, and the standard level's transfer
 * probe): copy_enqueue copies bytes between host and dev, H2D when h2d. */
struct copy_run {
        bool h2d, pinned;
        void *host;
        struct dev_buf *dev;
        uint64_t bytes;
};
int copy_enqueue(const struct bench_ctx *ctx, struct bench_dev *d, void *arg);

/* The fill_u32 pattern (kernels.def): word i of a buffer filled with seed. Every device
 * benchmark and probe writes it, from the host or with the kernel, and verifies it. */
static inline uint32_t bench_pattern(uint32_t seed, uint64_t i) { return seed ^ (uint32_t)(i * 2654435761ull); }
void bench_pattern_fill(uint32_t *host, uint64_t bytes, uint32_t seed);
/* Compare host with the pattern of seed: sets m->verified, or m->verify_error ("word N<where>
 * is 0x..., expected 0x..."). */
void bench_verify_words(const uint32_t *host, uint64_t bytes, uint32_t seed, const char *where, struct measurement *m);
/* Read buf back into host, then bench_verify_words; a failed read is an error measurement. */
int bench_read_verify(const struct bench_ctx *ctx, struct bench_dev *d, struct dev_buf *buf, uint64_t bytes,
                      uint32_t seed, uint32_t *host, const char *where, struct measurement *m);

/* The fill_u32 kernel over a buffer, as a bench_enqueue_fn (arg: struct bench_fill); not
 * waited for. */
struct bench_fill {
        struct dev_buf *buf;
        uint32_t seed;
        uint64_t bytes;
};
int bench_fill_enqueue(const struct bench_ctx *ctx, struct bench_dev *d, void *arg);

/* Repetitions and warm-up from the options, or the benchmark's defaults. */
unsigned bench_reps(const struct bench_ctx *ctx, unsigned def);
unsigned bench_warmup(const struct bench_ctx *ctx, unsigned def);

/* One timed repetition: enqueue the work between two events and wait. */
typedef int (*bench_enqueue_fn)(const struct bench_ctx *ctx, struct bench_dev *d, void *arg);

/* Run warmup + reps repetitions of fn, each timed on the device with events; samples[i] =
 * work / seconds (work: bytes, FLOPs ... per repetition, scaled by 1e-9 by the caller's
 * unit choice). Returns 0, or a negative errno with the backend's message in the
 * measurement (status error). samples holds reps entries. */
int bench_time_reps(const struct bench_ctx *ctx, struct bench_dev *d, struct measurement *m, unsigned warmup,
                    unsigned reps, bench_enqueue_fn fn, void *arg, double work_per_rep, double *samples);

/* The PCIe peak of one direction for d's link at its best (sysfs max_link_*, capped by the
 * port above: pci_link_best), else its model's (data/gpus.json): m->peak and
 * m->peak_source. The best, not the current link: an idle GPU drops its link to Gen1 to
 * save power, so the speed read before a copy says nothing of what it can carry. Nothing
 * is set when neither is known. */
void bench_set_pcie_peak(const struct bench_ctx *ctx, const struct bench_dev *d, struct measurement *m);
/* That peak in GB/s (0: unknown), its source written to source. */
double bench_pcie_peak(const struct bench_ctx *ctx, const struct bench_dev *d, char *source, size_t size);



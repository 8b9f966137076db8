/* The GEMM load of `gpuvet burn --mode gemm`: one square matrix product D = A^T B run over
 * and over on one GPU, its result checked on demand (docs/burn.md, "gemm"). A burn worker
 * drives one per GPU: open, then enqueue / wait in a loop, verify every Nth product, close.
 *
 * CUDA: cuBLASLt (bench/matmul.h) on the backend's stream, one algorithm chosen at open
 * from the heuristic with split-K reductions excluded (so the same GPU model gives the same
 * bits at every run). OpenCL: the gemm_f32 / gemm_f64 kernels (kernels/gpuvet.cl).
 *
 * The inputs come from the seed alone (bench/gemm_ref.h: values exact in every type), so
 * every GPU given the same seed, precision and n multiplies the same matrices, and since
 * every sum but FP8's is exact before D is rounded, every correct GPU produces the same D
 * bits: gemm_check.digest is comparable across GPUs (the parent compares them), within one
 * gemm_load_fingerprint.
 *
 * Errors are values: 0 or a negative errno, the message (naming the vendor call and its
 * code) in gemm_load_error(). Nothing here prints. Not thread-safe: one thread drives a
 * load. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/device.h"

enum burn_precision {
        BURN_FP64,
        BURN_FP32,
        BURN_TF32,
        BURN_BF16,
        BURN_FP16,
        BURN_FP8,
        _BURN_PRECISION_COUNT,
        _BURN_PRECISION_INVALID = -1,
};

/* "fp64" ... "fp8"; NULL for a value out of range. */
const char *burn_precision_name(enum burn_precision p);
/* The precision named s (the names above); _BURN_PRECISION_INVALID otherwise. */
enum burn_precision burn_precision_parse(const char *s);

struct gemm_load_options {
        enum burn_precision precision;
        /* 0: chosen per device, big enough to keep it busy, small enough to fit (8192 on
         * CUDA, 4096 on OpenCL GPUs, 1024 on CPU devices, halved until A, B and D take at
         * most a quarter of the device's memory); else a multiple of 16 from 16 to 65536. */
        unsigned n;
        uint64_t seed; /* the inputs (0: the inputs bench gemm multiplies) */
};

/* What one gemm_load_verify found. Counts are elements of D. */
struct gemm_check {
        uint64_t elements_sampled; /* compared with the host reference */
        uint64_t faulty_vs_host;   /* of those, outside the precision's tolerance */
        uint64_t elements_compared; /* compared bit for bit with the first verified result
                                     * (0 at the first verification: it becomes that result) */
        uint64_t faulty_vs_first;  /* of those, with other bits */
        uint64_t digest;           /* of all of D's bytes, column-major (never 0) */
        /* The first faulty element: the first found against the host reference, else the
         * first (column-major) that differs from the first result; expected is the host
         * reference rounded to D's type. Meaningful when either faulty count is nonzero. */
        struct {
                uint32_t row, col;
                double expected, got;
        } fault;
};

struct gemm_load;

/* Prepare the product on the context's device (info: that device's dev_info): allocate A,
 * B and D, upload A and B, choose the algorithm or kernel, precompute the host reference
 * of the sample. Returns 0 and *ret, or a negative errno with the reason in err:
 * -ENOTSUP the precision cannot run here (no kernel for it on this backend, a compute
 * capability too old, fp64 missing, cuBLASLt refusing it); -ENOENT cuBLASLt is not
 * installed (CUDA); -EINVAL bad options (n); -ENOMEM device or host memory; -ENODATA
 * cuBLASLt has no algorithm for the shape; -EIO a failed call. */
int gemm_load_open(const struct dev_ops *ops, struct dev_backend *b, struct dev_ctx *ctx, const struct dev_info *info,
                   const struct gemm_load_options *o, struct gemm_load **ret, char *err, size_t errsize);

/* One line for reports: "cuBLASLt libcublasLt.so.13 130100, fp16: A/B/D fp16, compute 32F,
 * n=8192, algorithm 1 of 4 (reduction scheme NONE)", "OpenCL gemm_f32, n=1024, a 16 x 6
 * tile ...". */
const char *gemm_load_describe(const struct gemm_load *g);
/* Identifies what produces D's bits: backend, precision, n, seed and the algorithm or
 * kernel shape. Two loads with the same fingerprint must produce the same digest. */
uint64_t gemm_load_fingerprint(const struct gemm_load *g);
/* Floating-point operations of one product: 2 n^3. */
double gemm_load_flops(const struct gemm_load *g);
/* The matrix size chosen. */
unsigned gemm_load_n(const struct gemm_load *g);

/* Enqueue products (>= 1) products, asynchronously, bracketed by device events. -EINVAL
 * for 0; -EBUSY when the previous enqueue was not waited for. */
int gemm_load_enqueue(struct gemm_load *g, unsigned products);
/* Wait for the products of the last enqueue; *device_ms (may be NULL) is their time on the
 * device clock, from the start of the first to the end of the last. -EINVAL when nothing
 * was enqueued. */
int gemm_load_wait(struct gemm_load *g, double *device_ms);

/* Copy D (the last product enqueued; waits for it) back and check it (docs/burn.md):
 * (a) the sample against the host reference, (b) every element bit for bit against the
 * first verified result, (c) the digest. A faulty element is a finding, not an error:
 * returns 0 with the counts in *ret; a negative errno only when the check could not run. */
int gemm_load_verify(struct gemm_load *g, struct gemm_check *ret);

/* The message of the last failure ("cublasLtMatmul: CUBLAS_STATUS_EXECUTION_FAILED (13)"). */
const char *gemm_load_error(const struct gemm_load *g);

/* Free everything; NULL is fine. */
void gemm_load_close(struct gemm_load *g);

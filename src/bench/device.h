/* The device backend interface every GPU benchmark uses, with two implementations:
 * CUDA (driver API, libcuda.so.1 loaded by bindings/cuda.h; kernels from the embedded
 * fatbin) and OpenCL (ICD loader libOpenCL.so.1, bindings/opencl.h; kernels from embedded
 * .cl sources).
 *
 * Errors are values: every call returns 0 or a negative code and, on failure, writes a
 * message naming the call and the vendor's own code into the backend's last error
 * (dev_last_error). Nothing here prints. Every call into the vendor library can block on
 * a wedged GPU: benchmarks run in a forked child under a deadline (bench runner), so the
 * backends themselves stay simple. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct dev_backend;   /* a loaded vendor library and its devices */
struct dev_ctx;       /* one device opened for work: context + default queue/stream */
struct dev_buf;       /* device memory */
struct dev_event;     /* a timestamp on the device timeline */

enum dev_kind { DEV_CUDA, DEV_OPENCL, _DEV_KIND_COUNT };

struct dev_info {
        char name[128];
        char vendor[64];
        char pci_bus_id[16];      /* "0000:1b:00.0", "" when the API does not tell */
        char driver_version[64];
        uint64_t global_mem_bytes;
        uint64_t max_alloc_bytes;
        unsigned compute_units;   /* SMs / compute units */
        unsigned clock_mhz;
        int cc_major, cc_minor;   /* CUDA compute capability; 0 for OpenCL */
        bool fp64, fp16;          /* supported in kernels */
        bool unified_memory;      /* host and device share memory (PoCL, integrated GPUs) */
        bool is_cpu;              /* a CPU device (PoCL): measured, never judged as a GPU */
};

/* One kernel argument: a device buffer, or a scalar passed by value. */
struct dev_arg {
        enum { DEV_ARG_BUF, DEV_ARG_U32, DEV_ARG_U64, DEV_ARG_F32, DEV_ARG_F64 } kind;
        union {
                struct dev_buf *buf;
                uint32_t u32;
                uint64_t u64;
                float f32;
                double f64;
        } v;
};

struct dev_ops {
        const char *name; /* "cuda", "opencl" */
        enum dev_kind kind;

        /* Load the library and enumerate devices. -ENOENT: library absent (err says which
         * names were tried); -ENODEV: loaded but no device (the API's own code in err). */
        int (*open)(struct dev_backend **ret, char *err, size_t errsize);
        void (*close)(struct dev_backend *b);
        int (*count)(struct dev_backend *b);
        int (*info)(struct dev_backend *b, int index, struct dev_info *ret);

        int (*ctx_open)(struct dev_backend *b, int index, struct dev_ctx **ret);
        void (*ctx_close)(struct dev_ctx *c);

        int (*alloc)(struct dev_ctx *c, size_t bytes, struct dev_buf **ret);
        void (*free)(struct dev_ctx *c, struct dev_buf *buf);
        /* The device memory free now and in all, in bytes, as the driver sees it (other
         * processes' allocations count as used). -ENOTSUP where the API does not tell
         * (OpenCL: CL_DEVICE_GLOBAL_MEM_SIZE is the total only). */
        int (*mem_info)(struct dev_ctx *c, uint64_t *ret_free_bytes, uint64_t *ret_total_bytes);
        /* Host memory for transfers: pinned (page-locked, DMA-able) or pageable. */
        int (*host_alloc)(struct dev_ctx *c, size_t bytes, bool pinned, void **ret);
        void (*host_free)(struct dev_ctx *c, void *p, bool pinned);

        /* Asynchronous on the context's queue; ordering is the queue's. */
        int (*copy_h2d)(struct dev_ctx *c, struct dev_buf *dst, size_t dst_off, const void *src, size_t bytes);
        int (*copy_d2h)(struct dev_ctx *c, void *dst, struct dev_buf *src, size_t src_off, size_t bytes);
        int (*copy_d2d)(struct dev_ctx *c, struct dev_buf *dst, size_t dst_off, struct dev_buf *src, size_t src_off,
                        size_t bytes);
        /* Peer access between two devices of the same backend; -ENOTSUP when impossible. */
        int (*p2p_enable)(struct dev_ctx *a, struct dev_ctx *b);
        int (*copy_peer)(struct dev_ctx *dst_ctx, struct dev_buf *dst, struct dev_ctx *src_ctx, struct dev_buf *src,
                         size_t bytes);
        int (*memset)(struct dev_ctx *c, struct dev_buf *buf, uint8_t value, size_t bytes);

        /* Launch the named kernel (from the backend's embedded kernels) over global_size
         * work items in groups of local_size (0: the backend picks). */
        int (*launch)(struct dev_ctx *c, const char *kernel, size_t global_size, size_t local_size,
                      const struct dev_arg *args, size_t n_args);

        int (*event_create)(struct dev_ctx *c, struct dev_event **ret);
        void (*event_destroy)(struct dev_ctx *c, struct dev_event *e);
        int (*event_record)(struct dev_ctx *c, struct dev_event *e);
        /* Milliseconds between two recorded events, measured on the device. */
        int (*event_elapsed_ms)(struct dev_ctx *c, struct dev_event *start, struct dev_event *end, double *ret);

        /* Waits for every queue of the context (both, once the second one exists). */
        int (*synchronize)(struct dev_ctx *c);

        /* A second queue (CUDA: stream) of the context, for work that must run concurrently
         * with the default queue: bidirectional transfers. queue 0 is the default queue every
         * call above uses, 1 the second, created at its first use; anything else is -EINVAL.
         * Same semantics as copy_h2d, copy_d2h and event_record on the named queue; the two
         * queues are not ordered with each other (synchronize, then use the data). */
        int (*copy_h2d_on)(struct dev_ctx *c, int queue, struct dev_buf *dst, size_t dst_off, const void *src,
                           size_t bytes);
        int (*copy_d2h_on)(struct dev_ctx *c, int queue, void *dst, struct dev_buf *src, size_t src_off,
                           size_t bytes);
        int (*event_record_on)(struct dev_ctx *c, int queue, struct dev_event *e);
        /* n pairs of events, starts[i] and ends[i] recorded on the same queue: milliseconds
         * from the earliest start to the latest end on the device clock, pairs with nothing
         * enqueued between them left out (0 when none has work). */
        int (*event_span_ms)(struct dev_ctx *c, struct dev_event *const *starts, struct dev_event *const *ends,
                             size_t n, double *ret);

        /* How the backend runs the named kernel on this context's device, as one line of text
         * for reports ("float8 x 8 chains per work item, calibrated: ..."). On OpenCL CPU
         * devices the first call for fma_f32 / fma_f64 calibrates the kernel's vector width
         * (a few hundred milliseconds, cached per device for the process); launch() does the
         * same at the kernel's first launch. A benchmark or burn calls it before its timed
         * loop, so the calibration is not inside it. The memory kernels (copy_f32 ... read_f32)
         * are calibrated at their first launch() only, with that launch's buffers (the extra
         * launches finish before the launch is enqueued, so an event interval around it does
         * not hold them); asked before that, the shape says "not calibrated yet". */
        int (*kernel_shape)(struct dev_ctx *c, const char *kernel, char *out, size_t size);

        /* The message of the last failed call: "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY
         * (out of memory)". */
        const char *(*last_error)(struct dev_backend *b);
};

extern const struct dev_ops dev_ops_cuda;
extern const struct dev_ops dev_ops_opencl;

/* The backend named "cuda", "opencl"; NULL otherwise. "auto" is resolved by the bench
 * command (CUDA when it has a device, else OpenCL). */
const struct dev_ops *dev_ops_by_name(const char *name);

/* What every backend's host_alloc does before it pins: a zero size refused, and a pageable
 * block page-aligned like a pinned one, so that the two differ only in pinning. Returns 0,
 * or a negative errno with err[errsize] saying why. */
static inline int dev_host_alloc_pageable(size_t bytes, void **ret, char *err, size_t errsize) {
        *ret = NULL;
        if (bytes == 0) {
                snprintf(err, errsize, "host allocation of zero bytes");
                return -EINVAL;
        }
        if (posix_memalign(ret, 4096, bytes) != 0) {
                *ret = NULL;
                snprintf(err, errsize, "posix_memalign: out of memory (%zu bytes)", bytes);
                return -ENOMEM;
        }
        return 0;
}

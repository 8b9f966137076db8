/* The CUDA backend of dev_ops: the driver API (libcuda.so.1, bindings/cuda.h), one
 * primary context and one non-blocking stream per opened device, kernels from the fatbin
 * nvcc built from kernels/bench_kernels.cu and embedded in the binary (meson.build).
 *
 * Library: bindings/cuda.h ($GPUVET_CUDA_LIB, else libcuda.so.1). No libcuda at all means
 * no NVIDIA driver; the toolkit's stub libcuda (lib64/stubs) answers cuInit with
 * CUDA_ERROR_STUB_LIBRARY (34): a stub, no driver.
 *
 * Architectures: CUDA 13's nvcc builds for compute capability 7.5 and newer only (sm_70
 * is rejected), and PTX built for compute_75 cannot be JIT-compiled for a 7.0 device, so
 * a Volta GPU gets no CUDA kernels from this binary. Such a device is refused with a
 * message naming the OpenCL backend, which NVIDIA's OpenCL runs on Volta (docs/bench.md,
 * "The Volta question"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bindings/cuda.h"
#include "bench/cuda_raw.h"
#include "bench/device.h"
#include "bindings/cuda_errors.h"
#include "core/array.h"
#include "core/strbuf.h"

/* meson.build: the fatbin, or an empty array in a build without nvcc. */
extern const char embedded_cuda_fatbin[];
extern const size_t embedded_cuda_fatbin_len;

/* The lowest compute capability the fatbin has SASS for (sm_75 with CUDA 13). Newer
 * GPUs than the newest SASS run the embedded PTX through the driver's JIT. */
#define CUDA_MIN_CC_MAJOR 7
#define CUDA_MIN_CC_MINOR 5

#define CUDA_MAX_DEVICES 64
#define CUDA_BLOCK_DEFAULT 256u
#define CUDA_GRID_MAX 0x7fffffffu

/* ---- the kernel table (src/bench/kernels.def) ------------------------------------------- */

struct cuda_kernel {
        const char *name;
        const char *args; /* "buf out, buf in, u64 n" */
};

static const struct cuda_kernel cuda_kernels[] = {
#define KERNEL(name, args, what) {#name, args},
#include "bench/kernels.def"
#undef KERNEL
};
#define CUDA_N_KERNELS (ARRAY_COUNT(cuda_kernels))

/* ---- state ------------------------------------------------------------------------------ */

struct cuda_device {
        CUdevice dev;
        struct dev_info info;
        bool supported; /* compute capability the embedded kernels serve */
};

struct dev_backend {
        struct cuda_lib *fn;
        int driver_version; /* 13000 */
        int n;
        struct cuda_device *devs;
        char err[512];
};

struct dev_ctx {
        struct dev_backend *b;
        int index;
        CUdevice dev;
        CUcontext ctx;
        CUstream stream;
        CUstream stream2;      /* the second stream (copy_h2d_on ...), created at its first use */
        CUmodule module;       /* loaded at the first launch */
        void *image;           /* aligned copy of the fatbin the module came from */
        CUfunction fns[CUDA_N_KERNELS];
};

struct dev_buf {
        CUdeviceptr ptr;
        size_t bytes;
};

struct dev_event {
        CUevent ev;
};

/* ---- errors ------------------------------------------------------------------------------ */

static void cuda_describe(const struct dev_backend *b, CUresult rc, const char **name, const char **text) {
        *name = cuda_error_name(rc);
        *text = cuda_error_text(rc);
        if (*name)
                return;
        /* Codes we do not list: ask the driver, which knows its own. */
        if (b && b->fn && b->fn->cuGetErrorName && b->fn->cuGetErrorName(rc, name) != CUDA_SUCCESS)
                *name = NULL;
        if (b && b->fn && b->fn->cuGetErrorString && b->fn->cuGetErrorString(rc, text) != CUDA_SUCCESS)
                *text = NULL;
}

static int cuda_errno(CUresult rc) {
        switch (rc) {
        case CUDA_ERROR_OUT_OF_MEMORY:
                return -ENOMEM;
        case CUDA_ERROR_INVALID_VALUE:
                return -EINVAL;
        case CUDA_ERROR_NO_DEVICE:
        case CUDA_ERROR_INVALID_DEVICE:
                return -ENODEV;
        case CUDA_ERROR_NOT_SUPPORTED:
        case CUDA_ERROR_PEER_ACCESS_UNSUPPORTED:
        case CUDA_ERROR_NO_BINARY_FOR_GPU:
                return -ENOTSUP;
        case CUDA_ERROR_TIMEOUT:
        case CUDA_ERROR_LAUNCH_TIMEOUT:
                return -ETIMEDOUT;
        default:
                return -EIO;
        }
}

/* printf-style text into b's message (snprintf checks the format). */
#define set_err(b, ...) snprintf((b)->err, sizeof((b)->err), __VA_ARGS__)

/* Record "fn: NAME (text)" (plus context) and return the negative errno for rc. */
static int cuda_fail(struct dev_backend *b, const char *fn, CUresult rc, const char *context) {
        const char *name, *text;
        cuda_describe(b, rc, &name, &text);
        char code[32];
        if (!name) {
                snprintf(code, sizeof(code), "CUDA error %d", rc);
                name = code;
        }
        set_err(b, "%s: %s (%s)%s%s", fn, name, text ? text : "no description", context ? ", " : "",
                context ? context : "");
        return cuda_errno(rc);
}

/* Call a driver function and turn a failure into an error return naming it. */
#define CU_CHECK(b, call_name, args, context)                                          \
        do {                                                                           \
                CUresult rc_ = (b)->fn->call_name args;                                 \
                if (rc_ != CUDA_SUCCESS)                                               \
                        return cuda_fail((b), #call_name, rc_, (context));             \
        } while (0)

/* ---- loading ----------------------------------------------------------------------------- */

static void cuda_close(struct dev_backend *b) {
        if (!b)
                return;
        cuda_lib_free(b->fn);
        free(b->devs);
        free(b);
}

static int cuda_device_info(struct dev_backend *b, struct cuda_device *d) {
        struct dev_info *in = &d->info;
        int v;
        CU_CHECK(b, cuDeviceGetName, (in->name, (int)sizeof(in->name), d->dev), NULL);
        in->name[sizeof(in->name) - 1] = '\0';
        snprintf(in->vendor, sizeof(in->vendor), "NVIDIA");
        char bus[32] = "";
        CU_CHECK(b, cuDeviceGetPCIBusId, (bus, (int)sizeof(bus), d->dev), NULL);
        /* "0000:1B:00.0" -> sysfs form "0000:1b:00.0" */
        for (char *p = bus; *p; p++)
                if (*p >= 'A' && *p <= 'F')
                        *p = (char)(*p - 'A' + 'a');
        snprintf(in->pci_bus_id, sizeof(in->pci_bus_id), "%.15s", bus);
        snprintf(in->driver_version, sizeof(in->driver_version), "CUDA %d.%d", b->driver_version / 1000,
                 (b->driver_version % 1000) / 10);
        size_t total = 0;
        CU_CHECK(b, cuDeviceTotalMem_v2, (&total, d->dev), NULL);
        in->global_mem_bytes = total;
        in->max_alloc_bytes = total;
        CU_CHECK(b, cuDeviceGetAttribute, (&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d->dev), "multiprocessor count");
        in->compute_units = v > 0 ? (unsigned)v : 0;
        CU_CHECK(b, cuDeviceGetAttribute, (&v, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, d->dev), "clock rate");
        in->clock_mhz = v > 0 ? (unsigned)(v / 1000) : 0;
        CU_CHECK(b, cuDeviceGetAttribute, (&in->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->dev),
                 "compute capability");
        CU_CHECK(b, cuDeviceGetAttribute, (&in->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->dev),
                 "compute capability");
        CU_CHECK(b, cuDeviceGetAttribute, (&v, CU_DEVICE_ATTRIBUTE_INTEGRATED, d->dev), "integrated");
        in->unified_memory = v != 0;
        in->fp64 = true;
        in->fp16 = true; /* every cc >= 5.3 has half arithmetic */
        d->supported = in->cc_major > CUDA_MIN_CC_MAJOR ||
                       (in->cc_major == CUDA_MIN_CC_MAJOR && in->cc_minor >= CUDA_MIN_CC_MINOR);
        return 0;
}

static void unsupported_msg(struct dev_backend *b, int index) {
        const struct dev_info *in = &b->devs[index].info;
        set_err(b,
                "GPU %d (%s) has compute capability %d.%d; gpuvet's CUDA kernels are built by CUDA 13 for %d.%d and "
                "newer (Volta and older: use --backend opencl, which NVIDIA's OpenCL driver serves)",
                index, in->name, in->cc_major, in->cc_minor, CUDA_MIN_CC_MAJOR, CUDA_MIN_CC_MINOR);
}

static int cuda_open(struct dev_backend **ret, char *err, size_t errsize) {
        *ret = NULL;
        if (err && errsize)
                err[0] = '\0';
        char dummy[8];
        if (!err || errsize == 0) {
                err = dummy;
                errsize = sizeof(dummy);
        }
        struct dev_backend *b = calloc(1, sizeof(*b));
        if (!b) {
                snprintf(err, errsize, "out of memory");
                return -ENOMEM;
        }
        bool from_env = false;
        const char *name = cuda_lib_name(&from_env);
        char why[512];
        int r = cuda_lib_load(name, CUDA_NEED_COMPUTE, &b->fn, NULL, why, sizeof(why));
        if (r == -ENOENT && from_env)
                snprintf(err, errsize, "cannot load CUDA driver library %s (from $" CUDA_LIB_ENV "): %s", name, why);
        else if (r == -ENOENT)
                snprintf(err, errsize,
                         "no NVIDIA driver: cannot load " CUDA_LIB_DEFAULT " (%s); install the NVIDIA driver, or use "
                         "--backend opencl",
                         why);
        else if (r == -ENOSYS)
                snprintf(err, errsize, "%s: driver too old for gpuvet's CUDA backend", why);
        else if (r < 0)
                snprintf(err, errsize, "%s", why);
        if (r < 0) {
                cuda_close(b);
                return r;
        }
        CUresult rc = b->fn->cuInit(0);
        if (rc == CUDA_ERROR_STUB_LIBRARY) {
                snprintf(err, errsize,
                         "cuInit: CUDA_ERROR_STUB_LIBRARY: %s is the CUDA toolkit's stub library, no driver (the NVIDIA "
                         "driver's libcuda.so.1 must come first in the library path)",
                         name);
                cuda_close(b);
                return -ENOENT;
        }
        if (rc != CUDA_SUCCESS) {
                r = cuda_fail(b, "cuInit", rc, NULL);
                snprintf(err, errsize, "%s", b->err);
                cuda_close(b);
                return r == -EIO || r == -ENODEV ? -ENODEV : r;
        }
        int count = 0;
        rc = b->fn->cuDriverGetVersion(&b->driver_version);
        if (rc == CUDA_SUCCESS)
                rc = b->fn->cuDeviceGetCount(&count);
        if (rc != CUDA_SUCCESS) {
                r = cuda_fail(b, b->driver_version ? "cuDeviceGetCount" : "cuDriverGetVersion", rc, NULL);
                snprintf(err, errsize, "%s", b->err);
                cuda_close(b);
                return r;
        }
        if (count <= 0) {
                snprintf(err, errsize, "cuDeviceGetCount: no CUDA device (%d)", count);
                cuda_close(b);
                return -ENODEV;
        }
        if (count > CUDA_MAX_DEVICES)
                count = CUDA_MAX_DEVICES;
        b->devs = calloc((size_t)count, sizeof(*b->devs));
        if (!b->devs) {
                snprintf(err, errsize, "out of memory");
                cuda_close(b);
                return -ENOMEM;
        }
        int n_supported = 0;
        for (int i = 0; i < count; i++) {
                rc = b->fn->cuDeviceGet(&b->devs[i].dev, i);
                r = rc == CUDA_SUCCESS ? cuda_device_info(b, &b->devs[i]) : cuda_fail(b, "cuDeviceGet", rc, NULL);
                if (r < 0) {
                        snprintf(err, errsize, "GPU %d: %s", i, b->err);
                        cuda_close(b);
                        return r;
                }
                n_supported += b->devs[i].supported;
        }
        b->n = count;
        /* A node of Volta GPUs only: no CUDA kernels can run, so the backend reports no
         * device and `--backend auto` goes on to OpenCL. */
        if (n_supported == 0) {
                unsupported_msg(b, 0);
                snprintf(err, errsize, "%s", b->err);
                cuda_close(b);
                return -ENODEV;
        }
        *ret = b;
        return 0;
}

static int cuda_count(struct dev_backend *b) {
        return b ? b->n : 0;
}

static int cuda_info(struct dev_backend *b, int index, struct dev_info *ret) {
        if (index < 0 || index >= b->n) {
                set_err(b, "no CUDA device %d (%d present)", index, b->n);
                return -ENODEV;
        }
        *ret = b->devs[index].info;
        return 0;
}

/* The shapes are those of kernels/bench_kernels.cu, the same on every GPU. */
static int cuda_kernel_shape(struct dev_ctx *c, const char *kernel, char *out, size_t size) {
        (void)c;
        if (!strcmp(kernel, "fma_f16"))
                snprintf(out, size, "half2 x 4 chains per thread");
        else if (!strncmp(kernel, "fma_", 4))
                snprintf(out, size, "scalar: 8 chains per thread");
        else
                snprintf(out, size, "float4 vectors, grid-stride");
        return 0;
}

static const char *cuda_last_error(struct dev_backend *b) {
        return b ? b->err : "";
}

/* ---- contexts ---------------------------------------------------------------------------- */

/* Primary contexts are per thread current; every call makes its own current first. */
static int ctx_current(struct dev_ctx *c) {
        CU_CHECK(c->b, cuCtxSetCurrent, (c->ctx), NULL);
        return 0;
}

static void cuda_ctx_close(struct dev_ctx *c) {
        if (!c)
                return;
        struct dev_backend *b = c->b;
        /* Teardown failures leave nothing to do but carry on; the first one is kept in
         * the last error so a caller can still see it. */
        if (c->ctx) {
                /* Release by handle even when the context cannot be made current. */
                (void)b->fn->cuCtxSetCurrent(c->ctx);
                if (c->module)
                        (void)b->fn->cuModuleUnload(c->module);
                if (c->stream)
                        (void)b->fn->cuStreamDestroy_v2(c->stream);
                if (c->stream2)
                        (void)b->fn->cuStreamDestroy_v2(c->stream2);
        }
        if (c->ctx)
                (void)b->fn->cuDevicePrimaryCtxRelease_v2(c->dev);
        free(c->image);
        free(c);
}

static int cuda_ctx_open(struct dev_backend *b, int index, struct dev_ctx **ret) {
        *ret = NULL;
        if (index < 0 || index >= b->n) {
                set_err(b, "no CUDA device %d (%d present)", index, b->n);
                return -ENODEV;
        }
        if (!b->devs[index].supported) {
                unsupported_msg(b, index);
                return -ENOTSUP;
        }
        struct dev_ctx *c = calloc(1, sizeof(*c));
        if (!c) {
                set_err(b, "out of memory");
                return -ENOMEM;
        }
        c->b = b;
        c->index = index;
        c->dev = b->devs[index].dev;
        CUresult rc = b->fn->cuDevicePrimaryCtxRetain(&c->ctx, c->dev);
        int r = 0;
        if (rc != CUDA_SUCCESS) {
                c->ctx = NULL;
                r = cuda_fail(b, "cuDevicePrimaryCtxRetain", rc, NULL);
        } else if ((rc = b->fn->cuCtxSetCurrent(c->ctx)) != CUDA_SUCCESS) {
                r = cuda_fail(b, "cuCtxSetCurrent", rc, NULL);
        } else if ((rc = b->fn->cuStreamCreate(&c->stream, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS) {
                c->stream = NULL;
                r = cuda_fail(b, "cuStreamCreate", rc, NULL);
        }
        if (r < 0) {
                char keep[sizeof(b->err)];
                memcpy(keep, b->err, sizeof(keep));
                cuda_ctx_close(c);
                memcpy(b->err, keep, sizeof(keep));
                return r;
        }
        *ret = c;
        return 0;
}

/* ---- memory and copies -------------------------------------------------------------------- */

static int cuda_alloc(struct dev_ctx *c, size_t bytes, struct dev_buf **ret) {
        *ret = NULL;
        if (bytes == 0) {
                set_err(c->b, "cuMemAlloc_v2: zero bytes asked");
                return -EINVAL;
        }
        int r = ctx_current(c);
        if (r < 0)
                return r;
        struct dev_buf *buf = calloc(1, sizeof(*buf));
        if (!buf) {
                set_err(c->b, "out of memory");
                return -ENOMEM;
        }
        CUresult rc = c->b->fn->cuMemAlloc_v2(&buf->ptr, bytes);
        if (rc != CUDA_SUCCESS) {
                free(buf);
                char what[64];
                snprintf(what, sizeof(what), "%zu bytes on GPU %d", bytes, c->index);
                return cuda_fail(c->b, "cuMemAlloc_v2", rc, what);
        }
        buf->bytes = bytes;
        *ret = buf;
        return 0;
}

static void cuda_free(struct dev_ctx *c, struct dev_buf *buf) {
        if (!buf)
                return;
        (void)ctx_current(c); /* as in cuda_event_destroy: free by handle regardless */
        (void)c->b->fn->cuMemFree_v2(buf->ptr);
        free(buf);
}

static int cuda_mem_info(struct dev_ctx *c, uint64_t *ret_free_bytes, uint64_t *ret_total_bytes) {
        *ret_free_bytes = *ret_total_bytes = 0;
        int r = ctx_current(c);
        if (r < 0)
                return r;
        size_t free_bytes = 0, total_bytes = 0;
        char what[32];
        snprintf(what, sizeof(what), "GPU %d", c->index);
        CU_CHECK(c->b, cuMemGetInfo_v2, (&free_bytes, &total_bytes), what);
        *ret_free_bytes = free_bytes;
        *ret_total_bytes = total_bytes;
        return 0;
}

static int cuda_host_alloc(struct dev_ctx *c, size_t bytes, bool pinned, void **ret) {
        if (!pinned || bytes == 0)
                return dev_host_alloc_pageable(bytes, ret, c->b->err, sizeof(c->b->err));
        *ret = NULL;
        int r = ctx_current(c);
        if (r < 0)
                return r;
        void *p = NULL;
        CUresult rc = c->b->fn->cuMemAllocHost_v2(&p, bytes);
        if (rc != CUDA_SUCCESS) {
                char what[64];
                snprintf(what, sizeof(what), "%zu bytes of pinned host memory", bytes);
                return cuda_fail(c->b, "cuMemAllocHost_v2", rc, what);
        }
        *ret = p;
        return 0;
}

static void cuda_host_free(struct dev_ctx *c, void *p, bool pinned) {
        if (!p)
                return;
        if (!pinned) {
                free(p);
                return;
        }
        if (ctx_current(c) == 0)
                (void)c->b->fn->cuMemFreeHost(p);
}

static int check_range(struct dev_backend *b, const char *what, const struct dev_buf *buf, size_t off, size_t bytes) {
        if (!buf || off > buf->bytes || bytes > buf->bytes - off) {
                set_err(b, "%s: %zu bytes at offset %zu outside a buffer of %zu bytes", what, bytes, off,
                        buf ? buf->bytes : 0);
                return -EINVAL;
        }
        return 0;
}

static int cuda_copy_h2d(struct dev_ctx *c, struct dev_buf *dst, size_t dst_off, const void *src, size_t bytes) {
        int r = check_range(c->b, "copy_h2d", dst, dst_off, bytes);
        if (r < 0 || (r = ctx_current(c)) < 0)
                return r;
        CU_CHECK(c->b, cuMemcpyHtoDAsync_v2, (dst->ptr + dst_off, src, bytes, c->stream), NULL);
        return 0;
}

static int cuda_copy_d2h(struct dev_ctx *c, void *dst, struct dev_buf *src, size_t src_off, size_t bytes) {
        int r = check_range(c->b, "copy_d2h", src, src_off, bytes);
        if (r < 0 || (r = ctx_current(c)) < 0)
                return r;
        CU_CHECK(c->b, cuMemcpyDtoHAsync_v2, (dst, src->ptr + src_off, bytes, c->stream), NULL);
        return 0;
}

static int cuda_copy_d2d(struct dev_ctx *c, struct dev_buf *dst, size_t dst_off, struct dev_buf *src, size_t src_off,
                         size_t bytes) {
        int r = check_range(c->b, "copy_d2d", dst, dst_off, bytes);
        if (r < 0 || (r = check_range(c->b, "copy_d2d", src, src_off, bytes)) < 0 || (r = ctx_current(c)) < 0)
                return r;
        CU_CHECK(c->b, cuMemcpyDtoDAsync_v2, (dst->ptr + dst_off, src->ptr + src_off, bytes, c->stream), NULL);
        return 0;
}

static int enable_one_way(struct dev_ctx *from, struct dev_ctx *to) {
        struct dev_backend *b = from->b;
        int r = ctx_current(from);
        if (r < 0)
                return r;
        CUresult rc = b->fn->cuCtxEnablePeerAccess(to->ctx, 0);
        if (rc != CUDA_SUCCESS && rc != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
                char what[48];
                snprintf(what, sizeof(what), "GPU %d -> GPU %d", from->index, to->index);
                return cuda_fail(b, "cuCtxEnablePeerAccess", rc, what);
        }
        return 0;
}

static int cuda_p2p_enable(struct dev_ctx *a, struct dev_ctx *b_) {
        struct dev_backend *b = a->b;
        if (a == b_ || a->dev == b_->dev) {
                set_err(b, "p2p_enable: GPU %d with itself", a->index);
                return -EINVAL;
        }
        int ab = 0, ba = 0;
        CU_CHECK(b, cuDeviceCanAccessPeer, (&ab, a->dev, b_->dev), NULL);
        CU_CHECK(b, cuDeviceCanAccessPeer, (&ba, b_->dev, a->dev), NULL);
        if (!ab || !ba) {
                set_err(b, "cuDeviceCanAccessPeer: GPU %d and GPU %d cannot access each other (%s)", a->index,
                        b_->index, !ab && !ba ? "neither way" : !ab ? "first to second" : "second to first");
                return -ENOTSUP;
        }
        int r = enable_one_way(a, b_);
        return r < 0 ? r : enable_one_way(b_, a);
}

/* On the source context's stream: the source GPU's copy engine pushes the data (a write,
 * as p2pBandwidthLatencyTest and nvbandwidth's default CE copies do); events to time it
 * go on the source context. */
static int cuda_copy_peer(struct dev_ctx *dst_ctx, struct dev_buf *dst, struct dev_ctx *src_ctx, struct dev_buf *src,
                          size_t bytes) {
        struct dev_backend *b = src_ctx->b;
        int r = check_range(b, "copy_peer", dst, 0, bytes);
        if (r < 0 || (r = check_range(b, "copy_peer", src, 0, bytes)) < 0 || (r = ctx_current(src_ctx)) < 0)
                return r;
        CU_CHECK(b, cuMemcpyPeerAsync, (dst->ptr, dst_ctx->ctx, src->ptr, src_ctx->ctx, bytes, src_ctx->stream), NULL);
        return 0;
}

static int cuda_memset(struct dev_ctx *c, struct dev_buf *buf, uint8_t value, size_t bytes) {
        int r = check_range(c->b, "memset", buf, 0, bytes);
        if (r < 0 || (r = ctx_current(c)) < 0)
                return r;
        CU_CHECK(c->b, cuMemsetD8Async, (buf->ptr, value, bytes, c->stream), NULL);
        return 0;
}

/* ---- kernels ------------------------------------------------------------------------------ */

static int load_module(struct dev_ctx *c) {
        struct dev_backend *b = c->b;
        if (embedded_cuda_fatbin_len == 0) {
                set_err(b, "the CUDA kernels are missing (built without nvcc)");
                return -ENOTSUP;
        }
        /* The embedded array is only char-aligned; the driver reads the fatbin header as
         * 64-bit words. */
        if (!c->image) {
                if (posix_memalign(&c->image, 64, embedded_cuda_fatbin_len) != 0) {
                        c->image = NULL;
                        set_err(b, "out of memory");
                        return -ENOMEM;
                }
                memcpy(c->image, embedded_cuda_fatbin, embedded_cuda_fatbin_len);
        }
        char log[1024] = "";
        CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
        void *vals[] = {log, (void *)(uintptr_t)sizeof(log)};
        CUresult rc = b->fn->cuModuleLoadDataEx(&c->module, c->image, 2, opts, vals);
        if (rc != CUDA_SUCCESS) {
                c->module = NULL;
                log[sizeof(log) - 1] = '\0';
                if (rc == CUDA_ERROR_NO_BINARY_FOR_GPU) {
                        int r = cuda_fail(b, "cuModuleLoadDataEx", rc, NULL);
                        const struct dev_info *in = &b->devs[c->index].info;
                        strbuf_appendf(b->err, sizeof(b->err), "; GPU %d is compute capability %d.%d", c->index,
                                       in->cc_major, in->cc_minor);
                        return r;
                }
                if (rc == CUDA_ERROR_UNSUPPORTED_PTX_VERSION || rc == CUDA_ERROR_INVALID_PTX) {
                        int r = cuda_fail(b, "cuModuleLoadDataEx", rc, NULL);
                        strbuf_appendf(b->err, sizeof(b->err),
                                       "; this GPU is newer than the embedded SASS and the driver cannot JIT the "
                                       "embedded PTX (CUDA 13 PTX needs a CUDA 13 driver)%s%s",
                                       log[0] ? ": " : "", log);
                        return r;
                }
                return cuda_fail(b, "cuModuleLoadDataEx", rc, log[0] ? log : NULL);
        }
        return 0;
}

static int find_kernel(struct dev_backend *b, const char *name) {
        for (size_t i = 0; i < CUDA_N_KERNELS; i++)
                if (strcmp(cuda_kernels[i].name, name) == 0)
                        return (int)i;
        set_err(b, "launch: no kernel named %s in kernels.def", name ? name : "(null)");
        return -EINVAL;
}

/* Check args against the kernel's argument list in kernels.def ("buf out, u64 n"). */
static int check_args(struct dev_backend *b, const struct cuda_kernel *k, const struct dev_arg *args, size_t n_args) {
        static const char *const kinds[] = {"buf", "u32", "u64", "f32", "f64"};
        size_t i = 0;
        const char *p = k->args;
        while (*p) {
                while (*p == ' ' || *p == ',')
                        p++;
                if (!*p)
                        break;
                if (i >= n_args) {
                        set_err(b, "launch %s: %zu arguments given, kernels.def lists more (%s)", k->name, n_args,
                                k->args);
                        return -EINVAL;
                }
                unsigned kind = (unsigned)args[i].kind;
                if (kind >= ARRAY_COUNT(kinds) || strncmp(p, kinds[kind], 3) != 0) {
                        set_err(b, "launch %s: argument %zu is '%.*s' in kernels.def, got %s", k->name, i + 1,
                                (int)strcspn(p, ","), p, kind < 5 ? kinds[kind] : "an unknown kind");
                        return -EINVAL;
                }
                if (args[i].kind == DEV_ARG_BUF && !args[i].v.buf) {
                        set_err(b, "launch %s: argument %zu is a NULL buffer", k->name, i + 1);
                        return -EINVAL;
                }
                i++;
                p += strcspn(p, ",");
        }
        if (i != n_args) {
                set_err(b, "launch %s: %zu arguments given, kernels.def lists %zu (%s)", k->name, n_args, i, k->args);
                return -EINVAL;
        }
        return 0;
}

#define CUDA_MAX_ARGS 8

static int cuda_launch(struct dev_ctx *c, const char *kernel, size_t global_size, size_t local_size,
                       const struct dev_arg *args, size_t n_args) {
        struct dev_backend *b = c->b;
        int k = find_kernel(b, kernel);
        if (k < 0)
                return k;
        if (n_args > CUDA_MAX_ARGS) {
                set_err(b, "launch %s: %zu arguments, at most %d", kernel, n_args, CUDA_MAX_ARGS);
                return -EINVAL;
        }
        int r = check_args(b, &cuda_kernels[k], args, n_args);
        if (r < 0)
                return r;
        if (global_size == 0) {
                set_err(b, "launch %s: zero work items", kernel);
                return -EINVAL;
        }
        size_t block = local_size ? local_size : CUDA_BLOCK_DEFAULT;
        if (block > 1024) {
                set_err(b, "launch %s: %zu threads per block, CUDA allows 1024", kernel, block);
                return -EINVAL;
        }
        if ((r = ctx_current(c)) < 0)
                return r;
        if (!c->module && (r = load_module(c)) < 0)
                return r;
        if (!c->fns[k]) {
                CUresult rc = b->fn->cuModuleGetFunction(&c->fns[k], c->module, kernel);
                if (rc != CUDA_SUCCESS) {
                        c->fns[k] = NULL;
                        return cuda_fail(b, "cuModuleGetFunction", rc, kernel);
                }
        }
        /* Grid-stride kernels: fewer blocks than items is still correct. */
        size_t grid = (global_size + block - 1) / block;
        if (grid > CUDA_GRID_MAX)
                grid = CUDA_GRID_MAX;
        /* One more than the kernels.def arguments: the hidden logical global size every
         * kernel of kernels/bench_kernels.cu takes last (whole blocks run; threads past it
         * return at once). */
        void *params[CUDA_MAX_ARGS + 1];
        CUdeviceptr ptrs[CUDA_MAX_ARGS];
        unsigned long long gsize = global_size < grid * block ? global_size : grid * block;
        for (size_t i = 0; i < n_args; i++) {
                switch (args[i].kind) {
                case DEV_ARG_BUF:
                        ptrs[i] = args[i].v.buf->ptr;
                        params[i] = &ptrs[i];
                        break;
                case DEV_ARG_U32:
                        params[i] = (void *)&args[i].v.u32;
                        break;
                case DEV_ARG_U64:
                        params[i] = (void *)&args[i].v.u64;
                        break;
                case DEV_ARG_F32:
                        params[i] = (void *)&args[i].v.f32;
                        break;
                case DEV_ARG_F64:
                        params[i] = (void *)&args[i].v.f64;
                        break;
                }
        }
        params[n_args] = &gsize;
        CU_CHECK(b, cuLaunchKernel, (c->fns[k], (unsigned)grid, 1, 1, (unsigned)block, 1, 1, 0, c->stream, params, NULL),
                 kernel);
        return 0;
}

/* ---- events and synchronisation ---------------------------------------------------------- */

static int cuda_event_create(struct dev_ctx *c, struct dev_event **ret) {
        *ret = NULL;
        int r = ctx_current(c);
        if (r < 0)
                return r;
        struct dev_event *e = calloc(1, sizeof(*e));
        if (!e) {
                set_err(c->b, "out of memory");
                return -ENOMEM;
        }
        CUresult rc = c->b->fn->cuEventCreate(&e->ev, CU_EVENT_DEFAULT);
        if (rc != CUDA_SUCCESS) {
                free(e);
                return cuda_fail(c->b, "cuEventCreate", rc, NULL);
        }
        *ret = e;
        return 0;
}

static void cuda_event_destroy(struct dev_ctx *c, struct dev_event *e) {
        if (!e)
                return;
        /* Destroy even when the context could not be made current: the call takes the
         * handle, and skipping it would leak the event for the life of the process. */
        (void)ctx_current(c);
        (void)c->b->fn->cuEventDestroy_v2(e->ev);
        free(e);
}

static int cuda_event_record(struct dev_ctx *c, struct dev_event *e) {
        int r = ctx_current(c);
        if (r < 0)
                return r;
        CU_CHECK(c->b, cuEventRecord, (e->ev, c->stream), NULL);
        return 0;
}

static int cuda_event_elapsed_ms(struct dev_ctx *c, struct dev_event *start, struct dev_event *end, double *ret) {
        *ret = 0;
        int r = ctx_current(c);
        if (r < 0)
                return r;
        CU_CHECK(c->b, cuEventSynchronize, (end->ev), NULL);
        float ms = 0;
        CU_CHECK(c->b, cuEventElapsedTime_v2, (&ms, start->ev, end->ev), NULL);
        if (!(ms >= 0)) {
                set_err(c->b, "cuEventElapsedTime_v2: %g ms between events", (double)ms);
                return -EIO;
        }
        *ret = ms;
        return 0;
}

static int cuda_synchronize(struct dev_ctx *c) {
        int r = ctx_current(c);
        if (r < 0)
                return r;
        CU_CHECK(c->b, cuStreamSynchronize, (c->stream), NULL);
        if (c->stream2)
                CU_CHECK(c->b, cuStreamSynchronize, (c->stream2), "second stream");
        return 0;
}

/* ---- the second stream (bidirectional transfers) ------------------------------------------ */

/* The stream of queue 0 or 1, the second created at its first use (non-blocking, as the
 * first: neither waits for the legacy default stream). Makes the context current. */
static int stream_of(struct dev_ctx *c, int queue, const char *call, CUstream *ret) {
        *ret = NULL;
        if (queue != 0 && queue != 1) {
                set_err(c->b, "%s: queue %d (0 or 1)", call, queue);
                return -EINVAL;
        }
        int r = ctx_current(c);
        if (r < 0)
                return r;
        if (queue == 1 && !c->stream2) {
                CUresult rc = c->b->fn->cuStreamCreate(&c->stream2, CU_STREAM_NON_BLOCKING);
                if (rc != CUDA_SUCCESS) {
                        c->stream2 = NULL;
                        return cuda_fail(c->b, "cuStreamCreate", rc, "second stream");
                }
        }
        *ret = queue == 1 ? c->stream2 : c->stream;
        return 0;
}

static int cuda_copy_h2d_on(struct dev_ctx *c, int queue, struct dev_buf *dst, size_t dst_off, const void *src,
                            size_t bytes) {
        CUstream s;
        int r = check_range(c->b, "copy_h2d_on", dst, dst_off, bytes);
        if (r < 0 || (r = stream_of(c, queue, "copy_h2d_on", &s)) < 0)
                return r;
        CU_CHECK(c->b, cuMemcpyHtoDAsync_v2, (dst->ptr + dst_off, src, bytes, s), NULL);
        return 0;
}

static int cuda_copy_d2h_on(struct dev_ctx *c, int queue, void *dst, struct dev_buf *src, size_t src_off,
                            size_t bytes) {
        CUstream s;
        int r = check_range(c->b, "copy_d2h_on", src, src_off, bytes);
        if (r < 0 || (r = stream_of(c, queue, "copy_d2h_on", &s)) < 0)
                return r;
        CU_CHECK(c->b, cuMemcpyDtoHAsync_v2, (dst, src->ptr + src_off, bytes, s), NULL);
        return 0;
}

static int cuda_event_record_on(struct dev_ctx *c, int queue, struct dev_event *e) {
        CUstream s;
        int r = stream_of(c, queue, "event_record_on", &s);
        if (r < 0)
                return r;
        CU_CHECK(c->b, cuEventRecord, (e->ev, s), NULL);
        return 0;
}

/* Every event measured from starts[0], on the one device clock of the context. A start
 * recorded before starts[0] comes out negative: cuEventElapsedTime's documented errors are
 * about events not recorded or not completed, not about their order (nvbandwidth's total
 * bandwidth also times across streams this way). No pair is left out: an event recorded
 * on an idle stream completes when it is recorded, about when the others start. */
static int cuda_event_span_ms(struct dev_ctx *c, struct dev_event *const *starts, struct dev_event *const *ends,
                              size_t n, double *ret) {
        *ret = 0;
        if (n == 0)
                return 0;
        int r = ctx_current(c);
        if (r < 0)
                return r;
        double lo = 0, hi = 0;
        for (size_t i = 0; i < n; i++) {
                float s = 0, e = 0;
                CU_CHECK(c->b, cuEventSynchronize, (ends[i]->ev), NULL);
                CU_CHECK(c->b, cuEventSynchronize, (starts[i]->ev), NULL);
                CU_CHECK(c->b, cuEventElapsedTime_v2, (&s, starts[0]->ev, starts[i]->ev), NULL);
                CU_CHECK(c->b, cuEventElapsedTime_v2, (&e, starts[0]->ev, ends[i]->ev), NULL);
                if (s < lo)
                        lo = s;
                if (i == 0 || e > hi)
                        hi = e;
        }
        if (!(hi - lo >= 0)) {
                set_err(c->b, "cuEventElapsedTime_v2: %g ms from the first start to the last end", hi - lo);
                return -EIO;
        }
        *ret = hi - lo;
        return 0;
}

const struct dev_ops dev_ops_cuda = {
        .name = "cuda",
        .kind = DEV_CUDA,
        .open = cuda_open,
        .close = cuda_close,
        .count = cuda_count,
        .info = cuda_info,
        .ctx_open = cuda_ctx_open,
        .ctx_close = cuda_ctx_close,
        .alloc = cuda_alloc,
        .free = cuda_free,
        .mem_info = cuda_mem_info,
        .host_alloc = cuda_host_alloc,
        .host_free = cuda_host_free,
        .copy_h2d = cuda_copy_h2d,
        .copy_d2h = cuda_copy_d2h,
        .copy_d2d = cuda_copy_d2d,
        .p2p_enable = cuda_p2p_enable,
        .copy_peer = cuda_copy_peer,
        .memset = cuda_memset,
        .launch = cuda_launch,
        .event_create = cuda_event_create,
        .event_destroy = cuda_event_destroy,
        .event_record = cuda_event_record,
        .event_elapsed_ms = cuda_event_elapsed_ms,
        .synchronize = cuda_synchronize,
        .copy_h2d_on = cuda_copy_h2d_on,
        .copy_d2h_on = cuda_copy_d2h_on,
        .event_record_on = cuda_event_record_on,
        .event_span_ms = cuda_event_span_ms,
        .kernel_shape = cuda_kernel_shape,
        .last_error = cuda_last_error,
};

/* ---- raw handles (src/bench/cuda_raw.h) ---------------------------------------------------- */

int cuda_buf_ptr(const struct dev_buf *buf, uint64_t *ret) {
        if (!buf || !ret)
                return -EINVAL;
        *ret = buf->ptr;
        return 0;
}

int cuda_ctx_stream(struct dev_ctx *c, void **ret) {
        if (!c || !ret)
                return -EINVAL;
        *ret = NULL;
        int r = ctx_current(c);
        if (r < 0)
                return r;
        *ret = c->stream;
        return 0;
}

int cuda_ctx_cc(const struct dev_ctx *c, int *major, int *minor) {
        if (!c || !major || !minor)
                return -EINVAL;
        *major = c->b->devs[c->index].info.cc_major;
        *minor = c->b->devs[c->index].info.cc_minor;
        return 0;
}

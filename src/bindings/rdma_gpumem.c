#include "bindings/rdma_gpumem.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bindings/cuda.h"
#include "bindings/cuda_errors.h"

struct rdma_gpumem {
        struct cuda_lib *cu;
        CUdevice dev;
        CUcontext ctx;
        CUdeviceptr dptr;
        CUstream stream;
        size_t bytes;
        char name[160];
};

static int cu_fail(const char *call, CUresult rc, char *err, size_t errsize) {
        const char *n = cuda_error_name(rc);
        snprintf(err, errsize, "%s: %s (%d)", call, n ? n : "CUDA error", rc);
        return rc == CUDA_ERROR_OUT_OF_MEMORY ? -ENOMEM
               : rc == CUDA_ERROR_INVALID_DEVICE || rc == CUDA_ERROR_NO_DEVICE ? -ENODEV
                                                                                : -EIO;
}

int rdma_gpumem_open(int gpu, size_t bytes, struct rdma_gpumem **ret, uint64_t *ret_dptr, char *err, size_t errsize) {
        *ret = NULL;
        struct rdma_gpumem *g = calloc(1, sizeof(*g));
        if (!g) {
                snprintf(err, errsize, "out of memory");
                return -ENOMEM;
        }
        char why[512];
        const char *missing = NULL;
        int r = cuda_lib_load(NULL, CUDA_NEED_COMPUTE, &g->cu, &missing, why, sizeof(why));
        if (r < 0) {
                snprintf(err, errsize, "--gpu needs the CUDA driver: %s", why);
                free(g);
                return r == -ENOSYS ? -ENOSYS : -ENOENT;
        }
        CUresult rc;
        int count = 0;
        if ((rc = g->cu->cuInit(0)) != CUDA_SUCCESS) {
                r = cu_fail("cuInit", rc, err, errsize);
                goto fail;
        }
        if ((rc = g->cu->cuDeviceGetCount(&count)) != CUDA_SUCCESS) {
                r = cu_fail("cuDeviceGetCount", rc, err, errsize);
                goto fail;
        }
        if (gpu >= count) {
                snprintf(err, errsize, "--gpu %d: this node has %d CUDA device%s", gpu, count, count == 1 ? "" : "s");
                r = -ENODEV;
                goto fail;
        }
        if ((rc = g->cu->cuDeviceGet(&g->dev, gpu)) != CUDA_SUCCESS) {
                r = cu_fail("cuDeviceGet", rc, err, errsize);
                goto fail;
        }
        if ((rc = g->cu->cuDevicePrimaryCtxRetain(&g->ctx, g->dev)) != CUDA_SUCCESS) {
                r = cu_fail("cuDevicePrimaryCtxRetain", rc, err, errsize);
                goto fail;
        }
        if ((rc = g->cu->cuCtxSetCurrent(g->ctx)) != CUDA_SUCCESS) {
                r = cu_fail("cuCtxSetCurrent", rc, err, errsize);
                goto fail;
        }
        if ((rc = g->cu->cuStreamCreate(&g->stream, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS) {
                r = cu_fail("cuStreamCreate", rc, err, errsize);
                goto fail;
        }
        /* whole 2 MiB pages: GPUDirect pins device memory in 64 KiB-2 MiB units */
        g->bytes = (bytes + ((size_t)2 << 20) - 1) & ~(((size_t)2 << 20) - 1);
        if ((rc = g->cu->cuMemAlloc_v2(&g->dptr, g->bytes)) != CUDA_SUCCESS) {
                r = cu_fail("cuMemAlloc_v2", rc, err, errsize);
                goto fail;
        }
        char dname[96] = "?", bus[32] = "";
        (void)g->cu->cuDeviceGetName(dname, sizeof(dname), g->dev);
        (void)g->cu->cuDeviceGetPCIBusId(bus, sizeof(bus), g->dev);
        snprintf(g->name, sizeof(g->name), "gpu%d (%.96s%s%.31s)", gpu, dname, bus[0] ? ", " : "", bus);
        *ret_dptr = g->dptr;
        *ret = g;
        return 0;
fail:
        rdma_gpumem_close(g);
        return r;
}

int rdma_gpumem_dmabuf(struct rdma_gpumem *g, int *ret_fd, char *why, size_t whysize) {
        if (!g->cu->cuMemGetHandleForAddressRange) {
                snprintf(why, whysize, "the driver (%s) has no cuMemGetHandleForAddressRange (CUDA 11.7+)", g->cu->dl.name);
                return -EOPNOTSUPP;
        }
        int supported = -1;
        if (g->cu->cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, g->dev) == CUDA_SUCCESS &&
            supported == 0) {
                snprintf(why, whysize, "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED is 0 (the proprietary kernel modules; "
                                       "the open ones support dma-buf)");
                return -EOPNOTSUPP;
        }
        int fd = -1;
        CUresult rc = g->cu->cuMemGetHandleForAddressRange(&fd, g->dptr, g->bytes, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
        if (rc != CUDA_SUCCESS) {
                (void)cu_fail("cuMemGetHandleForAddressRange(DMA_BUF_FD)", rc, why, whysize);
                return -EOPNOTSUPP;
        }
        *ret_fd = fd;
        return 0;
}

int rdma_gpumem_write(struct rdma_gpumem *g, uint64_t off, const void *src, size_t n, char *err, size_t errsize) {
        CUresult rc = g->cu->cuMemcpyHtoDAsync_v2(g->dptr + off, src, n, g->stream);
        if (rc == CUDA_SUCCESS)
                rc = g->cu->cuStreamSynchronize(g->stream);
        return rc == CUDA_SUCCESS ? 0 : cu_fail("cuMemcpyHtoDAsync_v2", rc, err, errsize);
}

int rdma_gpumem_read(struct rdma_gpumem *g, uint64_t off, void *dst, size_t n, char *err, size_t errsize) {
        CUresult rc = g->cu->cuMemcpyDtoHAsync_v2(dst, g->dptr + off, n, g->stream);
        if (rc == CUDA_SUCCESS)
                rc = g->cu->cuStreamSynchronize(g->stream);
        return rc == CUDA_SUCCESS ? 0 : cu_fail("cuMemcpyDtoHAsync_v2", rc, err, errsize);
}

int rdma_gpumem_zero(struct rdma_gpumem *g, uint64_t off, size_t n, char *err, size_t errsize) {
        CUresult rc = g->cu->cuMemsetD8Async(g->dptr + off, 0, n, g->stream);
        if (rc == CUDA_SUCCESS)
                rc = g->cu->cuStreamSynchronize(g->stream);
        return rc == CUDA_SUCCESS ? 0 : cu_fail("cuMemsetD8Async", rc, err, errsize);
}

const char *rdma_gpumem_name(const struct rdma_gpumem *g) {
        return g->name;
}

void rdma_gpumem_close(struct rdma_gpumem *g) {
        if (!g)
                return;
        if (g->dptr)
                (void)g->cu->cuMemFree_v2(g->dptr);
        if (g->stream)
                (void)g->cu->cuStreamDestroy_v2(g->stream);
        if (g->ctx)
                (void)g->cu->cuDevicePrimaryCtxRelease_v2(g->dev);
        g->cu = cuda_lib_free(g->cu);
        free(g);
}

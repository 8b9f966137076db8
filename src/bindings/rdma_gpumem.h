/* GPU memory for `gpuvet bench rdma --gpu N` (GPUDirect RDMA), for bindings/rdma_endpoint.c:
 * a buffer allocated with cuMemAlloc on CUDA device N through the driver API gpuvet already
 * loads (bindings/cuda.h), its dma-buf (cuMemGetHandleForAddressRange, CUDA 11.7+ with the
 * open kernel modules) for ibv_reg_dmabuf_mr, and synchronous copies to fill and check it,
 * since the CPU cannot touch device memory. Errors: 0 or a negative errno with a message
 * naming the CUDA call and its CUresult ("cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2)").
 * Nothing here prints. */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct rdma_gpumem;

/* Allocate bytes on CUDA device gpu. -ENOENT: no libcuda; -ENODEV: no such device;
 * -ENOMEM; -EIO: another CUDA failure. *ret_dptr: the device address. */
int rdma_gpumem_open(int gpu, size_t bytes, struct rdma_gpumem **ret, uint64_t *ret_dptr, char *err, size_t errsize);
/* The allocation as a dma-buf file descriptor (the caller closes it). -EOPNOTSUPP with why
 * when the driver has no cuMemGetHandleForAddressRange or refuses (proprietary modules,
 * CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED 0). */
int rdma_gpumem_dmabuf(struct rdma_gpumem *g, int *ret_fd, char *why, size_t whysize);
/* Copies and fills, synchronous: host -> device at offset, device -> host, zeroes. */
int rdma_gpumem_write(struct rdma_gpumem *g, uint64_t off, const void *src, size_t n, char *err, size_t errsize);
int rdma_gpumem_read(struct rdma_gpumem *g, uint64_t off, void *dst, size_t n, char *err, size_t errsize);
int rdma_gpumem_zero(struct rdma_gpumem *g, uint64_t off, size_t n, char *err, size_t errsize);
/* "gpu0 (NVIDIA H100 80GB HBM3, 0000:1b:00.0)" */
const char *rdma_gpumem_name(const struct rdma_gpumem *g);
/* NULL-safe; frees the allocation. */
void rdma_gpumem_close(struct rdma_gpumem *g);

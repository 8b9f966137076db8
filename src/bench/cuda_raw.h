/* Raw handles of the CUDA backend (src/bindings/cuda_device.c), for libraries that take CUDA's own
 * types rather than dev_ops objects: cuBLASLt wants CUdeviceptr and CUstream. Valid only
 * for objects of dev_ops_cuda (a caller checks ctx->ops == &dev_ops_cuda first); the
 * handles stay owned by the backend. */
#pragma once

#include <stdint.h>

#include "bench/device.h"

/* The CUdeviceptr behind buf. Returns 0, or -EINVAL for NULL. */
int cuda_buf_ptr(const struct dev_buf *buf, uint64_t *ret);
/* The context's CUstream, after making its context current on the calling thread (a
 * library that runs work on the stream runs it in the current context). Returns 0, or a
 * negative errno with the message in the backend's last error. */
int cuda_ctx_stream(struct dev_ctx *c, void **ret);
/* The device's compute capability. Returns 0, or -EINVAL for NULL. */
int cuda_ctx_cc(const struct dev_ctx *c, int *major, int *minor);

/* A build without nvcc (meson.build): no fatbin. The CUDA backend still loads the driver,
 * allocates and copies, and answers every launch with "the CUDA kernels are missing
 * (built without nvcc)". */
#include <stddef.h>

const char embedded_cuda_fatbin[] = {0};
const size_t embedded_cuda_fatbin_len = 0;

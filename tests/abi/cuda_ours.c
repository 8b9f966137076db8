/* The CUDA driver API items as gpuvet declares them (src/bindings/cuda_api.h). */
#include "bindings/cuda_api.h"

#include "abi.h"

const struct abi_row cuda_abi_ours[] = {
#include "cuda_items.def"
};
const size_t cuda_abi_ours_count = sizeof(cuda_abi_ours) / sizeof(cuda_abi_ours[0]);

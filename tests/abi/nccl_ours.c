/* The NCCL ABI items as gpuvet declares them (src/bindings/nccl_api.h). */
#include "bindings/nccl_api.h"

#include "abi.h"

const struct abi_row nccl_abi_ours[] = {
#include "nccl_items.def"
};
const size_t nccl_abi_ours_count = sizeof(nccl_abi_ours) / sizeof(nccl_abi_ours[0]);

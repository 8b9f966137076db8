/* The ABI items as gpuvet declares them. */
#include "bindings/nvml_api.h"

#include "abi.h"

const struct abi_row abi_ours[] = {
#include "abi_items.def"
};
const size_t abi_ours_count = sizeof(abi_ours) / sizeof(abi_ours[0]);

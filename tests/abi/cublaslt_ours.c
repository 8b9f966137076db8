/* The cuBLASLt ABI items as gpuvet declares them (src/bindings/cublaslt_api.h). */
#include "bindings/cublaslt_api.h"

#include "abi.h"

const struct abi_row cublaslt_abi_ours[] = {
#include "cublaslt_items.def"
};
const size_t cublaslt_abi_ours_count = sizeof(cublaslt_abi_ours) / sizeof(cublaslt_abi_ours[0]);

/* The CUDA driver API items as NVIDIA's cuda.h declares them, and gpuvet's function list
 * checked against its prototypes. Nothing from src/bindings/cuda_api.h may be included here:
 * every name below must resolve to the official declaration (cuda.h maps the plain names
 * to the _v2 entry points gpuvet loads, so both spellings name one prototype). */
#include <cuda.h>

#include "abi.h"

const struct abi_row cuda_abi_official[] = {
#include "cuda_items.def"
};
const size_t cuda_abi_official_count = sizeof(cuda_abi_official) / sizeof(cuda_abi_official[0]);

/* The parameter types in cuda_functions.def name the official types here, so a parameter
 * list that differs from cuda.h's fails to compile. */
enum cuda_need { CUDA_NEED_NONE, CUDA_NEED_PROBE, CUDA_NEED_COMPUTE };
#define CUDA_FN(need, name, fallback, params)                                                                \
        _Static_assert(__builtin_types_compatible_p(__typeof__(&name), CUresult(*) params),                  \
                       "signature of " #name " differs from cuda.h");
#include "bindings/cuda_functions.def"
#undef CUDA_FN

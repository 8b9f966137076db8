/* The NCCL ABI items as NVIDIA's nccl.h declares them, and gpuvet's function list checked
 * against its prototypes. Nothing from src/bindings/nccl_api.h may be included here: every
 * name below must resolve to the official declaration. */
#include <nccl.h>

#include "abi.h"

const struct abi_row nccl_abi_official[] = {
#include "nccl_items.def"
};
const size_t nccl_abi_official_count = sizeof(nccl_abi_official) / sizeof(nccl_abi_official[0]);

/* The parameter types in nccl_functions.def name the official types here, so a parameter
 * list or return type that differs from nccl.h's fails to compile. */
#define NCCL_FN(required, ret, name, params)                                                                 \
        _Static_assert(__builtin_types_compatible_p(__typeof__(&name), ret(*) params),                       \
                       "signature of " #name " differs from nccl.h");
#include "bindings/nccl_functions.def"
#undef NCCL_FN

/* The cuBLASLt ABI items as NVIDIA's cublasLt.h declares them, and gpuvet's function list
 * checked against its prototypes. Nothing from src/bindings/cublaslt_api.h may be included
 * here: every name below must resolve to the official declaration. */
#include <cublasLt.h>

#include "abi.h"

const struct abi_row cublaslt_abi_official[] = {
#include "cublaslt_items.def"
};
const size_t cublaslt_abi_official_count = sizeof(cublaslt_abi_official) / sizeof(cublaslt_abi_official[0]);

/* The parameter types in cublaslt_functions.def name the official types here, so a
 * parameter list or return type that differs from cublasLt.h's fails to compile. */
#define CUBLASLT_FN(required, ret, name, params)                                                             \
        _Static_assert(__builtin_types_compatible_p(__typeof__(&name), ret(*) params),                       \
                       "signature of " #name " differs from cublasLt.h");
#include "bindings/cublaslt_functions.def"
#undef CUBLASLT_FN

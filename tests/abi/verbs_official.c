/* The verbs ABI items as rdma-core's <infiniband/verbs.h> declares them, and gpuvet's
 * function list checked against its prototypes. Nothing from src/bindings/verbs_api.h may be
 * included here: every name below must resolve to the official declaration. */
#include <infiniband/verbs.h>

#include "abi.h"

const struct abi_row verbs_abi_official[] = {
#include "verbs_items.def"
};
const size_t verbs_abi_official_count = sizeof(verbs_abi_official) / sizeof(verbs_abi_official[0]);

/* The parameter types in verbs_functions.def name the official types here, so a parameter
 * list or return type that differs from verbs.h's fails to compile. (ibv_query_port and
 * ibv_reg_mr are also macros there; without an argument list the names are the exported
 * functions'.) */
#define VERBS_FN(required, ret, name, params)                                                                \
        _Static_assert(__builtin_types_compatible_p(__typeof__(&name), ret(*) params),                       \
                       "signature of " #name " differs from verbs.h");
#include "bindings/verbs_functions.def"
#undef VERBS_FN

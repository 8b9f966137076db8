/* The verbs ABI items as gpuvet declares them (src/bindings/verbs_api.h). */
#include "bindings/verbs_api.h"

#include "abi.h"

const struct abi_row verbs_abi_ours[] = {
#include "verbs_items.def"
};
const size_t verbs_abi_ours_count = sizeof(verbs_abi_ours) / sizeof(verbs_abi_ours[0]);

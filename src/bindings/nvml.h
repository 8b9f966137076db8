/* Loading libnvidia-ml at run time.
 *
 * The library comes from --nvml-lib or $GPUVET_NVML_LIB, else the sonames
 * libnvidia-ml.so.1 then libnvidia-ml.so. Symbols are resolved from
 * bindings/nvml_functions.def: a missing required symbol refuses the library and names the
 * symbol (after trying an older export of the same signature, nvml_fallback_of); a missing
 * optional one leaves its pointer NULL, and the facts that need it read
 * as "function not found" (older drivers lack newer entry points). Loading goes through
 * core/dynlib.h (whose seam tests replace). Nothing here logs; callers report err. */
#pragma once

#include <stddef.h>

#include "core/dynlib.h"
#include "bindings/nvml_api.h"

struct nvml_lib {
        struct dynlib dl; /* dl.path: the file loaded, for evidence */
#define NVML_FN(required, name, params) name##_fn name;
#include "bindings/nvml_functions.def"
#undef NVML_FN
        nvmlErrorString_fn nvmlErrorString;
};

/* Load the library (path NULL: $GPUVET_NVML_LIB, then the sonames). On success *ret has
 * every required pointer set, a NULL for each optional symbol the library lacks, and
 * dl.path names the file loaded. Returns 0, -ENOENT
 * when no library could be opened (err: what was tried and dlerror), -ENOSYS when a
 * required symbol is missing (err names it), -ENOMEM. Does not call nvmlInit. */
int nvml_lib_load(const char *path, struct nvml_lib **ret, char *err, size_t errsize);
/* The older export tried when name is absent ("nvmlInit" for "nvmlInit_v2"), or NULL. */
const char *nvml_fallback_of(const char *name);
/* dlclose and free; accepts NULL, returns NULL. Never call it while a thread may still be
 * inside the library (a hung call): then leave it loaded. */
struct nvml_lib *nvml_lib_free(struct nvml_lib *lib);

/* "NVML_ERROR_GPU_IS_LOST" for a return code; "NVML_ERROR_<n>" for unknown codes. */
const char *nvml_return_name(nvmlReturn_t rc);
/* A sentence for a return code, from the library's nvmlErrorString when loaded, else
 * gpuvet's own table. */
const char *nvml_return_text(const struct nvml_lib *lib, nvmlReturn_t rc);

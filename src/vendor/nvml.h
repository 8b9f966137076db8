/* Loading libnvidia-ml at run time.
 *
 * The library comes from --nvml-lib or $GPUVET_NVML_LIB, else the sonames
 * libnvidia-ml.so.1 then libnvidia-ml.so. Symbols are resolved from
 * vendor/nvml_functions.def: a missing required symbol refuses the library and names the
 * symbol; a missing optional one leaves its pointer NULL, and the facts that need it read
 * as "function not found" (older drivers lack newer entry points). dlopen/dlsym sit behind
 * a seam so tests can make them fail. Nothing here logs; callers report err. */
#pragma once

#include <stddef.h>

#include "vendor/nvml_api.h"

struct dl_seam;

struct nvml_lib {
        void *handle;
        char path[512]; /* what was loaded, for evidence */
        const struct dl_seam *seam; /* closes handle; NULL: dlclose */
#define NVML_FN(required, name, params) name##_fn name;
#include "vendor/nvml_functions.def"
#undef NVML_FN
        nvmlErrorString_fn nvmlErrorString;
};

struct dl_seam {
        void *(*open)(const char *file, int flags);
        void *(*sym)(void *handle, const char *name);
        int (*close)(void *handle);
        char *(*error)(void);
        /* Optional: write the file a handle came from (symlinks resolved) into buf; 0 on
         * success. NULL, or a failure, records the name that was opened instead. */
        int (*origin)(void *handle, char *buf, size_t size);
};
extern const struct dl_seam dl_seam_system;

/* Environment variable naming the library to load instead of the sonames. */
#define NVML_LIB_ENV "GPUVET_NVML_LIB"

/* Load the library (path NULL: $GPUVET_NVML_LIB, then the sonames; seam NULL:
 * dl_seam_system). On success *ret has every required pointer set, a NULL for each
 * optional symbol the library lacks, and path names the file loaded. Returns 0, -ENOENT
 * when no library could be opened (err: what was tried and dlerror), -ENOSYS when a
 * required symbol is missing (err names it), -ENOMEM. Does not call nvmlInit. */
int nvml_lib_load(const char *path, const struct dl_seam *seam, struct nvml_lib **ret, char *err, size_t errsize);
/* dlclose and free; accepts NULL, returns NULL. Never call it while a thread may still be
 * inside the library (a hung call): then leave it loaded. */
struct nvml_lib *nvml_lib_free(struct nvml_lib *lib);

/* "NVML_ERROR_GPU_IS_LOST" for a return code; "NVML_ERROR_<n>" for unknown codes. */
const char *nvml_return_name(nvmlReturn_t rc);
/* A sentence for a return code, from the library's nvmlErrorString when loaded, else
 * gpuvet's own table. */
const char *nvml_return_text(const struct nvml_lib *lib, nvmlReturn_t rc);

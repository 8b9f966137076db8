/* Loading the OpenCL ICD loader (libOpenCL.so.1) at run time.
 *
 * The library comes from $GPUVET_OPENCL_LIB, else libOpenCL.so.1, else libOpenCL.so; the
 * ICD loader then finds the platforms (/etc/OpenCL/vendors). Functions come from
 * bindings/opencl_functions.def, all required. */
#pragma once

#include <stddef.h>

#include "core/dynlib.h"
#include "bindings/opencl_api.h"

#define OPENCL_LIB_ENV "GPUVET_OPENCL_LIB"

struct opencl_lib {
        struct dynlib dl;
#define OPENCL_FN(ret, name, params) name##_fn name;
#include "bindings/opencl_functions.def"
#undef OPENCL_FN
};

/* Load into a new *ret. Returns 0; -ENOENT when no library loads or one lacks a function
 * (err names what was tried, or the function); -ENOMEM. */
int opencl_lib_load(struct opencl_lib **ret, char *err, size_t errsize);
/* Free the table; the library stays mapped once a platform was asked for: the ICD loader
 * and the drivers it loaded keep global state and, for PoCL, worker threads that would run
 * on in unmapped code (and unloading turns their static allocations into LeakSanitizer
 * reports from an unknown module). NULL-safe; returns NULL. */
struct opencl_lib *opencl_lib_free(struct opencl_lib *lib);

/* Loading the CUDA driver library (libcuda.so.1) at run time.
 *
 * The library comes from the caller, else $GPUVET_CUDA_LIB (tests point it at
 * tests/fakes/fake_cuda.c), else libcuda.so.1. No libcuda at all means no NVIDIA driver;
 * the toolkit's stub libcuda (lib64/stubs) loads but answers cuInit with
 * CUDA_ERROR_STUB_LIBRARY (34). Functions come from bindings/cuda_functions.def; a library
 * is refused only for a function the caller's need requires, so that the driver probe
 * judges an old driver that the benchmarks' backend would refuse. Never closed: the
 * driver keeps threads and atexit handlers that outlive a dlclose. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/dynlib.h"
#include "bindings/cuda_api.h"

#define CUDA_LIB_ENV "GPUVET_CUDA_LIB"
#define CUDA_LIB_DEFAULT "libcuda.so.1"

struct cuda_lib {
        struct dynlib dl; /* dl.name: what was asked for; dl.path: the file behind it */
#define CUDA_FN(need, name, fallback, params) name##_fn name;
#include "bindings/cuda_functions.def"
#undef CUDA_FN
};

/* What a load of file NULL asks for: $GPUVET_CUDA_LIB when set and not empty (read with
 * secure_getenv: a privileged gpuvet must not load a library its caller names; *from_env
 * true), else libcuda.so.1. from_env may be NULL. */
const char *cuda_lib_name(bool *from_env);

/* Load file (NULL: cuda_lib_name()) into a new *ret. Returns 0; -ENOENT when it does not
 * load (why: the loader's reason); -ENOSYS when a function need requires is absent (*missing
 * names it; why names the file too); -ENOMEM. Calls nothing in the library. */
int cuda_lib_load(const char *file, enum cuda_need need, struct cuda_lib **ret, const char **missing, char *why,
                  size_t whysize);
/* Free the table; the library stays mapped (see above). NULL-safe; returns NULL. */
struct cuda_lib *cuda_lib_free(struct cuda_lib *lib);

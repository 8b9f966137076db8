/* The ABI items as NVIDIA's nvml.h declares them, and gpuvet's function list checked
 * against its prototypes. Nothing from src/bindings/nvml_api.h may be included here: the
 * point is that every name below resolves to the official declaration. */
#include <nvml.h>

#include "abi.h"

/* CUDA 13 marks some functions gpuvet still calls on older drivers (the applications
 * clocks, nvmlDeviceGetTemperature, ...) deprecated; taking their address is not a use. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

const struct abi_row abi_official[] = {
#include "abi_items.def"
};
const size_t abi_official_count = sizeof(abi_official) / sizeof(abi_official[0]);

/* The parameter types spelled in nvml_functions.def name the official types here, so a
 * parameter list that differs from nvml.h's prototype (a missing argument, an int where
 * NVML takes unsigned int, the wrong struct) fails to compile. */
#define NVML_FN(required, name, params)                                                                      \
        _Static_assert(__builtin_types_compatible_p(__typeof__(&name), nvmlReturn_t(*) params),               \
                       "signature of " #name " differs from nvml.h");
#include "bindings/nvml_functions.def"
#undef NVML_FN
_Static_assert(__builtin_types_compatible_p(__typeof__(&nvmlErrorString), const char *(*)(nvmlReturn_t)),
               "signature of nvmlErrorString differs from nvml.h");

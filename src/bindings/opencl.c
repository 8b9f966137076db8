/* Loading the OpenCL ICD loader: the search order and the symbol table from
 * opencl_functions.def. */
#include "bindings/opencl.h"
#include "bindings/libload.h"
#include "core/array.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static const struct dynlib_fn opencl_fns[] = {
#define OPENCL_FN(ret, name, params) {#name, NULL, true, offsetof(struct opencl_lib, name)},
#include "bindings/opencl_functions.def"
#undef OPENCL_FN
};

int opencl_lib_load(struct opencl_lib **ret, char *err, size_t errsize) {
        *ret = NULL;
        /* $GPUVET_OPENCL_LIB is tried first, not instead: the ICD loader's sonames follow. */
        const char *files[] = {dynlib_env(OPENCL_LIB_ENV), "libOpenCL.so.1", "libOpenCL.so"};
        struct dynlib dl;
        char tried[768];
        if (dynlib_open(files, ARRAY_COUNT(files), &dl, tried, sizeof(tried)) < 0) {
                snprintf(err, errsize,
                         "OpenCL ICD loader not found (tried %s): install ocl-icd-libopencl1 and a driver "
                         "(pocl-opencl-icd for CPUs)",
                         tried);
                return -ENOENT;
        }
        static const struct libload_layout layout = LIBLOAD_LAYOUT(struct opencl_lib, opencl_fns);
        void *lib;
        const char *missing = NULL;
        int r = libload_object(&layout, &dl, &lib, &missing, err, errsize);
        if (r == -ENOSYS) {
                snprintf(err, errsize, "%s lacks %s (OpenCL 1.2 needed)", dl.name, missing);
                dynlib_close(&dl);
                return -ENOENT;
        }
        *ret = lib;
        return r;
}

struct opencl_lib *opencl_lib_free(struct opencl_lib *lib) {
        free(lib);
        return NULL;
}

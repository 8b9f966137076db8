/* Loading libcuda: the name to load and the symbol table from cuda_functions.def. */
#include "bindings/cuda.h"
#include "bindings/libload.h"
#include "core/array.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cuda_fn {
        struct dynlib_fn fn;
        enum cuda_need need;
};

static const struct cuda_fn cuda_fns[] = {
#define CUDA_FN(need, name, fallback, params) {{#name, fallback, false, offsetof(struct cuda_lib, name)}, need},
#include "bindings/cuda_functions.def"
#undef CUDA_FN
};

const char *cuda_lib_name(bool *from_env) {
        const char *env = dynlib_env(CUDA_LIB_ENV);
        if (from_env)
                *from_env = env != NULL;
        return env ? env : CUDA_LIB_DEFAULT;
}

int cuda_lib_load(const char *file, enum cuda_need need, struct cuda_lib **ret, const char **missing, char *why,
                  size_t whysize) {
        *ret = NULL;
        if (whysize)
                why[0] = '\0';
        if (!file || !file[0])
                file = cuda_lib_name(NULL);
        struct dynlib dl;
        if (dynlib_open_file(file, &dl, why, whysize) < 0)
                return -ENOENT;
        /* What this caller needs is required; everything else resolves when it can. */
        struct dynlib_fn fns[ARRAY_COUNT(cuda_fns)];
        for (size_t i = 0; i < ARRAY_COUNT(cuda_fns); i++) {
                fns[i] = cuda_fns[i].fn;
                fns[i].required = cuda_fns[i].need != CUDA_NEED_NONE && cuda_fns[i].need <= need;
        }
        const struct libload_layout layout = LIBLOAD_LAYOUT(struct cuda_lib, fns);
        void *lib;
        const char *absent = NULL;
        int r = libload_object(&layout, &dl, &lib, &absent, why, whysize);
        if (r == -ENOSYS) {
                snprintf(why, whysize, "%s has no %s", dl.path, absent);
                if (missing)
                        *missing = absent;
        }
        *ret = lib;
        return r;
}

struct cuda_lib *cuda_lib_free(struct cuda_lib *lib) {
        free(lib);
        return NULL;
}

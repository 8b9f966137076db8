#include "bindings/cublaslt.h"
#include "core/array.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CUBLASLT_LIB_ENV "GPUVET_CUBLASLT_LIB"

/* Newest first: a node with several toolkits gets the one matching the newest driver. */
static const char *const sonames[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11"};

static const struct {
        cublasStatus_t st;
        const char *name;
} statuses[] = {
        {CUBLAS_STATUS_SUCCESS, "CUBLAS_STATUS_SUCCESS"},
        {CUBLAS_STATUS_NOT_INITIALIZED, "CUBLAS_STATUS_NOT_INITIALIZED"},
        {CUBLAS_STATUS_ALLOC_FAILED, "CUBLAS_STATUS_ALLOC_FAILED"},
        {CUBLAS_STATUS_INVALID_VALUE, "CUBLAS_STATUS_INVALID_VALUE"},
        {CUBLAS_STATUS_ARCH_MISMATCH, "CUBLAS_STATUS_ARCH_MISMATCH"},
        {CUBLAS_STATUS_MAPPING_ERROR, "CUBLAS_STATUS_MAPPING_ERROR"},
        {CUBLAS_STATUS_EXECUTION_FAILED, "CUBLAS_STATUS_EXECUTION_FAILED"},
        {CUBLAS_STATUS_INTERNAL_ERROR, "CUBLAS_STATUS_INTERNAL_ERROR"},
        {CUBLAS_STATUS_NOT_SUPPORTED, "CUBLAS_STATUS_NOT_SUPPORTED"},
        {CUBLAS_STATUS_LICENSE_ERROR, "CUBLAS_STATUS_LICENSE_ERROR"},
};

const char *cublaslt_status_name(const struct cublaslt *lt, cublasStatus_t st) {
        for (size_t i = 0; i < ARRAY_COUNT(statuses); i++)
                if (statuses[i].st == st)
                        return statuses[i].name;
        if (lt && lt->fn.cublasLtGetStatusName) {
                const char *s = lt->fn.cublasLtGetStatusName(st);
                /* the library answers "<unknown>" for codes it does not know either */
                if (s && *s && strncmp(s, "CUBLAS_STATUS_", 14) == 0)
                        return s;
        }
        return NULL;
}

int cublaslt_fail(struct cublaslt *lt, const char *call, cublasStatus_t st, const char *context) {
        const char *name = cublaslt_status_name(lt, st);
        snprintf(lt->err, sizeof(lt->err), "%s: %s (%d)%s%s", call, name ? name : "unknown cuBLAS status", (int)st,
                 context ? ", " : "", context ? context : "");
        switch (st) {
        case CUBLAS_STATUS_NOT_SUPPORTED:
        case CUBLAS_STATUS_ARCH_MISMATCH:
                return -ENOTSUP;
        case CUBLAS_STATUS_ALLOC_FAILED:
                return -ENOMEM;
        case CUBLAS_STATUS_INVALID_VALUE:
                return -EINVAL;
        default:
                return -EIO;
        }
}

static const struct dynlib_fn cublaslt_fns[] = {
#define CUBLASLT_FN(req, ret, name, params) {#name, NULL, req, offsetof(struct cublaslt_fns, name)},
#include "bindings/cublaslt_functions.def"
#undef CUBLASLT_FN
};

/* $GPUVET_CUBLASLT_LIB as a file, else the sonames (in that directory when it names one). */
static int open_library(struct dynlib *dl, char *err, size_t errsize) {
        static const struct dynlib_search search = {
                .env = CUBLASLT_LIB_ENV, .env_dir = true, .sonames = sonames, .n_sonames = ARRAY_COUNT(sonames)};
        const char *env;
        enum dynlib_searched searched;
        char why[768];
        if (dynlib_search_open(&search, dl, &env, &searched, why, sizeof(why)) == 0)
                return 0;
        if (searched == DYNLIB_SEARCHED_ENV_FILE) {
                snprintf(err, errsize, "cannot load cuBLASLt library %s (from $" CUBLASLT_LIB_ENV "): %s", env, why);
                return -ENOENT;
        }
        snprintf(err, errsize,
                 "libcublasLt.so.13/.12/.11 not found%s%s (tried %s); install cuBLAS from the CUDA toolkit (or a pip "
                 "nvidia-cublas wheel and point $" CUBLASLT_LIB_ENV " at its lib directory)",
                 env ? " in " : "", env ? env : "", why);
        return -ENOENT;
}

int cublaslt_open(struct cublaslt **ret, char *err, size_t errsize) {
        *ret = NULL;
        struct cublaslt *lt = calloc(1, sizeof(*lt));
        if (!lt) {
                snprintf(err, errsize, "out of memory");
                return -ENOMEM;
        }
        int r = open_library(&lt->dl, err, errsize);
        if (r < 0) {
                free(lt);
                return r;
        }
        const char *missing = NULL;
        if (dynlib_resolve(&lt->dl, cublaslt_fns, ARRAY_COUNT(cublaslt_fns), &lt->fn, &missing) < 0) {
                snprintf(err, errsize, "%s has no %s: not a cuBLASLt gpuvet can use", lt->dl.name, missing);
                free(lt);
                return -ENOSYS;
        }
        lt->version = lt->fn.cublasLtGetVersion();
        *ret = lt;
        return 0;
}

struct cublaslt *cublaslt_close(struct cublaslt *lt) {
        /* No dlclose: cuBLASLt and the CUDA runtime inside it keep threads and atexit
         * handlers that outlive a close (as the driver does, bindings/cuda.h). */
        free(lt);
        return NULL;
}

#include "bindings/cublaslt.h"
#include "bindings/libload.h"
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

/* Each name is the constant's own spelling. */
#define NAMED(st) {st, #st}
static const struct {
        cublasStatus_t st;
        const char *name;
} statuses[] = {
        NAMED(CUBLAS_STATUS_SUCCESS),
        NAMED(CUBLAS_STATUS_NOT_INITIALIZED),
        NAMED(CUBLAS_STATUS_ALLOC_FAILED),
        NAMED(CUBLAS_STATUS_INVALID_VALUE),
        NAMED(CUBLAS_STATUS_ARCH_MISMATCH),
        NAMED(CUBLAS_STATUS_MAPPING_ERROR),
        NAMED(CUBLAS_STATUS_EXECUTION_FAILED),
        NAMED(CUBLAS_STATUS_INTERNAL_ERROR),
        NAMED(CUBLAS_STATUS_NOT_SUPPORTED),
        NAMED(CUBLAS_STATUS_LICENSE_ERROR),
};
#undef NAMED

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
#define CUBLASLT_FN(req, ret, name, params) {#name, NULL, req, offsetof(struct cublaslt, fn.name)},
#include "bindings/cublaslt_functions.def"
#undef CUBLASLT_FN
};

static int read_version(void *obj, char *err, size_t errsize) {
        (void)err, (void)errsize;
        struct cublaslt *lt = obj;
        lt->version = lt->fn.cublasLtGetVersion();
        return 0;
}

/* $GPUVET_CUBLASLT_LIB as a file, else the sonames (in that directory when it names one). */
static const struct libload cublaslt_load = {
        .search = {.env = CUBLASLT_LIB_ENV, .env_dir = true, .sonames = sonames, .n_sonames = ARRAY_COUNT(sonames)},
        .title = "cuBLASLt library",
        .sonames_text = "libcublasLt.so.13/.12/.11",
        .install = "install cuBLAS from the CUDA toolkit (or a pip nvidia-cublas wheel and point $" CUBLASLT_LIB_ENV
                   " at its lib directory)",
        .kind = "a cuBLASLt",
        .layout = LIBLOAD_LAYOUT(struct cublaslt, cublaslt_fns),
        .init = read_version,
};

int cublaslt_open(struct cublaslt **ret, char *err, size_t errsize) {
        void *lt;
        int r = libload_open(&cublaslt_load, &lt, err, errsize);
        *ret = lt;
        return r;
}

struct cublaslt *cublaslt_close(struct cublaslt *lt) {
        /* No dlclose: cuBLASLt and the CUDA runtime inside it keep threads and atexit
         * handlers that outlive a close (as the driver does, bindings/cuda.h). */
        free(lt);
        return NULL;
}

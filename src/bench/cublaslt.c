#include "bench/cublaslt.h"

#include <dlfcn.h>
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

static void *(*loader_dlopen)(const char *, int) = dlopen;

void cublaslt_set_dlopen(void *(*fn)(const char *file, int mode)) {
        loader_dlopen = fn ? fn : dlopen;
}

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
        for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
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

static int resolve(struct cublaslt *lt, char *err, size_t errsize) {
        static const struct {
                const char *name;
                bool required;
                size_t offset;
        } syms[] = {
#define CUBLASLT_FN(req, ret, name, params) {#name, req, offsetof(struct cublaslt_fns, name)},
#include "bench/cublaslt_functions.def"
#undef CUBLASLT_FN
        };
        _Static_assert(sizeof(void *) == sizeof(cublasLtCreate_fn), "function pointers are not object-pointer sized");
        for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
                void *p = dlsym(lt->lib, syms[i].name);
                if (!p && syms[i].required) {
                        snprintf(err, errsize, "%s has no %s: not a cuBLASLt gpuvet can use", lt->lib_name,
                                 syms[i].name);
                        return -ENOSYS;
                }
                memcpy((char *)&lt->fn + syms[i].offset, &p, sizeof(p));
        }
        return 0;
}

static bool is_dir(const char *path) {
        struct stat st;
        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int cublaslt_open(struct cublaslt **ret, char *err, size_t errsize) {
        *ret = NULL;
        struct cublaslt *lt = calloc(1, sizeof(*lt));
        if (!lt) {
                snprintf(err, errsize, "out of memory");
                return -ENOMEM;
        }
        /* secure_getenv: a privileged gpuvet must not load a library a caller names. */
        const char *env = secure_getenv(CUBLASLT_LIB_ENV);
        if (env && !*env)
                env = NULL;
        char why[3][256] = {"", "", ""};
        if (env && !is_dir(env)) {
                snprintf(lt->lib_name, sizeof(lt->lib_name), "%s", env);
                lt->lib = loader_dlopen(env, RTLD_NOW | RTLD_LOCAL);
                if (!lt->lib) {
                        const char *e = dlerror();
                        snprintf(err, errsize, "cannot load cuBLASLt library %s (from $" CUBLASLT_LIB_ENV "): %s", env,
                                 e ? e : "unknown dynamic loader error");
                        free(lt);
                        return -ENOENT;
                }
        } else {
                for (size_t i = 0; i < sizeof(sonames) / sizeof(sonames[0]) && !lt->lib; i++) {
                        if (env)
                                snprintf(lt->lib_name, sizeof(lt->lib_name), "%s/%s", env, sonames[i]);
                        else
                                snprintf(lt->lib_name, sizeof(lt->lib_name), "%s", sonames[i]);
                        lt->lib = loader_dlopen(lt->lib_name, RTLD_NOW | RTLD_LOCAL);
                        if (!lt->lib) {
                                const char *e = dlerror();
                                snprintf(why[i], sizeof(why[i]), "%s", e ? e : "unknown dynamic loader error");
                        }
                }
                if (!lt->lib) {
                        /* The first reason names the newest soname; the others say the same. */
                        snprintf(err, errsize,
                                 "libcublasLt.so.13/.12/.11 not found%s%s (%s); install cuBLAS from the CUDA toolkit "
                                 "(or a pip nvidia-cublas wheel and point $" CUBLASLT_LIB_ENV " at its lib directory)",
                                 env ? " in " : "", env ? env : "", why[0]);
                        free(lt);
                        return -ENOENT;
                }
        }
        int r = resolve(lt, err, errsize);
        if (r < 0) {
                free(lt);
                return r;
        }
        lt->version = lt->fn.cublasLtGetVersion();
        *ret = lt;
        return 0;
}

struct cublaslt *cublaslt_close(struct cublaslt *lt) {
        /* No dlclose: cuBLASLt and the CUDA runtime inside it keep threads and atexit
         * handlers that outlive a close (as the driver does, src/bench/cuda.c). */
        free(lt);
        return NULL;
}

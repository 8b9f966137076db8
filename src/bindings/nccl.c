#include "bindings/nccl.h"
#include "bindings/libload.h"
#include "core/array.h"

#include <errno.h>
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/collective.h"

/* bench/collective.h names NCCL's types and operations in gpuvet's enums, with NCCL's values,
 * so that the benchmark passes them through unchanged. */
#define SAME(a, b) _Static_assert((int)(a) == (int)(b), #a " differs from " #b)
SAME(NCCL_DT_INT8, ncclInt8);
SAME(NCCL_DT_UINT8, ncclUint8);
SAME(NCCL_DT_INT32, ncclInt32);
SAME(NCCL_DT_UINT32, ncclUint32);
SAME(NCCL_DT_INT64, ncclInt64);
SAME(NCCL_DT_UINT64, ncclUint64);
SAME(NCCL_DT_FLOAT16, ncclFloat16);
SAME(NCCL_DT_FLOAT32, ncclFloat32);
SAME(NCCL_DT_FLOAT64, ncclFloat64);
SAME(NCCL_DT_BFLOAT16, ncclBfloat16);
SAME(NCCL_OP_SUM, ncclSum);
SAME(NCCL_OP_PROD, ncclProd);
SAME(NCCL_OP_MAX, ncclMax);
SAME(NCCL_OP_MIN, ncclMin);
SAME(NCCL_OP_AVG, ncclAvg);
SAME(NCCL_OP_COUNT, ncclNumOps);

#define NCCL_LIB_ENV "GPUVET_NCCL_LIB"
#define NCCL_SONAME "libnccl.so.2"

/* Where pip puts the nvidia-nccl-cu13 / -cu12 wheels' library for the system Pythons
 * (site-packages for pip's own installs, dist-packages for Debian's). */
static const char *const wheel_globs[] = {
        "/usr/local/lib/python3*/site-packages/nvidia/nccl/lib/" NCCL_SONAME,
        "/usr/local/lib/python3*/dist-packages/nvidia/nccl/lib/" NCCL_SONAME,
        "/usr/lib/python3*/site-packages/nvidia/nccl/lib/" NCCL_SONAME,
        "/usr/lib/python3*/dist-packages/nvidia/nccl/lib/" NCCL_SONAME,
        "/usr/lib64/python3*/site-packages/nvidia/nccl/lib/" NCCL_SONAME,
};

/* Each name is the constant's own spelling. */
#define NAMED(rc) {rc, #rc}
static const struct {
        ncclResult_t rc;
        const char *name;
} results[] = {
        NAMED(ncclSuccess),
        NAMED(ncclUnhandledCudaError),
        NAMED(ncclSystemError),
        NAMED(ncclInternalError),
        NAMED(ncclInvalidArgument),
        NAMED(ncclInvalidUsage),
        NAMED(ncclRemoteError),
        NAMED(ncclInProgress),
};
#undef NAMED

void nccl_version_split(int code, int *ret_major, int *ret_minor, int *ret_patch) {
        /* NCCL_VERSION: X*1000 + Y*100 + Z up to 2.8, X*10000 + Y*100 + Z from 2.9 */
        if (code < 10000) {
                *ret_major = code / 1000;
                *ret_minor = code % 1000 / 100;
        } else {
                *ret_major = code / 10000;
                *ret_minor = code % 10000 / 100;
        }
        *ret_patch = code % 100;
}

const char *nccl_result_name(const struct nccl *nc, ncclResult_t rc) {
        for (size_t i = 0; i < ARRAY_COUNT(results); i++)
                if (results[i].rc == rc)
                        return results[i].name;
        /* not the library's ncclGetErrorString: it answers prose ("unhandled cuda error ..."),
         * not a name */
        (void)nc;
        return NULL;
}

int nccl_fail(struct nccl *nc, const char *call, ncclResult_t rc, ncclComm_t comm, const char *context) {
        const char *name = nccl_result_name(nc, rc);
        const char *last = NULL;
        if (comm && nc->fn.ncclGetLastError) {
                last = nc->fn.ncclGetLastError(comm);
                if (last && !*last)
                        last = NULL;
        }
        snprintf(nc->err, sizeof(nc->err), "%s: %s (%d)%s%s%s%s", call, name ? name : "unknown NCCL result", (int)rc,
                 last ? ": " : "", last ? last : "", context ? ", " : "", context ? context : "");
        switch (rc) {
        case ncclInvalidArgument:
        case ncclInvalidUsage:
                return -EINVAL;
        case ncclInProgress:
                return -EAGAIN;
        case ncclRemoteError:
                return -EREMOTEIO;
        default:
                return -EIO;
        }
}

static const struct dynlib_fn nccl_fns[] = {
#define NCCL_FN(req, ret, name, params) {#name, NULL, req, offsetof(struct nccl, fn.name)},
#include "bindings/nccl_functions.def"
#undef NCCL_FN
};

int nccl_find_wheel(const char *root, char *buf, size_t size) {
        for (size_t i = 0; i < ARRAY_COUNT(wheel_globs); i++) {
                char pattern[1024];
                snprintf(pattern, sizeof(pattern), "%s%s", root ? root : "", wheel_globs[i]);
                glob_t g;
                int r = glob(pattern, 0, NULL, &g);
                if (r == 0 && g.gl_pathc > 0) {
                        /* glob sorts: the last is the newest Python's (python3.9 sorts after
                         * python3.12, an old interpreter's wheel is still a working NCCL) */
                        snprintf(buf, size, "%s", g.gl_pathv[g.gl_pathc - 1]);
                        globfree(&g);
                        return 0;
                }
                if (r == 0)
                        globfree(&g);
        }
        return -ENOENT;
}

static int system_wheel(char *buf, size_t size) {
        return nccl_find_wheel("", buf, size);
}

/* Refuses an NCCL older than gpuvet's oldest. */
static int check_version(void *obj, char *err, size_t errsize) {
        struct nccl *nc = obj;
        ncclResult_t rc = nc->fn.ncclGetVersion(&nc->version);
        if (rc != ncclSuccess) {
                (void)nccl_fail(nc, "ncclGetVersion", rc, NULL, NULL);
                snprintf(err, errsize, "%s: %s", nc->dl.name, nc->err);
                return -EIO;
        }
        nccl_version_split(nc->version, &nc->major, &nc->minor, &nc->patch);
        if (nc->version < NCCL_MIN_VERSION) {
                snprintf(err, errsize, "%s is NCCL %d.%d.%d; gpuvet needs 2.7.0 or newer (ncclSend/ncclRecv)",
                         nc->dl.name, nc->major, nc->minor, nc->patch);
                return -EPROTONOSUPPORT;
        }
        return 0;
}

static const char *const sonames[] = {NCCL_SONAME};

/* $GPUVET_NCCL_LIB as a file (or the soname in it as a directory), else the soname, else
 * a wheel's copy. */
static const struct libload nccl_load = {
        .search = {.env = NCCL_LIB_ENV, .env_dir = true, .sonames = sonames, .n_sonames = 1, .extra = system_wheel},
        .title = "NCCL library",
        .sonames_text = NCCL_SONAME,
        .install = "install NCCL (the libnccl2 package, the CUDA toolkit's, or a pip nvidia-nccl-cu13 wheel, and "
                   "point $" NCCL_LIB_ENV " at its lib directory)",
        .kind = "an NCCL",
        .layout = LIBLOAD_LAYOUT(struct nccl, nccl_fns),
        .init = check_version,
};

int nccl_open(struct nccl **ret, char *err, size_t errsize) {
        void *nc;
        int r = libload_open(&nccl_load, &nc, err, errsize);
        *ret = nc;
        return r;
}

struct nccl *nccl_close(struct nccl *nc) {
        /* No dlclose: NCCL's proxy threads and the CUDA runtime inside it outlive a close
         * (as the driver's do, bindings/cuda.h). */
        free(nc);
        return NULL;
}

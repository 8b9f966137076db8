/* NCCL loaded at run time (core/dynlib.h), for the collective benchmarks (issue 15).
 *
 * Library: $GPUVET_NCCL_LIB when set: a file, loaded as is, or a directory, searched for
 * libnccl.so.2 (a pip-installed nvidia-nccl-cu12/-cu13 wheel keeps it in
 * site-packages/nvidia/nccl/lib); else libnccl.so.2 through the dynamic loader's usual
 * search (the CUDA toolkit's lib directory, /usr/lib from the libnccl2 package); else the
 * wheels' directories under the system Python's site-packages and dist-packages
 * (/usr/lib/python3* and /usr/local/lib/python3*, first match). NCCL finds the CUDA
 * runtime it was linked with and the driver (libcuda.so.1) itself.
 *
 * Errors are values: 0 or a negative errno, with a message naming the call and the NCCL
 * result in nc->err ("ncclAllReduce: ncclUnhandledCudaError (1)"). Nothing here prints. */
#pragma once

#include <stddef.h>

#include "core/dynlib.h"
#include "bindings/nccl_api.h"

struct nccl_fns {
#define NCCL_FN(req, ret, name, params) name##_fn name;
#include "bindings/nccl_functions.def"
#undef NCCL_FN
};

struct nccl {
        struct dynlib dl;     /* dl.name: the file or soname that loaded */
        int version;          /* ncclGetVersion(): 22809 for 2.28.9 */
        int major, minor, patch;
        struct nccl_fns fn;
        char err[512];
};

/* The oldest NCCL gpuvet accepts: 2.7.0, the first with ncclSend/ncclRecv. */
#define NCCL_MIN_VERSION 2700

/* Load the library, resolve every function and ask its version. -ENOENT: no library (err
 * names what was tried); -ENOSYS: a required symbol is missing (err names it); -EIO:
 * ncclGetVersion failed; -EPROTONOSUPPORT: older than NCCL_MIN_VERSION (err gives both);
 * -ENOMEM. */
int nccl_open(struct nccl **ret, char *err, size_t errsize);
/* NULL-safe; the library stays mapped (NCCL keeps proxy threads and CUDA state that
 * outlive a close). */
struct nccl *nccl_close(struct nccl *nc);

/* The first libnccl.so.2 of a pip wheel (nvidia-nccl-cu13, -cu12) under root ("" for /):
 * <root>/usr/{local/,}lib{,64}/python3.N/{site,dist}-packages/nvidia/nccl/lib/libnccl.so.2 (any N),
 * into buf. 0, or -ENOENT when there is none. */
int nccl_find_wheel(const char *root, char *buf, size_t size);
/* Split an ncclGetVersion() code: 2.28.9 is 22809, 2.8.4 is 2804 (NCCL_VERSION's two
 * encodings). */
void nccl_version_split(int code, int *ret_major, int *ret_minor, int *ret_patch);
/* "ncclInvalidArgument", or NULL for a code nccl_api.h does not name (a newer NCCL's);
 * nc may be NULL. */
const char *nccl_result_name(const struct nccl *nc, ncclResult_t rc);
/* Record "call: NAME (code)[: last error][, context]" in nc->err, with the library's
 * ncclGetLastError(comm) when it has one; return -EINVAL for ncclInvalidArgument and
 * ncclInvalidUsage, -EAGAIN for ncclInProgress, -EREMOTEIO for ncclRemoteError, else -EIO. */
int nccl_fail(struct nccl *nc, const char *call, ncclResult_t rc, ncclComm_t comm, const char *context);

/* libibverbs (rdma-core) loaded at run time (core/dynlib.h), for `gpuvet bench rdma`.
 *
 * Library: $GPUVET_VERBS_LIB when set (a file, loaded as is: the tests' fake), else
 * libibverbs.so.1 through the dynamic loader's usual search. The providers (libmlx5 ...)
 * are libibverbs' own business: it loads them from its driver directory.
 *
 * Errors are values: 0 or a negative errno with a message in err. Nothing here prints. */
#pragma once

#include <stddef.h>

#include "core/dynlib.h"
#include "bindings/verbs_api.h"

struct verbs_fns {
#define VERBS_FN(req, ret, name, params) name##_fn name;
#include "bindings/verbs_functions.def"
#undef VERBS_FN
};

struct verbs {
        struct dynlib dl; /* dl.name: the file or soname that loaded */
        struct verbs_fns fn;
};

#define VERBS_LIB_ENV "GPUVET_VERBS_LIB"
#define VERBS_SONAME "libibverbs.so.1"
/* What installs it, for messages. */
#define VERBS_PACKAGE_HINT                                                                                      \
        "install rdma-core's verbs library and its providers (Debian/Ubuntu: apt install libibverbs1 "          \
        "ibverbs-providers; RHEL/Rocky: dnf install libibverbs), or point $" VERBS_LIB_ENV " at a libibverbs.so.1"

/* Load the library and resolve every function. -ENOENT: no library (err names what was
 * tried and the package); -ENOSYS: a required symbol is missing (err names it); -ENOMEM. */
int verbs_open(struct verbs **ret, char *err, size_t errsize);
/* NULL-safe. The library stays mapped: a provider may keep threads. */
struct verbs *verbs_close(struct verbs *v);

/* Inline calls of verbs.h, through the context's function table. */
static inline int verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr) {
        return qp->context->ops.post_send(qp, wr, bad_wr);
}
static inline int verbs_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc) {
        return cq->context->ops.poll_cq(cq, n, wc);
}

/* "IBV_WC_REM_ACCESS_ERR"-like name of a completion status (our table; NULL for a code
 * verbs_api.h does not name). */
const char *verbs_wc_status_name(enum ibv_wc_status s);

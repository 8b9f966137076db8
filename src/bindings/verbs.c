#include "bindings/verbs.h"
#include "bindings/libload.h"
#include "core/array.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static const struct dynlib_fn verbs_fns[] = {
#define VERBS_FN(req, ret, name, params) {#name, NULL, req, offsetof(struct verbs, fn.name)},
#include "bindings/verbs_functions.def"
#undef VERBS_FN
};

/* Each name is the constant's own spelling. */
#define NAMED(s) [s] = #s
static const char *const wc_names[] = {
        NAMED(IBV_WC_SUCCESS),
        NAMED(IBV_WC_LOC_LEN_ERR),
        NAMED(IBV_WC_LOC_QP_OP_ERR),
        NAMED(IBV_WC_LOC_EEC_OP_ERR),
        NAMED(IBV_WC_LOC_PROT_ERR),
        NAMED(IBV_WC_WR_FLUSH_ERR),
        NAMED(IBV_WC_MW_BIND_ERR),
        NAMED(IBV_WC_BAD_RESP_ERR),
        NAMED(IBV_WC_LOC_ACCESS_ERR),
        NAMED(IBV_WC_REM_INV_REQ_ERR),
        NAMED(IBV_WC_REM_ACCESS_ERR),
        NAMED(IBV_WC_REM_OP_ERR),
        NAMED(IBV_WC_RETRY_EXC_ERR),
        NAMED(IBV_WC_RNR_RETRY_EXC_ERR),
        NAMED(IBV_WC_LOC_RDD_VIOL_ERR),
        NAMED(IBV_WC_REM_INV_RD_REQ_ERR),
        NAMED(IBV_WC_REM_ABORT_ERR),
        NAMED(IBV_WC_INV_EECN_ERR),
        NAMED(IBV_WC_INV_EEC_STATE_ERR),
        NAMED(IBV_WC_FATAL_ERR),
        NAMED(IBV_WC_RESP_TIMEOUT_ERR),
        NAMED(IBV_WC_GENERAL_ERR),
        NAMED(IBV_WC_TM_ERR),
        NAMED(IBV_WC_TM_RNDV_INCOMPLETE),
};
#undef NAMED

const char *verbs_wc_status_name(enum ibv_wc_status s) {
        if ((unsigned)s < ARRAY_COUNT(wc_names))
                return wc_names[s];
        return NULL;
}

static const char *const sonames[] = {VERBS_SONAME};

static const struct libload verbs_load = {
        .search = {.env = VERBS_LIB_ENV, .sonames = sonames, .n_sonames = 1},
        .title = "the verbs library",
        .env_hint = "; unset it to use the system's " VERBS_SONAME " (Debian/Ubuntu: apt install libibverbs1 "
                    "ibverbs-providers; RHEL/Rocky: dnf install libibverbs)",
        .sonames_text = VERBS_SONAME,
        .install = VERBS_PACKAGE_HINT,
        .kind = "a libibverbs",
        .layout = LIBLOAD_LAYOUT(struct verbs, verbs_fns),
        .close_refused = true,
};

int verbs_open(struct verbs **ret, char *err, size_t errsize) {
        void *v;
        int r = libload_open(&verbs_load, &v, err, errsize);
        *ret = v;
        return r;
}

struct verbs *verbs_close(struct verbs *v) {
        free(v);
        return NULL;
}

#include "bindings/verbs.h"
#include "core/array.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static const struct dynlib_fn verbs_fns[] = {
#define VERBS_FN(req, ret, name, params) {#name, NULL, req, offsetof(struct verbs_fns, name)},
#include "bindings/verbs_functions.def"
#undef VERBS_FN
};

static const char *const wc_names[] = {
        [IBV_WC_SUCCESS] = "IBV_WC_SUCCESS",
        [IBV_WC_LOC_LEN_ERR] = "IBV_WC_LOC_LEN_ERR",
        [IBV_WC_LOC_QP_OP_ERR] = "IBV_WC_LOC_QP_OP_ERR",
        [IBV_WC_LOC_EEC_OP_ERR] = "IBV_WC_LOC_EEC_OP_ERR",
        [IBV_WC_LOC_PROT_ERR] = "IBV_WC_LOC_PROT_ERR",
        [IBV_WC_WR_FLUSH_ERR] = "IBV_WC_WR_FLUSH_ERR",
        [IBV_WC_MW_BIND_ERR] = "IBV_WC_MW_BIND_ERR",
        [IBV_WC_BAD_RESP_ERR] = "IBV_WC_BAD_RESP_ERR",
        [IBV_WC_LOC_ACCESS_ERR] = "IBV_WC_LOC_ACCESS_ERR",
        [IBV_WC_REM_INV_REQ_ERR] = "IBV_WC_REM_INV_REQ_ERR",
        [IBV_WC_REM_ACCESS_ERR] = "IBV_WC_REM_ACCESS_ERR",
        [IBV_WC_REM_OP_ERR] = "IBV_WC_REM_OP_ERR",
        [IBV_WC_RETRY_EXC_ERR] = "IBV_WC_RETRY_EXC_ERR",
        [IBV_WC_RNR_RETRY_EXC_ERR] = "IBV_WC_RNR_RETRY_EXC_ERR",
        [IBV_WC_LOC_RDD_VIOL_ERR] = "IBV_WC_LOC_RDD_VIOL_ERR",
        [IBV_WC_REM_INV_RD_REQ_ERR] = "IBV_WC_REM_INV_RD_REQ_ERR",
        [IBV_WC_REM_ABORT_ERR] = "IBV_WC_REM_ABORT_ERR",
        [IBV_WC_INV_EECN_ERR] = "IBV_WC_INV_EECN_ERR",
        [IBV_WC_INV_EEC_STATE_ERR] = "IBV_WC_INV_EEC_STATE_ERR",
        [IBV_WC_FATAL_ERR] = "IBV_WC_FATAL_ERR",
        [IBV_WC_RESP_TIMEOUT_ERR] = "IBV_WC_RESP_TIMEOUT_ERR",
        [IBV_WC_GENERAL_ERR] = "IBV_WC_GENERAL_ERR",
        [IBV_WC_TM_ERR] = "IBV_WC_TM_ERR",
        [IBV_WC_TM_RNDV_INCOMPLETE] = "IBV_WC_TM_RNDV_INCOMPLETE",
};

const char *verbs_wc_status_name(enum ibv_wc_status s) {
        if ((unsigned)s < ARRAY_COUNT(wc_names))
                return wc_names[s];
        return NULL;
}

int verbs_open(struct verbs **ret, char *err, size_t errsize) {
        *ret = NULL;
        struct verbs *v = calloc(1, sizeof(*v));
        if (!v) {
                snprintf(err, errsize, "out of memory");
                return -ENOMEM;
        }
        static const char *const sonames[] = {VERBS_SONAME};
        static const struct dynlib_search search = {.env = VERBS_LIB_ENV, .sonames = sonames, .n_sonames = 1};
        const char *env;
        enum dynlib_searched searched;
        char why[768];
        int r;
        if (dynlib_search_open(&search, &v->dl, &env, &searched, why, sizeof(why)) < 0) {
                if (searched == DYNLIB_SEARCHED_ENV_FILE)
                        snprintf(err, errsize,
                                 "cannot load the verbs library %s (from $" VERBS_LIB_ENV "): %s; unset it to use "
                                 "the system's " VERBS_SONAME " (Debian/Ubuntu: apt install libibverbs1 "
                                 "ibverbs-providers; RHEL/Rocky: dnf install libibverbs)",
                                 env, why);
                else
                        snprintf(err, errsize, VERBS_SONAME " not found (tried %s); " VERBS_PACKAGE_HINT, why);
                r = -ENOENT;
                goto fail;
        }
        const char *missing = NULL;
        if (dynlib_resolve(&v->dl, verbs_fns, ARRAY_COUNT(verbs_fns), &v->fn, &missing) < 0) {
                snprintf(err, errsize, "%s has no %s: not a libibverbs gpuvet can use", v->dl.name, missing);
                dynlib_close(&v->dl);
                r = -ENOSYS;
                goto fail;
        }
        *ret = v;
        return 0;
fail:
        free(v);
        return r;
}

struct verbs *verbs_close(struct verbs *v) {
        free(v);
        return NULL;
}

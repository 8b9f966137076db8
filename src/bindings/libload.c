#include "bindings/libload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static int search(const struct libload *l, struct dynlib *dl, char *err, size_t errsize) {
        const char *env;
        enum dynlib_searched searched;
        char why[768];
        if (dynlib_search_open(&l->search, dl, &env, &searched, why, sizeof(why)) == 0)
                return 0;
        if (searched == DYNLIB_SEARCHED_ENV_FILE)
                snprintf(err, errsize, "cannot load %s %s (from $%s): %s%s", l->title, env, l->search.env, why,
                         l->env_hint ? l->env_hint : "");
        else
                snprintf(err, errsize, "%s not found%s%s (tried %s); %s", l->sonames_text, env ? " in " : "",
                         env ? env : "", why, l->install);
        return -ENOENT;
}

int libload_open(const struct libload *l, void **ret, char *err, size_t errsize) {
        *ret = NULL;
        char *obj = calloc(1, l->size);
        if (!obj) {
                snprintf(err, errsize, "out of memory");
                return -ENOMEM;
        }
        struct dynlib *dl = (struct dynlib *)(obj + l->dl_offset);
        int r = search(l, dl, err, errsize);
        if (r < 0) {
                free(obj);
                return r;
        }
        const char *missing = NULL;
        if (dynlib_resolve(dl, l->fns, l->n_fns, obj, &missing) < 0) {
                snprintf(err, errsize, "%s has no %s: not %s gpuvet can use", dl->name, missing, l->kind);
                r = -ENOSYS;
                goto refuse;
        }
        if (l->init && (r = l->init(obj, err, errsize)) < 0)
                goto refuse;
        *ret = obj;
        return 0;
refuse:
        if (l->close_refused)
                dynlib_close(dl);
        free(obj);
        return r;
}

#include "bindings/libload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int libload_object(const struct libload_layout *layout, const struct dynlib *dl, void **ret, const char **missing,
                   char *err, size_t errsize) {
        *ret = NULL;
        char *obj = calloc(1, layout->size);
        if (!obj) {
                snprintf(err, errsize, "out of memory loading %s", dl->name);
                return -ENOMEM;
        }
        struct dynlib *own = (struct dynlib *)(obj + layout->dl_offset);
        memcpy(own, dl, sizeof(*own));
        if (dynlib_resolve(own, layout->fns, layout->n_fns, obj, missing) < 0) {
                free(obj);
                return -ENOSYS;
        }
        *ret = obj;
        return 0;
}

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
        struct dynlib dl;
        int r = search(l, &dl, err, errsize);
        if (r < 0)
                return r;
        void *obj;
        const char *missing = NULL;
        r = libload_object(&l->layout, &dl, &obj, &missing, err, errsize);
        if (r == -ENOSYS)
                snprintf(err, errsize, "%s has no %s: not %s gpuvet can use", dl.name, missing, l->kind);
        if (r == 0 && l->init && (r = l->init(obj, err, errsize)) < 0)
                free(obj);
        if (r < 0) {
                if (l->close_refused)
                        dynlib_close(&dl);
                return r;
        }
        *ret = obj;
        return 0;
}

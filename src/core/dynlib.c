#include "core/dynlib.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dynlib_load(const char *const *sonames, const struct dynlib_sym *syms, size_t n_syms, void *table,
                void **ret_handle, char *err, size_t errsize) {
        void *handle = NULL;
        char tried[512] = "";
        for (size_t i = 0; sonames[i] && !handle; i++) {
                handle = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
                if (!handle) {
                        size_t len = strlen(tried);
                        snprintf(tried + len, sizeof(tried) - len, "%s%s", len ? "; " : "", dlerror());
                }
        }
        if (!handle) {
                snprintf(err, errsize, "cannot load %s: %s", sonames[0], tried);
                return -ENOENT;
        }
        void **ptrs = malloc(n_syms * sizeof(void *));
        if (!ptrs) {
                dlclose(handle);
                snprintf(err, errsize, "out of memory");
                return -ENOMEM;
        }
        for (size_t i = 0; i < n_syms; i++) {
                ptrs[i] = dlsym(handle, syms[i].name);
                if (!ptrs[i]) {
                        snprintf(err, errsize, "%s lacks %s", sonames[0], syms[i].name);
                        free(ptrs);
                        dlclose(handle);
                        return -ENOSYS;
                }
        }
        for (size_t i = 0; i < n_syms; i++)
                memcpy((char *)table + syms[i].offset, &ptrs[i], sizeof(void *));
        free(ptrs);
        *ret_handle = handle;
        return 0;
}

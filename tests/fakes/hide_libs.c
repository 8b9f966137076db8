/* A machine without some libraries, for tests/unit/test_missing_libs.py: preloaded, it makes
 * dlopen fail for every file whose name contains one of the comma-separated words of
 * $HIDE_LIBS, with the loader's own reason ("/nonexistent/libfoo.so.1: cannot open shared
 * object file"), and passes every other file through. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool hidden(const char *file) {
        const char *words = getenv("HIDE_LIBS");
        if (!file || !words)
                return false;
        char copy[512];
        snprintf(copy, sizeof(copy), "%s", words);
        char *save = NULL;
        for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save))
                if (*w && strstr(file, w))
                        return true;
        return false;
}

void *dlopen(const char *file, int flags) {
        void *(*real)(const char *, int) = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
        if (!real)
                return NULL;
        if (hidden(file)) {
                const char *base = strrchr(file, '/');
                char gone[600];
                snprintf(gone, sizeof(gone), "/nonexistent/%s", base ? base + 1 : file);
                return real(gone, flags);
        }
        return real(file, flags);
}

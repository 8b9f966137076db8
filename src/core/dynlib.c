#include "core/dynlib.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/strbuf.h"

/* ---- the system seam ----------------------------------------------------------------- */

static void *system_open(const char *file, int flags) {
        return dlopen(file, flags);
}

static void *system_sym(void *handle, const char *name) {
        return dlsym(handle, name);
}

static int system_close(void *handle) {
        return dlclose(handle);
}

static char *system_error(void) {
        return dlerror();
}

/* The link map holds the file the dynamic linker actually opened (the soname resolved
 * through its search path); realpath then follows libnvidia-ml.so.1 to the versioned
 * file, e.g. libnvidia-ml.so.570.86.10, which is what evidence should name. */
static int system_origin(void *handle, char *buf, size_t size) {
        struct link_map *map = NULL;
        if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name || !map->l_name[0])
                return -ENOENT;
        char real[PATH_MAX];
        const char *name = realpath(map->l_name, real) ? real : map->l_name;
        if (strlen(name) >= size)
                return -ENAMETOOLONG;
        memcpy(buf, name, strlen(name) + 1);
        return 0;
}

const struct dynlib_seam dynlib_system = {
        .open = system_open,
        .sym = system_sym,
        .close = system_close,
        .error = system_error,
        .origin = system_origin,
};

static const struct dynlib_seam *current_seam = &dynlib_system;

void dynlib_set_seam(const struct dynlib_seam *seam) {
        current_seam = seam ? seam : &dynlib_system;
}

/* dlsym hands back a void *; POSIX guarantees it converts to a function pointer, and the
 * tables are filled by copying one into the other. */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "function pointers are not object-pointer sized");

/* ---- opening ------------------------------------------------------------------------- */

/* dlerror usually starts with the file name ("libnvidia-ml.so.1: cannot open shared
 * object file: ..."); drop it, since every message here names the file already. */
static const char *loader_reason(const struct dynlib_seam *seam, const char *file) {
        const char *text = seam->error ? seam->error() : NULL;
        if (!text || !text[0])
                return "unknown dynamic loader error";
        size_t n = strlen(file);
        if (strncmp(text, file, n) == 0 && text[n] == ':' && text[n + 1] == ' ')
                return text + n + 2;
        return text;
}

static int open_one(const char *file, struct dynlib *ret, const char **why) {
        const struct dynlib_seam *seam = current_seam;
        memset(ret, 0, sizeof(*ret));
        void *h = seam->open(file, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
                *why = loader_reason(seam, file);
                return -ENOENT;
        }
        ret->handle = h;
        ret->seam = seam;
        snprintf(ret->name, sizeof(ret->name), "%s", file);
        if (!seam->origin || seam->origin(h, ret->path, sizeof(ret->path)) != 0)
                snprintf(ret->path, sizeof(ret->path), "%s", file);
        return 0;
}

int dynlib_open_file(const char *file, struct dynlib *ret, char *why, size_t whysize) {
        const char *reason = NULL;
        int r = open_one(file, ret, &reason);
        if (whysize)
                snprintf(why, whysize, "%s", r < 0 ? reason : "");
        return r;
}

int dynlib_open(const char *const *files, size_t n, struct dynlib *ret, char *tried, size_t triedsize) {
        if (triedsize)
                tried[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                if (!files[i] || !files[i][0])
                        continue;
                const char *reason = NULL;
                if (open_one(files[i], ret, &reason) == 0)
                        return 0;
                if (triedsize)
                        strbuf_appendf(tried, triedsize, "%s%s (%s)", tried[0] ? ", " : "", files[i], reason);
        }
        memset(ret, 0, sizeof(*ret));
        return -ENOENT;
}

/* ---- resolving ----------------------------------------------------------------------- */

int dynlib_resolve(const struct dynlib *lib, const struct dynlib_fn *fns, size_t n, void *table,
                   const char **missing) {
        for (size_t i = 0; i < n; i++) {
                void *p = lib->seam->sym(lib->handle, fns[i].name);
                if (!p && fns[i].fallback)
                        p = lib->seam->sym(lib->handle, fns[i].fallback);
                if (!p && fns[i].required) {
                        if (missing)
                                *missing = fns[i].name;
                        return -ENOSYS;
                }
                memcpy((char *)table + fns[i].offset, &p, sizeof(p));
        }
        return 0;
}

void dynlib_close(struct dynlib *lib) {
        if (!lib || !lib->handle)
                return;
        if (lib->seam && lib->seam->close)
                lib->seam->close(lib->handle);
        lib->handle = NULL;
}

int dynlib_load(const char *const *files, size_t n, const struct dynlib_fn *fns, size_t n_fns, void *table,
                struct dynlib *ret, char *err, size_t errsize) {
        char tried[768];
        if (dynlib_open(files, n, ret, tried, sizeof(tried)) < 0) {
                snprintf(err, errsize, "cannot load %s", tried);
                return -ENOENT;
        }
        /* Resolve into a scratch copy: a refused library leaves the caller's table as it was. */
        size_t size = 0;
        for (size_t i = 0; i < n_fns; i++)
                if (fns[i].offset + sizeof(void *) > size)
                        size = fns[i].offset + sizeof(void *);
        char *scratch = calloc(1, size ? size : 1);
        if (!scratch) {
                dynlib_close(ret);
                snprintf(err, errsize, "out of memory loading %s", ret->name);
                return -ENOMEM;
        }
        const char *missing = NULL;
        if (dynlib_resolve(ret, fns, n_fns, scratch, &missing) < 0) {
                snprintf(err, errsize, "%s lacks %s", ret->name, missing);
                free(scratch);
                dynlib_close(ret);
                return -ENOSYS;
        }
        for (size_t i = 0; i < n_fns; i++)
                memcpy((char *)table + fns[i].offset, scratch + fns[i].offset, sizeof(void *));
        free(scratch);
        return 0;
}

int dynlib_load_once(const char *const *files, size_t n, const struct dynlib_fn *fns, size_t n_fns, void *table,
                     struct dynlib *lib, const char *install, char *err, size_t errsize) {
        if (lib->handle)
                return 0;
        int r = dynlib_load(files, n, fns, n_fns, table, lib, err, errsize);
        if (r < 0) {
                size_t len = strlen(err);
                if (len < errsize)
                        snprintf(err + len, errsize - len, "; %s", install);
        }
        return r;
}

const char *dynlib_env(const char *name) {
        const char *v = secure_getenv(name);
        return v && *v ? v : NULL;
}

static bool is_dir(const char *path) {
        struct stat st;
        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int dynlib_search_open(const struct dynlib_search *s, struct dynlib *ret, const char **env_value,
                       enum dynlib_searched *searched, char *why, size_t whysize) {
        const char *env = s->env ? dynlib_env(s->env) : NULL;
        *env_value = env;
        if (env && !(s->env_dir && is_dir(env))) {
                *searched = DYNLIB_SEARCHED_ENV_FILE;
                return dynlib_open_file(env, ret, why, whysize);
        }
        *searched = env ? DYNLIB_SEARCHED_ENV_DIR : DYNLIB_SEARCHED_SONAMES;
        char paths[DYNLIB_SEARCH_MAX][512];
        const char *files[DYNLIB_SEARCH_MAX];
        size_t n = 0;
        for (size_t i = 0; i < s->n_sonames && n < DYNLIB_SEARCH_MAX; i++, n++) {
                if (env)
                        snprintf(paths[n], sizeof(paths[n]), "%s/%s", env, s->sonames[i]);
                else
                        snprintf(paths[n], sizeof(paths[n]), "%s", s->sonames[i]);
                files[n] = paths[n];
        }
        if (!env && s->extra && n < DYNLIB_SEARCH_MAX && s->extra(paths[n], sizeof(paths[n])) == 0) {
                files[n] = paths[n];
                n++;
        }
        return dynlib_open(files, n, ret, why, whysize);
}

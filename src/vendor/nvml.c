/* Loading libnvidia-ml at run time: the search order, the symbol table from
 * nvml_functions.def, and the names and sentences of NVML's return codes. */
#include "vendor/nvml.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

const struct dl_seam dl_seam_system = {
        .open = system_open,
        .sym = system_sym,
        .close = system_close,
        .error = system_error,
        .origin = system_origin,
};

/* ---- the symbol table ---------------------------------------------------------------- */

struct nvml_symbol {
        const char *name;
        bool required;
        size_t offset; /* of the pointer in struct nvml_lib */
};

static const struct nvml_symbol nvml_symbols[] = {
#define NVML_FN(req, name, params) {#name, req, offsetof(struct nvml_lib, name)},
#include "vendor/nvml_functions.def"
#undef NVML_FN
        /* Every NVML has it; optional anyway, since our own table can stand in. */
        {"nvmlErrorString", false, offsetof(struct nvml_lib, nvmlErrorString)},
};

/* dlsym hands back a void *; POSIX guarantees it converts to a function pointer, and the
 * copy below relies on both having one size and representation. */
_Static_assert(sizeof(void *) == sizeof(nvmlInit_v2_fn), "function pointers are not object-pointer sized");

static const char *dl_error_text(const struct dl_seam *seam) {
        const char *e = seam->error ? seam->error() : NULL;
        return e && e[0] ? e : "unknown dynamic loader error";
}

/* dlerror usually starts with the file name ("libnvidia-ml.so.1: cannot open shared
 * object file: ..."); drop it where the message names the file already. */
static const char *strip_name(const char *text, const char *name) {
        size_t n = strlen(name);
        if (strncmp(text, name, n) == 0 && text[n] == ':' && text[n + 1] == ' ')
                return text + n + 2;
        return text;
}

static void set_err(char *err, size_t errsize, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t errsize, const char *fmt, ...) {
        if (!err || errsize == 0)
                return;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errsize, fmt, ap);
        va_end(ap);
}

/* Open the first library that loads: path, else $GPUVET_NVML_LIB, else the sonames.
 * On failure err lists every file tried with the loader's reason. */
static void *open_library(const char *path, const struct dl_seam *seam, const char **opened, char *err,
                          size_t errsize) {
        static const char *const sonames[] = {"libnvidia-ml.so.1", "libnvidia-ml.so"};
        const int flags = RTLD_NOW | RTLD_LOCAL;

        if (path && path[0]) {
                void *h = seam->open(path, flags);
                if (!h)
                        set_err(err, errsize, "cannot load NVML library %s: %s", path,
                                strip_name(dl_error_text(seam), path));
                *opened = path;
                return h;
        }
        /* secure_getenv: a privileged (setuid) gpuvet must not load a library a caller names. */
        const char *env = secure_getenv(NVML_LIB_ENV);
        if (env && env[0]) {
                void *h = seam->open(env, flags);
                if (!h)
                        set_err(err, errsize, "cannot load NVML library %s (from $" NVML_LIB_ENV "): %s", env,
                                strip_name(dl_error_text(seam), env));
                *opened = env;
                return h;
        }
        if (err && errsize)
                err[0] = '\0';
        for (size_t i = 0; i < sizeof(sonames) / sizeof(sonames[0]); i++) {
                void *h = seam->open(sonames[i], flags);
                if (h) {
                        *opened = sonames[i];
                        return h;
                }
                if (err && errsize)
                        strbuf_appendf(err, errsize, "%s%s (%s)", i == 0 ? "cannot load NVML library: tried " : ", ",
                                       sonames[i], strip_name(dl_error_text(seam), sonames[i]));
        }
        if (err && errsize)
                strbuf_appendf(err, errsize,
                               "; is the NVIDIA driver installed? ($" NVML_LIB_ENV " names another file)");
        return NULL;
}

int nvml_lib_load(const char *path, const struct dl_seam *seam, struct nvml_lib **ret, char *err, size_t errsize) {
        if (!seam)
                seam = &dl_seam_system;
        *ret = NULL;
        if (err && errsize)
                err[0] = '\0';

        const char *opened = NULL;
        void *handle = open_library(path, seam, &opened, err, errsize);
        if (!handle)
                return -ENOENT;

        struct nvml_lib *lib = calloc(1, sizeof(*lib));
        if (!lib) {
                seam->close(handle);
                set_err(err, errsize, "out of memory loading %s", opened);
                return -ENOMEM;
        }
        lib->handle = handle;
        lib->seam = seam;
        if (!seam->origin || seam->origin(handle, lib->path, sizeof(lib->path)) != 0)
                snprintf(lib->path, sizeof(lib->path), "%s", opened);

        for (size_t i = 0; i < sizeof(nvml_symbols) / sizeof(nvml_symbols[0]); i++) {
                const struct nvml_symbol *s = &nvml_symbols[i];
                void *p = seam->sym(handle, s->name);
                if (!p && s->required) {
                        if (strcmp(lib->path, opened) == 0)
                                set_err(err, errsize, "%s: missing required symbol %s", opened, s->name);
                        else
                                set_err(err, errsize, "%s: missing required symbol %s (loaded %s)", opened, s->name,
                                        lib->path);
                        nvml_lib_free(lib);
                        return -ENOSYS;
                }
                memcpy((char *)lib + s->offset, &p, sizeof(p));
        }
        *ret = lib;
        return 0;
}

struct nvml_lib *nvml_lib_free(struct nvml_lib *lib) {
        if (!lib)
                return NULL;
        if (lib->handle) {
                if (lib->seam && lib->seam->close)
                        lib->seam->close(lib->handle);
                else if (!lib->seam)
                        dlclose(lib->handle);
        }
        free(lib);
        return NULL;
}

/* ---- return codes -------------------------------------------------------------------- */

struct nvml_return_info {
        nvmlReturn_t rc;
        const char *name;
        const char *text; /* ours, for when the library's nvmlErrorString is not at hand */
};

#define RC(code, text) {code, #code, text}
static const struct nvml_return_info nvml_returns[] = {
        RC(NVML_SUCCESS, "Success"),
        RC(NVML_ERROR_UNINITIALIZED, "NVML was not initialized"),
        RC(NVML_ERROR_INVALID_ARGUMENT, "Invalid argument"),
        RC(NVML_ERROR_NOT_SUPPORTED, "Not supported on this device"),
        RC(NVML_ERROR_NO_PERMISSION, "Insufficient permissions"),
        RC(NVML_ERROR_ALREADY_INITIALIZED, "Already initialized"),
        RC(NVML_ERROR_NOT_FOUND, "Not found"),
        RC(NVML_ERROR_INSUFFICIENT_SIZE, "Insufficient buffer size"),
        RC(NVML_ERROR_INSUFFICIENT_POWER, "Insufficient external power"),
        RC(NVML_ERROR_DRIVER_NOT_LOADED, "NVIDIA driver is not loaded"),
        RC(NVML_ERROR_TIMEOUT, "Timed out"),
        RC(NVML_ERROR_IRQ_ISSUE, "Interrupt request issue"),
        RC(NVML_ERROR_LIBRARY_NOT_FOUND, "A shared library NVML needs was not found"),
        RC(NVML_ERROR_FUNCTION_NOT_FOUND, "Function not found in this library"),
        RC(NVML_ERROR_CORRUPTED_INFOROM, "Corrupted infoROM"),
        RC(NVML_ERROR_GPU_IS_LOST, "GPU is lost (fallen off the bus or otherwise inaccessible)"),
        RC(NVML_ERROR_RESET_REQUIRED, "GPU requires a reset"),
        RC(NVML_ERROR_OPERATING_SYSTEM, "The operating system blocked the request"),
        RC(NVML_ERROR_LIB_RM_VERSION_MISMATCH, "Driver/library version mismatch"),
        RC(NVML_ERROR_IN_USE, "In use by another client"),
        RC(NVML_ERROR_MEMORY, "Insufficient memory"),
        RC(NVML_ERROR_NO_DATA, "No data"),
        RC(NVML_ERROR_VGPU_ECC_NOT_SUPPORTED, "ECC is not supported on this vGPU"),
        RC(NVML_ERROR_INSUFFICIENT_RESOURCES, "Insufficient resources"),
        RC(NVML_ERROR_FREQ_NOT_SUPPORTED, "Frequency not supported"),
        RC(NVML_ERROR_ARGUMENT_VERSION_MISMATCH, "Structure version does not match the library"),
        RC(NVML_ERROR_DEPRECATED, "Deprecated"),
        RC(NVML_ERROR_NOT_READY, "Not ready"),
        RC(NVML_ERROR_GPU_NOT_FOUND, "GPU not found"),
        RC(NVML_ERROR_INVALID_STATE, "Invalid state"),
        RC(NVML_ERROR_RESET_TYPE_NOT_SUPPORTED, "Reset type not supported"),
        RC(NVML_ERROR_UNKNOWN, "Unknown error"),
};
#undef RC

static const struct nvml_return_info *return_info(nvmlReturn_t rc) {
        for (size_t i = 0; i < sizeof(nvml_returns) / sizeof(nvml_returns[0]); i++)
                if (nvml_returns[i].rc == rc)
                        return &nvml_returns[i];
        return NULL;
}

const char *nvml_return_name(nvmlReturn_t rc) {
        const struct nvml_return_info *info = return_info(rc);
        if (info)
                return info->name;
        /* Newer drivers add codes; name the number rather than guess. Per thread, so
         * GPUs collected in parallel do not overwrite each other's text. */
        static _Thread_local char unknown[32];
        snprintf(unknown, sizeof(unknown), "NVML_ERROR_%d", (int)rc);
        return unknown;
}

const char *nvml_return_text(const struct nvml_lib *lib, nvmlReturn_t rc) {
        if (lib && lib->nvmlErrorString) {
                const char *text = lib->nvmlErrorString(rc);
                if (text && text[0])
                        return text;
        }
        const struct nvml_return_info *info = return_info(rc);
        return info ? info->text : "Unknown NVML return code";
}

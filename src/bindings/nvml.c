/* Loading libnvidia-ml at run time: the search order, the symbol table from
 * nvml_functions.def, and the names and sentences of NVML's return codes. */
#include "bindings/nvml.h"
#include "bindings/libload.h"
#include "core/array.h"
#include "sys/nvml_facts.h" /* NV_LIB_ENV */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- loading ------------------------------------------------------------------------- */

static const struct dynlib_fn nvml_fns[] = {
#define NVML_FN(req, name, params) {#name, NULL, req, offsetof(struct nvml_lib, name)},
#include "bindings/nvml_functions.def"
#undef NVML_FN
        /* Every NVML has it; optional anyway, since our own table can stand in. */
        {"nvmlErrorString", NULL, false, offsetof(struct nvml_lib, nvmlErrorString)},
};

/* Older exports tried when their "_v2" successor is absent (as nvtop does): the same
 * signature and structures. Only where nvml.h kept the types: the _v2 process and event
 * structures grew fields, so their older calls are not stand-ins. */
static const char *const nvml_v1_stand_ins[] = {"nvmlInit", "nvmlDeviceGetCount", "nvmlDeviceGetHandleByIndex",
                                                "nvmlDeviceGetHandleByPciBusId"};

const char *nvml_fallback_of(const char *name) {
        for (size_t i = 0; i < ARRAY_COUNT(nvml_v1_stand_ins); i++) {
                size_t n = strlen(nvml_v1_stand_ins[i]);
                if (strncmp(name, nvml_v1_stand_ins[i], n) == 0 && strcmp(name + n, "_v2") == 0)
                        return nvml_v1_stand_ins[i];
        }
        return NULL;
}

/* Open the first library that loads: path, else $GPUVET_NVML_LIB, else the sonames.
 * On failure err lists every file tried with the loader's reason. */
static int open_library(const char *path, struct dynlib *dl, char *err, size_t errsize) {
        static const char *const sonames[] = {"libnvidia-ml.so.1", "libnvidia-ml.so"};
        char why[512];
        if (path && path[0]) {
                if (dynlib_open_file(path, dl, why, sizeof(why)) == 0)
                        return 0;
                snprintf(err, errsize, "cannot load NVML library %s: %s", path, why);
                return -ENOENT;
        }
        static const struct dynlib_search search = {
                .env = NV_LIB_ENV, .sonames = sonames, .n_sonames = ARRAY_COUNT(sonames)};
        const char *env;
        enum dynlib_searched searched;
        if (dynlib_search_open(&search, dl, &env, &searched, why, sizeof(why)) == 0)
                return 0;
        if (searched == DYNLIB_SEARCHED_ENV_FILE) {
                snprintf(err, errsize, "cannot load NVML library %s (from $" NV_LIB_ENV "): %s", env, why);
                return -ENOENT;
        }
        snprintf(err, errsize,
                 "cannot load NVML library: tried %s; is the NVIDIA driver installed? ($" NV_LIB_ENV
                 " names another file)",
                 why);
        return -ENOENT;
}

int nvml_lib_load(const char *path, struct nvml_lib **ret, char *err, size_t errsize) {
        char dummy[8];
        if (!err || errsize == 0) {
                err = dummy;
                errsize = sizeof(dummy);
        }
        *ret = NULL;
        err[0] = '\0';
        struct dynlib dl;
        int r = open_library(path, &dl, err, errsize);
        if (r < 0)
                return r;
        struct dynlib_fn fns[ARRAY_COUNT(nvml_fns)];
        for (size_t i = 0; i < ARRAY_COUNT(nvml_fns); i++) {
                fns[i] = nvml_fns[i];
                fns[i].fallback = nvml_fallback_of(fns[i].name);
        }
        const struct libload_layout layout = LIBLOAD_LAYOUT(struct nvml_lib, fns);
        void *lib;
        const char *missing = NULL;
        r = libload_object(&layout, &dl, &lib, &missing, err, errsize);
        if (r == -ENOSYS) {
                if (strcmp(dl.path, dl.name) == 0)
                        snprintf(err, errsize, "%s: missing required symbol %s", dl.name, missing);
                else
                        snprintf(err, errsize, "%s: missing required symbol %s (loaded %s)", dl.name, missing,
                                 dl.path);
        }
        if (r < 0) {
                dynlib_close(&dl);
                return r;
        }
        *ret = lib;
        return 0;
}

struct nvml_lib *nvml_lib_free(struct nvml_lib *lib) {
        if (!lib)
                return NULL;
        dynlib_close(&lib->dl);
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
        for (size_t i = 0; i < ARRAY_COUNT(nvml_returns); i++)
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

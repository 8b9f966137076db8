/* The steps every vendor library's loader shares once the library is open: an object of
 * the library's own type that holds it, with every function resolved into it (NVML, the
 * CUDA driver, the OpenCL ICD loader); and for the toolkit libraries a benchmark needs
 * (cuBLASLt, NCCL, libibverbs), the whole load: each is searched the one way
 * (core/dynlib.h's dynlib_search_open) and refused in the same words, so that their
 * loaders only say what differs. Nothing here prints. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/array.h"
#include "core/dynlib.h"

/* The object: size bytes, its struct dynlib at dl_offset; fns' offsets count from its
 * start. */
struct libload_layout {
        size_t size, dl_offset;
        const struct dynlib_fn *fns;
        size_t n_fns;
};
/* The layout of type, a struct with a struct dynlib dl, whose functions fns resolves. */
#define LIBLOAD_LAYOUT(type, fns_) {sizeof(type), offsetof(type, dl), (fns_), ARRAY_COUNT(fns_)}

/* Allocate a zeroed object per layout, hand *dl over to it and resolve the functions into
 * it. Returns 0 with *ret the object; -ENOMEM (err: "out of memory loading <name>");
 * -ENOSYS with *missing naming the first required symbol absent. On failure nothing stays
 * allocated and the library stays open: the caller's to word and to close or keep. */
int libload_object(const struct libload_layout *layout, const struct dynlib *dl, void **ret, const char **missing,
                   char *err, size_t errsize);

struct libload {
        struct dynlib_search search;
        /* "cannot load <title> <file> (from $<env>): <why><env_hint>" */
        const char *title;
        const char *env_hint; /* NULL: none */
        /* "<sonames_text> not found[ in <$env's folder>] (tried <each file and why>); <install>" */
        const char *sonames_text;
        const char *install;
        /* "<file> has no <symbol>: not <kind> gpuvet can use" */
        const char *kind;
        struct libload_layout layout;
        /* Optional: what the object needs once resolved (asking the library's version); 0,
         * or a negative errno with err saying why the library is refused. */
        int (*init)(void *obj, char *err, size_t errsize);
        /* Close a library refused (a symbol missing, init failing); false for one whose
         * threads or atexit handlers may outlive a close (the CUDA runtime inside cuBLASLt
         * and NCCL). */
        bool close_refused;
};

/* Search for l's library, make its object (libload_object) and run l->init. Returns 0
 * with *ret the object; -ENOMEM; -ENOENT (err names what was tried and how to install
 * it); -ENOSYS (err names the symbol missing); init's error. */
int libload_open(const struct libload *l, void **ret, char *err, size_t errsize);

/* The loader of the toolkit libraries a benchmark needs (cuBLASLt, NCCL, libibverbs): each
 * is searched the one way (core/dynlib.h's dynlib_search_open), resolved into an object of
 * its own, and refused in the same words, so that their loaders only say what differs.
 * Nothing here prints. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/array.h"
#include "core/dynlib.h"

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
        /* The object: size bytes, its struct dynlib at dl_offset; fns' offsets count from its
         * start (LIBLOAD_OBJECT fills these). */
        size_t size, dl_offset;
        const struct dynlib_fn *fns;
        size_t n_fns;
        /* Optional: what the object needs once resolved (asking the library's version); 0,
         * or a negative errno with err saying why the library is refused. */
        int (*init)(void *obj, char *err, size_t errsize);
        /* Close a library refused (a symbol missing, init failing); false for one whose
         * threads or atexit handlers may outlive a close (the CUDA runtime inside cuBLASLt
         * and NCCL). */
        bool close_refused;
};

/* The object is a struct type with a struct dynlib dl, whose functions fns resolves. */
#define LIBLOAD_OBJECT(type, fns_)                                                                               \
        .size = sizeof(type), .dl_offset = offsetof(type, dl), .fns = (fns_), .n_fns = ARRAY_COUNT(fns_)

/* Allocate l's object (zeroed), load the library into it and resolve every function,
 * then run l->init. Returns 0 with *ret the object; -ENOMEM; -ENOENT (err names what was
 * tried and how to install it); -ENOSYS (err names the symbol missing); init's error. */
int libload_open(const struct libload *l, void **ret, char *err, size_t errsize);

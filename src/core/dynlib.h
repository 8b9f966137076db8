/* The one loader of shared libraries: every library gpuvet loads at run time (NVML, the
 * CUDA driver, cuBLASLt, the OpenCL ICD loader, libpci, libarchive) is opened and its
 * functions resolved here, through one seam that tests replace.
 *
 * Why at run time: the vendor libraries may be absent (no driver is a finding, not a
 * crash), and the others are needed by few commands (libarchive pulls in libxml2, ICU and
 * libstdc++: ~5 M instructions before main for every run if linked). Declarations of the
 * vendor APIs are gpuvet's own (src/bindings/ *_api.h); the others come from the libraries'
 * headers. Nothing here logs; callers phrase the errors from what these functions report. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* What the loader calls; the system's is dlopen, dlsym, dlclose, dlerror and the link map. */
struct dynlib_seam {
        void *(*open)(const char *file, int flags);
        void *(*sym)(void *handle, const char *name);
        int (*close)(void *handle);
        char *(*error)(void);
        /* Optional: write the file a handle came from (links followed) into buf; 0 on
         * success. NULL, or a failure, records the name that was opened instead. */
        int (*origin)(void *handle, char *buf, size_t size);
};
extern const struct dynlib_seam dynlib_system;

/* Tests: every later load goes through seam (NULL: the system's). A library keeps the
 * seam it was opened with, for its close. */
void dynlib_set_seam(const struct dynlib_seam *seam);

struct dynlib {
        void *handle;
        const struct dynlib_seam *seam;
        char name[512]; /* what was opened: a soname or a path */
        char path[512]; /* the file behind it, links followed; name when unknown */
};

/* One function to resolve: its symbol, an older export with the same signature tried when
 * the symbol is absent (NULL: none), whether the library is refused without it, and where
 * its pointer goes in the caller's table. A function not found gets a NULL pointer. */
struct dynlib_fn {
        const char *name;
        const char *fallback;
        bool required;
        size_t offset;
};

/* Open file into *ret. Returns 0, or -ENOENT with why holding the loader's reason without
 * the file name it usually starts with ("cannot open shared object file: No such file or
 * directory"), for a message that names the file itself. */
int dynlib_open_file(const char *file, struct dynlib *ret, char *why, size_t whysize);
/* Open the first of files[0..n) that loads (NULL or empty entries are skipped) into *ret.
 * Returns 0, or -ENOENT with tried listing each file with the loader's reason:
 * "libfoo.so.1 (cannot open shared object file: No such file or directory), libfoo.so (...)". */
int dynlib_open(const char *const *files, size_t n, struct dynlib *ret, char *tried, size_t triedsize);
/* Resolve fns into table. Returns 0, or -ENOSYS with *missing naming the first required
 * symbol absent (the table is then partly filled). */
int dynlib_resolve(const struct dynlib *lib, const struct dynlib_fn *fns, size_t n, void *table,
                   const char **missing);
/* Close the library (through the seam that opened it); NULL-safe and idempotent. Libraries
 * that keep threads or atexit handlers past a close (the CUDA driver, cuBLASLt) are never
 * closed: their callers just drop the handle. */
void dynlib_close(struct dynlib *lib);

/* $name through secure_getenv, so that a privileged (setuid) gpuvet never loads a library
 * its caller names; NULL when unset or empty. */
const char *dynlib_env(const char *name);

/* The one search for a vendor library: $env names the file (or, with env_dir, a folder
 * that holds the sonames); without it, the sonames through the loader's own path, then
 * the file extra writes into buf when it finds one (a pip wheel's copy; NULL: none). */
#define DYNLIB_SEARCH_MAX 4 /* sonames, and extra's file */
struct dynlib_search {
        const char *env;
        bool env_dir;
        const char *const *sonames;
        size_t n_sonames;
        int (*extra)(char *buf, size_t size); /* 0 when it wrote a file into buf */
};
/* What the search went by, for the caller's message. */
enum dynlib_searched {
        DYNLIB_SEARCHED_ENV_FILE, /* $env as a file: why is the loader's reason */
        DYNLIB_SEARCHED_ENV_DIR,  /* the sonames in $env's folder: why lists each with its reason */
        DYNLIB_SEARCHED_SONAMES,  /* $env unset: why lists each file with its reason */
};
/* Search per s into *ret. Returns 0, or -ENOENT with *searched and why saying what failed;
 * *env_value is $env's value either way (NULL: unset). */
int dynlib_search_open(const struct dynlib_search *s, struct dynlib *ret, const char **env_value,
                       enum dynlib_searched *searched, char *why, size_t whysize);

/* Both steps for a library whose every function is required (libpci, libarchive). Returns
 * 0, -ENOENT or -ENOSYS with err saying which file or symbol; on failure the library is
 * closed and table untouched. */
int dynlib_load(const char *const *files, size_t n, const struct dynlib_fn *fns, size_t n_fns, void *table,
                struct dynlib *ret, char *err, size_t errsize);
/* dynlib_load for the library one command needs, kept open for the process: nothing to do
 * when *lib is open already; on failure err ends with "; <install>", which says what to
 * install (or what to do without it). Not thread-safe: a caller with threads holds a lock. */
int dynlib_load_once(const char *const *files, size_t n, const struct dynlib_fn *fns, size_t n_fns, void *table,
                     struct dynlib *lib, const char *install, char *err, size_t errsize);

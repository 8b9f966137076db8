/* Loading a shared library on first use and resolving a table of its symbols.
 *
 * For libraries only some commands need (libarchive for snapshot, libpci for device
 * names): linking them would make every run pay their loading and relocation (libarchive
 * pulls in libxml2, ICU and libstdc++; ~5 M instructions before main). Declarations still
 * come from the libraries' own headers; only the link is deferred. */
#pragma once

#include <stddef.h>

struct dynlib_sym {
        const char *name;
        size_t offset; /* where the pointer goes in the caller's table */
};

/* dlopen the first soname that loads, then resolve every symbol into table. Returns 0,
 * -ENOENT when no soname loads, -ENOSYS when a symbol is missing; err says which (with
 * dlerror's text). On failure the library is closed and table left untouched. */
int dynlib_load(const char *const *sonames, const struct dynlib_sym *syms, size_t n_syms, void *table,
                void **ret_handle, char *err, size_t errsize);

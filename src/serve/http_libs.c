/* serve's libraries at run time (http_libs.h). */
#include "serve/http_libs.h"

#include "core/array.h"
#include "core/dynlib.h"

#include <stdio.h>
#include <string.h>

struct http_microhttpd libmhd;
struct http_xcrypt libxcrypt;

#define HTTP_LIBS_ENTRY(table, f) {#f, NULL, true, offsetof(struct table, f)},
#define MICROHTTPD_ENTRY(f) HTTP_LIBS_ENTRY(http_microhttpd, f)
#define XCRYPT_ENTRY(f) HTTP_LIBS_ENTRY(http_xcrypt, f)

/* Open one library into table unless it is open; on failure err gets the package hint. */
static int load_one(struct dynlib *lib, const char *soname, const struct dynlib_fn *fns, size_t n_fns, void *table,
                    const char *install, char *err, size_t errsize) {
        if (lib->handle)
                return 0;
        int r = dynlib_load(&soname, 1, fns, n_fns, table, lib, err, errsize);
        if (r < 0) {
                size_t len = strlen(err);
                snprintf(err + len, errsize - len, "; %s", install);
        }
        return r;
}

int http_libs_load(bool with_crypt, char *err, size_t errsize) {
        static const struct dynlib_fn mhd_fns[] = {HTTP_MICROHTTPD_FUNCTIONS(MICROHTTPD_ENTRY)};
        static const struct dynlib_fn crypt_fns[] = {HTTP_XCRYPT_FUNCTIONS(XCRYPT_ENTRY)};
        static struct dynlib mhd_lib, crypt_lib;
        int r = load_one(&mhd_lib, "libmicrohttpd.so.12", mhd_fns, ARRAY_COUNT(mhd_fns), &libmhd,
                         "install libmicrohttpd (Debian/Ubuntu: apt install libmicrohttpd12; RHEL/Fedora: "
                         "dnf install libmicrohttpd)",
                         err, errsize);
        if (r == 0 && with_crypt)
                r = load_one(&crypt_lib, "libcrypt.so.1", crypt_fns, ARRAY_COUNT(crypt_fns), &libxcrypt,
                             "basic auth needs libxcrypt (Debian/Ubuntu: apt install libcrypt1; RHEL/Fedora: "
                             "dnf install libxcrypt)",
                             err, errsize);
        return r;
}

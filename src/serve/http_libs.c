/* serve's libraries at run time (http_libs.h). */
#include "serve/http_libs.h"

#include "core/array.h"
#include "core/dynlib.h"

struct http_microhttpd libmhd;
struct http_xcrypt libxcrypt;

#define HTTP_LIBS_ENTRY(table, f) {#f, NULL, true, offsetof(struct table, f)},
#define MICROHTTPD_ENTRY(f) HTTP_LIBS_ENTRY(http_microhttpd, f)
#define XCRYPT_ENTRY(f) HTTP_LIBS_ENTRY(http_xcrypt, f)

int http_libs_load(bool with_crypt, char *err, size_t errsize) {
        static const struct dynlib_fn mhd_fns[] = {HTTP_MICROHTTPD_FUNCTIONS(MICROHTTPD_ENTRY)};
        static const struct dynlib_fn crypt_fns[] = {HTTP_XCRYPT_FUNCTIONS(XCRYPT_ENTRY)};
        static struct dynlib mhd_lib, crypt_lib;
        static const char *const mhd_soname[] = {"libmicrohttpd.so.12"}, *const crypt_soname[] = {"libcrypt.so.1"};
        int r = dynlib_load_once(mhd_soname, 1, mhd_fns, ARRAY_COUNT(mhd_fns), &libmhd, &mhd_lib,
                                 "install libmicrohttpd (Debian/Ubuntu: apt install libmicrohttpd12; RHEL/Fedora: "
                                 "dnf install libmicrohttpd)",
                                 err, errsize);
        if (r == 0 && with_crypt)
                r = dynlib_load_once(crypt_soname, 1, crypt_fns, ARRAY_COUNT(crypt_fns), &libxcrypt, &crypt_lib,
                                     "basic auth needs libxcrypt (Debian/Ubuntu: apt install libcrypt1; RHEL/Fedora: "
                                     "dnf install libxcrypt)",
                                     err, errsize);
        return r;
}

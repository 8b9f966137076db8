/* libmicrohttpd and libxcrypt, loaded when `gpuvet serve` starts rather than linked: every
 * other command would pay for them at start-up (libmicrohttpd brings GnuTLS and eight more
 * libraries: ~5 M instructions before main, docs/perf.md "Issue 41: start-up"). Their own
 * headers give the types and constants; core/dynlib.h opens them (as snapshot opens
 * libarchive). Nothing here prints. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <crypt.h>
#include <microhttpd.h>

/* The functions serve's HTTP server (http_server.c) calls, by their own names. */
#define HTTP_MICROHTTPD_FUNCTIONS(X)                                                                        \
        X(MHD_add_response_header) X(MHD_basic_auth_get_username_password) X(MHD_create_response_from_buffer) \
        X(MHD_create_response_from_iovec) X(MHD_destroy_response) X(MHD_free) X(MHD_get_connection_info)     \
        X(MHD_is_feature_supported) X(MHD_lookup_connection_value) X(MHD_queue_basic_auth_fail_response)     \
        X(MHD_queue_response) X(MHD_quiesce_daemon) X(MHD_resume_connection) X(MHD_start_daemon)             \
        X(MHD_stop_daemon) X(MHD_suspend_connection)
/* Basic auth's bcrypt (libxcrypt's own calls: crypt_rn returns NULL on failure). */
#define HTTP_XCRYPT_FUNCTIONS(X) X(crypt_rn) X(crypt_gensalt_rn)

#define HTTP_LIBS_FN(f) __typeof__(&f) f;
struct http_microhttpd {
        HTTP_MICROHTTPD_FUNCTIONS(HTTP_LIBS_FN)
};
struct http_xcrypt {
        HTTP_XCRYPT_FUNCTIONS(HTTP_LIBS_FN)
};
#undef HTTP_LIBS_FN

/* Filled by http_libs_load; read-only afterwards, so the server's threads (started after
 * it) read them without a lock. */
extern struct http_microhttpd libmhd;
extern struct http_xcrypt libxcrypt;

/* Load libmicrohttpd, and libxcrypt when with_crypt (basic auth); what is loaded stays.
 * Call before any thread that uses them starts. Returns 0, or -ENOENT, -ENOSYS or -ENOMEM
 * with err naming the library, why, and the package that installs it. */
int http_libs_load(bool with_crypt, char *err, size_t errsize);

/* The NVML loader through a fake core/dynlib.h seam (open failing, symbols missing), through the
 * real dynamic loader on files that are not NVML, and, given --fake PATH, against the
 * fake libnvidia-ml built in tests/fakes: every symbol of nvml_functions.def resolves. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys/nvml_facts.h"
#include "bindings/nvml.h"

/* ---- a fake seam ---------------------------------------------------------------------- */

static struct {
        const char *open_ok;      /* the one file that opens; NULL: none */
        const char *missing[4];   /* symbols sym does not find */
        const char *origin;       /* what origin reports; NULL: origin fails */
        char opened[4][128];      /* files open was asked for, in order */
        int flags[4];
        int n_open;
        int n_close;
} fake;

static int fake_handle;
static char fake_symbol[1];
static char fake_older_symbol[1]; /* what nvmlDeviceGetCount resolves to */

static const char *fake_error_string(nvmlReturn_t rc) {
        return rc == NVML_ERROR_GPU_IS_LOST ? "GPU is lost (from the library)" : NULL;
}

static void *fake_open(const char *file, int flags) {
        if (fake.n_open < 4) {
                snprintf(fake.opened[fake.n_open], sizeof(fake.opened[0]), "%s", file);
                fake.flags[fake.n_open] = flags;
        }
        fake.n_open++;
        if (fake.open_ok && strcmp(file, fake.open_ok) == 0)
                return &fake_handle;
        return NULL;
}

static void *fake_sym(void *handle, const char *name) {
        assert_ptr_equal(handle, &fake_handle);
        for (size_t i = 0; i < 4; i++)
                if (fake.missing[i] && strcmp(fake.missing[i], name) == 0)
                        return NULL;
        if (strcmp(name, "nvmlDeviceGetCount") == 0)
                return fake_older_symbol;
        if (strcmp(name, "nvmlErrorString") == 0) {
                /* POSIX: a function pointer survives the round trip through void *. */
                nvmlErrorString_fn f = fake_error_string;
                void *p;
                memcpy(&p, &f, sizeof(p));
                return p;
        }
        return fake_symbol;
}

static int fake_close(void *handle) {
        assert_ptr_equal(handle, &fake_handle);
        fake.n_close++;
        return 0;
}

/* Like glibc's: the file name, then the reason. */
static char *fake_error(void) {
        static char text[256];
        snprintf(text, sizeof(text), "%s: cannot open shared object file: No such file or directory",
                 fake.opened[(fake.n_open - 1) & 3]);
        return text;
}

static int fake_origin(void *handle, char *buf, size_t size) {
        assert_ptr_equal(handle, &fake_handle);
        if (!fake.origin)
                return -ENOENT;
        snprintf(buf, size, "%s", fake.origin);
        return 0;
}

static const struct dynlib_seam seam = {
        .open = fake_open,
        .sym = fake_sym,
        .close = fake_close,
        .error = fake_error,
        .origin = fake_origin,
};

static int reset(void **state) {
        (void)state;
        memset(&fake, 0, sizeof(fake));
        unsetenv(NV_LIB_ENV);
        dynlib_set_seam(&seam);
        return 0;
}

/* ---- opening -------------------------------------------------------------------------- */

static void test_open_fails(void **state) {
        (void)state;
        struct nvml_lib *lib = (struct nvml_lib *)&fake_handle; /* must be cleared */
        char err[512];
        assert_int_equal(nvml_lib_load(NULL, &lib, err, sizeof(err)), -ENOENT);
        assert_null(lib);
        assert_int_equal(fake.n_open, 2);
        assert_string_equal(fake.opened[0], "libnvidia-ml.so.1");
        assert_string_equal(fake.opened[1], "libnvidia-ml.so");
        assert_int_equal(fake.flags[0], RTLD_NOW | RTLD_LOCAL);
        assert_int_equal(fake.flags[1], RTLD_NOW | RTLD_LOCAL);
        assert_string_equal(err, "cannot load NVML library: tried libnvidia-ml.so.1 (cannot open shared object file: "
                                 "No such file or directory), libnvidia-ml.so (cannot open shared object file: No such "
                                 "file or directory); is the NVIDIA driver installed? ($GPUVET_NVML_LIB names another "
                                 "file)");
        assert_int_equal(fake.n_close, 0);
}

static void test_open_explicit_path(void **state) {
        (void)state;
        struct nvml_lib *lib;
        char err[512];
        setenv(NV_LIB_ENV, "/not/used.so", 1);
        assert_int_equal(nvml_lib_load("/opt/x/libnvidia-ml.so.1", &lib, err, sizeof(err)), -ENOENT);
        /* An explicit path is the only file tried: no falling back to the sonames. */
        assert_int_equal(fake.n_open, 1);
        assert_string_equal(err, "cannot load NVML library /opt/x/libnvidia-ml.so.1: cannot open shared object file: "
                                 "No such file or directory");

        fake.open_ok = "/opt/x/libnvidia-ml.so.1";
        assert_int_equal(nvml_lib_load("/opt/x/libnvidia-ml.so.1", &lib, err, sizeof(err)), 0);
        assert_string_equal(err, "");
        assert_string_equal(lib->dl.path, "/opt/x/libnvidia-ml.so.1");
        lib = nvml_lib_free(lib);
        assert_null(lib);
        assert_int_equal(fake.n_close, 1);
}

static void test_open_env(void **state) {
        (void)state;
        struct nvml_lib *lib;
        char err[512];
        setenv(NV_LIB_ENV, "/tmp/fake/libnvidia-ml.so.1", 1);
        assert_int_equal(nvml_lib_load(NULL, &lib, err, sizeof(err)), -ENOENT);
        assert_int_equal(fake.n_open, 1);
        assert_string_equal(fake.opened[0], "/tmp/fake/libnvidia-ml.so.1");
        assert_non_null(strstr(err, "/tmp/fake/libnvidia-ml.so.1 (from $GPUVET_NVML_LIB)"));

        /* An empty variable counts as unset. */
        setenv(NV_LIB_ENV, "", 1);
        fake.n_open = 0;
        fake.open_ok = "libnvidia-ml.so.1";
        assert_int_equal(nvml_lib_load(NULL, &lib, err, sizeof(err)), 0);
        assert_string_equal(fake.opened[0], "libnvidia-ml.so.1");
        nvml_lib_free(lib);
}

static void test_open_second_soname(void **state) {
        (void)state;
        struct nvml_lib *lib;
        char err[512];
        fake.open_ok = "libnvidia-ml.so";
        assert_int_equal(nvml_lib_load(NULL, &lib, err, sizeof(err)), 0);
        assert_int_equal(fake.n_open, 2);
        /* origin fails: the name opened stands in for the file. */
        assert_string_equal(lib->dl.path, "libnvidia-ml.so");
        nvml_lib_free(lib);
}

/* ---- symbols -------------------------------------------------------------------------- */

static void test_missing_required(void **state) {
        (void)state;
        struct nvml_lib *lib;
        char err[512];
        fake.open_ok = "libnvidia-ml.so.1";
        fake.missing[0] = "nvmlDeviceGetPciInfo_v3";
        assert_int_equal(nvml_lib_load(NULL, &lib, err, sizeof(err)), -ENOSYS);
        assert_null(lib);
        assert_string_equal(err, "libnvidia-ml.so.1: missing required symbol nvmlDeviceGetPciInfo_v3");
        assert_int_equal(fake.n_close, 1);

        /* With the real file known, the message names it too (an old driver's version). */
        fake.origin = "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.418.67";
        assert_int_equal(nvml_lib_load(NULL, &lib, err, sizeof(err)), -ENOSYS);
        assert_string_equal(err, "libnvidia-ml.so.1: missing required symbol nvmlDeviceGetPciInfo_v3 (loaded "
                                 "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.418.67)");
        assert_int_equal(fake.n_close, 2);
}

/* Each required symbol, missing alone, refuses the library and is the one named. */
static void test_each_required(void **state) {
        (void)state;
        int n = 0;
#define NVML_FN(required, name, params)                                                                      \
        if (required) {                                                                                      \
                struct nvml_lib *lib;                                                                        \
                char err[512];                                                                               \
                reset(NULL);                                                                                 \
                fake.open_ok = "libnvidia-ml.so.1";                                                          \
                fake.missing[0] = #name;                                                                     \
                fake.missing[1] = nvml_fallback_of(#name);                                                   \
                assert_int_equal(nvml_lib_load(NULL, &lib, err, sizeof(err)), -ENOSYS);                      \
                assert_string_equal(err, "libnvidia-ml.so.1: missing required symbol " #name);               \
                assert_int_equal(fake.n_close, 1);                                                           \
                n++;                                                                                         \
        }
#include "bindings/nvml_functions.def"
#undef NVML_FN
        assert_true(n >= 5);
}

/* A driver without the _v2 entry point still loads through the older one it exports. */
static void test_older_export(void **state) {
        (void)state;
        struct nvml_lib *lib;
        char err[512];
        fake.open_ok = "libnvidia-ml.so.1";
        fake.missing[0] = "nvmlDeviceGetCount_v2";
        assert_int_equal(nvml_lib_load(NULL, &lib, err, sizeof(err)), 0);
        void *p;
        memcpy(&p, &lib->nvmlDeviceGetCount_v2, sizeof(p));
        assert_ptr_equal(p, fake_older_symbol);
        nvml_lib_free(lib);
        assert_string_equal(nvml_fallback_of("nvmlInit_v2"), "nvmlInit");
        assert_null(nvml_fallback_of("nvmlDeviceGetComputeRunningProcesses_v3"));
}

static void test_missing_optional(void **state) {
        (void)state;
        struct nvml_lib *lib;
        char err[512];
        fake.open_ok = "libnvidia-ml.so.1";
        fake.missing[0] = "nvmlDeviceGetGpuFabricInfo";
        fake.missing[1] = "nvmlDeviceGetCurrentClocksEventReasons";
        fake.missing[2] = "nvmlErrorString";
        assert_int_equal(nvml_lib_load(NULL, &lib, err, sizeof(err)), 0);
        assert_null(lib->nvmlDeviceGetGpuFabricInfo);
        assert_null(lib->nvmlDeviceGetCurrentClocksEventReasons);
        assert_null(lib->nvmlErrorString);
        assert_non_null(lib->nvmlDeviceGetCurrentClocksThrottleReasons);
        assert_non_null(lib->nvmlDeviceGetPciInfo_v3);
        /* Without the library's nvmlErrorString, our own sentence. */
        assert_string_equal(nvml_return_text(lib, NVML_ERROR_GPU_IS_LOST),
                            "GPU is lost (fallen off the bus or otherwise inaccessible)");
        nvml_lib_free(lib);
}

static void test_all_resolved(void **state) {
        (void)state;
        struct nvml_lib *lib;
        char err[512];
        fake.open_ok = "libnvidia-ml.so.1";
        fake.origin = "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.570.86.10";
        assert_int_equal(nvml_lib_load(NULL, &lib, err, sizeof(err)), 0);
        assert_ptr_equal(lib->dl.handle, &fake_handle);
        assert_string_equal(lib->dl.path, "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.570.86.10");
#define NVML_FN(required, name, params) assert_non_null(lib->name);
#include "bindings/nvml_functions.def"
#undef NVML_FN
        assert_non_null(lib->nvmlErrorString);
        /* The library's own text when it has one; ours when it answers NULL. */
        assert_string_equal(nvml_return_text(lib, NVML_ERROR_GPU_IS_LOST), "GPU is lost (from the library)");
        assert_string_equal(nvml_return_text(lib, NVML_ERROR_LIB_RM_VERSION_MISMATCH),
                            "Driver/library version mismatch");
        assert_null(nvml_lib_free(lib));
        assert_int_equal(fake.n_close, 1);
}

static void test_free_null(void **state) {
        (void)state;
        assert_null(nvml_lib_free(NULL));
        /* A hand-built table (unit tests of callers) has no handle to close. */
        struct nvml_lib *lib = calloc(1, sizeof(*lib));
        assert_non_null(lib);
        assert_null(nvml_lib_free(lib));
}

/* ---- the real dynamic loader ---------------------------------------------------------- */

static void test_system_missing_file(void **state) {
        (void)state;
        struct nvml_lib *lib;
        char err[512];
        dynlib_set_seam(NULL);
        assert_int_equal(nvml_lib_load("/nonexistent/libnvidia-ml.so.1", &lib, err, sizeof(err)), -ENOENT);
        assert_null(lib);
        assert_non_null(strstr(err, "/nonexistent/libnvidia-ml.so.1"));
        assert_non_null(strstr(err, "No such file or directory"));
}

/* A real shared library that is not NVML: refused for its first required symbol, and
 * the message names the real file behind the soname. */
static void test_system_not_nvml(void **state) {
        (void)state;
        struct nvml_lib *lib;
        char err[512];
        dynlib_set_seam(NULL);
        assert_int_equal(nvml_lib_load("libc.so.6", &lib, err, sizeof(err)), -ENOSYS);
        assert_null(lib);
        assert_non_null(strstr(err, "libc.so.6: missing required symbol nvmlInit_v2"));
        assert_non_null(strstr(err, "(loaded /"));
}

/* ---- return codes --------------------------------------------------------------------- */

static void test_return_names(void **state) {
        (void)state;
        int n = 0;
        /* abi_items.def lists every enumerator of nvml_api.h (tests/abi/check_items.py
         * keeps it so); each return code must have its own name. */
#define ABI_ENUM(e)                                                                                          \
        if (strncmp(#e, "NVML_ERROR_", 11) == 0 || strcmp(#e, "NVML_SUCCESS") == 0) {                       \
                assert_string_equal(nvml_return_name((nvmlReturn_t)(e)), #e);                                \
                assert_non_null(nvml_return_text(NULL, (nvmlReturn_t)(e)));                                  \
                assert_string_not_equal(nvml_return_text(NULL, (nvmlReturn_t)(e)), "Unknown NVML return code"); \
                n++;                                                                                         \
        }
#define ABI_DEFINE(x)
#define ABI_SIZE(x)
#define ABI_SCALAR(x)
#define ABI_OFFSET(t, f)
#include "tests/abi/abi_items.def"
#undef ABI_ENUM
#undef ABI_DEFINE
#undef ABI_SIZE
#undef ABI_SCALAR
#undef ABI_OFFSET
        assert_int_equal(n, 32);
        assert_string_equal(nvml_return_name((nvmlReturn_t)1234), "NVML_ERROR_1234");
        assert_string_equal(nvml_return_text(NULL, (nvmlReturn_t)1234), "Unknown NVML return code");
        assert_string_equal(nvml_return_text(NULL, NVML_ERROR_LIB_RM_VERSION_MISMATCH),
                            "Driver/library version mismatch");
}

/* ---- against the fake library --------------------------------------------------------- */

static const char *fake_library;

static void test_fake_library(void **state) {
        (void)state;
        struct nvml_lib *lib;
        char err[512];
        dynlib_set_seam(NULL);
        int r = nvml_lib_load(fake_library, &lib, err, sizeof(err));
        if (r < 0)
                fail_msg("%s: %s", fake_library, err);
        int missing = 0;
#define NVML_FN(required, name, params)                                                                      \
        if (!lib->name) {                                                                                    \
                print_error("%s does not export %s\n", fake_library, #name);                                 \
                missing++;                                                                                   \
        }
#include "bindings/nvml_functions.def"
#undef NVML_FN
        if (!lib->nvmlErrorString) {
                print_error("%s does not export nvmlErrorString\n", fake_library);
                missing++;
        }
        assert_int_equal(missing, 0);
        assert_non_null(strstr(lib->dl.path, "/"));
        nvml_lib_free(lib);
}

int main(int argc, char **argv) {
        if (argc == 3 && strcmp(argv[1], "--fake") == 0) {
                fake_library = argv[2];
                const struct CMUnitTest fake_tests[] = {
                        cmocka_unit_test(test_fake_library),
                };
                return cmocka_run_group_tests_name("nvml_loader_fake", fake_tests, NULL, NULL);
        }
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(test_open_fails, reset),
                cmocka_unit_test_setup(test_open_explicit_path, reset),
                cmocka_unit_test_setup(test_open_env, reset),
                cmocka_unit_test_setup(test_open_second_soname, reset),
                cmocka_unit_test_setup(test_missing_required, reset),
                cmocka_unit_test_setup(test_each_required, reset),
                cmocka_unit_test_setup(test_older_export, reset),
                cmocka_unit_test_setup(test_missing_optional, reset),
                cmocka_unit_test_setup(test_all_resolved, reset),
                cmocka_unit_test_setup(test_free_null, reset),
                cmocka_unit_test_setup(test_system_missing_file, reset),
                cmocka_unit_test_setup(test_system_not_nvml, reset),
                cmocka_unit_test_setup(test_return_names, reset),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

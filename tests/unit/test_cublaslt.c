/* The cuBLASLt loader (src/bindings/cublaslt.c): the soname order and the message when none
 * loads (through core/dynlib.h's seam), $GPUVET_CUBLASLT_LIB as a file and as a directory, the
 * fake library (tests/fakes/fake_cublaslt.c) resolving every symbol, status names and
 * errno mapping, and, when the toolkit's real libcublasLt.so.13 is on this machine, every
 * symbol of cublaslt_functions.def resolving in it.
 *
 * usage: test_cublaslt FAKE_LIBCUBLASLT */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/dynlib.h"
#include "bindings/cublaslt.h"

static const char *fake_path;
static char tried[8][64];
static int n_tried;

static void *failing_dlopen(const char *file, int mode) {
        (void)mode;
        if (n_tried < 8)
                snprintf(tried[n_tried++], sizeof(tried[0]), "%s", file);
        return NULL;
}

/* Only .12 exists: it is the fake. */
static void *only_12(const char *file, int mode) {
        if (n_tried < 8)
                snprintf(tried[n_tried++], sizeof(tried[0]), "%s", file);
        return strcmp(file, "libcublasLt.so.12") == 0 ? dlopen(fake_path, mode) : NULL;
}

/* The system's loader, with open replaced. */
static struct dynlib_seam failing_seam, only_12_seam;
static int reset(void **state) {
        (void)state;
        failing_seam = only_12_seam = dynlib_system;
        failing_seam.open = failing_dlopen;
        only_12_seam.open = only_12;
        n_tried = 0;
        unsetenv("GPUVET_CUBLASLT_LIB");
        dynlib_set_seam(NULL);
        return 0;
}

static void test_none_found(void **state) {
        (void)state;
        dynlib_set_seam(&failing_seam);
        struct cublaslt *lt = (struct cublaslt *)1;
        char err[512];
        assert_int_equal(cublaslt_open(&lt, err, sizeof(err)), -ENOENT);
        assert_null(lt);
        assert_non_null(strstr(err, "libcublasLt.so.13/.12/.11 not found"));
        assert_int_equal(n_tried, 3);
        assert_string_equal(tried[0], "libcublasLt.so.13");
        assert_string_equal(tried[1], "libcublasLt.so.12");
        assert_string_equal(tried[2], "libcublasLt.so.11");
}

static void test_older_soname(void **state) {
        (void)state;
        dynlib_set_seam(&only_12_seam);
        struct cublaslt *lt = NULL;
        char err[512] = "";
        assert_int_equal(cublaslt_open(&lt, err, sizeof(err)), 0);
        assert_string_equal(lt->dl.name, "libcublasLt.so.12");
        assert_int_equal(n_tried, 2);
        cublaslt_close(lt);
}

static void test_env_file(void **state) {
        (void)state;
        setenv("GPUVET_CUBLASLT_LIB", fake_path, 1);
        struct cublaslt *lt = NULL;
        char err[512] = "";
        assert_int_equal(cublaslt_open(&lt, err, sizeof(err)), 0);
        assert_int_equal(lt->version, 130100);
        assert_non_null(lt->fn.cublasLtMatmul);
        assert_non_null(lt->fn.cublasLtGetStatusName);
        cublasLtHandle_t h = NULL;
        assert_int_equal(lt->fn.cublasLtCreate(&h), CUBLAS_STATUS_SUCCESS);
        assert_int_equal(lt->fn.cublasLtDestroy(h), CUBLAS_STATUS_SUCCESS);

        assert_int_equal(cublaslt_fail(lt, "cublasLtMatmul", CUBLAS_STATUS_EXECUTION_FAILED, NULL), -EIO);
        assert_string_equal(lt->err, "cublasLtMatmul: CUBLAS_STATUS_EXECUTION_FAILED (13)");
        assert_int_equal(cublaslt_fail(lt, "x", CUBLAS_STATUS_NOT_SUPPORTED, "fp8"), -ENOTSUP);
        assert_string_equal(lt->err, "x: CUBLAS_STATUS_NOT_SUPPORTED (15), fp8");
        assert_int_equal(cublaslt_fail(lt, "x", CUBLAS_STATUS_ALLOC_FAILED, NULL), -ENOMEM);
        assert_int_equal(cublaslt_fail(lt, "x", CUBLAS_STATUS_INVALID_VALUE, NULL), -EINVAL);
        assert_int_equal(cublaslt_fail(lt, "x", (cublasStatus_t)4242, NULL), -EIO);
        assert_string_equal(lt->err, "x: unknown cuBLAS status (4242)");
        cublaslt_close(lt);

        setenv("GPUVET_CUBLASLT_LIB", "/nonexistent/libcublasLt.so.13", 1);
        assert_int_equal(cublaslt_open(&lt, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "/nonexistent/libcublasLt.so.13 (from $GPUVET_CUBLASLT_LIB)"));
}

static void test_env_dir(void **state) {
        (void)state;
        char dir[] = "/tmp/gpuvet-cublaslt-XXXXXX";
        assert_non_null(mkdtemp(dir));
        setenv("GPUVET_CUBLASLT_LIB", dir, 1);
        struct cublaslt *lt = NULL;
        char err[512] = "", link[PATH_MAX];
        assert_int_equal(cublaslt_open(&lt, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "libcublasLt.so.13/.12/.11 not found in "));
        assert_non_null(strstr(err, dir));
        /* only an .11 in the directory: found, by its path */
        snprintf(link, sizeof(link), "%s/libcublasLt.so.11", dir);
        assert_int_equal(symlink(fake_path, link), 0);
        assert_int_equal(cublaslt_open(&lt, err, sizeof(err)), 0);
        assert_string_equal(lt->dl.name, link);
        cublaslt_close(lt);
        unlink(link);
        rmdir(dir);
}

/* A library without a required symbol is refused, naming it: libm has none of them. */
static void test_missing_symbol(void **state) {
        (void)state;
        setenv("GPUVET_CUBLASLT_LIB", "libm.so.6", 1);
        struct cublaslt *lt = NULL;
        char err[512] = "";
        assert_int_equal(cublaslt_open(&lt, err, sizeof(err)), -ENOSYS);
        assert_non_null(strstr(err, "libm.so.6 has no cublasLtGetVersion"));
}

/* The toolkit's real library: every symbol we declare is exported (a typo in
 * cublaslt_functions.def or a rename in a new cuBLAS fails here). Without a GPU only
 * cublasLtGetVersion is called. */
static void test_real_library(void **state) {
        (void)state;
        void *probe = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
        if (!probe) {
                printf("# no libcublasLt.so.13 on this machine: real-library check skipped\n");
                skip();
        }
        struct cublaslt *lt = NULL;
        char err[512] = "";
        assert_int_equal(cublaslt_open(&lt, err, sizeof(err)), 0);
        assert_string_equal(lt->dl.name, "libcublasLt.so.13");
        assert_true(lt->version >= 130000 && lt->version < 140000);
        assert_non_null(lt->fn.cublasLtGetStatusName);
        assert_string_equal(cublaslt_status_name(lt, (cublasStatus_t)14), "CUBLAS_STATUS_INTERNAL_ERROR");
        printf("# real %s: version %zu, every symbol resolved\n", lt->dl.name, lt->version);
        cublaslt_close(lt);
}

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: %s FAKE_LIBCUBLASLT\n", argv[0]);
                return 2;
        }
        static char abs_path[PATH_MAX];
        fake_path = realpath(argv[1], abs_path) ? abs_path : argv[1]; /* symlinked from a temp directory */
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(test_none_found, reset),  cmocka_unit_test_setup(test_older_soname, reset),
                cmocka_unit_test_setup(test_env_file, reset),    cmocka_unit_test_setup(test_env_dir, reset),
                cmocka_unit_test_setup(test_missing_symbol, reset), cmocka_unit_test_setup(test_real_library, reset),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

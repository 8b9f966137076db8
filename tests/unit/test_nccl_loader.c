/* The NCCL loader (src/bindings/nccl.c): the soname and the message when none loads (through
 * core/dynlib.h's seam), $GPUVET_NCCL_LIB as a file and as a directory, a library missing a
 * required symbol, one too old, a failing ncclGetVersion, the version split, result names
 * and errno mapping; the fake library (tests/fakes/fake_nccl.c) and, when this machine has
 * one (the CUDA toolkit's lib directory, the libnccl2 package, a pip wheel), the real
 * libnccl.so.2 resolving every symbol of nccl_functions.def.
 *
 * usage: test_nccl_loader FAKE_LIBNCCL */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/array.h"
#include "core/dynlib.h"
#include "bindings/nccl.h"

static const char *fake_path;
static char tried[8][512];
static int n_tried;

static void *failing_dlopen(const char *file, int mode) {
        (void)mode;
        if (n_tried < 8)
                snprintf(tried[n_tried++], sizeof(tried[0]), "%s", file);
        return NULL;
}

static struct dynlib_seam failing_seam;
static int reset(void **state) {
        (void)state;
        failing_seam = dynlib_system;
        failing_seam.open = failing_dlopen;
        n_tried = 0;
        unsetenv("GPUVET_NCCL_LIB");
        unsetenv("FAKE_NCCL_VERSION");
        dynlib_set_seam(NULL);
        return 0;
}

static void test_none_found(void **state) {
        (void)state;
        dynlib_set_seam(&failing_seam);
        struct nccl *nc = (struct nccl *)1;
        char err[1024];
        assert_int_equal(nccl_open(&nc, err, sizeof(err)), -ENOENT);
        assert_null(nc);
        assert_non_null(strstr(err, "libnccl.so.2 not found (tried "));
        assert_non_null(strstr(err, "GPUVET_NCCL_LIB"));
        assert_true(n_tried >= 1);
        assert_string_equal(tried[0], "libnccl.so.2");
        /* any further try is a pip wheel's copy */
        for (int i = 1; i < n_tried; i++)
                assert_non_null(strstr(tried[i], "/nvidia/nccl/lib/libnccl.so.2"));
}

static void test_env_file(void **state) {
        (void)state;
        setenv("GPUVET_NCCL_LIB", fake_path, 1);
        struct nccl *nc = NULL;
        char err[1024] = "";
        assert_int_equal(nccl_open(&nc, err, sizeof(err)), 0);
        assert_int_equal(nc->version, 22809);
        assert_int_equal(nc->major, 2);
        assert_int_equal(nc->minor, 28);
        assert_int_equal(nc->patch, 9);
        assert_non_null(nc->fn.ncclAllReduce);
        assert_non_null(nc->fn.ncclGetLastError);

        assert_int_equal(nccl_fail(nc, "ncclAllReduce", ncclUnhandledCudaError, NULL, NULL), -EIO);
        assert_string_equal(nc->err, "ncclAllReduce: ncclUnhandledCudaError (1)");
        assert_int_equal(nccl_fail(nc, "x", ncclInvalidArgument, NULL, "count 3"), -EINVAL);
        assert_string_equal(nc->err, "x: ncclInvalidArgument (4), count 3");
        assert_int_equal(nccl_fail(nc, "x", ncclInvalidUsage, NULL, NULL), -EINVAL);
        assert_int_equal(nccl_fail(nc, "x", ncclRemoteError, NULL, NULL), -EREMOTEIO);
        assert_int_equal(nccl_fail(nc, "x", ncclInProgress, NULL, NULL), -EAGAIN);
        assert_int_equal(nccl_fail(nc, "x", ncclSystemError, NULL, NULL), -EIO);
        assert_int_equal(nccl_fail(nc, "x", (ncclResult_t)4242, NULL, NULL), -EIO);
        assert_string_equal(nc->err, "x: unknown NCCL result (4242)");
        /* with a communicator, the library's last error is added */
        ncclComm_t comm = NULL;
        assert_int_equal(nc->fn.ncclCommInitAll(&comm, 1, NULL), ncclSuccess);
        assert_int_equal(nccl_fail(nc, "ncclBroadcast", ncclInvalidArgument, comm, NULL), -EINVAL);
        assert_non_null(strstr(nc->err, "ncclBroadcast: ncclInvalidArgument (4): fake NCCL"));
        assert_int_equal(nc->fn.ncclCommDestroy(comm), ncclSuccess);
        nccl_close(nc);

        setenv("GPUVET_NCCL_LIB", "/nonexistent/libnccl.so.2", 1);
        assert_int_equal(nccl_open(&nc, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "/nonexistent/libnccl.so.2 (from $GPUVET_NCCL_LIB)"));
}

static void test_env_dir(void **state) {
        (void)state;
        char dir[] = "/tmp/gpuvet-nccl-XXXXXX";
        assert_non_null(mkdtemp(dir));
        setenv("GPUVET_NCCL_LIB", dir, 1);
        struct nccl *nc = NULL;
        char err[1024] = "", link[PATH_MAX];
        assert_int_equal(nccl_open(&nc, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "libnccl.so.2 not found in "));
        assert_non_null(strstr(err, dir));
        /* a wheel's layout: the library in the directory, found by its path */
        snprintf(link, sizeof(link), "%s/libnccl.so.2", dir);
        assert_int_equal(symlink(fake_path, link), 0);
        assert_int_equal(nccl_open(&nc, err, sizeof(err)), 0);
        assert_string_equal(nc->dl.name, link);
        nccl_close(nc);
        unlink(link);
        rmdir(dir);
}

/* The wheels' places, under a scratch root: none, then dist-packages of one Python. */
static void test_find_wheel(void **state) {
        (void)state;
        char root[] = "/tmp/gpuvet-nccl-root-XXXXXX", path[PATH_MAX], found[PATH_MAX] = "";
        assert_non_null(mkdtemp(root));
        assert_int_equal(nccl_find_wheel(root, found, sizeof(found)), -ENOENT);
        const char *dirs[] = {"/usr", "/usr/lib", "/usr/lib/python3.12", "/usr/lib/python3.12/dist-packages",
                              "/usr/lib/python3.12/dist-packages/nvidia", "/usr/lib/python3.12/dist-packages/nvidia/nccl",
                              "/usr/lib/python3.12/dist-packages/nvidia/nccl/lib"};
        for (size_t i = 0; i < ARRAY_COUNT(dirs); i++) {
                snprintf(path, sizeof(path), "%s%s", root, dirs[i]);
                assert_int_equal(mkdir(path, 0755), 0);
        }
        snprintf(path, sizeof(path), "%s/usr/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2", root);
        assert_int_equal(symlink(fake_path, path), 0);
        assert_int_equal(nccl_find_wheel(root, found, sizeof(found)), 0);
        assert_string_equal(found, path);
        assert_int_equal(unlink(path), 0);
        for (size_t i = ARRAY_COUNT(dirs); i-- > 0;) {
                snprintf(path, sizeof(path), "%s%s", root, dirs[i]);
                assert_int_equal(rmdir(path), 0);
        }
        assert_int_equal(rmdir(root), 0);
}

/* A library without a required symbol is refused, naming it: libm has none of them. */
static void test_missing_symbol(void **state) {
        (void)state;
        setenv("GPUVET_NCCL_LIB", "libm.so.6", 1);
        struct nccl *nc = NULL;
        char err[1024] = "";
        assert_int_equal(nccl_open(&nc, err, sizeof(err)), -ENOSYS);
        assert_non_null(strstr(err, "libm.so.6 has no ncclGetVersion"));
}

/* The fake reads its switches once per process, and this one has loaded it already: each
 * case runs in a fresh process (this program run again with --open), which writes the
 * message to stdout and exits with -nccl_open(). */
static int open_fresh(void) {
        struct nccl *nc = NULL;
        char e[1024] = "";
        int r = nccl_open(&nc, e, sizeof(e));
        fputs(e, stdout);
        nccl_close(nc);
        return -r;
}

static int open_in_child(const char *env, const char *value, char *err, size_t errsize) {
        int fds[2];
        if (pipe(fds) != 0)
                return -999;
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
                close(fds[0]);
                dup2(fds[1], 1);
                setenv(env, value, 1);
                execl("/proc/self/exe", "test_nccl_loader", fake_path, "--open", (char *)NULL);
                _exit(127);
        }
        close(fds[1]);
        ssize_t n = read(fds[0], err, errsize - 1);
        err[n > 0 ? n : 0] = 0;
        close(fds[0]);
        int status = 0;
        waitpid(pid, &status, 0);
        return WIFEXITED(status) ? -WEXITSTATUS(status) : -998;
}

static void test_old_or_failing(void **state) {
        (void)state;
        char err[1024];
        assert_int_equal(open_in_child("FAKE_NCCL_VERSION", "2605", err, sizeof(err)), -EPROTONOSUPPORT);
        assert_non_null(strstr(err, "is NCCL 2.6.5; gpuvet needs 2.7.0 or newer"));
        assert_int_equal(open_in_child("FAKE_NCCL_VERSION", "2708", err, sizeof(err)), 0);
        assert_int_equal(open_in_child("FAKE_NCCL_FAIL", "ncclGetVersion:ncclInternalError", err, sizeof(err)), -EIO);
        assert_non_null(strstr(err, "ncclGetVersion: ncclInternalError (3)"));
}

static void test_version_split(void **state) {
        (void)state;
        int a, b, c;
        nccl_version_split(22809, &a, &b, &c);
        assert_true(a == 2 && b == 28 && c == 9);
        nccl_version_split(2804, &a, &b, &c);
        assert_true(a == 2 && b == 8 && c == 4);
        nccl_version_split(20900, &a, &b, &c);
        assert_true(a == 2 && b == 9 && c == 0);
        nccl_version_split(NCCL_VERSION(2, 30, 3), &a, &b, &c);
        assert_true(a == 2 && b == 30 && c == 3);
        assert_string_equal(nccl_result_name(NULL, ncclRemoteError), "ncclRemoteError");
        assert_null(nccl_result_name(NULL, (ncclResult_t)99));
}

/* A real libnccl.so.2 on this machine: every symbol we declare is exported (a typo in
 * nccl_functions.def or a rename in a new NCCL fails here). Without a GPU only
 * ncclGetVersion is called. */
static void test_real_library(void **state) {
        (void)state;
        static const char *const candidates[] = {"libnccl.so.2", "/usr/local/cuda/lib/libnccl.so.2",
                                                 "/usr/local/cuda/lib64/libnccl.so.2"};
        const char *found = NULL;
        /* tools/run-tests.sh names the pip wheel's copy when the toolkit has none */
        const char *named = getenv("GPUVET_TEST_NCCL_REAL");
        if (named && *named && dlopen(named, RTLD_NOW | RTLD_LOCAL))
                found = named;
        for (size_t i = 0; i < ARRAY_COUNT(candidates) && !found; i++) {
                void *probe = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
                if (probe)
                        found = candidates[i];
        }
        if (!found) {
                printf("# no real libnccl.so.2 on this machine: real-library check skipped\n");
                skip();
        }
        setenv("GPUVET_NCCL_LIB", found, 1);
        struct nccl *nc = NULL;
        char err[1024] = "";
        int r = nccl_open(&nc, err, sizeof(err));
        if (r != 0)
                fail_msg("%s: %s", found, err);
        assert_true(nc->version >= NCCL_VERSION(2, 7, 0));
        assert_non_null(nc->fn.ncclGetLastError);
        printf("# real %s: NCCL %d.%d.%d, every symbol resolved\n", found, nc->major, nc->minor, nc->patch);
        nccl_close(nc);
}

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: %s FAKE_LIBNCCL\n", argv[0]);
                return 2;
        }
        static char abs_path[PATH_MAX];
        fake_path = realpath(argv[1], abs_path) ? abs_path : argv[1]; /* symlinked from a temp directory */
        if (argc == 3 && strcmp(argv[2], "--open") == 0) {
                setenv("GPUVET_NCCL_LIB", fake_path, 1);
                return open_fresh();
        }
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(test_none_found, reset),      cmocka_unit_test_setup(test_env_file, reset),
                cmocka_unit_test_setup(test_env_dir, reset),         cmocka_unit_test_setup(test_missing_symbol, reset),
                cmocka_unit_test_setup(test_old_or_failing, reset),  cmocka_unit_test_setup(test_version_split, reset),
                cmocka_unit_test_setup(test_find_wheel, reset),      cmocka_unit_test_setup(test_real_library, reset),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

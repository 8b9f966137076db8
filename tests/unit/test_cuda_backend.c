/* The CUDA backend (src/bindings/cuda_device.c) against the fake libcuda (tests/fakes/fake_cuda.c):
 * loading (no library, the toolkit's stub, no device), device facts, a workload through
 * every dev_ops call with results checked against the host, synthetic event times, peer
 * copies, Volta refused with the documented message, bad arguments, out of memory, and
 * an error injected into each driver call the backend makes, one at a time: every one
 * gives an error return naming the call, never a crash.
 *
 * Usage: test_cuda_backend FAKE_LIBCUDA [STUB_LIBCUDA]. Built twice (tests/meson.build):
 * with the nvcc fatbin and with no kernels (a build without nvcc). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bindings/cuda_api.h"
#include "bench/device.h"

extern const size_t embedded_cuda_fatbin_len;

static const char *fake_lib;
static const char *stub_lib;
static const struct dev_ops *ops = &dev_ops_cuda;

static const char *const fake_vars[] = {
        "FAKE_CUDA_DEVICES", "FAKE_CUDA_CC", "FAKE_CUDA_MEM_MIB", "FAKE_CUDA_WRONG_KERNEL", "FAKE_CUDA_FAIL",
        "FAKE_CUDA_P2P",     "FAKE_CUDA_BW_GBPS", "FAKE_CUDA_PCIE_GBPS", "FAKE_CUDA_LAUNCH_US", "FAKE_CUDA_NAME", "FAKE_CUDA_COPY_US",
};

static int reset(void **state) {
        (void)state;
        for (size_t i = 0; i < sizeof(fake_vars) / sizeof(fake_vars[0]); i++)
                unsetenv(fake_vars[i]);
        setenv("GPUVET_CUDA_LIB", fake_lib, 1);
        return 0;
}

static bool have_kernels(void) {
        return embedded_cuda_fatbin_len > 0;
}

static struct dev_backend *open_ok(void) {
        struct dev_backend *b = NULL;
        char err[512] = "";
        int r = ops->open(&b, err, sizeof(err));
        if (r != 0)
                print_error("open: %d %s\n", r, err);
        assert_int_equal(r, 0);
        assert_non_null(b);
        return b;
}

/* ---- loading -------------------------------------------------------------------------------- */

static void test_no_library(void **state) {
        (void)state;
        setenv("GPUVET_CUDA_LIB", "/nonexistent/libcuda.so.1", 1);
        struct dev_backend *b = (void *)1;
        char err[512];
        assert_int_equal(ops->open(&b, err, sizeof(err)), -ENOENT);
        assert_null(b);
        assert_non_null(strstr(err, "/nonexistent/libcuda.so.1"));
        /* The default soname: on a machine without a driver, "no NVIDIA driver". */
        unsetenv("GPUVET_CUDA_LIB");
        int r = ops->open(&b, err, sizeof(err));
        if (r == -ENOENT)
                assert_true(strstr(err, "no NVIDIA driver") || strstr(err, "stub library"));
        else if (r == 0)
                ops->close(b); /* a machine with a driver */
}

static void test_stub_library(void **state) {
        (void)state;
        /* The fake playing the stub, then the toolkit's real stub when there is one. */
        setenv("FAKE_CUDA_FAIL", "cuInit:CUDA_ERROR_STUB_LIBRARY", 1);
        struct dev_backend *b = NULL;
        char err[512];
        assert_int_equal(ops->open(&b, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "stub library, no driver"));
        if (stub_lib && access(stub_lib, R_OK) == 0) {
                setenv("GPUVET_CUDA_LIB", stub_lib, 1);
                assert_int_equal(ops->open(&b, err, sizeof(err)), -ENOENT);
                assert_non_null(strstr(err, "CUDA_ERROR_STUB_LIBRARY"));
                assert_non_null(strstr(err, "stub library, no driver"));
        }
}

static void test_no_device(void **state) {
        (void)state;
        setenv("FAKE_CUDA_DEVICES", "0", 1);
        struct dev_backend *b = NULL;
        char err[512];
        assert_int_equal(ops->open(&b, err, sizeof(err)), -ENODEV);
        assert_non_null(strstr(err, "CUDA_ERROR_NO_DEVICE"));
}

static void test_info(void **state) {
        (void)state;
        setenv("FAKE_CUDA_DEVICES", "2", 1);
        setenv("FAKE_CUDA_CC", "9.0", 1);
        struct dev_backend *b = open_ok();
        assert_int_equal(ops->count(b), 2);
        struct dev_info in;
        assert_int_equal(ops->info(b, 1, &in), 0);
        assert_string_equal(in.pci_bus_id, "0000:2b:00.0"); /* lower case, sysfs form */
        assert_string_equal(in.vendor, "NVIDIA");
        assert_int_equal(in.cc_major, 9);
        assert_int_equal(in.cc_minor, 0);
        assert_int_equal(in.compute_units, 132);
        assert_int_equal(in.clock_mhz, 1980);
        assert_int_equal(in.global_mem_bytes, 1024ull << 20);
        assert_string_equal(in.driver_version, "CUDA 13.0");
        assert_int_equal(ops->info(b, 2, &in), -ENODEV);
        struct dev_ctx *c = (void *)1;
        assert_int_equal(ops->ctx_open(b, 5, &c), -ENODEV);
        assert_null(c);
        ops->close(b);
}

/* ---- the Volta question ------------------------------------------------------------------------ */

static void test_volta_refused(void **state) {
        (void)state;
        setenv("FAKE_CUDA_CC", "7.0", 1);
        setenv("FAKE_CUDA_NAME", "Tesla V100-SXM2-32GB", 1);
        struct dev_backend *b = NULL;
        char err[512];
        /* -ENODEV: `--backend auto` goes on to OpenCL. */
        assert_int_equal(ops->open(&b, err, sizeof(err)), -ENODEV);
        assert_non_null(strstr(err, "compute capability 7.0"));
        assert_non_null(strstr(err, "Tesla V100-SXM2-32GB"));
        assert_non_null(strstr(err, "--backend opencl"));

        /* A mixed node: the Turing GPU works, the Volta one is refused by name. */
        setenv("FAKE_CUDA_DEVICES", "2", 1);
        setenv("FAKE_CUDA_CC", "7.5,7.0", 1);
        b = open_ok();
        struct dev_ctx *c = NULL;
        assert_int_equal(ops->ctx_open(b, 1, &c), -ENOTSUP);
        assert_non_null(strstr(ops->last_error(b), "compute capability 7.0"));
        assert_int_equal(ops->ctx_open(b, 0, &c), 0);
        ops->ctx_close(c);
        ops->close(b);
}

/* ---- a workload through every call ------------------------------------------------------------- */

#define N 4096

struct arg_list {
        struct dev_arg a[6];
        size_t n;
};

static struct dev_arg abuf(struct dev_buf *b) {
        struct dev_arg a = {.kind = DEV_ARG_BUF};
        a.v.buf = b;
        return a;
}
static struct dev_arg au64(uint64_t v) {
        struct dev_arg a = {.kind = DEV_ARG_U64};
        a.v.u64 = v;
        return a;
}
static struct dev_arg au32(uint32_t v) {
        struct dev_arg a = {.kind = DEV_ARG_U32};
        a.v.u32 = v;
        return a;
}
static struct dev_arg af32(float v) {
        struct dev_arg a = {.kind = DEV_ARG_F32};
        a.v.f32 = v;
        return a;
}
static struct dev_arg af64(double v) {
        struct dev_arg a = {.kind = DEV_ARG_F64};
        a.v.f64 = v;
        return a;
}

struct outcome {
        int rc;             /* first failure, 0 when all went well */
        char err[512];      /* its message */
        bool triad_ok, fill_ok, fma_ok, read_ok;
        double h2d_ms, triad_ms;
};

#define STEP(expr)                                                                  \
        do {                                                                        \
                int r_ = (expr);                                                    \
                if (r_ < 0 && o->rc == 0) {                                         \
                        o->rc = r_;                                                 \
                        snprintf(o->err, sizeof(o->err), "%s", ops->last_error(b)); \
                }                                                                   \
                if (r_ < 0)                                                         \
                        goto out;                                                   \
        } while (0)

/* Open, use every dev_ops call on one GPU (and peer copies to a second when there is
 * one), check the results, close. The first failure is kept in o; cleanup always runs. */
static void workload(struct outcome *o) {
        memset(o, 0, sizeof(*o));
        struct dev_backend *b = NULL;
        struct dev_ctx *c = NULL, *c2 = NULL;
        struct dev_buf *x = NULL, *y = NULL, *z = NULL, *p = NULL;
        struct dev_event *e0 = NULL, *e1 = NULL;
        float *h = NULL, *hp = NULL;
        int r = ops->open(&b, o->err, sizeof(o->err));
        if (r < 0) {
                o->rc = r;
                return;
        }
        struct dev_info in;
        STEP(ops->info(b, 0, &in));
        STEP(ops->ctx_open(b, 0, &c));
        uint64_t free_bytes = 0, total_bytes = 0;
        STEP(ops->mem_info(c, &free_bytes, &total_bytes));
        if (total_bytes != in.global_mem_bytes || free_bytes > total_bytes)
                STEP(-EBADMSG);
        STEP(ops->alloc(c, N * sizeof(float), &x));
        STEP(ops->alloc(c, N * sizeof(float), &y));
        STEP(ops->alloc(c, N * sizeof(float), &z));
        STEP(ops->alloc(c, N * sizeof(float), &p));
        STEP(ops->host_alloc(c, N * sizeof(float), true, (void **)&hp));
        STEP(ops->host_alloc(c, N * sizeof(float), false, (void **)&h));
        for (int i = 0; i < N; i++)
                hp[i] = (float)i;
        STEP(ops->event_create(c, &e0));
        STEP(ops->event_create(c, &e1));
        STEP(ops->event_record(c, e0));
        STEP(ops->copy_h2d(c, x, 0, hp, N * sizeof(float)));
        STEP(ops->event_record(c, e1));
        STEP(ops->event_elapsed_ms(c, e0, e1, &o->h2d_ms));
        STEP(ops->memset(c, y, 0, N * sizeof(float))); /* y = 0.0f */
        STEP(ops->copy_d2d(c, z, 0, x, 0, N * sizeof(float)));
        if (have_kernels()) {
                /* y = x + 2 z = 3 i */
                struct dev_arg t[] = {abuf(y), abuf(x), abuf(z), af32(2.0f), au64(N)};
                STEP(ops->event_record(c, e0));
                STEP(ops->launch(c, "triad_f32", N, 0, t, 5));
                STEP(ops->event_record(c, e1));
                STEP(ops->event_elapsed_ms(c, e0, e1, &o->triad_ms));
                STEP(ops->copy_d2h(c, h, y, 0, N * sizeof(float)));
                STEP(ops->synchronize(c));
                o->triad_ok = true;
                for (int i = 0; i < N; i++)
                        o->triad_ok &= h[i] == 3.0f * (float)i;

                struct dev_arg f[] = {abuf(x), au32(0x1234u), au64(N)};
                STEP(ops->launch(c, "fill_u32", N / 4, 64, f, 3));
                STEP(ops->copy_d2h(c, h, x, 0, N * sizeof(float)));
                STEP(ops->synchronize(c));
                o->fill_ok = true;
                for (uint64_t i = 0; i < N; i++) {
                        uint32_t v;
                        memcpy(&v, &h[i], sizeof(v));
                        o->fill_ok &= v == (0x1234u ^ (uint32_t)(i * 2654435761ull));
                }

                /* read_f32 over y (3 i) with 256 work items */
                struct dev_arg rd[] = {abuf(p), abuf(y), au64(N)};
                STEP(ops->launch(c, "read_f32", 256, 64, rd, 3));
                STEP(ops->copy_d2h(c, h, p, 0, 256 * sizeof(float)));
                STEP(ops->synchronize(c));
                double sum = 0;
                for (int i = 0; i < 256; i++)
                        sum += h[i];
                o->read_ok = sum == 3.0 * (double)N * (N - 1) / 2;

                struct dev_arg fm[] = {abuf(p), au32(100), af32(1.0f)};
                STEP(ops->launch(c, "fma_f32", 100, 0, fm, 3)); /* not a block multiple */
                STEP(ops->copy_d2h(c, h, p, 0, 100 * sizeof(float)));
                STEP(ops->synchronize(c));
                float want = 0, ch[8];
                for (int k = 0; k < 8; k++)
                        ch[k] = 1.0f + 0.125f * (float)k;
                for (int it = 0; it < 100; it++)
                        for (int k = 0; k < 8; k++)
                                ch[k] = fmaf(ch[k], 0.999f, 0.001f);
                want = ((ch[0] + ch[1]) + (ch[2] + ch[3])) + ((ch[4] + ch[5]) + (ch[6] + ch[7]));
                o->fma_ok = h[0] == want && h[99] == want;
                struct dev_arg fd[] = {abuf(p), au32(10), af64(1.0)};
                STEP(ops->launch(c, "fma_f64", 64, 0, fd, 3));
                struct dev_arg fh[] = {abuf(p), au32(10), af32(1.0f)};
                STEP(ops->launch(c, "fma_f16", 64, 0, fh, 3));
                struct dev_arg sc[] = {abuf(y), abuf(x), af32(0.5f), au64(N)};
                STEP(ops->launch(c, "scale_f32", N, 0, sc, 4));
                struct dev_arg ad[] = {abuf(y), abuf(x), abuf(z), au64(N)};
                STEP(ops->launch(c, "add_f32", N, 0, ad, 4));
                struct dev_arg cp[] = {abuf(y), abuf(x), au64(N)};
                STEP(ops->launch(c, "copy_f32", N, 0, cp, 3));
                struct dev_arg wr[] = {abuf(y), af32(1.0f), au64(N)};
                STEP(ops->launch(c, "write_f32", N, 0, wr, 3));
                STEP(ops->launch(c, "empty", 1, 1, NULL, 0));
        } else {
                struct dev_arg t[] = {abuf(y), abuf(x), abuf(z), af32(2.0f), au64(N)};
                STEP(ops->launch(c, "triad_f32", N, 0, t, 5));
        }
        STEP(ops->synchronize(c));
        if (ops->count(b) >= 2) {
                STEP(ops->ctx_open(b, 1, &c2));
                STEP(ops->p2p_enable(c, c2));
                struct dev_buf *q = NULL;
                STEP(ops->alloc(c2, N * sizeof(float), &q));
                int rr = ops->copy_peer(c2, q, c, z, N * sizeof(float));
                if (rr == 0)
                        rr = ops->copy_d2h(c2, h, q, 0, N * sizeof(float));
                if (rr == 0)
                        rr = ops->synchronize(c2);
                ops->free(c2, q);
                STEP(rr);
                for (int i = 0; i < N; i++)
                        if (h[i] != (float)i)
                                STEP(-EBADMSG);
        }
out:
        ops->event_destroy(c, e1);
        ops->event_destroy(c, e0);
        if (c) {
                ops->host_free(c, h, false);
                ops->host_free(c, hp, true);
                ops->free(c, p);
                ops->free(c, z);
                ops->free(c, y);
                ops->free(c, x);
        }
        ops->ctx_close(c2);
        ops->ctx_close(c);
        ops->close(b);
}

static void test_workload(void **state) {
        (void)state;
        setenv("FAKE_CUDA_DEVICES", "2", 1);
        setenv("FAKE_CUDA_PCIE_GBPS", "16.384", 1);
        setenv("FAKE_CUDA_BW_GBPS", "1000", 1);
        setenv("FAKE_CUDA_LAUNCH_US", "4", 1);
        setenv("FAKE_CUDA_COPY_US", "3", 1);
        struct outcome o;
        workload(&o);
        if (!have_kernels()) {
                assert_int_equal(o.rc, -ENOTSUP);
                assert_string_equal(o.err, "the CUDA kernels are missing (built without nvcc)");
                return;
        }
        if (o.rc)
                print_error("workload: %d %s\n", o.rc, o.err);
        assert_int_equal(o.rc, 0);
        assert_true(o.triad_ok);
        assert_true(o.fill_ok);
        assert_true(o.read_ok);
        assert_true(o.fma_ok);
        /* 3 us + 16 KiB at 16.384 GB/s = 4 us; triad 3 x 16 KiB at 1000 GB/s + 4 us launch */
        assert_true(fabs(o.h2d_ms - 0.004) < 1e-6);
        assert_true(fabs(o.triad_ms - (0.004 + 3.0 * N * 4 / 1e9 * 1e3 / 1000)) < 1e-6);
}

static void test_wrong_kernel(void **state) {
        (void)state;
        if (!have_kernels())
                skip();
        setenv("FAKE_CUDA_WRONG_KERNEL", "triad_f32", 1);
        struct outcome o;
        workload(&o);
        assert_int_equal(o.rc, 0);
        assert_false(o.triad_ok);
        assert_true(o.fill_ok);
}

static void test_p2p_unsupported(void **state) {
        (void)state;
        setenv("FAKE_CUDA_DEVICES", "2", 1);
        setenv("FAKE_CUDA_P2P", "0", 1);
        struct dev_backend *b = open_ok();
        struct dev_ctx *c0 = NULL, *c1 = NULL;
        assert_int_equal(ops->ctx_open(b, 0, &c0), 0);
        assert_int_equal(ops->ctx_open(b, 1, &c1), 0);
        assert_int_equal(ops->p2p_enable(c0, c1), -ENOTSUP);
        assert_non_null(strstr(ops->last_error(b), "cannot access each other"));
        assert_int_equal(ops->p2p_enable(c0, c0), -EINVAL);
        ops->ctx_close(c1);
        ops->ctx_close(c0);
        ops->close(b);
}

/* ---- bad arguments and out of memory ----------------------------------------------------------- */

static void test_bad_arguments(void **state) {
        (void)state;
        struct dev_backend *b = open_ok();
        struct dev_ctx *c = NULL;
        assert_int_equal(ops->ctx_open(b, 0, &c), 0);
        struct dev_buf *x = NULL;
        assert_int_equal(ops->alloc(c, 0, &x), -EINVAL);
        assert_int_equal(ops->alloc(c, 1024, &x), 0);
        char host[2048];
        assert_int_equal(ops->copy_h2d(c, x, 512, host, 1024), -EINVAL);
        assert_non_null(strstr(ops->last_error(b), "outside a buffer of 1024 bytes"));
        assert_int_equal(ops->copy_d2h(c, host, x, 0, 2048), -EINVAL);
        assert_int_equal(ops->memset(c, x, 0, 1025), -EINVAL);
        struct dev_arg wrong[] = {abuf(x), au32(1), au64(4)}; /* write_f32 wants f32 second */
        assert_int_equal(ops->launch(c, "write_f32", 4, 0, wrong, 3), -EINVAL);
        assert_non_null(strstr(ops->last_error(b), "argument 2 is 'f32 value'"));
        assert_int_equal(ops->launch(c, "write_f32", 4, 0, wrong, 2), -EINVAL);
        assert_int_equal(ops->launch(c, "no_such_kernel", 4, 0, NULL, 0), -EINVAL);
        assert_non_null(strstr(ops->last_error(b), "no kernel named no_such_kernel"));
        struct dev_arg nullbuf[] = {{.kind = DEV_ARG_BUF}, af32(1), au64(4)};
        assert_int_equal(ops->launch(c, "write_f32", 4, 0, nullbuf, 3), -EINVAL);
        assert_int_equal(ops->launch(c, "empty", 0, 0, NULL, 0), -EINVAL);
        assert_int_equal(ops->launch(c, "empty", 1, 2048, NULL, 0), -EINVAL);
        ops->free(c, x);
        ops->ctx_close(c);
        ops->close(b);
}

static void test_out_of_memory(void **state) {
        (void)state;
        setenv("FAKE_CUDA_MEM_MIB", "1", 1);
        struct dev_backend *b = open_ok();
        struct dev_ctx *c = NULL;
        assert_int_equal(ops->ctx_open(b, 0, &c), 0);
        struct dev_buf *x = NULL;
        assert_int_equal(ops->alloc(c, 2u << 20, &x), -ENOMEM);
        assert_null(x);
        assert_non_null(strstr(ops->last_error(b), "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"));
        ops->ctx_close(c);
        ops->close(b);
}

/* ---- an error in each driver call ---------------------------------------------------------------- */

/* Calls whose failure the backend ignores by design (teardown, the error-string lookups). */
static bool ignored(const char *fn) {
        static const char *const names[] = {"cuDevicePrimaryCtxRelease_v2", "cuStreamDestroy_v2", "cuMemFree_v2",
                                            "cuMemFreeHost", "cuModuleUnload", "cuEventDestroy_v2",
                                            "cuGetErrorName", "cuGetErrorString",
                                            /* bench rdma's, not the backend's */
                                            "cuMemGetHandleForAddressRange"};
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (strcmp(names[i], fn) == 0)
                        return true;
        return false;
}

static void test_each_call_fails(void **state) {
        (void)state;
        static const char *const fns[] = {
#define CUDA_FN(need, name, fallback, params) #name,
#include "bindings/cuda_functions.def"
#undef CUDA_FN
        };
        static const char *const calls[] = {"", ":call=2", ":call=3"};
        for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
                for (size_t k = 0; k < sizeof(calls) / sizeof(calls[0]); k++) {
                        char spec[128];
                        snprintf(spec, sizeof(spec), "%s:CUDA_ERROR_LAUNCH_FAILED%s", fns[i], calls[k]);
                        reset(NULL);
                        setenv("FAKE_CUDA_DEVICES", "2", 1);
                        setenv("FAKE_CUDA_FAIL", spec, 1);
                        struct outcome o;
                        workload(&o);
                        if (ignored(fns[i])) {
                                assert_true(o.rc == 0 || !have_kernels());
                                continue;
                        }
                        if (k > 0 && o.rc == 0)
                                continue; /* the workload calls it fewer times */
                        if (!have_kernels() && o.rc == -ENOTSUP && strstr(o.err, "kernels are missing"))
                                continue; /* the kernel-side calls are never reached */
                        if (o.rc == 0 || !strstr(o.err, fns[i]) || !strstr(o.err, "CUDA_ERROR_LAUNCH_FAILED"))
                                print_error("%s: rc %d, err \"%s\"\n", spec, o.rc, o.err);
                        assert_true(o.rc < 0);
                        /* The message names the call that failed and its code. */
                        assert_non_null(strstr(o.err, fns[i]));
                        assert_non_null(strstr(o.err, "CUDA_ERROR_LAUNCH_FAILED"));
                }
        }
}

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: %s FAKE_LIBCUDA [STUB_LIBCUDA]\n", argv[0]);
                return 2;
        }
        fake_lib = argv[1];
        stub_lib = argc > 2 ? argv[2] : NULL;
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(test_no_library, reset),
                cmocka_unit_test_setup(test_stub_library, reset),
                cmocka_unit_test_setup(test_no_device, reset),
                cmocka_unit_test_setup(test_info, reset),
                cmocka_unit_test_setup(test_volta_refused, reset),
                cmocka_unit_test_setup(test_workload, reset),
                cmocka_unit_test_setup(test_wrong_kernel, reset),
                cmocka_unit_test_setup(test_p2p_unsupported, reset),
                cmocka_unit_test_setup(test_bad_arguments, reset),
                cmocka_unit_test_setup(test_out_of_memory, reset),
                cmocka_unit_test_setup(test_each_call_fails, reset),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

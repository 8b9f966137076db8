/* The memory test (src/burn/memtest.c) through both backends: the fake libcuda
 * (tests/fakes/fake_cuda.c, $GPUVET_CUDA_LIB) and OpenCL on whatever platform is installed
 * (PoCL in CI, for real). This binary has its own copy of src/bindings/opencl_device.c
 * compiled with GPUVET_TEST_HOOKS, so GPUVET_TEST_MEM_FAULT works.
 *
 * Covered: clean runs of every pattern (no fault, exact word counts); a flipped bit found by
 * every pattern with its offset, bits, expected value and count; faults in chunks of a
 * region cut by a small max_alloc_bytes, reported at region offsets; a fault in every word
 * (the device log saturates at MEMTEST_MAX_FAULTS, the count stays exact); the stop
 * callback and progress; an allocation and a launch failing (error names the call, all
 * memory freed); the default region; bad options.
 *
 * Usage: test_memtest FAKE_LIBCUDA. The OpenCL tests skip when no OpenCL device opens. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/device.h"
#include "burn/memtest.h"

extern const size_t embedded_cuda_fatbin_len;

static const char *fake_lib;

/* What each pattern's pass reads per word: the verify sweeps (moving inversions: the two
 * inversion sweeps and the last verify; address: index and complement). */
static const unsigned checks_per_word[MEMTEST_PATTERN_COUNT] = {1, 1, 3, 1, 2};

struct device {
        const struct dev_ops *ops;
        struct dev_backend *b;
        struct dev_ctx *ctx;
        struct dev_info info;
};

static const char *const env_vars[] = {"FAKE_CUDA_MEM_MIB", "FAKE_CUDA_FAIL", "FAKE_CUDA_MEM_FAULT",
                                       "FAKE_CUDA_WRONG_KERNEL", "GPUVET_TEST_MEM_FAULT"};

static int reset(void **state) {
        (void)state;
        for (size_t i = 0; i < sizeof(env_vars) / sizeof(env_vars[0]); i++)
                unsetenv(env_vars[i]);
        setenv("GPUVET_CUDA_LIB", fake_lib, 1);
        return 0;
}

/* Open device 0 of the backend; false (test skipped) when OpenCL has no device here. */
static bool open_device(const struct dev_ops *ops, struct device *d) {
        memset(d, 0, sizeof(*d));
        d->ops = ops;
        char err[512] = "";
        int r = ops->open(&d->b, err, sizeof(err));
        if (r < 0 && ops == &dev_ops_opencl) {
                print_message("no OpenCL device: %s\n", err);
                return false;
        }
        if (r < 0)
                print_error("open %s: %d %s\n", ops->name, r, err);
        assert_int_equal(r, 0);
        assert_int_equal(ops->info(d->b, 0, &d->info), 0);
        r = ops->ctx_open(d->b, 0, &d->ctx);
        if (r < 0)
                print_error("ctx_open: %s\n", ops->last_error(d->b));
        assert_int_equal(r, 0);
        return true;
}

static void close_device(struct device *d) {
        d->ops->ctx_close(d->ctx);
        d->ops->close(d->b);
}

static bool cuda_ready(struct device *d) {
        if (!embedded_cuda_fatbin_len) {
                print_message("no CUDA kernels in this build (no nvcc)\n");
                return false;
        }
        return open_device(&dev_ops_cuda, d);
}

/* The fake's memory is all free again: memtest freed what it allocated. */
static void assert_all_freed(struct device *d) {
        uint64_t free_bytes = 0, total_bytes = 0;
        assert_int_equal(d->ops->mem_info(d->ctx, &free_bytes, &total_bytes), 0);
        assert_int_equal(free_bytes, total_bytes);
}

static int run(struct device *d, const struct memtest_options *o, struct memtest_result *res) {
        int r = memtest_run(d->ops, d->b, d->ctx, &d->info, o, res);
        if (r < 0)
                print_message("memtest_run: %d %s\n", r, res->error);
        return r;
}

static uint64_t rotl(uint64_t x, unsigned r) {
        r &= 63;
        return r ? (x << r) | (x >> (64 - r)) : x;
}

/* ---- clean memory ------------------------------------------------------------------------ */

static void clean_run(struct device *d, uint64_t bytes, unsigned passes) {
        struct memtest_options o = {.bytes = bytes, .passes = passes, .seed = 42};
        struct memtest_result res;
        assert_int_equal(run(d, &o, &res), 0);
        assert_int_equal(res.bytes_tested, bytes);
        assert_int_equal(res.errors, 0);
        assert_int_equal(res.n_faults, 0);
        assert_false(res.stopped);
        assert_int_equal(res.seed, 42);
        uint64_t words = bytes / 8, checks = 0;
        for (int p = 0; p < MEMTEST_PATTERN_COUNT; p++) {
                assert_int_equal(res.patterns[p].passes, passes);
                assert_int_equal(res.patterns[p].errors, 0);
                assert_true(res.patterns[p].bytes_moved > 0);
                assert_true(res.patterns[p].gbps > 0);
                checks += checks_per_word[p] * words * passes;
        }
        assert_int_equal(res.words_checked, checks);
}

static void test_cuda_clean(void **state) {
        (void)state;
        struct device d;
        if (!cuda_ready(&d))
                skip();
        clean_run(&d, (1u << 20) + 8, 2); /* an odd number of words: the kernels' tail */
        assert_all_freed(&d);
        close_device(&d);
}

static void test_opencl_clean(void **state) {
        (void)state;
        struct device d;
        if (!open_device(&dev_ops_opencl, &d))
                skip();
        clean_run(&d, (4u << 20) + 8, 1);
        close_device(&d);
}

/* ---- one flipped bit ---------------------------------------------------------------------- */

/* A fault at word `word`, bits `mask`, seen by every pattern of one pass with the count
 * each should give, at the right offset, with the right bits and expected values. */
static void assert_one_fault(const struct memtest_result *res, uint64_t word, uint64_t mask, uint64_t seed) {
        uint64_t total = 0;
        for (int p = 0; p < MEMTEST_PATTERN_COUNT; p++) {
                assert_int_equal(res->patterns[p].errors, checks_per_word[p]);
                total += checks_per_word[p];
        }
        assert_int_equal(res->errors, total);
        assert_int_equal(res->n_faults, total);
        unsigned seen[MEMTEST_PATTERN_COUNT] = {0};
        for (unsigned i = 0; i < res->n_faults; i++) {
                const struct memtest_fault *f = &res->faults[i];
                assert_int_equal(f->offset, word * 8);
                assert_int_equal(f->expected ^ f->actual, mask);
                assert_int_equal(f->pass, 1);
                unsigned k = seen[f->pattern]++;
                switch (f->pattern) {
                case MEMTEST_WALKING_ONES: assert_int_equal(f->expected, rotl(1, (unsigned)(word % 64))); break;
                case MEMTEST_WALKING_ZEROS: assert_int_equal(f->expected, ~rotl(1, (unsigned)(word % 64))); break;
                case MEMTEST_MOVING_INVERSIONS: /* p = 0: check 0, check ~0, check 0 */
                        assert_int_equal(f->expected, k == 1 ? ~0ull : 0);
                        break;
                case MEMTEST_RANDOM: {
                        (void)seed; /* the value is the kernel's; it differs from the neighbours' */
                        assert_true(f->expected != 0 && f->expected != ~0ull);
                        break;
                }
                case MEMTEST_ADDRESS: assert_int_equal(f->expected, k == 0 ? word : ~word); break;
                default: fail();
                }
        }
}

static void test_cuda_fault(void **state) {
        (void)state;
        /* bit 20 of the word at byte 0x1238 of the first allocation (chunk 1) */
        setenv("FAKE_CUDA_MEM_FAULT", "0x1238:0x100000", 1);
        struct device d;
        if (!cuda_ready(&d))
                skip();
        struct memtest_options o = {.bytes = 1u << 20, .seed = 7};
        struct memtest_result res;
        assert_int_equal(run(&d, &o, &res), 0);
        assert_one_fault(&res, 0x1238 / 8, 0x100000, 7);
        assert_all_freed(&d);
        close_device(&d);
}

static void test_opencl_fault(void **state) {
        (void)state;
        setenv("GPUVET_TEST_MEM_FAULT", "0x247:0x8000000000000001", 1);
        struct device d;
        if (!open_device(&dev_ops_opencl, &d))
                skip();
        struct memtest_options o = {.bytes = 4u << 20, .seed = 7};
        struct memtest_result res;
        assert_int_equal(run(&d, &o, &res), 0);
        assert_one_fault(&res, 0x247, 0x8000000000000001ull, 7);
        close_device(&d);
}

/* A write kernel that writes one word wrong is caught too (FAKE_CUDA_WRONG_KERNEL). */
static void test_cuda_wrong_write(void **state) {
        (void)state;
        setenv("FAKE_CUDA_WRONG_KERNEL", "memtest_walk_write", 1);
        struct device d;
        if (!cuda_ready(&d))
                skip();
        struct memtest_options o = {.bytes = 4096, .patterns = MEMTEST_PATTERN_BIT(MEMTEST_WALKING_ONES)};
        struct memtest_result res;
        assert_int_equal(run(&d, &o, &res), 0);
        assert_int_equal(res.errors, 1);
        assert_int_equal(res.faults[0].offset, 4096 / 2);
        assert_int_equal(res.faults[0].expected ^ res.faults[0].actual, 1);
        close_device(&d);
}

/* ---- chunks ------------------------------------------------------------------------------- */

static void test_cuda_chunks(void **state) {
        (void)state;
        /* Chunks of 64 KiB over 256 KiB + 24 bytes: 5 allocations, the last of 3 words.
         * Faults: byte 0x10 of chunk 3 (bit 3), the last word of chunk 5 (bit 62). */
        setenv("FAKE_CUDA_MEM_FAULT", "0x10:0x8:3,0x10:0x4000000000000000:5", 1);
        struct device d;
        if (!cuda_ready(&d))
                skip();
        d.info.max_alloc_bytes = 64u << 10;
        struct memtest_options o = {.bytes = (256u << 10) + 24,
                                    .patterns = MEMTEST_PATTERN_BIT(MEMTEST_WALKING_ONES) |
                                                MEMTEST_PATTERN_BIT(MEMTEST_ADDRESS)};
        struct memtest_result res;
        assert_int_equal(run(&d, &o, &res), 0);
        assert_int_equal(res.chunks, 5);
        assert_int_equal(res.chunk_bytes, 64u << 10);
        assert_int_equal(res.errors, 2 * (1 + 2));
        assert_int_equal(res.n_faults, 6);
        uint64_t at[2] = {2 * (64u << 10) + 0x10, 4 * (64u << 10) + 0x10};
        for (unsigned i = 0; i < res.n_faults; i++) {
                const struct memtest_fault *f = &res.faults[i];
                assert_true(f->offset == at[0] || f->offset == at[1]);
                assert_int_equal(f->expected ^ f->actual, f->offset == at[0] ? 0x8 : 0x4000000000000000ull);
                if (f->pattern == MEMTEST_ADDRESS) /* the region's word index, not the chunk's */
                        assert_true(f->expected == f->offset / 8 || f->expected == ~(f->offset / 8));
        }
        assert_all_freed(&d);
        close_device(&d);
}

/* ---- every word fails: the log saturates, the count does not --------------------------- */

static void assert_saturated(const struct memtest_result *res, uint64_t words, uint64_t mask) {
        assert_int_equal(res->errors, words);
        assert_int_equal(res->patterns[MEMTEST_WALKING_ONES].errors, words);
        assert_int_equal(res->n_faults, MEMTEST_MAX_FAULTS);
        for (unsigned i = 0; i < res->n_faults; i++) {
                assert_true(res->faults[i].offset < words * 8);
                assert_int_equal(res->faults[i].offset % 8, 0);
                assert_int_equal(res->faults[i].expected ^ res->faults[i].actual, mask);
                if (i) /* sorted, each word once */
                        assert_true(res->faults[i].offset > res->faults[i - 1].offset);
        }
}

static void test_cuda_saturation(void **state) {
        (void)state;
        setenv("FAKE_CUDA_MEM_FAULT", "0:0x0101010101010101:1:65536", 1);
        struct device d;
        if (!cuda_ready(&d))
                skip();
        struct memtest_options o = {.bytes = 65536, .patterns = MEMTEST_PATTERN_BIT(MEMTEST_WALKING_ONES)};
        struct memtest_result res;
        assert_int_equal(run(&d, &o, &res), 0);
        assert_saturated(&res, 65536 / 8, 0x0101010101010101ull);
        /* the fake runs in order: the first 64 words */
        assert_int_equal(res.faults[MEMTEST_MAX_FAULTS - 1].offset, (MEMTEST_MAX_FAULTS - 1) * 8);
        close_device(&d);
}

static void test_opencl_saturation(void **state) {
        (void)state;
        char spec[64];
        uint64_t words = (1u << 20) / 8;
        snprintf(spec, sizeof(spec), "0:0x10:%llu", (unsigned long long)words);
        setenv("GPUVET_TEST_MEM_FAULT", spec, 1);
        struct device d;
        if (!open_device(&dev_ops_opencl, &d))
                skip();
        struct memtest_options o = {.bytes = words * 8, .patterns = MEMTEST_PATTERN_BIT(MEMTEST_WALKING_ONES)};
        struct memtest_result res;
        assert_int_equal(run(&d, &o, &res), 0);
        assert_saturated(&res, words, 0x10);
        close_device(&d);
}

/* ---- stop and progress ---------------------------------------------------------------------- */

struct stopper {
        unsigned asked, stop_at, progress;
        struct memtest_progress last;
};

static bool stop_cb(void *ctx) {
        struct stopper *s = ctx;
        return ++s->asked >= s->stop_at;
}

static void progress_cb(void *ctx, const struct memtest_progress *p) {
        struct stopper *s = ctx;
        s->progress++;
        s->last = *p;
}

static void test_cuda_stop(void **state) {
        (void)state;
        struct device d;
        if (!cuda_ready(&d))
                skip();
        d.info.max_alloc_bytes = 16u << 10;
        struct stopper s = {.stop_at = 11};
        struct memtest_options o = {.bytes = 64u << 10, .passes = UINT_MAX, .stop = stop_cb, .stop_ctx = &s,
                                    .progress = progress_cb, .progress_ctx = &s};
        struct memtest_result res;
        assert_int_equal(run(&d, &o, &res), 0);
        assert_true(res.stopped);
        assert_int_equal(s.asked, 11);
        assert_int_equal(s.progress, 11);
        /* 4 chunks a sweep: walking ones' 2 sweeps (8 launches), then zeros' third launch */
        assert_int_equal(s.last.pattern, MEMTEST_WALKING_ZEROS);
        assert_string_equal(s.last.pattern_name, "walking_zeros");
        assert_int_equal(s.last.pass, 1);
        assert_int_equal(s.last.sweep, 1);
        assert_int_equal(s.last.sweeps, 2);
        assert_int_equal(s.last.bytes_done, 3 * (16u << 10));
        assert_int_equal(s.last.region_bytes, 64u << 10);
        assert_int_equal(res.patterns[MEMTEST_WALKING_ONES].passes, 1);
        assert_int_equal(res.patterns[MEMTEST_WALKING_ZEROS].passes, 0);
        assert_all_freed(&d);
        close_device(&d);
}

/* ---- failures ------------------------------------------------------------------------------- */

static void test_cuda_alloc_fails(void **state) {
        (void)state;
        setenv("FAKE_CUDA_FAIL", "cuMemAlloc_v2:CUDA_ERROR_OUT_OF_MEMORY:call=3", 1);
        struct device d;
        if (!cuda_ready(&d))
                skip();
        d.info.max_alloc_bytes = 16u << 10;
        struct memtest_options o = {.bytes = 64u << 10};
        struct memtest_result res;
        assert_int_equal(memtest_run(d.ops, d.b, d.ctx, &d.info, &o, &res), -ENOMEM);
        assert_non_null(strstr(res.error, "allocating chunk 3 of 4 (16384 bytes)"));
        assert_non_null(strstr(res.error, "cuMemAlloc_v2"));
        assert_non_null(strstr(res.error, "CUDA_ERROR_OUT_OF_MEMORY"));
        assert_all_freed(&d);
        close_device(&d);
}

static void test_cuda_launch_fails(void **state) {
        (void)state;
        /* launch 1: the untimed first write; 2: walking ones' write; 3: its verify */
        setenv("FAKE_CUDA_FAIL", "cuLaunchKernel:CUDA_ERROR_LAUNCH_FAILED:call=3", 1);
        struct device d;
        if (!cuda_ready(&d))
                skip();
        struct memtest_options o = {.bytes = 4096};
        struct memtest_result res;
        assert_true(memtest_run(d.ops, d.b, d.ctx, &d.info, &o, &res) < 0);
        assert_non_null(strstr(res.error, "launching memtest_walk_verify on chunk 1"));
        assert_non_null(strstr(res.error, "CUDA_ERROR_LAUNCH_FAILED"));
        assert_all_freed(&d);
        /* the first launch of all */
        close_device(&d);
        setenv("FAKE_CUDA_FAIL", "cuLaunchKernel:CUDA_ERROR_LAUNCH_FAILED:call=1", 1);
        if (!cuda_ready(&d))
                skip();
        assert_true(memtest_run(d.ops, d.b, d.ctx, &d.info, &o, &res) < 0);
        assert_non_null(strstr(res.error, "writing chunk 1 for the first time"));
        assert_all_freed(&d);
        close_device(&d);
}

static void test_cuda_mem_info_fails(void **state) {
        (void)state;
        setenv("FAKE_CUDA_FAIL", "cuMemGetInfo_v2:CUDA_ERROR_UNKNOWN", 1);
        struct device d;
        if (!cuda_ready(&d))
                skip();
        struct memtest_options o = {0};
        struct memtest_result res;
        assert_true(memtest_run(d.ops, d.b, d.ctx, &d.info, &o, &res) < 0);
        assert_non_null(strstr(res.error, "cuMemGetInfo_v2"));
        close_device(&d);
}

/* ---- the region and the options ------------------------------------------------------------- */

static void test_cuda_default_region(void **state) {
        (void)state;
        setenv("FAKE_CUDA_MEM_MIB", "16", 1);
        struct device d;
        if (!cuda_ready(&d))
                skip();
        struct memtest_options o = {.patterns = MEMTEST_PATTERN_BIT(MEMTEST_RANDOM)};
        struct memtest_result res;
        uint64_t want = (uint64_t)((16u << 20) * 0.9) / 8 * 8;
        assert_int_equal(memtest_region_bytes(d.ops, d.ctx, &d.info, &o), want);
        assert_int_equal(run(&d, &o, &res), 0);
        assert_int_equal(res.bytes_tested, want);
        assert_true(res.seed != 0); /* chosen, to be printed */
        assert_int_equal(res.errors, 0);
        o.fraction = 0.5;
        assert_int_equal(memtest_region_bytes(d.ops, d.ctx, &d.info, &o), 8u << 20);
        /* a CPU device: the small default, whatever the driver says is free */
        struct dev_info cpu = d.info;
        cpu.is_cpu = true;
        cpu.global_mem_bytes = 64ull << 30;
        o.fraction = 0;
        assert_int_equal(memtest_region_bytes(d.ops, d.ctx, &cpu, &o), MEMTEST_SMALL_DEFAULT_BYTES);
        cpu.global_mem_bytes = 100u << 20;
        assert_int_equal(memtest_region_bytes(d.ops, d.ctx, &cpu, &o), (uint64_t)((100u << 20) * 0.9) / 8 * 8);
        close_device(&d);
}

static void test_opencl_default_region(void **state) {
        (void)state;
        struct device d;
        if (!open_device(&dev_ops_opencl, &d))
                skip();
        struct memtest_options o = {0};
        uint64_t part = (uint64_t)((double)d.info.global_mem_bytes * 0.9) / 8 * 8;
        assert_int_equal(memtest_region_bytes(d.ops, d.ctx, &d.info, &o),
                         part < MEMTEST_SMALL_DEFAULT_BYTES ? part : MEMTEST_SMALL_DEFAULT_BYTES);
        close_device(&d);
}

static void test_bad_options(void **state) {
        (void)state;
        struct device d;
        if (!cuda_ready(&d))
                skip();
        struct memtest_result res;
        struct memtest_options o = {.bytes = 4};
        assert_int_equal(memtest_run(d.ops, d.b, d.ctx, &d.info, &o, &res), -EINVAL);
        assert_non_null(strstr(res.error, "holds no 8-byte word"));
        o = (struct memtest_options){.bytes = 4096, .fraction = 1.5};
        assert_int_equal(memtest_run(d.ops, d.b, d.ctx, &d.info, &o, &res), -EINVAL);
        o = (struct memtest_options){.bytes = 4096, .patterns = 1u << 7};
        assert_int_equal(memtest_run(d.ops, d.b, d.ctx, &d.info, &o, &res), -EINVAL);
        d.info.max_alloc_bytes = 4;
        o = (struct memtest_options){.bytes = 4096};
        assert_int_equal(memtest_run(d.ops, d.b, d.ctx, &d.info, &o, &res), -EINVAL);
        assert_non_null(strstr(res.error, "less than one 8-byte word"));
        assert_all_freed(&d);
        close_device(&d);
}

static void test_pattern_names(void **state) {
        (void)state;
        for (int p = 0; p < MEMTEST_PATTERN_COUNT; p++)
                assert_int_equal(memtest_pattern_by_name(memtest_pattern_name((enum memtest_pattern)p)), p);
        assert_int_equal(memtest_pattern_by_name("checkerboard"), MEMTEST_PATTERN_INVALID);
        assert_null(memtest_pattern_name(MEMTEST_PATTERN_COUNT));
}

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: %s FAKE_LIBCUDA\n", argv[0]);
                return 2;
        }
        fake_lib = argv[1];
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(test_pattern_names, reset),
                cmocka_unit_test_setup(test_cuda_clean, reset),
                cmocka_unit_test_setup(test_cuda_fault, reset),
                cmocka_unit_test_setup(test_cuda_wrong_write, reset),
                cmocka_unit_test_setup(test_cuda_chunks, reset),
                cmocka_unit_test_setup(test_cuda_saturation, reset),
                cmocka_unit_test_setup(test_cuda_stop, reset),
                cmocka_unit_test_setup(test_cuda_alloc_fails, reset),
                cmocka_unit_test_setup(test_cuda_launch_fails, reset),
                cmocka_unit_test_setup(test_cuda_mem_info_fails, reset),
                cmocka_unit_test_setup(test_cuda_default_region, reset),
                cmocka_unit_test_setup(test_bad_options, reset),
                cmocka_unit_test_setup(test_opencl_clean, reset),
                cmocka_unit_test_setup(test_opencl_fault, reset),
                cmocka_unit_test_setup(test_opencl_saturation, reset),
                cmocka_unit_test_setup(test_opencl_default_region, reset),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

/* src/bench/nccl_math.c: nccl-tests' counts, bandwidths and sweep, and the expected values of
 * each collective for gpuvet's fill. Figures are worked by hand from nccl-tests 2.19.6
 * (doc/PERFORMANCE.md, src/<collective>.cu, src/common.cu). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bench/nccl_math.h"

static void test_names(void **state) {
        (void)state;
        for (int c = 0; c < NCCL_COLL_COUNT; c++)
                assert_int_equal(nccl_coll_from_name(nccl_coll_name((enum nccl_coll)c)), c);
        assert_string_equal(nccl_coll_name(NCCL_COLL_REDUCE_SCATTER), "reduce_scatter");
        assert_null(nccl_coll_name(NCCL_COLL_COUNT));
        assert_int_equal(nccl_coll_from_name("allreduce"), NCCL_COLL_INVALID);
        for (int t = 0; t < NCCL_DT_COUNT; t++)
                assert_int_equal(nccl_dtype_from_name(nccl_dtype_name((enum nccl_dtype)t)), t);
        assert_int_equal(nccl_dtype_size(NCCL_DT_BFLOAT16), 2);
        assert_int_equal(nccl_dtype_size(NCCL_DT_UINT64), 8);
        assert_int_equal(nccl_dtype_size(NCCL_DT_COUNT), 0);
        assert_int_equal(nccl_redop_from_name("avg"), NCCL_OP_AVG);
        assert_int_equal(nccl_redop_from_name("mean"), NCCL_OP_INVALID);
        assert_true(nccl_coll_reduces(NCCL_COLL_REDUCE) && !nccl_coll_reduces(NCCL_COLL_BROADCAST));
        assert_true(nccl_coll_rooted(NCCL_COLL_BROADCAST) && !nccl_coll_rooted(NCCL_COLL_ALLTOALL));
}

/* doc/PERFORMANCE.md's summary, for 8 ranks and for 1. */
static void test_factors(void **state) {
        (void)state;
        assert_true(nccl_busbw_factor(NCCL_COLL_ALL_REDUCE, 8) == 1.75);
        assert_true(nccl_busbw_factor(NCCL_COLL_ALL_GATHER, 8) == 0.875);
        assert_true(nccl_busbw_factor(NCCL_COLL_REDUCE_SCATTER, 8) == 0.875);
        assert_true(nccl_busbw_factor(NCCL_COLL_ALLTOALL, 8) == 0.875);
        assert_true(nccl_busbw_factor(NCCL_COLL_BROADCAST, 8) == 1.0);
        assert_true(nccl_busbw_factor(NCCL_COLL_REDUCE, 8) == 1.0);
        assert_true(nccl_busbw_factor(NCCL_COLL_SENDRECV, 8) == 1.0);
        assert_true(nccl_busbw_factor(NCCL_COLL_ALL_REDUCE, 1) == 0.0);
        assert_true(nccl_busbw_factor(NCCL_COLL_ALL_REDUCE, 2) == 1.0);
        assert_true(isnan(nccl_busbw_factor(NCCL_COLL_ALL_REDUCE, 0)));
        assert_true(isnan(nccl_busbw_factor(NCCL_COLL_COUNT, 8)));
}

static void test_counts(void **state) {
        (void)state;
        struct nccl_counts k;
        /* all_reduce: count = bytes / size, nothing rounded */
        assert_int_equal(nccl_counts(NCCL_COLL_ALL_REDUCE, 1000, 4, 8, &k), 0);
        assert_int_equal(k.count, 250);
        assert_int_equal(k.bytes, 1000);
        /* all_gather 1 MiB of float on 8 ranks: 32768 per rank, 262144 gathered */
        assert_int_equal(nccl_counts(NCCL_COLL_ALL_GATHER, 1 << 20, 4, 8, &k), 0);
        assert_int_equal(k.count, 32768);
        assert_int_equal(k.send_count, 32768);
        assert_int_equal(k.recv_count, 262144);
        assert_int_equal(k.send_inplace_offset, 32768);
        assert_int_equal(k.bytes, 1 << 20);
        /* 1000 bytes of int8 on 8 ranks: 125 per rank, down to 112 (16-byte units) */
        assert_int_equal(nccl_counts(NCCL_COLL_REDUCE_SCATTER, 1000, 1, 8, &k), 0);
        assert_int_equal(k.count, 112);
        assert_int_equal(k.send_count, 896);
        assert_int_equal(k.recv_count, 112);
        assert_int_equal(k.recv_inplace_offset, 112);
        assert_int_equal(k.bytes, 896);
        /* 100 bytes of float on 3 ranks: 25 elements, 8 per rank (not 8.33), 96 bytes */
        assert_int_equal(nccl_counts(NCCL_COLL_ALLTOALL, 100, 4, 3, &k), 0);
        assert_int_equal(k.count, 8);
        assert_int_equal(k.send_count, 24);
        assert_int_equal(k.recv_count, 24);
        assert_int_equal(k.bytes, 96);
        /* 8 bytes (-b 8) on 8 ranks: nothing left per rank */
        assert_int_equal(nccl_counts(NCCL_COLL_ALL_GATHER, 8, 4, 8, &k), 0);
        assert_int_equal(k.count, 0);
        assert_int_equal(k.bytes, 0);
        /* doubles: 16 / 8 = 2-element units */
        assert_int_equal(nccl_counts(NCCL_COLL_ALL_GATHER, 1000, 8, 4, &k), 0);
        assert_int_equal(k.count, 30); /* 125 / 4 = 31, & ~1 */
        assert_int_equal(nccl_counts(NCCL_COLL_SENDRECV, 1000, 3, 4, &k), -EINVAL);
        assert_int_equal(nccl_counts(NCCL_COLL_SENDRECV, 1000, 4, 0, &k), -EINVAL);
        assert_int_equal(nccl_counts(NCCL_COLL_COUNT, 1000, 4, 2, &k), -EINVAL);
}

static void test_bandwidth(void **state) {
        (void)state;
        double alg = 0, bus = 0;
        /* all_reduce of 4 MiB (1 Mi floats) on 8 ranks in 1 ms */
        assert_int_equal(nccl_bandwidth(NCCL_COLL_ALL_REDUCE, 1 << 20, 4, 8, 1e-3, &alg, &bus), 0);
        assert_true(fabs(alg - 4.194304) < 1e-12);
        assert_true(fabs(bus - 4.194304 * 1.75) < 1e-12);
        /* all_gather: count is per rank, the bytes are the gathered array */
        assert_int_equal(nccl_bandwidth(NCCL_COLL_ALL_GATHER, 32768, 4, 8, 1e-3, &alg, &bus), 0);
        assert_true(fabs(alg - 1.048576) < 1e-12);
        assert_true(fabs(bus - 1.048576 * 0.875) < 1e-12);
        assert_true(nccl_alg_bytes(NCCL_COLL_ALLTOALL, 8, 4, 3) == 96);
        assert_true(nccl_alg_bytes(NCCL_COLL_REDUCE_SCATTER, 112, 1, 8) == 896);
        assert_true(nccl_alg_bytes(NCCL_COLL_BROADCAST, 250, 4, 8) == 1000);
        assert_int_equal(nccl_bandwidth(NCCL_COLL_SENDRECV, 250, 4, 2, 1e-6, &alg, &bus), 0);
        assert_true(fabs(alg - 1.0) < 1e-12 && alg == bus);
        assert_int_equal(nccl_bandwidth(NCCL_COLL_SENDRECV, 250, 4, 2, 0, &alg, &bus), -EINVAL);
        assert_int_equal(nccl_bandwidth(NCCL_COLL_SENDRECV, 250, 4, 0, 1, &alg, &bus), -EINVAL);
}

static void test_parse_size(void **state) {
        (void)state;
        size_t v = 0;
        assert_int_equal(nccl_parse_size("8", &v), 0);
        assert_int_equal(v, 8);
        assert_int_equal(nccl_parse_size("1K", &v), 0);
        assert_int_equal(v, 1024);
        assert_int_equal(nccl_parse_size("128m", &v), 0);
        assert_int_equal(v, 128u << 20);
        assert_int_equal(nccl_parse_size("8G", &v), 0);
        assert_int_equal(v, (size_t)8 << 30);
        assert_int_equal(nccl_parse_size("0.5M", &v), 0);
        assert_int_equal(v, 524288);
        assert_int_equal(nccl_parse_size("1 K", &v), 0);
        assert_int_equal(v, 1024);
        assert_int_equal(nccl_parse_size("", &v), -EINVAL);
        assert_int_equal(nccl_parse_size("K", &v), -EINVAL);
        assert_int_equal(nccl_parse_size("-8", &v), -EINVAL);
        assert_int_equal(nccl_parse_size("8T", &v), -EINVAL);
        assert_int_equal(nccl_parse_size("8KB", &v), -EINVAL);
        assert_int_equal(nccl_parse_size("inf", &v), -EINVAL);
        assert_int_equal(nccl_parse_size("1e30", &v), -EINVAL);
        assert_int_equal(nccl_parse_size(NULL, &v), -EINVAL);
}

static void test_sweep(void **state) {
        (void)state;
        size_t s[64];
        /* -b 8 -e 8G -f 2: 8, 16, ... 8 GiB, 31 sizes */
        struct nccl_sweep sw = {.min_bytes = 8, .max_bytes = (size_t)8 << 30, .step_factor = 2};
        assert_int_equal(nccl_sweep_sizes(&sw, s, 64), 31);
        assert_int_equal(s[0], 8);
        assert_int_equal(s[1], 16);
        assert_int_equal(s[30], (size_t)8 << 30);
        /* -b 1K -e 4K -i 1K (factor 1: additive) */
        sw = (struct nccl_sweep){.min_bytes = 1024, .max_bytes = 4096, .step_bytes = 1024, .step_factor = 1};
        assert_int_equal(nccl_sweep_sizes(&sw, s, 64), 4);
        assert_int_equal(s[3], 4096);
        /* max not on the grid: the last size below it */
        sw = (struct nccl_sweep){.min_bytes = 3, .max_bytes = 100, .step_factor = 3};
        assert_int_equal(nccl_sweep_sizes(&sw, s, 64), 4); /* 3 9 27 81 */
        assert_int_equal(s[3], 81);
        /* more sizes than room: counted, not written past max */
        assert_int_equal(nccl_sweep_sizes(&sw, s, 2), 4);
        /* one size */
        sw = (struct nccl_sweep){.min_bytes = 32 << 20, .max_bytes = 32 << 20, .step_bytes = 1 << 20};
        assert_int_equal(nccl_sweep_sizes(&sw, s, 64), 1);
        /* near SIZE_MAX: stops instead of wrapping */
        sw = (struct nccl_sweep){.min_bytes = SIZE_MAX / 2 + 1, .max_bytes = SIZE_MAX, .step_factor = 2};
        assert_int_equal(nccl_sweep_sizes(&sw, s, 64), 1);
        sw = (struct nccl_sweep){.min_bytes = SIZE_MAX - 1, .max_bytes = SIZE_MAX, .step_bytes = 5};
        assert_int_equal(nccl_sweep_sizes(&sw, s, 64), 1);
        /* never ending or empty */
        sw = (struct nccl_sweep){.min_bytes = 0, .max_bytes = 64, .step_factor = 2};
        assert_int_equal(nccl_sweep_sizes(&sw, s, 64), -EINVAL);
        sw = (struct nccl_sweep){.min_bytes = 8, .max_bytes = 64, .step_bytes = 0, .step_factor = 1};
        assert_int_equal(nccl_sweep_check(&sw), -EINVAL);
        sw = (struct nccl_sweep){.min_bytes = 128, .max_bytes = 64, .step_factor = 2};
        assert_int_equal(nccl_sweep_check(&sw), -EINVAL);
}

static void test_types(void **state) {
        (void)state;
        unsigned char b[16];
        nccl_store(b, NCCL_DT_INT8, 0, 130); /* wraps */
        assert_true(nccl_load(b, NCCL_DT_INT8, 0) == -126);
        nccl_store(b, NCCL_DT_UINT8, 0, 256 + 7);
        assert_true(nccl_load(b, NCCL_DT_UINT8, 0) == 7);
        nccl_store(b, NCCL_DT_INT32, 0, -5);
        assert_true(nccl_load(b, NCCL_DT_INT32, 0) == -5);
        nccl_store(b, NCCL_DT_UINT64, 1, 18446744073709551616.0 + 4096);
        assert_true(nccl_load(b, NCCL_DT_UINT64, 1) == 4096);
        nccl_store(b, NCCL_DT_FLOAT16, 0, 1.0);
        assert_int_equal(b[0] | b[1] << 8, 0x3c00);
        nccl_store(b, NCCL_DT_FLOAT16, 0, 2049); /* halfway between 2048 and 2050: to even */
        assert_true(nccl_load(b, NCCL_DT_FLOAT16, 0) == 2048);
        nccl_store(b, NCCL_DT_FLOAT16, 0, 1e6);
        assert_true(isinf(nccl_load(b, NCCL_DT_FLOAT16, 0)));
        nccl_store(b, NCCL_DT_FLOAT16, 0, ldexp(1, -24));
        assert_true(nccl_load(b, NCCL_DT_FLOAT16, 0) == ldexp(1, -24));
        nccl_store(b, NCCL_DT_FLOAT16, 0, -3.5);
        assert_true(nccl_load(b, NCCL_DT_FLOAT16, 0) == -3.5);
        nccl_store(b, NCCL_DT_BFLOAT16, 0, 1.0);
        assert_int_equal(b[0] | b[1] << 8, 0x3f80);
        nccl_store(b, NCCL_DT_BFLOAT16, 0, 257); /* 8 bits: to even, 256 */
        assert_true(nccl_load(b, NCCL_DT_BFLOAT16, 0) == 256);
        nccl_store(b, NCCL_DT_FLOAT64, 1, 0.1);
        assert_true(nccl_load(b, NCCL_DT_FLOAT64, 1) == 0.1);
}

/* Expected values worked by hand for 4 ranks: fill(r, i) = 1 + (i + 3r) mod 7 gives element 0
 * the values 1, 4, 7, 3 on ranks 0..3 (sum 15, max 7, min 1), element 1: 2, 5, 1, 4. */
static void test_expected(void **state) {
        (void)state;
        assert_true(nccl_fill_value(NCCL_OP_SUM, 2, 0) == 7);
        assert_true(nccl_fill_value(NCCL_OP_SUM, 3, 1) == 4);
        assert_true(nccl_expected(NCCL_COLL_ALL_REDUCE, NCCL_DT_FLOAT32, NCCL_OP_SUM, 4, 2, 0, 10, 0) == 15);
        assert_true(nccl_expected(NCCL_COLL_ALL_REDUCE, NCCL_DT_INT32, NCCL_OP_MAX, 4, 1, 0, 10, 0) == 7);
        assert_true(nccl_expected(NCCL_COLL_ALL_REDUCE, NCCL_DT_INT32, NCCL_OP_MIN, 4, 1, 0, 10, 1) == 1);
        assert_true(nccl_expected(NCCL_COLL_ALL_REDUCE, NCCL_DT_INT32, NCCL_OP_AVG, 4, 1, 0, 10, 0) == 3); /* 15/4 */
        assert_true(nccl_expected(NCCL_COLL_ALL_REDUCE, NCCL_DT_FLOAT32, NCCL_OP_AVG, 4, 1, 0, 10, 0) == 3.75);
        /* prod: fill 1 + (i + r) mod 2 -> element 0: 1, 2, 1, 2 -> 4 */
        assert_true(nccl_expected(NCCL_COLL_ALL_REDUCE, NCCL_DT_BFLOAT16, NCCL_OP_PROD, 4, 0, 0, 10, 0) == 4);
        /* int8 sums wrap: 36 ranks of 7-ish values overflow 127 */
        double s = nccl_expected(NCCL_COLL_ALL_REDUCE, NCCL_DT_INT8, NCCL_OP_SUM, 36, 0, 0, 10, 0);
        assert_true(s >= -128 && s <= 127);
        assert_true(nccl_expected(NCCL_COLL_ALL_REDUCE, NCCL_DT_INT32, NCCL_OP_SUM, 36, 0, 0, 10, 0) > 127);
        /* reduce: only the root's output is defined */
        assert_true(nccl_expected(NCCL_COLL_REDUCE, NCCL_DT_FLOAT32, NCCL_OP_SUM, 4, 3, 3, 10, 1) == 12);
        assert_true(isnan(nccl_expected(NCCL_COLL_REDUCE, NCCL_DT_FLOAT32, NCCL_OP_SUM, 4, 2, 3, 10, 1)));
        /* reduce_scatter, count 2: rank 1 gets elements 2, 3 of the sum: 3+6+2+5=16 */
        assert_true(nccl_expected(NCCL_COLL_REDUCE_SCATTER, NCCL_DT_FLOAT32, NCCL_OP_SUM, 4, 1, 0, 2, 0) == 16);
        /* all_gather, count 2: element 5 is rank 2's element 1: 1 + (1 + 6) mod 7 = 1 */
        assert_true(nccl_expected(NCCL_COLL_ALL_GATHER, NCCL_DT_FLOAT32, NCCL_OP_SUM, 4, 0, 0, 2, 5) == 1);
        /* broadcast from root 3: fill(3, i) everywhere */
        assert_true(nccl_expected(NCCL_COLL_BROADCAST, NCCL_DT_UINT8, NCCL_OP_SUM, 4, 0, 3, 10, 1) == 4);
        /* alltoall, count 2: rank 1's chunk 3 element 0 is rank 3's element 1*2+0 = 1+(2+9)%7 = 5 */
        assert_true(nccl_expected(NCCL_COLL_ALLTOALL, NCCL_DT_INT64, NCCL_OP_SUM, 4, 1, 0, 2, 6) == 5);
        /* sendrecv: rank 0 receives rank 3's */
        assert_true(nccl_expected(NCCL_COLL_SENDRECV, NCCL_DT_FLOAT64, NCCL_OP_SUM, 4, 0, 0, 10, 0) == 3);
        assert_true(isnan(nccl_expected(NCCL_COLL_SENDRECV, NCCL_DT_FLOAT64, NCCL_OP_SUM, 0, 0, 0, 10, 0)));
}

static void test_verify(void **state) {
        (void)state;
        uint16_t buf[64];
        /* a bfloat16 all_reduce avg on 3 ranks computed the right way passes */
        for (size_t i = 0; i < 64; i++)
                nccl_store(buf, NCCL_DT_BFLOAT16, i,
                           nccl_expected(NCCL_COLL_ALL_REDUCE, NCCL_DT_BFLOAT16, NCCL_OP_AVG, 3, 0, 0, 64, i));
        size_t first = 0;
        assert_int_equal(nccl_verify(buf, NCCL_DT_BFLOAT16, NCCL_COLL_ALL_REDUCE, NCCL_OP_AVG, 3, 0, 0, 64, 64, &first), 0);
        assert_int_equal(first, 64);
        /* one element off by a small amount is found */
        nccl_store(buf, NCCL_DT_BFLOAT16, 17, nccl_load(buf, NCCL_DT_BFLOAT16, 17) + 0.25);
        assert_int_equal(nccl_verify(buf, NCCL_DT_BFLOAT16, NCCL_COLL_ALL_REDUCE, NCCL_OP_AVG, 3, 0, 0, 64, 64, &first), 1);
        assert_int_equal(first, 17);
        /* integers are exact */
        int32_t ib[8];
        nccl_fill(ib, NCCL_DT_INT32, NCCL_OP_SUM, 2, 0, 8);
        assert_int_equal(nccl_verify(ib, NCCL_DT_INT32, NCCL_COLL_BROADCAST, NCCL_OP_SUM, 4, 1, 2, 8, 8, &first), 0);
        ib[7] += 1;
        assert_int_equal(nccl_verify(ib, NCCL_DT_INT32, NCCL_COLL_BROADCAST, NCCL_OP_SUM, 4, 1, 2, 8, 8, &first), 1);
        assert_int_equal(first, 7);
}

/* A one-ulp error in an exact sum is caught; avg's rounding is not an error; a chunk read back
 * from the middle of a buffer is compared with its own elements. */
static void test_verify_exact_and_range(void **state) {
        (void)state;
        enum { N = 64, RANKS = 4 };
        float buf[N];
        for (size_t i = 0; i < N; i++)
                buf[i] = (float)nccl_expected(NCCL_COLL_ALL_REDUCE, NCCL_DT_FLOAT32, NCCL_OP_SUM, RANKS, 0, 0, N, i);
        size_t first;
        assert_int_equal(nccl_verify(buf, NCCL_DT_FLOAT32, NCCL_COLL_ALL_REDUCE, NCCL_OP_SUM, RANKS, 0, 0, N, N, &first),
                         0);
        assert_int_equal(first, N);
        buf[5] = nextafterf(buf[5], INFINITY);
        assert_int_equal(nccl_verify(buf, NCCL_DT_FLOAT32, NCCL_COLL_ALL_REDUCE, NCCL_OP_SUM, RANKS, 0, 0, N, N, &first),
                         1);
        assert_int_equal(first, 5);
        /* avg of 4 ranks: sums divided by 4, exact here, but one ulp either way is rounding */
        for (size_t i = 0; i < N; i++)
                buf[i] = (float)nccl_expected(NCCL_COLL_ALL_REDUCE, NCCL_DT_FLOAT32, NCCL_OP_AVG, RANKS, 0, 0, N, i);
        buf[7] = nextafterf(buf[7], 0);
        assert_int_equal(nccl_verify(buf, NCCL_DT_FLOAT32, NCCL_COLL_ALL_REDUCE, NCCL_OP_AVG, RANKS, 0, 0, N, N, &first),
                         0);
        /* elements 1000..1015 of an all_gather output of 4 x 512, held in buf[0..15] */
        for (size_t k = 0; k < 16; k++)
                buf[k] = (float)nccl_expected(NCCL_COLL_ALL_GATHER, NCCL_DT_FLOAT32, NCCL_OP_SUM, RANKS, 2, 0, 512,
                                              1000 + k);
        assert_int_equal(nccl_verify_range(buf, NCCL_DT_FLOAT32, NCCL_COLL_ALL_GATHER, NCCL_OP_SUM, RANKS, 2, 0, 512,
                                           1000, 16, &first),
                         0);
        assert_int_equal(first, 1016);
        buf[3] = -1;
        assert_int_equal(nccl_verify_range(buf, NCCL_DT_FLOAT32, NCCL_COLL_ALL_GATHER, NCCL_OP_SUM, RANKS, 2, 0, 512,
                                           1000, 16, &first),
                         1);
        assert_int_equal(first, 1003);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_names),  cmocka_unit_test(test_factors),     cmocka_unit_test(test_counts),
                cmocka_unit_test(test_bandwidth), cmocka_unit_test(test_parse_size), cmocka_unit_test(test_sweep),
                cmocka_unit_test(test_types),  cmocka_unit_test(test_expected),    cmocka_unit_test(test_verify),
                cmocka_unit_test(test_verify_exact_and_range),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

/* What the GEMM benchmark (bench/bench_gemm.c) and the GEMM burn load (burn/gemm_load.c)
 * share: the precisions and how cuBLASLt runs them, the element encodings (fp64, fp32,
 * fp16, bf16, fp8 e4m3, rounded to nearest even), the inputs, and the host reference.
 *
 * The product is D = A^T B for n x n matrices: A^T(i, k) and B(k, j) are drawn from
 * {±0.5, ±1, ±1.5, ±2} by a hash of (seed, row, column), exact in every input type, so
 * every product a b is exact and so is every FP32 or FP64 sum of n of them (multiples of
 * 0.25 below 2^22 for n <= 2^20): a correct result differs from the host's exact
 * reference only by the rounding of D to its type, whatever the order of the sum (FP8's
 * reduced-precision accumulation on Hopper excepted, hence its acc_eps). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/matmul.h"

enum gemm_elem { GEMM_ELEM_F64, GEMM_ELEM_F32, GEMM_ELEM_F16, GEMM_ELEM_BF16, GEMM_ELEM_E4M3 };

struct gemm_prec {
        const char *name;      /* "fp64" ... "fp8" */
        enum gemm_elem ab, d;  /* A and B; D */
        struct lt_precision lt;
        int min_cc;            /* cuBLASLt: major * 10 + minor */
        const char *min_cc_why;
        double out_eps;        /* unit roundoff of D's type */
        double acc_eps;        /* accumulation error per unit of sum |a b| */
        const char *types;     /* "A/B/D fp16, compute 32F" */
};

/* fp64, fp32, tf32, fp16, bf16, fp8, in the benchmark's report order. */
extern const struct gemm_prec gemm_precs[];
extern const size_t gemm_n_precs;
/* The precision named name; NULL when none is. */
const struct gemm_prec *gemm_prec_by_name(const char *name);

struct gpu_model;
/* The dense spec peak of model for precision p in TFLOPS (data/gpus.json; fp64: the Tensor
 * Core figure where there is one), and the column it came from in *ret_column; 0 when the
 * model has none. The gemm and train benchmarks judge against it. */
double gemm_prec_peak_tflops(const struct gpu_model *model, const struct gemm_prec *p, const char **ret_column);

size_t gemm_elem_size(enum gemm_elem e);
/* Element i of an array of e: stored rounded to nearest even (out of range: inf, or e4m3's
 * largest finite value), loaded exactly as a double. */
void gemm_elem_store(enum gemm_elem e, void *base, size_t i, double v);
double gemm_elem_load(enum gemm_elem e, const void *base, size_t i);

/* The inputs' seeds: A^T's and B's hashes. The benchmark uses gemm_seeds_default. */
struct gemm_seeds {
        uint32_t a, b;
};
extern const struct gemm_seeds gemm_seeds_default;
/* Seeds from a 64-bit seed (0 gives gemm_seeds_default). */
struct gemm_seeds gemm_seeds_from(uint64_t seed);

/* A^T(i, k) and B(k, j): one of ±0.5, ±1, ±1.5, ±2. */
double gemm_value_a(const struct gemm_seeds *s, uint32_t i, uint32_t k);
double gemm_value_b(const struct gemm_seeds *s, uint32_t k, uint32_t j);

/* The exact D(i, j) of k_n terms (in double: exact, see the top) and the sum of |a b|
 * into *ret_mag (the accumulation tolerance's scale). bcol, when not NULL, holds B(k, j)
 * for k < k_n (a caller checking a whole column computes it once). */
double gemm_ref_element(const struct gemm_seeds *s, unsigned k_n, uint32_t i, uint32_t j, const double *bcol,
                        double *ret_mag);

/* The tolerance of a D element of precision p whose exact value is want with sum |a b| =
 * mag: D's rounding, plus the accumulation error allowed per unit of mag. */
double gemm_ref_tolerance(const struct gemm_prec *p, double want, double mag);

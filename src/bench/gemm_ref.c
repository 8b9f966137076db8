#include "bench/gemm_ref.h"

#include "core/array.h"
#include "data/gpudb.h"

#include <math.h>
#include <string.h>

const struct gemm_prec gemm_precs[] = {
        {"fp64", GEMM_ELEM_F64, GEMM_ELEM_F64, {LT_F64, LT_F64, LT_F64, LT_COMPUTE_64F}, 0, NULL, 0x1p-53, 0x1p-50,
         "A/B/D fp64, compute 64F"},
        {"fp32", GEMM_ELEM_F32, GEMM_ELEM_F32, {LT_F32, LT_F32, LT_F32, LT_COMPUTE_32F}, 0, NULL, 0x1p-24, 0x1p-20,
         "A/B/D fp32, compute 32F"},
        {"tf32", GEMM_ELEM_F32, GEMM_ELEM_F32, {LT_F32, LT_F32, LT_F32, LT_COMPUTE_32F_FAST_TF32}, 80,
         "TF32 Tensor Cores need compute capability 8.0 (Ampere) or newer", 0x1p-24, 0x1p-20,
         "A/B/D fp32, compute 32F_FAST_TF32"},
        {"fp16", GEMM_ELEM_F16, GEMM_ELEM_F16, {LT_F16, LT_F16, LT_F32, LT_COMPUTE_32F}, 0, NULL, 0x1p-11, 0x1p-20,
         "A/B/D fp16, compute 32F"},
        {"bf16", GEMM_ELEM_BF16, GEMM_ELEM_BF16, {LT_BF16, LT_BF16, LT_F32, LT_COMPUTE_32F}, 80,
         "BF16 Tensor Cores need compute capability 8.0 (Ampere) or newer", 0x1p-8, 0x1p-20,
         "A/B/D bf16, compute 32F"},
        /* Hopper's FP8 Tensor Cores keep about 14 bits of the running sum between promotions. */
        {"fp8", GEMM_ELEM_E4M3, GEMM_ELEM_BF16, {LT_E4M3, LT_BF16, LT_F32, LT_COMPUTE_32F}, 89,
         "FP8 Tensor Cores need compute capability 8.9 (Ada, Hopper, Blackwell) or newer", 0x1p-8, 0x1p-13,
         "A/B e4m3, D bf16, compute 32F"},
};
const size_t gemm_n_precs = ARRAY_COUNT(gemm_precs);

double gemm_prec_peak_tflops(const struct gpu_model *model, const struct gemm_prec *p, const char **ret_column) {
        const struct gpu_tflops *t = &model->tflops;
        *ret_column = p->name;
        if (!strcmp(p->name, "fp64")) {
                *ret_column = t->fp64_tc > 0 ? "fp64_tc" : "fp64";
                return t->fp64_tc > 0 ? t->fp64_tc : t->fp64;
        }
        if (!strcmp(p->name, "fp32"))
                return t->fp32;
        if (!strcmp(p->name, "tf32"))
                return t->tf32;
        if (!strcmp(p->name, "fp16"))
                return t->fp16;
        if (!strcmp(p->name, "bf16"))
                return t->bf16;
        if (!strcmp(p->name, "fp8"))
                return t->fp8;
        return 0;
}

const struct gemm_prec *gemm_prec_by_name(const char *name) {
        for (size_t i = 0; name && i < gemm_n_precs; i++)
                if (!strcmp(gemm_precs[i].name, name))
                        return &gemm_precs[i];
        return NULL;
}

size_t gemm_elem_size(enum gemm_elem e) {
        switch (e) {
        case GEMM_ELEM_F64: return 8;
        case GEMM_ELEM_F32: return 4;
        case GEMM_ELEM_F16:
        case GEMM_ELEM_BF16: return 2;
        case GEMM_ELEM_E4M3: return 1;
        }
        return 0;
}

/* ---- small float formats -------------------------------------------------------------------- */

struct small_fmt {
        int mbits, bias, emax; /* emax: the largest exponent field of a finite value */
        bool ieee;             /* all-ones exponent is inf/NaN (fp16, bf16); e4m3 has no inf */
};
static const struct small_fmt fmt_f16 = {10, 15, 30, true}, fmt_bf16 = {7, 127, 254, true},
                              fmt_e4m3 = {3, 7, 15, false};

/* Round to nearest even; out of range gives inf (ieee) or the largest finite value. */
static uint32_t small_encode(const struct small_fmt *f, double v) {
        int ebits = f == &fmt_bf16 ? 8 : f == &fmt_f16 ? 5 : 4;
        uint32_t sign = v < 0 ? 1u << (ebits + f->mbits) : 0;
        double a = fabs(v);
        if (a == 0)
                return sign;
        int e;
        double m = frexp(a, &e);  /* a = m 2^e, 0.5 <= m < 1 */
        int E = e - 1 + f->bias;  /* exponent field of a normal number */
        if (E <= 0) {             /* subnormal: a = q 2^(1 - bias - mbits) */
                double q = nearbyint(ldexp(a, f->bias - 1 + f->mbits));
                return sign | (uint32_t)q; /* q = 2^mbits rounds up into the smallest normal: same bits */
        }
        double q = nearbyint(ldexp(m, f->mbits + 1)); /* 2^mbits .. 2^(mbits+1) */
        if (q == ldexp(1, f->mbits + 1)) {
                q /= 2;
                E++;
        }
        uint32_t mant = (uint32_t)q - (1u << f->mbits);
        if (E > f->emax || (!f->ieee && E == f->emax && mant == (1u << f->mbits) - 1)) {
                if (f->ieee)
                        return sign | ((uint32_t)(f->emax + 1) << f->mbits);
                return sign | ((uint32_t)f->emax << f->mbits) | ((1u << f->mbits) - 2);
        }
        return sign | ((uint32_t)E << f->mbits) | mant;
}

static double small_decode(const struct small_fmt *f, uint32_t bits) {
        int ebits = f == &fmt_bf16 ? 8 : f == &fmt_f16 ? 5 : 4;
        double sign = bits >> (ebits + f->mbits) & 1 ? -1 : 1;
        uint32_t E = bits >> f->mbits & ((1u << ebits) - 1), mant = bits & ((1u << f->mbits) - 1);
        if (f->ieee && E == (1u << ebits) - 1)
                return mant ? NAN : sign * INFINITY;
        if (!f->ieee && E == (1u << ebits) - 1 && mant == (1u << f->mbits) - 1)
                return NAN;
        if (E == 0)
                return sign * ldexp(mant, 1 - f->bias - f->mbits);
        return sign * ldexp((double)(mant | 1u << f->mbits), (int)E - f->bias - f->mbits);
}

void gemm_elem_store(enum gemm_elem e, void *base, size_t i, double v) {
        switch (e) {
        case GEMM_ELEM_F64: ((double *)base)[i] = v; break;
        case GEMM_ELEM_F32: ((float *)base)[i] = (float)v; break;
        case GEMM_ELEM_F16: ((uint16_t *)base)[i] = (uint16_t)small_encode(&fmt_f16, v); break;
        case GEMM_ELEM_BF16: ((uint16_t *)base)[i] = (uint16_t)small_encode(&fmt_bf16, v); break;
        case GEMM_ELEM_E4M3: ((uint8_t *)base)[i] = (uint8_t)small_encode(&fmt_e4m3, v); break;
        }
}

double gemm_elem_load(enum gemm_elem e, const void *base, size_t i) {
        switch (e) {
        case GEMM_ELEM_F64: return ((const double *)base)[i];
        case GEMM_ELEM_F32: return ((const float *)base)[i];
        case GEMM_ELEM_F16: return small_decode(&fmt_f16, ((const uint16_t *)base)[i]);
        case GEMM_ELEM_BF16: return small_decode(&fmt_bf16, ((const uint16_t *)base)[i]);
        case GEMM_ELEM_E4M3: return small_decode(&fmt_e4m3, ((const uint8_t *)base)[i]);
        }
        return NAN;
}

/* ---- the matrices ----------------------------------------------------------------------------- */

const struct gemm_seeds gemm_seeds_default = {0x243f6a88u, 0x85a308d3u};

struct gemm_seeds gemm_seeds_from(uint64_t seed) {
        return (struct gemm_seeds){gemm_seeds_default.a ^ (uint32_t)seed, gemm_seeds_default.b ^ (uint32_t)(seed >> 32)};
}

/* Element (row, col) of a logical matrix: one of ±0.5, ±1, ±1.5, ±2, from a hash. */
static double gemm_value(uint32_t seed, uint32_t row, uint32_t col) {
        static const double v[8] = {-2, -1.5, -1, -0.5, 0.5, 1, 1.5, 2};
        uint32_t h = (row * 0x9e3779b1u) ^ (col * 0x85ebca6bu) ^ seed;
        h ^= h >> 15;
        h *= 0xc2b2ae35u;
        return v[h >> 29];
}

double gemm_value_a(const struct gemm_seeds *s, uint32_t i, uint32_t k) { return gemm_value(s->a, i, k); }
double gemm_value_b(const struct gemm_seeds *s, uint32_t k, uint32_t j) { return gemm_value(s->b, k, j); }

double gemm_ref_element(const struct gemm_seeds *s, unsigned k_n, uint32_t i, uint32_t j, const double *bcol,
                        double *ret_mag) {
        double want = 0, mag = 0;
        for (unsigned k = 0; k < k_n; k++) {
                double prod = gemm_value_a(s, i, k) * (bcol ? bcol[k] : gemm_value_b(s, k, j));
                want += prod; /* exact: multiples of 0.25 far below 2^53 */
                mag += fabs(prod);
        }
        if (ret_mag)
                *ret_mag = mag;
        return want;
}

double gemm_ref_tolerance(const struct gemm_prec *p, double want, double mag) {
        return p->out_eps * fabs(want) + p->acc_eps * mag + 1e-300;
}

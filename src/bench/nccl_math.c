#include "bench/nccl_math.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- counts and bandwidths ------------------------------------------------------------------ */

int nccl_counts(enum nccl_coll c, size_t bytes, size_t elt_size, int nranks, struct nccl_counts *ret) {
        if (nranks < 1 || !(elt_size == 1 || elt_size == 2 || elt_size == 4 || elt_size == 8) || c < 0 ||
            c >= NCCL_COLL_COUNT)
                return -EINVAL;
        size_t n = (size_t)nranks, count = bytes / elt_size;
        /* (count / nranks) & ~(16 / eltSize - 1): whole 16-byte units per rank */
        size_t base = (count / n) & ~(16 / elt_size - 1);
        struct nccl_counts r = {0};
        switch (c) {
        case NCCL_COLL_ALL_GATHER:
                r.count = base, r.send_count = base, r.recv_count = base * n;
                r.send_inplace_offset = base;
                break;
        case NCCL_COLL_REDUCE_SCATTER:
                r.count = base, r.send_count = base * n, r.recv_count = base;
                r.recv_inplace_offset = base;
                break;
        case NCCL_COLL_ALLTOALL:
                r.count = base, r.send_count = base * n, r.recv_count = base * n;
                break;
        default:
                r.count = r.send_count = r.recv_count = count;
                break;
        }
        r.bytes = (r.send_count > r.recv_count ? r.send_count : r.recv_count) * elt_size;
        *ret = r;
        return 0;
}

double nccl_busbw_factor(enum nccl_coll c, int nranks) {
        if (nranks < 1)
                return NAN;
        double n = nranks;
        switch (c) {
        case NCCL_COLL_ALL_REDUCE:
                return 2.0 * (n - 1) / n;
        case NCCL_COLL_ALL_GATHER:
        case NCCL_COLL_REDUCE_SCATTER:
        case NCCL_COLL_ALLTOALL:
                return (n - 1) / n;
        case NCCL_COLL_BROADCAST:
        case NCCL_COLL_REDUCE:
        case NCCL_COLL_SENDRECV:
                return 1.0;
        default:
                return NAN;
        }
}

double nccl_alg_bytes(enum nccl_coll c, size_t count, size_t elt_size, int nranks) {
        double b = (double)count * (double)elt_size;
        if (c == NCCL_COLL_ALL_GATHER || c == NCCL_COLL_REDUCE_SCATTER || c == NCCL_COLL_ALLTOALL)
                b *= nranks;
        return b;
}

int nccl_bandwidth(enum nccl_coll c, size_t count, size_t elt_size, int nranks, double seconds,
                   double *ret_algbw_gbps, double *ret_busbw_gbps) {
        double factor = nccl_busbw_factor(c, nranks);
        if (isnan(factor) || !(seconds > 0))
                return -EINVAL;
        double alg = nccl_alg_bytes(c, count, elt_size, nranks) / 1.0e9 / seconds;
        *ret_algbw_gbps = alg;
        *ret_busbw_gbps = alg * factor;
        return 0;
}

/* ---- the sweep ------------------------------------------------------------------------------ */

int nccl_parse_size(const char *s, size_t *ret) {
        if (!s)
                return -EINVAL;
        while (*s == ' ' || *s == '\t')
                s++;
        if (!(*s >= '0' && *s <= '9') && *s != '.')
                return -EINVAL; /* no sign, no "inf"/"nan", no hex float */
        char *end = NULL;
        errno = 0;
        double v = strtod(s, &end);
        if (end == s || errno || !isfinite(v) || v < 0)
                return -EINVAL;
        while (*end == ' ' || *end == '\t')
                end++; /* parsesize's "%lf %1s" skips blanks before the suffix */
        double unit = 1;
        switch (*end) {
        case 'G':
        case 'g':
                unit = 1024.0 * 1024 * 1024;
                end++;
                break;
        case 'M':
        case 'm':
                unit = 1024.0 * 1024;
                end++;
                break;
        case 'K':
        case 'k':
                unit = 1024.0;
                end++;
                break;
        case 0:
                break;
        default:
                return -EINVAL;
        }
        if (*end)
                return -EINVAL;
        v *= unit;
        if (v >= 18446744073709551616.0) /* 2^64 */
                return -EINVAL;
        *ret = (size_t)v; /* nccl-tests truncates too */
        return 0;
}

int nccl_sweep_check(const struct nccl_sweep *sw) {
        if (sw->min_bytes > sw->max_bytes)
                return -EINVAL;
        if (sw->step_factor > 1 ? sw->min_bytes == 0 : sw->step_bytes == 0)
                return -EINVAL;
        return 0;
}

long nccl_sweep_sizes(const struct nccl_sweep *sw, size_t *ret, size_t max) {
        int r = nccl_sweep_check(sw);
        if (r < 0)
                return r;
        long n = 0;
        for (size_t size = sw->min_bytes; size <= sw->max_bytes;) {
                if ((size_t)n < max)
                        ret[n] = size;
                n++;
                size_t next;
                if (sw->step_factor > 1) {
                        if (size > SIZE_MAX / sw->step_factor)
                                break;
                        next = size * sw->step_factor;
                } else {
                        if (size > SIZE_MAX - sw->step_bytes)
                                break;
                        next = size + sw->step_bytes;
                }
                size = next;
        }
        return n;
}

/* ---- values --------------------------------------------------------------------------------- */

double nccl_fill_value(enum nccl_redop op, int rank, size_t i) {
        if (op == NCCL_OP_PROD)
                return (double)(1 + (i + (size_t)rank) % 2);
        return (double)(1 + (i + 3 * (size_t)rank) % 7);
}

static float half_to_float(uint16_t h) {
        int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
        float v;
        if (exp == 0)
                v = ldexpf((float)man, -24);
        else if (exp == 31)
                v = man ? NAN : INFINITY;
        else
                v = ldexpf((float)(man | 0x400), exp - 25);
        return (h & 0x8000) ? -v : v;
}

/* Round to nearest even, through float (the values here are small integers and their
 * averages, where double -> float -> half rounds as double -> half would). */
static uint16_t float_to_half(float f) {
        uint16_t sign = signbit(f) ? 0x8000 : 0;
        f = fabsf(f);
        if (isnan(f))
                return sign | 0x7e00;
        if (f >= 65520.0f)
                return sign | 0x7c00;
        if (f < ldexpf(1, -14)) /* subnormal: units of 2^-24 */
                return sign | (uint16_t)lrintf(ldexpf(f, 24));
        int e;
        float m = frexpf(f, &e); /* f = m 2^e, m in [0.5, 1) */
        long man = lrintf(ldexpf(m, 11)); /* 11 significant bits */
        if (man == 2048) {
                man = 1024;
                e++;
        }
        if (e + 14 >= 31)
                return sign | 0x7c00;
        return sign | (uint16_t)(((e + 14) << 10) | (man & 0x3ff));
}

static float bf16_to_float(uint16_t b) {
        uint32_t x = (uint32_t)b << 16;
        float f;
        memcpy(&f, &x, sizeof(f));
        return f;
}

static uint16_t float_to_bf16(float f) {
        uint32_t x;
        memcpy(&x, &f, sizeof(x));
        if (isnan(f))
                return (uint16_t)((x >> 16) | 0x40);
        x += 0x7fffu + ((x >> 16) & 1);
        return (uint16_t)(x >> 16);
}

double nccl_load(const void *buf, enum nccl_dtype t, size_t i) {
        switch (t) {
        case NCCL_DT_INT8:
                return ((const int8_t *)buf)[i];
        case NCCL_DT_UINT8:
                return ((const uint8_t *)buf)[i];
        case NCCL_DT_INT32:
                return ((const int32_t *)buf)[i];
        case NCCL_DT_UINT32:
                return ((const uint32_t *)buf)[i];
        case NCCL_DT_INT64:
                return (double)((const int64_t *)buf)[i];
        case NCCL_DT_UINT64:
                return (double)((const uint64_t *)buf)[i];
        case NCCL_DT_FLOAT16:
                return half_to_float(((const uint16_t *)buf)[i]);
        case NCCL_DT_FLOAT32:
                return ((const float *)buf)[i];
        case NCCL_DT_FLOAT64:
                return ((const double *)buf)[i];
        case NCCL_DT_BFLOAT16:
                return bf16_to_float(((const uint16_t *)buf)[i]);
        default:
                return NAN;
        }
}

/* v (an integer in range of int64 or uint64 after wrapping) reduced modulo 2^64. */
static uint64_t wrap64(double v) {
        if (v >= 0)
                return v >= 18446744073709551616.0 ? (uint64_t)fmod(v, 18446744073709551616.0) : (uint64_t)v;
        return (uint64_t)(int64_t)v;
}

void nccl_store(void *buf, enum nccl_dtype t, size_t i, double v) {
        switch (t) {
        case NCCL_DT_INT8:
        case NCCL_DT_UINT8:
                ((uint8_t *)buf)[i] = (uint8_t)wrap64(v);
                break;
        case NCCL_DT_INT32:
        case NCCL_DT_UINT32:
                ((uint32_t *)buf)[i] = (uint32_t)wrap64(v);
                break;
        case NCCL_DT_INT64:
        case NCCL_DT_UINT64:
                ((uint64_t *)buf)[i] = wrap64(v);
                break;
        case NCCL_DT_FLOAT16:
                ((uint16_t *)buf)[i] = float_to_half((float)v);
                break;
        case NCCL_DT_FLOAT32:
                ((float *)buf)[i] = (float)v;
                break;
        case NCCL_DT_FLOAT64:
                ((double *)buf)[i] = v;
                break;
        case NCCL_DT_BFLOAT16:
                ((uint16_t *)buf)[i] = float_to_bf16((float)v);
                break;
        default:
                break;
        }
}

void nccl_fill(void *buf, enum nccl_dtype t, enum nccl_redop op, int rank, size_t first, size_t count) {
        for (size_t i = 0; i < count; i++)
                nccl_store(buf, t, i, nccl_fill_value(op, rank, first + i));
}

static bool is_float(enum nccl_dtype t) {
        return t == NCCL_DT_FLOAT16 || t == NCCL_DT_FLOAT32 || t == NCCL_DT_FLOAT64 || t == NCCL_DT_BFLOAT16;
}

/* v stored into t and read back: the value the type holds. */
static double in_type(enum nccl_dtype t, double v) {
        unsigned char cell[8];
        nccl_store(cell, t, 0, v);
        return nccl_load(cell, t, 0);
}

/* The reduction over every rank of fill(r, i), in t's arithmetic. The fill's values are small
 * integers: sums and products are exact in double while they fit 2^53, and wrapping them to
 * the type afterwards equals wrapping at each step. */
static double reduce_all(enum nccl_dtype t, enum nccl_redop op, int nranks, size_t i) {
        double acc = nccl_fill_value(op, 0, i);
        for (int r = 1; r < nranks; r++) {
                double v = nccl_fill_value(op, r, i);
                switch (op) {
                case NCCL_OP_PROD:
                        acc *= v;
                        break;
                case NCCL_OP_MAX:
                        acc = v > acc ? v : acc;
                        break;
                case NCCL_OP_MIN:
                        acc = v < acc ? v : acc;
                        break;
                default:
                        acc += v;
                }
        }
        acc = in_type(t, acc);
        if (op == NCCL_OP_AVG)
                acc = is_float(t) ? in_type(t, acc / nranks) : in_type(t, trunc(acc / nranks));
        return acc;
}

double nccl_expected(enum nccl_coll c, enum nccl_dtype t, enum nccl_redop op, int nranks, int rank, int root,
                     size_t count, size_t i) {
        if (nranks < 1 || count == 0)
                return NAN;
        size_t n = (size_t)nranks;
        switch (c) {
        case NCCL_COLL_ALL_REDUCE:
                return reduce_all(t, op, nranks, i);
        case NCCL_COLL_REDUCE:
                return rank == root ? reduce_all(t, op, nranks, i) : NAN;
        case NCCL_COLL_REDUCE_SCATTER:
                return reduce_all(t, op, nranks, (size_t)rank * count + i);
        case NCCL_COLL_ALL_GATHER:
                return in_type(t, nccl_fill_value(op, (int)(i / count), i % count));
        case NCCL_COLL_BROADCAST:
                return in_type(t, nccl_fill_value(op, root, i));
        case NCCL_COLL_ALLTOALL:
                return in_type(t, nccl_fill_value(op, (int)(i / count), (size_t)rank * count + i % count));
        case NCCL_COLL_SENDRECV:
                return in_type(t, nccl_fill_value(op, (int)(((size_t)rank + n - 1) % n), i));
        default:
                return NAN;
        }
}

static double ulp(enum nccl_dtype t, double v) {
        int e;
        (void)frexp(v, &e);
        int bits = t == NCCL_DT_FLOAT16 ? 11 : t == NCCL_DT_BFLOAT16 ? 8 : t == NCCL_DT_FLOAT32 ? 24 : 53;
        return ldexp(1, e - bits);
}

size_t nccl_verify_range(const void *buf, enum nccl_dtype t, enum nccl_coll c, enum nccl_redop op, int nranks,
                         int rank, int root, size_t count, size_t first, size_t n, size_t *ret_first) {
        size_t bad = 0;
        *ret_first = first + n;
        /* the fill's sums, products, maxima and minima are small integers every type holds
         * exactly, whatever order a ring adds them in: only avg's division may round */
        bool tolerant = is_float(t) && op == NCCL_OP_AVG;
        for (size_t k = 0; k < n; k++) {
                double want = nccl_expected(c, t, op, nranks, rank, root, count, first + k);
                double got = nccl_load(buf, t, k);
                bool ok = tolerant ? fabs(got - want) <= 2 * ulp(t, want) : got == want;
                if (!ok) {
                        if (!bad)
                                *ret_first = first + k;
                        bad++;
                }
        }
        return bad;
}

size_t nccl_verify(const void *buf, enum nccl_dtype t, enum nccl_coll c, enum nccl_redop op, int nranks, int rank,
                   int root, size_t count, size_t n, size_t *ret_first) {
        return nccl_verify_range(buf, t, c, op, nranks, rank, root, count, 0, n, ret_first);
}

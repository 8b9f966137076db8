/* The device kernels of src/bench/kernels.def in CUDA C, one translation unit so nvcc
 * builds one fatbin (meson.build: SASS per architecture + PTX). Names are extern "C" so
 * cuModuleGetFunction finds them by the plain names benchmarks launch.
 *
 * Every loop is grid-stride: i = global id; i < n; i += global size, so any launch size
 * is correct. Indices are 64-bit (arrays beyond 4 Gi elements on 80+ GB parts).
 *
 * Every kernel takes a hidden last argument that src/bindings/cuda_device.c appends: gsize, the
 * logical global size the benchmark asked for. CUDA launches whole blocks, so up to a
 * block's worth of extra threads run; they return at once, and the per-work-item outputs
 * (read_f32's partial[], the fma_* out[]) have exactly gsize entries, as in OpenCL.
 * tests/fakes/fake_cuda.c holds the C reference of each kernel; keep them in step. */
#include <cuda_fp16.h>

#define GID() ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x)
#define GSIZE() gsize
#define GUARD()                 \
        if (GID() >= gsize)     \
                return

/* The STREAM-like kernels move float4s: one 16-byte access per thread and iteration. With
 * 4-byte accesses an H100 (132 SMs x 2048 threads) keeps too few bytes in flight to cover
 * HBM latency: copy ran at 70% of the spec bandwidth and read at 64% (docs/perf.md).
 * cuMemAlloc aligns to 256 bytes, so the vector body always applies to whole buffers;
 * the scalar tail [n / 4 * 4, n) is grid-strided like the body. */
#define VEC_BODY(n4) for (unsigned long long i = GID(); i < (n4); i += GSIZE())
#define VEC_TAIL(n) for (unsigned long long i = (n) / 4 * 4 + GID(); i < (n); i += GSIZE())

extern "C" __global__ void copy_f32(float *__restrict__ out, const float *__restrict__ in, unsigned long long n, unsigned long long gsize)
{
        GUARD();
        const float4 *in4 = reinterpret_cast<const float4 *>(in);
        float4 *out4 = reinterpret_cast<float4 *>(out);
        VEC_BODY(n / 4) out4[i] = in4[i];
        VEC_TAIL(n) out[i] = in[i];
}

extern "C" __global__ void scale_f32(float *__restrict__ out, const float *__restrict__ in, float s,
                                     unsigned long long n, unsigned long long gsize)
{
        GUARD();
        const float4 *in4 = reinterpret_cast<const float4 *>(in);
        float4 *out4 = reinterpret_cast<float4 *>(out);
        VEC_BODY(n / 4) {
                float4 v = in4[i];
                out4[i] = make_float4(s * v.x, s * v.y, s * v.z, s * v.w);
        }
        VEC_TAIL(n) out[i] = s * in[i];
}

extern "C" __global__ void add_f32(float *__restrict__ out, const float *__restrict__ a, const float *__restrict__ b,
                                   unsigned long long n, unsigned long long gsize)
{
        GUARD();
        const float4 *a4 = reinterpret_cast<const float4 *>(a), *b4 = reinterpret_cast<const float4 *>(b);
        float4 *out4 = reinterpret_cast<float4 *>(out);
        VEC_BODY(n / 4) {
                float4 x = a4[i], y = b4[i];
                out4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
        }
        VEC_TAIL(n) out[i] = a[i] + b[i];
}

extern "C" __global__ void triad_f32(float *__restrict__ out, const float *__restrict__ a,
                                     const float *__restrict__ b, float s, unsigned long long n, unsigned long long gsize)
{
        GUARD();
        const float4 *a4 = reinterpret_cast<const float4 *>(a), *b4 = reinterpret_cast<const float4 *>(b);
        float4 *out4 = reinterpret_cast<float4 *>(out);
        VEC_BODY(n / 4) {
                float4 x = a4[i], y = b4[i];
                out4[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
        }
        VEC_TAIL(n) out[i] = a[i] + s * b[i];
}

/* Read-only bandwidth: each work item sums what it visits and writes one float, so the
 * loads cannot be dropped and the writes are negligible (global size floats). Two
 * accumulators, so that two loads are in flight before their adds. */
extern "C" __global__ void read_f32(float *__restrict__ partial, const float *__restrict__ in, unsigned long long n, unsigned long long gsize)
{
        GUARD();
        const float4 *in4 = reinterpret_cast<const float4 *>(in);
        unsigned long long n4 = n / 4, i = GID();
        float4 acc0 = make_float4(0.f, 0.f, 0.f, 0.f), acc1 = acc0;
        for (; i + GSIZE() < n4; i += 2 * GSIZE()) {
                float4 x = in4[i], y = in4[i + GSIZE()];
                acc0.x += x.x; acc0.y += x.y; acc0.z += x.z; acc0.w += x.w;
                acc1.x += y.x; acc1.y += y.y; acc1.z += y.z; acc1.w += y.w;
        }
        for (; i < n4; i += GSIZE()) {
                float4 x = in4[i];
                acc0.x += x.x; acc0.y += x.y; acc0.z += x.z; acc0.w += x.w;
        }
        float sum = (acc0.x + acc1.x) + (acc0.y + acc1.y) + (acc0.z + acc1.z) + (acc0.w + acc1.w);
        VEC_TAIL(n) sum += in[i];
        partial[GID()] = sum;
}

extern "C" __global__ void write_f32(float *__restrict__ out, float value, unsigned long long n, unsigned long long gsize)
{
        GUARD();
        float4 *out4 = reinterpret_cast<float4 *>(out);
        const float4 v = make_float4(value, value, value, value);
        VEC_BODY(n / 4) out4[i] = v;
        VEC_TAIL(n) out[i] = value;
}

/* A pattern the host recomputes: the low 32 bits of i * 2654435761 (Knuth's multiplicative
 * hash), xor seed. */
extern "C" __global__ void fill_u32(unsigned int *__restrict__ out, unsigned int seed, unsigned long long n, unsigned long long gsize)
{
        GUARD();
        for (unsigned long long i = GID(); i < n; i += GSIZE())
                out[i] = seed ^ (unsigned int)(i * 2654435761ull);
}

/* Peak FMA throughput. Eight independent chains hide the FMA latency (4 cycles on recent
 * SMs, so at least 4 chains per thread are needed to fill the pipe). Chain k starts at
 * seed + k/8 and steps x = fma(x, A, B), A = 0.999, B = 0.001 (f16: 0.875 and 0.125, in
 * half), as kernels/gpuvet.cl and bench_compute.c's host reference: bounded (it tends to
 * 1), not foldable by the compiler (no fast-math), recomputed exactly on the host.
 * FLOPs per work item: 8 chains x iters x 2. */
extern "C" __global__ void fma_f32(float *__restrict__ out, unsigned int iters, float seed, unsigned long long gsize)
{
        GUARD();
        float x0 = seed, x1 = seed + 0.125f, x2 = seed + 0.25f, x3 = seed + 0.375f;
        float x4 = seed + 0.5f, x5 = seed + 0.625f, x6 = seed + 0.75f, x7 = seed + 0.875f;
        const float m = 0.999f, a = 0.001f;
        for (unsigned int it = 0; it < iters; it++) {
                x0 = fmaf(x0, m, a); x1 = fmaf(x1, m, a); x2 = fmaf(x2, m, a); x3 = fmaf(x3, m, a);
                x4 = fmaf(x4, m, a); x5 = fmaf(x5, m, a); x6 = fmaf(x6, m, a); x7 = fmaf(x7, m, a);
        }
        out[GID()] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
}

extern "C" __global__ void fma_f64(double *__restrict__ out, unsigned int iters, double seed, unsigned long long gsize)
{
        GUARD();
        double x0 = seed, x1 = seed + 0.125, x2 = seed + 0.25, x3 = seed + 0.375;
        double x4 = seed + 0.5, x5 = seed + 0.625, x6 = seed + 0.75, x7 = seed + 0.875;
        const double m = 0.999, a = 0.001;
        for (unsigned int it = 0; it < iters; it++) {
                x0 = fma(x0, m, a); x1 = fma(x1, m, a); x2 = fma(x2, m, a); x3 = fma(x3, m, a);
                x4 = fma(x4, m, a); x5 = fma(x5, m, a); x6 = fma(x6, m, a); x7 = fma(x7, m, a);
        }
        out[GID()] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
}

/* Half precision: four half2 registers carry the eight chains (one HFMA2 = two FMAs);
 * the result is summed in f32 (bench_compute.c's reference sums in half; its 2% tolerance
 * covers the difference). */
extern "C" __global__ void fma_f16(float *__restrict__ out, unsigned int iters, float seed, unsigned long long gsize)
{
        GUARD();
        __half2 x0 = __floats2half2_rn(seed, seed + 0.125f);
        __half2 x1 = __floats2half2_rn(seed + 0.25f, seed + 0.375f);
        __half2 x2 = __floats2half2_rn(seed + 0.5f, seed + 0.625f);
        __half2 x3 = __floats2half2_rn(seed + 0.75f, seed + 0.875f);
        const __half2 m = __float2half2_rn(0.875f), a = __float2half2_rn(0.125f);
        for (unsigned int it = 0; it < iters; it++) {
                x0 = __hfma2(x0, m, a); x1 = __hfma2(x1, m, a);
                x2 = __hfma2(x2, m, a); x3 = __hfma2(x3, m, a);
        }
        float2 f0 = __half22float2(x0), f1 = __half22float2(x1), f2 = __half22float2(x2), f3 = __half22float2(x3);
        out[GID()] = ((f0.x + f0.y) + (f1.x + f1.y)) + ((f2.x + f2.y) + (f3.x + f3.y));
}

/* Launch latency: nothing to do. */
extern "C" __global__ void empty(unsigned long long gsize)
{
        (void)gsize;
}

/* ==== memtest (src/burn/memtest.c; the contract and the patterns: src/bench/kernels.def) ======
 * 64-bit words, moved two at a time as ulonglong2 (16-byte accesses, as the float4 of the
 * bandwidth kernels above, so enough bytes are in flight to cover HBM latency); cuMemAlloc
 * aligns every chunk to 256 bytes, so the pairs are aligned, and an odd last word is the
 * tail. Checking happens here on the device: the host reads back only the error counter
 * and the first log_cap mismatches. */
typedef unsigned long long mt_u64;

__device__ __forceinline__ mt_u64 mt_walk(mt_u64 w, mt_u64 param)
{
        unsigned r = (unsigned)(w & 63);
        return r ? (param << r) | (param >> (64 - r)) : param;
}

/* splitmix64 of (seed, w): a bijection of w for one seed, so verify recomputes it from the
 * index and no copy of the data is kept anywhere. */
__device__ __forceinline__ mt_u64 mt_random(mt_u64 w, mt_u64 seed)
{
        mt_u64 z = seed + (w + 1) * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
}

__device__ __forceinline__ mt_u64 mt_address(mt_u64 w, mt_u64 param) { return w ^ param; }
__device__ __forceinline__ mt_u64 mt_const(mt_u64 w, mt_u64 param) { return (void)w, param; }

/* A mismatch: claim a log slot while there are free ones. The plain read first keeps the
 * atomic off the hot path once the log is full (memory where every word fails), and bounds
 * errors[1] to log_cap plus the threads racing past the read, far from wrapping. */
__device__ __forceinline__ void mt_record(unsigned *errors, mt_u64 *log, unsigned cap, mt_u64 w, mt_u64 want,
                                          mt_u64 got)
{
        if (*(volatile unsigned *)&errors[1] >= cap)
                return;
        unsigned slot = atomicAdd(&errors[1], 1u);
        if (slot < cap) {
                log[3 * (mt_u64)slot] = w;
                log[3 * (mt_u64)slot + 1] = want;
                log[3 * (mt_u64)slot + 2] = got;
        }
}

/* A thread's mismatches, added once: saturating at 0xffffffff (a thread that wraps the sum
 * sets it back to the maximum; any later add starts from there and wraps again). */
__device__ __forceinline__ void mt_count(unsigned *errors, mt_u64 bad)
{
        if (!bad)
                return;
        unsigned add = bad > 0xffffffffull ? 0xffffffffu : (unsigned)bad;
        unsigned old = atomicAdd(&errors[0], add);
        if (old + add < old)
                atomicExch(&errors[0], 0xffffffffu);
}

#define MT_CHECK(w, got, VALUE)                                                         \
        do {                                                                            \
                mt_u64 want_ = VALUE((w), param), got_ = (got);                         \
                if (got_ != want_) {                                                    \
                        bad++;                                                          \
                        mt_record(errors, log, log_cap, (w), want_, got_);              \
                }                                                                       \
        } while (0)

#define MEMTEST_KERNELS(NAME, VALUE)                                                                            \
extern "C" __global__ void memtest_##NAME##_write(mt_u64 *__restrict__ data, mt_u64 n, mt_u64 base,            \
                                                  mt_u64 param, mt_u64 gsize)                                   \
{                                                                                                               \
        GUARD();                                                                                                \
        ulonglong2 *d2 = reinterpret_cast<ulonglong2 *>(data);                                                  \
        for (mt_u64 j = GID(); j < n / 2; j += GSIZE())                                                         \
                d2[j] = make_ulonglong2(VALUE(base + 2 * j, param), VALUE(base + 2 * j + 1, param));            \
        if ((n & 1) && GID() == 0)                                                                              \
                data[n - 1] = VALUE(base + n - 1, param);                                                       \
}                                                                                                               \
extern "C" __global__ void memtest_##NAME##_verify(const mt_u64 *__restrict__ data, mt_u64 n, mt_u64 base,     \
                                                   mt_u64 param, unsigned *__restrict__ errors,                \
                                                   mt_u64 *__restrict__ log, unsigned log_cap, mt_u64 gsize)    \
{                                                                                                               \
        GUARD();                                                                                                \
        const ulonglong2 *d2 = reinterpret_cast<const ulonglong2 *>(data);                                      \
        mt_u64 bad = 0;                                                                                         \
        for (mt_u64 j = GID(); j < n / 2; j += GSIZE()) {                                                       \
                ulonglong2 v = d2[j];                                                                           \
                MT_CHECK(base + 2 * j, v.x, VALUE);                                                             \
                MT_CHECK(base + 2 * j + 1, v.y, VALUE);                                                         \
        }                                                                                                       \
        if ((n & 1) && GID() == 0)                                                                              \
                MT_CHECK(base + n - 1, data[n - 1], VALUE);                                                     \
        mt_count(errors, bad);                                                                                  \
}

MEMTEST_KERNELS(walk, mt_walk)
MEMTEST_KERNELS(random, mt_random)
MEMTEST_KERNELS(address, mt_address)
MEMTEST_KERNELS(const, mt_const)

/* Moving inversions' step: each pair is read, checked against param and written ~param
 * before the thread moves on. Ascending: thread t takes pair t, then t + gsize ... so the
 * grid sweeps upwards a wave of gsize pairs at a time; descending mirrors the indices
 * (thread t takes the pair n2 - 1 - t first), so the waves sweep downwards and, within a
 * wave, the blocks the GPU starts first take the highest addresses. docs/burn.md says
 * what that order does and does not guarantee. */
#define MT_INVERT_PAIR(j)                                                                       \
        do {                                                                                    \
                ulonglong2 v = d2[(j)];                                                         \
                MT_CHECK(base + 2 * (j), v.x, mt_const);                                        \
                MT_CHECK(base + 2 * (j) + 1, v.y, mt_const);                                    \
                d2[(j)] = make_ulonglong2(~param, ~param);                                      \
        } while (0)
#define MT_INVERT_TAIL()                                                                        \
        do {                                                                                    \
                if ((n & 1) && GID() == 0) {                                                    \
                        MT_CHECK(base + n - 1, data[n - 1], mt_const);                          \
                        data[n - 1] = ~param;                                                   \
                }                                                                               \
        } while (0)

extern "C" __global__ void memtest_invert_up(mt_u64 *__restrict__ data, mt_u64 n, mt_u64 base, mt_u64 param,
                                             unsigned *__restrict__ errors, mt_u64 *__restrict__ log,
                                             unsigned log_cap, mt_u64 gsize)
{
        GUARD();
        ulonglong2 *d2 = reinterpret_cast<ulonglong2 *>(data);
        mt_u64 bad = 0, n2 = n / 2;
        for (mt_u64 j = GID(); j < n2; j += GSIZE())
                MT_INVERT_PAIR(j);
        MT_INVERT_TAIL();
        mt_count(errors, bad);
}

extern "C" __global__ void memtest_invert_down(mt_u64 *__restrict__ data, mt_u64 n, mt_u64 base, mt_u64 param,
                                               unsigned *__restrict__ errors, mt_u64 *__restrict__ log,
                                               unsigned log_cap, mt_u64 gsize)
{
        GUARD();
        ulonglong2 *d2 = reinterpret_cast<ulonglong2 *>(data);
        mt_u64 bad = 0, n2 = n / 2;
        MT_INVERT_TAIL(); /* the highest word first */
        for (mt_u64 k = GID(); k < n2; k += GSIZE())
                MT_INVERT_PAIR(n2 - 1 - k);
        mt_count(errors, bad);
}
/* ==== end of memtest ============================================================================ */

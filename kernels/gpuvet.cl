/* gpuvet's device kernels in OpenCL C 1.2: every kernel of src/bench/kernels.def, with the
 * same names, arguments and meaning as kernels/bench_kernels.cu. Embedded into the binary
 * (tools/embed.py) and built once per context by src/bindings/opencl_device.c.
 *
 * Build options set by opencl_device.c per device (its "kernel shapes" comment says how each
 * is chosen):
 *   VEC          vector width of the memory kernels' base names (copy_f32 ...): 4 on GPUs;
 *                on CPU devices 2 x the native float width (at most 16), the shape used until
 *                the calibration has chosen one (MEM_SHAPES)
 *   BLOCKED      1: each work item takes one contiguous block of vectors (a CPU core then
 *                streams through memory and its prefetchers follow); 0: grid-stride, so
 *                neighbouring work items touch neighbouring addresses (GPU coalescing).
 *                Either way any launch size is correct, and the scalar tail is grid-strided.
 *   NT_STORES    1: the store kernels write whole vectors with non-temporal stores (CPU
 *                devices: the destination lines are not read for ownership first, so a
 *                copy moves 2 bytes of traffic per byte copied, not 3). Only where the
 *                compiler has __builtin_nontemporal_store (clang: PoCL); ignored otherwise.
 *   MEM_SHAPES   1: also build the memory kernels at every width: <kernel>_v<W> (W = 4, 8,
 *                16) for copy, scale, add, triad and write, and read_f32_v<W>s<S> for S = 1,
 *                4, 8 streams (below). The backend calibrates which runs fastest on the
 *                device, per kernel, and launches it for the base name. 0 on GPUs.
 *   FMA_SHAPES   1: also build the vector variants of the FMA kernels, fma_f32_x<W> and
 *                fma_f64_x<W> (W = 2, 4, 8, 16): W logical work items per OpenCL work item,
 *                each of the 8 chains a W-wide vector, so 8 independent vector FMA chains fill
 *                a CPU's SIMD pipes (PoCL does not vectorise across work items when the kernel
 *                body holds a loop). The backend calibrates which W runs fastest on the
 *                device and launches it for fma_f32 / fma_f64. 0 on GPUs.
 * The FMA kernels take a hidden last argument appended by opencl_device.c: the logical
 * work-item count (the global size the benchmark asked for).
 *
 * read_f32 with S streams (CPU devices): the vectors are cut into S equal streams and work
 * item g reads the same slice of each, one vector of every stream per step. PoCL runs a
 * work group's items one after another on one core, so that core walks S sequential streams
 * side by side, as clpeak's read kernels do (16 fetches a work item, local size apart): one
 * stream keeps too few cache misses in flight to reach the memory bandwidth (on the AVX2
 * EPYC, 4 or 8 streams read 12-60% faster than one, docs/perf.md). Store kernels keep one
 * stream: with 4 or more streams of non-temporal stores a copy ran 3-8x slower (the
 * write-combining buffers run out).
 *
 * The FMA chains (the host verifies against exactly this, see bench_compute.c):
 *   chain k = 0..7 starts at seed + 0.125 k and steps x = fma(x, A, B), iters times;
 *   out[gid] = sum of the 8 chains. f32/f64: A = 0.999, B = 0.001; f16: A = 0.875,
 *   B = 0.125 in half, result widened to float. In the x<W> variants lane j of a chain is
 *   logical work item W w + j, with the same start, steps and sum.
 *
 * GPUVET_WRONG_<kernel>: test builds only (opencl_device.c with GPUVET_TEST_HOOKS) compile that
 * kernel (and its _v<W> / _x<W> variants) intentionally wrong, so the benchmarks'
 * verification must fail. */

#ifndef VEC
#define VEC 4
#endif
#ifndef BLOCKED
#define BLOCKED 0
#endif
#ifndef NT_STORES
#define NT_STORES 0
#endif
#ifndef MEM_SHAPES
#define MEM_SHAPES 0
#endif
#ifndef FMA_SHAPES
#define FMA_SHAPES 0
#endif
#if NT_STORES && defined(__has_builtin)
#if __has_builtin(__builtin_nontemporal_store)
#define USE_NT 1
#endif
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FLOATV(W) CAT(float, W)
#define LOADV(W, i, p) CAT(vload, W)((i), (p))

/* The vector-index range [beg, end) of this work item over nv vectors. */
#if BLOCKED
#define RANGE(nv, beg, end, step)                                                  \
        ulong per_ = ((nv) + get_global_size(0) - 1) / get_global_size(0);         \
        ulong beg = min((ulong)get_global_id(0) * per_, (ulong)(nv));              \
        ulong end = min(beg + per_, (ulong)(nv));                                  \
        const ulong step = 1
#else
#define RANGE(nv, beg, end, step)                                                  \
        ulong beg = get_global_id(0);                                              \
        ulong end = (nv);                                                          \
        const ulong step = get_global_size(0)
#endif
/* Store W-wide vector v at vector index i of p: non-temporal where NT_STORES asks for it
 * (the buffers are aligned to at least 16 floats: opencl_device.c checks the device's base
 * address alignment before it sets NT_STORES). */
#ifdef USE_NT
#define STOREV(W, v, i, p) __builtin_nontemporal_store((v), (__global FLOATV(W) *)(p) + (i))
#else
#define STOREV(W, v, i, p) CAT(vstore, W)((v), (i), (p))
#endif
/* The scalar tail [from, n), grid-strided. */
#define FOR_TAIL(i, from, n)                                                       \
        for (ulong i = (from) + get_global_id(0); i < (n); i += get_global_size(0))

#ifdef GPUVET_WRONG_copy_f32
#define COPY_WRONG 1.0f
#else
#define COPY_WRONG 0.0f
#endif
#ifdef GPUVET_WRONG_triad_f32
#define TRIAD_WRONG 1.0f
#else
#define TRIAD_WRONG 0.0f
#endif
#ifdef GPUVET_WRONG_read_f32
#define READ_WRONG 1.0f
#else
#define READ_WRONG 0.0f
#endif

/* copy, scale, add, triad and write at vector width W, named <kernel>SFX. */
#define STORE_KERNELS(SFX, W)                                                                    \
__kernel void CAT(copy_f32, SFX)(__global float *out, __global const float *in, ulong n)         \
{                                                                                                \
        RANGE(n / W, beg, end, step);                                                            \
        for (ulong i = beg; i < end; i += step)                                                  \
                STOREV(W, LOADV(W, i, in) + COPY_WRONG, i, out);                                 \
        FOR_TAIL(i, n / W * W, n)                                                                \
                out[i] = in[i] + COPY_WRONG;                                                     \
}                                                                                                \
__kernel void CAT(scale_f32, SFX)(__global float *out, __global const float *in, float s, ulong n) \
{                                                                                                \
        RANGE(n / W, beg, end, step);                                                            \
        for (ulong i = beg; i < end; i += step)                                                  \
                STOREV(W, s * LOADV(W, i, in), i, out);                                          \
        FOR_TAIL(i, n / W * W, n)                                                                \
                out[i] = s * in[i];                                                              \
}                                                                                                \
__kernel void CAT(add_f32, SFX)(__global float *out, __global const float *a, __global const float *b, \
                                ulong n)                                                         \
{                                                                                                \
        RANGE(n / W, beg, end, step);                                                            \
        for (ulong i = beg; i < end; i += step)                                                  \
                STOREV(W, LOADV(W, i, a) + LOADV(W, i, b), i, out);                              \
        FOR_TAIL(i, n / W * W, n)                                                                \
                out[i] = a[i] + b[i];                                                            \
}                                                                                                \
__kernel void CAT(triad_f32, SFX)(__global float *out, __global const float *a,                  \
                                  __global const float *b, float s, ulong n)                     \
{                                                                                                \
        s += TRIAD_WRONG;                                                                        \
        RANGE(n / W, beg, end, step);                                                            \
        for (ulong i = beg; i < end; i += step)                                                  \
                STOREV(W, LOADV(W, i, a) + s * LOADV(W, i, b), i, out);                          \
        FOR_TAIL(i, n / W * W, n)                                                                \
                out[i] = a[i] + s * b[i];                                                        \
}                                                                                                \
__kernel void CAT(write_f32, SFX)(__global float *out, float value, ulong n)                     \
{                                                                                                \
        FLOATV(W) v = value;                                                                     \
        RANGE(n / W, beg, end, step);                                                            \
        for (ulong i = beg; i < end; i += step)                                                  \
                STOREV(W, v, i, out);                                                            \
        FOR_TAIL(i, n / W * W, n)                                                                \
                out[i] = value;                                                                  \
}

/* The sum of a vector's lanes (macros: a float16 argument has no ABI on AVX2). */
#define HSUM4(a) (((a).x + (a).y) + ((a).z + (a).w))
#define HSUM8(a) HSUM4((a).lo + (a).hi)
#define HSUM16(a) HSUM8((a).lo + (a).hi)

/* read_f32 at vector width W over S streams (the top of the file), named NAME: the nv = n /
 * W / S * S vectors are S streams of len vectors; this work item's range of each stream
 * (RANGE over len) is read one vector of each stream per step, an accumulator per stream
 * (with S = 1 two, alternating: the adds of one would form a chain longer than a load). */
#define READ_KERNEL(NAME, W, S)                                                                  \
__kernel void NAME(__global float *partial, __global const float *in, ulong n)                  \
{                                                                                                \
        const ulong len = n / W / S;                                                             \
        RANGE(len, beg, end, step);                                                              \
        FLOATV(W) acc[S > 1 ? S : 2];                                                            \
        for (int s = 0; s < (S > 1 ? S : 2); s++)                                                \
                acc[s] = 0;                                                                      \
        ulong i = beg;                                                                           \
        if (S == 1)                                                                              \
                for (; i + step < end; i += 2 * step) {                                          \
                        acc[0] += LOADV(W, i, in);                                               \
                        acc[1] += LOADV(W, i + step, in);                                        \
                }                                                                                \
        for (; i < end; i += step)                                                               \
                for (int s = 0; s < S; s++)                                                      \
                        acc[s] += LOADV(W, i + s * len, in);                                     \
        float sum = 0;                                                                           \
        FOR_TAIL(j, len * S * W, n)                                                              \
                sum += in[j];                                                                    \
        for (int s = 1; s < (S > 1 ? S : 2); s++)                                                \
                acc[0] += acc[s];                                                                \
        partial[get_global_id(0)] = sum + CAT(HSUM, W)(acc[0]) + READ_WRONG;                     \
}

/* The base names, at the build's VEC (GPUs: the only shape). */
STORE_KERNELS(, VEC)
READ_KERNEL(read_f32, VEC, 1)

#if MEM_SHAPES
STORE_KERNELS(_v4, 4)
STORE_KERNELS(_v8, 8)
STORE_KERNELS(_v16, 16)
READ_KERNEL(read_f32_v4s1, 4, 1)
READ_KERNEL(read_f32_v4s4, 4, 4)
READ_KERNEL(read_f32_v4s8, 4, 8)
READ_KERNEL(read_f32_v8s1, 8, 1)
READ_KERNEL(read_f32_v8s4, 8, 4)
READ_KERNEL(read_f32_v8s8, 8, 8)
READ_KERNEL(read_f32_v16s1, 16, 1)
READ_KERNEL(read_f32_v16s4, 16, 4)
READ_KERNEL(read_f32_v16s8, 16, 8)
#endif

__kernel void fill_u32(__global uint *out, uint seed, ulong n)
{
#ifdef GPUVET_WRONG_fill_u32
        seed += 1;
#endif
        for (ulong i = get_global_id(0); i < n; i += get_global_size(0))
                out[i] = seed ^ (uint)(i * 2654435761UL);
}

/* -- FMA throughput --------------------------------------------------------------------- */

#ifdef GPUVET_WRONG_fma_f32
#define FMA_F32_CHAINS 7
#else
#define FMA_F32_CHAINS 8
#endif

#define STEP8(x, A, B)                                                             \
        x##0 = fma(x##0, A, B); x##1 = fma(x##1, A, B);                           \
        x##2 = fma(x##2, A, B); x##3 = fma(x##3, A, B);                           \
        x##4 = fma(x##4, A, B); x##5 = fma(x##5, A, B);                           \
        x##6 = fma(x##6, A, B); x##7 = fma(x##7, A, B)
#define SUM8(x) (((x##0 + x##1) + (x##2 + x##3)) + ((x##4 + x##5) + (x##6 + (FMA_F32_CHAINS == 8 ? x##7 : 0))))

__kernel void fma_f32(__global float *out, uint iters, float seed, ulong n)
{
        for (ulong g = get_global_id(0); g < n; g += get_global_size(0)) {
                float x0 = seed, x1 = seed + 0.125f, x2 = seed + 0.25f, x3 = seed + 0.375f;
                float x4 = seed + 0.5f, x5 = seed + 0.625f, x6 = seed + 0.75f, x7 = seed + 0.875f;
                for (uint it = 0; it < iters; it++) {
                        STEP8(x, 0.999f, 0.001f);
                }
                out[g] = SUM8(x);
        }
}

#define LANES_2 (0, 1)
#define LANES_4 (0, 1, 2, 3)
#define LANES_8 (0, 1, 2, 3, 4, 5, 6, 7)
#define LANES_16 (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)

/* The x<W> variant of an FMA kernel: T the scalar type, W its vector width, S the literal
 * suffix of T's constants (f or nothing), SUM the chains' sum. z is 0 for every iters the
 * benchmarks use (< 2^31), but the compiler cannot know that: it keeps the lanes of each
 * chain apart, so no splat is scalarised. */
#define FMA_SHAPE(name, T, W, S, SUM)                                                            \
__kernel void name(__global T *out, uint iters, T seed, ulong n)                                 \
{                                                                                                \
        T z = (T)(iters >> 31);                                                                  \
        CAT(T, W) lane = z * (CAT(T, W))LANES_##W;                                               \
        const CAT(T, W) A = CAT(0.999, S), B = CAT(0.001, S);                                    \
        for (ulong w = get_global_id(0); w * W < n; w += get_global_size(0)) {                   \
                CAT(T, W) x0 = seed + lane, x1 = (seed + CAT(0.125, S)) + lane;                  \
                CAT(T, W) x2 = (seed + CAT(0.25, S)) + lane, x3 = (seed + CAT(0.375, S)) + lane; \
                CAT(T, W) x4 = (seed + CAT(0.5, S)) + lane, x5 = (seed + CAT(0.625, S)) + lane;  \
                CAT(T, W) x6 = (seed + CAT(0.75, S)) + lane, x7 = (seed + CAT(0.875, S)) + lane; \
                for (uint it = 0; it < iters; it++) {                                            \
                        STEP8(x, A, B);                                                          \
                }                                                                                \
                CAT(T, W) r = SUM(x);                                                            \
                if ((w + 1) * W <= n) {                                                          \
                        CAT(vstore, W)(r, w, out);                                               \
                } else {                                                                         \
                        T tmp[W];                                                                \
                        CAT(vstore, W)(r, 0, tmp);                                               \
                        for (ulong m = 0; w * W + m < n; m++)                                    \
                                out[w * W + m] = tmp[m];                                         \
                }                                                                                \
        }                                                                                        \
}

#if FMA_SHAPES
FMA_SHAPE(fma_f32_x4, float, 4, f, SUM8)
FMA_SHAPE(fma_f32_x8, float, 8, f, SUM8)
FMA_SHAPE(fma_f32_x16, float, 16, f, SUM8)
#endif

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define SUM8_F64(x) (((x##0 + x##1) + (x##2 + x##3)) + ((x##4 + x##5) + (x##6 + x##7)))
__kernel void fma_f64(__global double *out, uint iters, double seed, ulong n)
{
        for (ulong g = get_global_id(0); g < n; g += get_global_size(0)) {
                double x0 = seed, x1 = seed + 0.125, x2 = seed + 0.25, x3 = seed + 0.375;
                double x4 = seed + 0.5, x5 = seed + 0.625, x6 = seed + 0.75, x7 = seed + 0.875;
                for (uint it = 0; it < iters; it++) {
                        STEP8(x, 0.999, 0.001);
                }
                out[g] = SUM8_F64(x);
        }
}
#if FMA_SHAPES
FMA_SHAPE(fma_f64_x2, double, 2, , SUM8_F64)
FMA_SHAPE(fma_f64_x4, double, 4, , SUM8_F64)
FMA_SHAPE(fma_f64_x8, double, 8, , SUM8_F64)
FMA_SHAPE(fma_f64_x16, double, 16, , SUM8_F64)
#endif
#endif

#ifdef cl_khr_fp16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
/* Scalar half chains; devices with fp16 are mostly GPUs, where the hardware pairs them
 * (no x<W> variants: no device here to measure them on, see docs/perf.md). */
__kernel void fma_f16(__global float *out, uint iters, float seed, ulong n)
{
        const half A = (half)0.875f, B = (half)0.125f;
        for (ulong g = get_global_id(0); g < n; g += get_global_size(0)) {
                half x0 = (half)seed, x1 = (half)(seed + 0.125f), x2 = (half)(seed + 0.25f);
                half x3 = (half)(seed + 0.375f), x4 = (half)(seed + 0.5f), x5 = (half)(seed + 0.625f);
                half x6 = (half)(seed + 0.75f), x7 = (half)(seed + 0.875f);
                for (uint it = 0; it < iters; it++) {
                        STEP8(x, A, B);
                }
                out[g] = (float)(((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7)));
        }
}
#endif

__kernel void empty(void)
{
}

/* ==== memtest (src/burn/memtest.c; the contract and the patterns: src/bench/kernels.def) ======
 * 64-bit words (ulong, which every OpenCL C 1.2 device has); the counter and the log slot
 * index are 32-bit atomics (atomic_add, atomic_inc, atomic_xchg: core since OpenCL 1.1;
 * 64-bit atomics are an optional extension). Word order follows the build's BLOCKED shape
 * (RANGE above): a contiguous block per work item on CPU devices, grid-stride on GPUs.
 *
 * GPUVET_MEM_FAULT_WORD / _MASK / _COUNT: test builds only (opencl_device.c with
 * GPUVET_TEST_HOOKS, GPUVET_TEST_MEM_FAULT): the verify and invert kernels read words
 * [WORD, WORD + COUNT) of the region with MASK's bits flipped, a flipped bit the tests
 * must find at that place. */
#ifdef GPUVET_MEM_FAULT_WORD
#ifndef GPUVET_MEM_FAULT_COUNT
#define GPUVET_MEM_FAULT_COUNT 1
#endif
#define MT_LOAD(p, i, w) ((p)[i] ^ ((ulong)(w) - (ulong)(GPUVET_MEM_FAULT_WORD) < (ulong)(GPUVET_MEM_FAULT_COUNT) \
                                    ? (ulong)(GPUVET_MEM_FAULT_MASK) : 0UL))
#else
#define MT_LOAD(p, i, w) ((p)[i])
#endif

ulong mt_walk(ulong w, ulong param) { return rotate(param, w & 63UL); }

/* splitmix64 of (seed, w): a bijection of w for one seed, so verify recomputes it from the
 * index and no copy of the data is kept anywhere. */
ulong mt_random(ulong w, ulong seed)
{
        ulong z = seed + (w + 1) * 0x9E3779B97F4A7C15UL;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
        return z ^ (z >> 31);
}

ulong mt_address(ulong w, ulong param) { return w ^ param; }
ulong mt_const(ulong w, ulong param) { return param; }

/* A mismatch: claim a log slot while there are free ones. The plain read first keeps the
 * atomic off the hot path once the log is full (memory where every word fails), and bounds
 * errors[1] to log_cap plus the work items racing past the read, far from wrapping. */
void mt_record(__global uint *errors, __global ulong *log, uint cap, ulong w, ulong want, ulong got)
{
        if (((volatile __global uint *)errors)[1] >= cap)
                return;
        uint slot = atomic_inc(&errors[1]);
        if (slot < cap) {
                log[3 * (ulong)slot] = w;
                log[3 * (ulong)slot + 1] = want;
                log[3 * (ulong)slot + 2] = got;
        }
}

/* A work item's mismatches, added once: saturating at 0xffffffff (a work item that wraps
 * the sum sets it back to the maximum; any later add starts from there and wraps again). */
void mt_count(__global uint *errors, ulong bad)
{
        if (!bad)
                return;
        uint add = bad > 0xffffffffUL ? 0xffffffffU : (uint)bad;
        uint old = atomic_add(&errors[0], add);
        if (old + add < old)
                atomic_xchg(&errors[0], 0xffffffffU);
}

#define MT_CHECK(w, got, VALUE)                                                         \
        do {                                                                            \
                ulong want_ = VALUE((w), param), got_ = (got);                          \
                if (got_ != want_) {                                                    \
                        bad++;                                                          \
                        mt_record(errors, log, log_cap, (w), want_, got_);              \
                }                                                                       \
        } while (0)

#define MEMTEST_KERNELS(NAME, VALUE)                                                                    \
__kernel void memtest_##NAME##_write(__global ulong *data, ulong n, ulong base, ulong param)            \
{                                                                                                       \
        RANGE(n, beg, end, step);                                                                       \
        for (ulong i = beg; i < end; i += step)                                                         \
                data[i] = VALUE(base + i, param);                                                       \
}                                                                                                       \
__kernel void memtest_##NAME##_verify(__global const ulong *data, ulong n, ulong base, ulong param,     \
                                      __global uint *errors, __global ulong *log, uint log_cap)         \
{                                                                                                       \
        RANGE(n, beg, end, step);                                                                       \
        ulong bad = 0;                                                                                  \
        for (ulong i = beg; i < end; i += step)                                                         \
                MT_CHECK(base + i, MT_LOAD(data, i, base + i), VALUE);                                  \
        mt_count(errors, bad);                                                                          \
}

MEMTEST_KERNELS(walk, mt_walk)
MEMTEST_KERNELS(random, mt_random)
MEMTEST_KERNELS(address, mt_address)
MEMTEST_KERNELS(const, mt_const)

/* Moving inversions' step: each word is read, checked against param and written ~param
 * before the work item moves on. Ascending: the indices RANGE gives; descending mirrors
 * them (i = n - 1 - k), so with grid-stride the waves sweep downwards, and with blocks the
 * first work item takes the top block, from its top. docs/burn.md says what that order
 * does and does not guarantee. */
#define MT_INVERT(NAME, INDEX)                                                                          \
__kernel void NAME(__global ulong *data, ulong n, ulong base, ulong param, __global uint *errors,        \
                   __global ulong *log, uint log_cap)                                                   \
{                                                                                                       \
        RANGE(n, beg, end, step);                                                                       \
        ulong bad = 0;                                                                                  \
        for (ulong k = beg; k < end; k += step) {                                                       \
                ulong i = INDEX;                                                                        \
                MT_CHECK(base + i, MT_LOAD(data, i, base + i), mt_const);                               \
                data[i] = ~param;                                                                       \
        }                                                                                               \
        mt_count(errors, bad);                                                                          \
}

MT_INVERT(memtest_invert_up, k)
MT_INVERT(memtest_invert_down, n - 1 - k)
/* ==== end of memtest ============================================================================ */
/* ==== GEMM (src/burn/gemm_load.c: the burn's GEMM load) ============================== */
/*
 * D = A^T B for n x n matrices, n a multiple of 16; every array column-major: at holds
 * A^T (at[i + k n] = A^T(i, k)), b holds B (b[k + j n]), d holds D (d[i + j n]).
 *
 * One work item computes a tile of GEMM_MR rows x GEMM_NR columns of D (any global size is
 * correct: the loop over tiles is grid-stride). Tiles are numbered in bands of GEMM_IB row
 * tiles: within a band, row tile fastest, then column tile, so consecutive work items
 * share B's columns and the band's GEMM_IB panels of A^T stay in the core's L2 (on the
 * 2-core EPYC, docs/perf.md: 4 doubled fp64's rate over numbering row tiles fastest across
 * all of D, and beat 8 and 16). Each tile is a
 * sum of outer products over k: a GEMM_MR-wide vector of A^T's column k times B(k, j)
 * broadcast, one accumulator vector per column of the tile, so the NR accumulators are NR
 * independent FMA chains. 16 x 6 floats (fp32) and 8 x 6 doubles (fp64) are 12 AVX2
 * registers of accumulators, one or two for A^T and one for the broadcast: the classic
 * CPU micro-kernel shape that keeps both FMA pipes busy without spilling. PoCL does not
 * vectorise across work items when the body holds a loop (see the FMA kernels above), so
 * the vectors are written out. The last tile column past n (n not a multiple of 6) reads
 * column n - 1 again and stores nothing past n. Each element's sum runs k = 0 .. n - 1 in
 * order, one FMA per step: the same bits at every run on the same device.
 *
 * GPUVET_CORRUPT_ROW / GPUVET_CORRUPT_COL (test builds only: opencl_device.c under
 * GPUVET_TEST_HOOKS with GPUVET_TEST_CORRUPT_GEMM=<device>:<row>:<col>, on that device
 * alone): the kernels add 1 to that one element of D, a silent data corruption the
 * verification must find and place.
 */
#ifndef GEMM_MR_F32
#define GEMM_MR_F32 16
#endif
#ifndef GEMM_MR_F64
#define GEMM_MR_F64 8
#endif
#define GEMM_NR 6
#ifndef GEMM_IB
#define GEMM_IB 4
#endif

#ifdef GPUVET_CORRUPT_ROW
#define GEMM_CORRUPT(T, d, n, i0, j0, MR)                                                           \
        if ((uint)GPUVET_CORRUPT_ROW >= (i0) && (uint)GPUVET_CORRUPT_ROW < (i0) + (MR) &&            \
            (uint)GPUVET_CORRUPT_COL >= (j0) && (uint)GPUVET_CORRUPT_COL < (j0) + GEMM_NR &&          \
            (uint)GPUVET_CORRUPT_COL < (n) && (uint)GPUVET_CORRUPT_ROW < (n))                         \
                d[GPUVET_CORRUPT_ROW + (ulong)GPUVET_CORRUPT_COL * (n)] += (T)1
#else
#define GEMM_CORRUPT(T, d, n, i0, j0, MR)
#endif

#define GEMM_KERNEL(NAME, T, MR)                                                                  \
__kernel void NAME(__global T *d, __global const T *at, __global const T *b, uint n)             \
{                                                                                                 \
        const uint tiles_i = n / MR, tiles_j = (n + GEMM_NR - 1) / GEMM_NR;                       \
        const uint bands = (tiles_i + GEMM_IB - 1) / GEMM_IB;                                     \
        const ulong tiles = (ulong)bands * GEMM_IB * tiles_j;                                     \
        for (ulong t = get_global_id(0); t < tiles; t += get_global_size(0)) {                    \
                const ulong band = t / ((ulong)GEMM_IB * tiles_j), r = t % ((ulong)GEMM_IB * tiles_j); \
                const uint ti = (uint)(band * GEMM_IB + r % GEMM_IB);                             \
                if (ti >= tiles_i)                                                                \
                        continue;                                                                 \
                const uint i0 = ti * MR, j0 = (uint)(r / GEMM_IB) * GEMM_NR;                      \
                __global const T *b0 = b + (ulong)min(j0, n - 1) * n;                             \
                __global const T *b1 = b + (ulong)min(j0 + 1, n - 1) * n;                         \
                __global const T *b2 = b + (ulong)min(j0 + 2, n - 1) * n;                         \
                __global const T *b3 = b + (ulong)min(j0 + 3, n - 1) * n;                         \
                __global const T *b4 = b + (ulong)min(j0 + 4, n - 1) * n;                         \
                __global const T *b5 = b + (ulong)min(j0 + 5, n - 1) * n;                         \
                __global const T *ap = at + i0;                                                   \
                CAT(T, MR) c0 = 0, c1 = 0, c2 = 0, c3 = 0, c4 = 0, c5 = 0;                        \
                for (uint k = 0; k < n; k++) {                                                    \
                        const CAT(T, MR) av = CAT(vload, MR)(0, ap + (ulong)k * n);              \
                        c0 = fma(av, (CAT(T, MR))b0[k], c0);                                      \
                        c1 = fma(av, (CAT(T, MR))b1[k], c1);                                      \
                        c2 = fma(av, (CAT(T, MR))b2[k], c2);                                      \
                        c3 = fma(av, (CAT(T, MR))b3[k], c3);                                      \
                        c4 = fma(av, (CAT(T, MR))b4[k], c4);                                      \
                        c5 = fma(av, (CAT(T, MR))b5[k], c5);                                      \
                }                                                                                 \
                __global T *dp = d + i0 + (ulong)j0 * n;                                          \
                CAT(vstore, MR)(c0, 0, dp);                                                       \
                if (j0 + 1 < n) CAT(vstore, MR)(c1, 0, dp + (ulong)n);                            \
                if (j0 + 2 < n) CAT(vstore, MR)(c2, 0, dp + 2 * (ulong)n);                        \
                if (j0 + 3 < n) CAT(vstore, MR)(c3, 0, dp + 3 * (ulong)n);                        \
                if (j0 + 4 < n) CAT(vstore, MR)(c4, 0, dp + 4 * (ulong)n);                        \
                if (j0 + 5 < n) CAT(vstore, MR)(c5, 0, dp + 5 * (ulong)n);                        \
                GEMM_CORRUPT(T, d, n, i0, j0, MR);                                                \
        }                                                                                         \
}

GEMM_KERNEL(gemm_f32, float, GEMM_MR_F32)
#ifdef cl_khr_fp64
GEMM_KERNEL(gemm_f64, double, GEMM_MR_F64)
#endif

/*
 * gemm_mnk_f32: D (m x n) = A^T B with A^T m x k and B k x n (bench train's products on
 * OpenCL), m a multiple of GEMM_MR_F32, any n and k: at[i + k m] = A^T(i, k), b[kk + j k] =
 * B(kk, j), d[i + j m] = D(i, j). The same micro-kernel and tile order as gemm_f32, with the
 * three sizes apart (GEMM_CORRUPT's bounds check uses m for rows and n for columns).
 */
#ifdef GPUVET_CORRUPT_ROW
#define GEMM_MNK_CORRUPT(d, m, n, i0, j0)                                                          \
        if ((uint)GPUVET_CORRUPT_ROW >= (i0) && (uint)GPUVET_CORRUPT_ROW < (i0) + GEMM_MR_F32 &&     \
            (uint)GPUVET_CORRUPT_COL >= (j0) && (uint)GPUVET_CORRUPT_COL < (j0) + GEMM_NR &&          \
            (uint)GPUVET_CORRUPT_COL < (n) && (uint)GPUVET_CORRUPT_ROW < (m))                         \
                d[GPUVET_CORRUPT_ROW + (ulong)GPUVET_CORRUPT_COL * (m)] += 1.0f
#else
#define GEMM_MNK_CORRUPT(d, m, n, i0, j0)
#endif

__kernel void gemm_mnk_f32(__global float *d, __global const float *at, __global const float *b, uint m, uint n,
                           uint k)
{
        const uint tiles_i = m / GEMM_MR_F32, tiles_j = (n + GEMM_NR - 1) / GEMM_NR;
        const uint bands = (tiles_i + GEMM_IB - 1) / GEMM_IB;
        const ulong tiles = (ulong)bands * GEMM_IB * tiles_j;
        for (ulong t = get_global_id(0); t < tiles; t += get_global_size(0)) {
                const ulong band = t / ((ulong)GEMM_IB * tiles_j), r = t % ((ulong)GEMM_IB * tiles_j);
                const uint ti = (uint)(band * GEMM_IB + r % GEMM_IB);
                if (ti >= tiles_i)
                        continue;
                const uint i0 = ti * GEMM_MR_F32, j0 = (uint)(r / GEMM_IB) * GEMM_NR;
                __global const float *b0 = b + (ulong)min(j0, n - 1) * k;
                __global const float *b1 = b + (ulong)min(j0 + 1, n - 1) * k;
                __global const float *b2 = b + (ulong)min(j0 + 2, n - 1) * k;
                __global const float *b3 = b + (ulong)min(j0 + 3, n - 1) * k;
                __global const float *b4 = b + (ulong)min(j0 + 4, n - 1) * k;
                __global const float *b5 = b + (ulong)min(j0 + 5, n - 1) * k;
                __global const float *ap = at + i0;
                CAT(float, GEMM_MR_F32) c0 = 0, c1 = 0, c2 = 0, c3 = 0, c4 = 0, c5 = 0;
                for (uint kk = 0; kk < k; kk++) {
                        const CAT(float, GEMM_MR_F32) av = CAT(vload, GEMM_MR_F32)(0, ap + (ulong)kk * m);
                        c0 = fma(av, (CAT(float, GEMM_MR_F32))b0[kk], c0);
                        c1 = fma(av, (CAT(float, GEMM_MR_F32))b1[kk], c1);
                        c2 = fma(av, (CAT(float, GEMM_MR_F32))b2[kk], c2);
                        c3 = fma(av, (CAT(float, GEMM_MR_F32))b3[kk], c3);
                        c4 = fma(av, (CAT(float, GEMM_MR_F32))b4[kk], c4);
                        c5 = fma(av, (CAT(float, GEMM_MR_F32))b5[kk], c5);
                }
                __global float *dp = d + i0 + (ulong)j0 * m;
                CAT(vstore, GEMM_MR_F32)(c0, 0, dp);
                if (j0 + 1 < n) CAT(vstore, GEMM_MR_F32)(c1, 0, dp + (ulong)m);
                if (j0 + 2 < n) CAT(vstore, GEMM_MR_F32)(c2, 0, dp + 2 * (ulong)m);
                if (j0 + 3 < n) CAT(vstore, GEMM_MR_F32)(c3, 0, dp + 3 * (ulong)m);
                if (j0 + 4 < n) CAT(vstore, GEMM_MR_F32)(c4, 0, dp + 4 * (ulong)m);
                if (j0 + 5 < n) CAT(vstore, GEMM_MR_F32)(c5, 0, dp + 5 * (ulong)m);
                GEMM_MNK_CORRUPT(d, m, n, i0, j0);
        }
}
/* ==== end of GEMM ==================================================================== */

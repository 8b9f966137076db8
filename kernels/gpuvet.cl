/* gpuvet's device kernels in OpenCL C 1.2: every kernel of src/bench/kernels.def, with the
 * same names, arguments and meaning as kernels/bench_kernels.cu. Embedded into the binary
 * (tools/embed.py) and built once per context by src/vendor/opencl_device.c.
 *
 * Build options set by opencl.c per device type:
 *   VEC          vector width of the memory kernels (16 on CPU devices, 4 on GPUs)
 *   BLOCKED      1: each work item takes one contiguous block of vectors (a CPU core then
 *                streams through memory and its prefetchers follow); 0: grid-stride, so
 *                neighbouring work items touch neighbouring addresses (GPU coalescing).
 *                Either way any launch size is correct, and the scalar tail
 *                [n / VEC * VEC, n) is grid-strided.
 *   COARSEN_F32  logical work items per OpenCL work item in fma_f32/fma_f16 (16 on CPUs:
 *   COARSEN_F64  the 8 chains become 8 independent float16 (double8) chains, which is what
 *                fills a CPU's FMA pipes, since PoCL does not vectorise across work items
 *                when the kernel body holds a loop); 1 on GPUs.
 * The FMA kernels take a hidden last argument appended by opencl.c: the logical work-item
 * count (the global size the benchmark asked for).
 *
 * The FMA chains (the host verifies against exactly this, see bench_compute.c):
 *   chain k = 0..7 starts at seed + 0.125 k and steps x = fma(x, A, B), iters times;
 *   out[gid] = sum of the 8 chains. f32/f64: A = 0.999, B = 0.001; f16: A = 0.875,
 *   B = 0.125 in half, result widened to float.
 *
 * GPUVET_WRONG_<kernel>: test builds only (opencl.c with GPUVET_TEST_HOOKS) compile that
 * kernel intentionally wrong, so the benchmarks' verification must fail. */

#ifndef VEC
#define VEC 4
#endif
#ifndef BLOCKED
#define BLOCKED 0
#endif
#ifndef COARSEN_F32
#define COARSEN_F32 1
#endif
#ifndef COARSEN_F64
#define COARSEN_F64 1
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define floatV CAT(float, VEC)
#define VLOAD CAT(vload, VEC)
#define VSTORE CAT(vstore, VEC)

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
#define FOR_TAIL(i, n)                                                             \
        for (ulong i = (n) / VEC * VEC + get_global_id(0); i < (n); i += get_global_size(0))

#ifdef GPUVET_WRONG_copy_f32
#define COPY_WRONG 1.0f
#else
#define COPY_WRONG 0.0f
#endif

__kernel void copy_f32(__global float *out, __global const float *in, ulong n)
{
        RANGE(n / VEC, beg, end, step);
        for (ulong i = beg; i < end; i += step)
                VSTORE(VLOAD(i, in) + COPY_WRONG, i, out);
        FOR_TAIL(i, n)
                out[i] = in[i] + COPY_WRONG;
}

__kernel void scale_f32(__global float *out, __global const float *in, float s, ulong n)
{
        RANGE(n / VEC, beg, end, step);
        for (ulong i = beg; i < end; i += step)
                VSTORE(s * VLOAD(i, in), i, out);
        FOR_TAIL(i, n)
                out[i] = s * in[i];
}

__kernel void add_f32(__global float *out, __global const float *a, __global const float *b, ulong n)
{
        RANGE(n / VEC, beg, end, step);
        for (ulong i = beg; i < end; i += step)
                VSTORE(VLOAD(i, a) + VLOAD(i, b), i, out);
        FOR_TAIL(i, n)
                out[i] = a[i] + b[i];
}

__kernel void triad_f32(__global float *out, __global const float *a, __global const float *b, float s, ulong n)
{
#ifdef GPUVET_WRONG_triad_f32
        s += 1.0f;
#endif
        RANGE(n / VEC, beg, end, step);
        for (ulong i = beg; i < end; i += step)
                VSTORE(VLOAD(i, a) + s * VLOAD(i, b), i, out);
        FOR_TAIL(i, n)
                out[i] = a[i] + s * b[i];
}

__kernel void read_f32(__global float *partial, __global const float *in, ulong n)
{
        RANGE(n / VEC, beg, end, step);
        /* two accumulators: the adds of one would form a chain longer than a load */
        floatV acc0 = 0, acc1 = 0;
        ulong i = beg;
        for (; i + step < end; i += 2 * step) {
                acc0 += VLOAD(i, in);
                acc1 += VLOAD(i + step, in);
        }
        for (; i < end; i += step)
                acc0 += VLOAD(i, in);
        float sum = 0;
        FOR_TAIL(j, n)
                sum += in[j];
        floatV acc = acc0 + acc1;
#if VEC == 16
        float8 h8 = acc.lo + acc.hi;
        float4 h4 = h8.lo + h8.hi;
#elif VEC == 8
        float4 h4 = acc.lo + acc.hi;
#else
        float4 h4 = acc;
#endif
        sum += (h4.x + h4.y) + (h4.z + h4.w);
#ifdef GPUVET_WRONG_read_f32
        sum += 1.0f;
#endif
        partial[get_global_id(0)] = sum;
}

__kernel void write_f32(__global float *out, float value, ulong n)
{
        floatV v = value;
        RANGE(n / VEC, beg, end, step);
        for (ulong i = beg; i < end; i += step)
                VSTORE(v, i, out);
        FOR_TAIL(i, n)
                out[i] = value;
}

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

#if COARSEN_F32 == 1
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
#else
#define floatC CAT(float, COARSEN_F32)
#define VSTOREC CAT(vstore, COARSEN_F32)
__kernel void fma_f32(__global float *out, uint iters, float seed, ulong n)
{
        /* z is 0 for every iters the benchmarks use (< 2^31), but the compiler cannot know
         * that: it keeps the lanes of each chain apart, so no splat is scalarised */
        float z = (float)(iters >> 31);
        floatC lane = z * (floatC)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        const floatC A = 0.999f, B = 0.001f;
        for (ulong w = get_global_id(0); w * COARSEN_F32 < n; w += get_global_size(0)) {
                floatC x0 = seed + lane, x1 = (seed + 0.125f) + lane, x2 = (seed + 0.25f) + lane;
                floatC x3 = (seed + 0.375f) + lane, x4 = (seed + 0.5f) + lane, x5 = (seed + 0.625f) + lane;
                floatC x6 = (seed + 0.75f) + lane, x7 = (seed + 0.875f) + lane;
                for (uint it = 0; it < iters; it++) {
                        STEP8(x, A, B);
                }
                floatC r = SUM8(x);
                if ((w + 1) * COARSEN_F32 <= n) {
                        VSTOREC(r, w, out);
                } else {
                        float tmp[COARSEN_F32];
                        VSTOREC(r, 0, tmp);
                        for (ulong m = 0; w * COARSEN_F32 + m < n; m++)
                                out[w * COARSEN_F32 + m] = tmp[m];
                }
        }
}
#endif

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#if COARSEN_F64 == 1
__kernel void fma_f64(__global double *out, uint iters, double seed, ulong n)
{
        for (ulong g = get_global_id(0); g < n; g += get_global_size(0)) {
                double x0 = seed, x1 = seed + 0.125, x2 = seed + 0.25, x3 = seed + 0.375;
                double x4 = seed + 0.5, x5 = seed + 0.625, x6 = seed + 0.75, x7 = seed + 0.875;
                for (uint it = 0; it < iters; it++) {
                        STEP8(x, 0.999, 0.001);
                }
                out[g] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
        }
}
#else
#define doubleC CAT(double, COARSEN_F64)
#define VSTORED CAT(vstore, COARSEN_F64)
__kernel void fma_f64(__global double *out, uint iters, double seed, ulong n)
{
        double z = (double)(iters >> 31);
        doubleC lane = z * (doubleC)(0, 1, 2, 3, 4, 5, 6, 7);
        const doubleC A = 0.999, B = 0.001;
        for (ulong w = get_global_id(0); w * COARSEN_F64 < n; w += get_global_size(0)) {
                doubleC x0 = seed + lane, x1 = (seed + 0.125) + lane, x2 = (seed + 0.25) + lane;
                doubleC x3 = (seed + 0.375) + lane, x4 = (seed + 0.5) + lane, x5 = (seed + 0.625) + lane;
                doubleC x6 = (seed + 0.75) + lane, x7 = (seed + 0.875) + lane;
                for (uint it = 0; it < iters; it++) {
                        STEP8(x, A, B);
                }
                doubleC r = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
                if ((w + 1) * COARSEN_F64 <= n) {
                        VSTORED(r, w, out);
                } else {
                        double tmp[COARSEN_F64];
                        VSTORED(r, 0, tmp);
                        for (ulong m = 0; w * COARSEN_F64 + m < n; m++)
                                out[w * COARSEN_F64 + m] = tmp[m];
                }
        }
}
#endif
#endif

#ifdef cl_khr_fp16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
/* Scalar half chains; devices with fp16 are GPUs, where the hardware pairs them. The
 * coarsened launch still works: the loop below covers every logical item. */
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

/* The OpenCL device backend: the ICD loader (libOpenCL.so.1) loaded by bindings/opencl.h, our
 * own declarations of the API (bindings/opencl_api.h), kernels built from the embedded OpenCL C source
 * (kernels/gpuvet.cl) once per context.
 *
 * Devices: GPUs and accelerators of every platform first, then CPU devices (PoCL's CPU
 * device is what runs in CI). Nothing is keyed on the vendor id: PoCL reports 0x8086 on an
 * AMD CPU. Timing: every command is enqueued with an event on one in-order queue with
 * profiling enabled; a recorded dev_event remembers the last command before it and the first
 * command after it, so elapsed time is END(last command before the end event) -
 * START(first command after the start event), the device's own timestamps.
 *
 * Kernel shapes, chosen per device (see "kernel shapes" and "memory kernel shapes" below):
 * GPUs get float4 memory kernels, grid-stride loops and scalar FMA chains (the hardware runs
 * work items in SIMD lanes). CPU devices get memory kernels with one contiguous block per
 * work item (so each core streams through memory) and non-temporal stores, their vector
 * width (and read_f32's number of streams) calibrated at each one's first launch; their FMA
 * kernels run W logical work items per OpenCL work item as W-wide vector chains, W
 * calibrated at first use among the widths around the native one (on AVX2 float8 runs 3x
 * faster than float16, whose 8 chains need 16 of the 16 ymm registers and spill; on
 * AVX-512's 32 zmm registers float16 fits). Cached per device in the backend.
 *
 * Test hooks (only when compiled with -DGPUVET_TEST_HOOKS, i.e. the test driver; the gpuvet
 * binary ignores these variables): GPUVET_TEST_WRONG_KERNEL=name builds that kernel
 * intentionally wrong (so verification must catch it); GPUVET_TEST_CL_TUNING=gpu builds the
 * GPU variant on any device (so the GPU variant is exercised on PoCL);
 * GPUVET_TEST_CL_FMA_WIDTH=W skips the calibration and runs the FMA kernels W wide (so every
 * width is verified on any CPU device); GPUVET_TEST_CL_MEM_WIDTH=W and
 * GPUVET_TEST_CL_READ_STREAMS=S do the same for the memory kernels;
 * GPUVET_TEST_MEM_FAULT=WORD:MASK[:COUNT] makes the memtest verify and invert kernels read
 * words WORD .. WORD + COUNT - 1 of the tested region (COUNT 1 by default) with MASK's bits
 * flipped (numbers in C notation: 0x.. for hex), so the memtest's tests can find a fault
 * at a place they chose on a device that has none;
 * GPUVET_TEST_CORRUPT_GEMM=<device>:<row>:<col> builds the GEMM kernels of that device (its
 * index among this backend's devices) so that they add 1 to D(row, col): one silent data
 * corruption on one device, for the burn's GEMM verification to find (kernels/gpuvet.cl). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bindings/opencl.h"
#include "bench/device.h"

extern const char embedded_opencl_kernels[];
extern const size_t embedded_opencl_kernels_len;

#define MAX_DEVICES 64
#define MAX_KERNELS 64
#define MAX_WAITING 16

/* The FMA families calibrated on CPU devices: fma_f32 and fma_f64. */
enum { FMA_F32, FMA_F64, N_FMA };

/* The vector width an FMA family runs at on one device: 0 until calibrated. */
struct fma_shape {
        unsigned width;
        char note[224];
};

/* The memory kernels calibrated on CPU devices (see "kernel shapes" below). */
enum { MEM_COPY, MEM_SCALE, MEM_ADD, MEM_TRIAD, MEM_READ, MEM_WRITE, N_MEM };

/* The shape a memory kernel runs at on one device: width 0 until chosen. */
struct mem_shape {
        unsigned width, streams;
        char note[320];
};

struct dev_backend {
        struct opencl_lib *cl;
        cl_device_id devs[MAX_DEVICES];
        cl_platform_id plats[MAX_DEVICES];
        int n;
        struct fma_shape shapes[MAX_DEVICES][N_FMA]; /* the cache: per device, per family */
        struct mem_shape mem_shapes[MAX_DEVICES][N_MEM]; /* the same for the memory kernels */
        char err[1024];
};

struct pinned {
        void *p;
        cl_mem mem;
        struct pinned *next;
};

struct kernel_slot {
        char name[32];
        cl_kernel k;
};

struct dev_event {
        cl_event before; /* last command enqueued before the record (NULL: none) */
        cl_event after;  /* first command enqueued after it (NULL: none yet) */
};

struct dev_ctx {
        struct dev_backend *b;
        cl_device_id dev;
        cl_context ctx;
        cl_command_queue q;
        int index;             /* the device's index in b->devs (b->shapes) */
        cl_program prog;       /* built on first launch */
        bool cpu_tuning;       /* the CPU variant of the kernels (see the top of the file) */
        unsigned mem_vec;      /* VEC of the memory kernels */
        bool nt_stores;        /* NT_STORES of the memory kernels */
        unsigned native_width[N_FMA]; /* CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT / _DOUBLE */
        unsigned compute_units;
        struct kernel_slot kernels[MAX_KERNELS];
        size_t n_kernels;
        struct pinned *pinned;
        cl_event last;         /* the last command enqueued (retained) */
        struct dev_event *waiting[MAX_WAITING]; /* recorded events waiting for their "after" */
        size_t n_waiting;
        /* The second queue (dev_ops.copy_h2d_on ...), created at its first use; the same
         * bookkeeping as q, last and waiting above. */
        cl_command_queue q2;
        cl_event last2;
        struct dev_event *waiting2[MAX_WAITING];
        size_t n_waiting2;
};

struct dev_buf {
        cl_mem mem;
        size_t bytes;
};

/* -- errors ------------------------------------------------------------------------ */

static const char *cl_error_name(cl_int rc) {
        switch (rc) {
#define E(x, v) case v: return #x;
        E(CL_SUCCESS, 0) E(CL_DEVICE_NOT_FOUND, -1) E(CL_DEVICE_NOT_AVAILABLE, -2)
        E(CL_COMPILER_NOT_AVAILABLE, -3) E(CL_MEM_OBJECT_ALLOCATION_FAILURE, -4) E(CL_OUT_OF_RESOURCES, -5)
        E(CL_OUT_OF_HOST_MEMORY, -6) E(CL_PROFILING_INFO_NOT_AVAILABLE, -7) E(CL_MEM_COPY_OVERLAP, -8)
        E(CL_IMAGE_FORMAT_MISMATCH, -9) E(CL_IMAGE_FORMAT_NOT_SUPPORTED, -10) E(CL_BUILD_PROGRAM_FAILURE, -11)
        E(CL_MAP_FAILURE, -12) E(CL_MISALIGNED_SUB_BUFFER_OFFSET, -13)
        E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, -14) E(CL_COMPILE_PROGRAM_FAILURE, -15)
        E(CL_LINKER_NOT_AVAILABLE, -16) E(CL_LINK_PROGRAM_FAILURE, -17) E(CL_DEVICE_PARTITION_FAILED, -18)
        E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE, -19) E(CL_INVALID_VALUE, -30) E(CL_INVALID_DEVICE_TYPE, -31)
        E(CL_INVALID_PLATFORM, -32) E(CL_INVALID_DEVICE, -33) E(CL_INVALID_CONTEXT, -34)
        E(CL_INVALID_QUEUE_PROPERTIES, -35) E(CL_INVALID_COMMAND_QUEUE, -36) E(CL_INVALID_HOST_PTR, -37)
        E(CL_INVALID_MEM_OBJECT, -38) E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, -39) E(CL_INVALID_IMAGE_SIZE, -40)
        E(CL_INVALID_SAMPLER, -41) E(CL_INVALID_BINARY, -42) E(CL_INVALID_BUILD_OPTIONS, -43)
        E(CL_INVALID_PROGRAM, -44) E(CL_INVALID_PROGRAM_EXECUTABLE, -45) E(CL_INVALID_KERNEL_NAME, -46)
        E(CL_INVALID_KERNEL_DEFINITION, -47) E(CL_INVALID_KERNEL, -48) E(CL_INVALID_ARG_INDEX, -49)
        E(CL_INVALID_ARG_VALUE, -50) E(CL_INVALID_ARG_SIZE, -51) E(CL_INVALID_KERNEL_ARGS, -52)
        E(CL_INVALID_WORK_DIMENSION, -53) E(CL_INVALID_WORK_GROUP_SIZE, -54) E(CL_INVALID_WORK_ITEM_SIZE, -55)
        E(CL_INVALID_GLOBAL_OFFSET, -56) E(CL_INVALID_EVENT_WAIT_LIST, -57) E(CL_INVALID_EVENT, -58)
        E(CL_INVALID_OPERATION, -59) E(CL_INVALID_GL_OBJECT, -60) E(CL_INVALID_BUFFER_SIZE, -61)
        E(CL_INVALID_MIP_LEVEL, -62) E(CL_INVALID_GLOBAL_WORK_SIZE, -63) E(CL_INVALID_PROPERTY, -64)
        E(CL_INVALID_IMAGE_DESCRIPTOR, -65) E(CL_INVALID_COMPILER_OPTIONS, -66) E(CL_INVALID_LINKER_OPTIONS, -67)
        E(CL_INVALID_DEVICE_PARTITION_COUNT, -68) E(CL_PLATFORM_NOT_FOUND_KHR, -1001)
#undef E
        default: return "unknown OpenCL error";
        }
}

/* printf-style text into b's message (snprintf checks the format). */
#define set_err(b, ...) snprintf((b)->err, sizeof((b)->err), __VA_ARGS__)

/* Record "call: CL_NAME (code)" and map the code to a negative errno: allocation failures
 * to -ENOMEM (the benchmarks retry smaller), everything else to -EIO. */
static int cl_fail(struct dev_backend *b, const char *call, cl_int rc) {
        set_err(b, "%s: %s (%d)", call, cl_error_name(rc), (int)rc);
        switch (rc) {
        case CL_MEM_OBJECT_ALLOCATION_FAILURE:
        case CL_OUT_OF_RESOURCES:
        case CL_OUT_OF_HOST_MEMORY:
        case CL_INVALID_BUFFER_SIZE:
                return -ENOMEM;
        default:
                return -EIO;
        }
}

/* -- loading and devices ------------------------------------------------------------ */

static void cl_close(struct dev_backend *b);

static int cl_open(struct dev_backend **ret, char *err, size_t errsize) {
        *ret = NULL;
        struct dev_backend *b = calloc(1, sizeof(*b));
        if (!b) {
                snprintf(err, errsize, "out of memory");
                return -ENOMEM;
        }
        int r = opencl_lib_load(&b->cl, err, errsize);
        if (r < 0) {
                free(b);
                return r;
        }

        cl_platform_id plats[16];
        cl_uint np = 0;
        cl_int rc = b->cl->clGetPlatformIDs(16, plats, &np);
        if (rc != CL_SUCCESS || np == 0) {
                snprintf(err, errsize, "clGetPlatformIDs: %s (%d): no OpenCL platform (is an ICD installed under /etc/OpenCL/vendors?)",
                         rc == CL_SUCCESS ? "no platform" : cl_error_name(rc), (int)rc);
                cl_close(b); /* the library stays loaded: see opencl_lib_free */
                return -ENODEV;
        }
        if (np > 16)
                np = 16;
        /* GPUs and accelerators first, then CPUs: "gpu0" is a real GPU when there is one. */
        const cl_device_type passes[] = {CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_CPU};
        for (size_t pass = 0; pass < 2; pass++)
                for (cl_uint p = 0; p < np; p++) {
                        cl_device_id ids[MAX_DEVICES];
                        cl_uint nd = 0;
                        rc = b->cl->clGetDeviceIDs(plats[p], passes[pass], MAX_DEVICES, ids, &nd);
                        if (rc != CL_SUCCESS) /* CL_DEVICE_NOT_FOUND: none of this type */
                                continue;
                        for (cl_uint d = 0; d < nd && d < MAX_DEVICES && b->n < MAX_DEVICES; d++) {
                                b->plats[b->n] = plats[p];
                                b->devs[b->n++] = ids[d];
                        }
                }
        if (b->n == 0) {
                snprintf(err, errsize, "clGetDeviceIDs: CL_DEVICE_NOT_FOUND (-1) on %u platform(s)", (unsigned)np);
                cl_close(b); /* the library stays loaded: see opencl_lib_free */
                return -ENODEV;
        }
        *ret = b;
        return 0;
}

/* The OpenCL library is never unloaded once a platform was asked for: the ICD loader and
 * the vendor drivers it loaded keep global state and, for PoCL, worker threads that would
 * run on in unmapped code. (Unloading also turns their static allocations into reports of
 * leaks from an unknown module under LeakSanitizer.) */
static void cl_close(struct dev_backend *b) {
        if (b)
                opencl_lib_free(b->cl);
        free(b);
}

static int cl_count(struct dev_backend *b) { return b ? b->n : 0; }

static int dev_str(struct dev_backend *b, cl_device_id d, cl_device_info what, const char *call, char *out,
                   size_t size) {
        out[0] = 0;
        char buf[4096];
        size_t len = 0;
        cl_int rc = b->cl->clGetDeviceInfo(d, what, sizeof(buf) - 1, buf, &len);
        if (rc != CL_SUCCESS)
                return cl_fail(b, call, rc);
        buf[len < sizeof(buf) ? len : sizeof(buf) - 1] = 0;
        /* trim: some drivers pad names with spaces */
        char *s = buf;
        while (*s == ' ')
                s++;
        snprintf(out, size, "%s", s);
        for (size_t n = strlen(out); n > 0 && (out[n - 1] == ' ' || out[n - 1] == '\n'); n--)
                out[n - 1] = 0;
        return 0;
}

static int dev_num(struct dev_backend *b, cl_device_id d, cl_device_info what, const char *call, void *out,
                   size_t size) {
        memset(out, 0, size);
        cl_int rc = b->cl->clGetDeviceInfo(d, what, size, out, NULL);
        return rc == CL_SUCCESS ? 0 : cl_fail(b, call, rc);
}

static bool has_extension(struct dev_backend *b, cl_device_id d, const char *ext) {
        char exts[4096];
        if (dev_str(b, d, CL_DEVICE_EXTENSIONS, "clGetDeviceInfo(CL_DEVICE_EXTENSIONS)", exts, sizeof(exts)) < 0)
                return false;
        size_t n = strlen(ext);
        for (const char *p = exts; (p = strstr(p, ext)); p += n)
                if ((p == exts || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
                        return true;
        return false;
}

/* The PCI address through whichever vendor extension the driver has; "" otherwise
 * (PoCL's CPU device has none). */
static void pci_bus_id(struct dev_backend *b, cl_device_id d, char *out, size_t size) {
        out[0] = 0;
        if (has_extension(b, d, "cl_khr_pci_bus_info")) {
                cl_device_pci_bus_info_khr info;
                if (b->cl->clGetDeviceInfo(d, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof(info), &info, NULL) == CL_SUCCESS) {
                        snprintf(out, size, "%04x:%02x:%02x.%x", info.pci_domain & 0xffff, info.pci_bus & 0xff,
                                 info.pci_device & 0x1f, info.pci_function & 7);
                        return;
                }
        }
        if (has_extension(b, d, "cl_nv_device_attribute_query")) {
                cl_uint bus = 0, slot = 0, domain = 0;
                if (b->cl->clGetDeviceInfo(d, CL_DEVICE_PCI_BUS_ID_NV, sizeof(bus), &bus, NULL) == CL_SUCCESS &&
                    b->cl->clGetDeviceInfo(d, CL_DEVICE_PCI_SLOT_ID_NV, sizeof(slot), &slot, NULL) == CL_SUCCESS) {
                        /* CL_DEVICE_PCI_DOMAIN_ID_NV is newer (R470+); 0 when absent */
                        if (b->cl->clGetDeviceInfo(d, CL_DEVICE_PCI_DOMAIN_ID_NV, sizeof(domain), &domain, NULL) !=
                            CL_SUCCESS)
                                domain = 0;
                        /* the "slot" packs device << 3 | function */
                        snprintf(out, size, "%04x:%02x:%02x.%x", domain & 0xffff, bus & 0xff, (slot >> 3) & 0x1f,
                                 slot & 7);
                        return;
                }
        }
        if (has_extension(b, d, "cl_amd_device_attribute_query")) {
                cl_device_topology_amd t;
                if (b->cl->clGetDeviceInfo(d, CL_DEVICE_TOPOLOGY_AMD, sizeof(t), &t, NULL) == CL_SUCCESS &&
                    t.raw.type == CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD)
                        snprintf(out, size, "0000:%02x:%02x.%x", (unsigned char)t.pcie.bus,
                                 (unsigned char)t.pcie.device, (unsigned char)t.pcie.function);
        }
}

static int cl_info(struct dev_backend *b, int index, struct dev_info *ret) {
        memset(ret, 0, sizeof(*ret));
        if (!b || index < 0 || index >= b->n) {
                if (b)
                        set_err(b, "OpenCL device %d does not exist (%d device(s))", index, b->n);
                return -ENODEV;
        }
        cl_device_id d = b->devs[index];
        int r;
        cl_uint cu = 0, mhz = 0, unified = 0;
        cl_ulong gmem = 0, maxalloc = 0;
        cl_device_fp_config fp64 = 0;
        if ((r = dev_str(b, d, CL_DEVICE_NAME, "clGetDeviceInfo(CL_DEVICE_NAME)", ret->name, sizeof(ret->name))) < 0 ||
            (r = dev_str(b, d, CL_DEVICE_VENDOR, "clGetDeviceInfo(CL_DEVICE_VENDOR)", ret->vendor, sizeof(ret->vendor))) < 0 ||
            (r = dev_str(b, d, CL_DRIVER_VERSION, "clGetDeviceInfo(CL_DRIVER_VERSION)", ret->driver_version,
                         sizeof(ret->driver_version))) < 0 ||
            (r = dev_num(b, d, CL_DEVICE_MAX_COMPUTE_UNITS, "clGetDeviceInfo(CL_DEVICE_MAX_COMPUTE_UNITS)", &cu, sizeof(cu))) < 0 ||
            (r = dev_num(b, d, CL_DEVICE_GLOBAL_MEM_SIZE, "clGetDeviceInfo(CL_DEVICE_GLOBAL_MEM_SIZE)", &gmem, sizeof(gmem))) < 0 ||
            (r = dev_num(b, d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, "clGetDeviceInfo(CL_DEVICE_MAX_MEM_ALLOC_SIZE)", &maxalloc,
                         sizeof(maxalloc))) < 0)
                return r;
        /* Optional properties: absent or deprecated ones read as 0. */
        (void)dev_num(b, d, CL_DEVICE_MAX_CLOCK_FREQUENCY, "clGetDeviceInfo(CL_DEVICE_MAX_CLOCK_FREQUENCY)", &mhz, sizeof(mhz));
        (void)dev_num(b, d, CL_DEVICE_HOST_UNIFIED_MEMORY, "clGetDeviceInfo(CL_DEVICE_HOST_UNIFIED_MEMORY)", &unified,
                      sizeof(unified));
        (void)dev_num(b, d, CL_DEVICE_DOUBLE_FP_CONFIG, "clGetDeviceInfo(CL_DEVICE_DOUBLE_FP_CONFIG)", &fp64, sizeof(fp64));
        ret->global_mem_bytes = gmem;
        ret->max_alloc_bytes = maxalloc;
        ret->compute_units = cu;
        ret->clock_mhz = mhz;
        ret->fp64 = fp64 != 0;
        ret->fp16 = has_extension(b, d, "cl_khr_fp16");
        ret->unified_memory = unified != 0;
        cl_device_type type = 0;
        if (dev_num(b, d, CL_DEVICE_TYPE, "clGetDeviceInfo(CL_DEVICE_TYPE)", &type, sizeof(type)) == 0)
                ret->is_cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
        pci_bus_id(b, d, ret->pci_bus_id, sizeof(ret->pci_bus_id));
        return 0;
}

/* -- contexts --------------------------------------------------------------------- */

static bool test_gpu_tuning(void) {
#ifdef GPUVET_TEST_HOOKS
        const char *t = getenv("GPUVET_TEST_CL_TUNING");
        return t && !strcmp(t, "gpu");
#else
        return false;
#endif
}

/* The memory kernels' build-time shape, from the device's properties. GPUs: float4,
 * grid-stride (what coalesces), the only shape. CPU devices: contiguous blocks, the base
 * names at twice the native float width (two SIMD registers per load, 16 floats at most;
 * used until the calibration has chosen, see "kernel shapes"), and non-temporal stores when
 * every buffer's base is aligned to the widest vector, 16 floats (CL_DEVICE_MEM_BASE_ADDR_ALIGN,
 * in bits): a copy then writes its destination without reading it for ownership first. */
static void choose_memory_shape(struct dev_ctx *c) {
        cl_uint nf = 0, nd = 0, align_bits = 0, cu = 0;
        (void)dev_num(c->b, c->dev, CL_DEVICE_MAX_COMPUTE_UNITS, "clGetDeviceInfo(CL_DEVICE_MAX_COMPUTE_UNITS)", &cu,
                      sizeof(cu));
        c->compute_units = cu;
        (void)dev_num(c->b, c->dev, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT,
                      "clGetDeviceInfo(CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT)", &nf, sizeof(nf));
        (void)dev_num(c->b, c->dev, CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE,
                      "clGetDeviceInfo(CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE)", &nd, sizeof(nd));
        (void)dev_num(c->b, c->dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, "clGetDeviceInfo(CL_DEVICE_MEM_BASE_ADDR_ALIGN)",
                      &align_bits, sizeof(align_bits));
        c->native_width[FMA_F32] = nf ? nf : 4;
        c->native_width[FMA_F64] = nd ? nd : 2;
        if (!c->cpu_tuning) {
                c->mem_vec = 4;
                c->nt_stores = false;
                return;
        }
        unsigned vec = 2 * c->native_width[FMA_F32];
        c->mem_vec = vec >= 16 ? 16 : vec >= 8 ? 8 : 4; /* a width read_f32's reduction has */
        c->nt_stores = align_bits / 8 >= 16 * sizeof(float);
}

static int cl_ctx_open(struct dev_backend *b, int index, struct dev_ctx **ret) {
        *ret = NULL;
        if (!b || index < 0 || index >= b->n) {
                if (b)
                        set_err(b, "OpenCL device %d does not exist (%d device(s))", index, b->n);
                return -ENODEV;
        }
        struct dev_ctx *c = calloc(1, sizeof(*c));
        if (!c) {
                set_err(b, "out of memory");
                return -ENOMEM;
        }
        c->b = b;
        c->dev = b->devs[index];
        cl_device_type type = 0;
        if (dev_num(b, c->dev, CL_DEVICE_TYPE, "clGetDeviceInfo(CL_DEVICE_TYPE)", &type, sizeof(type)) < 0) {
                free(c);
                return -EIO;
        }
        c->index = index;
        c->cpu_tuning = (type & CL_DEVICE_TYPE_CPU) && !test_gpu_tuning();
        choose_memory_shape(c);
        cl_int rc = 0;
        cl_context_properties props[] = {0x1084 /* CL_CONTEXT_PLATFORM */, (cl_context_properties)b->plats[index], 0};
        c->ctx = b->cl->clCreateContext(props, 1, &c->dev, NULL, NULL, &rc);
        if (!c->ctx || rc != CL_SUCCESS) {
                int r = cl_fail(b, "clCreateContext", rc ? rc : CL_INVALID_VALUE);
                free(c);
                return r;
        }
        c->q = b->cl->clCreateCommandQueue(c->ctx, c->dev, CL_QUEUE_PROFILING_ENABLE, &rc);
        if (!c->q || rc != CL_SUCCESS) {
                int r = cl_fail(b, "clCreateCommandQueue", rc ? rc : CL_INVALID_VALUE);
                (void)b->cl->clReleaseContext(c->ctx);
                free(c);
                return r;
        }
        *ret = c;
        return 0;
}

static void cl_host_free(struct dev_ctx *c, void *p, bool pinned);

static void cl_ctx_close(struct dev_ctx *c) {
        if (!c)
                return;
        const struct opencl_lib *cl = c->b->cl;
        (void)cl->clFinish(c->q); /* a failure here has nowhere to go, ignoring */
        if (c->q2)
                (void)cl->clFinish(c->q2);
        while (c->pinned)
                cl_host_free(c, c->pinned->p, true);
        for (size_t i = 0; i < c->n_kernels; i++)
                (void)cl->clReleaseKernel(c->kernels[i].k);
        if (c->prog)
                (void)cl->clReleaseProgram(c->prog);
        if (c->last)
                (void)cl->clReleaseEvent(c->last);
        if (c->last2)
                (void)cl->clReleaseEvent(c->last2);
        if (c->q2)
                (void)cl->clReleaseCommandQueue(c->q2);
        (void)cl->clReleaseCommandQueue(c->q);
        (void)cl->clReleaseContext(c->ctx);
        free(c);
}

/* Every enqueued command passes its event here: it becomes the queue's last command and the
 * "after" of every event recorded since the previous command. */
static void track(struct dev_ctx *c, cl_event ev) {
        const struct opencl_lib *cl = c->b->cl;
        for (size_t i = 0; i < c->n_waiting; i++)
                if (cl->clRetainEvent(ev) == CL_SUCCESS)
                        c->waiting[i]->after = ev;
        c->n_waiting = 0;
        if (c->last)
                (void)cl->clReleaseEvent(c->last);
        c->last = ev; /* takes the enqueue's reference */
}

/* -- memory ------------------------------------------------------------------------ */

static int cl_alloc(struct dev_ctx *c, size_t bytes, struct dev_buf **ret) {
        *ret = NULL;
        if (bytes == 0) {
                set_err(c->b, "clCreateBuffer: a zero-byte buffer was asked for");
                return -EINVAL;
        }
        struct dev_buf *buf = calloc(1, sizeof(*buf));
        if (!buf) {
                set_err(c->b, "out of host memory");
                return -ENOMEM;
        }
        cl_int rc = 0;
        buf->mem = c->b->cl->clCreateBuffer(c->ctx, CL_MEM_READ_WRITE, bytes, NULL, &rc);
        if (!buf->mem || rc != CL_SUCCESS) {
                free(buf);
                return cl_fail(c->b, "clCreateBuffer", rc ? rc : CL_MEM_OBJECT_ALLOCATION_FAILURE);
        }
        buf->bytes = bytes;
        *ret = buf;
        return 0;
}

static void cl_free(struct dev_ctx *c, struct dev_buf *buf) {
        if (!buf)
                return;
        (void)c->b->cl->clReleaseMemObject(buf->mem);
        free(buf);
}

/* OpenCL tells the total (CL_DEVICE_GLOBAL_MEM_SIZE) but not what is free now. */
static int cl_mem_info(struct dev_ctx *c, uint64_t *ret_free_bytes, uint64_t *ret_total_bytes) {
        *ret_free_bytes = *ret_total_bytes = 0;
        set_err(c->b, "OpenCL does not report free device memory");
        return -ENOTSUP;
}

/* Pinned: a buffer allocated by the driver in host memory (CL_MEM_ALLOC_HOST_PTR) and kept
 * mapped; transfers from its mapped pointer take the driver's DMA path (NVIDIA's and AMD's
 * documented way to get page-locked memory in OpenCL). */
static int cl_host_alloc(struct dev_ctx *c, size_t bytes, bool pinned, void **ret) {
        if (!pinned || bytes == 0)
                return dev_host_alloc_pageable(bytes, ret, c->b->err, sizeof(c->b->err));
        *ret = NULL;
        struct pinned *pn = calloc(1, sizeof(*pn));
        if (!pn) {
                set_err(c->b, "out of host memory");
                return -ENOMEM;
        }
        cl_int rc = 0;
        pn->mem = c->b->cl->clCreateBuffer(c->ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &rc);
        if (!pn->mem || rc != CL_SUCCESS) {
                free(pn);
                return cl_fail(c->b, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)", rc ? rc : CL_MEM_OBJECT_ALLOCATION_FAILURE);
        }
        pn->p = c->b->cl->clEnqueueMapBuffer(c->q, pn->mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL,
                                          &rc);
        if (!pn->p || rc != CL_SUCCESS) {
                (void)c->b->cl->clReleaseMemObject(pn->mem);
                free(pn);
                return cl_fail(c->b, "clEnqueueMapBuffer", rc ? rc : CL_MAP_FAILURE);
        }
        pn->next = c->pinned;
        c->pinned = pn;
        *ret = pn->p;
        return 0;
}

static void cl_host_free(struct dev_ctx *c, void *p, bool pinned) {
        if (!p)
                return;
        if (!pinned) {
                free(p);
                return;
        }
        for (struct pinned **pp = &c->pinned; *pp; pp = &(*pp)->next) {
                struct pinned *pn = *pp;
                if (pn->p != p)
                        continue;
                *pp = pn->next;
                cl_event ev = NULL;
                if (c->b->cl->clEnqueueUnmapMemObject(c->q, pn->mem, pn->p, 0, NULL, &ev) == CL_SUCCESS && ev) {
                        (void)c->b->cl->clWaitForEvents(1, &ev);
                        (void)c->b->cl->clReleaseEvent(ev);
                }
                (void)c->b->cl->clReleaseMemObject(pn->mem);
                free(pn);
                return;
        }
}

static int check_range(struct dev_ctx *c, const char *call, const struct dev_buf *buf, size_t off, size_t bytes) {
        if (!buf || off > buf->bytes || bytes > buf->bytes - off) {
                set_err(c->b, "%s: range %zu+%zu outside the %zu-byte buffer", call, off, bytes, buf ? buf->bytes : 0);
                return -EINVAL;
        }
        return 0;
}

static int cl_copy_h2d(struct dev_ctx *c, struct dev_buf *dst, size_t dst_off, const void *src, size_t bytes) {
        int r = check_range(c, "clEnqueueWriteBuffer", dst, dst_off, bytes);
        if (r < 0)
                return r;
        cl_event ev = NULL;
        cl_int rc = c->b->cl->clEnqueueWriteBuffer(c->q, dst->mem, CL_FALSE, dst_off, bytes, src, 0, NULL, &ev);
        if (rc != CL_SUCCESS)
                return cl_fail(c->b, "clEnqueueWriteBuffer", rc);
        track(c, ev);
        return 0;
}

static int cl_copy_d2h(struct dev_ctx *c, void *dst, struct dev_buf *src, size_t src_off, size_t bytes) {
        int r = check_range(c, "clEnqueueReadBuffer", src, src_off, bytes);
        if (r < 0)
                return r;
        cl_event ev = NULL;
        cl_int rc = c->b->cl->clEnqueueReadBuffer(c->q, src->mem, CL_FALSE, src_off, bytes, dst, 0, NULL, &ev);
        if (rc != CL_SUCCESS)
                return cl_fail(c->b, "clEnqueueReadBuffer", rc);
        track(c, ev);
        return 0;
}

static int cl_copy_d2d(struct dev_ctx *c, struct dev_buf *dst, size_t dst_off, struct dev_buf *src, size_t src_off,
                       size_t bytes) {
        int r;
        if ((r = check_range(c, "clEnqueueCopyBuffer", dst, dst_off, bytes)) < 0 ||
            (r = check_range(c, "clEnqueueCopyBuffer", src, src_off, bytes)) < 0)
                return r;
        cl_event ev = NULL;
        cl_int rc = c->b->cl->clEnqueueCopyBuffer(c->q, src->mem, dst->mem, src_off, dst_off, bytes, 0, NULL, &ev);
        if (rc != CL_SUCCESS)
                return cl_fail(c->b, "clEnqueueCopyBuffer", rc);
        track(c, ev);
        return 0;
}

static int cl_p2p_enable(struct dev_ctx *a, struct dev_ctx *b) {
        (void)b;
        set_err(a->b, "OpenCL has no peer-to-peer copies between devices");
        return -ENOTSUP;
}

static int cl_copy_peer(struct dev_ctx *dst_ctx, struct dev_buf *dst, struct dev_ctx *src_ctx, struct dev_buf *src,
                        size_t bytes) {
        (void)dst;
        (void)src_ctx;
        (void)src;
        (void)bytes;
        set_err(dst_ctx->b, "OpenCL has no peer-to-peer copies between devices");
        return -ENOTSUP;
}

static int cl_memset(struct dev_ctx *c, struct dev_buf *buf, uint8_t value, size_t bytes) {
        int r = check_range(c, "clEnqueueFillBuffer", buf, 0, bytes);
        if (r < 0)
                return r;
        cl_event ev = NULL;
        cl_int rc = c->b->cl->clEnqueueFillBuffer(c->q, buf->mem, &value, 1, 0, bytes, 0, NULL, &ev);
        if (rc != CL_SUCCESS)
                return cl_fail(c->b, "clEnqueueFillBuffer", rc);
        track(c, ev);
        return 0;
}

/* -- kernels ------------------------------------------------------------------------ */

static bool is_fma(const char *kernel) { return !strncmp(kernel, "fma_", 4); }

/* FMA_F32 / FMA_F64 for the kernels with calibrated shapes, -1 for the others. */
static int fma_family(const char *kernel) {
        return !strcmp(kernel, "fma_f32") ? FMA_F32 : !strcmp(kernel, "fma_f64") ? FMA_F64 : -1;
}

static int build(struct dev_ctx *c) {
        const struct opencl_lib *cl = c->b->cl;
        const char *src = embedded_opencl_kernels;
        size_t len = embedded_opencl_kernels_len;
        cl_int rc = 0;
        c->prog = cl->clCreateProgramWithSource(c->ctx, 1, &src, &len, &rc);
        if (!c->prog || rc != CL_SUCCESS) {
                c->prog = NULL;
                return cl_fail(c->b, "clCreateProgramWithSource", rc ? rc : CL_INVALID_VALUE);
        }
        char opts[384];
        snprintf(opts, sizeof(opts), "-cl-std=CL1.2 -DVEC=%u -DBLOCKED=%d -DNT_STORES=%d -DMEM_SHAPES=%d -DFMA_SHAPES=%d",
                 c->mem_vec, c->cpu_tuning, c->nt_stores, c->cpu_tuning, c->cpu_tuning);
#ifdef GPUVET_TEST_HOOKS
        const char *wrong = getenv("GPUVET_TEST_WRONG_KERNEL");
        if (wrong && *wrong) {
                size_t n = strlen(opts);
                snprintf(opts + n, sizeof(opts) - n, " -DGPUVET_WRONG_%.40s", wrong);
        }
        const char *fault = getenv("GPUVET_TEST_MEM_FAULT");
        if (fault && *fault) {
                /* strtoull, not sscanf: a mask of 0xffffffffffffffff is out of range for %lli */
                char *end = NULL;
                unsigned long long word = strtoull(fault, &end, 0), mask = 0, count = 1;
                bool ok = *end == ':';
                if (ok)
                        mask = strtoull(end + 1, &end, 0);
                if (ok && *end == ':')
                        count = strtoull(end + 1, &end, 0);
                if (!ok || *end || count == 0) {
                        (void)cl->clReleaseProgram(c->prog);
                        c->prog = NULL;
                        set_err(c->b, "GPUVET_TEST_MEM_FAULT=%.40s: expected WORD:MASK[:COUNT]", fault);
                        return -EINVAL;
                }
                size_t n = strlen(opts);
                snprintf(opts + n, sizeof(opts) - n,
                         " -DGPUVET_MEM_FAULT_WORD=%lluUL -DGPUVET_MEM_FAULT_MASK=%lluUL -DGPUVET_MEM_FAULT_COUNT=%lluUL",
                         word, mask, count);
        }
        const char *corrupt = getenv("GPUVET_TEST_CORRUPT_GEMM");
        unsigned cdev, crow, ccol;
        if (corrupt && sscanf(corrupt, "%u:%u:%u", &cdev, &crow, &ccol) == 3 && cdev == (unsigned)c->index) {
                size_t n = strlen(opts);
                snprintf(opts + n, sizeof(opts) - n, " -DGPUVET_CORRUPT_ROW=%u -DGPUVET_CORRUPT_COL=%u", crow, ccol);
        }
#endif
        rc = cl->clBuildProgram(c->prog, 1, &c->dev, opts, NULL, NULL);
        if (rc != CL_SUCCESS) {
                char log[768] = "";
                size_t n = 0;
                if (cl->clGetProgramBuildInfo(c->prog, c->dev, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log, &n) !=
                    CL_SUCCESS)
                        snprintf(log, sizeof(log), "(no build log)");
                log[n < sizeof(log) ? n : sizeof(log) - 1] = 0;
                for (char *p = log; *p; p++)
                        if (*p == '\n')
                                *p = ' ';
                set_err(c->b, "clBuildProgram: %s (%d): %s", cl_error_name(rc), (int)rc, log);
                (void)cl->clReleaseProgram(c->prog);
                c->prog = NULL;
                return -EIO;
        }
        return 0;
}

static int get_kernel_named(struct dev_ctx *c, const char *name, cl_kernel *ret) {
        for (size_t i = 0; i < c->n_kernels; i++)
                if (!strcmp(c->kernels[i].name, name)) {
                        *ret = c->kernels[i].k;
                        return 0;
                }
        if (!c->prog) {
                int r = build(c);
                if (r < 0)
                        return r;
        }
        if (c->n_kernels == MAX_KERNELS || strlen(name) >= sizeof(c->kernels[0].name)) {
                set_err(c->b, "clCreateKernel(%s): too many kernels or name too long", name);
                return -EINVAL;
        }
        cl_int rc = 0;
        cl_kernel k = c->b->cl->clCreateKernel(c->prog, name, &rc);
        if (!k || rc != CL_SUCCESS) {
                char call[64];
                snprintf(call, sizeof(call), "clCreateKernel(%s)", name);
                int r = cl_fail(c->b, call, rc ? rc : CL_INVALID_KERNEL_NAME);
                /* a kernel compiled out for a missing extension (fma_f16 without cl_khr_fp16) */
                return rc == CL_INVALID_KERNEL_NAME ? -ENOTSUP : r;
        }
        snprintf(c->kernels[c->n_kernels].name, sizeof(c->kernels[0].name), "%s", name);
        c->kernels[c->n_kernels++].k = k;
        *ret = k;
        return 0;
}

/* -- kernel shapes ---------------------------------------------------------------------
 *
 * The FMA kernels on CPU devices: kernels/gpuvet.cl's fma_f32_x<W> / fma_f64_x<W> run W
 * logical work items per OpenCL work item, each chain a W-wide vector. Which W fills the SIMD
 * pipes without spilling depends on the vector registers (16 on AVX2, 32 on AVX-512) and
 * the FMA latency, none of which OpenCL tells, so it is measured, as clpeak does by running
 * every vector width: the widths around the device's native one (native / 2, native,
 * 2 x native, within what the source has) run on the device, each timed until a launch lasts
 * CAL_MIN_MS, best of CAL_REPS, and the fastest is kept for the device (b->shapes) for the
 * rest of the process. The result is not verified here: the benchmark verifies what it runs. */

static int profile(struct dev_ctx *c, cl_event ev, cl_profiling_info what, cl_ulong *ret);

#define CAL_MIN_MS 5.0
#define CAL_REPS 3
#define CAL_MAX_ITERS (1u << 22)

static const struct fma_family_info {
        const char *kernel, *type;
        size_t elem;
        unsigned widths[4]; /* the x<W> variants kernels/gpuvet.cl builds, 0-terminated */
} fma_families[N_FMA] = {
        [FMA_F32] = {"fma_f32", "float", sizeof(float), {4, 8, 16, 0}},
        [FMA_F64] = {"fma_f64", "double", sizeof(double), {2, 4, 8, 16}},
};

static unsigned test_fma_width(void) {
#ifdef GPUVET_TEST_HOOKS
        const char *w = getenv("GPUVET_TEST_CL_FMA_WIDTH");
        return w ? (unsigned)strtoul(w, NULL, 10) : 0;
#else
        return 0;
#endif
}

static bool has_width(const struct fma_family_info *f, unsigned w) {
        for (size_t i = 0; i < 4 && f->widths[i]; i++)
                if (f->widths[i] == w)
                        return true;
        return false;
}

/* One launch of kernel k over global work items (local: 0 for the driver's choice), waited
 * for; its device time in ms. Not tracked (track()): calibration launches are no command of
 * the caller's. */
static int time_launch(struct dev_ctx *c, cl_kernel k, size_t global, size_t local, double *ms) {
        const struct opencl_lib *cl = c->b->cl;
        cl_event ev = NULL;
        cl_int rc = cl->clEnqueueNDRangeKernel(c->q, k, 1, NULL, &global, local ? &local : NULL, 0, NULL, &ev);
        if (rc != CL_SUCCESS)
                return cl_fail(c->b, "clEnqueueNDRangeKernel(calibration)", rc);
        cl_ulong t0 = 0, t1 = 0;
        int r = profile(c, ev, CL_PROFILING_COMMAND_START, &t0);
        if (r == 0)
                r = profile(c, ev, CL_PROFILING_COMMAND_END, &t1);
        (void)cl->clReleaseEvent(ev);
        *ms = t1 > t0 ? (double)(t1 - t0) / 1e6 : 0;
        return r;
}

/* GFLOPS of the x<w> variant of family f over n logical work items writing to out. */
static int time_fma_width(struct dev_ctx *c, int f, unsigned w, cl_mem out, cl_ulong n, double *gflops) {
        const struct opencl_lib *cl = c->b->cl;
        const struct fma_family_info *fi = &fma_families[f];
        char name[32];
        snprintf(name, sizeof(name), "%s_x%u", fi->kernel, w);
        cl_kernel k;
        int r = get_kernel_named(c, name, &k);
        if (r < 0)
                return r;
        float seed32 = 0.5f;
        double seed64 = 0.5;
        cl_uint iters = 16;
        size_t global = (size_t)((n + w - 1) / w);
        cl_int rc = cl->clSetKernelArg(k, 0, sizeof(out), &out);
        if (rc == CL_SUCCESS)
                rc = f == FMA_F64 ? cl->clSetKernelArg(k, 2, sizeof(seed64), &seed64)
                                  : cl->clSetKernelArg(k, 2, sizeof(seed32), &seed32);
        if (rc == CL_SUCCESS)
                rc = cl->clSetKernelArg(k, 3, sizeof(n), &n);
        if (rc != CL_SUCCESS)
                return cl_fail(c->b, "clSetKernelArg(calibration)", rc);
        double ms = 0, best = 0;
        /* rep -2: the first launch, which may include compiling the kernel for the device
         * (PoCL), not timed; rep -1: launches with 4x the iterations until one lasts
         * CAL_MIN_MS; then CAL_REPS timed launches */
        for (int rep = -2; rep < CAL_REPS;) {
                if ((rc = cl->clSetKernelArg(k, 1, sizeof(iters), &iters)) != CL_SUCCESS)
                        return cl_fail(c->b, "clSetKernelArg(calibration)", rc);
                if ((r = time_launch(c, k, global, 0, &ms)) < 0)
                        return r;
                if (rep == -2) {
                        rep = -1;
                        continue;
                }
                if (rep == -1) {
                        if (ms >= CAL_MIN_MS || iters >= CAL_MAX_ITERS)
                                rep = 0;
                        else
                                iters *= 4;
                        continue;
                }
                double g = ms > 0 ? (double)n * 8 * iters * 2 / (ms * 1e6) : 0;
                if (g > best)
                        best = g;
                rep++;
        }
        *gflops = best;
        return 0;
}

/* The width family f runs at on c's device: the cache, or the test hook, or a calibration. */
static int fma_width(struct dev_ctx *c, int f, unsigned *ret) {
        struct fma_shape *sh = &c->b->shapes[c->index][f];
        const struct fma_family_info *fi = &fma_families[f];
        *ret = 1;
        if (!c->cpu_tuning)
                return 0;
        if (sh->width) {
                *ret = sh->width;
                return 0;
        }
        unsigned forced = test_fma_width();
        if (forced && has_width(fi, forced)) {
                sh->width = forced;
                snprintf(sh->note, sizeof(sh->note), "%s%u x 8 chains per work item (set by GPUVET_TEST_CL_FMA_WIDTH)",
                         fi->type, forced);
                *ret = forced;
                return 0;
        }
        if (!c->prog) {
                int r = build(c);
                if (r < 0)
                        return r;
        }
        cl_ulong n = (cl_ulong)(c->compute_units ? c->compute_units : 1) * 2048 * 4;
        cl_int rc = 0;
        cl_mem out = c->b->cl->clCreateBuffer(c->ctx, CL_MEM_READ_WRITE, n * fi->elem, NULL, &rc);
        if (!out || rc != CL_SUCCESS)
                return cl_fail(c->b, "clCreateBuffer(calibration)", rc ? rc : CL_MEM_OBJECT_ALLOCATION_FAILURE);
        unsigned nat = c->native_width[f], best_w = 0;
        double best = 0;
        char tried[160] = "";
        size_t len = 0;
        int r = 0;
        for (size_t i = 0; i < 4 && fi->widths[i]; i++) {
                unsigned w = fi->widths[i];
                if (w * 2 < nat || w > nat * 2) /* native / 2, native, 2 x native */
                        continue;
                double g = 0;
                if ((r = time_fma_width(c, f, w, out, n, &g)) < 0)
                        break;
                if (len < sizeof(tried))
                        len += (size_t)snprintf(tried + len, sizeof(tried) - len, "%s%s%u %.1f", len ? ", " : "",
                                                fi->type, w, g);
                if (g > best) {
                        best = g;
                        best_w = w;
                }
        }
        (void)c->b->cl->clReleaseMemObject(out);
        if (r < 0)
                return r;
        if (!best_w) { /* no width near the native one in the source: the scalar kernel */
                sh->width = 1;
                snprintf(sh->note, sizeof(sh->note), "scalar: 8 chains per work item (no vector variant near the "
                         "native width %u)", nat);
        } else {
                sh->width = best_w;
                snprintf(sh->note, sizeof(sh->note), "%s%u x 8 chains per work item, calibrated (GFLOPS: %s)", fi->type,
                         best_w, tried);
        }
        *ret = sh->width;
        return 0;
}

/* The kernel to launch for the benchmark's name, and the logical work items each OpenCL work
 * item runs (the x<W> variants: W). */
static int get_kernel(struct dev_ctx *c, const char *name, cl_kernel *ret, size_t *factor) {
        *factor = 1;
        int f = fma_family(name);
        unsigned w = 1;
        if (f >= 0) {
                int r = fma_width(c, f, &w);
                if (r < 0)
                        return r;
        }
        if (w <= 1)
                return get_kernel_named(c, name, ret);
        char variant[32];
        snprintf(variant, sizeof(variant), "%s_x%u", name, w);
        *factor = w;
        return get_kernel_named(c, variant, ret);
}

/* Set the launch's arguments on k; n_last, when not NULL, replaces the last argument (the
 * element count n of the memory kernels, a u64). */
static int set_args(struct dev_ctx *c, cl_kernel k, const char *kernel, const struct dev_arg *args, size_t n_args,
                    const cl_ulong *n_last) {
        const struct opencl_lib *cl = c->b->cl;
        for (cl_uint i = 0; i < n_args; i++) {
                const struct dev_arg *a = &args[i];
                cl_int rc;
                if (n_last && i + 1 == n_args && a->kind == DEV_ARG_U64) {
                        rc = cl->clSetKernelArg(k, i, sizeof(*n_last), n_last);
                } else {
                        switch (a->kind) {
                        case DEV_ARG_BUF: rc = cl->clSetKernelArg(k, i, sizeof(cl_mem), &a->v.buf->mem); break;
                        case DEV_ARG_U32: rc = cl->clSetKernelArg(k, i, sizeof(a->v.u32), &a->v.u32); break;
                        case DEV_ARG_U64: rc = cl->clSetKernelArg(k, i, sizeof(a->v.u64), &a->v.u64); break;
                        case DEV_ARG_F32: rc = cl->clSetKernelArg(k, i, sizeof(a->v.f32), &a->v.f32); break;
                        case DEV_ARG_F64: rc = cl->clSetKernelArg(k, i, sizeof(a->v.f64), &a->v.f64); break;
                        default: rc = CL_INVALID_VALUE;
                        }
                }
                if (rc != CL_SUCCESS) {
                        char call[80];
                        snprintf(call, sizeof(call), "clSetKernelArg(%s, %u)", kernel, (unsigned)i);
                        return cl_fail(c->b, call, rc);
                }
        }
        return 0;
}

/* -- memory kernel shapes ----------------------------------------------------------------
 *
 * On CPU devices kernels/gpuvet.cl (MEM_SHAPES) also builds every memory kernel at the widths
 * 4, 8 and 16 (<kernel>_v<W>), and read_f32 over 1, 4 and 8 streams (read_f32_v<W>s<S>).
 * Which runs fastest depends on the core's load ports, its prefetchers and how many cache
 * misses it keeps in flight, none of which OpenCL reports, so it is measured, as clpeak runs
 * its read kernel at every vector width and keeps the best: at the kernel's first launch on
 * a device, the candidates (the widths native / 2, native and 2 x native of
 * CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, and for read_f32 each with 1, 4 and 8 streams) run
 * with the launch's own arguments and work sizes, over the first CAL_MEM_BYTES of each
 * array: one untimed launch each (PoCL compiles the kernel), then CAL_MEM_ROUNDS rounds that
 * take the candidates in turn (so a neighbour's burst of load hits all of them alike), each
 * candidate's fastest launch counts. The fastest is kept for the device (b->mem_shapes) for
 * the rest of the process. The memory kernels only read their inputs and overwrite their
 * output, so the extra launches change nothing the launch itself does not write again;
 * a launch whose output is also an input (scale in place) is not calibrated (the base
 * kernel runs, and the next launch tries again). */

#define CAL_MEM_BYTES (64ull << 20)
#define CAL_MEM_ROUNDS 3
#define MAX_MEM_CANDIDATES 9

static const struct mem_kernel_info {
        const char *kernel;
        unsigned arrays; /* arrays moved per element, to print GB/s as the benchmark counts */
        bool streams;    /* has the S-stream variants */
} mem_kernels[N_MEM] = {
        [MEM_COPY] = {"copy_f32", 2, false}, [MEM_SCALE] = {"scale_f32", 2, false},
        [MEM_ADD] = {"add_f32", 3, false},   [MEM_TRIAD] = {"triad_f32", 3, false},
        [MEM_READ] = {"read_f32", 1, true},  [MEM_WRITE] = {"write_f32", 1, false},
};
static const unsigned mem_widths[] = {4, 8, 16};
static const unsigned read_streams[] = {1, 4, 8};

/* MEM_* for the memory kernels, -1 for the others. */
static int mem_family(const char *kernel) {
        for (int f = 0; f < N_MEM; f++)
                if (!strcmp(kernel, mem_kernels[f].kernel))
                        return f;
        return -1;
}

static void mem_variant(char *out, size_t size, int f, unsigned w, unsigned s) {
        if (mem_kernels[f].streams)
                snprintf(out, size, "%s_v%us%u", mem_kernels[f].kernel, w, s);
        else
                snprintf(out, size, "%s_v%u", mem_kernels[f].kernel, w);
}

static void mem_note(struct dev_ctx *c, int f, struct mem_shape *sh, const char *how) {
        char streams[32] = "";
        if (mem_kernels[f].streams)
                snprintf(streams, sizeof(streams), " x %u stream%s", sh->streams, sh->streams == 1 ? "" : "s");
        /* short: a measurement parameter holds 127 characters */
        snprintf(sh->note, sizeof(sh->note), "float%u%s, blocks%s%s%s", sh->width, streams,
                 c->nt_stores && f != MEM_READ ? ", non-temporal stores" : "", how[0] ? ", " : "", how);
}

/* The test hooks GPUVET_TEST_CL_MEM_WIDTH=W and GPUVET_TEST_CL_READ_STREAMS=S: 0 when unset
 * (or not a width / stream count the source has). */
static unsigned test_mem_hook(const char *var, const unsigned *allowed, size_t n) {
#ifdef GPUVET_TEST_HOOKS
        const char *v = getenv(var);
        unsigned x = v ? (unsigned)strtoul(v, NULL, 10) : 0;
        for (size_t i = 0; i < n; i++)
                if (allowed[i] == x)
                        return x;
#else
        (void)var;
        (void)allowed;
        (void)n;
#endif
        return 0;
}

/* Choose the shape of memory kernel f on c's device: the cache, the test hooks, or a
 * calibration with the launch's arguments. *sh stays width 0 when the launch cannot be used
 * to calibrate (the caller then runs the base kernel). */
static int mem_shape(struct dev_ctx *c, int f, const struct dev_arg *args, size_t n_args, size_t global, size_t local,
                     struct mem_shape **ret) {
        struct mem_shape *sh = &c->b->mem_shapes[c->index][f];
        *ret = sh;
        if (sh->width)
                return 0;
        unsigned tw = test_mem_hook("GPUVET_TEST_CL_MEM_WIDTH", mem_widths, 3);
        unsigned ts = test_mem_hook("GPUVET_TEST_CL_READ_STREAMS", read_streams, 3);
        if (tw || ts) {
                sh->width = tw ? tw : c->mem_vec;
                sh->streams = mem_kernels[f].streams && ts ? ts : 1;
                mem_note(c, f, sh, "set by a test hook");
                return 0;
        }
        /* Usable only when n is the last argument and no buffer is both read and written. */
        if (n_args == 0 || args[n_args - 1].kind != DEV_ARG_U64)
                return 0;
        for (size_t i = 0; i < n_args; i++)
                for (size_t j = i + 1; j < n_args; j++)
                        if (args[i].kind == DEV_ARG_BUF && args[j].kind == DEV_ARG_BUF &&
                            args[i].v.buf->mem == args[j].v.buf->mem)
                                return 0;
        cl_ulong n = args[n_args - 1].v.u64, cap = CAL_MEM_BYTES / sizeof(float);
        cl_ulong n_cal = n < cap ? n : cap;
        struct {
                cl_kernel k;
                unsigned w, s;
                double ms;
        } cand[MAX_MEM_CANDIDATES];
        size_t nc = 0;
        unsigned nat = c->native_width[FMA_F32];
        for (size_t wi = 0; wi < 3; wi++) {
                unsigned w = mem_widths[wi];
                if (w * 2 < nat || w > nat * 2) /* native / 2, native, 2 x native */
                        continue;
                for (size_t si = 0; si < (mem_kernels[f].streams ? 3u : 1u) && nc < MAX_MEM_CANDIDATES; si++) {
                        char name[32];
                        mem_variant(name, sizeof(name), f, w, read_streams[si]);
                        int r = get_kernel_named(c, name, &cand[nc].k);
                        if (r == 0)
                                r = set_args(c, cand[nc].k, name, args, n_args, &n_cal);
                        if (r < 0)
                                return r;
                        cand[nc].w = w;
                        cand[nc].s = read_streams[si];
                        cand[nc].ms = 0;
                        nc++;
                }
        }
        if (nc == 0) /* no width near the native one: the base kernel */
                return 0;
        for (int round = 0; round <= CAL_MEM_ROUNDS; round++)
                for (size_t i = 0; i < nc; i++) {
                        double ms = 0;
                        int r = time_launch(c, cand[i].k, global, local, &ms);
                        if (r < 0)
                                return r;
                        if (round > 0 && ms > 0 && (cand[i].ms == 0 || ms < cand[i].ms))
                                cand[i].ms = ms;
                }
        size_t best = 0;
        char tried[160] = "";
        size_t len = 0;
        for (size_t i = 0; i < nc; i++) {
                if (cand[i].ms > 0 && (cand[best].ms == 0 || cand[i].ms < cand[best].ms))
                        best = i;
                double gbps = cand[i].ms > 0 ? (double)mem_kernels[f].arrays * (double)n_cal * sizeof(float) /
                                                       (cand[i].ms * 1e6)
                                             : 0;
                if (len < sizeof(tried)) {
                        if (mem_kernels[f].streams) /* width x streams */
                                len += (size_t)snprintf(tried + len, sizeof(tried) - len, " %ux%u:%.0f", cand[i].w,
                                                        cand[i].s, gbps);
                        else
                                len += (size_t)snprintf(tried + len, sizeof(tried) - len, " float%u:%.0f", cand[i].w,
                                                        gbps);
                }
        }
        sh->width = cand[best].w;
        sh->streams = cand[best].s;
        char how[sizeof(tried) + 32];
        snprintf(how, sizeof(how), "calibrated (GB/s%s)", tried);
        mem_note(c, f, sh, how);
        return 0;
}

/* The kernel for memory kernel f's launch on a CPU device: its calibrated variant, or the
 * base kernel where none is chosen. */
static int mem_kernel(struct dev_ctx *c, int f, const struct dev_arg *args, size_t n_args, size_t global,
                      size_t local, cl_kernel *ret) {
        struct mem_shape *sh;
        int r = mem_shape(c, f, args, n_args, global, local, &sh);
        if (r < 0)
                return r;
        if (!sh->width)
                return get_kernel_named(c, mem_kernels[f].kernel, ret);
        char name[32];
        mem_variant(name, sizeof(name), f, sh->width, sh->streams);
        return get_kernel_named(c, name, ret);
}

static int cl_kernel_shape(struct dev_ctx *c, const char *kernel, char *out, size_t size) {
        int f = fma_family(kernel), mf = mem_family(kernel);
        if (f >= 0 && c->cpu_tuning) {
                unsigned w;
                int r = fma_width(c, f, &w);
                if (r < 0)
                        return r;
                snprintf(out, size, "%s", c->b->shapes[c->index][f].note);
        } else if (is_fma(kernel)) {
                snprintf(out, size, "scalar: 8 chains per work item");
        } else if (!strcmp(kernel, "gemm_mnk_f32")) {
                snprintf(out, size, "a 16 x 6 tile of D per work item: 6 float16 accumulators, k in order");
        } else if (!strcmp(kernel, "gemm_f32") || !strcmp(kernel, "gemm_f64")) {
                /* kernels/gpuvet.cl's GEMM_MR_F32 / GEMM_MR_F64 and GEMM_NR */
                bool f64 = kernel[6] == '6';
                snprintf(out, size, "a %u x 6 tile of D per work item: 6 %s%u accumulators, k in order", f64 ? 8 : 16,
                         f64 ? "double" : "float", f64 ? 8 : 16);
        } else if (mf >= 0 && c->cpu_tuning && c->b->mem_shapes[c->index][mf].width) {
                snprintf(out, size, "%s", c->b->mem_shapes[c->index][mf].note);
        } else if (c->cpu_tuning) {
                snprintf(out, size, "float%u, blocks%s%s", c->mem_vec, c->nt_stores ? ", non-temporal stores" : "",
                         mf >= 0 ? ", not calibrated yet (at its first launch)" : "");
        } else {
                snprintf(out, size, "float%u vectors, grid-stride", c->mem_vec);
        }
        return 0;
}

static int cl_launch(struct dev_ctx *c, const char *kernel, size_t global_size, size_t local_size,
                     const struct dev_arg *args, size_t n_args) {
        if (global_size == 0) {
                set_err(c->b, "clEnqueueNDRangeKernel(%s): global size 0", kernel);
                return -EINVAL;
        }
        cl_kernel k;
        size_t factor = 1;
        int mf = c->cpu_tuning ? mem_family(kernel) : -1;
        size_t global = global_size, local = local_size;
        if (local) /* the loops are grid-stride or bounds-checked: rounding up is safe */
                global = (global + local - 1) / local * local;
        int r = mf >= 0 ? mem_kernel(c, mf, args, n_args, global, local, &k) : get_kernel(c, kernel, &k, &factor);
        if (r < 0)
                return r;
        if ((r = set_args(c, k, kernel, args, n_args, NULL)) < 0)
                return r;
        const struct opencl_lib *cl = c->b->cl;
        if (is_fma(kernel)) {
                /* hidden last argument of the FMA kernels: the logical work-item count */
                cl_ulong logical = global_size;
                cl_int rc = cl->clSetKernelArg(k, (cl_uint)n_args, sizeof(logical), &logical);
                if (rc != CL_SUCCESS)
                        return cl_fail(c->b, "clSetKernelArg(fma, logical size)", rc);
                global = (global_size + factor - 1) / factor;
                local = local_size && local_size % factor == 0 ? local_size / factor : 0;
                if (local)
                        global = (global + local - 1) / local * local;
        }
        cl_event ev = NULL;
        cl_int rc = cl->clEnqueueNDRangeKernel(c->q, k, 1, NULL, &global, local ? &local : NULL, 0, NULL, &ev);
        if (rc != CL_SUCCESS) {
                char call[80];
                snprintf(call, sizeof(call), "clEnqueueNDRangeKernel(%s)", kernel);
                return cl_fail(c->b, call, rc);
        }
        track(c, ev);
        return 0;
}

/* -- events ---------------------------------------------------------------------------- */

static int cl_event_create(struct dev_ctx *c, struct dev_event **ret) {
        *ret = calloc(1, sizeof(**ret));
        if (!*ret) {
                set_err(c->b, "out of host memory");
                return -ENOMEM;
        }
        return 0;
}

static void event_clear(struct dev_ctx *c, struct dev_event *e) {
        for (size_t i = 0; i < c->n_waiting; i++)
                if (c->waiting[i] == e) {
                        c->waiting[i] = c->waiting[--c->n_waiting];
                        break;
                }
        for (size_t i = 0; i < c->n_waiting2; i++)
                if (c->waiting2[i] == e) {
                        c->waiting2[i] = c->waiting2[--c->n_waiting2];
                        break;
                }
        if (e->before)
                (void)c->b->cl->clReleaseEvent(e->before);
        if (e->after)
                (void)c->b->cl->clReleaseEvent(e->after);
        e->before = e->after = NULL;
}

static void cl_event_destroy(struct dev_ctx *c, struct dev_event *e) {
        if (!e)
                return;
        event_clear(c, e);
        free(e);
}

static int cl_event_record(struct dev_ctx *c, struct dev_event *e) {
        event_clear(c, e);
        if (c->n_waiting == MAX_WAITING) {
                set_err(c->b, "too many events recorded with no command between them");
                return -ENOSPC;
        }
        if (c->last && c->b->cl->clRetainEvent(c->last) == CL_SUCCESS)
                e->before = c->last;
        c->waiting[c->n_waiting++] = e;
        return 0;
}

static int profile(struct dev_ctx *c, cl_event ev, cl_profiling_info what, cl_ulong *ret) {
        cl_int rc = c->b->cl->clWaitForEvents(1, &ev);
        if (rc != CL_SUCCESS)
                return cl_fail(c->b, "clWaitForEvents", rc);
        rc = c->b->cl->clGetEventProfilingInfo(ev, what, sizeof(*ret), ret, NULL);
        if (rc != CL_SUCCESS)
                return cl_fail(c->b, what == CL_PROFILING_COMMAND_START ? "clGetEventProfilingInfo(START)"
                                                                        : "clGetEventProfilingInfo(END)", rc);
        return 0;
}

static int cl_event_elapsed_ms(struct dev_ctx *c, struct dev_event *start, struct dev_event *end, double *ret) {
        *ret = 0;
        /* Nothing was enqueued between the two records: zero time on the device. */
        if (!start->after || !end->before || start->before == end->before)
                return 0;
        cl_ulong t0 = 0, t1 = 0;
        int r;
        if ((r = profile(c, end->before, CL_PROFILING_COMMAND_END, &t1)) < 0 ||
            (r = profile(c, start->after, CL_PROFILING_COMMAND_START, &t0)) < 0)
                return r;
        if (t1 < t0) {
                set_err(c->b, "clGetEventProfilingInfo: end %llu ns before start %llu ns", (unsigned long long)t1,
                        (unsigned long long)t0);
                return -EIO;
        }
        *ret = (double)(t1 - t0) / 1e6;
        return 0;
}

static int cl_synchronize(struct dev_ctx *c) {
        cl_int rc = c->b->cl->clFinish(c->q);
        if (rc == CL_SUCCESS && c->q2)
                rc = c->b->cl->clFinish(c->q2);
        return rc == CL_SUCCESS ? 0 : cl_fail(c->b, "clFinish", rc);
}

/* -- the second queue (bidirectional transfers) ------------------------------------------ */

/* queue 1: the second in-order, profiling queue on the same context and device, so its
 * commands' timestamps are on the same device clock as the first queue's. */
static int second_queue(struct dev_ctx *c, int queue, const char *call) {
        if (queue != 0 && queue != 1) {
                set_err(c->b, "%s: queue %d (0 or 1)", call, queue);
                return -EINVAL;
        }
        if (queue == 0 || c->q2)
                return 0;
        cl_int rc = 0;
        c->q2 = c->b->cl->clCreateCommandQueue(c->ctx, c->dev, CL_QUEUE_PROFILING_ENABLE, &rc);
        if (!c->q2 || rc != CL_SUCCESS) {
                c->q2 = NULL;
                return cl_fail(c->b, "clCreateCommandQueue (second queue)", rc ? rc : CL_INVALID_VALUE);
        }
        return 0;
}

/* track() for the second queue. */
static void track2(struct dev_ctx *c, cl_event ev) {
        const struct opencl_lib *cl = c->b->cl;
        for (size_t i = 0; i < c->n_waiting2; i++)
                if (cl->clRetainEvent(ev) == CL_SUCCESS)
                        c->waiting2[i]->after = ev;
        c->n_waiting2 = 0;
        if (c->last2)
                (void)cl->clReleaseEvent(c->last2);
        c->last2 = ev;
}

static int cl_copy_h2d_on(struct dev_ctx *c, int queue, struct dev_buf *dst, size_t dst_off, const void *src,
                          size_t bytes) {
        int r = second_queue(c, queue, "clEnqueueWriteBuffer");
        if (r < 0 || queue == 0)
                return r < 0 ? r : cl_copy_h2d(c, dst, dst_off, src, bytes);
        if ((r = check_range(c, "clEnqueueWriteBuffer", dst, dst_off, bytes)) < 0)
                return r;
        cl_event ev = NULL;
        cl_int rc = c->b->cl->clEnqueueWriteBuffer(c->q2, dst->mem, CL_FALSE, dst_off, bytes, src, 0, NULL, &ev);
        if (rc != CL_SUCCESS)
                return cl_fail(c->b, "clEnqueueWriteBuffer", rc);
        track2(c, ev);
        return 0;
}

static int cl_copy_d2h_on(struct dev_ctx *c, int queue, void *dst, struct dev_buf *src, size_t src_off,
                          size_t bytes) {
        int r = second_queue(c, queue, "clEnqueueReadBuffer");
        if (r < 0 || queue == 0)
                return r < 0 ? r : cl_copy_d2h(c, dst, src, src_off, bytes);
        if ((r = check_range(c, "clEnqueueReadBuffer", src, src_off, bytes)) < 0)
                return r;
        cl_event ev = NULL;
        cl_int rc = c->b->cl->clEnqueueReadBuffer(c->q2, src->mem, CL_FALSE, src_off, bytes, dst, 0, NULL, &ev);
        if (rc != CL_SUCCESS)
                return cl_fail(c->b, "clEnqueueReadBuffer", rc);
        track2(c, ev);
        return 0;
}

static int cl_event_record_on(struct dev_ctx *c, int queue, struct dev_event *e) {
        int r = second_queue(c, queue, "event_record_on");
        if (r < 0 || queue == 0)
                return r < 0 ? r : cl_event_record(c, e);
        event_clear(c, e);
        if (c->n_waiting2 == MAX_WAITING) {
                set_err(c->b, "too many events recorded with no command between them");
                return -ENOSPC;
        }
        if (c->last2 && c->b->cl->clRetainEvent(c->last2) == CL_SUCCESS)
                e->before = c->last2;
        c->waiting2[c->n_waiting2++] = e;
        return 0;
}

/* As cl_event_elapsed_ms, over pairs: START of the first command after each start event,
 * END of the last command before each end event; both queues' timestamps come from the
 * one device. */
static int cl_event_span_ms(struct dev_ctx *c, struct dev_event *const *starts, struct dev_event *const *ends,
                            size_t n, double *ret) {
        *ret = 0;
        cl_ulong t0 = 0, t1 = 0;
        bool any = false;
        for (size_t i = 0; i < n; i++) {
                const struct dev_event *s = starts[i], *e = ends[i];
                if (!s->after || !e->before || s->before == e->before)
                        continue; /* nothing ran between them */
                cl_ulong a = 0, z = 0;
                int r;
                if ((r = profile(c, e->before, CL_PROFILING_COMMAND_END, &z)) < 0 ||
                    (r = profile(c, s->after, CL_PROFILING_COMMAND_START, &a)) < 0)
                        return r;
                if (!any || a < t0)
                        t0 = a;
                if (!any || z > t1)
                        t1 = z;
                any = true;
        }
        if (!any)
                return 0;
        if (t1 < t0) {
                set_err(c->b, "clGetEventProfilingInfo: end %llu ns before start %llu ns", (unsigned long long)t1,
                        (unsigned long long)t0);
                return -EIO;
        }
        *ret = (double)(t1 - t0) / 1e6;
        return 0;
}

static const char *cl_last_error(struct dev_backend *b) { return b ? b->err : "OpenCL backend not loaded"; }

const struct dev_ops dev_ops_opencl = {
        .name = "opencl",
        .kind = DEV_OPENCL,
        .open = cl_open,
        .close = cl_close,
        .count = cl_count,
        .info = cl_info,
        .ctx_open = cl_ctx_open,
        .ctx_close = cl_ctx_close,
        .alloc = cl_alloc,
        .free = cl_free,
        .mem_info = cl_mem_info,
        .host_alloc = cl_host_alloc,
        .host_free = cl_host_free,
        .copy_h2d = cl_copy_h2d,
        .copy_d2h = cl_copy_d2h,
        .copy_d2d = cl_copy_d2d,
        .p2p_enable = cl_p2p_enable,
        .copy_peer = cl_copy_peer,
        .memset = cl_memset,
        .launch = cl_launch,
        .event_create = cl_event_create,
        .event_destroy = cl_event_destroy,
        .event_record = cl_event_record,
        .event_elapsed_ms = cl_event_elapsed_ms,
        .synchronize = cl_synchronize,
        .copy_h2d_on = cl_copy_h2d_on,
        .copy_d2h_on = cl_copy_d2h_on,
        .event_record_on = cl_event_record_on,
        .event_span_ms = cl_event_span_ms,
        .kernel_shape = cl_kernel_shape,
        .last_error = cl_last_error,
};

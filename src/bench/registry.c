#include "bench/bench.h"
#include "core/array.h"

#include <string.h>

/* bench.def read twice, so that all's benchmarks come first whatever its order. */
const struct bench_info *const bench_registry[] = {
#define BENCH(name) &bench_##name,
#define BENCH_COMMAND(name)
#include "bench/bench.def"
#undef BENCH_COMMAND
#undef BENCH
#define BENCH(name)
#define BENCH_COMMAND(name) &bench_##name,
#include "bench/bench.def"
#undef BENCH_COMMAND
#undef BENCH
};

const size_t bench_registry_count = ARRAY_COUNT(bench_registry);

const size_t bench_all_count = 0
#define BENCH(name) +1
#define BENCH_COMMAND(name)
#include "bench/bench.def"
#undef BENCH_COMMAND
#undef BENCH
        ;

const struct bench_info *bench_find(const char *name) {
        for (size_t i = 0; i < bench_all_count; i++)
                if (strcmp(bench_registry[i]->name, name) == 0)
                        return bench_registry[i];
        return NULL;
}

/* The backends: src/bindings/cuda_device.c and src/bindings/opencl_device.c, both always built (without nvcc
 * the CUDA one carries no kernels and says so when opened, cuda_nokernels.c), so plain
 * references: a missing backend is a link error, never a silent NULL. */
const struct dev_ops *dev_ops_by_name(const char *name) {
        if (strcmp(name, "cuda") == 0)
                return &dev_ops_cuda;
        if (strcmp(name, "opencl") == 0)
                return &dev_ops_opencl;
        return NULL;
}

bool bench_only(const struct bench_ctx *ctx, const char *part) {
        return ctx->opt && ctx->opt->only && strcmp(ctx->opt->only, part) == 0;
}

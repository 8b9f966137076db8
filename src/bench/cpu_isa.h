/* Which SIMD extensions the host CPU and its OS offer, for the host benchmarks' kernels.
 * Detected with cpuid and xgetbv when asked, rather than through __builtin_cpu_supports:
 * that links libgcc's constructor, which runs a dozen cpuid instructions (each a VM exit
 * in a guest) at the start-up of every command. */
#pragma once

#include <stdbool.h>

struct cpu_isa {
        bool avx2;
        bool fma;
        bool avx512f;
};

/* All false off x86-64. */
void cpu_isa_detect(struct cpu_isa *ret);

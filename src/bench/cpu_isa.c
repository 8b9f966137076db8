/* cpuid and XCR0 (cpu_isa.h). */
#include "bench/cpu_isa.h"

#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>

/* XCR0: which register states the OS saves on a context switch. */
static unsigned long long xcr0(void) {
        unsigned int lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        return ((unsigned long long)hi << 32) | lo;
}
#endif

void cpu_isa_detect(struct cpu_isa *ret) {
        memset(ret, 0, sizeof(*ret));
#if defined(__x86_64__)
        unsigned int eax, ebx, ecx, edx;
        if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & bit_OSXSAVE))
                return;
        unsigned long long x = xcr0();
        bool ymm = (x & 0x6) == 0x6;          /* SSE and AVX state */
        bool zmm = ymm && (x & 0xe0) == 0xe0; /* opmask, ZMM_Hi256, Hi16_ZMM */
        bool avx = ymm && (ecx & bit_AVX);
        ret->fma = avx && (ecx & bit_FMA);
        if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
                return;
        ret->avx2 = avx && (ebx & bit_AVX2);
        ret->avx512f = zmm && (ebx & bit_AVX512F);
#endif
}

/* The GPU memory test of `gpuvet burn --mode memtest` (issue 14; docs/burn.md, "memtest"):
 * pattern tests over most of a device's free memory, written and checked on the device by
 * the memtest kernels of src/bench/kernels.def, through any backend of bench/device.h.
 *
 * The region is allocated as chunks (a single allocation is limited by
 * dev_info.max_alloc_bytes, and smaller pieces are easier to find in a fragmented heap); the
 * patterns are functions of a word's index in the whole region, and faults are reported by
 * their byte offset from its start. Only the error counter and a small log of the first
 * mismatches come back to the host, never the region. Nothing here prints. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "bench/device.h"

/* Faults kept with their place and bits, per run (more are counted in errors). Also the
 * size of the device-side log read back after each verify launch. */
#define MEMTEST_MAX_FAULTS 64

/* The patterns, in the order a pass runs them. */
enum memtest_pattern {
        MEMTEST_WALKING_ONES,
        MEMTEST_WALKING_ZEROS,
        MEMTEST_MOVING_INVERSIONS,
        MEMTEST_RANDOM,
        MEMTEST_ADDRESS,
        MEMTEST_PATTERN_COUNT,
        MEMTEST_PATTERN_INVALID = -1,
};

#define MEMTEST_PATTERN_BIT(p) (1u << (p))
#define MEMTEST_ALL_PATTERNS ((1u << MEMTEST_PATTERN_COUNT) - 1)

/* Defaults (docs/burn.md): on a GPU whose driver tells free memory (CUDA), this fraction of
 * it; elsewhere (OpenCL, which does not tell; CPU devices, whose memory is the host's)
 * min(MEMTEST_SMALL_DEFAULT_BYTES, fraction x the device's total). */
#define MEMTEST_DEFAULT_FRACTION 0.9
#define MEMTEST_SMALL_DEFAULT_BYTES (256ull << 20)
/* The largest chunk: also the most one launch covers, so the 32-bit device error counter
 * cannot wrap within a launch (2^28 words) and a stop request waits for at most one
 * chunk's sweep (~1 ms on an H100, ~0.2 s at 10 GB/s). */
#define MEMTEST_MAX_CHUNK_BYTES (2ull << 30)

struct memtest_progress {
        enum memtest_pattern pattern;
        const char *pattern_name;
        unsigned pass;          /* from 1 */
        unsigned sweep, sweeps; /* this sweep of the pattern's pass (from 1) and how many it has */
        uint64_t bytes_done;    /* of this sweep */
        uint64_t region_bytes;
        uint64_t errors;        /* so far, all patterns */
        double seconds;         /* since memtest_run started */
};

struct memtest_options {
        uint64_t bytes;   /* the region; 0: the default above */
        double fraction;  /* of free memory for the default region; 0: MEMTEST_DEFAULT_FRACTION */
        uint64_t seed;    /* the random pattern's seed; 0: one is chosen (memtest_result.seed) */
        unsigned patterns; /* MEMTEST_PATTERN_BIT set; 0: all */
        unsigned passes;  /* 0: 1. With stop, UINT_MAX runs until stopped */
        /* Asked after every launch; true stops the run (ret->stopped) within one chunk's sweep. */
        bool (*stop)(void *ctx);
        void *stop_ctx;
        /* Called after every launch. */
        void (*progress)(void *ctx, const struct memtest_progress *p);
        void *progress_ctx;
};

struct memtest_fault {
        uint64_t offset;           /* bytes from the start of the tested region (a word's first byte) */
        uint64_t expected, actual; /* the 64-bit word; expected ^ actual: the bits that failed */
        enum memtest_pattern pattern;
        unsigned pass;             /* from 1 */
};

struct memtest_pattern_result {
        unsigned passes;      /* completed */
        uint64_t errors;      /* mismatching words counted */
        double seconds;       /* wall time, launches and their synchronisation included */
        double bytes_moved;   /* bytes read + written */
        double gbps;          /* bytes_moved / seconds / 1e9; 0 when nothing ran */
};

struct memtest_result {
        uint64_t bytes_tested;  /* the region */
        uint64_t chunk_bytes;   /* each chunk but the last */
        unsigned chunks;
        uint64_t seed;          /* the random pattern's seed, given or chosen: print it */
        uint64_t words_checked; /* word comparisons made on the device */
        uint64_t errors;        /* mismatching words, every pattern and pass */
        struct memtest_fault faults[MEMTEST_MAX_FAULTS]; /* the first ones, by launch then offset */
        unsigned n_faults;
        double seconds;
        bool stopped;           /* the stop callback ended the run early */
        struct memtest_pattern_result patterns[MEMTEST_PATTERN_COUNT];
        char error[256];        /* when memtest_run returns < 0: the step and the backend's message */
};

/* Run the selected patterns for o->passes passes over a region of ctx's device (info: that
 * device's dev_info; b: the backend, for its error messages).
 * Returns 0 when the test ran, whatever it found (ret->errors, ret->faults) and also when
 * stopped; -EINVAL for bad options (a region under one word, a fraction outside (0, 1],
 * unknown pattern bits); another negative errno when the device failed, with ret->error
 * naming the step and the vendor call ("allocating chunk 2 of 3 (2147483648 bytes):
 * cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY ..."). Everything allocated is freed on every
 * path. */
int memtest_run(const struct dev_ops *ops, struct dev_backend *b, struct dev_ctx *ctx, const struct dev_info *info,
                const struct memtest_options *o, struct memtest_result *ret);

/* The region memtest_run would test with o on this device (the default rules above), in
 * bytes, a whole number of words; -ENOTSUP-free: a device whose free memory is unknown
 * gets the small default. Negative errno when mem_info fails on a device that has it. */
int64_t memtest_region_bytes(const struct dev_ops *ops, struct dev_ctx *ctx, const struct dev_info *info,
                             const struct memtest_options *o);

/* "walking_ones", "walking_zeros", "moving_inversions", "random", "address"; NULL when out
 * of range. */
const char *memtest_pattern_name(enum memtest_pattern p);
/* The pattern of that name; MEMTEST_PATTERN_INVALID otherwise. */
enum memtest_pattern memtest_pattern_by_name(const char *name);

/* The GPU memory test (memtest.h; docs/burn.md, "memtest").
 *
 * A pass runs each selected pattern as sweeps over the whole region, chunk by chunk, one
 * launch per chunk:
 *   walking ones    write rotl(1 << k, w mod 64), verify               k = (pass - 1) mod 64
 *   walking zeros   the same with ~(1 << k)
 *   moving inv.     write p; ascending check p / write ~p; descending check ~p / write p;
 *                   verify p                  p = 0 on odd passes, 0x5555... on even ones
 *   random          write splitmix64(seed_pass, w), verify        seed_pass from seed, pass
 *   address         write w, verify; write ~w, verify
 * (w: the word's index in the region.) After every launch the host waits for it, asks the
 * stop callback and reports progress; after a verify launch it reads the 8-byte counter
 * and, when it is not zero, the log of the first mismatches, then zeroes the counter. A
 * chunk is at most 2 GiB, so that wait costs ~2-5% on an H100 (a launch sweeps 2 GiB in
 * ~0.7 ms, a synchronise and an 8-byte copy take 20-40 us) and keeps every count exact. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "burn/memtest.h"
#include "core/deadline.h"
#include "core/name_table.h"

#define WORD_BYTES 8u
/* Chunks are cut at multiples of this (whole 16-byte pairs for the CUDA kernels' vector
 * accesses, and page-sized pieces for the allocator). */
#define CHUNK_ALIGN 4096u
#define LOCAL_SIZE 256u
#define ITEMS_PER_UNIT 2048u

static const char *const pattern_names[MEMTEST_PATTERN_COUNT] = {
        [MEMTEST_WALKING_ONES] = "walking_ones",
        [MEMTEST_WALKING_ZEROS] = "walking_zeros",
        [MEMTEST_MOVING_INVERSIONS] = "moving_inversions",
        [MEMTEST_RANDOM] = "random",
        [MEMTEST_ADDRESS] = "address",
};

const char *memtest_pattern_name(enum memtest_pattern p) {
        return name_table_name(pattern_names, MEMTEST_PATTERN_COUNT, (int)p);
}

enum memtest_pattern memtest_pattern_by_name(const char *name) {
        int p = name_table_value(pattern_names, MEMTEST_PATTERN_COUNT, name);
        return p < 0 ? MEMTEST_PATTERN_INVALID : (enum memtest_pattern)p;
}

/* splitmix64's step: the host side of the seeds (a pass's seed; a chosen seed). */
static uint64_t splitmix64(uint64_t x) {
        uint64_t z = x + 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
}

struct chunk {
        struct dev_buf *buf;
        uint64_t words;
        uint64_t first_word; /* its first word's index in the region */
};

struct run {
        const struct dev_ops *ops;
        struct dev_backend *b;
        struct dev_ctx *ctx;
        const struct memtest_options *o;
        struct memtest_result *ret;
        struct chunk *chunks;
        unsigned n_chunks;
        struct dev_buf *errors; /* uint32 [2]: mismatches, log slots claimed */
        struct dev_buf *log;    /* uint64 [3 x MEMTEST_MAX_FAULTS] */
        size_t global_size;
        double t0_ms;
        /* what the launches are part of, for progress and faults */
        enum memtest_pattern pattern;
        unsigned pass, sweep, sweeps;
};

/* ret->error = "what: backend message"; returns r. */
static int fail(struct run *r, int rc, const char *what) {
        snprintf(r->ret->error, sizeof(r->ret->error), "%s: %s", what, r->ops->last_error(r->b));
        return rc;
}

int64_t memtest_region_bytes(const struct dev_ops *ops, struct dev_ctx *ctx, const struct dev_info *info,
                             const struct memtest_options *o) {
        uint64_t bytes = o->bytes;
        double fraction = o->fraction > 0 ? o->fraction : MEMTEST_DEFAULT_FRACTION;
        if (!bytes) {
                uint64_t free_bytes = 0, total_bytes = 0;
                int r = info->is_cpu || !ops->mem_info ? -ENOTSUP : ops->mem_info(ctx, &free_bytes, &total_bytes);
                if (r < 0 && r != -ENOTSUP)
                        return r;
                if (r == 0) {
                        bytes = (uint64_t)((double)free_bytes * fraction);
                } else {
                        /* No free figure, or host memory: small, and never most of the total. */
                        uint64_t part = (uint64_t)((double)info->global_mem_bytes * fraction);
                        bytes = part < MEMTEST_SMALL_DEFAULT_BYTES ? part : MEMTEST_SMALL_DEFAULT_BYTES;
                }
        }
        bytes -= bytes % WORD_BYTES;
        return bytes > INT64_MAX ? INT64_MAX - INT64_MAX % WORD_BYTES : (int64_t)bytes;
}

/* Work items for a launch over chunk c: the device's fill, fewer for a small chunk. */
static size_t launch_size(const struct run *r, const struct chunk *c) {
        if (r->global_size <= c->words)
                return r->global_size;
        return (size_t)((c->words + LOCAL_SIZE - 1) / LOCAL_SIZE * LOCAL_SIZE);
}

static void free_all(struct run *r) {
        for (unsigned i = 0; i < r->n_chunks; i++)
                r->ops->free(r->ctx, r->chunks[i].buf);
        free(r->chunks);
        r->chunks = NULL;
        r->n_chunks = 0;
        r->ops->free(r->ctx, r->errors);
        r->ops->free(r->ctx, r->log);
        r->errors = r->log = NULL;
}

/* Chunks first, so that they are the device's allocations 1 .. n in order (the fake
 * libcuda's FAKE_CUDA_MEM_FAULT counts allocations), then the counter and the log. */
static int allocate(struct run *r, uint64_t region, uint64_t max_alloc) {
        uint64_t chunk = MEMTEST_MAX_CHUNK_BYTES;
        if (max_alloc && max_alloc < chunk)
                chunk = max_alloc;
        if (chunk > region)
                chunk = region;
        chunk -= chunk % (chunk >= CHUNK_ALIGN ? CHUNK_ALIGN : WORD_BYTES);
        if (chunk < WORD_BYTES) {
                snprintf(r->ret->error, sizeof(r->ret->error),
                         "the device allows allocations of %" PRIu64 " bytes, less than one 8-byte word", max_alloc);
                return -EINVAL;
        }
        uint64_t n = region / chunk + (region % chunk != 0);
        if (n > 1u << 20) {
                snprintf(r->ret->error, sizeof(r->ret->error), "%" PRIu64 " chunks of %" PRIu64 " bytes: too many", n,
                         chunk);
                return -EINVAL;
        }
        r->chunks = calloc((size_t)n, sizeof(*r->chunks));
        if (!r->chunks) {
                snprintf(r->ret->error, sizeof(r->ret->error), "out of host memory for %" PRIu64 " chunks", n);
                return -ENOMEM;
        }
        r->ret->chunk_bytes = chunk;
        r->ret->chunks = (unsigned)n;
        for (uint64_t i = 0, off = 0; i < n; i++, off += chunk) {
                uint64_t bytes = region - off < chunk ? region - off : chunk;
                int rc = r->ops->alloc(r->ctx, (size_t)bytes, &r->chunks[i].buf);
                if (rc < 0) {
                        char what[96];
                        snprintf(what, sizeof(what), "allocating chunk %" PRIu64 " of %" PRIu64 " (%" PRIu64 " bytes)",
                                 i + 1, n, bytes);
                        return fail(r, rc, what);
                }
                r->n_chunks++;
                r->chunks[i].words = bytes / WORD_BYTES;
                r->chunks[i].first_word = off / WORD_BYTES;
        }
        int rc;
        if ((rc = r->ops->alloc(r->ctx, 2 * sizeof(uint32_t), &r->errors)) < 0)
                return fail(r, rc, "allocating the error counter");
        if ((rc = r->ops->alloc(r->ctx, 3 * sizeof(uint64_t) * MEMTEST_MAX_FAULTS, &r->log)) < 0)
                return fail(r, rc, "allocating the error log");
        if ((rc = r->ops->memset(r->ctx, r->errors, 0, 2 * sizeof(uint32_t))) < 0 ||
            (rc = r->ops->synchronize(r->ctx)) < 0)
                return fail(r, rc, "zeroing the error counter");
        /* One untimed write of the whole region before any pattern: OpenCL allocates lazily
         * (running out of memory may only show here), both backends build or load their
         * kernels at the first launch, and a host-memory device (PoCL) faults its pages in at
         * the first touch. None of that belongs to the first pattern's time. */
        for (unsigned i = 0; i < r->n_chunks; i++) {
                struct dev_arg args[4] = {
                        {.kind = DEV_ARG_BUF, .v.buf = r->chunks[i].buf},
                        {.kind = DEV_ARG_U64, .v.u64 = r->chunks[i].words},
                        {.kind = DEV_ARG_U64, .v.u64 = r->chunks[i].first_word},
                        {.kind = DEV_ARG_U64, .v.u64 = 0},
                };
                if ((rc = r->ops->launch(r->ctx, "memtest_const_write", launch_size(r, &r->chunks[i]), LOCAL_SIZE,
                                         args, 4)) < 0 ||
                    (rc = r->ops->synchronize(r->ctx)) < 0) {
                        char what[80];
                        snprintf(what, sizeof(what), "writing chunk %u for the first time", i + 1);
                        return fail(r, rc, what);
                }
        }
        return 0;
}

static int cmp_record(const void *a, const void *b) {
        uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
        return x < y ? -1 : x > y;
}

/* After a verify launch: read the counter; on mismatches, the log, then zero the counter. */
static int collect(struct run *r) {
        struct memtest_result *ret = r->ret;
        uint32_t counts[2];
        int rc;
        if ((rc = r->ops->copy_d2h(r->ctx, counts, r->errors, 0, sizeof(counts))) < 0 ||
            (rc = r->ops->synchronize(r->ctx)) < 0)
                return fail(r, rc, "reading the error counter");
        if (counts[0] == 0)
                return 0;
        ret->errors += counts[0];
        ret->patterns[r->pattern].errors += counts[0];
        uint32_t logged = counts[1] < MEMTEST_MAX_FAULTS ? counts[1] : MEMTEST_MAX_FAULTS;
        if (logged > counts[0]) /* never on a sound device: each logged word was counted */
                logged = counts[0];
        uint64_t records[3 * MEMTEST_MAX_FAULTS];
        if (logged && ret->n_faults < MEMTEST_MAX_FAULTS) {
                if ((rc = r->ops->copy_d2h(r->ctx, records, r->log, 0, logged * 3 * sizeof(uint64_t))) < 0 ||
                    (rc = r->ops->synchronize(r->ctx)) < 0)
                        return fail(r, rc, "reading the error log");
                /* The device logs in the order its threads got there: sorted, a report reads
                 * the same from run to run. */
                qsort(records, logged, 3 * sizeof(uint64_t), cmp_record);
                for (uint32_t i = 0; i < logged && ret->n_faults < MEMTEST_MAX_FAULTS; i++) {
                        struct memtest_fault *f = &ret->faults[ret->n_faults++];
                        f->offset = records[3 * i] * WORD_BYTES;
                        f->expected = records[3 * i + 1];
                        f->actual = records[3 * i + 2];
                        f->pattern = r->pattern;
                        f->pass = r->pass;
                }
        }
        if ((rc = r->ops->memset(r->ctx, r->errors, 0, 2 * sizeof(uint32_t))) < 0)
                return fail(r, rc, "zeroing the error counter");
        return 0;
}

enum sweep_kind { SWEEP_WRITE, SWEEP_VERIFY, SWEEP_INVERT_UP, SWEEP_INVERT_DOWN };

/* One sweep of kernel over the region, chunk by chunk (top down for SWEEP_INVERT_DOWN).
 * Returns 0, 1 when stopped, or a negative errno. */
static int sweep(struct run *r, const char *kernel, enum sweep_kind kind, uint64_t param) {
        struct memtest_result *ret = r->ret;
        struct memtest_pattern_result *pr = &ret->patterns[r->pattern];
        bool checks = kind != SWEEP_WRITE;
        uint64_t done = 0;
        r->sweep++;
        for (unsigned k = 0; k < r->n_chunks; k++) {
                const struct chunk *c = &r->chunks[kind == SWEEP_INVERT_DOWN ? r->n_chunks - 1 - k : k];
                size_t global = launch_size(r, c);
                struct dev_arg args[7] = {
                        {.kind = DEV_ARG_BUF, .v.buf = c->buf},      {.kind = DEV_ARG_U64, .v.u64 = c->words},
                        {.kind = DEV_ARG_U64, .v.u64 = c->first_word}, {.kind = DEV_ARG_U64, .v.u64 = param},
                        {.kind = DEV_ARG_BUF, .v.buf = r->errors},   {.kind = DEV_ARG_BUF, .v.buf = r->log},
                        {.kind = DEV_ARG_U32, .v.u32 = MEMTEST_MAX_FAULTS},
                };
                double t0 = monotonic_ms();
                int rc = r->ops->launch(r->ctx, kernel, global, LOCAL_SIZE, args, checks ? 7 : 4);
                if (rc < 0) {
                        char what[96];
                        snprintf(what, sizeof(what), "launching %s on chunk %u", kernel, k + 1);
                        return fail(r, rc, what);
                }
                if (checks) {
                        if ((rc = collect(r)) < 0)
                                return rc;
                } else if ((rc = r->ops->synchronize(r->ctx)) < 0) {
                        char what[96];
                        snprintf(what, sizeof(what), "waiting for %s on chunk %u", kernel, k + 1);
                        return fail(r, rc, what);
                }
                uint64_t bytes = c->words * WORD_BYTES;
                pr->seconds += (monotonic_ms() - t0) / 1e3;
                pr->bytes_moved += (double)bytes * (kind == SWEEP_INVERT_UP || kind == SWEEP_INVERT_DOWN ? 2 : 1);
                if (checks)
                        ret->words_checked += c->words;
                done += bytes;
                if (r->o->progress) {
                        struct memtest_progress p = {
                                .pattern = r->pattern,
                                .pattern_name = pattern_names[r->pattern],
                                .pass = r->pass,
                                .sweep = r->sweep,
                                .sweeps = r->sweeps,
                                .bytes_done = done,
                                .region_bytes = ret->bytes_tested,
                                .errors = ret->errors,
                                .seconds = (monotonic_ms() - r->t0_ms) / 1e3,
                        };
                        r->o->progress(r->o->progress_ctx, &p);
                }
                if (r->o->stop && r->o->stop(r->o->stop_ctx)) {
                        ret->stopped = true;
                        return 1;
                }
        }
        return 0;
}

#define SWEEP(kernel, kind, param)                                    \
        do {                                                          \
                int rc_ = sweep(r, (kernel), (kind), (param));        \
                if (rc_ != 0)                                         \
                        return rc_;                                   \
        } while (0)

/* One pass of one pattern; 0, 1 when stopped, or a negative errno. */
static int run_pattern(struct run *r, enum memtest_pattern p, unsigned pass) {
        static const uint64_t inversion_patterns[] = {0, 0x5555555555555555ull};
        r->pattern = p;
        r->pass = pass;
        r->sweep = 0;
        uint64_t bit = 1ull << ((pass - 1) % 64);
        switch (p) {
        case MEMTEST_WALKING_ONES:
        case MEMTEST_WALKING_ZEROS: {
                uint64_t param = p == MEMTEST_WALKING_ONES ? bit : ~bit;
                r->sweeps = 2;
                SWEEP("memtest_walk_write", SWEEP_WRITE, param);
                SWEEP("memtest_walk_verify", SWEEP_VERIFY, param);
                break;
        }
        case MEMTEST_MOVING_INVERSIONS: {
                uint64_t q = inversion_patterns[(pass - 1) % 2];
                r->sweeps = 4;
                SWEEP("memtest_const_write", SWEEP_WRITE, q);
                SWEEP("memtest_invert_up", SWEEP_INVERT_UP, q);
                SWEEP("memtest_invert_down", SWEEP_INVERT_DOWN, ~q);
                SWEEP("memtest_const_verify", SWEEP_VERIFY, q);
                break;
        }
        case MEMTEST_RANDOM: {
                uint64_t seed = splitmix64(r->ret->seed ^ splitmix64(pass));
                r->sweeps = 2;
                SWEEP("memtest_random_write", SWEEP_WRITE, seed);
                SWEEP("memtest_random_verify", SWEEP_VERIFY, seed);
                break;
        }
        case MEMTEST_ADDRESS:
                r->sweeps = 4;
                SWEEP("memtest_address_write", SWEEP_WRITE, 0);
                SWEEP("memtest_address_verify", SWEEP_VERIFY, 0);
                SWEEP("memtest_address_write", SWEEP_WRITE, ~0ull);
                SWEEP("memtest_address_verify", SWEEP_VERIFY, ~0ull);
                break;
        default:
                return -EINVAL;
        }
        r->ret->patterns[p].passes++;
        return 0;
}

/* A seed when none is given: time and pid through splitmix64, never 0 (0 asks for one). */
static uint64_t choose_seed(void) {
        struct timespec ts;
        (void)clock_gettime(CLOCK_REALTIME, &ts); /* cannot fail with this clock, ignoring */
        uint64_t s = splitmix64((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) ^ (uint64_t)getpid();
        return s ? s : 1;
}

int memtest_run(const struct dev_ops *ops, struct dev_backend *b, struct dev_ctx *ctx, const struct dev_info *info,
                const struct memtest_options *o, struct memtest_result *ret) {
        memset(ret, 0, sizeof(*ret));
        if (!ops || !ctx || !info || !o) {
                snprintf(ret->error, sizeof(ret->error), "memtest_run: no device or no options");
                return -EINVAL;
        }
        if (o->fraction < 0 || o->fraction > 1) {
                snprintf(ret->error, sizeof(ret->error), "fraction %g is outside (0, 1]", o->fraction);
                return -EINVAL;
        }
        if (o->patterns & ~MEMTEST_ALL_PATTERNS) {
                snprintf(ret->error, sizeof(ret->error), "unknown pattern bits 0x%x", o->patterns & ~MEMTEST_ALL_PATTERNS);
                return -EINVAL;
        }
        struct run run = {.ops = ops, .b = b, .ctx = ctx, .o = o, .ret = ret, .t0_ms = monotonic_ms()};
        struct run *r = &run;
        int64_t region = memtest_region_bytes(ops, ctx, info, o);
        if (region < 0)
                return fail(r, (int)region, "reading the free device memory");
        if ((uint64_t)region < WORD_BYTES) {
                snprintf(ret->error, sizeof(ret->error), "a region of %" PRId64 " bytes holds no 8-byte word", region);
                return -EINVAL;
        }
        ret->bytes_tested = (uint64_t)region;
        ret->seed = o->seed ? o->seed : choose_seed();
        size_t units = info->compute_units ? info->compute_units : 1;
        r->global_size = units * ITEMS_PER_UNIT;
        int rc = allocate(r, (uint64_t)region, info->max_alloc_bytes);
        unsigned patterns = o->patterns ? o->patterns : MEMTEST_ALL_PATTERNS;
        unsigned passes = o->passes ? o->passes : 1;
        for (unsigned done = 0; rc == 0 && done < passes; done++)
                for (int p = 0; rc == 0 && p < MEMTEST_PATTERN_COUNT; p++)
                        if (patterns & MEMTEST_PATTERN_BIT(p))
                                rc = run_pattern(r, (enum memtest_pattern)p, done + 1);
        free_all(r);
        ret->seconds = (monotonic_ms() - r->t0_ms) / 1e3;
        for (int p = 0; p < MEMTEST_PATTERN_COUNT; p++) {
                struct memtest_pattern_result *pr = &ret->patterns[p];
                pr->gbps = pr->seconds > 0 ? pr->bytes_moved / pr->seconds / 1e9 : 0;
        }
        return rc < 0 ? rc : 0;
}

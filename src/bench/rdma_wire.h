/* The handshake of `gpuvet bench rdma`: what the two gpuvet processes tell each other over
 * their TCP connection, as perftest's ib_write_bw exchanges its connection data before the
 * RDMA test (docs/bench.md, "rdma"). Text lines, one message each, so that a capture reads
 * as it is:
 *
 *   GPUVET-RDMA/1 hello lid=1 qpn=4660 psn=1193046 rkey=4660 addr=0x7f... bytes=16777216
 *          gid=fe80000000000000...(32 hex) mtu=4096 ll=ib tests=7 min=2 max=8388608 iters=1000
 *          lat_iters=1000 depth=128 mem=host
 *   GPUVET-RDMA/1 step write_bw 65536
 *   GPUVET-RDMA/1 ready | done write_bw 65536 1000 | verified write_bw 65536 |
 *          corrupt write_bw 65536 4096 | end | error TEXT
 *
 * The client's hello carries the plan (tests, sizes, iterations, depth); the server's
 * repeats its own connection data and echoes the plan it accepted. Everything received is
 * untrusted: the parsers are pure functions over (buf, len), range-check every value and
 * never read past len (fuzzed: tests/fuzz/fuzz_rdma_wire.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RDMA_WIRE_MAGIC "GPUVET-RDMA/1"
#define RDMA_WIRE_LINE_MAX 512
/* The largest message size and buffer the plan may ask for: 1 GiB. */
#define RDMA_WIRE_MAX_BYTES ((uint64_t)1 << 30)

enum rdma_test {
        RDMA_TEST_WRITE_BW,
        RDMA_TEST_READ_BW,
        RDMA_TEST_WRITE_LAT,
        RDMA_TEST_COUNT,
        RDMA_TEST_INVALID = -1,
};
const char *rdma_test_name(enum rdma_test t); /* "write_bw", "read_bw", "write_lat" */
enum rdma_test rdma_test_from_name(const char *s, size_t len);

struct rdma_plan {
        unsigned tests;      /* bit (1 << enum rdma_test) */
        uint64_t min_bytes;  /* the sweep: powers of two from min to max (both included) */
        uint64_t max_bytes;
        unsigned iters;      /* bandwidth tests' messages per size */
        unsigned lat_iters;  /* latency round trips per size */
        unsigned tx_depth;   /* bandwidth tests' work requests in flight */
};

struct rdma_hello {
        uint16_t lid;
        uint32_t qpn, psn, rkey; /* qpn, psn: 24 bits */
        uint64_t addr, buf_bytes;
        uint8_t gid[16];
        unsigned mtu;         /* 256..4096 */
        bool ethernet;        /* ll=eth (RoCE), else ll=ib */
        bool gpu_memory;      /* mem=gpu */
        struct rdma_plan plan;
};

enum rdma_ctl_verb {
        RDMA_CTL_STEP,     /* test size */
        RDMA_CTL_READY,
        RDMA_CTL_DONE,     /* test size count */
        RDMA_CTL_VERIFIED, /* test size */
        RDMA_CTL_CORRUPT,  /* test size offset (count) */
        RDMA_CTL_END,
        RDMA_CTL_ERROR,    /* text */
        RDMA_CTL_COUNT,
};

struct rdma_ctl {
        enum rdma_ctl_verb verb;
        enum rdma_test test;
        uint64_t size;
        uint64_t count;
        char text[256]; /* ERROR: printable ASCII only, truncated */
};

/* Check a plan: at least one test, 1 <= min <= max <= RDMA_WIRE_MAX_BYTES, iterations
 * 1..10000000 (latency 2..), depth 1..4096. 0 or -EINVAL. */
int rdma_plan_check(const struct rdma_plan *p);
/* The sizes of the sweep, ascending: min, then the powers of two above it up to max, and
 * max itself. Writes at most cap; returns how many there are. */
size_t rdma_plan_sizes(const struct rdma_plan *p, uint64_t *out, size_t cap);

/* Format into buf (RDMA_WIRE_LINE_MAX), newline-terminated; returns the length. */
size_t rdma_hello_format(const struct rdma_hello *h, char *buf, size_t size);
size_t rdma_ctl_format(const struct rdma_ctl *c, char *buf, size_t size);
/* Parse one line (without or with its newline). 0, or -EBADMSG for anything else: wrong
 * magic or verb, a key missing, repeated or malformed, a value out of range, a plan that
 * rdma_plan_check refuses, a buffer smaller than the plan's largest size. Unknown keys of a
 * hello are ignored (a newer peer's). */
int rdma_hello_parse(const char *buf, size_t len, struct rdma_hello *ret);
int rdma_ctl_parse(const char *buf, size_t len, struct rdma_ctl *ret);

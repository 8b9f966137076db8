/* The arithmetic of the NCCL collective benchmarks, pure (no NCCL, no device): nccl-tests'
 * element counts per step, its algorithm and bus bandwidths, its size sweep, and what each
 * rank's output holds after each collective for gpuvet's deterministic per-rank fill.
 *
 * Source: NVIDIA/nccl-tests (NCCL_TESTS_VERSION 2.19.6): doc/PERFORMANCE.md for the bus
 * bandwidth factors, src/<collective>.cu (<Coll>GetCollByteCount, <Coll>GetBw) for the counts
 * and the bytes each bandwidth divides, src/common.cu (setupArgs, TimeTest, parsesize) for
 * the sweep. Figures computed here compare one to one with nccl-tests' columns. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "bench/collective.h"

/* One step of the sweep for a collective, as nccl-tests' setupArgs: count = bytes / element
 * size; gathers, scatters and all-to-all round count / nranks down to a multiple of 16 bytes
 * worth of elements. Counts are elements. */
struct nccl_counts {
        size_t count;               /* the count argument of the call (nccl-tests' "count" column) */
        size_t send_count;          /* elements each rank's send buffer holds */
        size_t recv_count;          /* elements each rank's receive buffer holds */
        /* In place (nccl-tests' common.cu): the send buffer is recv + rank x send_inplace_offset
         * elements (all_gather: rank's slice of the output), the receive buffer is
         * recv + rank x recv_inplace_offset (reduce_scatter: rank's slice of the input). */
        size_t send_inplace_offset;
        size_t recv_inplace_offset;
        size_t bytes;               /* nccl-tests' "size" column: max(send, recv) x element size */
};
/* 0, or -EINVAL (nranks < 1, an element size not 1, 2, 4 or 8, a collective out of range). */
int nccl_counts(enum nccl_coll c, size_t bytes, size_t elt_size, int nranks, struct nccl_counts *ret);

/* The bus bandwidth factor of doc/PERFORMANCE.md: all_reduce 2(n-1)/n; all_gather,
 * reduce_scatter and alltoall (n-1)/n; broadcast, reduce and sendrecv 1. NaN for nranks < 1
 * or a collective out of range. */
double nccl_busbw_factor(enum nccl_coll c, int nranks);
/* The bytes algbw divides (nccl-tests' <Coll>GetBw): count x size, times nranks for
 * all_gather, reduce_scatter and alltoall (their count is per rank). */
double nccl_alg_bytes(enum nccl_coll c, size_t count, size_t elt_size, int nranks);
/* algbw = alg bytes / 1e9 / seconds (GB/s, decimal, as nccl-tests'), busbw = algbw x factor.
 * -EINVAL for seconds <= 0 or the above. */
int nccl_bandwidth(enum nccl_coll c, size_t count, size_t elt_size, int nranks, double seconds,
                   double *ret_algbw_gbps, double *ret_busbw_gbps);

/* nccl-tests' -b/-e/-i/-f: from min_bytes to max_bytes inclusive, times step_factor when it
 * is > 1, else plus step_bytes. */
struct nccl_sweep {
        size_t min_bytes, max_bytes, step_bytes;
        unsigned long step_factor;
};
/* nccl-tests' parsesize: a number (decimals allowed) with an optional K, M or G (1024-based,
 * either case): "8" 8, "1K" 1024, "8G" 8589934592, "0.5M" 524288. 0 or -EINVAL (no number, a
 * negative one, another suffix, trailing text, over SIZE_MAX). */
int nccl_parse_size(const char *s, size_t *ret);
/* -EINVAL when the sweep would never end or is empty: min > max, step_factor <= 1 with
 * step_bytes 0, step_factor > 1 with min 0 (nccl-tests loops forever on both). */
int nccl_sweep_check(const struct nccl_sweep *sw);
/* The sizes in order into ret (at most max); the number of sizes (which may exceed max), or
 * -EINVAL as nccl_sweep_check. Stops before a step would overflow size_t. */
long nccl_sweep_sizes(const struct nccl_sweep *sw, size_t *ret, size_t max);

/* gpuvet's fill: element i of rank r's send buffer. Small integers, so that every type holds
 * them and their sums exactly (sums over up to 36 ranks fit bfloat16's 8 bits): 1 + (i + 3r)
 * mod 7; for NCCL_OP_PROD 1 + (i + r) mod 2 (products are powers of two). */
double nccl_fill_value(enum nccl_redop op, int rank, size_t i);
/* Write count elements of rank's fill, starting at element first, in type t. */
void nccl_fill(void *buf, enum nccl_dtype t, enum nccl_redop op, int rank, size_t first, size_t count);
/* Element i of buf as a double; write v rounded to the type (integers: wrapped to the
 * type's width, as NCCL's arithmetic wraps; float16/bfloat16 to nearest even). */
double nccl_load(const void *buf, enum nccl_dtype t, size_t i);
void nccl_store(void *buf, enum nccl_dtype t, size_t i, double v);

/* What element i of rank's receive buffer holds after collective c over nranks ranks, each
 * filled with nccl_fill (reduce_scatter's and alltoall's send buffers hold send_count
 * elements of the fill), c's count argument count, root for broadcast and reduce (reduce:
 * only the root's buffer is defined). Sendrecv: rank receives from rank - 1 (mod nranks) and
 * sends to rank + 1, as nccl-tests'; alltoall: chunk p of the output comes from rank p.
 * Computed in the type's arithmetic (integer sums and products wrap; avg divides the wrapped
 * sum, truncating). */
double nccl_expected(enum nccl_coll c, enum nccl_dtype t, enum nccl_redop op, int nranks, int rank, int root,
                     size_t count, size_t i);
/* Compare n elements of rank's receive buffer with nccl_expected: the number that differ
 * (exactly: the fill's results are small integers every type holds; but avg on floating
 * types, within 2 units in the last place, as its division rounds once on one side and may
 * round twice on the other), and the first in ret_first
 * (n when none). */
size_t nccl_verify(const void *buf, enum nccl_dtype t, enum nccl_coll c, enum nccl_redop op, int nranks, int rank,
                   int root, size_t count, size_t n, size_t *ret_first);
/* The same for the n elements first .. first + n - 1 of the receive buffer, held in buf[0 ..
 * n - 1] (a chunk copied back from a large buffer); ret_first is an index of the whole
 * buffer (first + n when none differs). */
size_t nccl_verify_range(const void *buf, enum nccl_dtype t, enum nccl_coll c, enum nccl_redop op, int nranks,
                         int rank, int root, size_t count, size_t first, size_t n, size_t *ret_first);

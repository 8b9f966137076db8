#include "bench/nccl_run.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cuda_raw.h"

/* The fill repeats every 14 elements (nccl_fill_value: period 7, or 2 for prod), so one host
 * chunk of a multiple of 14 elements, copied end to end, fills a buffer of any length. */
#define FILL_CHUNK_ELEMS ((size_t)14 * 65536)
/* Outputs up to this many bytes per rank are verified whole; larger ones in VERIFY_CHUNKS
 * chunks of VERIFY_CHUNK_BYTES spread from the first element to the last. */
#define VERIFY_WHOLE_BYTES ((size_t)8 << 20)
#define VERIFY_CHUNK_BYTES ((size_t)1 << 20)
#define VERIFY_CHUNKS 8

struct local_rank {
        struct dev_ctx *ctx;
        struct coll_comm *comm;
        int rank;
        void *stream;
        struct dev_buf *send, *recv, *scratch;
        uint64_t send_ptr, recv_ptr, scratch_ptr;
        struct dev_event *start, *end;
        void *pattern;   /* FILL_CHUNK_ELEMS of this rank's fill in the run's type and op */
        void *readback;  /* VERIFY_WHOLE_BYTES for copies back */
};

struct run {
        const struct nccl_run_options *o;
        struct nccl_ranks *ranks;
        const struct dev_ops *ops;
        struct local_rank lr[NCCL_RUN_MAX_LOCAL];
        int n;
        size_t elt;
        char *err;
        size_t errsize;
};

static int fail(struct run *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct run *r, int code, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err, r->errsize, fmt, ap);
        va_end(ap);
        return code;
}

static int dev_fail(struct run *r, int code, const char *what, int rank) {
        return fail(r, code, "%s on rank %d: %s", what, rank, r->ops->last_error(r->ranks->dev));
}

/* Bytes each local rank needs (send and receive buffers for the largest step). */
static size_t nccl_run_buffer_bytes(const struct nccl_run_options *o, int nranks) {
        size_t most = 0;
        size_t elt = nccl_dtype_size(o->dtype);
        for (size_t i = 0; i < o->n_colls; i++) {
                struct nccl_counts c;
                if (nccl_counts(o->colls[i], o->sweep.max_bytes, elt, nranks, &c) < 0)
                        continue;
                size_t b = (c.send_count > c.recv_count ? c.send_count : c.recv_count) * elt;
                most = b > most ? b : most;
        }
        return most < elt ? elt : most;
}

static int open_rank(struct run *r, int i, size_t bytes) {
        struct local_rank *l = &r->lr[i];
        const struct dev_ops *ops = r->ops;
        l->ctx = r->ranks->ctx[i];
        l->comm = r->ranks->comm[i];
        l->rank = coll_comm_rank(l->comm);
        if (cuda_ctx_stream(l->ctx, &l->stream) < 0)
                return dev_fail(r, -EIO, "the stream", l->rank);
        uint64_t free_bytes, total;
        /* NCCL keeps its own buffers (a few hundred MiB on a large node): leave a margin */
        if (ops->mem_info(l->ctx, &free_bytes, &total) == 0 && free_bytes < 2 * (uint64_t)bytes + ((uint64_t)64 << 20))
                return fail(r, -ENOMEM,
                            "--maxbytes %zu needs 2 x %zu bytes on each GPU and NCCL's own buffers; rank %d's GPU has "
                            "%llu MiB free of %llu MiB",
                            r->o->sweep.max_bytes, bytes, l->rank, (unsigned long long)(free_bytes >> 20),
                            (unsigned long long)(total >> 20));
        if (ops->alloc(l->ctx, bytes, &l->send) < 0 || ops->alloc(l->ctx, bytes, &l->recv) < 0 ||
            ops->alloc(l->ctx, 8 * sizeof(double), &l->scratch) < 0)
                return fail(r, -ENOMEM, "cannot allocate 2 x %zu bytes on rank %d: %s", bytes, l->rank,
                            ops->last_error(r->ranks->dev));
        (void)cuda_buf_ptr(l->send, &l->send_ptr);
        (void)cuda_buf_ptr(l->recv, &l->recv_ptr);
        (void)cuda_buf_ptr(l->scratch, &l->scratch_ptr);
        if (ops->event_create(l->ctx, &l->start) < 0 || ops->event_create(l->ctx, &l->end) < 0)
                return dev_fail(r, -EIO, "cuEventCreate", l->rank);
        l->pattern = malloc(FILL_CHUNK_ELEMS * r->elt);
        l->readback = malloc(VERIFY_WHOLE_BYTES);
        if (!l->pattern || !l->readback)
                return fail(r, -ENOMEM, "out of memory");
        nccl_fill(l->pattern, r->o->dtype, r->o->op, l->rank, 0, FILL_CHUNK_ELEMS);
        return 0;
}

static void close_rank(struct run *r, struct local_rank *l) {
        const struct dev_ops *ops = r->ops;
        if (!l->ctx)
                return;
        if (l->start)
                ops->event_destroy(l->ctx, l->start);
        if (l->end)
                ops->event_destroy(l->ctx, l->end);
        if (l->send)
                ops->free(l->ctx, l->send);
        if (l->recv)
                ops->free(l->ctx, l->recv);
        if (l->scratch)
                ops->free(l->ctx, l->scratch);
        free(l->pattern);
        free(l->readback);
}

/* count elements of the rank's fill into buf at byte offset off. */
static int fill(struct run *r, struct local_rank *l, struct dev_buf *buf, size_t off, size_t count) {
        for (size_t done = 0; done < count;) {
                size_t n = count - done < FILL_CHUNK_ELEMS ? count - done : FILL_CHUNK_ELEMS;
                if (r->ops->copy_h2d(l->ctx, buf, off + done * r->elt, l->pattern, n * r->elt) < 0)
                        return dev_fail(r, -EIO, "filling the send buffer", l->rank);
                done += n;
        }
        return 0;
}

static int sync_all(struct run *r) {
        for (int i = 0; i < r->n; i++)
                if (r->ops->synchronize(r->lr[i].ctx) < 0)
                        return dev_fail(r, -EIO, "synchronizing", r->lr[i].rank);
        for (int i = 0; i < r->n; i++) {
                int rc = coll_comm_check(r->lr[i].comm);
                if (rc < 0)
                        return fail(r, rc, "%s", coll_lib_error(r->ranks->lib));
        }
        return 0;
}

/* One call of every local rank, grouped. */
static int call_all(struct run *r, const struct coll_call *calls) {
        int rc = coll_group_start(r->ranks->lib);
        for (int i = 0; rc == 0 && i < r->n; i++)
                rc = coll_enqueue(r->lr[i].comm, &calls[i]);
        int end = coll_group_end(r->ranks->lib);
        if (rc == 0)
                rc = end;
        return rc < 0 ? fail(r, rc, "%s", coll_lib_error(r->ranks->lib)) : 0;
}

/* values[0 .. n-1] summed over every rank of the job (a no-op in a single process, where
 * each value is already the job's). */
static int sum_over_job(struct run *r, double *values, size_t n) {
        if (r->ranks->nprocs <= 1)
                return 0;
        struct coll_call calls[NCCL_RUN_MAX_LOCAL];
        for (int i = 0; i < r->n; i++) {
                struct local_rank *l = &r->lr[i];
                if (r->ops->copy_h2d(l->ctx, l->scratch, 0, values, n * sizeof(double)) < 0)
                        return dev_fail(r, -EIO, "combining the ranks' figures", l->rank);
                calls[i] = (struct coll_call){.coll = NCCL_COLL_ALL_REDUCE, .send = l->scratch_ptr,
                                              .recv = l->scratch_ptr, .count = n, .dtype = NCCL_DT_FLOAT64,
                                              .op = NCCL_OP_SUM, .stream = l->stream};
        }
        int rc = call_all(r, calls);
        if (rc == 0)
                rc = sync_all(r);
        if (rc == 0 && r->ops->copy_d2h(r->lr[0].ctx, values, r->lr[0].scratch, 0, n * sizeof(double)) < 0)
                rc = dev_fail(r, -EIO, "combining the ranks' figures", r->lr[0].rank);
        if (rc == 0 && r->ops->synchronize(r->lr[0].ctx) < 0)
                rc = dev_fail(r, -EIO, "combining the ranks' figures", r->lr[0].rank);
        return rc;
}

/* Compare count elements from element first of the rank's output with nccl_expected. */
static int verify_span(struct run *r, struct local_rank *l, uint64_t recv_off_bytes, enum nccl_coll c,
                       size_t call_count, size_t first, size_t count, double *wrong) {
        const struct nccl_run_options *o = r->o;
        if (r->ops->copy_d2h(l->ctx, l->readback, l->recv, recv_off_bytes + first * r->elt, count * r->elt) < 0 ||
            r->ops->synchronize(l->ctx) < 0)
                return dev_fail(r, -EIO, "reading the output back", l->rank);
        size_t at;
        *wrong += (double)nccl_verify_range(l->readback, o->dtype, c, o->op, r->ranks->nranks, l->rank, o->root,
                                            call_count, first, count, &at);
        return 0;
}

static int verify_rank(struct run *r, struct local_rank *l, enum nccl_coll c, const struct nccl_counts *cn,
                       uint64_t recv_off_bytes, double *wrong) {
        if (c == NCCL_COLL_REDUCE && l->rank != r->o->root)
                return 0; /* only the root's output is defined */
        size_t n = cn->recv_count;
        if (n * r->elt <= VERIFY_WHOLE_BYTES)
                return verify_span(r, l, recv_off_bytes, c, cn->count, 0, n, wrong);
        size_t chunk = VERIFY_CHUNK_BYTES / r->elt;
        for (size_t k = 0; k < VERIFY_CHUNKS; k++) {
                size_t first = (n - chunk) / (VERIFY_CHUNKS - 1) * k;
                if (k == VERIFY_CHUNKS - 1)
                        first = n - chunk;
                int rc = verify_span(r, l, recv_off_bytes, c, cn->count, first, chunk, wrong);
                if (rc < 0)
                        return rc;
        }
        return 0;
}

/* The calls of one step for every local rank, with their buffers' offsets. */
static void plan_calls(struct run *r, enum nccl_coll c, bool in_place, const struct nccl_counts *cn,
                       struct coll_call *calls, size_t *send_off, size_t *recv_off) {
        for (int i = 0; i < r->n; i++) {
                struct local_rank *l = &r->lr[i];
                size_t so = in_place ? (size_t)l->rank * cn->send_inplace_offset * r->elt : 0;
                size_t ro = in_place ? (size_t)l->rank * cn->recv_inplace_offset * r->elt : 0;
                send_off[i] = so;
                recv_off[i] = ro;
                calls[i] = (struct coll_call){.coll = c, .send = (in_place ? l->recv_ptr : l->send_ptr) + so,
                                              .recv = l->recv_ptr + ro, .count = cn->count, .dtype = r->o->dtype,
                                              .op = r->o->op, .root = r->o->root, .stream = l->stream};
        }
}

/* Poison every output, fill every input, run once, verify: the wrong elements of the job. */
static int check_step(struct run *r, enum nccl_coll c, bool in_place, const struct nccl_counts *cn,
                      const struct coll_call *calls, const size_t *send_off, const size_t *recv_off, double *wrong) {
        for (int i = 0; i < r->n; i++) {
                struct local_rank *l = &r->lr[i];
                /* 0xff: NaN in every float type, -1 or the maximum in the integers: never a
                 * value the fill's sums produce */
                if (r->ops->memset(l->ctx, l->recv, 0xff, cn->recv_count * r->elt + recv_off[i]) < 0)
                        return dev_fail(r, -EIO, "clearing the output", l->rank);
                int rc = fill(r, l, in_place ? l->recv : l->send, send_off[i], cn->send_count);
                if (rc < 0)
                        return rc;
        }
        int rc = call_all(r, calls);
        if (rc == 0)
                rc = sync_all(r);
        for (int i = 0; rc == 0 && i < r->n; i++)
                rc = verify_rank(r, &r->lr[i], c, cn, recv_off[i], wrong);
        return rc;
}

/* `calls` run `iters` times between events on every local rank: the slowest rank's
 * milliseconds. */
static int timed_block(struct run *r, const struct coll_call *calls, unsigned iters, double *ret_ms) {
        const struct dev_ops *ops = r->ops;
        for (int i = 0; i < r->n; i++)
                if (ops->event_record(r->lr[i].ctx, r->lr[i].start) < 0)
                        return dev_fail(r, -EIO, "cuEventRecord", r->lr[i].rank);
        for (unsigned k = 0; k < iters; k++) {
                int rc = call_all(r, calls);
                if (rc < 0)
                        return rc;
        }
        for (int i = 0; i < r->n; i++)
                if (ops->event_record(r->lr[i].ctx, r->lr[i].end) < 0)
                        return dev_fail(r, -EIO, "cuEventRecord", r->lr[i].rank);
        int rc = sync_all(r);
        if (rc < 0)
                return rc;
        double slowest = 0;
        for (int i = 0; i < r->n; i++) {
                double ms;
                if (ops->event_elapsed_ms(r->lr[i].ctx, r->lr[i].start, r->lr[i].end, &ms) < 0)
                        return dev_fail(r, -EIO, "cuEventElapsedTime", r->lr[i].rank);
                slowest = ms > slowest ? ms : slowest;
        }
        *ret_ms = slowest;
        return 0;
}

/* The step is announced before it runs and again after each phase, so that the parent's
 * hang deadline bounds one phase (one timed block of iters calls), not the whole step. */
static void announce(const struct nccl_run_sink *sink, enum nccl_coll c, bool in_place, size_t bytes) {
        if (sink->begin)
                sink->begin(sink->ctx, c, in_place, bytes);
}

static int run_step(struct run *r, const struct nccl_run_sink *sink, enum nccl_coll c, bool in_place, size_t bytes,
                    bool last) {
        const struct nccl_run_options *o = r->o;
        struct nccl_counts cn;
        if (nccl_counts(c, bytes, r->elt, r->ranks->nranks, &cn) < 0)
                return fail(r, -EINVAL, "%s: no counts for %zu bytes", nccl_coll_name(c), bytes);
        if (cn.count == 0)
                return 0; /* below one element per rank: nccl-tests skips the size too */
        announce(sink, c, in_place, bytes);
        struct coll_call calls[NCCL_RUN_MAX_LOCAL];
        size_t send_off[NCCL_RUN_MAX_LOCAL], recv_off[NCCL_RUN_MAX_LOCAL];
        plan_calls(r, c, in_place, &cn, calls, send_off, recv_off);

        /* [0] time (ms, this process's slowest rank), [1] wrong elements, [2..] the final
         * blocks' times */
        double figures[2 + NCCL_RUN_FINAL_REPS] = {0};
        int rc = o->check ? check_step(r, c, in_place, &cn, calls, send_off, recv_off, &figures[1]) : 0;
        if (rc == 0)
                announce(sink, c, in_place, bytes);
        for (unsigned k = 0; rc == 0 && k < o->warmup; k++)
                rc = call_all(r, calls);
        if (rc == 0)
                rc = sync_all(r);
        if (rc == 0) {
                announce(sink, c, in_place, bytes);
                rc = timed_block(r, calls, o->iters, &figures[0]);
        }
        size_t n_final = last ? NCCL_RUN_FINAL_REPS : 0;
        for (size_t k = 0; rc == 0 && k < n_final; k++) {
                announce(sink, c, in_place, bytes);
                rc = timed_block(r, calls, o->iters, &figures[2 + k]);
        }
        if (rc == 0)
                rc = sum_over_job(r, figures, 2 + n_final);
        if (rc < 0) {
                char why[512];
                snprintf(why, sizeof(why), "%s", r->err);
                return fail(r, rc, "%s %zu bytes %s: %s", nccl_coll_name(c), bytes,
                            in_place ? "in place" : "out of place", why);
        }
        struct nccl_row row = {.coll = c, .in_place = in_place, .bytes = cn.bytes, .count = cn.count,
                               .verified = o->check, .wrong = figures[1], .n_final = n_final};
        double procs = r->ranks->nprocs > 1 ? r->ranks->nprocs : 1;
        row.time_us = figures[0] / procs * 1000.0 / o->iters;
        (void)nccl_bandwidth(c, cn.count, r->elt, r->ranks->nranks, row.time_us / 1e6, &row.algbw_gbps,
                             &row.busbw_gbps);
        for (size_t k = 0; k < n_final; k++) {
                double algbw, s = figures[2 + k] / procs / 1000.0 / o->iters;
                (void)nccl_bandwidth(c, cn.count, r->elt, r->ranks->nranks, s, &algbw, &row.final_busbw[k]);
        }
        sink->row(sink->ctx, &row);
        return 0;
}

int nccl_run(const struct nccl_run_options *o, struct nccl_ranks *ranks, const struct nccl_run_sink *sink, char *err,
             size_t errsize) {
        struct run r = {.o = o, .ranks = ranks, .ops = ranks->ops, .n = ranks->n_local,
                        .elt = nccl_dtype_size(o->dtype), .err = err, .errsize = errsize};
        if (r.n < 1 || r.n > NCCL_RUN_MAX_LOCAL || o->iters < 1)
                return fail(&r, -EINVAL, "nothing to run");
        if (o->root < 0 || o->root >= ranks->nranks)
                return fail(&r, -EINVAL, "--root-rank %d: the job has %d rank%s", o->root, ranks->nranks,
                            ranks->nranks == 1 ? "" : "s");
        size_t sizes[64];
        long n_sizes = nccl_sweep_sizes(&o->sweep, sizes, 64);
        if (n_sizes < 1 || n_sizes > 64)
                return fail(&r, -EINVAL, "the size sweep has %ld steps (1-64)", n_sizes);
        size_t bytes = nccl_run_buffer_bytes(o, ranks->nranks);
        int rc = 0;
        for (int i = 0; rc == 0 && i < r.n; i++)
                rc = open_rank(&r, i, bytes);
        for (size_t k = 0; rc == 0 && k < o->n_colls; k++)
                for (long s = 0; rc == 0 && s < n_sizes; s++) {
                        bool last = s == n_sizes - 1;
                        if (rc == 0 && o->out_of_place)
                                rc = run_step(&r, sink, o->colls[k], false, sizes[s], last);
                        /* a point-to-point exchange within one buffer races with itself: nccl-tests'
                         * in-place alltoall and sendrecv measure nothing NCCL promises */
                        bool p2p = o->colls[k] == NCCL_COLL_ALLTOALL || o->colls[k] == NCCL_COLL_SENDRECV;
                        if (rc == 0 && o->in_place && !p2p)
                                rc = run_step(&r, sink, o->colls[k], true, sizes[s], last && !o->out_of_place);
                        else if (rc == 0 && p2p && !o->out_of_place)
                                rc = run_step(&r, sink, o->colls[k], false, sizes[s], last);
                }
        for (int i = 0; i < r.n; i++)
                close_rank(&r, &r.lr[i]);
        return rc;
}

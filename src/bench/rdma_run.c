#include "bench/rdma_run.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>

#include "bench/bench.h"
#include "bench/rdma_conn.h"
#include "bench/rdma_endpoint.h"
#include "core/deadline.h"

/* In the registry for --list; `gpuvet bench rdma` runs it on two nodes (src/cmd/bench_rdma.c). */
const struct bench_info bench_rdma = {
        .name = "rdma",
        .title = "RDMA write/read bandwidth and latency between two nodes (gpuvet bench rdma --help)",
        .on_nic = true,
        .own_command = true,
};

/* One side's resources: the endpoint (port, buffer, queue pair; bench/rdma_endpoint.h
 * says how its buffer's two regions are laid out), the TCP connection and the timings. */
struct side {
        const struct rdma_options *o;
        struct rdma_result *res;
        struct rdma_endpoint *ep;
        struct rdma_endpoint_error ep_err; /* the endpoint's last failure */
        uint64_t region;  /* bytes per region */
        uint8_t *host;    /* the buffer, when in host memory; NULL with --gpu */
        uint8_t *staging; /* --gpu: a region's bytes on the host, to fill and check */
        struct rdma_conn conn;
        struct rdma_hello mine, peer;
        double *t_post, *t_done; /* per message, µs */
        size_t t_cap;
};

static int fail(struct side *s, enum rdma_failure f, int r, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(struct side *s, enum rdma_failure f, int r, const char *fmt, ...) {
        if (s->res->failure == RDMA_OK) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(s->res->error, sizeof(s->res->error), fmt, ap);
                va_end(ap);
                s->res->failure = f;
        }
        return r < 0 ? r : -EIO;
}

/* The endpoint's failure as this side's (r its negative errno). */
static int ep_fail(struct side *s, int r) {
        return fail(s, s->ep_err.failure, r, "%s", s->ep_err.text);
}

/* The pattern of a size's data: differs per size so that a previous size's bytes never
 * pass for this one's. */
static uint8_t pattern_byte(uint64_t size, uint64_t k) {
        return (uint8_t)((k * 31u + size * 7u + 0x5au) & 0xffu);
}

static void fill_pattern(uint8_t *p, uint64_t size, uint64_t n) {
        for (uint64_t k = 0; k < n; k++)
                p[k] = pattern_byte(size, k);
}

/* The first byte of p[0..n) that differs from the pattern, or UINT64_MAX. */
static uint64_t check_pattern(const volatile uint8_t *p, uint64_t size, uint64_t n) {
        for (uint64_t k = 0; k < n; k++)
                if (p[k] != pattern_byte(size, k))
                        return k;
        return UINT64_MAX;
}

/* The buffer's regions, in host or GPU memory: zero the receive region, fill the send
 * region with a size's pattern, and check what the receive region holds. */
static int mem_prepare(struct side *s, uint64_t size) {
        if (s->host) {
                memset(s->host, 0, size);
                fill_pattern(s->host + s->region, size, size);
                return 0;
        }
        fill_pattern(s->staging, size, size);
        int r = rdma_endpoint_gpu_zero(s->ep, 0, size, &s->ep_err);
        if (r == 0)
                r = rdma_endpoint_gpu_write(s->ep, s->region, s->staging, size, &s->ep_err);
        return r < 0 ? ep_fail(s, r) : 0;
}

static int mem_check(struct side *s, uint64_t size, uint64_t n, uint64_t *ret_off) {
        if (s->host) {
                *ret_off = check_pattern(s->host, size, n);
                return 0;
        }
        int r = rdma_endpoint_gpu_read(s->ep, 0, s->staging, n, &s->ep_err);
        if (r < 0)
                return ep_fail(s, r);
        *ret_off = check_pattern(s->staging, size, n);
        return 0;
}

/* --- the endpoint ---------------------------------------------------------------------- */

/* What the port's open learned goes into the result, also when it failed part way. */
static void take_port_info(struct rdma_result *res, const struct rdma_port_info *info) {
        snprintf(res->device, sizeof(res->device), "%s", info->device);
        res->ib_port = info->ib_port;
        res->ethernet = info->ethernet;
        res->lid = info->lid;
        res->active_speed = info->active_speed;
        res->active_width = info->active_width;
        if (info->have_port)
                res->have_rate = rdma_link_rate(info->active_speed, info->active_width, &res->rate) == 0;
        res->gid_index = info->gid_index;
        snprintf(res->gid, sizeof(res->gid), "%s", info->gid);
        res->gid_roce_v2 = info->gid_roce_v2;
}

static int open_port(struct side *s) {
        struct rdma_port_choice want = {.device = s->o->device, .ib_port = s->o->ib_port, .gid_index = s->o->gid_index};
        struct rdma_port_info info;
        int r = rdma_endpoint_open(&want, &s->ep, &info, &s->ep_err);
        take_port_info(s->res, &info);
        return r < 0 ? ep_fail(s, r) : 0;
}

/* The buffer (and with --gpu its staging copy on the host), its registration, the queue
 * pair, and the timings' arrays. */
static int create_resources(struct side *s) {
        struct rdma_result *res = s->res;
        const struct rdma_plan *p = &s->o->plan;
        s->region = p->max_bytes;
        int r = rdma_endpoint_alloc(s->ep, s->region, s->o->gpu, &s->ep_err);
        snprintf(res->memory, sizeof(res->memory), "%s", rdma_endpoint_memory(s->ep));
        if (r < 0)
                return ep_fail(s, r);
        s->host = rdma_endpoint_host_buffer(s->ep);
        if (!s->host) {
                s->staging = malloc((size_t)s->region);
                if (!s->staging)
                        return fail(s, RDMA_FAIL_MEMORY, -ENOMEM, "out of memory");
        }
        r = rdma_endpoint_register(s->ep, &s->ep_err);
        snprintf(res->memory, sizeof(res->memory), "%s", rdma_endpoint_memory(s->ep));
        if (r == 0)
                r = rdma_endpoint_create_qp(s->ep, p->tx_depth, &s->ep_err);
        if (r < 0)
                return ep_fail(s, r);
        s->t_cap = p->iters > p->lat_iters ? p->iters : p->lat_iters;
        s->t_post = calloc(s->t_cap, sizeof(double));
        s->t_done = calloc(s->t_cap, sizeof(double));
        if (!s->t_post || !s->t_done)
                return fail(s, RDMA_FAIL_MEMORY, -ENOMEM, "out of memory");
        return 0;
}

/* The queue pair to the peer's, from its hello. */
static int connect_qp(struct side *s) {
        struct rdma_endpoint_addr peer = {.lid = s->peer.lid, .qpn = s->peer.qpn, .psn = s->peer.psn,
                                          .rkey = s->peer.rkey, .addr = s->peer.addr, .mtu = s->peer.mtu};
        memcpy(peer.gid, s->peer.gid, 16);
        int r = rdma_endpoint_connect(s->ep, &peer, &s->res->mtu, &s->ep_err);
        return r < 0 ? ep_fail(s, r) : 0;
}


/* --- the handshake ------------------------------------------------------------------------ */

static int send_ctl(struct side *s, const struct rdma_ctl *c) {
        char line[RDMA_WIRE_LINE_MAX], err[512];
        size_t n = rdma_ctl_format(c, line, sizeof(line));
        int r = rdma_conn_send(&s->conn, line, n, monotonic_ms() + s->o->step_ms, err, sizeof(err));
        return r < 0 ? fail(s, RDMA_FAIL_PEER, r, "%s", err) : 0;
}

static void send_error(struct side *s) {
        struct rdma_ctl c = {.verb = RDMA_CTL_ERROR};
        snprintf(c.text, sizeof(c.text), "%.*s", (int)sizeof(c.text) - 1, s->res->error);
        char line[RDMA_WIRE_LINE_MAX], err[512];
        size_t n = rdma_ctl_format(&c, line, sizeof(line));
        if (s->conn.fd >= 0)
                (void)rdma_conn_send(&s->conn, line, n, monotonic_ms() + 1000, err, sizeof(err)); /* best effort */
}

/* Receive one control message; the peer's "error" becomes this side's failure. */
static int recv_ctl(struct side *s, double wait_ms, const char *what, struct rdma_ctl *ret) {
        char line[RDMA_WIRE_LINE_MAX + 2], err[512];
        int r = rdma_conn_recv(&s->conn, line, sizeof(line), monotonic_ms() + wait_ms, what, err, sizeof(err));
        if (r < 0)
                return fail(s, RDMA_FAIL_PEER, r, "%s", err);
        if (rdma_ctl_parse(line, strlen(line), ret) < 0)
                return fail(s, RDMA_FAIL_PEER, -EBADMSG, "the peer %s sent what gpuvet bench rdma does not say %s",
                            s->conn.peer, what);
        if (ret->verb == RDMA_CTL_ERROR) {
                s->res->failure = RDMA_OK; /* the peer's message wins over none */
                return fail(s, RDMA_FAIL_PEER, -EREMOTEIO, "the peer %s failed: %s", s->conn.peer, ret->text);
        }
        return 0;
}

static int expect_ctl(struct side *s, double wait_ms, enum rdma_ctl_verb verb, const char *what,
                      struct rdma_ctl *ret) {
        int r = recv_ctl(s, wait_ms, what, ret);
        if (r < 0)
                return r;
        if (ret->verb != verb)
                return fail(s, RDMA_FAIL_PEER, -EPROTO, "the peer %s answered out of turn %s", s->conn.peer, what);
        return 0;
}

static int handshake(struct side *s) {
        const struct rdma_options *o = s->o;
        struct rdma_result *res = s->res;
        char err[512], line[RDMA_WIRE_LINE_MAX + 2];
        int r;
        if (o->server)
                r = rdma_conn_accept(o->port, monotonic_ms() + o->accept_ms, &s->conn, err, sizeof(err));
        else
                r = rdma_conn_connect(o->peer_host, o->port, monotonic_ms() + o->connect_ms, &s->conn, err, sizeof(err));
        if (r < 0)
                return fail(s, RDMA_FAIL_PEER, r, "%s", err);
        snprintf(res->peer, sizeof(res->peer), "%s", s->conn.peer);
        struct rdma_endpoint_addr local;
        rdma_endpoint_local(s->ep, &local);
        s->mine = (struct rdma_hello){.lid = local.lid, .qpn = local.qpn, .psn = local.psn, .rkey = local.rkey,
                                      .addr = local.addr, .buf_bytes = 2 * s->region, .mtu = local.mtu,
                                      .ethernet = res->ethernet, .gpu_memory = o->gpu >= 0, .plan = o->plan};
        memcpy(s->mine.gid, local.gid, 16);
        size_t n = rdma_hello_format(&s->mine, line, sizeof(line));
        double deadline = monotonic_ms() + o->step_ms;
        /* the client speaks first; the server answers with the plan it accepted */
        if (!o->server && (r = rdma_conn_send(&s->conn, line, n, deadline, err, sizeof(err))) < 0)
                return fail(s, RDMA_FAIL_PEER, r, "%s", err);
        r = rdma_conn_recv(&s->conn, line, sizeof(line), deadline, "during the handshake", err, sizeof(err));
        if (r < 0)
                return fail(s, RDMA_FAIL_PEER, r, "%s", err);
        if (rdma_hello_parse(line, strlen(line), &s->peer) < 0) {
                struct rdma_ctl c;
                if (rdma_ctl_parse(line, strlen(line), &c) == 0 && c.verb == RDMA_CTL_ERROR)
                        return fail(s, RDMA_FAIL_PEER, -EREMOTEIO, "the peer %s failed: %s", s->conn.peer, c.text);
                return fail(s, RDMA_FAIL_PEER, -EPROTO,
                            "the peer %s is not a gpuvet bench rdma of this protocol (" RDMA_WIRE_MAGIC ")",
                            s->conn.peer);
        }
        res->peer_ethernet = s->peer.ethernet;
        if (s->peer.ethernet != res->ethernet)
                return fail(s, RDMA_FAIL_BAD_INPUT, -EPROTO, "link layers differ: this side's %s port is %s, the peer's %s",
                            res->device, res->ethernet ? "Ethernet (RoCE)" : "InfiniBand",
                            s->peer.ethernet ? "Ethernet (RoCE)" : "InfiniBand");
        if (o->server) {
                /* the client's plan, in a buffer of this side's size (the server only answers
                 * latency writes; the client's depth and iterations need nothing here) */
                if (s->peer.plan.max_bytes > s->region)
                        return fail(s, RDMA_FAIL_BAD_INPUT, -E2BIG,
                                    "the client asks for sizes up to %" PRIu64 " bytes; this server was started for "
                                    "%" PRIu64 " (start it with the client's --size, or --all)",
                                    s->peer.plan.max_bytes, s->region);
                res->plan = s->peer.plan;
                s->mine.plan = s->peer.plan;
                n = rdma_hello_format(&s->mine, line, sizeof(line));
                if ((r = rdma_conn_send(&s->conn, line, n, deadline, err, sizeof(err))) < 0)
                        return fail(s, RDMA_FAIL_PEER, r, "%s", err);
        } else {
                res->plan = o->plan;
                if (memcmp(&s->peer.plan, &o->plan, sizeof(o->plan)) != 0)
                        return fail(s, RDMA_FAIL_PEER, -EPROTO, "the server %s did not accept the plan", s->conn.peer);
        }
        /* the latency test polls the receive buffer's last byte from the CPU, which device
         * memory does not allow: both sides drop it when either uses GPU memory */
        if ((s->mine.gpu_memory || s->peer.gpu_memory) && (res->plan.tests & (1u << RDMA_TEST_WRITE_LAT))) {
                res->plan.tests &= ~(1u << RDMA_TEST_WRITE_LAT);
                snprintf(res->note, sizeof(res->note), "write_lat not run: %s GPU memory, which the CPU cannot poll",
                         s->mine.gpu_memory ? "this side uses" : "the peer uses");
        }
        return connect_qp(s);
}

/* --- the tests ---------------------------------------------------------------------------- */

/* Between polls that found nothing: spin (as perftest does) but let other runnable
 * threads in now and then, so that a busy host (or the test double's own threads) is not
 * starved for a whole time slice; with nothing else runnable sched_yield returns at once. */
static void idle(unsigned spins) {
        if (spins % 64 == 0)
                sched_yield();
}

/* The bandwidth loop's wait: with tx_depth requests in flight the queue stays full while
 * this thread naps, so after 1024 empty polls (tens of microseconds: no completion is due
 * soon, as with large messages) it sleeps 20 us between polls instead of taking a core
 * from the rest of the host. Small messages complete every few microseconds and never
 * get here; the last completion's time is late by at most one nap (<0.1% of a timed loop
 * of large messages). */
static void bw_idle(unsigned spins) {
        if (spins >= 1024) {
                struct timespec ts = {0, 20000};
                nanosleep(&ts, NULL);
        } else {
                idle(spins);
        }
}

static int wc_failed(struct side *s, const struct rdma_completion *c, const char *test, uint64_t size) {
        return fail(s, RDMA_FAIL_VERBS, -EIO,
                    "%s at %" PRIu64 " bytes: work request %" PRIu64 " completed with %s (%d: %s)%s", test, size,
                    c->wr_id, c->name ? c->name : "an unknown status", c->code, c->text ? c->text : "?",
                    c->status == RDMA_COMPLETION_RETRY_EXCEEDED ? "; the peer's HCA does not answer: link, routing "
                                                                  "(GID/LID) or the peer itself"
                    : c->status == RDMA_COMPLETION_REMOTE_ACCESS ? "; the peer refused the access (rkey or address)"
                                                                 : "");
}

/* write_lat: take the completions there are (never waiting), one fewer outstanding each;
 * 0, or the failure of the first that did not succeed. */
static int reap_lat_completions(struct side *s, uint64_t size, unsigned *outstanding) {
        struct rdma_completion wc[4];
        int k = rdma_endpoint_poll(s->ep, wc, 4);
        for (int j = 0; j < k; j++) {
                if (wc[j].status != RDMA_COMPLETION_OK)
                        return wc_failed(s, &wc[j], "write_lat", size);
                (*outstanding)--;
        }
        return 0;
}

/* One request from or into local_off, to or from remote_off of the peer's buffer. */
static int post_one(struct side *s, enum rdma_op op, uint64_t wr_id, uint64_t local_off, uint64_t remote_off,
                    uint64_t size, bool signaled) {
        int r = rdma_endpoint_post(s->ep, op, wr_id, local_off, remote_off, size, signaled, &s->ep_err);
        return r < 0 ? ep_fail(s, r) : 0;
}

static int bw_loop(struct side *s, enum rdma_test t, uint64_t size, struct rdma_bw_row *row) {
        const struct rdma_plan *p = &s->res->plan;
        bool rd = t == RDMA_TEST_READ_BW;
        /* reads land in this side's receive region from the peer's send region; writes go
         * from this side's send region into the peer's receive region */
        uint64_t local = rd ? 0 : s->region, remote = rd ? s->region : 0;
        unsigned n = p->iters, depth = p->tx_depth, posted = 0, done = 0;
        double deadline = monotonic_ms() + s->o->step_ms;
        unsigned spins = 0;
        while (done < n) {
                while (posted < n && posted - done < depth) {
                        s->t_post[posted] = monotonic_ns() / 1e3;
                        int r = post_one(s, rd ? RDMA_OP_READ : RDMA_OP_WRITE, posted, local, remote, size, true);
                        if (r < 0)
                                return r;
                        posted++;
                }
                struct rdma_completion wc[16];
                int k = rdma_endpoint_poll(s->ep, wc, 16);
                if (k < 0)
                        return fail(s, RDMA_FAIL_VERBS, -EIO, "ibv_poll_cq failed (%d)", k);
                double tnow = monotonic_ns() / 1e3;
                for (int i = 0; i < k; i++) {
                        if (wc[i].status != RDMA_COMPLETION_OK)
                                return wc_failed(s, &wc[i], rdma_test_name(t), size);
                        s->t_done[done++] = tnow;
                }
                if (k == 0)
                        bw_idle(++spins);
                else
                        spins = 0;
                if (k == 0 && spins % 256 == 0 && monotonic_ms() > deadline)
                        return fail(s, RDMA_FAIL_PEER, -ETIMEDOUT,
                                    "%s at %" PRIu64 " bytes: %u of %u requests completed within %.0f s (the peer or "
                                    "the link stopped answering)",
                                    rdma_test_name(t), size, done, n, s->o->step_ms / 1000);
        }
        double secs = (s->t_done[n - 1] - s->t_post[0]) / 1e6;
        row->avg_gbps = secs > 0 ? (double)size * n * 8 / secs / 1e9 : 0;
        row->msg_rate_mpps = secs > 0 ? n / secs / 1e6 : 0;
        row->peak_gbps = rdma_peak_gbps(s->t_post, s->t_done, n, size);
        return 0;
}

static int lat_loop(struct side *s, uint64_t size, bool initiator, double *rtt_us) {
        unsigned n = s->res->plan.lat_iters;
        /* the CPU polls and writes the buffer: host memory only (handshake drops the test
         * with GPU memory) */
        volatile uint8_t *recv_last = s->host + size - 1;
        uint8_t *send_region = s->host + s->region;
        double deadline = monotonic_ms() + s->o->step_ms;
        unsigned outstanding = 0;
        for (unsigned i = 0; i < n; i++) {
                uint8_t val = (uint8_t)(i % 255 + 1);
                if (!initiator || i > 0) {
                        /* wait for the peer's i-th write (the initiator: its answer to i-1) */
                        uint8_t want = initiator ? (uint8_t)((i - 1) % 255 + 1) : val;
                        unsigned spins = 0;
                        while (*recv_last != want) {
                                int r = reap_lat_completions(s, size, &outstanding);
                                if (r < 0)
                                        return r;
                                idle(++spins);
                                if (spins % 4096 == 0 && monotonic_ms() > deadline)
                                        return fail(s, RDMA_FAIL_PEER, -ETIMEDOUT,
                                                    "write_lat at %" PRIu64 " bytes: no write from the peer for round "
                                                    "trip %u of %u within %.0f s (the peer or the link stopped answering)",
                                                    size, i + 1, n, s->o->step_ms / 1000);
                        }
                }
                if (initiator)
                        s->t_post[i] = monotonic_ns() / 1e3;
                send_region[size - 1] = val;
                while (outstanding >= s->res->plan.tx_depth + 2) {
                        int r = reap_lat_completions(s, size, &outstanding);
                        if (r < 0)
                                return r;
                        if (monotonic_ms() > deadline)
                                return fail(s, RDMA_FAIL_PEER, -ETIMEDOUT, "write_lat: send queue stuck");
                }
                int r = post_one(s, RDMA_OP_WRITE, i, s->region, 0, size, true);
                if (r < 0)
                        return r;
                outstanding++;
        }
        /* the initiator's last answer, and every completion */
        unsigned spins = 0;
        uint8_t last = (uint8_t)((n - 1) % 255 + 1);
        while ((initiator && *recv_last != last) || outstanding > 0) {
                int r = reap_lat_completions(s, size, &outstanding);
                if (r < 0)
                        return r;
                idle(++spins);
                if (spins % 4096 == 0 && monotonic_ms() > deadline)
                        return fail(s, RDMA_FAIL_PEER, -ETIMEDOUT,
                                    "write_lat at %" PRIu64 " bytes: the last round trip did not complete within %.0f s",
                                    size, s->o->step_ms / 1000);
        }
        if (initiator) {
                double end = monotonic_ns() / 1e3;
                for (unsigned i = 0; i + 1 < n; i++)
                        rtt_us[i] = (s->t_post[i + 1] - s->t_post[i]) / 2;
                rtt_us[n - 1] = (end - s->t_post[n - 1]) / 2;
        }
        return 0;
}

static void corrupt_text(char *buf, size_t size, const char *who, uint64_t offset, uint64_t bytes) {
        snprintf(buf, size, "%s found byte %" PRIu64 " of %" PRIu64 " different from what was sent", who, offset,
                 bytes);
}

static int grow_rows(struct side *s) {
        size_t cap = 64;
        if (!s->res->bw) {
                s->res->bw = calloc(cap * RDMA_TEST_COUNT, sizeof(*s->res->bw));
                s->res->lat = calloc(cap, sizeof(*s->res->lat));
                if (!s->res->bw || !s->res->lat)
                        return fail(s, RDMA_FAIL_MEMORY, -ENOMEM, "out of memory");
        }
        return 0;
}

static int client_tests(struct side *s) {
        const struct rdma_plan *p = &s->res->plan;
        uint64_t sizes[64];
        size_t n_sizes = rdma_plan_sizes(p, sizes, 64);
        if (n_sizes > 64)
                n_sizes = 64;
        double *rtt = calloc(p->lat_iters, sizeof(double));
        if (!rtt || grow_rows(s) < 0) {
                free(rtt);
                return fail(s, RDMA_FAIL_MEMORY, -ENOMEM, "out of memory");
        }
        double answer_ms = s->o->step_ms + 5000;
        int r = 0;
        for (int t = 0; t < RDMA_TEST_COUNT && r == 0; t++) {
                if (!(p->tests & (1u << t)))
                        continue;
                for (size_t i = 0; i < n_sizes && r == 0; i++) {
                        uint64_t size = sizes[i];
                        struct rdma_ctl c = {.verb = RDMA_CTL_STEP, .test = (enum rdma_test)t, .size = size}, a;
                        /* prepare this side: writes come from the pattern; reads land in zeroes */
                        if ((r = mem_prepare(s, size)) < 0)
                                break;
                        if ((r = send_ctl(s, &c)) < 0 || (r = expect_ctl(s, answer_ms, RDMA_CTL_READY, "waiting for ready", &a)) < 0)
                                break;
                        if (t == RDMA_TEST_WRITE_LAT) {
                                struct rdma_lat_row *row = &s->res->lat[s->res->n_lat];
                                *row = (struct rdma_lat_row){.bytes = size, .iters = p->lat_iters};
                                if ((r = lat_loop(s, size, true, rtt)) < 0)
                                        break;
                                rdma_lat_stats(rtt, p->lat_iters, row);
                                s->res->n_lat++;
                        } else {
                                struct rdma_bw_row *row = &s->res->bw[s->res->n_bw];
                                *row = (struct rdma_bw_row){.test = (enum rdma_test)t, .bytes = size, .iters = p->iters};
                                if ((r = bw_loop(s, (enum rdma_test)t, size, row)) < 0)
                                        break;
                                s->res->n_bw++;
                                if (t == RDMA_TEST_READ_BW) {
                                        uint64_t off;
                                        if ((r = mem_check(s, size, size, &off)) < 0)
                                                break;
                                        row->verified = off == UINT64_MAX;
                                        if (!row->verified)
                                                corrupt_text(row->verify_error, sizeof(row->verify_error), "the client",
                                                             off, size);
                                }
                        }
                        c = (struct rdma_ctl){.verb = RDMA_CTL_DONE, .test = (enum rdma_test)t, .size = size,
                                              .count = t == RDMA_TEST_WRITE_LAT ? p->lat_iters : p->iters};
                        if ((r = send_ctl(s, &c)) < 0 || (r = recv_ctl(s, answer_ms, "waiting for the verification", &a)) < 0)
                                break;
                        if (t != RDMA_TEST_READ_BW) {
                                bool ok = a.verb == RDMA_CTL_VERIFIED;
                                char *e = t == RDMA_TEST_WRITE_LAT ? s->res->lat[s->res->n_lat - 1].verify_error
                                                                    : s->res->bw[s->res->n_bw - 1].verify_error;
                                if (!ok)
                                        corrupt_text(e, 128, "the server", a.count, size);
                                if (t == RDMA_TEST_WRITE_LAT)
                                        s->res->lat[s->res->n_lat - 1].verified = ok;
                                else
                                        s->res->bw[s->res->n_bw - 1].verified = ok;
                        }
                }
        }
        free(rtt);
        if (r == 0) {
                struct rdma_ctl end = {.verb = RDMA_CTL_END};
                r = send_ctl(s, &end);
        }
        return r;
}

static int server_tests(struct side *s) {
        if (grow_rows(s) < 0)
                return -ENOMEM;
        const struct rdma_plan *p = &s->res->plan;
        double wait_ms = 2 * s->o->step_ms + 10000; /* the client runs a step between two messages */
        for (;;) {
                struct rdma_ctl c, a;
                int r = recv_ctl(s, wait_ms, "waiting for the next step", &c);
                if (r < 0)
                        return r;
                if (c.verb == RDMA_CTL_END)
                        return 0;
                if (c.verb != RDMA_CTL_STEP || c.size > s->region)
                        return fail(s, RDMA_FAIL_PEER, -EPROTO, "the client %s sent a step out of turn", s->conn.peer);
                uint64_t size = c.size;
                if ((r = mem_prepare(s, size)) < 0)
                        return r;
                a = (struct rdma_ctl){.verb = RDMA_CTL_READY};
                if ((r = send_ctl(s, &a)) < 0)
                        return r;
                if (c.test == RDMA_TEST_WRITE_LAT && (r = lat_loop(s, size, false, NULL)) < 0)
                        return r;
                if ((r = expect_ctl(s, wait_ms, RDMA_CTL_DONE, "waiting for the client's test", &a)) < 0)
                        return r;
                /* what the client's writes left here: all of the size, or, for the latency test,
                 * all but the last byte (the round trip's counter) */
                uint64_t off = UINT64_MAX;
                if (c.test == RDMA_TEST_WRITE_LAT && !s->host)
                        return fail(s, RDMA_FAIL_PEER, -EPROTO, "the client asked for write_lat on GPU memory");
                if (c.test == RDMA_TEST_WRITE_BW && (r = mem_check(s, size, size, &off)) < 0)
                        return r;
                if (c.test == RDMA_TEST_WRITE_LAT)
                        off = check_pattern(s->host, size, size - 1);
                if (c.test == RDMA_TEST_WRITE_LAT) {
                        struct rdma_lat_row *row = &s->res->lat[s->res->n_lat++ % 64];
                        *row = (struct rdma_lat_row){.bytes = size, .iters = p->lat_iters, .verified = off == UINT64_MAX,
                                                     .t_min_us = -1, .t_max_us = -1, .t_typical_us = -1, .t_avg_us = -1,
                                                     .t_stdev_us = -1, .t_p99_us = -1, .t_p999_us = -1};
                        if (off != UINT64_MAX)
                                corrupt_text(row->verify_error, sizeof(row->verify_error), "the server", off, size);
                } else {
                        struct rdma_bw_row *row = &s->res->bw[s->res->n_bw++ % (64 * RDMA_TEST_COUNT)];
                        *row = (struct rdma_bw_row){.test = c.test, .bytes = size, .iters = p->iters,
                                                    .peak_gbps = -1, .avg_gbps = -1, .msg_rate_mpps = -1,
                                                    .verified = off == UINT64_MAX};
                        /* a read's bytes land at the client, which checks them */
                        if (off != UINT64_MAX)
                                corrupt_text(row->verify_error, sizeof(row->verify_error), "the server", off, size);
                }
                a = off == UINT64_MAX ? (struct rdma_ctl){.verb = RDMA_CTL_VERIFIED, .test = c.test, .size = size}
                                      : (struct rdma_ctl){.verb = RDMA_CTL_CORRUPT, .test = c.test, .size = size, .count = off};
                if ((r = send_ctl(s, &a)) < 0)
                        return r;
        }
}

static void teardown(struct side *s) {
        rdma_endpoint_close(s->ep);
        rdma_conn_close(&s->conn);
        free(s->staging);
        free(s->t_post);
        free(s->t_done);
}

int rdma_run(const struct rdma_options *o, struct rdma_result *ret) {
        memset(ret, 0, sizeof(*ret));
        ret->gid_index = -1;
        double start = monotonic_ms();
        struct side s = {.o = o, .res = ret, .conn = {.fd = -1}};
        int r = open_port(&s);
        if (r == 0)
                r = create_resources(&s);
        if (r == 0)
                r = handshake(&s);
        if (r == 0)
                r = o->server ? server_tests(&s) : client_tests(&s);
        if (r < 0 && ret->failure != RDMA_FAIL_PEER)
                send_error(&s); /* the peer then says why, instead of timing out */
        teardown(&s);
        ret->duration_ms = monotonic_ms() - start;
        return r;
}

void rdma_result_done(struct rdma_result *r) {
        free(r->bw);
        free(r->lat);
        r->bw = NULL;
        r->lat = NULL;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

void rdma_lat_stats(double *rtt_us, size_t n, struct rdma_lat_row *row) {
        qsort(rtt_us, n, sizeof(double), cmp_double);
        /* perftest drops the largest LAT_MEASURE_TAIL (2) */
        size_t m = n > 4 ? n - 2 : n;
        double sum = 0, sq = 0;
        for (size_t i = 0; i < m; i++)
                sum += rtt_us[i];
        double avg = sum / (double)m;
        for (size_t i = 0; i < m; i++)
                sq += (rtt_us[i] - avg) * (rtt_us[i] - avg);
        row->t_min_us = rtt_us[0];
        row->t_max_us = rtt_us[m - 1];
        row->t_typical_us = m % 2 ? rtt_us[m / 2] : (rtt_us[m / 2 - 1] + rtt_us[m / 2]) / 2;
        row->t_avg_us = avg;
        row->t_stdev_us = sqrt(sq / (double)m);
        size_t i99 = (size_t)ceil((double)m * 0.99), i999 = (size_t)ceil((double)m * 0.999);
        row->t_p99_us = rtt_us[(i99 ? i99 : 1) - 1];
        row->t_p999_us = rtt_us[(i999 ? i999 : 1) - 1];
}

double rdma_peak_gbps(const double *posted_us, const double *completed_us, size_t n, uint64_t bytes) {
        if (n == 0)
                return 0;
        /* perftest's opt_delta over every (i, j); bounded to ~4M pairs with a stride over j */
        size_t stride = n > 2000 ? n / 2000 : 1;
        double best = -1;
        for (size_t i = 0; i < n; i++)
                for (size_t j = i; j < n; j += stride) {
                        double t = (completed_us[j] - posted_us[i]) / (double)(j - i + 1);
                        if (t > 0 && (best < 0 || t < best))
                                best = t;
                }
        return best > 0 ? (double)bytes * 8 / (best * 1e-6) / 1e9 : 0;
}

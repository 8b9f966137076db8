#include "bench/rdma_run.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "bench/rdma_conn.h"
#include "bench/rdma_gpumem.h"
#include "core/deadline.h"
#include "vendor/verbs.h"

/* One side's resources. The buffer holds two regions of plan.max_bytes: the first receives
 * (the peer writes there, reads land there), the second sends (writes come from it, the
 * peer reads it). */
struct side {
        const struct rdma_options *o;
        struct rdma_result *res;
        struct verbs *v;
        struct ibv_context *ctx;
        struct ibv_pd *pd;
        struct ibv_cq *cq;
        struct ibv_qp *qp;
        struct ibv_mr *mr;
        struct ibv_port_attr port;
        union ibv_gid gid;
        uint8_t *buf;    /* host memory, or the device address (never dereferenced) with --gpu */
        uint64_t region; /* bytes per region */
        struct rdma_gpumem *gm; /* --gpu */
        uint8_t *staging;       /* --gpu: a region's bytes on the host, to fill and check */
        struct rdma_conn conn;
        struct rdma_hello mine, peer;
        uint32_t psn;
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

static double now_us(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
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
        if (!s->gm) {
                memset(s->buf, 0, size);
                fill_pattern(s->buf + s->region, size, size);
                return 0;
        }
        char err[256];
        fill_pattern(s->staging, size, size);
        int r = rdma_gpumem_zero(s->gm, 0, size, err, sizeof(err));
        if (r == 0)
                r = rdma_gpumem_write(s->gm, s->region, s->staging, size, err, sizeof(err));
        return r < 0 ? fail(s, RDMA_FAIL_MEMORY, r, "%s", err) : 0;
}

static int mem_check(struct side *s, uint64_t size, uint64_t n, uint64_t *ret_off) {
        if (!s->gm) {
                *ret_off = check_pattern(s->buf, size, n);
                return 0;
        }
        char err[256];
        int r = rdma_gpumem_read(s->gm, 0, s->staging, n, err, sizeof(err));
        if (r < 0)
                return fail(s, RDMA_FAIL_MEMORY, r, "%s", err);
        *ret_off = check_pattern(s->staging, size, n);
        return 0;
}

static unsigned mtu_bytes(int e) {
        return e >= IBV_MTU_256 && e <= IBV_MTU_4096 ? 128u << e : 0;
}

static int mtu_enum(unsigned bytes) {
        for (int e = IBV_MTU_256; e <= IBV_MTU_4096; e++)
                if (mtu_bytes(e) == bytes)
                        return e;
        return IBV_MTU_1024;
}

static const char *port_state_name(int s) {
        static const char *const names[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
        return s >= 0 && s <= 5 ? names[s] : "unknown";
}

/* --- opening the device and port --------------------------------------------------------- */

static bool gid_is_ipv4_mapped(const union ibv_gid *g) {
        static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        return memcmp(g->raw, prefix, 12) == 0;
}

static bool gid_is_zero(const union ibv_gid *g) {
        static const uint8_t zero[16];
        return memcmp(g->raw, zero, 16) == 0;
}

/* perftest's choice on RoCE: a RoCE v2 GID that is an IPv4-mapped address, else any RoCE
 * v2 one, else the first non-zero one. On InfiniBand: index 0 (the port GID). */
static int choose_gid(struct side *s) {
        struct rdma_result *res = s->res;
        int n = s->port.gid_tbl_len > 0 ? s->port.gid_tbl_len : 1;
        if (s->o->gid_index >= 0) {
                if (s->o->gid_index >= n)
                        return fail(s, RDMA_FAIL_BAD_INPUT, -EINVAL, "--gid-index %d: %s port %u has %d GIDs (0-%d)",
                                    s->o->gid_index, res->device, res->ib_port, n, n - 1);
                res->gid_index = s->o->gid_index;
        } else if (!res->ethernet) {
                res->gid_index = 0;
        } else {
                int best = -1, score = -1;
                for (int i = 0; i < n && i < 256; i++) {
                        union ibv_gid g;
                        if (s->v->fn.ibv_query_gid(s->ctx, (uint8_t)res->ib_port, i, &g) != 0 || gid_is_zero(&g))
                                continue;
                        bool v2 = false;
                        if (s->v->fn._ibv_query_gid_ex) {
                                struct ibv_gid_entry e;
                                if (s->v->fn._ibv_query_gid_ex(s->ctx, res->ib_port, (uint32_t)i, &e, 0, sizeof(e)) == 0)
                                        v2 = e.gid_type == IBV_GID_TYPE_ROCE_V2;
                        }
                        int sc = (v2 ? 2 : 0) + (gid_is_ipv4_mapped(&g) ? 1 : 0);
                        if (sc > score) {
                                score = sc;
                                best = i;
                        }
                }
                if (best < 0)
                        return fail(s, RDMA_FAIL_PORT, -ENODEV,
                                    "%s port %u (RoCE) has no usable GID: give its network interface an IP address",
                                    res->device, res->ib_port);
                res->gid_index = best;
        }
        if (s->v->fn.ibv_query_gid(s->ctx, (uint8_t)res->ib_port, res->gid_index, &s->gid) != 0)
                return fail(s, RDMA_FAIL_VERBS, -EIO, "ibv_query_gid(%s, port %u, index %d) failed", res->device,
                            res->ib_port, res->gid_index);
        if (s->v->fn._ibv_query_gid_ex) {
                struct ibv_gid_entry e;
                if (s->v->fn._ibv_query_gid_ex(s->ctx, res->ib_port, (uint32_t)res->gid_index, &e, 0, sizeof(e)) == 0)
                        res->gid_roce_v2 = e.gid_type == IBV_GID_TYPE_ROCE_V2;
        }
        if (!inet_ntop(AF_INET6, s->gid.raw, res->gid, sizeof(res->gid)))
                snprintf(res->gid, sizeof(res->gid), "?");
        return 0;
}

static int open_port(struct side *s) {
        struct rdma_result *res = s->res;
        char err[1024];
        int r = verbs_open(&s->v, err, sizeof(err));
        if (r < 0)
                return fail(s, RDMA_FAIL_LIBRARY, r, "%s", err);
        int n = 0;
        struct ibv_device **list = s->v->fn.ibv_get_device_list(&n);
        if (!list) {
                int e = errno ? errno : ENODEV;
                return fail(s, RDMA_FAIL_NO_DEVICE, -e, "ibv_get_device_list (%s): %s%s", s->v->dl.name, strerror(e),
                            e == ENOSYS ? ": this kernel has no RDMA support (the ib_uverbs module, "
                                          "/sys/class/infiniband_verbs)"
                                        : "");
        }
        if (n == 0) {
                s->v->fn.ibv_free_device_list(list);
                return fail(s, RDMA_FAIL_NO_DEVICE, -ENODEV,
                            "no RDMA device: libibverbs (%s) found none (is the HCA's driver loaded, e.g. mlx5_ib? "
                            "ibv_devices lists them)",
                            s->v->dl.name);
        }
        char names[256] = "";
        for (int i = 0; i < n; i++) {
                const char *nm = s->v->fn.ibv_get_device_name(list[i]);
                size_t l = strlen(names);
                snprintf(names + l, sizeof(names) - l, "%s%s", i ? ", " : "", nm ? nm : "?");
        }
        /* the named device, else each in turn until one has an active port */
        for (int i = 0; i < n && !s->ctx; i++) {
                const char *nm = s->v->fn.ibv_get_device_name(list[i]);
                if (s->o->device && (!nm || strcmp(nm, s->o->device) != 0))
                        continue;
                struct ibv_context *ctx = s->v->fn.ibv_open_device(list[i]);
                if (!ctx) {
                        if (s->o->device) {
                                int e = errno ? errno : EIO;
                                s->v->fn.ibv_free_device_list(list);
                                return fail(s, RDMA_FAIL_VERBS, -e, "ibv_open_device(%s): %s", nm, strerror(e));
                        }
                        continue;
                }
                /* the port asked for; else the first ACTIVE one of ports 1 and 2 (an HCA's
                 * two ports), and for a named device without one, its first port at all */
                unsigned first = s->o->ib_port ? s->o->ib_port : 1, last = s->o->ib_port ? s->o->ib_port : 2;
                bool chosen = false, have_any = false;
                struct ibv_port_attr any;
                unsigned any_port = 0;
                for (unsigned p = first; p <= last && !chosen; p++) {
                        struct ibv_port_attr a;
                        memset(&a, 0, sizeof(a));
                        int q = s->v->fn.ibv_query_port(ctx, (uint8_t)p, (struct _compat_ibv_port_attr *)&a);
                        if (q != 0) {
                                if (s->o->ib_port) {
                                        s->v->fn.ibv_close_device(ctx);
                                        s->v->fn.ibv_free_device_list(list);
                                        return fail(s, RDMA_FAIL_BAD_INPUT, -EINVAL,
                                                    "%s has no port %u (ibv_query_port: %s)", nm, p, strerror(q > 0 ? q : EINVAL));
                                }
                                continue;
                        }
                        if (!have_any) {
                                any = a;
                                any_port = p;
                                have_any = true;
                        }
                        if (a.state != IBV_PORT_ACTIVE)
                                continue;
                        s->port = a;
                        res->ib_port = p;
                        chosen = true;
                }
                if (!chosen && have_any && s->o->device) {
                        s->port = any; /* reported below as not ACTIVE */
                        res->ib_port = any_port;
                        chosen = true;
                }
                if (chosen)
                        snprintf(res->device, sizeof(res->device), "%s", nm);
                if (chosen)
                        s->ctx = ctx;
                else
                        s->v->fn.ibv_close_device(ctx);
        }
        s->v->fn.ibv_free_device_list(list);
        if (!s->ctx) {
                if (s->o->device)
                        return fail(s, RDMA_FAIL_BAD_INPUT, -ENODEV, "no RDMA device %s (this node has: %s)",
                                    s->o->device, names);
                return fail(s, RDMA_FAIL_PORT, -ENODEV, "no RDMA device has an ACTIVE port (this node has: %s)",
                            names);
        }
        res->ethernet = s->port.link_layer == IBV_LINK_LAYER_ETHERNET;
        res->lid = s->port.lid;
        res->active_speed = s->port.active_speed;
        res->active_width = s->port.active_width;
        res->have_rate = rdma_link_rate(s->port.active_speed, s->port.active_width, &res->rate) == 0;
        if (s->port.state != IBV_PORT_ACTIVE)
                return fail(s, RDMA_FAIL_PORT, -ENETDOWN, "%s port %u is %s, not ACTIVE (ibstat shows why: cable, "
                                                          "switch, subnet manager)",
                            res->device, res->ib_port, port_state_name(s->port.state));
        return choose_gid(s);
}

/* GPU memory: a dma-buf (cuMemGetHandleForAddressRange + ibv_reg_dmabuf_mr) when the
 * driver, rdma-core and the kernel support it, else ibv_reg_mr on the device address,
 * which works when nvidia_peermem is loaded; res->memory says which. */
static int register_gpu(struct side *s, size_t bytes, int access) {
        struct rdma_result *res = s->res;
        char dmabuf_why[256] = "";
        if (!s->v->fn.ibv_reg_dmabuf_mr) {
                snprintf(dmabuf_why, sizeof(dmabuf_why), "%.200s has no ibv_reg_dmabuf_mr (rdma-core 34+)", s->v->dl.name);
        } else {
                int fd = -1;
                if (rdma_gpumem_dmabuf(s->gm, &fd, dmabuf_why, sizeof(dmabuf_why)) == 0) {
                        s->mr = s->v->fn.ibv_reg_dmabuf_mr(s->pd, 0, bytes, (uint64_t)(uintptr_t)s->buf, fd, access);
                        int e = errno;
                        close(fd);
                        if (s->mr) {
                                snprintf(res->memory, sizeof(res->memory), "%s, dma-buf (ibv_reg_dmabuf_mr)",
                                         rdma_gpumem_name(s->gm));
                                return 0;
                        }
                        snprintf(dmabuf_why, sizeof(dmabuf_why), "ibv_reg_dmabuf_mr: %s", strerror(e ? e : EIO));
                }
        }
        errno = 0;
        s->mr = s->v->fn.ibv_reg_mr(s->pd, s->buf, bytes, access);
        if (s->mr) {
                snprintf(res->memory, sizeof(res->memory), "%s, nvidia_peermem (ibv_reg_mr; dma-buf: %.80s)",
                         rdma_gpumem_name(s->gm), dmabuf_why);
                return 0;
        }
        int e = errno ? errno : EIO;
        return fail(s, RDMA_FAIL_MEMORY, -e,
                    "GPU memory of %s could not be registered: dma-buf path: %s; nvidia_peermem path (ibv_reg_mr on "
                    "the device address): %s (is the nvidia_peermem module loaded? modprobe nvidia-peermem; or use "
                    "the open kernel modules with rdma-core 34+ for dma-buf)",
                    rdma_gpumem_name(s->gm), dmabuf_why, strerror(e));
}

static int create_resources(struct side *s) {
        struct rdma_result *res = s->res;
        const struct rdma_plan *p = &s->o->plan;
        s->region = p->max_bytes;
        size_t bytes = (size_t)(2 * s->region);
        size_t rounded = (bytes + 4095) & ~(size_t)4095;
        if (s->o->gpu >= 0) {
                char err[512];
                uint64_t dptr = 0;
                int r = rdma_gpumem_open(s->o->gpu, bytes, &s->gm, &dptr, err, sizeof(err));
                if (r < 0)
                        return fail(s, r == -ENODEV ? RDMA_FAIL_BAD_INPUT : RDMA_FAIL_MEMORY, r, "%s", err);
                s->buf = (uint8_t *)(uintptr_t)dptr;
                s->staging = malloc((size_t)s->region);
                if (!s->staging)
                        return fail(s, RDMA_FAIL_MEMORY, -ENOMEM, "out of memory");
        } else {
                s->buf = aligned_alloc(4096, rounded);
                if (!s->buf)
                        return fail(s, RDMA_FAIL_MEMORY, -ENOMEM, "cannot allocate the %zu-byte buffer", rounded);
                memset(s->buf, 0, rounded);
                snprintf(res->memory, sizeof(res->memory), "host");
        }
        s->pd = s->v->fn.ibv_alloc_pd(s->ctx);
        if (!s->pd)
                return fail(s, RDMA_FAIL_VERBS, -EIO, "ibv_alloc_pd(%s): %s", res->device, strerror(errno ? errno : EIO));
        int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
        if (s->gm) {
                int r = register_gpu(s, bytes, access);
                if (r < 0)
                        return r;
        } else {
                s->mr = s->v->fn.ibv_reg_mr(s->pd, s->buf, bytes, access);
        }
        if (!s->mr) {
                int e = errno ? errno : EIO;
                if (s->gm)
                        return -e; /* register_gpu said why */
                return fail(s, RDMA_FAIL_MEMORY, -e, "ibv_reg_mr of %zu bytes of host memory on %s: %s%s", bytes,
                            res->device, strerror(e),
                            e == ENOMEM ? " (the locked-memory limit? ulimit -l must allow it: unlimited for RDMA)" : "");
        }
        int depth = (int)p->tx_depth;
        s->cq = s->v->fn.ibv_create_cq(s->ctx, 2 * depth + 16, NULL, NULL, 0);
        if (!s->cq)
                return fail(s, RDMA_FAIL_VERBS, -EIO, "ibv_create_cq(%d entries) on %s: %s", 2 * depth + 16,
                            res->device, strerror(errno ? errno : EIO));
        struct ibv_qp_init_attr ia = {.send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
                                      .cap = {.max_send_wr = (uint32_t)depth + 4, .max_recv_wr = 1, .max_send_sge = 1,
                                              .max_recv_sge = 1}};
        s->qp = s->v->fn.ibv_create_qp(s->pd, &ia);
        if (!s->qp)
                return fail(s, RDMA_FAIL_VERBS, -EIO, "ibv_create_qp(RC, %d send requests) on %s: %s", depth + 4,
                            res->device, strerror(errno ? errno : EIO));
        struct ibv_qp_attr qa = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = (uint8_t)res->ib_port,
                                 .qp_access_flags = (unsigned)access};
        int r = s->v->fn.ibv_modify_qp(s->qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
        if (r != 0)
                return fail(s, RDMA_FAIL_VERBS, -r, "ibv_modify_qp to INIT: %s", strerror(r > 0 ? r : EIO));
        s->t_cap = p->iters > p->lat_iters ? p->iters : p->lat_iters;
        s->t_post = calloc(s->t_cap, sizeof(double));
        s->t_done = calloc(s->t_cap, sizeof(double));
        if (!s->t_post || !s->t_done)
                return fail(s, RDMA_FAIL_MEMORY, -ENOMEM, "out of memory");
        /* perftest draws its PSN at random (lrand48) too */
        s->psn = (uint32_t)((unsigned)getpid() * 2654435761u ^ (unsigned)now_us()) & 0xffffff;
        return 0;
}

static int connect_qp(struct side *s) {
        struct rdma_result *res = s->res;
        unsigned mtu = mtu_bytes(s->port.active_mtu);
        if (s->peer.mtu < mtu)
                mtu = s->peer.mtu;
        if (mtu == 0)
                mtu = 1024;
        res->mtu = mtu;
        struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR, .path_mtu = (enum ibv_mtu)mtu_enum(mtu),
                                .dest_qp_num = s->peer.qpn, .rq_psn = s->peer.psn, .max_dest_rd_atomic = 16,
                                .min_rnr_timer = 12};
        a.ah_attr.dlid = s->peer.lid;
        a.ah_attr.port_num = (uint8_t)res->ib_port;
        /* RoCE always routes by GID; InfiniBand by LID within the subnet */
        if (res->ethernet || s->peer.lid == 0) {
                a.ah_attr.is_global = 1;
                memcpy(a.ah_attr.grh.dgid.raw, s->peer.gid, 16);
                a.ah_attr.grh.sgid_index = (uint8_t)res->gid_index;
                a.ah_attr.grh.hop_limit = 64;
        }
        int r = s->v->fn.ibv_modify_qp(s->qp, &a,
                                       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                               IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
        if (r != 0)
                return fail(s, RDMA_FAIL_VERBS, -(r > 0 ? r : EIO),
                            "ibv_modify_qp to RTR (peer QPN %" PRIu32 ", LID %u, MTU %u): %s", s->peer.qpn, s->peer.lid,
                            mtu, strerror(r > 0 ? r : EIO));
        struct ibv_qp_attr b = {.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
                                .sq_psn = s->psn, .max_rd_atomic = 16};
        r = s->v->fn.ibv_modify_qp(s->qp, &b,
                                   IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                           IBV_QP_MAX_QP_RD_ATOMIC);
        if (r != 0)
                return fail(s, RDMA_FAIL_VERBS, -(r > 0 ? r : EIO), "ibv_modify_qp to RTS: %s", strerror(r > 0 ? r : EIO));
        return 0;
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
        s->mine = (struct rdma_hello){.lid = res->lid, .qpn = s->qp->qp_num & 0xffffff, .psn = s->psn,
                                      .rkey = s->mr->rkey, .addr = (uint64_t)(uintptr_t)s->buf,
                                      .buf_bytes = 2 * s->region, .mtu = mtu_bytes(s->port.active_mtu),
                                      .ethernet = res->ethernet, .gpu_memory = o->gpu >= 0, .plan = o->plan};
        if (s->mine.mtu == 0)
                s->mine.mtu = 1024;
        memcpy(s->mine.gid, s->gid.raw, 16);
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

static int wc_failed(struct side *s, const struct ibv_wc *wc, const char *test, uint64_t size) {
        const char *name = verbs_wc_status_name(wc->status);
        const char *text = s->v->fn.ibv_wc_status_str(wc->status);
        return fail(s, RDMA_FAIL_VERBS, -EIO,
                    "%s at %" PRIu64 " bytes: work request %" PRIu64 " completed with %s (%d: %s)%s", test, size,
                    wc->wr_id, name ? name : "an unknown status", (int)wc->status, text ? text : "?",
                    wc->status == IBV_WC_RETRY_EXC_ERR ? "; the peer's HCA does not answer: link, routing (GID/LID) "
                                                          "or the peer itself"
                    : wc->status == IBV_WC_REM_ACCESS_ERR ? "; the peer refused the access (rkey or address)"
                                                           : "");
}

static int post_one(struct side *s, enum ibv_wr_opcode op, uint64_t wr_id, uint8_t *local, uint64_t remote,
                    uint64_t size, bool signaled) {
        struct ibv_sge sge = {.addr = (uint64_t)(uintptr_t)local, .length = (uint32_t)size, .lkey = s->mr->lkey};
        struct ibv_send_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
                                 .send_flags = signaled ? IBV_SEND_SIGNALED : 0};
        wr.wr.rdma.remote_addr = remote;
        wr.wr.rdma.rkey = s->peer.rkey;
        struct ibv_send_wr *bad = NULL;
        int r = verbs_post_send(s->qp, &wr, &bad);
        if (r != 0)
                return fail(s, RDMA_FAIL_VERBS, -(r > 0 ? r : EIO), "ibv_post_send (%s of %" PRIu64 " bytes): %s",
                            op == IBV_WR_RDMA_READ ? "RDMA READ" : "RDMA WRITE", size, strerror(r > 0 ? r : EIO));
        return 0;
}

static int bw_loop(struct side *s, enum rdma_test t, uint64_t size, struct rdma_bw_row *row) {
        const struct rdma_plan *p = &s->res->plan;
        bool rd = t == RDMA_TEST_READ_BW;
        uint8_t *recv_region = s->buf, *send_region = s->buf + s->region;
        uint8_t *local = rd ? recv_region : send_region;
        uint64_t remote = rd ? s->peer.addr + s->region : s->peer.addr;
        unsigned n = p->iters, depth = p->tx_depth, posted = 0, done = 0;
        double deadline = monotonic_ms() + s->o->step_ms;
        unsigned spins = 0;
        while (done < n) {
                while (posted < n && posted - done < depth) {
                        s->t_post[posted] = now_us();
                        int r = post_one(s, rd ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE, posted, local, remote, size, true);
                        if (r < 0)
                                return r;
                        posted++;
                }
                struct ibv_wc wc[16];
                int k = verbs_poll_cq(s->cq, 16, wc);
                if (k < 0)
                        return fail(s, RDMA_FAIL_VERBS, -EIO, "ibv_poll_cq failed (%d)", k);
                double tnow = now_us();
                for (int i = 0; i < k; i++) {
                        if (wc[i].status != IBV_WC_SUCCESS)
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
        volatile uint8_t *recv_last = s->buf + size - 1;
        uint8_t *send_region = s->buf + s->region;
        double deadline = monotonic_ms() + s->o->step_ms;
        unsigned outstanding = 0;
        for (unsigned i = 0; i < n; i++) {
                uint8_t val = (uint8_t)(i % 255 + 1);
                if (!initiator || i > 0) {
                        /* wait for the peer's i-th write (the initiator: its answer to i-1) */
                        uint8_t want = initiator ? (uint8_t)((i - 1) % 255 + 1) : val;
                        unsigned spins = 0;
                        while (*recv_last != want) {
                                struct ibv_wc wc[4];
                                int k = verbs_poll_cq(s->cq, 4, wc);
                                for (int j = 0; j < k; j++) {
                                        if (wc[j].status != IBV_WC_SUCCESS)
                                                return wc_failed(s, &wc[j], "write_lat", size);
                                        outstanding--;
                                }
                                idle(++spins);
                                if (spins % 4096 == 0 && monotonic_ms() > deadline)
                                        return fail(s, RDMA_FAIL_PEER, -ETIMEDOUT,
                                                    "write_lat at %" PRIu64 " bytes: no write from the peer for round "
                                                    "trip %u of %u within %.0f s (the peer or the link stopped answering)",
                                                    size, i + 1, n, s->o->step_ms / 1000);
                        }
                }
                if (initiator)
                        s->t_post[i] = now_us();
                send_region[size - 1] = val;
                while (outstanding >= s->res->plan.tx_depth + 2) {
                        struct ibv_wc wc[4];
                        int k = verbs_poll_cq(s->cq, 4, wc);
                        for (int j = 0; j < k; j++) {
                                if (wc[j].status != IBV_WC_SUCCESS)
                                        return wc_failed(s, &wc[j], "write_lat", size);
                                outstanding--;
                        }
                        if (monotonic_ms() > deadline)
                                return fail(s, RDMA_FAIL_PEER, -ETIMEDOUT, "write_lat: send queue stuck");
                }
                int r = post_one(s, IBV_WR_RDMA_WRITE, i, send_region, s->peer.addr, size, true);
                if (r < 0)
                        return r;
                outstanding++;
        }
        /* the initiator's last answer, and every completion */
        unsigned spins = 0;
        uint8_t last = (uint8_t)((n - 1) % 255 + 1);
        while ((initiator && *recv_last != last) || outstanding > 0) {
                struct ibv_wc wc[4];
                int k = verbs_poll_cq(s->cq, 4, wc);
                for (int j = 0; j < k; j++) {
                        if (wc[j].status != IBV_WC_SUCCESS)
                                return wc_failed(s, &wc[j], "write_lat", size);
                        outstanding--;
                }
                idle(++spins);
                if (spins % 4096 == 0 && monotonic_ms() > deadline)
                        return fail(s, RDMA_FAIL_PEER, -ETIMEDOUT,
                                    "write_lat at %" PRIu64 " bytes: the last round trip did not complete within %.0f s",
                                    size, s->o->step_ms / 1000);
        }
        if (initiator) {
                double end = now_us();
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
                if (c.test == RDMA_TEST_WRITE_LAT && s->gm)
                        return fail(s, RDMA_FAIL_PEER, -EPROTO, "the client asked for write_lat on GPU memory");
                if (c.test == RDMA_TEST_WRITE_BW && (r = mem_check(s, size, size, &off)) < 0)
                        return r;
                if (c.test == RDMA_TEST_WRITE_LAT)
                        off = check_pattern(s->buf, size, size - 1);
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
        if (s->v) {
                if (s->qp)
                        (void)s->v->fn.ibv_destroy_qp(s->qp);
                if (s->cq)
                        (void)s->v->fn.ibv_destroy_cq(s->cq);
                if (s->mr)
                        (void)s->v->fn.ibv_dereg_mr(s->mr);
                if (s->pd)
                        (void)s->v->fn.ibv_dealloc_pd(s->pd);
                if (s->ctx)
                        (void)s->v->fn.ibv_close_device(s->ctx);
        }
        rdma_conn_close(&s->conn);
        s->v = verbs_close(s->v);
        /* the buffer outlives a QP whose requests may still be in flight at a hung peer: a
         * real HCA would still DMA into it; free it only when the QP was destroyed */
        if (s->gm) {
                if (s->qp || !s->mr)
                        rdma_gpumem_close(s->gm);
                free(s->staging);
        } else if (s->qp || !s->mr) {
                free(s->buf);
        }
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

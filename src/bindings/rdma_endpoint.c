/* bench/rdma_endpoint.h over libibverbs (bindings/verbs.h), with GPU memory from
 * bindings/rdma_gpumem.h. */
#include "bench/rdma_endpoint.h"
#include "core/clock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bindings/rdma_gpumem.h"
#include "bindings/verbs.h"

struct rdma_endpoint {
        struct verbs *v;
        struct ibv_context *ctx;
        struct ibv_pd *pd;
        struct ibv_cq *cq;
        struct ibv_qp *qp;
        struct ibv_mr *mr;
        struct ibv_port_attr port;
        union ibv_gid gid;
        char device[64]; /* for messages */
        unsigned ib_port;
        int gid_index;
        bool ethernet;
        uint8_t *buf;           /* host memory, or the device address (never dereferenced) with GPU memory */
        size_t bytes;           /* both regions */
        struct rdma_gpumem *gm; /* GPU memory */
        char memory[256];
        uint32_t psn;
        uint32_t peer_rkey;
        uint64_t peer_addr;
};

static int fail(struct rdma_endpoint_error *err, enum rdma_failure f, int r, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static int fail(struct rdma_endpoint_error *err, enum rdma_failure f, int r, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->text, sizeof(err->text), fmt, ap);
        va_end(ap);
        err->failure = f;
        return r < 0 ? r : -EIO;
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
static int choose_gid(struct rdma_endpoint *ep, const struct rdma_port_choice *want, struct rdma_port_info *info,
                      struct rdma_endpoint_error *err) {
        int n = ep->port.gid_tbl_len > 0 ? ep->port.gid_tbl_len : 1;
        if (want->gid_index >= 0) {
                if (want->gid_index >= n)
                        return fail(err, RDMA_FAIL_BAD_INPUT, -EINVAL, "--gid-index %d: %s port %u has %d GIDs (0-%d)",
                                    want->gid_index, info->device, info->ib_port, n, n - 1);
                info->gid_index = want->gid_index;
        } else if (!info->ethernet) {
                info->gid_index = 0;
        } else {
                int best = -1, score = -1;
                for (int i = 0; i < n && i < 256; i++) {
                        union ibv_gid g;
                        if (ep->v->fn.ibv_query_gid(ep->ctx, (uint8_t)info->ib_port, i, &g) != 0 || gid_is_zero(&g))
                                continue;
                        bool v2 = false;
                        if (ep->v->fn._ibv_query_gid_ex) {
                                struct ibv_gid_entry e;
                                if (ep->v->fn._ibv_query_gid_ex(ep->ctx, info->ib_port, (uint32_t)i, &e, 0, sizeof(e)) == 0)
                                        v2 = e.gid_type == IBV_GID_TYPE_ROCE_V2;
                        }
                        int sc = (v2 ? 2 : 0) + (gid_is_ipv4_mapped(&g) ? 1 : 0);
                        if (sc > score) {
                                score = sc;
                                best = i;
                        }
                }
                if (best < 0)
                        return fail(err, RDMA_FAIL_PORT, -ENODEV,
                                    "%s port %u (RoCE) has no usable GID: give its network interface an IP address",
                                    info->device, info->ib_port);
                info->gid_index = best;
        }
        if (ep->v->fn.ibv_query_gid(ep->ctx, (uint8_t)info->ib_port, info->gid_index, &ep->gid) != 0)
                return fail(err, RDMA_FAIL_VERBS, -EIO, "ibv_query_gid(%s, port %u, index %d) failed", info->device,
                            info->ib_port, info->gid_index);
        if (ep->v->fn._ibv_query_gid_ex) {
                struct ibv_gid_entry e;
                if (ep->v->fn._ibv_query_gid_ex(ep->ctx, info->ib_port, (uint32_t)info->gid_index, &e, 0, sizeof(e)) == 0)
                        info->gid_roce_v2 = e.gid_type == IBV_GID_TYPE_ROCE_V2;
        }
        if (!inet_ntop(AF_INET6, ep->gid.raw, info->gid, sizeof(info->gid)))
                snprintf(info->gid, sizeof(info->gid), "?");
        ep->gid_index = info->gid_index;
        return 0;
}

static int open_port(struct rdma_endpoint *ep, const struct rdma_port_choice *want, struct rdma_port_info *info,
                     struct rdma_endpoint_error *err) {
        char why[1024];
        int r = verbs_open(&ep->v, why, sizeof(why));
        if (r < 0)
                return fail(err, RDMA_FAIL_LIBRARY, r, "%s", why);
        int n = 0;
        struct ibv_device **list = ep->v->fn.ibv_get_device_list(&n);
        if (!list) {
                int e = errno ? errno : ENODEV;
                return fail(err, RDMA_FAIL_NO_DEVICE, -e, "ibv_get_device_list (%s): %s%s", ep->v->dl.name, strerror(e),
                            e == ENOSYS ? ": this kernel has no RDMA support (the ib_uverbs module, "
                                          "/sys/class/infiniband_verbs)"
                                        : "");
        }
        if (n == 0) {
                ep->v->fn.ibv_free_device_list(list);
                return fail(err, RDMA_FAIL_NO_DEVICE, -ENODEV,
                            "no RDMA device: libibverbs (%s) found none (is the HCA's driver loaded, e.g. mlx5_ib? "
                            "ibv_devices lists them)",
                            ep->v->dl.name);
        }
        char names[256] = "";
        for (int i = 0; i < n; i++) {
                const char *nm = ep->v->fn.ibv_get_device_name(list[i]);
                size_t l = strlen(names);
                snprintf(names + l, sizeof(names) - l, "%s%s", i ? ", " : "", nm ? nm : "?");
        }
        /* the named device, else each in turn until one has an active port */
        for (int i = 0; i < n && !ep->ctx; i++) {
                const char *nm = ep->v->fn.ibv_get_device_name(list[i]);
                if (want->device && (!nm || strcmp(nm, want->device) != 0))
                        continue;
                struct ibv_context *ctx = ep->v->fn.ibv_open_device(list[i]);
                if (!ctx) {
                        if (want->device) {
                                int e = errno ? errno : EIO;
                                ep->v->fn.ibv_free_device_list(list);
                                return fail(err, RDMA_FAIL_VERBS, -e, "ibv_open_device(%s): %s", nm, strerror(e));
                        }
                        continue;
                }
                /* the port asked for; else the first ACTIVE one of ports 1 and 2 (an HCA's
                 * two ports), and for a named device without one, its first port at all */
                unsigned first = want->ib_port ? want->ib_port : 1, last = want->ib_port ? want->ib_port : 2;
                bool chosen = false, have_any = false;
                struct ibv_port_attr any;
                unsigned any_port = 0;
                for (unsigned p = first; p <= last && !chosen; p++) {
                        struct ibv_port_attr a;
                        memset(&a, 0, sizeof(a));
                        int q = ep->v->fn.ibv_query_port(ctx, (uint8_t)p, (struct _compat_ibv_port_attr *)&a);
                        if (q != 0) {
                                if (want->ib_port) {
                                        ep->v->fn.ibv_close_device(ctx);
                                        ep->v->fn.ibv_free_device_list(list);
                                        return fail(err, RDMA_FAIL_BAD_INPUT, -EINVAL,
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
                        ep->port = a;
                        info->ib_port = p;
                        chosen = true;
                }
                if (!chosen && have_any && want->device) {
                        ep->port = any; /* reported below as not ACTIVE */
                        info->ib_port = any_port;
                        chosen = true;
                }
                if (chosen)
                        snprintf(info->device, sizeof(info->device), "%s", nm);
                if (chosen)
                        ep->ctx = ctx;
                else
                        ep->v->fn.ibv_close_device(ctx);
        }
        ep->v->fn.ibv_free_device_list(list);
        if (!ep->ctx) {
                if (want->device)
                        return fail(err, RDMA_FAIL_BAD_INPUT, -ENODEV, "no RDMA device %s (this node has: %s)",
                                    want->device, names);
                return fail(err, RDMA_FAIL_PORT, -ENODEV, "no RDMA device has an ACTIVE port (this node has: %s)",
                            names);
        }
        info->have_port = true;
        info->ethernet = ep->port.link_layer == IBV_LINK_LAYER_ETHERNET;
        info->lid = ep->port.lid;
        info->active_speed = ep->port.active_speed;
        info->active_width = ep->port.active_width;
        snprintf(ep->device, sizeof(ep->device), "%s", info->device);
        ep->ib_port = info->ib_port;
        ep->ethernet = info->ethernet;
        if (ep->port.state != IBV_PORT_ACTIVE)
                return fail(err, RDMA_FAIL_PORT, -ENETDOWN, "%s port %u is %s, not ACTIVE (ibstat shows why: cable, "
                                                            "switch, subnet manager)",
                            info->device, info->ib_port, port_state_name(ep->port.state));
        return choose_gid(ep, want, info, err);
}

int rdma_endpoint_open(const struct rdma_port_choice *want, struct rdma_endpoint **ret, struct rdma_port_info *info,
                       struct rdma_endpoint_error *err) {
        *ret = NULL;
        *info = (struct rdma_port_info){.gid_index = -1};
        struct rdma_endpoint *ep = calloc(1, sizeof(*ep));
        if (!ep)
                return fail(err, RDMA_FAIL_MEMORY, -ENOMEM, "out of memory");
        ep->gid_index = -1;
        int r = open_port(ep, want, info, err);
        if (r < 0) {
                rdma_endpoint_close(ep);
                return r;
        }
        *ret = ep;
        return 0;
}

/* --- the buffer ------------------------------------------------------------------------------ */

int rdma_endpoint_alloc(struct rdma_endpoint *ep, uint64_t region_bytes, int gpu, struct rdma_endpoint_error *err) {
        ep->bytes = (size_t)(2 * region_bytes);
        if (gpu >= 0) {
                char why[512];
                uint64_t dptr = 0;
                int r = rdma_gpumem_open(gpu, ep->bytes, &ep->gm, &dptr, why, sizeof(why));
                if (r < 0)
                        return fail(err, r == -ENODEV ? RDMA_FAIL_BAD_INPUT : RDMA_FAIL_MEMORY, r, "%s", why);
                ep->buf = (uint8_t *)(uintptr_t)dptr;
                return 0;
        }
        size_t rounded = (ep->bytes + 4095) & ~(size_t)4095;
        ep->buf = aligned_alloc(4096, rounded);
        if (!ep->buf)
                return fail(err, RDMA_FAIL_MEMORY, -ENOMEM, "cannot allocate the %zu-byte buffer", rounded);
        memset(ep->buf, 0, rounded);
        snprintf(ep->memory, sizeof(ep->memory), "host");
        return 0;
}

/* GPU memory: a dma-buf (cuMemGetHandleForAddressRange + ibv_reg_dmabuf_mr) when the
 * driver, rdma-core and the kernel support it, else ibv_reg_mr on the device address,
 * which works when nvidia_peermem is loaded; ep->memory says which. */
static int register_gpu(struct rdma_endpoint *ep, int access, struct rdma_endpoint_error *err) {
        char dmabuf_why[256] = "";
        if (!ep->v->fn.ibv_reg_dmabuf_mr) {
                snprintf(dmabuf_why, sizeof(dmabuf_why), "%.200s has no ibv_reg_dmabuf_mr (rdma-core 34+)", ep->v->dl.name);
        } else {
                int fd = -1;
                if (rdma_gpumem_dmabuf(ep->gm, &fd, dmabuf_why, sizeof(dmabuf_why)) == 0) {
                        ep->mr = ep->v->fn.ibv_reg_dmabuf_mr(ep->pd, 0, ep->bytes, (uint64_t)(uintptr_t)ep->buf, fd, access);
                        int e = errno;
                        close(fd);
                        if (ep->mr) {
                                snprintf(ep->memory, sizeof(ep->memory), "%s, dma-buf (ibv_reg_dmabuf_mr)",
                                         rdma_gpumem_name(ep->gm));
                                return 0;
                        }
                        snprintf(dmabuf_why, sizeof(dmabuf_why), "ibv_reg_dmabuf_mr: %s", strerror(e ? e : EIO));
                }
        }
        errno = 0;
        ep->mr = ep->v->fn.ibv_reg_mr(ep->pd, ep->buf, ep->bytes, access);
        if (ep->mr) {
                snprintf(ep->memory, sizeof(ep->memory), "%s, nvidia_peermem (ibv_reg_mr; dma-buf: %.80s)",
                         rdma_gpumem_name(ep->gm), dmabuf_why);
                return 0;
        }
        int e = errno ? errno : EIO;
        return fail(err, RDMA_FAIL_MEMORY, -e,
                    "GPU memory of %s could not be registered: dma-buf path: %s; nvidia_peermem path (ibv_reg_mr on "
                    "the device address): %s (is the nvidia_peermem module loaded? modprobe nvidia-peermem; or use "
                    "the open kernel modules with rdma-core 34+ for dma-buf)",
                    rdma_gpumem_name(ep->gm), dmabuf_why, strerror(e));
}

/* The peer writes into and reads from this buffer; local writes land there from reads. */
#define ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

int rdma_endpoint_register(struct rdma_endpoint *ep, struct rdma_endpoint_error *err) {
        ep->pd = ep->v->fn.ibv_alloc_pd(ep->ctx);
        if (!ep->pd)
                return fail(err, RDMA_FAIL_VERBS, -EIO, "ibv_alloc_pd(%s): %s", ep->device, strerror(errno ? errno : EIO));
        if (ep->gm)
                return register_gpu(ep, ACCESS, err);
        ep->mr = ep->v->fn.ibv_reg_mr(ep->pd, ep->buf, ep->bytes, ACCESS);
        if (!ep->mr) {
                int e = errno ? errno : EIO;
                return fail(err, RDMA_FAIL_MEMORY, -e, "ibv_reg_mr of %zu bytes of host memory on %s: %s%s", ep->bytes,
                            ep->device, strerror(e),
                            e == ENOMEM ? " (the locked-memory limit? ulimit -l must allow it: unlimited for RDMA)" : "");
        }
        return 0;
}

/* --- the queue pair ---------------------------------------------------------------------- */

int rdma_endpoint_create_qp(struct rdma_endpoint *ep, unsigned tx_depth, struct rdma_endpoint_error *err) {
        int depth = (int)tx_depth;
        ep->cq = ep->v->fn.ibv_create_cq(ep->ctx, 2 * depth + 16, NULL, NULL, 0);
        if (!ep->cq)
                return fail(err, RDMA_FAIL_VERBS, -EIO, "ibv_create_cq(%d entries) on %s: %s", 2 * depth + 16,
                            ep->device, strerror(errno ? errno : EIO));
        struct ibv_qp_init_attr ia = {.send_cq = ep->cq, .recv_cq = ep->cq, .qp_type = IBV_QPT_RC,
                                      .cap = {.max_send_wr = (uint32_t)depth + 4, .max_recv_wr = 1, .max_send_sge = 1,
                                              .max_recv_sge = 1}};
        ep->qp = ep->v->fn.ibv_create_qp(ep->pd, &ia);
        if (!ep->qp)
                return fail(err, RDMA_FAIL_VERBS, -EIO, "ibv_create_qp(RC, %d send requests) on %s: %s", depth + 4,
                            ep->device, strerror(errno ? errno : EIO));
        struct ibv_qp_attr qa = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = (uint8_t)ep->ib_port,
                                 .qp_access_flags = (unsigned)ACCESS};
        int r = ep->v->fn.ibv_modify_qp(ep->qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
        if (r != 0)
                return fail(err, RDMA_FAIL_VERBS, -r, "ibv_modify_qp to INIT: %s", strerror(r > 0 ? r : EIO));
        /* perftest draws its PSN at random (lrand48) too */
        ep->psn = (uint32_t)((unsigned)getpid() * 2654435761u ^ (unsigned)(monotonic_ns() / 1e3)) & 0xffffff;
        return 0;
}

const char *rdma_endpoint_memory(const struct rdma_endpoint *ep) {
        return ep->memory;
}

void rdma_endpoint_local(const struct rdma_endpoint *ep, struct rdma_endpoint_addr *ret) {
        *ret = (struct rdma_endpoint_addr){.lid = ep->port.lid, .qpn = ep->qp->qp_num & 0xffffff, .psn = ep->psn,
                                           .rkey = ep->mr->rkey, .addr = (uint64_t)(uintptr_t)ep->buf,
                                           .mtu = mtu_bytes(ep->port.active_mtu)};
        if (ret->mtu == 0)
                ret->mtu = 1024;
        memcpy(ret->gid, ep->gid.raw, 16);
}

int rdma_endpoint_connect(struct rdma_endpoint *ep, const struct rdma_endpoint_addr *peer, unsigned *ret_mtu,
                          struct rdma_endpoint_error *err) {
        ep->peer_rkey = peer->rkey;
        ep->peer_addr = peer->addr;
        unsigned mtu = mtu_bytes(ep->port.active_mtu);
        if (peer->mtu < mtu)
                mtu = peer->mtu;
        if (mtu == 0)
                mtu = 1024;
        *ret_mtu = mtu;
        struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR, .path_mtu = (enum ibv_mtu)mtu_enum(mtu),
                                .dest_qp_num = peer->qpn, .rq_psn = peer->psn, .max_dest_rd_atomic = 16,
                                .min_rnr_timer = 12};
        a.ah_attr.dlid = peer->lid;
        a.ah_attr.port_num = (uint8_t)ep->ib_port;
        /* RoCE always routes by GID; InfiniBand by LID within the subnet */
        if (ep->ethernet || peer->lid == 0) {
                a.ah_attr.is_global = 1;
                memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
                a.ah_attr.grh.sgid_index = (uint8_t)ep->gid_index;
                a.ah_attr.grh.hop_limit = 64;
        }
        int r = ep->v->fn.ibv_modify_qp(ep->qp, &a,
                                        IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                                IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
        if (r != 0)
                return fail(err, RDMA_FAIL_VERBS, -(r > 0 ? r : EIO),
                            "ibv_modify_qp to RTR (peer QPN %" PRIu32 ", LID %u, MTU %u): %s", peer->qpn, peer->lid,
                            mtu, strerror(r > 0 ? r : EIO));
        struct ibv_qp_attr b = {.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
                                .sq_psn = ep->psn, .max_rd_atomic = 16};
        r = ep->v->fn.ibv_modify_qp(ep->qp, &b,
                                    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                            IBV_QP_MAX_QP_RD_ATOMIC);
        if (r != 0)
                return fail(err, RDMA_FAIL_VERBS, -(r > 0 ? r : EIO), "ibv_modify_qp to RTS: %s", strerror(r > 0 ? r : EIO));
        return 0;
}

/* --- requests and completions ---------------------------------------------------------------- */

int rdma_endpoint_post(struct rdma_endpoint *ep, enum rdma_op op, uint64_t wr_id, uint64_t local_off,
                       uint64_t remote_off, uint64_t size, bool signaled, struct rdma_endpoint_error *err) {
        struct ibv_sge sge = {.addr = (uint64_t)(uintptr_t)(ep->buf + local_off), .length = (uint32_t)size,
                              .lkey = ep->mr->lkey};
        struct ibv_send_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
                                 .opcode = op == RDMA_OP_READ ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
                                 .send_flags = signaled ? IBV_SEND_SIGNALED : 0};
        wr.wr.rdma.remote_addr = ep->peer_addr + remote_off;
        wr.wr.rdma.rkey = ep->peer_rkey;
        struct ibv_send_wr *bad = NULL;
        int r = verbs_post_send(ep->qp, &wr, &bad);
        if (r != 0)
                return fail(err, RDMA_FAIL_VERBS, -(r > 0 ? r : EIO), "ibv_post_send (%s of %" PRIu64 " bytes): %s",
                            op == RDMA_OP_READ ? "RDMA READ" : "RDMA WRITE", size, strerror(r > 0 ? r : EIO));
        return 0;
}

int rdma_endpoint_poll(struct rdma_endpoint *ep, struct rdma_completion *ret, int n) {
        struct ibv_wc wc[16];
        int k = verbs_poll_cq(ep->cq, n < 16 ? n : 16, wc);
        for (int i = 0; i < k; i++) {
                enum ibv_wc_status st = wc[i].status;
                ret[i] = (struct rdma_completion){.wr_id = wc[i].wr_id, .status = RDMA_COMPLETION_OK};
                if (st == IBV_WC_SUCCESS)
                        continue;
                ret[i].status = st == IBV_WC_RETRY_EXC_ERR    ? RDMA_COMPLETION_RETRY_EXCEEDED
                                : st == IBV_WC_REM_ACCESS_ERR ? RDMA_COMPLETION_REMOTE_ACCESS
                                                              : RDMA_COMPLETION_FAILED;
                ret[i].code = (int)st;
                ret[i].name = verbs_wc_status_name(st);
                ret[i].text = ep->v->fn.ibv_wc_status_str(st);
        }
        return k;
}

/* --- the buffer's bytes ---------------------------------------------------------------------- */

uint8_t *rdma_endpoint_host_buffer(struct rdma_endpoint *ep) {
        return ep->gm ? NULL : ep->buf;
}

static int gpu_done(int r, const char *why, struct rdma_endpoint_error *err) {
        return r < 0 ? fail(err, RDMA_FAIL_MEMORY, r, "%s", why) : 0;
}

int rdma_endpoint_gpu_write(struct rdma_endpoint *ep, uint64_t off, const void *src, size_t n,
                            struct rdma_endpoint_error *err) {
        char why[256];
        return gpu_done(rdma_gpumem_write(ep->gm, off, src, n, why, sizeof(why)), why, err);
}

int rdma_endpoint_gpu_read(struct rdma_endpoint *ep, uint64_t off, void *dst, size_t n,
                           struct rdma_endpoint_error *err) {
        char why[256];
        return gpu_done(rdma_gpumem_read(ep->gm, off, dst, n, why, sizeof(why)), why, err);
}

int rdma_endpoint_gpu_zero(struct rdma_endpoint *ep, uint64_t off, size_t n, struct rdma_endpoint_error *err) {
        char why[256];
        return gpu_done(rdma_gpumem_zero(ep->gm, off, n, why, sizeof(why)), why, err);
}

/* --- teardown -------------------------------------------------------------------------------- */

void rdma_endpoint_close(struct rdma_endpoint *ep) {
        if (!ep)
                return;
        if (ep->v) {
                if (ep->qp)
                        (void)ep->v->fn.ibv_destroy_qp(ep->qp);
                if (ep->cq)
                        (void)ep->v->fn.ibv_destroy_cq(ep->cq);
                if (ep->mr)
                        (void)ep->v->fn.ibv_dereg_mr(ep->mr);
                if (ep->pd)
                        (void)ep->v->fn.ibv_dealloc_pd(ep->pd);
                if (ep->ctx)
                        (void)ep->v->fn.ibv_close_device(ep->ctx);
        }
        ep->v = verbs_close(ep->v);
        /* the buffer outlives a QP whose requests may still be in flight at a hung peer: a
         * real HCA would still DMA into it; free it only when the QP was destroyed */
        if (ep->qp || !ep->mr) {
                if (ep->gm)
                        rdma_gpumem_close(ep->gm);
                else
                        free(ep->buf);
        }
        free(ep);
}

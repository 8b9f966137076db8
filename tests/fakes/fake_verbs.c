/* A libibverbs.so.1 test double: the verbs subset gpuvet calls (src/bindings/verbs_functions.def,
 * plus the context ops ibv_post_send and ibv_poll_cq go through), for `gpuvet bench rdma` on
 * a machine whose kernel has no RDMA (no Soft-RoCE). It is built from gpuvet's own
 * verbs_api.h, whose layouts tests/abi/verbs_*.c checks against rdma-core's header, so a
 * program compiled against the real verbs.h drives it the same way.
 *
 * - Devices: $FAKE_VERBS_DEVICES, comma-separated NAME:LL:WIDTH:SPEED[:down], e.g.
 *   "mlx5_0:ib:4x:EDR,mlx5_1:eth:1x:SDR:down" (LL ib or eth; WIDTH 1x 2x 4x 8x 12x; SPEED
 *   SDR DDR QDR FDR10 FDR EDR HDR NDR, or XDR: active_speed 0, a code gpuvet's table does
 *   not know, as a speed only active_speed_ex can name). Unset: one device, mlx5_0:ib:4x:EDR. Empty: none.
 *   Each has one port (1). An ib port has LID 1 + its index and one GID (fe80::...); an eth
 *   port has LID 0 and two GIDs, 0 a RoCE v1 link-local one and 1 the RoCE v2 IPv4-mapped
 *   ::ffff:127.0.0.1, as a mlx5 port with an IPv4 address shows them.
 * - Memory regions: any address range; keys from a counter; REMOTE_WRITE/READ checked.
 *   ibv_reg_dmabuf_mr registers the iova range as it is (the fake libcuda's device memory
 *   is host memory); fault "dmabuf" makes it fail with EOPNOTSUPP.
 * - RC queue pairs really move bytes between processes. Each QP listens on a TCP port of
 *   127.0.0.1 from its creation and that port is its QP number, so a peer that learnt the
 *   QPN (gpuvet's handshake) can reach it. At RTR the QP connects to its destination QP's
 *   port (at the IPv4 address of the destination GID when it is IPv4-mapped, else
 *   127.0.0.1); a failed connect makes every later work request complete with
 *   IBV_WC_RETRY_EXC_ERR, as a real HCA's retries run out. ibv_post_send queues RDMA WRITE
 *   and RDMA READ work requests (one SGE); a thread per QP ships each in order to the peer
 *   fake, whose responder thread checks the rkey and range and writes into (or reads from)
 *   the registered memory, then answers; the requester completes the work request into the
 *   send CQ (signaled ones, and every error). After an error the QP is in the error state and
 *   later requests complete with IBV_WC_WR_FLUSH_ERR.
 * - Rate: $FAKE_VERBS_RATE_GBPS caps the bytes moved per QP (a virtual clock: each request
 *   completes no earlier than bytes * 8 / rate after the previous one); unset: as fast as
 *   loopback TCP.
 * - Faults ($FAKE_VERBS_FAULT, comma-separated): "rtr" (ibv_modify_qp to RTR fails with
 *   EINVAL), "reg_mr" (ibv_reg_mr fails with ENOMEM), "dmabuf" (ibv_reg_dmabuf_mr fails
 *   with EOPNOTSUPP), "wc_error=N" (this process's
 *   responder answers its Nth request with a remote access error, so the peer's work
 *   request completes with IBV_WC_REM_ACCESS_ERR), "hang=N" (this process's responder stops
 *   answering after N requests: the peer's requests never complete, as with a peer whose
 *   HCA or host hung).
 * - $FAKE_VERBS_LOG names a file where every device open appends a line (tests check which
 *   library ran). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bindings/verbs_api.h"

#define FAKE_EXPORT __attribute__((visibility("default")))
#define MAX_DEVS 8

struct fake_dev {
        char name[64];
        bool ethernet;
        uint8_t width, speed;
        bool down;
        int index;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct fake_dev devs[MAX_DEVS];
static struct ibv_device *dev_ptrs[MAX_DEVS + 1];
static int n_devs = -1;

/* faults */
static bool fault_rtr, fault_reg_mr, fault_dmabuf;
static long fault_wc_error, fault_hang; /* 0: none */
static long served;                     /* requests this process's responders answered */
static double rate_gbps;

struct fake_mr {
        struct ibv_mr mr;
        int access;
        struct fake_mr *next;
};
static struct fake_mr *mrs;
static uint32_t next_key = 0x1000;

static int parse_width(const char *s) {
        static const struct { const char *n; int v; } t[] = {{"1x", 1}, {"4x", 2}, {"8x", 4}, {"12x", 8}, {"2x", 16}};
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
                if (strcasecmp(s, t[i].n) == 0)
                        return t[i].v;
        return -1;
}

static int parse_speed(const char *s) {
        static const struct { const char *n; int v; } t[] = {{"SDR", 1},   {"DDR", 2},  {"QDR", 4},  {"FDR10", 8},
                                                             {"FDR", 16},  {"EDR", 32}, {"HDR", 64}, {"NDR", 128},
                                                             {"XDR", 0}}; /* XDR: only in active_speed_ex */
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
                if (strcasecmp(s, t[i].n) == 0)
                        return t[i].v;
        return -1;
}

/* Read the environment once (under lock). */
static void setup_locked(void) {
        if (n_devs >= 0)
                return;
        n_devs = 0;
        const char *spec = getenv("FAKE_VERBS_DEVICES");
        if (!spec)
                spec = "mlx5_0:ib:4x:EDR";
        char copy[1024];
        snprintf(copy, sizeof(copy), "%s", spec);
        for (char *save = NULL, *d = strtok_r(copy, ",", &save); d && n_devs < MAX_DEVS; d = strtok_r(NULL, ",", &save)) {
                char *f[5] = {NULL};
                int nf = 0;
                for (char *s2 = NULL, *t = strtok_r(d, ":", &s2); t && nf < 5; t = strtok_r(NULL, ":", &s2))
                        f[nf++] = t;
                if (nf < 4) {
                        fprintf(stderr, "fake-verbs: FAKE_VERBS_DEVICES: \"%s\" is not NAME:LL:WIDTH:SPEED[:down]\n", d);
                        continue;
                }
                struct fake_dev *x = &devs[n_devs];
                snprintf(x->name, sizeof(x->name), "%s", f[0]);
                x->ethernet = strcmp(f[1], "eth") == 0;
                int w = parse_width(f[2]), s = parse_speed(f[3]);
                x->width = (uint8_t)(w > 0 ? w : 2);
                x->speed = (uint8_t)(s >= 0 ? s : 32);
                x->down = nf == 5 && strcmp(f[4], "down") == 0;
                x->index = n_devs;
                dev_ptrs[n_devs] = (struct ibv_device *)x;
                n_devs++;
        }
        dev_ptrs[n_devs] = NULL;
        const char *faults = getenv("FAKE_VERBS_FAULT");
        if (faults) {
                char fc[256];
                snprintf(fc, sizeof(fc), "%s", faults);
                for (char *save = NULL, *t = strtok_r(fc, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                        if (strcmp(t, "rtr") == 0)
                                fault_rtr = true;
                        else if (strcmp(t, "reg_mr") == 0)
                                fault_reg_mr = true;
                        else if (strcmp(t, "dmabuf") == 0)
                                fault_dmabuf = true;
                        else if (strncmp(t, "wc_error=", 9) == 0)
                                fault_wc_error = atol(t + 9);
                        else if (strncmp(t, "hang=", 5) == 0)
                                fault_hang = atol(t + 5);
                        else
                                fprintf(stderr, "fake-verbs: FAKE_VERBS_FAULT: unknown fault \"%s\"\n", t);
                }
        }
        const char *rate = getenv("FAKE_VERBS_RATE_GBPS");
        if (rate)
                rate_gbps = atof(rate);
}

FAKE_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices) {
        pthread_mutex_lock(&lock);
        setup_locked();
        struct ibv_device **list = calloc((size_t)n_devs + 1, sizeof(*list));
        if (list)
                memcpy(list, dev_ptrs, sizeof(*list) * ((size_t)n_devs + 1));
        if (num_devices)
                *num_devices = list ? n_devs : 0;
        pthread_mutex_unlock(&lock);
        if (!list)
                errno = ENOMEM;
        return list;
}

FAKE_EXPORT void ibv_free_device_list(struct ibv_device **list) {
        free(list);
}

FAKE_EXPORT const char *ibv_get_device_name(struct ibv_device *device) {
        return device ? ((struct fake_dev *)device)->name : NULL;
}

FAKE_EXPORT const char *ibv_wc_status_str(enum ibv_wc_status status) {
        switch (status) {
        case IBV_WC_SUCCESS: return "success";
        case IBV_WC_WR_FLUSH_ERR: return "Work Request Flushed Error";
        case IBV_WC_REM_ACCESS_ERR: return "remote access error";
        case IBV_WC_RETRY_EXC_ERR: return "transport retry counter exceeded";
        case IBV_WC_LOC_PROT_ERR: return "local protection error";
        default: return "unknown";
        }
}

/* --- CQs ------------------------------------------------------------------------------- */

struct fake_cq {
        struct ibv_cq cq;
        pthread_mutex_t mu;
        struct ibv_wc *ring;
        int cap, head, count;
};

static int fake_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc) {
        struct fake_cq *c = (struct fake_cq *)cq;
        pthread_mutex_lock(&c->mu);
        int k = 0;
        while (k < n && c->count > 0) {
                wc[k++] = c->ring[c->head];
                c->head = (c->head + 1) % c->cap;
                c->count--;
        }
        pthread_mutex_unlock(&c->mu);
        return k;
}

static void cq_push(struct fake_cq *c, const struct ibv_wc *wc) {
        pthread_mutex_lock(&c->mu);
        if (c->count < c->cap) {
                c->ring[(c->head + c->count) % c->cap] = *wc;
                c->count++;
        } /* else: an overrun; a real CQ would raise an async error */
        pthread_mutex_unlock(&c->mu);
}

/* --- QPs ------------------------------------------------------------------------------- */

struct wr_item {
        uint64_t wr_id;
        int opcode;
        bool signaled;
        uint64_t laddr;
        uint32_t len, lkey;
        uint64_t raddr;
        uint32_t rkey;
};

struct fake_qp {
        struct ibv_qp qp;
        int listen_fd, out_fd;
        bool unreachable, error;
        pthread_mutex_t mu;
        pthread_cond_t cv;
        struct wr_item *q;
        unsigned cap, head, count;
        bool stopping;
        pthread_t sender, acceptor;
        double next_free_s;
};

/* A request on the wire: op 0 write (payload follows), 1 read. Answer: status, then for a
 * read the payload. */
struct wire_req {
        uint32_t op, len, rkey, pad;
        uint64_t raddr;
};
struct wire_resp {
        uint32_t status, pad;
};

static bool full_io(int fd, void *buf, size_t len, bool wr) {
        char *p = buf;
        while (len > 0) {
                ssize_t n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return false;
                p += n;
                len -= (size_t)n;
        }
        return true;
}

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const struct fake_mr *find_mr(uint32_t key, uint64_t addr, uint64_t len, int need, bool remote) {
        for (const struct fake_mr *m = mrs; m; m = m->next) {
                uint32_t k = remote ? m->mr.rkey : m->mr.lkey;
                uint64_t a = (uint64_t)(uintptr_t)m->mr.addr;
                if (k == key && addr >= a && addr + len <= a + m->mr.length && (m->access & need) == need)
                        return m;
        }
        return NULL;
}

/* The responder: serve one peer's requests on fd until it closes. */
static void *responder(void *arg) {
        int fd = (int)(intptr_t)arg;
        char *scratch = NULL;
        for (;;) {
                struct wire_req r;
                if (!full_io(fd, &r, sizeof(r), false))
                        break;
                pthread_mutex_lock(&lock);
                long nth = ++served;
                bool hang = fault_hang > 0 && nth > fault_hang;
                bool inject = fault_wc_error > 0 && nth == fault_wc_error;
                const struct fake_mr *m =
                        find_mr(r.rkey, r.raddr, r.len, r.op == 0 ? IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ, true);
                pthread_mutex_unlock(&lock);
                if (hang)
                        for (;;)
                                pause(); /* a hung peer: never answer, never close */
                struct wire_resp resp = {.status = (m && !inject) ? IBV_WC_SUCCESS : IBV_WC_REM_ACCESS_ERR};
                if (r.op == 0) {
                        void *dst = resp.status == IBV_WC_SUCCESS ? (void *)(uintptr_t)r.raddr : NULL;
                        if (!dst) {
                                scratch = realloc(scratch, r.len ? r.len : 1);
                                dst = scratch;
                        }
                        if (!dst || !full_io(fd, dst, r.len, false))
                                break;
                        if (!full_io(fd, &resp, sizeof(resp), true))
                                break;
                } else {
                        if (!full_io(fd, &resp, sizeof(resp), true))
                                break;
                        if (resp.status == IBV_WC_SUCCESS && !full_io(fd, (void *)(uintptr_t)r.raddr, r.len, true))
                                break;
                }
        }
        free(scratch);
        close(fd);
        return NULL;
}

static void *acceptor(void *arg) {
        struct fake_qp *q = arg;
        for (;;) {
                int fd = accept(q->listen_fd, NULL, NULL);
                if (fd < 0) {
                        if (errno == EINTR)
                                continue;
                        return NULL; /* closed by destroy */
                }
                int one = 1;
                (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                pthread_t t;
                if (pthread_create(&t, NULL, responder, (void *)(intptr_t)fd) == 0)
                        pthread_detach(t);
                else
                        close(fd);
        }
}

static void complete(struct fake_qp *q, const struct wr_item *w, enum ibv_wc_status st) {
        if (!w->signaled && st == IBV_WC_SUCCESS)
                return;
        struct ibv_wc wc = {.wr_id = w->wr_id, .status = st,
                            .opcode = w->opcode == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE,
                            .byte_len = w->len, .qp_num = q->qp.qp_num};
        cq_push((struct fake_cq *)q->qp.send_cq, &wc);
}

static void *sender(void *arg) {
        struct fake_qp *q = arg;
        for (;;) {
                pthread_mutex_lock(&q->mu);
                while (q->count == 0 && !q->stopping)
                        pthread_cond_wait(&q->cv, &q->mu);
                if (q->stopping) { /* queued requests are dropped with the QP */
                        pthread_mutex_unlock(&q->mu);
                        return NULL;
                }
                struct wr_item w = q->q[q->head];
                pthread_mutex_unlock(&q->mu);
                enum ibv_wc_status st = IBV_WC_SUCCESS;
                if (q->error)
                        st = IBV_WC_WR_FLUSH_ERR;
                else if (q->unreachable || q->out_fd < 0)
                        st = IBV_WC_RETRY_EXC_ERR;
                else {
                        struct wire_req r = {.op = w.opcode == IBV_WR_RDMA_READ ? 1 : 0, .len = w.len, .rkey = w.rkey,
                                             .raddr = w.raddr};
                        struct wire_resp resp;
                        void *local = (void *)(uintptr_t)w.laddr;
                        /* the link is busy from this request's start (or the previous one's end) */
                        if (rate_gbps > 0) {
                                double t = now_s();
                                if (q->next_free_s < t)
                                        q->next_free_s = t;
                                q->next_free_s += (double)w.len * 8.0 / (rate_gbps * 1e9);
                        }
                        bool ok = full_io(q->out_fd, &r, sizeof(r), true);
                        if (ok && r.op == 0)
                                ok = full_io(q->out_fd, local, w.len, true);
                        ok = ok && full_io(q->out_fd, &resp, sizeof(resp), false);
                        if (ok && r.op == 1 && resp.status == IBV_WC_SUCCESS)
                                ok = full_io(q->out_fd, local, w.len, false);
                        st = ok ? (enum ibv_wc_status)resp.status : IBV_WC_RETRY_EXC_ERR;
                        if (rate_gbps > 0) {
                                double wait = q->next_free_s - now_s();
                                if (wait > 0) {
                                        struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
                                        nanosleep(&ts, NULL);
                                }
                        }
                }
                if (st != IBV_WC_SUCCESS && st != IBV_WC_WR_FLUSH_ERR)
                        q->error = true;
                complete(q, &w, st);
                pthread_mutex_lock(&q->mu);
                q->head = (q->head + 1) % q->cap;
                q->count--;
                pthread_mutex_unlock(&q->mu);
        }
}

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr) {
        struct fake_qp *q = (struct fake_qp *)qp;
        for (; wr; wr = wr->next) {
                int err = 0;
                if (qp->state != IBV_QPS_RTS)
                        err = EINVAL;
                else if ((wr->opcode != IBV_WR_RDMA_WRITE && wr->opcode != IBV_WR_RDMA_READ) || wr->num_sge != 1 ||
                         !wr->sg_list)
                        err = EINVAL;
                if (!err) {
                        pthread_mutex_lock(&lock);
                        bool ok = find_mr(wr->sg_list[0].lkey, wr->sg_list[0].addr, wr->sg_list[0].length, 0, false);
                        pthread_mutex_unlock(&lock);
                        if (!ok)
                                err = EINVAL;
                }
                pthread_mutex_lock(&q->mu);
                if (!err && q->count == q->cap)
                        err = ENOMEM;
                if (!err) {
                        q->q[(q->head + q->count) % q->cap] = (struct wr_item){
                                .wr_id = wr->wr_id, .opcode = wr->opcode,
                                .signaled = (wr->send_flags & IBV_SEND_SIGNALED) != 0,
                                .laddr = wr->sg_list[0].addr, .len = wr->sg_list[0].length, .lkey = wr->sg_list[0].lkey,
                                .raddr = wr->wr.rdma.remote_addr, .rkey = wr->wr.rdma.rkey};
                        q->count++;
                        pthread_cond_signal(&q->cv);
                }
                pthread_mutex_unlock(&q->mu);
                if (err) {
                        if (bad_wr)
                                *bad_wr = wr;
                        return err;
                }
        }
        return 0;
}

static int fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr) {
        (void)qp;
        if (bad_wr)
                *bad_wr = wr;
        return ENOSYS;
}

/* --- contexts, ports, GIDs ----------------------------------------------------------------- */

struct fake_ctx {
        struct ibv_context ctx;
        struct fake_dev *dev;
};

FAKE_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device) {
        if (!device) {
                errno = EINVAL;
                return NULL;
        }
        struct fake_ctx *c = calloc(1, sizeof(*c));
        if (!c) {
                errno = ENOMEM;
                return NULL;
        }
        c->dev = (struct fake_dev *)device;
        c->ctx.device = device;
        c->ctx.ops.poll_cq = fake_poll_cq;
        c->ctx.ops.post_send = fake_post_send;
        c->ctx.ops.post_recv = fake_post_recv;
        c->ctx.cmd_fd = -1;
        c->ctx.async_fd = -1;
        c->ctx.num_comp_vectors = 1;
        pthread_mutex_init(&c->ctx.mutex, NULL);
        const char *log = getenv("FAKE_VERBS_LOG");
        FILE *f = log ? fopen(log, "a") : NULL;
        if (f) {
                fprintf(f, "open %s pid %d\n", c->dev->name, (int)getpid());
                fclose(f);
        }
        return &c->ctx;
}

FAKE_EXPORT int ibv_close_device(struct ibv_context *context) {
        free(context);
        return 0;
}

FAKE_EXPORT int ibv_query_port(struct ibv_context *context, uint8_t port_num, struct _compat_ibv_port_attr *port_attr) {
        struct fake_dev *d = ((struct fake_ctx *)context)->dev;
        if (port_num != 1 || !port_attr)
                return EINVAL;
        struct ibv_port_attr *a = (struct ibv_port_attr *)port_attr;
        memset(a, 0, sizeof(*a));
        a->state = d->down ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
        a->phys_state = d->down ? 3 : 5;
        a->max_mtu = IBV_MTU_4096;
        a->active_mtu = d->ethernet ? IBV_MTU_1024 : IBV_MTU_4096;
        a->gid_tbl_len = d->ethernet ? 2 : 1;
        a->max_msg_sz = 1u << 30;
        a->lid = d->ethernet ? 0 : (uint16_t)(1 + d->index);
        a->active_width = d->width;
        a->active_speed = d->speed;
        a->link_layer = d->ethernet ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
        return 0;
}

static int gid_of(struct fake_dev *d, int index, union ibv_gid *gid, uint32_t *type) {
        memset(gid, 0, sizeof(*gid));
        if (index == 0) {
                gid->raw[0] = 0xfe;
                gid->raw[1] = 0x80;
                gid->raw[15] = (uint8_t)(1 + d->index);
                *type = d->ethernet ? IBV_GID_TYPE_ROCE_V1 : IBV_GID_TYPE_IB;
                return 0;
        }
        if (index == 1 && d->ethernet) {
                gid->raw[10] = 0xff;
                gid->raw[11] = 0xff;
                gid->raw[12] = 127;
                gid->raw[15] = 1;
                *type = IBV_GID_TYPE_ROCE_V2;
                return 0;
        }
        return EINVAL;
}

FAKE_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid) {
        uint32_t type;
        if (port_num != 1)
                return -1;
        return gid_of(((struct fake_ctx *)context)->dev, index, gid, &type) ? -1 : 0;
}

FAKE_EXPORT int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
                                  struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size) {
        if (port_num != 1 || flags || entry_size < sizeof(*entry))
                return EINVAL;
        memset(entry, 0, sizeof(*entry));
        entry->gid_index = gid_index;
        entry->port_num = port_num;
        return gid_of(((struct fake_ctx *)context)->dev, (int)gid_index, &entry->gid, &entry->gid_type);
}

/* --- PDs, MRs --------------------------------------------------------------------------- */

FAKE_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context) {
        struct ibv_pd *pd = calloc(1, sizeof(*pd));
        if (!pd) {
                errno = ENOMEM;
                return NULL;
        }
        pd->context = context;
        return pd;
}

FAKE_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd) {
        free(pd);
        return 0;
}

FAKE_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access) {
        pthread_mutex_lock(&lock);
        setup_locked();
        if (fault_reg_mr) {
                pthread_mutex_unlock(&lock);
                errno = ENOMEM;
                return NULL;
        }
        struct fake_mr *m = calloc(1, sizeof(*m));
        if (!m) {
                pthread_mutex_unlock(&lock);
                errno = ENOMEM;
                return NULL;
        }
        m->mr.context = pd->context;
        m->mr.pd = pd;
        m->mr.addr = addr;
        m->mr.length = length;
        m->mr.lkey = m->mr.rkey = next_key++;
        m->access = access | IBV_ACCESS_LOCAL_WRITE;
        m->next = mrs;
        mrs = m;
        pthread_mutex_unlock(&lock);
        return &m->mr;
}

/* A dma-buf region: the fake libcuda's device memory is host memory, so the iova range is
 * registered as it is (fd must be open). Fault "dmabuf": EOPNOTSUPP, as a kernel or
 * provider without dma-buf support answers. */
FAKE_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd,
                                             int access) {
        pthread_mutex_lock(&lock);
        setup_locked();
        bool refuse = fault_dmabuf;
        pthread_mutex_unlock(&lock);
        if (refuse) {
                errno = EOPNOTSUPP;
                return NULL;
        }
        if (fd < 0 || fcntl(fd, F_GETFD) < 0 || offset != 0) {
                errno = EINVAL;
                return NULL;
        }
        return ibv_reg_mr(pd, (void *)(uintptr_t)iova, length, access);
}

FAKE_EXPORT int ibv_dereg_mr(struct ibv_mr *mr) {
        pthread_mutex_lock(&lock);
        for (struct fake_mr **p = &mrs; *p; p = &(*p)->next)
                if (&(*p)->mr == mr) {
                        struct fake_mr *m = *p;
                        *p = m->next;
                        free(m);
                        break;
                }
        pthread_mutex_unlock(&lock);
        return 0;
}

FAKE_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
                                         struct ibv_comp_channel *channel, int comp_vector) {
        (void)comp_vector;
        if (cqe < 1) {
                errno = EINVAL;
                return NULL;
        }
        struct fake_cq *c = calloc(1, sizeof(*c));
        if (c)
                c->ring = calloc((size_t)cqe, sizeof(*c->ring));
        if (!c || !c->ring) {
                free(c);
                errno = ENOMEM;
                return NULL;
        }
        c->cap = cqe;
        c->cq.context = context;
        c->cq.channel = channel;
        c->cq.cq_context = cq_context;
        c->cq.cqe = cqe;
        pthread_mutex_init(&c->mu, NULL);
        return &c->cq;
}

FAKE_EXPORT int ibv_destroy_cq(struct ibv_cq *cq) {
        struct fake_cq *c = (struct fake_cq *)cq;
        free(c->ring);
        free(c);
        return 0;
}

FAKE_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a) {
        if (!a || a->qp_type != IBV_QPT_RC || !a->send_cq || a->cap.max_send_wr < 1) {
                errno = EINVAL;
                return NULL;
        }
        struct fake_qp *q = calloc(1, sizeof(*q));
        if (!q || !(q->q = calloc(a->cap.max_send_wr, sizeof(*q->q)))) {
                free(q);
                errno = ENOMEM;
                return NULL;
        }
        q->cap = a->cap.max_send_wr;
        q->out_fd = -1;
        q->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
        socklen_t sl = sizeof(sa);
        if (q->listen_fd < 0 || bind(q->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
            listen(q->listen_fd, 4) < 0 || getsockname(q->listen_fd, (struct sockaddr *)&sa, &sl) < 0) {
                int e = errno;
                if (q->listen_fd >= 0)
                        close(q->listen_fd);
                free(q->q);
                free(q);
                errno = e;
                return NULL;
        }
        q->qp.context = pd->context;
        q->qp.pd = pd;
        q->qp.send_cq = a->send_cq;
        q->qp.recv_cq = a->recv_cq;
        q->qp.qp_num = ntohs(sa.sin_port); /* the QPN is the port: how a peer fake finds this QP */
        q->qp.state = IBV_QPS_RESET;
        q->qp.qp_type = IBV_QPT_RC;
        pthread_mutex_init(&q->mu, NULL);
        pthread_cond_init(&q->cv, NULL);
        pthread_mutex_init(&q->qp.mutex, NULL);
        pthread_cond_init(&q->qp.cond, NULL);
        if (pthread_create(&q->acceptor, NULL, acceptor, q) != 0 || pthread_create(&q->sender, NULL, sender, q) != 0) {
                errno = EAGAIN;
                return NULL; /* leaks: a test double out of threads */
        }
        return &q->qp;
}

FAKE_EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask) {
        struct fake_qp *q = (struct fake_qp *)qp;
        if (!(mask & IBV_QP_STATE))
                return 0;
        enum ibv_qp_state to = attr->qp_state;
        switch (to) {
        case IBV_QPS_INIT:
                if (qp->state != IBV_QPS_RESET || !(mask & IBV_QP_PORT) || attr->port_num != 1)
                        return EINVAL;
                break;
        case IBV_QPS_RTR: {
                int need = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
                if (qp->state != IBV_QPS_INIT || (mask & need) != need || fault_rtr)
                        return EINVAL;
                struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)attr->dest_qp_num),
                                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
                const uint8_t *g = attr->ah_attr.grh.dgid.raw;
                static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
                if (attr->ah_attr.is_global && memcmp(g, mapped, 12) == 0)
                        memcpy(&sa.sin_addr.s_addr, g + 12, 4);
                int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
                        int one = 1;
                        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                        q->out_fd = fd;
                } else {
                        if (fd >= 0)
                                close(fd);
                        q->unreachable = true;
                }
                break;
        }
        case IBV_QPS_RTS:
                if (qp->state != IBV_QPS_RTR || !(mask & IBV_QP_SQ_PSN))
                        return EINVAL;
                break;
        case IBV_QPS_ERR:
        case IBV_QPS_RESET: break;
        default: return EINVAL;
        }
        qp->state = to;
        return 0;
}

FAKE_EXPORT int ibv_destroy_qp(struct ibv_qp *qp) {
        struct fake_qp *q = (struct fake_qp *)qp;
        pthread_mutex_lock(&q->mu);
        q->stopping = true;
        pthread_cond_signal(&q->cv);
        pthread_mutex_unlock(&q->mu);
        shutdown(q->listen_fd, SHUT_RDWR);
        /* a sender blocked on a hung peer returns once its socket is shut down */
        if (q->out_fd >= 0)
                shutdown(q->out_fd, SHUT_RDWR);
        pthread_join(q->sender, NULL);
        pthread_join(q->acceptor, NULL);
        close(q->listen_fd);
        if (q->out_fd >= 0)
                close(q->out_fd);
        free(q->q);
        free(q);
        return 0;
}

/* One side's RDMA endpoint in gpuvet's terms, for `gpuvet bench rdma` (bench/rdma_run.h):
 * a device's port, a registered buffer (host memory, or GPU memory), a completion queue and
 * an RC queue pair connected to the peer's. src/bindings/rdma_endpoint.c speaks libibverbs
 * (bindings/verbs.h loads it) and src/bindings/rdma_gpumem.c the CUDA driver; the benchmark
 * (handshake, timing, verification) in src/bench/rdma_run.c sees only what is declared here.
 *
 * The buffer holds two regions of region_bytes: the first receives (the peer writes there,
 * reads land there), the second sends (writes come from it, the peer reads it). Offsets
 * below are into the whole buffer, local or the peer's.
 *
 * Errors are values: 0 or a negative errno, with the failure's class (what the command makes
 * of it) and message in a struct rdma_endpoint_error. Nothing here prints. Nothing here
 * waits without bound either: posting and polling return at once, and the caller's loops
 * hold the deadlines. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/rdma_run.h"

struct rdma_endpoint;

struct rdma_endpoint_error {
        enum rdma_failure failure;
        char text[512]; /* as rdma_result's error */
};

/* Which port to open: as rdma_options' device, ib_port and gid_index. */
struct rdma_port_choice {
        const char *device;     /* NULL: the first device with an ACTIVE port */
        unsigned ib_port;       /* 0: the device's first ACTIVE port */
        int gid_index;          /* -1: choose (RoCE v2 IPv4-mapped first, as perftest) */
};

/* What the open learned of the port; filled as far as it got, also when it failed. */
struct rdma_port_info {
        bool have_port;         /* a device's port was chosen (the fields below hold it) */
        char device[64];
        unsigned ib_port;
        bool ethernet;          /* RoCE; else InfiniBand */
        uint16_t lid;
        uint8_t active_speed, active_width; /* IBTA encodings, for rdma_link_rate */
        int gid_index;          /* -1 until chosen */
        char gid[48];           /* as inet_ntop prints it */
        bool gid_roce_v2;       /* the GID's type, when the library tells */
};

/* What the peer needs to reach this side's queue pair and buffer (the handshake's hello
 * carries it, bench/rdma_wire.h). */
struct rdma_endpoint_addr {
        uint16_t lid;
        uint32_t qpn, psn, rkey; /* qpn, psn: 24 bits */
        uint64_t addr;           /* the buffer's address in the peer's requests */
        uint8_t gid[16];
        unsigned mtu;            /* the port's active MTU in bytes (1024 when it says none) */
};

/* The operations a request can do on the peer's buffer. */
enum rdma_op {
        RDMA_OP_WRITE, /* local bytes into the peer's buffer */
        RDMA_OP_READ,  /* the peer's bytes into the local buffer */
};

/* How a request completed: the statuses the benchmark explains apart, every other failure
 * as RDMA_COMPLETION_FAILED. */
enum rdma_completion_status {
        RDMA_COMPLETION_OK,
        RDMA_COMPLETION_RETRY_EXCEEDED, /* the peer's HCA never answered */
        RDMA_COMPLETION_REMOTE_ACCESS,  /* the peer refused the access (rkey or address) */
        RDMA_COMPLETION_FAILED,
};

struct rdma_completion {
        uint64_t wr_id;
        enum rdma_completion_status status;
        /* for a failed one only, for messages: the library's status code, its name
         * ("IBV_WC_REM_ACCESS_ERR"; NULL for a code gpuvet does not know) and the library's
         * own text (NULL when it has none) */
        int code;
        const char *name;
        const char *text;
};

/* Load libibverbs and open the port: the device asked for, else each in turn until one has
 * an ACTIVE port; its port asked for, else the first ACTIVE one of ports 1 and 2; then the
 * GID. info is filled as far as it got. On failure nothing stays open (*ret NULL). */
int rdma_endpoint_open(const struct rdma_port_choice *want, struct rdma_endpoint **ret, struct rdma_port_info *info,
                       struct rdma_endpoint_error *err);
/* Allocate the buffer of two regions of region_bytes: host memory when gpu < 0, else on CUDA
 * device gpu (its failure class BAD_INPUT for no such device, MEMORY otherwise). */
int rdma_endpoint_alloc(struct rdma_endpoint *ep, uint64_t region_bytes, int gpu, struct rdma_endpoint_error *err);
/* Register the buffer with the HCA, readable and writable by the peer: GPU memory through
 * its dma-buf, else through nvidia_peermem. */
int rdma_endpoint_register(struct rdma_endpoint *ep, struct rdma_endpoint_error *err);
/* The completion queue and the RC queue pair for tx_depth requests in flight, in INIT. */
int rdma_endpoint_create_qp(struct rdma_endpoint *ep, unsigned tx_depth, struct rdma_endpoint_error *err);
/* "host", or the GPU and how its memory was registered (dma-buf, or nvidia_peermem and why
 * not dma-buf); "" before it is known. */
const char *rdma_endpoint_memory(const struct rdma_endpoint *ep);
/* This side's address, once the queue pair exists. */
void rdma_endpoint_local(const struct rdma_endpoint *ep, struct rdma_endpoint_addr *ret);
/* Connect the queue pair to the peer's (RTR, then RTS) at the smaller of both MTUs, which
 * *ret_mtu says (also when it fails). */
int rdma_endpoint_connect(struct rdma_endpoint *ep, const struct rdma_endpoint_addr *peer, unsigned *ret_mtu,
                          struct rdma_endpoint_error *err);

/* Post one request of size bytes from or into local_off of this side's buffer, to or from
 * remote_off of the peer's; signaled: it completes on the completion queue. */
int rdma_endpoint_post(struct rdma_endpoint *ep, enum rdma_op op, uint64_t wr_id, uint64_t local_off,
                       uint64_t remote_off, uint64_t size, bool signaled, struct rdma_endpoint_error *err);
/* Up to n (at most 16) completions into ret, without waiting: their count, or the
 * library's negative value when polling failed. */
int rdma_endpoint_poll(struct rdma_endpoint *ep, struct rdma_completion *ret, int n);

/* The buffer in host memory, for the CPU to poll and fill in place; NULL for GPU memory. */
uint8_t *rdma_endpoint_host_buffer(struct rdma_endpoint *ep);
/* Synchronous copies into, out of and zeroes over GPU memory at off (class MEMORY on
 * failure); the host buffer needs none of them. */
int rdma_endpoint_gpu_write(struct rdma_endpoint *ep, uint64_t off, const void *src, size_t n,
                            struct rdma_endpoint_error *err);
int rdma_endpoint_gpu_read(struct rdma_endpoint *ep, uint64_t off, void *dst, size_t n,
                           struct rdma_endpoint_error *err);
int rdma_endpoint_gpu_zero(struct rdma_endpoint *ep, uint64_t off, size_t n, struct rdma_endpoint_error *err);

/* Everything it holds, NULL-safe. A registered buffer is freed only with its queue pair:
 * requests may still be in flight at a hung peer, and a real HCA would still DMA into it. */
void rdma_endpoint_close(struct rdma_endpoint *ep);

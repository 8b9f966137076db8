/* The RDMA benchmark between two nodes (`gpuvet bench rdma`): one side serves, the other
 * (the client) drives; both open a device's port, register a buffer and create an RC
 * queue pair (bench/rdma_endpoint.h, over libibverbs), swap connection data over TCP
 * (bench/rdma_conn.h, bench/rdma_wire.h) and run, per message size, perftest's three
 * tests: ib_write_bw (RDMA WRITE, tx_depth requests in flight), ib_read_bw (RDMA READ from
 * the server's buffer) and ib_write_lat (RDMA WRITE ping-pong, half the round trip). Every
 * step runs under a deadline; the bytes each test moved are checked once per size after
 * its timed loop (write: by the server, which received them; read: by the client;
 * latency: by the server).
 *
 * Figures follow perftest: bandwidth in Gb/s (10^9 bits per second, --report_gbits) over
 * the time from the first post to the last completion; peak from the shortest
 * posted-to-completed time per message over any run of consecutive messages; message rate
 * in Mpps; latency per message size from the post-to-post time of consecutive round trips,
 * halved, sorted, the two largest dropped: min, max, typical (median), average, standard
 * deviation, 99% and 99.9% in microseconds. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/rdma_rate.h"
#include "bench/rdma_wire.h"

struct rdma_options {
        bool server;
        const char *peer_host;  /* the client's --peer */
        unsigned port;          /* TCP port of the handshake */
        const char *device;     /* "mlx5_0"; NULL: the first device with an active port */
        unsigned ib_port;       /* 0: the device's first active port */
        int gid_index;          /* -1: choose (RoCE v2 IPv4-mapped first, as perftest) */
        int gpu;                /* -1: host memory; else the CUDA device whose memory is used */
        struct rdma_plan plan;  /* the client's; the server takes the client's */
        double connect_ms;      /* the client's connect deadline */
        double accept_ms;       /* the server's wait for a client */
        double step_ms;         /* each step: the handshake, each test at each size */
};

struct rdma_bw_row {
        enum rdma_test test;
        uint64_t bytes;
        unsigned iters;
        double peak_gbps, avg_gbps, msg_rate_mpps; /* < 0: not measured (the server) */
        bool verified;
        char verify_error[128]; /* "" when verified */
};

struct rdma_lat_row {
        uint64_t bytes;
        unsigned iters;
        double t_min_us, t_max_us, t_typical_us, t_avg_us, t_stdev_us, t_p99_us, t_p999_us; /* < 0: not measured */
        bool verified;
        char verify_error[128];
};

/* Why a run stopped: what the command makes of it (exit 2 for bad input, 1 otherwise). */
enum rdma_failure {
        RDMA_OK,
        RDMA_FAIL_BAD_INPUT, /* no such device or port (error lists what exists) */
        RDMA_FAIL_LIBRARY,   /* no libibverbs, or one without a symbol */
        RDMA_FAIL_NO_DEVICE, /* libibverbs sees no RDMA device */
        RDMA_FAIL_PORT,      /* the port is not ACTIVE */
        RDMA_FAIL_MEMORY,    /* the buffer could not be allocated or registered */
        RDMA_FAIL_PEER,      /* unreachable, hung, closed, or it failed (its message) */
        RDMA_FAIL_VERBS,     /* a verbs call or a completion failed */
};

struct rdma_result {
        enum rdma_failure failure;
        char error[512];
        /* the local port, once opened */
        char device[64];
        unsigned ib_port;
        bool ethernet;
        uint16_t lid;
        int gid_index;
        char gid[48];       /* "fe80::1" style, as inet_ntop prints it */
        bool gid_roce_v2;   /* the GID's type, when the library tells */
        unsigned mtu;       /* the path MTU used, bytes */
        uint8_t active_speed, active_width;
        bool have_rate;
        bool rate_from_sysfs; /* rate read from ports/N/rate (set by the command) */
        struct rdma_link_rate rate;
        char memory[256];   /* "host", or the GPU and how its memory was registered */
        char note[160];     /* what was not run and why ("write_lat not run: ...") */
        /* the peer */
        char peer[128];
        bool peer_ethernet;
        struct rdma_plan plan; /* what ran (the server: the client's) */
        struct rdma_bw_row *bw;
        size_t n_bw;
        struct rdma_lat_row *lat;
        size_t n_lat;
        double duration_ms;
};

/* Run one side. Returns 0 when every step ran (rows may still hold a failed verification),
 * else a negative errno with ret->failure and ret->error saying what stopped it (the rows
 * measured before it are kept). Never hangs: every wait is bounded by options' deadlines. */
int rdma_run(const struct rdma_options *o, struct rdma_result *ret);
void rdma_result_done(struct rdma_result *r);

/* perftest's latency statistics over n post-to-post round trips (n >= 2), into row. The
 * deltas are sorted in place. */
void rdma_lat_stats(double *rtt_us, size_t n, struct rdma_lat_row *row);
/* perftest's peak: the size over the shortest time per message of any run of consecutive
 * messages (from the first one's post to the last one's completion), in Gb/s. */
double rdma_peak_gbps(const double *posted_us, const double *completed_us, size_t n, uint64_t bytes);

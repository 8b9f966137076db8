/* The TCP connection between the two sides of `gpuvet bench rdma` (the handshake's
 * transport, as perftest's out-of-band socket): listen and accept, or connect, and one line
 * at a time each way, every step under a deadline (a monotonic time in ms, core/deadline's
 * clock), so that an unreachable or hung peer is an error naming the step, never a hang.
 * Messages are rdma_wire.h's lines. Errors: 0 or a negative errno with a message in err
 * ("connect to node2:18515: Connection refused", "no answer from the peer within 10 s
 * waiting for ready"). Nothing here prints. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "bench/rdma_wire.h"

#define RDMA_DEFAULT_PORT 18515 /* perftest's default port, so firewalls opened for it work */

struct rdma_conn {
        int fd;
        char peer[128]; /* "HOST:PORT" for messages */
        char in[RDMA_WIRE_LINE_MAX * 2];
        size_t in_len;
};

/* Listen on port (every address), wait until deadline_ms for one peer. -ETIMEDOUT when
 * none came; -errno of bind (EADDRINUSE names the port in err). */
int rdma_conn_accept(unsigned port, double deadline_ms, struct rdma_conn *ret, char *err, size_t errsize);
/* Connect to host:port, retrying a refused connection (the server not started yet) until
 * deadline_ms. -EHOSTUNREACH/-ECONNREFUSED/-ETIMEDOUT ... with the host, port and errno
 * text in err; -ENOENT for a name that does not resolve. */
int rdma_conn_connect(const char *host, unsigned port, double deadline_ms, struct rdma_conn *ret, char *err,
                      size_t errsize);
/* Send one line (with its newline). */
int rdma_conn_send(struct rdma_conn *c, const char *line, size_t len, double deadline_ms, char *err, size_t errsize);
/* Receive one line (with its newline, NUL-terminated) into buf. -ETIMEDOUT with what in
 * err ("waiting for ready"), -ECONNRESET when the peer closed, -EBADMSG for a line longer
 * than RDMA_WIRE_LINE_MAX. */
int rdma_conn_recv(struct rdma_conn *c, char *buf, size_t size, double deadline_ms, const char *what, char *err,
                   size_t errsize);
void rdma_conn_close(struct rdma_conn *c);

/* "HOST[:PORT]" or "[V6]:PORT" into host and *port (default_port when absent). 0 or
 * -EINVAL. */
int rdma_parse_peer(const char *s, char *host, size_t hostsize, unsigned *port, unsigned default_port);

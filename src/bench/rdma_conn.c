#include "bench/rdma_conn.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/deadline.h"

static int wait_fd(int fd, short events, double deadline_ms) {
        for (;;) {
                double left = deadline_ms - monotonic_ms();
                if (left <= 0)
                        return -ETIMEDOUT;
                struct pollfd p = {.fd = fd, .events = events};
                int r = poll(&p, 1, left > 1000 ? 1000 : (int)left + 1);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r > 0)
                        return 0;
        }
}

static void tune_socket(int fd) {
        int one = 1;
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        int fl = fcntl(fd, F_GETFL);
        if (fl >= 0)
                (void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int rdma_conn_accept(unsigned port, double deadline_ms, struct rdma_conn *ret, char *err, size_t errsize) {
        memset(ret, 0, sizeof(*ret));
        ret->fd = -1;
        int ls = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        bool v6 = ls >= 0;
        if (!v6)
                ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (ls < 0) {
                int e = errno;
                snprintf(err, errsize, "socket: %s", strerror(e));
                return -e;
        }
        int one = 1, zero = 0;
        (void)setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        int r;
        if (v6) {
                (void)setsockopt(ls, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
                struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port),
                                          .sin6_addr = in6addr_any};
                r = bind(ls, (struct sockaddr *)&sa, sizeof(sa));
        } else {
                struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                         .sin_addr.s_addr = htonl(INADDR_ANY)};
                r = bind(ls, (struct sockaddr *)&sa, sizeof(sa));
        }
        if (r < 0 || listen(ls, 1) < 0) {
                int e = errno;
                snprintf(err, errsize, "listen on port %u: %s%s", port, strerror(e),
                         e == EADDRINUSE ? " (another server on this port? choose one with --port)" : "");
                close(ls);
                return -e;
        }
        for (;;) {
                r = wait_fd(ls, POLLIN, deadline_ms);
                if (r == -ETIMEDOUT) {
                        snprintf(err, errsize, "no client connected to port %u before the deadline", port);
                        close(ls);
                        return r;
                }
                struct sockaddr_storage from;
                socklen_t fl = sizeof(from);
                int fd = accept4(ls, (struct sockaddr *)&from, &fl, SOCK_CLOEXEC);
                if (fd < 0) {
                        if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
                                continue;
                        int e = errno;
                        snprintf(err, errsize, "accept on port %u: %s", port, strerror(e));
                        close(ls);
                        return -e;
                }
                char host[NI_MAXHOST] = "?", serv[NI_MAXSERV] = "?";
                (void)getnameinfo((struct sockaddr *)&from, fl, host, sizeof(host), serv, sizeof(serv),
                                  NI_NUMERICHOST | NI_NUMERICSERV);
                const char *h = strncmp(host, "::ffff:", 7) == 0 ? host + 7 : host;
                snprintf(ret->peer, sizeof(ret->peer), "%.64s:%.16s", h, serv);
                tune_socket(fd);
                ret->fd = fd;
                close(ls);
                return 0;
        }
}

int rdma_conn_connect(const char *host, unsigned port, double deadline_ms, struct rdma_conn *ret, char *err,
                      size_t errsize) {
        memset(ret, 0, sizeof(*ret));
        ret->fd = -1;
        snprintf(ret->peer, sizeof(ret->peer), "%s:%u", host, port);
        char serv[16];
        snprintf(serv, sizeof(serv), "%u", port);
        struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
        int g = getaddrinfo(host, serv, &hints, &ai);
        if (g != 0) {
                snprintf(err, errsize, "peer %s: %s", ret->peer, gai_strerror(g));
                return -ENOENT;
        }
        int last = ETIMEDOUT;
        for (;;) {
                for (struct addrinfo *a = ai; a; a = a->ai_next) {
                        int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
                        if (fd < 0) {
                                last = errno;
                                continue;
                        }
                        int r = connect(fd, a->ai_addr, a->ai_addrlen);
                        if (r < 0 && errno == EINPROGRESS) {
                                r = wait_fd(fd, POLLOUT, deadline_ms);
                                if (r == 0) {
                                        int so = 0;
                                        socklen_t sl = sizeof(so);
                                        (void)getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &sl);
                                        errno = so;
                                        r = so ? -1 : 0;
                                } else {
                                        errno = -r;
                                        r = -1;
                                }
                        }
                        if (r == 0) {
                                freeaddrinfo(ai);
                                tune_socket(fd);
                                ret->fd = fd;
                                return 0;
                        }
                        last = errno;
                        close(fd);
                }
                /* a refused connection: the server may not be listening yet; retry until the
                 * deadline. Anything else (no route, timed out) is final. */
                if (last != ECONNREFUSED || monotonic_ms() + 200 >= deadline_ms)
                        break;
                usleep(200 * 1000);
        }
        freeaddrinfo(ai);
        snprintf(err, errsize, "connect to the peer %s: %s (errno %d)%s", ret->peer, strerror(last), last,
                 last == ECONNREFUSED ? "; is `gpuvet bench rdma --server` running there, on that port?" : "");
        return -last;
}

int rdma_conn_send(struct rdma_conn *c, const char *line, size_t len, double deadline_ms, char *err, size_t errsize) {
        size_t done = 0;
        while (done < len) {
                ssize_t n = send(c->fd, line + done, len - done, MSG_NOSIGNAL);
                if (n > 0) {
                        done += (size_t)n;
                        continue;
                }
                if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
                        int r = wait_fd(c->fd, POLLOUT, deadline_ms);
                        if (r < 0) {
                                snprintf(err, errsize, "sending to the peer %s: %s", c->peer,
                                         r == -ETIMEDOUT ? "timed out" : strerror(-r));
                                return r;
                        }
                        continue;
                }
                int e = n < 0 ? errno : EPIPE;
                snprintf(err, errsize, "sending to the peer %s: %s", c->peer, strerror(e));
                return -e;
        }
        return 0;
}

int rdma_conn_recv(struct rdma_conn *c, char *buf, size_t size, double deadline_ms, const char *what, char *err,
                   size_t errsize) {
        double start = monotonic_ms();
        for (;;) {
                char *nl = memchr(c->in, '\n', c->in_len);
                if (nl) {
                        size_t n = (size_t)(nl - c->in) + 1;
                        if (n >= size) {
                                snprintf(err, errsize, "the peer %s sent a line too long %s", c->peer, what);
                                return -EBADMSG;
                        }
                        memcpy(buf, c->in, n);
                        buf[n] = 0;
                        memmove(c->in, c->in + n, c->in_len - n);
                        c->in_len -= n;
                        return 0;
                }
                if (c->in_len >= sizeof(c->in)) {
                        snprintf(err, errsize, "the peer %s sent a line too long %s", c->peer, what);
                        return -EBADMSG;
                }
                ssize_t n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, 0);
                if (n > 0) {
                        c->in_len += (size_t)n;
                        continue;
                }
                if (n == 0) {
                        snprintf(err, errsize, "the peer %s closed the connection %s", c->peer, what);
                        return -ECONNRESET;
                }
                if (errno == EAGAIN || errno == EINTR) {
                        int r = wait_fd(c->fd, POLLIN, deadline_ms);
                        if (r == -ETIMEDOUT) {
                                snprintf(err, errsize, "no answer from the peer %s within %.0f s %s (a hung or stopped peer)",
                                         c->peer, (monotonic_ms() - start) / 1000.0, what);
                                return r;
                        }
                        if (r < 0) {
                                snprintf(err, errsize, "poll: %s", strerror(-r));
                                return r;
                        }
                        continue;
                }
                int e = errno;
                snprintf(err, errsize, "receiving from the peer %s: %s", c->peer, strerror(e));
                return -e;
        }
}

void rdma_conn_close(struct rdma_conn *c) {
        if (c->fd >= 0)
                close(c->fd);
        c->fd = -1;
}

int rdma_parse_peer(const char *s, char *host, size_t hostsize, unsigned *port, unsigned default_port) {
        const char *h = s, *colon = NULL;
        size_t hl;
        if (*s == '[') {
                const char *close = strchr(s, ']');
                if (!close)
                        return -EINVAL;
                h = s + 1;
                hl = (size_t)(close - h);
                if (close[1] == ':')
                        colon = close + 1;
                else if (close[1])
                        return -EINVAL;
        } else {
                colon = strchr(s, ':');
                if (colon && strchr(colon + 1, ':'))
                        colon = NULL; /* a bare IPv6 address */
                hl = colon ? (size_t)(colon - s) : strlen(s);
        }
        if (hl == 0 || hl >= hostsize)
                return -EINVAL;
        memcpy(host, h, hl);
        host[hl] = 0;
        *port = default_port;
        if (colon) {
                char *end;
                errno = 0;
                unsigned long p = strtoul(colon + 1, &end, 10);
                if (errno || *end || end == colon + 1 || p < 1 || p > 65535)
                        return -EINVAL;
                *port = (unsigned)p;
        }
        return 0;
}

/* The rendezvous' exchanges (rendezvous.h): rank 0's blob to every rank, every rank's result
 * to rank 0, over TCP or a shared file. Every wait is a poll() or a sleep bounded by the
 * caller's deadline on the monotonic clock; sockets are non-blocking; EINTR is retried.
 *
 * TCP: rank 0 listens where the address says (rdv_open: a numeric address alone; a name's
 * addresses on this node, and the node's others when the name resolves to a loopback alias
 * there, as Debian's /etc/hosts makes it), never on every address unless asked (0.0.0.0,
 * ::). Each other rank connects (again and again until the deadline: rank 0 may start
 * later), receives rank 0's CHALLENGE, says HELLO (rank, world size, job key, its own
 * challenge) with an HMAC under the job's secret; once all size - 1 have, rank 0 answers each
 * with the blob and an HMAC the rank checks. Whatever a connection sends, rank 0 only refuses
 * it: the real rank may still come. The connections stay open for the gather: RESULT from
 * every rank, then RELEASE from rank 0 to each, which is the final barrier.
 *
 * FILE: rank 0 writes PATH (the blob, the job key, its session nonce, an HMAC under the
 * secret, as every file here has; temp file + rename, so a reader never sees half of it). The others poll it with backoff up to 50 ms, skip a
 * file of another job key or world size (a stale one), write PATH.RANK.join with rank 0's
 * nonce, and wait until rank 0 has removed it (taking a newer PATH meanwhile: a stale file of
 * the same key, an explicit run's, is then replaced); rank 0 waits for all of them. At the
 * gather each writes PATH.RANK (its result,
 * with the nonce) and waits until it is gone: rank 0 removes them, and PATH, once it holds
 * them all, so that removal is the barrier. */

#include "bench/rendezvous.h"
#include "bench/rendezvous_nettle.h"
#include "core/array.h"
#include "core/clock.h"
#include "core/strbuf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/atomic_file.h"

#define MAX_PENDING 64        /* connections accepted but not yet identified */
#define CONNECT_TRY_MS 2000   /* one connect attempt, within the deadline */
#define RETRY_MAX_MS 500      /* backoff between connect attempts */
#define FILE_POLL_MAX_MS 50   /* backoff between looks at a file */
#define NAMED_RANKS 8         /* ranks named in a message before "..." */

struct conn {
        int fd;
        int64_t since_ms; /* accepted at (rank 0's pending connections) */
        char from[64];    /* the peer's address, for rank 0's log */
        uint8_t root_challenge[RDV_CHALLENGE_BYTES]; /* rank 0's, sent to this connection */
        uint8_t rank_challenge[RDV_CHALLENGE_BYTES]; /* the rank's, from its HELLO */
        size_t len;
        uint8_t buf[RDV_MSG_MAX];
};

/* rank 0's listening sockets, one per address it binds */
struct listen_set {
        int n;
        int fd[RDV_MAX_LISTEN];
};

struct rdv_session {
        struct rdv_ranks ranks;
        struct rdv_address addr;
        char where[4200]; /* the address, for messages */
        struct listen_set listening;
        unsigned port;
        void (*log)(void *ctx, const char *line);
        void *log_ctx;
        struct conn *peers; /* rank 0 (tcp): by rank, fd -1 while absent */
        struct conn *to_root; /* the others (tcp) */
        uint64_t nonce;     /* rank 0's; the others learn it from the blob */
        bool shared;
        bool wrote_file;
};

/* ---- small helpers ----------------------------------------------------------------------- */

static int left_ms(int64_t deadline) {
        int64_t left = deadline - (int64_t)deadline_now_ms();
        return left < 0 ? 0 : left > 60 * 60 * 1000 ? 60 * 60 * 1000 : (int)left;
}

static void sleep_ms(int ms) {
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static double seconds(unsigned timeout_ms) { return timeout_ms / 1000.0; }

static int out_of_memory(char *err, size_t err_size) {
        strbuf_printf(err, err_size, "rendezvous: out of memory");
        return -ENOMEM;
}

static void close_fd(int *fd) {
        if (*fd >= 0)
                (void)close(*fd); /* a socket or file we only read: nothing to lose, ignoring */
        *fd = -1;
}

static uint64_t fresh_nonce(void) {
        uint64_t n = 0;
        if (getrandom(&n, sizeof(n), GRND_NONBLOCK) != (ssize_t)sizeof(n)) {
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                n = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 16);
        }
        return n ? n : 1;
}

/* "rank 3", "ranks 2, 3, 5" (the first NAMED_RANKS, then "..."): the ranks whose missing[]
 * is set. */
static void name_ranks(const bool *missing, int size, char *buf, size_t cap, int *ret_count) {
        int n = 0;
        size_t o = 0;
        buf[0] = '\0';
        for (int r = 0; r < size; r++) {
                if (!missing[r])
                        continue;
                if (n < NAMED_RANKS && o < cap)
                        o += (size_t)snprintf(buf + o, cap - o, "%s%d", n ? ", " : "", r);
                else if (n == NAMED_RANKS && o < cap)
                        o += (size_t)snprintf(buf + o, cap - o, ", ...");
                n++;
        }
        *ret_count = n;
}

static void say_missing(char *err, size_t err_size, const bool *missing, int size, const char *what, unsigned timeout_ms,
                        const char *where, const char *also) {
        char names[128];
        int n;
        name_ranks(missing, size, names, sizeof(names), &n);
        strbuf_printf(err, err_size, "%s %s of %d %s within %g s (%s)%s%s", n == 1 ? "rank" : "ranks", names, size,
                      what, seconds(timeout_ms), where, also && *also ? "; " : "", also ? also : "");
}

/* ---- sockets ----------------------------------------------------------------------------- */

static int send_all(int fd, const uint8_t *p, size_t len, int64_t deadline) {
        while (len > 0) {
                ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
                if (n > 0) {
                        p += n;
                        len -= (size_t)n;
                        continue;
                }
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
                        return -errno;
                struct pollfd pfd = {.fd = fd, .events = POLLOUT};
                int left = left_ms(deadline);
                if (left == 0)
                        return -ETIMEDOUT;
                if (poll(&pfd, 1, left) < 0 && errno != EINTR)
                        return -errno;
        }
        return 0;
}

static int send_msg(int fd, const struct rdv_msg *m, int64_t deadline) {
        uint8_t buf[RDV_MSG_MAX];
        size_t n = rdv_msg_encode(m, buf, sizeof(buf));
        if (!n)
                return -EMSGSIZE;
        return send_all(fd, buf, n, deadline);
}

/* Read what c's socket has. 1 with *m when a whole message is in (consumed from c's
 * buffer at the next call), 0 when more is needed, -ECONNRESET at its end, -EBADMSG for a
 * stream that is not ours, or another -errno. */
static int conn_read(struct conn *c, struct rdv_msg *m, size_t *consumed) {
        if (*consumed) {
                memmove(c->buf, c->buf + *consumed, c->len - *consumed);
                c->len -= *consumed;
                *consumed = 0;
        }
        int r = rdv_msg_parse(c->buf, c->len, m, consumed);
        if (r == 0)
                return 1;
        if (r != -EAGAIN)
                return r;
        for (;;) {
                ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
                if (n == 0)
                        return -ECONNRESET;
                c->len += (size_t)n;
                break;
        }
        r = rdv_msg_parse(c->buf, c->len, m, consumed);
        return r == 0 ? 1 : r == -EAGAIN ? 0 : r;
}

/* Wait for one whole message on c until deadline. 0, -ETIMEDOUT, or conn_read's errors. */
static int recv_msg(struct conn *c, struct rdv_msg *m, size_t *consumed, int64_t deadline) {
        for (;;) {
                int r = conn_read(c, m, consumed);
                if (r != 0)
                        return r < 0 ? r : 0;
                struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
                int left = left_ms(deadline);
                if (left == 0)
                        return -ETIMEDOUT;
                if (poll(&pfd, 1, left) < 0 && errno != EINTR)
                        return -errno;
        }
}

/* Name resolution on a thread of its own, so that a DNS server that never answers is
 * bounded by the deadline too: the thread is left behind then, and frees what it got. */
struct resolve {
        pthread_mutex_t lock;
        pthread_cond_t done_cond;
        bool done, abandoned;
        char host[256], port[8];
        int flags; /* getaddrinfo's */
        int rc;
        struct addrinfo *result;
};

static void resolve_free(struct resolve *q) {
        if (q->result)
                freeaddrinfo(q->result);
        pthread_mutex_destroy(&q->lock);
        pthread_cond_destroy(&q->done_cond);
        free(q);
}

static void *resolve_thread(void *arg) {
        struct resolve *q = arg;
        struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = q->flags};
        struct addrinfo *res = NULL;
        int rc = getaddrinfo(q->host, q->port, &hints, &res);
        pthread_mutex_lock(&q->lock);
        q->rc = rc;
        q->result = rc == 0 ? res : NULL;
        q->done = true;
        bool abandoned = q->abandoned;
        pthread_cond_signal(&q->done_cond);
        pthread_mutex_unlock(&q->lock);
        if (abandoned)
                resolve_free(q);
        return NULL;
}

/* 0 with *ret (freeaddrinfo it), -ETIMEDOUT, -EHOSTUNREACH with gai's message, or -ENXIO
 * when the name does not exist (a typo: no use waiting for it). */
static int resolve(const char *host, const char *port, int64_t deadline, int flags, struct addrinfo **ret, char *why,
                   size_t why_size) {
        struct resolve *q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        pthread_mutex_init(&q->lock, NULL);
        pthread_cond_init(&q->done_cond, NULL);
        snprintf(q->host, sizeof(q->host), "%s", host);
        snprintf(q->port, sizeof(q->port), "%s", port);
        q->flags = flags;
        pthread_t t;
        if (pthread_create(&t, NULL, resolve_thread, q) != 0) {
                resolve_free(q);
                return -EAGAIN;
        }
        pthread_detach(t);
        pthread_mutex_lock(&q->lock);
        while (!q->done && left_ms(deadline) > 0) {
                int64_t d = deadline;
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                int64_t left = d - (int64_t)deadline_now_ms();
                ts.tv_sec += left / 1000;
                ts.tv_nsec += (left % 1000) * 1000000L;
                if (ts.tv_nsec >= 1000000000L) {
                        ts.tv_sec++;
                        ts.tv_nsec -= 1000000000L;
                }
                pthread_cond_timedwait(&q->done_cond, &q->lock, &ts);
        }
        if (!q->done) {
                q->abandoned = true; /* the thread frees q */
                pthread_mutex_unlock(&q->lock);
                strbuf_printf(why, why_size, "resolving %s took too long", host);
                return -ETIMEDOUT;
        }
        pthread_mutex_unlock(&q->lock);
        int rc = q->rc;
        *ret = q->result;
        q->result = NULL;
        resolve_free(q);
        if (rc != 0) {
                strbuf_printf(why, why_size, "%s: %s", host, gai_strerror(rc));
                return rc == EAI_NONAME || rc == EAI_SERVICE ? -ENXIO : -EHOSTUNREACH;
        }
        return 0;
}

/* One non-blocking connect to ai within limit_ms. The fd, or -errno. */
static int connect_one(const struct addrinfo *ai, int limit_ms) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
                return -errno;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
                return fd;
        if (errno != EINPROGRESS && errno != EINTR) {
                int e = errno;
                close_fd(&fd);
                return -e;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        int64_t deadline = (int64_t)deadline_now_ms() + limit_ms;
        int r;
        while ((r = poll(&pfd, 1, left_ms(deadline))) < 0 && errno == EINTR)
                ;
        int soerr = 0;
        socklen_t sl = sizeof(soerr);
        if (r == 0)
                soerr = ETIMEDOUT;
        else if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
                soerr = errno;
        if (soerr) {
                close_fd(&fd);
                return -soerr;
        }
        return fd;
}

/* Connect to rank 0, trying again until the deadline. The fd, or -ETIMEDOUT with the last
 * failure in why (-ENXIO at once for a name that does not exist). */
static int connect_root(const struct rdv_address *a, int64_t deadline, char *why, size_t why_size) {
        int backoff = 20;
        strbuf_printf(why, why_size, "no answer");
        while (left_ms(deadline) > 0) {
                struct addrinfo *res = NULL;
                int r = resolve(a->host, a->port, deadline, AI_ADDRCONFIG, &res, why, why_size);
                if (r == -ENOMEM || r == -EAGAIN || r == -ENXIO)
                        return r;
                for (struct addrinfo *ai = res; ai && left_ms(deadline) > 0; ai = ai->ai_next) {
                        int limit = left_ms(deadline);
                        int fd = connect_one(ai, limit < CONNECT_TRY_MS ? limit : CONNECT_TRY_MS);
                        if (fd >= 0) {
                                freeaddrinfo(res);
                                return fd;
                        }
                        strbuf_printf(why, why_size, "%s", strerror(-fd));
                }
                if (res)
                        freeaddrinfo(res);
                int left = left_ms(deadline);
                sleep_ms(backoff < left ? backoff : left);
                backoff = backoff * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : backoff * 2;
        }
        return -ETIMEDOUT;
}

/* ---- where rank 0 listens ------------------------------------------------------------ */

#define BIND_RESOLVE_MS 15000 /* rank 0's own name: rdv_open has no deadline of its own */

static bool is_loopback(const struct sockaddr_storage *ss) {
        if (ss->ss_family == AF_INET)
                return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
        const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
}

static bool is_wildcard(const struct sockaddr_storage *ss) {
        if (ss->ss_family == AF_INET)
                return ((const struct sockaddr_in *)ss)->sin_addr.s_addr == htonl(INADDR_ANY);
        return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

/* The names that mean this machine's loopback and nothing else (RFC 6761, Debian's hosts). */
static bool localhost_name(const char *host) {
        size_t n = strlen(host);
        if (n && host[n - 1] == '.')
                n--;
        static const char *const names[] = {"localhost", "ip6-localhost", "ip6-loopback"};
        for (size_t i = 0; i < ARRAY_COUNT(names); i++)
                if (n == strlen(names[i]) && strncasecmp(host, names[i], n) == 0)
                        return true;
        return n > 10 && strncasecmp(host + n - 10, ".localhost", 10) == 0;
}

static void set_port(struct sockaddr_storage *ss, unsigned port) {
        if (ss->ss_family == AF_INET)
                ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
        else
                ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
}

static unsigned port_of(const struct sockaddr_storage *ss) {
        return ss->ss_family == AF_INET ? ntohs(((const struct sockaddr_in *)ss)->sin_port)
                                        : ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
}

static void add_address(struct sockaddr_storage *list, int *n, const struct sockaddr *sa, socklen_t len) {
        if (*n >= RDV_MAX_LISTEN || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6) || len > sizeof(*list))
                return;
        struct sockaddr_storage ss = {0};
        memcpy(&ss, sa, len);
        set_port(&ss, 0);
        for (int i = 0; i < *n; i++)
                if (memcmp(&list[i], &ss, sizeof(ss)) == 0)
                        return;
        list[(*n)++] = ss;
}

/* The addresses of this node's interfaces that other nodes may reach it by: up, not
 * loopback, not IPv6 link-local (a peer would need its interface to use one). */
static void node_addresses(struct sockaddr_storage *list, int *n) {
        struct ifaddrs *ifs = NULL;
        if (getifaddrs(&ifs) < 0)
                return;
        for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
                if (!i->ifa_addr || !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
                        continue;
                if (i->ifa_addr->sa_family == AF_INET)
                        add_address(list, n, i->ifa_addr, sizeof(struct sockaddr_in));
                else if (i->ifa_addr->sa_family == AF_INET6 &&
                         !IN6_IS_ADDR_LINKLOCAL(&((const struct sockaddr_in6 *)i->ifa_addr)->sin6_addr))
                        add_address(list, n, i->ifa_addr, sizeof(struct sockaddr_in6));
        }
        freeifaddrs(ifs);
}

static int listen_one(const struct sockaddr_storage *where, unsigned port, unsigned *ret_port) {
        struct sockaddr_storage ss = *where;
        set_port(&ss, port);
        int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        int one = 1, zero = 0;
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)); /* a failure only delays a rerun, ignoring */
        if (ss.ss_family == AF_INET6 && is_wildcard(&ss))
                (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)); /* "::": v4 too where allowed, ignoring */
        socklen_t len = ss.ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
        if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 1024) < 0) {
                int e = errno;
                close_fd(&fd);
                return -e;
        }
        socklen_t sl = sizeof(ss);
        *ret_port = getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 ? port_of(&ss) : port;
        return fd;
}

static void format_sockaddr(const struct sockaddr_storage *ss, char *buf, size_t size) {
        char host[INET6_ADDRSTRLEN] = "?";
        if (ss->ss_family == AF_INET)
                inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, host, sizeof(host));
        else
                inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, host, sizeof(host));
        snprintf(buf, size, ss->ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", host, port_of(ss));
}

/* Rank 0's listening sockets where a says (rdv_open): every address of the list that is
 * this node's, all on one port (the kernel's pick for port "0", tried again when another
 * address has it taken). 0 with ret filled, or -errno with why. */
static int listen_where(const struct rdv_address *a, struct listen_set *ret, unsigned *ret_port, char *why,
                        size_t why_size) {
        struct sockaddr_storage list[RDV_MAX_LISTEN];
        int n = 0;
        struct addrinfo *res = NULL;
        struct addrinfo numeric = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST};
        bool is_numeric = getaddrinfo(a->host, NULL, &numeric, &res) == 0;
        if (!is_numeric) {
                int r = resolve(a->host, "0", (int64_t)deadline_now_ms() + BIND_RESOLVE_MS, 0, &res, why, why_size);
                if (r < 0)
                        return r == -ENXIO ? -EADDRNOTAVAIL : r;
        }
        bool all_loopback = true;
        for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
                add_address(list, &n, ai->ai_addr, ai->ai_addrlen);
                if (n && !is_loopback(&list[n - 1]))
                        all_loopback = false;
        }
        if (res)
                freeaddrinfo(res);
        /* the node's own name given 127.0.1.1 by /etc/hosts: the others reach it elsewhere */
        if (!is_numeric && all_loopback && !localhost_name(a->host))
                node_addresses(list, &n);
        if (n == 0) {
                strbuf_printf(why, why_size, "%s has no address", a->host);
                return -EADDRNOTAVAIL;
        }
        unsigned long want = strtoul(a->port, NULL, 10);
        int err = -EADDRNOTAVAIL;
        for (int attempt = 0; attempt < 8; attempt++) {
                unsigned port = (unsigned)want;
                ret->n = 0;
                bool retry = false;
                for (int i = 0; i < n && !retry; i++) {
                        unsigned got = 0;
                        int fd = listen_one(&list[i], port, &got);
                        if (fd == -EADDRINUSE && want == 0 && ret->n > 0) {
                                retry = true; /* the kernel's pick for the first is taken on this one */
                                break;
                        }
                        if (fd < 0) {
                                /* an address of the name that is not this node's, or not yet
                                 * usable (IPv6 duplicate address detection): the others serve */
                                err = fd;
                                char text[INET6_ADDRSTRLEN] = "?";
                                const void *in = list[i].ss_family == AF_INET
                                                         ? (const void *)&((const struct sockaddr_in *)&list[i])->sin_addr
                                                         : (const void *)&((const struct sockaddr_in6 *)&list[i])->sin6_addr;
                                inet_ntop(list[i].ss_family, in, text, sizeof(text));
                                strbuf_printf(why, why_size, "%s: %s", text, strerror(-fd));
                                continue;
                        }
                        ret->fd[ret->n++] = fd;
                        port = got;
                }
                if (retry) {
                        for (int i = 0; i < ret->n; i++)
                                close_fd(&ret->fd[i]);
                        ret->n = 0;
                        continue;
                }
                if (ret->n == 0)
                        return err;
                *ret_port = port;
                return 0;
        }
        strbuf_printf(why, why_size, "no port free on every address of %s", a->host);
        return -EADDRINUSE;
}

/* ---- the session --------------------------------------------------------------------------- */

/* Rank 0 of tcp holds a connection per rank for the whole run: raise the soft limit on open
 * files towards the hard one when the ranks need more (1024 is a common default, and a
 * 128-node job has 1024 ranks). 0, or -EMFILE when even the hard limit is too low. */
static int enough_files(int size, char *err, size_t err_size) {
        struct rlimit rl;
        rlim_t need = (rlim_t)size + 64;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
                return 0;
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
                strbuf_printf(err, err_size, "rank 0 needs %d open files for %d ranks, the limit is %llu (ulimit -Hn)",
                              (int)need, size, (unsigned long long)rl.rlim_max);
                return -EMFILE;
        }
        rl.rlim_cur = need;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
                strbuf_printf(err, err_size, "rank 0 needs %d open files for %d ranks: %s", (int)need, size,
                              strerror(errno));
                return -EMFILE;
        }
        return 0;
}

static void close_listening(struct rdv_session *s) {
        for (int i = 0; i < s->listening.n; i++)
                close_fd(&s->listening.fd[i]);
        s->listening.n = 0;
}

int rdv_open(const struct rdv_ranks *ranks, const struct rdv_address *addr, struct rdv_session **ret, char *err,
             size_t err_size) {
        if (!ranks || !addr || !ret || ranks->size < 1 || ranks->size > RDV_MAX_RANKS || ranks->rank < 0 ||
            ranks->rank >= ranks->size || ranks->secret_len > RDV_SECRET_MAX) {
                strbuf_printf(err, err_size, "rendezvous: invalid ranks");
                return -EINVAL;
        }
        char lib_err[512];
        if (!rdv_nettle_load(lib_err, sizeof(lib_err))) { /* for rdv_msg_mac */
                strbuf_printf(err, err_size, "rendezvous: %s", lib_err);
                return -ENOENT;
        }
        struct rdv_session *s = calloc(1, sizeof(*s));
        if (!s) {
                return out_of_memory(err, err_size);
        }
        s->ranks = *ranks;
        s->addr = *addr;
        rdv_address_format(addr, s->where, sizeof(s->where));
        if (ranks->rank == 0) {
                s->nonce = fresh_nonce();
                if (addr->transport == RDV_TCP && ranks->size > 1) {
                        s->peers = calloc((size_t)ranks->size, sizeof(*s->peers));
                        if (!s->peers) {
                                free(s);
                                return out_of_memory(err, err_size);
                        }
                        for (int r = 0; r < ranks->size; r++)
                                s->peers[r].fd = -1;
                        int fd = enough_files(ranks->size, err, err_size);
                        if (fd < 0) {
                                rdv_close(s);
                                return fd;
                        }
                        char why[300] = "";
                        fd = listen_where(addr, &s->listening, &s->port, why, sizeof(why));
                        if (fd < 0) {
                                strbuf_printf(err, err_size,
                                              "rank 0 cannot listen at %s (%s)%s", s->where, why,
                                              fd == -EADDRNOTAVAIL ? ": is that this node? (rank 0 listens where the "
                                                                     "address says; tcp://0.0.0.0:PORT listens on every "
                                                                     "address)"
                                                                   : "");
                                rdv_close(s);
                                return fd;
                        }
                        if (strcmp(addr->port, "0") == 0) {
                                snprintf(s->addr.port, sizeof(s->addr.port), "%u", s->port);
                                rdv_address_format(&s->addr, s->where, sizeof(s->where));
                        }
                }
        }
        *ret = s;
        return 0;
}

unsigned rdv_bound_port(const struct rdv_session *s) { return s ? s->port : 0; }

void rdv_listening(const struct rdv_session *s, char *buf, size_t size) {
        size_t o = 0;
        if (size)
                buf[0] = '\0';
        for (int i = 0; s && i < s->listening.n && o < size; i++) {
                struct sockaddr_storage ss;
                socklen_t sl = sizeof(ss);
                char one[INET6_ADDRSTRLEN + 16];
                if (getsockname(s->listening.fd[i], (struct sockaddr *)&ss, &sl) < 0)
                        continue;
                format_sockaddr(&ss, one, sizeof(one));
                o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? ", " : "", one);
        }
}

void rdv_set_log(struct rdv_session *s, void (*log)(void *ctx, const char *line), void *ctx) {
        if (!s)
                return;
        s->log = log;
        s->log_ctx = ctx;
}

static bool fresh_challenge(uint8_t out[RDV_CHALLENGE_BYTES]) {
        ssize_t n;
        while ((n = getrandom(out, RDV_CHALLENGE_BYTES, 0)) < 0 && errno == EINTR)
                ;
        return n == RDV_CHALLENGE_BYTES;
}

/* Rank 0 judges a HELLO on connection c: 0 to keep it, else -EPROTO with why. Nothing a
 * connection says is fatal to the rendezvous: a process that is not a rank of this job may
 * send anything, and the real rank must still get in after it. The proof comes first, so
 * that without the secret nothing else is told. */
static int judge_hello(const struct rdv_session *s, const struct conn *c, const struct rdv_msg *m, char *why,
                       size_t why_size) {
        if (m->type != RDV_MSG_HELLO) {
                strbuf_printf(why, why_size, "a connection sent no HELLO");
                return -EPROTO;
        }
        if (!rdv_msg_mac_ok(s->ranks.secret, s->ranks.secret_len, m, c->root_challenge, m->challenge)) {
                strbuf_printf(why, why_size,
                              "a process saying it is rank %u did not prove the job's rendezvous secret (%s)", m->rank,
                              s->ranks.secret_len ? "a rank without GPUVET_RENDEZVOUS_SECRET, or another one"
                                                  : "rank 0 has none: is GPUVET_RENDEZVOUS_SECRET set on that rank only?");
                return -EPROTO;
        }
        if (strcmp(m->key, s->ranks.job_key) != 0) {
                strbuf_printf(why, why_size, "rank %u has job key \"%s\", rank 0 \"%s\"", m->rank, m->key,
                              s->ranks.job_key);
                return -EPROTO;
        }
        if (m->size != (uint32_t)s->ranks.size) {
                strbuf_printf(why, why_size, "rank %u says the world size is %u, rank 0 says %d", m->rank, m->size,
                              s->ranks.size);
                return -EPROTO;
        }
        if (m->rank == 0 || m->rank >= (uint32_t)s->ranks.size) {
                strbuf_printf(why, why_size, "a process says it is rank %u of %d", m->rank, s->ranks.size);
                return -EPROTO;
        }
        if (s->peers[m->rank].fd >= 0) {
                strbuf_printf(why, why_size, "rank %u joined twice (two processes have that rank)", m->rank);
                return -EPROTO;
        }
        return 0;
}

static void refuse(int fd, const char *why, int64_t deadline) {
        struct rdv_msg m = {.type = RDV_MSG_REFUSE, .data = (const uint8_t *)why, .data_len = strlen(why)};
        (void)send_msg(fd, &m, deadline); /* the refused process learns why if it still listens, ignoring */
}

/* A refusal for the log, and the last one kept for the timeout's message. */
static void note_refusal(struct rdv_session *s, const struct conn *c, const char *why, char *refused, size_t size) {
        char line[400];
        snprintf(line, sizeof(line), "refused %s: %s", c->from[0] ? c->from : "a connection", why);
        if (s->log)
                s->log(s->log_ctx, line);
        snprintf(refused, size, "%s", line);
}

/* Accept what the listening socket fd has into free pending slots, each sent its challenge.
 * 0, or -errno when no more descriptors are left (with a message). */
static int accept_pending(struct rdv_session *s, int fd, struct conn *pending, char *err, size_t err_size) {
        /* every slot taken by connections that say nothing (a scanner, a stuck process): the
         * oldest goes, so that ranks still get in, and the listening socket, always accepted
         * from, never spins the poll */
        int oldest = 0, free_slots = 0;
        for (int i = 0; i < MAX_PENDING; i++) {
                free_slots += pending[i].fd < 0;
                if (pending[i].since_ms < pending[oldest].since_ms)
                        oldest = i;
        }
        if (!free_slots)
                close_fd(&pending[oldest].fd);
        for (int i = 0; i < MAX_PENDING; i++) {
                struct conn *c = &pending[i];
                if (c->fd >= 0)
                        continue;
                struct sockaddr_storage ss;
                socklen_t sl = sizeof(ss);
                int cfd = accept4(fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (cfd < 0 && (errno == EMFILE || errno == ENFILE)) {
                        strbuf_printf(err, err_size, "rank 0 cannot take more connections (%s): %s", s->where,
                                      strerror(errno));
                        return -errno;
                }
                if (cfd < 0)
                        break; /* EAGAIN: none left; others: the peer retries */
                c->fd = cfd;
                c->since_ms = (int64_t)deadline_now_ms();
                c->len = 0;
                if (ss.ss_family == AF_INET || ss.ss_family == AF_INET6)
                        format_sockaddr(&ss, c->from, sizeof(c->from));
                else
                        c->from[0] = '\0';
                struct rdv_msg m = {.type = RDV_MSG_CHALLENGE, .size = 0};
                if (!fresh_challenge(c->root_challenge)) {
                        strbuf_printf(err, err_size, "rank 0 cannot draw a random challenge: %s", strerror(errno));
                        close_fd(&c->fd);
                        return -EIO;
                }
                memcpy(m.challenge, c->root_challenge, sizeof(m.challenge));
                /* a few bytes into a fresh socket's buffer: only a peer already gone fails */
                if (send_msg(c->fd, &m, (int64_t)deadline_now_ms() + 1000) < 0)
                        close_fd(&c->fd);
        }
        return 0;
}

static int root_share_tcp(struct rdv_session *s, const void *blob, size_t len, unsigned timeout_ms, char *err,
                          size_t err_size) {
        int64_t deadline = (int64_t)deadline_now_ms() + timeout_ms;
        int size = s->ranks.size, joined = 0, rc = 0, nl = s->listening.n;
        struct conn *pending = calloc(MAX_PENDING, sizeof(*pending));
        struct pollfd *pfds = calloc(MAX_PENDING + RDV_MAX_LISTEN, sizeof(*pfds));
        bool *missing = calloc((size_t)size, sizeof(*missing));
        char refused[400] = "", why[300];
        if (!pending || !pfds || !missing) {
                rc = out_of_memory(err, err_size);
                goto out;
        }
        for (int i = 0; i < MAX_PENDING; i++)
                pending[i].fd = -1;
        while (joined < size - 1) {
                int left = left_ms(deadline);
                if (left == 0) {
                        for (int r = 1; r < size; r++)
                                missing[r] = s->peers[r].fd < 0;
                        say_missing(err, err_size, missing, size, "did not join", timeout_ms, s->where, refused);
                        rc = -ETIMEDOUT;
                        goto out;
                }
                int n = 0;
                for (int i = 0; i < nl; i++)
                        pfds[n++] = (struct pollfd){.fd = s->listening.fd[i], .events = POLLIN};
                for (int i = 0; i < MAX_PENDING; i++)
                        pfds[n++] = (struct pollfd){.fd = pending[i].fd, .events = POLLIN};
                if (poll(pfds, (nfds_t)n, left) < 0) {
                        if (errno == EINTR)
                                continue;
                        rc = -errno;
                        strbuf_printf(err, err_size, "rendezvous: poll: %s", strerror(errno));
                        goto out;
                }
                for (int i = 0; i < MAX_PENDING; i++) {
                        struct conn *c = &pending[i];
                        if (c->fd < 0 || !(pfds[nl + i].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        struct rdv_msg m;
                        size_t used = 0;
                        int r = conn_read(c, &m, &used);
                        if (r == 0)
                                continue;
                        if (r < 0) { /* gone, or not our protocol: forget it */
                                if (r == -EBADMSG)
                                        note_refusal(s, c, "not gpuvet's rendezvous (a malformed message, or a "
                                                           "gpuvet older than this rank 0's)",
                                                     refused, sizeof(refused));
                                close_fd(&c->fd);
                                continue;
                        }
                        if (judge_hello(s, c, &m, why, sizeof(why)) < 0) {
                                refuse(c->fd, why, (int64_t)deadline_now_ms() + 1000);
                                close_fd(&c->fd);
                                note_refusal(s, c, why, refused, sizeof(refused));
                                continue;
                        }
                        memcpy(c->rank_challenge, m.challenge, sizeof(c->rank_challenge));
                        s->peers[m.rank] = *c;
                        s->peers[m.rank].len = 0; /* a HELLO is all a rank sends before its answer */
                        c->fd = -1;
                        joined++;
                }
                /* after the pending ones: a slot freed above is taken by a newcomer */
                for (int i = 0; i < nl; i++)
                        if ((pfds[i].revents & POLLIN) &&
                            (rc = accept_pending(s, s->listening.fd[i], pending, err, err_size)) < 0)
                                goto out;
        }
        for (int r = 1; r < size; r++) {
                struct rdv_msg m = {.type = RDV_MSG_BLOB, .rank = 0, .size = (uint32_t)size, .nonce = s->nonce,
                                    .data = blob, .data_len = len};
                memcpy(m.key, s->ranks.job_key, sizeof(m.key));
                rdv_msg_mac(s->ranks.secret, s->ranks.secret_len, &m, s->peers[r].root_challenge,
                            s->peers[r].rank_challenge, m.mac);
                int r2 = send_msg(s->peers[r].fd, &m, deadline);
                if (r2 < 0) {
                        strbuf_printf(err, err_size, "rank 0 could not answer rank %d (%s): %s", r, s->where,
                                      strerror(-r2));
                        rc = r2;
                        goto out;
                }
        }
out:
        if (rc < 0 && rc != -ENOMEM && err) {
                /* tell the ranks that joined, so they fail now rather than at their deadline */
                for (int r = 1; r < size; r++)
                        if (s->peers[r].fd >= 0)
                                refuse(s->peers[r].fd, err, (int64_t)deadline_now_ms() + 200);
        }
        if (pending)
                for (int i = 0; i < MAX_PENDING; i++)
                        close_fd(&pending[i].fd);
        free(pending);
        free(pfds);
        free(missing);
        return rc;
}

static int peer_share_tcp(struct rdv_session *s, void *blob, size_t *len, size_t cap, unsigned timeout_ms, char *err,
                          size_t err_size) {
        int64_t deadline = (int64_t)deadline_now_ms() + timeout_ms;
        char why[256];
        int rank = s->ranks.rank, size = s->ranks.size;
        int fd = connect_root(&s->addr, deadline, why, sizeof(why));
        if (fd == -ENXIO) {
                strbuf_printf(err, err_size, "rank %d of %d: rank 0's host in %s does not exist: %s", rank, size,
                              s->where, why);
                return fd;
        }
        if (fd < 0) {
                strbuf_printf(err, err_size, "rank %d of %d could not reach rank 0 at %s within %g s: %s", rank, size,
                              s->where, seconds(timeout_ms), why);
                return fd;
        }
        s->to_root = calloc(1, sizeof(*s->to_root));
        if (!s->to_root) {
                close_fd(&fd);
                return out_of_memory(err, err_size);
        }
        s->to_root->fd = fd;
        struct rdv_msg m;
        size_t used = 0;
        int r = recv_msg(s->to_root, &m, &used, deadline);
        if (r == 0 && m.type == RDV_MSG_CHALLENGE) {
                memcpy(s->to_root->root_challenge, m.challenge, RDV_CHALLENGE_BYTES);
                struct rdv_msg hello = {.type = RDV_MSG_HELLO, .rank = (uint32_t)rank, .size = (uint32_t)size};
                memcpy(hello.key, s->ranks.job_key, sizeof(hello.key));
                if (!fresh_challenge(hello.challenge)) {
                        strbuf_printf(err, err_size, "rank %d cannot draw a random challenge: %s", rank, strerror(errno));
                        return -EIO;
                }
                memcpy(s->to_root->rank_challenge, hello.challenge, RDV_CHALLENGE_BYTES);
                rdv_msg_mac(s->ranks.secret, s->ranks.secret_len, &hello, s->to_root->root_challenge,
                            hello.challenge, hello.mac);
                r = send_msg(fd, &hello, deadline);
                if (r == 0)
                        r = recv_msg(s->to_root, &m, &used, deadline);
        }
        if (r == -ETIMEDOUT) {
                strbuf_printf(
                        err, err_size,
                        "rank %d of %d: rank 0 at %s did not answer within %g s (it answers once every rank joined)",
                        rank, size, s->where, seconds(timeout_ms));
                return r;
        }
        if (r < 0) {
                strbuf_printf(err, err_size, "rank %d of %d: the connection to rank 0 at %s failed: %s", rank, size,
                              s->where, r == -EBADMSG ? "it does not speak this gpuvet's rendezvous" : strerror(-r));
                return r;
        }
        if (m.type == RDV_MSG_REFUSE) {
                strbuf_printf(err, err_size, "rank %d of %d: rank 0 at %s refused it: %.*s", rank, size, s->where,
                              (int)m.data_len, m.data ? (const char *)m.data : "");
                return -EPROTO;
        }
        if (m.type != RDV_MSG_BLOB || m.size != (uint32_t)size) {
                strbuf_printf(err, err_size, "rank %d of %d: rank 0 at %s sent no blob", rank, size, s->where);
                return -EPROTO;
        }
        /* whoever holds rank 0's port must hold the secret too before its id is used */
        if (!rdv_msg_mac_ok(s->ranks.secret, s->ranks.secret_len, &m, s->to_root->root_challenge,
                            s->to_root->rank_challenge)) {
                strbuf_printf(err, err_size,
                              "rank %d of %d: the process at %s did not prove the job's rendezvous secret (%s)", rank,
                              size, s->where,
                              s->ranks.secret_len ? "another process holds rank 0's port, or rank 0 has another secret"
                                                  : "rank 0 has a GPUVET_RENDEZVOUS_SECRET this rank lacks");
                return -EPROTO;
        }
        if (m.data_len > cap) {
                strbuf_printf(err, err_size, "rank %d: rank 0's blob (%zu bytes) is over %zu", rank, m.data_len, cap);
                return -EMSGSIZE;
        }
        if (m.data_len)
                memcpy(blob, m.data, m.data_len);
        *len = m.data_len;
        s->nonce = m.nonce;
        memmove(s->to_root->buf, s->to_root->buf + used, s->to_root->len - used);
        s->to_root->len -= used;
        return 0;
}

/* ---- files --------------------------------------------------------------------------------- */

static void file_name(const struct rdv_session *s, int rank, const char *suffix, char *buf, size_t size) {
        if (rank < 0)
                snprintf(buf, size, "%s", s->addr.path);
        else
                snprintf(buf, size, "%s.%d%s", s->addr.path, rank, suffix);
}

static const uint8_t no_challenge[RDV_CHALLENGE_BYTES];

/* Write m to path, with the HMAC that proves the job's secret (no challenges: the files are
 * tied to rank 0's session by its nonce). */
static int write_msg_file(const struct rdv_session *s, const char *path, const struct rdv_msg *m) {
        uint8_t buf[RDV_MSG_MAX];
        struct rdv_msg signed_msg = *m;
        rdv_msg_mac(s->ranks.secret, s->ranks.secret_len, &signed_msg, no_challenge, no_challenge, signed_msg.mac);
        size_t n = rdv_msg_encode(&signed_msg, buf, sizeof(buf));
        return n ? atomic_write(path, buf, n) : -EMSGSIZE;
}

static bool file_proven(const struct rdv_session *s, const struct rdv_msg *m) {
        return rdv_msg_mac_ok(s->ranks.secret, s->ranks.secret_len, m, no_challenge, no_challenge);
}

/* Read a message file: 0 with *m (data into buf), -ENOENT, -EBADMSG (torn or foreign). */
static int read_msg_file(const char *path, uint8_t *buf, size_t cap, struct rdv_msg *m) {
        int fd;
        while ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 && errno == EINTR)
                ;
        if (fd < 0)
                return -errno;
        size_t len = 0;
        for (;;) {
                ssize_t n = read(fd, buf + len, cap - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                len += (size_t)n;
                if (len == cap)
                        break;
        }
        close_fd(&fd);
        size_t used;
        int r = rdv_msg_parse(buf, len, m, &used);
        return r == 0 && used == len ? 0 : -EBADMSG;
}

static void remove_file(const char *path) {
        (void)unlink(path); /* gone already, or a directory we cannot clean: nothing to do, ignoring */
}

/* A flag per rank, set for all but rank 0: the ranks rank 0 has yet to hear from. NULL
 * when out of memory. */
static bool *all_ranks_missing(int size) {
        bool *missing = calloc((size_t)size, sizeof(*missing));
        for (int r = 1; missing && r < size; r++)
                missing[r] = true;
        return missing;
}

static int root_share_file(struct rdv_session *s, const void *blob, size_t len, unsigned timeout_ms, char *err,
                           size_t err_size) {
        int64_t deadline = (int64_t)deadline_now_ms() + timeout_ms;
        int size = s->ranks.size;
        struct rdv_msg m = {.type = RDV_MSG_BLOB, .size = (uint32_t)size, .nonce = s->nonce, .data = blob, .data_len = len};
        memcpy(m.key, s->ranks.job_key, sizeof(m.key));
        int r = write_msg_file(s, s->addr.path, &m);
        if (r < 0) {
                strbuf_printf(err, err_size, "rank 0 cannot write %s: %s", s->addr.path, strerror(-r));
                return r;
        }
        s->wrote_file = true;
        bool *missing = all_ranks_missing(size);
        uint8_t *buf = malloc(RDV_MSG_MAX);
        if (!missing || !buf) {
                free(missing);
                free(buf);
                return out_of_memory(err, err_size);
        }
        int waiting = size - 1, pause = 1;
        char path[sizeof(s->addr.path) + 32], refused[300] = "";
        while (waiting > 0) {
                for (int rank = 1; rank < size; rank++) {
                        if (!missing[rank])
                                continue;
                        file_name(s, rank, ".join", path, sizeof(path));
                        struct rdv_msg j;
                        if (read_msg_file(path, buf, RDV_MSG_MAX, &j) < 0 || j.type != RDV_MSG_HELLO || j.nonce != s->nonce)
                                continue; /* not there yet, or another run's */
                        /* a join that is not this rank's is left where it is (the real rank's
                         * replaces it) and named if the rank never comes: not fatal */
                        if (!file_proven(s, &j)) {
                                strbuf_printf(refused, sizeof(refused), "refused %s: it does not prove the job's rendezvous secret",
                                         path);
                                continue;
                        }
                        if (j.rank != (uint32_t)rank || j.size != (uint32_t)size) {
                                strbuf_printf(refused, sizeof(refused), "refused %s: it says rank %u of %u, rank 0 says %d ranks",
                                         path, j.rank, j.size, size);
                                continue;
                        }
                        remove_file(path);
                        missing[rank] = false;
                        waiting--;
                }
                int left = left_ms(deadline);
                if (waiting > 0 && left == 0) {
                        say_missing(err, err_size, missing, size, "did not join", timeout_ms, s->where, refused);
                        free(missing);
                        free(buf);
                        return -ETIMEDOUT;
                }
                if (waiting > 0) {
                        sleep_ms(pause < left ? pause : left);
                        pause = pause * 2 > FILE_POLL_MAX_MS ? FILE_POLL_MAX_MS : pause * 2;
                }
        }
        free(missing);
        free(buf);
        return 0;
}

/* The blob file at PATH when it is this job's (key and world size). 0 with *m, -ENOENT while
 * there is none (stale names what is there instead). */
static int read_blob_file(struct rdv_session *s, uint8_t *buf, struct rdv_msg *m, char *stale, size_t stale_size) {
        if (read_msg_file(s->addr.path, buf, RDV_MSG_MAX, m) < 0 || m->type != RDV_MSG_BLOB)
                return -ENOENT;
        if (!file_proven(s, m)) {
                strbuf_printf(stale, stale_size, "; %s does not prove the job's rendezvous secret (%s)", s->addr.path,
                              s->ranks.secret_len ? "another secret, or not rank 0's" : "rank 0 has a secret this rank lacks");
                return -ENOENT;
        }
        if (strcmp(m->key, s->ranks.job_key) == 0 && m->size == (uint32_t)s->ranks.size)
                return 0;
        strbuf_printf(stale, stale_size, "; %s holds another run's (job key \"%s\", %u ranks)", s->addr.path, m->key,
                      m->size);
        return -ENOENT;
}

/* Take the blob of m, and say so to rank 0 in PATH.RANK.join with its nonce. */
static int take_blob(struct rdv_session *s, const struct rdv_msg *m, void *blob, size_t *len, size_t cap,
                     const char *join_path, char *err, size_t err_size) {
        if (m->data_len > cap) {
                strbuf_printf(err, err_size, "rank %d: rank 0's blob (%zu bytes) is over %zu", s->ranks.rank,
                              m->data_len, cap);
                return -EMSGSIZE;
        }
        if (m->data_len)
                memcpy(blob, m->data, m->data_len);
        *len = m->data_len;
        s->nonce = m->nonce;
        struct rdv_msg j = {.type = RDV_MSG_HELLO, .rank = (uint32_t)s->ranks.rank, .size = (uint32_t)s->ranks.size,
                            .nonce = s->nonce};
        memcpy(j.key, s->ranks.job_key, sizeof(j.key));
        int r = write_msg_file(s, join_path, &j);
        if (r < 0)
                strbuf_printf(err, err_size, "rank %d cannot write %s: %s", s->ranks.rank, join_path, strerror(-r));
        return r;
}

/* Wait for this job's blob file, take it, and wait until rank 0 has collected this rank's
 * join file. A file of the same job key left by an earlier run (an explicit run with no key)
 * may be taken first: when rank 0 then writes its own (another nonce), the rank takes that
 * one instead, so the stale id is never the one returned. */
static int peer_share_file(struct rdv_session *s, void *blob, size_t *len, size_t cap, unsigned timeout_ms, char *err,
                           size_t err_size) {
        int64_t deadline = (int64_t)deadline_now_ms() + timeout_ms;
        int rank = s->ranks.rank, size = s->ranks.size, pause = 1, rc = -ETIMEDOUT;
        bool taken = false;
        char stale[200] = "", join_path[sizeof(s->addr.path) + 32];
        file_name(s, rank, ".join", join_path, sizeof(join_path));
        uint8_t *buf = malloc(RDV_MSG_MAX);
        if (!buf) {
                return out_of_memory(err, err_size);
        }
        for (;;) {
                if (taken && access(join_path, F_OK) < 0 && errno == ENOENT) {
                        rc = 0; /* rank 0 read it */
                        break;
                }
                struct rdv_msg m;
                if (read_blob_file(s, buf, &m, stale, sizeof(stale)) == 0 && (!taken || m.nonce != s->nonce)) {
                        if ((rc = take_blob(s, &m, blob, len, cap, join_path, err, err_size)) < 0)
                                break;
                        taken = true;
                        rc = -ETIMEDOUT;
                        continue;
                }
                int left = left_ms(deadline);
                if (left == 0) {
                        if (taken) {
                                remove_file(join_path);
                                strbuf_printf(err, err_size,
                                              "rank %d of %d: rank 0 did not take its join (%s) within %g s", rank,
                                              size, join_path, seconds(timeout_ms));
                        } else {
                                strbuf_printf(err, err_size, "rank %d of %d: rank 0 did not write %s within %g s%s",
                                              rank, size, s->addr.path, seconds(timeout_ms), stale);
                        }
                        break;
                }
                sleep_ms(pause < left ? pause : left);
                pause = pause * 2 > FILE_POLL_MAX_MS ? FILE_POLL_MAX_MS : pause * 2;
        }
        free(buf);
        return rc;
}

int rdv_share(struct rdv_session *s, void *blob, size_t *len, size_t cap, unsigned timeout_ms, char *err,
              size_t err_size) {
        if (!s || !blob || !len) {
                strbuf_printf(err, err_size, "rendezvous: invalid arguments");
                return -EINVAL;
        }
        if (s->shared) {
                strbuf_printf(err, err_size, "rendezvous: the blob was shared already");
                return -EINVAL;
        }
        if (s->ranks.rank == 0 && (*len > RDV_BLOB_MAX || *len > cap)) {
                strbuf_printf(err, err_size, "rendezvous: a blob of %zu bytes is over %d", *len, RDV_BLOB_MAX);
                return -EMSGSIZE;
        }
        int r = 0;
        if (s->ranks.size > 1) {
                if (s->addr.transport == RDV_TCP)
                        r = s->ranks.rank == 0 ? root_share_tcp(s, blob, *len, timeout_ms, err, err_size)
                                               : peer_share_tcp(s, blob, len, cap, timeout_ms, err, err_size);
                else
                        r = s->ranks.rank == 0 ? root_share_file(s, blob, *len, timeout_ms, err, err_size)
                                               : peer_share_file(s, blob, len, cap, timeout_ms, err, err_size);
        }
        if (r == 0)
                s->shared = true;
        /* every rank is in: nobody else may join, and the port is free again at once */
        close_listening(s);
        return r;
}

/* ---- the gather ---------------------------------------------------------------------------- */

/* A rank's blob into res, NUL-terminated. false when out of memory (res stays missing). */
static bool keep_result(struct rdv_rank_result *res, bool ok, const void *data, size_t len) {
        unsigned char *copy = malloc(len + 1);
        if (!copy)
                return false;
        if (len)
                memcpy(copy, data, len);
        copy[len] = '\0';
        res->state = ok ? RDV_RANK_OK : RDV_RANK_FAILED;
        res->len = len;
        res->data = copy;
        return true;
}

static bool left_without(struct rdv_rank_result *res, int rank, const char *how) {
        char text[160];
        snprintf(text, sizeof(text), "rank %d %s before it gave its result", rank, how);
        return keep_result(res, false, text, strlen(text));
}

/* How rank 0's gather ended: 0, -ETIMEDOUT naming the ranks still missing, or -ENOMEM when
 * a result could not be kept. */
static int gather_outcome(const struct rdv_session *s, int waiting, const bool *missing, bool kept,
                          unsigned timeout_ms, char *err, size_t err_size) {
        if (waiting > 0) {
                say_missing(err, err_size, missing, s->ranks.size, "gave no result", timeout_ms, s->where, NULL);
                return -ETIMEDOUT;
        }
        if (!kept) {
                strbuf_printf(err, err_size, "rank 0 ran out of memory keeping the results");
                return -ENOMEM;
        }
        return 0;
}

static int root_gather_tcp(struct rdv_session *s, struct rdv_gathered *g, int64_t deadline, unsigned timeout_ms, char *err,
                           size_t err_size) {
        int size = s->ranks.size, waiting = size - 1;
        bool kept = true;
        struct pollfd *pfds = calloc((size_t)size, sizeof(*pfds));
        bool *missing = all_ranks_missing(size);
        if (!pfds || !missing) {
                free(pfds);
                free(missing);
                return out_of_memory(err, err_size);
        }
        while (waiting > 0) {
                int left = left_ms(deadline);
                if (left == 0)
                        break;
                for (int r = 0; r < size; r++)
                        pfds[r] = (struct pollfd){.fd = missing[r] ? s->peers[r].fd : -1, .events = POLLIN};
                if (poll(pfds, (nfds_t)size, left) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                for (int r = 1; r < size; r++) {
                        if (!missing[r] || !(pfds[r].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        struct rdv_msg m;
                        size_t used = 0;
                        int rc = conn_read(&s->peers[r], &m, &used);
                        if (rc == 0)
                                continue;
                        if (rc > 0 && m.type == RDV_MSG_RESULT && m.rank == (uint32_t)r)
                                kept &= keep_result(&g->ranks[r], m.status == 0, m.data, m.data_len);
                        else
                                kept &= left_without(&g->ranks[r], r,
                                                     rc == -ECONNRESET ? "closed its connection" : "sent garbage");
                        if (rc < 0 || m.type != RDV_MSG_RESULT || m.rank != (uint32_t)r)
                                close_fd(&s->peers[r].fd);
                        missing[r] = false;
                        waiting--;
                }
        }
        /* the barrier: release every rank that gave its result */
        for (int r = 1; r < size; r++)
                if (!missing[r] && s->peers[r].fd >= 0) {
                        struct rdv_msg m = {.type = RDV_MSG_RELEASE, .size = (uint32_t)size, .nonce = s->nonce};
                        (void)send_msg(s->peers[r].fd, &m, (int64_t)deadline_now_ms() + 1000); /* a rank gone after its result loses nothing, ignoring */
                }
        int rc = gather_outcome(s, waiting, missing, kept, timeout_ms, err, err_size);
        free(pfds);
        free(missing);
        return rc;
}

/* This rank's result for rank 0, under the job's key. */
static struct rdv_msg result_msg(const struct rdv_session *s, bool ok, const void *data, size_t len) {
        struct rdv_msg m = {.type = RDV_MSG_RESULT, .rank = (uint32_t)s->ranks.rank, .size = (uint32_t)s->ranks.size,
                            .nonce = s->nonce, .status = ok ? 0 : 1, .data = data, .data_len = len};
        memcpy(m.key, s->ranks.job_key, sizeof(m.key));
        return m;
}

static int peer_gather_tcp(struct rdv_session *s, bool ok, const void *data, size_t len, int64_t deadline,
                           unsigned timeout_ms, char *err, size_t err_size) {
        int rank = s->ranks.rank, size = s->ranks.size;
        struct rdv_msg m = result_msg(s, ok, data, len);
        int r = send_msg(s->to_root->fd, &m, deadline);
        size_t used = 0;
        struct rdv_msg reply;
        if (r == 0)
                r = recv_msg(s->to_root, &reply, &used, deadline);
        if (r == 0 && reply.type != RDV_MSG_RELEASE)
                r = -EPROTO;
        if (r == -ETIMEDOUT)
                strbuf_printf(err, err_size, "rank %d of %d: rank 0 at %s did not release the gather within %g s", rank,
                              size, s->where, seconds(timeout_ms));
        else if (r < 0)
                strbuf_printf(err, err_size, "rank %d of %d: the gather to rank 0 at %s failed: %s", rank, size,
                              s->where, strerror(-r));
        return r;
}

static int root_gather_file(struct rdv_session *s, struct rdv_gathered *g, int64_t deadline, unsigned timeout_ms,
                            char *err, size_t err_size) {
        int size = s->ranks.size, waiting = size - 1, pause = 1;
        bool kept = true;
        bool *missing = all_ranks_missing(size);
        uint8_t *buf = malloc(RDV_MSG_MAX);
        char path[sizeof(s->addr.path) + 32];
        if (!missing || !buf) {
                free(missing);
                free(buf);
                return out_of_memory(err, err_size);
        }
        for (;;) {
                for (int r = 1; r < size; r++) {
                        if (!missing[r])
                                continue;
                        file_name(s, r, "", path, sizeof(path));
                        struct rdv_msg m;
                        if (read_msg_file(path, buf, RDV_MSG_MAX, &m) < 0 || m.type != RDV_MSG_RESULT || m.nonce != s->nonce ||
                            m.rank != (uint32_t)r || !file_proven(s, &m))
                                continue;
                        kept &= keep_result(&g->ranks[r], m.status == 0, m.data, m.data_len);
                        missing[r] = false;
                        waiting--;
                }
                int left = left_ms(deadline);
                if (waiting == 0 || left == 0)
                        break;
                sleep_ms(pause < left ? pause : left);
                pause = pause * 2 > FILE_POLL_MAX_MS ? FILE_POLL_MAX_MS : pause * 2;
        }
        /* the barrier: a rank's file gone tells it rank 0 holds every result (or gave up) */
        for (int r = 1; r < size; r++)
                if (!missing[r]) {
                        file_name(s, r, "", path, sizeof(path));
                        remove_file(path);
                }
        remove_file(s->addr.path);
        s->wrote_file = false;
        int rc = gather_outcome(s, waiting, missing, kept, timeout_ms, err, err_size);
        free(missing);
        free(buf);
        return rc;
}

static int peer_gather_file(struct rdv_session *s, bool ok, const void *data, size_t len, int64_t deadline,
                            unsigned timeout_ms, char *err, size_t err_size) {
        int rank = s->ranks.rank, size = s->ranks.size, pause = 1;
        struct rdv_msg m = result_msg(s, ok, data, len);
        char path[sizeof(s->addr.path) + 32];
        file_name(s, rank, "", path, sizeof(path));
        int r = write_msg_file(s, path, &m);
        if (r < 0) {
                strbuf_printf(err, err_size, "rank %d cannot write %s: %s", rank, path, strerror(-r));
                return r;
        }
        while (access(path, F_OK) == 0) {
                int left = left_ms(deadline);
                if (left == 0) {
                        remove_file(path);
                        strbuf_printf(err, err_size, "rank %d of %d: rank 0 did not collect %s within %g s", rank, size,
                                      path, seconds(timeout_ms));
                        return -ETIMEDOUT;
                }
                sleep_ms(pause < left ? pause : left);
                pause = pause * 2 > FILE_POLL_MAX_MS ? FILE_POLL_MAX_MS : pause * 2;
        }
        return 0;
}

int rdv_gather(struct rdv_session *s, bool ok, const void *data, size_t len, struct rdv_gathered *ret,
               unsigned timeout_ms, char *err, size_t err_size) {
        if (ret)
                *ret = (struct rdv_gathered){0}; /* rdv_gathered_free is safe whatever follows */
        if (!s || (len && !data) || (s->ranks.rank == 0 && !ret)) {
                strbuf_printf(err, err_size, "rendezvous: invalid arguments");
                return -EINVAL;
        }
        if (len > RDV_GATHER_MAX) {
                strbuf_printf(err, err_size, "rendezvous: a result of %zu bytes is over %d", len, RDV_GATHER_MAX);
                return -EMSGSIZE;
        }
        if (s->ranks.size > 1 && !s->shared) {
                strbuf_printf(err, err_size, "rendezvous: gather before the blob was shared");
                return -EINVAL;
        }
        int64_t deadline = (int64_t)deadline_now_ms() + timeout_ms;
        if (s->ranks.rank != 0)
                return s->addr.transport == RDV_TCP ? peer_gather_tcp(s, ok, data, len, deadline, timeout_ms, err, err_size)
                                                    : peer_gather_file(s, ok, data, len, deadline, timeout_ms, err, err_size);
        ret->size = s->ranks.size;
        ret->ranks = calloc((size_t)s->ranks.size, sizeof(*ret->ranks));
        if (!ret->ranks) {
                return out_of_memory(err, err_size);
        }
        if (!keep_result(&ret->ranks[0], ok, data, len)) {
                rdv_gathered_free(ret);
                return out_of_memory(err, err_size);
        }
        if (s->ranks.size == 1)
                return 0;
        return s->addr.transport == RDV_TCP ? root_gather_tcp(s, ret, deadline, timeout_ms, err, err_size)
                                            : root_gather_file(s, ret, deadline, timeout_ms, err, err_size);
}

void rdv_gathered_free(struct rdv_gathered *g) {
        if (!g)
                return;
        for (int r = 0; g->ranks && r < g->size; r++)
                free(g->ranks[r].data);
        free(g->ranks);
        g->ranks = NULL;
        g->size = 0;
}

void rdv_close(struct rdv_session *s) {
        if (!s)
                return;
        close_listening(s);
        if (s->peers)
                for (int r = 0; r < s->ranks.size; r++)
                        close_fd(&s->peers[r].fd);
        free(s->peers);
        if (s->to_root)
                close_fd(&s->to_root->fd);
        free(s->to_root);
        if (s->wrote_file) {
                char path[sizeof(s->addr.path) + 32];
                remove_file(s->addr.path);
                for (int r = 1; r < s->ranks.size; r++) {
                        file_name(s, r, ".join", path, sizeof(path));
                        remove_file(path);
                }
        }
        explicit_bzero(s, sizeof(*s)); /* the job's secret */
        free(s);
}

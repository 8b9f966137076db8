/* libmicrohttpd server (http_server.h). */
#include "serve/http_server.h"
#include "core/clock.h"
#include "serve/http_libs.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Password checks run on AUTH_WORKERS threads of their own, never on the serving thread: a
 * bcrypt check takes ~0.1-0.3 s of CPU, and on the serving thread forty clients with wrong
 * passwords held every scrape for ~10 s. At most AUTH_QUEUE checks wait or run at once, at
 * most AUTH_PER_ADDRESS of them for one client address, so one address (or a few) cannot
 * queue the scraper's check behind a hundred of its own; beyond that the answer is 503 at
 * once. A password that matched is remembered for AUTH_CACHE_MS, so a scraper pays the
 * check once in a while, not every scrape. */
#define AUTH_WORKERS 2
#define AUTH_QUEUE 16
#define AUTH_PER_ADDRESS 1
#define AUTH_CACHE_MS (5 * 60 * 1000ULL)

/* Connections by client address, to keep a share of --max-connections for addresses that
 * hold none (docs/serve.md "Limits"): once fewer than an eighth of the
 * connections are left, only an address holding none gets one. A Prometheus server keeps
 * one connection to its target and opens another only when that one closed, so it always
 * finds room unless as many other addresses as the share each took one. */
#define RESERVE_SHARE 8
#define ADDR_BUCKETS 4096

struct auth_user {
        char *name;
        char *hash;
        char *verified; /* the last password that matched hash, until verified_until */
        unsigned long long verified_until;
};

enum auth_state { AUTH_UNCHECKED, AUTH_PENDING, AUTH_GRANTED, AUTH_DENIED, AUTH_BUSY };

/* One client connection (libmicrohttpd's socket context), from its opening to its close. */
struct conn {
        struct MHD_Connection *mhd;
        int fd;
        unsigned char addr[16]; /* IPv6, or IPv4 mapped into it */
        struct conn *bucket_prev, *bucket_next; /* s->buckets: the same address hash */
        struct conn *wait_prev, *wait_next;     /* s->waiting, while a request is not in */
        bool waiting;
        unsigned long long since_ms; /* opened, or the previous answer sent */
        /* The request being answered. */
        enum auth_state auth;
        const struct auth_user *user; /* NULL: a name no user has (a dummy hash is checked) */
        char *pass;
};

struct http_server {
        struct MHD_Daemon *daemon;
        struct body_cache *cache;
        int listen_fd;
        char *cert_pem, *key_pem;
        unsigned int tls_min_version;
        struct auth_user *users;
        size_t n_users;
        char *dummy_hash; /* checked for unknown names, so that they cost what a wrong password does */
        unsigned int max_connections;
        unsigned int per_address; /* 0: no policy by address, neither limit nor reserve */
        unsigned long long request_ms; /* a request must be in this long after since_ms */

        pthread_mutex_t auth_lock; /* users[].verified*, the queue, auth_stopping */
        pthread_cond_t auth_wake;
        struct conn *queue[AUTH_QUEUE];      /* waiting for a worker, oldest first */
        struct conn *checking[AUTH_WORKERS]; /* being checked; NULL: a free worker */
        size_t n_queued;
        bool auth_stopping;
        pthread_t auth_threads[AUTH_WORKERS];
        size_t n_auth_threads;

        pthread_mutex_t conn_lock; /* buckets, waiting, n_open, watchdog_stopping */
        pthread_cond_t watchdog_wake;
        struct conn *buckets[ADDR_BUCKETS];
        struct conn *waiting_head, *waiting_tail; /* oldest since_ms first */
        unsigned int n_open, n_waiting;
        bool watchdog_stopping, watchdog_started;
        pthread_t watchdog;
};

/* Equal strings, in a time that depends on their lengths only. */
static bool same_secret(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b);
        unsigned char d = la != lb;
        for (size_t i = 0; i < la && i < lb; i++)
                d |= (unsigned char)(a[i] ^ b[i]);
        return d == 0;
}

/* ---- connections by address, and the deadline for a request to come in ---- */

static void address_key(const struct sockaddr *sa, unsigned char key[16]) {
        memset(key, 0, 16);
        if (!sa)
                return;
        if (sa->sa_family == AF_INET) {
                key[10] = key[11] = 0xff;
                memcpy(key + 12, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
        } else if (sa->sa_family == AF_INET6) {
                memcpy(key, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
        }
}

static size_t bucket_of(const unsigned char key[16]) {
        uint32_t h = 2166136261u; /* FNV-1a */
        for (int i = 0; i < 16; i++)
                h = (h ^ key[i]) * 16777619u;
        return h & (ADDR_BUCKETS - 1);
}

/* Connections open from key's address; conn_lock held. */
static unsigned int held_by(struct http_server *s, const unsigned char key[16]) {
        unsigned int n = 0;
        for (struct conn *c = s->buckets[bucket_of(key)]; c; c = c->bucket_next)
                n += memcmp(c->addr, key, 16) == 0;
        return n;
}

static void wait_unlink(struct http_server *s, struct conn *c) {
        if (!c->waiting)
                return;
        if (c->wait_prev)
                c->wait_prev->wait_next = c->wait_next;
        else
                s->waiting_head = c->wait_next;
        if (c->wait_next)
                c->wait_next->wait_prev = c->wait_prev;
        else
                s->waiting_tail = c->wait_prev;
        c->wait_prev = c->wait_next = NULL;
        c->waiting = false;
        s->n_waiting--;
}

/* From now, the next request must be in within request_ms; conn_lock held. */
static void wait_start(struct http_server *s, struct conn *c) {
        wait_unlink(s, c);
        c->since_ms = deadline_now_ms();
        c->wait_prev = s->waiting_tail;
        if (s->waiting_tail)
                s->waiting_tail->wait_next = c;
        else
                s->waiting_head = c;
        s->waiting_tail = c;
        c->waiting = true;
        s->n_waiting++;
}

/* libmicrohttpd's idle timeout starts again with every byte, so a client sending one byte
 * every few seconds held its connection for ever. Every second this closes the connections
 * whose request (headers, TLS handshake, any body) is not in request_ms after the
 * connection opened or the previous answer went out. shutdown() rather than close(): the
 * descriptor stays libmicrohttpd's, which sees the end of the stream and cleans up; the
 * connection's close callback takes conn_lock before the descriptor is closed, so it is
 * still open here. */
static void *watchdog_main(void *arg) {
        struct http_server *s = arg;
        pthread_mutex_lock(&s->conn_lock);
        while (!s->watchdog_stopping) {
                unsigned long long now = deadline_now_ms();
                while (s->waiting_head && s->waiting_head->since_ms + s->request_ms <= now) {
                        struct conn *c = s->waiting_head;
                        (void)shutdown(c->fd, SHUT_RDWR); /* a connection already going: harmless */
                        wait_unlink(s, c);
                }
                struct timespec until;
                clock_gettime(CLOCK_MONOTONIC, &until);
                until.tv_nsec += 250 * 1000000L;
                if (until.tv_nsec >= 1000000000L) {
                        until.tv_sec++;
                        until.tv_nsec -= 1000000000L;
                }
                (void)pthread_cond_timedwait(&s->watchdog_wake, &s->conn_lock, &until);
        }
        pthread_mutex_unlock(&s->conn_lock);
        return NULL;
}

/* Whether a connection from addr may be taken: libmicrohttpd has already applied the
 * per-address limit; this keeps the last share for addresses holding none. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen) {
        (void)addrlen;
        struct http_server *s = cls;
        unsigned char key[16];
        address_key(addr, key);
        unsigned int reserve = s->per_address ? s->max_connections / RESERVE_SHARE : 0;
        pthread_mutex_lock(&s->conn_lock);
        bool ok = s->n_open + reserve < s->max_connections || held_by(s, key) == 0;
        pthread_mutex_unlock(&s->conn_lock);
        return ok ? MHD_YES : MHD_NO;
}

static void on_connection(void *cls, struct MHD_Connection *mhd, void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
        struct http_server *s = cls;
        if (code == MHD_CONNECTION_NOTIFY_STARTED) {
                struct conn *c = calloc(1, sizeof(*c));
                *socket_context = c;
                if (!c) { /* no deadline for this one: libmicrohttpd's idle timeout still holds */
                        return;
                }
                c->mhd = mhd;
                const union MHD_ConnectionInfo *fd =
                        libmhd.MHD_get_connection_info(mhd, MHD_CONNECTION_INFO_CONNECTION_FD);
                c->fd = fd ? fd->connect_fd : -1;
                const union MHD_ConnectionInfo *a =
                        libmhd.MHD_get_connection_info(mhd, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
                address_key(a ? a->client_addr : NULL, c->addr);
                pthread_mutex_lock(&s->conn_lock);
                size_t b = bucket_of(c->addr);
                c->bucket_next = s->buckets[b];
                if (c->bucket_next)
                        c->bucket_next->bucket_prev = c;
                s->buckets[b] = c;
                s->n_open++;
                if (c->fd >= 0)
                        wait_start(s, c);
                pthread_mutex_unlock(&s->conn_lock);
                return;
        }
        struct conn *c = *socket_context;
        if (!c)
                return;
        pthread_mutex_lock(&s->conn_lock);
        wait_unlink(s, c);
        if (c->bucket_prev)
                c->bucket_prev->bucket_next = c->bucket_next;
        else
                s->buckets[bucket_of(c->addr)] = c->bucket_next;
        if (c->bucket_next)
                c->bucket_next->bucket_prev = c->bucket_prev;
        s->n_open--;
        pthread_mutex_unlock(&s->conn_lock);
        free(c->pass);
        free(c);
        *socket_context = NULL;
}

/* A request is over (answered, or its connection closing): the next one has request_ms. */
static void on_completed(void *cls, struct MHD_Connection *mhd, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
        (void)mhd;
        (void)toe;
        struct http_server *s = cls;
        struct conn *c = *con_cls;
        if (!c)
                return;
        c->auth = AUTH_UNCHECKED;
        c->user = NULL;
        free(c->pass);
        c->pass = NULL;
        if (c->fd >= 0) {
                pthread_mutex_lock(&s->conn_lock);
                wait_start(s, c);
                pthread_mutex_unlock(&s->conn_lock);
        }
        *con_cls = NULL;
}

/* ---- basic auth ---- */

/* Whether pass is user's password remembered from a recent check; auth_lock held. */
static bool remembered(const struct auth_user *u, const char *pass) {
        return u->verified && deadline_now_ms() < u->verified_until && same_secret(u->verified, pass);
}

static void *auth_main(void *arg) {
        struct http_server *s = arg;
        struct crypt_data *cd = calloc(1, sizeof(*cd));
        pthread_mutex_lock(&s->auth_lock);
        for (;;) {
                while (!s->auth_stopping && s->n_queued == 0)
                        pthread_cond_wait(&s->auth_wake, &s->auth_lock);
                if (s->n_queued == 0)
                        break;
                struct conn *c = s->queue[0];
                s->n_queued--;
                memmove(&s->queue[0], &s->queue[1], s->n_queued * sizeof(s->queue[0]));
                size_t slot = 0;
                while (s->checking[slot]) /* one of AUTH_WORKERS slots is free: this worker's */
                        slot++;
                s->checking[slot] = c;
                bool stopping = s->auth_stopping;
                pthread_mutex_unlock(&s->auth_lock);
                enum auth_state result = AUTH_BUSY;
                if (!stopping && cd) {
                        /* An unknown name checks the dummy, so that it takes as long as a known
                         * one's wrong password (exporter-toolkit does the same). crypt_rn,
                         * libxcrypt's: NULL on failure rather than a "*0" string, and not the
                         * crypt_r that GCC 12's AddressSanitizer intercepts and then calls
                         * through a null pointer. */
                        const char *want = c->user ? c->user->hash : s->dummy_hash;
                        const char *h = want ? libxcrypt.crypt_rn(c->pass, want, cd, (int)sizeof(*cd)) : NULL;
                        result = h && c->user && same_secret(h, want) ? AUTH_GRANTED : AUTH_DENIED;
                }
                pthread_mutex_lock(&s->auth_lock);
                if (result == AUTH_GRANTED) {
                        struct auth_user *u = &s->users[c->user - s->users];
                        char *copy = strdup(c->pass);
                        if (copy) {
                                free(u->verified);
                                u->verified = copy;
                                u->verified_until = deadline_now_ms() + AUTH_CACHE_MS;
                        }
                }
                s->checking[slot] = NULL;
                c->auth = result;
                /* http_server_stop joins these threads before it stops the daemon, so the
                 * connection is still suspended and the daemon still there. */
                libmhd.MHD_resume_connection(c->mhd);
        }
        pthread_mutex_unlock(&s->auth_lock);
        free(cd);
        return NULL;
}

/* Start checking the request's credentials: AUTH_GRANTED at once when remembered,
 * AUTH_PENDING (the connection suspended until a worker resumes it), AUTH_DENIED without
 * credentials, AUTH_BUSY when too many checks wait. */
static enum auth_state auth_start(struct http_server *s, struct conn *c, struct MHD_Connection *mhd) {
        char *pass = NULL;
        char *name = libmhd.MHD_basic_auth_get_username_password(mhd, &pass);
        enum auth_state st = AUTH_DENIED;
        if (!name || !pass)
                goto out;
        const struct auth_user *user = NULL;
        for (size_t i = 0; i < s->n_users; i++)
                if (strcmp(s->users[i].name, name) == 0)
                        user = &s->users[i];
        pthread_mutex_lock(&s->auth_lock);
        if (user && remembered(user, pass)) {
                st = AUTH_GRANTED;
        } else {
                unsigned int same = 0;
                for (size_t i = 0; i < s->n_queued; i++)
                        same += memcmp(s->queue[i]->addr, c->addr, 16) == 0;
                for (size_t i = 0; i < AUTH_WORKERS; i++)
                        same += s->checking[i] && memcmp(s->checking[i]->addr, c->addr, 16) == 0;
                st = AUTH_BUSY;
                if (!s->auth_stopping && s->n_queued < AUTH_QUEUE && same < AUTH_PER_ADDRESS &&
                    (c->pass = strdup(pass)) != NULL) {
                        c->user = user;
                        c->auth = st = AUTH_PENDING;
                        s->queue[s->n_queued++] = c;
                        libmhd.MHD_suspend_connection(mhd);
                        pthread_cond_signal(&s->auth_wake);
                }
        }
        if (st != AUTH_PENDING)
                c->auth = st;
        pthread_mutex_unlock(&s->auth_lock);
out:
        if (name)
                libmhd.MHD_free(name);
        if (pass)
                libmhd.MHD_free(pass);
        return st;
}

static enum MHD_Result auth_denied(struct MHD_Connection *conn) {
        static const char msg[] = "unauthorized\n";
        struct MHD_Response *r =
                libmhd.MHD_create_response_from_buffer(sizeof(msg) - 1, (void *)msg, MHD_RESPMEM_PERSISTENT);
        enum MHD_Result ret = r ? libmhd.MHD_queue_basic_auth_fail_response(conn, "gpuvet", r) : MHD_NO;
        if (r)
                libmhd.MHD_destroy_response(r);
        return ret;
}

/* A bcrypt hash at the highest cost among the users' hashes, for names no user has: a
 * wrong name then costs at least what a wrong password costs. */
static char *make_dummy_hash(const struct auth_user *users, size_t n) {
        unsigned long cost = 0;
        for (size_t i = 0; i < n; i++) {
                unsigned long c = strtoul(users[i].hash + 4, NULL, 10); /* "$2b$12$..." */
                if (c >= 4 && c <= 31 && c > cost)
                        cost = c;
        }
        char salt[CRYPT_GENSALT_OUTPUT_SIZE];
        struct crypt_data *cd = calloc(1, sizeof(*cd));
        char *ret = NULL;
        if (cd && libxcrypt.crypt_gensalt_rn("$2b$", cost ? cost : 10, NULL, 0, salt, (int)sizeof(salt))) {
                const char *h = libxcrypt.crypt_rn("gpuvet: no such user", salt, cd, (int)sizeof(*cd));
                ret = h ? strdup(h) : NULL;
        }
        free(cd);
        return ret;
}

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned int code, const char *type, char *body,
                               size_t len, bool owned) {
        struct MHD_Response *r =
                libmhd.MHD_create_response_from_buffer(len, body,
                                                       owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
        if (!r) {
                if (owned)
                        free(body);
                return MHD_NO;
        }
        (void)libmhd.MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
        if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
                (void)libmhd.MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
        enum MHD_Result ret = libmhd.MHD_queue_response(conn, code, r);
        libmhd.MHD_destroy_response(r);
        return ret;
}

static enum MHD_Result text(struct MHD_Connection *conn, unsigned int code, const char *msg) {
        return respond(conn, code, "text/plain; charset=utf-8", (char *)msg, strlen(msg), false);
}

static void release_body(void *cls) { body_cache_release(cls); }

static enum MHD_Result metrics(struct http_server *s, struct MHD_Connection *conn) {
        const char *accept = libmhd.MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
        enum expo_format fmt = accept_format(accept, accept ? strlen(accept) : 0);
        struct scrape_body *b;
        int r = body_cache_scrape(s->cache, fmt, &b);
        if (r == -EAGAIN)
                return text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "no round of the GPUs has been read yet\n");
        if (r < 0)
                return text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
        /* The round's body is sent from the cache, shared by every scrape of the round. */
        const struct MHD_IoVec iov[2] = {{b->part[0], b->len[0]}, {b->part[1], b->len[1]}};
        struct MHD_Response *resp = libmhd.MHD_create_response_from_iovec(iov, 2, release_body, b);
        if (!resp) {
                body_cache_release(b);
                return MHD_NO;
        }
        (void)libmhd.MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, expo_content_type(fmt));
        enum MHD_Result ret = libmhd.MHD_queue_response(conn, MHD_HTTP_OK, resp);
        libmhd.MHD_destroy_response(resp);
        return ret;
}

static enum MHD_Result health(struct http_server *s, struct MHD_Connection *conn) {
        char why[256];
        if (body_cache_healthy(s->cache, why, sizeof(why) - 1))
                return text(conn, MHD_HTTP_OK, "ok\n");
        strcat(why, "\n");
        char *copy = strdup(why);
        if (!copy)
                return text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "unhealthy\n");
        return respond(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8", copy, strlen(copy), true);
}

static const char index_page[] =
        "<html><head><title>gpuvet exporter</title></head><body><h1>gpuvet exporter</h1>"
        "<p><a href=\"/metrics\">Metrics</a> &middot; <a href=\"/health\">Health</a></p></body></html>\n";

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls) {
        (void)version;
        (void)upload_data;
        struct http_server *s = cls;
        struct conn *c = *con_cls;
        if (!c) {
                /* The headers are in. Answering now would make libmicrohttpd close the
                 * connection after the answer (it has not read the request to its end); on
                 * the next call the request is whole and the connection stays open. */
                const union MHD_ConnectionInfo *ci =
                        libmhd.MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
                c = ci ? ci->socket_context : NULL;
                if (!c)
                        return MHD_NO; /* its record could not be allocated: closed */
                *con_cls = c;
                return MHD_YES;
        }
        if (*upload_data_size) { /* a body nobody asked for: read and dropped */
                *upload_data_size = 0;
                return MHD_YES;
        }
        /* The request is in: no deadline while it is answered. */
        pthread_mutex_lock(&s->conn_lock);
        wait_unlink(s, c);
        pthread_mutex_unlock(&s->conn_lock);
        if (s->n_users) {
                /* Once a check is queued, only its worker writes c->auth, then resumes us:
                 * until then it is not ours to read. */
                enum auth_state st = c->auth == AUTH_UNCHECKED ? auth_start(s, c, conn) : c->auth;
                if (st == AUTH_PENDING)
                        return MHD_YES; /* suspended; called again once checked */
                if (st == AUTH_BUSY)
                        return text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "too many password checks waiting\n");
                if (st != AUTH_GRANTED)
                        return auth_denied(conn);
        }
        if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
                return text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
        if (strcmp(url, "/metrics") == 0)
                return metrics(s, conn);
        if (strcmp(url, "/health") == 0)
                return health(s, conn);
        if (strcmp(url, "/") == 0)
                return respond(conn, MHD_HTTP_OK, "text/html; charset=utf-8", (char *)index_page,
                               sizeof(index_page) - 1, false);
        return text(conn, MHD_HTTP_NOT_FOUND, "not found: /metrics or /health\n");
}

static void server_free(struct http_server *s) {
        free(s->cert_pem);
        free(s->key_pem);
        free(s->dummy_hash);
        for (size_t i = 0; i < s->n_users; i++) {
                free(s->users[i].name);
                free(s->users[i].hash);
                free(s->users[i].verified);
        }
        free(s->users);
        pthread_mutex_destroy(&s->auth_lock);
        pthread_cond_destroy(&s->auth_wake);
        pthread_mutex_destroy(&s->conn_lock);
        pthread_cond_destroy(&s->watchdog_wake);
        free(s);
}

static int copy_security(struct http_server *s, const struct http_security *sec) {
        if (!sec)
                return 0;
        if (sec->cert_pem && (!(s->cert_pem = strdup(sec->cert_pem)) || !(s->key_pem = strdup(sec->key_pem))))
                return -1;
        s->tls_min_version = sec->tls_min_version;
        if (sec->n_users) {
                s->users = calloc(sec->n_users, sizeof(*s->users));
                if (!s->users)
                        return -1;
                for (; s->n_users < sec->n_users; s->n_users++) {
                        struct auth_user *u = &s->users[s->n_users];
                        u->name = strdup(sec->users[s->n_users].name);
                        u->hash = strdup(sec->users[s->n_users].hash);
                        if (!u->name || !u->hash) {
                                s->n_users++; /* freed with the others */
                                return -1;
                        }
                }
                if (!(s->dummy_hash = make_dummy_hash(s->users, s->n_users)))
                        return -1;
        }
        return 0;
}

/* Stop the password checks: those waiting are answered 503 at once, those running finish.
 * Every suspended connection is resumed before this returns. */
static void stop_auth_workers(struct http_server *s) {
        pthread_mutex_lock(&s->auth_lock);
        s->auth_stopping = true;
        pthread_cond_broadcast(&s->auth_wake);
        pthread_mutex_unlock(&s->auth_lock);
        for (size_t i = 0; i < s->n_auth_threads; i++)
                pthread_join(s->auth_threads[i], NULL);
        s->n_auth_threads = 0;
}

static void stop_watchdog(struct http_server *s) {
        if (!s->watchdog_started)
                return;
        pthread_mutex_lock(&s->conn_lock);
        s->watchdog_stopping = true;
        pthread_cond_signal(&s->watchdog_wake);
        pthread_mutex_unlock(&s->conn_lock);
        pthread_join(s->watchdog, NULL);
        s->watchdog_started = false;
}

/* GnuTLS priorities: TLS 1.2 or 1.3 only (1.3 only with min_version TLS13), and no static
 * RSA key exchange, so every session has forward secrecy (ECDHE or DHE), as
 * exporter-toolkit's defaults. */
static const char *tls_priorities(unsigned int min_version) {
        return min_version >= 13 ? "NORMAL:-VERS-ALL:+VERS-TLS1.3"
                                 : "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-RSA";
}

int http_server_load(const struct http_security *sec, char *err, size_t errsize) {
        return http_libs_load(sec && sec->n_users, err, errsize) < 0 ? -1 : 0;
}

int http_server_start(int listen_fd, const struct http_limits *lim, const struct http_security *sec,
                      struct body_cache *cache, struct http_server **ret, char *err, size_t errsize) {
        if (http_server_load(sec, err, errsize) < 0) {
                close(listen_fd);
                return -1;
        }
        struct http_server *s = calloc(1, sizeof(*s));
        if (!s) {
                close(listen_fd);
                snprintf(err, errsize, "out of memory");
                return -1;
        }
        pthread_mutex_init(&s->auth_lock, NULL);
        pthread_cond_init(&s->auth_wake, NULL);
        pthread_mutex_init(&s->conn_lock, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&s->watchdog_wake, &ca);
        pthread_condattr_destroy(&ca);
        s->cache = cache;
        s->listen_fd = listen_fd;
        s->max_connections = lim->connections;
        s->per_address = lim->per_address;
        s->request_ms = lim->timeout_s * 1000ULL;
        if (copy_security(s, sec) < 0) {
                close(listen_fd);
                server_free(s);
                snprintf(err, errsize, "out of memory");
                return -1;
        }
        if (s->cert_pem && libmhd.MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
                close(listen_fd);
                server_free(s);
                snprintf(err, errsize, "this libmicrohttpd was built without TLS");
                return -1;
        }
        int e = 0;
        for (; s->n_users && s->n_auth_threads < AUTH_WORKERS && e == 0; s->n_auth_threads++)
                e = pthread_create(&s->auth_threads[s->n_auth_threads], NULL, auth_main, s);
        if (e == 0 && s->request_ms) {
                e = pthread_create(&s->watchdog, NULL, watchdog_main, s);
                s->watchdog_started = e == 0;
        }
        if (e) {
                if (s->n_auth_threads)
                        s->n_auth_threads--; /* the one that failed */
                stop_auth_workers(s);
                close(listen_fd);
                server_free(s);
                snprintf(err, errsize, "a thread could not start: %s", strerror(e));
                return -1;
        }
        /* ITC: quiescing (stop accepting, keep serving) and resuming a connection after its
         * password check need the inter-thread channel. */
        unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME;
        if (s->cert_pem)
                flags |= MHD_USE_TLS;
        struct MHD_OptionItem tls[] = {
                {s->cert_pem ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, s->cert_pem},
                {MHD_OPTION_HTTPS_MEM_KEY, 0, s->key_pem},
                {MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)tls_priorities(s->tls_min_version)},
                {MHD_OPTION_END, 0, NULL},
        };
        s->daemon = libmhd.MHD_start_daemon(flags, 0, on_accept, s, on_request, s,
                                            MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_fd,
                                            MHD_OPTION_CONNECTION_LIMIT, (unsigned int)lim->connections,
                                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)lim->per_address,
                                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)lim->timeout_s,
                                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)lim->connection_memory,
                                            MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)lim->threads,
                                            MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
                                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                                            MHD_OPTION_ARRAY, tls,
                                            MHD_OPTION_END);
        if (!s->daemon) {
                if (s->cert_pem) /* GnuTLS' reason does not reach us */
                        snprintf(err, errsize, "TLS could not start with this certificate and key "
                                               "(both PEM, the key the certificate's?)");
                else
                        snprintf(err, errsize, "libmicrohttpd could not start serving (%s)", strerror(errno));
                stop_auth_workers(s);
                stop_watchdog(s);
                close(listen_fd);
                server_free(s);
                return -1;
        }
        *ret = s;
        return 0;
}

/* Connections with a request in flight (those between requests wait for nothing). */
static unsigned int busy_connections(struct http_server *s) {
        pthread_mutex_lock(&s->conn_lock);
        unsigned int n = s->n_open - s->n_waiting;
        pthread_mutex_unlock(&s->conn_lock);
        return n;
}

void http_server_stop(struct http_server *s, unsigned int grace_ms) {
        if (!s)
                return;
        MHD_socket fd = libmhd.MHD_quiesce_daemon(s->daemon);
        /* No connection may stay suspended in a password check past this. */
        stop_auth_workers(s);
        struct timespec slice = {0, 10 * 1000000L};
        for (unsigned int waited = 0; waited < grace_ms && busy_connections(s) > 0; waited += 10)
                nanosleep(&slice, NULL);
        libmhd.MHD_stop_daemon(s->daemon);
        stop_watchdog(s);
        if (fd != MHD_INVALID_SOCKET)
                close(fd);
        server_free(s);
}

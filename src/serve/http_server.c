/* libmicrohttpd server (http_server.h). */
#include "serve/http_server.h"

#include <errno.h>
#include <crypt.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct auth_user {
        char *name;
        char *hash;
        char *verified; /* the last password that matched hash (bcrypt is slow: ~0.1 s a check) */
};

struct http_server {
        struct MHD_Daemon *daemon;
        struct body_cache *cache;
        int listen_fd;
        char *cert_pem, *key_pem;
        struct auth_user *users;
        size_t n_users;
        pthread_mutex_t auth_lock; /* users[].verified */
};

/* Equal strings, in a time that depends on their lengths only. */
static bool same_secret(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b);
        unsigned char d = la != lb;
        for (size_t i = 0; i < la && i < lb; i++)
                d |= (unsigned char)(a[i] ^ b[i]);
        return d == 0;
}

static bool password_ok(struct http_server *s, const char *user, const char *pass) {
        for (size_t i = 0; i < s->n_users; i++) {
                struct auth_user *u = &s->users[i];
                if (strcmp(u->name, user) != 0)
                        continue;
                pthread_mutex_lock(&s->auth_lock);
                bool cached = u->verified && same_secret(u->verified, pass);
                pthread_mutex_unlock(&s->auth_lock);
                if (cached)
                        return true;
                struct crypt_data *cd = calloc(1, sizeof(*cd));
                if (!cd)
                        return false;
                /* crypt_rn, libxcrypt's: NULL on failure rather than a "*0" string, and not
                 * the crypt_r that GCC 12's AddressSanitizer intercepts and then calls through
                 * a null pointer. */
                const char *h = crypt_rn(pass, u->hash, cd, (int)sizeof(*cd));
                bool ok = h && same_secret(h, u->hash);
                free(cd);
                if (ok) {
                        char *copy = strdup(pass);
                        pthread_mutex_lock(&s->auth_lock);
                        if (copy) {
                                free(u->verified);
                                u->verified = copy;
                        }
                        pthread_mutex_unlock(&s->auth_lock);
                }
                return ok;
        }
        return false;
}

/* Whether the request may go on; when not, a 401 asking for credentials was queued. */
static bool authorized(struct http_server *s, struct MHD_Connection *conn, enum MHD_Result *ret) {
        if (s->n_users == 0)
                return true;
        char *pass = NULL;
        char *user = MHD_basic_auth_get_username_password(conn, &pass);
        bool ok = user && pass && password_ok(s, user, pass);
        if (user)
                MHD_free(user);
        if (pass)
                MHD_free(pass);
        if (ok)
                return true;
        static const char msg[] = "unauthorized\n";
        struct MHD_Response *r = MHD_create_response_from_buffer(sizeof(msg) - 1, (void *)msg, MHD_RESPMEM_PERSISTENT);
        *ret = r ? MHD_queue_basic_auth_fail_response(conn, "gpuvet", r) : MHD_NO;
        if (r)
                MHD_destroy_response(r);
        return false;
}

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned int code, const char *type, char *body,
                               size_t len, bool owned) {
        struct MHD_Response *r =
                MHD_create_response_from_buffer(len, body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
        if (!r) {
                if (owned)
                        free(body);
                return MHD_NO;
        }
        (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
        if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
                (void)MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
        enum MHD_Result ret = MHD_queue_response(conn, code, r);
        MHD_destroy_response(r);
        return ret;
}

static enum MHD_Result text(struct MHD_Connection *conn, unsigned int code, const char *msg) {
        return respond(conn, code, "text/plain; charset=utf-8", (char *)msg, strlen(msg), false);
}

static void release_body(void *cls) { body_cache_release(cls); }

static enum MHD_Result metrics(struct http_server *s, struct MHD_Connection *conn) {
        const char *accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
        enum expo_format fmt = accept_format(accept, accept ? strlen(accept) : 0);
        struct scrape_body *b;
        int r = body_cache_scrape(s->cache, fmt, &b);
        if (r == -EAGAIN)
                return text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "no round of the GPUs has been read yet\n");
        if (r < 0)
                return text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
        /* The round's body is sent from the cache, shared by every scrape of the round. */
        const struct MHD_IoVec iov[2] = {{b->part[0], b->len[0]}, {b->part[1], b->len[1]}};
        struct MHD_Response *resp = MHD_create_response_from_iovec(iov, 2, release_body, b);
        if (!resp) {
                body_cache_release(b);
                return MHD_NO;
        }
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, expo_content_type(fmt));
        enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, resp);
        MHD_destroy_response(resp);
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
        if (*upload_data_size) { /* a body nobody asked for: read and dropped */
                *upload_data_size = 0;
                return MHD_YES;
        }
        (void)con_cls;
        enum MHD_Result denied;
        if (!authorized(s, conn, &denied))
                return denied;
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
        for (size_t i = 0; i < s->n_users; i++) {
                free(s->users[i].name);
                free(s->users[i].hash);
                free(s->users[i].verified);
        }
        free(s->users);
        pthread_mutex_destroy(&s->auth_lock);
        free(s);
}

static int copy_security(struct http_server *s, const struct http_security *sec) {
        if (!sec)
                return 0;
        if (sec->cert_pem && (!(s->cert_pem = strdup(sec->cert_pem)) || !(s->key_pem = strdup(sec->key_pem))))
                return -1;
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
        }
        return 0;
}

int http_server_start(int listen_fd, const struct http_limits *lim, const struct http_security *sec,
                      struct body_cache *cache, struct http_server **ret, char *err, size_t errsize) {
        struct http_server *s = calloc(1, sizeof(*s));
        if (!s) {
                close(listen_fd);
                snprintf(err, errsize, "out of memory");
                return -1;
        }
        pthread_mutex_init(&s->auth_lock, NULL);
        s->cache = cache;
        s->listen_fd = listen_fd;
        if (copy_security(s, sec) < 0) {
                close(listen_fd);
                server_free(s);
                snprintf(err, errsize, "out of memory");
                return -1;
        }
        if (s->cert_pem && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
                close(listen_fd);
                server_free(s);
                snprintf(err, errsize, "this libmicrohttpd was built without TLS");
                return -1;
        }
        /* ITC: quiescing (stop accepting, keep serving) needs the inter-thread channel. */
        unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC;
        if (s->cert_pem)
                flags |= MHD_USE_TLS;
        struct MHD_OptionItem tls[] = {
                {s->cert_pem ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, s->cert_pem},
                {MHD_OPTION_HTTPS_MEM_KEY, 0, s->key_pem},
                {MHD_OPTION_END, 0, NULL},
        };
        s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
                                     MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_fd,
                                     MHD_OPTION_CONNECTION_LIMIT, (unsigned int)lim->connections,
                                     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)lim->timeout_s,
                                     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)lim->connection_memory,
                                     MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)lim->threads,
                                     MHD_OPTION_ARRAY, tls,
                                     MHD_OPTION_END);
        if (!s->daemon) {
                if (s->cert_pem) /* GnuTLS' reason does not reach us */
                        snprintf(err, errsize, "TLS could not start with this certificate and key "
                                               "(both PEM, the key the certificate's?)");
                else
                        snprintf(err, errsize, "libmicrohttpd could not start serving (%s)", strerror(errno));
                close(listen_fd);
                server_free(s);
                return -1;
        }
        *ret = s;
        return 0;
}

static unsigned int connections(struct http_server *s) {
        const union MHD_DaemonInfo *i = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
        return i ? i->num_connections : 0;
}

void http_server_stop(struct http_server *s, unsigned int grace_ms) {
        if (!s)
                return;
        MHD_socket fd = MHD_quiesce_daemon(s->daemon);
        struct timespec slice = {0, 10 * 1000000L};
        for (unsigned int waited = 0; waited < grace_ms && connections(s) > 0; waited += 10)
                nanosleep(&slice, NULL);
        MHD_stop_daemon(s->daemon);
        if (fd != MHD_INVALID_SOCKET)
                close(fd);
        server_free(s);
}

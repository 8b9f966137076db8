/* The HTTP side of `gpuvet serve` (docs/serve.md): libmicrohttpd on a listening socket,
 * /metrics from the body cache, /health, and nothing else. Connections are bounded in
 * number (overall and per client address), time and memory (http_limits), so no client
 * can make a scrape wait or the process grow without bound. Connections are kept alive
 * between requests; password checks run on threads of their own. */
#pragma once

#include <stddef.h>

#include "serve/body_cache.h"
#include "serve/web_config.h"

struct http_limits {
        unsigned int connections;  /* open at once; more wait in the listen backlog */
        unsigned int per_address;  /* open at once from one client address; 0: no limit, and
                                      no share kept for addresses holding none */
        unsigned int timeout_s;    /* idle time before a connection is closed, and the time a
                                      request (TLS handshake, headers, body) has to come in */
        size_t connection_memory;  /* per connection: request line, headers, buffers */
        unsigned int threads;      /* serving threads */
};

struct http_server;

/* TLS and basic auth (web_config.h): the certificate and key as PEM text (NULL: plain
 * HTTP), the users (n_users 0: no authentication). */
struct http_security {
        const char *cert_pem;
        const char *key_pem;
        unsigned int tls_min_version; /* 12 (default) or 13 */
        const struct web_user *users;
        size_t n_users;
};

/* Load the libraries that serving with sec (NULL: none) needs: libmicrohttpd, and libxcrypt
 * for basic auth (serve/http_libs.h). serve calls it before it starts any thread, so that a
 * missing library ends it at once; http_server_start calls it too. Returns 0, or -1 with a
 * message in err naming the library and its package. */
int http_server_load(const struct http_security *sec, char *err, size_t errsize);

/* Serve on listen_fd (listen_addr.h; owned from now on); sec may be NULL. sec's strings
 * are copied. Returns 0, or -1 with a message in err. */
int http_server_start(int listen_fd, const struct http_limits *lim, const struct http_security *sec,
                      struct body_cache *cache, struct http_server **ret, char *err, size_t errsize);

/* Stop accepting, let requests in flight finish for up to grace_ms, then close every
 * connection and free. */
void http_server_stop(struct http_server *s, unsigned int grace_ms);

/* Listening sockets from --listen (listen_addr.h). The socket is made here rather than by
 * libmicrohttpd so that a busy port or a bad address is reported with its reason. */
#include "serve/listen_addr.h"

#include <errno.h>
#include <stdbool.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Split "host:port" / "[v6]:port" / ":port" into host (empty: any) and port. */
static int split(const char *spec, char *host, size_t hsize, char *port, size_t psize) {
        const char *colon;
        if (spec[0] == '[') {
                const char *close = strchr(spec, ']');
                if (!close || close[1] != ':')
                        return -1;
                if ((size_t)(close - spec - 1) >= hsize)
                        return -1;
                memcpy(host, spec + 1, (size_t)(close - spec - 1));
                host[close - spec - 1] = '\0';
                colon = close + 1;
        } else {
                colon = strrchr(spec, ':');
                if (!colon || (size_t)(colon - spec) >= hsize || memchr(spec, ':', (size_t)(colon - spec)))
                        return -1;
                memcpy(host, spec, (size_t)(colon - spec));
                host[colon - spec] = '\0';
        }
        const char *p = colon + 1;
        if (!*p || strlen(p) >= psize || strspn(p, "0123456789") != strlen(p) || atol(p) > 65535)
                return -1;
        snprintf(port, psize, "%s", p);
        return 0;
}

static int open_one(const struct addrinfo *ai, int backlog, bool any6) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
                return -1;
        int one = 1, zero = 0;
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (any6) /* ":PORT": IPv4 clients too, through the IPv6 socket */
                (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, backlog) < 0) {
                int e = errno;
                close(fd);
                errno = e;
                return -1;
        }
        return fd;
}

int listen_addr_open(const char *spec, int backlog, char *err, size_t errsize) {
        char host[256], port[8];
        if (split(spec, host, sizeof(host), port, sizeof(port)) < 0) {
                snprintf(err, errsize, "--listen %s: not ADDR:PORT (\":9400\", \"127.0.0.1:9400\", \"[::1]:9400\")",
                         spec);
                return -1;
        }
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
        struct addrinfo *res = NULL;
        bool any = host[0] == '\0';
        if (any)
                hints.ai_family = AF_INET6;
        int g = getaddrinfo(any ? NULL : host, port, &hints, &res);
        if (g != 0 && any) { /* no IPv6 here: every IPv4 address */
                hints.ai_family = AF_INET;
                g = getaddrinfo(NULL, port, &hints, &res);
        }
        if (g != 0) {
                snprintf(err, errsize, "--listen %s: %s", spec, gai_strerror(g));
                return -1;
        }
        int fd = -1, e = 0;
        for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
                fd = open_one(ai, backlog, any && ai->ai_family == AF_INET6);
                if (fd < 0)
                        e = errno;
        }
        if (fd < 0 && any && res && res->ai_family == AF_INET6) {
                /* IPv6 disabled in the kernel: every IPv4 address instead. */
                freeaddrinfo(res);
                res = NULL;
                hints.ai_family = AF_INET;
                if (getaddrinfo(NULL, port, &hints, &res) == 0)
                        for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next)
                                fd = open_one(ai, backlog, false);
        }
        if (res)
                freeaddrinfo(res);
        if (fd < 0)
                snprintf(err, errsize, "--listen %s: %s", spec, strerror(e ? e : errno));
        return fd;
}

unsigned int listen_addr_port(int fd) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);
        if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
                return 0;
        if (ss.ss_family == AF_INET)
                return ntohs(((struct sockaddr_in *)&ss)->sin_port);
        if (ss.ss_family == AF_INET6)
                return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
        return 0;
}

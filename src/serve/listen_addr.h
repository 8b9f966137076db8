/* --listen ADDR:PORT of `gpuvet serve`: ":9400" (every address, IPv6 and IPv4),
 * "127.0.0.1:9400", "[::1]:9400", "localhost:9400". */
#pragma once

#include <stddef.h>
#include <sys/socket.h>

/* A listening TCP socket (close-on-exec, SO_REUSEADDR, backlog backlog) for spec. Returns
 * the descriptor, or -1 with a message naming spec in err. */
int listen_addr_open(const char *spec, int backlog, char *err, size_t errsize);

/* The port fd is bound to, 0 when unknown. */
unsigned int listen_addr_port(int fd);

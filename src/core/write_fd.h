/* Writing a whole buffer to a file descriptor: write(2) may take less than it is given
 * (a signal, a pipe, a large buffer), so every writer of gpuvet's own files loops. */
#pragma once

#include <stddef.h>

/* Write len bytes of data to fd, retrying short writes and EINTR. Returns 0 or a negative
 * errno; fd stays open. */
int write_fd_all(int fd, const void *data, size_t len);

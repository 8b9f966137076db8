/* Reading a file descriptor to its end into memory, with a cap: sysfs and procfs files,
 * and the files a snapshot captures. */
#pragma once

#include <stddef.h>

/* Read fd from where it stands into a new NUL-terminated buffer (*ret, free it), reading at
 * most limit bytes. Returns 0 when the end was reached, 1 when limit bytes were read (the
 * file may go on), or a negative errno (EINTR is retried). fd stays open. */
int read_fd_alloc(int fd, size_t limit, char **ret, size_t *ret_len);

#include "core/write_fd.h"

#include <errno.h>
#include <unistd.h>

int write_fd_all(int fd, const void *data, size_t len) {
        const char *p = data;
        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

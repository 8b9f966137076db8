#include "core/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A target that exists and is not a regular file (/dev/stdout, a FIFO) gets a plain write:
 * renaming over it would replace a device node with a file. */
static int write_in_place(const char *path, const void *data, size_t len) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        const char *p = data;
        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        int r = -errno;
                        close(fd);
                        return r;
                }
                p += n;
                len -= (size_t)n;
        }
        return close(fd) < 0 ? -errno : 0;
}

int atomic_write(const char *path, const void *data, size_t len) {
        struct stat st;
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
                if (S_ISDIR(st.st_mode))
                        return -EISDIR;
                return write_in_place(path, data, len);
        }
        char tmp[4096];
        if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
                return -ENAMETOOLONG;
        int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        int r = 0;
        const char *p = data;
        size_t left = len;
        while (left > 0) {
                ssize_t n = write(fd, p, left);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        break;
                }
                p += n;
                left -= (size_t)n;
        }
        /* mkostemp creates 0600; a report is for sharing, so honour the umask like open(2). */
        mode_t mask = umask(0);
        umask(mask);
        if (r == 0 && fchmod(fd, 0666 & ~mask) < 0)
                r = -errno;
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                (void)unlink(tmp);
        return r;
}

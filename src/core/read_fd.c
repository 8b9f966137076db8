#include "core/read_fd.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

int read_fd_alloc(int fd, size_t limit, char **ret, size_t *ret_len) {
        size_t cap = 4096, len = 0;
        char *buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        int full = 0;
        for (;;) {
                if (len == limit) {
                        full = 1;
                        break;
                }
                if (len + 1 >= cap) {
                        char *grown = realloc(buf, cap * 2);
                        if (!grown) {
                                free(buf);
                                return -ENOMEM;
                        }
                        buf = grown;
                        cap *= 2;
                }
                size_t want = cap - len - 1;
                if (want > limit - len)
                        want = limit - len;
                ssize_t n = read(fd, buf + len, want);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int r = -errno;
                        free(buf);
                        return r;
                }
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        buf[len] = '\0';
        *ret = buf;
        *ret_len = len;
        return full;
}

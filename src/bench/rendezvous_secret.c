/* The job's rendezvous secret from the launcher's environment or a file only the job's user
 * can read (rendezvous.h, rdv_secret_from_env). Apart from rendezvous_env.c, whose readers
 * are pure functions of the environment: this one opens a file. */
#include "bench/rendezvous.h"
#include "core/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file's bytes into buf (cap), at most cap, after the checks ssh makes of a private key:
 * a regular file of this user, unreadable to its group and to others. The length, or -errno
 * with why. */
static ssize_t read_secret_file(const char *path, uint8_t *buf, size_t cap, char *why, size_t why_size) {
        int fd;
        while ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) < 0 && errno == EINTR)
                ;
        if (fd < 0) {
                int e = errno;
                strbuf_printf(why, why_size, "%s", e == ELOOP ? "a symbolic link (name the file itself)" : strerror(e));
                return -e;
        }
        struct stat st;
        ssize_t r = 0;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                strbuf_printf(why, why_size, "%s", strerror(errno));
        } else if (!S_ISREG(st.st_mode)) {
                r = -EINVAL;
                strbuf_printf(why, why_size, "not a regular file");
        } else if (st.st_uid != geteuid()) {
                r = -EPERM;
                strbuf_printf(why, why_size, "owned by uid %u, not by this user (uid %u)", (unsigned)st.st_uid,
                              (unsigned)geteuid());
        } else if (st.st_mode & 077) {
                r = -EPERM;
                strbuf_printf(why, why_size, "mode %04o lets others read it: chmod 600 it", (unsigned)(st.st_mode & 07777));
        } else {
                size_t len = 0;
                for (;;) {
                        ssize_t n = read(fd, buf + len, cap - len);
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n < 0) {
                                r = -errno;
                                strbuf_printf(why, why_size, "%s", strerror(errno));
                                break;
                        }
                        len += (size_t)n;
                        if (n == 0 || len == cap) {
                                r = (ssize_t)len;
                                break;
                        }
                }
        }
        (void)close(fd); /* only read: nothing to lose, ignoring */
        return r;
}

int rdv_secret_from_env(const char *const *envp, struct rdv_ranks *ranks, char *err, size_t err_size) {
        static const char value_name[] = "GPUVET_RENDEZVOUS_SECRET", file_name[] = "GPUVET_RENDEZVOUS_SECRET_FILE";
        const char *value = rdv_env_get(envp, value_name), *path = rdv_env_get(envp, file_name);
        uint8_t buf[RDV_SECRET_MAX + 1];
        size_t len;
        const char *from;
        char where[4200];
        if (value && *value) {
                len = strlen(value);
                if (len > RDV_SECRET_MAX) {
                        strbuf_printf(err, err_size, "%s: %zu bytes, over %d", value_name, len, RDV_SECRET_MAX);
                        return -EINVAL;
                }
                memcpy(buf, value, len);
                from = value_name;
        } else if (path && *path) {
                char why[200];
                ssize_t n = read_secret_file(path, buf, sizeof(buf), why, sizeof(why));
                if (n < 0) {
                        strbuf_printf(err, err_size, "%s=%s: %s", file_name, path, why);
                        return -EINVAL;
                }
                len = (size_t)n;
                if (len > RDV_SECRET_MAX) {
                        strbuf_printf(err, err_size, "%s=%s: over %d bytes", file_name, path, RDV_SECRET_MAX);
                        return -EINVAL;
                }
                /* the newline an editor or `echo` leaves is not part of the secret */
                while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
                        len--;
                snprintf(where, sizeof(where), "%s=%s", file_name, path);
                from = where;
        } else {
                ranks->secret_len = 0;
                return 0;
        }
        if (len < RDV_SECRET_MIN) {
                strbuf_printf(err, err_size, "%s: %zu bytes, fewer than %d: use a random one (openssl rand -hex 32)",
                              from, len, RDV_SECRET_MIN);
                return -EINVAL;
        }
        memcpy(ranks->secret, buf, len);
        ranks->secret_len = len;
        explicit_bzero(buf, sizeof(buf));
        return 0;
}

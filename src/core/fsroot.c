#include "core/fsroot.h"
#include "core/read_fd.h"
#include "core/strv.h"
#include "core/write_fd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_SYMLINK_HOPS 40

struct fsroot {
        int dir_fd;
        char *dir;
        bool live;
        char *kernel_dir; /* see kernel_dir() */
        bool have_openat2;
        bool recording;
        struct fsroot_path *recorded;
        size_t n_recorded, cap_recorded;
};

int fsroot_open(const char *dir, struct fsroot **ret) {
        struct fsroot *fs = calloc(1, sizeof(*fs));
        if (!fs)
                return -ENOMEM;
        fs->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fs->dir_fd < 0) {
                int r = -errno;
                free(fs);
                return r;
        }
        fs->dir = strdup(dir);
        if (!fs->dir) {
                fsroot_free(fs);
                return -ENOMEM;
        }
        struct stat st_root, st_dir;
        fs->live = stat("/", &st_root) == 0 && fstat(fs->dir_fd, &st_dir) == 0 &&
                   st_root.st_dev == st_dir.st_dev && st_root.st_ino == st_dir.st_ino;
        fs->have_openat2 = true;
        *ret = fs;
        return 0;
}

struct fsroot *fsroot_free(struct fsroot *fs) {
        if (!fs)
                return NULL;
        if (fs->dir_fd >= 0)
                close(fs->dir_fd);
        for (size_t i = 0; i < fs->n_recorded; i++)
                free(fs->recorded[i].path);
        free(fs->recorded);
        free(fs->kernel_dir);
        free(fs->dir);
        free(fs);
        return NULL;
}

const char *fsroot_dir(const struct fsroot *fs) { return fs->dir; }
bool fsroot_is_live(const struct fsroot *fs) { return fs->live; }

static const char *relative(const char *path) {
        while (*path == '/')
                path++;
        return *path ? path : ".";
}

static void record(struct fsroot *fs, const char *rel, bool content) {
        if (fs->n_recorded == fs->cap_recorded) {
                size_t cap = fs->cap_recorded ? fs->cap_recorded * 2 : 256;
                struct fsroot_path *grown = realloc(fs->recorded, cap * sizeof(*grown));
                if (!grown)
                        return; /* recording is best effort: the snapshot is then incomplete */
                fs->recorded = grown;
                fs->cap_recorded = cap;
        }
        char *copy = strdup(rel);
        if (copy)
                fs->recorded[fs->n_recorded++] = (struct fsroot_path){.path = copy, .content = content};
}

static void record_one(struct fsroot *fs, const char *rel) { record(fs, rel, true); }

/* Resolve path inside the root, one component at a time, the way the kernel would with
 * RESOLVE_IN_ROOT: ".." never climbs above the root, absolute link targets restart at it.
 * When recording, every symlink met on the way is remembered, so a snapshot keeps the
 * links (sysfs is made of them) as well as the files they lead to. */
static int resolve(struct fsroot *fs, const char *path, bool follow_last, char *out, size_t size) {
        char resolved[4096];
        size_t rlen = 0;
        char todo[4096];
        int hops = 0;

        const char *rel = relative(path);
        size_t len = strlen(rel);
        if (len >= sizeof(todo))
                return -ENAMETOOLONG;
        memcpy(todo, rel, len + 1);
        resolved[0] = '\0';

        char *rest = todo;
        while (rest && *rest) {
                char *slash = strchr(rest, '/');
                if (slash)
                        *slash = '\0';
                const char *comp = rest;
                rest = slash ? slash + 1 : NULL;
                while (rest && *rest == '/')
                        rest++;

                if (comp[0] == '\0' || strcmp(comp, ".") == 0)
                        continue;
                if (strcmp(comp, "..") == 0) {
                        while (rlen > 0 && resolved[rlen - 1] != '/')
                                rlen--;
                        rlen = rlen > 0 ? rlen - 1 : 0;
                        resolved[rlen] = '\0';
                        continue;
                }

                /* Append the component; drop it again if it turns out to be a link. */
                size_t clen = strlen(comp), before = rlen;
                if (rlen + clen + 2 > sizeof(resolved))
                        return -ENAMETOOLONG;
                if (rlen > 0)
                        resolved[rlen++] = '/';
                memcpy(resolved + rlen, comp, clen + 1);
                rlen += clen;

                bool is_last = !rest || !*rest;
                char target[4096];
                ssize_t n = -1;
                if (!is_last || follow_last)
                        n = readlinkat(fs->dir_fd, resolved, target, sizeof(target) - 1);
                if (n < 0)
                        continue;
                target[n] = '\0';
                if (++hops > MAX_SYMLINK_HOPS)
                        return -ELOOP;
                if (fs->recording)
                        record_one(fs, resolved);
                rlen = target[0] == '/' ? 0 : before;
                resolved[rlen] = '\0';

                /* Continue with the link's target followed by what was left of the path. */
                size_t tlen = (size_t)n, restlen = rest ? strlen(rest) : 0;
                if (tlen + 1 + restlen + 1 > sizeof(todo))
                        return -ENAMETOOLONG;
                memmove(todo + tlen + 1, rest ? rest : "", restlen + 1);
                memcpy(todo, target, tlen);
                todo[tlen] = restlen ? '/' : '\0';
                rest = todo;
        }
        if (rlen == 0)
                resolved[rlen++] = '.', resolved[rlen] = '\0';
        if (rlen >= size)
                return -ENAMETOOLONG;
        memcpy(out, resolved, rlen + 1);
        return 0;
}

#define OPENAT2_EAGAIN_RETRIES 8

/* openat2(RESOLVE_IN_ROOT) of rel; -ENOSYS when this kernel (older than 5.6) or a seccomp
 * filter refuses openat2, or when a rename raced every try: the caller then walks. */
static int openat2_in_root(struct fsroot *fs, const char *rel, int flags) {
        if (!fs->have_openat2)
                return -ENOSYS;
        struct open_how how = {
                .flags = (unsigned long long)(flags | O_CLOEXEC),
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        /* With RESOLVE_IN_ROOT the kernel answers EAGAIN when a rename anywhere on the
         * system raced a ".." step (sysfs links are full of them): a few retries, then this
         * one path goes through the resolver above. */
        for (int attempt = 0; attempt < OPENAT2_EAGAIN_RETRIES; attempt++) {
                long fd = syscall(SYS_openat2, fs->dir_fd, rel, &how, sizeof(how));
                if (fd >= 0)
                        return (int)fd;
                if (errno == EAGAIN)
                        continue;
                if (errno != ENOSYS && errno != EPERM)
                        return -errno;
                fs->have_openat2 = false;
                return -ENOSYS;
        }
        return -ENOSYS;
}

static int open_in_root(struct fsroot *fs, const char *path, int flags) {
        const char *rel = relative(path);
        if (fs->recording) {
                char real[4096];
                if (resolve(fs, path, true, real, sizeof(real)) == 0)
                        record_one(fs, real);
        }
        if (fs->live) {
                int fd = openat(fs->dir_fd, rel, flags | O_CLOEXEC);
                return fd < 0 ? -errno : fd;
        }
        int fd = openat2_in_root(fs, rel, flags);
        if (fd != -ENOSYS)
                return fd;
        char real[4096];
        int r = resolve(fs, path, true, real, sizeof(real));
        if (r < 0)
                return r;
        fd = openat(fs->dir_fd, real, flags | O_CLOEXEC | O_NOFOLLOW);
        return fd < 0 ? -errno : fd;
}

/* An O_PATH descriptor of path, the kernel resolving it inside the root: one system call
 * where the walk above makes one per component. -ENOSYS when the walk must do it: while
 * recording (a snapshot keeps every link met on the way) or without openat2. */
static int open_o_path(struct fsroot *fs, const char *path, bool follow_last) {
        if (fs->recording)
                return -ENOSYS;
        int flags = O_PATH | (follow_last ? 0 : O_NOFOLLOW);
        if (fs->live) {
                int fd = openat(fs->dir_fd, relative(path), flags | O_CLOEXEC);
                return fd < 0 ? -errno : fd;
        }
        return openat2_in_root(fs, relative(path), flags);
}

/* "always [madvise] never" with value "always" -> "[always] madvise never\n"; 0, or
 * -EINVAL when text is not a choice list offering value. */
static int rebracket(const char *text, const char *value, char *out, size_t size) {
        if (!strchr(text, '['))
                return -EINVAL;
        size_t len = 0, vlen = strlen(value);
        bool found = false;
        const char *p = text;
        while (*p) {
                while (*p == ' ' || *p == '\n')
                        p++;
                if (!*p)
                        break;
                const char *start = p;
                while (*p && *p != ' ' && *p != '\n')
                        p++;
                size_t wlen = (size_t)(p - start);
                if (*start == '[' && wlen >= 2 && start[wlen - 1] == ']')
                        start++, wlen -= 2;
                bool chosen = wlen == vlen && strncmp(start, value, vlen) == 0;
                found |= chosen;
                int n = snprintf(out + len, size - len, "%s%s%.*s%s", len ? " " : "", chosen ? "[" : "", (int)wlen,
                                 start, chosen ? "]" : "");
                if (n < 0 || (size_t)n >= size - len)
                        return -ENAMETOOLONG;
                len += (size_t)n;
        }
        if (!found || len + 2 > size)
                return -EINVAL;
        out[len++] = '\n';
        out[len] = '\0';
        return 0;
}

static int refuse_irregular(int fd);

int fsroot_write_attr(struct fsroot *fs, const char *path, const char *value) {
        if (fs->live) {
                int fd = open_in_root(fs, path, O_WRONLY);
                if (fd < 0)
                        return fd;
                int r = write_fd_all(fd, value, strlen(value));
                if (close(fd) < 0 && r == 0)
                        r = -errno;
                return r;
        }
        char current[4096], next[4096];
        int r = fsroot_read_str(fs, path, current, sizeof(current));
        if (r < 0)
                return r;
        if (rebracket(current, value, next, sizeof(next)) < 0) {
                if (strchr(current, '['))
                        return -EINVAL; /* the kernel refuses a choice it does not offer */
                if (snprintf(next, sizeof(next), "%s\n", value) >= (int)sizeof(next))
                        return -ENAMETOOLONG;
        }
        /* Read as a regular file just now; still, what is opened for writing must be one (a
         * FIFO swapped in would block, O_NONBLOCK makes it ENXIO). */
        int fd = open_in_root(fs, path, O_WRONLY | O_TRUNC | O_NONBLOCK);
        if (fd < 0)
                return fd;
        if ((r = refuse_irregular(fd)) < 0) {
                close(fd);
                return r;
        }
        r = write_fd_all(fd, next, strlen(next));
        if (close(fd) < 0 && r == 0)
                r = -errno;
        return r;
}

/* What the first read asks for: a sysfs attribute is at most a page, and most procfs files
 * of interest are smaller, so one read usually brings the whole file. */
#define FIRST_READ 4096

/* A short read is the end of the file in a captured tree (regular files on a disk) and for
 * a sysfs attribute, which the kernel renders whole on the first read; a procfs seq_file
 * may stop short mid-file, so there only a read that returns nothing ends it. */
static bool short_read_is_end(const struct fsroot *fs, const char *path) {
        return !fs->live || strncmp(relative(path), "sys/", 4) == 0;
}

/* fd is not a regular file: a FIFO or a device node in a captured tree, which a reader
 * must refuse (one may block, another never end). Asked only when the first read came back
 * empty or full, where such a file would show: the common small attribute needs no fstat.
 * The first read itself is non-blocking (O_NONBLOCK); a device that ignored that would
 * hold it until the gather's watchdog (cmd/common.c) ends the run with a message. */
static int refuse_irregular(int fd) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        return S_ISREG(st.st_mode) ? 0 : -EINVAL;
}

static int read_whole(int fd, bool short_is_end, size_t max, char **ret, size_t *ret_len) {
        char *buf = malloc(FIRST_READ + 1);
        if (!buf)
                return -ENOMEM;
        ssize_t n;
        do
                n = read(fd, buf, FIRST_READ);
        while (n < 0 && errno == EINTR);
        if (n < 0) {
                /* EAGAIN: a FIFO or a terminal opened non-blocking, not an attribute. */
                int r = errno == EAGAIN ? -EINVAL : -errno;
                free(buf);
                return r;
        }
        size_t len = (size_t)n;
        int r = len == 0 || len == FIRST_READ ? refuse_irregular(fd) : 0;
        if (r == 0 && len >= max - 1)
                r = -EFBIG;
        if (r == 0 && (len == FIRST_READ || (len > 0 && !short_is_end))) {
                /* A file of FSROOT_MAX_FILE - 1 bytes or more is refused: what a snapshot
                 * keeps of a larger one (FSROOT_MAX_FILE bytes) is refused the same way on
                 * replay. */
                char *rest;
                size_t rest_len;
                int got = read_fd_alloc(fd, max - 1 - len, &rest, &rest_len);
                if (got < 0) {
                        r = got;
                } else if (got == 1) {
                        r = -EFBIG;
                        free(rest);
                } else {
                        char *grown = rest_len ? realloc(buf, len + rest_len + 1) : buf;
                        if (grown) {
                                buf = grown;
                                memcpy(buf + len, rest, rest_len);
                                len += rest_len;
                        } else {
                                r = -ENOMEM;
                        }
                        free(rest);
                }
        }
        if (r < 0) {
                free(buf);
                return r;
        }
        buf[len] = '\0';
        *ret = buf;
        if (ret_len)
                *ret_len = len;
        return 0;
}

int fsroot_read_alloc(struct fsroot *fs, const char *path, char **ret, size_t *ret_len) {
        return fsroot_read_alloc_max(fs, path, FSROOT_MAX_FILE, ret, ret_len);
}

int fsroot_read_alloc_max(struct fsroot *fs, const char *path, size_t max, char **ret, size_t *ret_len) {
        if (max < 2 || max > FSROOT_MAX_FILE)
                return -EINVAL;
        int fd = open_in_root(fs, path, O_RDONLY | O_NONBLOCK);
        if (fd < 0)
                return fd;
        int r = read_whole(fd, short_read_is_end(fs, path), max, ret, ret_len);
        close(fd);
        return r;
}

int fsroot_read_kmsg(struct fsroot *fs, char **ret, size_t *ret_len) {
        if (!fs->live)
                return fsroot_read_alloc(fs, "/dev/kmsg", ret, ret_len);
        if (fs->recording)
                record_one(fs, "dev/kmsg");
        int fd = openat(fs->dir_fd, "dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        size_t cap = 64 << 10, len = 0;
        char *buf = malloc(cap);
        if (!buf) {
                close(fd);
                return -ENOMEM;
        }
        for (;;) {
                /* Each read returns one record; a record is at most about 8 KiB. */
                if (cap - len < 8192 + 1) {
                        if (cap >= FSROOT_MAX_FILE)
                                break; /* keep what fits: the oldest records */
                        char *grown = realloc(buf, cap * 2);
                        if (!grown)
                                break;
                        buf = grown;
                        cap *= 2;
                }
                ssize_t n = read(fd, buf + len, cap - len - 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EPIPE)
                        continue; /* records were overwritten while reading: skip ahead */
                if (n < 0 && errno != EAGAIN) {
                        int r = -errno;
                        free(buf);
                        close(fd);
                        return r;
                }
                if (n <= 0)
                        break; /* EAGAIN: no more records */
                len += (size_t)n;
        }
        close(fd);
        buf[len] = '\0';
        *ret = buf;
        if (ret_len)
                *ret_len = len;
        return 0;
}

int fsroot_read_str(struct fsroot *fs, const char *path, char *buf, size_t size) {
        char *data;
        size_t len;
        int r = fsroot_read_alloc(fs, path, &data, &len);
        if (r < 0)
                return r;
        while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == '\r'))
                data[--len] = '\0';
        if (strlen(data) != len) {
                free(data); /* embedded NUL: not a text attribute */
                return -EBADMSG;
        }
        if (len >= size) {
                free(data);
                return -EFBIG;
        }
        memcpy(buf, data, len + 1);
        free(data);
        return 0;
}

int fsroot_vread_strf(struct fsroot *fs, char *buf, size_t size, const char *fmt, va_list ap) {
        char path[4096];
        int n = vsnprintf(path, sizeof(path), fmt, ap);
        if (n < 0 || n >= (int)sizeof(path))
                return -ENAMETOOLONG;
        return fsroot_read_str(fs, path, buf, size);
}

int fsroot_read_strf(struct fsroot *fs, char *buf, size_t size, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = fsroot_vread_strf(fs, buf, size, fmt, ap);
        va_end(ap);
        return r;
}

int fsroot_readlink(struct fsroot *fs, const char *path, char *buf, size_t size) {
        ssize_t n;
        int fd = open_o_path(fs, path, false);
        if (fd >= 0) {
                /* An empty name reads the link the O_PATH descriptor stands on. */
                n = readlinkat(fd, "", buf, size);
                /* ... and answers ENOENT where the named call says EINVAL: not a link. */
                int err = n < 0 && errno == ENOENT ? EINVAL : errno;
                close(fd);
                errno = err;
        } else if (fd == -ENOSYS) {
                char real[4096];
                /* Resolve every component but the last, which is the link itself. */
                int r = resolve(fs, path, false, real, sizeof(real));
                if (r < 0)
                        return r;
                if (fs->recording)
                        record_one(fs, real);
                n = readlinkat(fs->dir_fd, real, buf, size);
        } else {
                return fd;
        }
        if (n < 0)
                return -errno;
        if ((size_t)n >= size)
                return -ENAMETOOLONG;
        buf[n] = '\0';
        return 0;
}

int fsroot_readlink_base(struct fsroot *fs, const char *path, char *buf, size_t size) {
        char target[4096];
        int r = fsroot_readlink(fs, path, target, sizeof(target));
        if (r < 0)
                return r;
        const char *base = strrchr(target, '/');
        base = base ? base + 1 : target;
        if (snprintf(buf, size, "%s", base) >= (int)size)
                return -ENAMETOOLONG;
        return 0;
}

/* Where the kernel says fd points (/proc/self/fd), into buf; false when it cannot say. */
static bool fd_path(int fd, char *buf, size_t size) {
        char link[64];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, buf, size - 1);
        if (n <= 0 || buf[0] != '/')
                return false;
        buf[n] = '\0';
        return true;
}

/* The root's own path as the kernel names it (symlinks resolved), which prefixes every path
 * /proc/self/fd shows for a descriptor inside it; "" for the live root. */
static const char *kernel_dir(struct fsroot *fs) {
        if (fs->kernel_dir)
                return fs->kernel_dir;
        char target[4096];
        if (!fd_path(fs->dir_fd, target, sizeof(target)))
                return NULL;
        if (strcmp(target, "/") == 0)
                target[0] = '\0';
        fs->kernel_dir = strdup(target);
        return fs->kernel_dir;
}

/* realpath through the kernel: resolve with one openat2, then ask /proc/self/fd where the
 * descriptor landed. -ENOSYS when that cannot answer (no /proc, a root outside this mount
 * namespace's view): the walk does it. */
static int realpath_by_kernel(struct fsroot *fs, const char *path, char *buf, size_t size) {
        const char *prefix = kernel_dir(fs);
        if (!prefix)
                return -ENOSYS;
        int fd = open_o_path(fs, path, true);
        if (fd < 0)
                return fd;
        char target[4096];
        bool named = fd_path(fd, target, sizeof(target));
        close(fd);
        if (!named)
                return -ENOSYS;
        size_t plen = strlen(prefix);
        if (strncmp(target, prefix, plen) != 0 || (target[plen] != '/' && target[plen] != '\0'))
                return -ENOSYS;
        const char *inside = target[plen] ? target + plen : "/";
        if (snprintf(buf, size, "%s", inside) >= (int)size)
                return -ENAMETOOLONG;
        return 0;
}

int fsroot_realpath(struct fsroot *fs, const char *path, char *buf, size_t size) {
        int r = realpath_by_kernel(fs, path, buf, size);
        if (r != -ENOSYS)
                return r;
        char real[4096];
        r = resolve(fs, path, true, real, sizeof(real));
        if (r < 0)
                return r;
        if (faccessat(fs->dir_fd, real, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (snprintf(buf, size, "/%s", strcmp(real, ".") == 0 ? "" : real) >= (int)size)
                return -ENAMETOOLONG;
        return 0;
}

int fsroot_write_path(struct fsroot *fs, const char *path, char *buf, size_t size) {
        char dir[4096], real[4096];
        const char *slash = strrchr(path, '/');
        if (path[0] != '/' || !slash || !slash[1])
                return -EINVAL;
        if ((size_t)(slash - path) >= sizeof(dir))
                return -ENAMETOOLONG;
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = '\0';
        const char *root = strcmp(fs->dir, "/") == 0 ? "" : fs->dir;
        /* The longest prefix of dir that exists, resolved; then what is still to be made. */
        size_t have = strlen(dir);
        for (;;) {
                char prefix[4096];
                snprintf(prefix, sizeof(prefix), "%.*s", (int)have, dir);
                int r = fsroot_realpath(fs, have ? prefix : "/", real, sizeof(real));
                if (r == 0)
                        break;
                if (r != -ENOENT)
                        return r;
                while (have > 0 && dir[have - 1] != '/')
                        have--;
                if (have == 0)
                        return r;
                have--;
        }
        const char *missing = dir + have, *base = slash + 1;
        if (strcmp(real, "/") == 0)
                real[0] = '\0';
        if (*missing) {
                /* The first missing directory must be missing indeed: one that is there but
                 * did not resolve is a symlink leading nowhere inside the root (made through,
                 * it would be made outside). */
                const char *end = strchr(missing + 1, '/');
                char first[8192];
                struct stat st;
                snprintf(first, sizeof(first), "%s%s%.*s", root, real,
                         (int)((end ? end : missing + strlen(missing)) - missing), missing);
                if (lstat(first, &st) == 0)
                        return -ELOOP;
        }
        if (snprintf(buf, size, "%s%s%s/%s", root, real, missing, base) >= (int)size)
                return -ENAMETOOLONG;
        return 0;
}

int fsroot_stat(struct fsroot *fs, const char *path, struct stat *ret) {
        int fd = open_o_path(fs, path, true);
        if (fd >= 0) {
                int r = fstat(fd, ret) < 0 ? -errno : 0;
                close(fd);
                return r;
        }
        if (fd != -ENOSYS)
                return fd;
        char real[4096];
        int r = resolve(fs, path, true, real, sizeof(real));
        if (r < 0)
                return r;
        if (fstatat(fs->dir_fd, real, ret, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (fs->recording)
                record(fs, real, false);
        return 0;
}

int fsroot_access(struct fsroot *fs, const char *path) {
        int fd = open_o_path(fs, path, true);
        if (fd >= 0) {
                close(fd);
                return 0;
        }
        struct stat st;
        return fd == -ENOSYS ? fsroot_stat(fs, path, &st) : fd;
}

bool fsroot_is_dir(struct fsroot *fs, const char *path) {
        struct stat st;
        return fsroot_stat(fs, path, &st) == 0 && S_ISDIR(st.st_mode);
}

int fsroot_list(struct fsroot *fs, const char *path, char ***ret) {
        int fd = open_in_root(fs, path, O_RDONLY | O_DIRECTORY);
        if (fd < 0)
                return fd;
        DIR *d = fdopendir(fd);
        if (!d) {
                int r = -errno;
                close(fd);
                return r;
        }
        char **names = NULL;
        int r = 0;
        struct dirent *de;
        errno = 0;
        while ((de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                r = strv_push(&names, de->d_name);
                if (r < 0)
                        break;
        }
        closedir(d);
        if (r < 0) {
                strv_free(names);
                return r;
        }
        if (!names) {
                names = calloc(1, sizeof(char *));
                if (!names)
                        return -ENOMEM;
        }
        strv_sort(names);
        *ret = names;
        return 0;
}

int fsroot_list_dirs(struct fsroot *fs, const char *const *dirs, size_t n_dirs, char ***ret) {
        char **paths = calloc(1, sizeof(char *));
        if (!paths)
                return -ENOMEM;
        int r = 0;
        for (size_t d = 0; r == 0 && d < n_dirs; d++) {
                char **names;
                r = fsroot_list(fs, dirs[d], &names);
                if (r < 0) {
                        r = r == -ENOMEM ? r : 0;
                        continue;
                }
                for (char **n = names; r == 0 && *n; n++) {
                        char *path;
                        if (asprintf(&path, "%s/%s", dirs[d], *n) < 0)
                                r = -ENOMEM;
                        else {
                                r = strv_push(&paths, path);
                                free(path);
                        }
                }
                strv_free(names);
        }
        if (r < 0) {
                strv_free(paths);
                return r;
        }
        *ret = paths;
        return 0;
}

void fsroot_record(struct fsroot *fs, bool on) { fs->recording = on; }

static int cmp_path(const void *a, const void *b) {
        return strcmp(((const struct fsroot_path *)a)->path, ((const struct fsroot_path *)b)->path);
}

int fsroot_recorded(struct fsroot *fs, const struct fsroot_path **ret, size_t *ret_n) {
        qsort(fs->recorded, fs->n_recorded, sizeof(*fs->recorded), cmp_path);
        size_t out = 0;
        for (size_t i = 0; i < fs->n_recorded; i++) {
                struct fsroot_path *p = &fs->recorded[i];
                if (strcmp(p->path, ".") == 0) {
                        free(p->path);
                        continue;
                }
                if (out > 0 && strcmp(fs->recorded[out - 1].path, p->path) == 0) {
                        fs->recorded[out - 1].content |= p->content;
                        free(p->path);
                        continue;
                }
                fs->recorded[out++] = *p;
        }
        fs->n_recorded = out;
        *ret = fs->recorded;
        *ret_n = out;
        return 0;
}

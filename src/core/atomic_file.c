/* Atomic report files: see atomic_file.h.
 *
 * No temporary file may outlive the run, whatever ends it:
 *  - the data goes first into an unnamed O_TMPFILE inode, which the kernel frees if the
 *    process dies before it is named; it is named (linkat) only to be renamed over the
 *    target at once;
 *  - SIGINT, SIGTERM, SIGHUP and SIGQUIT stay blocked while a named temporary exists, so
 *    they are taken after the rename or the unlink, never between;
 *  - SIGKILL cannot be blocked: a temporary it strands carries the writer's pid in its
 *    name (TARGET.gpuvet-PID-XXXXXX), and the next write to the same target removes those
 *    whose writer is gone.
 * Filesystems without O_TMPFILE get a named temporary from the start (mkostemp).
 *
 * The target is never opened, so nothing at its path is written through: an output path
 * sits in directories other users may write to (/tmp, a shared report folder), and a FIFO
 * planted there would block the writer for ever, a symlink to a device would be written
 * into. What is there decides:
 *  - nothing, a regular file, or a symlink to a regular file or to nothing: renamed over
 *    (a symlink is replaced, its target left alone, as mv and install do);
 *  - a FIFO, a device, a socket, or a symlink to one of them: refused, left as it is;
 *  - a directory: EISDIR.
 * What is there may change between the look and the rename; the rename still writes into
 * nothing, it only replaces the name. */
#include "core/atomic_file.h"
#include "core/write_fd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TEMP_TAG ".gpuvet-"

static void split_path(const char *path, char *dir, size_t dirsize, const char **base) {
        const char *slash = strrchr(path, '/');
        if (!slash) {
                snprintf(dir, dirsize, ".");
                *base = path;
        } else if (slash == path) {
                snprintf(dir, dirsize, "/");
                *base = slash + 1;
        } else {
                snprintf(dir, dirsize, "%.*s", (int)(slash - path), path);
                *base = slash + 1;
        }
}

/* Remove BASE.gpuvet-PID-XXXXXX in dir whose PID no longer runs: what a SIGKILL left. */
static void remove_stale_temps(const char *dir, const char *base) {
        DIR *d = opendir(dir);
        if (!d)
                return; /* creating the new temporary will say what is wrong */
        size_t blen = strlen(base), tlen = strlen(TEMP_TAG);
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
                const char *n = e->d_name;
                if (strncmp(n, base, blen) != 0 || strncmp(n + blen, TEMP_TAG, tlen) != 0)
                        continue;
                const char *p = n + blen + tlen;
                char *end;
                errno = 0;
                long pid = strtol(p, &end, 10);
                if (errno || end == p || *end != '-' || strlen(end + 1) != 6 || pid <= 0)
                        continue;
                if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
                        continue; /* alive, or not ours to judge */
                (void)unlinkat(dirfd(d), n, 0);
        }
        closedir(d);
}

/* The mode a new file would get from open(2) under the current umask: a report is for
 * sharing, and mkostemp/O_TMPFILE leave 0600. */
static mode_t report_mode(void) {
        mode_t mask = umask(0);
        umask(mask);
        return 0666 & ~mask;
}

static int fill(int fd, const void *data, size_t len, mode_t mode) {
        int r = write_fd_all(fd, data, len);
        if (r == 0 && fchmod(fd, mode) < 0)
                r = -errno;
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        return r;
}

/* Data into an unnamed inode in dir; then name it tmp (pattern ending XXXXXX, filled
 * here) and rename it over path. -EOPNOTSUPP etc.: O_TMPFILE cannot be used here. */
static int write_via_tmpfile(const char *dir, const char *path, char *tmp, const void *data, size_t len,
                             mode_t mode, bool *ret_unsupported) {
        int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0) {
                *ret_unsupported = errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL || errno == ENOENT;
                return -errno;
        }
        int r = fill(fd, data, len, mode);
        if (r == 0) {
                char proc[64];
                snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
                size_t n = strlen(tmp);
                for (int attempt = 0; attempt < 100; attempt++) {
                        /* A name nobody has: the same letters mkostemp would pick from. */
                        static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
                        unsigned long long x = (unsigned long long)random() ^ ((unsigned long long)getpid() << 20) ^
                                               (unsigned long long)attempt * 0x9e3779b97f4a7c15ULL;
                        for (size_t i = n - 6; i < n; i++, x /= 62)
                                tmp[i] = letters[x % 62];
                        if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0) {
                                r = 0;
                                break;
                        }
                        r = -errno;
                        if (errno != EEXIST) {
                                /* No /proc: fall back to a named temporary. */
                                *ret_unsupported = errno == ENOENT;
                                break;
                        }
                }
                if (r == 0 && rename(tmp, path) < 0) {
                        r = -errno;
                        (void)unlink(tmp);
                }
        }
        if (close(fd) < 0 && r == 0)
                r = -errno;
        return r;
}

static int write_via_mkostemp(const char *path, char *tmp, const void *data, size_t len, mode_t mode) {
        int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        int r = fill(fd, data, len, mode);
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                (void)unlink(tmp);
        return r;
}

const char *atomic_write_strerror(int r) {
        switch (r) {
        case ATOMIC_WRITE_NOT_REGULAR:
                return "exists and is not a regular file (a FIFO, device or socket, or a symlink to one): "
                       "refusing to write into it; remove it or give another path ('-' writes to standard output)";
        default:
                return strerror(-r);
        }
}

int atomic_write_target_ok(const char *path) {
        struct stat st;
        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (S_ISLNK(st.st_mode) && stat(path, &st) < 0)
                return 0; /* dangling (or a loop): the rename replaces the link */
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        return S_ISREG(st.st_mode) ? 0 : ATOMIC_WRITE_NOT_REGULAR;
}

/* While a named temporary exists, the signals that end a run wait (see the top). */
static void block_termination(sigset_t *old) {
        sigset_t term;
        sigemptyset(&term);
        sigaddset(&term, SIGINT);
        sigaddset(&term, SIGTERM);
        sigaddset(&term, SIGHUP);
        sigaddset(&term, SIGQUIT);
        pthread_sigmask(SIG_BLOCK, &term, old);
}

static int prepare(const char *path, char *dir, size_t dirsize, const char **base, char *tmp, size_t tmpsize) {
        int r = atomic_write_target_ok(path);
        if (r < 0)
                return r;
        if (strlen(path) >= dirsize)
                return -ENAMETOOLONG;
        split_path(path, dir, dirsize, base);
        if (!**base)
                return -EISDIR;
        if (snprintf(tmp, tmpsize, "%s" TEMP_TAG "%ld-XXXXXX", path, (long)getpid()) >= (int)tmpsize)
                return -ENAMETOOLONG;
        return 0;
}

/* The start of every write: path's directory into dir and its temporary's name into tmp,
 * the signals that end a run blocked (the old mask into *old, for the caller to restore),
 * and what earlier runs killed mid-write left beside path removed. Nothing is blocked when
 * it fails. */
static int begin(const char *path, char *dir, size_t dirsize, char *tmp, size_t tmpsize, sigset_t *old) {
        const char *base;
        int r = prepare(path, dir, dirsize, &base, tmp, tmpsize);
        if (r < 0)
                return r;
        block_termination(old);
        remove_stale_temps(dir, base);
        return 0;
}

int atomic_write(const char *path, const void *data, size_t len) {
        return atomic_write_mode(path, data, len, report_mode());
}

int atomic_write_mode(const char *path, const void *data, size_t len, mode_t mode) {
        char dir[4096], tmp[4096];
        sigset_t old;
        int r = begin(path, dir, sizeof(dir), tmp, sizeof(tmp), &old);
        if (r < 0)
                return r;
        bool unsupported = false;
        r = write_via_tmpfile(dir, path, tmp, data, len, mode, &unsupported);
        if (r < 0 && unsupported) {
                snprintf(tmp, sizeof(tmp), "%s" TEMP_TAG "%ld-XXXXXX", path, (long)getpid());
                r = write_via_mkostemp(path, tmp, data, len, mode);
        }

        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return r;
}

int atomic_create(const char *path, mode_t mode) {
        char dir[4096], tmp[4096];
        sigset_t old;
        int r = begin(path, dir, sizeof(dir), tmp, sizeof(tmp), &old);
        if (r < 0)
                return r;
        int fd = mkostemp(tmp, O_CLOEXEC);
        r = fd < 0 ? -errno : 0;
        if (r == 0 && fchmod(fd, mode) < 0)
                r = -errno;
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0 && fd >= 0) {
                (void)unlink(tmp);
                (void)close(fd);
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return r < 0 ? r : fd;
}

/* fsroot: every read of the machine's files goes through here, rooted at --root.
 *
 * Paths are written as on a live system ("/sys/bus/pci/devices"); the root directory
 * is prepended by opening relative to a directory fd. On Linux >= 5.6 paths are resolved
 * with openat2(RESOLVE_IN_ROOT), so absolute symlinks inside a captured tree stay inside
 * it. Only this file may spell "/proc" or "/sys" as a root: everything else passes paths.
 *
 * All functions return 0 or a negative errno. A recorder, when enabled, remembers every
 * path that was opened, listed or resolved, so that `gpuvet snapshot` can capture exactly
 * what the checks read. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <stddef.h>
#include <sys/types.h>

struct fsroot;

/* Limit on what fsroot_read_alloc() will read: sysfs/procfs files of interest are small;
 * a larger file is treated as bad input (-EFBIG), never read into memory whole. */
#define FSROOT_MAX_FILE (8u << 20)

int fsroot_open(const char *dir, struct fsroot **ret);
struct fsroot *fsroot_free(struct fsroot *fs);
const char *fsroot_dir(const struct fsroot *fs);
bool fsroot_is_live(const struct fsroot *fs);

/* Read a whole file into a fresh NUL-terminated buffer (caller frees). -EFBIG past the limit. */
int fsroot_read_alloc(struct fsroot *fs, const char *path, char **ret, size_t *ret_len);
/* The same with a smaller limit: a file of max - 1 bytes or more is -EFBIG (max from 2 to
 * FSROOT_MAX_FILE), so a reader of many small procfs files bounds each. */
int fsroot_read_alloc_max(struct fsroot *fs, const char *path, size_t max, char **ret, size_t *ret_len);

/* Read a small file into buf (NUL-terminated, trailing newlines stripped). -EFBIG when it
 * does not fit. */
int fsroot_read_str(struct fsroot *fs, const char *path, char *buf, size_t size);

/* The kernel log since boot, as /dev/kmsg gives it ("6,1234,5678,-;message" records).
 * On the live system /dev/kmsg is a character device read record by record until it has
 * no more; under another root it is a regular file of the same format (what snapshot
 * writes). -EPERM when kernel.dmesg_restrict keeps it from this user. */
int fsroot_read_kmsg(struct fsroot *fs, char **ret, size_t *ret_len);

/* printf-style path variants of the above. */
int fsroot_read_strf(struct fsroot *fs, char *buf, size_t size, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
int fsroot_vread_strf(struct fsroot *fs, char *buf, size_t size, const char *fmt, va_list ap)
        __attribute__((format(printf, 4, 0)));

int fsroot_readlink(struct fsroot *fs, const char *path, char *buf, size_t size);
/* The last component of a symlink's target ("../../bus/pci/drivers/nvidia" -> "nvidia"). */
int fsroot_readlink_base(struct fsroot *fs, const char *path, char *buf, size_t size);
/* The absolute (root-relative) path a symlink resolves to, with .. folded. */
int fsroot_realpath(struct fsroot *fs, const char *path, char *buf, size_t size);

/* The host path to write path at (a file gpuvet creates or replaces under the root: tune's
 * state, a boot loader file): its directory resolved inside the root, as the kernel would
 * with RESOLVE_IN_ROOT, so a symlink on the way never leads out of it; directories still
 * to be made are appended as named, and one that is there but does not resolve (a symlink
 * leading nowhere inside the root) is -ELOOP. The last component is not followed: the
 * writer replaces it (core/atomic_file.h). 0 or a negative errno. */
int fsroot_write_path(struct fsroot *fs, const char *path, char *buf, size_t size);

/* Set a sysfs/procfs attribute to value: one write() of value (no newline) on the live
 * system, which is what the kernel parses. In a captured tree (a regular file) the write
 * does what the kernel would show after it: a choice list ("always [madvise] never") gets
 * its brackets moved to value when value is one of its choices; any other file becomes
 * value and a newline. Negative errno: the kernel's refusal (-EINVAL, -EBUSY, -EACCES,
 * -EROFS) or -ENOENT when the attribute does not exist. */
int fsroot_write_attr(struct fsroot *fs, const char *path, const char *value);

/* stat() of path inside the root, following symlinks within it (a device node, say). */
int fsroot_stat(struct fsroot *fs, const char *path, struct stat *ret);

/* 0 if present (any type), -ENOENT etc. otherwise. */
int fsroot_access(struct fsroot *fs, const char *path);
bool fsroot_is_dir(struct fsroot *fs, const char *path);

/* List a directory: names (without "." and ".."), sorted, NULL-terminated; free with strv_free. */
int fsroot_list(struct fsroot *fs, const char *path, char ***ret);
/* The entries of each directory of dirs, in that order, as "DIR/NAME" (NULL-terminated; free
 * with strv_free): the drop-in directories a tool reads (modprobe.d, CDI). A directory that
 * cannot be listed is passed over, as those tools do; 0, or -ENOMEM. */
int fsroot_list_dirs(struct fsroot *fs, const char *const *dirs, size_t n_dirs, char ***ret);

/* Path recording for snapshot. */
void fsroot_record(struct fsroot *fs, bool on);

struct fsroot_path {
        char *path;   /* root-relative, no leading '/' */
        bool content; /* opened, listed or followed; false when only its existence or type
                       * was asked (fsroot_access, fsroot_is_dir): a snapshot then keeps the
                       * name, not the bytes of, say, /usr/bin/docker */
};

/* The recorded paths, sorted and unique (a path both read and tested keeps content);
 * owned by fs. */
int fsroot_recorded(struct fsroot *fs, const struct fsroot_path **ret, size_t *ret_n);

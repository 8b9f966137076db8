/* Write a file so that readers see the old content or the new, never a half-written one:
 * a temporary file in the same directory, fsync, then rename over the target. The target
 * is never opened: a FIFO, device or socket there (or a symlink to one) is refused, a
 * symlink to a regular file is replaced, not written through (see atomic_file.c). */
#pragma once
#include <stddef.h>
#include <sys/types.h>

/* What a non-regular target gets: not an errno, so callers print atomic_write_strerror(). */
#define ATOMIC_WRITE_NOT_REGULAR (-0x10001)

/* 0 or a negative errno (or ATOMIC_WRITE_NOT_REGULAR); on failure the target is untouched
 * and the temporary removed. No temporary outlives the run, even one ended by a signal
 * (see atomic_file.c). The file gets mode 0666 less the umask, as open(2) would give. */
int atomic_write(const char *path, const void *data, size_t len);

/* The same with the file's mode given (0600 for what may hold secrets), umask ignored. */
int atomic_write_mode(const char *path, const void *data, size_t len, mode_t mode);

/* For output written as it comes (query -f -l): a new empty file of that mode put at path
 * the same way (the old one replaced at once), open for writing. An fd, or as above. */
int atomic_create(const char *path, mode_t mode);

/* 0 when atomic_write could write at path as it is now, else what it would return: lets a
 * command refuse a path before it does its work. */
int atomic_write_target_ok(const char *path);

/* strerror() for what the functions above return. */
const char *atomic_write_strerror(int r);

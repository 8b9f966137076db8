/* Write a file so that readers see the old content or the new, never a half-written one:
 * a temporary file in the same directory, fsync, then rename over the target. */
#pragma once
#include <stddef.h>

/* 0 or a negative errno; on failure the target is untouched and the temporary removed.
 * No temporary outlives the run, even one ended by a signal (see atomic_file.c). */
int atomic_write(const char *path, const void *data, size_t len);

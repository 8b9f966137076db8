/* Temporary file trees for the unit tests: a fake /sys, /proc or /etc under /tmp.
 *
 * Paths inside a tree ("rel") may be written with or without a leading '/'. Every helper
 * fails the running cmocka test (fail_msg, naming the path and errno) when the file system
 * says no, so a fixture that could not be built never passes silently. */
#ifndef GPUVET_TESTS_TREE_H
#define GPUVET_TESTS_TREE_H

#include <stddef.h>

/* A fresh empty directory, /tmp/gpuvet-test-<tag>-XXXXXX; malloc'd, give it to tree_remove. */
char *tree_new(const char *tag);

/* Write text (or len bytes of data) to root/rel, creating missing parent directories. */
void tree_put(const char *root, const char *rel, const char *text);
void tree_put_bytes(const char *root, const char *rel, const void *data, size_t len);

/* Create the directory root/rel, which must not exist yet, and any missing parents. */
void tree_mkdir(const char *root, const char *rel);

/* Make root/rel a symbolic link to target (kept verbatim), creating missing parents. */
void tree_link(const char *root, const char *rel, const char *target);

/* Remove the file root/rel, which must exist. */
void tree_unlink(const char *root, const char *rel);

/* rm -rf root (links are removed, never followed), then free it. NULL is allowed. */
void tree_remove(char *root);

#endif

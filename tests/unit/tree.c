/* Temporary file trees for the unit tests; see tree.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tree.h"

/* root/rel in buf; a path too long for it fails the test. */
static void join(char *buf, size_t size, const char *root, const char *rel) {
        while (*rel == '/')
                rel++;
        int n = snprintf(buf, size, "%s/%s", root, rel);
        if (n < 0 || (size_t)n >= size)
                fail_msg("tree: path too long: %s/%s", root, rel);
}

/* mkdir -p for every directory above the last component of path, below root. */
static void make_parents(char *path, const char *root) {
        for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                if (mkdir(path, 0755) != 0 && errno != EEXIST)
                        fail_msg("tree: mkdir %s: %s", path, strerror(errno));
                *p = '/';
        }
}

char *tree_new(const char *tag) {
        char *root = NULL;
        if (asprintf(&root, "/tmp/gpuvet-test-%s-XXXXXX", tag) < 0)
                fail_msg("tree: out of memory");
        if (!mkdtemp(root))
                fail_msg("tree: mkdtemp %s: %s", root, strerror(errno));
        return root;
}

void tree_put_bytes(const char *root, const char *rel, const void *data, size_t len) {
        char path[4096];
        join(path, sizeof(path), root, rel);
        make_parents(path, root);
        FILE *fp = fopen(path, "wb");
        if (!fp)
                fail_msg("tree: open %s: %s", path, strerror(errno));
        size_t wrote = len ? fwrite(data, 1, len, fp) : 0;
        int closed = fclose(fp);
        if (wrote != len || closed != 0)
                fail_msg("tree: write %s: %s", path, strerror(errno));
}

void tree_put(const char *root, const char *rel, const char *text) { tree_put_bytes(root, rel, text, strlen(text)); }

void tree_mkdir(const char *root, const char *rel) {
        char path[4096];
        join(path, sizeof(path), root, rel);
        make_parents(path, root);
        if (mkdir(path, 0755) != 0)
                fail_msg("tree: mkdir %s: %s", path, strerror(errno));
}

void tree_link(const char *root, const char *rel, const char *target) {
        char path[4096];
        join(path, sizeof(path), root, rel);
        make_parents(path, root);
        if (symlink(target, path) != 0)
                fail_msg("tree: symlink %s -> %s: %s", path, target, strerror(errno));
}

void tree_unlink(const char *root, const char *rel) {
        char path[4096];
        join(path, sizeof(path), root, rel);
        if (unlink(path) != 0)
                fail_msg("tree: unlink %s: %s", path, strerror(errno));
}

static char remove_failed[4096]; /* the first path remove() refused, for the message */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void)st;
        (void)flag;
        (void)ftw;
        if (remove(path) == 0)
                return 0;
        snprintf(remove_failed, sizeof(remove_failed), "%s", path);
        return -1;
}

void tree_remove(char *root) {
        if (!root)
                return;
        remove_failed[0] = '\0';
        int rc = nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
        int err = errno;
        if (rc != 0) {
                char where[4096];
                snprintf(where, sizeof(where), "%s", remove_failed[0] ? remove_failed : root);
                free(root);
                fail_msg("tree: cannot remove %s: %s", where, strerror(err));
        }
        free(root);
}

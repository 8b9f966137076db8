/* gpuvet snapshot: capture the files the checks read, as a tar that replays with --root.
 *
 * Facts are gathered once with fsroot's recorder on; every path that was opened, listed
 * or resolved (each symlink met on the way included) is then captured from the root:
 * regular files with the content read now (sysfs reports st_size 4096 for short
 * attributes, so the size is what was read), symlinks as symlinks, directories as
 * directory entries. A directory that was listed also gets the names of its children
 * (symlinks with their target, subdirectories empty, files empty unless read), so a
 * listing replays with the same names. The archive is built in memory and written with
 * atomic_write(), so a failed run never leaves a torn FILE.tar behind. */
#include "snapshot/snapshot.h"

#include "core/array.h"
#include "core/atomic_file.h"
#include "core/deadline.h"
#include "core/dynlib.h"
#include "core/fsroot.h"
#include "core/grow.h"
#include "core/progress.h"
#include "core/read_fd.h"
#include "core/redact.h"
#include "core/strv.h"
#include "sys/facts.h"
#include "version.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* libarchive is loaded when a snapshot is written, not linked: every other command would
 * pay for it and what it pulls in (core/dynlib.h). */
#define LIBARCHIVE_FUNCTIONS(X)                                                                          \
        X(archive_entry_free) X(archive_entry_new) X(archive_entry_set_filetype) X(archive_entry_set_mtime) \
        X(archive_entry_set_pathname) X(archive_entry_set_perm) X(archive_entry_set_rdev) X(archive_entry_set_size)                   \
        X(archive_entry_set_symlink) X(archive_error_string) X(archive_set_error) X(archive_write_close)     \
        X(archive_write_data) X(archive_write_free) X(archive_write_header) X(archive_write_new)            \
        X(archive_write_open) X(archive_write_set_format_pax_restricted) X(archive_write_add_filter_gzip)       \
        X(archive_write_add_filter_xz) X(archive_write_add_filter_zstd) X(archive_write_set_bytes_in_last_block)
static struct {
#define X(f) __typeof__(&f) f;
        LIBARCHIVE_FUNCTIONS(X)
#undef X
} la;

int snapshot_libarchive_load(char *err, size_t errsize) {
        static const char *const sonames[] = {"libarchive.so.13"};
        static const struct dynlib_fn fns[] = {
#define X(f) {#f, NULL, true, offsetof(__typeof__(la), f)},
                LIBARCHIVE_FUNCTIONS(X)
#undef X
        };
        static struct dynlib lib;
        if (lib.handle)
                return 0;
        return dynlib_load(sonames, ARRAY_COUNT(sonames), fns, ARRAY_COUNT(fns), &la, &lib, err, errsize);
}

static int add_entry(struct snapshot_capture *c, const char *path, enum snapshot_reason reason) {
        if (array_grow((void **)&c->entries, c->n, &c->cap, sizeof(*c->entries), 1024) < 0)
                return -ENOMEM;
        char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        c->entries[c->n++] = (struct snapshot_entry){.path = copy, .reason = reason};
        return 0;
}

/* Every directory above path, so the archive extracts without relying on tar to invent
 * parents (which it does with the umask's modes, not the captured ones). */
static int add_parents(struct snapshot_capture *c, const char *path) {
        char buf[4096];
        if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
                return -ENAMETOOLONG;
        for (char *slash = strchr(buf, '/'); slash; slash = strchr(slash + 1, '/')) {
                *slash = '\0';
                int r = add_entry(c, buf, SNAPSHOT_REASON_PARENT);
                *slash = '/';
                if (r < 0)
                        return r;
        }
        return 0;
}

static int cmp_entry(const void *a, const void *b) {
        const struct snapshot_entry *x = a, *y = b;
        return strcmp(x->path, y->path);
}

/* Sort (a parent sorts before its children, being their prefix) and merge duplicates. */
static void sort_unique(struct snapshot_capture *c) {
        qsort(c->entries, c->n, sizeof(*c->entries), cmp_entry);
        size_t out = 0;
        for (size_t i = 0; i < c->n; i++) {
                if (out > 0 && strcmp(c->entries[out - 1].path, c->entries[i].path) == 0) {
                        if (c->entries[i].reason > c->entries[out - 1].reason)
                                c->entries[out - 1].reason = c->entries[i].reason;
                        free(c->entries[i].path);
                        continue;
                }
                c->entries[out++] = c->entries[i];
        }
        c->n = out;
}

/* err: the errno that kept path out, or SNAPSHOT_NOT_REGULAR. */
static int note_left_out(struct snapshot_capture *c, const char *path, int err, bool dir) {
        if (err == EACCES || err == EPERM)
                c->n_denied++;
        else
                c->n_unreadable++;
        if (c->n_left_out == c->cap_left_out) {
                size_t cap = c->cap_left_out ? 2 * c->cap_left_out : 16;
                struct snapshot_left_out *grown = realloc(c->left_out, cap * sizeof(*grown));
                if (!grown)
                        return -ENOMEM;
                c->left_out = grown;
                c->cap_left_out = cap;
        }
        char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        c->left_out[c->n_left_out++] = (struct snapshot_left_out){.path = copy, .err = err, .dir = dir};
        return 0;
}

/* Add the names in a directory the gatherers listed. */
static int add_children(struct snapshot_capture *c, const char *dir) {
        int fd = openat(c->root_fd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                /* The gatherers could not list it either; the replay would see it empty. */
                if (errno == ENOENT || errno == ENOTDIR)
                        return 0;
                return note_left_out(c, dir, errno, true);
        }
        DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return -errno;
        }
        int r = 0;
        struct dirent *de;
        while (r == 0 && (de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                char path[4096];
                if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
                        continue; /* fsroot could not open it either */
                r = add_entry(c, path, SNAPSHOT_REASON_NAME);
        }
        closedir(d);
        return r;
}

int snapshot_collect(struct snapshot_capture *c, struct fsroot *fs) {
        const struct fsroot_path *paths;
        size_t n;
        int r = fsroot_recorded(fs, &paths, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                const char *path = paths[i].path;
                if ((r = add_entry(c, path, paths[i].content ? SNAPSHOT_REASON_RECORDED : SNAPSHOT_REASON_NAME)) < 0 ||
                    (r = add_parents(c, path)) < 0)
                        return r;
                struct stat st;
                if (paths[i].content && fstatat(c->root_fd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISDIR(st.st_mode) && (r = add_children(c, path)) < 0)
                        return r;
        }
        sort_unique(c);
        return 0;
}

/* Read a regular file relative to the root: at most FSROOT_MAX_FILE bytes, which is
 * exactly enough for the replay to refuse it with -EFBIG as the live read did. */
static int read_content(struct snapshot_capture *c, const char *path, char **ret, size_t *ret_len, bool *ret_truncated) {
        *ret_truncated = false;
        int fd = openat(c->root_fd, path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        int r = read_fd_alloc(fd, FSROOT_MAX_FILE, ret, ret_len);
        close(fd);
        if (r < 0)
                return r;
        *ret_truncated = r == 1;
        return 0;
}

static int write_cb_open(struct archive *a, void *data) {
        (void)a;
        (void)data;
        return ARCHIVE_OK;
}

static la_ssize_t write_cb(struct archive *a, void *data, const void *buf, size_t len) {
        struct snapshot_membuf *m = data;
        if (m->len + len > m->cap) {
                size_t cap = m->cap ? m->cap : 1 << 20;
                while (cap < m->len + len)
                        cap *= 2;
                char *grown = realloc(m->data, cap);
                if (!grown) {
                        la.archive_set_error(a, ENOMEM, "out of memory");
                        return -1;
                }
                m->data = grown;
                m->cap = cap;
        }
        memcpy(m->data + m->len, buf, len);
        m->len += len;
        return (la_ssize_t)len;
}

static int write_entry(struct archive *a, const char *path, const struct stat *st, mode_t type,
                       const char *content, size_t len, const char *link_target) {
        struct archive_entry *e = la.archive_entry_new();
        if (!e)
                return -ENOMEM;
        la.archive_entry_set_pathname(e, path);
        la.archive_entry_set_filetype(e, type);
        /* Owner rwx on directories and r on files: the tree must extract and be readable
         * (and removable) by whoever replays it; sysfs and /proc/PID dirs are 0555. */
        mode_t perm = st ? st->st_mode & 07777 : 0644;
        if (type == AE_IFDIR)
                perm |= 0700;
        else if (type == AE_IFREG)
                perm |= 0600;
        la.archive_entry_set_perm(e, type == AE_IFLNK ? 0777 : perm);
        if (st)
                la.archive_entry_set_mtime(e, st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
        else
                la.archive_entry_set_mtime(e, time(NULL), 0);
        la.archive_entry_set_size(e, type == AE_IFREG ? (la_int64_t)len : 0);
        if (link_target)
                la.archive_entry_set_symlink(e, link_target);
        if (st && (type == AE_IFCHR || type == AE_IFBLK))
                la.archive_entry_set_rdev(e, st->st_rdev);
        int r = la.archive_write_header(a, e) == ARCHIVE_OK ? 0 : -EIO;
        if (r == 0 && type == AE_IFREG && len > 0 && la.archive_write_data(a, content, len) != (la_ssize_t)len)
                r = -EIO;
        la.archive_entry_free(e);
        return r;
}

/* Captured entries, built before writing so the info file at the top can give counts. */
struct item {
        const char *path;
        struct stat st;
        mode_t type;
        char *content;
        size_t len;
        char *link;
};

/* The archive is for sharing: credentials in the files read (registry auth in containerd's
 * config, a token in an environment) are replaced, and the info file says where. */
static int note_redacted(struct snapshot_capture *c, const char *path, char **content, size_t *len) {
        unsigned values;
        int r = redact_file(path, content, len, &values);
        if (r < 0 || values == 0)
                return r;
        if (array_grow((void **)&c->redacted, c->n_redacted, &c->cap_redacted, sizeof(*c->redacted), 8) < 0)
                return -ENOMEM;
        char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        c->redacted[c->n_redacted++] = (struct snapshot_redacted){.path = copy, .values = values};
        return 0;
}

static int capture_one(struct snapshot_capture *c, const struct snapshot_entry *en, struct item *it) {
        *it = (struct item){.path = en->path};
        if (fstatat(c->root_fd, en->path, &it->st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno == ENOENT || errno == ENOTDIR)
                        return 0; /* a recorded miss: absent here, absent in the replay */
                return note_left_out(c, en->path, errno, false);
        }
        if (S_ISDIR(it->st.st_mode)) {
                it->type = AE_IFDIR;
                c->n_dirs++;
        } else if (S_ISLNK(it->st.st_mode)) {
                char target[4096];
                ssize_t n = readlinkat(c->root_fd, en->path, target, sizeof(target) - 1);
                if (n < 0)
                        return note_left_out(c, en->path, errno, false);
                target[n] = '\0';
                it->link = strdup(target);
                if (!it->link)
                        return -ENOMEM;
                it->type = AE_IFLNK;
                c->n_links++;
        } else if (S_ISREG(it->st.st_mode)) {
                if (en->reason == SNAPSHOT_REASON_RECORDED) {
                        bool truncated;
                        int r = read_content(c, en->path, &it->content, &it->len, &truncated);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0) /* the gatherer met the same error */
                                return note_left_out(c, en->path, -r, false);
                        c->n_truncated += truncated;
                        if ((r = note_redacted(c, en->path, &it->content, &it->len)) < 0)
                                return r;
                }
                it->type = AE_IFREG;
                c->n_files++;
        } else if (S_ISCHR(it->st.st_mode) && strcmp(en->path, "dev/kmsg") == 0 && en->reason == SNAPSHOT_REASON_RECORDED) {
                /* The kernel log is a device read record by record; the replay reads a
                 * regular file of the same records (fsroot_read_kmsg). */
                int r = fsroot_read_kmsg(c->fs, &it->content, &it->len);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return note_left_out(c, en->path, -r, false);
                it->st.st_mode = S_IFREG | 0644;
                it->type = AE_IFREG;
                c->n_files++;
        } else if ((S_ISCHR(it->st.st_mode) || S_ISBLK(it->st.st_mode)) && en->reason == SNAPSHOT_REASON_NAME) {
                /* A device node the gatherer stat'ed (/dev/nvidia*): kept as a node, as tar
                 * does; unpacking it needs root, like any archive of /dev. */
                it->type = S_ISCHR(it->st.st_mode) ? AE_IFCHR : AE_IFBLK;
                c->n_devices++;
        } else {
                /* FIFOs and devices are not read by fsroot (a FIFO would block). */
                return note_left_out(c, en->path, SNAPSHOT_NOT_REGULAR, false);
        }
        return 0;
}

const char *snapshot_left_out_why(const struct snapshot_left_out *l) {
        return l->err == SNAPSHOT_NOT_REGULAR ? "not a regular file (a FIFO or a device)" : strerror(l->err);
}

static void write_info(struct snapshot_membuf *info, const struct facts *f, const char *root, const struct snapshot_capture *c) {
        char host[256] = "";
        if (f->host.hostname[0])
                snprintf(host, sizeof(host), "%s", f->host.hostname);
        else if (gethostname(host, sizeof(host) - 1) < 0)
                snprintf(host, sizeof(host), "unknown");
        char date[64];
        time_t now = time(NULL);
        struct tm tm;
        strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
        char *text = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&text, &len);
        if (!out)
                return;
        fprintf(out,
                "gpuvet snapshot\n"
                "version: %s\n"
                "hostname: %s\n"
                "date: %s\n"
                "root: %s\n"
                "files: %u\n"
                "directories: %u\n"
                "symlinks: %u\n"
                "device_nodes: %u\n"
                "left_out_permission_denied: %u\n"
                "left_out_unreadable: %u\n"
                "replay: mkdir DIR && tar -xf FILE.tar -C DIR && gpuvet check --root DIR\n",
                GPUVET_VERSION, host, date, root, c->n_files, c->n_dirs, c->n_links, c->n_devices, c->n_denied,
                c->n_unreadable);
        for (size_t i = 0; i < c->n_left_out; i++)
                fprintf(out, "left_out: /%s%s: %s\n", c->left_out[i].path, c->left_out[i].dir ? "/" : "",
                        snapshot_left_out_why(&c->left_out[i]));
        for (size_t i = 0; i < c->n_redacted; i++)
                fprintf(out, "redacted: /%s: %u value%s replaced by %s\n", c->redacted[i].path, c->redacted[i].values,
                        c->redacted[i].values == 1 ? "" : "s", REDACT_MARK);
        if (fclose(out) == 0) {
                info->data = text;
                info->len = len;
        } else {
                free(text);
        }
}

static const struct {
        const char *suffix;
        enum snapshot_compression how;
} suffixes[] = {
        {".tar", SNAPSHOT_COMPRESS_NONE}, {".tar.gz", SNAPSHOT_COMPRESS_GZIP}, {".tgz", SNAPSHOT_COMPRESS_GZIP},  {".tar.xz", SNAPSHOT_COMPRESS_XZ},
        {".txz", SNAPSHOT_COMPRESS_XZ},   {".tar.zst", SNAPSHOT_COMPRESS_ZSTD}, {".tzst", SNAPSHOT_COMPRESS_ZSTD},
};

static bool ends_with(const char *s, const char *suffix) {
        size_t n = strlen(s), k = strlen(suffix);
        return n > k && strcmp(s + n - k, suffix) == 0;
}

/* The compression for path ("-": none); -1 when its suffix is none of the table's. */
int snapshot_compression_for(const char *path) {
        if (strcmp(path, "-") == 0)
                return SNAPSHOT_COMPRESS_NONE;
        for (size_t i = 0; i < ARRAY_COUNT(suffixes); i++)
                if (ends_with(path, suffixes[i].suffix))
                        return (int)suffixes[i].how;
        return -1;
}

/* The suffix of path's last component as a reader sees it (".tar.bz2", ".zip"), for the
 * message that refuses it; "" for a name without one. */
const char *snapshot_suffix_of(const char *path) {
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        const char *tar = strstr(base, ".tar.");
        if (tar && !strchr(tar + 5, '.'))
                return tar;
        const char *dot = strrchr(base, '.');
        return dot && dot != base ? dot : "";
}

static int add_compression(struct archive *a, enum snapshot_compression how) {
        int r = ARCHIVE_OK;
        switch (how) {
        case SNAPSHOT_COMPRESS_NONE: break;
        case SNAPSHOT_COMPRESS_GZIP: r = la.archive_write_add_filter_gzip(a); break;
        case SNAPSHOT_COMPRESS_XZ: r = la.archive_write_add_filter_xz(a); break;
        case SNAPSHOT_COMPRESS_ZSTD: r = la.archive_write_add_filter_zstd(a); break;
        }
        /* ARCHIVE_WARN: libarchive was built without the library and runs the program
         * (gzip, xz, zstd) instead; the archive is the same. */
        if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
                return r;
        /* Written through a callback, libarchive pads the compressed stream with zeros to a
         * whole 10 KiB block, as for a tape; zstd refuses what follows its frame ("unsupported
         * format"). Only the uncompressed tar keeps the padding tar expects. */
        return la.archive_write_set_bytes_in_last_block(a, 1);
}

/* "snapshot: capturing files 1200 of 23000", redrawn once a second. */
static void show_progress(struct progress *p, const char *what, size_t done, size_t total) {
        if (!progress_begin(p, monotonic_ms() / 1e3))
                return;
        progress_line(p, "snapshot: %s %zu of %zu", what, done, total);
        progress_end(p);
}

int snapshot_build_archive(struct snapshot_capture *c, const struct facts *f, const char *root,
                           enum snapshot_compression how, struct progress *progress, struct snapshot_membuf *out,
                           char *err, size_t errsize) {
        struct item *items = calloc(c->n ? c->n : 1, sizeof(*items));
        if (!items)
                return -ENOMEM;
        int r = 0;
        for (size_t i = 0; i < c->n && r == 0; i++) {
                show_progress(progress, "capturing files", i, c->n);
                r = capture_one(c, &c->entries[i], &items[i]);
        }
        progress_now(progress);

        struct snapshot_membuf info = {0};
        struct archive *a = NULL;
        if (r == 0) {
                write_info(&info, f, root, c);
                a = la.archive_write_new();
                if (!a || !info.data)
                        r = -ENOMEM;
        }
        if (r == 0 && (la.archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
                       (how != SNAPSHOT_COMPRESS_NONE && add_compression(a, how) != ARCHIVE_OK) ||
                       la.archive_write_open(a, out, write_cb_open, write_cb, NULL) != ARCHIVE_OK)) {
                snprintf(err, errsize, "starting the archive: %s", la.archive_error_string(a));
                r = -EIO;
        }
        if (r == 0)
                r = write_entry(a, SNAPSHOT_INFO_NAME, NULL, AE_IFREG, info.data, info.len, NULL);
        for (size_t i = 0; i < c->n && r == 0; i++) {
                const struct item *it = &items[i];
                show_progress(progress, "archiving files", i, c->n);
                if (it->type)
                        r = write_entry(a, it->path, &it->st, it->type, it->content, it->len, it->link);
                if (r == -EIO)
                        snprintf(err, errsize, "adding /%s: %s", it->path, la.archive_error_string(a));
        }
        if (r == 0 && la.archive_write_close(a) != ARCHIVE_OK) {
                snprintf(err, errsize, "finishing the archive: %s", la.archive_error_string(a));
                r = -EIO;
        }
        if (a)
                la.archive_write_free(a);
        free(info.data);
        for (size_t i = 0; i < c->n; i++) {
                free(items[i].content);
                free(items[i].link);
        }
        free(items);
        return r;
}

int snapshot_write_output(const char *path, const struct snapshot_membuf *m) {
        if (strcmp(path, "-") != 0)
                return atomic_write_mode(path, m->data, m->len, 0600);
        for (size_t off = 0; off < m->len;) {
                ssize_t n = write(STDOUT_FILENO, m->data + off, m->len - off);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                off += (size_t)n;
        }
        return 0;
}

void snapshot_capture_free(struct snapshot_capture *c) {
        for (size_t i = 0; i < c->n_left_out; i++)
                free(c->left_out[i].path);
        free(c->left_out);
        for (size_t i = 0; i < c->n_redacted; i++)
                free(c->redacted[i].path);
        free(c->redacted);
        for (size_t i = 0; i < c->n; i++)
                free(c->entries[i].path);
        free(c->entries);
        close(c->root_fd);
}


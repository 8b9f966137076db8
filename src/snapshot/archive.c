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
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/specs.h"
#include "core/atomic_file.h"
#include "core/deadline.h"
#include "core/dynlib.h"
#include "core/fsroot.h"
#include "core/progress.h"
#include "core/read_fd.h"
#include "core/redact.h"
#include "core/strv.h"
#include "data/gpudb.h"
#include "report/text_safe.h"
#include "sys/facts.h"
#include "version.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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

static int libarchive_load(char *err, size_t errsize) {
        static const char *const sonames[] = {"libarchive.so.13"};
        static const struct dynlib_fn fns[] = {
#define X(f) {#f, NULL, true, offsetof(__typeof__(la), f)},
                LIBARCHIVE_FUNCTIONS(X)
#undef X
        };
        static struct dynlib lib;
        if (lib.handle)
                return 0;
        return dynlib_load(sonames, DYNLIB_COUNT(sonames), fns, DYNLIB_COUNT(fns), &la, &lib, err, errsize);
}

#define INFO_NAME "gpuvet-snapshot.txt"

/* Why a path is in the snapshot; a path met more than once keeps the strongest reason. */
enum reason {
        REASON_PARENT,   /* a directory above something captured */
        REASON_NAME,     /* a name seen in a listed directory, or one whose existence was
                          * tested: kept as a name only (an empty file) */
        REASON_RECORDED, /* opened, listed or resolved by the gatherers */
};

struct entry {
        char *path; /* root-relative, no leading '/' */
        enum reason reason;
};

struct capture {
        int root_fd;
        struct fsroot *fs; /* for what must be read the way gatherers read it (/dev/kmsg) */
        struct entry *entries;
        size_t n, cap;
        unsigned n_files, n_dirs, n_links, n_devices, n_truncated;
        unsigned n_denied;     /* EACCES/EPERM: root-only files read as a user */
        unsigned n_unreadable; /* other read errors, and FIFOs/devices */
        /* Every path left out, named in the warnings and the info file: a replay of a
         * partial capture can judge differently, so the user must know what is missing. */
        struct left_out *left_out;
        size_t n_left_out, cap_left_out;
        /* Files whose secrets were replaced (core/redact.h): named in the info file. */
        struct redacted *redacted;
        size_t n_redacted, cap_redacted;
};

struct redacted {
        char *path; /* root-relative */
        unsigned values;
};

struct left_out {
        char *path; /* root-relative */
        int err;    /* errno, or NOT_REGULAR */
        bool dir;   /* a directory that could not be listed */
};
#define NOT_REGULAR (-1)

struct membuf {
        char *data;
        size_t len, cap;
};

static int add_entry(struct capture *c, const char *path, enum reason reason) {
        if (c->n == c->cap) {
                size_t cap = c->cap ? c->cap * 2 : 1024;
                struct entry *grown = realloc(c->entries, cap * sizeof(*grown));
                if (!grown)
                        return -ENOMEM;
                c->entries = grown;
                c->cap = cap;
        }
        char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        c->entries[c->n++] = (struct entry){.path = copy, .reason = reason};
        return 0;
}

/* Every directory above path, so the archive extracts without relying on tar to invent
 * parents (which it does with the umask's modes, not the captured ones). */
static int add_parents(struct capture *c, const char *path) {
        char buf[4096];
        if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
                return -ENAMETOOLONG;
        for (char *slash = strchr(buf, '/'); slash; slash = strchr(slash + 1, '/')) {
                *slash = '\0';
                int r = add_entry(c, buf, REASON_PARENT);
                *slash = '/';
                if (r < 0)
                        return r;
        }
        return 0;
}

static int cmp_entry(const void *a, const void *b) {
        const struct entry *x = a, *y = b;
        return strcmp(x->path, y->path);
}

/* Sort (a parent sorts before its children, being their prefix) and merge duplicates. */
static void sort_unique(struct capture *c) {
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

/* err: the errno that kept path out, or NOT_REGULAR. */
static int note_left_out(struct capture *c, const char *path, int err, bool dir) {
        if (err == EACCES || err == EPERM)
                c->n_denied++;
        else
                c->n_unreadable++;
        if (c->n_left_out == c->cap_left_out) {
                size_t cap = c->cap_left_out ? 2 * c->cap_left_out : 16;
                struct left_out *grown = realloc(c->left_out, cap * sizeof(*grown));
                if (!grown)
                        return -ENOMEM;
                c->left_out = grown;
                c->cap_left_out = cap;
        }
        char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        c->left_out[c->n_left_out++] = (struct left_out){.path = copy, .err = err, .dir = dir};
        return 0;
}

/* Add the names in a directory the gatherers listed. */
static int add_children(struct capture *c, const char *dir) {
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
                r = add_entry(c, path, REASON_NAME);
        }
        closedir(d);
        return r;
}

static int collect(struct capture *c, struct fsroot *fs) {
        const struct fsroot_path *paths;
        size_t n;
        int r = fsroot_recorded(fs, &paths, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                const char *path = paths[i].path;
                if ((r = add_entry(c, path, paths[i].content ? REASON_RECORDED : REASON_NAME)) < 0 ||
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
static int read_content(struct capture *c, const char *path, char **ret, size_t *ret_len, bool *ret_truncated) {
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
        struct membuf *m = data;
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
static int note_redacted(struct capture *c, const char *path, char **content, size_t *len) {
        unsigned values;
        int r = redact_file(path, content, len, &values);
        if (r < 0 || values == 0)
                return r;
        if (c->n_redacted == c->cap_redacted) {
                size_t cap = c->cap_redacted ? c->cap_redacted * 2 : 8;
                struct redacted *v = realloc(c->redacted, cap * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                c->redacted = v;
                c->cap_redacted = cap;
        }
        char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        c->redacted[c->n_redacted++] = (struct redacted){.path = copy, .values = values};
        return 0;
}

static int capture_one(struct capture *c, const struct entry *en, struct item *it) {
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
                if (en->reason == REASON_RECORDED) {
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
        } else if (S_ISCHR(it->st.st_mode) && strcmp(en->path, "dev/kmsg") == 0 && en->reason == REASON_RECORDED) {
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
        } else if ((S_ISCHR(it->st.st_mode) || S_ISBLK(it->st.st_mode)) && en->reason == REASON_NAME) {
                /* A device node the gatherer stat'ed (/dev/nvidia*): kept as a node, as tar
                 * does; unpacking it needs root, like any archive of /dev. */
                it->type = S_ISCHR(it->st.st_mode) ? AE_IFCHR : AE_IFBLK;
                c->n_devices++;
        } else {
                /* FIFOs and devices are not read by fsroot (a FIFO would block). */
                return note_left_out(c, en->path, NOT_REGULAR, false);
        }
        return 0;
}

/* Left-out paths named on stderr; the info file in the archive lists them all. */
#define LEFT_OUT_SHOWN 20

static const char *left_out_why(const struct left_out *l) {
        return l->err == NOT_REGULAR ? "not a regular file (a FIFO or a device)" : strerror(l->err);
}

static void write_info(struct membuf *info, const struct facts *f, const char *root, const struct capture *c) {
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
                        left_out_why(&c->left_out[i]));
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

/* The compression -o's suffix asks for, as tar -a chooses it: an operator who types
 * node.tar.gz means gzip, and a name that promises one format while holding another breaks
 * `tar -xzf` and every tool that trusts the name. */
enum compression { COMPRESS_NONE, COMPRESS_GZIP, COMPRESS_XZ, COMPRESS_ZSTD };

static const struct {
        const char *suffix;
        enum compression how;
} suffixes[] = {
        {".tar", COMPRESS_NONE}, {".tar.gz", COMPRESS_GZIP}, {".tgz", COMPRESS_GZIP},  {".tar.xz", COMPRESS_XZ},
        {".txz", COMPRESS_XZ},   {".tar.zst", COMPRESS_ZSTD}, {".tzst", COMPRESS_ZSTD},
};

static bool ends_with(const char *s, const char *suffix) {
        size_t n = strlen(s), k = strlen(suffix);
        return n > k && strcmp(s + n - k, suffix) == 0;
}

/* The compression for path ("-": none); -1 when its suffix is none of the table's. */
static int compression_for(const char *path) {
        if (strcmp(path, "-") == 0)
                return COMPRESS_NONE;
        for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
                if (ends_with(path, suffixes[i].suffix))
                        return (int)suffixes[i].how;
        return -1;
}

/* The suffix of path's last component as a reader sees it (".tar.bz2", ".zip"), for the
 * message that refuses it; "" for a name without one. */
static const char *suffix_of(const char *path) {
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        const char *tar = strstr(base, ".tar.");
        if (tar && !strchr(tar + 5, '.'))
                return tar;
        const char *dot = strrchr(base, '.');
        return dot && dot != base ? dot : "";
}

static int add_compression(struct archive *a, enum compression how) {
        int r = ARCHIVE_OK;
        switch (how) {
        case COMPRESS_NONE: break;
        case COMPRESS_GZIP: r = la.archive_write_add_filter_gzip(a); break;
        case COMPRESS_XZ: r = la.archive_write_add_filter_xz(a); break;
        case COMPRESS_ZSTD: r = la.archive_write_add_filter_zstd(a); break;
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

static int build_archive(struct capture *c, const struct facts *f, const char *root, enum compression how,
                         struct progress *progress, struct membuf *out, char *err, size_t errsize) {
        struct item *items = calloc(c->n ? c->n : 1, sizeof(*items));
        if (!items)
                return -ENOMEM;
        int r = 0;
        for (size_t i = 0; i < c->n && r == 0; i++) {
                show_progress(progress, "capturing files", i, c->n);
                r = capture_one(c, &c->entries[i], &items[i]);
        }
        progress_now(progress);

        struct membuf info = {0};
        struct archive *a = NULL;
        if (r == 0) {
                write_info(&info, f, root, c);
                a = la.archive_write_new();
                if (!a || !info.data)
                        r = -ENOMEM;
        }
        if (r == 0 && (la.archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
                       (how != COMPRESS_NONE && add_compression(a, how) != ARCHIVE_OK) ||
                       la.archive_write_open(a, out, write_cb_open, write_cb, NULL) != ARCHIVE_OK)) {
                snprintf(err, errsize, "starting the archive: %s", la.archive_error_string(a));
                r = -EIO;
        }
        if (r == 0)
                r = write_entry(a, INFO_NAME, NULL, AE_IFREG, info.data, info.len, NULL);
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

static int write_output(const char *path, const struct membuf *m) {
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

struct snapshot_cli {
        const char *output;
        enum compression compression;
        bool partial_ok, no_progress;
};

enum snapshot_opt { SNAPSHOT_OUTPUT = 'o', SNAPSHOT_PARTIAL = 0x100, SNAPSHOT_NO_PROGRESS };

static int snapshot_option(int id, const struct opt_value *v, void *ctx) {
        struct snapshot_cli *o = ctx;
        if (id == SNAPSHOT_OUTPUT)
                o->output = v->text;
        else if (id == SNAPSHOT_PARTIAL)
                o->partial_ok = true;
        else
                o->no_progress = true;
        return -1;
}

static const struct opt snapshot_options[] = {
        {.name = "output", .letter = 'o', .kind = ARG_OUT_FILE, .metavar = "FILE",
         .help = "the archive to write (\"-\" for standard output); written atomically, an existing FILE is "
                 "replaced only on success; its suffix chooses the compression: .tar (none), .tar.gz or .tgz, "
                 ".tar.xz or .txz, .tar.zst or .tzst (\"-\": none)"},
        {.name = "partial", .kind = ARG_FLAG, .id = SNAPSHOT_PARTIAL,
         .help = "accept a partial capture: exit 0 even when files or directories could not be read"},
        {.name = "no-progress", .kind = ARG_FLAG, .id = SNAPSHOT_NO_PROGRESS,
         .help = "no progress line on a terminal's standard error"},
        {0},
};

const struct cmd_spec cmd_snapshot_spec = {
        .name = "snapshot",
        .synopsis = "-o FILE.tar [OPTIONS]",
        .summary = "Capture the files gpuvet check reads into a tar archive. On another machine the commands "
                   "below give the same verdict and results as on this one:",
        .description = "  mkdir DIR && tar -xf FILE.tar -C DIR && gpuvet check --root DIR",
        .opts = snapshot_options,
        .notes = "Files and directories the current user cannot read (root-only attributes) are left out and "
                 "each named in a warning; a replay of such a capture may judge differently, so the run exits 1 "
                 "unless --partial is given. --root captures from DIR instead of /; --data-dir's tables are not "
                 "captured.",
        .exit_status = "0 written, 1 written but partial, 2 usage or bad output path, 3 internal error.",
        .timeout_help = "give up (exit 3) when reading blocks this long",
        .on_option = snapshot_option,
};

/* What did not go into the archive, and its size; 1 (EXIT_FAILED) for a partial capture
 * without --partial, else 0. */
static int report_capture(const struct capture *c, const struct snapshot_cli *o, size_t archive_len) {
        int code = EXIT_PASS;
        for (size_t i = 0; i < c->n_left_out && i < LEFT_OUT_SHOWN; i++)
                fprintf(stderr, "gpuvet snapshot: warning: left out /%s%s: %s\n", c->left_out[i].path,
                        c->left_out[i].dir ? " (a directory: its entries)" : "", left_out_why(&c->left_out[i]));
        if (c->n_left_out > LEFT_OUT_SHOWN)
                fprintf(stderr, "gpuvet snapshot: warning: ... and %zu more (all listed in %s in the archive)\n",
                        c->n_left_out - LEFT_OUT_SHOWN, INFO_NAME);
        if (c->n_left_out) {
                fprintf(stderr, "gpuvet snapshot: the capture is partial: %u left out for permissions%s, %u "
                                "unreadable; a replay may judge differently%s\n",
                        c->n_denied, c->n_denied ? " (run as root to capture them)" : "", c->n_unreadable,
                        o->partial_ok ? " (accepted: --partial)" : " (exit 1; --partial accepts it)");
                if (!o->partial_ok)
                        code = EXIT_FAILED;
        }
        for (size_t i = 0; i < c->n_redacted; i++)
                fprintf(stderr, "gpuvet snapshot: redacted /%s: %u secret value%s (password, token, auth...)\n",
                        c->redacted[i].path, c->redacted[i].values, c->redacted[i].values == 1 ? "" : "s");
        if (c->n_truncated)
                fprintf(stderr, "gpuvet snapshot: warning: %u file(s) over %u MiB kept to that size "
                                "(gpuvet refuses files this large, and the replay will too)\n",
                        c->n_truncated, FSROOT_MAX_FILE >> 20);
        if (strcmp(o->output, "-") != 0)
                fprintf(stderr, "gpuvet snapshot: wrote %s: %u files, %u directories, %u symlinks, %zu bytes\n",
                        o->output, c->n_files, c->n_dirs, c->n_links, archive_len);
        return code;
}

static void capture_free(struct capture *c) {
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

/* Gather the facts while recording which files they read, capture those files, and write
 * the archive. Returns the exit code. */
static int take_snapshot(const struct snapshot_cli *o, const struct common_options *common, struct fsroot *fs,
                         struct gpudb *db) {
        struct capture c = {.root_fd = open(common->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
        if (c.root_fd < 0) {
                fprintf(stderr, "gpuvet snapshot: --root %s: %s\n", common->root, strerror(errno));
                return EXIT_USAGE;
        }
        /* On a terminal only: the run's own messages are what a log wants. */
        struct progress progress;
        progress_init(&progress, !o->no_progress && isatty(STDERR_FILENO));
        if (progress_begin(&progress, monotonic_ms() / 1e3)) {
                progress_line(&progress, "snapshot: gathering facts");
                progress_end(&progress);
        }
        fsroot_record(fs, true);
        watchdog_arm(common->timeout_s, "gathering facts");
        struct facts facts;
        int r = facts_gather(fs, db, &facts);
        watchdog_arm(0, "");
        struct membuf archive = {0};
        char err[512] = "";
        int code = EXIT_PASS;
        if (r < 0) {
                fprintf(stderr, "gpuvet snapshot: gathering facts: %s\n", strerror(-r));
                code = EXIT_INTERNAL;
        }
        if (code == EXIT_PASS) {
                /* The capture reads the same files again, so it can block the same way. */
                watchdog_arm(common->timeout_s, "capturing files");
                fsroot_record(fs, false);
                c.fs = fs;
                r = collect(&c, fs);
                if (r == 0)
                        r = build_archive(&c, &facts, common->root, o->compression, &progress, &archive, err,
                                          sizeof(err));
                watchdog_arm(0, "");
                if (r < 0) {
                        fprintf(stderr, "gpuvet snapshot: %s\n", err[0] ? err : strerror(-r));
                        code = EXIT_INTERNAL;
                }
        }
        progress_clear(&progress);
        if (code == EXIT_PASS && (r = write_output(o->output, &archive)) < 0) {
                fprintf(stderr, "gpuvet snapshot: writing %s: %s\n", o->output, atomic_write_strerror(r));
                code = r == -EACCES || r == -ENOENT || r == -ENOTDIR || r == -EISDIR || r == -EROFS ? EXIT_USAGE
                                                                                                    : EXIT_INTERNAL;
        }
        if (code == EXIT_PASS)
                code = report_capture(&c, o, archive.len);
        free(archive.data);
        capture_free(&c);
        facts_done(&facts);
        return code;
}

int cmd_snapshot(int argc, char **argv) {
        struct snapshot_cli o = {0};
        struct cmd_args args;
        int code = cmd_parse(&cmd_snapshot_spec, argc, argv, &o, &args);
        if (code >= 0)
                return code;
        if (!o.output) {
                fprintf(stderr, "gpuvet snapshot: -o FILE.tar is required (see gpuvet snapshot --help)\n");
                return EXIT_USAGE;
        }
        int how = compression_for(o.output);
        if (how < 0) {
                char suffix[256];
                const char *sfx = suffix_of(o.output);
                fprintf(stderr,
                        "gpuvet snapshot: -o: %s%s%s: expected .tar, .tar.gz (.tgz), .tar.xz (.txz) or .tar.zst (.tzst), "
                        "which choose the compression\n",
                        *sfx ? "unknown suffix \"" : "no suffix", *sfx ? text_safe(sfx, suffix, sizeof(suffix)) : "",
                        *sfx ? "\"" : "");
                return EXIT_USAGE;
        }
        o.compression = (enum compression)how;
        char lib_err[512];
        if (libarchive_load(lib_err, sizeof(lib_err)) < 0) {
                fprintf(stderr, "gpuvet snapshot: %s (install libarchive13)\n", lib_err);
                return EXIT_INTERNAL;
        }
        struct fsroot *fs;
        struct gpudb *db;
        if ((code = open_inputs("snapshot", &args.common, &fs, &db)) != 0)
                return code;
        code = take_snapshot(&o, &args.common, fs, db);
        gpudb_free(db);
        fsroot_free(fs);
        return code;
}

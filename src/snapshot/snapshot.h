/* gpuvet snapshot's capture (snapshot/archive.c): the files a fact gathering read, each
 * captured from the root, and the tar archive of them built in memory; the command
 * (src/cmd/snapshot.c) gathers the facts with the recorder on, calls these, and reports. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct facts;
struct fsroot;
struct progress;

/* The file in the archive that says what it holds, what was left out and what redacted. */
#define SNAPSHOT_INFO_NAME "gpuvet-snapshot.txt"

/* Why a path is in the snapshot; a path met more than once keeps the strongest reason. */
enum snapshot_reason {
        SNAPSHOT_REASON_PARENT,   /* a directory above something captured */
        SNAPSHOT_REASON_NAME,     /* a name seen in a listed directory, or one whose existence was
                          * tested: kept as a name only (an empty file) */
        SNAPSHOT_REASON_RECORDED, /* opened, listed or resolved by the gatherers */
};

struct snapshot_entry {
        char *path; /* root-relative, no leading '/' */
        enum snapshot_reason reason;
};

struct snapshot_capture {
        int root_fd;
        struct fsroot *fs; /* for what must be read the way gatherers read it (/dev/kmsg) */
        struct snapshot_entry *entries;
        size_t n, cap;
        unsigned n_files, n_dirs, n_links, n_devices, n_truncated;
        unsigned n_denied;     /* EACCES/EPERM: root-only files read as a user */
        unsigned n_unreadable; /* other read errors, and FIFOs/devices */
        /* Every path left out, named in the warnings and the info file: a replay of a
         * partial capture can judge differently, so the user must know what is missing. */
        struct snapshot_left_out *left_out;
        size_t n_left_out, cap_left_out;
        /* Files whose secrets were replaced (core/redact.h): named in the info file. */
        struct snapshot_redacted *redacted;
        size_t n_redacted, cap_redacted;
};

struct snapshot_redacted {
        char *path; /* root-relative */
        unsigned values;
};

struct snapshot_left_out {
        char *path; /* root-relative */
        int err;    /* errno, or SNAPSHOT_NOT_REGULAR */
        bool dir;   /* a directory that could not be listed */
};
#define SNAPSHOT_NOT_REGULAR (-1)

struct snapshot_membuf {
        char *data;
        size_t len, cap;
};

/* The compression -o's suffix asks for, as tar -a chooses it: an operator who types
 * node.tar.gz means gzip, and a name that promises one format while holding another breaks
 * `tar -xzf` and every tool that trusts the name. */
enum snapshot_compression {
        SNAPSHOT_COMPRESS_NONE,
        SNAPSHOT_COMPRESS_GZIP,
        SNAPSHOT_COMPRESS_XZ,
        SNAPSHOT_COMPRESS_ZSTD,
};

/* libarchive, loaded (not linked) when a snapshot is written. Returns 0, or <0 with err. */
int snapshot_libarchive_load(char *err, size_t errsize);

/* The compression for path ("-": none); -1 when its suffix is none of the table's. */
int snapshot_compression_for(const char *path);
/* The suffix of path's last component as a reader sees it (".tar.bz2", ".zip"), for the
 * message that refuses it; "" for a name without one. */
const char *snapshot_suffix_of(const char *path);

/* Every path fs recorded into c, with its parents and a listed directory's children.
 * Returns 0 or a negative errno. */
int snapshot_collect(struct snapshot_capture *c, struct fsroot *fs);
/* Capture each of c's paths and write the archive, with its info file, into out. Returns 0
 * or a negative errno (with err for an archive error). */
int snapshot_build_archive(struct snapshot_capture *c, const struct facts *f, const char *root,
                           enum snapshot_compression how, struct progress *progress, struct snapshot_membuf *out,
                           char *err, size_t errsize);
/* m to path atomically (mode 0600), or "-" to standard output. Returns 0 or a negative errno. */
int snapshot_write_output(const char *path, const struct snapshot_membuf *m);
/* Why l was left out, in words. */
const char *snapshot_left_out_why(const struct snapshot_left_out *l);
void snapshot_capture_free(struct snapshot_capture *c);

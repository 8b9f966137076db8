/* gpuvet snapshot: capture the files the checks read, as a tar that replays with --root;
 * the options, the run and its report. The capture and the archive are src/snapshot/. */
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/specs.h"
#include "core/atomic_file.h"
#include "core/deadline.h"
#include "core/fsroot.h"
#include "core/progress.h"
#include "data/gpudb.h"
#include "report/text_safe.h"
#include "snapshot/snapshot.h"
#include "sys/facts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct snapshot_cli {
        const char *output;
        enum snapshot_compression compression;
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

/* Left-out paths named on stderr; the info file in the archive lists them all. */
#define LEFT_OUT_SHOWN 20

/* What did not go into the archive, and its size; 1 (EXIT_FAILED) for a partial capture
 * without --partial, else 0. */
static int report_capture(const struct snapshot_capture *c, const struct snapshot_cli *o, size_t archive_len) {
        int code = EXIT_PASS;
        for (size_t i = 0; i < c->n_left_out && i < LEFT_OUT_SHOWN; i++)
                fprintf(stderr, "gpuvet snapshot: warning: left out /%s%s: %s\n", c->left_out[i].path,
                        c->left_out[i].dir ? " (a directory: its entries)" : "",
                        snapshot_left_out_why(&c->left_out[i]));
        if (c->n_left_out > LEFT_OUT_SHOWN)
                fprintf(stderr, "gpuvet snapshot: warning: ... and %zu more (all listed in %s in the archive)\n",
                        c->n_left_out - LEFT_OUT_SHOWN, SNAPSHOT_INFO_NAME);
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

/* Gather the facts while recording which files they read, capture those files, and write
 * the archive. Returns the exit code. */
static int take_snapshot(const struct snapshot_cli *o, const struct common_options *common, struct fsroot *fs,
                         struct gpudb *db) {
        struct snapshot_capture c = {.root_fd = open(common->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
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
        struct snapshot_membuf archive = {0};
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
                r = snapshot_collect(&c, fs);
                if (r == 0)
                        r = snapshot_build_archive(&c, &facts, common->root, o->compression, &progress, &archive, err,
                                          sizeof(err));
                watchdog_arm(0, "");
                if (r < 0) {
                        fprintf(stderr, "gpuvet snapshot: %s\n", err[0] ? err : strerror(-r));
                        code = EXIT_INTERNAL;
                }
        }
        progress_clear(&progress);
        if (code == EXIT_PASS && (r = snapshot_write_output(o->output, &archive)) < 0) {
                fprintf(stderr, "gpuvet snapshot: writing %s: %s\n", o->output, atomic_write_strerror(r));
                code = r == -EACCES || r == -ENOENT || r == -ENOTDIR || r == -EISDIR || r == -EROFS ? EXIT_USAGE
                                                                                                    : EXIT_INTERNAL;
        }
        if (code == EXIT_PASS)
                code = report_capture(&c, o, archive.len);
        free(archive.data);
        snapshot_capture_free(&c);
        facts_done(&facts);
        return code;
}

static int snapshot_main(void *cli, const struct cmd_args *args) {
        struct snapshot_cli *o = cli;
        if (!o->output) {
                fprintf(stderr, "gpuvet snapshot: -o FILE.tar is required (see gpuvet snapshot --help)\n");
                return EXIT_USAGE;
        }
        int how = snapshot_compression_for(o->output);
        if (how < 0) {
                char suffix[256];
                const char *sfx = snapshot_suffix_of(o->output);
                fprintf(stderr,
                        "gpuvet snapshot: -o: %s%s%s: expected .tar, .tar.gz (.tgz), .tar.xz (.txz) or .tar.zst (.tzst), "
                        "which choose the compression\n",
                        *sfx ? "unknown suffix \"" : "no suffix", *sfx ? text_safe(sfx, suffix, sizeof(suffix)) : "",
                        *sfx ? "\"" : "");
                return EXIT_USAGE;
        }
        o->compression = (enum snapshot_compression)how;
        char lib_err[512];
        if (snapshot_libarchive_load(lib_err, sizeof(lib_err)) < 0) {
                fprintf(stderr, "gpuvet snapshot: %s (install libarchive13)\n", lib_err);
                return EXIT_INTERNAL;
        }
        struct fsroot *fs;
        struct gpudb *db;
        int code = open_inputs("snapshot", &args->common, &fs, &db);
        if (code != 0)
                return code;
        code = take_snapshot(o, &args->common, fs, db);
        gpudb_free(db);
        fsroot_free(fs);
        return code;
}

int cmd_snapshot(int argc, char **argv) {
        return cmd_parse_run(&cmd_snapshot_spec, argc, argv, &(struct snapshot_cli){0}, snapshot_main);
}

/* `gpuvet report --html OUT.html REPORT.json...`: one node's documents (check, burn, bench)
 * as one self-contained page (report/html_report.c; docs/report-html.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/baselines.h"
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/specs.h"
#include "core/atomic_file.h"
#include "core/read_fd.h"
#include "report/html_report.h"
#include "report/text_safe.h"

struct report_cli {
        const char *html;
};

enum report_opt { REPORT_HTML = 0x100 };

static int report_option(int id, const struct opt_value *v, void *ctx) {
        struct report_cli *o = ctx;
        if (id == REPORT_HTML)
                o->html = v->text;
        return -1;
}

static const struct opt report_options[] = {
        {.name = "html", .kind = ARG_OUTPUT, .id = REPORT_HTML,
         .help = "the page to write (atomically); alone, or \"-\", to standard output. Required"},
        {0},
};

const struct cmd_spec cmd_report_spec = {
        .name = "report",
        .synopsis = "--html [FILE|-] REPORT.json...",
        .summary = "One node's documents as one self-contained HTML page (inline CSS and SVG, nothing fetched).",
        .description = "The page shows the node's verdict, the failures first with their remedies, then warnings and "
                       "errors, the passing results folded, the inventory, bench figures as bars against their "
                       "baselines, burn telemetry as charts. Takes check's and burn's reports (gpuvet.report/1), "
                       "bench's (gpuvet.bench/2) and bench nccl/rdma/train's, all of one node.",
        .opts = report_options,
        .takes_operands = true,
        .no_default_timeout = true,
        .timeout_help = "not used: report reads only the documents named",
        .notes = "--data-dir: baselines.json from DIR, the pass ratios marked on the bench bars. --root is not "
                 "used either. docs/report-html.md has the rest.",
        .exit_status = "0 written, 2 usage or bad input (a document that does not parse, larger than 64 MiB, of an "
                       "unknown schema, with a field of the wrong type, or of another node: nothing is written), "
                       "3 internal error (the page could not be written).",
        .on_option = report_option,
};

static void say(const char *what) {
        fputs("gpuvet report: ", stderr);
        text_safe_write(stderr, what);
        fputc('\n', stderr);
}

/* Far above any report gpuvet writes (a check report of 8 GPUs is about 100 KB, a day's burn
 * telemetry a few MB) and the cap fleet reads node reports with: jansson's tree of a 317 MB
 * report took 2.3 GB and 24 s before the page was even begun. */
#define REPORT_MAX_BYTES (64u << 20)

/* The file's bytes, at most REPORT_MAX_BYTES (*buf to free). Returns 0 or an exit code after
 * a message naming the file. */
static int read_document(const char *file, char **buf, size_t *len, struct stat *st) {
        char msg[1024];
        /* Not opened before it is known to be a regular file: opening a FIFO with no writer
         * blocks. O_NONBLOCK covers one swapped in between. */
        if (stat(file, st) < 0) {
                snprintf(msg, sizeof(msg), "%s: %s", file, strerror(errno));
                say(msg);
                return EXIT_USAGE;
        }
        if (!S_ISREG(st->st_mode)) {
                snprintf(msg, sizeof(msg), "%s: not a regular file", file);
                say(msg);
                return EXIT_USAGE;
        }
        int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0 || fstat(fd, st) < 0) {
                snprintf(msg, sizeof(msg), "%s: %s", file, strerror(errno));
                say(msg);
                if (fd >= 0)
                        close(fd);
                return EXIT_USAGE;
        }
        int code = EXIT_USAGE;
        if (!S_ISREG(st->st_mode)) {
                snprintf(msg, sizeof(msg), "%s: not a regular file", file);
        } else if (st->st_size > (off_t)REPORT_MAX_BYTES) {
                snprintf(msg, sizeof(msg), "%s: larger than %u MiB: not a report gpuvet wrote", file,
                         REPORT_MAX_BYTES >> 20);
        } else {
                /* One more byte than the cap: a file that grew since fstat is caught too. */
                int r = read_fd_alloc(fd, (size_t)REPORT_MAX_BYTES + 1, buf, len);
                if (r == 0) {
                        code = 0;
                } else if (r == 1) {
                        free(*buf);
                        *buf = NULL;
                        snprintf(msg, sizeof(msg), "%s: larger than %u MiB: not a report gpuvet wrote", file,
                                 REPORT_MAX_BYTES >> 20);
                } else {
                        snprintf(msg, sizeof(msg), "%s: %s", file, strerror(-r));
                        if (r == -ENOMEM)
                                code = EXIT_INTERNAL;
                }
        }
        close(fd);
        if (code != 0)
                say(msg);
        return code;
}

/* Every document parsed, with its file's mtime as the time it was written. Returns 0 or an
 * exit code after a message naming the file. */
static int load_documents(char **files, size_t n, struct html_report_input *in) {
        for (size_t i = 0; i < n; i++) {
                char msg[1024], *buf = NULL;
                size_t len = 0;
                struct stat st;
                int code = read_document(files[i], &buf, &len, &st);
                if (code != 0)
                        return code;
                json_error_t e;
                json_t *doc = json_loadb(buf, len, 0, &e);
                free(buf);
                if (!doc) {
                        if (e.line > 0)
                                snprintf(msg, sizeof(msg), "%s: line %d: %s: not a JSON document", files[i], e.line,
                                         e.text);
                        else
                                snprintf(msg, sizeof(msg), "%s: %s", files[i], e.text);
                        say(msg);
                        return EXIT_USAGE;
                }
                in[i] = (struct html_report_input){.file = files[i], .doc = doc, .written = st.st_mtime};
        }
        return 0;
}

static int write_page(const char *path, const char *html, size_t len) {
        if (strcmp(path, "-") == 0) {
                errno = 0;
                if (fwrite(html, 1, len, stdout) != len || fflush(stdout) != 0) {
                        stdout_failed(errno);
                        return EXIT_INTERNAL;
                }
                return EXIT_PASS;
        }
        int r = atomic_write(path, html, len);
        if (r < 0) {
                char msg[1024];
                snprintf(msg, sizeof(msg), "writing %s: %s", path, atomic_write_strerror(r));
                say(msg);
                return EXIT_INTERNAL;
        }
        return EXIT_PASS;
}

static int render(const char *out, const struct html_report_input *in, size_t n, const struct baselines *limits) {
        char *html = NULL, err[1024];
        size_t len = 0;
        int r = html_report_render(in, n, limits, &html, &len, err, sizeof(err));
        if (r == -ENOMEM) {
                say("out of memory rendering the page");
                return EXIT_INTERNAL;
        }
        if (r < 0) {
                say(err);
                return EXIT_USAGE;
        }
        int code = write_page(out, html, len);
        free(html);
        return code;
}

static int report_main(void *cli, const struct cmd_args *args) {
        const struct report_cli *o = cli;
        if (!o->html)
                return cmd_usage_error("report", "--html FILE is required (the page to write; - for standard output)");
        size_t n = args->n_operands;
        if (n == 0)
                return cmd_usage_error("report", "no REPORT.json given (check, burn or bench JSON documents)");
        struct baselines *limits = NULL;
        char err[512];
        int r = baselines_load(args->common.data_dir, &limits, err, sizeof(err));
        if (r < 0) {
                say(r == -ENOMEM ? "out of memory loading baselines.json" : err);
                return r == -ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
        }
        struct html_report_input *in = calloc(n, sizeof(*in));
        if (!in) {
                baselines_free(limits);
                say("out of memory");
                return EXIT_INTERNAL;
        }
        int code = load_documents(args->operands, n, in);
        if (code == 0)
                code = render(o->html, in, n, limits);
        for (size_t i = 0; i < n; i++)
                json_decref(in[i].doc);
        free(in);
        baselines_free(limits);
        return code;
}

int cmd_report(int argc, char **argv) {
        return cmd_parse_run(&cmd_report_spec, argc, argv, &(struct report_cli){0}, report_main);
}

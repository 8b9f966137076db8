/* `gpuvet fleet REPORT...`: many nodes' reports aggregated (src/fleet/), written as text
 * or gpuvet.fleet/1 (src/report/fleet_*.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/specs.h"
#include "core/deadline.h"
#include "data/fleet_rules.h"
#include "fleet/fleet.h"
#include "core/atomic_file.h"
#include "report/fleet_html.h"
#include "report/fleet_json.h"
#include "report/fleet_text.h"
#include "report/text_safe.h"
#include "report/text_wrap.h"

/* Added to the exit status when inputs were skipped: a script tests (status & 4). */
#define EXIT_FLEET_SKIPPED 4

struct fleet_cli {
        const char *json;
        const char *html;
        const char *rules;
        bool strict, no_progress;
        unsigned threads;
};

enum fleet_opt { FLEET_JSON = 'j', FLEET_HTML = 0x100, FLEET_RULES, FLEET_STRICT, FLEET_THREADS, FLEET_NO_PROGRESS };

static int fleet_option(int id, const struct opt_value *v, void *ctx) {
        struct fleet_cli *o = ctx;
        switch ((enum fleet_opt)id) {
        case FLEET_JSON: o->json = v->text; break;
        case FLEET_HTML: o->html = v->text; break;
        case FLEET_RULES: o->rules = v->text; break;
        case FLEET_STRICT: o->strict = true; break;
        case FLEET_THREADS: o->threads = (unsigned)v->n; break;
        case FLEET_NO_PROGRESS: o->no_progress = true; break;
        }
        return -1;
}

static const struct opt fleet_options[] = {
        OPT_JSON("gpuvet.fleet/1"),
        {.name = "html", .kind = ARG_OUTPUT, .id = FLEET_HTML,
         .help = "also write the fleet's page to FILE (one self-contained file, charts of every figure per GPU "
                 "model); alone, or \"-\", to standard output instead of the text (not with --json -)"},
        {.name = "rules", .kind = ARG_FILE, .id = FLEET_RULES,
         .def = "fleet_rules.json from --data-dir, else built in", .help = "the outlier rules"},
        {.name = "strict", .kind = ARG_FLAG, .id = FLEET_STRICT,
         .help = "an input that cannot be read is an error (exit 2), not a warning"},
        {.name = "threads", .kind = ARG_NUMBER, .id = FLEET_THREADS, .min = 1, .max = 64,
         .def = "one per online CPU", .help = "read with this many threads"},
        {.name = "no-progress", .kind = ARG_FLAG, .id = FLEET_NO_PROGRESS,
         .help = "no progress line on a terminal's standard error"},
        {0},
};

const struct cmd_spec cmd_fleet_spec = {
        .name = "fleet",
        .synopsis = "[OPTIONS] REPORT|DIR...",
        .summary = "Aggregate node reports: check and burn (gpuvet.report/1), bench (gpuvet.bench/2), bench nccl, "
                   "rdma and train.",
        .description = "Directories are walked for *.json (validation_results/<host>/ as the Ansible play fetches "
                       "them). Gives each node's verdict, the checks that failed where, each benchmark figure's "
                       "distribution per GPU model, outliers against the fleet's median, and nodes whose driver, "
                       "CUDA, kernel or VBIOS differ from the majority.",
        .opts = fleet_options,
        .color = true,
        .takes_operands = true,
        .no_default_timeout = true,
        .timeout_help = "give up after this long (a hung network mount) (default: none)",
        .notes = "--root is not used: fleet reads only the inputs named. docs/fleet.md has the rest.",
        .exit_status = "0 every node passes, no outlier, no drift; 1 a node warns, fails or errs, or an outlier or "
                       "drift was found; 4 (added to 0 or 1) inputs were skipped; 2 usage, bad rules, no report "
                       "read, or (--strict) an input skipped; 3 internal error or output not written.",
        .on_option = fleet_option,
};

static bool to_stdout(const char *path) {
        return path && strcmp(path, "-") == 0;
}

/* The absolute directory the page goes to (standard output: the working directory), which
 * its links to the nodes' pages are relative to; NULL when it cannot be resolved (the links
 * are then absolute). */
static char *page_dir(const char *path) {
        if (to_stdout(path))
                return realpath(".", NULL);
        const char *slash = strrchr(path, '/');
        if (!slash)
                return realpath(".", NULL);
        if (slash == path)
                return strdup("/");
        char *dir = strndup(path, (size_t)(slash - path));
        char *abs = dir ? realpath(dir, NULL) : NULL;
        free(dir);
        return abs;
}

static int write_html(const char *path, const struct fleet *f) {
        size_t len;
        char *dir = page_dir(path);
        char *html = fleet_html(f, dir, &len);
        free(dir);
        if (!html) {
                fprintf(stderr, "gpuvet fleet: out of memory building the page\n");
                return EXIT_INTERNAL;
        }
        int code = EXIT_PASS;
        if (to_stdout(path)) {
                errno = 0;
                if (fwrite(html, 1, len, stdout) != len || fflush(stdout) != 0) {
                        stdout_failed(errno);
                        code = EXIT_INTERNAL;
                }
        } else {
                int r = atomic_write(path, html, len);
                if (r < 0) {
                        fputs("gpuvet fleet: writing ", stderr);
                        text_safe_write(stderr, path);
                        fprintf(stderr, ": %s\n", atomic_write_strerror(r));
                        code = EXIT_INTERNAL;
                }
        }
        free(html);
        return code;
}

static int write_outputs(const struct fleet_cli *o, const struct fleet *f) {
        if (!to_stdout(o->json) && !to_stdout(o->html)) {
                struct text_options topt = {.color = text_want_color(stdout), .width = text_wrap_width(stdout)};
                char *text = NULL;
                size_t len = 0;
                FILE *mem = topt.width ? open_memstream(&text, &len) : NULL;
                fleet_text(mem ? mem : stdout, f, &topt);
                /* a memory stream fails only when memory is short: what it holds is printed */
                if (mem && fclose(mem) == 0 && text)
                        text_wrap_block(stdout, text, topt.width);
                else if (mem && text)
                        fputs(text, stdout);
                free(text);
        }
        int code = o->json ? write_json_output("fleet", o->json, fleet_json(f)) : EXIT_PASS;
        if (code == EXIT_PASS && o->html)
                code = write_html(o->html, f);
        return code;
}

static int exit_status(const struct fleet_cli *o, const struct fleet *f) {
        if (f->n_docs == 0 && f->n_skipped == 0) {
                /* Only what fleet passes by quietly was found: its own aggregates. */
                fprintf(stderr, "gpuvet fleet: no node report in the inputs named, only fleet's own aggregates "
                                "(gpuvet.fleet/1)\n");
                return EXIT_USAGE;
        }
        if (f->n_docs == 0) {
                fprintf(stderr, "gpuvet fleet: no report could be read from the %zu input%s named\n", f->n_skipped,
                        f->n_skipped == 1 ? "" : "s");
                return EXIT_USAGE;
        }
        if (o->strict && f->n_skipped) {
                fprintf(stderr, "gpuvet fleet: --strict: %zu input%s skipped\n", f->n_skipped,
                        f->n_skipped == 1 ? "" : "s");
                return EXIT_USAGE;
        }
        int code = f->overall == STATUS_PASS ? EXIT_PASS : EXIT_FAILED;
        return code + (f->n_skipped ? EXIT_FLEET_SKIPPED : 0);
}

static int fleet_run(const struct fleet_cli *o, const struct common_options *common, char *const *paths,
                     size_t n_paths) {
        struct fleet_rules rules;
        char err[1024];
        int r = fleet_rules_load(common->data_dir, o->rules, &rules, err, sizeof(err));
        if (r < 0) {
                /* The reason quotes the rules file's name and its text: no raw escapes. */
                fputs("gpuvet fleet: ", stderr);
                text_safe_write(stderr, r == -ENOMEM ? "out of memory loading the rules" : err);
                fputc('\n', stderr);
                return r == -ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
        }
        double t0 = monotonic_ms();
        struct fleet f = {.keep_values = o->html != NULL};
        /* on a terminal only: a log has the skipped inputs and the verdict */
        r = fleet_read_inputs(&f, paths, n_paths, o->threads, !o->no_progress && isatty(STDERR_FILENO));
        /* File names and a document's schema string can hold terminal escapes: written as the
         * text report writes them. */
        for (size_t i = 0; r == 0 && i < f.n_skipped; i++) {
                fputs("gpuvet fleet: skipping ", stderr);
                text_safe_write(stderr, f.skipped[i].path);
                fputs(": ", stderr);
                text_safe_write(stderr, f.skipped[i].reason);
                fputc('\n', stderr);
        }
        if (r == 0)
                r = fleet_aggregate(&f, &rules);
        fleet_rules_done(&rules);
        if (r < 0) {
                fprintf(stderr, "gpuvet fleet: out of memory aggregating %zu documents\n", f.n_docs);
                fleet_free(&f);
                return EXIT_INTERNAL;
        }
        f.duration_ms = monotonic_ms() - t0;
        int code = write_outputs(o, &f);
        if (code == EXIT_PASS)
                code = exit_status(o, &f);
        fleet_free(&f);
        return code;
}

static int fleet_main(void *cli, const struct cmd_args *args) {
        const struct fleet_cli *o = cli;
        if (args->n_operands == 0)
                return cmd_usage_error("fleet", "name at least one report or directory (--help)");
        if (to_stdout(o->json) && to_stdout(o->html))
                return cmd_usage_error("fleet", "--json - and --html - would both write to standard output: give one a file");
        /* Reading regular files cannot block for long; --timeout guards a stuck network mount. */
        if (args->common.timeout_s)
                watchdog_arm(args->common.timeout_s, "reading the reports");
        return fleet_run(o, &args->common, args->operands, args->n_operands);
}

int cmd_fleet(int argc, char **argv) {
        return cmd_parse_run(&cmd_fleet_spec, argc, argv, &(struct fleet_cli){0}, fleet_main);
}

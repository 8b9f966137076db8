/* `gpuvet fleet REPORT...`: many nodes' reports aggregated (src/fleet/), written as text
 * or gpuvet.fleet/1 (src/report/fleet_*.c). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "core/deadline.h"
#include "data/fleet_rules.h"
#include "fleet/fleet.h"
#include "core/atomic_file.h"
#include "report/fleet_html.h"
#include "report/fleet_json.h"
#include "report/fleet_text.h"
#include "report/text_safe.h"

static const char usage[] =
        "Usage: gpuvet fleet [OPTIONS] REPORT|DIR...\n"
        "\n"
        "Aggregate node reports: check and burn (gpuvet.report/1), bench (gpuvet.bench/2), bench\n"
        "nccl, rdma and train. Directories are walked for *.json (validation_results/<host>/ as the\n"
        "Ansible play fetches them). Gives each node's verdict, the checks that failed where, each\n"
        "benchmark figure's distribution per GPU model, outliers against the fleet's median, and\n"
        "nodes whose driver, CUDA, kernel or VBIOS differ from the majority.\n"
        "\n"
        "  -j, --json FILE     write gpuvet.fleet/1 to FILE (\"-\": standard output, instead of text)\n"
        "      --html FILE     write the fleet's page to FILE (\"-\": standard output, instead of text):\n"
        "                      one self-contained file, charts of every figure per GPU model\n"
        "      --rules FILE    outlier rules (default: fleet_rules.json from --data-dir, else built in)\n"
        "      --strict        an input that cannot be read is an error (exit 2), not a warning\n"
        "      --threads N     read with N threads (default: one per online CPU)\n"
        "      --no-progress   no progress line on a terminal's standard error\n"
        "\n"
        "Exit status: 0 every node passes, no outlier, no drift; 1 a node warns, fails or errs, or\n"
        "an outlier or drift was found; 4 (added to 0 or 1) inputs were skipped; 2 usage, bad\n"
        "rules, no report read, or (--strict) an input skipped; 3 internal error or output not\n"
        "written. docs/fleet.md has the rest.\n";

/* Added to the exit status when inputs were skipped: a script tests (status & 4). */
#define EXIT_FLEET_SKIPPED 4

enum { OPT_RULES = 0x200, OPT_STRICT, OPT_THREADS, OPT_HTML, OPT_NO_PROGRESS };

struct fleet_cli {
        const char *json;
        const char *html;
        const char *rules;
        bool strict, no_progress;
        unsigned threads;
};

static int fleet_option(int opt, const char *arg, void *ctx) {
        struct fleet_cli *o = ctx;
        switch (opt) {
        case 'j': o->json = arg; break;
        case OPT_HTML: o->html = arg; break;
        case OPT_RULES: o->rules = arg; break;
        case OPT_STRICT: o->strict = true; break;
        case OPT_NO_PROGRESS: o->no_progress = true; break;
        case OPT_THREADS:
                if (!cmd_parse_uint(arg, 1, 64, &o->threads))
                        return cmd_usage_error("fleet", "--threads: expected a number from 1 to 64, not \"%s\"", arg);
                break;
        default: return EXIT_INTERNAL;
        }
        return -1;
}

static bool to_stdout(const char *path) {
        return path && strcmp(path, "-") == 0;
}

static int write_html(const char *path, const struct fleet *f) {
        size_t len;
        char *html = fleet_html(f, &len);
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
                struct text_options topt = {.color = text_want_color(stdout)};
                fleet_text(stdout, f, &topt);
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

int cmd_fleet(int argc, char **argv) {
        static const struct option own[] = {
                {"json", required_argument, NULL, 'j'},
                {"html", required_argument, NULL, OPT_HTML},
                {"rules", required_argument, NULL, OPT_RULES},
                {"strict", no_argument, NULL, OPT_STRICT},
                {"threads", required_argument, NULL, OPT_THREADS},
                {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
                {NULL, 0, NULL, 0},
        };
        static const struct cmd_spec spec = {
                .name = "fleet",
                .usage = usage,
                .short_opts = "j:",
                .own = own,
                .operands = true,
                .no_default_timeout = true,
                .own_option = fleet_option,
        };
        struct fleet_cli o = {0};
        struct cmd_args args;
        int code = cmd_parse(&spec, argc, argv, &o, &args);
        if (code >= 0)
                return code;
        if (args.first_operand >= argc)
                return cmd_usage_error("fleet", "name at least one report or directory (--help)");
        if (to_stdout(o.json) && to_stdout(o.html))
                return cmd_usage_error("fleet", "--json - and --html - would both write to standard output: give one a file");
        if (o.json && (code = output_path_usable("fleet", "--json", o.json)) != 0)
                return code;
        if (o.html && (code = output_path_usable("fleet", "--html", o.html)) != 0)
                return code;
        /* Reading regular files cannot block for long; --timeout guards a stuck network mount. */
        if (args.common.timeout_s)
                watchdog_arm(args.common.timeout_s, "reading the reports");
        return fleet_run(&o, &args.common, argv + args.first_operand, (size_t)(argc - args.first_operand));
}

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "core/fsroot.h"
#include "data/compat.h"
#include "data/gpudb.h"
#include "report/detect_report.h"
#include "sys/facts.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
        "Usage: gpuvet detect [OPTIONS]\n"
        "\n"
        "For each NVIDIA GPU: model, architecture and compute capability, the driver branch and\n"
        "CUDA version to install, and which CUDA toolkits, PyTorch wheels and NGC containers run\n"
        "on the installed driver (with the reason when one does not).\n"
        "\n"
        "Options:\n"
        "  -j, --json            write the answer as JSON (schema gpuvet.detect/1, see docs/detect.md)\n"
        "      --list-gpus       print the GPU table gpuvet judges by (architectures, models,\n"
        "                        figures, PCI ids) instead; with --json as gpuvet.gpus/1\n"
        "      --for-driver D    judge for driver D instead of the installed one: a version\n"
        "                        (535.154.05) or a branch (580, R580: its newest known driver);\n"
        "                        what an installer asks before it installs D\n"
        "      --timeout SEC     give up (exit 3) if gathering blocks this long (default 30)\n"
        "  -r, --root DIR        read /sys and /proc under DIR (a fixture or snapshot);\n"
        "                        default / or $GPUVET_FSROOT\n"
        "      --data-dir DIR    gpus.json and compat.json from DIR ($GPUVET_DATA_DIR)\n"
        "  -h, --help            this help\n"
        "\n"
        "Exit status: 0 done (also with no GPU), 2 usage or bad input, 3 internal error.\n";

/* ---- the command ---- */

/* doc on standard output, in key order; EXIT_PASS or EXIT_INTERNAL after a failed write. */
static int print_json(const json_t *doc) {
        if (json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0 || fputc('\n', stdout) == EOF) {
                stdout_failed(errno);
                return EXIT_INTERNAL;
        }
        return EXIT_PASS;
}

static int list_gpu_table(const struct common_options *common, bool json) {
        struct gpudb *db;
        char err[512];
        int r = gpudb_load(common->data_dir, &db, err, sizeof(err));
        if (r < 0) {
                fprintf(stderr, "gpuvet: %s\n", r == -ENOMEM ? "out of memory loading gpus.json" : err);
                return r == -ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
        }
        json_t *doc = detect_gpu_table(db);
        int code = EXIT_PASS;
        if (!doc) {
                fprintf(stderr, "gpuvet detect: out of memory building the table\n");
                code = EXIT_INTERNAL;
        } else if (json) {
                code = print_json(doc);
        } else {
                detect_write_gpu_table(stdout, doc);
        }
        json_decref(doc);
        gpudb_free(db);
        return code;
}

struct detect_cli {
        bool json, list_gpus;
        const char *for_driver;
};

static int detect_option(int opt, const char *arg, void *ctx) {
        struct detect_cli *o = ctx;
        switch (opt) {
        case 'j': o->json = true; break;
        case 'G': o->list_gpus = true; break;
        case 'F': o->for_driver = arg; break;
        }
        return -1;
}

int cmd_detect(int argc, char **argv) {
        static const struct option own[] = {
                {"json", no_argument, NULL, 'j'},
                {"list-gpus", no_argument, NULL, 'G'},
                {"for-driver", required_argument, NULL, 'F'},
                {NULL, 0, NULL, 0},
        };
        static const struct cmd_spec spec = {
                .name = "detect", .usage = usage, .short_opts = "j", .own = own, .own_option = detect_option,
        };
        struct detect_cli o = {0};
        struct cmd_args args;
        int code = cmd_parse(&spec, argc, argv, &o, &args);
        if (code >= 0)
                return code;
        struct common_options common = args.common;
        bool json = o.json;
        const char *for_driver = o.for_driver;
        if (o.list_gpus)
                return list_gpu_table(&common, json);

        struct compat *c;
        char err[512];
        int r = compat_load(common.data_dir, &c, err, sizeof(err));
        if (r < 0) {
                fprintf(stderr, "gpuvet: %s\n", r == -ENOMEM ? "out of memory loading compat.json" : err);
                return r == -ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
        }
        struct detect_for_driver planned;
        if (for_driver && detect_resolve_driver(c, for_driver, &planned, err, sizeof(err)) < 0) {
                fprintf(stderr, "gpuvet detect: %s\n", err);
                compat_free(c);
                return EXIT_USAGE;
        }
        struct fsroot *fs;
        struct gpudb *db;
        code = open_inputs("detect", &common, &fs, &db);
        if (code) {
                compat_free(c);
                return code;
        }
        watchdog_arm(common.timeout_s, "gathering facts");
        struct facts facts;
        r = facts_gather(fs, db, &facts);
        watchdog_arm(0, "");
        json_t *doc = r < 0 ? NULL : detect_report(&facts, c, common.root, for_driver ? &planned : NULL);
        code = EXIT_PASS;
        if (r < 0) {
                fprintf(stderr, "gpuvet detect: gathering facts: %s\n", strerror(-r));
                code = EXIT_INTERNAL;
        } else if (!doc) {
                fprintf(stderr, "gpuvet detect: out of memory building the answer\n");
                code = EXIT_INTERNAL;
        } else if (json) {
                code = print_json(doc);
        } else {
                detect_write_text(stdout, doc);
        }
        json_decref(doc);
        facts_done(&facts);
        gpudb_free(db);
        fsroot_free(fs);
        compat_free(c);
        return code;
}

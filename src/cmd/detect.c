#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/specs.h"
#include "core/fsroot.h"
#include "data/compat.h"
#include "data/gpudb.h"
#include "report/detect_report.h"
#include "sys/facts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum detect_opt { DETECT_JSON = 'j', DETECT_LIST_GPUS = 0x100, DETECT_FOR_DRIVER };

struct detect_cli {
        const char *json_path; /* "-": the JSON alone on standard output */
        bool list_gpus;
        const char *for_driver;
};

static int detect_option(int id, const struct opt_value *v, void *ctx) {
        struct detect_cli *o = ctx;
        switch ((enum detect_opt)id) {
        case DETECT_JSON: o->json_path = v->text; break;
        case DETECT_LIST_GPUS: o->list_gpus = true; break;
        case DETECT_FOR_DRIVER: o->for_driver = v->text; break;
        }
        return -1;
}

static const struct opt detect_options[] = {
        {.name = "json", .letter = 'j', .kind = ARG_OUTPUT,
         .help = "also write the answer as JSON (schema gpuvet.detect/1, see docs/detect.md; with --list-gpus "
                 "gpuvet.gpus/1) to FILE; alone, or \"-\", to standard output, which then holds only the JSON"},
        {.name = "list-gpus", .kind = ARG_FLAG, .id = DETECT_LIST_GPUS,
         .help = "print the GPU table gpuvet judges by (architectures, models, figures, PCI ids) instead"},
        {.name = "for-driver", .kind = ARG_TEXT, .id = DETECT_FOR_DRIVER, .metavar = "VERSION",
         .help = "judge for this driver instead of the installed one: a version (535.154.05) or a branch (580, "
                 "R580: its newest known driver); what an installer asks before it installs it"},
        {0},
};

const struct cmd_spec cmd_detect_spec = {
        .name = "detect",
        .summary = "For each NVIDIA GPU: model, architecture and compute capability, the driver branch and CUDA "
                   "version to install, and which CUDA toolkits, PyTorch wheels and NGC containers run on the "
                   "installed driver (with the reason when one does not).",
        .opts = detect_options,
        .notes = "--data-dir gives gpus.json and compat.json.",
        .exit_status = "0 done (also with no GPU), 2 usage or bad input, 3 internal error.",
        .on_option = detect_option,
};

/* ---- the command ---- */

/* doc as --json asks: alone on standard output ("-"), in key order, or into the file;
 * EXIT_PASS or EXIT_INTERNAL after a failed write. */
static int write_json(const json_t *doc, const char *path) {
        if (strcmp(path, "-") != 0)
                return write_json_output("detect", path, json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER));
        if (json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0 || fputc('\n', stdout) == EOF) {
                stdout_failed(errno);
                return EXIT_INTERNAL;
        }
        return EXIT_PASS;
}

/* The text unless the JSON goes to standard output, then the JSON when asked for. */
static int write_answer(const json_t *doc, const char *json_path, void (*text)(FILE *, const json_t *)) {
        if (!json_path || strcmp(json_path, "-") != 0)
                text(stdout, doc);
        return json_path ? write_json(doc, json_path) : EXIT_PASS;
}

static int list_gpu_table(const struct common_options *common, const char *json_path) {
        struct gpudb *db;
        char err[512];
        int r = gpudb_load(common->data_dir, &db, err, sizeof(err));
        if (r < 0)
                return table_load_failed("gpus.json", r, err);
        json_t *doc = detect_gpu_table(db);
        int code = EXIT_PASS;
        if (!doc) {
                fprintf(stderr, "gpuvet detect: out of memory building the table\n");
                code = EXIT_INTERNAL;
        } else {
                code = write_answer(doc, json_path, detect_write_gpu_table);
        }
        json_decref(doc);
        gpudb_free(db);
        return code;
}

static int detect_main(void *cli, const struct cmd_args *args) {
        const struct detect_cli *o = cli;
        struct common_options common = args->common;
        const char *for_driver = o->for_driver;
        if (o->list_gpus)
                return list_gpu_table(&common, o->json_path);

        struct compat *c;
        char err[512];
        int r = compat_load(common.data_dir, &c, err, sizeof(err));
        if (r < 0)
                return table_load_failed("compat.json", r, err);
        struct detect_for_driver planned;
        if (for_driver && detect_resolve_driver(c, for_driver, &planned, err, sizeof(err)) < 0) {
                fprintf(stderr, "gpuvet detect: %s\n", err);
                compat_free(c);
                return EXIT_USAGE;
        }
        struct fsroot *fs;
        struct gpudb *db;
        int code = open_inputs("detect", &common, &fs, &db);
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
        } else {
                code = write_answer(doc, o->json_path, detect_write_text);
        }
        json_decref(doc);
        facts_done(&facts);
        gpudb_free(db);
        fsroot_free(fs);
        compat_free(c);
        return code;
}

int cmd_detect(int argc, char **argv) {
        return cmd_parse_run(&cmd_detect_spec, argc, argv, &(struct detect_cli){0}, detect_main);
}

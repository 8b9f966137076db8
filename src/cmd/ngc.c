/* `gpuvet ngc list|pick|pull|test`: the NGC catalogue (data/ngc.json), the release to use on
 * this node, and (cmd/ngc_run.c) pulling and testing it through the container runtime. */
#include "cmd/ngc.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/machine.h"
#include "cmd/options.h"
#include "cmd/registry.h"
#include "cmd/specs.h"
#include "core/strbuf.h"
#include "sys/facts.h"
#include "core/json_text.h"

/* ---- shared ---- */

int ngc_print_json(json_t *doc, const char *path) {
        if (!doc) {
                fprintf(stderr, "gpuvet ngc: out of memory building the answer\n");
                return EXIT_INTERNAL;
        }
        if (strcmp(path, "-") != 0) {
                char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
                json_decref(doc);
                return write_json_output("ngc", path, text);
        }
        int code = EXIT_PASS;
        if (json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0 || fputc('\n', stdout) == EOF) {
                stdout_failed(errno);
                code = EXIT_INTERNAL;
        }
        json_decref(doc);
        return code;
}

/* ---- list ---- */

static const struct opt list_options[] = {OPT_JSON(NGC_SCHEMA), {0}};

const struct cmd_spec cmd_ngc_list_spec = {
        .name = "ngc list",
        .summary = "The NGC catalogue gpuvet judges by: each image's repository, tag form, test, and its releases "
                   "with their CUDA, the driver that CUDA ships with, the minimum driver and the oldest compute "
                   "capability.",
        .opts = list_options,
        .notes = "--data-dir reads compat.json and ngc.json from DIR. The JSON document is described in docs/ngc.md.",
        .exit_status = "0 listed, 2 usage or bad input, 3 internal error.",
        .on_option = cmd_json_option,
};

static json_t *release_json(const struct ngc_image *img, const struct ngc_release *r) {
        char ref[256], cc[16];
        ngc_ref(img, r, ref, sizeof(ref));
        snprintf(cc, sizeof(cc), "%d.%d", r->judge.min_cc_major, r->judge.min_cc_minor);
        json_t *o = json_object();
        json_object_set_new(o, "release", json_string(r->release));
        json_object_set_new(o, "tag", json_string(r->tag));
        json_object_set_new(o, "ref", json_string(ref));
        json_object_set_new(o, "cuda", json_string(r->cuda));
        json_object_set_new(o, "native_driver", json_string(r->native_driver));
        json_object_set_new(o, "min_driver", json_string(r->min_driver));
        json_t *fwd = json_array();
        for (size_t k = 0; k < r->judge.n_forward_compat; k++)
                json_array_append_new(fwd, json_string(r->judge.forward_compat[k]));
        json_object_set_new(o, "forward_compat", fwd);
        json_object_set_new(o, "min_compute_capability", json_string(cc));
        return o;
}

static int list(int argc, char **argv) {
        const char *json = NULL;
        struct cmd_args args;
        int code = cmd_parse(&cmd_ngc_list_spec, argc, argv, &json, &args);
        if (code >= 0)
                return code;
        struct ngc_data d;
        if ((code = ngc_data_load("ngc list", args.common.data_dir, &d)) != 0)
                return code;
        const struct ngcdb *db = d.db;
        if (json) {
                json_t *doc = json_object(), *images = json_array();
                json_object_set_new(doc, "schema", json_string(NGC_SCHEMA));
                json_object_set_new(doc, "command", json_string("list"));
                json_object_set_new(doc, "as_of", json_text_keep_empty(db->as_of));
                for (size_t i = 0; i < db->n_images; i++) {
                        const struct ngc_image *img = &db->images[i];
                        json_t *o = json_object(), *rels = json_array();
                        json_object_set_new(o, "name", json_string(img->name));
                        json_object_set_new(o, "title", json_string(img->title));
                        json_object_set_new(o, "repository", json_string(img->repository));
                        json_object_set_new(o, "tag_form", json_string(img->tag_form));
                        json_object_set_new(o, "test", json_string(img->test->name));
                        json_object_set_new(o, "note", json_text_keep_empty(img->note));
                        for (size_t k = 0; k < img->n_releases; k++)
                                json_array_append_new(rels, release_json(img, &img->releases[k]));
                        json_object_set_new(o, "releases", rels);
                        json_array_append_new(images, o);
                }
                json_object_set_new(doc, "images", images);
                code = ngc_print_json(doc, json);
        }
        if (ngc_text_wanted(json)) {
                printf("NGC catalogue (%s, as of %s)\n", db->source, db->as_of ? db->as_of : "?");
                for (size_t i = 0; i < db->n_images; i++) {
                        const struct ngc_image *img = &db->images[i];
                        const struct ngc_release *old = &img->releases[0], *new = &img->releases[img->n_releases - 1];
                        printf("\n%s — %s\n  %s:%s, %zu release%s %s .. %s, test: %s\n", img->name, img->title,
                               img->repository, img->tag_form, img->n_releases, img->n_releases == 1 ? "" : "s",
                               old->release, new->release, img->test->name);
                        if (img->note)
                                printf("  note: %s\n", img->note);
                        printf("  %-10s %-28s %-12s %-12s %s\n", "release", "tag", "cuda", "driver", "min cc");
                        for (size_t k = img->n_releases; k-- > 0;) {
                                const struct ngc_release *r = &img->releases[k];
                                printf("  %-10s %-28s %-12s %-12s %d.%d\n", r->release, r->tag, r->cuda,
                                       r->native_driver, r->judge.min_cc_major, r->judge.min_cc_minor);
                        }
                }
        }
        ngc_data_done(&d);
        return code;
}

/* ---- pick ---- */

struct pick_cli {
        const char *json;
        const char *for_driver;
};

enum pick_opt { PICK_JSON = 'j', PICK_FOR_DRIVER = 0x100 };

static int pick_option(int id, const struct opt_value *v, void *ctx) {
        struct pick_cli *o = ctx;
        if (id == PICK_JSON)
                o->json = v->text;
        else if (id == PICK_FOR_DRIVER)
                o->for_driver = v->text;
        return -1;
}

static const struct opt pick_options[] = {
        OPT_JSON(NGC_SCHEMA),
        {.name = "for-driver", .kind = ARG_TEXT, .id = PICK_FOR_DRIVER, .metavar = "VERSION",
         .help = "judge for this driver instead of the loaded one: a version (570.133.20) or a branch (580, R580)"},
        {0},
};

const struct cmd_spec cmd_ngc_pick_spec = {
        .name = "ngc pick",
        .synopsis = "[OPTIONS] [IMAGE...]",
        .summary = "For each image (default: every image of the catalogue), the newest release that runs natively on "
                   "this node's driver and every one of its GPUs; else the newest that runs through CUDA minor-version "
                   "compatibility (the minimum driver its notes state); else the newest that runs with forward "
                   "compatibility, which works only on data-center GPUs and only through the cuda-compat package in "
                   "the image. Each newer release is listed with why it was not chosen.",
        .opts = pick_options,
        .notes = "--root reads the GPUs and driver under DIR (a fixture or snapshot); --data-dir reads gpus.json, "
                 "compat.json and ngc.json from DIR.",
        .exit_status = "0 a release for every image, 1 some image has none, 2 bad input, 3 internal error.",
        .operand_words = "pytorch|nemo|tritonserver|tensorflow|tensorrt|cuda|rapids|deepstream",
        .takes_operands = true,
        .on_option = pick_option,
};

static const char *verdict_words(enum compat_verdict v) {
        switch (v) {
        case COMPAT_NATIVE: return "natively";
        case COMPAT_MINOR: return "through CUDA minor-version compatibility";
        case COMPAT_FORWARD: return "only with forward compatibility (data-center GPUs, the image's cuda-compat package)";
        default: return "not at all";
        }
}

static json_t *pick_json(const struct ngc_image *img, const struct ngc_pick *p) {
        json_t *o = json_object();
        json_object_set_new(o, "image", json_string(img->name));
        if (p->release) {
                char ref[256];
                ngc_ref(img, p->release, ref, sizeof(ref));
                json_object_set_new(o, "release", json_string(p->release->release));
                json_object_set_new(o, "tag", json_string(p->release->tag));
                json_object_set_new(o, "ref", json_string(ref));
                json_object_set_new(o, "cuda", json_string(p->release->cuda));
                json_object_set_new(o, "verdict", json_string(compat_verdict_name(p->how.verdict)));
                json_object_set_new(o, "reason", json_string(p->how.reason));
        } else {
                json_object_set_new(o, "release", json_null());
                json_object_set_new(o, "problem", json_string("no release of the catalogue runs on this driver and GPUs"));
        }
        json_t *ex = json_array();
        for (size_t k = 0; k < p->n_excluded; k++) {
                json_t *e = json_object();
                json_object_set_new(e, "release", json_string(p->excluded[k].release->release));
                json_object_set_new(e, "tag", json_string(p->excluded[k].release->tag));
                json_object_set_new(e, "verdict", json_string(compat_verdict_name(p->excluded[k].why.verdict)));
                json_object_set_new(e, "reason", json_string(p->excluded[k].why.reason));
                json_array_append_new(ex, e);
        }
        json_object_set_new(o, "excluded", ex);
        json_object_set_new(o, "excluded_total", json_integer((json_int_t)p->n_excluded_total));
        return o;
}

static void pick_text(const struct ngc_image *img, const struct ngc_pick *p) {
        if (p->release) {
                char ref[256];
                ngc_ref(img, p->release, ref, sizeof(ref));
                printf("%-12s %s  (CUDA %s; runs %s: %s)\n", img->name, ref, p->release->cuda,
                       verdict_words(p->how.verdict), p->how.reason);
        } else {
                printf("%-12s none: no release of the catalogue runs on this driver and GPUs\n", img->name);
        }
        size_t shown = p->n_excluded < 3 ? p->n_excluded : 3;
        for (size_t k = 0; k < shown; k++)
                printf("%-12s   not %s: %s%s\n", "", p->excluded[k].release->release,
                       compat_verdict_runs(p->excluded[k].why.verdict) ? "runs only " : "",
                       compat_verdict_runs(p->excluded[k].why.verdict) ? verdict_words(p->excluded[k].why.verdict)
                                                                         : p->excluded[k].why.reason);
        if (p->n_excluded_total > shown)
                printf("%-12s   (and %zu newer release%s excluded; --json lists them)\n", "", p->n_excluded_total - shown,
                       p->n_excluded_total - shown == 1 ? "" : "s");
}

static int pick_main(void *cli, const struct cmd_args *args) {
        const struct pick_cli *o = cli;
        struct ngc_data d;
        int code = ngc_data_load("ngc pick", args->common.data_dir, &d);
        if (code != 0)
                return code;
        const struct ngc_image *asked[64];
        size_t n_asked = 0;
        for (size_t i = 0; i < args->n_operands && code == 0; i++) {
                const char *name = args->operands[i];
                const struct ngc_release *rel;
                if ((code = ngc_resolve("ngc pick", d.db, name, &asked[n_asked], &rel)) == 0 && rel)
                        code = cmd_usage_error("ngc pick", "%s: pick chooses the tag; name the image alone", name);
                if (code == 0 && ++n_asked == 64)
                        code = cmd_usage_error("ngc pick", "at most 64 images at once");
        }
        if (code == 0 && n_asked == 0)
                for (size_t i = 0; i < d.db->n_images && i < 64; i++)
                        asked[n_asked++] = &d.db->images[i];
        struct machine m = {0};
        if (code == 0)
                code = machine_open("ngc pick", &args->common, &m);
        if (code == 0)
                code = machine_gather(&m, args->common.timeout_s);
        struct ngc_node node;
        char driver[64];
        if (code == 0)
                code = ngc_node_read("ngc pick", m.facts, &d, o->for_driver, driver, sizeof(driver), &node);
        if (code == 0) {
                bool all = true;
                json_t *doc = o->json ? json_object() : NULL, *picks = o->json ? json_array() : NULL;
                if (ngc_text_wanted(o->json)) {
                        printf("driver %s (%s); GPUs:", node.driver, node.driver_from);
                        for (size_t k = 0; k < node.n; k++)
                                printf("%s %u x %s (cc %d.%d%s)", k ? "," : "", node.counts[k], node.names[k],
                                       node.gpus[k].cc_major, node.gpus[k].cc_minor,
                                       node.gpus[k].datacenter ? ", data center" : "");
                        if (node.n_unknown)
                                printf("; %zu not in gpuvet's GPU table, not judged", node.n_unknown);
                        printf("\n\n");
                }
                for (size_t i = 0; i < n_asked; i++) {
                        struct ngc_pick *p = malloc(sizeof(*p));
                        if (!p) {
                                code = EXIT_INTERNAL;
                                break;
                        }
                        ngc_pick(d.compat, asked[i], node.gpus, node.n, node.driver, p);
                        all &= p->release != NULL;
                        if (o->json)
                                json_array_append_new(picks, pick_json(asked[i], p));
                        if (ngc_text_wanted(o->json))
                                pick_text(asked[i], p);
                        free(p);
                }
                if (o->json) {
                        json_object_set_new(doc, "schema", json_string(NGC_SCHEMA));
                        json_object_set_new(doc, "command", json_string("pick"));
                        json_object_set_new(doc, "driver", json_string(node.driver));
                        json_object_set_new(doc, "driver_from", json_string(node.driver_from));
                        json_t *gpus = json_array();
                        for (size_t k = 0; k < node.n; k++) {
                                json_t *g = json_object();
                                char cc[16];
                                snprintf(cc, sizeof(cc), "%d.%d", node.gpus[k].cc_major, node.gpus[k].cc_minor);
                                json_object_set_new(g, "model", json_string(node.names[k]));
                                json_object_set_new(g, "count", json_integer(node.counts[k]));
                                json_object_set_new(g, "compute_capability", json_string(cc));
                                json_object_set_new(g, "datacenter", json_boolean(node.gpus[k].datacenter));
                                json_array_append_new(gpus, g);
                        }
                        json_object_set_new(doc, "gpus", gpus);
                        json_object_set_new(doc, "gpus_not_judged", json_integer((json_int_t)node.n_unknown));
                        json_object_set_new(doc, "picks", picks);
                        if (code == 0)
                                code = ngc_print_json(doc, o->json);
                        else
                                json_decref(doc);
                }
                if (code == 0 && !all)
                        code = EXIT_FAILED;
        }
        code = machine_done(&m, code);
        ngc_data_done(&d);
        return code;
}

static int pick(int argc, char **argv) {
        return cmd_parse_run(&cmd_ngc_pick_spec, argc, argv, &(struct pick_cli){0}, pick_main);
}

int cmd_ngc(int argc, char **argv) {
        if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
                FILE *out = argc < 2 ? stderr : stdout;
                fprintf(out, "NVIDIA's NGC containers (PyTorch, NeMo, Triton, TensorFlow, TensorRT, CUDA, RAPIDS,\n"
                             "DeepStream): which release runs on this node's driver and GPUs, pulled and tested\n"
                             "(docs/ngc.md).\n\n");
                cmd_print_group_help("ngc", out);
                return argc < 2 ? EXIT_USAGE : EXIT_PASS;
        }
        if (strcmp(argv[1], "list") == 0)
                return list(argc - 1, argv + 1);
        if (strcmp(argv[1], "pick") == 0)
                return pick(argc - 1, argv + 1);
        if (strcmp(argv[1], "pull") == 0)
                return ngc_pull(argc - 1, argv + 1);
        if (strcmp(argv[1], "test") == 0)
                return ngc_test(argc - 1, argv + 1);
        fprintf(stderr, "gpuvet ngc: unknown subcommand \"%s\" (list, pick, pull, test)\n", argv[1]);
        return EXIT_USAGE;
}

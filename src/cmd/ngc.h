/* `gpuvet ngc`: the pieces its subcommands share (cmd/ngc.c: list, pick and the command;
 * cmd/ngc_run.c: pull and test). */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "data/compat.h"
#include "data/ngc_pick.h"
#include "data/ngcdb.h"

struct facts;

#define NGC_SCHEMA "gpuvet.ngc/1"
#define NGC_MAX_MODELS 16

/* The catalogue and the compatibility table it stands on. */
struct ngc_data {
        struct compat *compat;
        struct ngcdb *db;
};

/* Load both from data_dir (NULL: built in). Returns 0, or an exit code after a message. */
int ngc_data_load(const char *cmd, const char *data_dir, struct ngc_data *d);
void ngc_data_done(struct ngc_data *d);

/* The node's GPU models as compat_judge_* wants them (one per model), from the facts. */
struct ngc_node {
        struct compat_gpu gpus[NGC_MAX_MODELS];
        const char *names[NGC_MAX_MODELS];
        unsigned counts[NGC_MAX_MODELS];
        size_t n;
        size_t n_unknown;   /* GPUs not in gpus.json: not judged */
        const char *driver; /* the driver judged */
        char driver_from[64]; /* "loaded", "--for-driver 580" */
};

/* The GPUs and driver of the facts (for_driver, when given, replaces the loaded driver).
 * Returns 0, or an exit code after a message naming what is missing. */
int ngc_node_read(const char *cmd, const struct facts *f, const struct ngc_data *d, const char *for_driver,
                  char *driver_buf, size_t driver_size, struct ngc_node *node);

/* "pytorch", "pytorch:25.10-py3", "nvcr.io/nvidia/pytorch:25.10" -> the image and the
 * release (NULL when no tag was given). Returns 0, or EXIT_USAGE after a message listing
 * the known images or the image's releases. */
int ngc_resolve(const char *cmd, const struct ngcdb *db, const char *arg, const struct ngc_image **ret_img,
                const struct ngc_release **ret_rel);

/* "nvcr.io/nvidia/pytorch:25.10-py3" */
void ngc_ref(const struct ngc_image *img, const struct ngc_release *r, char *buf, size_t size);

/* Write doc for --json PATH: "-" on standard output, else to the file, atomically;
 * EXIT_PASS, or EXIT_INTERNAL after a failed write. Frees doc. */
int ngc_print_json(json_t *doc, const char *path);
/* Whether the text answer is printed: not when --json puts the JSON on standard output. */
static inline bool ngc_text_wanted(const char *json_path) { return !json_path || json_path[0] != '-'; }

int ngc_pull(int argc, char **argv);
int ngc_test(int argc, char **argv);

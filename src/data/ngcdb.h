/* gpuvet's NGC image catalogue: data/ngc.json (docs/data-files.md), whose images take their
 * releases from compat.json (the monthly framework releases, the CUDA toolkits) or list
 * their own. Loading expands every image into its releases, each judged with
 * compat_judge_ngc like the monthly releases `gpuvet detect` lists. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "data/compat.h"

/* What `gpuvet ngc test` runs in an image. */
struct ngc_test {
        const char *name;           /* "pytorch", "tensorflow", "nvidia-smi" */
        const char *command[8];     /* argv; the script, when there is one, follows as the last argument */
        size_t n_command;
        const char *script;         /* NULL for none */
        bool compares_uuids;        /* false: only the GPU count is compared */
        const char *note;           /* NULL or why the test is what it is */
};

struct ngc_release {
        char release[16];           /* "24.05", "12.4.1", "7.1" */
        char tag[96];               /* "24.05-py3" */
        char label[64];             /* "pytorch 24.05": judgements name it */
        char cuda[24], native_driver[24], min_driver[24];
        struct compat_ngc judge;    /* what compat_judge_ngc reads; its strings point at the fields above */
};

struct ngc_image {
        const char *name, *title, *repository, *tag_form, *note;
        const struct ngc_test *test;
        struct ngc_release *releases; /* oldest first */
        size_t n_releases;
};

struct ngcdb {
        struct ngc_image *images;
        size_t n_images;
        struct ngc_test *tests;
        size_t n_tests;
        const char *as_of;
        void *json;
        char source[512];
};

/* Load DIR/ngc.json (the compiled-in catalogue when dir is NULL) over the compat table c,
 * which must outlive it. -EINVAL with a message naming the file and what is wrong, or
 * -ENOMEM. */
int ngcdb_load(const char *dir, const struct compat *c, struct ngcdb **ret, char *err, size_t errsize);
/* The same from len bytes at buf (need not be NUL-terminated); messages name source. Used by
 * ngcdb_load and the fuzzer (tests/fuzz/fuzz_datafiles.c). */
int ngcdb_load_buffer(const char *buf, size_t len, const char *source, const struct compat *c, struct ngcdb **ret,
                      char *err, size_t errsize);
struct ngcdb *ngcdb_free(struct ngcdb *db);

const struct ngc_image *ngcdb_image(const struct ngcdb *db, const char *name);
/* A release of img by its tag ("24.05-py3") or its release ("24.05"); NULL when none. */
const struct ngc_release *ngc_image_release(const struct ngc_image *img, const char *tag);

/* gpuvet ngc's logic, apart from its commands (src/cmd/ngc.c, ngc_run.c: options and
 * printing): the catalogue (data/ngc.json) with the compatibility table it stands on, the
 * node's GPUs and driver, an IMAGE[:TAG] resolved, and what ngc test's container printed. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "data/compat.h"
#include "data/ngc_pick.h"
#include "data/ngcdb.h"
#include "sys/container_gpu.h"

struct facts;

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

/* What ngc test's container reported. */
struct ngc_seen {
        char uuids[CONTAINER_GPU_MAX][96];
        size_t n_uuids;
        long long count;     /* GPUs the framework counts; -1 unknown */
        bool have_report;    /* a framework's JSON line was read */
        bool matmul_ok;
        double max_abs_err;  /* < 0 unknown */
        char framework[32], version[64];
};

/* The last line of out that is a JSON object with "framework" (the test script prints one)
 * into s. */
void ngc_read_framework(const char *out, struct ngc_seen *s);
/* Whether uuid is one of the n in list. */
bool ngc_uuid_listed(const char (*list)[96], size_t n, const char *uuid);

/* ngc test's verdict on what the container reported, against the host's GPUs (host: NVML's
 * UUIDs, n_host of them, 0 when NVML gave none; host_count: the GPUs the host has). */
struct ngc_test_verdict {
        bool compare_uuids; /* the test compares UUIDs, and the host's are known */
        bool gpus_ok;       /* the container saw the host's GPUs: as many, the same UUIDs when compared */
        bool report_ok;     /* a test script printed its report (true without a script) */
        bool matmul_ok;     /* the script's matmul matched the CPU (true without a script) */
        bool pass;
        char missing[1024]; /* the host's UUIDs the container did not see, ", " between */
        size_t n_missing;
};
void ngc_test_judge(const struct ngc_test *t, const struct ngc_seen *s, const char (*host)[96], size_t n_host,
                    size_t host_count, struct ngc_test_verdict *v);

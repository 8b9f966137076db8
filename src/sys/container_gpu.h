/* container.gpu_access's test: a small CUDA container run with the GPUs, printing the UUIDs
 * of the GPUs it sees (`nvidia-smi --query-gpu=uuid --format=csv,noheader`), for the check
 * to compare with the host's. Run by cmd/check.c at the standard level; judged by
 * checks/container.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "sys/container_run.h"

struct ngcdb;

#define CONTAINER_GPU_MAX 256
#define CONTAINER_GPU_DEFAULT_TIMEOUT_S 60 /* a cold container start with the hook takes seconds */

/* Where the runtime and image come from, the first set wins: the command's options, then
 * the site policy (container.runtime, container.image); NULL when neither says. */
struct container_gpu_options {
        const char *runtime, *runtime_by;
        const char *image, *image_by;
        unsigned timeout_s; /* 0: CONTAINER_GPU_DEFAULT_TIMEOUT_S */
};

struct container_gpu_facts {
        bool ran;                   /* false: note says why it was not run */
        char note[320];
        struct container_runtime rt;
        char image[256];
        char image_why[192];        /* why this image: "site policy", or how the default was picked */
        unsigned timeout_s;
        const char *step;           /* what ran last: "image inspect" or "run" */
        enum container_outcome outcome;
        int exit_status;
        char cause[512];
        char err_tail[1024];
        char command[512];
        char cleanup[512];          /* a run past its deadline: removing its container */
        double elapsed_s;
        char uuids[CONTAINER_GPU_MAX][96]; /* what the container saw */
        size_t n_uuids;
};

/* The default test image: the NGC catalogue's cuda image (NVIDIA's CUDA base image,
 * nvcr.io/nvidia/cuda:X.Y.Z-base-OS, data/ngc.json) of the newest CUDA release the driver
 * runs natively. The image's NVIDIA_REQUIRE_CUDA makes the toolkit refuse a driver older
 * than its CUDA, so a newer one would fail for a reason that is not the node's fault; the
 * base flavour holds only the CUDA runtime (nvidia-smi is mounted from the host by the
 * toolkit). Returns 0, or -ENOENT with why filled when the driver is unknown or runs no
 * CUDA release of the catalogue. */
int container_default_image(const struct ngcdb *db, const char *driver, char *buf, size_t size, char *why,
                            size_t whysize);

/* The GPU UUIDs in nvidia-smi's output (one per line, "GPU-..." or "MIG-..."), into out. */
void container_gpu_parse_uuids(const char *text, struct container_gpu_facts *out);

/* Run the test with runtime rt and out->image already set: image inspect (never a pull),
 * then the container. */
void container_gpu_run(const struct container_runtime *rt, unsigned timeout_s, struct container_gpu_facts *out);

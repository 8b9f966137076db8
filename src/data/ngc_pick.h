/* Choosing an NGC image's release for a node (`gpuvet ngc pick`): the newest release every
 * GPU runs natively on the driver; else the newest that runs through CUDA minor-version
 * compatibility (the driver meets the minimum the release notes state, but is older than
 * the one its CUDA ships with: PTX of the newer CUDA cannot be JIT-compiled); else the
 * newest that runs with forward compatibility (data-center GPUs only, through the
 * cuda-compat package the NGC framework images carry). Pure: a function of the
 * catalogue, the GPUs and the driver. */
#pragma once

#include <stddef.h>

#include "data/compat.h"
#include "data/ngcdb.h"

#define NGC_PICK_MAX_EXCLUDED 64

struct ngc_excluded {
        const struct ngc_release *release;
        struct compat_judgement why; /* the worst GPU's judgement */
};

struct ngc_pick {
        const struct ngc_release *release; /* NULL: no release runs here */
        struct compat_judgement how;       /* how it runs (native, minor_compat, forward_compat) */
        /* The releases newer than the pick (all, when there is none), newest first, each with
         * its judgement: why it does not run, or needs more help than the pick. */
        struct ngc_excluded excluded[NGC_PICK_MAX_EXCLUDED];
        size_t n_excluded;
        size_t n_excluded_total;           /* past NGC_PICK_MAX_EXCLUDED, only counted */
};

/* Pick img's release for the GPUs on driver. */
void ngc_pick(const struct compat *c, const struct ngc_image *img, const struct compat_gpu *gpus, size_t n,
              const char *driver, struct ngc_pick *ret);

/* A burn worker: the child process that loads one device (burn/burn.h). It opens the
 * backend itself, runs the modes in order for their slices of the run, and writes
 * burn/wire.h lines to fd; it never returns. SIGTERM asks it to stop at the next launch
 * boundary (within BURN_TICK_MS on any device the load was sized for). */
#pragma once

#include <stdint.h>

#include "burn/burn.h"

struct burn_worker_spec {
        const char *backend;          /* resolved: "cuda" or "opencl" */
        int index;                    /* the backend's device index */
        const struct burn_options *opt;
        uint64_t slices_ms[_BURN_MODE_COUNT];
        uint64_t seed;
};

_Noreturn void burn_worker_main(const struct burn_worker_spec *spec, int fd);

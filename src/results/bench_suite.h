/* What every benchmark measured at `gpuvet check --level full` (bench/suite.h runs them),
 * as device.benchmarks (checks/device_bench.c) judges it. */
#pragma once

#include <stdbool.h>

#include "results/measurement.h"

struct bench_suite_facts {
        bool ran;                /* false: not_run says why */
        char not_run[256];
        char backend[16];        /* asked: "auto", "cuda", "opencl" */
        struct bench_report rep; /* every benchmark's judged measurements */
        double duration_ms;
        /* A benchmark's remedy (struct bench_info) by its name, NULL when none: the
         * registry stays with the engine, and the check judging these facts asks it here. */
        const char *(*remedy_of)(const char *bench);
};

/* Wall-clock bounds in unit tests, scaled like the golden tests' (tests/fakes/fakeenv.py
 * time_scale, docs/testing.md): the larger of GPUVET_TEST_TIME_SCALE (a busy machine) and
 * GPUVET_TEST_TIME_SCALE_BUILD (3 under sanitizers). Lower bounds are never scaled: a
 * deadline must not fire early however idle the machine. */
#pragma once

#include <stdlib.h>

static inline double test_time_scale(void) {
        double scale = 1.0;
        const char *vars[] = {"GPUVET_TEST_TIME_SCALE", "GPUVET_TEST_TIME_SCALE_BUILD"};
        for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
                const char *v = getenv(vars[i]);
                double x = v ? strtod(v, NULL) : 0;
                if (x > scale)
                        scale = x;
        }
        return scale;
}

/* An upper bound of ms on a quiet machine, as milliseconds here. */
#define SCALED_MS(ms) ((unsigned long long)((ms) * test_time_scale()))

/* The one monotonic clock (clock.h). */
#include "core/clock.h"

#include <time.h>

unsigned long long monotonic_ns(void) {
        struct timespec t;
        /* CLOCK_MONOTONIC cannot fail on Linux with a valid pointer. */
        (void)clock_gettime(CLOCK_MONOTONIC, &t);
        return (unsigned long long)t.tv_sec * 1000000000ULL + (unsigned long long)t.tv_nsec;
}

unsigned long long deadline_now_ms(void) {
        return monotonic_ns() / 1000000ULL;
}

double monotonic_ms(void) {
        return (double)monotonic_ns() / 1e6;
}

double monotonic_s(void) {
        return (double)monotonic_ns() / 1e9;
}

double wall_clock_s(void) {
        struct timespec t;
        (void)clock_gettime(CLOCK_REALTIME, &t);
        return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

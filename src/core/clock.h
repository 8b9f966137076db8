/* The one monotonic clock: every duration, timeout and rate in gpuvet is measured on
 * CLOCK_MONOTONIC through these, so that no file keeps a clock of its own and every
 * figure agrees on the origin. CLOCK_MONOTONIC cannot fail on Linux, so none returns
 * an error. */
#pragma once

/* Nanoseconds, for rates and the sampler's rounds. */
unsigned long long monotonic_ns(void);
/* Whole milliseconds, for deadlines and timeouts. */
unsigned long long deadline_now_ms(void);
/* Milliseconds with the fraction, for durations. */
double monotonic_ms(void);
/* Seconds with the fraction, for durations and rates in seconds. */
double monotonic_s(void);
/* Seconds since the epoch with the fraction (CLOCK_REALTIME): a time shown to people
 * or compared with a file's mtime, never a duration. */
double wall_clock_s(void);

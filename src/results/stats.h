/* Statistics of repeated measurements: min, median, max, mean and coefficient of
 * variation (stddev / mean), the figures every benchmark reports. */
#pragma once

#include <stddef.h>

struct bench_stats {
        size_t n;
        double min, median, max, mean;
        double cv; /* sample standard deviation / mean; 0 for n < 2 */
};

/* Compute over n samples (not modified). -EINVAL for n == 0 or a sample that is not
 * finite. */
int bench_stats_compute(const double *samples, size_t n, struct bench_stats *ret);

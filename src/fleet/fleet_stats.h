/* The statistics of a fleet's figures: percentiles by linear interpolation between the
 * closest ranks (numpy's default, R's type 7), mean, sample standard deviation, and the
 * median absolute deviation the outlier rules use. */
#pragma once

#include <stddef.h>

#include "fleet/fleet.h"

/* The p-th percentile (0..100) of the n ascending values (n >= 1). */
double fleet_percentile(const double *sorted, size_t n, double p);

/* Sort the n values (in place) and describe them into *ret; n == 0 gives all zeros.
 * Returns 0 or -ENOMEM (the MAD needs a copy). */
int fleet_stats_compute(double *values, size_t n, struct fleet_stats *ret);

#include "fleet/fleet_stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

double fleet_percentile(const double *sorted, size_t n, double p) {
        if (n == 1 || p <= 0)
                return sorted[0];
        if (p >= 100)
                return sorted[n - 1];
        double rank = p / 100.0 * (double)(n - 1);
        size_t lo = (size_t)rank;
        double frac = rank - (double)lo;
        if (lo + 1 >= n)
                return sorted[n - 1];
        return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

int fleet_stats_compute(double *values, size_t n, struct fleet_stats *ret) {
        memset(ret, 0, sizeof(*ret));
        if (n == 0)
                return 0;
        qsort(values, n, sizeof(*values), cmp_double);
        double sum = 0;
        for (size_t i = 0; i < n; i++)
                sum += values[i];
        double mean = sum / (double)n, ss = 0;
        for (size_t i = 0; i < n; i++)
                ss += (values[i] - mean) * (values[i] - mean);
        double *dev = malloc(n * sizeof(*dev));
        if (!dev)
                return -ENOMEM;
        double median = fleet_percentile(values, n, 50);
        for (size_t i = 0; i < n; i++)
                dev[i] = fabs(values[i] - median);
        qsort(dev, n, sizeof(*dev), cmp_double);
        *ret = (struct fleet_stats){
                .n = n,
                .min = values[0],
                .p10 = fleet_percentile(values, n, 10),
                .median = median,
                .p90 = fleet_percentile(values, n, 90),
                .max = values[n - 1],
                .mean = mean,
                .stddev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0,
                .mad = fleet_percentile(dev, n, 50),
        };
        free(dev);
        return 0;
}

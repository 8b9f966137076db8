#include "results/stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

int bench_stats_compute(const double *samples, size_t n, struct bench_stats *ret) {
        if (n == 0)
                return -EINVAL;
        double *sorted = malloc(n * sizeof(double));
        if (!sorted)
                return -ENOMEM;
        double sum = 0;
        for (size_t i = 0; i < n; i++) {
                if (!isfinite(samples[i])) {
                        free(sorted);
                        return -EINVAL;
                }
                sorted[i] = samples[i];
                sum += samples[i];
        }
        qsort(sorted, n, sizeof(double), cmp_double);
        struct bench_stats s = {.n = n, .min = sorted[0], .max = sorted[n - 1], .mean = sum / (double)n};
        s.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        if (n >= 2 && s.mean != 0) {
                double var = 0;
                for (size_t i = 0; i < n; i++)
                        var += (sorted[i] - s.mean) * (sorted[i] - s.mean);
                s.cv = sqrt(var / (double)(n - 1)) / fabs(s.mean);
        }
        free(sorted);
        *ret = s;
        return 0;
}

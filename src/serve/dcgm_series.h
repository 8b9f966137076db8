/* Which registry metrics `gpuvet serve` exports under dcgm-exporter's names, and in which
 * units (docs/serve.md, "Metrics").
 *
 * The registry keeps base units (hertz, bytes, seconds); dcgm-exporter writes DCGM's own
 * (MHz, MiB, microseconds), and dashboards built on it divide by those. A metric is
 * exported when it has a DCGM field and its value is a number or a flag: text (names,
 * versions, bus ids) goes into the labels, never into a series. */
#pragma once

#include <stdbool.h>

#include "metrics/metrics.h"

bool dcgm_series_exported(const struct metric *m);
/* Registry value * this = the value dcgm-exporter writes. */
double dcgm_series_scale(const struct metric *m);
/* The value dcgm-exporter writes for a registry value: scaled, and whole where DCGM's
 * field counts whole units (millijoules). */
double dcgm_series_value(const struct metric *m, double registry_value);
/* The unit dcgm-exporter's value is in ("MHz", "MiB", "W", "C", "us", "%"), or NULL. */
const char *dcgm_series_unit(const struct metric *m);
/* "counter" for counters, "gauge" for everything else (dcgm-exporter's types). */
const char *dcgm_series_type(const struct metric *m);

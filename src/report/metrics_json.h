/* The metrics registry's values as a JSON object, {"power_draw_watts": 69.85, ...}: every
 * metric, in registry order (info --json; docs/metrics.md). */
#pragma once

#include <jansson.h>
#include <stdbool.h>

#include "sys/nvml_facts.h"

/* Called for a metric without a value, with its reading's state, rc and function, so the
 * caller can say why it is null; returns the JSON value to store (normally null). */
typedef json_t *(*metric_note_fn)(void *ctx, unsigned char state, int rc, const char *fn);

/* The GPU's metrics (system false) or the system's (driver version, GPU count; gpu
 * ignored). Numbers are in the metric's unit (bytes, watts, hertz...); a metric without
 * a value is what note returns, null when note is NULL. */
json_t *metrics_json(const struct nvml_facts *facts, const struct nvml_gpu *gpu, bool system, metric_note_fn note,
                     void *ctx);

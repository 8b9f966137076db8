/* The fields of `gpuvet query --query-gpu=...`: the nvidia-smi names of the metrics
 * registry (metrics/metrics.h), with nvidia-smi's header units and value formats, answered
 * from struct nvml_facts (docs/query.md).
 *
 * Pure formatting: nothing here calls NVML except, for an error cell, the library's
 * nvmlErrorString (a table lookup in every NVML), so that "[...]" reads as nvidia-smi's.
 * A reading that is not there prints as nvidia-smi prints it: NOT_SUPPORTED, a missing
 * entry point, a call that never returned (NV_TIMEOUT) or one not made give "[N/A]";
 * any other NVML error gives "[<nvmlErrorString>]", e.g. "[GPU is lost]" or
 * "[Requested functionality has been deprecated]". */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "metrics/metrics.h"
#include "sys/nvml_facts.h"

struct query_field;

/* What one row needs: the facts, the GPU, and the iteration's timestamp. */
struct query_row {
        const struct nvml_facts *facts;
        const struct nvml_gpu *gpu;
        const struct nvml_lib *lib; /* error texts; NULL: gpuvet's own table */
        const char *timestamp;      /* query_timestamp() */
        bool nounits;               /* --format=csv,nounits: values without their unit */
};

/* The field called name (canonical or alias, exact match as nvidia-smi), or NULL. */
const struct query_field *query_field_lookup(const char *name);

/* The metric the field shows; NULL for "timestamp". */
const struct metric *query_field_metric(const struct query_field *f);

/* --help-query-gpu: the supported fields with their aliases and a line on each. */
void query_fields_help(FILE *out);

/* --help-metrics: one tab-separated line per metric of the registry: id, type, unit,
 * nvidia-smi names (space-separated), where `nvidia-smi -q` shows a metric without a name
 * (its section, or "none: " and why nvidia-smi shows it nowhere), dcgm-exporter field,
 * description; "-" for none. */
void query_metrics_help(FILE *out);

/* nvidia-smi's timestamp, "2026/07/14 08:12:38.696" in local time. */
void query_timestamp(const struct timespec *ts, char *buf, size_t size);

/* The CSV nvidia-smi --query-gpu writes, for these fields: */
#define QUERY_CELL_MAX 256 /* the longest cell */
/* the header line ("name, memory.used [MiB]"); */
void query_csv_header(FILE *out, const struct query_field *const *cols, unsigned n_cols);
/* one round's rows, one per selected GPU of f (selected and lost: n_sel entries; lost[i]
 * set for a GPU whose cells say "[GPU is lost]"), built whole and written with one fwrite,
 * so that a signal or a full disk never leaves half a line behind a complete one. Returns
 * 0 or -errno. */
int query_csv_rows(FILE *out, const struct query_field *const *cols, unsigned n_cols, bool nounits,
                   const struct nvml_facts *f, const bool *selected, unsigned n_sel, bool *lost);

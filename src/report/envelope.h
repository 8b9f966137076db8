/* The envelope of gpuvet's verdict documents, check's `gpuvet.report/1` and bench's
 * `gpuvet.bench/2`: both open with the same fields and close with the same summary, so a
 * reader (a fleet report, a CI job) finds who wrote either and its verdict in one place
 * (docs/report-schema.md, "The envelope"). */
#pragma once

#include <jansson.h>

#include "core/result.h"

/* {"schema": schema, "tool": {"name": "gpuvet", "version": ...}, "command": command}; the
 * document's own fields follow. */
json_t *envelope_new(const char *schema, const char *command);

/* {"pass": N, "warn": N, "fail": N, "skip": N, "error": N, "verdict": ..., "duration_ms": ...}:
 * counts of the document's judged items (check results, bench measurements). */
json_t *envelope_summary(const unsigned counts[_STATUS_COUNT], enum status verdict, double duration_ms);

/* The JSON report (schema gpuvet.report/1, documented in docs/report-schema.md). */
#pragma once

#include "core/result.h"
#include "sys/facts.h"

struct run_info {
        const char *command; /* "check" */
        enum level level;
        const char *root;    /* the --root used */
        double duration_ms;
        bool strict;
        const char *policy;  /* the site policy's path, NULL when none */
};

/* Build the report as a JSON string (caller frees); NULL on out of memory. */
char *report_json(const struct facts *f, const struct report *rep, const struct run_info *run);
/* The host and gpus sections alone, as jansson objects, for other commands (info, detect). */
void *report_json_host(const struct facts *f);
/* The outcome fields every judged thing carries in gpuvet's JSON, check result or benchmark
 * measurement alike: observed, expected and remedy (null when absent), set into the jansson
 * object o. */
void report_json_outcome(void *o, const char *observed, const char *expected, const char *remedy);
void *report_json_gpus(const struct facts *f);

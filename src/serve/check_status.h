/* gpuvet's check verdicts for `gpuvet serve --check-report FILE` (docs/serve.md, "Check
 * verdicts"): a check report (schema gpuvet.report/1, written by `gpuvet check --json`)
 * read into each check id's status, worst over its subjects (status_worse: one GPU
 * failing gpu.temperature makes gpu.temperature fail).
 *
 * The file is untrusted input: any bytes, any size up to CHECK_STATUS_MAX_BYTES. */
#pragma once

#include <stddef.h>

#include "core/result.h"

#define CHECK_STATUS_MAX_BYTES (16u << 20)
#define CHECK_STATUS_ID_MAX 128

struct check_status {
        char id[CHECK_STATUS_ID_MAX];
        enum status status;
};

struct check_status_set {
        size_t n;
        struct check_status *items; /* sorted by id, each id once */
};

/* Parse a report of len bytes. Returns 0 with *ret filled (free with check_status_done), or
 * -EINVAL with why in err (the JSON error and its line, the schema, the field). */
int check_status_parse(const char *buf, size_t len, struct check_status_set *ret, char *err, size_t errsize);

void check_status_done(struct check_status_set *set);

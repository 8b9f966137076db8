/* The plan of `gpuvet tune plan` (docs/tune.md): per setting what would change, what is
 * already set and what cannot be set here, as text or as JSON (schema gpuvet.tune-plan/1). */
#pragma once

#include <jansson.h>
#include <stdio.h>

#include "tune/tune.h"

/* What the plan was made for. */
struct tune_plan_shown {
        const char *profile; /* NULL: --set only */
        const char *policy;  /* the site policy's path, NULL: none */
        const char *root;
};

void tune_plan_text(FILE *out, const struct tune_plan_shown *o, const struct tune_request *req,
                    const struct tune_targets *t);
/* NULL when memory ran out. */
json_t *tune_plan_json(const struct tune_plan_shown *o, const struct tune_request *req, const struct tune_targets *t);

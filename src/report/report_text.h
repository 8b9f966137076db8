/* The terminal report: one line per result, remedies under problems, a verdict line. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "core/result.h"
#include "report/report_json.h"

struct text_options {
        bool color;
        bool verbose; /* also show observed/expected of passing results */
};

/* Colour is on for a terminal unless NO_COLOR is set (https://no-color.org) or TERM=dumb. */
bool text_want_color(FILE *out);

void report_text(FILE *out, const struct facts *f, const struct report *rep, const struct run_info *run,
                 const struct text_options *opt);

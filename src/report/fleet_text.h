/* `gpuvet fleet`'s text: nodes that did not pass, the checks that failed where, the
 * benchmark figures per GPU model, outliers, drift, skipped inputs, a verdict line. */
#pragma once

#include <stdio.h>

#include "fleet/fleet.h"
#include "report/report_text.h"

void fleet_text(FILE *out, const struct fleet *f, const struct text_options *opt);

/* The terminal report of `gpuvet bench`: per benchmark a table of its measurements, each
 * row led by its status as check's text shows it, the summary of every row that did not
 * pass and the benchmark's remedy under the table (printed as each benchmark ends); then
 * check's verdict line. */
#pragma once

#include <stdio.h>

#include "bench/measurement.h"
#include "bench/runner.h"
#include "report/report_text.h"

/* One benchmark's table, judged. */
void bench_text_run(FILE *out, const struct bench_report *rep, const struct bench_run_result *run,
                    const struct text_options *opt);
/* The verdict line under every table. */
void bench_text_verdict(FILE *out, const struct bench_report *rep, enum status verdict, double duration_ms,
                        const struct text_options *opt);

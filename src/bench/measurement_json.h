/* A measurement as JSON: the encoding that travels over the runner's pipe from child to
 * parent, so a measurement survives the trip field for field, and the one the reports
 * (report/bench_json.c and the others) write. With the measurement, so that the runner
 * needs nothing from report/. */
#pragma once

#include <jansson.h>
#include <stddef.h>

#include "bench/measurement.h"

/* One measurement; samples that are not finite become null (jansson has no NaN). */
json_t *bench_json_measurement(const struct measurement *m);
/* Append the measurement described by o to rep. -EINVAL when o lacks a field or has one
 * of the wrong type (with why), -ENOMEM. */
int bench_json_parse_measurement(json_t *o, struct bench_report *rep, char *why, size_t whysize);

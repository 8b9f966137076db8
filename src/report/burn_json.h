/* The "burn" section of a report (docs/report-schema.md): how the stress test ran, and
 * per device its end, counts, faults and throughput series. */
#pragma once

struct burn_facts;

/* A jansson object (caller owns), or NULL when out of memory. */
void *burn_json(const struct burn_facts *b);

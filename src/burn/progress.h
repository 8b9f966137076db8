/* Progress of a burn on standard error: on a terminal one line per device, redrawn every
 * second (elapsed and remaining, throughput, errors so far); otherwise plain lines every
 * BURN_PROGRESS_PLAIN_S seconds, for logs. */
#pragma once

#include "burn/burn.h"

#define BURN_PROGRESS_PLAIN_S 10.0

struct burn_progress;

/* NULL when out of memory (then no progress is shown). */
struct burn_progress *burn_progress_start(const struct burn_facts *b);
void burn_progress_update(struct burn_progress *p, const struct burn_facts *b, double t_s);
/* The last lines, then free p. */
void burn_progress_end(struct burn_progress *p, const struct burn_facts *b);

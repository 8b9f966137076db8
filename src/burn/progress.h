/* Progress of a burn on standard error (core/progress.h): one line per device, with the
 * mode it runs, elapsed and remaining time (or how far past the end a device still works),
 * throughput, temperature, power and errors so far; redrawn every second on a terminal,
 * plain lines every PROGRESS_PLAIN_S seconds otherwise. */
#pragma once

#include "burn/burn.h"

struct burn_progress;

/* NULL when out of memory (then no progress is shown). */
struct burn_progress *burn_progress_start(const struct burn_facts *b);
void burn_progress_update(struct burn_progress *p, const struct burn_facts *b, double t_s);
/* The last lines, then free p. */
void burn_progress_end(struct burn_progress *p, const struct burn_facts *b);

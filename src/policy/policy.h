/* Reading a site policy (results/policy.h: the model) and applying it to results.
 *
 * policy_load() reads and validates it completely: every unknown key, wrong type or bad
 * value is reported as "FILE:LINE: problem", so a typo never silently loosens a gate. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/result.h"
#include "results/policy.h"

struct check_info;

/* Read and validate the policy at path (a real path, not under --root). On success
 * returns 0 with *ret filled. On a bad file returns -EINVAL with every problem, one
 * "path:line: ..." per line, in *errors (caller frees); on an unreadable file a negative
 * errno (errors NULL). */
int policy_load(const char *path, struct policy *ret, char **errors);
/* The same from text already in memory (name stands for the file in messages). */
int policy_parse(const char *name, const char *text, size_t len, struct policy *ret, char **errors);
void policy_free(struct policy *p);

/* The severity the policy gives check c (its id beats its category), with the line that
 * says so; POLICY_SEVERITY_DEFAULT when none. p may be NULL. */
enum policy_severity policy_severity_of(const struct policy *p, const struct check_info *c, unsigned *line);

/* Apply the severity overrides and the plain exceptions (those without width/gen) to the
 * results of a report, in place; then report_tally. */
void policy_apply(const struct policy *p, struct report *rep);

/* Normalise a PCI address as a user may write it ("17:00.0", "0000:17:00.0", upper
 * case) to sysfs form; false when it is not one. Pure. */
bool policy_normalise_bus_id(const char *in, char *out, size_t size);

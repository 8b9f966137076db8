/* The outlier rules (data/fleet_rules.json) applied to one figure, and configuration drift
 * over one attribute: pure functions, unit-tested (tests/unit/test_fleet.c). */
#pragma once

#include <stddef.h>

#include "data/fleet_rules.h"
#include "fleet/fleet.h"

/* MAD scaled to estimate a standard deviation for normally distributed figures. */
#define FLEET_MAD_SCALE 1.4826

/* Judge value against its distribution st under rule (resolved) and direction. Fills
 * ret's value, median, deviation_pct, mads, rule and status, and returns true when the
 * figure is an outlier (status WARN or FAIL); false leaves ret's status PASS. A bound
 * (min, max) fails a figure whatever the fleet does; the variance rule needs
 * st->n >= min_samples, a median other than 0 and a direction. */
bool fleet_judge_figure(const struct fleet_rule *rule, enum fleet_direction direction, const struct fleet_stats *st,
                        double value, struct fleet_outlier *ret);

/* The n outliers grouped by node and side of the median into *ret (failing groups first,
 * then by node, the figures below their medians first); each group's members index o and
 * point into *ret_members, which the caller frees with *ret. Returns 0 or -ENOMEM. */
int fleet_group_outliers(const struct fleet_outlier *o, size_t n, struct fleet_outlier_group **ret, size_t *ret_n,
                         size_t **ret_members);

/* The majority value among the n nodes' values (NULL: the node does not report it) and the
 * nodes with another, into ret (attribute and model are kept as given; ret->majority and the
 * odd nodes' values are copies; odd nodes in the order given). A tie goes to the smaller
 * string. Returns 0 (ret->n_reporting 0 when no node reports it) or -ENOMEM. */
int fleet_drift_compute(const char *attribute, const char *model, const struct fleet_drift_node *nodes, size_t n,
                        struct fleet_drift *ret);
void fleet_drift_clear(struct fleet_drift *d);

/* The words fleet's text and HTML both give a node's group of outliers, so that the two
 * say the same. */
#pragma once

#include <stddef.h>

#include "fleet/fleet.h"

/* "3 figures 12-20% below the median (1 fail, 2 warn)" into buf (size bytes), dash
 * between the ends of a range ("-" for text, an en dash for HTML). */
void fleet_group_words(const struct fleet_outlier_group *g, const char *dash, char *buf, size_t size);

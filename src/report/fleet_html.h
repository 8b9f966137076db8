/* `gpuvet fleet --html`: the fleet's aggregate as one self-contained page (src/html/): the
 * fleet's verdict; the nodes that did not pass, with the checks that failed on each; the
 * checks by nodes affected; the outliers against their GPU model's median; configuration
 * drift; each benchmark figure's distribution per GPU model as a box/strip chart with its
 * statistics; the inputs that were skipped; every node, folded (docs/fleet.md). */
#pragma once

#include <stddef.h>

struct fleet;

/* The page of f (aggregated with keep_values set, so the charts have their values; without
 * them the distributions are tables only). Returns the page (free() it) with its length in
 * *ret_len, or NULL when out of memory. */
char *fleet_html(const struct fleet *f, size_t *ret_len);

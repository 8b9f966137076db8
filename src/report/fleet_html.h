/* `gpuvet fleet --html`: the fleet's aggregate as one self-contained page (src/html/): the
 * fleet's verdict; the nodes that did not pass, with the checks that failed on each; the
 * checks by nodes affected; the outliers against their GPU model's median; configuration
 * drift; each benchmark figure's distribution per GPU model as a box/strip chart with its
 * statistics; the inputs that were skipped; every node, folded (docs/fleet.md). */
#pragma once

#include <stddef.h>

struct fleet;

/* The page of f (aggregated with keep_values set, so the charts have their values; without
 * them the distributions are tables only). page_dir: the absolute directory the page is
 * written to, so that its links to the nodes' own pages are relative to it (NULL: the
 * pages' absolute paths). Returns the page (free() it) with its length in *ret_len, or NULL
 * when out of memory. */
char *fleet_html(const struct fleet *f, const char *page_dir, size_t *ret_len);

struct html_buf;
/* The href of the file at the absolute path to from a page in the absolute directory
 * from_dir (NULL: to itself): relative, so that the results directory can be moved or
 * mailed whole; percent-encoded, so nothing in it needs HTML escaping. */
void fleet_html_href(struct html_buf *b, const char *from_dir, const char *to);

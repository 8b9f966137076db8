/* How deep a YAML file's collections nest, measured before it is loaded. libyaml's scanner
 * re-examines every open flow level ("[", "{") at each token, so loading is quadratic in the
 * nesting: 100,000 levels (200 KB) kept `policy validate` busy for 15 s. The files gpuvet reads
 * (a site policy, serve's web config) nest a few levels; this refuses deeper ones first. */
#pragma once

#include <stddef.h>

struct yaml_lib;

/* Far above the 5 levels of a captured policy (a web config nests 2). */
#define YAML_MAX_NESTING 64u

/* Whether the collections (block or flow, sequences and mappings) of every document in the
 * len bytes at buf nest at most max deep. Reads libyaml's events and stops at the first
 * collection deeper than max, so the scanner never sees more than max levels plus its
 * look-ahead. Returns 0, also for bytes that are not YAML (the loader names the error);
 * -E2BIG with *line (1-based) where that collection starts; -ENOMEM. y: yaml_lib_load's. */
int yaml_nesting_check(const struct yaml_lib *y, const char *buf, size_t len, unsigned max, unsigned long *line);

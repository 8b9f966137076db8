/* Finding and reading the site policy for a command: --policy FILE (a path on this
 * machine), else /etc/gpuvet/policy.yaml (or .yml) under the root being acted on. */
#pragma once

#include <stdbool.h>

struct fsroot;
struct policy;

/* Read the policy for command cmd. Returns EXIT_PASS with *loaded telling whether one was
 * read (none with no_policy, or when there is no default file), or an exit code after
 * printing every problem of the file, one "FILE:LINE: ..." per line. */
int site_policy_load(const char *cmd, const char *path, bool no_policy, struct fsroot *fs, struct policy *p,
                     bool *loaded);

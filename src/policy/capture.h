/* `gpuvet policy capture`: the node written as a policy whose reference pins it, in the
 * format policy_load() reads (docs/policy.md), with the other sections as comments to
 * edit. */
#pragma once

struct facts;
struct golden;

/* The policy text (caller frees), or NULL when out of memory. when: ISO 8601 time. */
char *policy_capture_text(const struct facts *f, const struct golden *g, const char *when);

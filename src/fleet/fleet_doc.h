/* Reading one node report (check, burn, bench, bench nccl/rdma/train JSON) into a struct
 * fleet_doc. A fleet has thousands of them, so this does not build a jansson tree: jsmn
 * tokenizes the bytes and only the fields fleet uses are copied out (docs/perf.md,
 * "fleet"). The input is untrusted (tests/fuzz/fuzz_fleet_doc.c). */
#pragma once

#include <errno.h>
#include <stddef.h>

#include "fleet/fleet.h"

/* The deepest nesting of objects and arrays read; a deeper document is refused before it is
 * tokenized. gpuvet's own reports nest 5 levels. */
#define FLEET_DOC_MAX_DEPTH 64u

/* fleet_doc_parse's answer for a document fleet itself wrote (schema gpuvet.fleet/N): the
 * Ansible play writes its aggregate beside the nodes' reports it aggregated, so a
 * directory walk meets it and must pass it by without calling it a bad input. */
#define FLEET_DOC_AGGREGATE (-EDOM)

/* Token storage reused from one document to the next (one per reading thread). */
struct fleet_scratch {
        void *tokens;
        size_t cap;
};

/* Parse len bytes at buf into doc (zeroed first; doc->path, doc->node are left NULL).
 * Returns 0; -EINVAL when the bytes are not a JSON object fleet can read (why: "truncated
 * JSON (ends inside a value)", "not JSON (byte 12)", "nested deeper than 64 levels", "no
 * summary.verdict"); -EPROTO for a document of a schema fleet does not read (why names it);
 * FLEET_DOC_AGGREGATE for fleet's own --json (why says so); -ENOMEM. On error doc holds
 * nothing to free. */
int fleet_doc_parse(const char *buf, size_t len, struct fleet_scratch *scratch, struct fleet_doc *doc, char *why,
                    size_t whysize);

/* Free what doc holds and zero it. */
void fleet_doc_clear(struct fleet_doc *doc);

void fleet_scratch_free(struct fleet_scratch *scratch);


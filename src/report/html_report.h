/* `gpuvet report --html`: one node's page from the JSON documents gpuvet writes: check's
 * and burn's gpuvet.report/1, bench's gpuvet.bench/2, and the measurements of bench nccl,
 * rdma and train (docs/report-html.md). The page opens with the node, its verdict and when
 * each document was written; then the failures, each with its remedy, the warnings and the
 * errors; the passing results folded away; the inventory; the benchmarks as bars against
 * their references; the burn's telemetry as charts. */
#pragma once

#include <jansson.h>
#include <stddef.h>
#include <time.h>

struct baselines;

struct html_report_input {
        const char *file; /* names the document in messages and on the page */
        json_t *doc;
        time_t written;   /* when the document was written (its file's mtime); 0: unknown */
};

/* The page of docs[0..n) (n >= 1), which must all be of one node (the same host.hostname).
 * limits (may be NULL) gives each benchmark's pass ratio, to mark thresholds on the bars.
 * Returns 0 with the page in *ret_html (free() it) and its length in *ret_len; -EINVAL with
 * "FILE: what is wrong" in err for a document that is not one gpuvet wrote (an unknown
 * schema, a field of the wrong type) or of another node; -ENOMEM. */
int html_report_render(const struct html_report_input *docs, size_t n, const struct baselines *limits,
                       char **ret_html, size_t *ret_len, char *err, size_t errsize);

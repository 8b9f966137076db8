/* `gpuvet bench rdma`'s reports: perftest's tables (ib_write_bw, ib_read_bw, ib_write_lat
 * columns, Gb/s) and the verdicts as text, and the JSON document (schema
 * gpuvet.bench-rdma/1, docs/report-schema.md). */
#pragma once

#include <stdio.h>

#include "bench/rdma_run.h"
#include "core/result.h"
#include "report/report_text.h"

#define RDMA_SCHEMA "gpuvet.bench-rdma/1"

/* One judged test: the largest size's average bandwidth against the link's data rate. */
struct rdma_verdict {
        const char *test;     /* "write_bw", "read_bw", "run", "verification" */
        enum status status;
        uint64_t bytes;
        double observed_gbps; /* < 0: none */
        double link_gbps;     /* < 0: unknown */
        double ratio;         /* observed / link, < 0: none */
        double pass_ratio, warn_ratio;
        char summary[384];
};

struct rdma_report {
        const struct rdma_options *opt;
        const struct rdma_result *res;
        const struct rdma_verdict *verdicts;
        size_t n_verdicts;
        enum status verdict;
        const char *rationale; /* the thresholds' reasoning, from baselines.json */
        double duration_ms;
};

/* NULL when out of memory. */
char *rdma_report_json(const struct rdma_report *r);
void rdma_report_text(FILE *out, const struct rdma_report *r, const struct text_options *t);

/* bench nccl's judging, apart from the command that runs the job and prints: the largest
 * size's bus bandwidth of each collective against what the node's links carry and the
 * seed's baselines (docs/bench.md, "nccl", "What is expected"). */
#pragma once

#include <stddef.h>

#include "bench/baselines.h"
#include "bench/measurement.h"
#include "bench/nccl_expect.h"
#include "bench/nccl_job.h"
#include "core/result.h"

/* One measurement per collective of run into rep, judged against fabric's peak or bl's
 * baseline for the job's shape (nodes, per_node ranks on each; nodes 0: unknown). */
void nccl_judge(const struct nccl_run_options *run, const struct nccl_job_result *job, const struct nccl_fabric *fabric,
                const struct baselines *bl, int nodes, int per_node, struct bench_report *rep);

/* The run's verdict: the worst of the measurements, an error when the job failed or any of
 * the n_outcomes ranks (rank 0's view of a multi-process job; none otherwise) did not end well. */
enum status nccl_verdict(const struct bench_report *verdicts, const struct nccl_job_result *job,
                         const struct nccl_rank_outcome *outcomes, size_t n_outcomes);

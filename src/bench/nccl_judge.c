/* bench nccl's judging: each collective's largest size against the fabric and the seed's
 * baselines, and the run's verdict (docs/bench.md, "nccl"). */
#include "bench/nccl_judge.h"

#include <stdio.h>

#include "bench/bench.h"
#include "bench/nccl_math.h"

/* In the registry for --list; `gpuvet bench nccl` runs it (src/cmd/bench_nccl.c). */
const struct bench_info bench_nccl = {
        .name = "nccl",
        .title = "NCCL collectives' bus bandwidth (gpuvet bench nccl --help)",
        .needs_device = true,
        .own_command = true,
};

void nccl_judge(const struct nccl_run_options *run, const struct nccl_job_result *job, const struct nccl_fabric *fabric,
                const struct baselines *bl, int nodes, int per_node, struct bench_report *rep) {
        char subject[48];
        int nranks = job->have_info ? job->info.nranks : 0;
        if (nodes > 0)
                snprintf(subject, sizeof(subject), "%d rank%s, %d node%s", nranks, nranks == 1 ? "" : "s", nodes,
                         nodes == 1 ? "" : "s");
        else
                snprintf(subject, sizeof(subject), "%d rank%s", nranks, nranks == 1 ? "" : "s");
        const struct bench_limit_set *ls = baselines_limits(bl, "nccl");
        bool failure_told = false;
        for (size_t k = 0; k < run->n_colls; k++) {
                enum nccl_coll c = run->colls[k];
                struct measurement *m = bench_measurement_new(rep, "nccl", nccl_coll_name(c), subject, "GB/s", true);
                const struct nccl_row *last = NULL;
                double wrong = 0;
                const struct nccl_row *first_wrong = NULL;
                for (size_t i = 0; i < job->n_rows; i++) {
                        const struct nccl_row *r = &job->rows[i];
                        if (r->coll != c)
                                continue;
                        if (r->n_final)
                                last = r;
                        wrong += r->wrong;
                        if (r->wrong > 0 && !first_wrong)
                                first_wrong = r;
                }
                if (!last) {
                        /* the failure belongs to the collective that was running (or, before
                         * any ran, to the first); the ones after it never ran */
                        bool failed_here = job->failed && !failure_told && (!job->have_step || job->step_coll == c);
                        if (failed_here) {
                                measurement_fail(m, STATUS_ERROR, "%s", job->error);
                                failure_told = true;
                        } else if (job->failed) {
                                measurement_fail(m, STATUS_SKIP, "not run: the run stopped before it");
                        } else {
                                measurement_fail(m, STATUS_SKIP, "no size of the sweep holds one element per rank");
                        }
                        continue;
                }
                measurement_param(m, "size_bytes", "%zu", last->bytes);
                measurement_param(m, "datatype", "%s", nccl_dtype_name(run->dtype));
                if (nccl_coll_reduces(c))
                        measurement_param(m, "op", "%s", nccl_redop_name(run->op));
                measurement_param(m, "placement", "%s", last->in_place ? "in_place" : "out_of_place");
                (void)measurement_set_samples(m, last->final_busbw, last->n_final, 0);
                m->verified = run->check && wrong == 0;
                if (first_wrong)
                        snprintf(m->verify_error, sizeof(m->verify_error),
                                 "%.0f wrong elements over the sweep, the first at %zu bytes %s", wrong,
                                 first_wrong->bytes, first_wrong->in_place ? "in place" : "out of place");
                int ranks = job->info.nranks;
                if (ranks > 1 && fabric->peak_gbps > 0) {
                        m->peak = fabric->peak_gbps;
                        snprintf(m->peak_source, sizeof(m->peak_source), "%.*s", (int)sizeof(m->peak_source) - 1, fabric->source);
                }
                /* the seed's figures hold for its shapes only */
                const char *shape = nccl_baseline_shape(ranks, nodes, per_node, fabric);
                if (fabric->model && shape) {
                        char name[48];
                        snprintf(name, sizeof(name), "%s/%s", nccl_coll_name(c), shape);
                        const struct baseline *b = baselines_find(bl, fabric->model, "nccl", name);
                        if (b) {
                                m->baseline = b->value;
                                snprintf(m->baseline_source, sizeof(m->baseline_source), "%s", b->source);
                        }
                }
                bench_judge(m, ls ? (m->baseline > 0 ? &ls->baseline : &ls->peak) : NULL);
        }
}

enum status nccl_verdict(const struct bench_report *verdicts, const struct nccl_job_result *job,
                         const struct nccl_rank_outcome *outcomes, size_t n_outcomes) {
        enum status verdict = STATUS_SKIP;
        for (size_t i = 0; i < verdicts->n; i++)
                verdict = status_worse(verdict, verdicts->m[i].status);
        if (job->failed)
                verdict = status_worse(verdict, STATUS_ERROR);
        for (size_t i = 0; i < n_outcomes; i++)
                if (outcomes[i].state != NCCL_RANK_OK)
                        verdict = status_worse(verdict, STATUS_ERROR);
        return verdict;
}

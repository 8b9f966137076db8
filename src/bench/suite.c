#include "bench/suite.h"
#include "bench/baselines.h"
#include "bench/bench.h"
#include "bench/runner.h"
#include "core/deadline.h"

#include <stdio.h>
#include <string.h>

/* As `gpuvet bench`: GPUs of one node within 10% of their siblings (gpu-specs §4: a spread
 * of ~5% is normal). */
#define SIBLING_TOLERANCE 0.10

static const char *remedy_of(const char *bench) {
        const struct bench_info *b = bench_find(bench);
        return b ? b->remedy : NULL;
}

void bench_suite_not_run(struct bench_suite_facts *ret, const char *why) {
        memset(ret, 0, sizeof(*ret));
        bench_report_init(&ret->rep);
        ret->remedy_of = remedy_of;
        snprintf(ret->not_run, sizeof(ret->not_run), "%s", why);
}

void bench_suite_done(struct bench_suite_facts *s) { bench_report_done(&s->rep); }

void bench_suite_run(struct fsroot *fs, const struct facts *f, const char *backend, const char *data_dir,
                     bool progress, struct bench_suite_facts *ret) {
        bench_suite_not_run(ret, "");
        snprintf(ret->backend, sizeof(ret->backend), "%s", backend ? backend : "auto");
        char err[512];
        struct baselines *bl = NULL;
        if (baselines_load(data_dir, &bl, err, sizeof(err)) < 0) {
                snprintf(ret->not_run, sizeof(ret->not_run), "baselines: %.240s", err);
                return;
        }
        double start = monotonic_ms();
        struct bench_options opt = {.backend = ret->backend};
        struct bench_progress line;
        bench_progress_init(&line, "check", bench_all_count, progress);
        struct bench_ctx ctx = {.opt = &opt, .facts = f, .baselines = bl, .fs = fs, .progress = &line};
        double later_s = 0;
        for (size_t i = 0; i < bench_all_count; i++)
                later_s += bench_deadline_s(bench_registry[i], 0);
        for (size_t i = 0; i < bench_all_count; i++) {
                struct bench_run_result res;
                later_s -= bench_deadline_s(bench_registry[i], 0);
                bench_progress_next(&line, later_s);
                bench_run_child(bench_registry[i], &ctx, 0, &ret->rep, &res);
                bench_judge_range(&ret->rep, res.first, f, bl);
        }
        progress_clear(&line.out);
        bench_compare_siblings(&ret->rep, SIBLING_TOLERANCE);
        ret->ran = true;
        ret->duration_ms = monotonic_ms() - start;
        baselines_free(bl);
}

/* device.benchmarks: every benchmark of `gpuvet bench all`, run at the full level
 * (results/bench_suite.h), told as one result per subject the benchmarks measured (a GPU, a pair
 * of GPUs, a NUMA node, the host): the worst of its measurements, naming the ones that
 * fell short. The figures were judged where `gpuvet bench` judges them (peaks, baselines,
 * siblings); this check only gathers them (docs/checks/device.md). */
#include "checks/check.h"
#include "results/bench_suite.h"

#include <stdio.h>
#include <string.h>

/* A GPU's subject is its PCI address, as every other GPU result: "gpu0 (0000:1b:00.0)"
 * -> "0000:1b:00.0"; other subjects as the benchmark named them. */
static void subject_of(const struct measurement *m, char *buf, size_t size) {
        const char *open = strchr(m->subject, '('), *close = open ? strchr(open, ')') : NULL;
        if (strncmp(m->subject, "gpu", 3) == 0 && open && close && !strstr(m->subject, "->"))
                snprintf(buf, size, "%.*s", (int)(close - open - 1), open + 1);
        else
                snprintf(buf, size, "%s", m->subject);
}

static bool seen_before(const struct bench_report *r, size_t i) {
        char a[64], b[64];
        subject_of(&r->m[i], a, sizeof(a));
        for (size_t k = 0; k < i; k++) {
                subject_of(&r->m[k], b, sizeof(b));
                if (strcmp(a, b) == 0)
                        return true;
        }
        return false;
}

static void run_benchmarks(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct bench_suite_facts *s = f->bench_suite;
        if (!s || !s->ran) {
                result_status(result_new(rep, self, "host"), STATUS_SKIP, "%s",
                              s ? s->not_run : "the benchmarks were not run");
                return;
        }
        const struct bench_report *r = &s->rep;
        for (size_t i = 0; i < r->n; i++) {
                if (seen_before(r, i))
                        continue;
                char subject[64], other[64];
                subject_of(&r->m[i], subject, sizeof(subject));
                struct result *res = result_new(rep, self, subject);
                enum status worst = STATUS_SKIP;
                size_t n = 0, short_of = 0;
                const struct measurement *first_bad = NULL;
                char bad[400] = "";
                size_t used = 0;
                for (size_t k = i; k < r->n; k++) {
                        const struct measurement *m = &r->m[k];
                        subject_of(m, other, sizeof(other));
                        if (strcmp(other, subject) != 0)
                                continue;
                        n++;
                        worst = status_worse(worst, m->status);
                        char key[96];
                        snprintf(key, sizeof(key), "%s/%s", m->bench, m->name);
                        result_evidence(res, key, "%s: %s", status_name(m->status), m->summary);
                        if (m->status == STATUS_WARN || m->status == STATUS_FAIL || m->status == STATUS_ERROR) {
                                short_of++;
                                if (!first_bad || status_worse(m->status, first_bad->status) != first_bad->status)
                                        first_bad = m;
                                if (used < sizeof(bad) && short_of <= 3)
                                        used += (size_t)snprintf(bad + used, sizeof(bad) - used, "%s%s/%s (%s)",
                                                                 short_of > 1 ? "; " : "", m->bench, m->name,
                                                                 status_name(m->status));
                        }
                }
                result_observed(res, "%zu measurements, %zu short of their references", n, short_of);
                result_expected(res, "every measurement at its peak, baseline and siblings' level (docs/bench.md)");
                if (!first_bad) {
                        result_status(res, worst == STATUS_SKIP ? STATUS_SKIP : STATUS_PASS,
                                      "%zu measurements in line with their peaks and baselines", n);
                        continue;
                }
                result_status(res, worst, "%zu of %zu measurements fell short: %s%s", short_of, n, bad,
                              short_of > 3 ? "; ..." : "");
                const char *remedy = s->remedy_of ? s->remedy_of(first_bad->bench) : NULL;
                result_remedy(res, "%s", remedy ? remedy : "run `gpuvet bench` on this subject and compare");
        }
        if (r->n == 0)
                result_status(result_new(rep, self, "host"), STATUS_ERROR, "the benchmarks measured nothing");
}

CHECK_INFO(device_benchmarks, "device", "device.benchmarks", LEVEL_FULL, NEED_BENCH_SUITE,
           "Every benchmark of `gpuvet bench all` reaches its peak, baseline and siblings' level", run_benchmarks);

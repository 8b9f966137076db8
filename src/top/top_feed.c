/* The model kept current and honest (top_feed.h). */
#include "top/top_feed.h"
#include "core/clock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const char *end_text(const struct sampler_status *st) {
        switch (st->end) {
        case SAMPLER_CALL_HUNG: return "sampling stopped: an NVML call never returned";
        case SAMPLER_SHUTDOWN_HUNG: return "sampling stopped: nvmlShutdown never returned";
        case SAMPLER_FAILED: return st->end_errno == ENOMEM ? "sampling stopped: out of memory"
                                                            : "sampling stopped: no thread could be started";
        default: return "sampling stopped";
        }
}

int top_feed_poll(struct top_feed *fd, struct top_model *m) {
        int changed = 0;
        struct sample *x = sampler_next(fd->smp, fd->seq, 0);
        if (x) {
                int r = top_model_update(m, &x->facts, x->started_ns, &fd->look);
                fd->seq = x->seq;
                m->seq = x->seq;
                sample_put(fd->smp, x);
                if (r < 0)
                        return r;
                changed = 1;
        }
        struct sampler_status st;
        if (sampler_ended(fd->smp, &st)) {
                /* Nothing newer will come: whatever still looks live is not. */
                if (!fd->ended_said || changed) {
                        top_model_all_stale(m, end_text(&st));
                        fd->ended_said = true;
                        changed = 1;
                }
                return changed;
        }
        if (m->seq) {
                /* Age from the round's start: a round that took seconds gives values that old. */
                unsigned long long age_ms = (monotonic_ns() - m->taken_ns) / 1000000ULL;
                if (age_ms > fd->stale_after_ms) {
                        char why[96];
                        snprintf(why, sizeof(why), "readings %llu s old", age_ms / 1000ULL);
                        if (strcmp(why, m->problem) != 0) {
                                top_model_all_stale(m, why);
                                changed = 1;
                        }
                }
        }
        return changed;
}

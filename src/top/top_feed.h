/* Samples into the model, and time into staleness (docs/top.md, "Stale and lost"): the
 * one place that decides whether what the screen shows is still live. */
#pragma once

#include <stdbool.h>

#include "metrics/sampler.h"
#include "top/top_model.h"

struct top_feed {
        struct sampler *smp;
        struct top_lookup look;
        unsigned long long interval_ms;
        unsigned long long stale_after_ms; /* no new round for this long: every GPU stale */
        unsigned long long seq;            /* the last sample taken in */
        bool ended_said;                   /* the sampler's end was put in the model */
};

/* Take in a newer sample if one was published, then mark the GPUs stale when rounds
 * stopped coming. Returns 1 when the model changed, 0 when not, -ENOMEM. */
int top_feed_poll(struct top_feed *fd, struct top_model *m);

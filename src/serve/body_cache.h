/* The /metrics bodies of the sampler's latest round, rendered once per round and format,
 * so that a scrape copies nothing but a few lines (docs/serve.md, "Collection and scrapes").
 *
 * A scrape never waits on NVML: it takes the latest published sample (sampler.h). A sample
 * older than stale_after_ms, or any sample once the sampler stopped, is stale: its values
 * are left out (exposition.h), never served frozen. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "metrics/sampler.h"
#include "serve/accept.h"
#include "serve/check_watch.h"
#include "serve/xid_counter.h"

struct body_cache;

/* hostname is copied; xids and checks may be NULL (not watched, no --check-report).
 * Returns 0 or -ENOMEM. */
int body_cache_new(struct sampler *smp, struct xid_counter *xids, struct check_watch *checks, const char *hostname,
                   unsigned long long stale_after_ms, struct body_cache **ret);
void body_cache_free(struct body_cache *c);

/* The Xid counter and the check statuses, known only after the first round: the cache
 * serves 503 before it, so the server starts at once (docs/serve.md). Safe while scrapes
 * run; either may be NULL. */
void body_cache_attach(struct body_cache *c, struct xid_counter *xids, struct check_watch *checks);

struct proc_workloads;
/* Export the GPUs' processes attributed by pw (kept, not owned; used under the cache's
 * lock only), and with workload_labels add their workloads' labels to the DCGM series
 * (--workload-labels). Before the server starts. */
void body_cache_set_workloads(struct body_cache *c, struct proc_workloads *pw, bool workload_labels);

/* One scrape's body: the round's rendered part, shared with every other scrape of the
 * round (not copied), then this scrape's tail. Valid until body_cache_release. */
struct scrape_body {
        const char *part[2];
        size_t len[2];
};

/* The body of a scrape now, in fmt. Returns 0, -EAGAIN before the first round was
 * published, -ENOMEM. */
int body_cache_scrape(struct body_cache *c, enum expo_format fmt, struct scrape_body **ret);
/* Give a scrape's body back (accepts NULL). */
void body_cache_release(struct scrape_body *b);

/* Learn x's GPUs' identity labels now (the first round: a short interval may replace it
 * before anything else looks). Later rounds are learnt as they are scraped or checked. */
void body_cache_learn(struct body_cache *c, const struct sample *x);

/* How many GPUs seen since the start the latest round does not count (nvmlDeviceGetCount_v2
 * failing, or counting fewer), and why, into why, when any. */
unsigned int body_cache_gpus_missing(struct body_cache *c, char *why, size_t size);

/* Whether the sampler runs, its latest round is fresh and counts every GPU seen since the
 * start; when not, why, into why. */
bool body_cache_healthy(struct body_cache *c, char *why, size_t size);

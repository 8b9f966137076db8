/* Per-round body cache (body_cache.h). */
#include "serve/body_cache.h"
#include "core/clock.h"

#include "serve/exposition.h"
#include "serve/proc_workloads.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A round's body in one format: one reference for the cache while the round is the
 * latest, one per scrape still sending it. */
struct rendered {
        atomic_uint refs;
        char *body;
        size_t len;
};

struct scrape {
        struct scrape_body pub; /* first: a scrape_body * is a struct scrape * */
        struct rendered *r;
        char tail[EXPO_TAIL_MAX];
};

struct body_cache {
        struct sampler *smp;
        /* Set once after the first round (body_cache_attach) while scrapes may run. */
        struct xid_counter *_Atomic xids;
        struct check_watch *_Atomic checks;
        char *hostname;
        unsigned long long stale_after_ns;
        pthread_mutex_t lock;
        /* under lock: what rendered[] was rendered from */
        unsigned long long seq;
        bool stale;
        unsigned long long xid_generation;
        unsigned long long check_generation;
        struct rendered *rendered[EXPO_FORMAT_COUNT]; /* NULL: not rendered for this round yet */
        /* under lock: every GPU seen since the start, learnt from each round once (known_seq) */
        struct expo_known_gpus known;
        unsigned long long known_seq;
        /* body_cache_set_workloads; used under lock */
        struct proc_workloads *workloads;
        bool workload_labels;
};

int body_cache_new(struct sampler *smp, struct xid_counter *xids, struct check_watch *checks, const char *hostname,
                   unsigned long long stale_after_ms, struct body_cache **ret) {
        struct body_cache *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->hostname = strdup(hostname);
        if (!c->hostname) {
                free(c);
                return -ENOMEM;
        }
        c->smp = smp;
        atomic_init(&c->xids, xids);
        atomic_init(&c->checks, checks);
        c->stale_after_ns = stale_after_ms * 1000000ULL;
        pthread_mutex_init(&c->lock, NULL);
        *ret = c;
        return 0;
}

static void unref(struct rendered *r) {
        if (r && atomic_fetch_sub(&r->refs, 1) == 1) {
                free(r->body);
                free(r);
        }
}

static void forget_locked(struct body_cache *c) {
        for (int f = 0; f < EXPO_FORMAT_COUNT; f++) {
                unref(c->rendered[f]);
                c->rendered[f] = NULL;
        }
}

#define MAX_XID_COUNTS 4096u

/* The Xid counts now, for a render; NULL when not watched or out of memory (then the
 * body goes without them this once: the generation check renders again next scrape). */
static struct expo_xids *read_xids(struct xid_counter *xc, unsigned int n_gpus) {
        if (!xc)
                return NULL;
        struct expo_xids *x = calloc(1, sizeof(*x));
        struct xid_count *counts = calloc(MAX_XID_COUNTS, sizeof(*counts));
        bool *watched = calloc(n_gpus ? n_gpus : 1, sizeof(*watched));
        unsigned long long *last = calloc(n_gpus ? n_gpus : 1, sizeof(*last));
        if (!x || !counts || !watched || !last) {
                free(x);
                free(counts);
                free(watched);
                free(last);
                return NULL;
        }
        xid_counter_read(xc, counts, MAX_XID_COUNTS, &x->n, n_gpus, watched, last);
        x->counts = counts;
        x->watched = watched;
        x->last = last;
        return x;
}

static void free_xids(struct expo_xids *x) {
        if (!x)
                return;
        free((void *)x->counts);
        free((void *)x->watched);
        free((void *)x->last);
        free(x);
}

/* more (more_len bytes and its NUL; freed) appended to body (realloc'd). */
static int append(char **body, size_t *len, char *more, size_t more_len) {
        char *grown = realloc(*body, *len + more_len + 1);
        if (!grown) {
                free(more);
                return -ENOMEM;
        }
        memcpy(grown + *len, more, more_len + 1);
        *body = grown;
        *len += more_len;
        free(more);
        return 0;
}

/* The check statuses appended to body (realloc'd). */
static int append_checks(struct check_watch *w, enum expo_format fmt, char **body, size_t *len) {
        struct check_view *v = check_watch_get(w);
        if (!v)
                return 0;
        char *more = NULL;
        size_t more_len = 0;
        int e = expo_render_checks(v, fmt, &more, &more_len);
        check_view_put(v);
        return e < 0 ? e : append(body, len, more, more_len);
}

/* The processes of a fresh round appended to body (realloc'd). */
static int append_processes(const struct nvml_facts *f, const struct gpu_procs *procs, const char *hostname,
                            enum expo_format fmt, char **body, size_t *len) {
        char *more = NULL;
        size_t more_len = 0;
        int e = expo_render_processes(f, procs, hostname, fmt, &more, &more_len);
        return e < 0 ? e : append(body, len, more, more_len);
}

/* Learn x's GPUs, under lock. A GPU whose identity could not be kept for lack of memory
 * is learnt from a later round. */
static void learn_locked(struct body_cache *c, const struct sample *x) {
        if (c->known_seq == x->seq)
                return;
        if (expo_known_learn(&c->known, &x->facts) == 0)
                c->known_seq = x->seq;
}

static struct rendered *render(const struct sample *x, struct xid_counter *xc, struct check_watch *checks,
                               const char *hostname, enum expo_format fmt, bool stale, struct proc_workloads *pw,
                               bool workload_labels, const struct expo_known_gpus *known) {
        struct rendered *r = calloc(1, sizeof(*r));
        if (!r)
                return NULL;
        /* A stale round's processes are as old as its values: neither is written. */
        struct gpu_procs *procs = NULL;
        if (pw && !stale && proc_workloads_round(pw, &x->facts, &procs) < 0) {
                free(r);
                return NULL;
        }
        struct expo_xids *xids = read_xids(xc, x->facts.n_gpus);
        int e = expo_render_sample_known(&x->facts, xids, workload_labels ? procs : NULL, known, hostname, fmt,
                                         stale, &r->body, &r->len);
        free_xids(xids);
        if (e == 0 && procs) {
                e = append_processes(&x->facts, procs, hostname, fmt, &r->body, &r->len);
                if (e < 0)
                        free(r->body);
        }
        gpu_procs_free(procs, x->facts.n_gpus);
        if (e == 0 && checks) {
                e = append_checks(checks, fmt, &r->body, &r->len);
                if (e < 0)
                        free(r->body);
        }
        if (e < 0) {
                free(r);
                return NULL;
        }
        atomic_init(&r->refs, 1);
        return r;
}

void body_cache_set_workloads(struct body_cache *c, struct proc_workloads *pw, bool workload_labels) {
        pthread_mutex_lock(&c->lock);
        c->workloads = pw;
        c->workload_labels = workload_labels;
        forget_locked(c);
        pthread_mutex_unlock(&c->lock);
}

void body_cache_attach(struct body_cache *c, struct xid_counter *xids, struct check_watch *checks) {
        pthread_mutex_lock(&c->lock);
        atomic_store(&c->xids, xids);
        atomic_store(&c->checks, checks);
        forget_locked(c); /* a body rendered without them is not served again */
        pthread_mutex_unlock(&c->lock);
}

void body_cache_free(struct body_cache *c) {
        if (!c)
                return;
        forget_locked(c);
        expo_known_done(&c->known);
        pthread_mutex_destroy(&c->lock);
        free(c->hostname);
        free(c);
}

/* How old x is now (ns) and whether it is stale. */
static bool is_stale(struct body_cache *c, const struct sample *x, bool ended, unsigned long long *ret_age_ns) {
        unsigned long long now = monotonic_ns();
        *ret_age_ns = now > x->started_ns ? now - x->started_ns : 0;
        return ended || *ret_age_ns > c->stale_after_ns;
}

int body_cache_scrape(struct body_cache *c, enum expo_format fmt, struct scrape_body **ret) {
        struct sample *x = sampler_latest(c->smp);
        if (!x)
                return -EAGAIN;
        struct scrape *out = malloc(sizeof(*out));
        if (!out) {
                sample_put(c->smp, x);
                return -ENOMEM;
        }
        bool ended = sampler_ended(c->smp, NULL);
        unsigned long long age_ns;
        bool stale = is_stale(c, x, ended, &age_ns);
        size_t tail_len = expo_render_tail(out->tail, sizeof(out->tail), fmt, (double)age_ns / 1e9, !ended);

        struct xid_counter *xids = atomic_load(&c->xids);
        struct check_watch *checks = atomic_load(&c->checks);
        unsigned long long xid_gen = xids ? xid_counter_generation(xids) : 0;
        unsigned long long check_gen = checks ? check_watch_generation(checks) : 0;
        pthread_mutex_lock(&c->lock);
        if (c->seq != x->seq || c->stale != stale || c->xid_generation != xid_gen ||
            c->check_generation != check_gen) {
                forget_locked(c);
                c->seq = x->seq;
                c->stale = stale;
                c->xid_generation = xid_gen;
                c->check_generation = check_gen;
        }
        learn_locked(c, x);
        if (!c->rendered[fmt])
                c->rendered[fmt] = render(x, atomic_load(&c->xids), atomic_load(&c->checks), c->hostname, fmt,
                                          stale, c->workloads, c->workload_labels, &c->known);
        out->r = c->rendered[fmt];
        if (out->r)
                atomic_fetch_add(&out->r->refs, 1);
        pthread_mutex_unlock(&c->lock);
        sample_put(c->smp, x);
        if (!out->r) {
                free(out);
                return -ENOMEM;
        }
        out->pub.part[0] = out->r->body;
        out->pub.len[0] = out->r->len;
        out->pub.part[1] = out->tail;
        out->pub.len[1] = tail_len;
        *ret = &out->pub;
        return 0;
}

void body_cache_release(struct scrape_body *b) {
        if (!b)
                return;
        struct scrape *s = (struct scrape *)b;
        unref(s->r);
        free(s);
}

void body_cache_learn(struct body_cache *c, const struct sample *x) {
        pthread_mutex_lock(&c->lock);
        learn_locked(c, x);
        pthread_mutex_unlock(&c->lock);
}

unsigned int body_cache_gpus_missing(struct body_cache *c, char *why, size_t size) {
        struct sample *x = sampler_latest(c->smp);
        if (!x)
                return 0;
        pthread_mutex_lock(&c->lock);
        learn_locked(c, x);
        unsigned int seen = c->known.n;
        pthread_mutex_unlock(&c->lock);
        const struct nvml_facts *f = &x->facts;
        unsigned int missing = seen > f->n_gpus ? seen - f->n_gpus : 0;
        if (missing && !nv_ok(f->device_count))
                snprintf(why, size, "nvmlDeviceGetCount_v2 fails (%s): the %u GPU%s seen before are not read",
                         nv_rc_text(NULL, f->device_count.rc) /* no NVML call off its deadline */, seen, seen == 1 ? "" : "s");
        else if (missing)
                snprintf(why, size, "NVML counts %u GPU%s, %u were seen before: %u lost", f->n_gpus,
                         f->n_gpus == 1 ? "" : "s", seen, missing);
        sample_put(c->smp, x);
        return missing;
}

bool body_cache_healthy(struct body_cache *c, char *why, size_t size) {
        struct sampler_status st;
        if (sampler_ended(c->smp, &st)) {
                snprintf(why, size, "the sampler stopped: %s",
                         st.end == SAMPLER_CALL_HUNG       ? "an NVML call never returned"
                         : st.end == SAMPLER_SHUTDOWN_HUNG ? "nvmlShutdown never returned"
                                                           : "it could not go on");
                return false;
        }
        struct sample *x = sampler_latest(c->smp);
        if (!x) {
                snprintf(why, size, "no round has been read yet");
                return false;
        }
        unsigned long long age_ns;
        bool stale = is_stale(c, x, false, &age_ns);
        sample_put(c->smp, x);
        if (stale) {
                snprintf(why, size, "the latest round began %.1f s ago (stale after %.1f s)", (double)age_ns / 1e9,
                         (double)c->stale_after_ns / 1e9);
                return false;
        }
        return body_cache_gpus_missing(c, why, size) == 0;
}

/* Per-round body cache (body_cache.h). */
#include "serve/body_cache.h"

#include "serve/exposition.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct rendered {
        char *body; /* NULL: not rendered for this round yet */
        size_t len;
};

struct body_cache {
        struct sampler *smp;
        char *hostname;
        unsigned long long stale_after_ns;
        pthread_mutex_t lock;
        /* under lock: what rendered[] was rendered from */
        unsigned long long seq;
        bool stale;
        struct rendered rendered[EXPO_FORMAT_COUNT];
};

static unsigned long long monotonic_ns(void) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (unsigned long long)t.tv_sec * 1000000000ULL + (unsigned long long)t.tv_nsec;
}

int body_cache_new(struct sampler *smp, const char *hostname, unsigned long long stale_after_ms,
                   struct body_cache **ret) {
        struct body_cache *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->hostname = strdup(hostname);
        if (!c->hostname) {
                free(c);
                return -ENOMEM;
        }
        c->smp = smp;
        c->stale_after_ns = stale_after_ms * 1000000ULL;
        pthread_mutex_init(&c->lock, NULL);
        *ret = c;
        return 0;
}

static void forget_locked(struct body_cache *c) {
        for (int f = 0; f < EXPO_FORMAT_COUNT; f++) {
                free(c->rendered[f].body);
                c->rendered[f] = (struct rendered){0};
        }
}

void body_cache_free(struct body_cache *c) {
        if (!c)
                return;
        forget_locked(c);
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

int body_cache_scrape(struct body_cache *c, enum expo_format fmt, char **ret, size_t *ret_len) {
        struct sample *x = sampler_latest(c->smp);
        if (!x)
                return -EAGAIN;
        bool ended = sampler_ended(c->smp, NULL);
        unsigned long long age_ns;
        bool stale = is_stale(c, x, ended, &age_ns);
        char tail[EXPO_TAIL_MAX];
        size_t tail_len = expo_render_tail(tail, sizeof(tail), fmt, (double)age_ns / 1e9, !ended);

        int r = 0;
        pthread_mutex_lock(&c->lock);
        if (c->seq != x->seq || c->stale != stale) {
                forget_locked(c);
                c->seq = x->seq;
                c->stale = stale;
        }
        struct rendered *b = &c->rendered[fmt];
        if (!b->body)
                r = expo_render_sample(&x->facts, c->hostname, fmt, stale, &b->body, &b->len);
        char *out = NULL;
        if (r == 0) {
                out = malloc(b->len + tail_len + 1);
                if (out) {
                        memcpy(out, b->body, b->len);
                        memcpy(out + b->len, tail, tail_len);
                        out[b->len + tail_len] = '\0';
                } else {
                        r = -ENOMEM;
                }
        }
        if (r == 0) {
                *ret = out;
                *ret_len = b->len + tail_len;
        }
        pthread_mutex_unlock(&c->lock);
        sample_put(c->smp, x);
        return r;
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
        return true;
}

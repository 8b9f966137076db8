#include "core/result.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[_STATUS_COUNT] = {"pass", "warn", "fail", "skip", "error"};
static const char *const level_names[_LEVEL_COUNT] = {"quick", "standard", "full"};

const char *status_name(enum status s) { return s >= 0 && s < _STATUS_COUNT ? status_names[s] : "?"; }
const char *level_name(enum level l) { return l >= 0 && l < _LEVEL_COUNT ? level_names[l] : "?"; }

enum level level_from_name(const char *name) {
        for (int i = 0; i < _LEVEL_COUNT; i++)
                if (strcmp(name, level_names[i]) == 0)
                        return (enum level)i;
        return _LEVEL_INVALID;
}

void report_init(struct report *rep) { memset(rep, 0, sizeof(*rep)); }

static void result_free(struct result *r) {
        free(r->subject);
        free(r->summary);
        free(r->observed);
        free(r->expected);
        free(r->remedy);
        free(r->cause);
        free(r->code);
        for (size_t i = 0; i < r->n_evidence; i++) {
                free(r->evidence[i].key);
                free(r->evidence[i].value);
        }
        free(r->evidence);
}

void report_done(struct report *rep) {
        for (size_t i = 0; i < rep->n_results; i++)
                result_free(&rep->results[i]);
        free(rep->results);
        memset(rep, 0, sizeof(*rep));
}

/* Where setters write when the report could not grow: checks stay simple, and the
 * report says it ran out of memory instead of crashing. */
static struct result sink;

struct result *result_new(struct report *rep, const struct check_info *check, const char *subject) {
        if (rep->n_results == rep->cap_results) {
                size_t cap = rep->cap_results ? rep->cap_results * 2 : 64;
                struct result *grown = realloc(rep->results, cap * sizeof(*grown));
                if (!grown) {
                        rep->out_of_memory = true;
                        result_free(&sink);
                        memset(&sink, 0, sizeof(sink));
                        return &sink;
                }
                rep->results = grown;
                rep->cap_results = cap;
        }
        struct result *r = &rep->results[rep->n_results];
        memset(r, 0, sizeof(*r));
        r->check = check;
        r->status = STATUS_ERROR;
        r->subject = strdup(subject ? subject : "host");
        if (!r->subject) {
                rep->out_of_memory = true;
                return &sink;
        }
        rep->n_results++;
        return r;
}

static void set_text(char **field, const char *fmt, va_list ap) {
        char *s = NULL;
        if (vasprintf(&s, fmt, ap) < 0)
                s = NULL;
        free(*field);
        *field = s;
}

void result_status(struct result *r, enum status s, const char *fmt, ...) {
        va_list ap;
        r->status = s;
        va_start(ap, fmt);
        set_text(&r->summary, fmt, ap);
        va_end(ap);
}

#define DEFINE_SETTER(field)                                       \
        void result_##field(struct result *r, const char *fmt, ...) { \
                va_list ap;                                        \
                va_start(ap, fmt);                                 \
                set_text(&r->field, fmt, ap);                      \
                va_end(ap);                                        \
        }
DEFINE_SETTER(observed)
DEFINE_SETTER(expected)
DEFINE_SETTER(remedy)
DEFINE_SETTER(cause)
DEFINE_SETTER(code)

void result_evidence(struct result *r, const char *key, const char *fmt, ...) {
        struct evidence *grown = realloc(r->evidence, (r->n_evidence + 1) * sizeof(*grown));
        if (!grown)
                return;
        r->evidence = grown;
        struct evidence *e = &r->evidence[r->n_evidence];
        e->key = strdup(key);
        e->value = NULL;
        va_list ap;
        va_start(ap, fmt);
        set_text(&e->value, fmt, ap);
        va_end(ap);
        if (!e->key || !e->value) {
                free(e->key);
                free(e->value);
                return;
        }
        r->n_evidence++;
}

void report_tally(struct report *rep) {
        memset(rep->counts, 0, sizeof(rep->counts));
        for (size_t i = 0; i < rep->n_results; i++)
                rep->counts[rep->results[i].status]++;
}

enum status status_worse(enum status a, enum status b) {
        static const int rank[_STATUS_COUNT] = {[STATUS_SKIP] = 0, [STATUS_PASS] = 1, [STATUS_WARN] = 2,
                                                [STATUS_FAIL] = 3, [STATUS_ERROR] = 4};
        return rank[b] > rank[a] ? b : a;
}

enum status report_verdict(const struct report *rep) {
        if (rep->out_of_memory)
                return STATUS_FAIL;
        enum status worst = STATUS_SKIP;
        for (int s = 0; s < _STATUS_COUNT; s++)
                if (rep->counts[s])
                        worst = status_worse(worst, (enum status)s);
        return worst == STATUS_ERROR ? STATUS_FAIL : worst == STATUS_SKIP ? STATUS_PASS : worst;
}

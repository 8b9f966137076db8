/* The --check-report file of `gpuvet serve`, re-read when it changes (a new `gpuvet check
 * --json` run replaces it), its statuses shared with the renders (docs/serve.md). */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include "serve/check_status.h"

enum check_report_state {
        CHECK_REPORT_ABSENT,     /* not there (yet): no series */
        CHECK_REPORT_OK,
        CHECK_REPORT_UNREADABLE, /* there, but unreadable or not a check report: no statuses */
};

/* How a periodic check run (--check-interval, check_runner.h) ended. */
enum check_run_result {
        CHECK_RUN_OK,      /* exited with a verdict (0 or 1) and printed a check report */
        CHECK_RUN_TIMEOUT, /* killed at its deadline */
        CHECK_RUN_FAILED,  /* any other exit, a signal, or output that is not a check report */
        _CHECK_RUN_RESULT_COUNT,
};

/* The periodic runs so far (counted since gpuvet serve started). */
struct check_runs {
        bool periodic;         /* false: --check-report; the fields below are unused */
        unsigned long long total[_CHECK_RUN_RESULT_COUNT];
        double last_run_s;     /* CLOCK_REALTIME seconds when the last run ended; 0 before any */
        double last_duration_s;
};

/* What the file (or the last periodic run) said; immutable, shared by reference. */
struct check_view {
        enum check_report_state state;
        struct check_status_set set; /* CHECK_REPORT_OK */
        double mtime_s;              /* the file's modification time, or when the run that printed the
                                      * report ended (CLOCK_REALTIME seconds) */
        struct check_runs runs;
        /* private */
        atomic_uint refs;
};

struct check_watch;

/* path is copied. Reads it once now. Returns 0 or -ENOMEM. */
int check_watch_new(const char *path, FILE *log, struct check_watch **ret);

/* Read the file again when its identity, size or time changed; a change of state is said
 * on log ("gpuvet serve: --check-report FILE: ..."). */
void check_watch_poll(struct check_watch *w);

/* A watch fed by its owner instead of a file (gpuvet serve --check-interval): it has no
 * view until the first check_watch_publish, and check_watch_poll does nothing. Returns 0 or
 * -ENOMEM. */
int check_watch_new_fed(struct check_watch **ret);

/* A new view in state, with one reference (NULL when out of memory). */
struct check_view *check_view_new(enum check_report_state state);

/* Make v (its reference is taken over) the current view, the previous one released. */
void check_watch_publish(struct check_watch *w, struct check_view *v);

/* Changes with every new view. */
unsigned long long check_watch_generation(struct check_watch *w);

/* The current view, with a reference (give it back with check_view_put). */
struct check_view *check_watch_get(struct check_watch *w);
void check_view_put(struct check_view *v);

void check_watch_free(struct check_watch *w);

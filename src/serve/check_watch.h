/* The --check-report file of `gpuvet serve`, re-read when it changes (a new `gpuvet check
 * --json` run replaces it), its statuses shared with the renders (docs/serve.md). */
#pragma once

#include <stdatomic.h>
#include <stdio.h>

#include "serve/check_status.h"

enum check_report_state {
        CHECK_REPORT_ABSENT,     /* not there (yet): no series */
        CHECK_REPORT_OK,
        CHECK_REPORT_UNREADABLE, /* there, but unreadable or not a check report: no statuses */
};

/* What the file said when last read; immutable, shared by reference. */
struct check_view {
        enum check_report_state state;
        struct check_status_set set; /* CHECK_REPORT_OK */
        double mtime_s;              /* the file's modification time (CLOCK_REALTIME seconds) */
        /* private */
        atomic_uint refs;
};

struct check_watch;

/* path is copied. Reads it once now. Returns 0 or -ENOMEM. */
int check_watch_new(const char *path, FILE *log, struct check_watch **ret);

/* Read the file again when its identity, size or time changed; a change of state is said
 * on log ("gpuvet serve: --check-report FILE: ..."). */
void check_watch_poll(struct check_watch *w);

/* Changes with every new view. */
unsigned long long check_watch_generation(struct check_watch *w);

/* The current view, with a reference (give it back with check_view_put). */
struct check_view *check_watch_get(struct check_watch *w);
void check_view_put(struct check_view *v);

void check_watch_free(struct check_watch *w);

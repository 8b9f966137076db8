/* Progress of long work on standard error (burn, bench, check's device probes, snapshot,
 * tune apply, fleet): on a terminal the caller's lines are redrawn in place about once a
 * second; otherwise they are written as plain lines every PROGRESS_PLAIN_S seconds, so that
 * a log shows the run is alive without filling up. Plumbing only: the callers write the
 * lines; standard output, which holds the report, is never touched.
 *
 * One frame: progress_begin (false: not due, write nothing), progress_line per line,
 * progress_end. progress_clear takes a drawn frame off the terminal before other text goes
 * there (a result printed as it is measured), so that the next frame does not overwrite it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define PROGRESS_PLAIN_S 10.0
#define PROGRESS_TTY_S 1.0

struct progress {
        bool on;             /* false: every call does nothing */
        bool tty;            /* standard error is a terminal: redraw in place */
        unsigned columns;    /* the terminal's width (0: unknown); longer lines are cut, as a
                              * wrapped line would break the redraw */
        size_t lines_drawn;  /* lines of the last frame still on the terminal */
        size_t lines_this;   /* lines of the frame being drawn */
        double last_s;       /* when the last frame was drawn, on the caller's clock */
};

/* on: whether progress is wanted at all (--no-progress, -q turn it off). */
void progress_init(struct progress *p, bool on);
/* Whether a frame is due at now_s (seconds on any clock the caller keeps); when it is, the
 * frame starts and the caller writes its lines. The first frame is due at once. */
bool progress_begin(struct progress *p, double now_s);
/* The next progress_begin draws whatever the time (a new step started). */
void progress_now(struct progress *p);
void progress_line(struct progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void progress_end(struct progress *p);
/* On a terminal: erase the frame drawn last; the next one is drawn below what follows. */
void progress_clear(struct progress *p);

/* A duration for a progress line: "42s", "3m05s", "1h02m". */
void progress_duration(char *buf, size_t size, double seconds);

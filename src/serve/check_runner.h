/* gpuvet serve --check-interval (docs/serve.md, "Check verdicts"): `gpuvet check --json -`
 * run every interval as a child process of this same binary, on a thread of its own, under
 * a deadline; its report parsed as --check-report's file is (check_status.h) and published
 * into a fed check_watch, with the runs counted by result. A scrape reads only the
 * published view, so it never waits for a run; stopping kills a run in flight (its whole
 * process group) and reaps it. */
#pragma once

#include <stdio.h>

#include "core/result.h"
#include "serve/check_watch.h"

struct nvml_deadlines;

struct check_runner_options {
        char *const *argv;   /* the check's command line, NULL-terminated; argv[0] is run */
        unsigned interval_s; /* a run starts every interval_s (a run that overruns delays the next) */
        unsigned timeout_s;  /* its deadline */
        FILE *log;           /* "gpuvet serve: --check-interval: ..." once per change of outcome */
};

struct check_runner;

/* Publish an empty view into board (no run yet), then start the thread, whose first run
 * begins at once. argv is copied. Returns 0, -ENOMEM, or the negative errno of the pipe or
 * the thread. */
int check_runner_start(const struct check_runner_options *o, struct check_watch *board, struct check_runner **ret);

/* Stop: a run in flight is killed (SIGKILL to its process group) and reaped, the thread
 * joined. Returns within a few milliseconds unless the kernel is slow to reap the child
 * (at most 2 s more). NULL is accepted. */
void check_runner_stop(struct check_runner *r);

/* The default deadline of a run at level: the longest the check itself may take with
 * these NVML deadlines (NULL or zero fields: NVML's defaults) and its gathering watchdog
 * of watchdog_s (check's --timeout), plus a margin. Quick: the longest of the watchdog,
 * the NVML reading (init + 4 calls + one GPU's budget) and the CUDA driver probe;
 * standard adds the four device probes and the container run. In seconds, at most 86400. */
unsigned check_runner_default_timeout_s(enum level level, const struct nvml_deadlines *dl, unsigned watchdog_s);

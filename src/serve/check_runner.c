/* The periodic check of gpuvet serve (check_runner.h). */
#include "serve/check_runner.h"

#include "bench/probes.h"
#include "core/array.h"
#include "core/clock.h"
#include "core/exit.h"
#include "core/run_command.h"
#include "serve/check_status.h"
#include "sys/container_gpu.h"
#include "sys/cuda_driver.h"
#include "sys/inputs.h"
#include "sys/nvml_facts.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Past the check's own bound: a run that finishes near it (a loaded machine, a slow exit
 * after NVML's deadlines) is not cut off. */
#define CHECK_TIMEOUT_MARGIN_S 10u

struct check_runner {
        char **argv;
        unsigned interval_s, timeout_s;
        FILE *log;
        struct check_watch *board;
        int stop_pipe[2]; /* a byte on [1] stops the thread and the run in flight */
        pthread_t thread;
        /* the thread's own */
        struct check_runs runs;
        char told[64];    /* the class of the last outcome said on log ("ok", "exit 3", ...) */
};

/* The longest the inputs of a phase take at their default deadlines (sys/inputs.def's
 * worst_ms column). */
static unsigned long long inputs_worst_ms(enum input_phase which) {
        static const struct {
                enum input_phase phase;
                unsigned long long worst_ms;
        } inputs[] = {
#define INPUT(id, member, phase, live, worst_ms, deps, gather, done) {phase, worst_ms},
#include "sys/inputs.def"
#undef INPUT
        };
        unsigned long long sum = 0;
        for (size_t i = 0; i < ARRAY_COUNT(inputs); i++)
                if (inputs[i].phase == which)
                        sum += inputs[i].worst_ms;
        return sum;
}

unsigned check_runner_default_timeout_s(enum level level, const struct nvml_deadlines *dl, unsigned watchdog_s) {
        unsigned call = dl && dl->call_ms ? dl->call_ms : NVML_DEADLINE_CALL_MS_DEFAULT;
        unsigned gpu = dl && dl->gpu_ms ? dl->gpu_ms : NVML_DEADLINE_GPU_MS_DEFAULT;
        unsigned init = dl && dl->init_ms ? dl->init_ms : NVML_DEADLINE_INIT_MS_DEFAULT;
        /* NVML is read on a thread while the facts are gathered and the CUDA driver probe
         * runs: the longest of the three bounds the gathering (docs/nvml.md, "Deadlines"). */
        unsigned long long gather_ms = (unsigned long long)init + 4ull * call + gpu;
        if (gather_ms < watchdog_s * 1000ull)
                gather_ms = watchdog_s * 1000ull;
        if (gather_ms < inputs_worst_ms(INPUT_PHASE_FORK))
                gather_ms = inputs_worst_ms(INPUT_PHASE_FORK);
        unsigned long long s = (gather_ms + 999) / 1000 + CHECK_TIMEOUT_MARGIN_S;
        /* The steps that load the GPUs run one after the other (the probes, the container;
         * the stress test, the benchmarks and DCGM have no fixed default to add). */
        if (level >= LEVEL_STANDARD)
                s += (inputs_worst_ms(INPUT_PHASE_LOAD) + 999) / 1000;
        return s > 86400 ? 86400 : (unsigned)s;
}

/* The last non-empty line of a child's standard error, for a message (at most size - 1 bytes). */
static void last_line(const char *tail, char *buf, size_t size) {
        size_t n = strlen(tail);
        while (n > 0 && (tail[n - 1] == '\n' || tail[n - 1] == '\r'))
                n--;
        size_t start = n;
        while (start > 0 && tail[start - 1] != '\n')
                start--;
        size_t len = n - start < size - 1 ? n - start : size - 1;
        memcpy(buf, tail + start, len);
        buf[len] = '\0';
}

/* One run's outcome into v (state, statuses), its class (for "once per change") and what to say. */
static enum check_run_result judge_run(int rc, const struct command_result *res, unsigned timeout_s,
                                       struct check_view *v, char *class, size_t class_size, char *said,
                                       size_t said_size) {
        char line[256] = "";
        if (rc < 0) {
                snprintf(class, class_size, "start %d", -rc);
                snprintf(said, said_size, "gpuvet check could not be started: %s", strerror(-rc));
                return CHECK_RUN_FAILED;
        }
        last_line(res->err_tail, line, sizeof(line));
        if (res->timed_out) {
                snprintf(class, class_size, "timeout");
                snprintf(said, said_size, "gpuvet check did not finish within %u s (--check-timeout): killed, "
                         "no check statuses until a run finishes", timeout_s);
                return CHECK_RUN_TIMEOUT;
        }
        if (res->signal) {
                snprintf(class, class_size, "signal %d", res->signal);
                const char *abbrev = sigabbrev_np(res->signal); /* strsignal is not thread-safe */
                snprintf(said, said_size, "gpuvet check was killed by signal %d (SIG%s): no check statuses%s%s",
                         res->signal, abbrev ? abbrev : "?", *line ? "; it said: " : "", line);
                return CHECK_RUN_FAILED;
        }
        if (res->exit_status != EXIT_PASS && res->exit_status != EXIT_FAILED) {
                snprintf(class, class_size, "exit %d", res->exit_status);
                snprintf(said, said_size, "gpuvet check exited %d without a verdict: no check statuses%s%s",
                         res->exit_status, *line ? "; it said: " : "", line);
                return CHECK_RUN_FAILED;
        }
        char err[256] = "";
        if (res->out_truncated)
                snprintf(err, sizeof(err), "larger than %u MiB", CHECK_STATUS_MAX_BYTES >> 20);
        else if (check_status_parse(res->out, res->out_len, &v->set, err, sizeof(err)) == 0) {
                v->state = CHECK_REPORT_OK;
                snprintf(class, class_size, "ok");
                snprintf(said, said_size, "gpuvet check ran (exit %d), %zu check ids", res->exit_status, v->set.n);
                return CHECK_RUN_OK;
        }
        snprintf(class, class_size, "not a report");
        snprintf(said, said_size, "gpuvet check's output is not a check report: %s", err);
        return CHECK_RUN_FAILED;
}

/* One run, published. Returns false when the stop came meanwhile (nothing published). */
static bool run_once(struct check_runner *r) {
        double started = monotonic_s();
        struct command_result res;
        int rc = run_command_cancellable(r->argv, r->timeout_s * 1000u, CHECK_STATUS_MAX_BYTES, r->stop_pipe[0],
                                         &res);
        if (rc == 0 && res.cancelled) {
                command_result_done(&res);
                return false;
        }
        struct check_view *v = check_view_new(CHECK_REPORT_UNREADABLE);
        char class[sizeof(r->told)], said[512];
        enum check_run_result how = CHECK_RUN_FAILED;
        if (v) {
                how = judge_run(rc, &res, r->timeout_s, v, class, sizeof(class), said, sizeof(said));
                v->mtime_s = wall_clock_s();
        }
        if (rc == 0)
                command_result_done(&res);
        if (!v)
                return true; /* out of memory: the previous view stays until the next run */
        r->runs.total[how]++;
        r->runs.last_run_s = v->mtime_s;
        r->runs.last_duration_s = monotonic_s() - started;
        v->runs = r->runs;
        if (strcmp(class, r->told) != 0) {
                if (r->log)
                        fprintf(r->log, "gpuvet serve: --check-interval: %s\n", said);
                snprintf(r->told, sizeof(r->told), "%s", class);
        }
        check_watch_publish(r->board, v);
        return true;
}

/* Sleep until the next run is due; false when stopped meanwhile. */
static bool wait_until(struct check_runner *r, double due) {
        for (;;) {
                double left = due - monotonic_s();
                if (left <= 0)
                        return true;
                struct pollfd p = {.fd = r->stop_pipe[0], .events = POLLIN};
                int ms = left * 1000 > INT_MAX ? INT_MAX : (int)(left * 1000) + 1;
                int n = poll(&p, 1, ms);
                if (n > 0)
                        return false;
                if (n < 0 && errno != EINTR)
                        return false; /* cannot wait: stop rather than run back to back */
        }
}

static void *runner_main(void *arg) {
        struct check_runner *r = arg;
        for (;;) {
                double due = monotonic_s() + r->interval_s;
                if (!run_once(r) || !wait_until(r, due))
                        return NULL;
        }
}

static void free_argv(char **argv) {
        for (size_t i = 0; argv && argv[i]; i++)
                free(argv[i]);
        free(argv);
}

static void runner_free(struct check_runner *r) {
        for (int i = 0; i < 2; i++)
                if (r->stop_pipe[i] >= 0)
                        close(r->stop_pipe[i]);
        free_argv(r->argv);
        free(r);
}

int check_runner_start(const struct check_runner_options *o, struct check_watch *board, struct check_runner **ret) {
        struct check_runner *r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->stop_pipe[0] = r->stop_pipe[1] = -1;
        size_t n = 0;
        while (o->argv[n])
                n++;
        r->argv = calloc(n + 1, sizeof(*r->argv));
        for (size_t i = 0; r->argv && i < n; i++)
                if (!(r->argv[i] = strdup(o->argv[i]))) {
                        runner_free(r);
                        return -ENOMEM;
                }
        struct check_view *v = check_view_new(CHECK_REPORT_ABSENT);
        if (!r->argv || !v) {
                check_view_put(v);
                runner_free(r);
                return -ENOMEM;
        }
        r->interval_s = o->interval_s;
        r->timeout_s = o->timeout_s;
        r->log = o->log;
        r->board = board;
        r->runs.periodic = true;
        v->runs = r->runs;
        if (pipe2(r->stop_pipe, O_CLOEXEC) < 0) {
                int e = errno;
                check_view_put(v);
                runner_free(r);
                return -e;
        }
        check_watch_publish(board, v);
        int e = pthread_create(&r->thread, NULL, runner_main, r);
        if (e != 0) {
                runner_free(r);
                return -e;
        }
        *ret = r;
        return 0;
}

void check_runner_stop(struct check_runner *r) {
        if (!r)
                return;
        char byte = 1;
        while (write(r->stop_pipe[1], &byte, 1) < 0 && errno == EINTR)
                ;
        pthread_join(r->thread, NULL);
        runner_free(r);
}

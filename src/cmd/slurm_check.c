#include "cmd/slurm_check.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checks/check.h"
#include "cmd/cmd.h"
#include "core/deadline.h"
#include "core/run_command.h"
#include "core/write_fd.h"

/* The child's messages: "R <status> <id>\n" per result that is neither pass nor skip,
 * "V <verdict>\n" once judged, "X <exit code>\n" last. A few hundred results at most. */
#define SLURM_CHECK_MAX_MSG (1u << 20)

struct child_arg {
        const struct check_cli *o;
        const struct cmd_args *args;
};

static void send_line(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void send_line(int fd, const char *fmt, ...) {
        char line[512];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        if (n > 0 && (size_t)n < sizeof(line))
                (void)write_fd_all(fd, line, (size_t)n); /* the parent is gone or stopped reading: nothing to tell */
}

static void on_judged(const struct report *rep, void *ctx) {
        int fd = *(int *)ctx;
        for (size_t i = 0; i < rep->n_results; i++) {
                const struct result *r = &rep->results[i];
                if (r->status != STATUS_PASS && r->status != STATUS_SKIP && r->check)
                        send_line(fd, "R %d %s\n", (int)r->status, r->check->id);
        }
        send_line(fd, "V %d\n", (int)report_verdict(rep));
}

static void child_body(const void *p, int fd) {
        const struct child_arg *a = p;
        struct check_cli o = *a->o;
        o.judged = on_judged;
        o.judged_ctx = &fd;
        int code = check_execute(&o, a->args);
        code = stdout_finish(code);
        send_line(fd, "X %d\n", code);
        _exit(code);
}

static bool known(char **ids, size_t n, const char *id) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(ids[i], id) == 0)
                        return true;
        return false;
}

static int add_id(struct slurm_check_outcome *out, int status, const char *id) {
        if (status < 0 || status >= _STATUS_COUNT || !*id || known(out->ids[status], out->n_ids[status], id))
                return 0;
        char **grown = realloc(out->ids[status], (out->n_ids[status] + 1) * sizeof(*grown));
        if (!grown)
                return -ENOMEM;
        out->ids[status] = grown;
        if (!(grown[out->n_ids[status]] = strdup(id)))
                return -ENOMEM;
        out->n_ids[status]++;
        return 0;
}

/* The child's lines into out; a torn last line (a child killed mid-write) is dropped. */
static void parse_messages(char *buf, size_t len, struct slurm_check_outcome *out) {
        char *p = buf, *end = buf + len;
        while (p < end) {
                char *nl = memchr(p, '\n', (size_t)(end - p));
                if (!nl)
                        break;
                *nl = '\0';
                int v, off = 0;
                if (p[0] == 'R' && sscanf(p, "R %d %n", &v, &off) == 1 && off > 0) {
                        if (add_id(out, v, p + off) < 0)
                                out->out_of_memory = true;
                } else if (p[0] == 'V' && sscanf(p, "V %d", &v) == 1 && v >= 0 && v < _STATUS_COUNT) {
                        out->judged = true;
                        out->verdict = (enum status)v;
                }
                p = nl + 1;
        }
}

/* Read the child's messages until it closes the pipe or the deadline (monotonic ms). */
static bool read_until(int fd, double deadline, char **buf, size_t *len) {
        size_t cap = 0;
        for (;;) {
                double left = deadline - monotonic_ms();
                if (left <= 0)
                        return false;
                struct pollfd pfd = {.fd = fd, .events = POLLIN};
                int r = poll(&pfd, 1, left > 1000 ? 1000 : (int)left + 1);
                if (r < 0 && errno != EINTR)
                        return true; /* cannot wait on it: take what came */
                if (r <= 0)
                        continue;
                if (*len + 4096 > cap) {
                        if (cap >= SLURM_CHECK_MAX_MSG)
                                return true;
                        size_t ncap = cap ? cap * 2 : 8192;
                        char *g = realloc(*buf, ncap);
                        if (!g)
                                return true;
                        *buf = g;
                        cap = ncap;
                }
                ssize_t n = read(fd, *buf + *len, cap - *len - 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return true;
                *len += (size_t)n;
        }
}

int slurm_check_run(const struct check_cli *o, const struct cmd_args *args, unsigned timeout_ms,
                    struct slurm_check_outcome *out) {
        memset(out, 0, sizeof(*out));
        out->exit_code = -1;
        struct child_arg a = {.o = o, .args = args};
        int fd;
        double deadline = monotonic_ms() + timeout_ms;
        pid_t pid = spawn_watched(child_body, &a, &fd);
        if (pid < 0)
                return (int)pid;
        char *buf = NULL;
        size_t len = 0;
        bool finished = read_until(fd, deadline, &buf, &len);
        close(fd);
        int status = 0;
        /* Closing the pipe comes just before the exit; a child that closed it and then
         * hangs (an NVML thread that never returns) is killed at the deadline. */
        double left = deadline - monotonic_ms();
        bool reaped = finished && child_reap(pid, left > 0 ? (unsigned)left : 0, &status);
        if (!reaped) {
                kill(-pid, SIGKILL);
                (void)child_reap(pid, 2000, &status); /* SIGKILL: it goes; a zombie is the kernel's, ignoring */
                out->timed_out = true;
        } else if (WIFEXITED(status)) {
                out->exit_code = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
                out->signal = WTERMSIG(status);
        }
        if (buf)
                parse_messages(buf, len, out);
        free(buf);
        /* A verdict from a child killed afterwards still holds: the checks had judged. */
        return 0;
}

void slurm_check_done(struct slurm_check_outcome *out) {
        for (int s = 0; s < _STATUS_COUNT; s++) {
                for (size_t i = 0; i < out->n_ids[s]; i++)
                        free(out->ids[s][i]);
                free(out->ids[s]);
                out->ids[s] = NULL;
                out->n_ids[s] = 0;
        }
}

/* The CUDA driver probe (sys/cuda_driver.h): one child process that loads libcuda, asks
 * its version, calls cuInit and counts devices, and reports each step through a pipe
 * as a whole struct cuda_driver_facts (one write below PIPE_BUF is atomic, so the
 * parent never reads half of one). The last message read is what the child got to. */
#include "sys/cuda_driver.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/deadline.h"
#include "core/run_command.h"
#include "bindings/cuda.h"
#include "bindings/cuda_errors.h"
#include "core/write_fd.h"

_Static_assert(sizeof(struct cuda_driver_facts) <= PIPE_BUF, "a report must fit one atomic pipe write");

/* After the child said it is done: how long to wait for it to leave before leaving it
 * to be reaped by init (driver teardown on exit can be slow on a sick GPU). */
#define EXIT_WAIT_MS 200u

struct cuda_driver_probe {
        pid_t pid;          /* 0 when fork failed */
        int fd;             /* read end; -1 when none */
        int gate;           /* write end of the child's gate while it is held; -1 when none */
        unsigned long long start_ms; /* the release: the deadline counts from it */
        struct cuda_driver_facts last; /* the newest message, or the parent's own verdict */
};

const char *cuda_driver_stage_call(enum cuda_driver_stage s) {
        switch (s) {
        case CUDA_STAGE_DLOPEN: return "dlopen";
        case CUDA_STAGE_DRIVER_VERSION: return "cuDriverGetVersion";
        case CUDA_STAGE_INIT: return "cuInit";
        case CUDA_STAGE_DEVICE_COUNT: return "cuDeviceGetCount";
        case CUDA_STAGE_DONE: return "exit";
        case CUDA_STAGE_START: break;
        }
        return "starting the probe";
}

bool cuda_driver_version_from_name(const char *path, char *buf, size_t size) {
        static const char prefix[] = "libcuda.so.";
        if (size)
                buf[0] = '\0';
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        if (strncmp(base, prefix, sizeof(prefix) - 1) != 0)
                return false;
        const char *v = base + sizeof(prefix) - 1;
        /* A driver version has at least two parts ("570.86.10", "418.87"): the soname's
         * own "1" is not one. */
        size_t len = strlen(v), digits = strspn(v, "0123456789.");
        if (len == 0 || digits != len || !strchr(v, '.') || v[0] == '.' || v[len - 1] == '.' || len >= size)
                return false;
        memcpy(buf, v, len + 1);
        return true;
}

void cuda_driver_not_probed(struct cuda_driver_facts *out, const char *why) {
        memset(out, 0, sizeof(*out));
        out->state = CUDA_DRIVER_NOT_PROBED;
        out->device_count = -1;
        snprintf(out->note, sizeof(out->note), "%s", why);
}

/* ---- the child ------------------------------------------------------------------------- */

static void send_report(int fd, const struct cuda_driver_facts *m) {
        if (write_fd_all(fd, m, sizeof(*m)) < 0)
                _exit(1); /* the parent is gone or gave up */
}

static void at_stage(int fd, struct cuda_driver_facts *m, enum cuda_driver_stage s) {
        m->stage = s;
        send_report(fd, m);
}

static _Noreturn void finish(int fd, struct cuda_driver_facts *m, enum cuda_driver_state state) {
        m->state = state;
        m->stage = CUDA_STAGE_DONE;
        send_report(fd, m);
        _exit(0);
}

static void loaded_file(const struct dynlib *dl, struct cuda_driver_facts *m) {
        const char *name = dl->path;
        cuda_driver_version_from_name(name, m->lib_version, sizeof(m->lib_version));
        /* cuda-compat installs under /usr/local/cuda-X.Y/compat; distributions package it
         * as cuda-compat-X-Y. */
        m->lib_in_compat = strstr(name, "/compat/") || strstr(name, "cuda-compat");
        size_t len = strnlen(name, sizeof(m->lib_path) - 1); /* evidence only: a longer path is cut */
        memcpy(m->lib_path, name, len);
        m->lib_path[len] = '\0';
}

static unsigned int ms_since(unsigned long long t0) {
        unsigned long long d = deadline_now_ms() - t0;
        return d > UINT_MAX ? UINT_MAX : (unsigned int)d;
}

/* Held: wait for the parent's word before touching libcuda. One byte opens the gate; end of
 * file (the parent closed it unopened, or is gone) means leave without loading anything. */
static void wait_at_gate(int gate) {
        char go;
        ssize_t n;
        do
                n = read(gate, &go, 1);
        while (n < 0 && errno == EINTR);
        if (n != 1)
                _exit(0);
        close(gate);
}

static _Noreturn void child_main(int fd, struct cuda_driver_facts m) {
        /* The node's view, not the view of the shell that ran gpuvet: gpu.cuda_env
         * reports the variable itself. */
        if (getenv("CUDA_VISIBLE_DEVICES")) {
                unsetenv("CUDA_VISIBLE_DEVICES");
                m.visible_devices_cleared = true;
        }
        at_stage(fd, &m, CUDA_STAGE_DLOPEN);
        struct cuda_lib *cu;
        const char *missing = NULL;
        int r = cuda_lib_load(m.lib_name, CUDA_NEED_PROBE, &cu, &missing, m.note, sizeof(m.note));
        if (r == -ENOSYS) {
                snprintf(m.note, sizeof(m.note), "%s", missing);
                finish(fd, &m, CUDA_DRIVER_NO_SYMBOL);
        }
        if (r < 0)
                finish(fd, &m, CUDA_DRIVER_NO_LIBRARY);
        loaded_file(&cu->dl, &m);

        /* The version needs no cuInit: it is known even when initialisation fails. */
        at_stage(fd, &m, CUDA_STAGE_DRIVER_VERSION);
        int v = 0;
        m.api_version_rc = cu->cuDriverGetVersion(&v);
        m.api_version = m.api_version_rc == 0 ? v : 0;

        at_stage(fd, &m, CUDA_STAGE_INIT);
        unsigned long long t0 = deadline_now_ms();
        m.init_rc = cu->cuInit(0);
        m.init_ms = ms_since(t0);
        if (m.init_rc != 0) {
                const char *name = NULL;
                if (cu->cuGetErrorName && cu->cuGetErrorName(m.init_rc, &name) == 0 && name)
                        snprintf(m.init_rc_name, sizeof(m.init_rc_name), "%s", name);
                finish(fd, &m, CUDA_DRIVER_INIT_FAILED);
        }

        at_stage(fd, &m, CUDA_STAGE_DEVICE_COUNT);
        int n = -1;
        m.device_count_rc = cu->cuDeviceGetCount(&n);
        m.device_count = m.device_count_rc == 0 ? n : -1;
        finish(fd, &m, CUDA_DRIVER_OK);
}

/* ---- the parent ------------------------------------------------------------------------ */

bool cuda_driver_lib_named(void) {
        bool from_env = false;
        cuda_lib_name(&from_env);
        return from_env;
}

struct cuda_driver_probe *cuda_driver_probe_hold(const char *lib, unsigned int timeout_ms) {
        struct cuda_driver_probe *p = calloc(1, sizeof(*p));
        if (!p)
                return NULL;
        p->fd = -1;
        p->gate = -1;
        p->start_ms = deadline_now_ms();
        struct cuda_driver_facts *m = &p->last;
        m->device_count = -1;
        m->timeout_ms = timeout_ms ? timeout_ms : CUDA_DRIVER_TIMEOUT_MS_DEFAULT;
        snprintf(m->lib_name, sizeof(m->lib_name), "%s", lib && *lib ? lib : cuda_lib_name(NULL));

        int fds[2], gate[2];
        if (pipe2(fds, O_CLOEXEC) < 0) {
                m->state = CUDA_DRIVER_PROBE_ERROR;
                snprintf(m->note, sizeof(m->note), "pipe: %s", strerror(errno));
                return p;
        }
        if (pipe2(gate, O_CLOEXEC) < 0) {
                m->state = CUDA_DRIVER_PROBE_ERROR;
                snprintf(m->note, sizeof(m->note), "pipe: %s", strerror(errno));
                close(fds[0]);
                close(fds[1]);
                return p;
        }
        fflush(NULL); /* the child leaves with _exit, but nothing buffered may be written twice */
        pid_t pid = fork();
        if (pid < 0) {
                m->state = CUDA_DRIVER_PROBE_ERROR;
                snprintf(m->note, sizeof(m->note), "fork: %s", strerror(errno));
                close(fds[0]);
                close(fds[1]);
                close(gate[0]);
                close(gate[1]);
                return p;
        }
        if (pid == 0) {
                close(fds[0]);
                close(gate[1]);
                /* A child stopped by the parent's SIGKILL needs nothing else; keep the
                 * parent's alarm (not inherited anyway) and signal handlers out of it. */
                signal(SIGALRM, SIG_DFL);
                signal(SIGINT, SIG_DFL);
                signal(SIGTERM, SIG_DFL);
                signal(SIGPIPE, SIG_IGN);
                wait_at_gate(gate[0]);
                child_main(fds[1], *m);
        }
        close(fds[1]);
        close(gate[0]);
        p->pid = pid;
        p->fd = fds[0];
        p->gate = gate[1];
        return p;
}

void cuda_driver_probe_release(struct cuda_driver_probe *p) {
        p->start_ms = deadline_now_ms();
        if (p->gate < 0)
                return;
        ssize_t n;
        do
                n = write(p->gate, "g", 1);
        while (n < 0 && errno == EINTR);
        /* A failed write leaves the gate shut: closing it sends the child away, and
         * finish reports a child that closed its pipe without a report. Nothing to add,
         * ignoring. */
        (void)n;
        close(p->gate);
        p->gate = -1;
}

bool cuda_driver_probe_cancel(struct cuda_driver_probe *p, struct cuda_driver_facts *out, const char *why) {
        bool clean = false;
        if (p->pid) {
                /* The child reads end of file at its gate and leaves: its end of the report
                 * pipe closes as it exits. */
                close(p->gate);
                p->gate = -1;
                struct pollfd pfd = {.fd = p->fd, .events = POLLIN};
                int r;
                do
                        r = poll(&pfd, 1, (int)EXIT_WAIT_MS);
                while (r < 0 && errno == EINTR);
                int status = 0;
                bool gone = false;
                if (r > 0) {
                        /* Hung up: only the child held that end, and only its exit closes
                         * it, so the wait is short. */
                        pid_t w;
                        do
                                w = waitpid(p->pid, &status, 0);
                        while (w < 0 && errno == EINTR);
                        gone = w == p->pid;
                }
                if (!gone) {
                        kill(p->pid, SIGKILL);
                        gone = child_reap(p->pid, EXIT_WAIT_MS, &status);
                        status = -1;
                }
                clean = gone && status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
                close(p->fd);
        }
        if (out)
                cuda_driver_not_probed(out, why);
        free(p);
        return clean;
}

static unsigned int remaining_ms(const struct cuda_driver_probe *p) {
        unsigned long long now = deadline_now_ms(), end = p->start_ms + p->last.timeout_ms;
        return now >= end ? 0 : (unsigned int)(end - now);
}

/* Read whole messages until the child says done, closes the pipe, or time runs out.
 * Returns 1 done, 0 end of file, -ETIMEDOUT, or another negative errno. */
static int read_reports(struct cuda_driver_probe *p) {
        struct cuda_driver_facts msg;
        size_t have = 0;
        for (;;) {
                unsigned int left = remaining_ms(p);
                if (left == 0)
                        return -ETIMEDOUT;
                struct pollfd pfd = {.fd = p->fd, .events = POLLIN};
                int r = poll(&pfd, 1, (int)(left > INT_MAX ? INT_MAX : left));
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        return -ETIMEDOUT;
                ssize_t n = read(p->fd, (char *)&msg + have, sizeof(msg) - have);
                if (n < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return 0;
                have += (size_t)n;
                if (have < sizeof(msg))
                        continue;
                have = 0;
                /* The parent's bookkeeping stays the parent's. */
                unsigned int timeout = p->last.timeout_ms;
                p->last = msg;
                p->last.timeout_ms = timeout;
                p->last.note[sizeof(p->last.note) - 1] = '\0';
                p->last.lib_name[sizeof(p->last.lib_name) - 1] = '\0';
                p->last.lib_path[sizeof(p->last.lib_path) - 1] = '\0';
                p->last.lib_version[sizeof(p->last.lib_version) - 1] = '\0';
                p->last.init_rc_name[sizeof(p->last.init_rc_name) - 1] = '\0';
                if (p->last.stage == CUDA_STAGE_DONE)
                        return 1;
        }
}

void cuda_driver_probe_finish(struct cuda_driver_probe *p, struct cuda_driver_facts *out) {
        if (p->gate >= 0)
                cuda_driver_probe_release(p); /* a held probe is waited for from now */
        if (!p->pid) {
                *out = p->last;
                free(p);
                return;
        }
        int r = read_reports(p);
        struct cuda_driver_facts *m = &p->last;
        int status = 0;
        if (r == 1) {
                child_reap(p->pid, EXIT_WAIT_MS, &status);
        } else if (r == -ETIMEDOUT) {
                kill(p->pid, SIGKILL);
                child_reap(p->pid, EXIT_WAIT_MS, &status);
                m->state = CUDA_DRIVER_TIMEOUT;
                if (m->stage == CUDA_STAGE_INIT)
                        m->init_ms = m->timeout_ms;
        } else {
                bool gone = child_reap(p->pid, r == 0 ? 1000u : EXIT_WAIT_MS, &status);
                m->state = CUDA_DRIVER_CRASHED;
                if (r < 0)
                        snprintf(m->note, sizeof(m->note), "reading its report: %s", strerror(-r));
                else if (gone && WIFSIGNALED(status))
                        snprintf(m->note, sizeof(m->note), "killed by signal %d (%s)", WTERMSIG(status),
                                 strsignal(WTERMSIG(status)));
                else if (gone && WIFEXITED(status))
                        snprintf(m->note, sizeof(m->note), "exited with status %d without a report",
                                 WEXITSTATUS(status));
                else
                        snprintf(m->note, sizeof(m->note), "closed its pipe without a report");
        }
        close(p->fd);
        m->elapsed_ms = ms_since(p->start_ms);
        *out = *m;
        free(p);
}

const char *cuda_driver_rc_name(int rc) { return cuda_error_name(rc); }

const char *cuda_driver_rc_text(int rc) { return cuda_error_text(rc); }

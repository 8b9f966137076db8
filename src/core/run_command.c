/* run_command (core/run_command.h): posix_spawnp into a new process group, both output
 * pipes drained with poll until they close or the deadline passes, then reaped. */
#include "core/run_command.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/array.h"
#include "core/deadline.h"

extern char **environ;

/* The least time given to a command to leave once its output is closed, and to the
 * kernel to reap it after SIGKILL. */
#define REAP_MS 2000u

static void keep_tail(char *tail, size_t size, const char *data, size_t n) {
        size_t have = strlen(tail);
        if (n >= size - 1) {
                memcpy(tail, data + n - (size - 1), size - 1);
                tail[size - 1] = '\0';
                return;
        }
        if (have + n >= size) {
                size_t drop = have + n - (size - 1);
                memmove(tail, tail + drop, have - drop);
                have -= drop;
        }
        memcpy(tail + have, data, n);
        tail[have + n] = '\0';
}

static int append(struct command_result *r, size_t *cap, size_t max, const char *data, size_t n) {
        if (r->out_len + n > max) {
                r->out_truncated = true;
                n = max - r->out_len;
        }
        if (r->out_len + n + 1 > *cap) {
                size_t c = *cap ? *cap : 4096;
                while (c < r->out_len + n + 1)
                        c *= 2;
                char *p = realloc(r->out, c);
                if (!p)
                        return -ENOMEM;
                r->out = p;
                *cap = c;
        }
        memcpy(r->out + r->out_len, data, n);
        r->out_len += n;
        r->out[r->out_len] = '\0';
        return 0;
}

/* child_reap that also returns (false, *cancelled set) as soon as cancel_fd is readable;
 * a negative cancel_fd is never readable (poll ignores it: it is then the pause alone). */
static bool reap_unless_cancelled(pid_t pid, unsigned int ms, int cancel_fd, int *status, bool *cancelled) {
        unsigned long long end = deadline_now_ms() + ms;
        for (;;) {
                pid_t w = waitpid(pid, status, WNOHANG);
                if (w == pid || (w < 0 && errno != EINTR))
                        return w == pid;
                if (deadline_now_ms() >= end)
                        return false;
                struct pollfd c = {.fd = cancel_fd, .events = POLLIN};
                if (poll(&c, 1, 5) > 0 && (c.revents & (POLLIN | POLLHUP | POLLERR))) {
                        *cancelled = true;
                        return false;
                }
        }
}

bool child_reap(pid_t pid, unsigned int ms, int *status) {
        bool cancelled = false;
        return reap_unless_cancelled(pid, ms, -1, status, &cancelled);
}

int run_command(char *const argv[], unsigned int timeout_ms, size_t max_out, struct command_result *out) {
        return run_command_cancellable(argv, timeout_ms, max_out, -1, out);
}

int run_command_cancellable(char *const argv[], unsigned int timeout_ms, size_t max_out, int cancel_fd,
                            struct command_result *out) {
        memset(out, 0, sizeof(*out));
        out->exit_status = -1;
        int po[2], pe[2];
        if (pipe2(po, O_CLOEXEC) < 0)
                return -errno;
        if (pipe2(pe, O_CLOEXEC) < 0) {
                int e = errno;
                close(po[0]);
                close(po[1]);
                return -e;
        }
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        posix_spawn_file_actions_init(&fa);
        posix_spawnattr_init(&attr);
        posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, po[1], STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&fa, pe[1], STDERR_FILENO);
        posix_spawnattr_setpgroup(&attr, 0);
        sigset_t none;
        sigemptyset(&none);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
        unsigned long long start = deadline_now_ms();
        pid_t pid;
        int rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
        close(po[1]);
        close(pe[1]);
        if (rc != 0) {
                close(po[0]);
                close(pe[0]);
                return -rc;
        }

        size_t cap = 0;
        int r = append(out, &cap, max_out, "", 0);
        /* fds[2]: the caller's cancel_fd (a negative fd is ignored by poll). */
        struct pollfd fds[3] = {{.fd = po[0], .events = POLLIN}, {.fd = pe[0], .events = POLLIN},
                                {.fd = cancel_fd, .events = POLLIN}};
        int open_fds = 2;
        char buf[65536];
        while (open_fds > 0 && r == 0) {
                unsigned long long now = deadline_now_ms(), end = start + timeout_ms;
                if (now >= end) {
                        out->timed_out = true;
                        break;
                }
                unsigned long long left = end - now;
                int n = poll(fds, 3, left > INT_MAX ? INT_MAX : (int)left);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = -errno;
                        break;
                }
                if (fds[2].fd >= 0 && (fds[2].revents & (POLLIN | POLLHUP | POLLERR))) {
                        out->cancelled = true;
                        break;
                }
                for (int i = 0; i < 2; i++) {
                        if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        ssize_t got = read(fds[i].fd, buf, sizeof(buf));
                        if (got < 0 && (errno == EINTR || errno == EAGAIN))
                                continue;
                        if (got <= 0) {
                                close(fds[i].fd);
                                fds[i].fd = -1;
                                open_fds--;
                                continue;
                        }
                        if (i == 0)
                                r = append(out, &cap, max_out, buf, (size_t)got);
                        else
                                keep_tail(out->err_tail, sizeof(out->err_tail), buf, (size_t)got);
                }
        }
        for (int i = 0; i < 2; i++)
                if (fds[i].fd >= 0)
                        close(fds[i].fd);
        int status = 0;
        unsigned long long now = deadline_now_ms(), end = start + timeout_ms;
        unsigned int wait_ms = now < end && end - now > REAP_MS ? (unsigned int)(end - now) : REAP_MS;
        if (out->timed_out || out->cancelled || r < 0 ||
            !reap_unless_cancelled(pid, wait_ms, cancel_fd, &status, &out->cancelled)) {
                /* The whole group: dcgmi's own children (nvvs) go too. */
                kill(-pid, SIGKILL);
                if (!child_reap(pid, REAP_MS, &status))
                        status = -1;
                if (!out->timed_out && !out->cancelled && r == 0)
                        out->timed_out = true; /* closed its output but would not exit */
        }
        if (status != -1 && WIFEXITED(status))
                out->exit_status = WEXITSTATUS(status);
        else if (status != -1 && WIFSIGNALED(status))
                out->signal = WTERMSIG(status);
        out->elapsed_ms = deadline_now_ms() - start;
        if (r < 0)
                command_result_done(out);
        return r;
}

void command_result_done(struct command_result *r) {
        free(r->out);
        r->out = NULL;
        r->out_len = 0;
}

/* In a child just forked to run gpuvet's own code under the parent's watch (a benchmark, a
 * burn worker): the default action for every signal the parent handles or ignores, no
 * alarm, no blocked signal, a process group of its own (the parent's deadline kills the
 * group), and death with the parent (an orphan must not keep a GPU busy). Returns false
 * when the parent is already gone: the child should _exit. */
static bool child_own_group(pid_t parent) {
        static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT, SIGPIPE, SIGALRM};
        for (size_t i = 0; i < ARRAY_COUNT(sigs); i++)
                signal(sigs[i], SIG_DFL);
        alarm(0);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        return getppid() == parent;
}

pid_t spawn_watched(void (*body)(const void *arg, int fd), const void *arg, int *ret_fd) {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        fflush(NULL); /* buffered output must not be written twice */
        pid_t parent = getpid();
        pid_t pid = fork();
        if (pid < 0) {
                int e = errno;
                close(fds[0]);
                close(fds[1]);
                return -e;
        }
        if (pid == 0) {
                close(fds[0]);
                if (!child_own_group(parent))
                        _exit(3);
                body(arg, fds[1]);
                _exit(3);
        }
        setpgid(pid, pid); /* both sides: whichever runs first, the group exists before a kill */
        close(fds[1]);
        *ret_fd = fds[0];
        return pid;
}

/* Signals to the GPU processes (top_signal.h). */
#include "top/top_signal.h"

#include "core/fsroot.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *top_signal_name(int sig) {
        switch (sig) {
        case SIGKILL: return "SIGKILL";
        case SIGTERM: return "SIGTERM";
        case SIGINT: return "SIGINT";
        default: return "a signal";
        }
}

bool top_signal_ask(const struct top_signal_env *env, const struct top_proc_row *row, int sig,
                    struct top_pending_signal *ret, char *msg, size_t size) {
        memset(ret, 0, sizeof(*ret));
        const char *name = top_signal_name(sig);
        if (!row) {
                snprintf(msg, size, "%s: select a process first (Up/Down)", name);
                return false;
        }
        if (!env || !env->live) {
                snprintf(msg, size, "%s not sent: under --root the processes shown are not this machine's", name);
                return false;
        }
        switch (row->info.where) {
        case PROC_GONE: snprintf(msg, size, "%s not sent: PID %u has exited", name, row->pid); return false;
        case PROC_OTHER_NS:
                snprintf(msg, size, "%s not sent: PID %u is in another PID namespace than gpuvet's", name, row->pid);
                return false;
        case PROC_FOUND: break;
        }
        if (!row->info.have_stat) {
                /* Without its start time a reused PID could not be told from it. */
                snprintf(msg, size, "%s not sent: /proc/%u/stat could not be read", name, row->pid);
                return false;
        }
        ret->active = true;
        ret->sig = sig;
        ret->gpu = row->gpu;
        ret->pid = row->pid;
        ret->start_ticks = row->info.stat.start_ticks;
        /* cut short: the prompt's line has 80 columns (put() keeps UTF-8 whole on screen) */
        snprintf(ret->command, sizeof(ret->command), "%.*s", (int)sizeof(ret->command) - 1, row->info.command);
        return true;
}

void top_signal_prompt(const struct top_pending_signal *p, char *out, size_t size) {
        snprintf(out, size, "Send %s to PID %u (%s)? y/N", top_signal_name(p->sig), p->pid, p->command);
}

static int pidfd_open_(unsigned int pid) {
#ifdef SYS_pidfd_open
        long fd = syscall(SYS_pidfd_open, (pid_t)pid, 0);
        return fd < 0 ? -errno : (int)fd;
#else
        (void)pid;
        return -ENOSYS;
#endif
}

static int default_deliver(int pidfd, unsigned int pid, int sig) {
#ifdef SYS_pidfd_send_signal
        if (pidfd >= 0)
                return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0 ? -errno : 0;
#endif
        return kill((pid_t)pid, sig) < 0 ? -errno : 0;
}

/* The start time of pid now, or -errno. */
static int start_now(struct fsroot *fs, unsigned int pid, unsigned long long *ret) {
        char path[64], *text = NULL;
        size_t len = 0;
        snprintf(path, sizeof(path), "/proc/%u/stat", pid);
        int r = fsroot_read_alloc(fs, path, &text, &len);
        struct proc_stat st;
        if (r == 0)
                r = proc_stat_parse(text, len, &st);
        free(text);
        if (r < 0)
                return r;
        *ret = st.start_ticks;
        return 0;
}

int top_signal_send(const struct top_signal_env *env, const struct top_pending_signal *p, char *msg, size_t size) {
        const char *name = top_signal_name(p->sig);
        if (!env || !env->live) {
                snprintf(msg, size, "%s not sent: under --root the processes shown are not this machine's", name);
                return -EPERM;
        }
        /* The pidfd first, then the start time: the pidfd then names the process checked,
         * and the signal cannot reach one that took the PID after the check. */
        int pidfd = pidfd_open_(p->pid);
        if (pidfd == -ESRCH) {
                snprintf(msg, size, "%s not sent: PID %u has exited", name, p->pid);
                return -ESRCH;
        }
        unsigned long long start;
        int r = start_now(env->fs, p->pid, &start);
        if (r < 0 || start != p->start_ticks) {
                if (pidfd >= 0)
                        close(pidfd);
                if (r < 0)
                        snprintf(msg, size, "%s not sent: PID %u has exited", name, p->pid);
                else
                        snprintf(msg, size, "%s not sent: PID %u is another process now (another start time)", name,
                                 p->pid);
                return -ESRCH;
        }
        r = (env->deliver ? env->deliver : default_deliver)(pidfd, p->pid, p->sig);
        if (pidfd >= 0)
                close(pidfd);
        if (r == 0)
                snprintf(msg, size, "%s sent to PID %u (%s)", name, p->pid, p->command);
        else if (r == -EPERM)
                snprintf(msg, size, "%s to PID %u: not permitted (EPERM): run as its owner or as root", name,
                         p->pid);
        else if (r == -ESRCH)
                snprintf(msg, size, "%s not sent: PID %u has exited", name, p->pid);
        else
                snprintf(msg, size, "%s to PID %u failed: %s", name, p->pid, strerror(-r));
        return r;
}

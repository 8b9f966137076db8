/* Signalling a process from gpuvet top (K, T, I; docs/top.md "Keys"), as nvitop does, with
 * the care a live machine needs: a confirmation naming the PID and command, the PID
 * checked to be the same process (its start time) when the signal goes, and never a
 * signal under --root, whose /proc is a fixture or a snapshot, not this machine's. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "top/top_model.h"

struct fsroot;

struct top_signal_env {
        struct fsroot *fs;
        bool live; /* fs is this machine's own root (fsroot_is_live) */
        /* Delivers sig: 0 or -errno. NULL: pidfd_send_signal on pidfd, kill(2) where the
         * kernel has no pidfds (pidfd < 0). Tests give their own. */
        int (*deliver)(int pidfd, unsigned int pid, int sig);
};

/* A signal asked for and waiting for y. */
struct top_pending_signal {
        bool active;
        int sig;
        unsigned int gpu, pid;
        unsigned long long start_ticks;
        char command[64];
};

/* "SIGKILL", "SIGTERM", "SIGINT". */
const char *top_signal_name(int sig);

/* K, T or I on row (NULL: none selected): fills *ret to ask for confirmation and returns
 * true, or says in msg why not (nothing selected, under --root, the process gone or in
 * another PID namespace, its start time unknown) and returns false. */
bool top_signal_ask(const struct top_signal_env *env, const struct top_proc_row *row, int sig,
                    struct top_pending_signal *ret, char *msg, size_t size);

/* y: sends p's signal when its PID still names the process asked about (the same start
 * time), and says in msg what came of it (sent; exited; another process now; not
 * permitted, EPERM). Returns 0 when sent, else -errno (-ESRCH gone or replaced). */
int top_signal_send(const struct top_signal_env *env, const struct top_pending_signal *p, char *msg, size_t size);

/* The confirmation line: "Send SIGKILL to PID 4242 (python3 train.py)? y/N". */
void top_signal_prompt(const struct top_pending_signal *p, char *out, size_t size);

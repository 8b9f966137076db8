/* Running an external command under a deadline, its output captured: for tools gpuvet
 * folds into its reports (dcgmi). The command runs in a process group of its own, so a
 * deadline kills it and everything it started. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct command_result {
        char *out;              /* standard output, NUL-terminated (NULL only on failure) */
        size_t out_len;
        bool out_truncated;     /* past max_out: the rest was read and dropped */
        char err_tail[1024];    /* the end of standard error */
        bool timed_out;         /* killed at the deadline */
        bool cancelled;         /* killed because cancel_fd became readable */
        int exit_status;        /* when it exited; -1 otherwise */
        int signal;             /* the signal that ended it; 0 otherwise */
        unsigned long long elapsed_ms;
};

/* Run argv[0] (looked up in PATH when it has no slash) with argv, standard input from
 * /dev/null. Returns 0 when it ran (whatever its exit), -ENOENT when it cannot be
 * started (errno of the exec), or another negative errno; fills *out. Free with
 * command_result_done. */
int run_command(char *const argv[], unsigned int timeout_ms, size_t max_out, struct command_result *out);

/* run_command that also gives up as soon as cancel_fd (a pipe or eventfd the caller makes
 * readable to stop it; -1: none) is readable, while the command runs or is being reaped:
 * then its process group is killed with SIGKILL and reaped, and out->cancelled is set.
 * For a caller that must stop within its own bound whatever the command does (gpuvet
 * serve's periodic check on SIGTERM). Returns as run_command. */
int run_command_cancellable(char *const argv[], unsigned int timeout_ms, size_t max_out, int cancel_fd,
                            struct command_result *out);
void command_result_done(struct command_result *r);

/* Wait up to ms for child pid to exit, polling (so a child stuck in the kernel cannot hold
 * the caller). Returns true with *status set once it has been reaped. */
bool child_reap(pid_t pid, unsigned int ms, int *status);

/* Fork a child of gpuvet's own code under the caller's watch: the child set up as
 * run_command.c's child_own_group says (default signals, a process group of its own, death
 * with the parent), then body(arg, fd) with fd the write end of a pipe whose read end is
 * *ret_fd (close-on-exec on both sides); body never returns (an _exit(3) follows if it
 * does). Returns the child's pid (the leader of its own process group), or a negative
 * errno. */
pid_t spawn_watched(void (*body)(const void *arg, int fd), const void *arg, int *ret_fd);

/* The processes NVML lists on a GPU, as a person reads them: who runs it, what it is, and
 * its PID as the container it runs in knows it (docs/top.md, "Processes").
 *
 * NVML gives PIDs of the host's PID namespace. On the host, /proc/PID/status's NSpid line
 * lists that PID and, for a process in a container, its PID in each nested namespace
 * (the innermost last). When gpuvet itself runs in a nested PID namespace, NVML's PIDs
 * are not ours and cannot be looked up: such rows say "other namespace", never blank. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct fsroot;

#define TOP_NSPID_MAX 8

/* What gpuvet reads of /proc/PID/status. */
struct top_status {
        bool have_uid;
        unsigned int uid;        /* the real uid (Uid's first field) */
        unsigned int n_nspid;    /* 0: no NSpid line (kernels before 4.1) */
        unsigned int nspid[TOP_NSPID_MAX];
        char name[32];           /* Name: the command's short name, "" when absent */
};

/* Parse the text of a status file (len bytes, need not be NUL-terminated). Lines it does
 * not know are skipped; a malformed Uid or NSpid line leaves that field unset. Returns 0,
 * or -EINVAL when the text is no status file (neither Name nor Pid line). */
int top_status_parse(const char *text, size_t len, struct top_status *ret);

/* One process row's identity. */
struct top_proc_info {
        enum { TOP_PROC_FOUND, TOP_PROC_GONE, TOP_PROC_OTHER_NS } where;
        unsigned int ns_pid;     /* its PID in its own (innermost) namespace; 0: the same as NVML's */
        char user[32];           /* name from the root's etc/passwd, else the uid; "" unless found */
        char command[160];       /* cmdline with spaces, printable only; "" unless found */
        char workload[48];       /* workload_summary of its cgroup (sys/workload.h); "" none */
};

/* uid -> user name from the root's etc/passwd (read once). */
struct top_users;
/* Read etc/passwd under fs; a missing or unreadable file gives an empty table (names are
 * then shown as numbers). Returns 0 or -ENOMEM. */
int top_users_load(struct fsroot *fs, struct top_users **ret);
/* The name of uid, or NULL. */
const char *top_users_name(const struct top_users *u, unsigned int uid);
struct top_users *top_users_free(struct top_users *u);

/* Whether gpuvet runs in a nested PID namespace (its own status has more than one NSpid). */
bool top_proc_self_nested(struct fsroot *fs);

/* Look up NVML's pid under fs. nested: top_proc_self_nested's answer. */
void top_proc_lookup(struct fsroot *fs, const struct top_users *users, bool nested, unsigned int pid,
                     struct top_proc_info *ret);

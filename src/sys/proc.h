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

#define PROC_NSPID_MAX 8

/* What gpuvet reads of /proc/PID/status. */
struct proc_status {
        bool have_uid;
        unsigned int uid;        /* the real uid (Uid's first field) */
        unsigned int n_nspid;    /* 0: no NSpid line (kernels before 4.1) */
        unsigned int nspid[PROC_NSPID_MAX];
        char name[32];           /* Name: the command's short name, "" when absent */
        bool have_rss;
        unsigned long long rss_kib; /* VmRSS: resident memory; absent for kernel threads */
};

/* Parse the text of a status file (len bytes, need not be NUL-terminated). Lines it does
 * not know are skipped; a malformed Uid or NSpid line leaves that field unset. Returns 0,
 * or -EINVAL when the text is no status file (neither Name nor Pid line). */
int proc_status_parse(const char *text, size_t len, struct proc_status *ret);

/* What gpuvet reads of /proc/PID/stat: the parent, CPU time and the start, all in clock ticks. */
struct proc_stat {
        unsigned int ppid;               /* field 4; 0 when it is not a number (the tree then has no parent) */
        unsigned long long utime, stime; /* fields 14 and 15 */
        unsigned long long start_ticks;  /* field 22: after boot; with the PID, who the process is */
};

/* Parse a stat line (len bytes, need not be NUL-terminated). The command (field 2) is
 * the process's own and may hold spaces and parentheses: the fields are counted from
 * its last ')'. Returns 0, or -EINVAL when a field needed is missing or not a number. */
int proc_stat_parse(const char *text, size_t len, struct proc_stat *ret);

/* /proc/uptime's first field, seconds since boot; -EINVAL when it is not a number. */
int proc_uptime_parse(const char *text, size_t len, double *ret);

/* Percent of one CPU used between two readings of a process's utime + stime, ticks
 * apart, elapsed_ns apart: -1 when it cannot be told (no time passed, the count went
 * back: another process with the PID). */
double proc_cpu_percent(unsigned long long before_ticks, unsigned long long now_ticks, unsigned long long elapsed_ns,
                       long ticks_per_s);

/* One process row's identity. */
struct proc_info {
        enum { PROC_FOUND, PROC_GONE, PROC_OTHER_NS } where;
        unsigned int ns_pid;     /* its PID in its own (innermost) namespace; 0: the same as NVML's */
        char user[32];           /* name from the root's etc/passwd, else the uid; "" unless found */
        char command[160];       /* cmdline with spaces, printable only; "" unless found */
        char workload[48];       /* workload_summary of its cgroup (sys/workload.h); "" none */
        bool have_stat;
        struct proc_stat stat;
        bool have_rss;
        unsigned long long rss_kib;
        double elapsed_s;        /* since it started; < 0: unknown */
};

/* uid -> user name from the root's etc/passwd (read once). */
struct proc_users;
/* Read etc/passwd under fs; a missing or unreadable file gives an empty table (names are
 * then shown as numbers). Returns 0 or -ENOMEM. */
int proc_users_load(struct fsroot *fs, struct proc_users **ret);
/* The name of uid, or NULL. */
const char *proc_users_name(const struct proc_users *u, unsigned int uid);
struct proc_users *proc_users_free(struct proc_users *u);

/* Whether gpuvet runs in a nested PID namespace (its own status has more than one NSpid). */
bool proc_self_nested(struct fsroot *fs);

/* Seconds since boot from fs's /proc/uptime; < 0 when unreadable. */
double proc_uptime(struct fsroot *fs);

/* Look up NVML's pid under fs. nested: proc_self_nested's answer; uptime_s:
 * proc_uptime's, for the elapsed time (< 0: none); ticks_per_s: the kernel's clock
 * ticks (sysconf _SC_CLK_TCK). */
void proc_lookup(struct fsroot *fs, const struct proc_users *users, bool nested, unsigned int pid,
                     double uptime_s, long ticks_per_s, struct proc_info *ret);

/* The same for an ancestor of a GPU process (the tree view's context rows), without its
 * workload: that reads the cgroup and kubelet's logs, for a column those rows leave blank. */
void proc_lookup_host(struct fsroot *fs, const struct proc_users *users, bool nested, unsigned int pid,
                          double uptime_s, long ticks_per_s, struct proc_info *ret);

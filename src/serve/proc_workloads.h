/* The processes NVML lists on each GPU in a round, attributed: command, user and workload
 * (sys/workload.h), for gpuvet serve's per-process series and --workload-labels
 * (docs/serve.md, "Processes and workloads").
 *
 * A process is looked up once: the answer is kept under its PID and start time (field 22
 * of /proc/PID/stat, read every round, so a PID the kernel gave to another process is
 * looked up again) until a round no longer lists it. Only procfs files and kubelet's log
 * directories are read, never anything that can block.
 *
 * Not thread-safe: one caller at a time (the body cache renders under its lock). */
#pragma once

#include <stdbool.h>

#include "sys/nvml_facts.h"
#include "sys/workload.h"

struct fsroot;

/* At most this many processes of a GPU are exported, those using the most memory; the
 * count (gpuvet_gpu_processes) still counts them all. */
#define PROC_WORKLOADS_PER_GPU 64

struct attributed_proc {
        unsigned int pid;
        unsigned long long used_bytes; /* NVML's; NVML_VALUE_NOT_AVAILABLE (~0ULL): unknown */
        int sm_pct;                    /* its SM share, nvml_proc_sm_share(); -1 unknown */
        bool found;                    /* /proc/PID was read */
        char process[32];              /* comm ("Name:" of status), control bytes as '?' */
        char user[32];                 /* from the root's etc/passwd, else the uid */
        struct workload w;
};

struct gpu_procs {
        bool known;             /* NVML gave at least one of the GPU's process lists */
        unsigned int count;     /* distinct PIDs NVML listed */
        unsigned int n;         /* in v: at most PROC_WORKLOADS_PER_GPU, most memory first */
        struct attributed_proc *v; /* n entries (NULL when none): a round allocates what it lists */
};

struct proc_workloads;

/* Processes are looked up under fs (kept, not owned). When gpuvet runs in a nested PID
 * namespace NVML's PIDs are not its own: nothing is looked up then (found stays false).
 * Returns 0 or -ENOMEM. */
int proc_workloads_new(struct fsroot *fs, struct proc_workloads **ret);
void proc_workloads_free(struct proc_workloads *c);

/* The round of f: an array of f->n_gpus (free it with gpu_procs_free). Returns 0 or -ENOMEM. */
int proc_workloads_round(struct proc_workloads *c, const struct nvml_facts *f, struct gpu_procs **ret);
void gpu_procs_free(struct gpu_procs *procs, unsigned int n_gpus);

/* The start time (clock ticks since boot) from a /proc/PID/stat text; false when the text
 * is no stat line. */
bool proc_stat_starttime(const char *text, size_t len, unsigned long long *ret);

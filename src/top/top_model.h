/* What gpuvet top shows, built from the sampler's samples (docs/top.md): each GPU's
 * latest readings with their history, whether they are live, stale or lost, and the
 * processes on the GPUs. The screen and --once render this; nothing here draws or calls
 * NVML. */
#pragma once

#include <stdbool.h>

#include "sys/nvml_facts.h"
#include "top/top_draw.h"
#include "sys/proc.h"

enum top_gpu_state {
        TOP_GPU_LIVE,
        TOP_GPU_STALE, /* readings did not come in time: the last ones are not shown as live */
        TOP_GPU_LOST,  /* NVML answers "GPU is lost": fallen off the bus */
};

/* One reading as shown: have false when this sample has none. */
struct top_reading {
        bool have;
        double v;
};

struct top_gpu {
        unsigned int index;
        char name[NV_STR_MAX];
        enum top_gpu_state state;
        char why[160]; /* stale or lost: which call, how long */
        struct top_reading util_pct, mem_used_bytes, mem_total_bytes, temp_c, temp_slowdown_c, power_w,
                power_limit_w, sm_mhz, sm_max_mhz, mem_mhz, mem_max_mhz;
        /* Shown where the driver gives them (no fan on SXM modules, no video engines in MIG
         * mode, no PCIe counter under vGPU): nvtop's fan, ENC/DEC and PCIe RX/TX. */
        struct top_reading fan_pct, enc_pct, dec_pct, pcie_tx_kbs, pcie_rx_kbs;
        bool have_reasons;
        unsigned long long reasons; /* NV_CLOCKS_EVENT_* */
        bool have_ecc_mode, ecc_on;
        bool have_ecc_counts;
        unsigned long long ecc_corrected, ecc_uncorrected; /* volatile: since the driver loaded */
        struct top_series h_util, h_mem, h_temp, h_power, h_sm, h_mclk;
};

/* What a GPU's line says of its health, decided here for the screen, --once and the
 * tests alike (docs/top.md, "Colours"). A clock held down by a setting or by the software
 * power cap is how a busy GPU runs, not a fault; the hardware holding it down, or memory
 * that lost data, is one. */
enum top_gpu_class {
        TOP_CLASS_NORMAL, /* idle, app clocks, SW power cap, sync boost, display clock */
        TOP_CLASS_WARN,   /* SW thermal slowdown: the driver slows a hot GPU */
        TOP_CLASS_FAULT,  /* uncorrected ECC errors, HW slowdown, HW thermal slowdown, HW power brake */
        TOP_CLASS_STALE,  /* no current readings to judge */
        TOP_CLASS_LOST,   /* fell off the bus */
};

/* The clock event reasons top names, each with the class it gives a GPU. */
struct top_reason {
        unsigned long long bit; /* NV_CLOCKS_EVENT_* */
        const char *name;
        enum top_gpu_class class;
};
extern const struct top_reason top_reasons[];
extern const unsigned int top_n_reasons;

enum top_gpu_class top_gpu_classify(const struct top_gpu *g);

struct top_proc_row {
        unsigned int gpu;
        unsigned int pid;            /* NVML's */
        bool have_mem;
        unsigned long long used_bytes;
        bool graphics;               /* a graphics (not compute) context */
        int sm_pct;                  /* its share of the SM in the driver's latest sample, %; -1: unknown */
        double gpu_util;             /* its GPU's utilization, for sorting; -1: none */
        double cpu_pct;              /* host CPU, % of one CPU since the previous round; -1: unknown */
        struct proc_info info;
};

/* An ancestor of GPU processes that uses no GPU itself (a launcher: torchrun, mpirun,
 * slurmstepd, a shell): the tree view's context rows (docs/top.md, "Tree view"). */
struct top_host_row {
        unsigned int pid;
        double cpu_pct; /* as top_proc_row's */
        struct proc_info info;
};

/* A process's CPU time at a round, to tell its CPU % at the next. */
struct top_cpu_mark {
        unsigned int pid;
        unsigned long long start_ticks; /* the same PID with another start is another process */
        unsigned long long cpu_ticks;   /* utime + stime */
};

enum top_sort {
        TOP_SORT_MEMORY, /* GPU memory, largest first */
        TOP_SORT_UTIL,   /* its SM share, busiest first; unknown shares after, by their GPU's utilization */
        TOP_SORT_PID,    /* ascending */
        TOP_SORT_CPU,    /* host CPU %, busiest first; unknown last */
        TOP_SORT_RSS,    /* host resident memory, largest first; unknown last */
        TOP_SORT_TIME,   /* elapsed since it started, longest first; unknown last */
        TOP_SORT_COUNT
};

struct top_model {
        unsigned int n_gpus;
        struct top_gpu *gpus;
        unsigned int n_procs;
        struct top_proc_row *procs;
        unsigned int n_hosts;
        struct top_host_row *hosts;  /* the GPU processes' ancestors that are not on a GPU */
        unsigned long long seq;      /* of the sample shown */
        unsigned long long taken_ns; /* CLOCK_MONOTONIC when its round began */
        char driver[NV_STR_MAX];
        char problem[200];           /* NVML or the sampler as a whole: "" when fine */
        struct top_cpu_mark *marks;  /* the processes' CPU time at the previous round */
        unsigned int n_marks;
        unsigned long long marks_ns; /* CLOCK_MONOTONIC when they were read */
};

struct fsroot;
struct proc_users;
struct top_lookup {
        struct fsroot *fs;
        const struct proc_users *users;
        bool nested;
};

/* Take in a sample's facts (grows the GPU table when NVML lists more). Returns 0 or -ENOMEM. */
int top_model_update(struct top_model *m, const struct nvml_facts *f, unsigned long long taken_ns,
                     const struct top_lookup *look);

/* Each row's CPU % from its CPU time now (read at now_ns) and at the previous call;
 * -1 for a process seen for the first time. Keeps this call's times for the next.
 * Returns 0 or -ENOMEM (then the next call starts afresh). */
int top_model_cpu(struct top_model *m, unsigned long long now_ns, long ticks_per_s);

/* Mark every live GPU stale (the sampler stopped, or no round came in time), with why;
 * the GPUs the previous call marked take the new why. */
void top_model_all_stale(struct top_model *m, const char *why);

/* Sort the process rows by key. */
void top_model_sort(struct top_model *m, enum top_sort key);
const char *top_sort_name(enum top_sort key); /* "memory", "utilization", "pid", "cpu", "rss", "time" */

/* The tree view's lines in the order shown: each GPU process under its host ancestors,
 * up to but not including PID 1; siblings in m->procs' order (top_model_sort's), a host
 * row where its first GPU descendant would be; a process on several GPUs one line per GPU,
 * its children under the last. A PPid cycle is cut at its lowest PID; a line deeper than
 * TOP_TREE_MAX_DEPTH is drawn at that depth. */
#define TOP_TREE_MAX_DEPTH 16
struct top_tree_line {
        bool host;             /* m->hosts[index], else m->procs[index] */
        unsigned int index;
        unsigned int depth;    /* 0: top level */
        char glyphs[3 * TOP_TREE_MAX_DEPTH + 1]; /* as pstree -A draws them: "|  `- " */
};
/* Fills *ret (malloc'd; NULL when there are no lines) and *n. Returns 0 or -ENOMEM. */
int top_model_tree(const struct top_model *m, struct top_tree_line **ret, unsigned int *n);

void top_model_done(struct top_model *m);

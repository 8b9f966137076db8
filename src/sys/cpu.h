/* CPU power management as sysfs shows it: cpufreq (governor, driver, current and maximum
 * frequency per online CPU), turbo/boost, cpuidle states of cpu0, and SMT control.
 *
 * Each value carries an errno beside it: 0 when read and parsed, -ENOENT when the file
 * does not exist here (the feature does not apply: a VM without cpufreq), any other
 * negative errno when the file exists but could not be read or did not parse (-EINVAL,
 * -ERANGE, -EACCES ...). Checks skip on -ENOENT and report an error otherwise. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fsroot;
struct facts;

/* The kernel's CPUIDLE_STATE_MAX is 10; room to spare for a future kernel. */
#define CPU_IDLE_MAX_STATES 16

struct cpu_freq {
        unsigned cpu;               /* CPU id */
        int cpufreq_err;            /* 0 when cpuN/cpufreq exists, -ENOENT when it does not */
        char governor[32];          /* scaling_governor: "performance" */
        int governor_err;
        uint64_t cur_khz;           /* scaling_cur_freq */
        int cur_err;
        uint64_t max_khz;           /* cpuinfo_max_freq: the hardware maximum, turbo included */
        int max_err;
        uint64_t scaling_max_khz;   /* scaling_max_freq: the policy's cap */
        int scaling_max_err;
};

/* An idle state whose exit latency exceeds this is "deep": C1/C1E wake in 1-10 us, C6 and
 * package states in 50-200 us, which a launch-bound GPU loop pays on every wake-up. The
 * cpu.cstates check warns about them and `gpuvet tune` (cpu.cstates=shallow) disables them. */
#define CSTATE_DEEP_LATENCY_US 20

struct cpu_idle_state {
        unsigned index;             /* N of stateN */
        char name[32];              /* "C6", "POLL" */
        int name_err;
        uint64_t latency_us;        /* exit latency */
        int latency_err;
        bool disabled;              /* disable file reads 1; a missing file means enabled */
        int disable_err;
};

struct cpu_facts {
        int online_err;             /* /sys/devices/system/cpu/online */
        struct cpu_freq *cpus;      /* online CPUs, ascending id */
        size_t n_cpus;
        size_t n_cpufreq;           /* CPUs with a cpufreq directory */
        char scaling_driver[32];    /* of the first CPU with cpufreq */
        int scaling_driver_err;

        int no_turbo;               /* /sys/devices/system/cpu/intel_pstate/no_turbo */
        int no_turbo_err;
        int boost;                  /* /sys/devices/system/cpu/cpufreq/boost */
        int boost_err;

        char idle_driver[32];       /* /sys/devices/system/cpu/cpuidle/current_driver: "intel_idle", "none" */
        int idle_driver_err;
        int idle_err;               /* 0 when cpu0/cpuidle exists, -ENOENT when it does not */
        struct cpu_idle_state idle[CPU_IDLE_MAX_STATES];
        size_t n_idle;

        char smt_control[32];       /* "on", "off", "forceoff", "notsupported", "notimplemented" */
        int smt_control_err;
        int smt_active;             /* 0 or 1 */
        int smt_active_err;
};

/* Gather f->cpu. Returns 0, or -ENOMEM; unreadable files are recorded in the facts. */
int cpu_gather(struct fsroot *fs, struct facts *f);
void cpu_facts_done(struct cpu_facts *x);

/* cpu: frequency scaling governor, turbo/boost, deep C-states, SMT and the current
 * frequency against the maximum. GPU work is driven by a few host threads (kernel
 * launches, NCCL proxies, data loaders); a core that clocks down or sleeps deeply adds
 * microseconds to every launch and every collective. */
#include "checks/check.h"
#include "core/array.h"
#include "core/strparse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Below this share of cpuinfo_max_freq a CPU on the performance governor is held down by
 * something else (power cap, thermal limit, BIOS power profile); sampling noise on idle
 * cores stays well above it. */
#define FREQ_LOW_PERCENT 50

#define CPUFREQ_SOURCE "/sys/devices/system/cpu/cpu*/cpufreq/"

/* Skip when no CPU has cpufreq; error when the CPU list itself was unreadable. */
static bool skip_without_cpufreq(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct cpu_facts *c = &f->cpu;
        if (c->n_cpufreq > 0)
                return false;
        struct result *r = result_new(rep, self, "host");
        if (c->n_cpus == 0) {
                if (check_skip_capture_lacks(r, f, "/sys/devices/system/cpu/online"))
                        return true;
                result_status(r, STATUS_ERROR, "cannot read /sys/devices/system/cpu/online: %s", check_errtext(c->online_err));
                result_remedy(r, "Check that sysfs is mounted at /sys (or that the --root tree contains it).");
                result_evidence(r, "source", "/sys/devices/system/cpu/online");
                return true;
        }
        result_status(r, STATUS_SKIP, "no cpufreq on any of the %zu CPUs (virtual machine, or frequency scaling "
                      "left to the firmware)", c->n_cpus);
        result_evidence(r, "source", "/sys/devices/system/cpu/cpu*/cpufreq");
        return true;
}

enum freq_file { FREQ_GOVERNOR, FREQ_CUR, FREQ_MAX };

static const char *const freq_file_name[] = {
        [FREQ_GOVERNOR] = "scaling_governor",
        [FREQ_CUR] = "scaling_cur_freq",
        [FREQ_MAX] = "cpuinfo_max_freq",
};

static int freq_err(const struct cpu_freq *q, enum freq_file which) {
        switch (which) {
        case FREQ_GOVERNOR:
                return q->governor_err;
        case FREQ_CUR:
                return q->cur_err;
        case FREQ_MAX:
                return q->max_err;
        }
        return 0;
}

/* Error (and true) when some CPU with cpufreq could not give this file. */
static bool error_on_bad(const struct check_info *self, const struct facts *f, struct report *rep,
                         enum freq_file which) {
        const struct cpu_facts *c = &f->cpu;
        for (size_t i = 0; i < c->n_cpus; i++) {
                const struct cpu_freq *q = &c->cpus[i];
                if (q->cpufreq_err < 0 || freq_err(q, which) == 0)
                        continue;
                const char *file = freq_file_name[which];
                struct result *r = result_new(rep, self, "host");
                result_status(r, STATUS_ERROR, "cannot read /sys/devices/system/cpu/cpu%u/cpufreq/%s: %s", q->cpu,
                              file, check_errtext(freq_err(q, which)));
                result_remedy(r, "Read the file by hand (`cat /sys/devices/system/cpu/cpu%u/cpufreq/%s`); a cpufreq "
                              "driver that cannot report it needs a kernel or BIOS update.", q->cpu, file);
                result_evidence(r, "source", "/sys/devices/system/cpu/cpu%u/cpufreq/%s", q->cpu, file);
                return true;
        }
        return false;
}

static void run_governor(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct cpu_facts *c = &f->cpu;
        if (skip_without_cpufreq(self, f, rep) ||
            error_on_bad(self, f, rep, FREQ_GOVERNOR))
                return;

        /* Count CPUs per governor, in order of first appearance. */
        struct { const char *name; size_t n; } gov[16];
        size_t n_gov = 0, n_perf = 0, n_other_overflow = 0;
        for (size_t i = 0; i < c->n_cpus; i++) {
                const struct cpu_freq *q = &c->cpus[i];
                if (q->cpufreq_err < 0)
                        continue;
                if (strcmp(q->governor, "performance") == 0)
                        n_perf++;
                size_t j = 0;
                while (j < n_gov && strcmp(gov[j].name, q->governor) != 0)
                        j++;
                if (j == n_gov) {
                        if (n_gov == ARRAY_COUNT(gov)) {
                                n_other_overflow++;
                                continue;
                        }
                        gov[n_gov].name = q->governor;
                        gov[n_gov++].n = 0;
                }
                gov[j].n++;
        }
        char observed[512] = "";
        size_t len = 0;
        for (size_t j = 0; j < n_gov && len < sizeof(observed); j++)
                len += (size_t)snprintf(observed + len, sizeof(observed) - len, "%s%s on %zu CPU%s", j ? ", " : "",
                                        gov[j].name, gov[j].n, gov[j].n == 1 ? "" : "s");
        if (n_other_overflow && len < sizeof(observed))
                snprintf(observed + len, sizeof(observed) - len, ", other governors on %zu CPUs", n_other_overflow);

        struct result *r = result_new(rep, self, "host");
        result_observed(r, "%s", observed);
        result_expected(r, "performance on all %zu CPUs", c->n_cpufreq);
        result_evidence(r, "source", CPUFREQ_SOURCE "scaling_governor");
        if (c->scaling_driver_err == 0)
                result_evidence(r, "scaling_driver", "%s", c->scaling_driver);
        if (n_perf == c->n_cpufreq) {
                result_status(r, STATUS_PASS, "all %zu CPUs use the performance governor", c->n_cpufreq);
                return;
        }
        result_status(r, STATUS_WARN, "%zu of %zu CPUs are not on the performance governor: they clock down between "
                      "bursts and add latency to GPU launches", c->n_cpufreq - n_perf, c->n_cpufreq);
        result_remedy(r, "Run `gpuvet tune apply --set cpu.governor=performance` (all CPUs; `gpuvet tune revert` "
                      "undoes it, `gpuvet tune install-unit --set cpu.governor=performance` keeps it across reboots), "
                      "or `cpupower frequency-set -g performance`; to keep that across reboots set "
                      "governor='performance' in /etc/default/cpupower and `systemctl enable --now cpupower`, or "
                      "`tuned-adm profile throughput-performance`.");
}

CHECK_INFO(cpu_governor, "cpu", "cpu.governor", LEVEL_QUICK, NEED_CPU,
           "Every CPU uses the performance frequency governor",
           run_governor);

/* A boost switch of the kernel's: intel_pstate's no_turbo (0 lets it boost) or cpufreq's boost. */
struct boost_control {
        const char *path;
        const char *name; /* as the observation names it: "cpufreq boost" */
        int boosting;     /* the value that lets the CPUs boost */
        const char *pass;
        const char *warn;
        const char *remedy;
};

static const struct boost_control intel_no_turbo = {
        "/sys/devices/system/cpu/intel_pstate/no_turbo", "intel_pstate no_turbo", 0,
        "turbo boost is enabled (intel_pstate)",
        "turbo boost is disabled (intel_pstate no_turbo=1): single-thread speed of the CPU threads that feed the "
        "GPUs is capped at base clock",
        "Run `gpuvet tune apply --set cpu.boost=on` as root (it writes 0 to "
        "/sys/devices/system/cpu/intel_pstate/no_turbo; `gpuvet tune revert` undoes it). If the write is refused, "
        "turbo is off in the BIOS: enable \"Intel Turbo Boost Technology\" in the processor power settings.",
};

static const struct boost_control cpufreq_boost = {
        "/sys/devices/system/cpu/cpufreq/boost", "cpufreq boost", 1,
        "CPU boost is enabled (cpufreq)",
        "CPU boost is disabled (cpufreq boost=0): single-thread speed of the CPU threads that feed the GPUs is "
        "capped at base clock",
        "Run `gpuvet tune apply --set cpu.boost=on` as root (it writes 1 to /sys/devices/system/cpu/cpufreq/boost); "
        "if it does not stick, enable \"Core Performance Boost\" (AMD) or \"Turbo Boost\" (Intel) in the BIOS.",
};

/* err: how reading b->path failed (negative errno), else 0 and value is what it holds. */
static void judge_boost(struct result *r, const struct boost_control *b, int value, int err) {
        result_evidence(r, "source", "%s", b->path);
        if (err < 0) {
                result_status(r, STATUS_ERROR, "cannot read %s: %s", b->path, check_errtext(err));
                result_remedy(r, "Read the file by hand (`cat %s`); it holds 0 or 1.", b->path);
                return;
        }
        result_observed(r, "%s=%d", b->name, value);
        result_expected(r, "%s=%d", b->name, b->boosting);
        if (value == b->boosting) {
                result_status(r, STATUS_PASS, "%s", b->pass);
                return;
        }
        result_status(r, STATUS_WARN, "%s", b->warn);
        result_remedy(r, "%s", b->remedy);
}

static void run_boost(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct cpu_facts *c = &f->cpu;
        struct result *r = result_new(rep, self, "host");
        if (c->no_turbo_err != -ENOENT) {
                judge_boost(r, &intel_no_turbo, c->no_turbo, c->no_turbo_err);
                return;
        }
        if (c->boost_err != -ENOENT) {
                judge_boost(r, &cpufreq_boost, c->boost, c->boost_err);
                return;
        }
        result_status(r, STATUS_SKIP, "no boost control exposed (neither intel_pstate/no_turbo nor cpufreq/boost "
                      "exists: virtual machine, or a scaling driver without one)");
        result_evidence(r, "source", "/sys/devices/system/cpu/intel_pstate/no_turbo, /sys/devices/system/cpu/cpufreq/boost");
}

CHECK_INFO(cpu_boost, "cpu", "cpu.boost", LEVEL_QUICK, NEED_CPU, "CPU turbo/boost is enabled", run_boost);

static void run_cstates(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct cpu_facts *c = &f->cpu;
        const char *cmdline = f->host.cmdline ? f->host.cmdline : "";
        static const char *const limit_keys[] = { "idle", "processor.max_cstate", "intel_idle.max_cstate" };
        char limits[160] = "", idle[32] = "";
        size_t ll = 0;
        for (size_t k = 0; k < ARRAY_COUNT(limit_keys); k++) {
                char v[32];
                if (cmdline_get(cmdline, limit_keys[k], v, sizeof(v)) < 0)
                        continue;
                if (k == 0)
                        snprintf(idle, sizeof(idle), "%s", v);
                if (ll < sizeof(limits))
                        ll += (size_t)snprintf(limits + ll, sizeof(limits) - ll, "%s%s=%s", ll ? " " : "",
                                               limit_keys[k], v);
        }

        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", "/sys/devices/system/cpu/cpu0/cpuidle/state*/{name,latency,disable}, /proc/cmdline");
        if (c->idle_driver_err == 0)
                result_evidence(r, "cpuidle_driver", "%s", c->idle_driver);
        result_evidence(r, "cmdline_limits", "%s", ll ? limits : "none");

        /* idle=poll keeps CPUs spinning, idle=halt stops at C1: neither sleeps deeply,
         * whatever the cpuidle directory lists. */
        if (strcmp(idle, "poll") == 0 || strcmp(idle, "halt") == 0) {
                result_observed(r, "idle=%s on the kernel command line", idle);
                result_expected(r, "no enabled idle state with exit latency > %d us", CSTATE_DEEP_LATENCY_US);
                result_status(r, STATUS_PASS, "deep C-states are off: idle=%s on the kernel command line", idle);
                return;
        }
        if (c->idle_err == -ENOENT || (c->idle_err == 0 && c->n_idle == 0)) {
                if (c->idle_driver_err < 0 || strcmp(c->idle_driver, "none") == 0)
                        result_status(r, STATUS_SKIP, "cpu0 has no cpuidle states (cpuidle driver: %s): idle is left "
                                      "to the hypervisor or firmware", c->idle_driver_err == 0 ? "none" : "unknown");
                else
                        result_status(r, STATUS_SKIP, "cpu0 lists no cpuidle states (cpuidle driver: %s)",
                                      c->idle_driver);
                return;
        }
        result_expected(r, "no enabled idle state with exit latency > %d us", CSTATE_DEEP_LATENCY_US);
        if (c->idle_err < 0) {
                result_status(r, STATUS_ERROR, "cannot read /sys/devices/system/cpu/cpu0/cpuidle: %s",
                              check_errtext(c->idle_err));
                result_remedy(r, "Check that sysfs is mounted at /sys (or that the --root tree contains it).");
                return;
        }
        for (size_t i = 0; i < c->n_idle; i++) {
                const struct cpu_idle_state *s = &c->idle[i];
                const char *file = s->name_err < 0 ? "name" : s->latency_err < 0 ? "latency" : NULL;
                int err = s->name_err < 0 ? s->name_err : s->latency_err;
                if (!file && s->disable_err < 0 && s->disable_err != -ENOENT) {
                        file = "disable";
                        err = s->disable_err;
                }
                if (!file)
                        continue;
                result_status(r, STATUS_ERROR, "cannot read /sys/devices/system/cpu/cpu0/cpuidle/state%u/%s: %s",
                              s->index, file, check_errtext(err));
                result_remedy(r, "Run `cpupower idle-info` to list the idle states the kernel reports.");
                return;
        }

        char deep[256] = "", deepest_ok[64] = "none";
        size_t len = 0, n_deep = 0;
        for (size_t i = 0; i < c->n_idle; i++) {
                const struct cpu_idle_state *s = &c->idle[i];
                if (s->disabled)
                        continue;
                if (s->latency_us <= CSTATE_DEEP_LATENCY_US) {
                        snprintf(deepest_ok, sizeof(deepest_ok), "%s, %" PRIu64 " us", s->name, s->latency_us);
                        continue;
                }
                n_deep++;
                if (len < sizeof(deep))
                        len += (size_t)snprintf(deep + len, sizeof(deep) - len, "%s%s (%" PRIu64 " us)",
                                                len ? ", " : "", s->name, s->latency_us);
        }
        if (n_deep == 0) {
                result_observed(r, "deepest enabled state: %s", deepest_ok);
                result_status(r, STATUS_PASS, "no deep C-state is enabled (deepest enabled: %s)", deepest_ok);
                return;
        }
        result_observed(r, "enabled deep states: %s", deep);
        result_status(r, STATUS_WARN, "%zu deep C-state%s enabled (%s): waking from them adds tens to hundreds of "
                      "microseconds to GPU launches and collectives", n_deep, n_deep == 1 ? "" : "s", deep);
        /* processor.max_cstate only limits acpi_idle; intel_idle has its own parameter. */
        result_remedy(r, "Now: `gpuvet tune apply --set cpu.cstates=shallow` or `cpupower idle-set -D %d` (disable "
                      "states with exit latency >= %d us, until reboot). "
                      "Persistently: add `intel_idle.max_cstate=1 processor.max_cstate=1` to GRUB_CMDLINE_LINUX in "
                      "/etc/default/grub, run `update-grub` (or `grub2-mkconfig -o /boot/grub2/grub.cfg`) and "
                      "reboot; or set the BIOS power profile to maximum performance.",
                      CSTATE_DEEP_LATENCY_US + 1, CSTATE_DEEP_LATENCY_US + 1);
}

CHECK_INFO(cpu_cstates, "cpu", "cpu.cstates", LEVEL_QUICK, NEED_CPU,
           "No deep C-state (exit latency > 20 us) is enabled",
           run_cstates);

static void run_smt(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct cpu_facts *c = &f->cpu;
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", "/sys/devices/system/cpu/smt/control, /sys/devices/system/cpu/smt/active");
        if (check_judge_read_error(r, c->smt_control_err, "/sys/devices/system/cpu/smt/control",
                                   "the kernel exposes no SMT control (/sys/devices/system/cpu/smt absent: kernel "
                                   "older than 4.19, or no SMT hotplug on this architecture)",
                                   NULL))
                return;
        char active[16];
        if (c->smt_active_err == 0)
                snprintf(active, sizeof(active), "%d", c->smt_active);
        else
                snprintf(active, sizeof(active), "unknown");
        result_observed(r, "control=%s, active=%s", c->smt_control, active);
        result_expected(r, "reported only: SMT on or off are both valid choices");
        /* Neither setting is wrong for GPU work: SMT gives data loaders more threads, turning
         * it off gives steadier per-thread latency. The fleet report shows nodes that differ. */
        const char *ctl = c->smt_control, *what;
        char buf[64];
        if (strcmp(ctl, "on") == 0)
                what = "SMT (hyper-threading) is on";
        else if (strcmp(ctl, "off") == 0)
                what = "SMT (hyper-threading) is off (switched off at run time)";
        else if (strcmp(ctl, "forceoff") == 0)
                what = "SMT (hyper-threading) is off (nosmt=force on the kernel command line)";
        else if (strcmp(ctl, "notsupported") == 0 || strcmp(ctl, "notimplemented") == 0) {
                result_status(r, STATUS_PASS, "%s", ctl[3] == 's' ? "the CPU has no SMT"
                                                    : "the kernel cannot control SMT on this architecture");
                return;
        } else {
                /* POWER writes the number of threads per core. */
                snprintf(buf, sizeof(buf), "SMT control is %s", ctl);
                what = buf;
        }
        result_status(r, STATUS_PASS, "%s; %s", what,
                      c->smt_active_err < 0 ? "active state unknown"
                      : c->smt_active   ? "sibling threads active"
                                        : "sibling threads inactive");
}

CHECK_INFO(cpu_smt, "cpu", "cpu.smt", LEVEL_QUICK, NEED_CPU, "SMT (hyper-threading) state, reported", run_smt);

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

static void run_frequency(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct cpu_facts *c = &f->cpu;
        if (skip_without_cpufreq(self, f, rep) ||
            error_on_bad(self, f, rep, FREQ_CUR) ||
            error_on_bad(self, f, rep, FREQ_MAX))
                return;
        uint64_t *cur = calloc(c->n_cpufreq, sizeof(*cur));
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", CPUFREQ_SOURCE "{scaling_cur_freq,cpuinfo_max_freq,scaling_max_freq,scaling_governor}");
        if (!cur) {
                result_status(r, STATUS_ERROR, "out of memory while judging %zu CPUs", c->n_cpufreq);
                result_remedy(r, "Run gpuvet again with more memory available.");
                return;
        }
        size_t n = 0, n_low = 0, n_capped = 0, n_perf = 0;
        uint64_t max_khz = 0, cap_khz = 0;
        for (size_t i = 0; i < c->n_cpus; i++) {
                const struct cpu_freq *q = &c->cpus[i];
                if (q->cpufreq_err < 0)
                        continue;
                cur[n++] = q->cur_khz;
                if (q->max_khz > max_khz)
                        max_khz = q->max_khz;
                if (q->scaling_max_err == 0 && q->scaling_max_khz < q->max_khz) {
                        if (n_capped++ == 0 || q->scaling_max_khz < cap_khz)
                                cap_khz = q->scaling_max_khz;
                }
                if (q->governor_err == 0 && strcmp(q->governor, "performance") == 0) {
                        n_perf++;
                        if (q->cur_khz * 100 < q->max_khz * FREQ_LOW_PERCENT)
                                n_low++;
                }
        }
        qsort(cur, n, sizeof(*cur), cmp_u64);
        result_observed(r, "current %" PRIu64 "/%" PRIu64 "/%" PRIu64 " MHz (min/median/max) of max %" PRIu64 " MHz",
                        cur[0] / 1000, cur[n / 2] / 1000, cur[n - 1] / 1000, max_khz / 1000);
        result_expected(r, "scaling_max_freq = cpuinfo_max_freq; CPUs on the performance governor at >= %d%% of max",
                        FREQ_LOW_PERCENT);
        free(cur);
        if (n_capped) {
                result_status(r, STATUS_WARN, "%zu CPU%s capped below the hardware maximum (scaling_max_freq as low as "
                              "%" PRIu64 " MHz of %" PRIu64 " MHz)", n_capped, n_capped == 1 ? " is" : "s are",
                              cap_khz / 1000, max_khz / 1000);
                result_remedy(r, "Lift the cap with `cpupower frequency-set -u %" PRIu64 "MHz` and find what set it "
                              "(tuned profile, power-capping daemon, /etc/default/cpupower max_freq).",
                              max_khz / 1000);
                return;
        }
        if (n_low) {
                result_status(r, STATUS_WARN, "%zu of %zu CPUs on the performance governor run below %d%% of their "
                              "maximum frequency", n_low, n_perf, FREQ_LOW_PERCENT);
                result_remedy(r, "Look for a power cap or thermal limit: `turbostat --quiet --show "
                              "Busy%%,Bzy_MHz,PkgWatt,PkgTmp sleep 5`, the BMC's power-capping policy and the BIOS "
                              "power profile (set it to maximum performance).");
                return;
        }
        result_status(r, STATUS_PASS, "no CPU is capped, and none on the performance governor runs below %d%% of its "
                      "maximum", FREQ_LOW_PERCENT);
}

CHECK_INFO(cpu_frequency, "cpu", "cpu.frequency", LEVEL_QUICK, NEED_CPU,
           "CPUs are not capped and run near their maximum frequency",
           run_frequency);

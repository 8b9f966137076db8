#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "core/fsroot.h"
#include "tree.h"

/* One result of check on f. */
static const struct result *run_one(const struct check_info *check, const struct facts *f, struct report *rep) {
        report_init(rep);
        check->run(check, f, rep);
        assert_int_equal(rep->n_results, 1);
        return &rep->results[0];
}

static const char *evidence(const struct result *r, const char *key) {
        for (size_t i = 0; i < r->n_evidence; i++)
                if (strcmp(r->evidence[i].key, key) == 0)
                        return r->evidence[i].value;
        return NULL;
}

/* n CPUs on governor gov at cur/max MHz, cpufreq everywhere. */
static void make_cpus(struct facts *f, struct cpu_freq *cpus, size_t n, const char *gov, unsigned cur_mhz,
                      unsigned max_mhz) {
        memset(f, 0, sizeof(*f));
        for (size_t i = 0; i < n; i++) {
                memset(&cpus[i], 0, sizeof(cpus[i]));
                cpus[i].cpu = (unsigned)i;
                snprintf(cpus[i].governor, sizeof(cpus[i].governor), "%s", gov);
                cpus[i].cur_khz = cur_mhz * 1000ull;
                cpus[i].max_khz = cpus[i].scaling_max_khz = max_mhz * 1000ull;
        }
        f->cpu.cpus = cpus;
        f->cpu.n_cpus = f->cpu.n_cpufreq = n;
        snprintf(f->cpu.scaling_driver, sizeof(f->cpu.scaling_driver), "intel_pstate");
        f->cpu.no_turbo_err = f->cpu.boost_err = f->cpu.idle_err = f->cpu.idle_driver_err = -ENOENT;
        f->cpu.smt_control_err = f->cpu.smt_active_err = -ENOENT;
}

static void test_governor(void **state) {
        (void)state;
        struct facts f;
        struct cpu_freq cpus[4];
        struct report rep;
        make_cpus(&f, cpus, 4, "performance", 3000, 3500);
        const struct result *r = run_one(&check_cpu_governor, &f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "performance on 4 CPUs");
        assert_string_equal(r->expected, "performance on all 4 CPUs");
        assert_string_equal(evidence(r, "scaling_driver"), "intel_pstate");
        report_done(&rep);

        make_cpus(&f, cpus, 4, "powersave", 3000, 3500);
        snprintf(cpus[2].governor, sizeof(cpus[2].governor), "performance");
        r = run_one(&check_cpu_governor, &f, &rep);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->observed, "powersave on 3 CPUs, performance on 1 CPU");
        assert_string_equal(r->summary, "3 of 4 CPUs are not on the performance governor: they clock down between "
                                        "bursts and add latency to GPU launches");
        assert_non_null(strstr(r->remedy, "cpupower frequency-set -g performance"));
        report_done(&rep);

        /* A garbled governor file is an error naming it, not a warning. */
        cpus[1].governor_err = -EINVAL;
        r = run_one(&check_cpu_governor, &f, &rep);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->summary, "cannot read /sys/devices/system/cpu/cpu1/cpufreq/scaling_governor: "
                                        "malformed value");
        report_done(&rep);
}

static void test_governor_vm(void **state) {
        (void)state;
        struct facts f;
        struct cpu_freq cpus[2];
        struct report rep;
        make_cpus(&f, cpus, 2, "", 0, 0);
        cpus[0].cpufreq_err = cpus[1].cpufreq_err = -ENOENT;
        f.cpu.n_cpufreq = 0;
        const struct result *r = run_one(&check_cpu_governor, &f, &rep);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "no cpufreq on any of the 2 CPUs (virtual machine, or frequency scaling left "
                                        "to the firmware)");
        report_done(&rep);
        r = run_one(&check_cpu_frequency, &f, &rep);
        assert_int_equal(r->status, STATUS_SKIP);
        report_done(&rep);
}

static void test_boost(void **state) {
        (void)state;
        struct facts f;
        struct cpu_freq cpus[1];
        struct report rep;
        make_cpus(&f, cpus, 1, "performance", 3000, 3500);
        const struct result *r = run_one(&check_cpu_boost, &f, &rep);
        assert_int_equal(r->status, STATUS_SKIP);
        report_done(&rep);

        f.cpu.no_turbo_err = 0;
        r = run_one(&check_cpu_boost, &f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "intel_pstate no_turbo=0");
        assert_string_equal(r->expected, "intel_pstate no_turbo=0");
        report_done(&rep);

        f.cpu.no_turbo = 1;
        r = run_one(&check_cpu_boost, &f, &rep);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->observed, "intel_pstate no_turbo=1");
        assert_non_null(strstr(r->remedy, "gpuvet tune apply --set cpu.boost=on"));
        assert_non_null(strstr(r->remedy, "/sys/devices/system/cpu/intel_pstate/no_turbo"));
        report_done(&rep);

        f.cpu.no_turbo_err = -ENOENT;
        f.cpu.boost_err = 0;
        f.cpu.boost = 0;
        r = run_one(&check_cpu_boost, &f, &rep);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->observed, "cpufreq boost=0");
        assert_string_equal(r->expected, "cpufreq boost=1");
        report_done(&rep);

        f.cpu.boost_err = -EINVAL;
        r = run_one(&check_cpu_boost, &f, &rep);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->summary, "cannot read /sys/devices/system/cpu/cpufreq/boost: malformed value");
        report_done(&rep);
}

static void set_state(struct cpu_idle_state *s, unsigned index, const char *name, unsigned latency, bool disabled) {
        memset(s, 0, sizeof(*s));
        s->index = index;
        snprintf(s->name, sizeof(s->name), "%s", name);
        s->latency_us = latency;
        s->disabled = disabled;
}

static void test_cstates(void **state) {
        (void)state;
        struct facts f;
        struct cpu_freq cpus[1];
        struct report rep;
        make_cpus(&f, cpus, 1, "performance", 3000, 3500);
        /* A Firecracker guest: a cpuidle driver "none" and no states. */
        f.cpu.idle_driver_err = 0;
        snprintf(f.cpu.idle_driver, sizeof(f.cpu.idle_driver), "none");
        const struct result *r = run_one(&check_cpu_cstates, &f, &rep);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "cpu0 has no cpuidle states (cpuidle driver: none): idle is left to the "
                                        "hypervisor or firmware");
        report_done(&rep);

        /* A Sapphire Rapids host as intel_idle lists it. */
        f.cpu.idle_err = f.cpu.idle_driver_err = 0;
        snprintf(f.cpu.idle_driver, sizeof(f.cpu.idle_driver), "intel_idle");
        set_state(&f.cpu.idle[0], 0, "POLL", 0, false);
        set_state(&f.cpu.idle[1], 1, "C1", 1, false);
        set_state(&f.cpu.idle[2], 2, "C1E", 2, false);
        set_state(&f.cpu.idle[3], 3, "C6", 170, false);
        f.cpu.n_idle = 4;
        char cmdline[] = "BOOT_IMAGE=/vmlinuz root=/dev/sda1 processor.max_cstate=1";
        f.host.cmdline = cmdline;
        r = run_one(&check_cpu_cstates, &f, &rep);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->observed, "enabled deep states: C6 (170 us)");
        assert_string_equal(r->expected, "no enabled idle state with exit latency > 20 us");
        assert_string_equal(evidence(r, "cmdline_limits"), "processor.max_cstate=1");
        assert_string_equal(evidence(r, "cpuidle_driver"), "intel_idle");
        assert_non_null(strstr(r->remedy, "cpupower idle-set -D 21"));
        assert_non_null(strstr(r->remedy, "intel_idle.max_cstate=1"));
        report_done(&rep);

        f.cpu.idle[3].disabled = true;
        r = run_one(&check_cpu_cstates, &f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "deepest enabled state: C1E, 2 us");
        report_done(&rep);

        f.cpu.idle[3].disabled = false;
        char poll[] = "root=/dev/sda1 idle=poll";
        f.host.cmdline = poll;
        r = run_one(&check_cpu_cstates, &f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "idle=poll on the kernel command line");
        report_done(&rep);

        f.host.cmdline = NULL;
        f.cpu.idle[2].latency_err = -EINVAL;
        r = run_one(&check_cpu_cstates, &f, &rep);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->summary, "cannot read /sys/devices/system/cpu/cpu0/cpuidle/state2/latency: "
                                        "malformed value");
        report_done(&rep);
}

static void test_smt(void **state) {
        (void)state;
        struct facts f;
        struct cpu_freq cpus[1];
        struct report rep;
        make_cpus(&f, cpus, 1, "performance", 3000, 3500);
        const struct result *r = run_one(&check_cpu_smt, &f, &rep);
        assert_int_equal(r->status, STATUS_SKIP);
        report_done(&rep);

        f.cpu.smt_control_err = f.cpu.smt_active_err = 0;
        snprintf(f.cpu.smt_control, sizeof(f.cpu.smt_control), "on");
        f.cpu.smt_active = 1;
        r = run_one(&check_cpu_smt, &f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "control=on, active=1");
        assert_string_equal(r->summary, "SMT (hyper-threading) is on; sibling threads active");
        report_done(&rep);

        snprintf(f.cpu.smt_control, sizeof(f.cpu.smt_control), "forceoff");
        f.cpu.smt_active = 0;
        r = run_one(&check_cpu_smt, &f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "control=forceoff, active=0");
        report_done(&rep);
}

static void test_frequency(void **state) {
        (void)state;
        struct facts f;
        struct cpu_freq cpus[3];
        struct report rep;
        make_cpus(&f, cpus, 3, "performance", 3400, 3500);
        cpus[0].cur_khz = 3000000;
        cpus[2].cur_khz = 3500000;
        const struct result *r = run_one(&check_cpu_frequency, &f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "current 3000/3400/3500 MHz (min/median/max) of max 3500 MHz");
        assert_string_equal(r->expected, "scaling_max_freq = cpuinfo_max_freq; CPUs on the performance governor at "
                                         ">= 50% of max");
        report_done(&rep);

        cpus[1].cur_khz = 800000;
        r = run_one(&check_cpu_frequency, &f, &rep);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->summary, "1 of 3 CPUs on the performance governor run below 50% of their maximum "
                                        "frequency");
        report_done(&rep);

        /* A low clock on powersave is that governor doing its job; a cap is not. */
        make_cpus(&f, cpus, 3, "powersave", 800, 3500);
        cpus[2].scaling_max_khz = 2000000;
        r = run_one(&check_cpu_frequency, &f, &rep);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->summary, "1 CPU is capped below the hardware maximum (scaling_max_freq as low as "
                                        "2000 MHz of 3500 MHz)");
        assert_non_null(strstr(r->remedy, "cpupower frequency-set -u 3500MHz"));
        report_done(&rep);

        make_cpus(&f, cpus, 3, "performance", 3400, 3500);
        cpus[0].cur_err = -EACCES;
        r = run_one(&check_cpu_frequency, &f, &rep);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->summary, "cannot read /sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq: "
                                        "Permission denied");
        report_done(&rep);
}

/* Gathering from a tiny tree. */

static void test_gather(void **state) {
        (void)state;
        char *tree = tree_new("cpu");
        tree_put(tree, "sys/devices/system/cpu/online", "0-1\n");
        tree_put(tree, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
        tree_put(tree, "sys/devices/system/cpu/cpu0/cpufreq/scaling_driver", "intel_pstate\n");
        tree_put(tree, "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "3400123\n");
        tree_put(tree, "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "3500000\n");
        tree_put(tree, "sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq", "3500000\n");
        tree_put(tree, "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "\n");
        tree_put(tree, "sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq", "<unknown>\n");
        tree_put(tree, "sys/devices/system/cpu/cpu1/cpufreq/cpuinfo_max_freq", "99999999999999\n");
        tree_put(tree, "sys/devices/system/cpu/intel_pstate/no_turbo", "0\n");
        tree_put(tree, "sys/devices/system/cpu/cpufreq/boost", "7\n");
        tree_put(tree, "sys/devices/system/cpu/cpuidle/current_driver", "intel_idle\n");
        tree_put(tree, "sys/devices/system/cpu/cpu0/cpuidle/state0/name", "POLL\n");
        tree_put(tree, "sys/devices/system/cpu/cpu0/cpuidle/state0/latency", "0\n");
        tree_put(tree, "sys/devices/system/cpu/cpu0/cpuidle/state0/disable", "0\n");
        tree_put(tree, "sys/devices/system/cpu/cpu0/cpuidle/state1/name", "C6\n");
        tree_put(tree, "sys/devices/system/cpu/cpu0/cpuidle/state1/latency", "133\n");
        tree_put(tree, "sys/devices/system/cpu/cpu0/cpuidle/state1/disable", "1\n");
        tree_put(tree, "sys/devices/system/cpu/smt/control", "on\n");
        tree_put(tree, "sys/devices/system/cpu/smt/active", "1\n");

        struct fsroot *fs;
        assert_int_equal(fsroot_open(tree, &fs), 0);
        struct facts f;
        memset(&f, 0, sizeof(f));
        assert_int_equal(cpu_gather(fs, &f), 0);
        const struct cpu_facts *c = &f.cpu;
        assert_int_equal(c->online_err, 0);
        assert_int_equal(c->n_cpus, 2);
        assert_int_equal(c->n_cpufreq, 2);
        assert_string_equal(c->scaling_driver, "intel_pstate");
        assert_string_equal(c->cpus[0].governor, "performance");
        assert_int_equal(c->cpus[0].cur_khz, 3400123);
        assert_int_equal(c->cpus[0].max_khz, 3500000);
        assert_int_equal(c->cpus[1].governor_err, -EINVAL);
        assert_int_equal(c->cpus[1].cur_err, -EINVAL);
        assert_int_equal(c->cpus[1].max_err, -ERANGE);
        assert_int_equal(c->cpus[1].scaling_max_err, -ENOENT);
        assert_int_equal(c->no_turbo_err, 0);
        assert_int_equal(c->no_turbo, 0);
        assert_int_equal(c->boost_err, -ERANGE);
        assert_string_equal(c->idle_driver, "intel_idle");
        assert_int_equal(c->n_idle, 2);
        assert_string_equal(c->idle[1].name, "C6");
        assert_int_equal(c->idle[1].latency_us, 133);
        assert_true(c->idle[1].disabled);
        assert_string_equal(c->smt_control, "on");
        assert_int_equal(c->smt_active, 1);
        cpu_facts_done(&f.cpu);

        /* Without an online list the cpuN directories stand in. */
        tree_unlink(tree, "sys/devices/system/cpu/online");
        assert_int_equal(cpu_gather(fs, &f), 0);
        assert_int_equal(f.cpu.online_err, -ENOENT);
        assert_int_equal(f.cpu.n_cpus, 2);
        assert_int_equal(f.cpu.cpus[1].cpu, 1);
        cpu_facts_done(&f.cpu);

        fsroot_free(fs);
        tree_remove(tree);
}

static void put_policy(const char *tree, const char *policy, const char *cpus, const char *governor,
                       const char *cur) {
        char path[128];
        const char *files[][2] = {{"affected_cpus", cpus},         {"scaling_governor", governor},
                                  {"scaling_cur_freq", cur},      {"cpuinfo_max_freq", "3500000\n"},
                                  {"scaling_max_freq", "3500000\n"}, {"scaling_driver", "acpi-cpufreq\n"}};
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                snprintf(path, sizeof(path), "sys/devices/system/cpu/cpufreq/%s/%s", policy, files[i][0]);
                tree_put(tree, path, files[i][1]);
        }
}

/* Policies read once each: shared ones give their values to every CPU of affected_cpus;
 * a CPU no policy claims is asked through its own cpufreq link (here: none, so no cpufreq). */
static void test_gather_shared_policies(void **state) {
        (void)state;
        char *tree = tree_new("cpu");
        tree_put(tree, "sys/devices/system/cpu/online", "0-8\n");
        put_policy(tree, "policy0", "0 1 2 3\n", "performance\n", "3400000\n");
        put_policy(tree, "policy4", "4 5 6 7\n", "powersave\n", "1200000\n");
        struct fsroot *fs;
        assert_int_equal(fsroot_open(tree, &fs), 0);
        struct facts f;
        memset(&f, 0, sizeof(f));
        assert_int_equal(cpu_gather(fs, &f), 0);
        const struct cpu_facts *c = &f.cpu;
        assert_int_equal(c->n_cpus, 9);
        assert_int_equal(c->n_cpufreq, 8);
        for (unsigned i = 0; i < 8; i++) {
                assert_int_equal(c->cpus[i].cpu, i);
                assert_int_equal(c->cpus[i].cpufreq_err, 0);
                assert_string_equal(c->cpus[i].governor, i < 4 ? "performance" : "powersave");
                assert_int_equal(c->cpus[i].cur_khz, i < 4 ? 3400000 : 1200000);
                assert_int_equal(c->cpus[i].max_khz, 3500000);
        }
        assert_int_equal(c->cpus[8].cpu, 8);
        assert_int_equal(c->cpus[8].cpufreq_err, -ENOENT);
        assert_string_equal(c->scaling_driver, "acpi-cpufreq");
        cpu_facts_done(&f.cpu);

        /* One policy per CPU: policyN is CPU N's. */
        tree_remove(tree);
        tree = tree_new("cpu");
        tree_put(tree, "sys/devices/system/cpu/online", "0-1\n");
        put_policy(tree, "policy0", "0\n", "performance\n", "3400000\n");
        put_policy(tree, "policy1", "1\n", "schedutil\n", "800000\n");
        fsroot_free(fs);
        assert_int_equal(fsroot_open(tree, &fs), 0);
        assert_int_equal(cpu_gather(fs, &f), 0);
        assert_int_equal(c->n_cpufreq, 2);
        assert_string_equal(c->cpus[1].governor, "schedutil");
        assert_int_equal(c->cpus[1].cur_khz, 800000);
        cpu_facts_done(&f.cpu);
        fsroot_free(fs);
        tree_remove(tree);
}

static void test_gather_empty(void **state) {
        (void)state;
        char *tree = tree_new("cpu");
        struct fsroot *fs;
        assert_int_equal(fsroot_open(tree, &fs), 0);
        struct facts f;
        memset(&f, 0, sizeof(f));
        assert_int_equal(cpu_gather(fs, &f), 0);
        assert_int_equal(f.cpu.n_cpus, 0);
        assert_int_equal(f.cpu.idle_err, -ENOENT);
        assert_int_equal(f.cpu.smt_control_err, -ENOENT);
        struct report rep;
        const struct result *r = run_one(&check_cpu_governor, &f, &rep);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->summary, "cannot read /sys/devices/system/cpu/online: No such file or directory");
        report_done(&rep);
        cpu_facts_done(&f.cpu);
        fsroot_free(fs);
        tree_remove(tree);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_governor),   cmocka_unit_test(test_governor_vm), cmocka_unit_test(test_boost),
                cmocka_unit_test(test_cstates),    cmocka_unit_test(test_smt),         cmocka_unit_test(test_frequency),
                cmocka_unit_test(test_gather),     cmocka_unit_test(test_gather_empty),
                cmocka_unit_test(test_gather_shared_policies),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

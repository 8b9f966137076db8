#include "sys/facts.h"
#include "core/fsroot.h"
#include "core/strparse.h"
#include "core/strv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* parse_cpulist's id limit: large enough for any shipping machine. */
#define CPU_ID_BITS 65536
#define FREQ_KHZ_LIMIT 100000000u

/* Read a one-word attribute; an empty file counts as malformed. */
static int read_word(struct fsroot *fs, char *buf, size_t size, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static int read_word(struct fsroot *fs, char *buf, size_t size, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = fsroot_vread_strf(fs, buf, size, fmt, ap);
        va_end(ap);
        return r < 0 ? r : buf[0] ? 0 : -EINVAL;
}

static int read_u64(struct fsroot *fs, uint64_t *ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int read_u64(struct fsroot *fs, uint64_t *ret, const char *fmt, ...) {
        char buf[64];
        va_list ap;
        va_start(ap, fmt);
        int r = fsroot_vread_strf(fs, buf, sizeof(buf), fmt, ap);
        va_end(ap);
        return r < 0 ? r : parse_u64(buf, ret);
}

static int read_01(struct fsroot *fs, const char *path, int *ret) {
        uint64_t v;
        int r = read_u64(fs, &v, "%s", path);
        if (r < 0)
                return r;
        if (v > 1)
                return -ERANGE;
        *ret = (int)v;
        return 0;
}

/* The online CPUs as a bitmap; when the online file is missing or garbled, the cpuN
 * directories stand in, so a damaged tree still gets its per-CPU facts. */
static int online_cpus(struct fsroot *fs, struct cpu_facts *c, uint64_t *mask) {
        char *text = NULL;
        unsigned n;
        c->online_err = fsroot_read_alloc(fs, "/sys/devices/system/cpu/online", &text, NULL);
        if (c->online_err == 0) {
                c->online_err = parse_cpulist(text, mask, CPU_ID_BITS, &n);
                if (c->online_err == 0 && n == 0)
                        c->online_err = -EINVAL;
        }
        free(text);
        if (c->online_err == 0)
                return 0;
        if (c->online_err == -ENOMEM)
                return -ENOMEM;

        memset(mask, 0, CPU_ID_BITS / 8);
        char **names = NULL;
        int r = fsroot_list(fs, "/sys/devices/system/cpu", &names);
        if (r == -ENOMEM)
                return r;
        for (size_t i = 0; names && names[i]; i++) {
                const char *s = names[i];
                if (strncmp(s, "cpu", 3) != 0 || s[3] < '0' || s[3] > '9')
                        continue;
                uint64_t id;
                if (parse_u64(s + 3, &id) == 0 && id < CPU_ID_BITS)
                        mask[id / 64] |= 1ull << (id % 64);
        }
        strv_free(names);
        return 0;
}

/* The four cpufreq values of one policy (or CPU) directory into q. */
static void read_freq(struct fsroot *fs, const char *dir, struct cpu_freq *q) {
        q->governor_err = read_word(fs, q->governor, sizeof(q->governor), "%s/scaling_governor", dir);
        q->cur_err = read_u64(fs, &q->cur_khz, "%s/scaling_cur_freq", dir);
        q->max_err = read_u64(fs, &q->max_khz, "%s/cpuinfo_max_freq", dir);
        q->scaling_max_err = read_u64(fs, &q->scaling_max_khz, "%s/scaling_max_freq", dir);
        /* Frequencies past 100 GHz are garbage, and so is a maximum of 0. */
        if (q->cur_err == 0 && q->cur_khz > FREQ_KHZ_LIMIT)
                q->cur_err = -ERANGE;
        if (q->max_err == 0 && (q->max_khz == 0 || q->max_khz > FREQ_KHZ_LIMIT))
                q->max_err = -ERANGE;
        if (q->scaling_max_err == 0 && q->scaling_max_khz > FREQ_KHZ_LIMIT)
                q->scaling_max_err = -ERANGE;
}

/* Through cpuN/cpufreq: the policy this CPU links to, whatever its name. */
static void gather_freq(struct fsroot *fs, struct cpu_freq *q) {
        char dir[64];
        snprintf(dir, sizeof(dir), "/sys/devices/system/cpu/cpu%u/cpufreq", q->cpu);
        q->cpufreq_err = 0;
        read_freq(fs, dir, q);
        /* Only a missing governor asks whether cpufreq is there at all. */
        if (q->governor_err == -ENOENT)
                q->cpufreq_err = fsroot_access(fs, dir);
}

static int find_cpu(const struct cpu_facts *c, unsigned id) {
        size_t lo = 0, hi = c->n_cpus;
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (c->cpus[mid].cpu == id)
                        return (int)mid;
                if (c->cpus[mid].cpu < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1;
}

/* N of a "policyN" directory name; false for any other name. */
static bool policy_id(const char *name, unsigned *ret) {
        uint64_t id;
        if (strncmp(name, "policy", 6) != 0 || parse_u64(name + 6, &id) < 0 || id >= CPU_ID_BITS)
                return false;
        *ret = (unsigned)id;
        return true;
}

/* cpufreq's policies, read once each (/sys/devices/system/cpu/cpufreq/policyN, named after
 * the first CPU they govern). When every online CPU N has a policyN, each CPU has its own
 * (a CPU is in exactly one policy, and a policy's directory is named after its first CPU):
 * policyN is CPU N's, with no lookup. Otherwise policies are shared (a cluster, a package)
 * and each one's affected_cpus names its CPUs, which get its values: one read per policy
 * where the per-CPU links would make one per CPU. False when the policies cannot be listed
 * (a kernel or capture without them): the caller reads through cpuN/cpufreq. */
static bool gather_policies(struct fsroot *fs, struct cpu_facts *c) {
        char **names = NULL;
        if (fsroot_list(fs, "/sys/devices/system/cpu/cpufreq", &names) < 0)
                return false;
        /* Directory names are unique, so counting the policies named after an online CPU
         * tells whether every online CPU has one. */
        size_t n_policies = 0, n_named_after_online = 0;
        unsigned id;
        for (size_t i = 0; names[i]; i++)
                if (policy_id(names[i], &id)) {
                        n_policies++;
                        n_named_after_online += find_cpu(c, id) >= 0;
                }
        if (n_policies == 0) {
                strv_free(names);
                return false;
        }
        bool own = n_named_after_online == c->n_cpus;
        for (size_t k = 0; k < c->n_cpus; k++)
                c->cpus[k].cpufreq_err = -ENOENT;
        for (size_t i = 0; names[i]; i++) {
                if (!policy_id(names[i], &id))
                        continue;
                char dir[320];
                snprintf(dir, sizeof(dir), "/sys/devices/system/cpu/cpufreq/%.255s", names[i]);
                /* cpufreq has one driver at a time: any policy's scaling_driver names it. */
                if (c->scaling_driver_err != 0)
                        c->scaling_driver_err = read_word(fs, c->scaling_driver, sizeof(c->scaling_driver),
                                                          "%s/scaling_driver", dir);
                if (own) {
                        int k = find_cpu(c, id);
                        if (k < 0)
                                continue; /* an offline CPU's policy */
                        c->cpus[k].cpufreq_err = 0;
                        read_freq(fs, dir, &c->cpus[k]);
                        continue;
                }
                char path[352], *text = NULL;
                snprintf(path, sizeof(path), "%s/affected_cpus", dir);
                if (fsroot_read_alloc(fs, path, &text, NULL) == 0) {
                        struct cpu_freq values = {0};
                        read_freq(fs, dir, &values);
                        /* "0 1 2 3": the online CPUs this policy governs. */
                        for (char *tok = strtok(text, " \t\n"); tok; tok = strtok(NULL, " \t\n")) {
                                uint64_t cpu;
                                int k = parse_u64(tok, &cpu) == 0 && cpu < CPU_ID_BITS ? find_cpu(c, (unsigned)cpu) : -1;
                                if (k < 0)
                                        continue;
                                values.cpu = (unsigned)cpu;
                                c->cpus[k] = values;
                        }
                }
                free(text);
        }
        strv_free(names);
        return true;
}

static void gather_idle(struct fsroot *fs, struct cpu_facts *c) {
        c->idle_driver_err = read_word(fs, c->idle_driver, sizeof(c->idle_driver), "%s",
                                       "/sys/devices/system/cpu/cpuidle/current_driver");
        c->idle_err = fsroot_access(fs, "/sys/devices/system/cpu/cpu0/cpuidle");
        if (c->idle_err < 0)
                return;
        /* The kernel numbers states contiguously from state0. */
        for (unsigned i = 0; i < CPU_IDLE_MAX_STATES; i++) {
                char dir[80];
                snprintf(dir, sizeof(dir), "/sys/devices/system/cpu/cpu0/cpuidle/state%u", i);
                if (fsroot_access(fs, dir) < 0)
                        break;
                struct cpu_idle_state *s = &c->idle[c->n_idle++];
                s->index = i;
                s->name_err = read_word(fs, s->name, sizeof(s->name), "%s/name", dir);
                s->latency_err = read_u64(fs, &s->latency_us, "%s/latency", dir);
                int disabled = 0;
                char path[96];
                snprintf(path, sizeof(path), "%s/disable", dir);
                s->disable_err = read_01(fs, path, &disabled);
                s->disabled = s->disable_err == 0 && disabled;
        }
}

int cpu_gather(struct fsroot *fs, struct facts *f) {
        struct cpu_facts *c = &f->cpu;
        memset(c, 0, sizeof(*c));

        uint64_t *mask = calloc(CPU_ID_BITS / 64, sizeof(uint64_t));
        if (!mask)
                return -ENOMEM;
        int r = online_cpus(fs, c, mask);
        if (r < 0)
                goto out;
        size_t n = 0;
        for (size_t w = 0; w < CPU_ID_BITS / 64; w++)
                n += (size_t)__builtin_popcountll(mask[w]);
        c->cpus = calloc(n ? n : 1, sizeof(*c->cpus));
        if (!c->cpus) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t id = bitmap_next_set(mask, CPU_ID_BITS, 0); id < CPU_ID_BITS;
             id = bitmap_next_set(mask, CPU_ID_BITS, id + 1))
                c->cpus[c->n_cpus++].cpu = (unsigned)id;
        c->scaling_driver_err = -ENOENT;
        bool by_policy = gather_policies(fs, c);
        /* A CPU no policy claimed (or every CPU, without a policy list) is asked through
         * its own cpufreq link, which also tells a CPU without cpufreq from a broken one. */
        for (size_t k = 0; k < c->n_cpus; k++)
                if (!by_policy || c->cpus[k].cpufreq_err == -ENOENT)
                        gather_freq(fs, &c->cpus[k]);
        for (size_t k = 0; k < c->n_cpus; k++)
                if (c->cpus[k].cpufreq_err == 0 && c->n_cpufreq++ == 0 && c->scaling_driver_err != 0)
                        c->scaling_driver_err = read_word(fs, c->scaling_driver, sizeof(c->scaling_driver),
                                                          "/sys/devices/system/cpu/cpu%u/cpufreq/scaling_driver",
                                                          c->cpus[k].cpu);
        if (c->n_cpufreq == 0)
                c->scaling_driver_err = -ENOENT;

        c->no_turbo_err = read_01(fs, "/sys/devices/system/cpu/intel_pstate/no_turbo", &c->no_turbo);
        c->boost_err = read_01(fs, "/sys/devices/system/cpu/cpufreq/boost", &c->boost);
        gather_idle(fs, c);
        c->smt_control_err = read_word(fs, c->smt_control, sizeof(c->smt_control), "%s",
                                       "/sys/devices/system/cpu/smt/control");
        c->smt_active_err = read_01(fs, "/sys/devices/system/cpu/smt/active", &c->smt_active);
        r = 0;
out:
        free(mask);
        return r;
}

void cpu_facts_done(struct cpu_facts *x) {
        free(x->cpus);
        memset(x, 0, sizeof(*x));
}

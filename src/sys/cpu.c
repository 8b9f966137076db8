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

static void gather_freq(struct fsroot *fs, struct cpu_freq *q) {
        const unsigned id = q->cpu;
        char dir[64];
        snprintf(dir, sizeof(dir), "/sys/devices/system/cpu/cpu%u/cpufreq", id);
        q->governor_err = read_word(fs, q->governor, sizeof(q->governor), "%s/scaling_governor", dir);
        /* Only a missing governor asks whether cpufreq is there at all: one lookup per CPU
         * saved on a 224-CPU host. */
        if (q->governor_err == -ENOENT && (q->cpufreq_err = fsroot_access(fs, dir)) < 0)
                return;
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
        for (unsigned id = 0; id < CPU_ID_BITS; id++) {
                if (!(mask[id / 64] & (1ull << (id % 64))))
                        continue;
                struct cpu_freq *q = &c->cpus[c->n_cpus++];
                q->cpu = id;
                gather_freq(fs, q);
                if (q->cpufreq_err == 0 && c->n_cpufreq++ == 0)
                        c->scaling_driver_err = read_word(fs, c->scaling_driver, sizeof(c->scaling_driver),
                                                          "/sys/devices/system/cpu/cpu%u/cpufreq/scaling_driver", id);
        }
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

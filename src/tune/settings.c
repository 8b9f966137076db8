#include "tune/settings.h"

#include "core/array.h"
#include "core/fsroot.h"
#include "core/grow.h"
#include "core/strbuf.h"
#include "core/strparse.h"
#include "core/strv.h"
#include "sys/cpu.h"
#include "tune/cmdline.h"
#include "tune/gpu.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CPU_DIR "/sys/devices/system/cpu"
#define THP_DIR "/sys/kernel/mm/transparent_hugepage"

/* A number as the kernel prints it: decimal digits, no sign, space, leading zero or 0x.
 * It is written to the file as given, so "0x10" or " 1" would be written verbatim (the
 * kernel then reads 16, or refuses), and "010" would never read back the same. */
static int parse_decimal(const char *value, uint64_t *ret) {
        size_t n = strspn(value, "0123456789");
        if (n == 0 || value[n] || n > 19 || (value[0] == '0' && n > 1))
                return -EINVAL;
        *ret = strtoull(value, NULL, 10);
        return 0;
}

/* ---- reading ---- */

int tune_read_value(struct fsroot *fs, const char *path, char *buf, size_t size) {
        char text[1024];
        int r = fsroot_read_str(fs, path, text, sizeof(text));
        if (r < 0)
                return r;
        const char *open = strchr(text, '['), *close = open ? strchr(open, ']') : NULL;
        const char *start = open && close ? open + 1 : text;
        size_t len = open && close ? (size_t)(close - open - 1) : strcspn(text, "\n");
        while (len > 0 && isspace((unsigned char)start[len - 1]))
                len--;
        if (len >= size)
                return -ENAMETOOLONG;
        memcpy(buf, start, len);
        buf[len] = '\0';
        return 0;
}

struct tune_gpus *tune_ctx_gpus(struct tune_ctx *c) {
        static const struct tune_gpu_options defaults;
        if (!c->gpus)
                c->gpus = tune_gpus_open(c->gpu_options ? c->gpu_options : &defaults, c->fs);
        return c->gpus;
}

/* "nvml:0000:18:00.0/power_limit" into its bus id and attribute; false when path is not one. */
static bool gpu_path(const char *path, char *bus, size_t size, enum tune_gpu_attr *attr) {
        if (strncmp(path, TUNE_GPU_PATH_PREFIX, strlen(TUNE_GPU_PATH_PREFIX)) != 0)
                return false;
        const char *start = path + strlen(TUNE_GPU_PATH_PREFIX), *slash = strrchr(start, '/');
        if (!slash || (size_t)(slash - start) >= size)
                return false;
        for (int a = 0; a < TUNE_GPU_ATTR_COUNT; a++)
                if (strcmp(slash + 1, tune_gpu_attr_name((enum tune_gpu_attr)a)) == 0) {
                        snprintf(bus, size, "%.*s", (int)(slash - start), start);
                        *attr = (enum tune_gpu_attr)a;
                        return true;
                }
        return false;
}

/* "FILE#SETTING" into the file and the setting's keys; false when path is not one. */
static bool cmdline_path(const char *path, char *file, size_t size, const char *const **keys) {
        const char *sep = strrchr(path, TUNE_CMDLINE_SEP);
        if (!sep || path[0] != '/' || (size_t)(sep - path) >= size || !(*keys = tune_cmdline_keys(sep + 1)))
                return false;
        snprintf(file, size, "%.*s", (int)(sep - path), path);
        return true;
}

/* Read a target into buf (value NULL) or set it to value, by the kind its path names. */
static int target_io(struct tune_ctx *c, const char *path, const char *value, char *buf, size_t size, char *err,
                     size_t errlen) {
        char bus[32], file[TUNE_PATH_MAX];
        enum tune_gpu_attr attr;
        const char *const *keys;
        int r;
        if (cmdline_path(path, file, sizeof(file), &keys)) {
                r = value ? tune_cmdline_write(c->fs, file, keys, value) : tune_cmdline_read(c->fs, file, keys, buf, size);
        } else if (gpu_path(path, bus, sizeof(bus), &attr)) {
                struct tune_gpus *g = tune_ctx_gpus(c);
                if (!g) {
                        snprintf(err, errlen, "out of memory");
                        return -ENOMEM;
                }
                /* NVML's own words, filled by the call. */
                return value ? tune_gpus_write(g, bus, attr, value, err, errlen)
                             : tune_gpus_read(g, bus, attr, buf, size, err, errlen);
        } else {
                r = value ? fsroot_write_attr(c->fs, path, value) : tune_read_value(c->fs, path, buf, size);
        }
        if (r < 0)
                snprintf(err, errlen, "%s", strerror(-r));
        return r;
}

int tune_ctx_read(struct tune_ctx *c, const char *path, char *buf, size_t size, char *err, size_t errlen) {
        char scratch[256];
        return err ? target_io(c, path, NULL, buf, size, err, errlen)
                   : target_io(c, path, NULL, buf, size, scratch, sizeof(scratch));
}

int tune_ctx_write(struct tune_ctx *c, const char *path, const char *value, char *err, size_t errlen) {
        return target_io(c, path, value, NULL, 0, err, errlen);
}

/* Is word one of the space-separated words of list (brackets ignored)? */
static bool offers(const char *list, const char *word) {
        size_t wlen = strlen(word);
        for (const char *p = list; *p;) {
                while (*p == ' ' || *p == '[' || *p == ']')
                        p++;
                const char *start = p;
                while (*p && *p != ' ' && *p != '[' && *p != ']')
                        p++;
                if ((size_t)(p - start) == wlen && strncmp(start, word, wlen) == 0)
                        return true;
        }
        return false;
}

/* ---- targets ---- */

struct tune_target *tune_targets_add(struct tune_targets *t, const struct tune_setting *s, const char *path) {
        if (array_grow((void **)&t->v, t->n, &t->cap, sizeof(*t->v), 16) < 0)
                return NULL;
        struct tune_target *x = &t->v[t->n++];
        memset(x, 0, sizeof(*x));
        x->setting = s->key;
        snprintf(x->path, sizeof(x->path), "%s", path);
        return x;
}

void tune_targets_free(struct tune_targets *t) {
        free(t->v);
        t->v = NULL;
        t->n = t->cap = 0;
}

/* One target for path: its current value, or why it cannot be set. */
static int add_file(struct fsroot *fs, const struct tune_setting *s, struct tune_targets *out, const char *path,
                    const char *wanted) {
        struct tune_target *x = tune_targets_add(out, s, path);
        if (!x)
                return -ENOMEM;
        snprintf(x->wanted, sizeof(x->wanted), "%s", wanted);
        int r = tune_read_value(fs, path, x->current, sizeof(x->current));
        if (r < 0) {
                /* Cut to fit when the path is very long (appendf: -O3 proves snprintf may truncate). */
                x->cannot[0] = '\0';
                strbuf_appendf(x->cannot, sizeof(x->cannot), "%s: %s", path, strerror(-r));
        }
        return 0;
}

/* A setting with no file here: one target that says so. */
int tune_targets_add_absent(const struct tune_setting *s, struct tune_targets *out, const char *path, const char *why) {
        struct tune_target *x = tune_targets_add(out, s, path);
        if (!x)
                return -ENOMEM;
        snprintf(x->cannot, sizeof(x->cannot), "%s", why);
        return 0;
}

/* The cpuN directories, in CPU order. */
static int list_cpus(struct fsroot *fs, char ***ret) {
        char **names;
        int r = fsroot_list(fs, CPU_DIR, &names);
        if (r < 0)
                return r == -ENOMEM ? r : (*ret = NULL, 0);
        size_t keep = 0;
        for (size_t i = 0; names[i]; i++) {
                unsigned n;
                char tail;
                if (sscanf(names[i], "cpu%u%c", &n, &tail) == 1)
                        names[keep++] = names[i];
                else
                        free(names[i]);
        }
        names[keep] = NULL;
        /* fsroot_list sorts by name: cpu10 before cpu2. Order by number for readable plans. */
        for (size_t i = 1; i < keep; i++)
                for (size_t k = i; k > 0 && strtoul(names[k - 1] + 3, NULL, 10) > strtoul(names[k] + 3, NULL, 10); k--) {
                        char *tmp = names[k];
                        names[k] = names[k - 1];
                        names[k - 1] = tmp;
                }
        *ret = names;
        return 0;
}

/* Judge one CPU's target after its file was read: may set wanted and, when the target
 * has no reason yet, why the value cannot be set. */
typedef void (*per_cpu_judge)(struct fsroot *fs, const char *cpu, const char *value, struct tune_target *x);

/* A per-CPU cpufreq file: one target per CPU that has it, wanting value unless judge says
 * otherwise; when no CPU has the file, one target saying absent_why. */
static int expand_per_cpu(struct fsroot *fs, const struct tune_setting *s, struct tune_targets *out,
                          const char *file, const char *value, per_cpu_judge judge, const char *absent_why) {
        char **cpus;
        int r = list_cpus(fs, &cpus);
        if (r < 0)
                return r;
        size_t before = out->n;
        for (size_t i = 0; cpus && cpus[i]; i++) {
                char path[TUNE_PATH_MAX];
                snprintf(path, sizeof(path), CPU_DIR "/%s/cpufreq/%s", cpus[i], file);
                if (fsroot_access(fs, path) < 0)
                        continue;
                if ((r = add_file(fs, s, out, path, value)) < 0)
                        break;
                judge(fs, cpus[i], value, &out->v[out->n - 1]);
        }
        strv_free(cpus);
        if (r < 0)
                return r;
        if (out->n == before) {
                char pattern[TUNE_PATH_MAX];
                snprintf(pattern, sizeof(pattern), CPU_DIR "/cpu*/cpufreq/%s", file);
                return tune_targets_add_absent(s, out, pattern, absent_why);
        }
        return 0;
}

/* The value must be one the CPU's "available" list offers. */
static void judge_offered(struct fsroot *fs, const char *cpu, const char *available, const char *value,
                          struct tune_target *x) {
        char path[TUNE_PATH_MAX], offer[1024];
        snprintf(path, sizeof(path), CPU_DIR "/%s/cpufreq/%s", cpu, available);
        if (!x->cannot[0] && fsroot_read_str(fs, path, offer, sizeof(offer)) == 0 && !offers(offer, value))
                snprintf(x->cannot, sizeof(x->cannot), "%s offers %.150s, not %s", available, offer, value);
}

static void judge_governor(struct fsroot *fs, const char *cpu, const char *value, struct tune_target *x) {
        judge_offered(fs, cpu, "scaling_available_governors", value, x);
}

static void judge_epp(struct fsroot *fs, const char *cpu, const char *value, struct tune_target *x) {
        judge_offered(fs, cpu, "energy_performance_available_preferences", value, x);
}

/* max: the CPU's cpuinfo_max_freq (no ramp-up after idle); min: its cpuinfo_min_freq; a
 * number: that many kHz, within the CPU's range. */
static void judge_min_freq(struct fsroot *fs, const char *cpu, const char *value, struct tune_target *x) {
        char lo_path[TUNE_PATH_MAX], hi_path[TUNE_PATH_MAX], lo[32], hi[32];
        snprintf(lo_path, sizeof(lo_path), CPU_DIR "/%s/cpufreq/cpuinfo_min_freq", cpu);
        snprintf(hi_path, sizeof(hi_path), CPU_DIR "/%s/cpufreq/cpuinfo_max_freq", cpu);
        uint64_t min_khz = 0, max_khz = 0, want = 0;
        bool range = fsroot_read_str(fs, lo_path, lo, sizeof(lo)) == 0 && parse_u64(lo, &min_khz) == 0 &&
                     fsroot_read_str(fs, hi_path, hi, sizeof(hi)) == 0 && parse_u64(hi, &max_khz) == 0;
        if (strcmp(value, "max") == 0)
                want = max_khz;
        else if (strcmp(value, "min") == 0)
                want = min_khz;
        else
                (void)parse_decimal(value, &want);
        snprintf(x->wanted, sizeof(x->wanted), "%" PRIu64, want);
        if (!x->cannot[0] && !range)
                snprintf(x->cannot, sizeof(x->cannot), "%s: no cpuinfo_min_freq/cpuinfo_max_freq to bound it", cpu);
        else if (!x->cannot[0] && (want < min_khz || want > max_khz))
                snprintf(x->cannot, sizeof(x->cannot), "%s runs %" PRIu64 "-%" PRIu64 " kHz, not %" PRIu64, cpu,
                         min_khz, max_khz, want);
}

#define NO_CPUFREQ "no cpufreq here (a VM, or frequency scaling left to the firmware)"

static int expand_governor(struct tune_ctx *c, const struct tune_setting *s, const char *value,
                           struct tune_targets *out) {
        return expand_per_cpu(c->fs, s, out, "scaling_governor", value, judge_governor, NO_CPUFREQ);
}

static int expand_epp(struct tune_ctx *c, const struct tune_setting *s, const char *value,
                           struct tune_targets *out) {
        return expand_per_cpu(c->fs, s, out, "energy_performance_preference", value, judge_epp,
                              "no energy_performance_preference (the cpufreq driver has no EPP)");
}

static int expand_min_freq(struct tune_ctx *c, const struct tune_setting *s, const char *value,
                           struct tune_targets *out) {
        return expand_per_cpu(c->fs, s, out, "scaling_min_freq", value, judge_min_freq, NO_CPUFREQ);
}

static int expand_boost(struct tune_ctx *c, const struct tune_setting *s, const char *value,
                           struct tune_targets *out) {
        struct fsroot *fs = c->fs;
        bool on = strcmp(value, "on") == 0;
        /* intel_pstate says it the other way round. */
        if (fsroot_access(fs, CPU_DIR "/intel_pstate/no_turbo") == 0)
                return add_file(fs, s, out, CPU_DIR "/intel_pstate/no_turbo", on ? "0" : "1");
        if (fsroot_access(fs, CPU_DIR "/cpufreq/boost") == 0)
                return add_file(fs, s, out, CPU_DIR "/cpufreq/boost", on ? "1" : "0");
        return tune_targets_add_absent(s, out, CPU_DIR "/cpufreq/boost",
                          "neither intel_pstate/no_turbo nor cpufreq/boost (a VM, or boost fixed by the firmware)");
}

/* shallow: disable every idle state deeper than CSTATE_DEEP_LATENCY_US; all: enable all. */
static int expand_cstates(struct tune_ctx *c, const struct tune_setting *s, const char *value,
                           struct tune_targets *out) {
        struct fsroot *fs = c->fs;
        bool shallow = strcmp(value, "shallow") == 0;
        char **cpus;
        int r = list_cpus(fs, &cpus);
        if (r < 0)
                return r;
        bool any_idle = false;
        for (size_t i = 0; r == 0 && cpus && cpus[i]; i++) {
                char dir[TUNE_PATH_MAX], **states;
                snprintf(dir, sizeof(dir), CPU_DIR "/%s/cpuidle", cpus[i]);
                if (fsroot_list(fs, dir, &states) < 0)
                        continue;
                for (size_t k = 0; states[k]; k++) {
                        char path[TUNE_PATH_MAX], latency[32];
                        uint64_t us;
                        if (strncmp(states[k], "state", 5) != 0)
                                continue;
                        any_idle = true;
                        if (snprintf(path, sizeof(path), "%s/%s/latency", dir, states[k]) >= (int)sizeof(path) ||
                            fsroot_read_str(fs, path, latency, sizeof(latency)) < 0 || parse_u64(latency, &us) < 0)
                                continue;
                        if (shallow && us <= CSTATE_DEEP_LATENCY_US)
                                continue;
                        if (snprintf(path, sizeof(path), "%s/%s/disable", dir, states[k]) >= (int)sizeof(path))
                                continue;
                        if ((r = add_file(fs, s, out, path, shallow ? "1" : "0")) < 0)
                                break;
                }
                strv_free(states);
        }
        strv_free(cpus);
        if (r < 0)
                return r;
        if (!any_idle)
                return tune_targets_add_absent(s, out, CPU_DIR "/cpu*/cpuidle", "no cpuidle states here (a VM, or idle=poll)");
        return 0;
}

/* A single choice-list file ("always [madvise] never"): the value must be offered. */
static int expand_choice(struct fsroot *fs, const struct tune_setting *s, struct tune_targets *out, const char *path,
                         const char *value, const char *absent_why) {
        char text[1024];
        int r = fsroot_read_str(fs, path, text, sizeof(text));
        if (r == -ENOENT)
                return tune_targets_add_absent(s, out, path, absent_why);
        if ((r = add_file(fs, s, out, path, value)) < 0)
                return r;
        struct tune_target *x = &out->v[out->n - 1];
        if (!x->cannot[0] && !offers(text, value))
                snprintf(x->cannot, sizeof(x->cannot), "%s offers %.150s, not %s", path, text, value);
        return 0;
}

static int expand_thp(struct tune_ctx *c, const struct tune_setting *s, const char *value,
                           struct tune_targets *out) {
        return expand_choice(c->fs, s, out, THP_DIR "/enabled", value, "the kernel has no transparent huge pages");
}

static int expand_thp_defrag(struct tune_ctx *c, const struct tune_setting *s, const char *value,
                           struct tune_targets *out) {
        return expand_choice(c->fs, s, out, THP_DIR "/defrag", value, "the kernel has no transparent huge pages");
}

/* A sysctl under /proc/sys: key "vm.swappiness" is /proc/sys/vm/swappiness. */
static int expand_sysctl(struct tune_ctx *c, const struct tune_setting *s, const char *value,
                           struct tune_targets *out) {
        struct fsroot *fs = c->fs;
        char path[TUNE_PATH_MAX];
        int n = snprintf(path, sizeof(path), "/proc/sys/%s", s->key);
        for (char *p = path + strlen("/proc/sys/"); n > 0 && *p; p++)
                if (*p == '.')
                        *p = '/';
        if (fsroot_access(fs, path) < 0)
                return tune_targets_add_absent(s, out, path, "the kernel has no such sysctl");
        return add_file(fs, s, out, path, value);
}

/* ---- values ---- */

static int one_of(const char *value, const char *const *choices) {
        for (size_t i = 0; choices[i]; i++)
                if (strcmp(value, choices[i]) == 0)
                        return 0;
        return -EINVAL;
}

static int in_range(const char *value, int min, int max) {
        uint64_t v;
        return parse_decimal(value, &v) == 0 && min >= 0 && v >= (uint64_t)min && v <= (uint64_t)max ? 0 : -EINVAL;
}

/* Governors and EPP names vary by driver; the kernel's own list decides, so accept a word. */
static int valid_word(const char *value) {
        if (!*value || strlen(value) >= TUNE_VALUE_MAX)
                return -EINVAL;
        for (const char *p = value; *p; p++)
                if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
                        return -EINVAL;
        return 0;
}
static int valid_min_freq(const char *v) {
        uint64_t khz;
        return strcmp(v, "max") == 0 || strcmp(v, "min") == 0 || (parse_decimal(v, &khz) == 0 && khz > 0) ? 0 : -EINVAL;
}
static int valid_on_off(const char *v) { return one_of(v, (const char *const[]){"on", "off", NULL}); }
static int valid_cstates(const char *v) { return one_of(v, (const char *const[]){"shallow", "all", NULL}); }
static int valid_thp(const char *v) { return one_of(v, (const char *const[]){"always", "madvise", "never", NULL}); }
static int valid_defrag(const char *v) {
        return one_of(v, (const char *const[]){"always", "defer", "defer+madvise", "madvise", "never", NULL});
}
static int valid_swappiness(const char *v) { return in_range(v, 0, 200); }
static int valid_percent(const char *v) { return in_range(v, 1, 100); }
static int valid_bool01(const char *v) { return in_range(v, 0, 1); }

/* ---- the table ---- */

static const struct tune_setting epp = {"cpu.epp", "cpu.governor", "energy/performance preference of every CPU",
                                        "a preference the driver offers (performance)", valid_word, expand_epp};
static const struct tune_setting governor = {"cpu.governor", "cpu.governor", "cpufreq governor of every CPU",
                                             "a governor the driver offers (performance)", valid_word, expand_governor};
static const struct tune_setting min_freq = {"cpu.min_freq", "cpu.frequency", "lowest frequency of every CPU",
                                             "max|min|kHz", valid_min_freq, expand_min_freq};
static const struct tune_setting boost = {"cpu.boost", "cpu.boost", "turbo / boost frequencies", "on|off", valid_on_off,
                                          expand_boost};
static const struct tune_setting cstates = {"cpu.cstates", "cpu.cstates",
                                            "idle states deeper than 20 us exit latency, on every CPU",
                                            "shallow|all", valid_cstates, expand_cstates};
static const struct tune_setting thp = {"memory.thp", "memory.thp", "transparent huge pages",
                                        "always|madvise|never", valid_thp, expand_thp};
static const struct tune_setting thp_defrag = {"memory.thp_defrag", "memory.thp", "transparent huge page defrag",
                                               "always|defer|defer+madvise|madvise|never", valid_defrag,
                                               expand_thp_defrag};
static const struct tune_setting swappiness = {"vm.swappiness", "memory.swappiness", "swap tendency", "0..200",
                                               valid_swappiness, expand_sysctl};
static const struct tune_setting dirty_ratio = {"vm.dirty_ratio", "memory.dirty_ratio",
                                                "dirty page cache that blocks writers (% of RAM)", "1..100",
                                                valid_percent, expand_sysctl};
static const struct tune_setting dirty_background = {"vm.dirty_background_ratio", "memory.dirty_ratio",
                                                     "dirty page cache that starts writeback (% of RAM)", "1..100",
                                                     valid_percent, expand_sysctl};
static const struct tune_setting numa_balancing = {"kernel.numa_balancing", "numa.balancing",
                                                   "automatic NUMA page migration", "0|1", valid_bool01,
                                                   expand_sysctl};

const struct tune_setting *const tune_settings[] = {
        &epp, &governor, &min_freq, &boost, &cstates, &thp, &thp_defrag, &swappiness, &dirty_ratio, &dirty_background,
        &numa_balancing, &tune_net_irq_affinity,
        /* Persistence first: NVML says a power limit lasts only while the driver stays loaded. */
        &tune_gpu_persistence, &tune_gpu_power_limit, &tune_gpu_app_clocks,
        &tune_boot_max_cstate, &tune_boot_iommu, &tune_boot_pcie_aspm, NULL,
};

const struct tune_setting *tune_setting_find(const char *key) {
        for (size_t i = 0; tune_settings[i]; i++)
                if (strcmp(tune_settings[i]->key, key) == 0)
                        return tune_settings[i];
        return NULL;
}

/* ---- a state entry against the settings ---- */

/* The characters a value of this setting's files may hold: what revert will write back. */
static bool value_shaped(const char *key, const char *v) {
        const char *allowed;
        bool empty_ok = false;
        if (strncmp(key, "vm.", 3) == 0 || strncmp(key, "kernel.", 7) == 0 || strcmp(key, "cpu.boost") == 0 ||
            strcmp(key, "cpu.cstates") == 0 || strcmp(key, "cpu.min_freq") == 0)
                allowed = "0123456789";
        else if (strcmp(key, "net.irq_affinity") == 0)
                allowed = "0123456789,-";
        else if (strncmp(key, "cpu.", 4) == 0 || strncmp(key, "memory.", 7) == 0)
                allowed = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+-";
        else {
                /* A GPU's value (NVML parses it) or kernel parameters in a boot loader file,
                 * which may have had none: printable, and nothing that quoting in
                 * /etc/default/grub would have to escape. */
                empty_ok = true;
                for (const char *p = v; *p; p++)
                        if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f || strchr("\"\\`$'", *p))
                                return false;
                return true;
        }
        return (*v || empty_ok) && strspn(v, allowed) == strlen(v);
}

/* The values whose expansion covers every file a setting may have written (cpu.cstates
 * "all" lists every idle state, "shallow" only the deep ones). */
static const char *const probe_values[] = {"all", "local", "on", "max", "performance", "never", "1", "pt", "off", NULL};

int tune_entry_check(struct tune_ctx *c, const char *setting, const char *path, const char *before, const char *after,
                     char *why, size_t whylen) {
        const struct tune_setting *s = tune_setting_find(setting);
        if (!s) {
                snprintf(why, whylen, "no setting \"%.64s\"", setting);
                return -EINVAL;
        }
        if (!value_shaped(setting, before) || !value_shaped(setting, after)) {
                snprintf(why, whylen, "%.64s: before \"%.40s\" or after \"%.40s\" is not a value of %s's files", setting,
                         before, after, setting);
                return -EINVAL;
        }
        char bus[32];
        enum tune_gpu_attr attr;
        if (gpu_path(path, bus, sizeof(bus), &attr)) {
                /* NVML's own call writes it: the attribute must be the setting's. */
                static const struct {
                        const struct tune_setting *s;
                        enum tune_gpu_attr attr;
                } gpu[] = {{&tune_gpu_persistence, TUNE_GPU_PERSISTENCE},
                           {&tune_gpu_power_limit, TUNE_GPU_POWER_LIMIT},
                           {&tune_gpu_app_clocks, TUNE_GPU_APP_CLOCKS}};
                for (size_t i = 0; i < ARRAY_COUNT(gpu); i++)
                        if (gpu[i].s == s && gpu[i].attr == attr)
                                return 0;
                snprintf(why, whylen, "%.64s does not set %.200s", setting, path);
                return -EINVAL;
        }
        /* A file: it must be one the setting itself would write under this root. */
        for (size_t p = 0; probe_values[p]; p++) {
                if (s->valid(probe_values[p]) < 0)
                        continue;
                struct tune_targets t = {0};
                int r = s->expand(c, s, probe_values[p], &t);
                bool found = false;
                /* A target with no current value is one that is absent here (its path a
                 * pattern or a folder), not a file to write. */
                for (size_t i = 0; r == 0 && i < t.n && !found; i++)
                        found = strcmp(t.v[i].path, path) == 0 && (t.v[i].current[0] || !t.v[i].cannot[0]);
                tune_targets_free(&t);
                if (r < 0) {
                        snprintf(why, whylen, "%s", strerror(-r));
                        return r;
                }
                if (found)
                        return 0;
        }
        snprintf(why, whylen, "%.200s is not a file %.64s writes under this root", path, setting);
        return -EINVAL;
}

/* The settings gpuvet tune knows: for each, the files that hold it on this machine and
 * the value each file must take for a profile's value (docs/tune.md lists them).
 *
 * A setting expands to targets, one per file (one per CPU for the governor) or per GPU. A
 * target is named by a path: a file under the root ("/proc/sys/vm/swappiness"), or
 * "nvml:BUS/ATTRIBUTE" for a GPU setting ("nvml:0000:18:00.0/power_limit", src/tune/gpu.h),
 * or "FILE#SETTING" for a kernel command-line setting in a boot loader file (cmdline.h).
 * A target whose file or GPU is absent, or that does not offer the value, carries the
 * reason it cannot be set here instead of a write; tune reports it and goes on. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct fsroot;
struct tune_gpus;
struct tune_gpu_options;

/* What settings act on: the tree under the root, and the GPUs, opened through NVML the
 * first time a GPU setting or target needs them. */
struct tune_ctx {
        struct fsroot *fs;
        const struct tune_gpu_options *gpu_options;
        struct tune_gpus *gpus; /* NULL until then */
};

/* The GPUs (opening them on first use); NULL only when memory ran out. */
struct tune_gpus *tune_ctx_gpus(struct tune_ctx *c);

/* The prefix of GPU target paths. */
#define TUNE_GPU_PATH_PREFIX "nvml:"

/* Read a target's value as tune compares it: for a file, a choice list gives its
 * bracketed word, anything else its first line. 0 or a negative errno; err (may be NULL)
 * says why in words. */
int tune_ctx_read(struct tune_ctx *c, const char *path, char *buf, size_t size, char *err, size_t errlen);
/* Set a target to value. 0 or a negative errno (-ETIMEDOUT: a GPU call hung), err says why. */
int tune_ctx_write(struct tune_ctx *c, const char *path, const char *value, char *err, size_t errlen);

#define TUNE_VALUE_MAX 128
#define TUNE_PATH_MAX 256

struct tune_target {
        const char *setting; /* key of the tune_setting */
        char path[TUNE_PATH_MAX];
        char current[TUNE_VALUE_MAX]; /* what the file holds: the chosen word of a choice list */
        char wanted[TUNE_VALUE_MAX];  /* what to write */
        char cannot[256];             /* non-empty: why it cannot be set here */
        bool at_boot;                 /* a kernel command-line value: effective at the next boot */
        bool in_effect;               /* at_boot: the running kernel has it already */
};

struct tune_targets {
        struct tune_target *v;
        size_t n, cap;
};

struct tune_setting {
        const char *key;       /* "cpu.governor" */
        const char *check_id;  /* the check that wants it: "cpu.governor" */
        const char *summary;   /* one line for plan and docs */
        const char *values;    /* the accepted values, for messages: "on|off", "0..200" */
        /* 0 when value is acceptable, else -EINVAL. */
        int (*valid)(const char *value);
        /* Append the targets for value; negative errno only for running out of memory. */
        int (*expand)(struct tune_ctx *c, const struct tune_setting *s, const char *value, struct tune_targets *out);
};

/* Every setting, in the order they are applied (EPP before the governor: intel_pstate
 * refuses EPP changes once the governor is performance). NULL-terminated. */
extern const struct tune_setting *const tune_settings[];

const struct tune_setting *tune_setting_find(const char *key);

/* Read a sysfs/procfs value as tune compares it: a choice list gives its bracketed word,
 * anything else its first line. 0 or a negative errno. */
int tune_read_value(struct fsroot *fs, const char *path, char *buf, size_t size);

void tune_targets_free(struct tune_targets *t);

/* For the settings' own files (settings.c, gpu_settings.c). */
struct tune_target *tune_targets_add(struct tune_targets *t, const struct tune_setting *s, const char *path);
int tune_targets_add_absent(const struct tune_setting *s, struct tune_targets *out, const char *path, const char *why);
extern const struct tune_setting tune_gpu_persistence, tune_gpu_power_limit, tune_gpu_app_clocks;
extern const struct tune_setting tune_boot_max_cstate, tune_boot_iommu, tune_boot_pcie_aspm;
extern const struct tune_setting tune_net_irq_affinity;
/* A kernel command-line setting's parameter keys (cmdline_settings.c), NULL for others. */
const char *const *tune_cmdline_keys(const char *setting);

/* A state file's entry against the settings: setting known, path one of the files (or the
 * GPU attribute) that setting writes under c's root, before and after shaped as its values.
 * 0, -EINVAL with why, or -ENOMEM. Revert writes nothing else back (docs/tune.md).
 * *memo (NULL at first, tune_entry_memo_free after the last entry) keeps each setting's
 * files as expanded for the first entry, so that a state of one entry per CPU does not
 * expand the setting again for each. */
struct tune_entry_memo;
int tune_entry_check(struct tune_ctx *c, struct tune_entry_memo **memo, const char *setting, const char *path,
                     const char *before, const char *after, char *why, size_t whylen);
void tune_entry_memo_free(struct tune_entry_memo *memo);

/* The settings gpuvet tune knows: for each, the files that hold it on this machine and
 * the value each file must take for a profile's value (docs/tune.md lists them).
 *
 * A setting expands to targets, one per file (one per CPU for the governor). A target
 * whose file is absent, or whose kernel does not offer the value, carries the reason it
 * cannot be set here instead of a write; tune reports it and goes on. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct fsroot;

#define TUNE_VALUE_MAX 128
#define TUNE_PATH_MAX 256

struct tune_target {
        const char *setting; /* key of the tune_setting */
        char path[TUNE_PATH_MAX];
        char current[TUNE_VALUE_MAX]; /* what the file holds: the chosen word of a choice list */
        char wanted[TUNE_VALUE_MAX];  /* what to write */
        char cannot[256];             /* non-empty: why it cannot be set here */
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
        int (*expand)(struct fsroot *fs, const struct tune_setting *s, const char *value, struct tune_targets *out);
};

/* Every setting, in the order they are applied (EPP before the governor: intel_pstate
 * refuses EPP changes once the governor is performance). NULL-terminated. */
extern const struct tune_setting *const tune_settings[];

const struct tune_setting *tune_setting_find(const char *key);

/* Read a sysfs/procfs value as tune compares it: a choice list gives its bracketed word,
 * anything else its first line. 0 or a negative errno. */
int tune_read_value(struct fsroot *fs, const char *path, char *buf, size_t size);

void tune_targets_free(struct tune_targets *t);

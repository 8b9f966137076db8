/* gpuvet tune: from a profile (data/tune-profiles.json) and --set overrides to a plan
 * (current -> wanted per file), and the state file that makes apply reversible.
 *
 * The state file (<root>/var/lib/gpuvet/tune-state.json, schema gpuvet.tune-state/1) is
 * written, atomically, with every value apply may change before apply changes any: a run
 * killed at any point leaves a file that revert restores from and that a second apply
 * completes (it keeps the first snapshot's values). docs/tune.md describes it. */
#pragma once

#include "tune/settings.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct fsroot;

#define TUNE_MAX_WANTED 32

struct policy;

/* Where a wanted value comes from; a later one overrides an earlier one. */
enum tune_source { TUNE_FROM_PROFILE, TUNE_FROM_POLICY, TUNE_FROM_SET };

/* What a request is built from. */
struct tune_inputs {
        const char *profile;      /* a name in the profiles file, NULL for none */
        const char *profile_from; /* where the name was given, for messages: "--profile" */
        const struct policy *site; /* its tune.settings override the profile; NULL for none */
        char *const *sets;        /* "key=value", overriding both */
        size_t n_sets;
};

struct tune_request {
        const char *profile; /* name in the profiles file */
        struct {
                const struct tune_setting *setting;
                char value[TUNE_VALUE_MAX];
                enum tune_source source;
                unsigned line; /* TUNE_FROM_POLICY: the policy line that sets it */
        } wanted[TUNE_MAX_WANTED];
        size_t n_wanted;
};

/* Load the profiles (dir/tune-profiles.json, or the built-in table when dir is NULL), pick
 * the profile, then apply the site's and --set's overrides. 0, or -EINVAL/-ENOENT with err
 * naming the input. */
int tune_request_build(const char *data_dir, const struct tune_inputs *in, struct tune_request *req, char *err,
                       size_t errlen);

/* The same from the text of a profiles file (source names it in messages). */
int tune_request_from_text(const char *text, size_t len, const char *source, const struct tune_inputs *in,
                           struct tune_request *req, char *err, size_t errlen);

/* The profile names and descriptions, as a JSON object (caller decrefs); NULL on error. */
json_t *tune_profiles_list(const char *data_dir, char *err, size_t errlen);

/* Expand every wanted setting into targets, in tune_settings order. -ENOMEM only. */
int tune_plan(struct tune_ctx *c, const struct tune_request *req, struct tune_targets *out);

/* What a target needs: a write, nothing, or nothing possible. */
enum tune_need { TUNE_CHANGE, TUNE_OK, TUNE_CANNOT };
enum tune_need tune_target_need(const struct tune_target *t);

/* ---- the state file ---- */

struct tune_entry {
        char setting[64];
        char path[TUNE_PATH_MAX];
        char before[TUNE_VALUE_MAX];
        char after[TUNE_VALUE_MAX];
        char result[32]; /* "pending", "applied", "refused", "did not take" */
        char detail[320];
};

struct tune_state {
        char profile[64];
        char boot_id[64];
        char status[16]; /* "applying" until every write is done and checked, then "applied" */
        char started[32];
        struct tune_entry *entries;
        size_t n, cap;
};

/* The state file's path under fs (or override when not NULL), its directory resolved inside
 * the root. 0 or a negative errno. */
int tune_state_path(struct fsroot *fs, const char *override, char *buf, size_t size);

/* 0 loaded; -ENOENT none; -EINVAL malformed (err says where); other negative errno. */
int tune_state_load(const char *path, struct tune_state *st, char *err, size_t errlen);
/* The same from text (source names it in messages): 0 or -EINVAL/-ENOMEM. */
int tune_state_parse(const char *text, size_t len, const char *source, struct tune_state *st, char *err,
                     size_t errlen);
int tune_state_save(const char *path, const struct tune_state *st);
void tune_state_free(struct tune_state *st);
struct tune_entry *tune_state_find(struct tune_state *st, const char *path);
struct tune_entry *tune_state_add(struct tune_state *st);

/* This boot's id (/proc/sys/kernel/random/boot_id under fs), "" when unreadable. */
void tune_boot_id(struct fsroot *fs, char *buf, size_t size);

/* mkdir -p of path's directory. 0 or a negative errno. */
int tune_mkdirs_for(const char *path);

/* Take the lock beside the state file, waiting up to wait_ms: >= 0 the lock fd (close it
 * to release), -EWOULDBLOCK when another run holds it (holder's pid in *holder). */
int tune_lock(const char *state_path, unsigned wait_ms, long *holder);
/* What tune_lock returns for a lock path that is a symlink, FIFO, device or directory. */
#define TUNE_LOCK_NOT_REGULAR (-0x10002)

/* The outlier rules of `gpuvet fleet` (data/fleet_rules.json, or --rules FILE; schema
 * data/schema/fleet_rules.schema.json; docs/fleet.md, "Rules"). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Which way a metric is better; declared with the rules that set it, and used by
 * fleet/fleet.h's aggregation. */
enum fleet_direction {
        FLEET_HIGHER_BETTER,
        FLEET_LOWER_BETTER,
        FLEET_DIRECTION_NONE, /* neither: only value thresholds apply */
};

/* One rule: the defaults, or an entry of "metrics" (fields it leaves out come from the
 * defaults once resolved). */
struct fleet_rule {
        const char *metric; /* fnmatch pattern over "<bench>/<measurement>" */
        const char *model;  /* fnmatch pattern over the GPU model; NULL: any */
        bool has_direction;
        enum fleet_direction direction;
        double warn_pct;      /* worse than the median by more than this share: warn (0: never) */
        double fail_pct;      /* ... : fail (0: never) */
        double mads;          /* and by more than this many scaled MADs (0: no such condition) */
        unsigned min_samples; /* fewer figures of the metric and model: no variance rule */
        bool has_min, has_max;
        double min, max; /* absolute bounds: a figure outside fails */
};

struct fleet_unit_direction {
        const char *unit;
        enum fleet_direction direction;
};

struct fleet_rules {
        struct fleet_rule defaults;
        struct fleet_rule *rules;
        size_t n_rules;
        struct fleet_unit_direction *units;
        size_t n_units;
        char source[512]; /* "built-in fleet_rules.json", DIR/fleet_rules.json or the --rules path */
        void *json;       /* keeps the strings alive */
};

/* Load path when given (--rules), else DIR/fleet_rules.json when dir has one, else the
 * built-in table. -EINVAL with a message naming the file, and the line or the entry, in
 * err for a missing or malformed one; -ENOMEM. */
int fleet_rules_load(const char *dir, const char *path, struct fleet_rules *ret, char *err, size_t errsize);
/* The same from len bytes at buf; messages name source. */
int fleet_rules_load_buffer(const char *buf, size_t len, const char *source, struct fleet_rules *ret, char *err,
                            size_t errsize);
void fleet_rules_done(struct fleet_rules *rules);

/* The rule for metric on model: the first entry whose patterns match, its missing fields
 * from the defaults (the defaults alone when none matches); *ret_pattern receives the
 * entry's metric pattern ("*" for the defaults). */
void fleet_rules_resolve(const struct fleet_rules *rules, const char *metric, const char *model,
                         struct fleet_rule *ret, const char **ret_pattern);

/* The direction the rules give unit, FLEET_DIRECTION_NONE when they give none. */
enum fleet_direction fleet_rules_unit_direction(const struct fleet_rules *rules, const char *unit);

#include "data/fleet_rules.h"

#include <errno.h>
#include <fnmatch.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/embedded.h"
#include "data/json_doc.h"

#define FLEET_RULES_SCHEMA "gpuvet.fleet-rules/1"

static int parse_direction(json_t *v, enum fleet_direction *ret) {
        const char *s = json_string_value(v);
        if (!s)
                return -EINVAL;
        if (strcmp(s, "higher") == 0)
                *ret = FLEET_HIGHER_BETTER;
        else if (strcmp(s, "lower") == 0)
                *ret = FLEET_LOWER_BETTER;
        else if (strcmp(s, "none") == 0)
                *ret = FLEET_DIRECTION_NONE;
        else
                return -EINVAL;
        return 0;
}

/* A share in percent: a number from 0 to 1000; unset stays NAN. */
static int parse_number(json_t *o, const char *key, double lo, double hi, double *ret, const char *where, char *why,
                        size_t whysize) {
        json_t *v = json_object_get(o, key);
        if (!v)
                return 0;
        if (!json_is_number(v) || json_number_value(v) < lo || json_number_value(v) > hi) {
                snprintf(why, whysize, "%s: \"%s\" must be a number from %g to %g", where, key, lo, hi);
                return -EINVAL;
        }
        *ret = json_number_value(v);
        return 0;
}

static const char *const rule_keys[] = {"metric", "model", "direction", "warn_pct", "fail_pct", "mads",
                                        "min_samples", "min", "max", "note", NULL};

/* One rule object (entry is false for the defaults, which take no patterns or bounds). */
static int parse_rule(json_t *o, bool entry, const char *where, struct fleet_rule *r, char *why, size_t whysize) {
        if (!json_is_object(o)) {
                snprintf(why, whysize, "%s must be an object", where);
                return -EINVAL;
        }
        const char *key;
        json_t *v;
        json_object_foreach(o, key, v) {
                size_t k = 0;
                while (rule_keys[k] && strcmp(rule_keys[k], key))
                        k++;
                bool entry_only = rule_keys[k] && (!strcmp(key, "metric") || !strcmp(key, "model") ||
                                                   !strcmp(key, "min") || !strcmp(key, "max"));
                if (!rule_keys[k] || (entry_only && !entry)) {
                        snprintf(why, whysize, "%s: unknown key \"%.64s\"", where, key);
                        return -EINVAL;
                }
        }
        *r = (struct fleet_rule){.warn_pct = NAN, .fail_pct = NAN, .mads = NAN};
        if (entry) {
                r->metric = json_string_value(json_object_get(o, "metric"));
                if (!r->metric || !r->metric[0]) {
                        snprintf(why, whysize, "%s needs a \"metric\" pattern (a string)", where);
                        return -EINVAL;
                }
                json_t *model = json_object_get(o, "model");
                if (model && !json_is_string(model)) {
                        snprintf(why, whysize, "%s: \"model\" must be a string pattern", where);
                        return -EINVAL;
                }
                r->model = json_string_value(model);
        }
        json_t *dir = json_object_get(o, "direction");
        if (dir) {
                if (parse_direction(dir, &r->direction) < 0) {
                        snprintf(why, whysize, "%s: \"direction\" must be \"higher\", \"lower\" or \"none\"", where);
                        return -EINVAL;
                }
                r->has_direction = true;
        }
        double min_samples = NAN;
        if (parse_number(o, "warn_pct", 0, 1000, &r->warn_pct, where, why, whysize) < 0 ||
            parse_number(o, "fail_pct", 0, 1000, &r->fail_pct, where, why, whysize) < 0 ||
            parse_number(o, "mads", 0, 1000, &r->mads, where, why, whysize) < 0 ||
            parse_number(o, "min_samples", 1, 1e6, &min_samples, where, why, whysize) < 0 ||
            parse_number(o, "min", -1e300, 1e300, &r->min, where, why, whysize) < 0 ||
            parse_number(o, "max", -1e300, 1e300, &r->max, where, why, whysize) < 0)
                return -EINVAL;
        if (!isnan(min_samples)) {
                if (min_samples != floor(min_samples)) {
                        snprintf(why, whysize, "%s: \"min_samples\" must be a whole number", where);
                        return -EINVAL;
                }
                r->min_samples = (unsigned)min_samples;
        }
        r->has_min = json_object_get(o, "min") != NULL;
        r->has_max = json_object_get(o, "max") != NULL;
        if (!isnan(r->warn_pct) && !isnan(r->fail_pct) && r->fail_pct > 0 && r->warn_pct > r->fail_pct) {
                snprintf(why, whysize, "%s: \"warn_pct\" (%g) is above \"fail_pct\" (%g)", where, r->warn_pct,
                         r->fail_pct);
                return -EINVAL;
        }
        if (r->has_min && r->has_max && r->min > r->max) {
                snprintf(why, whysize, "%s: \"min\" is above \"max\"", where);
                return -EINVAL;
        }
        return 0;
}

static int parse_units(json_t *units, struct fleet_rules *rules, char *why, size_t whysize) {
        if (!units)
                return 0;
        if (!json_is_object(units)) {
                snprintf(why, whysize, "\"direction_by_unit\" must be an object of unit: \"higher\"|\"lower\"|\"none\"");
                return -EINVAL;
        }
        rules->units = calloc(json_object_size(units) + 1, sizeof(*rules->units));
        if (!rules->units)
                return -ENOMEM;
        const char *unit;
        json_t *v;
        json_object_foreach(units, unit, v) {
                struct fleet_unit_direction *u = &rules->units[rules->n_units];
                if (parse_direction(v, &u->direction) < 0) {
                        snprintf(why, whysize, "direction_by_unit \"%.32s\": must be \"higher\", \"lower\" or \"none\"",
                                 unit);
                        return -EINVAL;
                }
                u->unit = unit;
                rules->n_units++;
        }
        return 0;
}

static int parse(json_t *root, struct fleet_rules *rules, char *why, size_t whysize) {
        json_t *schema = json_object_get(root, "schema"), *list = json_object_get(root, "metrics");
        if (!json_is_object(root) || !json_is_string(schema) || strcmp(json_string_value(schema), FLEET_RULES_SCHEMA)) {
                snprintf(why, whysize, "\"schema\" must be \"%s\"", FLEET_RULES_SCHEMA);
                return -EINVAL;
        }
        const char *key;
        json_t *v;
        json_object_foreach(root, key, v) {
                if (strcmp(key, "schema") && strcmp(key, "about") && strcmp(key, "defaults") &&
                    strcmp(key, "direction_by_unit") && strcmp(key, "metrics")) {
                        snprintf(why, whysize, "unknown key \"%.64s\"", key);
                        return -EINVAL;
                }
        }
        int r = parse_rule(json_object_get(root, "defaults"), false, "\"defaults\"", &rules->defaults, why, whysize);
        if (r < 0)
                return r;
        struct fleet_rule *d = &rules->defaults;
        if (isnan(d->warn_pct) || isnan(d->fail_pct) || isnan(d->mads) || d->min_samples == 0) {
                snprintf(why, whysize, "\"defaults\" must give warn_pct, fail_pct, mads and min_samples");
                return -EINVAL;
        }
        d->metric = "*";
        if (!d->has_direction)
                d->direction = FLEET_DIRECTION_NONE;
        if ((r = parse_units(json_object_get(root, "direction_by_unit"), rules, why, whysize)) < 0)
                return r;
        if (list && !json_is_array(list)) {
                snprintf(why, whysize, "\"metrics\" must be a list");
                return -EINVAL;
        }
        rules->rules = calloc(json_array_size(list) + 1, sizeof(*rules->rules));
        if (!rules->rules)
                return -ENOMEM;
        size_t i;
        json_array_foreach(list, i, v) {
                char where[64];
                snprintf(where, sizeof(where), "metrics[%zu]", i);
                if ((r = parse_rule(v, true, where, &rules->rules[i], why, whysize)) < 0)
                        return r;
                rules->n_rules++;
        }
        return 0;
}

static int take(json_t *root, struct fleet_rules *ret, char *err, size_t errsize) {
        if (!root)
                return -EINVAL;
        ret->json = root;
        char why[256] = "";
        int r = parse(root, ret, why, sizeof(why));
        if (r < 0) {
                snprintf(err, errsize, "%s: %s", ret->source, r == -ENOMEM ? "out of memory" : why);
                char source[sizeof(ret->source)];
                memcpy(source, ret->source, sizeof(source));
                fleet_rules_done(ret);
                memcpy(ret->source, source, sizeof(source));
        }
        return r;
}

int fleet_rules_load(const char *dir, const char *path, struct fleet_rules *ret, char *err, size_t errsize) {
        memset(ret, 0, sizeof(*ret));
        if (path) {
                snprintf(ret->source, sizeof(ret->source), "%s", path);
                json_error_t jerr;
                json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
                if (!root) {
                        if (jerr.line <= 0)
                                snprintf(err, errsize, "%s: %s", path, jerr.text);
                        else
                                snprintf(err, errsize, "%s: line %d: %s", path, jerr.line, jerr.text);
                        return -EINVAL;
                }
                return take(root, ret, err, errsize);
        }
        json_t *root = json_doc_open(dir, "fleet_rules.json", (const char *)embedded_fleet_rules_json,
                                     embedded_fleet_rules_json_len, ret->source, sizeof(ret->source), err, errsize);
        return take(root, ret, err, errsize);
}

int fleet_rules_load_buffer(const char *buf, size_t len, const char *source, struct fleet_rules *ret, char *err,
                            size_t errsize) {
        memset(ret, 0, sizeof(*ret));
        snprintf(ret->source, sizeof(ret->source), "%s", source);
        return take(json_doc_parse(buf, len, source, err, errsize), ret, err, errsize);
}

void fleet_rules_done(struct fleet_rules *rules) {
        free(rules->rules);
        free(rules->units);
        json_decref(rules->json);
        memset(rules, 0, sizeof(*rules));
}

void fleet_rules_resolve(const struct fleet_rules *rules, const char *metric, const char *model,
                         struct fleet_rule *ret, const char **ret_pattern) {
        *ret = rules->defaults;
        *ret_pattern = "*";
        for (size_t i = 0; i < rules->n_rules; i++) {
                const struct fleet_rule *e = &rules->rules[i];
                if (fnmatch(e->metric, metric, 0) != 0 || (e->model && fnmatch(e->model, model, 0) != 0))
                        continue;
                *ret_pattern = e->metric;
                if (e->has_direction) {
                        ret->has_direction = true;
                        ret->direction = e->direction;
                } else {
                        ret->has_direction = false;
                }
                if (!isnan(e->warn_pct))
                        ret->warn_pct = e->warn_pct;
                if (!isnan(e->fail_pct))
                        ret->fail_pct = e->fail_pct;
                if (!isnan(e->mads))
                        ret->mads = e->mads;
                if (e->min_samples)
                        ret->min_samples = e->min_samples;
                ret->has_min = e->has_min;
                ret->min = e->min;
                ret->has_max = e->has_max;
                ret->max = e->max;
                ret->metric = e->metric;
                ret->model = e->model;
                return;
        }
        ret->has_direction = false;
}

enum fleet_direction fleet_rules_unit_direction(const struct fleet_rules *rules, const char *unit) {
        for (size_t i = 0; i < rules->n_units; i++)
                if (strcmp(rules->units[i].unit, unit) == 0)
                        return rules->units[i].direction;
        return FLEET_DIRECTION_NONE;
}

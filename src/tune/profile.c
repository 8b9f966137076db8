#include "tune/tune.h"
#include "data/embedded.h"
#include "results/policy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static json_t *check_profiles(json_t *root, const json_error_t *jerr, const char *source, char *err, size_t errlen);

static json_t *load_profiles(const char *data_dir, char *source, size_t srclen, char *err, size_t errlen) {
        json_error_t jerr;
        json_t *root;
        if (data_dir) {
                snprintf(source, srclen, "%s/tune-profiles.json", data_dir);
                root = json_load_file(source, JSON_REJECT_DUPLICATES, &jerr);
        } else {
                snprintf(source, srclen, "built-in tune-profiles.json");
                root = json_loadb(embedded_tune_profiles_json, embedded_tune_profiles_json_len, JSON_REJECT_DUPLICATES,
                                  &jerr);
        }
        return check_profiles(root, &jerr, source, err, errlen);
}

static json_t *check_profiles(json_t *root, const json_error_t *jerr, const char *source, char *err, size_t errlen) {
        if (!root) {
                snprintf(err, errlen, "%s:%d: %s", source, jerr->line, jerr->text);
                return NULL;
        }
        json_t *profiles = json_object_get(root, "profiles");
        if (strcmp(json_string_value(json_object_get(root, "schema")) ?: "", "gpuvet.tune-profiles/1") != 0 ||
            !json_is_object(profiles)) {
                snprintf(err, errlen, "%s: not a gpuvet.tune-profiles/1 file (no \"profiles\" object)", source);
                json_decref(root);
                return NULL;
        }
        return root;
}

json_t *tune_profiles_list(const char *data_dir, char *err, size_t errlen) {
        char source[512];
        json_t *root = load_profiles(data_dir, source, sizeof(source), err, errlen);
        if (!root)
                return NULL;
        json_t *list = json_deep_copy(json_object_get(root, "profiles"));
        json_decref(root);
        return list;
}

static int add_wanted(struct tune_request *req, const char *key, const char *value, enum tune_source source,
                      unsigned line, const char *where, char *err, size_t errlen) {
        const struct tune_setting *s = tune_setting_find(key);
        if (!s) {
                int n = snprintf(err, errlen, "%s: unknown setting \"%s\" (known:", where, key);
                for (size_t i = 0; tune_settings[i] && n > 0 && (size_t)n < errlen; i++)
                        n += snprintf(err + n, errlen - (size_t)n, " %s", tune_settings[i]->key);
                if (n > 0 && (size_t)n < errlen)
                        snprintf(err + n, errlen - (size_t)n, ")");
                return -EINVAL;
        }
        if (s->valid(value) < 0) {
                snprintf(err, errlen, "%s: %s=\"%s\": expected %s", where, key, value, s->values);
                return -EINVAL;
        }
        size_t i = 0;
        while (i < req->n_wanted && req->wanted[i].setting != s)
                i++;
        if (i == req->n_wanted) {
                if (req->n_wanted == TUNE_MAX_WANTED) {
                        snprintf(err, errlen, "%s: more than %d settings", where, TUNE_MAX_WANTED);
                        return -EINVAL;
                }
                req->n_wanted++;
        }
        req->wanted[i].setting = s;
        req->wanted[i].source = source;
        req->wanted[i].line = line;
        snprintf(req->wanted[i].value, sizeof(req->wanted[i].value), "%s", value);
        return 0;
}

static int build_from(json_t *root, const char *source, const struct tune_inputs *in, struct tune_request *req,
                      char *err, size_t errlen);

int tune_request_build(const char *data_dir, const struct tune_inputs *in, struct tune_request *req, char *err,
                       size_t errlen) {
        char source[512];
        memset(req, 0, sizeof(*req));
        json_t *root = load_profiles(data_dir, source, sizeof(source), err, errlen);
        return root ? build_from(root, source, in, req, err, errlen) : -EINVAL;
}

int tune_request_from_text(const char *text, size_t len, const char *source, const struct tune_inputs *in,
                           struct tune_request *req, char *err, size_t errlen) {
        json_error_t jerr;
        memset(req, 0, sizeof(*req));
        json_t *root = check_profiles(json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr), &jerr, source, err, errlen);
        return root ? build_from(root, source, in, req, err, errlen) : -EINVAL;
}

/* Takes root (decrefs it). */
static int build_from(json_t *root, const char *source, const struct tune_inputs *in, struct tune_request *req,
                      char *err, size_t errlen) {
        const char *name = in->profile;
        req->profile = name;
        json_t *profiles = json_object_get(root, "profiles");
        int r = 0;
        if (name) {
                json_t *p = json_object_get(profiles, name);
                if (!json_is_object(p)) {
                        int n = snprintf(err, errlen, "%s %s: %s has no such profile (it has",
                                         in->profile_from ? in->profile_from : "--profile", name, source);
                        const char *key;
                        json_t *v;
                        json_object_foreach(profiles, key, v) {
                                if (n > 0 && (size_t)n < errlen)
                                        n += snprintf(err + n, errlen - (size_t)n, " %s", key);
                        }
                        if (n > 0 && (size_t)n < errlen)
                                snprintf(err + n, errlen - (size_t)n, ")");
                        r = -ENOENT;
                        goto out;
                }
                const char *key;
                json_t *v;
                char where[600];
                snprintf(where, sizeof(where), "%s, profile %s", source, name);
                json_object_foreach(json_object_get(p, "settings"), key, v) {
                        if (!json_is_string(v)) {
                                snprintf(err, errlen, "%s: %s must be a string", where, key);
                                r = -EINVAL;
                                goto out;
                        }
                        if ((r = add_wanted(req, key, json_string_value(v), TUNE_FROM_PROFILE, 0, where, err, errlen)) < 0)
                                goto out;
                }
        }
        for (size_t i = 0; in->site && i < in->site->n_tune_settings; i++) {
                const struct policy_tune_setting *t = &in->site->tune_settings[i];
                char where[600];
                snprintf(where, sizeof(where), "%s:%u: tune.settings", in->site->path, t->line);
                if ((r = add_wanted(req, t->key, t->value, TUNE_FROM_POLICY, t->line, where, err, errlen)) < 0)
                        goto out;
        }
        for (size_t i = 0; i < in->n_sets; i++) {
                const char *set = in->sets[i];
                char key[64];
                const char *eq = strchr(set, '=');
                if (!eq || eq == set || (size_t)(eq - set) >= sizeof(key)) {
                        snprintf(err, errlen, "--set \"%s\": expected KEY=VALUE", set);
                        r = -EINVAL;
                        goto out;
                }
                snprintf(key, sizeof(key), "%.*s", (int)(eq - set), set);
                if ((r = add_wanted(req, key, eq + 1, TUNE_FROM_SET, 0, "--set", err, errlen)) < 0)
                        goto out;
        }
out:
        json_decref(root);
        return r;
}

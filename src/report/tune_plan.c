#include "report/tune_plan.h"

#include <stdio.h>
#include <string.h>

static bool is_gpu_path(const char *path) {
        return strncmp(path, TUNE_GPU_PATH_PREFIX, strlen(TUNE_GPU_PATH_PREFIX)) == 0;
}

struct setting_summary {
        const struct tune_setting *s;
        const char *value;
        enum tune_source source;
        unsigned line;
        size_t change, ok, cannot;
        const struct tune_target *first_change, *first_cannot, *first_ok;
};

static void summarise(const struct tune_request *req, const struct tune_targets *t, size_t i,
                      struct setting_summary *sum) {
        memset(sum, 0, sizeof(*sum));
        sum->s = tune_settings[i];
        for (size_t k = 0; k < req->n_wanted; k++)
                if (req->wanted[k].setting == sum->s) {
                        sum->value = req->wanted[k].value;
                        sum->source = req->wanted[k].source;
                        sum->line = req->wanted[k].line;
                }
        for (size_t k = 0; k < t->n; k++) {
                const struct tune_target *x = &t->v[k];
                if (strcmp(x->setting, sum->s->key) != 0)
                        continue;
                switch (tune_target_need(x)) {
                case TUNE_CHANGE:
                        if (!sum->change++)
                                sum->first_change = x;
                        break;
                case TUNE_OK:
                        if (!sum->ok++)
                                sum->first_ok = x;
                        break;
                case TUNE_CANNOT:
                        if (!sum->cannot++)
                                sum->first_cannot = x;
                        break;
                }
        }
}

/* "vm.swappiness=1", with where the value came from when not the profile. */
static void setting_label(const struct tune_plan_shown *o, const struct setting_summary *sum, char *buf, size_t size) {
        if (sum->source == TUNE_FROM_POLICY)
                snprintf(buf, size, "%s=%s (policy line %u)", sum->s->key, sum->value, sum->line);
        else if (sum->source == TUNE_FROM_SET && o->profile)
                snprintf(buf, size, "%s=%s (--set)", sum->s->key, sum->value);
        else
                snprintf(buf, size, "%s=%s", sum->s->key, sum->value);
}

void tune_plan_text(FILE *out, const struct tune_plan_shown *o, const struct tune_request *req, const struct tune_targets *t) {
        size_t settings_changing = 0, files = 0, already = 0, cannot = 0;
        fprintf(out, "gpuvet tune plan: %s%s%s%s, root %s\n", o->profile ? "profile " : "",
                o->profile ? o->profile : "--set only", o->policy ? ", site policy " : "", o->policy ? o->policy : "",
                o->root);
        for (size_t i = 0; tune_settings[i]; i++) {
                struct setting_summary sum;
                summarise(req, t, i, &sum);
                if (!sum.value)
                        continue;
                char label[192];
                setting_label(o, &sum, label, sizeof(label));
                if (sum.change) {
                        settings_changing++;
                        files += sum.change;
                        const struct tune_target *x = sum.first_change;
                        const char *when = x->at_boot ? " (at the next boot)" : "";
                        if (sum.change == 1 && sum.ok == 0)
                                fprintf(out, "  change  %-34s %s: %s -> %s  [%s]%s\n", label, x->path, x->current, x->wanted,
                                       sum.s->check_id, when);
                        else
                                fprintf(out, "  change  %-34s %zu of %zu %s, e.g. %s: %s -> %s  [%s]%s\n", label, sum.change,
                                       sum.change + sum.ok, is_gpu_path(x->path) ? "GPUs" : "files", x->path, x->current,
                                       x->wanted, sum.s->check_id, when);
                } else if (sum.ok) {
                        already++;
                        fprintf(out, "  ok      %s%s\n", label,
                               sum.first_ok && sum.first_ok->at_boot && !sum.first_ok->in_effect
                                       ? " (written; the running kernel has not booted with it yet)"
                                       : "");
                }
                if (sum.cannot) {
                        cannot++;
                        fprintf(out, "  cannot  %-34s %s%s\n", label, sum.first_cannot->cannot,
                               sum.cannot > 1 ? (is_gpu_path(sum.first_cannot->path) ? " (and more GPUs)" : " (and more files)")
                                              : "");
                }
        }
        if (settings_changing)
                fprintf(out, "%zu setting%s to change (%zu value%s), %zu already set, %zu cannot be set here.\n",
                       settings_changing, settings_changing == 1 ? "" : "s", files, files == 1 ? "" : "s", already,
                       cannot);
        else
                fprintf(out, "Nothing to change: %zu setting%s already set, %zu cannot be set here.\n", already,
                       already == 1 ? "" : "s", cannot);
}

json_t *tune_plan_json(const struct tune_plan_shown *o, const struct tune_request *req, const struct tune_targets *t) {
        json_t *doc = json_object(), *settings = json_array();
        size_t changes = 0;
        json_object_set_new(doc, "schema", json_string("gpuvet.tune-plan/1"));
        json_object_set_new(doc, "profile", o->profile ? json_string(o->profile) : json_null());
        json_object_set_new(doc, "root", json_string(o->root));
        json_object_set_new(doc, "policy", o->policy ? json_string(o->policy) : json_null());
        for (size_t i = 0; tune_settings[i]; i++) {
                struct setting_summary sum;
                summarise(req, t, i, &sum);
                if (!sum.value)
                        continue;
                json_t *s = json_object(), *targets = json_array();
                json_object_set_new(s, "setting", json_string(sum.s->key));
                json_object_set_new(s, "value", json_string(sum.value));
                json_object_set_new(s, "check", json_string(sum.s->check_id));
                static const char *const from[] = {[TUNE_FROM_PROFILE] = "profile", [TUNE_FROM_POLICY] = "policy",
                                                   [TUNE_FROM_SET] = "set"};
                json_object_set_new(s, "from", json_string(from[sum.source]));
                if (sum.source == TUNE_FROM_POLICY)
                        json_object_set_new(s, "policy_line", json_integer(sum.line));
                json_object_set_new(s, "state", json_string(sum.change ? "change" : sum.ok ? "ok" : "cannot"));
                for (size_t k = 0; k < t->n; k++) {
                        const struct tune_target *x = &t->v[k];
                        if (strcmp(x->setting, sum.s->key) != 0)
                                continue;
                        enum tune_need need = tune_target_need(x);
                        json_t *j = json_object();
                        json_object_set_new(j, "path", json_string(x->path));
                        json_object_set_new(j, "current", need == TUNE_CANNOT && !x->current[0] ? json_null()
                                                                                                 : json_string(x->current));
                        json_object_set_new(j, "wanted", json_string(x->wanted));
                        json_object_set_new(j, "need", json_string(need == TUNE_CHANGE ? "change" : need == TUNE_OK ? "ok"
                                                                                                                   : "cannot"));
                        if (need == TUNE_CANNOT)
                                json_object_set_new(j, "reason", json_string(x->cannot));
                        if (x->at_boot)
                                json_object_set_new(j, "in_effect", json_boolean(x->in_effect));
                        json_array_append_new(targets, j);
                }
                changes += sum.change;
                json_object_set_new(s, "targets", targets);
                json_array_append_new(settings, s);
        }
        json_object_set_new(doc, "changes", json_integer((json_int_t)changes));
        json_object_set_new(doc, "settings", settings);
        return doc;
}


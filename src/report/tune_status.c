#include "report/tune_status.h"

#include <string.h>

static const char *const held_name[] = {[TUNE_HELD] = "held", [TUNE_DRIFTED] = "drifted", [TUNE_REFUSED] = "refused",
                                        [TUNE_RESET] = "reset"};

void tune_status_text(FILE *out, const struct tune_status *s) {
        const struct tune_state *st = s->st;
        if (!st) {
                fprintf(out, "Nothing applied by gpuvet tune (no %s).\n", s->state_path);
                return;
        }
        for (size_t i = 0; i < st->n; i++) {
                const struct tune_status_entry *x = &s->entries[i];
                if (x->held == TUNE_DRIFTED)
                        fprintf(out, "  drifted  %s: %s, applied %s (was %s)\n", x->e->path, x->readable ? x->now : x->why,
                                x->e->after, x->e->before);
        }
        if (s->waiting)
                fprintf(out, "  next boot  %zu kernel command-line value%s written but not yet booted with\n", s->waiting,
                        s->waiting == 1 ? "" : "s");
        if (s->other_boot)
                fprintf(out, "gpuvet tune status: %s was written on another boot; the reboot reset its runtime values "
                             "(gpuvet tune apply sets them again)%s\n", s->state_path,
                        s->persistent ? "; its kernel command-line values are judged above" : "");
        else
                fprintf(out, "gpuvet tune status: profile %s %s at %s: %zu value%s, %zu drifted since\n",
                        st->profile[0] ? st->profile : "(--set only)", strcmp(st->status, "applied") == 0 ? "applied" :
                        "interrupted while applying (run apply again, or revert)", st->started, st->n,
                        st->n == 1 ? "" : "s", s->drifted);
}

json_t *tune_status_json(const struct tune_status *s) {
        const struct tune_state *st = s->st;
        if (!st)
                return json_pack("{s:s, s:s, s:[]}", "schema", "gpuvet.tune-status/1", "state", "none", "entries");
        json_t *entries = json_array();
        for (size_t i = 0; i < st->n; i++) {
                const struct tune_status_entry *x = &s->entries[i];
                const struct tune_entry *e = x->e;
                json_t *j;
                if (x->held == TUNE_RESET) {
                        /* The reboot reset it: nothing to judge. */
                        j = json_pack("{s:s, s:s, s:s, s:s, s:s}", "setting", e->setting, "path", e->path, "before",
                                      e->before, "after", e->after, "state", "reset");
                } else {
                        j = json_pack("{s:s, s:s, s:s, s:s, s:s?, s:s}", "setting", e->setting, "path", e->path, "before",
                                      e->before, "after", e->after, "now", x->readable ? x->now : NULL, "state", held_name[x->held]);
                        if (j && x->boot)
                                json_object_set_new(j, "in_effect", json_boolean(x->in_effect));
                }
                json_array_append_new(entries, j);
        }
        return json_pack("{s:s, s:s, s:s, s:s, s:I, s:o}", "schema", "gpuvet.tune-status/1", "state",
                         s->other_boot ? "other-boot" : st->status, "profile", st->profile, "started", st->started,
                         "drifted", (json_int_t)s->drifted, "entries", entries);
}

#include "tune/tune.h"

#include <string.h>

int tune_plan(struct tune_ctx *c, const struct tune_request *req, struct tune_targets *out) {
        memset(out, 0, sizeof(*out));
        for (size_t i = 0; tune_settings[i]; i++)
                for (size_t k = 0; k < req->n_wanted; k++) {
                        if (req->wanted[k].setting != tune_settings[i])
                                continue;
                        int r = tune_settings[i]->expand(c, tune_settings[i], req->wanted[k].value, out);
                        if (r < 0) {
                                tune_targets_free(out);
                                return r;
                        }
                }
        return 0;
}

enum tune_need tune_target_need(const struct tune_target *t) {
        if (t->cannot[0])
                return TUNE_CANNOT;
        return strcmp(t->current, t->wanted) == 0 ? TUNE_OK : TUNE_CHANGE;
}

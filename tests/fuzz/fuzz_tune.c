/* libFuzzer target: the two files gpuvet tune reads that a user (or a crash) can leave in
 * any state: the snapshot (tune-state.json, read by revert and status) and the profiles
 * table (--data-dir). The first byte picks which (even: snapshot, odd: profiles), the rest
 * is the content. A refusal must say why in a terminated message; an accepted snapshot
 * holds only absolute paths (or nvml: GPU targets) and terminated strings; an accepted profile only settings
 * tune knows, with values they accept. */
#include "tune/tune.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void refused(int r, const char *err, size_t errsize) {
        if (r != -ENOMEM && (err[0] == '\0' || strnlen(err, errsize) == errsize))
                abort();
}

static void snapshot(const char *text, size_t len) {
        struct tune_state st;
        char err[512] = "";
        int r = tune_state_parse(text, len, "fuzz", &st, err, sizeof(err));
        if (r < 0) {
                refused(r, err, sizeof(err));
                return;
        }
        for (size_t i = 0; i < st.n; i++) {
                const struct tune_entry *e = &st.entries[i];
                if ((e->path[0] != '/' && strncmp(e->path, "nvml:", 5) != 0) || strnlen(e->before, sizeof(e->before)) == sizeof(e->before) ||
                    strnlen(e->after, sizeof(e->after)) == sizeof(e->after) ||
                    strnlen(e->result, sizeof(e->result)) == sizeof(e->result))
                        abort();
                if (tune_state_find(&st, e->path) == NULL)
                        abort();
        }
        tune_state_free(&st);
}

static void profiles(const char *text, size_t len) {
        static char set_a[] = "vm.swappiness=10", set_b[] = "cpu.boost=off";
        char *sets[] = {set_a, set_b};
        static const char *const names[] = {"throughput", "balanced", NULL};
        for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); n++) {
                struct tune_request req;
                char err[1024] = "";
                struct tune_inputs in = {.profile = names[n], .sets = sets, .n_sets = 2};
                int r = tune_request_from_text(text, len, "fuzz", &in, &req, err, sizeof(err));
                if (r < 0) {
                        refused(r, err, sizeof(err));
                        continue;
                }
                for (size_t i = 0; i < req.n_wanted; i++)
                        if (!req.wanted[i].setting || req.wanted[i].setting->valid(req.wanted[i].value) != 0)
                                abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1)
                return 0;
        if (data[0] % 2 == 0)
                snapshot((const char *)data + 1, size - 1);
        else
                profiles((const char *)data + 1, size - 1);
        return 0;
}

/* libFuzzer target: the files gpuvet tune reads that a user (or a crash) can leave in any
 * state: the snapshot (tune-state.json, read by revert and status), the profiles table
 * (--data-dir), and the boot loader files it edits (GRUB, BLS entries, /etc/kernel/cmdline).
 * The first byte picks which (modulo 3: snapshot, profiles, boot file), the rest is the
 * content. A boot file edit must read back as what was set, and setting the old value
 * again must read back as the old value. A refusal must say why in a terminated message; an accepted snapshot
 * holds only absolute paths (or nvml: GPU targets), terminated strings, settings tune knows, a known
 * status and results (whether a path is its setting's is judged against the root, in tune/apply.c);
 * an accepted profile only settings
 * tune knows, with values they accept. */
#include "tune/cmdline.h"
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
                if (!tune_setting_find(e->setting) ||
                    (strcmp(e->result, "pending") != 0 && strcmp(e->result, "applied") != 0 &&
                     strcmp(e->result, "refused") != 0 && strcmp(e->result, "did not take") != 0))
                        abort();
        }
        if (strcmp(st.status, "applying") != 0 && strcmp(st.status, "applied") != 0)
                abort();
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

/* Set wanted, read it back; then the old value again, read it back. */
static void boot_file(const char *text, size_t len) {
        static const char *const keys[] = {"intel_idle.max_cstate", "processor.max_cstate", NULL};
        static const char *const wanted[] = {"intel_idle.max_cstate=1 processor.max_cstate=1", "none",
                                             "processor.max_cstate=3"};
        for (int kind = CMDLINE_GRUB_DROPIN; kind <= CMDLINE_KERNEL; kind++) {
                char before[TUNE_VALUE_MAX], now[TUNE_VALUE_MAX];
                if (tune_cmdline_get(text, len, (enum cmdline_file_kind)kind, keys, before, sizeof(before)) < 0)
                        continue;
                for (size_t w = 0; w < sizeof(wanted) / sizeof(wanted[0]); w++) {
                        char *out = NULL, *back = NULL;
                        size_t out_len = 0, back_len = 0;
                        if (tune_cmdline_set(text, len, (enum cmdline_file_kind)kind, keys, wanted[w], &out, &out_len) < 0)
                                continue;
                        if (tune_cmdline_get(out, out_len, (enum cmdline_file_kind)kind, keys, now, sizeof(now)) < 0 ||
                            strcmp(now, wanted[w]) != 0)
                                abort();
                        if (tune_cmdline_set(out, out_len, (enum cmdline_file_kind)kind, keys, before, &back,
                                             &back_len) == 0 &&
                            (tune_cmdline_get(back, back_len, (enum cmdline_file_kind)kind, keys, now, sizeof(now)) < 0 ||
                             strcmp(now, before) != 0))
                                abort();
                        free(out);
                        free(back);
                }
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1)
                return 0;
        if (data[0] % 3 == 0)
                snapshot((const char *)data + 1, size - 1);
        else if (data[0] % 3 == 1)
                profiles((const char *)data + 1, size - 1);
        else
                boot_file((const char *)data + 1, size - 1);
        return 0;
}

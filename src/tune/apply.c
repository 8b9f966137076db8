/* gpuvet tune apply and revert: the snapshot of each value before it changes (the state
 * file), the writes, each value read back, and the values put back; each narrates on
 * standard output what it sets or restores as it does so (docs/tune.md). The command's
 * options and printing of plans and status stay in src/cmd/tune.c. */
#include "tune/apply.h"

#include "core/deadline.h"
#include "core/exit.h"
#include "core/fsroot.h"
#include "core/progress.h"
#include "tune/cmdline.h"
#include "tune/gpu.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- test hook: stop dead after step N of apply (tests/golden/test_tune.py) ----
 * Only in the test build (gpuvet-test-hooks, -DGPUVET_TEST_HOOKS): the released gpuvet has
 * no switch that kills it. */

#ifdef GPUVET_TEST_HOOKS
static int stop_after = -1, step;

void tune_apply_stop_after(int n) { stop_after = n; }

static void reached_step(void) {
        if (++step == stop_after)
                raise(SIGKILL);
}
#else
static void reached_step(void) {}
#endif

/* ---- plan ---- */

static bool is_gpu_path(const char *path) {
        return strncmp(path, TUNE_GPU_PATH_PREFIX, strlen(TUNE_GPU_PATH_PREFIX)) == 0;
}

/* A kernel command-line value in a boot loader file: the only kind that survives a reboot. */
bool tune_is_boot_path(const char *path) {
        return path[0] == '/' && strchr(path, TUNE_CMDLINE_SEP);
}

static bool is_grub_path(const char *path) {
        return tune_is_boot_path(path) && strncmp(path, "/etc/default/grub", strlen("/etc/default/grub")) == 0;
}

/* After boot loader files changed: rebuild grub.cfg when GRUB's were among them, and say
 * that it all takes effect at the next boot. */
static void after_boot_writes(struct tune_ctx *c, size_t n_boot, bool grub) {
        if (!n_boot)
                return;
        char msg[512] = "";
        if (grub)
                tune_cmdline_regenerate(c->fs, msg, sizeof(msg));
        printf("  next boot      %zu kernel command-line value%s written%s%s; they take effect at the next boot\n",
               n_boot, n_boot == 1 ? "" : "s", msg[0] ? ": " : "", msg);
}

size_t tune_count_changes(const struct tune_targets *t) {
        size_t n = 0;
        for (size_t i = 0; i < t->n; i++)
                n += tune_target_need(&t->v[i]) == TUNE_CHANGE;
        return n;
}

/* ---- apply ---- */

static void now_iso(char *buf, size_t size) {
        time_t t = time(NULL);
        struct tm tm;
        strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
}

static int refuse_non_root(const char *cmd, struct tune_ctx *c, const struct tune_targets *t) {
        if (!fsroot_is_live(c->fs) || geteuid() == 0)
                return -1;
        for (size_t i = 0; i < t->n; i++)
                if (tune_target_need(&t->v[i]) == TUNE_CHANGE) {
                        fprintf(stderr, "gpuvet tune %s: %s needs root (it writes %s); run it as root, or see the changes "
                                        "with `gpuvet tune plan`\n", cmd, t->v[i].setting, t->v[i].path);
                        return EXIT_USAGE;
                }
        return -1;
}

static int take_lock(const char *cmd, const char *state_path, unsigned timeout_s) {
        long holder;
        int fd = tune_lock(state_path, timeout_s * 1000u, &holder);
        if (fd == -EWOULDBLOCK) {
                fprintf(stderr, "gpuvet tune %s: another gpuvet tune (pid %ld) holds %s.lock; waited %u s\n", cmd, holder,
                        state_path, timeout_s);
                return -EXIT_USAGE;
        }
        if (fd < 0) {
                fprintf(stderr, "gpuvet tune %s: cannot lock %s.lock: %s\n", cmd, state_path,
                        fd == TUNE_LOCK_NOT_REGULAR ? "not a regular file (a symlink, FIFO or device); remove it"
                                                    : strerror(-fd));
                return -EXIT_USAGE;
        }
        return fd;
}

int tune_apply(const struct tune_apply_options *o, struct tune_ctx *c, const struct tune_request *req,
               struct tune_targets *t, const char *state_path) {
        int code = refuse_non_root("apply", c, t);
        if (code >= 0)
                return code;
        if (tune_count_changes(t) == 0 && access(state_path, F_OK) < 0) {
                /* Nothing to snapshot: leave no state behind (and need no write access). */
                printf("gpuvet tune apply: nothing to change\n");
                return EXIT_PASS;
        }
        int lock = take_lock("apply", state_path, o->lock_timeout_s);
        if (lock < 0)
                return -lock;
        /* Re-read under the lock: another run may have changed the values since the plan. */
        tune_targets_free(t);
        if (tune_plan(c, req, t) < 0) {
                close(lock);
                fprintf(stderr, "gpuvet tune apply: out of memory\n");
                return EXIT_INTERNAL;
        }

        char boot[64], err[512];
        tune_boot_id(c->fs, boot, sizeof(boot));
        struct tune_state st;
        int r = tune_state_load(state_path, &st, err, sizeof(err));
        if (r == -EINVAL) {
                fprintf(stderr, "gpuvet tune apply: %s; move it aside (it holds the values revert restores)\n", err);
                close(lock);
                return EXIT_USAGE;
        }
        if (r < 0) {
                memset(&st, 0, sizeof(st));
                now_iso(st.started, sizeof(st.started));
        } else if (strcmp(st.boot_id, boot) != 0) {
                /* The reboot reset the runtime values of that snapshot; what it holds for the
                 * boot loader files is still what revert must put back. */
                size_t keep = 0;
                for (size_t i = 0; i < st.n; i++)
                        if (tune_is_boot_path(st.entries[i].path))
                                st.entries[keep++] = st.entries[i];
                st.n = keep;
                now_iso(st.started, sizeof(st.started));
        }
        snprintf(st.profile, sizeof(st.profile), "%s", o->profile ? o->profile : "");
        snprintf(st.boot_id, sizeof(st.boot_id), "%s", boot);
        snprintf(st.status, sizeof(st.status), "applying");
        for (size_t i = 0; i < t->n; i++) {
                const struct tune_target *x = &t->v[i];
                if (tune_target_need(x) == TUNE_CANNOT)
                        continue;
                struct tune_entry *e = tune_state_find(&st, x->path);
                if (!e && tune_target_need(x) == TUNE_OK)
                        continue;
                if (!e) {
                        if (!(e = tune_state_add(&st))) {
                                tune_state_free(&st);
                                close(lock);
                                fprintf(stderr, "gpuvet tune apply: out of memory\n");
                                return EXIT_INTERNAL;
                        }
                        snprintf(e->setting, sizeof(e->setting), "%s", x->setting);
                        snprintf(e->path, sizeof(e->path), "%s", x->path);
                        snprintf(e->before, sizeof(e->before), "%s", x->current);
                }
                snprintf(e->after, sizeof(e->after), "%s", x->wanted);
                snprintf(e->result, sizeof(e->result), "pending");
                e->detail[0] = '\0';
        }
        if ((r = tune_state_save(state_path, &st)) < 0) {
                fprintf(stderr, "gpuvet tune apply: writing %s: %s; nothing was changed\n", state_path, strerror(-r));
                tune_state_free(&st);
                close(lock);
                return EXIT_USAGE;
        }
        reached_step();

        size_t applied = 0, refused = 0, failed = 0, boot_written = 0, n_change = tune_count_changes(t), n_done = 0;
        bool grub_written = false;
        /* A GPU setting may take NVML seconds: on a terminal, which one is being set. */
        struct progress progress;
        progress_init(&progress, !o->no_progress && isatty(STDERR_FILENO));
        for (size_t i = 0; i < t->n; i++) {
                const struct tune_target *x = &t->v[i];
                if (tune_target_need(x) != TUNE_CHANGE)
                        continue;
                if (progress_begin(&progress, monotonic_ms() / 1e3)) {
                        progress_line(&progress, "tune apply: setting %zu of %zu: %s (%s)", n_done + 1, n_change,
                                      x->setting, x->path);
                        progress_end(&progress);
                }
                n_done++;
                struct tune_entry *e = tune_state_find(&st, x->path);
                char why[256];
                int w = tune_ctx_write(c, x->path, x->wanted, why, sizeof(why));
                if (w == -ETIMEDOUT) {
                        /* The GPU stopped answering: not a refusal but a failure, judged below. */
                        snprintf(e->detail, sizeof(e->detail), "%.300s", why);
                } else if (w < 0) {
                        refused++;
                        snprintf(e->result, sizeof(e->result), "refused");
                        snprintf(e->detail, sizeof(e->detail), "cannot be set here: %s refused %.100s (%.160s)",
                                 is_gpu_path(x->path) ? "NVML" : "the kernel",
                                 x->wanted, why);
                } else if (tune_is_boot_path(x->path)) {
                        boot_written++;
                        grub_written |= is_grub_path(x->path);
                }
                reached_step();
        }
        progress_clear(&progress);
        for (size_t i = 0; i < st.n; i++) {
                struct tune_entry *e = &st.entries[i];
                if (strcmp(e->result, "refused") == 0)
                        continue;
                /* An entry of an earlier apply that this one does not touch keeps its result. */
                bool planned = false;
                for (size_t k = 0; k < t->n && !planned; k++)
                        planned = strcmp(t->v[k].path, e->path) == 0;
                if (!planned)
                        continue;
                char now[TUNE_VALUE_MAX], why[256];
                int rr = tune_ctx_read(c, e->path, now, sizeof(now), why, sizeof(why));
                if (rr == 0 && strcmp(now, e->after) == 0) {
                        snprintf(e->result, sizeof(e->result), "applied");
                        applied++;
                } else {
                        failed++;
                        snprintf(e->result, sizeof(e->result), "did not take");
                        if (!e->detail[0])
                                snprintf(e->detail, sizeof(e->detail), rr == 0 ? "reads %.160s after writing %.100s"
                                                                               : "cannot be read back (%.160s) after writing %.100s",
                                         rr == 0 ? now : why, e->after);
                }
        }
        after_boot_writes(c, boot_written, grub_written);
        reached_step();
        snprintf(st.status, sizeof(st.status), "applied");
        if ((r = tune_state_save(state_path, &st)) < 0)
                fprintf(stderr, "gpuvet tune apply: updating %s: %s (its snapshot is still the one written before "
                                "any change)\n", state_path, strerror(-r));
        for (size_t i = 0; i < st.n; i++)
                if (strcmp(st.entries[i].result, "applied") != 0)
                        printf("  %-14s %s: %s\n", st.entries[i].result, st.entries[i].path, st.entries[i].detail);
        for (size_t i = 0; i < t->n; i++)
                if (tune_target_need(&t->v[i]) == TUNE_CANNOT)
                        printf("  cannot         %s: %s\n", t->v[i].setting, t->v[i].cannot);
        printf("gpuvet tune apply: %zu value%s set, %zu refused by this machine, %zu did not take; "
               "snapshot in %s (gpuvet tune revert restores it)\n",
               applied, applied == 1 ? "" : "s", refused, failed, state_path);
        tune_state_free(&st);
        close(lock);
        return failed ? EXIT_FAILED : EXIT_PASS;
}

/* ---- revert ---- */

int tune_state_load_checked(const char *cmd, const char *state_path, struct tune_ctx *c, struct tune_state *st, bool *other_boot) {
        char err[512], boot[64];
        int r = tune_state_load(state_path, st, err, sizeof(err));
        if (r == -ENOENT)
                return -ENOENT;
        if (r < 0) {
                fprintf(stderr, "gpuvet tune %s: %s\n", cmd, r == -EINVAL ? err : strerror(-r));
                return r;
        }
        /* Revert writes back what an entry names: only a file its setting writes, and a
         * value of that file's shape (a state file edited to name /etc/passwd is refused). */
        for (size_t i = 0; i < st->n; i++) {
                const struct tune_entry *e = &st->entries[i];
                char why[512];
                r = tune_entry_check(c, e->setting, e->path, e->before, e->after, why, sizeof(why));
                if (r < 0) {
                        fprintf(stderr, "gpuvet tune %s: %s: entries[%zu]: %s; not a state gpuvet tune wrote here\n", cmd,
                                state_path, i, why);
                        tune_state_free(st);
                        return r == -ENOMEM ? r : -EINVAL;
                }
        }
        tune_boot_id(c->fs, boot, sizeof(boot));
        *other_boot = strcmp(st->boot_id, boot) != 0;
        return 0;
}

int tune_revert(unsigned lock_timeout_s, struct tune_ctx *c, const char *state_path) {
        int lock = take_lock("revert", state_path, lock_timeout_s);
        if (lock < 0)
                return -lock;
        struct tune_state st;
        bool other_boot = false;
        int r = tune_state_load_checked("revert", state_path, c, &st, &other_boot);
        if (r == -ENOENT) {
                fprintf(stderr, "gpuvet tune revert: nothing to revert: no %s (gpuvet tune apply writes it)\n", state_path);
                close(lock);
                return EXIT_USAGE;
        }
        if (r < 0) {
                close(lock);
                return EXIT_USAGE;
        }
        size_t persistent = 0;
        for (size_t i = 0; i < st.n; i++)
                persistent += tune_is_boot_path(st.entries[i].path);
        if (other_boot && !persistent) {
                fprintf(stderr, "gpuvet tune revert: %s was taken on another boot (boot id %s): the settings it holds "
                                "do not survive a reboot and were reset then, so restoring them now would undo what was "
                                "set since; delete the file to forget it\n", state_path,
                        st.boot_id[0] ? st.boot_id : "unknown");
                tune_state_free(&st);
                close(lock);
                return EXIT_USAGE;
        }
        if (other_boot)
                printf("  other boot     %s was taken on another boot: the reboot reset its runtime values (%zu, "
                       "left as they are); its kernel command-line values (%zu) are restored\n",
                       state_path, st.n - persistent, persistent);
        if (fsroot_is_live(c->fs) && geteuid() != 0 && st.n) {
                fprintf(stderr, "gpuvet tune revert: %s needs root (it writes %s); run it as root\n", st.entries[0].setting,
                        st.entries[0].path);
                tune_state_free(&st);
                close(lock);
                return EXIT_USAGE;
        }
        size_t restored = 0, failed = 0, boot_written = 0;
        bool grub_written = false;
        /* Newest first: the governor goes back before the EPP it constrains. */
        for (size_t i = st.n; i-- > 0;) {
                struct tune_entry *e = &st.entries[i];
                if (strcmp(e->result, "refused") == 0 || (other_boot && !tune_is_boot_path(e->path)))
                        continue;
                char now[TUNE_VALUE_MAX], why[256] = "reads otherwise";
                int w = 0;
                if (tune_ctx_read(c, e->path, now, sizeof(now), NULL, 0) < 0 || strcmp(now, e->before) != 0) {
                        w = tune_ctx_write(c, e->path, e->before, why, sizeof(why));
                        if (w == 0 && tune_is_boot_path(e->path)) {
                                boot_written++;
                                grub_written |= is_grub_path(e->path);
                        }
                }
                if (w == 0 && tune_ctx_read(c, e->path, now, sizeof(now), NULL, 0) == 0 && strcmp(now, e->before) == 0) {
                        restored++;
                        snprintf(e->result, sizeof(e->result), "restored");
                } else {
                        failed++;
                        printf("  not restored  %s: %s (wanted %s)\n", e->path, why, e->before);
                }
        }
        after_boot_writes(c, boot_written, grub_written);
        if (failed == 0) {
                if (unlink(state_path) < 0)
                        fprintf(stderr, "gpuvet tune revert: removing %s: %s\n", state_path, strerror(errno));
                printf("gpuvet tune revert: %zu value%s restored; %s removed\n", restored, restored == 1 ? "" : "s",
                       state_path);
        } else {
                /* Keep the snapshot: what failed can be retried. */
                printf("gpuvet tune revert: %zu restored, %zu not; %s kept for another try\n", restored, failed,
                       state_path);
        }
        tune_state_free(&st);
        close(lock);
        return failed ? EXIT_FAILED : EXIT_PASS;
}


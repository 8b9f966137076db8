/* gpuvet tune plan|apply|revert|status|profiles: the OS settings `check` recommends,
 * applied reversibly (src/tune/, docs/tune.md). */
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/specs.h"
#include "cmd/nvml_use.h"
#include "cmd/site_policy.h"
#include "core/atomic_file.h"
#include "core/deadline.h"
#include "core/fsroot.h"
#include "core/progress.h"
#include "core/strbuf.h"
#include "report/tune_plan.h"
#include "report/tune_status.h"
#include "policy/policy.h"
#include "tune/apply.h"
#include "tune/cmdline.h"
#include "tune/gpu.h"
#include "tune/tune.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>


#define MAX_SETS 32

struct tune_cli {
        const char *action;
        const char *profile;
        bool profile_given; /* --profile on the command line, not the policy's */
        const char *policy_path;
        bool no_policy;
        const struct policy *site; /* NULL: none read */
        struct nvml_options nvml;
        char *sets[MAX_SETS];
        size_t n_sets;
        const char *json; /* --json's path ("-": standard output), or NULL */
        const char *state_override;
        unsigned lock_timeout_s;
        bool no_progress;
        struct common_options common;
};

/* ---- plan ---- */

/* --json PATH: "-" on standard output, else the file (atomically). */
static int print_json_doc(json_t *doc, const char *path) {
        if (strcmp(path, "-") != 0) {
                char *text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
                json_decref(doc);
                return write_json_output("tune", path, text);
        }
        int r = doc && json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0 && fputc('\n', stdout) != EOF
                        ? EXIT_PASS
                        : EXIT_INTERNAL;
        json_decref(doc);
        return r;
}

/* Whether the text answer is printed: not when the JSON goes to standard output. */
static bool text_wanted(const struct tune_cli *o) { return !o->json || strcmp(o->json, "-") != 0; }

/* ---- status ---- */

/* Each recorded value against the machine now. */
static void judge_status(struct tune_ctx *c, struct tune_status *s) {
        const struct tune_state *st = s->st;
        for (size_t i = 0; i < st->n; i++) {
                const struct tune_entry *e = &st->entries[i];
                struct tune_status_entry *x = &s->entries[i];
                x->e = e;
                x->boot = tune_is_boot_path(e->path);
                s->persistent += x->boot;
                if (s->other_boot && !x->boot) {
                        x->held = TUNE_RESET;
                        continue;
                }
                x->readable = tune_ctx_read(c, e->path, x->now, sizeof(x->now), x->why, sizeof(x->why)) == 0;
                bool held = x->readable && strcmp(x->now, e->after) == 0;
                x->held = strcmp(e->result, "refused") == 0 ? TUNE_REFUSED : held ? TUNE_HELD : TUNE_DRIFTED;
                s->drifted += x->held == TUNE_DRIFTED;
                if (x->boot) {
                        const char *sep = strrchr(e->path, TUNE_CMDLINE_SEP);
                        x->in_effect = tune_cmdline_in_effect(c->fs, tune_cmdline_keys(sep + 1), e->after);
                        s->waiting += held && !x->in_effect;
                }
        }
}

static int do_status(const struct tune_cli *o, struct tune_ctx *c, const char *state_path) {
        struct tune_state st;
        struct tune_status s = {.state_path = state_path};
        int r = tune_state_load_checked("status", state_path, c, &st, &s.other_boot);
        if (r < 0 && r != -ENOENT)
                return EXIT_USAGE;
        if (r == 0) {
                s.st = &st;
                if (!(s.entries = calloc(st.n ? st.n : 1, sizeof(*s.entries)))) {
                        fprintf(stderr, "gpuvet tune status: out of memory\n");
                        r = -ENOMEM;
                } else {
                        judge_status(c, &s);
                }
        }
        int code = EXIT_PASS;
        if (r == -ENOMEM)
                code = EXIT_INTERNAL;
        else if (o->json)
                code = print_json_doc(tune_status_json(&s), o->json);
        if (code == EXIT_PASS && r != -ENOMEM && text_wanted(o))
                tune_status_text(stdout, &s);
        /* Only runtime values from another boot: nothing of it is in force. */
        bool stale = s.other_boot && !s.persistent;
        if (code == EXIT_PASS && s.st && (s.drifted || stale))
                code = EXIT_FAILED;
        free(s.entries);
        if (r == 0)
                tune_state_free(&st);
        return code;
}

static int do_profiles(const struct tune_cli *o) {
        char err[512];
        json_t *list = tune_profiles_list(o->common.data_dir, err, sizeof(err));
        if (!list) {
                fprintf(stderr, "gpuvet tune profiles: %s\n", err);
                return EXIT_USAGE;
        }
        if (o->json) {
                int code = print_json_doc(json_incref(list), o->json);
                if (code != EXIT_PASS || !text_wanted(o)) {
                        json_decref(list);
                        return code;
                }
        }
        const char *name;
        json_t *p;
        json_object_foreach(list, name, p) {
                printf("%s: %s\n", name, json_string_value(json_object_get(p, "description")) ?: "");
                const char *key;
                json_t *v;
                json_object_foreach(json_object_get(p, "settings"), key, v) printf("  %s=%s\n", key,
                                                                                   json_string_value(v) ?: "?");
        }
        json_decref(list);
        return EXIT_PASS;
}

/* ---- install-unit ---- */

#define UNIT_NAME "gpuvet-tune.service"

/* Profile names and values end up on an ExecStart line: allow what needs no quoting. */
static bool unit_safe(const char *s) {
        if (!*s)
                return false;
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                      strchr("._-+=/", *s)))
                        return false;
        return true;
}

/* The unit's ExecStart: this gpuvet's `tune apply` with the options that install-unit was
 * given. 0, or the exit code after saying why (a value that cannot go on a command line). */
static int unit_command(const struct tune_cli *o, char *cmd, size_t size) {
        char self[4096];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n <= 0) {
                fprintf(stderr, "gpuvet tune install-unit: cannot find this gpuvet (/proc/self/exe): %s\n", strerror(errno));
                return EXIT_INTERNAL;
        }
        self[n] = '\0';
        if (o->profile_given && o->profile && !unit_safe(o->profile)) {
                fprintf(stderr, "gpuvet tune install-unit: profile name \"%s\" cannot go on a unit's command line\n",
                        o->profile);
                return EXIT_USAGE;
        }
        if (o->policy_path && (o->policy_path[0] != '/' || !unit_safe(o->policy_path))) {
                fprintf(stderr, "gpuvet tune install-unit: --policy %s: give an absolute path of plain characters "
                                "(it goes on the unit's command line)\n", o->policy_path);
                return EXIT_USAGE;
        }
        /* Without --profile the unit follows the site policy as it is at each boot. */
        cmd[0] = '\0';
        strbuf_appendf(cmd, size, "%s tune apply", self);
        if (o->profile_given)
                strbuf_appendf(cmd, size, " --profile %s", o->profile ? o->profile : "none");
        if (o->policy_path)
                strbuf_appendf(cmd, size, " --policy %s", o->policy_path);
        else if (o->no_policy)
                strbuf_appendf(cmd, size, " --no-policy");
        for (size_t i = 0; i < o->n_sets; i++) {
                if (!unit_safe(o->sets[i])) {
                        fprintf(stderr, "gpuvet tune install-unit: --set %s cannot go on a unit's command line\n",
                                o->sets[i]);
                        return EXIT_USAGE;
                }
                strbuf_appendf(cmd, size, " --set %s", o->sets[i]);
        }
        if (o->state_override)
                strbuf_appendf(cmd, size, " --state %s", o->state_override);
        if (strlen(cmd) + 1 >= size) { /* cut: strbuf_appendf fills the buffer to its end */
                fprintf(stderr, "gpuvet tune install-unit: the command line is too long\n");
                return EXIT_USAGE;
        }
        return 0;
}

/* Write the unit at path unless it already says exactly that (*same). */
static int write_unit(const char *path, const char *unit, size_t len, bool *same) {
        char existing[4096];
        FILE *f = fopen(path, "r");
        size_t have = f ? fread(existing, 1, sizeof(existing) - 1, f) : 0;
        if (f)
                fclose(f);
        existing[have] = '\0';
        *same = f && strcmp(existing, unit) == 0;
        if (*same)
                return 0;
        int r = tune_mkdirs_for(path);
        if (r == 0)
                r = atomic_write(path, unit, len);
        if (r < 0) {
                fprintf(stderr, "gpuvet tune install-unit: writing %s: %s\n", path, atomic_write_strerror(r));
                return EXIT_USAGE;
        }
        return 0;
}

/* Enable it as systemctl enable does: the symlink in multi-user.target.wants (*linked: it
 * was there already). */
static int enable_unit(const char *wants, const char *link, bool *linked) {
        char target[4096];
        ssize_t tl = readlink(link, target, sizeof(target) - 1);
        *linked = tl > 0 && (target[tl] = '\0', strcmp(target, "../" UNIT_NAME) == 0);
        if (*linked)
                return 0;
        int r = tune_mkdirs_for(link);
        if (r < 0) {
                fprintf(stderr, "gpuvet tune install-unit: %s: %s\n", wants, strerror(-r));
                return EXIT_USAGE;
        }
        unlink(link);
        if (symlink("../" UNIT_NAME, link) < 0) {
                fprintf(stderr, "gpuvet tune install-unit: enabling (%s): %s\n", link, strerror(errno));
                return EXIT_USAGE;
        }
        return 0;
}

static int do_install_unit(const struct tune_cli *o, struct fsroot *fs) {
        char cmd[2048];
        int code = unit_command(o, cmd, sizeof(cmd));
        if (code)
                return code;
        char unit[4096];
        int ulen = snprintf(unit, sizeof(unit),
                            "# Written by `gpuvet tune install-unit`: the settings are runtime state, so apply them at "
                            "every boot.\n"
                            "[Unit]\n"
                            "Description=gpuvet tune: apply the %s settings\n"
                            "After=systemd-sysctl.service systemd-modules-load.service\n"
                            "\n"
                            "[Service]\n"
                            "Type=oneshot\n"
                            "RemainAfterExit=yes\n"
                            "ExecStart=%s\n"
                            "\n"
                            "[Install]\n"
                            "WantedBy=multi-user.target\n",
                            o->profile ? o->profile : "--set", cmd);
        if (ulen <= 0 || (size_t)ulen >= sizeof(unit))
                return EXIT_INTERNAL;
        const char *dir = fsroot_dir(fs);
        const char *prefix = strcmp(dir, "/") == 0 ? "" : dir;
        char path[4096], wants[4096], link[4200];
        if (snprintf(path, sizeof(path), "%s/etc/systemd/system/" UNIT_NAME, prefix) >= (int)sizeof(path) ||
            snprintf(wants, sizeof(wants), "%s/etc/systemd/system/multi-user.target.wants", prefix) >= (int)sizeof(wants)) {
                fprintf(stderr, "gpuvet tune install-unit: --root %s: path too long\n", dir);
                return EXIT_USAGE;
        }
        snprintf(link, sizeof(link), "%s/" UNIT_NAME, wants);
        if (fsroot_is_live(fs) && geteuid() != 0) {
                fprintf(stderr, "gpuvet tune install-unit: writing %s needs root\n", path);
                return EXIT_USAGE;
        }
        bool same, linked;
        if ((code = write_unit(path, unit, (size_t)ulen, &same)) || (code = enable_unit(wants, link, &linked)))
                return code;
        printf("gpuvet tune install-unit: %s %s and %s; at boot it runs: %s\n", path, same ? "unchanged" : "written",
               linked ? "already enabled" : "enabled", cmd);
        return EXIT_PASS;
}

/* ---- the command ---- */

/* plan, apply and install-unit: the request from the profile, the site policy and --set,
 * then the plan from it. */
static int plan_and_act(struct tune_cli *o, struct tune_ctx *c, const struct policy *site, const char *state_path) {
        char profile_from[4200] = "--profile";
        o->site = site;
        if (!o->profile_given && site && site->tune_profile) {
                o->profile = site->tune_profile;
                snprintf(profile_from, sizeof(profile_from), "%s:%u: tune.profile", site->path, site->tune_profile_line);
        } else if (!o->profile_given) {
                o->profile = "throughput";
        }
        if (!o->profile && o->n_sets == 0 && !(site && site->n_tune_settings)) {
                fprintf(stderr, "gpuvet tune %s: --profile none leaves nothing to do: add --set KEY=VALUE\n", o->action);
                return EXIT_USAGE;
        }
        struct tune_inputs in = {.profile = o->profile, .profile_from = profile_from, .site = site, .sets = o->sets,
                                 .n_sets = o->n_sets};
        struct tune_request req;
        char err[1024];
        if (tune_request_build(o->common.data_dir, &in, &req, err, sizeof(err)) < 0) {
                fprintf(stderr, "gpuvet tune %s: %s\n", o->action, err);
                return EXIT_USAGE;
        }
        struct tune_targets t;
        if (tune_plan(c, &req, &t) < 0) {
                fprintf(stderr, "gpuvet tune %s: out of memory\n", o->action);
                return EXIT_INTERNAL;
        }
        int code;
        if (strcmp(o->action, "install-unit") == 0) {
                code = do_install_unit(o, c->fs);
        } else if (strcmp(o->action, "plan") == 0) {
                size_t changes = tune_count_changes(&t);
                const struct tune_plan_shown shown = {.profile = o->profile, .policy = o->site ? o->site->path : NULL,
                                                      .root = o->common.root};
                code = EXIT_PASS;
                if (o->json)
                        code = print_json_doc(tune_plan_json(&shown, &req, &t), o->json);
                if (code == EXIT_PASS && text_wanted(o))
                        tune_plan_text(stdout, &shown, &req, &t);
                if (code == EXIT_PASS && changes)
                        code = EXIT_FAILED;
        } else {
                const struct tune_apply_options how = {.profile = o->profile, .lock_timeout_s = o->lock_timeout_s,
                                                       .no_progress = o->no_progress};
                code = tune_apply(&how, c, &req, &t, state_path);
        }
        tune_targets_free(&t);
        return code;
}

/* ---- the command ---- */

enum tune_opt { TUNE_PROFILE = 'p', TUNE_SET = 's', TUNE_JSON = 'j', TUNE_POLICY = 'P', TUNE_NO_POLICY = 0x100,
                TUNE_STATE, TUNE_LOCK_TIMEOUT, TUNE_NO_PROGRESS };

static int tune_option(int id, const struct opt_value *v, void *ctx) {
        struct tune_cli *o = ctx;
        switch (id) {
        case TUNE_PROFILE:
                o->profile = strcmp(v->text, "none") == 0 ? NULL : v->text;
                o->profile_given = true;
                break;
        case TUNE_POLICY: o->policy_path = v->text; break;
        case TUNE_NO_POLICY: o->no_policy = true; break;
        case TUNE_SET:
                if (o->n_sets == MAX_SETS) {
                        fprintf(stderr, "gpuvet tune: more than %d --set options\n", MAX_SETS);
                        return EXIT_USAGE;
                }
                o->sets[o->n_sets++] = (char *)v->text; /* argv's own string */
                break;
        case TUNE_JSON: o->json = v->text; break;
        case TUNE_STATE: o->state_override = v->text; break;
        case TUNE_LOCK_TIMEOUT: o->lock_timeout_s = opt_seconds(v); break;
        case TUNE_NO_PROGRESS: o->no_progress = true; break;
        }
        return -1;
}

static const struct opt tune_options[] = {
        {.name = "profile", .letter = 'p', .kind = ARG_TEXT, .metavar = "NAME",
         .choices = "throughput|passthrough-host|balanced|none",
         .def = "the site policy's tune.profile, else throughput",
         .help = "throughput, passthrough-host or balanced (data/tune-profiles.json); none: only --set and the site "
                 "policy's tune.settings"},
        {.name = "set", .letter = 's', .kind = ARG_TEXT, .metavar = "KEY=VALUE",
         .help = "set or override one setting (repeatable), e.g. --set vm.swappiness=1"},
        {.name = "policy", .letter = 'P', .kind = ARG_FILE,
         .def = "/etc/gpuvet/policy.yaml (or .yml) under --root",
         .help = "the site policy whose tune section overrides the profile"},
        {.name = "no-policy", .kind = ARG_FLAG, .id = TUNE_NO_POLICY, .help = "ignore the default policy file"},
        {.name = "json", .letter = 'j', .kind = ARG_OUTPUT,
         .help = "plan, status and profiles as JSON (schemas in docs/tune.md) to FILE; alone, or \"-\", to "
                 "standard output, which then holds only the JSON"},
        {.name = "state", .kind = ARG_FILE, .id = TUNE_STATE, .def = "<root>/var/lib/gpuvet/tune-state.json",
         .help = "the state file"},
        {.name = "lock-timeout", .kind = ARG_DURATION, .id = TUNE_LOCK_TIMEOUT, .min = 0, .max = 3600 * 1000,
         .def = "10s", .help = "wait this long for another tune run"},
        {.name = "no-progress", .kind = ARG_FLAG, .id = TUNE_NO_PROGRESS,
         .help = "no progress line on a terminal's standard error (apply)"},
        {0},
};

const struct cmd_spec cmd_tune_spec = {
        .name = "tune",
        .synopsis = "plan|apply|revert|status|profiles|install-unit [OPTIONS]",
        .summary = "The settings gpuvet check recommends for GPU work (CPU governor, EPP, boost, idle states, "
                   "transparent huge pages, swappiness, dirty ratios, NUMA balancing; GPU persistence mode, power "
                   "limit and applications clocks through NVML; kernel command-line parameters in the boot loader's "
                   "files, at the next boot), applied so that they can be undone exactly.",
        .description = "  plan      what would change, per setting (current -> wanted, the\n"
                       "            check that wants it); changes nothing; exit 0 nothing\n"
                       "            to do, 1 changes pending\n"
                       "  apply     snapshot every value it changes into the state file,\n"
                       "            apply, re-read each; exit 0 done (settings the machine\n"
                       "            does not offer are reported, not fatal), 1 a value did\n"
                       "            not take\n"
                       "  revert    restore the snapshot exactly, then forget it; refuses\n"
                       "            when there is none or it was taken on another boot\n"
                       "  status    what is applied, and what drifted since; exit 1 when\n"
                       "            something drifted\n"
                       "  profiles  the profiles and their settings\n"
                       "  install-unit  write gpuvet-tune.service, which runs this apply\n"
                       "            (same --profile and --set) at every boot, and enable it\n"
                       "            for multi-user.target",
        .opts = tune_options,
        .nvml = true,
        .notes = "--root acts on the tree under DIR instead of / (a writable copy of a fixture or snapshot); NVML "
                 "is then used for the GPU settings only when a library is named. --no-nvml leaves the GPUs alone "
                 "(their settings: cannot).",
        .exit_status = "0 done / nothing to do, 1 changes pending (plan), a value did not take (apply, revert) or "
                       "drift (status), 2 usage, bad input or refused, 3 internal error.",
        .operand_words = "plan|apply|revert|status|profiles|install-unit",
        .on_option = tune_option,
};

/* Run the action o->action names (all but profiles read the machine under --root). */
static int tune_act(struct tune_cli *o) {
        if (strcmp(o->action, "profiles") == 0)
                return do_profiles(o);
        int code;
        struct fsroot *fs;
        int r = fsroot_open(o->common.root, &fs);
        if (r < 0) {
                fprintf(stderr, "gpuvet tune: --root %s: %s\n", o->common.root, strerror(-r));
                return EXIT_USAGE;
        }
        char state_path[4096];
        r = tune_state_path(fs, o->state_override, state_path, sizeof(state_path));
        if (r < 0) {
                fprintf(stderr, "gpuvet tune: the state file's directory (" "/var/lib/gpuvet" " under --root %s): %s\n",
                        o->common.root,
                        r == -ELOOP ? "a symlink that leads nowhere inside the root, or a loop" : strerror(-r));
                fsroot_free(fs);
                return EXIT_USAGE;
        }
        struct tune_gpu_options gpu_options = {.lib = o->nvml.lib, .off = o->nvml.off, .call_ms = o->nvml.dl.call_ms,
                                               .init_ms = o->nvml.dl.init_ms};
        struct tune_ctx ctx = {.fs = fs, .gpu_options = &gpu_options};
        if (strcmp(o->action, "revert") == 0) {
                code = tune_revert(o->lock_timeout_s, &ctx, state_path);
        } else if (strcmp(o->action, "status") == 0) {
                code = do_status(o, &ctx, state_path);
        } else {
                struct policy site;
                bool have_site;
                code = site_policy_load("tune", o->policy_path, o->no_policy, fs, &site, &have_site);
                if (code == EXIT_PASS)
                        code = plan_and_act(o, &ctx, have_site ? &site : NULL, state_path);
                if (have_site)
                        policy_free(&site);
        }
        if (tune_gpus_close(ctx.gpus)) {
                /* A call never returned: its thread may hold NVML's locks, so no exit handlers. */
                fprintf(stderr, "gpuvet tune: an NVML call never returned; leaving it behind\n");
                code = stdout_finish(code);
                fflush(stderr);
                _exit(code);
        }
        fsroot_free(fs);
        return code;
}

int cmd_tune(int argc, char **argv) {
        struct tune_cli o = {.lock_timeout_s = 10};
        if (argc < 2 || argv[1][0] == '-') {
                if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
                        cmd_print_help(&cmd_tune_spec, stdout);
                        return EXIT_PASS;
                }
                fprintf(stderr, "gpuvet tune: name an action: plan, apply, revert, status or profiles (see gpuvet tune --help)\n");
                return EXIT_USAGE;
        }
        o.action = argv[1];
        static const char *const actions[] = {"plan", "apply", "revert", "status", "profiles", "install-unit", NULL};
        size_t a = 0;
        while (actions[a] && strcmp(actions[a], o.action) != 0)
                a++;
        if (!actions[a]) {
                fprintf(stderr, "gpuvet tune: unknown action \"%s\": expected plan, apply, revert, status, profiles or "
                                "install-unit\n",
                        o.action);
                return EXIT_USAGE;
        }
        /* Parsed from the action on: "gpuvet tune apply: unexpected argument ..." */
        char name[32];
        snprintf(name, sizeof(name), "tune %s", o.action);
        struct cmd_spec spec = cmd_tune_spec;
        spec.name = name;
        spec.help_spec = &cmd_tune_spec;
        struct cmd_args args;
        int code = cmd_parse(&spec, argc - 1, argv + 1, &o, &args);
        if (code >= 0)
                return code;
        o.common = args.common;
        o.nvml = args.nvml;
#ifdef GPUVET_TEST_HOOKS
        const char *hook = getenv("GPUVET_TUNE_STOP_AFTER");
        tune_apply_stop_after(hook && *hook ? atoi(hook) : -1);
#endif
        return tune_act(&o);
}

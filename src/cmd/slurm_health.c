/* gpuvet slurm-health: slurm.conf's HealthCheckProgram (and the opt-in per-job prolog and
 * epilog check). Runs check under one deadline, reads the node's state with scontrol, and
 * drains or resumes it by the ownership rule of src/slurm/decide.c. docs/slurm.md. */
#include "checks/check.h"
#include "cmd/check_run.h"
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/slurm_check.h"
#include "cmd/specs.h"
#include "core/utf8.h"
#include "slurm/decide.h"
#include "slurm/drain_reason.h"
#include "slurm/node_state.h"
#include "slurm/scontrol.h"
#include "sys/nvml_facts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum slurm_mode { MODE_HEALTH, MODE_PROLOG, MODE_EPILOG };

#define DEFAULT_TIMEOUT_S 40u
#define DEFAULT_JOB_TIMEOUT_S 10u
#define DEFAULT_SCONTROL_TIMEOUT_S 5u
#define NODE_NAME_MAX 128

struct slurm_cli {
        struct check_cli check;
        const char *node_opt, *scontrol;
        unsigned scontrol_timeout_s;
        bool drain_on_warn, dry_run;
        enum slurm_mode mode;
};

enum slurm_opt {
        SLURM_LEVEL = 'l', SLURM_JSON = 'j',
        SLURM_ONLY = 0x100, SLURM_POLICY, SLURM_NO_POLICY, SLURM_DRAIN_ON, SLURM_NODE, SLURM_DRY_RUN, SLURM_PROLOG,
        SLURM_EPILOG, SLURM_SCONTROL, SLURM_SCONTROL_TIMEOUT,
};

static int slurm_option(int id, const struct opt_value *v, void *ctx) {
        struct slurm_cli *o = ctx;
        switch ((enum slurm_opt)id) {
        case SLURM_LEVEL: o->check.level = level_from_name(v->text); break;
        case SLURM_JSON: o->check.json_path = v->text; break;
        case SLURM_ONLY: o->check.only = v->text; break;
        case SLURM_POLICY: o->check.policy_path = v->text; break;
        case SLURM_NO_POLICY: o->check.no_policy = true; break;
        case SLURM_DRAIN_ON: o->drain_on_warn = strcmp(v->text, "warn") == 0; break;
        case SLURM_NODE: o->node_opt = v->text; break;
        case SLURM_DRY_RUN: o->dry_run = true; break;
        case SLURM_PROLOG:
        case SLURM_EPILOG:
                if (o->mode != MODE_HEALTH)
                        return cmd_usage_error("slurm-health", "--prolog and --epilog: one mode at a time");
                o->mode = id == SLURM_PROLOG ? MODE_PROLOG : MODE_EPILOG;
                break;
        case SLURM_SCONTROL: o->scontrol = v->text; break;
        case SLURM_SCONTROL_TIMEOUT: o->scontrol_timeout_s = opt_seconds(v); break;
        }
        return -1;
}

static const struct opt slurm_options[] = {
        {.name = "level", .letter = 'l', .kind = ARG_ENUM, .metavar = "LEVEL", .choices = "quick|standard|full",
         .def = "quick", .help = "the check's level (docs/checks.md); under HealthCheckProgram keep quick"},
        {.name = "only", .kind = ARG_LIST, .id = SLURM_ONLY,
         .help = "run only these checks: ids or categories, comma-separated (\"pcie,gpu.nouveau\")"},
        {.name = "policy", .kind = ARG_FILE, .id = SLURM_POLICY,
         .def = "/etc/gpuvet/policy.yaml (or .yml) under --root when it exists",
         .help = "judge by this site policy (docs/policy.md)"},
        {.name = "no-policy", .kind = ARG_FLAG, .id = SLURM_NO_POLICY, .help = "ignore the default policy file"},
        {.name = "json", .letter = 'j', .kind = ARG_OUT_FILE,
         .help = "also write check's JSON report (schema gpuvet.report/1) to FILE; not \"-\": standard output "
                 "holds the actions"},
        {.name = "drain-on", .kind = ARG_ENUM, .id = SLURM_DRAIN_ON, .metavar = "WHAT", .choices = "fail|warn",
         .def = "fail", .help = "fail: fail and error results drain; warn: warnings drain too"},
        {.name = "node", .kind = ARG_TEXT, .id = SLURM_NODE, .metavar = "NAME",
         .def = "the short host name; $SLURMD_NODENAME wins",
         .help = "the Slurm node name when slurmd does not give one"},
        {.name = "dry-run", .kind = ARG_FLAG, .id = SLURM_DRY_RUN,
         .help = "read the node's state and print what would be done; change nothing"},
        {.name = "prolog", .kind = ARG_FLAG, .id = SLURM_PROLOG,
         .help = "per-job mode for slurm.conf's Prolog: exit 1 after draining an unhealthy node, so that Slurm "
                 "requeues the job (--timeout defaults to 10s)"},
        {.name = "epilog", .kind = ARG_FLAG, .id = SLURM_EPILOG,
         .help = "per-job mode for Epilog: drain an unhealthy node, exit 0 (--timeout defaults to 10s)"},
        {.name = "scontrol", .kind = ARG_PROGRAM, .id = SLURM_SCONTROL, .def = "scontrol in PATH, else /usr/bin",
         .help = "the scontrol to run"},
        {.name = "scontrol-timeout", .kind = ARG_DURATION, .id = SLURM_SCONTROL_TIMEOUT, .min = 1000, .max = 60000,
         .def = "5s", .help = "kill scontrol after this long; a timeout is an error"},
        {0},
};

const struct cmd_spec cmd_slurm_health_spec = {
        .name = "slurm-health",
        .summary = "Slurm's HealthCheckProgram: run the node's checks, then drain the node when they fail "
                   "(Reason=\"gpuvet: <failed check ids>\") and resume it when they pass again, only if gpuvet "
                   "drained it.",
        .description = "A node drained or down for another reason is never touched.",
        .opts = slurm_options,
        .nvml = true,
        .no_default_timeout = true,
        .timeout_help = "the check's overall deadline (default: 40s, under Slurm's 60 s limit with two scontrol "
                        "calls; 10s with --prolog or --epilog); past it the check is killed and the node drained "
                        "with \"gpuvet: check timed out after SEC s\"",
        .notes = "NVML's deadlines default to check's, cut to fit --timeout. docs/slurm.md has the rest.",
        .exit_status = "0 nothing to do or the action taken (drain, resume, new reason); 1 (--prolog only) the node "
                       "failed its checks; 2 usage or bad input; 3 the node's state could not be read or changed "
                       "(scontrol missing, failing or timing out), or the check could not be run.",
        .on_option = slurm_option,
};

/* Slurm node names as slurm.conf allows them in practice; the name goes into scontrol's
 * arguments and the text output, so nothing else is taken. */
static bool node_name_valid(const char *s) {
        size_t n = strlen(s);
        if (n == 0 || n > NODE_NAME_MAX)
                return false;
        for (const char *p = s; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
                      *p == '_' || *p == '-'))
                        return false;
        return true;
}

/* slurmd's name for this node ($SLURMD_NODENAME: it knows which node it is, and a --node
 * copied into a shared wrapper must not drain another), else --node, else the short host
 * name. Returns 0 or EXIT_USAGE after a message naming where the bad name came from. */
static int node_name(const struct slurm_cli *o, char *buf, size_t size) {
        const char *env = getenv("SLURMD_NODENAME"), *from = "$SLURMD_NODENAME";
        const char *name = env && *env ? env : NULL;
        if (name && o->node_opt && strcmp(name, o->node_opt) != 0)
                fprintf(stderr, "gpuvet slurm-health: --node %s ignored: slurmd names this node %s\n", o->node_opt, name);
        if (!name && o->node_opt) {
                name = o->node_opt;
                from = "--node";
        }
        if (!name) {
                if (gethostname(buf, size - 1) < 0) {
                        fprintf(stderr, "gpuvet slurm-health: no node name: gethostname failed (give --node NAME)\n");
                        return EXIT_USAGE;
                }
                buf[size - 1] = '\0';
                buf[strcspn(buf, ".")] = '\0';
                from = "the host name";
        } else {
                snprintf(buf, size, "%s", name);
        }
        if (!node_name_valid(buf)) {
                fprintf(stderr, "gpuvet slurm-health: %s: \"%.*s\" is not a Slurm node name (letters, digits, '.', '_', '-';"
                                " at most %d)\n", from, 200, buf, NODE_NAME_MAX);
                return EXIT_USAGE;
        }
        return 0;
}

/* A reason as text output shows it: invalid UTF-8 and control bytes as '?', cut at 200. */
static void printable(const char *s, char *buf, size_t size) {
        size_t n = 0;
        for (const unsigned char *p = (const unsigned char *)s; *p && n + 5 < size && n < 200;) {
                size_t k = utf8_sequence(p);
                if (k == 0 || (k == 1 && (*p < 0x20 || *p == 0x7f))) {
                        buf[n++] = '?';
                        p++;
                        continue;
                }
                memcpy(buf + n, p, k);
                n += k;
                p += k;
        }
        buf[n] = '\0';
}

/* NVML's deadlines cut to fit the overall one, so that a hung call becomes an error result
 * naming its check before the whole check is killed (a user's own value is kept). */
static void fit_nvml_deadlines(struct nvml_deadlines *dl, unsigned timeout_s) {
        unsigned budget_ms = timeout_s * 1000u;
        unsigned call = budget_ms / 8, half = budget_ms / 3;
        if (!dl->call_ms)
                dl->call_ms = call < NVML_DEADLINE_CALL_MS_DEFAULT ? call : NVML_DEADLINE_CALL_MS_DEFAULT;
        if (!dl->gpu_ms)
                dl->gpu_ms = half < NVML_DEADLINE_GPU_MS_DEFAULT ? half : NVML_DEADLINE_GPU_MS_DEFAULT;
        if (!dl->init_ms)
                dl->init_ms = half < NVML_DEADLINE_INIT_MS_DEFAULT ? half : NVML_DEADLINE_INIT_MS_DEFAULT;
}

struct verdict {
        bool healthy;
        char reason[SLURM_REASON_MAX + 1];
        char said[160]; /* the verdict as the text output tells it */
};

/* From the check's outcome: healthy or not, and the reason to drain with. */
static int judge(const struct slurm_cli *o, const struct slurm_check_outcome *c, unsigned timeout_s, struct verdict *v) {
        if (!c->judged) {
                if (c->exit_code == EXIT_USAGE) /* the check's message named the bad input */
                        return EXIT_USAGE;
                char why[80];
                if (c->timed_out)
                        snprintf(why, sizeof(why), "check timed out after %u s", timeout_s);
                else if (c->signal)
                        snprintf(why, sizeof(why), "check was killed by signal %d", c->signal);
                else
                        snprintf(why, sizeof(why), "check ended without a verdict (exit %d)", c->exit_code);
                v->healthy = false;
                slurm_reason_build(v->reason, sizeof(v->reason), NULL, 0, why);
                snprintf(v->said, sizeof(v->said), "error (%s)", why);
                return 0;
        }
        /* Failures and errors first, then (with --drain-on warn) warnings: the ids that
         * matter most are the ones that fit. */
        const enum status order[] = {STATUS_FAIL, STATUS_ERROR, STATUS_WARN};
        size_t kinds = o->drain_on_warn ? 3 : 2, n = 0;
        for (size_t k = 0; k < kinds; k++)
                n += c->n_ids[order[k]];
        const char **ids = calloc(n ? n : 1, sizeof(*ids));
        if (!ids) {
                fprintf(stderr, "gpuvet slurm-health: out of memory\n");
                return EXIT_INTERNAL;
        }
        n = 0;
        for (size_t k = 0; k < kinds; k++)
                for (size_t i = 0; i < c->n_ids[order[k]]; i++)
                        ids[n++] = c->ids[order[k]][i];
        /* The verdict decides, the ids only name: a report that ran out of memory is a
         * fail with no id to give. */
        v->healthy = n == 0 && c->verdict != STATUS_FAIL && !(o->drain_on_warn && c->verdict == STATUS_WARN);
        if (c->out_of_memory)
                fprintf(stderr, "gpuvet slurm-health: out of memory reading the check's results: the reason may "
                                "name fewer checks than failed\n");
        slurm_reason_build(v->reason, sizeof(v->reason), ids, n, "check failed");
        free(ids);
        snprintf(v->said, sizeof(v->said), "%s", status_name(c->verdict));
        if (!v->healthy)
                snprintf(v->said + strlen(v->said), sizeof(v->said) - strlen(v->said), " (%s)",
                         v->reason + strlen(SLURM_REASON_PREFIX " "));
        return 0;
}

/* Read the node's state, decide, act (or say what would be done). Returns the exit code. */
static int act(const struct slurm_cli *o, const char *node, const struct verdict *v) {
        struct scontrol sc = {.path = o->scontrol, .timeout_ms = o->scontrol_timeout_s * 1000u};
        char err[1200];
        struct slurm_node st;
        if (scontrol_show_node(&sc, node, &st, err, sizeof(err)) < 0) {
                fprintf(stderr, "gpuvet slurm-health: %s; node left as it is\n", err);
                return EXIT_INTERNAL;
        }
        struct slurm_decision d = slurm_decide(&st, v->healthy, v->reason);
        char was[320], shown[SLURM_NODE_STATE_MAX + sizeof(was) + 16];
        printable(st.reason ? st.reason : "", was, sizeof(was));
        snprintf(shown, sizeof(shown), "%s%s%s%s", st.state, st.reason ? ", reason \"" : "", st.reason ? was : "",
                 st.reason ? "\"" : "");
        slurm_node_done(&st);
        if (d.action == SLURM_ACTION_NONE) {
                printf("%s: no change (%s): %s\n", node, shown, d.why);
                return 0;
        }
        char buf[512];
        const char *argv[6];
        int argc = scontrol_update_argv(&sc, node, d.action, v->reason, buf, sizeof(buf), argv);
        /* As a shell would take it: Reason="gpuvet: ..." (the reason holds no quote). */
        char cmdline[700] = "";
        for (int i = 0; i < argc; i++) {
                const char *eq = strchr(argv[i], '=');
                bool quote = eq && strchr(argv[i], ' ');
                snprintf(cmdline + strlen(cmdline), sizeof(cmdline) - strlen(cmdline), "%s%.*s%s%s%s", i ? " " : "",
                         quote ? (int)(eq - argv[i] + 1) : 0, argv[i], quote ? "\"" : "", quote ? eq + 1 : argv[i],
                         quote ? "\"" : "");
        }
        if (o->dry_run) {
                printf("%s: would %s (%s): %s: %s\n", node, slurm_action_name(d.action), shown, d.why, cmdline);
                return 0;
        }
        if (scontrol_update_node(&sc, node, d.action, v->reason, err, sizeof(err)) < 0) {
                fprintf(stderr, "gpuvet slurm-health: %s\n", err);
                return EXIT_INTERNAL;
        }
        printf("%s: %s (was %s): %s: %s\n", node, slurm_action_name(d.action), shown, d.why, cmdline);
        return 0;
}

static int slurm_health_run(struct slurm_cli *o, struct cmd_args *args, const char *node) {
        unsigned timeout_s = args->common.timeout_s;
        if (!timeout_s)
                timeout_s = o->mode == MODE_HEALTH ? DEFAULT_TIMEOUT_S : DEFAULT_JOB_TIMEOUT_S;
        args->common.timeout_s = timeout_s; /* the child's own gathering watchdog: never later */
        fit_nvml_deadlines(&args->nvml.dl, timeout_s);
        struct slurm_check_outcome c;
        int rc = slurm_check_run(&o->check, args, timeout_s * 1000u, &c);
        if (rc < 0) {
                fprintf(stderr, "gpuvet slurm-health: cannot start the check: %s\n", strerror(-rc));
                return EXIT_INTERNAL;
        }
        struct verdict v = {0};
        int code = judge(o, &c, timeout_s, &v);
        bool json_failed = c.judged && c.exit_code == EXIT_INTERNAL && o->check.json_path;
        slurm_check_done(&c);
        if (code)
                return code;
        printf("%s: check %s: %s\n", node, level_name(o->check.level), v.said);
        fflush(stdout);
        /* scontrol is told the one time format whose reason suffix the parser knows. */
        setenv("SLURM_TIME_FORMAT", "standard", 1);
        code = act(o, node, &v);
        if (code == 0 && json_failed)
                code = EXIT_INTERNAL; /* the check said why; the node was still handled */
        if (code == 0 && o->mode == MODE_PROLOG && !v.healthy) {
                /* Slurm drains the node (ours already is, and keeps our reason) and requeues
                 * the job held: the job must not start on these GPUs. */
                fprintf(stderr, "gpuvet slurm-health: node %s failed its pre-job GPU check (%s): the job is not"
                                " started here\n", node, v.reason);
                code = EXIT_FAILED;
        }
        return code;
}

int cmd_slurm_health(int argc, char **argv) {
        struct slurm_cli o = {
                .check = {.command = "slurm-health", .level = LEVEL_QUICK, .color = "never", .quiet = true},
                .scontrol = "scontrol", .scontrol_timeout_s = DEFAULT_SCONTROL_TIMEOUT_S,
        };
        struct cmd_args args;
        int code = cmd_parse(&cmd_slurm_health_spec, argc, argv, &o, &args);
        if (code >= 0)
                return code;
        if (o.check.only && !check_only_is_valid("slurm-health", o.check.only))
                return EXIT_USAGE;
        if (o.check.json_path && strcmp(o.check.json_path, "-") == 0)
                return cmd_usage_error("slurm-health", "--json: a file, not \"-\" (standard output holds the actions)");
        char node[NODE_NAME_MAX + 2];
        if ((code = node_name(&o, node, sizeof(node))) != 0)
                return code;
        return slurm_health_run(&o, &args, node);
}

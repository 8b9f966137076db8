/* The commands: their entry points, their one-line summaries and their specs; `gpuvet
 * help` and the generators of the man pages and shell completions read them from here. */
#include "cmd/registry.h"
#include "cmd/specs.h"
#include "core/array.h"
#include "version.h"
#include "core/json_text.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static int cmd_help(int argc, char **argv);

const struct subcommand subcommands[] = {
        {"check", cmd_check, "check the node: one verdict, a remedy for every problem"},
        {"info", cmd_info, "inventory of the host and its GPUs (deviceQuery, nvidia-smi -q, lspci)"},
        {"topo", cmd_topo, "GPU/NIC connection matrix with CPU and NUMA affinity (nvidia-smi topo -m)"},
        {"bench", cmd_bench, "bandwidth, memory, compute, GEMM and host memory against peaks and baselines"},
        {"burn", cmd_burn, "stress every GPU with verified GEMM, power, pulse and memory tests; one verdict"},
        {"detect", cmd_detect, "GPU -> architecture -> driver, CUDA, PyTorch wheels and NGC images to use"},
        {"estimate", cmd_estimate, "memory per GPU and time of training or serving a model; fits or what to change"},
        {"snapshot", cmd_snapshot, "capture the files checks read, to replay with --root elsewhere"},
        {"query", cmd_query, "nvidia-smi --query-gpu compatible CSV, hang-proof"},
        {"top", cmd_top, "live view of the GPUs and their processes (nvtop, nvitop); stale and lost GPUs shown"},
        {"policy", cmd_policy, "capture this node as the site's reference, or validate a policy file"},
        {"fleet", cmd_fleet, "aggregate many nodes' reports: verdicts, failing checks, outliers, drift"},
        {"ngc", cmd_ngc, "the newest NGC image that runs on this driver and GPUs, pulled and tested"},
        {"slurm-health", cmd_slurm_health, "Slurm HealthCheckProgram: drain this node on failed checks, resume it later"},
        {"report", cmd_report, "one node's check, bench and burn documents as a self-contained HTML page"},
        {"serve", cmd_serve, "Prometheus exporter with dcgm-exporter's metric names, hang-proof"},
        {"tune", cmd_tune, "apply the OS settings check recommends (plan, apply, revert, status)"},
        {"help", cmd_help, "a command's help: gpuvet help COMMAND"},
};
const size_t subcommand_count = ARRAY_COUNT(subcommands);

const struct cmd_spec *const cmd_specs[] = {
        &cmd_check_spec,          &cmd_info_spec,           &cmd_topo_spec,        &cmd_bench_spec,
        &cmd_bench_nccl_spec,     &cmd_bench_rdma_spec,     &cmd_bench_train_spec, &cmd_burn_spec,
        &cmd_detect_spec,         &cmd_estimate_spec,       &cmd_snapshot_spec,    &cmd_query_spec,
        &cmd_top_spec,            &cmd_policy_capture_spec, &cmd_policy_validate_spec, &cmd_fleet_spec,
        &cmd_ngc_list_spec,       &cmd_ngc_pick_spec,       &cmd_ngc_pull_spec,    &cmd_ngc_test_spec,
        &cmd_slurm_health_spec,   &cmd_report_spec,         &cmd_serve_spec,       &cmd_tune_spec,
};
const size_t cmd_spec_count = ARRAY_COUNT(cmd_specs);

const struct cmd_spec *cmd_spec_find(const char *name) {
        for (size_t i = 0; i < cmd_spec_count; i++)
                if (strcmp(cmd_specs[i]->name, name) == 0)
                        return cmd_specs[i];
        return NULL;
}

void print_global_usage(FILE *out) {
        fprintf(out,
                "Usage: gpuvet COMMAND [OPTIONS]\n"
                "\n"
                "Validate NVIDIA GPU servers: bare metal, passthrough hosts and VMs.\n"
                "\n"
                "Commands:\n");
        for (size_t i = 0; i < subcommand_count; i++)
                fprintf(out, "  %-12s %s\n", subcommands[i].name, subcommands[i].help);
        fprintf(out,
                "\n"
                "Run `gpuvet help COMMAND` (or `gpuvet COMMAND --help`) for a command's options;\n"
                "`man gpuvet-COMMAND` where the man pages are installed.\n"
                "  -h, --help     this help\n"
                "  -V, --version  print the version (also: gpuvet version)\n"
                "\n"
                "Exit status: 0 pass, 1 a check failed, 2 usage or bad input, 3 internal error.\n");
}

/* A group's help ("gpuvet help policy"): its subcommands' usage lines. */
static bool print_group(const char *group, FILE *out) {
        size_t len = strlen(group);
        bool any = false;
        for (size_t i = 0; i < cmd_spec_count; i++) {
                const struct cmd_spec *s = cmd_specs[i];
                if (strncmp(s->name, group, len) || s->name[len] != ' ')
                        continue;
                if (!any)
                        fprintf(out, "Usage:\n");
                fprintf(out, "  gpuvet %s %s\n      %s\n", s->name, s->synopsis ? s->synopsis : "[OPTIONS]", s->summary);
                any = true;
        }
        if (any)
                fprintf(out, "\nRun `gpuvet help %s SUBCOMMAND` for one's options.\n", group);
        return any;
}

int cmd_print_group_help(const char *group, FILE *out) { return print_group(group, out) ? 0 : -1; }


static json_t *option_json(const struct opt *o, const char *fragment) {
        static const char *const kinds[_ARG_KIND_COUNT] = {
                [ARG_FLAG] = "flag",     [ARG_TEXT] = "text",         [ARG_FILE] = "file",
                [ARG_OUTPUT] = "output", [ARG_OUT_FILE] = "out-file", [ARG_DIR] = "dir",
                [ARG_PROGRAM] = "program", [ARG_DURATION] = "duration", [ARG_DURATION_MS] = "duration",
                [ARG_SIZE] = "size",     [ARG_NUMBER] = "number",     [ARG_LIST] = "list",
                [ARG_ENUM] = "enum",     [ARG_HOST] = "host",
        };
        char letter[2] = {o->letter, '\0'};
        json_t *choices = json_array();
        for (const char *c = o->choices; c && *c;) {
                size_t len = strcspn(c, "|");
                json_array_append_new(choices, json_stringn(c, len));
                c += len + (c[len] == '|');
        }
        bool bounded = o->kind == ARG_NUMBER || o->kind == ARG_DURATION || o->kind == ARG_DURATION_MS ||
                       o->kind == ARG_SIZE;
        /* min and max in the kind's unit: the number, milliseconds, bytes */
        return json_pack("{s:s, s:o, s:s, s:o, s:o, s:o, s:s, s:s, s:o, s:o}", "name", o->name, "letter",
                         o->letter ? json_string(letter) : json_null(), "kind", kinds[o->kind], "metavar",
                         json_text_keep_empty(cmd_opt_metavar(o)), "choices", choices, "default", json_text_keep_empty(o->def), "help",
                         o->help, "fragment", fragment, "min", bounded ? json_integer((json_int_t)o->min) : json_null(),
                         "max", bounded && o->max ? json_integer((json_int_t)o->max) : json_null());
}

static void append_options(json_t *opts, const struct cmd_spec *s, const struct opt *t, const char *fragment) {
        for (const struct opt *o = t; o && o->name; o++) {
                struct opt shown = cmd_shown_option(s, o);
                json_array_append_new(opts, option_json(&shown, fragment));
        }
}

static json_t *spec_json(const struct cmd_spec *s) {
        json_t *opts = json_array();
        append_options(opts, s, s->opts, "own");
        append_options(opts, s, s->color ? cmd_fragment(CMD_FRAGMENT_COLOR) : NULL, "output");
        append_options(opts, s, s->nvml ? cmd_fragment(CMD_FRAGMENT_NVML) : NULL, "nvml");
        append_options(opts, s, cmd_fragment(s->help_only ? CMD_FRAGMENT_HELP_ONLY : CMD_FRAGMENT_COMMON), "common");
        json_t *operands = json_array();
        for (const char *c = s->operand_words; c && *c;) {
                size_t len = strcspn(c, "|");
                json_array_append_new(operands, json_stringn(c, len));
                c += len + (c[len] == '|');
        }
        return json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:b, s:o}", "name", s->name, "synopsis",
                         s->synopsis ? s->synopsis : "[OPTIONS]", "summary", s->summary, "description",
                         json_text_keep_empty(s->description), "notes", json_text_keep_empty(s->notes), "exit_status",
                         json_text_keep_empty(s->exit_status), "operands", operands, "takes_operands", s->takes_operands,
                         "options", opts);
}

static int options_json(void) {
        json_t *cmds = json_array(), *top = json_array();
        for (size_t i = 0; i < cmd_spec_count; i++)
                json_array_append_new(cmds, spec_json(cmd_specs[i]));
        for (size_t i = 0; i < subcommand_count; i++)
                json_array_append_new(top, json_pack("{s:s, s:s}", "name", subcommands[i].name, "summary",
                                                     subcommands[i].help));
        json_t *doc = json_pack("{s:s, s:s, s:o, s:o}", "schema", "gpuvet.options/1", "version", GPUVET_VERSION,
                                "commands", top, "specs", cmds);
        char *text = doc ? json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
        json_decref(doc);
        if (!text) {
                fprintf(stderr, "gpuvet help: out of memory\n");
                return EXIT_INTERNAL;
        }
        puts(text);
        free(text);
        return EXIT_PASS;
}

/* `gpuvet help [COMMAND...]`, `gpuvet help --options-json`. */
static int cmd_help(int argc, char **argv) {
        if (argc == 2 && strcmp(argv[1], "--options-json") == 0)
                return options_json();
        if (argc < 2) {
                print_global_usage(stdout);
                return EXIT_PASS;
        }
        char name[128] = "";
        for (int i = 1; i < argc; i++) {
                size_t n = strlen(name);
                snprintf(name + n, sizeof(name) - n, "%s%s", i > 1 ? " " : "", argv[i]);
        }
        const struct cmd_spec *s = cmd_spec_find(name);
        if (s) {
                cmd_print_help(s, stdout);
                return EXIT_PASS;
        }
        if (print_group(name, stdout))
                return EXIT_PASS;
        fprintf(stderr, "gpuvet help: no command named \"%s\" (see gpuvet --help)\n", name);
        return EXIT_USAGE;
}

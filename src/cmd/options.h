/* Every command's options as one typed table: name, letter, the kind of value, its default
 * and one line of help. cmd_parse parses argv with it (getopt_long underneath), checks each
 * value by its kind and names the option in every complaint; the same table prints
 * `--help`, and `gpuvet help --options-json` hands it to the generators of the man pages
 * and the shell completions (tools/gen-manpages.py, tools/gen-completion.py), so the four
 * cannot disagree. Shared fragments (the common one always: --timeout, --root, --data-dir,
 * --help; NVML's when the command reads NVML) are tables of the same kind. `query` parses
 * nvidia-smi's syntax itself (single-dash long options); its table describes that syntax
 * for help, man page and completion. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "cmd/machine.h"

enum opt_kind {
        ARG_FLAG,        /* no value */
        ARG_TEXT,        /* free text */
        ARG_FILE,        /* a file to read */
        ARG_OUTPUT,      /* [FILE|-]: a document to write; "-", or no value, is standard output */
        ARG_OUT_FILE,    /* FILE: a file to write (a value required) */
        ARG_DIR,         /* a directory */
        ARG_PROGRAM,     /* a program, by path or in PATH */
        ARG_DURATION,    /* "30s", "5m", "1h30m"; a bare number is seconds */
        ARG_DURATION_MS, /* the same, but a bare number is milliseconds (the *-ms options) */
        ARG_SIZE,        /* "268435456", "256M", "1G": binary multiples */
        ARG_NUMBER,      /* a whole number from min to max */
        ARG_LIST,        /* comma-separated words */
        ARG_ENUM,        /* one of choices */
        ARG_HOST,        /* a host name or address, optionally :PORT */
        _ARG_KIND_COUNT
};

struct opt {
        const char *name;    /* the long name, without "--" */
        char letter;         /* its short letter, or 0 */
        enum opt_kind kind;
        int id;              /* what own_option receives; 0: the letter */
        const char *metavar; /* "LEVEL", "LIST"; NULL: the kind's ("FILE", "DURATION" ...) */
        const char *choices; /* ENUM: "quick|standard|full"; LIST: the words it takes, for completion */
        const char *def;     /* the default in words, printed as "(default: ...)"; NULL: none shown */
        const char *help;    /* what it does; wrapped by the printers */
        uint64_t min, max;   /* NUMBER: the range; DURATION: in ms; SIZE: in bytes; max 0: no bound */
};

/* A value, checked by its kind: text as given; n the number (NUMBER), milliseconds
 * (DURATION), bytes (SIZE) or the choice's index (ENUM). An OUTPUT given no value has "-". */
struct opt_value {
        const char *text;
        uint64_t n;
};

struct cmd_spec {
        const char *name;        /* "check", "policy capture": messages say "gpuvet <name>: ..." */
        const char *synopsis;    /* after "gpuvet <name> ", one usage line each ("[OPTIONS]"); \n between */
        const char *summary;     /* one sentence: what the command does */
        const char *description; /* paragraphs after the summary, or NULL */
        const struct opt *opts;  /* its own options, ended by a zeroed entry, or NULL */
        const char *notes;       /* paragraphs after the options, or NULL */
        const char *exit_status; /* the exit codes, one paragraph */
        const char *timeout_help; /* what --timeout means for this command; NULL: the gathering deadline */
        const char *operand_words; /* words its operands take, for completion ("all|memory|..."), or NULL */
        bool nvml;                /* takes the NVML fragment */
        bool color;               /* colours its text: takes --color WHEN (report/report_text.h) */
        bool takes_operands;      /* leaves operands (argv[first_operand..]) to the command */
        bool no_default_timeout;  /* --timeout defaults to 0 (the command's own deadlines), not 30 s */
        bool help_only;           /* parses its operands itself and takes no option but --help */
        const struct cmd_spec *help_spec; /* whose help --help prints (a renamed copy's original); NULL: this */
        /* One of its own options, its value checked by kind; returns -1 to go on, else the
         * exit code to leave with (after printing why). */
        int (*on_option)(int id, const struct opt_value *v, void *ctx);
};

struct cmd_args {
        struct common_options common;
        struct nvml_options nvml; /* zero unless spec->nvml */
        int first_operand;
        char **operands; /* argv + first_operand */
        size_t n_operands;
};

/* Parse argv (argv[0] is the command's name) into out, handing the command's own options
 * to spec->on_option with ctx. Returns -1 when the command should run, else its exit code:
 * 0 after --help, EXIT_USAGE after a message naming the bad option or value, EXIT_INTERNAL
 * when the command's table reuses a fragment's name or letter (a programming error every
 * test of the command would show). */
int cmd_parse(const struct cmd_spec *spec, int argc, char **argv, void *ctx, struct cmd_args *out);

/* The front most commands share: parse argv into cli (the ctx of spec->on_option, its
 * defaults set by the caller), then run the command on it. Returns cmd_parse's exit code
 * when it says to leave, else run's. */
int cmd_parse_run(const struct cmd_spec *spec, int argc, char **argv, void *cli,
                  int (*run)(void *cli, const struct cmd_args *args));

/* The command's --help, generated from its spec. */
void cmd_print_help(const struct cmd_spec *spec, FILE *out);

/* Every command's spec, in the order `gpuvet --help` lists them (cmd/registry.c). */
extern const struct cmd_spec *const cmd_specs[];
extern const size_t cmd_spec_count;
const struct cmd_spec *cmd_spec_find(const char *name);

/* The shared fragments, for the dump. */
enum cmd_fragment_id { CMD_FRAGMENT_COMMON, CMD_FRAGMENT_NVML, CMD_FRAGMENT_HELP_ONLY, CMD_FRAGMENT_COLOR };
const struct opt *cmd_fragment(enum cmd_fragment_id which);
const char *cmd_opt_metavar(const struct opt *o);
/* Option o as spec shows it: the common --timeout with the command's own text, and without
 * the 30 s default when the command has its own deadlines. */
struct opt cmd_shown_option(const struct cmd_spec *spec, const struct opt *o);

/* own_option of a command whose one option of its own is OPT_JSON: ctx is a const char **. */
int cmd_json_option(int id, const struct opt_value *v, void *ctx);

/* The front of a command that shows the machine and has --json as its one option of its own
 * (info, topo): parse, then machine_read. Returns -1 with *m read and *json_path set (NULL:
 * no --json), else the exit code to leave with. */
int cmd_show_machine(const struct cmd_spec *spec, int argc, char **argv, const char **json_path, struct machine *m);

/* The --json [FILE|-] entry every document-writing command's table has; its id is 'j'. */
#define OPT_JSON(schema)                                                                                         \
        {.name = "json", .letter = 'j', .kind = ARG_OUTPUT,                                                   \
         .help = "also write the JSON document (schema " schema ") to FILE; alone, or \"-\", to standard "    \
                 "output, which then holds only the JSON"}

/* Print "gpuvet <cmd>: <message>" on standard error; returns EXIT_USAGE. */
int cmd_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --backend of check and bench: "cuda", "opencl" or "auto" into *ret and -1 (an own_option's
 * "go on"); else cmd's usage error, its exit code. */
int cmd_backend_option(const char *cmd, const char *arg, const char **ret);

/* A whole number from min to max into *ret; false for anything else. */
bool cmd_parse_uint(const char *s, unsigned min, unsigned max, unsigned *ret);
/* --gpus of the bench commands: "0,2,5-7" -> device indices, ascending and each once, into
 * out (room for max); false for an empty or malformed list or an index past max - 1. max is
 * at most CMD_MAX_DEVICES. */
#define CMD_MAX_DEVICES 256
bool cmd_parse_device_list(const char *s, int max, int *out, size_t *ret_n);

/* Milliseconds as whole seconds, rounded up: for a DURATION kept in seconds. */
static inline unsigned opt_seconds(const struct opt_value *v) { return (unsigned)((v->n + 999) / 1000); }

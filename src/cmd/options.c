#include "cmd/options.h"
#include "core/array.h"
#include "core/strparse.h"
#include "report/report_text.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DAY_MS (24ull * 3600 * 1000)

static const struct opt common_fragment[] = {
        {.name = "timeout", .letter = 'T', .kind = ARG_DURATION, .min = 1000, .max = DAY_MS, .def = "30s",
         .help = "give up (exit 3) when gathering the node's facts blocks this long"},
        {.name = "root", .letter = 'r', .kind = ARG_DIR, .def = "/ or $GPUVET_FSROOT",
         .help = "read /sys, /proc and /etc under DIR (a fixture or a snapshot)"},
        {.name = "data-dir", .kind = ARG_DIR, .def = "built in, or $GPUVET_DATA_DIR",
         .help = "the data tables (GPUs, compatibility, baselines) from DIR"},
        {.name = "help", .letter = 'h', .kind = ARG_FLAG, .help = "this help"},
        {0},
};

static const struct opt nvml_fragment[] = {
        {.name = "nvml-lib", .kind = ARG_FILE, .metavar = "PATH", .def = "libnvidia-ml.so.1, or $GPUVET_NVML_LIB",
         .help = "load this libnvidia-ml"},
        {.name = "no-nvml", .kind = ARG_FLAG, .help = "do not call NVML"},
        {.name = "nvml-call-timeout-ms", .kind = ARG_DURATION_MS, .min = 1, .max = 600000, .def = "2s",
         .help = "abandon an NVML call after this long (a bare number is milliseconds)"},
        {.name = "nvml-gpu-timeout-ms", .kind = ARG_DURATION_MS, .min = 1, .max = 600000, .def = "20s",
         .help = "abandon a GPU's NVML reads after this long"},
        {.name = "nvml-init-timeout-ms", .kind = ARG_DURATION_MS, .min = 1, .max = 600000, .def = "20s",
         .help = "give up on nvmlInit after this long"},
        {0},
};

static const struct opt color_fragment[] = {
        {.name = "color", .kind = ARG_ENUM, .metavar = "WHEN", .choices = "auto|always|never", .def = "auto",
         .help = "colour the text: auto on a terminal unless NO_COLOR is set"},
        {0},
};

/* A command that takes no option but --help (policy validate). */
static const struct opt help_fragment[] = {
        {.name = "help", .letter = 'h', .kind = ARG_FLAG, .help = "this help"},
        {0},
};

enum fragment { FRAG_OWN, FRAG_COLOR, FRAG_NVML, FRAG_COMMON };

/* One entry of the merged table: where it comes from, and its getopt value. */
struct merged {
        const struct opt *o;
        enum fragment frag;
};

#define MAX_OPTIONS 96
/* getopt's value of an option without a letter: above every char. */
#define LONG_ONLY_BASE 0x1000

static const char *const kind_metavar[_ARG_KIND_COUNT] = {
        [ARG_FLAG] = NULL,       [ARG_TEXT] = "TEXT",       [ARG_FILE] = "FILE",    [ARG_OUTPUT] = "[FILE|-]",
        [ARG_OUT_FILE] = "FILE", [ARG_DIR] = "DIR",         [ARG_PROGRAM] = "PROGRAM",
        [ARG_DURATION] = "DURATION", [ARG_DURATION_MS] = "DURATION", [ARG_SIZE] = "SIZE", [ARG_NUMBER] = "N",
        [ARG_LIST] = "LIST",     [ARG_ENUM] = "WORD",       [ARG_HOST] = "HOST",
};

static const char *metavar_of(const struct opt *o) {
        if (o->kind == ARG_OUTPUT)
                return kind_metavar[ARG_OUTPUT]; /* the optional value is the point */
        return o->metavar ? o->metavar : kind_metavar[o->kind];
}

static const struct opt *fragment_table(enum fragment f) {
        switch (f) {
        case FRAG_COLOR: return color_fragment;
        case FRAG_NVML: return nvml_fragment;
        case FRAG_COMMON: return common_fragment;
        case FRAG_OWN: break;
        }
        return NULL;
}

static int table_error(const struct cmd_spec *spec, const char *what, const char *name) {
        fprintf(stderr, "gpuvet %s: internal error: its option table %s (%s)\n", spec->name, what, name);
        return EXIT_INTERNAL;
}

/* The command's options, then the fragments it takes; a name or letter used twice is a
 * programming error: getopt would silently keep one of the two. */
static int merge(const struct cmd_spec *spec, struct merged *m, size_t *ret_n) {
        size_t n = 0;
        enum fragment frags[] = {FRAG_OWN, FRAG_COLOR, FRAG_NVML, FRAG_COMMON};
        for (size_t f = 0; f < ARRAY_COUNT(frags); f++) {
                if ((frags[f] == FRAG_NVML && !spec->nvml) || (frags[f] == FRAG_COLOR && !spec->color))
                        continue;
                const struct opt *t = frags[f] == FRAG_OWN ? spec->opts : fragment_table(frags[f]);
                for (const struct opt *o = t; o && o->name; o++) {
                        if (n + 1 >= MAX_OPTIONS)
                                return table_error(spec, "is too long", o->name);
                        for (size_t i = 0; i < n; i++) {
                                if (strcmp(m[i].o->name, o->name) == 0)
                                        return table_error(spec, "names an option twice", o->name);
                                if (o->letter && m[i].o->letter == o->letter)
                                        return table_error(spec, "gives a letter twice", o->name);
                        }
                        m[n++] = (struct merged){o, frags[f]};
                }
        }
        *ret_n = n;
        return 0;
}

static int getopt_value(const struct merged *m, size_t i) {
        return m[i].o->letter ? (unsigned char)m[i].o->letter : LONG_ONLY_BASE + (int)i;
}

/* The option as the user spelt it, for messages: "-l" or "--level". */
static void spelt(const struct opt *o, bool as_long, char *buf, size_t size) {
        if (as_long || !o->letter)
                snprintf(buf, size, "--%s", o->name);
        else
                snprintf(buf, size, "-%c", o->letter);
}

static void duration_words(uint64_t ms, char *buf, size_t size) {
        static const struct {
                uint64_t ms;
                const char *unit;
        } units[] = {{DAY_MS, "d"}, {3600000, "h"}, {60000, "m"}, {1000, "s"}};
        for (size_t i = 0; i < ARRAY_COUNT(units); i++)
                if (ms >= units[i].ms && ms % units[i].ms == 0) {
                        snprintf(buf, size, "%llu%s", (unsigned long long)(ms / units[i].ms), units[i].unit);
                        return;
                }
        snprintf(buf, size, "%llums", (unsigned long long)ms);
}

static void size_words(uint64_t bytes, char *buf, size_t size) {
        static const char units[] = "KMGT";
        int u = -1;
        while (u < 3 && bytes >= 1024 && bytes % 1024 == 0) {
                bytes /= 1024;
                u++;
        }
        if (u < 0)
                snprintf(buf, size, "%llu", (unsigned long long)bytes);
        else
                snprintf(buf, size, "%llu%c", (unsigned long long)bytes, units[u]);
}

/* "quick, standard or full" from "quick|standard|full". */
static void choices_words(const char *choices, char *buf, size_t size) {
        size_t n = 0, count = 1;
        for (const char *c = choices; *c; c++)
                count += *c == '|';
        size_t k = 0;
        buf[0] = '\0';
        for (const char *c = choices; *c && n + 8 < size;) {
                size_t len = strcspn(c, "|");
                const char *sep = k == 0 ? "" : k + 1 == count ? " or " : ", ";
                n += (size_t)snprintf(buf + n, size - n, "%s%.*s", sep, (int)len, c);
                k++;
                c += len + (c[len] == '|');
        }
}

/* The value's index among choices, or -1. */
static int choice_index(const char *choices, const char *value) {
        int i = 0;
        for (const char *c = choices; *c; i++) {
                size_t len = strcspn(c, "|");
                if (strlen(value) == len && strncmp(c, value, len) == 0)
                        return i;
                c += len + (c[len] == '|');
        }
        return -1;
}

static bool within(const struct opt *o, uint64_t v) { return v >= o->min && (o->max == 0 || v <= o->max); }

/* Check arg by o's kind into v; false after a message naming the option. */
static bool check_value(const struct cmd_spec *spec, const struct opt *o, const char *name, const char *arg,
                        struct opt_value *v) {
        char lo[32], hi[32], words[256];
        v->text = arg;
        v->n = 0;
        switch (o->kind) {
        case ARG_DURATION:
        case ARG_DURATION_MS: {
                bool bare = arg[0] && strspn(arg, "0123456789.") == strlen(arg);
                int r = parse_duration_ms(arg, &v->n);
                if (r == 0 && bare && o->kind == ARG_DURATION_MS)
                        v->n /= 1000; /* read as seconds: a bare number of an *-ms option is milliseconds */
                if (r == 0 && within(o, v->n))
                        return true;
                duration_words(o->min, lo, sizeof(lo));
                duration_words(o->max, hi, sizeof(hi));
                cmd_usage_error(spec->name, "%s: expected a duration from %s to %s (\"30s\", \"5m\", \"1h30m\"%s), not \"%s\"",
                                name, lo, hi, o->kind == ARG_DURATION_MS ? "; a bare number is milliseconds" : "", arg);
                return false;
        }
        case ARG_SIZE:
                if (parse_size_bytes(arg, &v->n) == 0 && within(o, v->n))
                        return true;
                size_words(o->min, lo, sizeof(lo));
                size_words(o->max, hi, sizeof(hi));
                cmd_usage_error(spec->name, "%s: expected a size from %s to %s (\"268435456\", \"256M\", \"1G\"), not \"%s\"",
                                name, lo, hi, arg);
                return false;
        case ARG_NUMBER:
                if (parse_u64(arg, &v->n) == 0 && strspn(arg, "0123456789") == strlen(arg) && within(o, v->n))
                        return true;
                if (o->max)
                        cmd_usage_error(spec->name, "%s: expected a whole number from %llu to %llu, not \"%s\"", name,
                                        (unsigned long long)o->min, (unsigned long long)o->max, arg);
                else
                        cmd_usage_error(spec->name, "%s: expected a whole number from %llu, not \"%s\"", name,
                                        (unsigned long long)o->min, arg);
                return false;
        case ARG_ENUM: {
                int i = choice_index(o->choices, arg);
                if (i >= 0) {
                        v->n = (uint64_t)i;
                        return true;
                }
                choices_words(o->choices, words, sizeof(words));
                cmd_usage_error(spec->name, "%s: expected %s, not \"%s\"", name, words, arg);
                return false;
        }
        case ARG_OUTPUT:
        case ARG_OUT_FILE:
                return output_path_usable(spec->name, name, arg) == 0;
        case ARG_FLAG:
                return true;
        case ARG_TEXT:
        case ARG_FILE:
        case ARG_DIR:
        case ARG_PROGRAM:
        case ARG_LIST:
        case ARG_HOST:
        case _ARG_KIND_COUNT:
                break;
        }
        if (*arg)
                return true;
        cmd_usage_error(spec->name, "%s: empty value", name);
        return false;
}

static int common_value(const struct cmd_spec *spec, const struct opt *o, const struct opt_value *v,
                        struct common_options *c) {
        if (strcmp(o->name, "timeout") == 0)
                c->timeout_s = opt_seconds(v);
        else if (strcmp(o->name, "root") == 0)
                c->root = v->text;
        else if (strcmp(o->name, "data-dir") == 0)
                c->data_dir = v->text;
        else if (strcmp(o->name, "help") == 0) {
                cmd_print_help(spec->help_spec ? spec->help_spec : spec, stdout);
                return EXIT_PASS;
        }
        return -1;
}

static void nvml_value(const struct opt *o, const struct opt_value *v, struct nvml_options *n) {
        if (strcmp(o->name, "nvml-lib") == 0)
                n->lib = v->text;
        else if (strcmp(o->name, "no-nvml") == 0)
                n->off = true;
        else if (strcmp(o->name, "nvml-call-timeout-ms") == 0)
                n->dl.call_ms = (unsigned)v->n;
        else if (strcmp(o->name, "nvml-gpu-timeout-ms") == 0)
                n->dl.gpu_ms = (unsigned)v->n;
        else if (strcmp(o->name, "nvml-init-timeout-ms") == 0)
                n->dl.init_ms = (unsigned)v->n;
}

/* Whether w is a cluster of short options ("-Zx") holding ch. */
static bool short_cluster(const char *w, int ch) {
        return w && w[0] == '-' && w[1] && w[1] != '-' && ch > 0 && ch < 256 && strchr(w + 1, ch);
}

/* getopt's complaint as a message naming what the user typed. getopt leaves optind on a
 * short option's cluster while letters remain in it, past it otherwise; a long option is
 * always behind optind. */
static int getopt_error(const struct cmd_spec *spec, int c, int argc, char **argv, const struct merged *m, size_t n) {
        if ((optind < argc && short_cluster(argv[optind], optopt)) ||
            (optind > 1 && optind - 1 < argc && short_cluster(argv[optind - 1], optopt))) {
                if (c == ':')
                        return cmd_usage_error(spec->name, "option -%c needs a value", optopt);
                return cmd_usage_error(spec->name, "unknown option -%c (see gpuvet %s --help)", optopt, spec->name);
        }
        const char *word = optind > 1 && optind - 1 < argc ? argv[optind - 1] : "";
        size_t len = strcspn(word, "=");
        if (c == ':')
                return cmd_usage_error(spec->name, "option %.*s needs a value", (int)len, word);
        if (word[len] == '=')
                for (size_t i = 0; i < n; i++)
                        if (m[i].o->kind == ARG_FLAG && strlen(m[i].o->name) >= len - 2 &&
                            strncmp(m[i].o->name, word + 2, len - 2) == 0)
                                return cmd_usage_error(spec->name, "option --%s takes no value", m[i].o->name);
        return cmd_usage_error(spec->name, "unknown option %.*s (see gpuvet %s --help)", (int)len, word, spec->name);
}

int cmd_parse(const struct cmd_spec *spec, int argc, char **argv, void *ctx, struct cmd_args *out) {
        memset(out, 0, sizeof(*out));
        common_options_init(&out->common);
        if (spec->no_default_timeout)
                out->common.timeout_s = 0;
        struct merged m[MAX_OPTIONS];
        size_t n;
        int code = merge(spec, m, &n);
        if (code)
                return code;
        struct option table[MAX_OPTIONS + 1];
        /* ':' first: getopt reports a missing value as ':' rather than '?'. */
        char shorts[3 * MAX_OPTIONS + 2] = ":";
        size_t ns = 1;
        for (size_t i = 0; i < n; i++) {
                const struct opt *o = m[i].o;
                int has = o->kind == ARG_FLAG ? no_argument : o->kind == ARG_OUTPUT ? optional_argument : required_argument;
                table[i] = (struct option){o->name, has, NULL, getopt_value(m, i)};
                if (o->letter) {
                        shorts[ns++] = o->letter;
                        if (has != no_argument)
                                shorts[ns++] = ':';
                        if (has == optional_argument)
                                shorts[ns++] = ':';
                }
        }
        table[n] = (struct option){0};
        shorts[ns] = '\0';

        /* 0, not 1: glibc then forgets a cluster an earlier parse stopped inside */
        optind = 0;
        opterr = 0;
        for (;;) {
                int longindex = -1;
                optopt = 0;
                int c = getopt_long(argc, argv, shorts, table, &longindex);
                if (c == -1)
                        break;
                if (c == '?' || c == ':')
                        return getopt_error(spec, c, argc, argv, m, n);
                size_t i = 0;
                while (i < n && getopt_value(m, i) != c)
                        i++;
                if (i == n)
                        return table_error(spec, "gave getopt a value it does not know", "?");
                const struct opt *o = m[i].o;
                char name[64];
                spelt(o, longindex >= 0, name, sizeof(name));
                const char *arg = optarg;
                if (o->kind == ARG_OUTPUT && !arg) {
                        /* --json [FILE|-]: the next word is its file unless it is an option. */
                        if (optind < argc && (strcmp(argv[optind], "-") == 0 || argv[optind][0] != '-'))
                                arg = argv[optind++];
                        else
                                arg = "-";
                } else if (arg && arg == argv[optind - 1] && arg[0] == '-' && arg[1]) {
                        /* A separate value that is an option: the user forgot the value, and
                         * taking the option as one would silently drop it. */
                        return cmd_usage_error(spec->name,
                                               "option %s needs a value, not the option \"%s\" (write %s%s%s for a "
                                               "value that starts with '-')",
                                               name, arg, name, longindex >= 0 ? "=" : "", metavar_of(o));
                }
                struct opt_value v = {.text = ""};
                if (o->kind != ARG_FLAG && !check_value(spec, o, name, arg, &v))
                        return EXIT_USAGE;
                if (m[i].frag == FRAG_COLOR) {
                        text_color_set((enum text_color_mode)v.n); /* the choices are in the enum's order */
                        continue;
                }
                if (m[i].frag == FRAG_NVML) {
                        nvml_value(o, &v, &out->nvml);
                        continue;
                }
                if (m[i].frag == FRAG_COMMON) {
                        if ((code = common_value(spec, o, &v, &out->common)) >= 0)
                                return code;
                        continue;
                }
                if ((code = spec->on_option(o->id ? o->id : (unsigned char)o->letter, &v, ctx)) >= 0)
                        return code;
        }
        out->first_operand = optind;
        out->operands = argv + optind;
        out->n_operands = (size_t)(argc - optind);
        if (!spec->takes_operands && optind < argc)
                return cmd_usage_error(spec->name, "unexpected argument \"%s\" (see gpuvet %s --help)", argv[optind],
                                       spec->name);
        return -1;
}

/* ---- help ---- */

#define HELP_WIDTH 80
#define HELP_COLUMN 28

/* Display columns of the UTF-8 text's first len bytes: one per character. */
static size_t columns(const char *s, size_t len) {
        size_t w = 0;
        for (size_t i = 0; i < len; i++)
                w += ((unsigned char)s[i] & 0xC0) != 0x80;
        return w;
}

/* text from column at, words wrapped at HELP_WIDTH, continuation lines at column indent. */
static void wrap(FILE *out, const char *text, size_t at, size_t indent) {
        size_t col = at;
        bool first = true;
        for (const char *p = text; *p;) {
                while (*p == ' ')
                        p++;
                if (*p == '\n') { /* an author's line break stays */
                        fputc('\n', out);
                        fprintf(out, "%*s", (int)indent, "");
                        col = indent;
                        first = true;
                        p++;
                        continue;
                }
                size_t len = strcspn(p, " \n");
                if (!len)
                        break;
                size_t w = columns(p, len);
                if (!first && col + 1 + w > HELP_WIDTH) {
                        fprintf(out, "\n%*s", (int)indent, "");
                        col = indent;
                        first = true;
                }
                if (!first) {
                        fputc(' ', out);
                        col++;
                }
                fwrite(p, 1, len, out);
                col += w;
                first = false;
                p += len;
        }
        fputc('\n', out);
}

/* Paragraphs separated by blank lines; a paragraph that starts with a space is kept as
 * written (examples, tables). */
static void paragraphs(FILE *out, const char *text) {
        for (const char *p = text; *p;) {
                const char *end = strstr(p, "\n\n");
                size_t len = end ? (size_t)(end - p) : strlen(p);
                char *para = strndup(p, len);
                if (!para)
                        return;
                fputc('\n', out);
                if (para[0] == ' ')
                        fprintf(out, "%s\n", para);
                else
                        wrap(out, para, 0, 0);
                free(para);
                p += len;
                while (*p == '\n')
                        p++;
        }
}

static void option_line(FILE *out, const struct opt *o, const char *help) {
        char left[128];
        int n = o->letter ? snprintf(left, sizeof(left), "  -%c, --%s", o->letter, o->name)
                          : snprintf(left, sizeof(left), "      --%s", o->name);
        const char *mv = metavar_of(o);
        if (mv && n > 0 && (size_t)n < sizeof(left))
                snprintf(left + n, sizeof(left) - (size_t)n, " %s", mv);
        char text[1024];
        if (o->def)
                snprintf(text, sizeof(text), "%s (default: %s)", help, o->def);
        else
                snprintf(text, sizeof(text), "%s", help);
        size_t w = columns(left, strlen(left));
        fputs(left, out);
        if (w + 2 > HELP_COLUMN) {
                fprintf(out, "\n%*s", HELP_COLUMN, "");
        } else {
                fprintf(out, "%*s", (int)(HELP_COLUMN - w), "");
        }
        wrap(out, text, HELP_COLUMN, HELP_COLUMN);
}

static void option_section(FILE *out, const char *title, const struct opt *t, const struct cmd_spec *spec) {
        if (!t || !t->name)
                return;
        /* query's own options and --help: one list */
        if (t != help_fragment || !spec->opts || !spec->opts->name)
                fprintf(out, "\n%s:\n", title);
        for (const struct opt *o = t; o->name; o++) {
                struct opt shown = cmd_shown_option(spec, o);
                option_line(out, &shown, shown.help);
        }
}

void cmd_print_help(const struct cmd_spec *spec, FILE *out) {
        const char *syn = spec->synopsis ? spec->synopsis : "[OPTIONS]";
        for (bool first = true; *syn; first = false) {
                size_t len = strcspn(syn, "\n");
                fprintf(out, "%s gpuvet %s %.*s\n", first ? "Usage:" : "      ", spec->name, (int)len, syn);
                syn += len + (syn[len] == '\n');
        }
        paragraphs(out, spec->summary);
        if (spec->description)
                paragraphs(out, spec->description);
        option_section(out, "Options", spec->opts, spec);
        if (spec->color)
                option_section(out, "Output options", color_fragment, spec);
        if (spec->nvml)
                option_section(out, "NVML options", nvml_fragment, spec);
        if (spec->help_only)
                option_section(out, "Options", help_fragment, spec);
        else
                option_section(out, "Common options", common_fragment, spec);
        if (spec->notes)
                paragraphs(out, spec->notes);
        if (spec->exit_status) {
                fputc('\n', out);
                char text[1024];
                snprintf(text, sizeof(text), "Exit status: %s", spec->exit_status);
                wrap(out, text, 0, 0);
        }
}

/* ---- the shared helpers ---- */

int cmd_json_option(int id, const struct opt_value *v, void *ctx) {
        if (id != 'j')
                return EXIT_INTERNAL; /* cmd_parse hands over only the table's own ids */
        *(const char **)ctx = v->text;
        return -1;
}

int cmd_parse_run(const struct cmd_spec *spec, int argc, char **argv, void *cli,
                  int (*run)(void *cli, const struct cmd_args *args)) {
        struct cmd_args args;
        int code = cmd_parse(spec, argc, argv, cli, &args);
        return code >= 0 ? code : run(cli, &args);
}

int cmd_show_machine(const struct cmd_spec *spec, int argc, char **argv, const char **json_path, struct machine *m) {
        *json_path = NULL;
        struct cmd_args args;
        int code = cmd_parse(spec, argc, argv, json_path, &args);
        if (code >= 0)
                return code;
        code = machine_read(spec->name, &args.common, &args.nvml, m);
        return code ? code : -1;
}

int cmd_usage_error(const char *cmd, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "gpuvet %s: ", cmd);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
        return EXIT_USAGE;
}

int cmd_backend_option(const char *cmd, const char *arg, const char **ret) {
        if (strcmp(arg, "cuda") && strcmp(arg, "opencl") && strcmp(arg, "auto"))
                return cmd_usage_error(cmd, "--backend: expected cuda, opencl or auto, not \"%s\"", arg);
        *ret = arg;
        return -1;
}

bool cmd_parse_uint(const char *s, unsigned min, unsigned max, unsigned *ret) {
        uint64_t v;
        if (parse_u64(s, &v) < 0 || v < min || v > max)
                return false;
        *ret = (unsigned)v;
        return true;
}

bool cmd_parse_device_list(const char *s, int max, int *out, size_t *ret_n) {
        uint64_t mask[CMD_MAX_DEVICES / 64] = {0};
        unsigned count, all;
        if (max < 1 || max > CMD_MAX_DEVICES || !*s || parse_cpulist(s, mask, (unsigned)max, &count) < 0 ||
            count == 0)
                return false;
        /* every index listed, counted without the bound: one past max is refused, not dropped */
        if (parse_cpulist(s, NULL, 0, &all) < 0 || all != count)
                return false;
        size_t n = 0;
        for (int i = 0; i < max; i++)
                if (mask[i / 64] >> (i % 64) & 1)
                        out[n++] = i;
        *ret_n = n;
        return true;
}

/* ---- the tables as data, for the man pages and completions ---- */

const struct opt *cmd_fragment(enum cmd_fragment_id which) {
        switch (which) {
        case CMD_FRAGMENT_COMMON: return common_fragment;
        case CMD_FRAGMENT_NVML: return nvml_fragment;
        case CMD_FRAGMENT_HELP_ONLY: return help_fragment;
        case CMD_FRAGMENT_COLOR: return color_fragment;
        }
        return NULL;
}

struct opt cmd_shown_option(const struct cmd_spec *spec, const struct opt *o) {
        struct opt shown = *o;
        if (o != &common_fragment[0])
                return shown;
        /* 30 s is not the default of a command with its own deadlines: its timeout_help says
         * what is. */
        if (spec->no_default_timeout || spec->timeout_help)
                shown.def = NULL;
        if (spec->timeout_help)
                shown.help = spec->timeout_help;
        return shown;
}
const char *cmd_opt_metavar(const struct opt *o) { return metavar_of(o); }

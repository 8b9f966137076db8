/* The option parsing of the commands not yet converted to typed tables (cmd/options.h):
 * their getopt tables and hand-written usage. Goes when the last one is converted. */
#include "cmd/options.h"
#include "core/strparse.h"

#include <stdio.h>
#include <string.h>

int legacy_cmd_parse(const struct cmd_spec *spec, int argc, char **argv, void *ctx, struct cmd_args *out);

static const struct option common_fragment[] = {
        {"timeout", required_argument, NULL, 'T'},
        {"root", required_argument, NULL, 'r'},
        {"data-dir", required_argument, NULL, 'D'},
        {"help", no_argument, NULL, 'h'},
};
static const char common_short[] = "T:r:h";

static const struct option nvml_fragment[] = {
        {"nvml-lib", required_argument, NULL, 'N'},
        {"no-nvml", no_argument, NULL, 'n'},
        {"nvml-call-timeout-ms", required_argument, NULL, 'c'},
        {"nvml-gpu-timeout-ms", required_argument, NULL, 'g'},
        {"nvml-init-timeout-ms", required_argument, NULL, 'i' | 0x100},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_OPTIONS 64

static bool in_fragment(int val, const struct option *frag, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (frag[i].val == val)
                        return true;
        return false;
}

/* A value the command's table gives that a fragment it takes already uses: the command
 * would silently lose one of the two options. */
static bool collides(const struct cmd_spec *spec, int val) {
        return in_fragment(val, common_fragment, COUNT(common_fragment)) ||
               (spec->nvml && in_fragment(val, nvml_fragment, COUNT(nvml_fragment)));
}

static int table_error(const struct cmd_spec *spec, const char *what) {
        fprintf(stderr, "gpuvet %s: internal error: its option %s is also a shared option's\n", spec->name, what);
        return EXIT_INTERNAL;
}

/* The command's options, then the fragments, then the terminator. */
static int build_table(const struct cmd_spec *spec, struct option *table, char *shorts, size_t shorts_size) {
        size_t n = 0;
        for (const struct option *o = spec->own; o && o->name; o++) {
                if (collides(spec, o->val))
                        return table_error(spec, o->name);
                if (n + COUNT(common_fragment) + COUNT(nvml_fragment) + 1 >= MAX_OPTIONS)
                        return table_error(spec, "table (too long)");
                table[n++] = *o;
        }
        for (const char *s = spec->short_opts; s && *s; s++) {
                char letter[2] = {*s, '\0'};
                if (*s != ':' && collides(spec, *s))
                        return table_error(spec, letter);
        }
        for (size_t i = 0; i < COUNT(common_fragment); i++)
                table[n++] = common_fragment[i];
        for (size_t i = 0; spec->nvml && i < COUNT(nvml_fragment); i++)
                table[n++] = nvml_fragment[i];
        table[n] = (struct option){0};
        /* ':' first: getopt reports a missing value as ':' rather than '?'. */
        snprintf(shorts, shorts_size, ":%s%s", common_short, spec->short_opts ? spec->short_opts : "");
        return 0;
}

int legacy_cmd_parse(const struct cmd_spec *spec, int argc, char **argv, void *ctx, struct cmd_args *out) {
        memset(out, 0, sizeof(*out));
        common_options_init(&out->common);
        if (spec->no_default_timeout)
                out->common.timeout_s = 0;
        struct option table[MAX_OPTIONS];
        char shorts[64];
        int code = build_table(spec, table, shorts, sizeof(shorts));
        if (code)
                return code;
        optind = 1;
        opterr = 0;
        int opt;
        while ((opt = getopt_long(argc, argv, shorts, table, NULL)) != -1) {
                bool own = opt != '?' && opt != ':' && !collides(spec, opt);
                if (own) {
                        if ((code = spec->own_option(opt, optarg, ctx)) >= 0)
                                return code;
                        continue;
                }
                if (spec->nvml && (code = nvml_option(spec->name, opt, &out->nvml)) != 0) {
                        if (code < 0)
                                return EXIT_USAGE;
                        continue;
                }
                if ((code = common_option(spec->name, opt, spec->usage, &out->common, argv)) >= 0)
                        return code;
        }
        out->first_operand = optind;
        if (!spec->operands && (code = common_no_operands(spec->name, argc, argv)) >= 0)
                return code;
        return -1;
}

int cmd_json_flag(int opt, const char *arg, void *ctx) {
        (void)arg;
        if (opt != 'J')
                return EXIT_INTERNAL; /* cmd_parse hands over only the table's own values */
        *(bool *)ctx = true;
        return -1;
}


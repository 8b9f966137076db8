#include "sys/cuda_env.h"
#include "core/array.h"
#include "core/fsroot.h"
#include "core/strv.h"
#include "sys/facts.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The families of variables the CUDA driver, its tools and the profilers read. */
static bool is_cuda_name(const char *name, size_t len) {
        static const char *const prefixes[] = {"CUDA_", "NSIGHT_", "COMPUTE_PROFILE", "OPENCL_PROFILE"};
        for (size_t i = 0; i < ARRAY_COUNT(prefixes); i++) {
                size_t plen = strlen(prefixes[i]);
                if (len >= plen && strncmp(name, prefixes[i], plen) == 0)
                        return true;
        }
        return false;
}

static bool is_name_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* "NAME=value" (value possibly quoted) -> the variable, if it is one of ours. */
static int add_assignment(struct cuda_env_facts *x, const char *text, size_t len, const char *where) {
        size_t name_len = 0;
        while (name_len < len && is_name_char(text[name_len]))
                name_len++;
        if (name_len == 0 || name_len >= len || text[name_len] != '=' || !is_cuda_name(text, name_len) ||
            name_len >= sizeof(x->vars[0].name))
                return 0;
        struct cuda_env_var *grown = realloc(x->vars, (x->n + 1) * sizeof(*grown));
        if (!grown)
                return -ENOMEM;
        x->vars = grown;
        struct cuda_env_var *v = &x->vars[x->n++];
        memset(v, 0, sizeof(*v));
        memcpy(v->name, text, name_len);
        const char *val = text + name_len + 1;
        size_t val_len = len - name_len - 1;
        if (val_len >= 2 && (val[0] == '"' || val[0] == '\'') && val[val_len - 1] == val[0]) {
                val++;
                val_len -= 2;
        }
        if (val_len >= sizeof(v->value))
                val_len = sizeof(v->value) - 1;
        memcpy(v->value, val, val_len);
        snprintf(v->where, sizeof(v->where), "%s", where);
        return 0;
}

static int gather_environ(struct fsroot *fs, struct cuda_env_facts *x) {
        char *text;
        size_t len;
        int r = fsroot_read_alloc(fs, "/proc/self/environ", &text, &len);
        if (r < 0) {
                x->environ_errno = -r;
                return r == -ENOMEM ? r : 0;
        }
        for (size_t at = 0; at < len;) {
                size_t n = strnlen(text + at, len - at);
                if ((r = add_assignment(x, text + at, n, "environment")) < 0)
                        break;
                at += n + 1;
        }
        free(text);
        return r < 0 ? r : 0;
}

/* Shell-ish files: "NAME=value" or "export NAME=value" lines. Anything more elaborate
 * (conditionals, expansions) is taken line by line as written: a static reading. */
static int gather_assignments(struct fsroot *fs, struct cuda_env_facts *x, const char *path) {
        char *text;
        if (fsroot_read_alloc(fs, path, &text, NULL) < 0)
                return 0; /* absent or unreadable: nothing set there that we can see */
        int r = 0, lineno = 0;
        char *save = NULL;
        for (char *line = text; line && r == 0; line = save) {
                char *nl = strchr(line, '\n');
                save = nl ? nl + 1 : NULL;
                if (nl)
                        *nl = '\0';
                lineno++;
                while (*line == ' ' || *line == '\t')
                        line++;
                if (strncmp(line, "export", 6) == 0 && (line[6] == ' ' || line[6] == '\t')) {
                        line += 6;
                        while (*line == ' ' || *line == '\t')
                                line++;
                }
                size_t len = strlen(line);
                while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r' ||
                                   line[len - 1] == ';'))
                        len--;
                char where[160];
                snprintf(where, sizeof(where), "%s:%d", path, lineno);
                r = add_assignment(x, line, len, where);
        }
        free(text);
        return r;
}

int cuda_env_gather(struct fsroot *fs, struct facts *f) {
        struct cuda_env_facts *x = &f->cuda_env;
        int r;
        if ((r = gather_environ(fs, x)) < 0 || (r = gather_assignments(fs, x, "/etc/environment")) < 0)
                return r;
        char **names;
        if (fsroot_list(fs, "/etc/profile.d", &names) < 0)
                return 0;
        for (char **n = names; *n && r == 0; n++) {
                size_t len = strlen(*n);
                if (len < 4 || strcmp(*n + len - 3, ".sh") != 0)
                        continue; /* profile sources *.sh only */
                char path[300];
                snprintf(path, sizeof(path), "/etc/profile.d/%s", *n);
                r = gather_assignments(fs, x, path);
        }
        strv_free(names);
        return r;
}

void cuda_env_facts_done(struct cuda_env_facts *x) {
        free(x->vars);
        memset(x, 0, sizeof(*x));
}

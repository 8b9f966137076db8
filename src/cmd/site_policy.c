#include "cmd/site_policy.h"
#include "cmd/cmd.h"
#include "core/array.h"
#include "core/fsroot.h"
#include "policy/policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The default policy under the root, named in messages as the operator
 * would find it. -ENOENT when there is none. */
static int read_default_policy(struct fsroot *fs, char *name, size_t size, struct policy *p, char **errors) {
        static const char *const defaults[] = {"/etc/gpuvet/policy.yaml", "/etc/gpuvet/policy.yml"};
        for (size_t i = 0; i < ARRAY_COUNT(defaults); i++) {
                char *text = NULL;
                size_t len = 0;
                int r = fsroot_read_alloc(fs, defaults[i], &text, &len);
                if (r == -ENOENT)
                        continue;
                snprintf(name, size, "%s%s", fsroot_is_live(fs) ? "" : fsroot_dir(fs), defaults[i]);
                if (r == 0)
                        r = policy_parse(name, text, len, p, errors);
                free(text);
                return r;
        }
        return -ENOENT;
}

int site_policy_load(const char *cmd, const char *path, bool no_policy, struct fsroot *fs, struct policy *p,
                     bool *loaded) {
        *loaded = false;
        if (!path && no_policy)
                return EXIT_PASS;
        char name[4096];
        char *errors = NULL;
        int r;
        if (path) {
                snprintf(name, sizeof(name), "%s", path);
                r = policy_load(path, p, &errors);
        } else {
                r = read_default_policy(fs, name, sizeof(name), p, &errors);
                if (r == -ENOENT)
                        return EXIT_PASS;
        }
        if (r == -EINVAL && errors) {
                fputs(errors, stderr);
                fprintf(stderr, "gpuvet %s: the site policy %s has problems (above): fix them%s\n", cmd, name,
                        path ? "" : ", or run with --no-policy");
                free(errors);
                return EXIT_USAGE;
        }
        if (r < 0) {
                fprintf(stderr, "gpuvet %s: policy %s: %s\n", cmd, name, strerror(-r));
                return r == -ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
        }
        *loaded = true;
        return EXIT_PASS;
}

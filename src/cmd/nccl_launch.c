#include "cmd/nccl_launch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

int nccl_launch_detect(const char *spec, unsigned join_timeout_s, struct nccl_launch *ret, char *err,
                       size_t errsize) {
        *ret = (struct nccl_launch){.launcher = "single process", .nranks = 1, .local_size = 1, .nodes = 1,
                                    .join_timeout_s = join_timeout_s};
        (void)spec;
        (void)err;
        (void)errsize;
        return 0;
}

int nccl_launch_get_id(void *launch, struct coll_lib *lib, unsigned char id[COLL_ID_BYTES], char *err,
                       size_t errsize) {
        (void)launch;
        (void)lib;
        (void)id;
        snprintf(err, errsize, "multi-process runs are not built yet");
        return -ENOTSUP;
}

char **nccl_launch_environment(void) {
        size_t n = 0;
        for (char **e = environ; *e; e++)
                n += strncmp(*e, "NCCL_", 5) == 0;
        char **out = calloc(n + 1, sizeof(*out));
        if (!out)
                return NULL;
        size_t k = 0;
        for (char **e = environ; *e && k < n; e++)
                if (strncmp(*e, "NCCL_", 5) == 0 && (out[k] = strdup(*e)) != NULL)
                        k++;
        return out;
}

void nccl_launch_done(struct nccl_launch *l) {
        (void)l;
}

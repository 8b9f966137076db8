#include "cmd/cmd.h"

#include <stdio.h>

int cmd_snapshot(int argc, char **argv) {
        (void)argc;
        (void)argv;
        fprintf(stderr, "gpuvet snapshot: not built yet\n");
        return EXIT_INTERNAL;
}

#include "cmd/cmd.h"

#include <stdio.h>

int cmd_detect(int argc, char **argv) {
        (void)argc;
        (void)argv;
        fprintf(stderr, "gpuvet detect: not built yet\n");
        return EXIT_INTERNAL;
}

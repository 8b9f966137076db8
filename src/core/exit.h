/* gpuvet's exit status: 0 pass, 1 a check failed, 2 usage or bad input, 3 internal error.
 * In core/ because the children and screens that end a command (serve's periodic check,
 * top's screen) report it too, and they sit below cmd/. */
#pragma once

enum exit_code {
        EXIT_PASS = 0,
        EXIT_FAILED = 1,
        EXIT_USAGE = 2,
        EXIT_INTERNAL = 3,
};

/* libFuzzer target: the Accept header negotiation of gpuvet serve (src/serve/accept.c), an
 * untrusted header of any length and bytes. The input is the header as is (not
 * NUL-terminated: the parser takes a length). */
#include "serve/accept.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool names_openmetrics(const char *s, size_t n) {
        static const char want[] = "application/openmetrics-text";
        for (size_t i = 0; i + sizeof(want) - 1 <= n; i++)
                if (strncasecmp(s + i, want, sizeof(want) - 1) == 0)
                        return true;
        return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *copy = malloc(size + 1);
        if (!copy)
                return 0;
        if (size)
                memcpy(copy, data, size);
        copy[size] = '\0';
        enum expo_format f = accept_format(copy, size);
        if (f != EXPO_TEXT && f != EXPO_OPENMETRICS)
                abort();
        /* OpenMetrics only when the header names it (media types ignore case). */
        if (f == EXPO_OPENMETRICS && !names_openmetrics(copy, size))
                abort();
        if (!expo_content_type(f))
                abort();
        free(copy);
        return 0;
}

/* libFuzzer target: the --check-report reader of gpuvet serve (src/serve/check_status.c):
 * a check report's bytes, any of them. */
#include "serve/check_status.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct check_status_set set;
        char err[256];
        if (check_status_parse((const char *)data, size, &set, err, sizeof(err)) != 0) {
                if (!err[0])
                        abort(); /* a refusal always says why */
                return 0;
        }
        for (size_t i = 0; i < set.n; i++) {
                if (!set.items[i].id[0] || set.items[i].status >= _STATUS_COUNT)
                        abort();
                if (i > 0 && strcmp(set.items[i - 1].id, set.items[i].id) >= 0)
                        abort(); /* sorted, each id once */
        }
        check_status_done(&set);
        return 0;
}

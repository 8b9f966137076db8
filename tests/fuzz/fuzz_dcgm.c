/* libFuzzer target: the dcgmi diag -j reader behind dcgm.diag (src/sys/dcgm_diag.c),
 * text before the document and GPU id lists included. */
#include "sys/dcgm_diag.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct dcgm_diag d;
        char err[256];
        if (dcgm_diag_parse((const char *)data, size, &d, err, sizeof(err)) != 0) {
                if (d.results || d.n)
                        abort(); /* a refused document leaves nothing behind */
                return 0;
        }
        if (strlen(d.preamble) >= sizeof(d.preamble) || strchr(d.preamble, '\n'))
                abort(); /* one line of what came before the document */
        for (size_t i = 0; i < d.n; i++) {
                const struct dcgm_result *r = &d.results[i];
                if (strlen(r->test) >= sizeof(r->test) || strlen(r->message) >= sizeof(r->message) ||
                    r->entity_id < -1 || (r->entity_id >= 0) != (r->entity[0] != '\0'))
                        abort(); /* an entity id comes with its group, and only then */
        }
        dcgm_diag_done(&d);
        return 0;
}

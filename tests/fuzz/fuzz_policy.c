/* libFuzzer target: parse a site policy (src/policy/policy.c) from the input. A refusal
 * must name the input and a line for every problem; an accepted policy must hold what its
 * readers rely on (every exception complete, every matrix sized to its devices). */
#include "policy/policy.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct policy p;
        char *errors = NULL;
        int r = policy_parse("fuzz", (const char *)data, size, &p, &errors);
        if (r == -ENOMEM)
                return 0;
        if (r < 0) {
                if (r != -EINVAL || !errors || strncmp(errors, "fuzz:", 5) != 0)
                        abort();
                for (const char *line = errors; *line; line = strchr(line, '\n') + 1)
                        if (strncmp(line, "fuzz:", 5) != 0 || !strchr(line, '\n'))
                                abort();
                free(errors);
                return 0;
        }
        if (errors || p.version != POLICY_FORMAT_VERSION)
                abort();
        for (size_t i = 0; i < p.n_exceptions; i++)
                if (!p.exceptions[i].check || !p.exceptions[i].subject || !p.exceptions[i].reason)
                        abort();
        const struct policy_reference *ref = &p.reference;
        for (size_t i = 0; i < ref->n_gpus; i++)
                if (!ref->gpus[i].bus_id || !ref->gpus[i].device_id || !ref->gpus[i].model)
                        abort();
        if (ref->n_topo && !ref->pcie)
                abort();
        for (size_t i = 0; ref->pcie && i < ref->n_topo * ref->n_topo; i++)
                if (ref->pcie[i] > 5)
                        abort();
        policy_free(&p);
        return 0;
}

/* libFuzzer target: scontrol's node record parser behind slurm-health (src/slurm/node_state.c),
 * then the decision and the drain reason on what it read. The input's first line names the
 * node looked for; the whole input is also searched for "gpunode1". */
#include "slurm/decide.h"
#include "slurm/drain_reason.h"
#include "slurm/node_state.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(const char *text, size_t len, const char *name) {
        struct slurm_node n;
        int rc = slurm_node_parse(text, len, name, &n);
        if (rc != 0)
                return;
        if (strlen(n.state) == 0 || strlen(n.state) >= sizeof(n.state))
                abort(); /* the parser promised a non-empty state that fits */
        for (int healthy = 0; healthy <= 1; healthy++) {
                struct slurm_decision d = slurm_decide(&n, healthy, "gpuvet: gpu.xid");
                if (!d.why || d.action >= _SLURM_ACTION_COUNT)
                        abort();
                if (d.action == SLURM_ACTION_RESUME && !slurm_reason_is_ours(n.reason))
                        abort(); /* never resume a drain that is not gpuvet's */
                if (d.action != SLURM_ACTION_NONE && (n.flags & (SLURM_NODE_DOWN | SLURM_NODE_FAIL)))
                        abort(); /* never touch a DOWN or FAIL node */
        }
        if (n.reason) {
                const char *ids[] = {n.reason, n.state};
                char buf[SLURM_REASON_MAX + 1];
                slurm_reason_build(buf, sizeof(buf), ids, 2, n.reason);
                if (strlen(buf) > SLURM_REASON_MAX || !slurm_reason_is_ours(buf))
                        abort();
        }
        slurm_node_done(&n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        one(text, size, "gpunode1");
        const char *nl = memchr(text, '\n', size);
        if (nl && nl - text < 200) {
                char name[200];
                memcpy(name, text, (size_t)(nl - text));
                name[nl - text] = '\0';
                one(nl + 1, size - (size_t)(nl - text) - 1, name);
        }
        free(text);
        return 0;
}

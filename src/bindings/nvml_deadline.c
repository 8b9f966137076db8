#include "bindings/nvml_deadline.h"

#include <stdlib.h>

void nvml_deadlines_normalise(const struct nvml_deadlines *in, struct nvml_deadlines *out) {
        *out = in ? *in : (struct nvml_deadlines){0};
        if (out->call_ms == 0)
                out->call_ms = NVML_DEADLINE_CALL_MS_DEFAULT;
        if (out->gpu_ms == 0)
                out->gpu_ms = NVML_DEADLINE_GPU_MS_DEFAULT;
        if (out->init_ms == 0)
                out->init_ms = NVML_DEADLINE_INIT_MS_DEFAULT;
}

int nvml_run_one(unsigned int call_ms, void (*work)(struct deadline_worker *w, void *block),
                 void (*publish)(void *block, void *dest, unsigned int index, const char *hung,
                                 unsigned int elapsed_ms, void *userdata),
                 void *block, void *dest, struct deadline_outcome *ret_o) {
        struct deadline_spec spec = {.call_ms = call_ms, .work = work, .publish = publish, .free_block = free};
        void *blocks[1] = {block}, *dests[1] = {dest};
        return deadline_run(&spec, 1, blocks, dests, ret_o);
}

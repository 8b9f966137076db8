/* The inputs' own dependencies and names (inputs.def). */
#include "sys/inputs.h"

#include <stddef.h>

static const input_set deps_of[INPUT_COUNT] = {
#define INPUT(id, member, phase, live, worst_ms, deps, gather, done) [INPUT_##id] = (deps),
#include "sys/inputs.def"
#undef INPUT
};

static const char *const names[INPUT_COUNT] = {
#define INPUT(id, member, phase, live, worst_ms, deps, gather, done) [INPUT_##id] = #id,
#include "sys/inputs.def"
#undef INPUT
};

input_set inputs_closure(input_set needs) {
        input_set before;
        do {
                before = needs;
                for (size_t i = 0; i < INPUT_COUNT; i++)
                        if (needs & (1u << i))
                                needs |= deps_of[i];
        } while (needs != before);
        return needs;
}

const char *input_name(enum input_id id) { return (unsigned)id < INPUT_COUNT ? names[id] : "?"; }

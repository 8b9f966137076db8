/* The inputs a check can judge (inputs.def): their ids, need bits and phases. */
#pragma once

#include <stdbool.h>

/* When in check's pipeline an input is read. */
enum input_phase {
        INPUT_PHASE_FIRST,  /* before anything: it decides what else runs */
        INPUT_PHASE_FORK,   /* a child forked before any thread, held until the facts are in */
        INPUT_PHASE_THREAD, /* on a thread of its own while the facts are gathered */
        INPUT_PHASE_FACTS,  /* the file-system facts, facts_gather, one after the other */
        INPUT_PHASE_LOAD,   /* after the facts, loading the GPUs: one at a time */
};

enum input_id {
#define INPUT(id, member, phase, live, worst_ms, deps, gather, done) INPUT_##id,
#include "sys/inputs.def"
#undef INPUT
        INPUT_COUNT
};

/* One bit per input: what a check's CHECK_INFO names in its needs. An enum constant must
 * fit an int. */
enum input_need {
#define INPUT(id, member, phase, live, worst_ms, deps, gather, done) NEED_##id = 1 << INPUT_##id,
#include "sys/inputs.def"
#undef INPUT
};
_Static_assert(INPUT_COUNT < 31, "the need bits must fit an int");

typedef unsigned input_set; /* NEED_* bits */

/* What every gatherer may read (facts_gather's order guarantees them). */
#define INPUTS_FACTS_BASE ((input_set)(NEED_HOST | NEED_PCI | NEED_GPUS))
/* What every run reads whatever checks it selects: the report's header and its host and
 * GPU sections show the host, PCI, GPU and NUMA facts, and the site policy decides which
 * checks run. */
#define INPUTS_ALWAYS ((input_set)(INPUTS_FACTS_BASE | NEED_NUMA | NEED_POLICY))
#define INPUTS_ALL ((input_set)((1u << INPUT_COUNT) - 1))
/* The device probes' bits, in the order of bench/probes.h's enum probe_id. */
#define INPUTS_PROBES ((input_set)(NEED_PROBE_FUNCTIONAL | NEED_PROBE_TRANSFER | NEED_PROBE_MEMORY | NEED_PROBE_P2P))

/* needs with every input they read themselves (inputs.def's deps), transitively. */
input_set inputs_closure(input_set needs);
const char *input_name(enum input_id id);

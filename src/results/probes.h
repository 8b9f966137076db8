/* The device probes' facts (bench/probes.h runs them), as the checks of checks/device.c and
 * pcie.link_under_load judge them, with the pure lookups they use. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "results/measurement.h"

enum probe_id {
        PROBE_FUNCTIONAL,
        PROBE_TRANSFER,
        PROBE_MEMORY,
        PROBE_P2P,
        _PROBE_COUNT,
};

struct probe_run {
        const char *name;     /* "functional", "transfer", "memory", "p2p" */
        bool ran;
        unsigned timeout_s;
        double duration_ms;
        size_t first, count;  /* its measurements in probe_facts.rep */
        char backend[16];     /* the backend its child used, "" when none opened */
        char note[256];       /* runner-level failure ("timed out after 15 s in probe-transfer"), "" */
        char not_run[160];    /* why it did not run, "" when it ran */
};

struct probe_facts {
        char backend[16];            /* asked: "auto", "cuda", "opencl" */
        char skip_reason[256];       /* why no probe ran at all, "" when they ran */
        struct bench_report rep;     /* the judged measurements of every probe */
        struct probe_run runs[_PROBE_COUNT];
        double duration_ms;
};

/* A set of probes: bit (1u << id) per enum probe_id. */
#define PROBE_BIT(id) (1u << (id))

/* ---- lookups for the checks (pure) ---- */

/* The measurement bench/name of the GPU at PCI address bus (subject "gpuN (bus)"); for
 * a pair ("gpuA->gpuB", parameter "from"), of the source GPU. NULL when absent. With after, the next one after that
 * measurement (several p2p measurements per source GPU). */
const struct measurement *probe_find(const struct probe_facts *p, const char *bench, const char *name,
                                     const char *bus, const struct measurement *after);
/* The value of a measurement's parameter, "" when absent. */
const char *probe_param(const struct measurement *m, const char *key);
/* Whether PCI addresses a and b name the same function (case and domain width aside). */
bool probe_same_bus(const char *a, const char *b);
/* The GPUs the functional probe reached (opened or probed at a PCI address). */
size_t probes_count_probed(const struct probe_facts *p);
/* True when no device of the node was probed; why says why ("no GPU device for the probes
 * (only a CPU OpenCL device: ...)", the backends' errors, the skip reason). */
bool probes_no_gpu(const struct probe_facts *p, char *why, size_t size);

/* The GPU side of gpuvet tune: persistence mode, power limit and applications clocks,
 * read and set through NVML, every call under a deadline (core/deadline.h).
 *
 * GPUs are named by PCI address (stable across reboots and driver reloads, unlike NVML's
 * index), and every operation looks its handle up again by that address: NVML documents
 * that turning persistence off on a GPU with its own NUMA memory invalidates the handle.
 *
 * Values are text, compared as text by tune: "on"/"off"; "700 W" (or "69.62 W");
 * "memory 2619 MHz, graphics 1755 MHz". A value read is always in that form, so a value
 * written back (revert) parses. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct fsroot;

struct tune_gpu_options {
        const char *lib;      /* --nvml-lib, NULL: $GPUVET_NVML_LIB, then the sonames */
        bool off;             /* --no-nvml */
        unsigned call_ms;     /* one NVML call (0: the default) */
        unsigned init_ms;     /* nvmlInit_v2 (0: the default) */
};

enum tune_gpu_attr { TUNE_GPU_PERSISTENCE, TUNE_GPU_POWER_LIMIT, TUNE_GPU_APP_CLOCKS, TUNE_GPU_ATTR_COUNT };

/* The attribute's name in target paths: "persistence_mode", "power_limit", "applications_clocks". */
const char *tune_gpu_attr_name(enum tune_gpu_attr a);

struct tune_gpus;

/* Load NVML and list the GPUs. Under a --root that is not this machine NVML is asked only
 * when a library is named (--nvml-lib or $GPUVET_NVML_LIB), as for check. Never fails for
 * want of NVML: tune_gpus_unavailable() then says why. NULL only when memory ran out. */
struct tune_gpus *tune_gpus_open(const struct tune_gpu_options *o, struct fsroot *fs);

/* NULL when NVML answered, else one line saying why the GPUs cannot be set. */
const char *tune_gpus_unavailable(const struct tune_gpus *g);

size_t tune_gpus_count(const struct tune_gpus *g);
/* GPU i's PCI address in sysfs form ("0000:18:00.0"), or "indexN" for one NVML lists but
 * cannot place (fallen off the bus): then tune_gpus_problem says why, and reads and
 * writes of it fail with that. */
const char *tune_gpus_bus_id(const struct tune_gpus *g, size_t i);
const char *tune_gpus_problem(const struct tune_gpus *g, size_t i);

/* What a GPU accepts, for judging a wanted value; a flag false when NVML does not say. */
struct tune_gpu_limits {
        bool power;                       /* min, max, default limit read */
        unsigned min_mw, max_mw, default_mw;
        bool clocks_default;              /* default applications clocks read */
        unsigned default_mem_mhz, default_gr_mhz;
        bool clocks_max;                  /* the supported clock lists read */
        unsigned max_mem_mhz, max_gr_mhz; /* the highest memory clock, and graphics clock for it */
        char why_power[160], why_clocks[160]; /* when a flag is false: why */
};

/* Read the attribute into buf (the forms above). 0, or a negative errno with err saying
 * what NVML answered: -ENOTSUP not supported, -EACCES no permission, -ETIMEDOUT the call
 * hung (NVML is abandoned: every later call fails at once), -EIO anything else. */
int tune_gpus_read(struct tune_gpus *g, const char *bus_id, enum tune_gpu_attr a, char *buf, size_t size, char *err,
                   size_t errlen);
/* Set it to value (a form above). Same returns; -EINVAL for a value that does not parse. */
int tune_gpus_write(struct tune_gpus *g, const char *bus_id, enum tune_gpu_attr a, const char *value, char *err,
                    size_t errlen);
void tune_gpus_limits(struct tune_gpus *g, const char *bus_id, struct tune_gpu_limits *out);

/* Value forms. */
void tune_gpu_format_power(unsigned mw, char *buf, size_t size);
int tune_gpu_parse_power(const char *text, unsigned *mw); /* "700 W", "69.62 W", "700W", "700" */
void tune_gpu_format_clocks(unsigned mem_mhz, unsigned gr_mhz, char *buf, size_t size);
int tune_gpu_parse_clocks(const char *text, unsigned *mem_mhz, unsigned *gr_mhz); /* the form, or "MEM,GR" */

/* nvmlShutdown and unload, unless a call hung. Returns true when one hung: then the caller
 * must leave with _exit (the stuck thread may hold NVML's locks). Accepts NULL. */
bool tune_gpus_close(struct tune_gpus *g);

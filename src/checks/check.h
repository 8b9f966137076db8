/* A check: a descriptor plus a pure function of the facts.
 *
 * Each category file (src/checks/<category>.c) defines one `const struct check_info
 * check_<name>` per check; checks.def lists them in report order. run() appends one
 * result per subject it judges (see core/result.h) and does no I/O. */
#pragma once

#include "core/result.h"
#include "results/policy.h"
#include "sys/facts.h"

/* What a check reads beyond the facts every run gathers (INPUTS_ALWAYS: host, PCI, GPUs,
 * NUMA, the site policy) is named in its descriptor as NEED_* bits of sys/inputs.def, so
 * that a command gathers only what its selected checks need (`check --only cpu` reads no
 * RDMA port and never loads NVML):
 * - needs: what must be read for the check to judge; selecting the check makes it run.
 * - uses: what it also judges when another selected check made it run, never run for it
 *   (gpu.temperature judges the stress test's peak when burn.* ran).
 * tests/golden/test_check_needs.py runs every check with what it did not declare poisoned. */

/* The NVML groups checks judge: all but those only info, query and the sampler show.
 * Reading no more takes 21 calls off each GPU (of 100). tests/layout/test_check_nvml_groups.py
 * fails when a check, or the report check writes, uses a fact of a group left out here. */
#define CHECK_NVML_GROUPS                                                                                  \
        (NVML_GROUPS_ALL &                                                                                 \
         ~(nvml_group_bit(NVML_GROUP_SERIAL) | nvml_group_bit(NVML_GROUP_MINOR) | nvml_group_bit(NVML_GROUP_BRAND) | \
           nvml_group_bit(NVML_GROUP_ARCH) | nvml_group_bit(NVML_GROUP_CLOCKS) |                          \
           nvml_group_bit(NVML_GROUP_CLOCKS_MAX) | nvml_group_bit(NVML_GROUP_VIOLATIONS) |                \
           nvml_group_bit(NVML_GROUP_ENERGY) | nvml_group_bit(NVML_GROUP_UTIL) |                          \
           nvml_group_bit(NVML_GROUP_CODEC_UTIL) |                                                        \
           nvml_group_bit(NVML_GROUP_PSTATE) | nvml_group_bit(NVML_GROUP_FAN) |                           \
           nvml_group_bit(NVML_GROUP_COMPUTE_MODE) | nvml_group_bit(NVML_GROUP_DISPLAY) |                  \
           nvml_group_bit(NVML_GROUP_PROC_UTIL) | nvml_group_bit(NVML_GROUP_GPM)))

struct check_info {
        const char *id;       /* "pcie.link_width": category, dot, name */
        const char *category; /* "pcie" */
        enum level level;
        const char *title;    /* one line, for --list and docs */
        input_set needs;      /* NEED_* bits (sys/inputs.def): gathered when the check runs */
        input_set uses;       /* NEED_* bits judged when present, never gathered for it */
        void (*run)(const struct check_info *self, const struct facts *f, struct report *rep);
};

/* A check's descriptor, one per check next to its run function, greppable by its id:
 * CHECK_INFO(gpu_mig, "gpu", "gpu.mig", LEVEL_QUICK, NEED_XID | NEED_NVML, "title", run_mig);
 * defines check_gpu_mig, which checks.def lists. CHECK_INFO_USES adds the uses. */
#define CHECK_INFO(name, cat, cid, clevel, cneeds, ctitle, crun)                                          \
        const struct check_info check_##name = {                                                       \
                .id = cid, .category = cat, .level = clevel, .title = ctitle, .run = crun, .needs = cneeds, \
        }

#define CHECK_INFO_USES(name, cat, cid, clevel, cneeds, cuses, ctitle, crun)                             \
        const struct check_info check_##name = {                                                       \
                .id = cid, .category = cat, .level = clevel, .title = ctitle, .run = crun, .needs = cneeds, \
                .uses = cuses,                                                                          \
        }

#define CHECK(name) extern const struct check_info check_##name;
#include "checks/checks.def"
#undef CHECK

extern const struct check_info *const check_registry[];
extern const size_t check_registry_count;

const struct check_info *check_find(const char *id);

/* Helpers shared by category files. */

/* The subject string of a GPU result: its PCI address. */
const char *gpu_subject(const struct facts *f, size_t gpu_index);
/* GPUs bound to this kernel driver ("nvidia", "vfio-pci"). */
size_t check_gpus_bound_to(const struct facts *f, const char *driver);
/* GPUs the host driver should own: those not reserved for a VM through vfio-pci. */
size_t check_count_host_gpus(const struct facts *f);
/* The thresholds to judge by: the site policy's, else gpuvet's defaults. */
const struct policy_thresholds *check_thresholds(const struct facts *f);
/* No GPU was found because /sys/bus/pci/devices could not be listed: they are unknown,
 * not absent (gpu.inventory reports the error; the others skip pointing at it). */
bool check_gpus_unknown(const struct facts *f);
/* "no NVIDIA GPU on the PCI bus", or why the GPUs are unknown. */
const char *check_no_gpu_reason(const struct facts *f);
/* When the capture judged (--root) holds no tree at all that path lies in (/dev, /proc,
 * /sys, /proc/driver/nvidia: facts.capture_lacks), make r a skip saying so and return true:
 * a capture that left /proc out cannot tell whether the node's /proc/cmdline was readable.
 * False on the live root, where a missing tree is the node's own fault, and for a tree the
 * capture holds. */
bool check_skip_capture_lacks(struct result *r, const struct facts *f, const char *path);
/* What went wrong reading a value (err: a negative errno); "malformed value" for one the
 * gatherer could not parse (-EINVAL, -ERANGE). */
const char *check_errtext(int err);
/* The file at path holding a value a check judges could not be read (err: a negative errno, 0
 * when it was): a skip with `absent` as the reason when there is no such file, else an error
 * with the remedy `by_hand` (NULL: cat the file). True when it did either. */
bool check_judge_read_error(struct result *r, int err, const char *path, const char *absent, const char *by_hand);
/* Skip with a reason when the node has no NVIDIA GPU; returns true when it skipped. */
bool check_skip_without_gpus(const struct check_info *self, const struct facts *f, struct report *rep);
/* The one "host" result of a check that judges the node's GPUs as a whole; NULL, after the
 * skip of check_skip_without_gpus, when the node has none. */
struct result *check_host_result_with_gpus(const struct check_info *self, const struct facts *f, struct report *rep);

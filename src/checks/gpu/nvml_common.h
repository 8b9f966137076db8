/* What the gpu.* checks that read NVML share (nvml_common.c): naming a GPU in results, and
 * turning a reading without a value into the same result everywhere: a call that never
 * returned is an error naming the function and the GPU, "not supported" is a skip,
 * GPU_IS_LOST is a failure (the GPU has fallen off the bus), any other NVML error is an
 * error naming its code. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "checks/check.h"

/* The adjustable thresholds (temperature margin, corrected ECC errors, the retired-page
 * warning, the PCIe replay rate, the power-cap fraction) come from check_thresholds(): a
 * site policy's, else policy_thresholds_default, whose comments give their sources.
 * Pre-Ampere page retirement keeps at most 64 pages (NVIDIA, "A100 GPU memory error
 * management": "a maximum of 64 retirements for the frame buffer"). DCGM's health check
 * and diagnostic fail a GPU at 63 retired pages in total (DCGM_LIMIT_MAX_RETIRED_PAGES in
 * its GPU hardware limits header) and use 15 as the soft limit; gpuvet fails and warns at
 * the same counts. */
#define RETIRED_PAGES_MAX 64u
#define RETIRED_PAGES_FAIL 63u

#define MW_TO_W(mw) ((mw) / 1000u)

/* The size of a GPU description for summaries (nv_result, nv_describe). */
#define NV_DESC_MAX (2 * NV_STR_MAX + 8)

extern const char nv_lost_remedy[];
extern const char nv_timeout_remedy[];

/* The sysfs GPU (index into f->gpus) at NVML GPU g's address, or -1. */
long nv_sysfs_gpu_of(const struct facts *f, const struct nvml_gpu *g);
bool nv_sees(const struct facts *f, const char *addr);
/* The bus address of the one GPU NVML cannot place, when it can be inferred; else NULL. */
const char *nv_inferred_addr(const struct facts *f);
/* The result subject for g: its PCI address, else "nvml:<index>". */
const char *nv_subject(const struct facts *f, const struct nvml_gpu *g, char *buf, size_t size);
const struct gpu_model *nv_model(const struct facts *f, const struct nvml_gpu *g);
/* g's CUDA compute capability major (7 Volta and Turing, 8 Ampere and Ada, 9 Hopper, 10 and
 * up Blackwell): NVML's reading, else gpuvet's table for its model; -1 when neither knows.
 * A skip that gives a generation as its reason asks this first, so the reason holds. */
int nv_cc_major(const struct facts *f, const struct nvml_gpu *g);
/* The branch of the driver NVML runs on (550 for 550.54.15); 0 when unknown. */
unsigned nv_driver_branch(const struct facts *f);
/* "NVIDIA H100 80GB HBM3" (or "the GPU") for summaries: the address is the result's subject. */
const char *nv_describe(const struct facts *f, const struct nvml_gpu *g, char *buf, size_t size);
/* A result about NVML GPU g, its subject set; desc (NV_DESC_MAX bytes) gets the GPU's
 * description for summaries. */
struct result *nv_result(const struct check_info *self, const struct facts *f, struct report *rep,
                         const struct nvml_gpu *g, char *desc);
/* The function whose GPU_IS_LOST answer shows that g has fallen off the bus, or NULL. */
const char *nv_lost_by(const struct nvml_gpu *g);
/* The deadline g's hung call ran past: the GPU's budget or the per-call deadline. */
unsigned int nv_deadline_of(const struct facts *f, const struct nvml_gpu *g);
/* Judge a reading that holds no value into r; true when it did (the caller stops judging
 * this GPU), false for NV_OK. what names the fact in the summary ("ECC mode"). */
bool nv_reading_unusable(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *what,
                         unsigned char state, int rc, const char *fn);
#define UNUSABLE(r, f, g, what, reading) \
        nv_reading_unusable((r), (f), (g), (what), (reading).state, (reading).rc, (reading).fn)
/* Not read, no entry point, not offered by this driver (nv_rc_not_offered) or
 * ARGUMENT_VERSION_MISMATCH. */
bool nv_reading_absent(unsigned char state, int rc);
/* How a reading the driver does not offer is told in a skip: "not supported on this
 * GPU/driver", "deprecated: this driver no longer offers it", ... */
const char *nv_not_offered_phrase(unsigned char state, int rc);
/* Why the per-GPU NVML checks cannot judge anything, as one host result; false when they can. */
bool nv_unavailable(const struct check_info *self, const struct facts *f, struct report *rep);
/* No entry point, not offered by this driver (nv_rc_not_offered), or INVALID_ARGUMENT. */
bool nv_not_supported(unsigned char state, int rc);
/* A reading the GPU or driver does not support: skip, saying so (why: "" or " (...)"). */
bool nv_skip_unsupported(struct result *r, unsigned char state, int rc, const char *fn, const char *what,
                         const char *desc, const char *why);
/* The same GPU in the read after the probes (facts.nvml_after), or NULL. */
const struct nvml_gpu *nv_gpu_after(const struct facts *f, const struct nvml_gpu *g);
/* How much a counter grew between two reads; one that went down was reset and counts from zero. */
unsigned long long counter_grew(unsigned long long before, unsigned long long after);

/* Whether a GPU is working now, by its clock event reasons: idle when NVML says
 * nvmlClocksEventReasonGpuIdle ("nothing is running on the GPU and the clocks are dropping
 * to idle"), busy when the reasons were read without it, unknown otherwise (NULL g too). */
enum nv_activity { NV_ACTIVITY_UNKNOWN, NV_ACTIVITY_IDLE, NV_ACTIVITY_BUSY };
enum nv_activity nv_gpu_activity(const struct nvml_gpu *g);

/* A check that judges each NVML GPU on its own: judge gets the GPU's result (its subject
 * set) and description; nothing when NVML cannot answer at all (nv_unavailable). */
typedef void nv_judge_fn(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc);
void nv_each_gpu(const struct check_info *self, const struct facts *f, struct report *rep, nv_judge_fn *judge);

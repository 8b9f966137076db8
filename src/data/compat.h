/* gpuvet's software-compatibility table: CUDA toolkit -> minimum driver, minor-version
 * compatibility floors, datacenter driver branches, the architectures each CUDA major
 * builds for, PyTorch wheel variants and NGC container releases.
 *
 * The table is data/compat.json, compiled in as the default and overridable with
 * --data-dir DIR or GPUVET_DATA_DIR (DIR/compat.json); docs/data-files.md describes it.
 * The compat_judge_*() queries are pure functions of the loaded table and their
 * arguments, so they are unit-tested against the built-in table without any files. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct gpu_arch;

struct compat_update {
        const char *cuda;   /* "12.4.1" */
        const char *driver; /* "550.54.15" */
};

struct compat_toolkit {
        const char *cuda;       /* "12.4" */
        unsigned major, minor;
        const char *min_driver; /* toolkit-native minimum Linux driver (GA) */
        struct compat_update *updates;
        size_t n_updates;
};

struct compat_minor_floor {
        unsigned cuda_major;
        const char *min_driver;   /* oldest driver running any toolkit of this major */
        const char *below_driver; /* upper end of the range (newer drivers run it natively); NULL if none */
};

struct compat_branch {
        const char *id;               /* "R580" */
        unsigned number;              /* 580 */
        const char *kind;             /* "LTSB" (long-term support), "PB" (production), "NFB" (new feature) */
        const char *eol;              /* "2028-06"; NULL when NVIDIA published none */
        bool supported;               /* NVIDIA still supports it, as of the data's "as_of" date */
        unsigned cuda_major;          /* the CUDA major it ships: 13 */
        const char *reference_driver; /* newest driver of the branch the data names */
};

struct compat_recommendation {
        const char *arch;                  /* gpus.json architecture id */
        const struct compat_branch *branch;
        unsigned last_branch;              /* newest branch that still drives the arch; 0 = current */
        const char *note;                  /* may be NULL */
};

struct compat_sm {
        unsigned sm;       /* 90 for sm_90 */
        const char *since; /* first toolkit of the major that builds it; NULL = all of them */
};

struct compat_cuda_archs {
        unsigned cuda_major;
        struct compat_sm *sms;
        size_t n_sms;
};

#define COMPAT_MAX_SMS 24

struct compat_build {
        const char *torch_first; /* "2.8" */
        const char *torch_last;  /* "2.9"; NULL = still current */
        unsigned sm[COMPAT_MAX_SMS]; /* cubins shipped */
        size_t n_sm;
        unsigned ptx;            /* PTX shipped for this sm (JIT on newer GPUs); 0 = none */
};

struct compat_wheel {
        const char *tag;           /* "cu128" */
        const char *cuda;          /* bundled CUDA: "12.8" */
        const char *min_driver;    /* through minor-version compatibility */
        const char *native_driver; /* toolkit-native */
        struct compat_build *builds; /* per torch version range, oldest first */
        size_t n_builds;
};

#define COMPAT_MAX_FORWARD 8

struct compat_ngc {
        const char *release;       /* "24.05" */
        const char *cuda;          /* "12.4.1.003" */
        const char *pytorch;       /* "2.4.0a0+07cecf4168" */
        const char *native_driver; /* the driver its CUDA ships with */
        const char *min_driver;    /* the minimum the release notes state (a branch: "545") */
        const char *forward_compat[COMPAT_MAX_FORWARD]; /* datacenter bases: "535.86" = R535 >= 535.86 */
        size_t n_forward_compat;
        int min_cc_major, min_cc_minor;
        bool verified;             /* checked against NVIDIA release notes when the data was compiled */
};

struct compat {
        struct compat_toolkit *toolkits; /* oldest first */
        size_t n_toolkits;
        struct compat_minor_floor *floors;
        size_t n_floors;
        struct compat_branch *branches;
        size_t n_branches;
        struct compat_recommendation *recommendations;
        size_t n_recommendations;
        struct compat_cuda_archs *cuda_archs;
        size_t n_cuda_archs;
        struct compat_wheel *wheels;
        size_t n_wheels;
        struct compat_ngc *ngc;
        size_t n_ngc;
        void *json; /* keeps the strings alive */
        char source[512];
};

/* Load from DIR/compat.json, or the compiled-in table when dir is NULL. On a malformed
 * file returns -EINVAL and writes a message naming the file (and the line, for JSON
 * syntax errors) to err; -ENOMEM when out of memory. */
int compat_load(const char *dir, struct compat **ret, char *err, size_t errsize);
/* The same from len bytes at buf; messages name source. */
int compat_load_buffer(const char *buf, size_t len, const char *source, struct compat **ret, char *err,
                       size_t errsize);
struct compat *compat_free(struct compat *c);

/* How something can run on a driver, or why it cannot. */
enum compat_verdict {
        COMPAT_NATIVE,          /* the driver is at least the toolkit's own minimum */
        COMPAT_MINOR,           /* older driver, same CUDA major: minor-version compatibility */
        COMPAT_FORWARD,         /* datacenter forward compatibility (cuda-compat in the image) */
        COMPAT_DRIVER_TOO_OLD,  /* the driver cannot run this CUDA */
        COMPAT_ARCH_UNSUPPORTED, /* the build carries no code the GPU can run */
        COMPAT_GPU_UNSUPPORTED, /* the driver does not drive this GPU at all */
        _COMPAT_VERDICT_COUNT,
        _COMPAT_VERDICT_INVALID = -1,
};

/* "native", "minor_compat", "forward_compat", "driver_too_old", "arch_unsupported",
 * "gpu_unsupported_by_driver". */
const char *compat_verdict_name(enum compat_verdict v);
static inline bool compat_verdict_runs(enum compat_verdict v) { return v >= COMPAT_NATIVE && v <= COMPAT_FORWARD; }

/* The GPU a question is asked about. arch may be NULL (unknown model): then driver support
 * for the GPU is not judged. */
struct compat_gpu {
        int cc_major, cc_minor;
        bool datacenter;
        const struct gpu_arch *arch;
        const char *min_driver; /* the model's own floor above the architecture's; NULL: the architecture's */
};

struct compat_judgement {
        enum compat_verdict verdict;
        char reason[256]; /* one sentence, also for the running verdicts */
        /* Wheels: the torch versions whose builds run on the GPU; torch_last NULL = current. */
        const char *torch_first, *torch_last;
};

/* Newest toolkit the driver runs natively / natively or through minor-version
 * compatibility. NULL when none (or driver is not a dotted version). */
const struct compat_toolkit *compat_max_native(const struct compat *c, const char *driver);
const struct compat_toolkit *compat_max_minor(const struct compat *c, const char *driver);
/* The toolkit entry of a CUDA version ("12.4.1.003" -> 12.4), NULL if unknown. */
const struct compat_toolkit *compat_toolkit(const struct compat *c, const char *cuda);
/* Whether toolkit version cuda ("12.8", "13.0.2") builds for sm. */
bool compat_cuda_builds_sm(const struct compat *c, const char *cuda, unsigned sm);
/* Newest toolkit that builds for the GPU's exact sm; NULL if none. */
const struct compat_toolkit *compat_newest_toolkit_for(const struct compat *c, int cc_major, int cc_minor);
/* Newest toolkit that builds for the GPU and runs natively on driver (no minor-version
 * compatibility); NULL if none. */
const struct compat_toolkit *compat_newest_native_toolkit_for(const struct compat *c, int cc_major, int cc_minor,
                                                              const char *driver);
const struct compat_recommendation *compat_recommendation(const struct compat *c, const char *arch);
const struct compat_branch *compat_branch_of(const struct compat *c, const char *driver);
const struct compat_wheel *compat_wheel(const struct compat *c, const char *tag);
const struct compat_ngc *compat_ngc_release(const struct compat *c, const char *release);

/* Whether driver (NULL: the question is asked without one) drives the GPU at all: at
 * least the architecture's min_driver and not past its last branch. Writes a reason when not. */
bool compat_driver_supports_gpu(const struct compat *c, const struct compat_gpu *gpu, const char *driver,
                                char *why, size_t whysize);

/* Judge whether a toolkit, wheel or NGC release runs on the GPU with this driver. With
 * driver NULL only the architecture is judged (COMPAT_NATIVE or COMPAT_ARCH_UNSUPPORTED).
 * The architecture is judged first: no driver fixes a build without code for the GPU. */
void compat_judge_toolkit(const struct compat *c, const struct compat_toolkit *t, const struct compat_gpu *gpu,
                          const char *driver, struct compat_judgement *ret);
void compat_judge_wheel(const struct compat *c, const struct compat_wheel *w, const struct compat_gpu *gpu,
                        const char *driver, struct compat_judgement *ret);
void compat_judge_ngc(const struct compat *c, const struct compat_ngc *n, const struct compat_gpu *gpu,
                      const char *driver, struct compat_judgement *ret);

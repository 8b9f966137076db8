/* Running docker or podman: `run --rm` with the GPUs, `image inspect` and `pull`, each under
 * a deadline with its output captured (core/run_command.h), and a failure sorted into the
 * class an operator acts on (no runtime, no daemon, no image, NVIDIA hook, CDI, timeout).
 *
 * Nothing here pulls implicitly: container_run_gpus passes --pull=never, so a missing image
 * is reported (CONTAINER_NO_IMAGE) instead of a download with no end in sight. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct container_facts;

/* The runtime to run instead of the one found in PATH: tests point it at a stand-in. */
#define CONTAINER_RUNTIME_ENV "GPUVET_CONTAINER_RUNTIME"

enum container_engine {
        CONTAINER_ENGINE_DOCKER,
        CONTAINER_ENGINE_PODMAN,
        _CONTAINER_ENGINE_COUNT,
        _CONTAINER_ENGINE_INVALID = -1,
};

/* How the GPUs are asked for. */
enum container_gpu_request {
        CONTAINER_GPUS_FLAG, /* --gpus all: docker's device request, served by the NVIDIA hook or runtime */
        CONTAINER_GPUS_CDI,  /* --device nvidia.com/gpu=all: the CDI spec (podman; docker 25+) */
};

struct container_runtime {
        char exe[256];                    /* what is executed: a path, or a name looked up in PATH */
        enum container_engine engine;
        enum container_gpu_request gpus;
        const char *chosen_by;            /* "--container-runtime", "$GPUVET_CONTAINER_RUNTIME", "site policy", "PATH" */
};

enum container_outcome {
        CONTAINER_OK,            /* it ran and exited 0 */
        CONTAINER_EXITED,        /* the container's command exited non-zero (exit_status) */
        CONTAINER_NO_RUNTIME,    /* the runtime executable could not be started */
        CONTAINER_NO_DAEMON,     /* the daemon (or podman's service) could not be reached */
        CONTAINER_NO_IMAGE,      /* the image is not there (locally, or in the registry for a pull) */
        CONTAINER_GPU_HOOK,      /* the NVIDIA hook or runtime failed to hand over the GPUs */
        CONTAINER_DRIVER_TOO_OLD, /* the image's NVIDIA_REQUIRE_CUDA is not met by the driver */
        CONTAINER_CDI,           /* a CDI device could not be resolved (no spec, or a stale one) */
        CONTAINER_TIMEOUT,       /* killed at the deadline, with its process group */
        CONTAINER_RUNTIME_ERROR, /* another failure of the runtime itself */
        _CONTAINER_OUTCOME_COUNT,
};

struct container_result {
        enum container_outcome outcome;
        int exit_status;            /* the runtime's exit status; -1 when it did not exit */
        char *out;                  /* standard output, NUL-terminated; NULL when nothing ran */
        size_t out_len;
        char err_tail[1024];        /* the end of standard error */
        char cause[512];            /* the line of standard error the outcome was read from; "" when none */
        unsigned long long elapsed_ms;
        char command[512];          /* what ran, for evidence and messages */
        char cleanup[512];          /* a run past its deadline: how removing its container went; "" otherwise */
};

/* "docker", "podman". */
const char *container_engine_name(enum container_engine e);
/* "ok", "exited", "no_runtime", "no_daemon", "no_image", "gpu_hook", "driver_too_old",
 * "cdi", "timeout", "runtime_error". */
const char *container_outcome_name(enum container_outcome o);

/* Which runtime to run. named (an option or the site policy; NULL when neither says) beats
 * $GPUVET_CONTAINER_RUNTIME, which beats docker then podman as the container facts found
 * them. A named one is podman when its file name starts with "podman", else docker. GPUs
 * are asked for through CDI with podman, and with docker only when CDI is its one way
 * (an nvidia.com/gpu spec, but neither an nvidia runtime nor the hook `--gpus` needs).
 * Returns 0, or -ENOENT when no runtime is named or found. */
int container_runtime_choose(const char *named, const char *named_by, const struct container_facts *c,
                             struct container_runtime *ret);

/* Sort a finished command: exit status and standard error to an outcome, and the line
 * that told (into cause). runs_container: it was `run`, whose non-zero status may be the
 * container's own. Pure, for tests. */
enum container_outcome container_classify(int exit_status, bool runs_container, const char *err, char *cause,
                                          size_t cause_size);

/* `RUNTIME run --rm --name gpuvet-PID-N --pull=never --network=none GPUS IMAGE CMD...` with
 * cmd a NULL-ended argv; past the deadline the client is killed and the container removed
 * (`rm --force NAME`, cleanup says how it went). Returns 0 when the runtime was started (the outcome says how it went; *ret needs
 * container_result_done), or -ENOMEM / -EINVAL. */
int container_run_gpus(const struct container_runtime *rt, const char *image, const char *const *cmd,
                       unsigned timeout_ms, struct container_result *ret);
/* `RUNTIME image inspect --format {{.Id}} IMAGE`: CONTAINER_OK when the image is local. */
int container_image_inspect(const struct container_runtime *rt, const char *image, unsigned timeout_ms,
                            struct container_result *ret);
/* `RUNTIME pull IMAGE`. */
int container_pull(const struct container_runtime *rt, const char *image, unsigned timeout_ms,
                   struct container_result *ret);
void container_result_done(struct container_result *r);

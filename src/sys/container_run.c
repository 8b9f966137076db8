/* Running docker or podman under a deadline (sys/container_run.h). */
#include "sys/container_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/array.h"
#include "core/run_command.h"
#include "sys/container.h"

#define MAX_OUT (1u << 20) /* nvidia-smi -L of 72 GPUs, or a test script's report, is far less */

const char *container_engine_name(enum container_engine e) {
        return e == CONTAINER_ENGINE_PODMAN ? "podman" : "docker";
}

const char *container_outcome_name(enum container_outcome o) {
        static const char *const names[_CONTAINER_OUTCOME_COUNT] = {
                [CONTAINER_OK] = "ok",
                [CONTAINER_EXITED] = "exited",
                [CONTAINER_NO_RUNTIME] = "no_runtime",
                [CONTAINER_NO_DAEMON] = "no_daemon",
                [CONTAINER_NO_IMAGE] = "no_image",
                [CONTAINER_GPU_HOOK] = "gpu_hook",
                [CONTAINER_DRIVER_TOO_OLD] = "driver_too_old",
                [CONTAINER_CDI] = "cdi",
                [CONTAINER_TIMEOUT] = "timeout",
                [CONTAINER_RUNTIME_ERROR] = "runtime_error",
        };
        return (unsigned)o < _CONTAINER_OUTCOME_COUNT ? names[o] : "unknown";
}

static enum container_engine engine_of(const char *exe) {
        const char *base = strrchr(exe, '/');
        base = base ? base + 1 : exe;
        return strncmp(base, "podman", 6) == 0 ? CONTAINER_ENGINE_PODMAN : CONTAINER_ENGINE_DOCKER;
}

/* docker's --gpus works through an nvidia runtime or the hook dockerd adds (moby's
 * nvidia driver); without either, a CDI spec is the one way in (Docker 25+). */
static enum container_gpu_request gpu_request(enum container_engine e, const struct container_facts *c) {
        if (e == CONTAINER_ENGINE_PODMAN)
                return CONTAINER_GPUS_CDI;
        if (c && c->cdi_nvidia_specs > 0 && !c->docker_nvidia_runtime[0] && !c->nvidia_container_runtime_hook[0])
                return CONTAINER_GPUS_CDI;
        return CONTAINER_GPUS_FLAG;
}

int container_runtime_choose(const char *named, const char *named_by, const struct container_facts *c,
                             struct container_runtime *ret) {
        memset(ret, 0, sizeof(*ret));
        const char *env = secure_getenv(CONTAINER_RUNTIME_ENV);
        const char *exe = NULL;
        if (named && *named) {
                exe = named;
                ret->chosen_by = named_by ? named_by : "--container-runtime";
        } else if (env && *env) {
                exe = env;
                ret->chosen_by = "$" CONTAINER_RUNTIME_ENV;
        } else if (c && c->docker[0]) {
                exe = c->docker;
                ret->chosen_by = "PATH";
        } else if (c && c->podman[0]) {
                exe = c->podman;
                ret->chosen_by = "PATH";
        }
        if (!exe)
                return -ENOENT;
        snprintf(ret->exe, sizeof(ret->exe), "%s", exe);
        ret->engine = engine_of(exe);
        ret->gpus = gpu_request(ret->engine, c);
        return 0;
}

/* Standard error's patterns, first match wins: the NVIDIA ones before the generic
 * "Error response from daemon", which prefixes most of them. Texts as docker, podman and
 * the toolkit print them (tests/fakes/README.md cites where each was seen). */
static const struct {
        const char *pattern;
        enum container_outcome outcome;
} patterns[] = {
        {"Cannot connect to the Docker daemon", CONTAINER_NO_DAEMON},
        {"Is the docker daemon running", CONTAINER_NO_DAEMON},
        {"permission denied while trying to connect to the Docker daemon", CONTAINER_NO_DAEMON},
        {"Cannot connect to Podman", CONTAINER_NO_DAEMON},
        {"unsatisfied condition: cuda", CONTAINER_DRIVER_TOO_OLD},
        {"nvidia-container-cli", CONTAINER_GPU_HOOK},
        {"could not select device driver", CONTAINER_GPU_HOOK},
        {"nvidia-container-runtime", CONTAINER_GPU_HOOK},
        {"error running hook", CONTAINER_GPU_HOOK},
        {"error running prestart hook", CONTAINER_GPU_HOOK},
        {"unresolvable CDI devices", CONTAINER_CDI},
        {"setting up CDI devices", CONTAINER_CDI},
        {"CDI device injection failed", CONTAINER_CDI},
        {"No such image", CONTAINER_NO_IMAGE},
        {"image not known", CONTAINER_NO_IMAGE},
        {"manifest unknown", CONTAINER_NO_IMAGE},
        {"pull access denied", CONTAINER_NO_IMAGE},
        {"repository does not exist", CONTAINER_NO_IMAGE},
};

/* The line of text holding at (from at on, when the line is long: the hook's message sits
 * at the end of a long OCI error). */
static void cause_line(const char *text, const char *at, char *buf, size_t size) {
        const char *start = at;
        while (start > text && start[-1] != '\n')
                start--;
        if (at - start > 160)
                start = at;
        size_t len = strcspn(start, "\n");
        snprintf(buf, size, "%.*s", (int)len, start);
}

enum container_outcome container_classify(int exit_status, bool runs_container, const char *err, char *cause,
                                         size_t cause_size) {
        if (cause_size)
                cause[0] = '\0';
        if (exit_status == 0)
                return CONTAINER_OK;
        err = err ? err : "";
        for (size_t i = 0; i < ARRAY_COUNT(patterns); i++) {
                const char *at = strstr(err, patterns[i].pattern);
                if (at) {
                        if (cause_size)
                                cause_line(err, at, cause, cause_size);
                        return patterns[i].outcome;
                }
        }
        /* `run`: docker and podman exit 125 when they (not the container) failed; 126 and
         * 127 are the container's command that could not run, any other status is its own.
         * Any other subcommand failed itself. */
        if (!runs_container || exit_status == 125 || exit_status < 0) {
                const char *last = err + strlen(err);
                while (last > err && (last[-1] == '\n' || last[-1] == ' '))
                        last--;
                const char *line = last;
                while (line > err && line[-1] != '\n')
                        line--;
                if (cause_size)
                        snprintf(cause, cause_size, "%.*s", (int)(last - line), line);
                return CONTAINER_RUNTIME_ERROR;
        }
        return CONTAINER_EXITED;
}

static void describe(char *buf, size_t size, const char *const *argv) {
        buf[0] = '\0';
        size_t used = 0;
        for (size_t i = 0; argv[i] && used + 1 < size; i++) {
                int n = snprintf(buf + used, size - used, "%s%s", i ? " " : "", argv[i]);
                if (n < 0)
                        break;
                used += (size_t)n;
        }
        if (used >= size)
                buf[size - 1] = '\0';
}

static int run(const char *const *argv, bool runs_container, unsigned timeout_ms, struct container_result *ret) {
        memset(ret, 0, sizeof(*ret));
        ret->exit_status = -1;
        describe(ret->command, sizeof(ret->command), argv);
        struct command_result cr;
        int r = run_command((char *const *)argv, timeout_ms, MAX_OUT, &cr);
        if (r == -ENOENT || r == -EACCES || r == -ENOEXEC) {
                ret->outcome = CONTAINER_NO_RUNTIME;
                snprintf(ret->cause, sizeof(ret->cause), "%s: %s", argv[0], strerror(-r));
                return 0;
        }
        if (r < 0)
                return r;
        ret->out = cr.out;
        ret->out_len = cr.out_len;
        cr.out = NULL;
        snprintf(ret->err_tail, sizeof(ret->err_tail), "%s", cr.err_tail);
        ret->elapsed_ms = cr.elapsed_ms;
        ret->exit_status = cr.exit_status;
        if (cr.timed_out) {
                ret->outcome = CONTAINER_TIMEOUT;
        } else if (cr.signal) {
                ret->outcome = CONTAINER_RUNTIME_ERROR;
                snprintf(ret->cause, sizeof(ret->cause), "%s was killed by signal %d", argv[0], cr.signal);
        } else {
                ret->outcome = container_classify(cr.exit_status, runs_container, cr.err_tail, ret->cause, sizeof(ret->cause));
        }
        command_result_done(&cr);
        return 0;
}

#define MAX_CMD 32
#define REMOVE_TIMEOUT_MS 15000u

/* Killing the runtime's client at the deadline leaves the container running in the daemon
 * (a hung nvidia-smi keeps its GPUs): it is removed by name, under a deadline of its own. */
static void remove_container(const struct container_runtime *rt, const char *name, struct container_result *ret) {
        const char *argv[] = {rt->exe, "rm", "--force", name, NULL};
        struct command_result cr;
        int r = run_command((char *const *)argv, REMOVE_TIMEOUT_MS, 4096, &cr);
        if (r < 0)
                snprintf(ret->cleanup, sizeof(ret->cleanup), "`%.160s rm --force %.40s` could not start: %s", rt->exe, name,
                         strerror(-r));
        else if (cr.timed_out)
                snprintf(ret->cleanup, sizeof(ret->cleanup), "`%.160s rm --force %.40s` did not finish within %u s", rt->exe,
                         name, REMOVE_TIMEOUT_MS / 1000);
        else if (cr.exit_status != 0)
                snprintf(ret->cleanup, sizeof(ret->cleanup), "`%.160s rm --force %.40s` exited %d: %.200s", rt->exe, name,
                         cr.exit_status, cr.err_tail);
        else
                snprintf(ret->cleanup, sizeof(ret->cleanup), "container %.40s removed", name);
        if (r == 0)
                command_result_done(&cr);
}

int container_run_gpus(const struct container_runtime *rt, const char *image, const char *const *cmd,
                       unsigned timeout_ms, struct container_result *ret) {
        const char *argv[MAX_CMD + 14];
        static unsigned serial;
        char name[64];
        snprintf(name, sizeof(name), "gpuvet-%ld-%u", (long)getpid(), serial++);
        size_t n = 0;
        argv[n++] = rt->exe;
        argv[n++] = "run";
        argv[n++] = "--rm";
        argv[n++] = "--name";
        argv[n++] = name;
        argv[n++] = "--pull=never";
        /* The GPU test needs no network: none keeps it from reaching (or waiting on) one. */
        argv[n++] = "--network=none";
        if (rt->gpus == CONTAINER_GPUS_CDI) {
                argv[n++] = "--device";
                argv[n++] = "nvidia.com/gpu=all";
        } else {
                argv[n++] = "--gpus";
                argv[n++] = "all";
        }
        argv[n++] = image;
        for (size_t i = 0; cmd && cmd[i]; i++) {
                if (i >= MAX_CMD) {
                        memset(ret, 0, sizeof(*ret));
                        return -EINVAL;
                }
                argv[n++] = cmd[i];
        }
        argv[n] = NULL;
        int r = run(argv, true, timeout_ms, ret);
        if (r == 0 && ret->outcome == CONTAINER_TIMEOUT)
                remove_container(rt, name, ret);
        return r;
}

int container_image_inspect(const struct container_runtime *rt, const char *image, unsigned timeout_ms,
                            struct container_result *ret) {
        const char *argv[] = {rt->exe, "image", "inspect", "--format", "{{.Id}}", image, NULL};
        return run(argv, false, timeout_ms, ret);
}

int container_pull(const struct container_runtime *rt, const char *image, unsigned timeout_ms,
                   struct container_result *ret) {
        const char *argv[] = {rt->exe, "pull", image, NULL};
        return run(argv, false, timeout_ms, ret);
}

void container_result_done(struct container_result *r) {
        free(r->out);
        r->out = NULL;
        r->out_len = 0;
}

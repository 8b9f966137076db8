/* container: container runtimes, the NVIDIA Container Toolkit, and whether docker,
 * containerd and CDI are set up to give containers the GPUs. */
#include "checks/check.h"
#include "sys/container_gpu.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define DAEMON_JSON "/etc/docker/daemon.json"
#define CONTAINERD_CONFIG "/etc/containerd/config.toml"

static const char toolkit_install[] =
        "Install the NVIDIA Container Toolkit from NVIDIA's repository (Debian/Ubuntu: add "
        "https://nvidia.github.io/libnvidia-container/stable/deb, then `apt install "
        "nvidia-container-toolkit`; RHEL: the .../stable/rpm repo, then `dnf install "
        "nvidia-container-toolkit`)";

static bool have_engine(const struct container_facts *c) {
        return c->dockerd[0] || c->containerd[0] || c->podman[0];
}

static bool have_toolkit(const struct container_facts *c) {
        return c->nvidia_ctk[0] || c->nvidia_container_cli[0] || c->nvidia_container_runtime[0] ||
               c->nvidia_container_runtime_hook[0];
}

static void append(char *buf, size_t size, const char *s) {
        size_t used = strlen(buf);
        if (used + 1 < size)
                snprintf(buf + used, size - used, "%s%s", used ? ", " : "", s);
}

/* On a node without NVIDIA GPUs there is nothing to set up: skip, saying what that spares
 * or that the GPUs are unknown. */
static bool skip_without_gpus(struct result *r, const struct facts *f, const char *consequence) {
        if (f->gpus.n > 0)
                return false;
        if (check_gpus_unknown(f))
                result_status(r, STATUS_SKIP, "%s", check_no_gpu_reason(f));
        else
                result_status(r, STATUS_SKIP, "no NVIDIA GPU on the PCI bus: %s", consequence);
        return true;
}

/* A runtime's configuration file that is there but could not be read (err: a negative errno):
 * only root may read it, or it is broken. */
static void judge_unreadable(struct result *r, const char *path, int err) {
        if (err == -EACCES) {
                result_status(r, STATUS_SKIP, "needs root to read %s", path);
                return;
        }
        result_status(r, STATUS_ERROR, "cannot read %s: %s", path, strerror(-err));
        result_remedy(r, "Check the file's type and permissions (`ls -l %s`).", path);
}

static void run_runtime(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct container_facts *c = &f->container;
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", "/usr/bin, /usr/sbin, /usr/local/bin, /bin, /snap/bin, /etc/containers");
        char found[256] = "";
        if (c->dockerd[0])
                append(found, sizeof(found), "docker");
        else if (c->docker[0])
                append(found, sizeof(found), "docker (client only, no dockerd)");
        if (c->containerd[0])
                append(found, sizeof(found), "containerd");
        if (c->podman[0])
                append(found, sizeof(found), "podman");
        const char *paths[] = {c->docker, c->dockerd, c->containerd, c->podman};
        const char *keys[] = {"docker", "dockerd", "containerd", "podman"};
        for (size_t i = 0; i < 4; i++)
                if (paths[i][0])
                        result_evidence(r, keys[i], "%s", paths[i]);
        if (c->have_containers_dir)
                result_evidence(r, "containers_config", "/etc/containers");
        if (!found[0]) {
                result_status(r, STATUS_SKIP, "no container runtime installed (docker, containerd, podman)");
                return;
        }
        result_observed(r, "%s", found);
        result_expected(r, "informational");
        result_status(r, STATUS_PASS, "container runtimes: %s", found);
}

CHECK_INFO(container_runtime, "container", "container.runtime", LEVEL_QUICK, NEED_CONTAINER,
           "Container runtimes installed (informational)",
           run_runtime);

static void run_toolkit(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct container_facts *c = &f->container;
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", "nvidia-ctk, nvidia-container-cli, nvidia-container-runtime in /usr/bin etc.");
        if (!have_engine(c)) {
                result_status(r, STATUS_SKIP, "no container runtime installed (docker, containerd, podman)");
                return;
        }
        char found[4 * CONTAINER_EXE_PATH + 8] = "";
        if (c->nvidia_ctk[0])
                append(found, sizeof(found), c->nvidia_ctk);
        if (c->nvidia_container_cli[0])
                append(found, sizeof(found), c->nvidia_container_cli);
        if (c->nvidia_container_runtime[0])
                append(found, sizeof(found), c->nvidia_container_runtime);
        if (c->nvidia_container_runtime_hook[0])
                append(found, sizeof(found), c->nvidia_container_runtime_hook);
        result_evidence(r, "config", "/etc/nvidia-container-runtime/config.toml %s",
                        c->have_toolkit_config ? "present" : "absent");
        result_expected(r, "NVIDIA Container Toolkit installed");
        if (have_toolkit(c)) {
                result_observed(r, "%s", found);
                result_status(r, STATUS_PASS, "NVIDIA Container Toolkit installed (%s)", found);
                return;
        }
        result_observed(r, "not installed");
        if (skip_without_gpus(r, f, "containers need no toolkit"))
                return;
        result_status(r, STATUS_WARN,
                      "a container runtime is installed but the NVIDIA Container Toolkit is not: containers "
                      "will not see the GPUs");
        result_remedy(r, "%s; then `nvidia-ctk runtime configure --runtime=docker` (or --runtime=containerd) and "
                         "restart the runtime, or `nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml` for podman.",
                      toolkit_install);
}

CHECK_INFO(container_toolkit, "container", "container.toolkit", LEVEL_QUICK, NEED_CONTAINER,
           "The NVIDIA Container Toolkit is installed next to a container runtime",
           run_toolkit);

static void run_docker_runtime(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct container_facts *c = &f->container;
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", "%s", DAEMON_JSON);
        if (!c->dockerd[0]) {
                result_status(r, STATUS_SKIP, "the docker engine (dockerd) is not installed%s",
                              c->docker[0] ? " (only the docker client)" : "");
                return;
        }
        if (c->daemon_json == CONTAINER_FILE_MALFORMED) {
                result_observed(r, "invalid JSON: %s", c->daemon_json_error);
                result_expected(r, "valid JSON");
                result_status(r, STATUS_ERROR, "%s is not valid JSON (%s): dockerd refuses to start with it",
                              DAEMON_JSON, c->daemon_json_error);
                result_remedy(r, "Fix the file (`python3 -m json.tool %s` points at the error), then `systemctl "
                                 "restart docker`.",
                              DAEMON_JSON);
                return;
        }
        if (c->daemon_json == CONTAINER_FILE_UNREADABLE) {
                judge_unreadable(r, DAEMON_JSON, c->daemon_json_errno);
                return;
        }
        if (skip_without_gpus(r, f, "docker needs no nvidia runtime"))
                return;
        if (c->docker_default_runtime[0])
                result_evidence(r, "default-runtime", "%s", c->docker_default_runtime);
        if (c->docker_cdi_feature >= 0)
                result_evidence(r, "features.cdi", "%s", c->docker_cdi_feature ? "true" : "false");
        result_expected(r, "an nvidia runtime in %s, or a CDI spec for nvidia.com/gpu", DAEMON_JSON);
        if (c->docker_nvidia_runtime[0]) {
                const char *path = c->docker_nvidia_runtime_path[0] ? c->docker_nvidia_runtime_path
                                                                    : c->docker_nvidia_runtime;
                result_observed(r, "runtime \"%s\" -> %s%s", c->docker_nvidia_runtime, path,
                                strcmp(c->docker_default_runtime, c->docker_nvidia_runtime) == 0 ? " (default)" : "");
                if (!c->docker_nvidia_runtime_installed) {
                        result_status(r, STATUS_FAIL,
                                      "docker's \"%s\" runtime runs %s, which is not installed: `docker run "
                                      "--runtime=%s` fails",
                                      c->docker_nvidia_runtime, path, c->docker_nvidia_runtime);
                        result_remedy(r, "%s, then `systemctl restart docker`.", toolkit_install);
                        return;
                }
                result_status(r, STATUS_PASS, "docker has the \"%s\" runtime (%s)%s", c->docker_nvidia_runtime, path,
                              strcmp(c->docker_default_runtime, c->docker_nvidia_runtime) == 0 ? ", the default"
                                                                                               : "");
                return;
        }
        if (c->cdi_nvidia_specs > 0) {
                result_observed(r, "no nvidia runtime; CDI spec %s", c->cdi_first_nvidia);
                /* Docker 25 added CDI behind "features": {"cdi": true}; 28 turned it on. */
                if (c->docker_cdi_feature == 0) {
                        result_status(r, STATUS_WARN,
                                      "docker has no nvidia runtime and CDI is switched off in %s (\"features\": "
                                      "{\"cdi\": false})",
                                      DAEMON_JSON);
                        result_remedy(r, "Set \"features\": {\"cdi\": true} in %s (Docker 25 or newer) or run "
                                         "`nvidia-ctk runtime configure --runtime=docker`; then `systemctl restart "
                                         "docker`.",
                                      DAEMON_JSON);
                        return;
                }
                result_status(r, STATUS_PASS,
                              "docker has no nvidia runtime but can use the CDI spec (`docker run --device "
                              "nvidia.com/gpu=all`, Docker 25+; before 28 also \"features\": {\"cdi\": true})");
                return;
        }
        result_observed(r, "%s", c->daemon_json == CONTAINER_FILE_ABSENT ? "no daemon.json" : "no nvidia runtime");
        /* dockerd implements --gpus by adding nvidia-container-runtime-hook as an OCI
         * prestart hook when it finds it on PATH; no runtime entry is needed for that. */
        if (c->nvidia_container_runtime_hook[0]) {
                result_evidence(r, "hook", "%s", c->nvidia_container_runtime_hook);
                result_status(r, STATUS_PASS,
                              "docker has no nvidia runtime, but `docker run --gpus` works through %s "
                              "(`--runtime=nvidia` does not)",
                              c->nvidia_container_runtime_hook);
                return;
        }
        result_status(r, STATUS_WARN, "docker has no nvidia runtime, no CDI spec and no nvidia-container-runtime-hook: "
                                      "`docker run --gpus` fails");
        result_remedy(r, "%s`nvidia-ctk runtime configure --runtime=docker && systemctl restart docker`.",
                      have_toolkit(c) ? "" : "Install nvidia-container-toolkit first, then ");
}

CHECK_INFO(container_docker_runtime, "container", "container.docker_runtime", LEVEL_QUICK, NEED_CONTAINER,
           "docker can run GPU containers (nvidia runtime or CDI)",
           run_docker_runtime);

static void run_containerd_runtime(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct container_facts *c = &f->container;
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", "%s", CONTAINERD_CONFIG);
        if (!c->containerd[0]) {
                result_status(r, STATUS_SKIP, "containerd is not installed");
                return;
        }
        if (c->containerd_config == CONTAINER_FILE_UNREADABLE) {
                judge_unreadable(r, CONTAINERD_CONFIG, c->containerd_config_errno);
                return;
        }
        /* Without its CRI plugin containerd serves docker (which passes its own runtime)
         * or nerdctl (whose --gpus calls the toolkit's hook): its runtimes table is unused. */
        if (c->containerd_cri_disabled) {
                result_status(r, STATUS_SKIP,
                              "containerd's CRI plugin is disabled (disabled_plugins = [\"cri\"]): it only backs "
                              "docker, judged by container.docker_runtime");
                return;
        }
        if (skip_without_gpus(r, f, "containerd needs no nvidia runtime"))
                return;
        if (c->containerd_default_runtime[0])
                result_evidence(r, "default_runtime_name", "%s", c->containerd_default_runtime);
        result_expected(r, "a runtimes.nvidia section (or BinaryName nvidia-container-runtime)");
        if (c->containerd_nvidia_runtime) {
                result_observed(r, "%s", c->containerd_nvidia_where);
                result_evidence(r, "match", "%s", c->containerd_nvidia_where);
                result_status(r, STATUS_PASS, "containerd has an nvidia runtime%s",
                              strcmp(c->containerd_default_runtime, "nvidia") == 0 ? " (the default)" : "");
                return;
        }
        result_observed(r, "%s", c->containerd_config == CONTAINER_FILE_ABSENT ? "no config.toml (built-in defaults)"
                                                                               : "no nvidia runtime");
        result_status(r, STATUS_WARN, "containerd has no nvidia runtime: its containers (Kubernetes pods, nerdctl) "
                                      "get no GPUs");
        result_remedy(r, "%s`nvidia-ctk runtime configure --runtime=containerd && systemctl restart containerd` "
                         "(the Kubernetes GPU Operator does this itself when it manages the node).",
                      have_toolkit(c) ? "" : "Install nvidia-container-toolkit first, then ");
}

CHECK_INFO(container_containerd_runtime, "container", "container.containerd_runtime", LEVEL_QUICK, NEED_CONTAINER,
           "containerd has an nvidia runtime",
           run_containerd_runtime);

static void run_cdi(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct container_facts *c = &f->container;
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", "/etc/cdi, /var/run/cdi");
        if (c->cdi_bad_path[0]) {
                result_observed(r, "%s: %s", c->cdi_bad_path, c->cdi_bad_reason);
                result_expected(r, "readable, well-formed CDI specs");
                result_status(r, STATUS_ERROR, "CDI spec %s cannot be used: %s", c->cdi_bad_path, c->cdi_bad_reason);
                result_remedy(r, "Regenerate it (`nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`) or remove "
                                 "it; `nvidia-ctk cdi list` shows what the CDI registry accepts.");
                return;
        }
        result_evidence(r, "specs", "%u", c->cdi_specs);
        if (c->cdi_nvidia_specs > 0) {
                result_observed(r, "%u nvidia.com/gpu spec%s, %u device%s", c->cdi_nvidia_specs,
                                c->cdi_nvidia_specs == 1 ? "" : "s", c->cdi_nvidia_devices,
                                c->cdi_nvidia_devices == 1 ? "" : "s");
                result_evidence(r, "spec", "%s", c->cdi_first_nvidia);
                const struct nvidia_facts *x = &f->nvidia;
                if (c->cdi_driver_version[0])
                        result_evidence(r, "spec_driver", "%s", c->cdi_driver_version);
                /* The spec names the driver's versioned libraries: after a driver upgrade
                 * the old paths are gone and containers using the spec fail to start. */
                if (c->cdi_driver_version[0] && x->have_version && strcmp(c->cdi_driver_version, x->driver_version)) {
                        result_expected(r, "a spec generated for driver %s", x->driver_version);
                        result_status(r, STATUS_WARN, "CDI spec %s was generated for driver %s, but %s is installed",
                                      c->cdi_first_nvidia, c->cdi_driver_version, x->driver_version);
                        result_remedy(r, "`nvidia-ctk cdi generate --output=%s` (or enable the toolkit's "
                                         "nvidia-cdi-refresh service where available).",
                                      c->cdi_first_nvidia);
                        return;
                }
                result_expected(r, "a CDI spec for nvidia.com/gpu");
                result_status(r, STATUS_PASS, "CDI: %u spec%s for nvidia.com/gpu with %u device%s", c->cdi_nvidia_specs,
                              c->cdi_nvidia_specs == 1 ? "" : "s", c->cdi_nvidia_devices,
                              c->cdi_nvidia_devices == 1 ? "" : "s");
                return;
        }
        if (!have_toolkit(c)) {
                result_status(r, STATUS_SKIP, "the NVIDIA Container Toolkit is not installed: no CDI spec expected");
                return;
        }
        if (skip_without_gpus(r, f, "no CDI spec needed"))
                return;
        result_observed(r, "no nvidia.com/gpu spec (%u other spec%s)", c->cdi_specs, c->cdi_specs == 1 ? "" : "s");
        result_expected(r, "a CDI spec for nvidia.com/gpu");
        result_status(r, STATUS_WARN, "the NVIDIA Container Toolkit is installed but there is no CDI spec: podman "
                                      "and CDI-mode runtimes cannot request GPUs");
        result_remedy(r, "`nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`, then check with `nvidia-ctk cdi "
                         "list`.");
}

CHECK_INFO(container_cdi, "container", "container.cdi", LEVEL_QUICK, NEED_NVIDIA | NEED_CONTAINER,
           "CDI specs describe the GPUs (and match the installed driver)",
           run_cdi);

static const char hook_remedy[] =
        "`nvidia-ctk runtime configure --runtime=%s` and restart it (`systemctl restart %s`); check that "
        "`nvidia-smi` works on the host and read the toolkit's log (/var/log/nvidia-container-toolkit.log)";
static const char cdi_remedy[] =
        "Regenerate the CDI spec (`nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`; a GPU swapped or a "
        "driver upgraded since it was written leaves it stale), then `nvidia-ctk cdi list`";

/* hook_remedy for this runtime. */
static const char *hook_remedy_for(const struct container_gpu_facts *x, char *buf, size_t size) {
        const char *engine = container_engine_name(x->rt.engine);
        snprintf(buf, size, hook_remedy, engine, engine);
        return buf;
}

/* The host's GPU UUIDs: NVML's, or none when NVML gave none (then counts are compared). */
static size_t host_uuids(const struct facts *f, const char *uuids[], size_t max) {
        size_t n = 0;
        if (f->nvml.init_state != NVML_INIT_OK)
                return 0;
        for (unsigned i = 0; i < f->nvml.n_gpus && n < max; i++)
                if (nv_ok(f->nvml.gpus[i].uuid) && f->nvml.gpus[i].uuid.v[0])
                        uuids[n++] = f->nvml.gpus[i].uuid.v;
        return n;
}

static bool listed(const char *uuid, const char (*list)[96], size_t n) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(uuid, list[i]) == 0)
                        return true;
        return false;
}

static bool in_host(const char *uuid, const char *const *host, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(uuid, host[i]) == 0)
                        return true;
        return false;
}

/* The container saw its GPUs: the same UUIDs as the host's passes. */
static void judge_uuids(const struct facts *f, const struct container_gpu_facts *x, struct result *r) {
        const char *host[CONTAINER_GPU_MAX];
        size_t n_host = host_uuids(f, host, CONTAINER_GPU_MAX);
        char buf[512];
        result_observed(r, "%zu GPU%s in the container", x->n_uuids, x->n_uuids == 1 ? "" : "s");
        if (n_host == 0) {
                /* Without NVML the PCI bus still says how many there are. */
                size_t want = check_count_host_gpus(f);
                result_expected(r, "%zu GPU%s (the host's, counted on the PCI bus: NVML gave no UUIDs)", want,
                                want == 1 ? "" : "s");
                if (x->n_uuids == want) {
                        result_status(r, STATUS_PASS, "the container sees %zu GPU%s, as many as the host has (UUIDs "
                                                      "not compared: NVML gave none)",
                                      want, want == 1 ? "" : "s");
                        return;
                }
                result_status(r, STATUS_FAIL, "the container sees %zu of the host's %zu GPUs", x->n_uuids, want);
                result_remedy(r, "%s.", x->rt.gpus == CONTAINER_GPUS_CDI ? cdi_remedy : hook_remedy_for(x, buf, sizeof(buf)));
                return;
        }
        result_expected(r, "the host's %zu GPU%s (same UUIDs)", n_host, n_host == 1 ? "" : "s");
        char missing[512] = "", extra[512] = "";
        size_t n_missing = 0, n_extra = 0;
        for (size_t i = 0; i < n_host; i++)
                if (!listed(host[i], x->uuids, x->n_uuids)) {
                        append(missing, sizeof(missing), host[i]);
                        n_missing++;
                }
        for (size_t i = 0; i < x->n_uuids; i++)
                if (!in_host(x->uuids[i], host, n_host)) {
                        append(extra, sizeof(extra), x->uuids[i]);
                        n_extra++;
                }
        if (n_missing)
                result_evidence(r, "missing", "%s", missing);
        if (n_extra)
                result_evidence(r, "unknown_to_host", "%s", extra);
        if (!n_missing && !n_extra) {
                if (n_host == 1)
                        result_status(r, STATUS_PASS, "a container sees the host's GPU (same UUID)");
                else
                        result_status(r, STATUS_PASS, "a container sees all %zu GPUs of the host (same UUIDs)", n_host);
                return;
        }
        if (n_missing)
                result_status(r, STATUS_FAIL, "the container sees %zu of the host's %zu GPUs: %zu missing (%s)",
                              x->n_uuids - n_extra, n_host, n_missing, missing);
        else
                result_status(r, STATUS_FAIL, "the container sees %zu GPU%s the host does not have (%s)", n_extra,
                              n_extra == 1 ? "" : "s", extra);
        /* A CDI spec lists GPUs by UUID: one written before a GPU was swapped names the old one. */
        if (x->rt.gpus == CONTAINER_GPUS_CDI)
                result_remedy(r, "%s.", cdi_remedy);
        else
                result_remedy(r, "Check NVIDIA_VISIBLE_DEVICES in the image and the toolkit's configuration; then "
                                 "%s.", hook_remedy_for(x, buf, sizeof(buf)));
}

static void run_gpu_access(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct container_gpu_facts *x = f->container_gpu;
        struct result *r = result_new(rep, self, "host");
        if (!x) {
                result_status(r, STATUS_SKIP, "not run");
                return;
        }
        if (!x->ran) {
                result_status(r, STATUS_SKIP, "%s", x->note);
                return;
        }
        const char *engine = container_engine_name(x->rt.engine);
        result_evidence(r, "runtime", "%s (%s, from %s)", x->rt.exe, engine, x->rt.chosen_by);
        result_evidence(r, "image", "%s", x->image);
        result_evidence(r, "image_from", "%s", x->image_why);
        result_evidence(r, "command", "%s", x->command);
        result_evidence(r, "seconds", "%.1f", x->elapsed_s);
        if (x->outcome != CONTAINER_OK) {
                result_evidence(r, "outcome", "%s", container_outcome_name(x->outcome));
                if (x->exit_status >= 0)
                        result_evidence(r, "exit_status", "%d", x->exit_status);
                if (x->cause[0])
                        result_evidence(r, "cause", "%s", x->cause);
                if (x->cleanup[0])
                        result_evidence(r, "cleanup", "%s", x->cleanup);
        }
        const char *cause = x->cause[0] ? x->cause : "no message";
        char buf[512];
        switch (x->outcome) {
        case CONTAINER_OK:
                judge_uuids(f, x, r);
                return;
        case CONTAINER_NO_RUNTIME:
                result_status(r, STATUS_ERROR, "%s could not be started: %s", x->rt.exe, cause);
                result_remedy(r, "Name an installed runtime (--container-runtime, or container.runtime in the site "
                                 "policy).");
                return;
        case CONTAINER_NO_DAEMON:
                result_status(r, STATUS_SKIP, "%s cannot reach its daemon: %s", engine, cause);
                return;
        case CONTAINER_NO_IMAGE:
                result_status(r, STATUS_SKIP, "image %s is not present locally (never pulled here): pull it with "
                                              "`%s pull %s`",
                              x->image, engine, x->image);
                return;
        case CONTAINER_TIMEOUT:
                result_observed(r, "still running after %u s", x->timeout_s);
                result_expected(r, "done within %u s", x->timeout_s);
                result_status(r, STATUS_ERROR, "`%s %s` did not finish within %u s; it was killed", engine, x->step,
                              x->timeout_s);
                if (strcmp(x->step, "run") == 0)
                        result_remedy(r, "Run `%s` by hand; a GPU container start that hangs often means a hung driver "
                                         "(`nvidia-smi` on the host, Xid errors in `journalctl -k`). "
                                         "--container-timeout gives it longer.",
                                      x->command);
                else
                        result_remedy(r, "The runtime does not answer: `systemctl status %s`, then `%s`.", engine,
                                      x->command);
                return;
        case CONTAINER_GPU_HOOK:
                result_observed(r, "%s", cause);
                result_expected(r, "the container starts with the GPUs");
                result_status(r, STATUS_FAIL, "the NVIDIA container hook failed to hand the GPUs to a container: %s",
                              cause);
                result_remedy(r, "%s.", hook_remedy_for(x, buf, sizeof(buf)));
                return;
        case CONTAINER_DRIVER_TOO_OLD:
                result_observed(r, "%s", cause);
                result_expected(r, "an image whose CUDA the driver runs");
                result_status(r, STATUS_FAIL, "the driver is too old for image %s: %s", x->image, cause);
                result_remedy(r, "Test with an image of an older CUDA (container.image in the site policy; `gpuvet ngc "
                                 "pick cuda` names one), or upgrade the driver.");
                return;
        case CONTAINER_CDI:
                result_observed(r, "%s", cause);
                result_expected(r, "the CDI device nvidia.com/gpu=all resolves");
                result_status(r, STATUS_FAIL, "the GPUs could not be handed over through CDI: %s", cause);
                result_remedy(r, "%s.", cdi_remedy);
                return;
        case CONTAINER_EXITED:
                result_observed(r, "nvidia-smi exited %d: %s", x->exit_status, x->err_tail[0] ? x->err_tail : "");
                result_expected(r, "nvidia-smi lists the GPUs");
                result_status(r, STATUS_FAIL, "nvidia-smi in the container failed (exit %d): the container got no "
                                              "usable GPU",
                              x->exit_status);
                result_remedy(r, "%s.", hook_remedy_for(x, buf, sizeof(buf)));
                return;
        case CONTAINER_RUNTIME_ERROR:
        case _CONTAINER_OUTCOME_COUNT:
                break;
        }
        result_status(r, STATUS_ERROR, "%s %s failed: %s", engine, x->step ? x->step : "", cause);
        result_remedy(r, "Run `%s` by hand and read the runtime's message.", x->command);
}

CHECK_INFO(container_gpu_access, "container", "container.gpu_access", LEVEL_STANDARD, NEED_NVML | NEED_CONTAINER_GPU,
           "A CUDA container started with the GPUs sees every GPU of the host (same UUIDs)",
           run_gpu_access);

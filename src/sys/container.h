/* Container runtimes and the NVIDIA Container Toolkit: what is installed, and whether
 * docker, containerd and CDI are configured to hand GPUs to containers. */
#pragma once

#include <stdbool.h>

struct fsroot;
struct facts;

enum container_file {
        CONTAINER_FILE_ABSENT,
        CONTAINER_FILE_OK,
        CONTAINER_FILE_UNREADABLE, /* errno in the matching *_errno field */
        CONTAINER_FILE_MALFORMED,  /* message in the matching *_error field */
};

#define CONTAINER_EXE_PATH 128

struct container_facts {
        /* Where each executable was found ("/usr/bin/docker"); "" when absent. */
        char docker[CONTAINER_EXE_PATH], dockerd[CONTAINER_EXE_PATH], containerd[CONTAINER_EXE_PATH],
                podman[CONTAINER_EXE_PATH];
        char nvidia_ctk[CONTAINER_EXE_PATH], nvidia_container_cli[CONTAINER_EXE_PATH];
        char nvidia_container_runtime[CONTAINER_EXE_PATH];
        char nvidia_container_runtime_hook[CONTAINER_EXE_PATH]; /* what `docker run --gpus` calls (moby) */
        bool have_containers_dir;  /* /etc/containers: podman/buildah configuration */
        bool have_toolkit_config;  /* /etc/nvidia-container-runtime/config.toml */

        /* /etc/docker/daemon.json */
        enum container_file daemon_json;
        int daemon_json_errno;
        char daemon_json_error[256]; /* "line 3, column 5: ..." */
        char docker_nvidia_runtime[64];       /* runtime whose path is nvidia-container-runtime */
        char docker_nvidia_runtime_path[256];
        bool docker_nvidia_runtime_installed; /* that path resolves to an executable */
        char docker_default_runtime[64];      /* "default-runtime"; "" when unset */
        int docker_cdi_feature;               /* "features": {"cdi": ...}: 1, 0, -1 unset */

        /* /etc/containerd/config.toml and its conf.d drop-ins */
        enum container_file containerd_config;
        int containerd_config_errno;
        bool containerd_nvidia_runtime;
        char containerd_nvidia_where[320];  /* "FILE:LINE: text" of the first match */
        char containerd_default_runtime[64]; /* default_runtime_name; "" when unset */
        bool containerd_cri_disabled; /* disabled_plugins names "cri": containerd only backs docker */

        /* CDI specs in /etc/cdi and /var/run/cdi */
        unsigned cdi_specs;            /* spec files read */
        unsigned cdi_nvidia_specs;     /* of those, kind nvidia.com/gpu */
        unsigned cdi_nvidia_devices;   /* devices those specs declare ("0", "GPU-...", "all") */
        char cdi_first_nvidia[256];    /* path of the first nvidia.com/gpu spec */
        char cdi_driver_version[32];   /* from a libcuda.so.<version> the spec mounts; "" unknown */
        char cdi_bad_path[256];        /* first spec that could not be read or parsed */
        char cdi_bad_reason[256];
};

int container_gather(struct fsroot *fs, struct facts *f);
void container_facts_done(struct container_facts *x);

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "core/fsroot.h"
#include "sys/container_gpu.h"
#include "tree.h"

struct node {
        struct facts f;
        struct pci_dev devs[1];
        struct gpu gpus[1];
        struct report rep;
};

static void node_init(struct node *n, size_t n_gpus) {
        memset(n, 0, sizeof(*n));
        strcpy(n->devs[0].addr, "0000:1b:00.0");
        strcpy(n->devs[0].driver, "nvidia");
        n->f.pci.devs = n->devs;
        n->f.pci.n = n_gpus;
        n->f.gpus.gpus = n->gpus;
        n->f.gpus.n = n_gpus;
        n->f.container.docker_cdi_feature = -1;
        report_init(&n->rep);
}

static const struct result *run(struct node *n, const struct check_info *c) {
        report_done(&n->rep);
        report_init(&n->rep);
        c->run(c, &n->f, &n->rep);
        assert_int_equal(n->rep.n_results, 1);
        return &n->rep.results[0];
}

static void test_runtime(void **state) {
        (void)state;
        struct node n;
        node_init(&n, 1);
        const struct result *r = run(&n, &check_container_runtime);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "no container runtime installed (docker, containerd, podman)");

        strcpy(n.f.container.docker, "/usr/bin/docker");
        r = run(&n, &check_container_runtime);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "docker (client only, no dockerd)");

        strcpy(n.f.container.dockerd, "/usr/bin/dockerd");
        strcpy(n.f.container.containerd, "/usr/bin/containerd");
        strcpy(n.f.container.podman, "/usr/bin/podman");
        r = run(&n, &check_container_runtime);
        assert_string_equal(r->observed, "docker, containerd, podman");
        assert_string_equal(r->expected, "informational");
        report_done(&n.rep);
}

static void test_toolkit(void **state) {
        (void)state;
        struct node n;
        node_init(&n, 1);
        strcpy(n.f.container.docker, "/usr/bin/docker");
        const struct result *r = run(&n, &check_container_toolkit);
        assert_int_equal(r->status, STATUS_SKIP); /* a client alone runs no container here */

        strcpy(n.f.container.dockerd, "/usr/bin/dockerd");
        r = run(&n, &check_container_toolkit);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->observed, "not installed");
        assert_string_equal(r->expected, "NVIDIA Container Toolkit installed");
        assert_non_null(strstr(r->remedy, "nvidia-ctk runtime configure --runtime=docker"));

        n.f.gpus.n = 0;
        r = run(&n, &check_container_toolkit);
        assert_int_equal(r->status, STATUS_SKIP);

        strcpy(n.f.container.nvidia_ctk, "/usr/bin/nvidia-ctk");
        strcpy(n.f.container.nvidia_container_cli, "/usr/bin/nvidia-container-cli");
        r = run(&n, &check_container_toolkit);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "/usr/bin/nvidia-ctk, /usr/bin/nvidia-container-cli");
        report_done(&n.rep);
}

static void test_docker_runtime(void **state) {
        (void)state;
        struct node n;
        node_init(&n, 1);
        struct container_facts *c = &n.f.container;
        strcpy(c->docker, "/usr/bin/docker");
        const struct result *r = run(&n, &check_container_docker_runtime);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "the docker engine (dockerd) is not installed (only the docker client)");

        strcpy(c->dockerd, "/usr/bin/dockerd");
        r = run(&n, &check_container_docker_runtime);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->observed, "no daemon.json");
        assert_string_equal(r->expected, "an nvidia runtime in /etc/docker/daemon.json, or a CDI spec for nvidia.com/gpu");
        assert_string_equal(r->remedy, "Install nvidia-container-toolkit first, then `nvidia-ctk runtime configure "
                                       "--runtime=docker && systemctl restart docker`.");

        strcpy(c->nvidia_container_runtime_hook, "/usr/bin/nvidia-container-runtime-hook");
        r = run(&n, &check_container_docker_runtime);
        assert_int_equal(r->status, STATUS_PASS);
        assert_non_null(strstr(r->summary, "`docker run --gpus` works"));
        c->nvidia_container_runtime_hook[0] = '\0';

        c->daemon_json = CONTAINER_FILE_OK;
        c->cdi_nvidia_specs = 1;
        strcpy(c->cdi_first_nvidia, "/etc/cdi/nvidia.yaml");
        r = run(&n, &check_container_docker_runtime);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "no nvidia runtime; CDI spec /etc/cdi/nvidia.yaml");
        c->docker_cdi_feature = 0;
        r = run(&n, &check_container_docker_runtime);
        assert_int_equal(r->status, STATUS_WARN);

        strcpy(c->docker_nvidia_runtime, "nvidia");
        strcpy(c->docker_nvidia_runtime_path, "nvidia-container-runtime");
        strcpy(c->docker_default_runtime, "nvidia");
        r = run(&n, &check_container_docker_runtime);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->observed, "runtime \"nvidia\" -> nvidia-container-runtime (default)");

        c->docker_nvidia_runtime_installed = true;
        r = run(&n, &check_container_docker_runtime);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->summary, "docker has the \"nvidia\" runtime (nvidia-container-runtime), the default");

        c->daemon_json = CONTAINER_FILE_MALFORMED;
        strcpy(c->daemon_json_error, "line 3, column 1: '}' expected near end of file");
        r = run(&n, &check_container_docker_runtime);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->summary, "/etc/docker/daemon.json is not valid JSON (line 3, column 1: '}' expected near "
                                        "end of file): dockerd refuses to start with it");

        c->daemon_json = CONTAINER_FILE_UNREADABLE;
        c->daemon_json_errno = -EACCES;
        r = run(&n, &check_container_docker_runtime);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "needs root to read /etc/docker/daemon.json");
        report_done(&n.rep);
}

static void test_containerd_runtime(void **state) {
        (void)state;
        struct node n;
        node_init(&n, 1);
        struct container_facts *c = &n.f.container;
        const struct result *r = run(&n, &check_container_containerd_runtime);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "containerd is not installed");

        strcpy(c->containerd, "/usr/bin/containerd");
        r = run(&n, &check_container_containerd_runtime);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->observed, "no config.toml (built-in defaults)");
        assert_non_null(strstr(r->remedy, "nvidia-ctk runtime configure --runtime=containerd"));

        c->containerd_config = CONTAINER_FILE_OK;
        c->containerd_nvidia_runtime = true;
        strcpy(c->containerd_nvidia_where, "/etc/containerd/config.toml:12: [plugins.x.runtimes.nvidia]");
        strcpy(c->containerd_default_runtime, "nvidia");
        r = run(&n, &check_container_containerd_runtime);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->summary, "containerd has an nvidia runtime (the default)");
        assert_string_equal(r->observed, "/etc/containerd/config.toml:12: [plugins.x.runtimes.nvidia]");

        c->containerd_cri_disabled = true;
        r = run(&n, &check_container_containerd_runtime);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_non_null(strstr(r->summary, "CRI plugin is disabled"));
        c->containerd_cri_disabled = false;

        n.f.gpus.n = 0;
        r = run(&n, &check_container_containerd_runtime);
        assert_int_equal(r->status, STATUS_SKIP);
        report_done(&n.rep);
}

static void test_cdi(void **state) {
        (void)state;
        struct node n;
        node_init(&n, 1);
        struct container_facts *c = &n.f.container;
        const struct result *r = run(&n, &check_container_cdi);
        assert_int_equal(r->status, STATUS_SKIP);

        strcpy(c->nvidia_ctk, "/usr/bin/nvidia-ctk");
        r = run(&n, &check_container_cdi);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->observed, "no nvidia.com/gpu spec (0 other specs)");
        assert_string_equal(r->remedy, "`nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`, then check with "
                                       "`nvidia-ctk cdi list`.");

        c->cdi_specs = 1;
        c->cdi_nvidia_specs = 1;
        c->cdi_nvidia_devices = 9;
        strcpy(c->cdi_first_nvidia, "/etc/cdi/nvidia.yaml");
        strcpy(c->cdi_driver_version, "550.54.15");
        r = run(&n, &check_container_cdi);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "1 nvidia.com/gpu spec, 9 devices");

        n.f.nvidia.have_version = true;
        strcpy(n.f.nvidia.driver_version, "560.35.03");
        r = run(&n, &check_container_cdi);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->summary,
                            "CDI spec /etc/cdi/nvidia.yaml was generated for driver 550.54.15, but 560.35.03 is installed");
        assert_string_equal(r->expected, "a spec generated for driver 560.35.03");

        strcpy(c->cdi_bad_path, "/etc/cdi/broken.json");
        strcpy(c->cdi_bad_reason, "line 1, column 1: unexpected token");
        r = run(&n, &check_container_cdi);
        assert_int_equal(r->status, STATUS_ERROR);
        report_done(&n.rep);
}

/* As `nvidia-ctk cdi generate` writes it (keys sorted, list items at column 0). */
static const char cdi_yaml[] = "---\n"
                               "cdiVersion: 0.5.0\n"
                               "containerEdits:\n"
                               "  deviceNodes:\n"
                               "  - path: /dev/nvidiactl\n"
                               "  mounts:\n"
                               "  - containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\n"
                               "    hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\n"
                               "devices:\n"
                               "- containerEdits:\n"
                               "    deviceNodes:\n"
                               "    - path: /dev/nvidia0\n"
                               "  name: \"0\"\n"
                               "- containerEdits:\n"
                               "    deviceNodes:\n"
                               "    - path: /dev/nvidia0\n"
                               "  name: GPU-9a1b2c3d\n"
                               "- containerEdits:\n"
                               "    deviceNodes:\n"
                               "    - path: /dev/nvidia0\n"
                               "  name: all\n"
                               "kind: nvidia.com/gpu\n";

static const char containerd_v2[] =
        "version = 2\n"
        "imports = [\"/etc/containerd/conf.d/*.toml\"]\n"
        "[plugins]\n"
        "  [plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
        "    # default_runtime_name = \"runc\"\n"
        "    default_runtime_name = \"nvidia\"\n"
        "    [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n";

static void test_gather(void **state) {
        (void)state;
        char *root = tree_new("container");
        tree_put(root, "/usr/bin/docker", "");
        tree_put(root, "/usr/bin/dockerd", "");
        tree_put(root, "/usr/bin/containerd", "");
        tree_put(root, "/usr/bin/nvidia-container-runtime", "");
        tree_put(root, "/usr/local/bin/nvidia-ctk", "");
        tree_put(root, "/etc/docker/daemon.json",
                 "{\n  \"default-runtime\": \"nvidia\",\n  \"runtimes\": {\n    \"nvidia\": {\n      \"args\": [],\n"
                 "      \"path\": \"nvidia-container-runtime\"\n    }\n  },\n  \"features\": {\"cdi\": true}\n}\n");
        tree_put(root, "/etc/containerd/config.toml", containerd_v2);
        tree_put(root, "/etc/containerd/conf.d/99-nvidia.toml",
                 "[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.nvidia]\n"
                 "  runtime_type = \"io.containerd.runc.v2\"\n");
        tree_put(root, "/etc/cdi/nvidia.yaml", cdi_yaml);
        tree_put(root, "/etc/cdi/README", "not a spec\n");
        tree_put(root, "/var/run/cdi/other.json", "{\"cdiVersion\":\"0.6.0\",\"kind\":\"vendor.com/fpga\",\"devices\":[{}]}");

        struct fsroot *fs;
        assert_int_equal(fsroot_open(root, &fs), 0);
        struct facts f;
        memset(&f, 0, sizeof(f));
        assert_int_equal(container_gather(fs, &f), 0);
        struct container_facts *c = &f.container;
        assert_string_equal(c->docker, "/usr/bin/docker");
        assert_string_equal(c->dockerd, "/usr/bin/dockerd");
        assert_string_equal(c->nvidia_ctk, "/usr/local/bin/nvidia-ctk");
        assert_string_equal(c->podman, "");
        assert_int_equal(c->daemon_json, CONTAINER_FILE_OK);
        assert_string_equal(c->docker_nvidia_runtime, "nvidia");
        assert_string_equal(c->docker_nvidia_runtime_path, "nvidia-container-runtime");
        assert_true(c->docker_nvidia_runtime_installed);
        assert_string_equal(c->docker_default_runtime, "nvidia");
        assert_int_equal(c->docker_cdi_feature, 1);
        assert_int_equal(c->containerd_config, CONTAINER_FILE_OK);
        assert_true(c->containerd_nvidia_runtime);
        assert_string_equal(c->containerd_nvidia_where, "/etc/containerd/conf.d/99-nvidia.toml:1: "
                                                        "[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.nvidia]");
        assert_string_equal(c->containerd_default_runtime, "nvidia");
        assert_false(c->containerd_cri_disabled);
        assert_int_equal(c->cdi_specs, 2);
        assert_int_equal(c->cdi_nvidia_specs, 1);
        assert_int_equal(c->cdi_nvidia_devices, 3);
        assert_string_equal(c->cdi_first_nvidia, "/etc/cdi/nvidia.yaml");
        assert_string_equal(c->cdi_driver_version, "550.54.15");
        assert_string_equal(c->cdi_bad_path, "");

        /* Broken inputs: a truncated daemon.json, a runtime pointing at nothing, a bad spec. */
        tree_put(root, "/etc/docker/daemon.json", "{\n  \"runtimes\": {\n");
        tree_put(root, "/etc/cdi/broken.json", "{\"kind\": ");
        tree_put(root, "/etc/containerd/config.toml", "version = 2\ndisabled_plugins = [\"cri\"]\n");
        assert_int_equal(container_gather(fs, &f), 0);
        assert_true(c->containerd_cri_disabled);
        assert_int_equal(c->daemon_json, CONTAINER_FILE_MALFORMED);
        assert_non_null(strstr(c->daemon_json_error, "line 3"));
        assert_false(c->containerd_nvidia_runtime);
        assert_string_equal(c->cdi_bad_path, "/etc/cdi/broken.json");

        tree_put(root, "/etc/docker/daemon.json",
                 "{\"runtimes\": {\"gpu\": {\"path\": \"/opt/nvidia/nvidia-container-runtime\"}}}");
        assert_int_equal(container_gather(fs, &f), 0);
        assert_string_equal(c->docker_nvidia_runtime, "gpu");
        assert_false(c->docker_nvidia_runtime_installed);
        assert_int_equal(c->docker_cdi_feature, -1);

        tree_put(root, "/etc/docker/daemon.json", "[]");
        assert_int_equal(container_gather(fs, &f), 0);
        assert_int_equal(c->daemon_json, CONTAINER_FILE_MALFORMED);
        assert_string_equal(c->daemon_json_error, "the top level is not a JSON object");

        fsroot_free(fs);
        tree_remove(root);
}

/* container.gpu_access judges what sys/container_gpu recorded (the runs themselves are
 * tests/golden/test_container_gpu.py's). */
static void test_gpu_access(void **state) {
        (void)state;
        struct node n;
        node_init(&n, 1);
        const struct result *r = run(&n, &check_container_gpu_access);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "not run");

        static struct container_gpu_facts x;
        memset(&x, 0, sizeof(x));
        snprintf(x.note, sizeof(x.note), "no container runtime (docker, podman) installed");
        n.f.container_gpu = &x;
        r = run(&n, &check_container_gpu_access);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "no container runtime (docker, podman) installed");

        /* It ran; NVML gave the host's UUID. */
        static struct nvml_gpu host[1];
        memset(host, 0, sizeof(host));
        host[0].uuid.state = NV_OK;
        strcpy(host[0].uuid.v, "GPU-1111");
        n.f.nvml.init_state = NVML_INIT_OK;
        n.f.nvml.gpus = host;
        n.f.nvml.n_gpus = 1;
        x.ran = true;
        strcpy(x.rt.exe, "/usr/bin/docker");
        x.rt.chosen_by = "PATH";
        strcpy(x.image, "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04");
        x.step = "run";
        x.outcome = CONTAINER_OK;
        strcpy(x.uuids[0], "GPU-1111");
        x.n_uuids = 1;
        r = run(&n, &check_container_gpu_access);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->summary, "a container sees the host's GPU (same UUID)");

        x.n_uuids = 0;
        r = run(&n, &check_container_gpu_access);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->summary, "the container sees 0 of the host's 1 GPUs: 1 missing (GPU-1111)");
        assert_non_null(strstr(r->remedy, "nvidia-ctk runtime configure --runtime=docker"));
        x.rt.gpus = CONTAINER_GPUS_CDI;
        r = run(&n, &check_container_gpu_access);
        assert_non_null(strstr(r->remedy, "nvidia-ctk cdi generate"));

        x.outcome = CONTAINER_GPU_HOOK;
        strcpy(x.cause, "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown.");
        r = run(&n, &check_container_gpu_access);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_non_null(strstr(r->summary, "driver not loaded"));
        x.outcome = CONTAINER_NO_IMAGE;
        r = run(&n, &check_container_gpu_access);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_non_null(strstr(r->summary, "`docker pull nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04`"));
        x.outcome = CONTAINER_TIMEOUT;
        x.timeout_s = 60;
        r = run(&n, &check_container_gpu_access);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->summary, "`docker run` did not finish within 60 s; it was killed");
        x.outcome = CONTAINER_RUNTIME_ERROR;
        strcpy(x.cause, "docker: something new.");
        r = run(&n, &check_container_gpu_access);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->summary, "docker run failed: docker: something new.");
        report_done(&n.rep);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_runtime),
                cmocka_unit_test(test_toolkit),
                cmocka_unit_test(test_docker_runtime),
                cmocka_unit_test(test_containerd_runtime),
                cmocka_unit_test(test_cdi),
                cmocka_unit_test(test_gather),
                cmocka_unit_test(test_gpu_access),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

/* sys/container_run: which runtime is run and how a failure is sorted, on the texts docker,
 * podman and the NVIDIA Container Toolkit print (tests/fakes/README.md cites them). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "data/compat.h"
#include "data/ngcdb.h"
#include "sys/container.h"
#include "sys/container_gpu.h"
#include "sys/container_run.h"

static enum container_outcome classify(int status, bool runs_container, const char *err, char *cause) {
        return container_classify(status, runs_container, err, cause, 512);
}

static void test_classify(void **state) {
        (void)state;
        char cause[512];
        assert_int_equal(classify(0, true, "", cause), CONTAINER_OK);
        assert_int_equal(classify(125, true,
                                  "docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the "
                                  "docker daemon running?.\nSee 'docker run --help'.\n",
                                  cause),
                         CONTAINER_NO_DAEMON);
        assert_non_null(strstr(cause, "Cannot connect"));
        assert_int_equal(classify(125, true,
                                  "docker: Error response from daemon: No such image: nvcr.io/nvidia/cuda:12.8.1-base-"
                                  "ubuntu24.04.\nSee 'docker run --help'.\n",
                                  cause),
                         CONTAINER_NO_IMAGE);
        assert_string_equal(cause, "docker: Error response from daemon: No such image: nvcr.io/nvidia/cuda:12.8.1-base-"
                                   "ubuntu24.04.");
        assert_int_equal(classify(125, true, "Error: nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04: image not known\n", cause),
                         CONTAINER_NO_IMAGE);
        const char *hook =
                "docker: Error response from daemon: failed to create task for container: failed to create shim task: "
                "OCI runtime create failed: runc create failed: unable to start container process: error during "
                "container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: "
                "Auto-detected mode as 'legacy'\nnvidia-container-cli: initialization error: nvml error: driver not "
                "loaded: unknown.\n";
        assert_int_equal(classify(125, true, hook, cause), CONTAINER_GPU_HOOK);
        assert_string_equal(cause, "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown.");
        assert_int_equal(classify(125, true,
                                  "docker: Error response from daemon: could not select device driver \"\" with "
                                  "capabilities: [[gpu]].\n",
                                  cause),
                         CONTAINER_GPU_HOOK);
        assert_int_equal(classify(125, true,
                                  "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please "
                                  "update your driver to a newer version, or use an earlier cuda container: unknown\n",
                                  cause),
                         CONTAINER_DRIVER_TOO_OLD);
        assert_int_equal(classify(126, true,
                                  "Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all\n", cause),
                         CONTAINER_CDI);
        /* The container's own failures are its exit status, not the runtime's. */
        assert_int_equal(classify(1, true, "No devices were found\n", cause), CONTAINER_EXITED);
        assert_int_equal(classify(125, true, "docker: something new went wrong.\n", cause), CONTAINER_RUNTIME_ERROR);
        assert_string_equal(cause, "docker: something new went wrong.");
        /* Any other subcommand failed itself. */
        assert_int_equal(classify(1, false, "Error: No such image: cuda:12\n", cause), CONTAINER_NO_IMAGE);
        assert_int_equal(classify(1, false, "Error: boom\n", cause), CONTAINER_RUNTIME_ERROR);
}

static void test_choose(void **state) {
        (void)state;
        struct container_facts c;
        memset(&c, 0, sizeof(c));
        struct container_runtime rt;
        unsetenv(CONTAINER_RUNTIME_ENV);
        assert_int_equal(container_runtime_choose(NULL, NULL, &c, &rt), -ENOENT);

        strcpy(c.podman, "/usr/bin/podman");
        assert_int_equal(container_runtime_choose(NULL, NULL, &c, &rt), 0);
        assert_string_equal(rt.exe, "/usr/bin/podman");
        assert_int_equal(rt.engine, CONTAINER_ENGINE_PODMAN);
        assert_int_equal(rt.gpus, CONTAINER_GPUS_CDI);
        assert_string_equal(rt.chosen_by, "PATH");

        strcpy(c.docker, "/usr/bin/docker");
        assert_int_equal(container_runtime_choose(NULL, NULL, &c, &rt), 0);
        assert_string_equal(rt.exe, "/usr/bin/docker");
        assert_int_equal(rt.gpus, CONTAINER_GPUS_FLAG);
        /* docker with a CDI spec but nothing that serves --gpus: CDI. */
        c.cdi_nvidia_specs = 1;
        assert_int_equal(container_runtime_choose(NULL, NULL, &c, &rt), 0);
        assert_int_equal(rt.gpus, CONTAINER_GPUS_CDI);
        strcpy(c.nvidia_container_runtime_hook, "/usr/bin/nvidia-container-runtime-hook");
        assert_int_equal(container_runtime_choose(NULL, NULL, &c, &rt), 0);
        assert_int_equal(rt.gpus, CONTAINER_GPUS_FLAG);

        setenv(CONTAINER_RUNTIME_ENV, "/opt/test/podman-stand-in", 1);
        assert_int_equal(container_runtime_choose(NULL, NULL, &c, &rt), 0);
        assert_string_equal(rt.exe, "/opt/test/podman-stand-in");
        assert_int_equal(rt.engine, CONTAINER_ENGINE_PODMAN);
        assert_string_equal(rt.chosen_by, "$" CONTAINER_RUNTIME_ENV);
        assert_int_equal(container_runtime_choose("/usr/local/bin/docker", "site policy", &c, &rt), 0);
        assert_string_equal(rt.exe, "/usr/local/bin/docker");
        assert_string_equal(rt.chosen_by, "site policy");
        unsetenv(CONTAINER_RUNTIME_ENV);
}

static void test_missing_runtime(void **state) {
        (void)state;
        struct container_runtime rt = {.engine = CONTAINER_ENGINE_DOCKER};
        strcpy(rt.exe, "/nonexistent/docker");
        struct container_result r;
        assert_int_equal(container_image_inspect(&rt, "cuda:12", 5000, &r), 0);
        assert_int_equal(r.outcome, CONTAINER_NO_RUNTIME);
        assert_non_null(strstr(r.cause, "/nonexistent/docker"));
        container_result_done(&r);
}

/* The default test image: the CUDA base image of the newest CUDA the driver runs natively. */
static void test_default_image(void **state) {
        (void)state;
        struct compat *c;
        struct ngcdb *db;
        char err[256], image[256], why[192];
        assert_int_equal(compat_load(NULL, &c, err, sizeof(err)), 0);
        assert_int_equal(ngcdb_load(NULL, c, &db, err, sizeof(err)), 0);
        assert_int_equal(container_default_image(db, "550.54.15", image, sizeof(image), why, sizeof(why)), 0);
        assert_string_equal(image, "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04");
        /* 550.54.14 is 12.4's GA driver: 12.4.1 needs 550.54.15. */
        assert_int_equal(container_default_image(db, "550.54.14", image, sizeof(image), why, sizeof(why)), 0);
        assert_string_equal(image, "nvcr.io/nvidia/cuda:12.4.0-base-ubuntu22.04");
        assert_int_equal(container_default_image(db, "580.95.05", image, sizeof(image), why, sizeof(why)), 0);
        assert_string_equal(image, "nvcr.io/nvidia/cuda:13.0.2-base-ubuntu24.04");
        assert_int_equal(container_default_image(db, NULL, image, sizeof(image), why, sizeof(why)), -ENOENT);
        assert_string_equal(why, "the driver version is unknown");
        assert_int_equal(container_default_image(db, "300.1", image, sizeof(image), why, sizeof(why)), -ENOENT);
        ngcdb_free(db);
        compat_free(c);
}

static void test_parse_uuids(void **state) {
        (void)state;
        static struct container_gpu_facts x;
        container_gpu_parse_uuids("GPU-aaaa\n  GPU-bbbb  \r\nNo devices were found\nMIG-cccc\n", &x);
        assert_int_equal(x.n_uuids, 3);
        assert_string_equal(x.uuids[1], "GPU-bbbb");
        assert_string_equal(x.uuids[2], "MIG-cccc");
        container_gpu_parse_uuids("", &x);
        assert_int_equal(x.n_uuids, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_classify),
                cmocka_unit_test(test_choose),
                cmocka_unit_test(test_missing_runtime),
                cmocka_unit_test(test_default_image),
                cmocka_unit_test(test_parse_uuids),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

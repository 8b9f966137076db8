#!/usr/bin/env python3
"""Stand-in for docker and podman, for container.gpu_access and `gpuvet ngc` (no container
daemon runs on the test machines). It answers the three calls gpuvet makes:

  image inspect --format {{.Id}} IMAGE   prints a sha256 id (the image is "local")
  pull IMAGE                             prints docker's progress lines
  rm --force NAME                        prints NAME (in every scenario: the daemon removes a
                                         hung container)
  run --rm --name NAME --pull=never --network=none (--gpus all | --device nvidia.com/gpu=all) IMAGE CMD...
      nvidia-smi --query-gpu=uuid ...    the UUIDs of the fake NVML's GPUs ($FAKE_NVML_SCENARIO)
      nvidia-smi -L                      "GPU 0: NAME (UUID: ...)" lines
      python3 -c SCRIPT / python -c ...  the line gpuvet's framework test prints (data/ngc.json):
                                         {"framework": ..., "gpu_count": N, "gpus": [uuids],
                                          "matmul_ok": true, "max_abs_err": ...}

$FAKE_CONTAINER_SCENARIO picks a recorded behaviour (default ok); the error texts are the
ones docker, podman and the NVIDIA Container Toolkit print (tests/fakes/README.md cites
where each was seen):

  ok            as above
  missing-gpu   the run sees every GPU but the last
  daemon-down   docker: Cannot connect to the Docker daemon ... (exit 125; 1 for inspect/pull)
  image-missing inspect: Error: No such image (exit 1); run: No such image (exit 125);
                pull: manifest unknown (exit 1)
  hook-error    run: the OCI hook error ending in nvidia-container-cli's initialization error
  no-gpu-driver run: could not select device driver "" with capabilities: [[gpu]]
  driver-too-old run: nvidia-container-cli: requirement error: unsatisfied condition: cuda>=...
  cdi-error     run: podman's unresolvable CDI devices nvidia.com/gpu=all (exit 125)
  matmul-wrong  the framework test reports a wrong matmul
  hang          every call but rm sleeps far past any deadline gpuvet gives
  hang-run      only run sleeps so (the container hangs: nvidia-smi on a wedged GPU)

Each call is appended to $FAKE_CONTAINER_LOG (one line, arguments joined by spaces)."""
import hashlib
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fakeenv  # noqa: E402  (load_scenario)

DAEMON_DOWN = ("docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. "
               "Is the docker daemon running?.\nSee 'docker run --help'.\n")
HOOK_ERROR = ("docker: Error response from daemon: failed to create task for container: failed to create shim "
              "task: OCI runtime create failed: runc create failed: unable to start container process: error "
              "during container init: error running hook #0: error running hook: exit status 1, stdout: , "
              "stderr: Auto-detected mode as 'legacy'\nnvidia-container-cli: initialization error: nvml error: "
              "driver not loaded: unknown.\n")
NO_GPU_DRIVER = "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].\n"
DRIVER_TOO_OLD = ("docker: Error response from daemon: failed to create task for container: failed to create shim "
                  "task: OCI runtime create failed: runc create failed: unable to start container process: error "
                  "during container init: error running prestart hook #0: exit status 1, stdout: , stderr: "
                  "Auto-detected mode as 'legacy'\nnvidia-container-cli: requirement error: unsatisfied condition: "
                  "cuda>=12.8, please update your driver to a newer version, or use an earlier cuda container: "
                  "unknown\n")
CDI_ERROR = "Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all\n"


def gpus():
    path = os.environ.get("FAKE_NVML_SCENARIO")
    if not path:
        return []
    scn = fakeenv.load_scenario(path)
    out = []
    for i in sorted(scn["gpus"]):
        g = scn["gpus"][i]
        if "uuid" in g:
            out.append((i, g.get("name", "NVIDIA GPU"), g["uuid"]))
    return out


def fail(text, status):
    sys.stderr.write(text)
    return status


def run(args, scenario):
    """args: what follows `run`."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("--gpus", "--device", "--name", "-e", "--env", "-v", "--volume") else 1
    if i >= len(args):
        return fail("docker: 'docker run' requires at least 1 argument.\n", 125)
    image, cmd = args[i], args[i + 1:]
    if scenario == "daemon-down":
        return fail(DAEMON_DOWN, 125)
    if scenario == "image-missing":
        return fail("docker: Error response from daemon: No such image: %s.\nSee 'docker run --help'.\n" % image, 125)
    if scenario == "hook-error":
        return fail(HOOK_ERROR, 125)
    if scenario == "no-gpu-driver":
        return fail(NO_GPU_DRIVER, 125)
    if scenario == "driver-too-old":
        return fail(DRIVER_TOO_OLD, 125)
    if scenario == "cdi-error":
        return fail(CDI_ERROR, 126)
    seen = gpus()
    if scenario == "missing-gpu":
        seen = seen[:-1]
    if not cmd:
        return 0
    if cmd[0] == "nvidia-smi":
        if not seen:
            print("No devices were found")
            return 6
        for idx, name, uuid in seen:
            print("GPU %d: %s (UUID: %s)" % (idx, name, uuid) if "-L" in cmd else uuid)
        return 0
    if cmd[0] in ("python", "python3") and "-c" in cmd:
        script = cmd[cmd.index("-c") + 1]
        framework = "tensorflow" if "import tensorflow" in script else "pytorch"
        ok = scenario != "matmul-wrong"
        # TensorFlow shows no UUIDs: its script reports the count alone.
        print(json.dumps({"framework": framework, "version": "fake", "gpu_count": len(seen),
                          "gpus": [] if framework == "tensorflow" else [u for _, _, u in seen],
                          "matmul_ok": ok, "max_abs_err": 1e-6 if ok else 3.5}))
        return 0 if ok else 1
    return fail("docker: Error response from daemon: failed to create task for container: exec: \"%s\": "
                "executable file not found in $PATH: unknown.\n" % cmd[0], 127)


def main(args):
    log = os.environ.get("FAKE_CONTAINER_LOG")
    if log:
        with open(log, "a") as f:
            f.write(" ".join(args) + "\n")
    scenario = os.environ.get("FAKE_CONTAINER_SCENARIO", "ok")
    if args[:2] == ["rm", "--force"] and len(args) == 3:
        # The daemon removes a hung container even when its client is gone.
        print(args[2])
        return 0
    if scenario == "hang" or (scenario == "hang-run" and args[:1] == ["run"]):
        time.sleep(3600)
        return 0
    if args[:2] == ["image", "inspect"]:
        image = args[-1]
        if scenario == "daemon-down":
            return fail(DAEMON_DOWN.replace("See 'docker run --help'.\n", ""), 1)
        if scenario == "image-missing":
            return fail("Error: No such image: %s\n" % image, 1)
        print("sha256:" + hashlib.sha256(image.encode()).hexdigest())
        return 0
    if args[:1] == ["pull"] and len(args) == 2:
        image = args[1]
        if scenario == "daemon-down":
            return fail(DAEMON_DOWN.replace("See 'docker run --help'.\n", ""), 1)
        if scenario == "image-missing":
            return fail("Error response from daemon: manifest for %s not found: manifest unknown: manifest "
                        "unknown\n" % image, 1)
        repo, _, tag = image.rpartition(":")
        print("%s: Pulling from %s" % (tag, repo.split("/", 1)[-1]))
        print("Digest: sha256:" + hashlib.sha256(image.encode()).hexdigest())
        print("Status: Downloaded newer image for %s" % image)
        print(image)
        return 0
    if args[:1] == ["run"]:
        return run(args[1:], scenario)
    return fail("fake container runtime: unsupported call: %s\n" % " ".join(args), 125)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

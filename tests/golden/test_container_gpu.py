#!/usr/bin/env python3
"""container.gpu_access end to end: `gpuvet check --level standard --only container.gpu_access`
on the dgx-h100 fixture with the fake libnvidia-ml playing its 8 GPUs, and the stand-in
container runtime (tests/fakes/fake_container_runtime.py) playing docker or podman.

    test_container_gpu.py GPUVET FAKE_LIBNVML

Cases: a container that sees the 8 GPUs (pass; the run asks for --gpus all, --pull=never,
--network=none; the default image is the CUDA base image of the driver's CUDA); one GPU
missing (fail naming it); daemon down and image not local (skip, the latter naming the
pull); the NVIDIA hook's error, docker's "could not select device driver", a driver too
old for the image (fail with the remedy of each); podman through CDI and CDI's
"unresolvable" error (fail: nvidia-ctk cdi generate); a runtime that hangs (error at
--container-timeout, on time); a runtime that cannot start (error); a capture without a
named runtime (skip, nothing run); the site policy's container.image and runtime; bad
option and policy values (exit 2). Exit 0 when every case holds, 1 otherwise."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakes"))
import fakeenv  # noqa: E402  (time_scale)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import fixture_cache  # noqa: E402  (the shared fixture trees)

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..")
PCI_IDS = os.path.join(TESTS, "fixtures", "pci.ids")
SCENARIO = os.path.join(HERE, "nvml-scenarios", "golden-h100-sxm-8gpu.scn")
STAND_IN = os.path.join(TESTS, "fakes", "fake_container_runtime.py")
ID = "container.gpu_access"


class Runner:
    def __init__(self, gpuvet, nvml, root, tmp):
        self.gpuvet, self.root, self.tmp = gpuvet, root, tmp
        self.nvml = os.path.join(tmp, "libnvidia-ml.so.1")
        shutil.copyfile(nvml, self.nvml)
        self.log = os.path.join(tmp, "runtime-calls")

    def run(self, args=(), scenario="ok", runtime=STAND_IN, timeout=120):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "GPUVET_"))}
        env.update(GPUVET_PCI_IDS=PCI_IDS, GPUVET_NVML_LIB=self.nvml, FAKE_NVML_SCENARIO=SCENARIO,
                   FAKE_CONTAINER_LOG=self.log, FAKE_CONTAINER_SCENARIO=scenario)
        if runtime:
            env["GPUVET_CONTAINER_RUNTIME"] = runtime
        if os.path.exists(self.log):
            os.unlink(self.log)
        cmd = [self.gpuvet, "check", "--root", self.root, "--level", "standard", "--only", ID, "--no-policy",
               "--json", "-"] + list(args)
        start = time.monotonic()
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        wall = time.monotonic() - start
        try:
            res = [x for x in json.loads(p.stdout)["checks"] if x["id"] == ID]
        except (ValueError, KeyError):
            res = []
        if not check(len(res) == 1, "%s %s: one result (exit %d): %s" % (scenario, " ".join(args), p.returncode,
                                                                          p.stderr[-300:])):
            res = [{"status": None, "summary": "", "evidence": {}, "remedy": None}]
        return p, res[0], wall

    def calls(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return [line.split() for line in f if line.split()]


def main():
    gpuvet, nvml = sys.argv[1:3]
    root = fixture_cache.path("dgx-h100")
    with tempfile.TemporaryDirectory() as tmp:
        r = Runner(gpuvet, nvml, root, tmp)

        p, res, _ = r.run()
        check(p.returncode == 0 and res["status"] == "pass" and "all 8 GPUs" in res["summary"],
              "ok: passes, all 8 GPUs with the host's UUIDs: %s" % res["summary"])
        calls = r.calls()
        image = "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"
        check(len(calls) == 2 and calls[0][:2] == ["image", "inspect"] and calls[0][-1] == image,
              "ok: the image is inspected first (never pulled): %s" % calls[:1])
        run = calls[1] if len(calls) == 2 else []
        check(run[:3] == ["run", "--rm", "--name"] and run[3].startswith("gpuvet-")
              and run[4:9] == ["--pull=never", "--network=none", "--gpus", "all", image] and "nvidia-smi" in run,
              "ok: docker run --rm --name gpuvet-PID-N --pull=never --network=none --gpus all IMAGE nvidia-smi: %s" % run)
        check(res["evidence"].get("image_from", "").startswith("CUDA 12.4.1, the newest release driver 550"),
              "ok: the default image is the CUDA base image of the driver's CUDA: %s" % res["evidence"].get("image_from"))

        p, res, _ = r.run(scenario="missing-gpu")
        check(p.returncode == 1 and res["status"] == "fail" and "7 of the host's 8 GPUs" in res["summary"]
              and "GPU-6f1c2b07" in res["evidence"].get("missing", ""),
              "missing-gpu: fails naming the missing UUID: %s" % res["summary"])

        p, res, _ = r.run(scenario="daemon-down")
        check(p.returncode == 0 and res["status"] == "skip" and "Cannot connect to the Docker daemon" in res["summary"],
              "daemon down: skip quoting docker: %s" % res["summary"])
        p, res, _ = r.run(scenario="image-missing")
        check(res["status"] == "skip" and "not present locally" in res["summary"]
              and "docker pull " + image in res["summary"],
              "image missing: skip naming the pull: %s" % res["summary"])
        check([c[0] for c in r.calls()] == ["image"], "image missing: nothing else is run (no pull, no run)")

        for scenario, words, remedy in (
                ("hook-error", "nvidia-container-cli: initialization error", "nvidia-ctk runtime configure --runtime=docker"),
                ("no-gpu-driver", "could not select device driver", "nvidia-ctk runtime configure --runtime=docker"),
                ("driver-too-old", "unsatisfied condition: cuda>=12.8", "older CUDA")):
            p, res, _ = r.run(scenario=scenario)
            check(p.returncode == 1 and res["status"] == "fail" and words in res["summary"]
                  and remedy in (res["remedy"] or ""),
                  "%s: fails quoting the toolkit, remedy %s: %s" % (scenario, remedy, res["summary"]))

        # podman asks for the GPUs through CDI.
        podman = os.path.join(tmp, "podman")
        os.symlink(STAND_IN, podman)
        p, res, _ = r.run(runtime=podman)
        run_call = [c for c in r.calls() if c[0] == "run"]
        check(res["status"] == "pass" and run_call and "--device" in run_call[0]
              and "nvidia.com/gpu=all" in run_call[0] and "--gpus" not in run_call[0],
              "podman: --device nvidia.com/gpu=all (CDI): %s" % run_call)
        p, res, _ = r.run(scenario="cdi-error", runtime=podman)
        check(res["status"] == "fail" and "unresolvable CDI devices" in res["summary"]
              and "nvidia-ctk cdi generate" in (res["remedy"] or ""),
              "cdi error: fails, remedy nvidia-ctk cdi generate: %s" % res["summary"])

        # A runtime that never answers is killed at the deadline.
        limit = 20 * fakeenv.time_scale()
        p, res, wall = r.run(["--container-timeout", "1"], scenario="hang")
        check(res["status"] == "error" and "did not finish within 1 s" in res["summary"],
              "hang: error at the deadline: %s" % res["summary"])
        # Here `image inspect` must answer first (a Python fake: slow to start on a busy
        # machine), so the deadline is scaled; only `run` hangs.
        run_timeout = str(max(2, int(round(2 * fakeenv.time_scale()))))
        p, res, wall2 = r.run(["--container-timeout", run_timeout, "--container-image", "hang-at-run"],
                              scenario="hang-run")
        rm = [c for c in r.calls() if c[:2] == ["rm", "--force"]]
        run = [c for c in r.calls() if c[0] == "run"]
        check(res["status"] == "error" and "`docker run` did not finish" in res["summary"] and run and rm
              and rm[0][2] == run[0][3] and "removed" in res["evidence"].get("cleanup", ""),
              "hung container: killed at the deadline, then removed by its name: %s %s" % (res["summary"], rm))
        wall = max(wall, wall2)
        check(wall < limit, "hang: the run ends near its deadline (%.1f s, limit %.0f s)" % (wall, limit))

        p, res, _ = r.run(["--container-runtime", os.path.join(tmp, "no-such-docker")])
        check(res["status"] == "error" and "could not be started" in res["summary"],
              "a runtime that cannot start: error: %s" % res["summary"])

        p, res, _ = r.run(runtime=None)
        check(res["status"] == "skip" and "capture" in res["summary"] and not r.calls(),
              "a capture without a named runtime: skip, nothing run: %s" % res["summary"])

        # The site policy names the image and the runtime.
        policy = os.path.join(tmp, "policy.yaml")
        with open(policy, "w") as f:
            f.write("policy: 1\ncontainer:\n  runtime: %s\n  image: registry.example.com/cuda:12.2.2-base\n" % STAND_IN)
        p = subprocess.run([gpuvet, "check", "--root", root, "--level", "standard", "--only", ID, "--policy", policy,
                            "--json", "-"], capture_output=True, text=True, timeout=120,
                           env=dict({k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "GPUVET_"))},
                                    GPUVET_PCI_IDS=PCI_IDS, GPUVET_NVML_LIB=r.nvml, FAKE_NVML_SCENARIO=SCENARIO,
                                    FAKE_CONTAINER_LOG=r.log))
        res = json.loads(p.stdout)["checks"][0] if p.stdout.startswith("{") else {}
        check(res.get("status") == "pass" and res["evidence"].get("image") == "registry.example.com/cuda:12.2.2-base"
              and "site policy" in res["evidence"].get("runtime", ""),
              "site policy: its runtime and image are used: %s" % res.get("evidence"))

        with open(policy, "w") as f:
            f.write("policy: 1\ncontainer:\n  imag: x\n")
        p = subprocess.run([gpuvet, "check", "--policy", policy, "--root", root], capture_output=True, text=True)
        check(p.returncode == 2 and "unknown key \"imag\" in container" in p.stderr,
              "policy: an unknown container key is refused (exit 2): %s" % p.stderr.strip()[:200])
        for bad in ("0", "x", "3601"):
            p = subprocess.run([gpuvet, "check", "--container-timeout", bad], capture_output=True, text=True)
            check(p.returncode == 2 and "--container-timeout" in p.stderr,
                  "--container-timeout %s: exit 2 naming the option" % bad)
    return finish()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""`gpuvet ngc list|pick|pull|test` end to end, on the dgx-h100 fixture (8 x H100, driver
550.54.15) with the fake libnvidia-ml playing its GPUs and the stand-in container runtime
(tests/fakes/fake_container_runtime.py) playing docker.

    test_ngc.py GPUVET FAKE_LIBNVML

Cases: list (text and gpuvet.ngc/1 JSON: every image of the catalogue, the CUDA image's
releases from compat.json's toolkits); pick on the loaded driver (PyTorch 24.05, native),
for R580 (25.10 native, 25.12 and the 26.xx passed over as minor-compat only), for R535 (25.01 through
forward compatibility on the data-center GPUs); pull without a tag (the pick) and its
failures (daemon down, no such tag in the registry); test of PyTorch (UUIDs and matmul),
TensorFlow (count only), CUDA (nvidia-smi only, said so), a missing GPU, a wrong matmul,
an image not pulled, a hung container (killed at --timeout-run); bad input: an unknown
image (lists the known ones), an unknown tag, no runtime, a capture without a named
runtime. Exit 0 when every case holds, 1 otherwise."""
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
IMAGES = ["pytorch", "nemo", "tritonserver", "tensorflow", "tensorrt", "cuda", "rapids", "deepstream"]


class Runner:
    def __init__(self, gpuvet, nvml, root, tmp):
        self.gpuvet, self.root, self.tmp = gpuvet, root, tmp
        self.nvml = os.path.join(tmp, "libnvidia-ml.so.1")
        shutil.copyfile(nvml, self.nvml)
        self.log = os.path.join(tmp, "runtime-calls")

    def run(self, args, scenario="ok", runtime=STAND_IN, root=True, timeout=120):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "GPUVET_"))}
        env.update(GPUVET_PCI_IDS=PCI_IDS, GPUVET_NVML_LIB=self.nvml, FAKE_NVML_SCENARIO=SCENARIO,
                   FAKE_CONTAINER_LOG=self.log, FAKE_CONTAINER_SCENARIO=scenario)
        if runtime:
            env["GPUVET_CONTAINER_RUNTIME"] = runtime
        if os.path.exists(self.log):
            os.unlink(self.log)
        cmd = [self.gpuvet, "ngc"] + list(args) + (["--root", self.root] if root else [])
        start = time.monotonic()
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        return p, time.monotonic() - start

    def json(self, args, **kw):
        p, wall = self.run(list(args) + ["--json"], **kw)
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            doc = {}
        return p, doc, wall

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

        # --- list
        p, doc, _ = r.json(["list"], root=False)
        check(p.returncode == 0 and doc.get("schema") == "gpuvet.ngc/1" and [i["name"] for i in doc["images"]] == IMAGES,
              "list --json: gpuvet.ngc/1 with every image: %s" % [i.get("name") for i in doc.get("images", [])])
        cuda = next((i for i in doc.get("images", []) if i["name"] == "cuda"), {})
        tags = [x["tag"] for x in cuda.get("releases", [])]
        check("12.4.1-base-ubuntu22.04" in tags and "12.8.1-base-ubuntu24.04" in tags,
              "list: the CUDA image's releases come from compat.json's toolkits (22.04 before 12.5, 24.04 after)")
        p, _ = r.run(["list"], root=False)
        check(p.returncode == 0 and "nvcr.io/nvidia/pytorch:{release}-py3" in p.stdout, "list: text names the tag forms")

        # --- pick
        p, doc, _ = r.json(["pick", "pytorch", "tensorflow"])
        picks = {x["image"]: x for x in doc.get("picks", [])}
        check(p.returncode == 0 and doc.get("driver") == "550.54.15" and picks.get("pytorch", {}).get("tag") == "24.05-py3"
              and picks["pytorch"]["verdict"] == "native",
              "pick on the loaded 550.54.15: PyTorch 24.05 natively: %s" % picks.get("pytorch"))
        check(any(e["release"] == "24.06" and "R555" in e["reason"] for e in picks.get("pytorch", {}).get("excluded", [])),
              "pick: the newer releases are excluded with their reason (24.06 needs R555)")
        check(picks.get("tensorflow", {}).get("ref") == "nvcr.io/nvidia/tensorflow:24.05-tf2-py3",
              "pick: TensorFlow's tag form")
        p, doc, _ = r.json(["pick", "--for-driver", "580", "pytorch"])
        pt = (doc.get("picks") or [{}])[0]
        # Every newer release (25.12 on CUDA 13.1, 26.02, 26.03) runs on R580 only through
        # minor-version compatibility, so each is passed over, newest first.
        excluded = [e["release"] for e in pt.get("excluded", [])]
        check(pt.get("release") == "25.10" and pt.get("verdict") == "native" and excluded == ["26.03", "26.02", "25.12"]
              and all(e["verdict"] == "minor_compat" for e in pt["excluded"]),
              "pick for R580: 25.10 natively, 26.03/26.02/25.12 passed over (minor-version compatibility only): %s" % pt)
        p, _ = r.run(["pick", "--for-driver", "535", "pytorch"])
        check(p.returncode == 0 and "25.01-py3" in p.stdout and "forward compatibility" in p.stdout
              and "cuda-compat" in p.stdout,
              "pick for R535: 25.01 with forward compatibility, said so: %s" % p.stdout.strip()[-300:])
        p, _ = r.run(["pick"])
        check(p.returncode == 1 and "rapids       none" in p.stdout,
              "pick of every image on 550: RAPIDS has none (needs R555+), exit 1")

        # --- pull
        p, _ = r.run(["pull", "pytorch"])
        calls = r.calls()
        check(p.returncode == 0 and calls == [["pull", "nvcr.io/nvidia/pytorch:24.05-py3"]],
              "pull without a tag pulls the pick: %s" % calls)
        p, _ = r.run(["pull", "deepstream:7.1"], scenario="daemon-down")
        check(p.returncode == 1 and "cannot reach its daemon" in p.stderr, "pull, daemon down: exit 1 saying so: %s"
              % p.stderr.strip())
        p, _ = r.run(["pull", "cuda:12.4.1"], scenario="image-missing")
        check(p.returncode == 1 and "the registry has no nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04" in p.stderr,
              "pull, no such tag in the registry: exit 1: %s" % p.stderr.strip())

        # --- test
        p, doc, _ = r.json(["test", "pytorch"])
        check(p.returncode == 0 and doc.get("verdict") == "pass" and doc.get("uuids_compared") is True
              and doc.get("container_gpu_count") == 8 and doc.get("matmul_ok") is True,
              "test pytorch: 8 GPUs with the host's UUIDs, matmul verified: %s" % {k: doc.get(k) for k in ("verdict", "container_gpu_count", "matmul_ok")})
        run = [c for c in r.calls() if c[0] == "run"]
        check(run and run[0][:3] == ["run", "--rm", "--name"] and run[0][4:8] == ["--pull=never", "--network=none", "--gpus", "all"]
              and "nvcr.io/nvidia/pytorch:24.05-py3" in run[0] and "python" in run[0],
              "test: docker run --pull=never --gpus all IMAGE python -c SCRIPT")
        p, doc, _ = r.json(["test", "tensorflow:24.05"])
        check(p.returncode == 0 and doc.get("uuids_compared") is False and "count is compared" in (doc.get("note") or ""),
              "test tensorflow: the count is compared (no UUIDs), said so")
        p, _ = r.run(["test", "cuda"])
        check(p.returncode == 0 and "only the GPUs nvidia-smi lists are compared" in p.stdout
              and "sees 8 of the host's 8 GPUs (same UUIDs)" in p.stdout,
              "test cuda: nvidia-smi only, said so: %s" % p.stdout.strip())
        p, _ = r.run(["test", "pytorch"], scenario="missing-gpu")
        check(p.returncode == 1 and "missing: GPU-6f1c2b07" in p.stdout and "FAIL" in p.stdout,
              "test, a GPU missing: fail naming it")
        p, _ = r.run(["test", "pytorch"], scenario="matmul-wrong")
        check(p.returncode == 1 and "does not match the CPU" in p.stdout, "test, wrong matmul: fail")
        p, _ = r.run(["test", "pytorch"], scenario="image-missing")
        check(p.returncode == 1 and "not present locally" in p.stderr and "gpuvet ngc pull pytorch:24.05-py3" in p.stderr
              and [c[0] for c in r.calls()] == ["image"],
              "test, image not pulled: exit 1 naming the pull, nothing run: %s" % p.stderr.strip())
        p, _ = r.run(["test", "pytorch"], scenario="hook-error")
        check(p.returncode == 1 and "nvidia-ctk runtime configure" in p.stderr, "test, hook error: the remedy")
        limit = 20 * fakeenv.time_scale()
        p, wall = r.run(["test", "pytorch", "--timeout-run", "1"], scenario="hang-run")
        check(p.returncode == 1 and "did not finish within" in p.stderr and "removed" in p.stderr and wall < limit,
              "test, hung runtime: killed at the deadline (%.1f s, limit %.0f s): %s" % (wall, limit, p.stderr.strip()))

        # --- bad input
        p, _ = r.run(["test", "pytorchh"])
        check(p.returncode == 2 and "unknown image \"pytorchh\"" in p.stderr and "tritonserver" in p.stderr,
              "unknown image: exit 2 listing the known ones")
        p, _ = r.run(["pull", "pytorch:99.99"])
        check(p.returncode == 2 and "no release \"99.99\"" in p.stderr and "25.10-py3" in p.stderr,
              "unknown tag: exit 2 listing the releases")
        p, _ = r.run(["test", "pytorch", "--container-runtime", os.path.join(tmp, "no-docker")])
        check(p.returncode == 1 and "could not be started" in p.stderr, "a runtime that is not there: exit 1 saying so")
        p, _ = r.run(["test", "pytorch"], runtime=None)
        check(p.returncode == 2 and "--root names a capture" in p.stderr and not r.calls(),
              "a capture without a named runtime: refused, nothing run")
        p, _ = r.run(["bogus"], root=False)
        check(p.returncode == 2 and "unknown subcommand" in p.stderr, "unknown subcommand: exit 2")
        data = os.path.join(tmp, "data")
        os.mkdir(data)
        src = os.path.join(TESTS, "..", "data")
        for name in ("gpus.json", "compat.json"):
            shutil.copyfile(os.path.join(src, name), os.path.join(data, name))
        with open(os.path.join(data, "ngc.json"), "w") as f:
            f.write('{"schema": "gpuvet.ngc_catalogue/1", "tests": {}, "images": []}\n')
        p, _ = r.run(["list", "--data-dir", data], root=False)
        check(p.returncode == 2 and os.path.join(data, "ngc.json") in p.stderr and "tests" in p.stderr,
              "a malformed ngc.json: exit 2 naming the file and the problem: %s" % p.stderr.strip())
        p, _ = r.run(["pick", "--for-driver", "banana"])
        check(p.returncode == 2 and "--for-driver" in p.stderr, "pick --for-driver banana: exit 2")
    return finish()


if __name__ == "__main__":
    sys.exit(main())

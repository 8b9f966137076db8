#!/usr/bin/env python3
"""gpu.cuda_driver end to end: `gpuvet check --only gpu.cuda_driver` on the dgx-h100 fixture
(8 GPUs on the nvidia driver, kernel module 550.54.15), its probe process loading the fake
libcuda (tests/fakes/fake_cuda.c) installed under real driver file names.

    test_cuda_driver.py GPUVET FAKE_LIBCUDA

Cases: healthy (pass); a library of another driver version (warn) and a forward-
compatibility one (pass); cuInit failing with 34, 100, 802, 803, 804, 999 and a code we
do not list (fail, the code named); a missing library and a file without cuInit (fail);
the toolkit's stub library when installed (fail, code 34); cuInit hanging (error naming
cuInit, the run ending near its deadline) and crashing (error naming the signal); too few
devices (fail); a capture without $GPUVET_CUDA_LIB and a node without GPUs (skip); this live
machine, without a GPU on the nvidia driver (skip, the held probe sent away: libcuda never
loaded); a bad --cuda-init-timeout-ms (exit 2). Exit 0 when every case holds, 1 otherwise."""
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
STUB = "/usr/local/cuda/lib64/stubs/libcuda.so"
MODULE = "550.54.15"



def install(fake, directory, version):
    """The fake as a driver installs libcuda: libcuda.so.VERSION, and libcuda.so.1 -> it."""
    os.makedirs(directory, exist_ok=True)
    real = os.path.join(directory, "libcuda.so." + version)
    shutil.copyfile(fake, real)
    link = os.path.join(directory, "libcuda.so.1")
    os.symlink(os.path.basename(real), link)
    return link, real


def run(gpuvet, root, lib, fake_env=None, args=(), timeout=120):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_CUDA_", "FAKE_NVML_", "GPUVET_"))}
    env["GPUVET_PCI_IDS"] = PCI_IDS
    if lib:
        env["GPUVET_CUDA_LIB"] = lib
    env.update(fake_env or {})
    cmd = [gpuvet, "check", "--no-nvml", "--root", root, "--only", "gpu.cuda_driver", "--json", "-"] + list(args)
    start = time.monotonic()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    wall = time.monotonic() - start
    try:
        results = json.loads(p.stdout)["checks"]
    except (ValueError, KeyError):
        results = []
    got = results[0] if len(results) == 1 else {}
    return p, got, wall


def expect(name, p, got, status, summary_has, exit_code=None, evidence=None):
    check(got.get("status") == status, "%s: status %s, got %s (%s)" % (name, status, got.get("status"), got.get("summary")))
    for piece in summary_has:
        check(piece in (got.get("summary") or ""), "%s: summary names %r: %s" % (name, piece, got.get("summary")))
    if status in ("fail", "warn", "error"):
        check(bool(got.get("remedy")), "%s: a remedy" % name)
    if exit_code is not None:
        check(p.returncode == exit_code, "%s: exit %d, got %d %s" % (name, exit_code, p.returncode, p.stderr[-300:]))
    for k, v in (evidence or {}).items():
        check(got.get("evidence", {}).get(k) == v, "%s: evidence %s = %r, got %r" % (name, k, v, got.get("evidence", {}).get(k)))


def main():
    gpuvet, fake = sys.argv[1:3]
    fixtures = fixture_cache.ensure("dgx-h100", "cpu-only")
    root = os.path.join(fixtures, "dgx-h100")
    eight = {"FAKE_CUDA_DEVICES": "8"}
    with tempfile.TemporaryDirectory() as tmp:
        same, same_real = install(fake, os.path.join(tmp, "lib"), MODULE)
        newer, newer_real = install(fake, os.path.join(tmp, "newer"), "570.86.10")
        compat, compat_real = install(fake, os.path.join(tmp, "cuda-12.8", "compat"), "570.124.06")

        p, got, _ = run(gpuvet, root, same, dict(eight, CUDA_VISIBLE_DEVICES="0"))
        expect("healthy", p, got, "pass", ["counts 8 devices"], 0,
               {"library": same_real, "library_version": MODULE, "kernel_module_version": MODULE,
                "cuda_driver_api": "13.0", "cuda_devices": "8",
                "probe_environment": "CUDA_VISIBLE_DEVICES unset for the probe (gpu.cuda_env judges it)"})

        p, got, _ = run(gpuvet, root, newer, eight)
        expect("other version", p, got, "warn", ["libcuda 570.86.10", "kernel module 550.54.15"], 0)
        p, got, _ = run(gpuvet, root, compat, eight)
        expect("forward compatibility", p, got, "pass", ["forward-compatibility libcuda 570.124.06"], 0,
               {"library": compat_real})

        p, got, _ = run(gpuvet, root, same, {"FAKE_CUDA_DEVICES": "7"})
        expect("a device missing", p, got, "fail", ["CUDA sees 7 of the 8 GPUs"], 1)

        for code, name, words in [(100, "CUDA_ERROR_NO_DEVICE", "no device"),
                                  (802, "CUDA_ERROR_SYSTEM_NOT_READY", "not ready"),
                                  (803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "different versions"),
                                  (804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "forward-compatibility"),
                                  (999, "CUDA_ERROR_UNKNOWN", "unknown error")]:
            p, got, _ = run(gpuvet, root, same, dict(eight, FAKE_CUDA_FAIL="cuInit:%d" % code))
            expect("cuInit %d" % code, p, got, "fail", ["%s (%d)" % (name, code), words], 1)
        p, got, _ = run(gpuvet, root, same, dict(eight, FAKE_CUDA_FAIL="cuInit:12345"))
        expect("cuInit unlisted code", p, got, "fail", ["CUDA error 12345"], 1)
        check("fabricmanager" in (run(gpuvet, root, same, dict(eight, FAKE_CUDA_FAIL="cuInit:802"))[1].get("remedy") or ""),
              "802: the remedy starts the fabric manager")

        p, got, _ = run(gpuvet, root, os.path.join(tmp, "nowhere", "libcuda.so.1"), eight)
        expect("no library", p, got, "fail", ["does not load"], 1)
        check("550.54.15" in (got.get("remedy") or ""), "no library: the remedy names the module's version")
        libm = subprocess.run(["sh", "-c", "ldconfig -p | awk '/libm.so.6 .*x86-64/ {print $NF; exit}'"],
                              capture_output=True, text=True).stdout.strip() or "libm.so.6"
        p, got, _ = run(gpuvet, root, libm, eight)
        expect("not a CUDA library", p, got, "fail", ["has no cuInit"], 1)
        if os.path.exists(STUB):
            p, got, _ = run(gpuvet, root, STUB, eight)
            expect("toolkit stub", p, got, "fail", ["CUDA_ERROR_STUB_LIBRARY (34)", "stub library"], 1)
        else:
            print("skip  toolkit stub: %s not installed" % STUB)

        # Hung and crashed drivers: an error naming the call, on time.
        limit_s = 30 * fakeenv.time_scale()
        p, got, wall = run(gpuvet, root, same, dict(eight, FAKE_CUDA_HANG="cuInit"), ["--cuda-init-timeout-ms", "300"])
        expect("cuInit hangs", p, got, "error", ["cuInit did not return within 300 ms"], 1, {"cuinit_ms": "300"})
        check(wall < limit_s, "cuInit hangs: the run ends near its deadline (%.1f s, limit %.0f s)" % (wall, limit_s))
        p, got, _ = run(gpuvet, root, same, dict(eight, FAKE_CUDA_HANG="cuDeviceGetCount"), ["--cuda-init-timeout-ms", "300"])
        expect("cuDeviceGetCount hangs", p, got, "error", ["cuDeviceGetCount did not return"], 1)
        p, got, _ = run(gpuvet, root, same, dict(eight, FAKE_CUDA_CRASH="cuInit"))
        expect("cuInit crashes", p, got, "error", ["died in cuInit", "signal 6"], 1)

        # Not probed: a capture judged without a library, a node without GPUs.
        p, got, _ = run(gpuvet, root, None, eight)
        expect("capture", p, got, "skip", ["not probed: --root names a capture"], 0)
        p, got, _ = run(gpuvet, os.path.join(fixtures, "cpu-only"), same, eight)
        expect("no GPU", p, got, "skip", ["no NVIDIA GPU"], 0)

        # This live machine without a GPU on the nvidia driver: check forks the probe before
        # the facts, held at its gate, and sends it away once they show no such GPU. The
        # library it would load (libcuda.so.1, found through LD_LIBRARY_PATH) is never loaded.
        nvidia = "/sys/bus/pci/drivers/nvidia"
        if os.path.isdir(nvidia) and any(e.name.startswith("0000:") for e in os.scandir(nvidia)):
            print("skip  live node without nvidia GPUs: this machine has one")
        else:
            loads = os.path.join(tmp, "loads")
            env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_CUDA_", "FAKE_NVML_", "GPUVET_"))}
            env.update(GPUVET_PCI_IDS=PCI_IDS, FAKE_CUDA_LOAD_LOG=loads, FAKE_CUDA_DEVICES="8",
                       LD_LIBRARY_PATH=os.path.dirname(same))
            p = subprocess.run([gpuvet, "check", "--no-nvml", "--only", "gpu.cuda_driver", "--json", "-"], env=env,
                               capture_output=True, text=True, timeout=120)
            try:
                got = json.loads(p.stdout)["checks"][0]
            except (ValueError, KeyError, IndexError):
                got = {}
            expect("live node without nvidia GPUs", p, got, "skip", [], 0)
            check(not os.path.exists(loads) or os.path.getsize(loads) == 0,
                  "live node without nvidia GPUs: the held probe never loaded libcuda")

        for bad in ["0", "abc", "600001", "-5"]:
            p = subprocess.run([gpuvet, "check", "--cuda-init-timeout-ms", bad], capture_output=True, text=True)
            check(p.returncode == 2 and "--cuda-init-timeout-ms" in p.stderr and bad in p.stderr,
                  "--cuda-init-timeout-ms %s: exit 2 naming the option, got %d %s" % (bad, p.returncode, p.stderr))
    return finish()


if __name__ == "__main__":
    sys.exit(main())

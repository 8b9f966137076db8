#!/usr/bin/env python3
"""Benchmark what gpu.cuda_driver's cuInit probe costs `gpuvet check --level quick`.

    perf/bench_check_cuinit.py [--gpuvet build/gpuvet] [--nvml build/tests/libnvidia-ml.so.1]
                                [--cuda build/tests/libcuda.so.1] [--runs 30] [--init-ms 200]

On the dgx-h100 fixture with the fake NVML playing golden-dgx-h100.scn plus `latency * 1`
(1 ms per NVML call: ~220 ms of NVML reads), four configurations run interleaved after 3
warm-up runs each: no probe (a capture without $GPUVET_CUDA_LIB), the probe with the fake
libcuda's cuInit instant, and with cuInit taking --init-ms (FAKE_CUDA_INIT_MS), and that
last one without NVML (--no-nvml). The probe runs in a child process started before NVML
is read, so a slow cuInit should cost max(NVML, cuInit), not their sum."""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import machine  # perf/machine.py: the line naming this machine

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PCI_IDS = os.path.join(REPO, "tests", "fixtures", "pci.ids")
SCENARIO = os.path.join(REPO, "tests", "golden", "nvml-scenarios", "golden-dgx-h100.scn")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpuvet", default=os.path.join(REPO, "build", "gpuvet"))
    ap.add_argument("--nvml", default=os.path.join(REPO, "build", "tests", "libnvidia-ml.so.1"))
    ap.add_argument("--cuda", default=os.path.join(REPO, "build", "tests", "libcuda.so.1"))
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--init-ms", type=int, default=200)
    args = ap.parse_args()
    machine.print_header()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(REPO, "tests", "fixtures", "mkfixture.py"), tmp, "dgx-h100"],
                       check=True, stdout=subprocess.DEVNULL)
        root = os.path.join(tmp, "dgx-h100")
        scn = os.path.join(tmp, "bench.scn")
        with open(scn, "w") as f:
            f.write("include %s\nlatency * 1\n" % SCENARIO)
        lib = os.path.join(tmp, "libcuda.so.550.54.15")  # the fixture's module version
        shutil.copyfile(os.path.abspath(args.cuda), lib)
        base = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "GPUVET_"))}
        base.update(GPUVET_PCI_IDS=PCI_IDS, GPUVET_NVML_LIB=os.path.abspath(args.nvml), FAKE_NVML_SCENARIO=scn,
                    FAKE_CUDA_DEVICES="8")
        argv = [os.path.abspath(args.gpuvet), "check", "--root", root, "--quiet", "--json", os.path.join(tmp, "r.json")]
        configs = {
            "no probe": (base, []),
            "probe, cuInit 0 ms": (dict(base, GPUVET_CUDA_LIB=lib), []),
            "probe, cuInit %d ms" % args.init_ms: (dict(base, GPUVET_CUDA_LIB=lib, FAKE_CUDA_INIT_MS=str(args.init_ms)), []),
            "probe, cuInit %d ms, --no-nvml" % args.init_ms:
                (dict(base, GPUVET_CUDA_LIB=lib, FAKE_CUDA_INIT_MS=str(args.init_ms)), ["--no-nvml"]),
        }
        walls = {k: [] for k in configs}
        for i in range(args.runs + 3):
            for k, (env, extra) in configs.items():
                start = time.monotonic()
                subprocess.run(argv + extra, env=env, check=False)
                if i >= 3:
                    walls[k].append((time.monotonic() - start) * 1e3)
    print("gpuvet check --level quick on dgx-h100, fake NVML at 1 ms/call, %d runs each" % args.runs)
    for k, xs in walls.items():
        q = statistics.quantiles(xs, n=20)
        print("  %-32s wall median %7.1f ms, p5 %7.1f, p95 %7.1f" % (k, statistics.median(xs), q[0], q[-1]))
    nvml = statistics.median(walls["no probe"])
    slow = statistics.median(walls["probe, cuInit %d ms" % args.init_ms])
    alone = statistics.median(walls["probe, cuInit %d ms, --no-nvml" % args.init_ms])
    print("cuInit %d ms costs %.1f ms over no probe (sequential would be ~%.0f ms more)"
          % (args.init_ms, slow - nvml, args.init_ms))
    print("overlap: %.1f ms with NVML vs %.1f ms NVML alone and %.1f ms cuInit alone" % (slow, nvml, alone))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Wall time of `gpuvet check --level standard` (and each of its probes) and of `gpuvet bench
memory` and `gpuvet bench p2p` on 8 GPUs played by the fake libcuda and fake NVML, per
binary, runs interleaved (docs/perf.md, "Issue 12's redesign against its starting point").

Usage: bench_fake_gpus.py --gpuvet A [--gpuvet B] [--runs N]   (from the repository root,
after tools/build.sh and `python3 tests/fixtures/mkfixture.py tests/fixtures/out`)"""
import argparse
import json
import os
import subprocess
import tempfile
import time
import machine  # perf/machine.py: the line naming this machine

GPUS = "0000:1b:00.0,0000:43:00.0,0000:52:00.0,0000:61:00.0,0000:9d:00.0,0000:c3:00.0,0000:d1:00.0,0000:df:00.0"


def env():
    e = dict(os.environ)
    e.update({"GPUVET_PCI_IDS": "tests/fixtures/pci.ids",
              "GPUVET_NVML_LIB": os.path.abspath("build/tests/libnvidia-ml.so.1"),
              "FAKE_NVML_SCENARIO": "tests/golden/nvml-scenarios/golden-h100-sxm-8gpu.scn",
              "GPUVET_CUDA_LIB": os.path.abspath("build/tests/libcuda.so.1"),
              "FAKE_CUDA_DEVICES": "8", "FAKE_CUDA_PCI_BUS_IDS": GPUS, "FAKE_CUDA_PCIE_GBPS": "55",
              "FAKE_CUDA_BW_GBPS": "3000", "FAKE_CUDA_P2P_GBPS": "400"})
    return e


def timed(cmd):
    start = time.monotonic()
    p = subprocess.run(cmd, env=env(), capture_output=True, text=True)
    return p.returncode, time.monotonic() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuvet", action="append", required=True)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    machine.print_header()
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        for _ in range(a.runs):
            for g in a.gpuvet:
                rc, wall = timed([g, "check", "--level", "standard", "--root", "tests/fixtures/out/dgx-h100",
                                  "--json", report, "-q"])
                probes = []
                for c in json.load(open(report))["checks"]:
                    p = c["evidence"].get("probe") if isinstance(c.get("evidence"), dict) else None
                    if p and p not in probes:
                        probes.append(p)
                print("%s check standard: exit %d, %.2f s wall; %s" % (g, rc, wall, "; ".join(probes) or "no probe"))
                rc, wall = timed([g, "bench", "memory", "-s", "64M", "-n", "3", "-w", "1", "-q", "--json", report])
                print("%s bench memory: exit %d, %.2f s wall" % (g, rc, wall))
                rc, wall = timed([g, "bench", "p2p", "-s", "32M", "-n", "3", "-w", "1", "-q", "--json", report])
                print("%s bench p2p: exit %d, %.2f s wall" % (g, rc, wall))


if __name__ == "__main__":
    main()

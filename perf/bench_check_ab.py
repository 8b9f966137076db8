#!/usr/bin/env python3
"""Compare builds of `gpuvet check --level quick` on the 8-GPU fake NVML, run by run.

Usage: perf/bench_check_ab.py BUILD_DIR [BUILD_DIR ...] [--runs 30] [--latency-ms 1]

Each BUILD_DIR holds a gpuvet and its own fake library (BUILD_DIR/tests/libnvidia-ml.so.1).
The dgx-h100 fixture (tests/fixtures/mkfixture.py) is judged with the fake playing
tests/golden/nvml-scenarios/golden-dgx-h100.scn plus `latency * MS`, as in
perf/bench_check_nvml.py. Here the builds take turns run by run, after 3 warm-up runs
each, so a busy machine slows them all alike. Prints the machine line, the load average
before and after, and each build's wall median with p5 and p95.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import machine  # perf/machine.py: the line naming this machine

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BASE_SCN = os.path.join(REPO, "tests", "golden", "nvml-scenarios", "golden-dgx-h100.scn")
PCI_IDS = os.path.join(REPO, "tests", "fixtures", "pci.ids")


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("builds", nargs="+")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--latency-ms", type=int, default=1)
    args = ap.parse_args()
    machine.print_header()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(REPO, "tests", "fixtures", "mkfixture.py"), tmp, "dgx-h100"],
                       check=True, stdout=subprocess.DEVNULL)
        scn = os.path.join(tmp, "bench.scn")
        with open(scn, "w") as f:
            f.write("include %s\n" % BASE_SCN)
            if args.latency_ms:
                f.write("latency * %d\n" % args.latency_ms)
        runs = {}
        for b in args.builds:
            b = os.path.abspath(b)
            env = dict(os.environ, GPUVET_PCI_IDS=PCI_IDS, FAKE_NVML_SCENARIO=scn,
                       GPUVET_NVML_LIB=os.path.join(b, "tests", "libnvidia-ml.so.1"))
            argv = [os.path.join(b, "gpuvet"), "check", "--level", "quick", "--root", os.path.join(tmp, "dgx-h100"),
                    "--json", os.path.join(tmp, "report.json"), "--quiet"]
            runs[b] = (argv, env, [])

        def once(argv, env):
            start = time.perf_counter()
            p = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            wall = (time.perf_counter() - start) * 1e3
            if p.returncode not in (0, 1):
                sys.exit("bench: %s exited %d\n%s" % (argv[0], p.returncode, p.stderr.decode(errors="replace")))
            return wall

        print("load average before: %s (%s UTC)" % (load(), time.strftime("%H:%M:%S", time.gmtime())))
        for argv, env, _ in runs.values():
            for _ in range(3):
                once(argv, env)
        for _ in range(args.runs):
            for argv, env, walls in runs.values():
                walls.append(once(argv, env))
        print("load average after: %s (%s UTC)" % (load(), time.strftime("%H:%M:%S", time.gmtime())))
    print("gpuvet check --level quick --root <dgx-h100>, fake NVML at %d ms/call, %d runs each, interleaved"
          % (args.latency_ms, args.runs))
    for b, (_, _, walls) in runs.items():
        q = statistics.quantiles(walls, n=20)
        print("  %-40s wall median %6.1f ms, p5 %6.1f, p95 %6.1f" % (b, statistics.median(walls), q[0], q[-1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Benchmark `gpuvet check --level quick` on the 8-GPU fixture: CPU time and wall time per run.

Usage: perf/bench_check.py [--gpuvet build/gpuvet] [--fixture dgx-h100] [--runs 200]
                            [--policy-capture]

--policy-capture first writes the fixture's own reference (`gpuvet policy capture`) and
judges every run by it (`--policy FILE`): the cost of a site policy with a golden node.

CPU time is user+sys of the children (os.wait4), so it excludes Python's own overhead. The
kernel accounts it in scheduler ticks, so a single short run reads 0 or a whole tick: the
CPU figure is the total over all runs divided by their number; wall time is per run.
The target (issue 2) is under 20 ms of CPU per run; results go in docs/perf.md.
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


def run_once(argv):
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execv(argv[0], argv)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f"bench: {' '.join(argv)} exited {code}")
    return (usage.ru_utime + usage.ru_stime) * 1e3, wall * 1e3, usage.ru_utime * 1e3, usage.ru_stime * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpuvet", default=os.path.join(REPO, "build", "gpuvet"))
    ap.add_argument("--fixture", default="dgx-h100")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--policy-capture", action="store_true")
    args = ap.parse_args()
    machine.print_header()

    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(REPO, "tests", "fixtures", "mkfixture.py"), tmp, args.fixture],
                       check=True)
        root = os.path.join(tmp, args.fixture)
        report = os.path.join(tmp, "report.json")
        argv = [os.path.abspath(args.gpuvet), "check", "--level", "quick", "--root", root, "--json", report]
        if args.policy_capture:
            policy = os.path.join(tmp, "policy.yaml")
            subprocess.run([argv[0], "policy", "capture", "--root", root, "-o", policy], check=True)
            argv += ["--policy", policy]
        for _ in range(5):  # warm the page cache
            run_once(argv)
        cpu, wall, user, system = zip(*(run_once(argv) for _ in range(args.runs)))

    def line(name, xs):
        q = statistics.quantiles(xs, n=20)
        return f"{name}: median {statistics.median(xs):.2f} ms, p5 {q[0]:.2f}, p95 {q[-1]:.2f}, max {max(xs):.2f}"

    n = args.runs
    print(f"gpuvet check --level quick --root <{args.fixture}> --json FILE{' --policy <capture>' if args.policy_capture else ''}, {n} runs")
    print(f"cpu per run (total / runs): {sum(cpu) / n:.2f} ms (user {sum(user) / n:.2f}, sys {sum(system) / n:.2f})")
    print(line("wall", wall))
    print(f"target: cpu per run < 20 ms -> {'met' if sum(cpu) / n < 20 else 'NOT met'}")

if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Time the deploy suite's tests of a source tree: wall and CPU (the test and everything it
ran) per test, as meson runs them.

    perf/bench_deploy_tests.py [-j N] GPUVET TREE OUTDIR NAME=SCRIPT[:PART,PART...]...

TREE is a checkout (or `git archive` of a commit), so a tree before a change and after it
are timed the same way, back to back. Each NAME runs `TREE/tests/deploy/SCRIPT GPUVET
OUTDIR/NAME [PART...]`; with -j N, N at a time, in the order given (meson's slots: the
whole suite's wall time is printed too). A test that fails is reported, not hidden.
Example (docs/perf.md):

    perf/bench_deploy_tests.py build/gpuvet /tmp/before /tmp/bd \\
        baseline=test_baseline.py roles=test_roles.py ansible=test_ansible.py"""
import concurrent.futures
import os
import resource
import subprocess
import sys
import threading
import time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine  # noqa: E402

_lock = threading.Lock()


def main():
    args = sys.argv[1:]
    jobs = 1
    if args[:1] == ["-j"]:
        jobs, args = int(args[1]), args[2:]
    if len(args) < 4:
        print(__doc__)
        return 2
    gpuvet, tree, outdir, specs = os.path.abspath(args[0]), os.path.abspath(args[1]), os.path.abspath(args[2]), args[3:]
    if not os.path.isdir(os.path.join(tree, "tests", "deploy")):
        print("bench_deploy_tests.py: %s holds no tests/deploy (options come first: -j N GPUVET TREE ...)" % tree)
        return 2
    os.makedirs(outdir, exist_ok=True)
    machine.print_header("tree %s, %d at a time" % (tree, jobs))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run_one_timed, gpuvet, tree, outdir, s) for s in specs]
        for f in futures:
            results.append(f.result())
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    print("%-22s %6s %9s %9s  %s" % ("test", "exit", "wall s", "CPU s", "load at end"))
    for name, rc, twall, cpu, load in results:
        print("%-22s %6d %9.1f %9s  %s" % (name, rc, twall, "%.1f" % cpu if cpu is not None else "-", load))
    print("all: %.1f s wall, %.1f s CPU" % (wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)))
    return 1 if any(rc not in (0, 77) for _, rc, _, _, _ in results) else 0


def run_one_timed(gpuvet, tree, outdir, spec):
    """One test: exit status, wall time, and the CPU of its process tree (RUSAGE_CHILDREN is
    per process, so with several tests at a time each runs under a child of its own that
    reports it). Its output goes to OUTDIR/NAME.log."""
    name = spec.partition("=")[0]
    code = ("import os,resource,subprocess,sys; p=subprocess.run(sys.argv[1:], stdout=open(%r,'w'), "
            "stderr=subprocess.STDOUT, env=dict(os.environ, PYTHONDONTWRITEBYTECODE='1')); "
            "r=resource.getrusage(resource.RUSAGE_CHILDREN); print(p.returncode, r.ru_utime+r.ru_stime)"
            % os.path.join(outdir, name + ".log"))
    script, _, parts = spec.partition("=")[2].partition(":")
    argv = [sys.executable, os.path.join(tree, "tests", "deploy", script), gpuvet, os.path.join(outdir, name)]
    argv += [p for p in parts.split(",") if p]
    start = time.monotonic()
    p = subprocess.run([sys.executable, "-c", code] + argv, capture_output=True, text=True)
    wall = time.monotonic() - start
    try:
        rc, cpu = p.stdout.split()
        rc, cpu = int(rc), float(cpu)
    except ValueError:
        rc, cpu = -1, None
    with _lock:
        print("done: %s exit %d, %.1f s" % (name, rc, wall), flush=True)
    return name, rc, wall, cpu, machine.load()


if __name__ == "__main__":
    sys.exit(main())

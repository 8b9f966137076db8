#!/usr/bin/env python3
"""Start-up and one-shot costs quoted in docs/perf.md: wall time (hyperfine) and
instruction counts (callgrind, which are repeatable whatever the machine's load).

Usage: perf/bench_startup.py [--gpuvet build/gpuvet] [--fake-lib build/tests/libnvidia-ml.so.1] [--runs 100]

Measures `/bin/true` (the anchor: issue 41's target for `--version` is <= 1.5x its wall time
and <= 400 K instructions), `gpuvet --version`, `gpuvet check -q` on this machine, `gpuvet
check` on the dgx-h100 fixture (instructions), and `gpuvet query` of every supported field on
the 8-GPU fake NVML. Needs hyperfine and valgrind (Debian packages of those names).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import machine  # perf/machine.py: the line naming this machine

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def hyperfine(cmd, env, runs=100):
    """(mean, standard deviation, median, minimum) in ms."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run(["hyperfine", "-N", "--warmup", "5", "--runs", str(runs), "--export-json", out.name, cmd],
                       env=env, check=True, capture_output=True)
        r = json.load(open(out.name))["results"][0]
    return r["mean"] * 1e3, r["stddev"] * 1e3, r["median"] * 1e3, r["min"] * 1e3


def instructions(argv, env):
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + os.path.join(tmp, "cg")] + argv,
                           env=env, capture_output=True, text=True)
        m = re.search(r"I\s+refs:\s+([\d,]+)", p.stderr)
        if not m:
            sys.exit("callgrind gave no count for %s:\n%s" % (argv, p.stderr[-500:]))
        return int(m.group(1).replace(",", ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpuvet", default=os.path.join(REPO, "build", "gpuvet"))
    ap.add_argument("--fake-lib", default=os.path.join(REPO, "build", "tests", "libnvidia-ml.so.1"))
    ap.add_argument("--runs", type=int, default=100, help="hyperfine runs of each command (default 100)")
    args = ap.parse_args()
    machine.print_header()
    for tool in ("hyperfine", "valgrind"):
        if not shutil.which(tool):
            sys.exit("bench_startup: %s is not installed (apt-get install %s)" % (tool, tool))
    gpuvet = os.path.abspath(args.gpuvet)
    env = dict(os.environ)

    # The ratio is of medians: a mean carries the load's outliers.
    true = "/bin/true"
    true_mean, true_sd, true_med, true_min = hyperfine(true, env, args.runs)
    print("%s: %.3f ms +- %.3f wall (median %.3f, min %.3f), %d instructions"
          % (true, true_mean, true_sd, true_med, true_min, instructions([true], env)))
    mean, sd, med, low = hyperfine(gpuvet + " --version", env, args.runs)
    n = instructions([gpuvet, "--version"], env)
    print("gpuvet --version: %.3f ms +- %.3f wall (median %.3f, min %.3f: %.2fx %s by the median; target <= 1.5x), "
          "%d instructions (target <= 400000)" % (mean, sd, med, low, med / true_med, true, n))
    mean, sd, med, _ = hyperfine(gpuvet + " check -q", env, args.runs)
    print("gpuvet check -q (this machine): %.2f ms +- %.2f wall (median %.2f)" % (mean, sd, med))

    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(REPO, "tests", "fixtures", "mkfixture.py"), tmp, "dgx-h100"],
                       check=True, capture_output=True)
        argv = [gpuvet, "check", "--root", os.path.join(tmp, "dgx-h100"), "-q", "--json", os.path.join(tmp, "r.json")]
        n = instructions(argv, env)
        print("gpuvet check --root <dgx-h100> (no NVML): %d instructions" % n)
        # The Xid table parsed when a check first meets an Xid, against every data file
        # read at start (as an installed gpuvet with its data directory does).
        n_data = instructions(argv + ["--data-dir", os.path.join(REPO, "data")], env)
        print("the same with --data-dir data (every table read at start): %d instructions" % n_data)

    help_text = subprocess.run([gpuvet, "query", "--help-query-gpu"], capture_output=True, text=True).stdout
    fields = ",".join(re.findall(r'^"([^"]+)"', help_text, re.M))
    fake_env = dict(env, GPUVET_NVML_LIB=os.path.abspath(args.fake_lib),
                    FAKE_NVML_SCENARIO=os.path.join(REPO, "tests", "fakes", "scenarios", "h100-sxm-8gpu.scn"))
    mean, sd, med, _ = hyperfine("%s query --query-gpu=%s --format=csv" % (gpuvet, fields), fake_env, args.runs)
    n = instructions([gpuvet, "query", "--query-gpu=" + fields, "--format=csv"], fake_env)
    print("gpuvet query, %d fields, 8-GPU fake: %.2f ms +- %.2f wall (median %.2f; target <= 3 ms), "
          "%d instructions (the fake's own scenario parsing included)" % (fields.count(",") + 1, mean, sd, med, n))


if __name__ == "__main__":
    main()

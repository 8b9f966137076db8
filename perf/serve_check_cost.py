#!/usr/bin/env python3
"""What `gpuvet serve --check-interval` costs: one `gpuvet check --level quick --json -`
on the fake NVML's 8x H100 (docs/perf.md, "gpuvet serve --check-interval"; docs/serve.md).

Usage: perf/serve_check_cost.py [--gpuvet build/gpuvet] [--fake-lib build/tests/libnvidia-ml.so.1]
                                [--runs 20] [--serve-seconds 60] [--interval 10]

1. RUNS runs of the check serve starts (the same command line: --level quick --json -
   --root FIXTURE) on the dgx-h100 fixture with the 8-GPU scenario at its PCI addresses:
   the wall time of each, and its CPU (user + system, from wait4's rusage, threads
   included) and peak RSS.
2. gpuvet serve --check-interval INTERVAL for SERVE_SECONDS on the same: the CPU of serve's
   reaped children (cutime + cstime of /proc/PID/stat: the checks) and of serve itself,
   and the runs it counted, so the per-run figure is seen from inside serve too.
"""
import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

import machine  # perf/machine.py: the line naming this machine

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "fixtures"))
import fixture_cache  # noqa: E402

FIXTURE_GPUS = ["1b", "43", "52", "61", "9d", "c3", "d1", "df"]
TICK = os.sysconf("SC_CLK_TCK")


def scenario(tmp):
    path = os.path.join(tmp, "h100-at-fixture.scn")
    with open(path, "w") as f:
        f.write("include %s\n" % os.path.join(REPO, "tests", "fakes", "scenarios", "h100-sxm-8gpu.scn"))
        for i, bus in enumerate(FIXTURE_GPUS):
            f.write("[gpu %d]\npci_bus_id = 00000000:%s:00.0\n" % (i, bus.upper()))
    return path


def one_check(gpuvet, root, env):
    """(wall s, CPU s, max RSS KiB, exit status) of one check as serve runs it."""
    t0 = time.monotonic()
    p = subprocess.Popen([gpuvet, "check", "--level", "quick", "--json", "-",
                          "--root", root], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, p.returncode


def stat_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # utime, stime, cutime, cstime: fields 14-17 of stat
    return int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuvet", default=os.path.join(REPO, "build", "gpuvet"))
    ap.add_argument("--fake-lib", default=os.path.join(REPO, "build", "tests", "libnvidia-ml.so.1"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--serve-seconds", type=float, default=60)
    ap.add_argument("--interval", type=int, default=10)
    a = ap.parse_args()
    machine.print_header()
    root = fixture_cache.path("dgx-h100")
    with tempfile.TemporaryDirectory(prefix="gpuvet-perf-serve-check-") as tmp:
        env = dict(os.environ, GPUVET_NVML_LIB=os.path.abspath(a.fake_lib), FAKE_NVML_SCENARIO=scenario(tmp))
        one_check(a.gpuvet, root, env)  # warm the page cache
        walls, cpus, rss, codes = [], [], [], set()
        for _ in range(a.runs):
            w, c, m, rc = one_check(a.gpuvet, root, env)
            walls.append(w)
            cpus.append(c)
            rss.append(m)
            codes.add(rc)
        print("check --level quick, %d runs (exit %s): wall median %.1f ms (min %.1f, max %.1f); "
              "CPU median %.1f ms (min %.1f, max %.1f); max RSS %d KiB" %
              (a.runs, sorted(codes), statistics.median(walls) * 1e3, min(walls) * 1e3, max(walls) * 1e3,
               statistics.median(cpus) * 1e3, min(cpus) * 1e3, max(cpus) * 1e3, max(rss)))

        err = open(os.path.join(tmp, "serve.err"), "w+")
        s = subprocess.Popen([a.gpuvet, "serve", "--listen", "127.0.0.1:0", "--root", root, "--check-interval",
                              str(a.interval)], env=env, stdout=subprocess.DEVNULL, stderr=err)
        port = None
        deadline = time.monotonic() + 30
        while port is None and time.monotonic() < deadline:
            time.sleep(0.1)
            err.seek(0)
            m = re.search(r"\(port (\d+)", err.read())
            port = int(m.group(1)) if m else None
        own0, kids0 = stat_ticks(s.pid)
        t0 = time.monotonic()
        time.sleep(a.serve_seconds)
        own1, kids1 = stat_ticks(s.pid)
        elapsed = time.monotonic() - t0
        body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10).read().decode()
        s.send_signal(signal.SIGTERM)
        s.wait(timeout=10)
        ok = re.search(r'^gpuvet_check_runs_total\{result="ok"\} (\d+)$', body, re.M)
        dur = re.search(r"^gpuvet_check_duration_seconds (\S+)$", body, re.M)
        print("serve --check-interval %d for %.0f s: %s runs ok in all, the last %.1f ms; the checks' CPU (reaped "
              "children) %.2f s = %.2f%% of a core; serve's own %.2f s = %.2f%%" %
              (a.interval, elapsed, ok.group(1) if ok else "?", float(dur.group(1)) * 1e3 if dur else -1,
               (kids1 - kids0) / TICK, 100.0 * (kids1 - kids0) / TICK / elapsed, (own1 - own0) / TICK,
               100.0 * (own1 - own0) / TICK / elapsed))
    return 0


if __name__ == "__main__":
    sys.exit(main())

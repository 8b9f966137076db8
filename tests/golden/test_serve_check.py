#!/usr/bin/env python3
"""gpuvet serve --check-interval: its own periodic `gpuvet check --json -` (suite 'golden');
docs/serve.md, "Check verdicts".

Usage: test_serve_check.py GPUVET SRC_ROOT FAKE_LIB

One gpuvet serve on the dgx-h100 fixture (--root) and a fake-NVML scenario at the fixture's
PCI addresses, checking every second. The child inherits the fake through the environment
and reads the scenario at its own nvmlInit, while serve's sampler keeps what it read at
start: so rewriting the scenario file changes what the next check sees, not the sampler.
  - the statuses exported equal those of `gpuvet check --level quick --json -` run here on
    the same scenario (per id, worst over its subjects), with the runs counted, the run's
    time and duration, and the counter family in OpenMetrics;
  - a scenario that fails checks (thermal-slowdown): those ids fail, as in a manual run;
  - an NVML call that hangs in the child: the run is killed at --check-timeout, report_up 0
    and no statuses, runs_total{result="timeout"} counts, the child and its process group
    are gone (/proc), stderr says so once for two timeouts, and scrapes kept answering;
  - the scenario healed: the next run is up again with the first statuses;
  - SIGTERM while a run hangs: exit 0 within the bound, no child left;
  - a child that exits 2 (a --data-dir without the tables): runs_total{result="failed"};
  - usage errors (exit 2 naming the option).
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

GPUVET, SRC_ROOT, FAKE_LIB = sys.argv[1:4]
FAKES = os.path.join(SRC_ROOT, "tests", "fakes")
SCENARIOS = os.path.join(FAKES, "scenarios")
sys.path.insert(0, FAKES)
import fakeenv  # noqa: E402

SCALE = fakeenv.time_scale()
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
from testlib import check, finish  # noqa: E402
from serve_harness import PROMETHEUS_ACCEPT, Serve, check_statuses, scalar  # noqa: E402
import fixture_cache  # noqa: E402

FIXTURE_GPUS = ["1b", "43", "52", "61", "9d", "c3", "d1", "df"]  # the dgx-h100 fixture's GPU buses
ORDER = ["skip", "pass", "warn", "fail", "error"]  # status_worse's order
# Long NVML deadlines: a hung call holds the child until serve's --check-timeout kills it,
# rather than becoming an error result at the call's own deadline.
SLOW_NVML = ["--nvml-call-timeout-ms", "600000", "--nvml-gpu-timeout-ms", "600000"]
CHECK_TIMEOUT_S = max(1, int(SCALE + 0.5))


def write_scenario(path, base, extra=""):
    """base (a scenario of tests/fakes/scenarios) at the fixture's PCI addresses, plus extra;
    written by rename so that a child never reads half of it."""
    with open(path + ".tmp", "w") as f:
        f.write("include %s\n" % os.path.join(SCENARIOS, base))
        for i, bus in enumerate(FIXTURE_GPUS):
            f.write("[gpu %d]\npci_bus_id = 00000000:%s:00.0\n" % (i, bus.upper()))
        f.write("[global]\n" + extra)
    os.replace(path + ".tmp", path)


def manual_statuses(scenario, root):
    """{id: worst status} of `gpuvet check --level quick --json -` run here."""
    env = fakeenv.gpuvet_env(scenario, {"GPUVET_NVML_LIB": FAKE_LIB})
    p = subprocess.run([GPUVET, "check", "--level", "quick", "--json", "-", "--root", root], env=env,
                       capture_output=True, text=True, timeout=60 * SCALE)
    check(p.returncode in (0, 1), "manual check: exit %d %r" % (p.returncode, p.stderr[-300:]))
    want = {}
    for c in json.loads(p.stdout)["checks"]:
        if c["id"] not in want or ORDER.index(c["status"]) > ORDER.index(want[c["id"]]):
            want[c["id"]] = c["status"]
    return want


def statuses(body):
    """{id: status} of the samples at 1, without check_statuses' per-id facts (for polling)."""
    return dict(re.findall(r'^gpuvet_check_status\{id="([^"]+)",status="(\w+)"\} 1$', body, re.M))


def runs(body, result):
    m = re.search(r'^gpuvet_check_runs_total\{result="%s"\} (\d+)$' % result, body, re.M)
    return int(m.group(1)) if m else None


def procs():
    """{pid: (ppid, pgid, state)} of every process, from /proc/PID/stat."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            # Any process may be named with bytes that are not UTF-8 (golden_serve_prometheus
            # runs one beside this test).
            with open("/proc/%s/stat" % name, errors="replace") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        out[int(name)] = (int(fields[1]), int(fields[2]), fields[0])
    return out


def children(pid):
    return sorted(p for p, (ppid, _, _) in procs().items() if ppid == pid)


def in_group(pgid):
    """The live processes of group pgid (an orphan's zombie is init's to reap, not serve's)."""
    return sorted(p for p, (_, g, state) in procs().items() if g == pgid and state != "Z")


def zombies_of(pid):
    return sorted(p for p, (ppid, _, state) in procs().items() if ppid == pid and state == "Z")


def wait_for(s, pred, what, bound=10):
    """Scrape until pred(body); the body, or None after a FAIL at the scaled bound."""
    deadline = time.monotonic() + bound * SCALE
    while time.monotonic() < deadline:
        _, _, body = s.get("/metrics")
        if pred(body):
            return body
        time.sleep(0.05)
    check(False, what)
    return None


def compare(got, want, what):
    differ = [(k, got.get(k), want[k]) for k in sorted(want) if got.get(k) != want[k]]
    check(got and not differ and set(got) == set(want), "%s: %d ids as the manual check's %d (differ: %s)" %
          (what, len(got), len(want), differ[:3]))


def test_periodic(tmp, root):
    scn = os.path.join(tmp, "at-fixture.scn")
    write_scenario(scn, "h100-sxm-8gpu.scn")
    healthy = manual_statuses(scn, root)
    write_scenario(scn, "thermal-slowdown.scn")
    failing = manual_statuses(scn, root)
    check(any(v == "fail" for v in failing.values()), "thermal-slowdown fails checks in a manual run: %s" %
          sorted(k for k, v in failing.items() if v == "fail"))
    write_scenario(scn, "h100-sxm-8gpu.scn")
    s = Serve(GPUVET, FAKE_LIB, scn, ["--root", root, "--check-interval", "1", "--check-timeout",
                                      str(CHECK_TIMEOUT_S)] + SLOW_NVML)
    running = []
    try:
        # The verdicts of a healthy node, as check gives them by hand.
        body = wait_for(s, lambda b: scalar(b, "gpuvet_check_report_up") == 1, "periodic check: never up")
        if body:
            compare(check_statuses(body), healthy, "healthy")
            check(runs(body, "ok") >= 1 and runs(body, "timeout") == 0 and runs(body, "failed") == 0,
                  "runs_total: ok %s, timeout %s, failed %s" % (runs(body, "ok"), runs(body, "timeout"),
                                                               runs(body, "failed")))
            last = scalar(body, "gpuvet_check_last_run_timestamp_seconds")
            took = scalar(body, "gpuvet_check_duration_seconds")
            check(last is not None and abs(last - time.time()) < 30 * SCALE, "last run's time %s" % last)
            check(took is not None and 0 < took < CHECK_TIMEOUT_S, "duration %s s" % took)
            check(scalar(body, "gpuvet_check_report_timestamp_seconds") == last,
                  "the report's time is its run's")
            check("# TYPE gpuvet_check_runs_total counter" in body, "text: runs_total typed counter")
        _, _, om = s.get("/metrics", {"Accept": PROMETHEUS_ACCEPT})
        check("# TYPE gpuvet_check_runs counter" in om and 'gpuvet_check_runs_total{result="ok"}' in om,
              "OpenMetrics: the family gpuvet_check_runs, its samples _total")

        # Checks that fail: the next runs export them.
        write_scenario(scn, "thermal-slowdown.scn")
        body = wait_for(s, lambda b: statuses(b) == failing, "failing scenario: the statuses never followed")
        if body:
            compare(check_statuses(body), failing, "thermal-slowdown")

        # A hung NVML call in the child: killed at --check-timeout, scrapes answering meanwhile.
        write_scenario(scn, "h100-sxm-8gpu.scn", "hang nvmlSystemGetDriverVersion *\n")
        ok_before = runs(body or "", "ok") or 0
        seen, slowest = set(), 0.0
        deadline = time.monotonic() + (CHECK_TIMEOUT_S + 10) * 2 * SCALE
        body = ""
        while time.monotonic() < deadline:
            seen.update(children(s.pid))
            t0 = time.monotonic()
            _, _, body = s.get("/metrics")
            slowest = max(slowest, time.monotonic() - t0)
            if (runs(body, "timeout") or 0) >= 2:
                break
            time.sleep(0.05)
        check((runs(body, "timeout") or 0) >= 2, "hung check: runs_total{result=\"timeout\"} %s" %
              runs(body, "timeout"))
        check(scalar(body, "gpuvet_check_report_up") == 0 and "gpuvet_check_status{" not in body,
              "hung check: report_up 0 and no statuses")
        check(slowest < 1.0 * SCALE, "scrapes during the hung runs took at most %.3f s" % slowest)
        current = set(children(s.pid))
        gone = sorted(seen - current)
        check(len(gone) >= 1, "the timed-out children were seen (%s) and are gone (%s)" % (sorted(seen), gone))
        left = {p: in_group(p) for p in gone}
        check(all(not v for v in left.values()), "no process left in the timed-out children's groups: %s" % left)
        check(zombies_of(s.pid) == [], "no zombie child of serve: %s" % zombies_of(s.pid))
        said = s.stderr().count("did not finish within %d s" % CHECK_TIMEOUT_S)
        check(said == 1, "stderr says the timeout once for %s timeouts (said %d times)" % (runs(body, "timeout"), said))

        # Healed: the next run is up with the healthy statuses.
        write_scenario(scn, "h100-sxm-8gpu.scn")
        body = wait_for(s, lambda b: scalar(b, "gpuvet_check_report_up") == 1, "healed: never up again",
                        bound=CHECK_TIMEOUT_S + 10)
        if body:
            compare(check_statuses(body), healthy, "healed")
            check(runs(body, "ok") > ok_before, "healed: runs_total ok %s after %s" % (runs(body, "ok"), ok_before))
        check(s.stderr().count("gpuvet check ran") == 2, "stderr: ran, then (after the timeouts) ran again")

        # SIGTERM while a run hangs.
        write_scenario(scn, "h100-sxm-8gpu.scn", "hang nvmlSystemGetDriverVersion *\n")
        # A child still there half a second later is the hung one (a healthy run takes 0.03-0.2 s).
        deadline = time.monotonic() + 10 * SCALE
        while time.monotonic() < deadline and not running:
            before = children(s.pid)
            time.sleep(0.5 * SCALE)
            running = [p for p in children(s.pid) if p in before]
        check(len(running) == 1, "a hung check runs under serve: %s" % running)
    finally:
        rc, took = s.stop(signal.SIGTERM, bound=5)
    check(rc == 0, "SIGTERM during a hung check: exit %s in %.2f s" % (rc, took))
    left = {p: in_group(p) for p in running}
    check(all(p not in procs() for p in running) and all(not v for v in left.values()),
          "SIGTERM: the check %s and its group are gone (%s)" % (running, left))


def test_failed_run(tmp, root):
    scn = os.path.join(tmp, "failed.scn")
    write_scenario(scn, "h100-sxm-8gpu.scn")
    empty = os.path.join(tmp, "no-tables")
    os.mkdir(empty)
    s = Serve(GPUVET, FAKE_LIB, scn, ["--root", root, "--data-dir", empty, "--check-interval", "1"])
    try:
        body = wait_for(s, lambda b: (runs(b, "failed") or 0) >= 1, "a check exiting 2: not counted failed")
        if body:
            check(scalar(body, "gpuvet_check_report_up") == 0 and "gpuvet_check_status{" not in body,
                  "failed run: report_up 0, no statuses")
        err = s.stderr()
        check("exited 2 without a verdict" in err and empty in err, "failed run said, naming the input: %r" %
              err[-400:])
    finally:
        rc, _ = s.stop(signal.SIGTERM)
    check(rc == 0, "failed runs: SIGTERM exit %s" % rc)


def test_usage(tmp):
    env = fakeenv.gpuvet_env(os.path.join(SCENARIOS, "h100-sxm-8gpu.scn"), {"GPUVET_NVML_LIB": FAKE_LIB})
    report = os.path.join(tmp, "check.json")
    for args, names in ((["--check-interval", "60", "--check-report", report], ["--check-interval", "--check-report"]),
                        (["--check-interval", "0"], ["--check-interval", '"0"']),
                        (["--check-interval", "1x"], ["--check-interval", '"1x"']),
                        # a duration with its unit parses: only the two sources conflict
                        (["--check-interval", "5m", "--check-report", report], ["--check-interval", "--check-report"]),
                        (["--check-interval", "60", "--check-level", "full"], ["--check-level", '"full"']),
                        (["--check-interval", "60", "--check-level", "fast"], ["--check-level", '"fast"']),
                        (["--check-interval", "60", "--check-timeout", "0"], ["--check-timeout", '"0"']),
                        (["--check-interval", "60", "--check-timeout", "-5"], ["--check-timeout", '"-5"']),
                        (["--check-level", "quick"], ["--check-level", "--check-interval"]),
                        (["--check-timeout", "30"], ["--check-timeout", "--check-interval"])):
        r = subprocess.run([GPUVET, "serve", "--listen", "127.0.0.1:0"] + args, env=env, capture_output=True,
                           text=True, timeout=30 * SCALE)
        check(r.returncode == 2 and all(n in r.stderr for n in names), "%s: rc %d %r" % (" ".join(args), r.returncode,
                                                                                       r.stderr.strip()))


def main():
    root = fixture_cache.path("dgx-h100")
    with tempfile.TemporaryDirectory(prefix="gpuvet-serve-check-") as tmp:
        t0 = time.monotonic()
        test_usage(tmp)
        test_periodic(tmp, root)
        test_failed_run(tmp, root)
        print("%.1f s" % (time.monotonic() - t0))
    return finish()


if __name__ == "__main__":
    sys.exit(main())

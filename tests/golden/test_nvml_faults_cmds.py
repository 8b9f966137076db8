#!/usr/bin/env python3
"""The NVML fault matrix for info, topo and query loops (test_nvml_faults.py drives check).

    test_nvml_faults_cmds.py GPUVET FAKE_LIB [--jobs N] [-v]

On the dgx-h100 fixture with the fake NVML playing tests/golden/nvml-scenarios/golden-dgx-h100.scn:

- `fault FN * NVML_ERROR_{GPU_IS_LOST,UNKNOWN} always`, for every function of
  src/bindings/nvml_functions.def, under `info --json` and `topo --json`;
- `hang FN * always`, for every function gather calls, under `info --json`, `topo --json`
  (call and init deadlines 200 ms) and a `query -lms 200` loop.

Every info/topo run must exit 0 within HANG_MAX_S with valid JSON and no sanitizer report,
and explain itself: when its JSON differs from the healthy run's, FN must be named in it
(a value that went null says why). info must list the 8 GPUs of the bus once each (a
failed PCI-info or handle call must not add 8 "NVML only" copies); topo's NVLink cells
must be the healthy count or null, never a made-up 0. A query loop must end by itself
within HANG_MAX_S, exit 1 (init) or 3 (the loop stopped), and name FN on stderr. The query
loop reads only what its fields show, so it is hung in each function a healthy loop calls
(the fake's call log says which); a hang in a function it does not call must leave the loop
running, rows coming, until SIGTERM ends it with exit 0."""

import argparse
import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "fakes"))
import fakeenv  # noqa: E402
import test_nvml_faults as matrix  # noqa: E402  (the function lists and the scenario)

ERRORS = ["GPU_IS_LOST", "UNKNOWN"]
HANG_MS = int(200 * fakeenv.time_scale())
HANG_MAX_S = 5.0 * fakeenv.time_scale()
QUERY_FIELDS = "index,name,uuid,pci.bus_id,temperature.gpu,power.draw,memory.used,utilization.gpu,clocks.sm"
GPUS = 8


def base_scenario(fn, kind):
    """The scenario a row includes: MIG on for the MIG functions; for a hang in a function
    whose facts the health fields give, a driver without them (where gather calls it, see
    test_nvml_faults.FIELD_BACKED_FNS); else the base."""
    if fn in matrix.MIG_FNS:
        return matrix.MIG_BASE_SCN
    if kind == "hang" and fn in matrix.FIELD_BACKED_FNS:
        return matrix.NO_HEALTH_FIELDS_SCN
    return matrix.BASE_SCN


def run(cmd, env, timeout):
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", "", time.monotonic() - start
    return p.returncode, p.stdout, p.stderr, time.monotonic() - start


def gpuvet_cmd(gpuvet, cmd, root, lib, hang):
    deadlines = ["--nvml-call-timeout-ms", str(HANG_MS), "--nvml-init-timeout-ms", str(HANG_MS)] if hang else []
    if cmd == "query":
        return [gpuvet, "query", "--query-gpu=" + QUERY_FIELDS, "--format=csv", "-lms", "200"] + deadlines
    return [gpuvet, cmd, "--root", root, "--json", "--nvml-lib", lib] + deadlines


def loop_calls(gpuvet, env, tmp):
    """The functions a healthy query loop calls in about a second."""
    log = os.path.join(tmp, "query-calls.log")
    p = subprocess.Popen(gpuvet_cmd(gpuvet, "query", None, None, False), env=dict(env, FAKE_NVML_CALL_LOG=log),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0 * fakeenv.time_scale())
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=30)
    with open(log) as f:
        return {line.split()[0] for line in f if line.strip()}


def loop_unbothered(gpuvet, env, fn):
    """A hang in fn, which the loop never calls: rows keep coming, SIGTERM ends it (exit 0)."""
    p = subprocess.Popen(gpuvet_cmd(gpuvet, "query", None, None, True), env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(1.5 * fakeenv.time_scale())
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=30)
    rows = len(out.splitlines()) - 1
    bad = []
    if p.returncode != 0:
        bad.append("exit %d after SIGTERM, want 0: %r" % (p.returncode, err[-300:]))
    if rows < 2 * GPUS:
        bad.append("%d rows in 1.5 s of a 200 ms loop: it did not keep going" % rows)
    return bad


def info_problems(doc, healthy, fn):
    bad = []
    if len(doc.get("gpus", [])) != GPUS:
        bad.append("%d GPUs listed, the bus has %d" % (len(doc.get("gpus", [])), GPUS))
    if doc.get("nvml_only_gpus"):
        bad.append("%d GPUs listed as NVML only (each is on the bus)" % len(doc["nvml_only_gpus"]))
    return bad


def topo_problems(doc, healthy, fn):
    bad = []
    for i, row in enumerate(doc.get("nvlinks", [])):
        for j, v in enumerate(row):
            want = healthy["nvlinks"][i][j]
            if v is not None and v != want:
                bad.append("nvlinks[%d][%d] is %r, healthy %r: a made-up count (null where unknown)" % (i, j, v, want))
                return bad
    return bad


def judge_json(cmd, rc, out, err, healthy, fn):
    bad = []
    for mark in matrix.SANITIZER_MARKS:
        if mark in err:
            bad.append("sanitizer report: %s" % err[-400:])
            return bad
    if rc != 0:
        bad.append("exit %s, want 0: %s" % (rc, err[-300:]))
        return bad
    try:
        doc = json.loads(out)
    except ValueError as e:
        return ["invalid JSON: %s" % e]
    bad += (info_problems if cmd == "info" else topo_problems)(doc, healthy, fn)
    if doc != healthy and fn not in out:
        bad.append("the output differs from the healthy run but names %s nowhere" % fn)
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("gpuvet")
    ap.add_argument("fake_lib")
    ap.add_argument("--jobs", type=int, default=max(2, min(4, os.cpu_count() or 2)))
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    gpuvet = os.path.abspath(args.gpuvet)
    lib = os.path.abspath(args.fake_lib)
    fns = matrix.parse_functions()
    called = matrix.called_functions()

    t0 = time.monotonic()
    failures = []
    n_runs = 0
    with tempfile.TemporaryDirectory(prefix="gpuvet-faults-cmds-") as tmp:
        root = matrix.fixture_cache.path("dgx-h100")
        base_env = dict(os.environ, GPUVET_PCI_IDS=matrix.PCI_IDS, GPUVET_NVML_LIB=lib)

        healthy = {}  # (command, base scenario) -> JSON
        for base in (matrix.BASE_SCN, matrix.MIG_BASE_SCN, matrix.NO_HEALTH_FIELDS_SCN):
            for cmd in ("info", "topo"):
                rc, out, err, _ = run(gpuvet_cmd(gpuvet, cmd, root, lib, False),
                                      dict(base_env, FAKE_NVML_SCENARIO=base), 120)
                if rc != 0:
                    print("FAIL the healthy %s run on %s: exit %s\n%s" % (cmd, base, rc, err))
                    return 1
                healthy[cmd, base] = json.loads(out)
        # The facts asked with their own calls (a driver without the health fields) are those
        # the fields gave.
        for cmd in ("info", "topo"):
            if healthy[cmd, matrix.NO_HEALTH_FIELDS_SCN] != healthy[cmd, matrix.BASE_SCN]:
                print("FAIL the healthy %s run without the health fields differs from the one with them" % cmd)
                return 1

        jobs = []
        for fn in fns:
            for err in ERRORS:
                for cmd in ("info", "topo"):
                    jobs.append((cmd, "fault", fn, err))
        query_called = loop_calls(gpuvet, dict(base_env, FAKE_NVML_SCENARIO=matrix.BASE_SCN), tmp)
        for fn in sorted(called):
            for cmd in ("info", "topo", "query"):
                if cmd != "query" or fn in query_called:
                    jobs.append((cmd, "hang", fn, None))
        # A function the loop never calls: hung, it must not matter.
        quiet_fn = "nvmlDeviceGetNvLinkState"
        assert quiet_fn in called and quiet_fn not in query_called, (quiet_fn, sorted(query_called))
        quiet_scn = os.path.join(tmp, "query-quiet.scn")
        with open(quiet_scn, "w") as f:
            f.write("include %s\nhang %s * always\n" % (matrix.BASE_SCN, quiet_fn))
        bad = loop_unbothered(gpuvet, dict(base_env, FAKE_NVML_SCENARIO=quiet_scn), quiet_fn)
        if bad:
            failures.append("query hang %s (not read)" % quiet_fn)
            print("FAIL query hang %s, a function the loop does not call:\n  %s" % (quiet_fn, "\n  ".join(bad)))
        n_runs += 1

        def one(job):
            cmd, kind, fn, err = job
            scn = os.path.join(tmp, "%s-%s-%s-%s.scn" % (cmd, kind, fn, err or ""))
            with open(scn, "w") as f:
                f.write("include %s\n" % base_scenario(fn, kind))
                f.write("fault %s * NVML_ERROR_%s always\n" % (fn, err) if kind == "fault" else "hang %s * always\n" % fn)
            env = dict(base_env, FAKE_NVML_SCENARIO=scn)
            return job, run(gpuvet_cmd(gpuvet, cmd, root, lib, kind == "hang"), env, 60 * fakeenv.time_scale())

        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for job, (rc, out, err, wall) in pool.map(one, jobs):
                cmd, kind, fn, e = job
                n_runs += 1
                bad = []
                if rc is None:
                    bad.append("still running after %.0f s" % wall)
                elif kind == "hang" and wall > HANG_MAX_S:
                    bad.append("took %.1f s, more than %.1f s" % (wall, HANG_MAX_S))
                if rc is not None and cmd == "query":
                    want = (1,) if fn == "nvmlInit_v2" else (1, 3)
                    if rc not in want:
                        bad.append("exit %d, want %s" % (rc, " or ".join(map(str, want))))
                    if fn not in err:
                        bad.append("stderr does not name %s: %r" % (fn, err[-300:]))
                elif rc is not None:
                    # A hang in nvmlShutdown comes after the output: nothing to explain.
                    bad += judge_json(cmd, rc, out, err, healthy[cmd, base_scenario(fn, kind)],
                                      fn if fn != "nvmlShutdown" else "")
                label = "%s %s %s %s" % (cmd, kind, fn, e or "")
                if bad:
                    failures.append(label)
                    print("FAIL %s (exit %s, %.2f s):\n  %s" % (label, rc, wall, "\n  ".join(bad)))
                elif args.verbose:
                    print("ok   %s (%.2f s)" % (label, wall))

    print("%d runs in %.1f s: info and topo under %d functions x %d errors, and info, topo and a query loop "
          "under a hang in each of %d functions (the loop: the %d it calls)" %
          (n_runs, time.monotonic() - t0, len(fns), len(ERRORS), len(called), len(query_called & called)))
    if failures:
        print("%d of %d runs FAILED" % (len(failures), n_runs))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""gpuvet query -lms with NVML events, against the fake NVML (suite 'golden').

Usage: test_query_events.py GPUVET SRC_ROOT FAKE_LIB

`gpuvet query --query-gpu=index,name --format=csv -lms 200` runs for about a second and is
stopped with SIGTERM: stdout holds whole CSV rows (header once), stderr one line per Xid
the scenario's GPUs deliver through nvmlEventSetWait_v2, with the meaning, severity and
action of data/xid.json, and the exit status is 0. Also: GPUs without events are said
once each; -i keeps the other GPUs' events out; a wait that never returns ends the loop
within the call deadline (exit 3, the function named). See docs/query.md.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

GPUVET, SRC_ROOT, FAKE_LIB = sys.argv[1:4]
FAKES = os.path.join(SRC_ROOT, "tests", "fakes")
SCENARIOS = os.path.join(FAKES, "scenarios")
os.environ.setdefault("FAKE_NVML_LIB", FAKE_LIB)
sys.path.insert(0, FAKES)
import fakeenv  # noqa: E402

XID_TABLE = json.load(open(os.path.join(SRC_ROOT, "data", "xid.json")))


def effective(x):
    """A code's severity and action: its own, else its resolution bucket's."""
    bucket = XID_TABLE.get("resolutions", {}).get(x.get("resolution"), {})
    return dict(x, severity=x.get("severity", bucket.get("severity")), action=x.get("action", bucket.get("action")))


XIDS = {x["code"]: effective(x) for x in XID_TABLE["xids"]}
LOST = "GPU is lost (fallen off the bus or otherwise inaccessible)"

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)
    return cond


def xid_line(code, gpu):
    x = XIDS[code]
    return "gpuvet: Xid %d on GPU %s (%s, %s): %s" % (code, gpu, x["name"], x["severity"], x["action"])


def loop(scenario, extra_args=(), seconds=1.0, sig=signal.SIGTERM):
    """Run the -lms 200 loop for `seconds`, stop it with sig: (rc, stdout, stderr, elapsed after the signal)."""
    env = fakeenv.gpuvet_env(scenario, {"GPUVET_NVML_LIB": FAKE_LIB})
    p = subprocess.Popen([GPUVET, "query", "--query-gpu=index,name", "--format=csv", "-lms", "200"] + list(extra_args),
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(seconds)
    t0 = time.monotonic()
    if p.poll() is None:
        p.send_signal(sig)
    try:
        out, err = p.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        check(False, "%s: still running 20 s after %s" % (os.path.basename(scenario), sig.name))
    return p.returncode, out, err, time.monotonic() - t0


def check_rows(name, out, n_gpus, names):
    lines = out.split("\n")
    check(out.endswith("\n") and lines.count("index, name") == 1 and lines[0] == "index, name",
          "%s: header missing, repeated or a partial line: %r" % (name, out[-200:]))
    body = [x for x in lines[1:] if x]
    check(len(body) >= 2 * n_gpus and len(body) % n_gpus == 0,
          "%s: %d rows for %d GPUs in ~1 s at 200 ms" % (name, len(body), n_gpus))
    for k, row in enumerate(body):
        want = "%d, %s" % (k % n_gpus, names[k % n_gpus])
        if not check(row == want, "%s: row %d %r, not %r" % (name, k, row, want)):
            break


def err_lines(err):
    return [x for x in err.split("\n") if x]


def test_xid79_lost():
    rc, out, err, _ = loop(os.path.join(SCENARIOS, "xid79-lost.scn"))
    name = "xid79-lost"
    check(rc == 0, "%s: exit %d, not 0: %s" % (name, rc, err))
    names = ["NVIDIA H100 80GB HBM3"] * 8
    names[5] = "[GPU is lost]"
    check_rows(name, out, 8, names)
    lines = err_lines(err)
    # GPU 5's PCI address is lost with it (nvmlDeviceGetPciInfo_v3 answers GPU_IS_LOST): named by index
    check(lines.count(xid_line(79, "5")) == 1, "%s: the Xid 79 line, once: %r" % (name, lines))
    check(lines.count("gpuvet: GPU 5 is lost (nvmlDeviceGetSupportedEventTypes: %s)" % LOST) == 1,
          "%s: GPU 5 lost, said once: %r" % (name, lines))
    others = [x for x in lines if not x.startswith("gpuvet query: GPU 5: nvmlDeviceGetName: ")]
    check(len(others) == 2, "%s: unexpected stderr lines: %r" % (name, others))


def test_a100_dbe_remap():
    rc, out, err, _ = loop(os.path.join(SCENARIOS, "a100-dbe-remap.scn"))
    name = "a100-dbe-remap"
    check(rc == 0, "%s: exit %d, not 0: %s" % (name, rc, err))
    check_rows(name, out, 2, ["NVIDIA A100-SXM4-80GB"] * 2)
    check(err_lines(err) == [xid_line(48, "0000:0f:00.0"), xid_line(63, "0000:0f:00.0")],
          "%s: stderr %r" % (name, err))


def test_healthy():
    rc, out, err, dt = loop(os.path.join(SCENARIOS, "h100-sxm-8gpu.scn"), sig=signal.SIGINT)
    check(rc == 0 and err == "", "h100-sxm-8gpu: exit %d, stderr %r" % (rc, err))
    check_rows("h100-sxm-8gpu", out, 8, ["NVIDIA H100 80GB HBM3"] * 8)
    # the wait between rounds is NVML's, in slices: a stop signal is still taken at once
    check(dt < 2.0 * fakeenv.time_scale(), "h100-sxm-8gpu: %.2f s to stop after SIGINT" % dt)


def test_no_events(tmp):
    scn = os.path.join(tmp, "no-events.scn")
    with open(scn, "w") as f:
        f.write("include %s\n[gpu *]\nsupported_events = N/A\n[gpu 2]\nxid = 79\n"
                % os.path.join(SCENARIOS, "h100-sxm-8gpu.scn"))
    rc, out, err, _ = loop(scn)
    lines = err_lines(err)
    check(rc == 0, "no events: exit %d %s" % (rc, err))
    check(len(lines) == 8 and all(" no Xid or ECC events from NVML (nvmlDeviceGetSupportedEventTypes: " in x
                                  for x in lines), "no events: each GPU once: %r" % lines)
    check(not any("Xid 79" in x for x in lines), "no events: an Xid from an unregistered GPU: %r" % lines)
    # -i: the other GPUs' notices and events stay out
    scn2 = os.path.join(tmp, "gpu2-no-events.scn")
    with open(scn2, "w") as f:
        f.write("include %s\n[gpu 2]\nsupported_events = N/A\n[gpu 3]\nxid = 13\n[gpu 4]\nxid = 31\n"
                % os.path.join(SCENARIOS, "h100-sxm-8gpu.scn"))
    rc, out, err, _ = loop(scn2, ["-i", "2,3"])
    lines = err_lines(err)
    check(rc == 0 and out.count("\n3, ") >= 2, "-i 2,3: exit %d %r" % (rc, out))
    check(len(lines) == 2 and lines[1] == xid_line(13, "0000:5d:00.0") and lines[0].startswith(
        "gpuvet: GPU 0000:3a:00.0: no Xid or ECC events"), "-i 2,3: stderr %r" % lines)


def test_wait_hangs(tmp):
    scn = os.path.join(tmp, "wait-hangs.scn")
    with open(scn, "w") as f:
        f.write("include %s\nhang nvmlEventSetWait_v2 *\n" % os.path.join(SCENARIOS, "h100-sxm-8gpu.scn"))
    t0 = time.monotonic()
    rc, out, err, _ = loop(scn, seconds=6.0)
    dt = time.monotonic() - t0
    check(rc == 3, "wait hangs: exit %d, not 3: %s" % (rc, err))
    check("gpuvet: nvmlEventSetWait_v2 did not return within " in err and "stopping the loop" in err,
          "wait hangs: stderr %r" % err)
    check(dt < 10 * fakeenv.time_scale(), "wait hangs: %.1f s" % dt)
    check(out.startswith("index, name\n0, NVIDIA H100") and out.endswith("\n"), "wait hangs: stdout %r" % out)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_xid79_lost()
        test_a100_dbe_remap()
        test_healthy()
        test_no_events(tmp)
        test_wait_hangs(tmp)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

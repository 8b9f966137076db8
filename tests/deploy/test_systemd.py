#!/usr/bin/env python3
"""deploy/systemd: the units checked by systemd and their command lines run for real.

    test_systemd.py GPUVET FAKE_NVML OUTDIR

- systemd-analyze verify accepts gpuvet-check.service, gpuvet-check.timer and
  gpuvet-serve.service together with no message at all (their /usr/bin/gpuvet replaced by the
  gpuvet under test, which this machine has), and does print one for a unit with an unknown
  key (the verification is not a no-op);
- the timer starts the check service; the check service writes the report the serve unit's
  --check-report reads, in the state directory systemd makes for it, and counts exit 1 (a
  failed check, in the report) as success;
- the check service's ExecStart, run as written on a fixture machine (--root added, the state
  directory moved to the test's), writes a whole gpuvet.report/1 and leaves no temporary
  file; a run that fails (exit 2) keeps the previous report byte for byte;
- the serve unit reads /etc/default/gpuvet-serve when present (deploy/systemd/gpuvet-serve.default,
  GPUVET_SERVE_ARGS="" as shipped) and appends $GPUVET_SERVE_ARGS to its command;
- the serve unit's ExecStart, run as written on the fake NVML (its port moved to a free one,
  GPUVET_SERVE_ARGS="--workload-labels"),
  answers /health, exports every check id of that report, follows the report when the check
  service rewrites it (a degraded machine's verdicts), and exits 0 on SIGTERM;
- systemd-analyze security --offline=true rates both services 3.0 or less ("OK"), while the
  sandbox keeps what each needs: the check its two capabilities (PCI configuration space,
  the kernel log) and /dev/kmsg, both the NVIDIA devices.
Skips (77) after the rest when systemd-analyze is missing (the security rating also when it
is older than systemd 250's --offline)."""
import re
import json
import os
import shlex
import shutil
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import fixture_cache  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_process import Served  # noqa: E402
import fakeenv  # noqa: E402  (serve_process put tests/fakes on the path)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
UNITS_DIR = os.path.join(REPO, "deploy", "systemd")
UNITS = ("gpuvet-check.service", "gpuvet-check.timer", "gpuvet-serve.service")
PCI_IDS = os.path.join(REPO, "tests", "fixtures", "pci.ids")
SERVICES = ("gpuvet-check.service", "gpuvet-serve.service")
MAX_EXPOSURE = 3.0
INSTALLED = "/usr/bin/gpuvet"
STATE = "/var/lib/gpuvet"
SERVE_DEFAULTS = os.path.join(UNITS_DIR, "gpuvet-serve.default")
SERVE_DEFAULTS_INSTALLED = "/etc/default/gpuvet-serve"


def parse_unit(path):
    """{section: {key: [values]}} of a unit file (keys may repeat; comments dropped)."""
    unit, section = {}, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("[") and line.endswith("]"):
                section = unit.setdefault(line[1:-1], {})
            else:
                key, _, value = line.partition("=")
                section.setdefault(key.strip(), []).append(value.strip())
    return unit


def verify(gpuvet, outdir):
    """systemd-analyze verify on copies naming the gpuvet under test; False without it."""
    analyze = shutil.which("systemd-analyze")
    if not analyze:
        return False
    copies = os.path.join(outdir, "units")
    os.makedirs(copies, exist_ok=True)
    for name in UNITS:
        with open(os.path.join(UNITS_DIR, name)) as f:
            text = f.read()
        with open(os.path.join(copies, name), "w") as f:
            f.write(text.replace(INSTALLED, gpuvet))
    p = subprocess.run([analyze, "verify"] + [os.path.join(copies, n) for n in UNITS], capture_output=True,
                       text=True, timeout=60 * fakeenv.time_scale())
    check(p.returncode == 0 and (p.stdout + p.stderr).strip() == "",
          "systemd-analyze verify %s: rc %d, no message: %r" % (" ".join(UNITS), p.returncode,
                                                                (p.stdout + p.stderr)[-1500:]))
    bogus = os.path.join(copies, "gpuvet-bogus.service")
    with open(os.path.join(copies, "gpuvet-serve.service")) as f:
        text = f.read().replace("\n[Service]\n", "\n[Service]\nExecStrat=/bin/true\n", 1)
    with open(bogus, "w") as f:
        f.write(text)
    p = subprocess.run([analyze, "verify", bogus], capture_output=True, text=True, timeout=60 * fakeenv.time_scale())
    check("ExecStrat" in p.stdout + p.stderr, "systemd-analyze verify names an unknown key (ExecStrat)")
    return True


def security(units):
    """systemd-analyze security --offline=true: each service's overall exposure at most
    MAX_EXPOSURE; False when this systemd-analyze cannot rate a unit file offline."""
    analyze = shutil.which("systemd-analyze")
    if not analyze:
        return False
    for name in SERVICES:
        p = subprocess.run([analyze, "security", "--offline=true", "--no-pager", os.path.join(UNITS_DIR, name)],
                           capture_output=True, text=True, timeout=60 * fakeenv.time_scale())
        out = p.stdout + p.stderr
        m = re.search(r"Overall exposure level for %s: ([0-9.]+)" % re.escape(name), out)
        if not m and ("--offline" in out or "Unknown command verb" in out or "unrecognized option" in out):
            return False  # systemd < 250
        exposure = float(m.group(1)) if m else None
        weak = "\n".join(line for line in out.splitlines() if line.startswith("\u2717"))
        check(exposure is not None and exposure <= MAX_EXPOSURE,
              "systemd-analyze security rates %s %s, at most %.1f wanted; exposed:\n%s" % (
                  name, exposure, MAX_EXPOSURE, weak if m else out[-1500:]))
    checker, serve = units["gpuvet-check.service"]["Service"], units["gpuvet-serve.service"]["Service"]
    caps = set(" ".join(checker.get("CapabilityBoundingSet", [])).split())
    check(caps == {"CAP_SYS_ADMIN", "CAP_SYSLOG"},
          "the check keeps CAP_SYS_ADMIN (PCI config space past 64 bytes) and CAP_SYSLOG (/dev/kmsg): %s" % caps)
    check("/dev/kmsg r" in checker.get("DeviceAllow", []) and checker.get("ProtectKernelLogs", ["no"]) == ["no"],
          "the check may read /dev/kmsg (gpu.xid): DeviceAllow %s" % checker.get("DeviceAllow"))
    for name, svc in (("gpuvet-check.service", checker), ("gpuvet-serve.service", serve)):
        check(svc.get("DevicePolicy") == ["closed"] and "char-nvidia-frontend rw" in svc.get("DeviceAllow", []),
              "%s opens the NVIDIA devices under DevicePolicy=closed: %s" % (name, svc.get("DeviceAllow")))
        check(svc.get("ProtectProc", ["default"]) == ["default"],
              "%s sees every process in /proc (who holds a GPU, its job or pod)" % name)
    check(serve.get("CapabilityBoundingSet") == [""], "the exporter runs with no capability")
    return True


def environment_file(path):
    """{name: value} of a systemd EnvironmentFile (NAME=value, the value shell-quoted)."""
    env = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and line[0] not in "#;":
                name, _, value = line.partition("=")
                env[name.strip()] = " ".join(shlex.split(value))
    return env


def installed_argv(unit, gpuvet, state, env=None):
    """The unit's ExecStart as an argv, gpuvet and its state directory replaced; a word
    "$NAME" split into the words of env's NAME, as systemd expands an unbraced variable."""
    (exec_start,) = unit["Service"]["ExecStart"]
    argv = shlex.split(exec_start)
    check(argv[0] == INSTALLED, "ExecStart runs %s: %s" % (INSTALLED, exec_start))
    out = [gpuvet]
    for a in argv[1:]:
        if a.startswith("$") and a[1:].isidentifier():
            out += (env or {}).get(a[1:], "").split()
        else:
            out.append(a.replace(STATE, state))
    return out


def run_check(argv, root, what):
    """The check service's argv on a fixture machine; NVML is not asked under --root."""
    env = dict(os.environ, GPUVET_PCI_IDS=PCI_IDS)
    env.pop("GPUVET_NVML_LIB", None)
    p = subprocess.run(argv + ["--root", root], env=env, capture_output=True, text=True,
                       timeout=120 * fakeenv.time_scale())
    print("%s: rc %d %s" % (what, p.returncode, p.stderr.strip()[-300:]))
    return p


def structure(units):
    timer, checker, serve = units["gpuvet-check.timer"], units["gpuvet-check.service"], units["gpuvet-serve.service"]
    check(timer["Timer"].get("Unit") == ["gpuvet-check.service"] and timer["Timer"].get("OnUnitActiveSec")
          and timer["Install"]["WantedBy"] == ["timers.target"], "the timer starts gpuvet-check.service periodically")
    check(checker["Service"]["Type"] == ["oneshot"] and "1" in checker["Service"]["SuccessExitStatus"][0].split(),
          "the check service is a oneshot for which exit 1 (a failed check) is success")
    check(checker["Service"].get("StateDirectory") == [os.path.basename(STATE)],
          "systemd makes %s for the check (StateDirectory=, writable under ProtectSystem=strict)" % STATE)
    report = shlex.split(checker["Service"]["ExecStart"][0])
    read = shlex.split(serve["Service"]["ExecStart"][0])
    json_path = report[report.index("--json") + 1]
    check(json_path.startswith(STATE + "/") and read[read.index("--check-report") + 1] == json_path,
          "the serve unit's --check-report is the check's --json (%s)" % json_path)
    # Extra options without a drop-in: the packages' /etc/default/gpuvet-serve.
    check(serve["Service"].get("EnvironmentFile") == ["-" + SERVE_DEFAULTS_INSTALLED]
          and read[-1] == "$GPUVET_SERVE_ARGS",
          "the serve unit reads %s (optional) and ends its command with $GPUVET_SERVE_ARGS: %s"
          % (SERVE_DEFAULTS_INSTALLED, serve["Service"].get("EnvironmentFile")))
    shipped = environment_file(SERVE_DEFAULTS)
    check(shipped == {"GPUVET_SERVE_ARGS": ""}, "the shipped %s sets GPUVET_SERVE_ARGS, empty: %s"
          % (os.path.basename(SERVE_DEFAULTS), shipped))
    return json_path


def statuses(body):
    """{id: status} of the body's gpuvet_check_status samples that are 1."""
    out = {}
    for line in body.splitlines():
        if line.startswith("gpuvet_check_status{") and line.endswith(" 1"):
            labels = dict(kv.split("=", 1) for kv in line[line.index("{") + 1:line.index("}")].split(","))
            out[labels["id"].strip('"')] = labels["status"].strip('"')
    return out


def worst_by_id(report):
    order = ["skip", "pass", "warn", "fail", "error"]
    out = {}
    for c in report["checks"]:
        if order.index(c["status"]) >= order.index(out.get(c["id"], "skip")):
            out[c["id"]] = c["status"]
    return out


def run_units(units, gpuvet, fake_lib, outdir, json_path):
    fixtures = fixture_cache.ensure("dgx-h100", "dgx-h100-degraded")
    state = os.path.join(outdir, "state")
    os.makedirs(state)
    check_argv = installed_argv(units["gpuvet-check.service"], gpuvet, state)
    report = json_path.replace(STATE, state)
    p = run_check(check_argv, os.path.join(fixtures, "dgx-h100"), "check service on dgx-h100")
    with open(report) as f:
        first = json.load(f)
    check(p.returncode == 0 and first["schema"] == "gpuvet.report/1" and first["summary"]["verdict"] == "pass",
          "the check service's command writes a whole report (rc %d, verdict %s)" % (p.returncode,
                                                                                   first["summary"]["verdict"]))
    check(os.listdir(state) == [os.path.basename(report)], "nothing else left in the state directory: %s"
          % os.listdir(state))
    with open(report, "rb") as f:
        before = f.read()
    p = run_check(check_argv, os.path.join(outdir, "no-such-root"), "check service, a root that does not exist")
    with open(report, "rb") as f:
        check(p.returncode == 2 and f.read() == before and os.listdir(state) == [os.path.basename(report)],
              "a failed run (exit %d) keeps the previous report as it was" % p.returncode)

    # As a site sets it in /etc/default/gpuvet-serve: the option reaches serve's command line.
    serve_argv = installed_argv(units["gpuvet-serve.service"], gpuvet, state,
                                {"GPUVET_SERVE_ARGS": "--workload-labels"})
    check(serve_argv[-1] == "--workload-labels", "GPUVET_SERVE_ARGS' words end serve's command: %s" % serve_argv[1:])
    serve = Served(gpuvet, fake_lib, serve_argv)
    try:
        status, body = serve.get("/health")
        check(status == 200, "the serve unit's command: /health 200 (%d %r)" % (status, body[:100]))
        _, body = serve.wait_for("/metrics", lambda s, b: "gpuvet_check_report_up 1" in b)
        check(statuses(body) == worst_by_id(first), "serve exports the check report's %d ids with their statuses"
              % len(worst_by_id(first)))
        p = run_check(check_argv, os.path.join(fixtures, "dgx-h100-degraded"), "check service on dgx-h100-degraded")
        with open(report) as f:
            second = json.load(f)
        want = worst_by_id(second)
        _, body = serve.wait_for("/metrics", lambda s, b: statuses(b) == want)
        failing = sorted(i for i, s in want.items() if s == "fail")
        check(p.returncode == 1 and failing and statuses(body) == want,
              "the report rewritten (exit 1, a failing machine): serve follows it, %s fail" % ", ".join(failing))
    finally:
        rc = serve.stop()
    check(rc == 0, "the serve unit's command exits 0 on SIGTERM (%s)" % rc)


def main():
    gpuvet, fake_lib, outdir = (os.path.abspath(a) for a in sys.argv[1:4])
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    units = {n: parse_unit(os.path.join(UNITS_DIR, n)) for n in UNITS}
    json_path = structure(units)
    run_units(units, gpuvet, fake_lib, outdir, json_path)
    verified = verify(gpuvet, outdir)
    rated = verified and security(units)
    if finish():
        return 1
    if not verified:
        print("SKIP: systemd-analyze not installed (package systemd): the units were not verified by systemd")
        return 77
    if not rated:
        print("SKIP: this systemd-analyze has no security --offline (systemd < 250): the units were not rated")
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""`gpuvet slurm-health` against a real one-node Slurm cluster started by this test: munged
with a key and socket of its own, slurmctld and slurmd (Debian's 22.05) in the foreground
with a slurm.conf, state and spool directories in a temporary directory, on free ports. The
machine's /etc/munge, /etc/slurm and services are never touched; the daemons are killed at
the end, also on failure.

    test_slurm_health.py GPUVET FAKE_LIBNVML

Cases: a passing fixture leaves an idle node alone; the dgx-h100-degraded fixture drains it
with "gpuvet: <failed ids>"; the same failures again change nothing; other failures update
the reason; a pass resumes it; a node drained by hand ("admin: bad fan") stays drained with
its reason after a passing and a failing run; warnings drain only with --drain-on warn;
--dry-run changes nothing; --json keeps the
report; a hung NVML call (check's deadline) and a hung nvmlInit (slurm-health's own
--timeout) still finish in time and drain naming what hung; slurmd itself runs the
HealthCheckProgram (a wrapper calling slurm-health, $SLURMD_NODENAME naming the node) and
drains then resumes the node; jobs through deploy/slurm's prolog (a failing node: the launch
fails, gpuvet's reason stays) and epilog (the job runs, then the node is drained); --prolog
exits 1 after draining; scontrol missing, failing,
timing out, printing a torn record, or failing to update is exit 3 with a message, and no
update is made on a half-read state; bad input is exit 2.
Every wait polls with a deadline scaled by fakeenv.time_scale(). SKIP (77) without root or
without slurmctld, slurmd, scontrol and munged (tools/bootstrap.sh installs them)."""

import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..")
sys.path.insert(0, os.path.join(TESTS, "fakes"))
import fakeenv  # noqa: E402  (time_scale, gpuvet_env)
sys.path.insert(0, os.path.join(TESTS, "fixtures"))
import fixture_cache  # noqa: E402

SCALE = fakeenv.time_scale()
NODE = "gpuvet-test1"
PCI_IDS = os.path.join(TESTS, "fixtures", "pci.ids")
HEALTHY_SCN = os.path.join(TESTS, "golden", "nvml-scenarios", "golden-dgx-h100.scn")
HANG_SCN = os.path.join(TESTS, "golden", "nvml-scenarios", "golden-hang.scn")
HANG_INIT_SCN = os.path.join(HERE, "hang-init.scn")
DEPLOY = os.path.join(TESTS, "..", "deploy", "slurm")
DEGRADED_REASON = "gpuvet: pcie.link_width,pcie.aer,gpu.xid"

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    else:
        print("ok:", what)
    return cond


free_port = fakeenv.free_port


def wait_for(what, predicate, timeout):
    """Poll predicate until it returns a true value or timeout (scaled) seconds pass."""
    deadline = time.monotonic() + timeout * SCALE
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(0.1)
    print("timed out waiting for %s (last: %r)" % (what, last))
    return None


class Cluster:
    def __init__(self, tmp, gpuvet, env):
        self.tmp, self.gpuvet, self.procs = tmp, gpuvet, []
        self.conf = os.path.join(tmp, "slurm.conf")
        self.env = dict(env, SLURM_CONF=self.conf, SLURM_TIME_FORMAT="standard")
        self.env.pop("SLURMD_NODENAME", None)

    def start(self):
        t = self.tmp
        for d in ("munge", "state", "spool", "log"):
            os.makedirs(os.path.join(t, d), mode=0o700, exist_ok=True)
        key = os.path.join(t, "munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o600)
        self.sock = os.path.join(t, "munge", "sock")
        self.spawn("munged", ["munged", "-F", "-f", "--key-file=" + key, "--socket=" + self.sock,
                              "--pid-file=" + os.path.join(t, "munge", "pid"),
                              "--log-file=" + os.path.join(t, "log", "munged.log"),
                              "--seed-file=" + os.path.join(t, "munge", "seed")])
        if not wait_for("munged's socket", lambda: os.path.exists(self.sock), 10):
            return False
        self.hc_root = os.path.join(t, "hc-root")
        self.prolog_root = os.path.join(t, "prolog-root")
        self.hc_log = os.path.join(t, "log", "healthcheck.log")
        self.prolog_log = os.path.join(t, "log", "prolog.log")
        self.epilog_root = os.path.join(t, "epilog-root")
        self.epilog_log = os.path.join(t, "log", "epilog.log")
        hc = self.wrapper("healthcheck.sh", os.path.join(DEPLOY, "gpuvet-healthcheck"), self.hc_root,
                          "GPUVET_SLURM_HEALTH_OPTS", self.hc_log)
        prolog = self.wrapper("prolog.sh", os.path.join(DEPLOY, "prolog.d", "50-gpuvet-check"), self.prolog_root,
                              "GPUVET_SLURM_PROLOG_OPTS", self.prolog_log)
        epilog = self.wrapper("epilog.sh", os.path.join(DEPLOY, "epilog.d", "50-gpuvet-check"), self.epilog_root,
                              "GPUVET_SLURM_EPILOG_OPTS", self.epilog_log)
        host = socket.gethostname().split(".")[0]
        conf = {
            "ClusterName": "gpuvettest", "SlurmctldHost": "localhost(127.0.0.1)",
            "SlurmctldPort": free_port(), "SlurmdPort": free_port(), "SlurmUser": "root", "SlurmdUser": "root",
            "AuthType": "auth/munge", "AuthInfo": "socket=" + self.sock, "CredType": "cred/munge",
            "StateSaveLocation": os.path.join(t, "state"), "SlurmdSpoolDir": os.path.join(t, "spool"),
            "SlurmctldPidFile": os.path.join(t, "slurmctld.pid"), "SlurmdPidFile": os.path.join(t, "slurmd.pid"),
            "SlurmctldLogFile": os.path.join(t, "log", "slurmctld.log"),
            "SlurmdLogFile": os.path.join(t, "log", "slurmd.log"),
            # No cgroups in a container: Linux process tracking, no task plugin.
            "ProctrackType": "proctrack/linuxproc", "TaskPlugin": "task/none", "SelectType": "select/linear",
            "SchedulerType": "sched/builtin", "JobAcctGatherType": "jobacct_gather/none",
            "AccountingStorageType": "accounting_storage/none", "MpiDefault": "none", "ReturnToService": "2",
            "HealthCheckProgram": hc, "HealthCheckInterval": "2", "HealthCheckNodeState": "ANY",
            "Prolog": prolog, "Epilog": epilog,
            "SlurmctldTimeout": "30", "SlurmdTimeout": "30",
        }
        with open(self.conf, "w") as f:
            for k, v in conf.items():
                f.write("%s=%s\n" % (k, v))
            f.write("NodeName=%s NodeHostname=%s NodeAddr=127.0.0.1 CPUs=%d RealMemory=1 State=UNKNOWN\n"
                    % (NODE, host, os.cpu_count() or 1))
            f.write("PartitionName=debug Nodes=%s Default=YES State=UP\n" % NODE)
        self.spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", self.conf])
        self.spawn("slurmd", ["slurmd", "-D", "-N", NODE, "-f", self.conf])
        return wait_for("the node to be IDLE", lambda: self.state()[0] == "IDLE", 30)

    def wrapper(self, name, script, root_file, opts_var, log):
        """A script for slurmd that runs deploy/slurm's script on the fixture named in
        root_file, and does nothing while there is none (so that slurmd's runs never race
        the cases run by hand). slurmd gives it SLURMD_NODENAME and nothing else, not even
        PATH: the fixture's environment is set here, the rest is the deploy script's."""
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n"
                    "root=$(cat %(root)s 2>/dev/null) || exit 0\n"
                    "[ -n \"$root\" ] || exit 0\n"
                    "export SLURM_CONF=%(conf)s GPUVET_PCI_IDS=%(ids)s GPUVET_NVML_LIB=%(lib)s FAKE_NVML_SCENARIO=%(scn)s "
                    "GPUVET_SLURM_DEFAULTS=/dev/null GPUVET=%(gpuvet)s GPUVET_SLURM_LOG=%(log)s "
                    "%(var)s=\"--root $root\"\n"
                    "exec %(script)s\n"
                    % {"root": root_file, "conf": self.conf, "ids": PCI_IDS, "lib": self.env["GPUVET_NVML_LIB"],
                       "scn": HEALTHY_SCN, "gpuvet": os.path.abspath(self.gpuvet), "log": log, "var": opts_var,
                       "script": script})
        os.chmod(path, 0o755)
        return path

    def spawn(self, name, argv):
        out = open(os.path.join(self.tmp, "log", name + ".out"), "w")
        self.procs.append((name, subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=self.env,
                                                  start_new_session=True)))
        out.close()

    def stop(self):
        for name, p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(timeout=5 * SCALE)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()

    def scontrol(self, *args):
        return subprocess.run(["scontrol"] + list(args), capture_output=True, text=True, env=self.env,
                              timeout=20 * SCALE)

    def state(self):
        """(state, reason or None) from scontrol, the test's own reading."""
        p = self.scontrol("show", "node", "-o", NODE)
        m = re.search(r" State=(\S+)", p.stdout)
        if not m:
            return (None, None)
        r = re.search(r" Reason=(.*?) \[[^ \]@]+@[0-9T:-]+\]", p.stdout[m.end():])
        return (m.group(1), r.group(1) if r else None)

    def settled(self):
        """The state once any NOT_RESPONDING after a resume has cleared."""
        return wait_for("the node to respond", lambda: (lambda s: s if s[0] and "NOT_RESPONDING" not in s[0] else None)
                        (self.state()), 20) or self.state()

    def dump_logs(self):
        for name in ("slurmctld.log", "slurmd.log", "healthcheck.log"):
            path = os.path.join(self.tmp, "log", name)
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    print("--- %s (tail)\n%s" % (name, "".join(f.readlines()[-15:])))


def run(c, root, *args, scenario=HEALTHY_SCN, env_extra=None, timeout=60):
    env = fakeenv.gpuvet_env(scenario, dict(c.env))
    env.update(env_extra or {})
    cmd = [c.gpuvet, "slurm-health", "--root", root] + list(args)
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout * SCALE)
    p.wall = time.monotonic() - start
    print("$ slurm-health %s -> %d (%.1f s)\n%s%s" % (" ".join(args), p.returncode, p.wall, p.stdout, p.stderr))
    if "Sanitizer" in p.stderr or "runtime error:" in p.stderr:
        check(False, "slurm-health %s: no sanitizer report" % " ".join(args))
    return p


def fake_scontrol(tmp, name, body):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body)
    os.chmod(path, 0o755)
    return path


def cases(c, healthy, degraded, cpu_only, tmp):
    node = ["--node", NODE]
    # 1. Healthy and idle: nothing to do.
    p = run(c, healthy, *node)
    check(p.returncode == 0 and "no change (IDLE)" in p.stdout, "pass on an idle node: exit 0, no change")
    check(c.state() == ("IDLE", None), "pass: the node stays IDLE without a reason")

    # 2. Failing: drained with the failed checks; --json keeps the report.
    report = os.path.join(tmp, "report.json")
    p = run(c, degraded, *node, "--json", report)
    check(p.returncode == 0 and "drain (was IDLE)" in p.stdout, "fail: exit 0 and a drain line")
    st = c.state()
    check("DRAIN" in (st[0] or "") and st[1] == DEGRADED_REASON, "fail: drained with %r (got %r)" % (DEGRADED_REASON, st))
    try:
        with open(report) as f:
            text = f.read()
        check('"schema": "gpuvet.report/1"' in text and '"command": "slurm-health"' in text,
              "--json: check's report, command slurm-health")
    except OSError as e:
        check(False, "--json: report written (%s)" % e)

    # 3. The same failures: nothing changes. 4. Other failures: the reason follows.
    p = run(c, degraded, *node)
    check(p.returncode == 0 and "already drained by gpuvet for the same checks" in p.stdout,
          "same failures again: no change")
    p = run(c, degraded, *node, "--only", "pcie")
    check(p.returncode == 0 and "update-reason" in p.stdout, "other failures: the reason is updated")
    check(c.state()[1] == "gpuvet: pcie.link_width,pcie.aer", "updated reason is gpuvet: pcie.link_width,pcie.aer")

    # 5. --dry-run says what it would do and does nothing.
    p = run(c, healthy, *node, "--dry-run")
    check(p.returncode == 0 and "would resume" in p.stdout and "State=RESUME" in p.stdout, "--dry-run: would resume")
    check("DRAIN" in (c.state()[0] or ""), "--dry-run: still drained")

    # 5b. Warnings (the cpu-only fixture: cpu.cstates) drain only with --drain-on warn.
    p = run(c, cpu_only, *node, "--no-nvml")
    check(p.returncode == 0 and "check quick: warn" in p.stdout and "resume (was" in p.stdout,
          "warnings alone do not drain by default: gpuvet's drain is resumed")
    c.settled()
    p = run(c, cpu_only, *node, "--no-nvml", "--drain-on", "warn")
    check(p.returncode == 0 and c.state()[1] == "gpuvet: cpu.cstates", "--drain-on warn: the reason names the warning")

    # 6. Passing again: resumed.
    p = run(c, healthy, *node)
    check(p.returncode == 0 and "resume (was" in p.stdout, "pass on gpuvet's drain: resume")
    check(c.settled() == ("IDLE", None), "pass: IDLE again, no reason")

    # 7. An administrator's drain is never touched, by a pass or a failure.
    c.scontrol("update", "NodeName=" + NODE, "State=DRAIN", "Reason=admin: bad fan")
    for root, what in ((healthy, "pass"), (degraded, "fail")):
        p = run(c, root, *node)
        check(p.returncode == 0 and "drained by someone else" in p.stdout, "admin drain, %s: left alone" % what)
        st = c.state()
        check("DRAIN" in (st[0] or "") and st[1] == "admin: bad fan",
              "admin drain, %s: still drained, reason kept (%r)" % (what, st))
    c.scontrol("update", "NodeName=" + NODE, "State=RESUME")
    c.settled()

    # 8. A hung NVML call: check's call deadline makes error results naming the checks.
    p = run(c, healthy, *node, scenario=HANG_SCN)
    st = c.state()
    check(p.returncode == 0 and p.wall < 15 * SCALE, "hung NVML call: done in %.1f s (< %.0f)" % (p.wall, 15 * SCALE))
    check("DRAIN" in (st[0] or "") and (st[1] or "").startswith("gpuvet: gpu.recovery_action,"),
          "hung NVML call: drained naming the checks (%r)" % (st[1],))
    # 9. A hung nvmlInit past check's own init deadline: slurm-health's --timeout kills it.
    limit = 2  # always reached (nvmlInit never returns): no need to scale it
    p = run(c, healthy, *node, "--timeout", str(limit), "--nvml-init-timeout-ms", "600000", scenario=HANG_INIT_SCN)
    st = c.state()
    check(p.returncode == 0 and p.wall < limit + 5 * SCALE, "hung nvmlInit: done in %.1f s (--timeout %d)" % (p.wall, limit))
    check(st[1] == "gpuvet: check timed out after %d s" % limit, "hung nvmlInit: reason names the timeout (%r)" % (st[1],))
    p = run(c, healthy, *node)
    check(p.returncode == 0 and c.settled() == ("IDLE", None), "resumed after the hangs")

    # 10. slurmd runs the HealthCheckProgram itself: the wrapper names no node (slurmd's
    # SLURMD_NODENAME does); a failing fixture drains, a passing one resumes.
    with open(c.hc_root, "w") as f:
        f.write(degraded)
    st = wait_for("slurmd's health check to drain the node",
                  lambda: (lambda s: s if s[1] == DEGRADED_REASON else None)(c.state()), 30)
    check(st is not None and "DRAIN" in st[0], "slurmd's HealthCheckProgram drained the node (%r)" % (st,))
    with open(c.hc_root, "w") as f:
        f.write(healthy)
    st = wait_for("slurmd's health check to resume the node",
                  lambda: (lambda s: s if "DRAIN" not in (s[0] or "DRAIN") and s[1] is None else None)(c.state()), 30)
    check(st is not None, "slurmd's HealthCheckProgram resumed the node (%r)" % (st,))
    os.unlink(c.hc_root)
    try:
        with open(c.hc_log) as f:
            log = f.read()
    except OSError:
        log = ""
    check("%s: drain (was" % NODE in log and "%s: resume (was" % NODE in log,
          "the wrapper's log shows slurmd's runs drain and resume %s" % NODE)
    stamped = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} ")
    check(log and all(stamped.match(x) for x in log.splitlines()),
          "every line of the wrapper's log starts with its time: %r" % log.splitlines()[:2])
    c.settled()

    # 11. A job through deploy/slurm's prolog: on a healthy node it runs; on a failing one
    # the prolog drains the node and exits 1, Slurm fails the job's launch and keeps
    # gpuvet's reason (its own "Prolog error" drain does not replace it).
    with open(c.prolog_root, "w") as f:
        f.write(healthy)
    p = subprocess.run(["srun", "-N1", "-w", NODE, "-t", "1", "true"], capture_output=True, text=True, env=c.env,
                       timeout=60 * SCALE)
    check(p.returncode == 0, "a job on a healthy node passes the prolog (srun exit %d: %s)" % (p.returncode,
                                                                                               p.stderr.strip()))
    with open(c.prolog_root, "w") as f:
        f.write(degraded)
    p = subprocess.run(["srun", "-N1", "-w", NODE, "-t", "1", "true"], capture_output=True, text=True, env=c.env,
                       timeout=60 * SCALE)
    os.unlink(c.prolog_root)
    st = c.state()
    check(p.returncode != 0 and "prolog" in p.stderr.lower(), "a job on a failing node: the prolog fails its launch")
    check("DRAIN" in (st[0] or "") and st[1] == DEGRADED_REASON,
          "after the prolog failed, the node is drained with gpuvet's reason (%r)" % (st,))
    try:
        with open(c.prolog_log) as f:
            plog = f.read()
    except OSError:
        plog = ""
    check("pre-job GPU check" in plog and "%s: drain (was" % NODE in plog, "the prolog's log tells the drain")
    p = run(c, healthy, *node)
    check(p.returncode == 0 and "resume (was" in p.stdout and c.settled() == ("IDLE", None),
          "the next passing health check resumes the node")

    # 11b. A job through deploy/slurm's epilog on a failing node: the job runs, then the
    # epilog drains the node with gpuvet's reason and exits 0 (no "Epilog error" drain).
    with open(c.epilog_root, "w") as f:
        f.write(degraded)
    p = subprocess.run(["srun", "-N1", "-w", NODE, "-t", "1", "true"], capture_output=True, text=True, env=c.env,
                       timeout=60 * SCALE)
    check(p.returncode == 0, "a job before a failing epilog runs (srun exit %d: %s)" % (p.returncode, p.stderr.strip()))
    st = wait_for("the epilog to drain the node", lambda: (lambda s: s if s[1] == DEGRADED_REASON else None)(c.state()), 30)
    check(st is not None and "DRAIN" in st[0], "after the job, the epilog drained the node with gpuvet's reason (%r)" % (st,))
    os.unlink(c.epilog_root)
    try:
        with open(c.epilog_log) as f:
            elog = f.read()
    except OSError:
        elog = ""
    check("%s: drain (was" % NODE in elog, "the epilog's log tells the drain")
    p = run(c, healthy, *node)
    check(p.returncode == 0 and "resume (was" in p.stdout and c.settled() == ("IDLE", None),
          "the next passing health check resumes the node after the epilog's drain")

    # 12. --prolog by hand: a failing node is drained and the prolog exits 1.
    p = run(c, degraded, "--prolog", env_extra={"SLURMD_NODENAME": NODE})
    check(p.returncode == 1 and "pre-job GPU check" in p.stderr, "--prolog, fail: exit 1 with a message")
    check(c.state()[1] == DEGRADED_REASON, "--prolog, fail: drained with gpuvet's reason")
    p = run(c, healthy, "--epilog", env_extra={"SLURMD_NODENAME": NODE})
    check(p.returncode == 0 and "resume" in p.stdout, "--epilog, pass: exit 0, resumed")
    c.settled()

    # 13. scontrol missing, failing, hanging, torn output, a failed update: exit 3, and
    # nothing done on a state half read.
    calls = os.path.join(tmp, "scontrol-calls")
    real = shutil.which("scontrol")
    scripts = {
        "missing": os.path.join(tmp, "no-such-scontrol"),
        "failing": fake_scontrol(tmp, "sc-fail", "echo \"$@\" >>%s\necho 'slurm_load_node error: Unable to contact "
                                 "slurm controller (connect failure)' >&2\nexit 1\n" % calls),
        "hanging": fake_scontrol(tmp, "sc-hang", "echo \"$@\" >>%s\nexec sleep 600\n" % calls),
        "torn": fake_scontrol(tmp, "sc-torn", "echo \"$@\" >>%s\necho 'NodeName=%s Arch=x86_64 CoresPer'\n"
                              % (calls, NODE)),
        "cut-short": fake_scontrol(tmp, "sc-cut", "echo \"$@\" >>%s\nprintf 'NodeName=%s State=IDLE+DR'\n"
                                   % (calls, NODE)),
        "update-fails": fake_scontrol(tmp, "sc-upd", "echo \"$@\" >>%s\ncase \"$1\" in update) echo 'slurm_update "
                                      "error: Access/permission denied' >&2; exit 1;; esac\nexec %s \"$@\"\n"
                                      % (calls, real)),
    }
    for what, path in scripts.items():
        if os.path.exists(calls):
            os.unlink(calls)
        # The hanging one never answers: 1 s is enough whatever the machine's load.
        deadline = 1 if what == "hanging" else max(1, int(SCALE))
        p = run(c, degraded, *node, "--scontrol", path, "--scontrol-timeout", str(deadline))
        check(p.returncode == 3 and path in p.stderr, "scontrol %s: exit 3 naming it" % what)
        made = open(calls).read() if os.path.exists(calls) else ""
        if what != "update-fails":
            check("update" not in made, "scontrol %s: no update attempted" % what)
        check(p.wall < 15 * SCALE, "scontrol %s: done in %.1f s" % (what, p.wall))
    check("Access/permission denied" in p.stderr, "failed update: scontrol's message is shown")
    check(c.state() == ("IDLE", None), "after the scontrol failures the node is untouched")

    # 14. Bad input: exit 2, node untouched.
    for args, what in (((*node, "--drain-on", "sometimes"), "--drain-on"),
                       (("--node", "bad name"), "--node"),
                       ((*node, "--only", "no.such_check"), "--only"),
                       ((*node, "--scontrol-timeout", "0"), "--scontrol-timeout")):
        p = run(c, healthy, *args)
        check(p.returncode == 2 and p.stderr.strip(), "bad %s: exit 2 with a message" % what)
    p = run(c, os.path.join(tmp, "no-such-root"), *node)
    check(p.returncode == 2 and "no-such-root" in p.stderr, "bad --root: exit 2 naming it")
    check(c.state() == ("IDLE", None), "after bad input the node is untouched")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    gpuvet, fake = sys.argv[1], sys.argv[2]
    if os.geteuid() != 0:
        print("SKIP: needs root (slurmd and munged run as root here)")
        return 77
    missing = [b for b in ("munged", "slurmctld", "slurmd", "scontrol") if not shutil.which(b)]
    if missing:
        print("SKIP: not installed: %s (tools/bootstrap.sh: munge, slurmctld, slurmd, slurm-client)" % ", ".join(missing))
        return 77
    healthy, degraded = fixture_cache.path("dgx-h100"), fixture_cache.path("dgx-h100-degraded")
    tmp = tempfile.mkdtemp(prefix="gpuvet-slurm-")
    os.chmod(tmp, stat.S_IRWXU)
    libdir = os.path.join(tmp, "lib")
    os.makedirs(libdir)
    lib = os.path.join(libdir, "libnvidia-ml.so.1")
    shutil.copyfile(fake, lib)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_NVML_", "GPUVET_", "SLURM"))}
    env.update(GPUVET_PCI_IDS=PCI_IDS, GPUVET_NVML_LIB=lib, NO_COLOR="1")
    c = Cluster(tmp, gpuvet, env)
    start = time.monotonic()
    try:
        if not c.start():
            check(False, "the one-node cluster started")
        else:
            print("cluster up in %.1f s" % (time.monotonic() - start))
            cases(c, healthy, degraded, fixture_cache.path("cpu-only"), tmp)
    finally:
        if failures:
            c.dump_logs()
        c.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failure(s); %.1f s" % (len(failures), time.monotonic() - start))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

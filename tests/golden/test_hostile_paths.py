#!/usr/bin/env python3
"""A hostile local user against root's gpuvet (issue 38's acceptance, review N5, N11).

An unprivileged user (nobody, through setpriv) plants FIFOs and symlinks (into /dev/full, to
a root-owned file elsewhere) at the output and state paths gpuvet's root-run commands and
units use, in a mode-1777 directory as /tmp is (and as /var/lib/gpuvet, /var/log/gpuvet or a
report folder would be if an admin loosened them):

- the seed wrappers' names: quick_check.sh and system_check.sh with an explicit path, and
  with none (their old default /tmp/gpu_check.json and /tmp/system_check.json, planted in a
  private mount namespace's /tmp; skipped with a reason where unshare is not allowed);
- gpuvet-check.service's `check --json /var/lib/gpuvet/check.json`, the Ansible role's
  `check-LEVEL.json` and `report --html`, `fleet --json/--html`, `snapshot -o`,
  `policy capture -o`, `query -f` (on the fake NVML);
- tune's `<root>/var/lib/gpuvet/tune-state.json` and its `.lock`.

Root then runs each command under a timeout: nothing may block, every planted FIFO and
symlink is refused or replaced (never written through), and the files outside keep their
content. Needs root and setpriv (exit 77, skipped, otherwise).

Usage: test_hostile_paths.py GPUVET SRCDIR FAKE_NVML_LIB"""
import json
import os
import shutil
import stat
import subprocess
import sys

GPUVET, SRCDIR, FAKE_LIB = (os.path.abspath(a) for a in sys.argv[1:4])
sys.path.insert(0, os.path.join(SRCDIR, "tests"))
from testlib import check, finish  # noqa: E402
sys.path.insert(0, os.path.join(SRCDIR, "tests", "fixtures"))
import fixture_cache  # noqa: E402
sys.path.insert(0, os.path.join(SRCDIR, "tests", "fakes"))
import fakeenv  # noqa: E402

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
WRAPPERS = os.path.join(SRCDIR, "deploy", "scripts", "validation")
SCENARIO = os.path.join(SRCDIR, "tests", "golden", "nvml-scenarios", "golden-dgx-h100.scn")
LIMIT = 60  # a blocked open never returns; a busy 2-core machine still answers in seconds


def as_nobody(*cmd):
    subprocess.run(NOBODY + list(cmd), check=True, timeout=30)


def run(args, env=None):
    """Root's run under the limit: (rc, stderr), rc None when it blocked."""
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=LIMIT * fakeenv.time_scale(),
                           env=dict(env or os.environ, GPUVET=GPUVET))
        return p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        return None, "blocked for %d s" % LIMIT


class Plants:
    """What nobody put where: each kind of trap at one path, checked after root's run."""

    def __init__(self, shared, victim):
        self.shared, self.victim = shared, victim

    def plant(self, name, kind, where=None):
        path = os.path.join(where or self.shared, name)
        if kind == "fifo":
            as_nobody("mkfifo", path)
        elif kind == "device":
            as_nobody("ln", "-s", "/dev/full", path)
        else:
            as_nobody("ln", "-s", self.victim, path)
        return path

    def untouched(self, path, kind, what):
        """The victim keeps its content; a FIFO or device link stays as planted (refused), a
        link to a file may have been replaced by root's own regular file."""
        with open(self.victim) as f:
            check(f.read() == "keep\n", "%s: the file a link named outside was written through" % what)
        st = os.lstat(path)
        if kind == "fifo":
            check(stat.S_ISFIFO(st.st_mode), "%s: the FIFO was replaced (%o)" % (what, st.st_mode))
        elif kind == "device":
            check(stat.S_ISLNK(st.st_mode) and os.readlink(path) == "/dev/full",
                  "%s: the link to /dev/full was not left alone" % what)
        else:
            check(stat.S_ISREG(st.st_mode) and st.st_uid == 0 or stat.S_ISLNK(st.st_mode),
                  "%s: %o owned by %d" % (what, st.st_mode, st.st_uid))


def outputs(p, fx, work):
    """Every command that writes a report, at each kind of trap."""
    check_json = os.path.join(work, "input-check.json")
    rc, err = run([GPUVET, "check", "--root", fx, "-q", "--json", check_json])
    check(rc in (0, 1), "a check report to read (rc %s: %s)" % (rc, err[-200:]))
    fleet_dir = os.path.join(work, "fleet")
    os.makedirs(fleet_dir)
    shutil.copy(check_json, os.path.join(fleet_dir, "node1.json"))
    nvml = fakeenv.gpuvet_env(SCENARIO, {"GPUVET_NVML_LIB": FAKE_LIB})
    commands = [
        ("gpuvet-check.service", "check.json", lambda out: [GPUVET, "check", "--root", fx, "-q", "--json", out], None),
        ("quick_check.sh OUT", "gpu_check.json",
         lambda out: ["bash", os.path.join(WRAPPERS, "quick_check.sh"), out, "--root", fx, "-q"], None),
        ("system_check.sh OUT", "system_check.json",
         lambda out: ["bash", os.path.join(WRAPPERS, "system_check.sh"), out, "--root", fx, "-q", "--no-nvml"], None),
        ("gpu_validation check-LEVEL.json", "check-quick.json",
         lambda out: [GPUVET, "check", "--root", fx, "-q", "--level", "quick", "--json", out], None),
        ("report --html", "check-quick.html", lambda out: [GPUVET, "report", check_json, "--html", out], None),
        ("fleet --json", "fleet-quick.json", lambda out: [GPUVET, "fleet", fleet_dir, "--json", out], None),
        ("fleet --html", "fleet-quick.html", lambda out: [GPUVET, "fleet", fleet_dir, "--html", out], None),
        ("snapshot -o", "snapshot.tar", lambda out: [GPUVET, "snapshot", "--root", fx, "-o", out], None),
        ("policy capture -o", "policy.yaml", lambda out: [GPUVET, "policy", "capture", "--root", fx, "-o", out], None),
        ("query -f", "query.csv",
         lambda out: [GPUVET, "query", "--query-gpu=name,temperature.gpu", "--format=csv", "-f", out], nvml),
    ]
    for what, name, argv, env in commands:
        for kind in ("fifo", "device", "file"):
            # The kind goes before the extension: snapshot takes its compression from the
            # suffix and refuses one it does not know.
            stem, ext = os.path.splitext(name)
            path = p.plant("%s-%s%s" % (stem, kind, ext), kind)
            rc, err = run(argv(path), env=env)
            label = "%s at a %s" % (what, {"fifo": "FIFO", "device": "link to /dev/full", "file": "link to a file"}[kind])
            check(rc is not None, "%s: blocked (killed after %d s)" % (label, LIMIT))
            if kind == "file":
                check(rc in (0, 1) and stat.S_ISREG(os.lstat(path).st_mode),
                      "%s: the report replaces the link (rc %s: %s)" % (label, rc, err.strip()[-200:]))
            else:
                check(rc == 2 and "not a regular file" in err and path in err,
                      "%s: refused naming the path, exit 2 (rc %s: %s)" % (label, rc, err.strip()[-200:]))
            p.untouched(path, kind, label)
    print("ok: every output path")


def tune_state(p, work):
    """tune's state and lock in a state directory others can write."""
    root = os.path.join(work, "tune-root")
    fixture_cache.writable("vm-guest", root)
    state_dir = os.path.join(root, "var", "lib", "gpuvet")
    for name, kind, action in (("tune-state.json.lock", "file", "apply"), ("tune-state.json.lock", "device", "apply"),
                               ("tune-state.json.lock", "fifo", "apply"), ("tune-state.json", "fifo", "status"),
                               ("tune-state.json", "fifo", "revert"), ("tune-state.json", "file", "status")):
        shutil.rmtree(state_dir, ignore_errors=True)
        os.makedirs(state_dir)
        os.chmod(state_dir, 0o1777)
        path = p.plant(name, kind, state_dir)
        rc, err = run([GPUVET, "tune", action, "--root", root, "--no-nvml"])
        label = "tune %s with %s a %s" % (action, name, kind)
        check(rc == 2 and "not a regular file" in err, "%s: refused, exit 2 (rc %s: %s)" % (label, rc, err.strip()[-200:]))
        p.untouched(path, kind, label)
    print("ok: tune's state and lock")


def wrapper_defaults(p, fx, work):
    """The wrappers without OUT: their old default names in /tmp (a private one here)."""
    if not os.path.isdir("/mnt") or subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        print("SKIP wrapper defaults: unshare -m is not allowed here (a container without CAP_SYS_ADMIN)")
        return
    tmp = os.path.join(work, "ns-tmp")
    varlib = os.path.join(work, "ns-varlib")
    os.makedirs(tmp)
    os.makedirs(varlib)
    os.chmod(tmp, 0o1777)
    fifo = p.plant("gpu_check.json", "fifo", tmp)
    link = p.plant("system_check.json", "device", tmp)
    # The fixture lies under the real /tmp: first bound where the private /tmp leaves it seen.
    script = ("set -e; mount -t tmpfs gpuvet-hostile /mnt; mkdir /mnt/fx; mount --bind %(fx)s /mnt/fx; "
              "mount --bind %(varlib)s /var/lib; mount --bind %(tmp)s /tmp; unset XDG_RUNTIME_DIR GPUVET_REPORT_DIR; "
              "set +e; GPUVET=%(g)s bash %(w)s/quick_check.sh --root /mnt/fx -q; echo quick=$?; "
              "GPUVET=%(g)s bash %(w)s/system_check.sh --root /mnt/fx -q --no-nvml; echo system=$?"
              % {"tmp": tmp, "varlib": varlib, "g": GPUVET, "w": WRAPPERS, "fx": fx})
    try:
        r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script], capture_output=True,
                           text=True, timeout=2 * LIMIT * fakeenv.time_scale())
        out = r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        out = "blocked"
    check("quick=0" in out or "quick=1" in out, "quick_check.sh without OUT: %s" % out.strip()[-200:])
    check("system=0" in out or "system=1" in out, "system_check.sh without OUT: %s" % out.strip()[-200:])
    check(os.path.isfile(os.path.join(varlib, "gpuvet", "gpu_check.json")) and
          os.path.isfile(os.path.join(varlib, "gpuvet", "system_check.json")),
          "root's default reports are in /var/lib/gpuvet: %s" % os.listdir(varlib))
    p.untouched(fifo, "fifo", "quick_check.sh's old default")
    p.untouched(link, "device", "system_check.sh's old default")
    print("ok: the wrappers' defaults")


def main():
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("SKIP: needs root and setpriv, to plant as nobody what root then runs into")
        return 77
    fixture_cache.ensure("dgx-h100", "vm-guest")
    fx = fixture_cache.path("dgx-h100")
    with fixture_cache.scratch(prefix="gpuvet-hostile-") as work:
        os.chmod(work, 0o755)  # nobody must reach the shared directory
        shared = os.path.join(work, "shared")
        os.makedirs(shared)
        os.chmod(shared, 0o1777)
        victim = os.path.join(work, "victim")
        with open(victim, "w") as f:
            f.write("keep\n")
        p = Plants(shared, victim)
        outputs(p, fx, work)
        tune_state(p, work)
        wrapper_defaults(p, fx, work)
    return finish()


if __name__ == "__main__":
    sys.exit(main())

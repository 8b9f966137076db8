#!/usr/bin/env python3
"""deploy/slurm's three scripts (gpuvet-healthcheck, prolog.d and epilog.d's
50-gpuvet-check) around a stand-in gpuvet, so no Slurm is needed: with GPUVET_SLURM_LOG
every line slurm-health prints (standard output and error) is appended there after an ISO
8601 time (ux-review: "the log has no timestamps"), a last line without a newline too, and
the script exits with slurm-health's status (0, 1 for a failed prolog, 3); without it the
output is slurm-health's own, unstamped.

    test_slurm_scripts.py"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from testlib import check, finish  # noqa: E402

DEPLOY = os.path.join(HERE, "..", "..", "deploy", "slurm")
SCRIPTS = {"gpuvet-healthcheck": ("GPUVET_SLURM_HEALTH_OPTS", ""),
           "prolog.d/50-gpuvet-check": ("GPUVET_SLURM_PROLOG_OPTS", "--prolog "),
           "epilog.d/50-gpuvet-check": ("GPUVET_SLURM_EPILOG_OPTS", "--epilog ")}
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} ")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        fake = os.path.join(tmp, "gpuvet")
        with open(fake, "w") as f:
            # Says its arguments, one line on stderr, a last line without a newline, and
            # exits with $FAKE_RC.
            f.write('#!/bin/sh\necho "args: $*"\necho "gpuvet slurm-health: on stderr" >&2\n'
                    'printf "no newline"\nexit "${FAKE_RC:-0}"\n')
        os.chmod(fake, 0o755)
        for name, (var, mode) in SCRIPTS.items():
            script = os.path.join(DEPLOY, name)
            log = os.path.join(tmp, name.replace("/", "_") + ".log")
            for rc in (0, 1, 3):
                env = {"GPUVET": fake, "GPUVET_SLURM_DEFAULTS": "/dev/null", "GPUVET_SLURM_LOG": log,
                       var: "--level quick", "FAKE_RC": str(rc)}
                p = subprocess.run([script], env=env, capture_output=True, text=True, timeout=60)
                check(p.returncode == rc, "%s: exits with slurm-health's %d, got %d (%s)" % (name, rc, p.returncode,
                                                                                          p.stderr.strip()))
                check(p.stdout == "" and p.stderr == "", "%s: nothing outside the log: %r %r" % (name, p.stdout,
                                                                                               p.stderr))
            with open(log) as f:
                lines = f.read().splitlines()
            check(len(lines) == 9, "%s: three runs of three lines appended, got %d: %s" % (name, len(lines), lines))
            check(lines and all(STAMP.match(x) for x in lines), "%s: every line starts with an ISO 8601 time: %s" %
                  (name, lines[:3]))
            bodies = [STAMP.sub("", x) for x in lines[:3]]
            check(sorted(bodies) == sorted(["args: slurm-health %s--level quick" % mode,
                                            "gpuvet slurm-health: on stderr", "no newline"]),
                  "%s: slurm-health's lines, arguments and stderr kept: %s" % (name, bodies))
            # Without the log: slurm-health's output as it is, its status.
            env = {"GPUVET": fake, "GPUVET_SLURM_DEFAULTS": "/dev/null", "FAKE_RC": "1"}
            p = subprocess.run([script], env=env, capture_output=True, text=True, timeout=60)
            check(p.returncode == 1 and p.stdout.startswith("args: slurm-health") and not STAMP.match(p.stdout),
                  "%s without a log: unstamped output, exit 1 (%d: %r)" % (name, p.returncode, p.stdout))
        # A log that cannot be opened: the health check does not pass silently.
        env = {"GPUVET": fake, "GPUVET_SLURM_DEFAULTS": "/dev/null",
               "GPUVET_SLURM_LOG": os.path.join(tmp, "no", "such", "dir", "x.log")}
        p = subprocess.run([os.path.join(DEPLOY, "gpuvet-healthcheck")], env=env, capture_output=True, text=True,
                           timeout=60)
        check(p.returncode != 0, "an unopenable log: non-zero exit (%d)" % p.returncode)
    return finish()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The seed's validation entry points (deploy/scripts/validation) over gpuvet.

    test_scripts.py GPUVET OUTDIR

quick_check.sh OUT.json on a healthy and a degraded fixture (GPUVET_FSROOT): the JSON
report lands in OUT.json at level quick, the text report on standard output, and the exit
status is gpuvet's verdict (0, 1); extra options pass through (--only); system_check.sh runs
the standard level. Exit 0 when every case holds, 1 otherwise."""
import json
import os
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import fixture_cache  # noqa: E402  (the shared fixture trees)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(REPO, "deploy", "scripts", "validation")


def main():
    gpuvet, outdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    fixtures = fixture_cache.ensure("dgx-h100", "dgx-h100-degraded")
    os.makedirs(outdir, exist_ok=True)
    env = dict(os.environ, GPUVET=gpuvet, GPUVET_PCI_IDS=os.path.join(REPO, "tests", "fixtures", "pci.ids"))
    for fixture, code, verdict in (("dgx-h100", 0, "pass"), ("dgx-h100-degraded", 1, "fail")):
        out = os.path.join(outdir, fixture + "-quick.json")
        p = subprocess.run([os.path.join(SCRIPTS, "quick_check.sh"), out], env=dict(env, GPUVET_FSROOT=os.path.join(fixtures, fixture)),
                           capture_output=True, text=True)
        check(p.returncode == code, "quick_check.sh on %s: exit %d, got %d %s" % (fixture, code, p.returncode, p.stderr[-300:]))
        check(p.stdout.startswith("gpuvet check"), "quick_check.sh prints the text report")
        with open(out) as f:
            rep = json.load(f)
        check(rep["level"] == "quick" and rep["summary"]["verdict"] == verdict, "%s: JSON report, level quick, %s" % (out, verdict))
    out = os.path.join(outdir, "only.json")
    p = subprocess.run([os.path.join(SCRIPTS, "quick_check.sh"), out, "--only", "pcie"],
                       env=dict(env, GPUVET_FSROOT=os.path.join(fixtures, "dgx-h100-degraded")), capture_output=True, text=True)
    with open(out) as f:
        ids = {c["id"].split(".")[0] for c in json.load(f)["checks"]}
    check(ids == {"pcie"}, "options after OUT.json pass through (--only pcie): %s" % ids)
    out = os.path.join(outdir, "system.json")
    p = subprocess.run([os.path.join(SCRIPTS, "system_check.sh"), out, "--no-nvml"],
                       env=dict(env, GPUVET_FSROOT=os.path.join(fixtures, "dgx-h100")), capture_output=True, text=True)
    with open(out) as f:
        rep = json.load(f)
    check(rep["level"] == "standard", "system_check.sh runs gpuvet check --level standard")
    return finish()


if __name__ == "__main__":
    sys.exit(main())

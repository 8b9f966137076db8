#!/usr/bin/env python3
"""deploy/prometheus/gpuvet-alerts.yml checked and unit-tested by promtool (docs/serve.md "Alerts").

    test_prometheus_rules.py

- promtool check rules accepts the file;
- promtool test rules passes tests/deploy/prometheus/gpuvet-alerts.test.yml, in which every
  alert of the file has a case where it fires (naming the GPU and node, or the instance, in
  its labels and annotations) and one where it does not: an alert added to the rules without
  both fails here;
- every GPU alert keeps the GPU's labels (its expression is not an aggregation that drops
  them) and every alert has a severity, a summary and a description.
Skips (77) when promtool (Debian's prometheus package) is not installed."""
import os
import shutil
import subprocess
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RULES = os.path.join(REPO, "deploy", "prometheus", "gpuvet-alerts.yml")
TESTS = os.path.join(HERE, "prometheus", "gpuvet-alerts.test.yml")
GPU_LABELS = {"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "instance", "job"}


def main():
    if not check(os.path.isfile(RULES), "%s exists" % RULES):
        return finish()
    with open(RULES) as f:
        rules = [r for g in yaml.safe_load(f)["groups"] for r in g["rules"]]
    with open(TESTS) as f:
        cases = yaml.safe_load(f)["tests"]
    alerts = [r for r in rules if "alert" in r]
    check(len(alerts) == len(rules), "only alerting rules: %d of %d" % (len(alerts), len(rules)))
    for r in alerts:
        a = r.get("annotations", {})
        check(r.get("labels", {}).get("severity") in ("critical", "warning", "info"),
              "%s: severity %s" % (r["alert"], r.get("labels")))
        check(a.get("summary") and a.get("description"), "%s: a summary and a description" % r["alert"])
    # Each alert fires in some case and stays quiet in another.
    fired, quiet, gpu_labels = set(), set(), {}
    for case in cases:
        for t in case.get("alert_rule_test", []):
            exp = t.get("exp_alerts") or []
            (fired if exp else quiet).add(t["alertname"])
            for e in exp:
                gpu_labels.setdefault(t["alertname"], []).append(set(e["exp_labels"]))
    for r in alerts:
        name = r["alert"]
        check(name in fired, "%s: a case where it fires" % name)
        check(name in quiet, "%s: a case where it does not fire" % name)
        # A GPU alert (its summary names the GPU) must carry the GPU's labels.
        if "$labels.gpu" in r["annotations"]["summary"]:
            for got in gpu_labels.get(name, []):
                check(GPU_LABELS <= got, "%s: fires with the GPU's labels %s" % (name, sorted(got)))
    promtool = shutil.which("promtool")
    if not promtool:
        print("SKIP: promtool is not installed (Debian: apt-get install prometheus)")
        return 77
    p = subprocess.run([promtool, "check", "rules", RULES], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0 and "SUCCESS: %d rules found" % len(rules) in p.stdout,
          "promtool check rules: exit %d\n%s%s" % (p.returncode, p.stdout, p.stderr))
    p = subprocess.run([promtool, "test", "rules", TESTS], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "promtool test rules: exit %d\n%s%s" % (p.returncode, p.stdout, p.stderr))
    print("promtool: %d alerts checked, %d test groups pass" % (len(alerts), len(cases)))
    return finish()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""deploy/ansible with real ansible-core: lint and syntax, then validate_gpu.yml run for real.

    test_ansible.py GPUVET OUTDIR [lint|validate]...

- ansible-lint (production profile) on deploy/ansible, and `ansible-playbook --syntax-check`
  on every playbook;
- validate_gpu.yml on two inventory hosts (local connection) judging two fixtures: the
  healthy dgx-h100 passes, the degraded one fails; the reports (JSON, text and the HTML page
  of `gpuvet report --html`) are fetched to validation_results/<host>/, a verdict line is
  printed per host, naming the failing checks as slurm-health's drain reason does,
  `gpuvet fleet` aggregates this run's reports on the control node (fleet-<level>.json and
  .html: two nodes, one failing, the failing node's checks) and prints the fleet's verdict,
  and the play fails for the failing host only; with `-e gpu_validation_fail_play=false` it
  reports and succeeds;
  `-e level=standard` runs that level; `-e level=bogus` stops before gpuvet runs, naming the
  variable; a second run changes nothing; `--check --diff` still validates; without
  gpu_validation_results_dir the reports land beside the playbooks of a writable tree and in
  ./validation_results where the tree is read-only (as the packages install it).
Skips (exit 77) when ansible-playbook is not installed (tools/run-tests.sh installs it).
Exit 0 when every case holds, 1 otherwise."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import fixture_cache  # noqa: E402  (the shared fixture trees)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
ANSIBLE = os.path.join(REPO, "deploy", "ansible")
PCI_IDS = os.path.join(REPO, "tests", "fixtures", "pci.ids")



def recap(out):
    """{host: {ok, changed, failed, ...}} from the PLAY RECAP."""
    hosts = {}
    for m in re.finditer(r"^(\S+)\s+:\s+((?:\w+=\d+\s*)+)$", out, re.M):
        hosts[m.group(1)] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(2))}
    return hosts


def main():
    gpuvet, outdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    os.makedirs(outdir, exist_ok=True)
    playbook_bin = shutil.which("ansible-playbook")
    if not playbook_bin:
        print("SKIP: ansible-playbook not installed (tools/run-tests.sh installs ansible-core)")
        return 77
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ANSIBLE, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_FORCE_COLOR="0", GPUVET_PCI_IDS=PCI_IDS, ANSIBLE_LOCAL_TEMP=os.path.join(outdir, "ansible-tmp"),
               ANSIBLE_HOME=os.path.join(outdir, "ansible-home"))

    parts = sys.argv[3:] or ["lint", "validate"]
    if any(p not in ("lint", "validate") for p in parts):
        print("test_ansible.py: parts are lint and validate, not %s" % " ".join(parts))
        return 2
    if "lint" in parts:
        lint_and_syntax(playbook_bin, env)
    if "validate" in parts:
        validate(gpuvet, playbook_bin, env)
    return finish()


def lint_and_syntax(playbook_bin, env):
    lint = shutil.which("ansible-lint")
    if check(lint is not None, "ansible-lint is installed"):
        p = subprocess.run([lint, "--profile", "production", "--offline", "."], cwd=ANSIBLE, env=env,
                           capture_output=True, text=True)
        if not check(p.returncode == 0, "ansible-lint --profile production: clean"):
            print(p.stdout[-3000:], p.stderr[-3000:])
    # Every playbook in one --syntax-check run (one start-up); when it fails, one run each
    # names the playbook.
    playbooks = sorted(glob.glob(os.path.join(ANSIBLE, "playbooks", "*.yml")))
    p = subprocess.run([playbook_bin, "--syntax-check"] + playbooks, cwd=ANSIBLE, env=env, capture_output=True, text=True)
    named = [os.path.basename(pb) for pb in playbooks]
    if p.returncode == 0:
        check(all("playbook: " + pb in p.stdout for pb in playbooks), "--syntax-check %s" % " ".join(named))
        return
    for pb in playbooks:
        p = subprocess.run([playbook_bin, "--syntax-check", pb], cwd=ANSIBLE, env=env, capture_output=True, text=True)
        check(p.returncode == 0, "--syntax-check %s: %s" % (os.path.basename(pb), p.stderr[-500:]))


def validate(gpuvet, playbook_bin, env):
    # --- validate_gpu.yml for real, two hosts judging two fixtures
    fixtures = fixture_cache.ensure("dgx-h100", "dgx-h100-degraded")
    with tempfile.TemporaryDirectory() as tmp:
        inventory = os.path.join(tmp, "hosts.yml")
        results = os.path.join(tmp, "results")
        with open(inventory, "w") as f:
            f.write("""all:
  children:
    gpu_nodes:
      vars:
        ansible_connection: local
        ansible_python_interpreter: %s
        gpu_validation_gpuvet: %s
        gpu_validation_fleet_gpuvet: %s
        gpu_validation_fleet_report: true
        gpu_validation_results_dir: %s
      hosts:
        node-good:
          gpu_validation_root: %s
          gpu_validation_report_dir: %s
        node-bad:
          gpu_validation_root: %s
          gpu_validation_report_dir: %s
""" % (sys.executable, gpuvet, gpuvet, results, os.path.join(fixtures, "dgx-h100"), os.path.join(tmp, "good"),
                os.path.join(fixtures, "dgx-h100-degraded"), os.path.join(tmp, "bad")))

        def play(*extra):
            return subprocess.run([playbook_bin, "-i", inventory, "playbooks/validate_gpu.yml", "-e", "gpuvet_become=false"]
                                  + list(extra), cwd=ANSIBLE, env=env, capture_output=True, text=True, timeout=600)

        p = play()
        out = p.stdout + p.stderr
        r = recap(out)
        check(p.returncode == 2, "one failing host fails the play (exit 2), got %d" % p.returncode)
        check(r.get("node-good", {}).get("failed") == 0 and r.get("node-bad", {}).get("failed") == 1,
              "node-good passes, node-bad fails: %s" % r)
        check("node-good: PASS (gpuvet check --level quick:" in out and "node-bad: FAIL (gpuvet check --level quick:" in out,
              "a verdict line per host")
        # As slurm-health's drain reason: the failing checks by id, each once, in report order.
        bad_ids = "pcie.link_width,pcie.aer,gpu.xid"
        check(re.search(r"node-bad: FAIL \(gpuvet check --level quick: \d+ pass, \d+ warn, 3 fail, 0 error\): %s -> "
                        % re.escape(bad_ids), out) is not None,
              "the failing host's verdict line names its failing checks")
        check(re.search(r"node-good: PASS \([^)]*\) -> ", out) is not None, "a passing host's line names none")
        check("node-bad failed validation (3 fail, 0 error): %s;" % bad_ids in out,
              "the failure names the counts, the failing checks and the report")
        for host, verdict in (("node-good", "pass"), ("node-bad", "fail")):
            path = os.path.join(results, host, "gpuvet-check-quick.json")
            if check(os.path.exists(path), "%s: JSON report fetched" % host):
                with open(path) as f:
                    rep = json.load(f)
                check(rep["summary"]["verdict"] == verdict and rep["root"] == os.path.join(fixtures, "dgx-h100" if host == "node-good" else "dgx-h100-degraded"),
                      "%s: the fetched report is that host's (%s)" % (host, verdict))
            text = os.path.join(results, host, "gpuvet-check-quick.txt")
            check(os.path.exists(text) and open(text).read().startswith("gpuvet check"), "%s: text report beside it" % host)
            page = os.path.join(results, host, "gpuvet-check-quick.html")
            body = open(page, encoding="utf-8").read() if os.path.exists(page) else ""
            check(body.startswith("<!DOCTYPE html>") and "gpuvet report: dgx-h100" in body
                  and ('data-status="fail"' in body) == (verdict == "fail"),
                  "%s: its HTML page beside them, with its failures" % host)
        agg_path = os.path.join(results, "fleet-quick.json")
        agg = json.load(open(agg_path)) if os.path.exists(agg_path) else {}
        nodes = {n["name"]: n["verdict"] for n in agg.get("nodes", [])}
        check(agg.get("schema") == "gpuvet.fleet/1" and len(nodes) == 2 and sorted(nodes.values()) == ["fail", "pass"]
              and agg["inputs"]["skipped"] == [],
              "gpuvet fleet on the control node: this run's two reports, one node failing: %s" % nodes)
        fleet_page = os.path.join(results, "fleet-quick.html")
        check(os.path.exists(fleet_page) and 'id="failing-nodes"' in open(fleet_page, encoding="utf-8").read(),
              "the fleet's page beside it")
        check(re.search(r"fleet: Verdict: \S+ FAIL .*-> %s/fleet-quick.html" % re.escape(results), out) is not None,
              "the fleet's verdict line, naming its page")

        p = play()
        r = recap(p.stdout)
        check(all(h.get("changed") == 0 for h in r.values()) and len(r) == 2, "a second run changes nothing: %s" % r)

        p = play("-e", "gpu_validation_fail_play=false")
        check(p.returncode == 0 and "node-bad: FAIL" in p.stdout, "fail_play=false: reported, the play succeeds")

        p = play("-e", "level=standard")
        check(os.path.exists(os.path.join(results, "node-good", "gpuvet-check-standard.json")) and "--level standard" in p.stdout,
              "-e level=standard runs gpuvet check --level standard")

        p = play("-e", "level=bogus")
        out = p.stdout + p.stderr
        check(p.returncode != 0 and 'validation_level (or -e level=...) is "bogus"' in out
              and not os.path.exists(os.path.join(results, "node-good", "gpuvet-check-bogus.json")),
              "-e level=bogus stops before gpuvet runs, naming the variable")

        p = play("--check", "--diff")
        check(p.returncode == 2 and "node-good: PASS" in p.stdout, "--check --diff still validates")

        results_default(gpuvet, playbook_bin, env, fixtures, tmp)


def results_default(gpuvet, playbook_bin, env, fixtures, tmp):
    """Without gpu_validation_results_dir: beside the playbooks in a writable copy of the
    tree; in the current directory where the tree is read-only (the packages' /usr/share)."""
    inventory = os.path.join(tmp, "default-results.yml")
    with open(inventory, "w") as f:
        f.write("""all:
  children:
    gpu_nodes:
      vars:
        ansible_connection: local
        ansible_python_interpreter: %s
        gpu_validation_gpuvet: %s
        gpu_validation_fleet_report: false
        gpu_validation_root: %s
      hosts:
        node-bad:
          gpu_validation_report_dir: %s
""" % (sys.executable, gpuvet, os.path.join(fixtures, "dgx-h100-degraded"), os.path.join(tmp, "default-bad")))
    tree = os.path.join(tmp, "tree", "ansible")
    shutil.copytree(ANSIBLE, tree, ignore=shutil.ignore_patterns("validation_results"))
    cwd = os.path.join(tmp, "cwd")
    os.makedirs(cwd)
    argv = [playbook_bin, "-i", inventory, os.path.join(tree, "playbooks", "validate_gpu.yml"),
            "-e", "gpuvet_become=false"]
    report = os.path.join("validation_results", "node-bad", "gpuvet-check-quick.json")

    p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    check(p.returncode == 2 and os.path.exists(os.path.join(tree, report))
          and not os.path.exists(os.path.join(cwd, report)),
          "a writable tree: the reports beside its playbooks (rc %d)" % p.returncode)
    shutil.rmtree(os.path.join(tree, "validation_results"), ignore_errors=True)

    # Read-only as the packages' tree is for a user, and for root too: a private mount
    # namespace binds the copy read-only (root's access(W_OK) fails there with EROFS).
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        print("note: unshare -m is not permitted here; the read-only tree case is not run")
        return
    shell = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    p = subprocess.run(["unshare", "-m", "sh", "-c", shell, tree] + argv, cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=600)
    check(p.returncode == 2 and os.path.exists(os.path.join(cwd, report))
          and not os.path.exists(os.path.join(tree, "validation_results")),
          "a read-only tree: the reports in ./validation_results of the current directory (rc %d): %s"
          % (p.returncode, (p.stdout + p.stderr)[-1500:] if p.returncode != 2 else ""))
    check("-> %s/validation_results/node-bad/" % cwd in p.stdout, "the verdict line names that directory")


if __name__ == "__main__":
    sys.exit(main())

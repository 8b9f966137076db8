#!/usr/bin/env python3
"""Site policies (src/policy/, docs/policy.md), end to end through the gpuvet binary.

Usage: test_policy.py GPUVET FAKE_LIB

On the dgx-h100 and dgx-h100-degraded fixtures (shared: tests/fixtures/fixture_cache.py), with the fake
NVML playing the healthy H100 scenario or a variant of it written here:

1. bad policy files: each is refused with exit 2 and a message naming FILE:LINE and the
   problem, by `gpuvet policy validate` and by `gpuvet check --policy`;
2. every key has an effect: expect (GPU count and model, driver branch and version, CUDA,
   MIG), checks (fail, warn, off, by id and by category), thresholds (each of them, moved
   on a scenario where it decides), exceptions (plain, and width/gen for the PCIe links);
3. the golden node: `gpuvet policy capture` of the node passes against itself (and parses
   as YAML for PyYAML too), and each drift (a GPU missing or added, a VBIOS, InfoROM or NUMA
   node changed, an NVLink count or PCIe path changed, a NIC missing) fails, naming it;
4. the default policy file under --root is read, and --no-policy ignores it.
"""
import json
import os
import re
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import fixture_cache  # noqa: E402  (the shared fixture trees)

GPUVET, FAKE_LIB = sys.argv[1:3]
HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
HEALTHY_SCN = os.path.join(HERE, "nvml-scenarios", "golden-h100-sxm-8gpu.scn")

failures = []


def fail(name, msg):
    failures.append(name)
    print("FAIL %s: %s" % (name, msg))


def ok(name):
    print("ok   %s" % name)


def run(args, scenario=HEALTHY_SCN, nvml=True):
    env = dict(os.environ, FAKE_NVML_SCENARIO=scenario or "", NO_COLOR="1")
    env.pop("GPUVET_NVML_LIB", None)
    cmd = [GPUVET] + args
    if nvml and args[0] in ("check", "policy") and args[1:2] != ["validate"]:
        cmd += ["--nvml-lib", FAKE_LIB]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def check_json(root, policy, scenario=HEALTHY_SCN, nvml=True, extra=()):
    args = ["check", "--root", root, "--json", "-", "--quiet"] + list(extra)
    if policy:
        args += ["--policy", policy]
    rc, out, err = run(args, scenario, nvml)
    try:
        return rc, json.loads(out), err
    except json.JSONDecodeError:
        return rc, None, err


def results(report, check_id, subject=None):
    return [c for c in report["checks"] if c["id"] == check_id and (subject is None or c["subject"] == subject)]


def statuses(report, check_id, subject=None):
    return sorted({c["status"] for c in results(report, check_id, subject)})


def expect_status(name, report, check_id, want, subject=None, summary_re=None):
    got = statuses(report, check_id, subject)
    if got != [want]:
        fail(name, "%s%s: statuses %s, expected [%s]" % (check_id, " " + subject if subject else "", got, want))
        return
    if summary_re:
        for c in results(report, check_id, subject):
            if not re.search(summary_re, c["summary"]):
                fail(name, "%s summary %r does not match %r" % (check_id, c["summary"], summary_re))
                return
    ok(name)


# ---- 1. bad files ---------------------------------------------------------------------

BAD = {
    # name: (text, line, message regex)
    "unknown-top-key": ("policy: 1\nexpct:\n  gpu_count: 8\n", 2, r'unknown key "expct" in the policy'),
    "unknown-expect-key": ("policy: 1\nexpect:\n  gpu_count: 8\n  gpu_modle: H100\n", 4, r'unknown key "gpu_modle" in expect'),
    "unknown-threshold": ("policy: 1\nthresholds:\n  temp_margin: 5\n", 3, r'unknown key "temp_margin" in thresholds'),
    "unknown-check": ("policy: 1\nchecks:\n  gpu.nvlinks: fail\n", 3, r'no check or category named "gpu.nvlinks"'),
    "bad-severity": ("policy: 1\nchecks:\n  gpu.nvlink: maybe\n", 3, r'expected fail, warn or off, not "maybe"'),
    "wrong-type-count": ("policy: 1\nexpect:\n  gpu_count: eight\n", 3, r'expected a whole number, not "eight"'),
    "negative-count": ("policy: 1\nexpect:\n  gpu_count: -1\n", 3, r'expected a whole number'),
    "wrong-type-section": ("policy: 1\nthresholds: [5, 6]\n", 2, r'thresholds: expected a mapping'),
    "fraction-range": ("policy: 1\nthresholds:\n  power_cap_fraction: 1.5\n", 3, r'out of range'),
    "fraction-nan": ("policy: 1\nthresholds:\n  power_cap_fraction: .nan\n", 3, r'expected a number'),
    "retired-range": ("policy: 1\nthresholds:\n  retired_pages_warn: 63\n", 3, r'out of range \(1 to 62\)'),
    "mig-value": ("policy: 1\nexpect:\n  mig: sometimes\n", 3, r'expected true, false or managed'),
    "driver-version": ("policy: 1\nexpect:\n  driver_version: banana\n", 3, r'not a driver version'),
    "cuda-version": ("policy: 1\nexpect:\n  cuda_version: twelve\n", 3, r'not a CUDA version'),
    "branch-mismatch": ("policy: 1\nexpect:\n  driver_branch: 570\n  driver_version: 550.54.15\n", 1,
                        r'driver_version 550.54.15 is not of driver_branch 570'),
    "no-version": ("expect:\n  gpu_count: 8\n", 1, r'no "policy: 1" line'),
    "future-version": ("policy: 2\n", 1, r'format version 2 is not one this gpuvet reads'),
    "empty": ("", 1, r'the file is empty'),
    "not-a-mapping": ("- policy: 1\n", 1, r'expected a mapping'),
    "duplicate-key": ("policy: 1\nexpect:\n  gpu_count: 8\n  gpu_count: 4\n", 4, r'"gpu_count" is given twice'),
    "second-document": ("policy: 1\n---\npolicy: 1\n", 3, r'a second YAML document'),
    "syntax": ("policy: 1\nexpect:\n  gpu_count: [8\n", 4, r'not valid YAML'),
    "tab-indent": ("policy: 1\nexpect:\n\tgpu_count: 8\n", 3, r'not valid YAML'),
    "exception-missing-reason": ("policy: 1\nexceptions:\n  - check: pcie.link_width\n    subject: 0000:61:00.0\n", 3,
                                 r'needs check, subject and reason \(missing reason\)'),
    "exception-bad-subject": ("policy: 1\nexceptions:\n  - check: gpu.xid\n    subject: gpu3\n    reason: x\n", 4,
                              r'"gpu3" is not a PCI address'),
    "exception-width-wrong-check": ("policy: 1\nexceptions:\n  - check: gpu.xid\n    subject: 61:00.0\n    width: 8\n"
                                    "    reason: x\n", 3, r'width applies to pcie.link_width only'),
    "exception-width-value": ("policy: 1\nexceptions:\n  - check: pcie.link_width\n    subject: 61:00.0\n    width: 6\n"
                              "    reason: x\n", 5, r'x6 is not a PCIe link width'),
    "exception-twice": ("policy: 1\nexceptions:\n  - {check: gpu.xid, subject: 61:00.0, reason: a}\n"
                        "  - {check: gpu.xid, subject: 0000:61:00.0, reason: b}\n", 4, r'already allowed at line 3'),
    "reference-gpu-missing-key": ("policy: 1\nreference:\n  gpus:\n    - bus_id: 0000:1b:00.0\n      model: H100\n", 4,
                                  r'needs bus_id, device_id and model'),
    "reference-bad-device-id": ("policy: 1\nreference:\n  gpus:\n    - {bus_id: 1b:00.0, device_id: h100, model: H100}\n",
                                4, r'not a PCI vendor:device pair'),
    "reference-matrix-rows": ("policy: 1\nreference:\n  topology:\n    devices: [1b:00.0, 1c:00.0]\n    pcie:\n"
                              "      - [X, PIX]\n", 6, r'1 rows for 2 devices'),
    "reference-matrix-asymmetric": ("policy: 1\nreference:\n  topology:\n    devices: [1b:00.0, 1c:00.0]\n    pcie:\n"
                                    "      - [X, PIX]\n      - [SYS, X]\n", 6, r'differs from row 1 column 0'),
    "reference-matrix-cell": ("policy: 1\nreference:\n  topology:\n    devices: [1b:00.0, 1c:00.0]\n    pcie:\n"
                              "      - [X, NV18]\n      - [NV18, X]\n", 6, r'expected X, PIX, PXB, PHB, NODE or SYS, not "NV18"'),
    "reference-nic-twice": ("policy: 1\nreference:\n  nics:\n    - {bus_id: 1c:00.0}\n    - {bus_id: 0000:1c:00.0}\n", 5,
                            r'0000:1c:00.0 is listed twice \(lines 4 and 5\)'),
    "reference-too-many": ("policy: 1\nreference:\n  nics: [" + ", ".join(["{bus_id: 1c:00.0}"] * 1025) + "]\n", 3,
                           r'1025 entries is more than any node has'),
    "reference-unknown-key": ("policy: 1\nreference:\n  gpus: []\n  switches: []\n", 4, r'unknown key "switches" in reference'),
    "binary-garbage": ("policy: 1\nexpect:\n  gpu_model: \"a\\0b\"\n", 3, r'contains a NUL character'),
}


def test_bad_files(tmp):
    for name, (text, line, pattern) in BAD.items():
        path = write(os.path.join(tmp, name + ".yaml"), text)
        for how, args in (("validate", ["policy", "validate", path]),
                          ("check", ["check", "--root", fixture_cache.path("dgx-h100"), "--policy", path])):
            rc, out, err = run(args)
            where = "%s:%d: " % (path, line)
            if rc != 2:
                fail("bad/%s/%s" % (name, how), "exit %d, expected 2; stderr: %s" % (rc, err.strip()))
            elif where not in err or not re.search(pattern, err):
                fail("bad/%s/%s" % (name, how), "stderr does not name %r and match %r:\n%s" % (where, pattern, err))
            elif out.strip() and how == "check":
                fail("bad/%s/%s" % (name, how), "a report was printed for a bad policy")
            else:
                ok("bad/%s/%s" % (name, how))
    # Not a file at all, or a directory: exit 2 naming it.
    for name, path in (("missing-file", os.path.join(tmp, "nope.yaml")), ("directory", tmp)):
        rc, out, err = run(["policy", "validate", path])
        if rc != 2 or path not in err:
            fail("bad/" + name, "exit %d, stderr %r" % (rc, err))
        else:
            ok("bad/" + name)
    # Many problems: all named in one run, then cut short.
    text = "policy: 1\nexpect:\n" + "".join("  key%d: 1\n" % i for i in range(30))
    path = write(os.path.join(tmp, "many.yaml"), text)
    rc, out, err = run(["policy", "validate", path])
    if rc != 2 or err.count("unknown key") != 20 or "and 10 more problems" not in err:
        fail("bad/many-problems", "exit %d, stderr:\n%s" % (rc, err))
    else:
        ok("bad/many-problems")
    # A truncated capture: the policy a crash or a full disk leaves behind.
    full = capture(fixture_cache.path("dgx-h100"))
    for cut in (len(full) // 3, len(full) - 40):
        path = write(os.path.join(tmp, "truncated-%d.yaml" % cut), full[:cut])
        rc, out, err = run(["policy", "validate", path])
        if rc == 0:
            # A cut that lands between entries can leave valid YAML: it must then differ
            # from the node, not pass silently (checked in test_reference).
            ok("bad/truncated-%d (valid prefix)" % cut)
        elif rc != 2 or not re.search(re.escape(path) + r":\d+: ", err):
            fail("bad/truncated-%d" % cut, "exit %d, stderr:\n%s" % (rc, err))
        else:
            ok("bad/truncated-%d" % cut)


# ---- 2. every key ---------------------------------------------------------------------

def scenario_with(tmp, name, gpu0_lines, top_lines=""):
    """The healthy scenario with overrides on GPU 0 (and at the top)."""
    return write(os.path.join(tmp, name + ".scn"),
                 "include %s\n%s\n[gpu 0]\n%s\n" % (HEALTHY_SCN, top_lines, gpu0_lines))


def test_keys(tmp):
    # The dgx-h100 fixture, up for 10 hours: counters become rates.
    root = os.path.join(tmp, "dgx-h100-up")
    fixture_cache.writable("dgx-h100", root)
    write(os.path.join(root, "proc", "uptime"), "36000.00 70000.00\n")
    degraded = fixture_cache.path("dgx-h100-degraded")
    gpu0 = "0000:1b:00.0"

    def policy(name, text):
        return write(os.path.join(tmp, "key-" + name + ".yaml"), "policy: 1\n" + text)

    # expect
    for name, text, want, summary in (
            ("count-pass", "expect:\n  gpu_count: 8\n", "pass", r"8 GPUs"),
            ("count-fail", "expect:\n  gpu_count: 7\n", "fail", r"8 NVIDIA GPUs on the PCI bus, the site expects 7"),
            ("model-pass", "expect:\n  gpu_model: h100 80gb\n", "pass", None),
            ("model-fail", "expect:\n  gpu_model: H200\n", "fail", r'8 GPUs are not "H200"'),
            ("branch-pass", "expect:\n  driver_branch: 550\n", "pass", None),
            ("branch-fail", "expect:\n  driver_branch: 570\n", "fail", r"not of the 570 branch"),
            ("version-pass", "expect:\n  driver_version: 550.54.15\n", "pass", None),
            ("version-fail", "expect:\n  driver_version: 550.54.14\n", "fail", r"driver 550.54.15, the site expects 550.54.14"),
            ("cuda-pass", "expect:\n  cuda_version: \"12.4\"\n", "pass", None),
            ("cuda-older-pass", "expect:\n  cuda_version: \"11.8\"\n", "pass", None),
            ("cuda-fail", "expect:\n  cuda_version: \"12.8\"\n", "fail", r"supports CUDA 12.4, the site expects at least 12.8"),
            ("nothing", "expect: {}\n", None, None)):
        rc, rep, err = check_json(root, policy(name, text))
        if rep is None:
            fail("expect/" + name, "no report: " + err)
            continue
        if want is None:
            expect_status("expect/" + name, rep, "policy.expect", "skip")
            continue
        expect_status("expect/" + name, rep, "policy.expect", want, summary_re=summary)
        if (rc == 1) != (want == "fail"):
            fail("expect/" + name + "/exit", "exit %d for %s" % (rc, want))
    # No NVML: the driver comes from /proc, the CUDA version cannot be known.
    rc, rep, err = check_json(root, policy("cuda-nonvml", "expect:\n  cuda_version: \"12.4\"\n  driver_branch: 550\n"),
                              nvml=False, extra=["--no-nvml"])
    expect_status("expect/cuda-without-nvml", rep, "policy.expect", "fail", summary_re=r"CUDA version .* is unknown")

    # expect.mig
    mig_on_empty = scenario_with(tmp, "mig-empty", "mig_mode_current = enabled\nmig_mode_pending = enabled")
    for name, text, scn, want in (("mig-false-pass", "expect:\n  mig: false\n", HEALTHY_SCN, "pass"),
                                  ("mig-true-fail", "expect:\n  mig: true\n", HEALTHY_SCN, "fail"),
                                  ("mig-empty-default", "", mig_on_empty, "fail"),
                                  ("mig-empty-managed", "expect:\n  mig: managed\n", mig_on_empty, "pass"),
                                  ("mig-false-enabled", "expect:\n  mig: false\n", mig_on_empty, "fail")):
        rc, rep, err = check_json(root, policy(name, text), scenario=scn)
        if rep is None:
            fail("mig/" + name, "no report: " + err)
            continue
        expect_status("mig/" + name, rep, "gpu.mig", want, subject=gpu0)

    # checks: severities by id and by category
    for name, text, check, subject, want, summary in (
            ("warn-to-fail", "checks:\n  gpu.cuda_env: fail\n", "gpu.cuda_env", "host", "fail", r"a failure by site policy"),
            ("fail-to-warn", "checks:\n  pcie.aer: warn\n", "pcie.aer", "0000:61:00.0", "warn", r"a warning by site policy"),
            ("category-off", "checks:\n  pcie: off\n", "pcie.link_width", "host", "skip", r"off by site policy \(.*:3\)"),
            ("id-beats-category", "checks:\n  pcie: off\n  pcie.aer: warn\n", "pcie.aer", "0000:61:00.0", "warn", None)):
        rc, rep, err = check_json(degraded, policy(name, text), nvml=False, extra=["--no-nvml"])
        if rep is None:
            fail("checks/" + name, "no report: " + err)
            continue
        expect_status("checks/" + name, rep, check, want, subject=subject, summary_re=summary)
    # warn -> fail decides the exit code; fail -> warn lets a node pass.
    rc, rep, err = check_json(degraded, policy("exit-fail-to-warn",
                                               "checks:\n  pcie.aer: warn\n  pcie.link_width: warn\n  gpu.xid: warn\n"),
                              nvml=False, extra=["--no-nvml"])
    if rc != 0 or rep["summary"]["verdict"] != "warn":
        fail("checks/exit-fail-to-warn", "exit %d, verdict %s" % (rc, rep and rep["summary"]["verdict"]))
    else:
        ok("checks/exit-fail-to-warn")

    # thresholds, each on a scenario where it decides
    for name, text, gpu0_lines, check, without, with_policy in (
            ("temperature_margin_c", "thresholds:\n  temperature_margin_c: 50\n", "temperature = 45 C",
             "gpu.temperature", "pass", "warn"),
            ("power_cap_fraction", "thresholds:\n  power_cap_fraction: 0.8\n", "power_limit = 600.00 W\npower_enforced_limit = 600.00 W",
             "gpu.power_limit", "warn", "pass"),
            # 100000 replays in the 600 minutes the fixture has been up: 167 a minute.
            ("pcie_replays_per_minute", "thresholds:\n  pcie_replays_per_minute: 200\n", "pcie_replay_counter = 100000",
             "gpu.pcie_nvml", "warn", "pass"),
            ("ecc_corrected_warn", "thresholds:\n  ecc_corrected_warn: 10\n", "ecc_volatile_corrected = 20",
             "gpu.ecc_errors", "pass", "warn")):
        scn = scenario_with(tmp, "thr-" + name, gpu0_lines)
        rc, rep0, err0 = check_json(root, None, scenario=scn, extra=["--no-policy"])
        rc, rep1, err1 = check_json(root, policy("thr-" + name, text), scenario=scn)
        if rep0 is None or rep1 is None:
            fail("thresholds/" + name, "no report: " + err0 + err1)
            continue
        expect_status("thresholds/%s/default" % name, rep0, check, without, subject=gpu0)
        expect_status("thresholds/%s/policy" % name, rep1, check, with_policy, subject=gpu0)
    # retired pages: a pre-Ampere board (page retirement) with 20 retired pages warns by
    # default (15) and passes at 30.
    scn = scenario_with(tmp, "thr-retired", "architecture = volta\nretired_pages_sbe = 20\nretired_pages_dbe = 0\n"
                        "retired_pages_pending = no\nremapped_rows_correctable = N/A\nremapped_rows_uncorrectable = N/A\n"
                        "remapped_rows_pending = N/A\nremapped_rows_failure = N/A")
    rc, rep0, err0 = check_json(root, None, scenario=scn, extra=["--no-policy"])
    rc, rep1, err1 = check_json(root, policy("thr-retired", "thresholds:\n  retired_pages_warn: 30\n"), scenario=scn)
    if rep0 and rep1:
        expect_status("thresholds/retired_pages_warn/default", rep0, "gpu.memory_health", "warn", subject=gpu0)
        expect_status("thresholds/retired_pages_warn/policy", rep1, "gpu.memory_health", "pass", subject=gpu0)
    else:
        fail("thresholds/retired_pages_warn", err0 + err1)

    # network_min_rate_gbps: on dgx-h100-ib-faults mlx5_5/1 runs at 200 Gb/s beside 400 Gb/s
    # ports (warn without a policy); a site that wants 400 fails it (and passes the others); a
    # site content with 200 still hears that the port trained below its peers.
    ib = fixture_cache.path("dgx-h100-ib-faults")
    for name, text, subject, want in (
            ("default", None, "mlx5_5/1", "warn"),
            ("400", "thresholds:\n  network_min_rate_gbps: 400\n", "mlx5_5/1", "fail"),
            ("400-others-pass", "thresholds:\n  network_min_rate_gbps: 400\n", "mlx5_0/1", "pass"),
            ("200-still-below-peers", "thresholds:\n  network_min_rate_gbps: 200\n", "mlx5_5/1", "warn")):
        rc, rep, err = check_json(ib, policy("net-" + name, text) if text else None, nvml=False,
                                  extra=["--no-nvml"] + (["--no-policy"] if not text else []))
        if rep is None:
            fail("thresholds/network_min_rate_gbps/" + name, "no report: " + err)
            continue
        expect_status("thresholds/network_min_rate_gbps/" + name, rep, "network.port_rate", want, subject=subject)
    # A port down on purpose, excused for its subject.
    rc, rep, err = check_json(ib, policy("net-exc", "exceptions:\n  - check: network.port_state\n    subject: mlx5_3/1\n"
                                                     "    reason: rail 3 cabled next week\n"),
                              nvml=False, extra=["--no-nvml"])
    if rep is None:
        fail("exceptions/network-port", "no report: " + err)
    else:
        expect_status("exceptions/network-port", rep, "network.port_state", "pass", subject="mlx5_3/1",
                      summary_re=r"allowed by site policy \(rail 3 cabled next week\)")

    # exceptions
    for name, text, check, want, summary in (
            ("width-allowed", "exceptions:\n  - check: pcie.link_width\n    subject: 61:00.0\n    width: 8\n"
                              "    reason: riser wired x8\n", "pcie.link_width", "pass", r"allowed by site policy: riser wired x8"),
            ("width-narrower-still-fails", "exceptions:\n  - check: pcie.link_width\n    subject: 61:00.0\n    width: 16\n"
                                           "    reason: nothing\n", "pcie.link_width", "fail", r"lanes are missing"),
            ("gen-allowed", "exceptions:\n  - check: pcie.link_speed\n    subject: 0000:61:00.0\n    gen: 4\n"
                            "    reason: Gen4 riser\n", "pcie.link_speed", "pass", r"allowed by site policy: Gen4 riser"),
            ("plain", "exceptions:\n  - check: gpu.xid\n    subject: 0000:61:00.0\n    reason: known Xid 13 from a user job\n",
             "gpu.xid", "pass", r"allowed by site policy \(known Xid 13 from a user job\)")):
        rc, rep, err = check_json(degraded, policy("exc-" + name, text), nvml=False, extra=["--no-nvml"])
        if rep is None:
            fail("exceptions/" + name, "no report: " + err)
            continue
        expect_status("exceptions/" + name, rep, check, want, subject="0000:61:00.0", summary_re=summary)
        # Only the named subject: the other GPU's slow link is judged on its own (without
        # NVML, whether that GPU is idle is unknown: a pass that says so, not the policy's).
        if name == "gen-allowed":
            expect_status("exceptions/gen-other-gpu", rep, "pcie.link_speed", "pass", subject="0000:d1:00.0",
                          summary_re=r"below the .* its slot gives while the GPU is maybe idle")


# ---- 3. the golden node ---------------------------------------------------------------

def capture(root, scenario=HEALTHY_SCN):
    rc, out, err = run(["policy", "capture", "--root", root], scenario)
    if rc != 0:
        raise SystemExit("policy capture failed (%d): %s" % (rc, err))
    return out


def test_reference(tmp):
    root = fixture_cache.path("dgx-h100")
    text = capture(root)
    try:
        import yaml  # PyYAML: an independent reader of the same file
        doc = yaml.safe_load(text)
        if len(doc["reference"]["gpus"]) != 8 or doc["reference"]["gpus"][0]["inforom"] != "G520.0200.00.05":
            fail("reference/pyyaml", "unexpected content: %r" % doc["reference"]["gpus"][0])
        else:
            ok("reference/pyyaml")
    except ImportError:
        print("skip reference/pyyaml: PyYAML not installed")

    # Written to a file atomically with -o: same content.
    out_path = os.path.join(tmp, "captured.yaml")
    rc, _, err = run(["policy", "capture", "--root", root, "-o", out_path])
    if rc != 0 or not os.path.exists(out_path):
        fail("reference/output-file", "exit %d: %s" % (rc, err))
    else:
        ok("reference/output-file")

    base = write(os.path.join(tmp, "ref.yaml"), text)
    rc, rep, err = check_json(root, base)
    if rc != 0 or statuses(rep, "policy.reference") != ["pass"] or len(results(rep, "policy.reference")) != 9:
        fail("reference/self", "exit %d, %s" % (rc, [(c["subject"], c["status"], c["summary"]) for c in results(rep, "policy.reference")]))
    else:
        ok("reference/self")
    if rep and rep.get("policy") != base:
        fail("reference/json-policy-field", "report policy field %r" % rep.get("policy"))

    def drift(name, mutate, subject, summary_re, scenario=HEALTHY_SCN):
        t = mutate(text)
        if t == text:
            fail("drift/" + name, "mutation did not apply")
            return
        path = write(os.path.join(tmp, "drift-%s.yaml" % name), t)
        rc, rep, err = check_json(root, path, scenario=scenario)
        if rep is None:
            fail("drift/" + name, "no report: " + err)
            return
        if rc != 1:
            fail("drift/" + name + "/exit", "exit %d" % rc)
        expect_status("drift/" + name, rep, "policy.reference", "fail", subject=subject, summary_re=summary_re)

    gpus = re.findall(r'- bus_id: "(0000:[0-9a-f:.]+)"\n      device_id', text)
    drift("vbios", lambda t: t.replace('vbios: "96.00.74.00.1A"', 'vbios: "96.00.74.00.19"', 1), gpus[0],
          r"VBIOS 96.00.74.00.1A, the reference 96.00.74.00.19")
    # One GPU flashed differently from its seven siblings: the scenario changes GPU 0.
    flashed = scenario_with(tmp, "flashed", "vbios = 96.00.74.00.2B")
    drift("vbios-sibling", lambda t: t + "\n", gpus[0],
          r"VBIOS 96.00.74.00.2B, the reference 96.00.74.00.1A \(as on 7 other GPUs\)", scenario=flashed)
    drift("inforom", lambda t: t.replace('inforom: "G520.0200.00.05"', 'inforom: "G520.0200.00.04"', 1), gpus[0],
          r"InfoROM G520.0200.00.05, the reference G520.0200.00.04")
    drift("numa", lambda t: t.replace("numa_node: 0", "numa_node: 1", 1), gpus[0], r"on NUMA node 0, the reference 1")
    drift("model", lambda t: t.replace('device_id: "10de:2330"', 'device_id: "10de:2335"', 1), gpus[0],
          r"the reference has a .* \(10de:2335\)")
    drift("gpu-missing", lambda t: t.replace('"%s"' % gpus[-1], '"0000:ee:00.0"'), "0000:ee:00.0",
          r"the reference's NVIDIA H100 80GB HBM3 is missing from the PCI bus")
    drift("gpu-added", lambda t: t.replace('"%s"' % gpus[-1], '"0000:ee:00.0"'), gpus[-1], r"here but not in the reference")
    drift("nvlink", lambda t: t.replace("      - [X, 18,", "      - [X, 12,", 1).replace("      - [18, X,", "      - [12, X,", 1),
          "host", r"%s-%s: 18 NVLinks, the reference 12" % (gpus[0], gpus[1]))
    drift("nic-missing", lambda t: t.replace('- bus_id: "0000:1c:00.0"', '- bus_id: "0000:1d:00.0"'), "host",
          r"NIC 0000:1d:00.0 is missing")
    drift("driver", lambda t: t.replace('driver_version: "550.54.15"', 'driver_version: "550.54.14"'), "host",
          r"driver 550.54.15, the reference 550.54.14")

    def swap_path(t):
        # GPU0-GPU1 cross the root complex (NODE) in the fixture; the reference says they
        # shared a switch.
        rows = t.split("    pcie:")[1].split("\n")[1:3]
        new0 = rows[0].replace("[X, NODE,", "[X, PXB,", 1)
        new1 = rows[1].replace("[NODE, X,", "[PXB, X,", 1)
        return t.replace(rows[0], new0, 1).replace(rows[1], new1, 1)
    drift("pcie-path", swap_path, "host", r"%s-%s: NODE, the reference PXB" % (gpus[0], gpus[1]))

    # Without NVML the reference's NVLink/VBIOS cannot be compared: a pass that says so,
    # never a difference invented from a missing reading.
    rc, rep, err = check_json(root, base, nvml=False, extra=["--no-nvml"])
    host = results(rep, "policy.reference", "host")
    if statuses(rep, "policy.reference") != ["pass"] or "NVLink matrix" not in json.dumps(host):
        fail("reference/no-nvml", [(c["subject"], c["status"], c["summary"]) for c in results(rep, "policy.reference")])
    else:
        ok("reference/no-nvml")

    # No reference in the policy: skip, saying how to get one.
    rc, rep, err = check_json(root, write(os.path.join(tmp, "noref.yaml"), "policy: 1\n"))
    expect_status("reference/absent", rep, "policy.reference", "skip", summary_re=r"gpuvet policy capture")


# ---- 4. the default file --------------------------------------------------------------

def test_default_file(tmp):
    root = os.path.join(tmp, "root-with-policy")
    fixture_cache.writable("dgx-h100", root)
    os.makedirs(os.path.join(root, "etc", "gpuvet"), exist_ok=True)
    write(os.path.join(root, "etc", "gpuvet", "policy.yaml"), "policy: 1\nexpect:\n  gpu_count: 4\n")
    rc, rep, err = check_json(root, None)
    if rep is None:
        fail("default/read", err)
    else:
        expect_status("default/read", rep, "policy.expect", "fail", summary_re=r"expects 4")
        if rep.get("policy") != root + "/etc/gpuvet/policy.yaml":
            fail("default/named", "policy field %r" % rep.get("policy"))
    rc, rep, err = check_json(root, None, extra=["--no-policy"])
    expect_status("default/no-policy", rep, "policy.expect", "skip")
    # A bad default file stops the check too, and says how to go on without it.
    write(os.path.join(root, "etc", "gpuvet", "policy.yaml"), "policy: 1\nexpect: [\n")
    rc, out, err = run(["check", "--root", root])
    if rc != 2 or "--no-policy" not in err or root + "/etc/gpuvet/policy.yaml:" not in err:
        fail("default/bad", "exit %d, stderr %r" % (rc, err))
    else:
        ok("default/bad")


def main():
    fixture_cache.ensure("dgx-h100", "dgx-h100-degraded", "dgx-h100-ib-faults")
    with fixture_cache.scratch() as tmp:
        test_bad_files(tmp)
        test_keys(tmp)
        test_reference(tmp)
        test_default_file(tmp)
    if failures:
        print("%d failed: %s" % (len(failures), ", ".join(failures)))
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

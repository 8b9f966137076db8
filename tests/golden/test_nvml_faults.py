#!/usr/bin/env python3
"""The NVML fault matrix (issue 3): every NVML function gpuvet calls, failing with each
error that matters, must give the documented status (docs/checks/gpu.md, "Checks through
NVML") and never crash.

    test_nvml_faults.py GPUVET FAKE_LIB [--subset] [--jobs N] [-v]

The functions come from src/bindings/nvml_functions.def (parsed, so a function added there
is tested without editing this file). For each function FN and each error X of ERRORS a
scenario is written into a temp dir:

    include tests/golden/nvml-scenarios/golden-dgx-h100.scn
    fault FN * NVML_ERROR_X always

and `gpuvet check --level quick --root <dgx-h100 fixture> --json OUT --quiet` runs with the
fake library (tests/fakes) playing it. NVML_ERROR_TIMEOUT here is the return code, not a
hang. Every run must:

- exit 0 or 1 (never a signal, never 3 or 2);
- print no sanitizer report;
- write a complete JSON report (schema, every result with id/status/summary, skip and
  error summaries non-empty, the same checks as the healthy run);
- give the documented status for every result whose evidence.source names FN:
  GPU_IS_LOST -> fail, or a skip "see gpu.nvml" while gpu.nvml fails for the lost GPU (one
  cause, one failure); NOT_SUPPORTED, DEPRECATED, FUNCTION_NOT_FOUND (what this driver
  does not offer) -> a skip that says which (or what TOLERATED documents); any other
  error -> error naming the code (never pass). gpu.nvml fails whenever nvmlInit_v2 does,
  with its own message for DRIVER_NOT_LOADED and NO_PERMISSION, and the other NVML checks
  skip;
- for a function a check documents by name (FN appears in docs/checks/gpu.md), GPU_IS_LOST
  must show in at least one result naming FN: a check that silently judges without a value
  it documents would pass here.

Then one run with the library missing (GPUVET_NVML_LIB=/nonexistent/...), and one `hang FN
*` per function `check` calls (those the fake logs while check runs on the base, MIG and
NVLink-counting scenarios; --nvml-call-timeout-ms and --nvml-init-timeout-ms 200): it must
end within HANG_MAX_S, name FN (and the GPU) in an error result and exit 1.

Meson runs the whole matrix in every build, ASan+UBSan included (~30 s plain, ~70 s under
ASan on 2 cores). --subset, for a quicker manual run: every error for the functions a check
documents and the system calls, GPU_IS_LOST and UNKNOWN for the others, all hang rows.
Exit 0 when every combination holds, 1 otherwise (each miss printed)."""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakes"))
import fakeenv  # noqa: E402  (time_scale)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import fixture_cache  # noqa: E402  (the shared fixture trees)

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, "..", ".."))
FUNCTIONS_DEF = os.path.join(SRC, "src", "bindings", "nvml_functions.def")
FACTS_C = os.path.join(SRC, "src", "bindings", "nvml_facts.c")
GPU_DOC = os.path.join(SRC, "docs", "checks", "gpu.md")
BASE_SCN = os.path.join(HERE, "nvml-scenarios", "golden-dgx-h100.scn")
PCI_IDS = os.path.join(SRC, "tests", "fixtures", "pci.ids")

ERRORS = ["NOT_SUPPORTED", "DEPRECATED", "FUNCTION_NOT_FOUND", "NO_PERMISSION", "GPU_IS_LOST", "UNKNOWN", "TIMEOUT",
          "DRIVER_NOT_LOADED"]
# "This driver does not offer it": the GPU or driver lacks the feature (NOT_SUPPORTED), a newer
# driver withdrew it (DEPRECATED: R590 and later for the applications clocks), or the
# library's entry point answers that it has no implementation (FUNCTION_NOT_FOUND). Never a
# GPU fault: each is judged as NOT_SUPPORTED is (a skip that says why, or what TOLERATED
# allows).
NOT_OFFERED = {"NOT_SUPPORTED": "not supported", "DEPRECATED": "deprecated",
               "FUNCTION_NOT_FOUND": "not implemented"}
SANITIZER_MARKS = ("AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer", "runtime error:")
# Scaled on a slow or busy machine: a healthy call must never look hung (docs/testing.md).
HANG_MS = int(200 * fakeenv.time_scale())
HANG_MAX_S = 5.0 * fakeenv.time_scale()

# (check, FN, error) -> statuses allowed besides the rule (error None: any error), each
# with the sentence of docs/checks/gpu.md that allows it.
TOLERATED = {
    # gpu.memory_health: "Ampere and newer remap rows ...; older GPUs retire pages ...
    # Whichever the GPU supports is judged": an H100 is judged by its remapped rows.
    ("gpu.memory_health", "nvmlDeviceGetRetiredPages", None): {"pass", "warn"},
    ("gpu.memory_health", "nvmlDeviceGetRetiredPagesPendingStatus", None): {"pass", "warn"},
    # gpu.nvlink: "fail: ... an SXM board that gpuvet's table lists with NVLinks reports
    # none": link 0 not supported is "no NVLink" on an H100 SXM, which has 18.
    # Where the driver answers each link's state in nvmlDeviceGetFieldValues (Hopper),
    # nvmlDeviceGetNvLinkState is asked only past the last link, where NOT_SUPPORTED is
    # the walk's normal end: the 18 links then pass.
    ("gpu.nvlink", "nvmlDeviceGetNvLinkState", "NOT_SUPPORTED"): {"fail", "pass"},
    # gpu.inforom: a firmware version the board does not give is left out of the
    # comparison; the InfoROM's own validity is still judged.
    ("gpu.inforom", "nvmlDeviceGetVbiosVersion", "NOT_SUPPORTED"): {"pass", "warn"},
    ("gpu.inforom", "nvmlDeviceGetInforomImageVersion", "NOT_SUPPORTED"): {"pass", "warn"},
    # gpu.nvlink: counters "not supported" are left out, the links still judged.
    ("gpu.nvlink", "nvmlDeviceGetNvLinkErrorCounter", "NOT_SUPPORTED"): {"pass", "warn", "fail"},
    # gpu.pcie_nvml: a replay counter "not supported" leaves the link judged ("replays
    # unknown").
    ("gpu.pcie_nvml", "nvmlDeviceGetPcieReplayCounter", "NOT_SUPPORTED"): {"pass", "warn", "fail"},
}

# Functions docs/checks/gpu.md names that no result on the healthy H100 base names when they
# fail, and what must hold instead (checked in fault_problems).
NOT_NAMED = {
    # "the enforced power limit (nvmlDeviceGetEnforcedPowerLimit, else the management limit)"
    "nvmlDeviceGetEnforcedPowerLimit": "gpu.power_limit falls back to nvmlDeviceGetPowerManagementLimit",
    # "observed gives min, default and max (nvmlDeviceGetPowerManagementLimitConstraints)"
    "nvmlDeviceGetPowerManagementLimitConstraints": "gpu.power_limit's observed lacks min and max",
    # H100s remap rows: page retirement is judged only on GPUs without remapping.
    "nvmlDeviceGetRetiredPages": "gpu.memory_health judges the remapped rows",
    "nvmlDeviceGetRetiredPagesPendingStatus": "gpu.memory_health judges the remapped rows",
}

# Read only on a GPU with MIG enabled: these run on the MIG scenario (MIG on GPU 0).
MIG_BASE_SCN = os.path.join(HERE, "nvml-scenarios", "golden-mig-enabled.scn")
MIG_FNS = {"nvmlDeviceGetMigDeviceHandleByIndex"}

# Asked only when an error counter's total over the links is not 0 (on a healthy board the
# totals answer for every link): these run on a scenario whose links count replays.
NVLINK_COUNTING_SCN = os.path.join(HERE, "nvml-scenarios", "golden-dgx-h100-nvlink-counting.scn")
NVLINK_COUNTING_FNS = {"nvmlDeviceGetNvLinkErrorCounter"}
NO_NVLINK_FIELDS_SCN = os.path.join(HERE, "nvml-scenarios", "golden-dgx-h100-no-nvlink-fields.scn")

# Facts nvmlDeviceGetFieldValues answers in place of these functions' calls where the driver
# has the fields (ECC totals and DRAM counts, retired pages, remapped rows, PCIe replays,
# power limits). The fake answers those fields from the same values, with a fault on the
# function as the field's own error (gpuvet then asks the function, which fails alike: the
# fault rows run on the base scenario) and a hang on it as a hang of the field call (which
# the nvmlDeviceGetFieldValues row covers). Their hang rows run where gpuvet makes the calls
# themselves: on a driver without the fields.
FIELD_BACKED_FNS = {"nvmlDeviceGetTotalEccErrors", "nvmlDeviceGetMemoryErrorCounter", "nvmlDeviceGetRetiredPages",
                    "nvmlDeviceGetRetiredPagesPendingStatus", "nvmlDeviceGetRemappedRows",
                    "nvmlDeviceGetPcieReplayCounter", "nvmlDeviceGetPowerManagementDefaultLimit",
                    "nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetPowerManagementLimitConstraints"}
NO_HEALTH_FIELDS_SCN = os.path.join(HERE, "nvml-scenarios", "golden-dgx-h100-no-health-fields.scn")


def base_scenario(fn, kind):
    """The scenario a fault ("fault") or hang ("hang") row of fn includes."""
    if fn in MIG_FNS:
        return MIG_BASE_SCN
    if fn in NVLINK_COUNTING_FNS:
        return NVLINK_COUNTING_SCN
    if kind == "hang" and fn in FIELD_BACKED_FNS:
        return NO_HEALTH_FIELDS_SCN
    return BASE_SCN

# Functions gather reads only when another one is missing from the library (the fake
# exports both): the older name of the clock event reasons, memory info v1 (read when v2
# is missing or refuses) and fabric info v1 (read when the versioned call is missing or
# knows no v3). No hang row for those.
FALLBACK_ONLY = {"nvmlDeviceGetCurrentClocksThrottleReasons", "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetGpuFabricInfo"}

# System-level calls: no GPU to name; a hang there is reported on the host.
SYSTEM_FNS = {"nvmlInit_v2", "nvmlSystemGetDriverVersion", "nvmlSystemGetNVMLVersion",
              "nvmlSystemGetCudaDriverVersion_v2", "nvmlDeviceGetCount_v2"}
# A result about one GPU has its PCI address as its subject, or "nvml:N" when NVML could
# not tell the address.
GPU_SUBJECT = re.compile(r"^([0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]|nvml:[0-9]+)$")

NVML_CHECKS = ["gpu.nvml", "gpu.driver_compat", "gpu.persistence_mode", "gpu.ecc_mode", "gpu.ecc_errors",
               "gpu.memory_health", "gpu.temperature", "gpu.clock_events", "gpu.pcie_nvml", "gpu.nvlink",
               "gpu.fabric_manager", "gpu.power_limit", "gpu.app_clocks", "gpu.mig"]


def parse_functions():
    with open(FUNCTIONS_DEF) as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    fns = re.findall(r"NVML_FN\(\s*[01]\s*,\s*(\w+)\s*,", text)
    if len(fns) < 10:
        raise SystemExit("test_nvml_faults.py: found only %d functions in %s" % (len(fns), FUNCTIONS_DEF))
    return fns


def called_functions():
    """What nvml_facts.c can call (info and topo read every group): NVCALL()ed there, plus
    init and shutdown."""
    with open(FACTS_C) as f:
        text = f.read()
    called = set(re.findall(r"NVCALL(?:_MS)?\(\s*c\s*,\s*(?:\w+\s*,\s*)?(nvml\w+)", text))
    called |= set(re.findall(r"\"(nvml(?:Init_v2|Shutdown))\"", text))
    return called - FALLBACK_ONLY


def check_called_functions(gpuvet, root, lib, tmp):
    """What `check` calls: the functions the fake logs (FAKE_NVML_CALL_LOG) while check runs
    on the base scenario and on those some functions need (MIG on, links counting errors, a
    driver without the health fields), less the fallbacks. A function nvml_facts.c could
    call but check does not read (a group no check judges) gets no hang row."""
    called = set()
    for i, scn in enumerate((BASE_SCN, MIG_BASE_SCN, NVLINK_COUNTING_SCN, NO_HEALTH_FIELDS_SCN)):
        log = os.path.join(tmp, "calls-%d.log" % i)
        run_gpuvet(gpuvet, root, lib, scn, os.path.join(tmp, "calls-%d.json" % i), env_extra={"FAKE_NVML_CALL_LOG": log})
        with open(log) as f:
            called |= {line.split()[0] for line in f if line.strip()}
    return called - FALLBACK_ONLY


def documented_functions():
    with open(GPU_DOC) as f:
        text = f.read()
    start = text.find("## Checks through NVML")
    return set(re.findall(r"`(nvml\w+)`", text[start:]))


def sources(result):
    src = (result.get("evidence") or {}).get("source") or ""
    return {s.strip() for s in str(src).split(",") if s.strip()}


def run_gpuvet(gpuvet, root, lib, scenario, out, extra=(), timeout=60, env_extra=None):
    env = dict(os.environ, GPUVET_PCI_IDS=PCI_IDS, GPUVET_NVML_LIB=lib, **(env_extra or {}))
    if scenario:
        env["FAKE_NVML_SCENARIO"] = scenario
    cmd = [gpuvet, "check", "--level", "quick", "--root", root, "--json", out, "--quiet"] + list(extra)
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                              env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", time.monotonic() - start, None
    wall = time.monotonic() - start
    report = None
    try:
        with open(out) as f:
            report = json.load(f)
    except (OSError, ValueError):
        pass
    return proc.returncode, proc.stdout + proc.stderr, wall, report


def basic_problems(rc, output, report, healthy_ids):
    """Crash, sanitizer report, incomplete JSON."""
    bad = []
    if rc is None:
        return ["did not finish within its timeout"]
    if rc < 0:
        bad.append("killed by signal %d" % -rc)
    elif rc not in (0, 1):
        bad.append("exit code %d" % rc)
    for mark in SANITIZER_MARKS:
        if mark in output:
            bad.append("sanitizer report (%s):\n%s" % (mark, output[-3000:]))
            break
    if report is None:
        bad.append("no readable JSON report")
        return bad
    if report.get("schema") != "gpuvet.report/1":
        bad.append("schema %r" % report.get("schema"))
    checks = report.get("checks")
    if not isinstance(checks, list) or not checks:
        bad.append("no results")
        return bad
    for r in checks:
        if not r.get("id") or r.get("status") not in ("pass", "warn", "fail", "skip", "error") or \
                not isinstance(r.get("summary"), str):
            bad.append("incomplete result %s" % json.dumps(r)[:300])
        elif r["status"] in ("skip", "error") and not r["summary"].strip():
            bad.append("%s %s %s with an empty summary" % (r["id"], r.get("subject"), r["status"]))
    missing = healthy_ids - {r.get("id") for r in checks}
    if missing:
        bad.append("checks missing from the report: %s" % ", ".join(sorted(missing)))
    verdict = report.get("summary", {}).get("verdict")
    if rc in (0, 1) and rc != (1 if verdict == "fail" else 0):
        bad.append("exit code %d but verdict %s" % (rc, verdict))
    return bad


def fault_problems(fn, err, report):
    """The documented status for each result naming fn. Returns (problems, n results judged)."""
    bad = []
    code = "NVML_ERROR_" + err
    checks = report["checks"]
    byid = {}
    for r in checks:
        byid.setdefault(r["id"], []).append(r)
    judged = 0

    if fn == "nvmlInit_v2":
        nv = byid.get("gpu.nvml", [])
        if len(nv) != 1 or nv[0]["status"] != "fail":
            bad.append("gpu.nvml is %s, want one fail" % [r["status"] for r in nv])
        else:
            s = nv[0]["summary"]
            if err == "DRIVER_NOT_LOADED":
                want = "the nvidia kernel module is not loaded"
            elif err == "NO_PERMISSION":
                want = "may not open the GPU device files"
            else:
                want = code
            if want not in s:
                bad.append("gpu.nvml summary %r does not say %r" % (s, want))
        for cid in NVML_CHECKS[1:]:
            for r in byid.get(cid, []):
                if cid == "gpu.fabric_manager" and r.get("subject") == "host":
                    continue  # whether nv-fabricmanager runs is read from /proc, not NVML
                if r["status"] != "skip" or "NVML unavailable" not in r["summary"]:
                    bad.append("%s %s is %s (%r), want skip \"NVML unavailable\"" %
                               (cid, r.get("subject"), r["status"], r["summary"]))
        return bad, 1 + sum(len(byid.get(c, [])) for c in NVML_CHECKS[1:])

    for r in checks:
        if fn not in sources(r):
            continue
        judged += 1
        st, summary = r["status"], r["summary"]
        ev = r.get("evidence") or {}
        where = "%s %s" % (r["id"], r.get("subject"))
        tolerated = TOLERATED.get((r["id"], fn, err), set()) | TOLERATED.get((r["id"], fn, None), set())
        if r["id"] == "gpu.nvml" and fn == "nvmlDeviceGetCount_v2":
            # No count, no GPU read: never a skip (the node would pass); lost -> fail.
            want = "fail" if err == "GPU_IS_LOST" else "error"
            if st != want or code not in summary:
                bad.append("%s: %s %r, want %s naming %s" % (where, st, summary, want, code))
            continue
        if r["id"] == "gpu.nvml":
            # A GPU whose address NVML cannot read is not identified: fail, whatever the error.
            if st != "fail" or code not in summary:
                bad.append("%s: %s %r, want fail naming %s" % (where, st, summary, code))
            continue
        if err == "GPU_IS_LOST":
            # One cause, one failure: a skip pointing at gpu.nvml is right only when gpu.nvml
            # fails for the lost GPU; otherwise the check itself must fail.
            nv_fails = any(x["status"] == "fail" and "fallen off the bus" in x["summary"] or
                           x["status"] == "fail" and "GPU_IS_LOST" in x["summary"] for x in byid.get("gpu.nvml", []))
            if st == "skip" and "see gpu.nvml" in summary and "fallen off the bus" in summary:
                if not nv_fails:
                    bad.append("%s: skips for gpu.nvml, but gpu.nvml does not fail: %s" %
                               (where, [(x["status"], x["summary"]) for x in byid.get("gpu.nvml", [])]))
            elif st != "fail" or "fallen off the bus" not in summary:
                bad.append("%s: %s %r, want fail \"fallen off the bus\" (or a skip naming gpu.nvml)" %
                           (where, st, summary))
        elif err in NOT_OFFERED:
            tolerated |= TOLERATED.get((r["id"], fn, "NOT_SUPPORTED"), set())
            if st == "skip":
                if NOT_OFFERED[err] not in summary:
                    bad.append("%s: skip %r does not say \"%s\"" % (where, summary, NOT_OFFERED[err]))
            elif st not in tolerated:
                bad.append("%s: %s %r, want skip (%s)" % (where, st, summary, NOT_OFFERED[err]))
        else:
            if st == "error":
                if code not in summary and ev.get("nvml_return") != code:
                    bad.append("%s: error %r does not name %s" % (where, summary, code))
            elif st not in tolerated or st == "pass" and ev.get("nvml_return"):
                bad.append("%s: %s %r, want error naming %s" % (where, st, summary, code))
    if fn in NOT_NAMED:
        for r in byid.get("gpu.power_limit", []):
            src, obs = sources(r), r.get("observed") or ""
            if fn == "nvmlDeviceGetEnforcedPowerLimit" and "nvmlDeviceGetPowerManagementLimit" not in src:
                bad.append("gpu.power_limit %s: source %r, want the fallback nvmlDeviceGetPowerManagementLimit" %
                           (r.get("subject"), sorted(src)))
            if fn == "nvmlDeviceGetPowerManagementLimitConstraints" and "min" in obs:
                bad.append("gpu.power_limit %s: observed %r gives min/max without the constraints" %
                           (r.get("subject"), obs))
        for r in byid.get("gpu.memory_health", []) if "RetiredPages" in fn else []:
            if "nvmlDeviceGetRemappedRows" not in sources(r):
                bad.append("gpu.memory_health %s: source %r, want nvmlDeviceGetRemappedRows" %
                           (r.get("subject"), sorted(sources(r))))
    return bad, judged


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("gpuvet")
    ap.add_argument("fake_lib")
    ap.add_argument("--subset", action="store_true", help="the smaller matrix (for ASan builds)")
    ap.add_argument("--jobs", type=int, default=max(2, min(4, os.cpu_count() or 2)))
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    gpuvet = os.path.abspath(args.gpuvet)
    lib = os.path.abspath(args.fake_lib)

    fns = parse_functions()
    documented = documented_functions()

    t0 = time.monotonic()
    failures = []
    counts = {"fault": 0, "missing": 0, "hang": 0, "judged": 0}
    no_effect = []
    with tempfile.TemporaryDirectory(prefix="gpuvet-faults-") as tmp:
        root = fixture_cache.path("dgx-h100")

        # The healthy run: which checks report, as the reference for completeness.
        rc, output, _, report = run_gpuvet(gpuvet, root, lib, BASE_SCN, os.path.join(tmp, "healthy.json"))
        if rc not in (0, 1) or report is None:
            print("FAIL the healthy run: exit %s, report %s\n%s" % (rc, "ok" if report else "missing", output))
            return 1
        healthy_ids = {r["id"] for r in report["checks"]}
        healthy_bad = basic_problems(rc, output, report, healthy_ids)
        if healthy_bad:
            print("FAIL the healthy run: %s" % "; ".join(healthy_bad))
            return 1
        called = check_called_functions(gpuvet, root, lib, tmp)
        unknown_called = called - set(fns)
        if unknown_called:
            print("FAIL check calls functions not in nvml_functions.def: %s" % ", ".join(sorted(unknown_called)))
            return 1
        # The same board on a driver without the NVLink fields: the per-link walk must see
        # what the fields saw.
        _, _, _, walked = run_gpuvet(gpuvet, root, lib, NO_NVLINK_FIELDS_SCN, os.path.join(tmp, "walked.json"))

        def verdicts(rep):
            return [(r["id"], r.get("subject"), r["status"], r["summary"]) for r in rep["checks"]] if rep else None
        if verdicts(walked) != verdicts(report):
            print("FAIL the healthy run without NVLink fields differs from the one with them")
            return 1
        # Without the health fields every fact is asked with its own call: the whole report
        # (observed, evidence and all) must be the same as with them.
        _, _, _, called_each = run_gpuvet(gpuvet, root, lib, NO_HEALTH_FIELDS_SCN, os.path.join(tmp, "each.json"))

        def results(rep):
            return [{k: v for k, v in r.items() if k != "duration_ms"} for r in rep["checks"]] if rep else None
        if results(called_each) != results(report):
            diff = [(a, b) for a, b in zip(results(called_each) or [], results(report)) if a != b]
            print("FAIL the healthy run without the health fields differs from the one with them: %s" % diff[:2])
            return 1

        jobs = []
        for fn in fns:
            errs = ERRORS
            if args.subset and fn not in documented and fn not in SYSTEM_FNS:
                errs = ["GPU_IS_LOST", "UNKNOWN"]
            for err in errs:
                jobs.append(("fault", fn, err))
        jobs.append(("missing", None, None))
        for fn in fns:
            if fn in called:
                jobs.append(("hang", fn, None))

        def one(job):
            kind, fn, err = job
            name = "%s-%s-%s" % (kind, fn or "lib", err or "")
            out = os.path.join(tmp, name + ".json")
            scn = os.path.join(tmp, name + ".scn")
            if kind == "missing":
                rc, output, wall, report = run_gpuvet(gpuvet, root, "/nonexistent/libnvidia-ml.so.1", None, out)
                return job, rc, output, wall, report
            with open(scn, "w") as f:
                f.write("include %s\n" % base_scenario(fn, kind))
                if kind == "fault":
                    f.write("fault %s * NVML_ERROR_%s always\n" % (fn, err))
                else:
                    f.write("hang %s * always\n" % fn)
            # nvmlInit_v2 has a deadline of its own (it wakes every GPU without persistence
            # mode): set it as short as the call deadline for the hang rows.
            extra = (["--nvml-call-timeout-ms", str(HANG_MS), "--nvml-init-timeout-ms", str(HANG_MS)]
                     if kind == "hang" else [])
            rc, output, wall, report = run_gpuvet(gpuvet, root, lib, scn, out, extra)
            return job, rc, output, wall, report

        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for job, rc, output, wall, report in pool.map(one, jobs):
                kind, fn, err = job
                label = "%s %s %s" % (kind, fn or "(library missing)", err or "")
                counts[kind] += 1
                bad = basic_problems(rc, output, report, healthy_ids)
                if not bad and kind == "fault":
                    more, judged = fault_problems(fn, err, report)
                    bad += more
                    counts["judged"] += judged
                    if judged == 0 and err == "GPU_IS_LOST":
                        if fn in documented and fn in called and fn not in NOT_NAMED:
                            bad.append("no result names %s although docs/checks/gpu.md documents it" % fn)
                        no_effect.append(fn)
                elif not bad and kind == "missing":
                    nv = [r for r in report["checks"] if r["id"] == "gpu.nvml"]
                    if len(nv) != 1 or nv[0]["status"] != "fail" or "not found" not in nv[0]["summary"]:
                        bad.append("gpu.nvml is %s, want fail \"libnvidia-ml.so.1 not found\"" %
                                   [(r["status"], r["summary"]) for r in nv])
                    for r in report["checks"]:
                        if r["id"] == "gpu.fabric_manager" and r.get("subject") == "host":
                            continue  # whether nv-fabricmanager runs is read from /proc, not NVML
                        if r["id"] in NVML_CHECKS[1:] and r["status"] != "skip":
                            bad.append("%s %s is %s, want skip" % (r["id"], r.get("subject"), r["status"]))
                    if rc != 1:
                        bad.append("exit code %d, want 1" % rc)
                elif not bad and kind == "hang":
                    limit = HANG_MAX_S
                    if wall > limit:
                        bad.append("took %.1f s, more than %.1f s" % (wall, limit))
                    if fn == "nvmlShutdown":
                        # Shutdown runs after the report is judged: nothing to name, only
                        # the exit on time (the healthy verdict's code).
                        if rc != 0:
                            bad.append("exit code %d, want 0 (a hang in nvmlShutdown changes no result)" % rc)
                    else:
                        named = [r for r in report["checks"]
                                 if r["status"] == "error" and fn in r["summary"] and "did not return" in r["summary"]]
                        if not named:
                            bad.append("no error result says \"%s did not return\"" % fn)
                        elif fn not in SYSTEM_FNS and not any(GPU_SUBJECT.match(r["subject"]) for r in named):
                            # The GPU is the result's subject (its address, else "nvml:N"),
                            # which the text prints beside the summary: the summary says it no
                            # more ("0000:52:00.0 NVIDIA H100 0000:52:00.0 ...", ux-review).
                            bad.append("the error results naming %s do not name the GPU: %r" %
                                       (fn, [(r["subject"], r["summary"]) for r in named[:1]]))
                        if rc != 1:
                            bad.append("exit code %d, want 1" % rc)
                if bad:
                    failures.append(label)
                    print("FAIL %s (exit %s, %.2f s):\n  %s" % (label, rc, wall, "\n  ".join(bad)))
                elif args.verbose:
                    print("ok   %s (%.2f s)" % (label, wall))

    total = counts["fault"] + counts["missing"] + counts["hang"]
    print("%d combinations in %.1f s: %d faults (%d functions x up to %d errors%s), 1 library missing, "
          "%d hangs; %d results naming the faulted function judged" %
          (total, time.monotonic() - t0, counts["fault"], len(fns), len(ERRORS), ", subset" if args.subset else "",
           counts["hang"], counts["judged"]))
    if no_effect:
        print("no check names these functions (their facts are read but judged by no check, or not read "
              "by `check`): %s" % ", ".join(sorted(set(no_effect))))
    if failures:
        print("%d of %d combinations FAILED" % (len(failures), total))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The metrics registry is reachable from query and from the JSON (suite 'golden').

Usage: test_metrics.py GPUVET SRC_ROOT FAKE_LIB

`gpuvet query --help-metrics` lists the registry. For every row:
1. each of its nvidia-smi names is a --query-gpu field (--help-query-gpu lists it); a row
   --query-gpu has no field for names where `nvidia-smi -q` shows it instead (its section and
   line, found in the real captures' -q output) or says why nvidia-smi shows it nowhere;
2. `gpuvet info --json` carries it by id: per GPU in `nvml.metrics`, the system's in
   `nvml.metrics` at the top, on the fake H100 and L40S scenarios;
3. the JSON value and query's cell are the same reading (bytes vs MiB, watts vs "W",
   hertz vs MHz, seconds vs us, booleans vs Enabled/Yes/Active), GPU by GPU;
and ids and dcgm-exporter names are unique, ids are Prometheus-style names, and
docs/metrics.md lists every id. The NVLink5 counters carry a B200's values (and null on an H100).
"""
import json
import os
import re
import subprocess
import sys

GPUVET, SRC_ROOT, FAKE_LIB = sys.argv[1:4]
FAKES = os.path.join(SRC_ROOT, "tests", "fakes")
REALDATA = os.path.join(SRC_ROOT, "tests", "realdata", "nvidia_gpu_exporter")
sys.path.insert(0, FAKES)
import fakeenv  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)
    return cond


def run(args, scenario=None):
    env = fakeenv.gpuvet_env(os.path.join(FAKES, "scenarios", scenario), {"GPUVET_NVML_LIB": FAKE_LIB}) \
        if scenario else None
    return subprocess.run([GPUVET] + args, env=env, capture_output=True, text=True, timeout=120)


def registry():
    r = run(["query", "--help-metrics"])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split("\t") == ["id", "type", "unit", "nvidia-smi", "nvidia-smi -q", "dcgm-exporter",
                                    "description"], lines[0]
    rows = []
    for line in lines[1:]:
        cells = line.split("\t")
        check(len(cells) == 7, "--help-metrics: not 7 cells: %r" % line)
        if len(cells) == 7:
            rows.append(dict(zip(["id", "type", "unit", "smi", "smi_q", "dcgm", "help"], cells),
                             smi_names=cells[3].split(" ") if cells[3] != "-" else []))
    return rows


def q_sections():
    """Every "Section > ... > Line" path of the `nvidia-smi -q` outputs in the real captures."""
    paths = set()
    for name in sorted(os.listdir(REALDATA)):
        if not name.endswith(".txt"):
            continue
        with open(os.path.join(REALDATA, name)) as f:
            text = f.read()
        for block in re.findall(r"^# \$ nvidia-smi -q\n(.*?)(?=^# )", text, re.M | re.S):
            stack = []
            for line in block.splitlines():
                m = re.match(r"^( +)(\S.*?)\s*(?::.*)?$", line)
                if not m or line.startswith("GPU "):
                    continue
                depth = len(m.group(1)) // 4
                stack = stack[:depth - 1] + [m.group(2)]
                paths.add(" > ".join(stack))
    return paths


def same(value, cell, row):
    """Whether the JSON value and query's (nounits) cell are one reading."""
    if value is None:
        return cell in ("[N/A]", "N/A") or cell.startswith("[")
    if row["id"] == "fabric_status":  # NVML's return code of the registration; query says it in words
        return cell == "N/A" or (cell == "Success") == (value == 0)
    if isinstance(value, bool):
        return cell in (("Enabled", "Yes", "Active") if value else ("Disabled", "No", "Not Active"))
    if isinstance(value, str):
        if re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", value):  # sysfs bus id
            return cell.lower().endswith(value[4:]) and int(cell.split(":")[0], 16) == int(value[:4], 16)
        return value == cell
    unit = row["unit"]
    if unit == "bytes":
        return int(cell) == value >> 20
    if unit == "hertz":
        return int(cell) == value // 1000000
    if unit == "seconds":  # query prints whole microseconds
        return abs(float(cell) - value * 1e6) < 1.0
    if unit == "watts":
        return abs(float(cell) - value) < 0.006
    if cell.startswith("0x"):
        return int(cell, 16) == value
    if re.fullmatch(r"P[0-9]+", cell):
        return int(cell[1:]) == value
    if cell == "Unknown":
        return True
    try:
        return float(cell) == value
    except ValueError:
        return False


def test_rows(rows):
    ids = [r["id"] for r in rows]
    check(len(set(ids)) == len(ids), "ids repeat: %s" % sorted(i for i in ids if ids.count(i) > 1))
    dcgm = [r["dcgm"] for r in rows if r["dcgm"] != "-"]
    check(len(set(dcgm)) == len(dcgm), "dcgm-exporter names repeat: %s" % sorted(d for d in dcgm if dcgm.count(d) > 1))
    for r in rows:
        check(re.fullmatch(r"[a-z][a-z0-9_]*", r["id"]) is not None, "%s: not a Prometheus-style name" % r["id"])
        check(r["type"] in ("gauge", "counter", "info", "state"), "%s: type %s" % (r["id"], r["type"]))
        check(r["dcgm"] == "-" or r["dcgm"].startswith("DCGM_FI_"), "%s: dcgm %s" % (r["id"], r["dcgm"]))
        if r["unit"] != "-":
            check(r["id"].endswith("_" + r["unit"]), "%s: the id does not end in its unit %s" % (r["id"], r["unit"]))
        # A row without a --query-gpu field is not reachable from query: it must say where
        # nvidia-smi shows it instead (a -q section, checked below) or why nowhere ("none: ...":
        # NVLink error counters are per link under `nvidia-smi nvlink -e`, the energy counter
        # is NVML's alone). Rows that have a field keep being checked against --help-query-gpu.
        if r["smi_names"]:
            check(r["smi_q"] == "-", "%s: a --query-gpu field and a -q section %r" % (r["id"], r["smi_q"]))
        else:
            check(r["smi_q"] != "-" and r["smi_q"] != "none: ",
                  "%s: no nvidia-smi name, and neither a -q section nor why none" % r["id"])
    help_fields = run(["query", "--help-query-gpu"]).stdout
    listed = set(re.findall(r'^"([^"]+)"', help_fields, re.M))
    for r in rows:
        for name in r["smi_names"]:
            check(name in listed, "%s: %s is not a --query-gpu field" % (r["id"], name))
    sections = q_sections()
    check(len(sections) > 100, "found only %d nvidia-smi -q lines in %s" % (len(sections), REALDATA))
    for r in rows:
        if r["smi_q"] != "-" and not r["smi_q"].startswith("none: "):
            check(r["smi_q"] in sections, "%s: %r is not a line of the captured nvidia-smi -q" % (r["id"], r["smi_q"]))
    with open(os.path.join(SRC_ROOT, "docs", "metrics.md")) as f:
        doc = f.read()
    for r in rows:
        check("`%s`" % r["id"] in doc, "docs/metrics.md lacks %s" % r["id"])
    print("ok: %d metrics, %d with a dcgm-exporter field" % (len(rows), len(dcgm)))


def test_json_matches_query(rows, scenario):
    r = run(["info", "--json"], scenario)
    check(r.returncode == 0, "%s: info --json exit %d %s" % (scenario, r.returncode, r.stderr))
    doc = json.loads(r.stdout)
    gpus = [g["nvml"] for g in doc["gpus"] if g.get("nvml")] + doc["nvml_only_gpus"]
    gpus.sort(key=lambda g: g["index"])
    check(gpus, "%s: info --json has no NVML GPU" % scenario)
    system = doc["nvml"]["metrics"]
    per_gpu = [r for r in rows if r["id"] not in system]
    check({r["id"] for r in rows} == set(system) | set(gpus[0]["metrics"]),
          "%s: JSON ids differ from the registry: %s" %
          (scenario, sorted({r["id"] for r in rows} ^ (set(system) | set(gpus[0]["metrics"])))))
    fields = [(row, name) for row in rows for name in row["smi_names"]]
    q = run(["query", "--query-gpu=" + ",".join(n for _, n in fields), "--format=csv,noheader,nounits"], scenario)
    check(q.returncode == 0, "%s: query exit %d %s" % (scenario, q.returncode, q.stderr))
    lines = q.stdout.splitlines()
    check(len(lines) == len(gpus), "%s: %d query rows, %d JSON GPUs" % (scenario, len(lines), len(gpus)))
    compared = 0
    for g, line in zip(gpus, lines):
        cells = [c.strip() for c in line.split(", ")]
        for (row, name), cell in zip(fields, cells):
            value = system[row["id"]] if row["id"] in system else g["metrics"].get(row["id"], "absent")
            check(value != "absent", "%s GPU %d: %s missing from the JSON" % (scenario, g["index"], row["id"]))
            check(same(value, cell, row), "%s GPU %d: %s JSON %r, query %s %r" %
                  (scenario, g["index"], row["id"], value, name, cell))
            compared += 1
    check(len(per_gpu) == len(gpus[0]["metrics"]), "%s: per-GPU metric count" % scenario)
    print("ok: %s: %d JSON values equal query's cells" % (scenario, compared))


def test_nvlink5():
    """Blackwell's NVLink5 counters (summed over the links) reach the JSON, and so the
    exporter, with the values NVML gave; before Blackwell NVML has none: null."""
    r = run(["info", "--json"], "b200-nvlink5-faults.scn")
    check(r.returncode == 0, "b200: info --json exit %d %s" % (r.returncode, r.stderr))
    doc = json.loads(r.stdout)
    gpus = sorted([g["nvml"] for g in doc["gpus"] if g.get("nvml")] + doc["nvml_only_gpus"], key=lambda g: g["index"])
    got = [(g["metrics"].get("nvlink5_symbol_errors_total"), g["metrics"].get("nvlink5_recovery_failed_total"))
           for g in gpus[:3]]
    check(got == [(0, 0), (12, 0), (0, 1)], "b200: NVLink5 symbol errors and failed recoveries of GPUs 0-2: %s" % got)
    r = run(["info", "--json"], "h100-sxm-8gpu.scn")
    doc = json.loads(r.stdout)
    g = ([g["nvml"] for g in doc["gpus"] if g.get("nvml")] + doc["nvml_only_gpus"])[0]["metrics"]
    check(g.get("nvlink5_symbol_errors_total", "absent") is None,
          "h100: no NVLink5 counters, null: %r" % g.get("nvlink5_symbol_errors_total", "absent"))
    print("ok: NVLink5 counters in the JSON")


def main():
    fakeenv.ensure_loadable()
    test_nvlink5()
    rows = registry()
    test_rows(rows)
    for scn in ("h100-sxm-8gpu.scn", "captured-l40s.scn", "thermal-slowdown.scn"):
        test_json_matches_query(rows, scn)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""`gpuvet fleet` over a small generated fleet made of real reports: the check report of the
8-GPU H100 fixture with the fake NVML (tests/golden/expected-nvml/h100-healthy.json) and the
degraded fixture's (expected/dgx-h100-degraded.json), and a bench memory report gpuvet writes
here on the fake CUDA driver with the dgx-h100 fixture's facts. Laid out as the Ansible play
fetches them (validation_results/<host>/gpuvet-check-quick.json), with:

- a failing node (the degraded fixture's report);
- a node whose GPU 2 triad is 20% below the fleet's median (must be an outlier, fail),
  one whose GPU 1 triad is 3% below (within tolerance: must not be), one 7% below (warn);
- a node with another driver and another VBIOS (drift);
- a bench report without a host (named by its directory);
- every kind of bad input: another schema version, a truncated file, a file that is not
  JSON, an unreadable file (as user 65534 when run as root), a directory with no report, a
  path that does not exist.

Asserts the JSON (gpuvet.fleet/1) field by field, the text's lines, the exit codes
(5: findings and skipped inputs; 2 with --strict; 2 when nothing could be read), --rules
and its refusals.

Usage: test_fleet.py GPUVET FAKE_LIBCUDA"""
import copy
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fakes"))
import fakeenv  # noqa: E402  (time_scale)
sys.path.insert(0, os.path.join(HERE, ".."))
from testlib import check, finish  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
import fixture_cache  # noqa: E402  (the shared fixture trees)

GPUVET, FAKE_CUDA = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TIMEOUT = 30 * fakeenv.time_scale()
NODES = ["node-%02d" % i for i in range(1, 9)]
FAILING, LOW, WITHIN, WARNING, ODD = "node-02", "node-03", "node-04", "node-06", "node-05"


def load(name):
    with open(os.path.join(HERE, name)) as f:
        return json.load(f)


def bench_report(tmp):
    """A real gpuvet.bench/2: memory on 8 fake GPUs with the dgx-h100 fixture's facts."""
    out = os.path.join(tmp, "bench-template.json")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_CUDA_")}
    env.update({"GPUVET_CUDA_LIB": FAKE_CUDA, "FAKE_CUDA_DEVICES": "8"})
    p = subprocess.run([GPUVET, "bench", "memory", "--json", out, "-q", "-n", "3", "-w", "1", "-s", "4M",
                        "--root", fixture_cache.path("dgx-h100")], env=env, capture_output=True, text=True,
                       timeout=TIMEOUT * 4)
    check(p.returncode in (0, 1) and os.path.exists(out),
          "bench memory on the fake CUDA writes its report (%d: %s)" % (p.returncode, p.stderr.strip()))
    with open(out) as f:
        doc = json.load(f)
    # The fake's figures are far below an H100's baselines (data/baselines.json), so bench
    # fails them; judged as a healthy node's would be, the fleet's nodes pass.
    for m in doc["measurements"]:
        m["status"] = "pass"
    doc["summary"]["verdict"] = "pass"
    return doc


def write(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)


def scale_triad(doc, gpu_index, factor):
    for m in doc["measurements"]:
        if m["name"] == "triad" and m["subject"].startswith("gpu%d " % gpu_index):
            m["stats"]["median"] *= factor


def make_fleet(tmp):
    # node-02's report (the degraded fixture, without NVML) tells no VBIOS or CUDA version.
    healthy = load("expected-nvml/h100-healthy.json")
    degraded = load("expected/dgx-h100-degraded.json")
    bench = bench_report(tmp)
    vr = os.path.join(tmp, "validation_results")
    for i, node in enumerate(NODES):
        doc = copy.deepcopy(degraded if node == FAILING else healthy)
        doc["host"]["hostname"] = node
        if node == ODD:
            for c in doc["checks"]:
                if c["id"] == "gpu.nvml":
                    c["evidence"]["driver_version"] = "535.161.08"
                if c["id"] == "gpu.inforom":
                    c["observed"] = c["observed"].replace("VBIOS 96.00.74.00.1A", "VBIOS 96.00.61.00.01")
        write(os.path.join(vr, node, "gpuvet-check-quick.json"), doc)
        b = copy.deepcopy(bench)
        b["host"]["hostname"] = node
        # A spread of 0.1% to 0.8% between nodes, as a quiet fleet shows.
        for m in b["measurements"]:
            if m.get("stats"):
                m["stats"]["median"] *= 1 + 0.001 * i
        if node == LOW:
            scale_triad(b, 2, 0.80)
        if node == WITHIN:
            scale_triad(b, 1, 0.97)
        if node == WARNING:
            scale_triad(b, 3, 0.93)
        write(os.path.join(vr, node, "gpuvet-bench.json"), b)
    # A bench report that carries no host: named by its directory.
    nohost = copy.deepcopy(bench)
    del nohost["host"]
    nohost["gpus"] = []
    write(os.path.join(vr, "node-09", "gpuvet-bench.json"), nohost)

    # Bad inputs.
    other = copy.deepcopy(healthy)
    other["schema"] = "gpuvet.report/2"
    write(os.path.join(vr, "node-10", "gpuvet-check-quick.json"), other)
    text = json.dumps(healthy, indent=2)
    os.makedirs(os.path.join(vr, "node-11"))
    with open(os.path.join(vr, "node-11", "gpuvet-check-quick.json"), "w") as f:
        f.write(text[:5000])
    os.makedirs(os.path.join(vr, "node-12"))
    with open(os.path.join(vr, "node-12", "gpuvet-check-quick.json"), "w") as f:
        f.write("Verdict: PASS — 106 pass, 0 warn, 0 fail, 36 skip, 0 error\n")
    os.makedirs(os.path.join(vr, "node-13"))
    locked = os.path.join(vr, "node-13", "gpuvet-check-quick.json")
    with open(locked, "w") as f:
        f.write(text)
    os.chmod(locked, 0)
    os.makedirs(os.path.join(tmp, "empty"))
    return vr, bench


def as_nobody():
    """The command prefix that drops root, so a mode of 000 stops reads; None when not needed."""
    if os.geteuid() != 0:
        return []
    for tool in (["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"], ["runuser", "-u", "nobody", "--"]):
        if shutil.which(tool[0]):
            return tool
    return None


def run(args, prefix=()):
    p = subprocess.run(list(prefix) + [GPUVET, "fleet"] + args, capture_output=True, text=True, timeout=TIMEOUT)
    if "Sanitizer" in p.stderr or "runtime error" in p.stderr:
        check(False, "no sanitizer report from fleet %s: %s" % (" ".join(args), p.stderr[:2000]))
    return p


def by(items, **want):
    return [x for x in items if all(x.get(k) == v for k, v in want.items())]


def check_json(doc, vr, tmp, nobody):
    check(doc["schema"] == "gpuvet.fleet/1" and doc["command"] == "fleet", "schema gpuvet.fleet/1, command fleet")
    names = [n["name"] for n in doc["nodes"]]
    check(names == NODES + ["node-09"], "nodes by name, node-09 from its directory: %s" % names)
    n9 = by(doc["nodes"], name="node-09")
    check(n9 and n9[0]["name_from"] == "directory", "node-09 named from validation_results/node-09/")
    check(by(doc["nodes"], name="node-01")[0]["name_from"] == "hostname", "node-01 named by host.hostname")
    failing = by(doc["nodes"], name=FAILING)[0]
    check(failing["verdict"] == "fail" and failing["verdict_document"] ==
          os.path.join(vr, FAILING, "gpuvet-check-quick.json"),
          "the failing node's verdict and the document that gave it: %s" % failing["verdict_document"])
    check(len(failing["documents"]) == 2, "each node lists its two documents")
    s = doc["summary"]
    check((s["pass"], s["warn"], s["fail"], s["error"]) == (8, 0, 1, 0),
          "node counts 8 pass, 1 fail: %s" % s)
    check(s["verdict"] == "fail" and s["nodes"] == 9 and s["skipped_inputs"] >= 5, "summary verdict and counts: %s" % s)

    width = by(doc["checks"], id="pcie.link_width")
    check(width and width[0]["fail"] == 1 and width[0]["nodes"] == 1 and width[0]["sample_nodes"] == [FAILING],
          "pcie.link_width fails on one node, named: %s" % width)
    counts = [c["nodes"] for c in doc["checks"]]
    check(counts == sorted(counts, reverse=True), "checks sorted by nodes affected")

    triad = by(doc["metrics"], metric="memory/triad", model="NVIDIA H100 80GB HBM3")
    check(len(triad) == 1 and triad[0]["n"] == 64, "memory/triad per GPU: 8 nodes x 8 GPUs = 64 figures: %s"
          % [(t["n"], t["model"]) for t in triad])
    nogpu = by(doc["metrics"], metric="memory/triad", model="(no GPU)")
    check(len(nogpu) == 1 and nogpu[0]["n"] == 8, "node-09's report names no GPU: its 8 figures apart")
    if triad:
        t = triad[0]
        check(t["min"] <= t["p10"] <= t["median"] <= t["p90"] <= t["max"] and t["stddev"] > 0 and
              t["direction"] == "higher", "triad's distribution is ordered, spread, higher is better")

    # The same figures read by Python's own JSON parser give the same statistics.
    figures = {}
    for node in NODES:
        with open(os.path.join(vr, node, "gpuvet-bench.json")) as f:
            for m in json.load(f)["measurements"]:
                figures.setdefault("%s/%s" % (m["bench"], m["name"]), []).append(m["stats"]["median"])
    for metric, values in sorted(figures.items()):
        got = by(doc["metrics"], metric=metric, model="NVIDIA H100 80GB HBM3")
        values.sort()
        q = statistics.quantiles(values, n=10, method="inclusive")
        want = {"n": len(values), "min": values[0], "max": values[-1], "median": statistics.median(values),
                "p10": q[0], "p90": q[-1], "mean": statistics.fmean(values), "stddev": statistics.stdev(values)}
        check(len(got) == 1 and all(abs(got[0][k] - v) <= 1e-6 * max(1, abs(v)) for k, v in want.items()),
              "%s: n, min, p10, median, p90, max, mean, stddev as Python computes them" % metric)

    low = by(doc["outliers"], node=LOW, metric="memory/triad")
    check(len(low) == 1 and low[0]["status"] == "fail" and low[0]["subject"].startswith("gpu2 ") and
          low[0]["rule"] == "variance" and -21 < low[0]["deviation_pct"] < -19,
          "%s GPU 2 triad 20%% below the median is a fail outlier: %s" % (LOW, low))
    check(not by(doc["outliers"], node=WITHIN), "%s GPU 1 triad 3%% below is within tolerance: not flagged" % WITHIN)
    warn = by(doc["outliers"], node=WARNING, metric="memory/triad")
    check(len(warn) == 1 and warn[0]["status"] == "warn", "%s GPU 3 triad 7%% below warns: %s" % (WARNING, warn))
    check(len(doc["outliers"]) == 2, "no other outlier: %s" % [(o["node"], o["metric"], o["subject"])
                                                               for o in doc["outliers"]])

    drv = by(doc["drift"], attribute="driver_version")
    check(drv and drv[0]["majority"] == "550.54.15" and drv[0]["odd"] == [{"node": ODD, "value": "535.161.08"}],
          "driver drift: majority 550.54.15, %s runs 535.161.08: %s" % (ODD, drv))
    vb = by(doc["drift"], attribute="vbios", model="NVIDIA H100 80GB HBM3")
    check(vb and vb[0]["majority"] == "96.00.74.00.1A" and vb[0]["odd"] == [{"node": ODD, "value": "96.00.61.00.01"}],
          "VBIOS drift per model: %s" % vb)
    kr = by(doc["drift"], attribute="kernel_release")
    check(kr and kr[0]["odd"] == [] and kr[0]["reporting_nodes"] == 8, "no kernel drift (node-09 tells none): %s" % kr)

    skipped = {x["path"]: x["reason"] for x in doc["inputs"]["skipped"]}
    want = {
        os.path.join(vr, "node-10", "gpuvet-check-quick.json"): "gpuvet.report/2",
        os.path.join(vr, "node-11", "gpuvet-check-quick.json"): "truncated JSON",
        os.path.join(vr, "node-12", "gpuvet-check-quick.json"): "not JSON",
        os.path.join(tmp, "empty"): "no *.json",
        os.path.join(tmp, "missing"): "No such file",
    }
    if nobody is not None:
        want[os.path.join(vr, "node-13", "gpuvet-check-quick.json")] = "Permission denied"
    for path, reason in want.items():
        check(reason in skipped.get(path, ""), "skipped %s: %s (%r)" % (path, reason, skipped.get(path)))


def check_text(out, vr):
    lines = out.splitlines()
    check(lines[0] == "gpuvet fleet: 17 documents from 9 nodes", "text header: %r" % lines[0])
    check("Nodes: 9 — 8 pass, 0 warn, 1 fail, 0 error" in lines, "text node counts")
    check("  ✗ %s  fail  (%s)" % (FAILING, os.path.join(vr, FAILING, "gpuvet-check-quick.json")) in lines,
          "text names the failing node and its document")
    check(any(x.startswith("  pcie.link_width: 1 node (1 fail, 0 warn, 0 error): %s" % FAILING) for x in lines),
          "text: pcie.link_width's line")
    check(any(x.startswith("  memory/triad [NVIDIA H100 80GB HBM3] GB/s n=64 ") for x in lines),
          "text: triad's distribution line")
    check(any(x.startswith("  ✗ %s gpu2 (" % LOW) and " memory/triad " in x and "% below the median" in x
              for x in lines), "text: the low node's outlier line")
    check(any(x.startswith("  drift driver_version: 7 of 8 nodes 550.54.15; odd: %s (535.161.08)" % ODD)
              for x in lines), "text: driver drift line")
    check(any(x.startswith("  drift vbios [NVIDIA H100 80GB HBM3]: 6 of 7 nodes 96.00.74.00.1A; odd: %s" % ODD)
              for x in lines), "text: VBIOS drift line")
    check(any(x.startswith("  %s: truncated JSON" % os.path.join(vr, "node-11", "gpuvet-check-quick.json"))
              for x in lines), "text: the truncated file among the skipped inputs")
    check(lines[-1].startswith("Verdict: ✗ FAIL — 9 nodes (1 not passing), 2 outliers, 2 drifting, "),
          "text verdict line: %r" % lines[-1])


def check_hostile(tmp, good):
    """Documents that must be refused at once, the others still read: brackets nested 100,000
    deep and a megabyte of them (jsmn walked the open brackets at each closing one: 36 s, and
    1 MB never finished; reliability review N4), and a file name and a schema string holding
    terminal escapes, which stderr and the text must show as \\xNN (N17)."""
    hostile = os.path.join(tmp, "hostile")
    os.makedirs(hostile)
    with open(os.path.join(hostile, "deep-100k.json"), "w") as f:
        f.write("[" * 100000 + "]" * 100000 + "\n")
    with open(os.path.join(hostile, "deep-1mb.json"), "w") as f:
        f.write('{"schema": "gpuvet.report/1", "x": ' + "[" * 500000 + "]" * 500000 + "}\n")
    escape = "\x1b]0;OWNED\x07\x1b[31mRED"
    with open(os.path.join(hostile, "title" + escape + ".json"), "w") as f:
        f.write("[]")
    with open(os.path.join(hostile, "schema.json"), "w") as f:
        f.write('{"schema": "x' + escape + '"}')
    args = [GPUVET, "fleet", good, hostile]
    started = time.monotonic()
    try:
        p = subprocess.run(args, capture_output=True, text=True, errors="replace", timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        check(False, "deeply nested documents are refused within %d s" % TIMEOUT)
        return
    took = time.monotonic() - started
    # Linear work takes well under a second; the bound leaves a loaded machine room.
    check(took < 10 * fakeenv.time_scale(), "deeply nested documents are refused at once (%.1f s)" % took)
    check(p.returncode == 4, "a passing report with skipped ones: exit 4 (%d: %s)" % (p.returncode, p.stderr[-600:]))
    for name in ("deep-100k.json", "deep-1mb.json"):
        check(any(line.startswith("gpuvet fleet: skipping ") and name in line and "nested deeper than 64 levels" in line
                  for line in p.stderr.splitlines()), "%s skipped for its nesting: %s" % (name, p.stderr[-600:]))
    check("Verdict: ✓ PASS" in p.stdout, "the other report is still read")
    for where, text in (("stderr", p.stderr), ("the text report", p.stdout)):
        raw = [c for c in text if ord(c) < 0x20 and c not in "\n" or 0x7f <= ord(c) < 0xa0]
        check(not raw, "%s holds no raw control character: %r" % (where, raw[:5]))
    check("title\\x1b]0;OWNED\\x07\\x1b[31mRED.json: " in p.stderr, "the file name's escapes written as \\xNN")
    check('schema "x\\x1b]0;OWNED\\x07\\x1b[31mRED" is not one' in p.stderr,
          "the schema's escapes written as \\xNN: %s" % p.stderr[-600:])


def check_own_aggregate(tmp, vr):
    """The README's command after the Ansible play: the play writes fleet-LEVEL.json (fleet's
    own --json) into validation_results/ beside the nodes' reports; fleet over that directory
    passes it by quietly instead of counting a skipped input (ux-review: exit 5 before)."""
    play = os.path.join(tmp, "play-results")
    os.makedirs(play)
    shutil.copytree(os.path.join(vr, "node-01"), os.path.join(play, "node-01"))
    agg = os.path.join(play, "fleet-quick.json")
    p = run([os.path.join(play, "node-01", "gpuvet-check-quick.json"), "--json", agg,
             "--html", os.path.join(play, "fleet-quick.html")])
    check(p.returncode == 0 and os.path.exists(agg), "the play's aggregate written (%d: %s)" % (p.returncode, p.stderr))
    p = run([play])
    check(p.returncode == 0 and "skipping" not in p.stderr,
          "fleet over the play's directory with its aggregate: exit 0, nothing skipped (%d: %s)" %
          (p.returncode, p.stderr.strip()))
    # A directory of aggregates alone reads nothing: exit 2, saying so.
    only = os.path.join(tmp, "aggregates-only")
    os.makedirs(only)
    shutil.copy(agg, only)
    p = run([only])
    check(p.returncode == 2 and "only fleet's own aggregates" in p.stderr,
          "a directory of aggregates alone: exit 2 saying so (%d: %s)" % (p.returncode, p.stderr.strip()))
    # Named on its own, it is not a node report: a skipped input that says what it is.
    p = run([os.path.join(play, "node-01", "gpuvet-check-quick.json"), agg])
    check(p.returncode == 4 and "fleet aggregate" in p.stderr and agg in p.stderr,
          "the aggregate named as an operand: skipped saying why (%d: %s)" % (p.returncode, p.stderr.strip()))


def check_slow_node(tmp, bench):
    """One node 30% slower in every figure is one finding, not a row per figure (ux-review
    papercut 11: 98 outlier lines and rows for one node): the text prints one line for it,
    the JSON keeps every figure in outliers[] and groups them in outlier_groups[], the page
    shows one finding with its figures folded."""
    root = os.path.join(tmp, "slow-fleet")
    for i, node in enumerate(NODES):
        b = copy.deepcopy(bench)
        b["host"]["hostname"] = node
        for m in b["measurements"]:
            if m.get("stats"):
                m["stats"]["median"] *= (1 + 0.001 * i) * (0.70 if node == LOW else 1)
        write(os.path.join(root, node, "gpuvet-bench.json"), b)
    page = os.path.join(tmp, "slow-fleet.html")
    agg = os.path.join(tmp, "slow-fleet.json")
    p = run([root, "--json", agg, "--html", page])
    if os.environ.get("FLEET_TEST_SHOW"):
        print(p.stdout)
    check(p.returncode == 1, "a slow node: findings, exit 1 (%d: %s)" % (p.returncode, p.stderr))
    with open(agg) as f:
        doc = json.load(f)
    outl = doc["outliers"]
    check(len(outl) > 8 and all(o["node"] == LOW for o in outl),
          "every figure of the slow node is an outlier, no other node's (%d)" % len(outl))
    groups = doc.get("outlier_groups", [])
    check(len(groups) == 1 and groups[0]["node"] == LOW and groups[0]["side"] == "below" and
          groups[0]["figures"] == len(outl) and sorted(groups[0]["outliers"]) == list(range(len(outl))) and
          groups[0]["status"] == "fail" and 29 < groups[0]["least_pct"] <= groups[0]["most_pct"] < 31 and
          outl[groups[0]["worst"]]["node"] == LOW,
          "one outlier group for the slow node holding every figure: %s" %
          [{k: v for k, v in g.items() if k != "outliers"} for g in groups])
    check(doc["summary"].get("outlier_groups") == 1 and doc["summary"]["outliers"] == len(outl),
          "summary: %d outliers in 1 group" % len(outl))
    lines = [x for x in p.stdout.splitlines() if x.startswith("  ✗ ") or x.startswith("  ⚠ ")]
    check(len(lines) == 1 and lines[0].startswith("  ✗ %s: %d figures " % (LOW, len(outl))) and
          "% below the median" in lines[0] and "worst: " in lines[0],
          "text: one outlier line for the slow node: %s" % lines[:3])
    with open(page, encoding="utf-8") as f:
        text = f.read()
    check(text.count('<div class="outlier-group"') == 1 and text.count("<tr data-outlier-status=") == len(outl),
          "HTML: one finding, its %d figures folded beneath it" % len(outl))
    # Each chart labels the slow node's marks with its GPU: its 8 GPUs' equal values are 8
    # labels told apart, not "node-03: 782" 8 times (ux-review papercut 11).
    charts = re.split(r'<div class="distribution" ', text)[1:]
    labelled = 0
    for chart in charts:
        labels = re.findall(r'class="outlier-label"[^>]*>([^<]*)<', chart)
        if labels:
            labelled += 1
            check(len(set(labels)) == len(labels) and all(re.match(LOW + r" gpu\d: ", x) for x in labels),
                  "chart labels name node and GPU, each once: %s" % labels[:8])
    check(labelled > 0, "the charts label the slow node's values (%d charts)" % labelled)
    # A table of contents links every chart.
    ids = re.findall(r'<div class="distribution" id="(figure-\d+)"', text)
    toc = re.findall(r'<nav class="toc" id="figures-toc">(.*?)</nav>', text, re.S)
    links = re.findall(r'href="#(figure-\d+)"', toc[0]) if toc else []
    check(len(charts) > 4 and ids == links and len(ids) == len(charts),
          "the figures' table of contents links each of the %d charts: %d links" % (len(charts), len(links)))


def check_names_and_links(tmp, vr):
    """Nodes named as the Ansible play names them (validation_results/<inventory name>/
    gpuvet-*.json) when their reports' hostname differs, the hostname shown beside; a
    directory of several hosts' reports names none of them; the failing node's "From" links
    to the page the play fetched beside its JSON, relative to the fleet's page."""
    play = os.path.join(tmp, "play-names")
    shutil.copytree(os.path.join(vr, "node-01"), os.path.join(play, "node-01"))
    shutil.copytree(os.path.join(vr, FAILING), os.path.join(play, "node-bad"))
    for name in ("gpuvet-check-quick.json", "gpuvet-bench.json"):
        path = os.path.join(play, "node-bad", name)
        with open(path) as f:
            doc = json.load(f)
        doc["host"]["hostname"] = "dgx-h100-07"
        write(path, doc)
    with open(os.path.join(play, "node-bad", "gpuvet-check-quick.html"), "w") as f:
        f.write("<!DOCTYPE html><title>node-bad</title>\n")
    mixed = os.path.join(tmp, "mixed-reports")
    for node in ("node-03", "node-04"):
        os.makedirs(mixed, exist_ok=True)
        shutil.copy(os.path.join(vr, node, "gpuvet-check-quick.json"), os.path.join(mixed, "gpuvet-%s.json" % node))
    pages = os.path.join(tmp, "pages")
    os.makedirs(pages)
    page = os.path.join(pages, "fleet.html")
    p = run([play, mixed, "--json", "-", "--html", page])
    doc = json.loads(p.stdout) if p.stdout.startswith("{") else {"nodes": []}
    got = [(n["name"], n["name_from"], n.get("hostname")) for n in doc["nodes"]]
    check(got == [("node-01", "hostname", None), ("node-03", "hostname", None), ("node-04", "hostname", None),
                  ("node-bad", "directory", "dgx-h100-07")],
          "the play's directory names the node, its hostname beside; a directory of two hosts names neither: %s"
          % got)
    with open(page, encoding="utf-8") as f:
        text = f.read()
    href = "../play-names/node-bad/gpuvet-check-quick.html"
    check('<a class="node-page" href="%s">' % href in text,
          "the failing node's From links to its page beside the JSON, relative to the fleet's page")
    check(os.path.samefile(os.path.join(pages, href), os.path.join(play, "node-bad", "gpuvet-check-quick.html")),
          "the link resolves to the node's page")
    check(text.count('class="node-page"') == 1, "no link for a node without a page")
    check("node-bad <span class=\"muted\">(host dgx-h100-07)</span>" in text, "the page names the host beside")
    p = run([play])
    check("  ✗ node-bad (host dgx-h100-07)  fail  (" in p.stdout, "the text names the host beside: %s" % p.stdout[:400])


def check_width():
    """At 80 columns (COLUMNS, as a terminal gives) no line is wider, and no word is lost."""
    expected = os.path.join(HERE, "expected")
    env = dict(os.environ, COLUMNS="80")
    wide = subprocess.run([GPUVET, "fleet", expected], capture_output=True, text=True, timeout=TIMEOUT,
                          env=dict(os.environ, COLUMNS=""))
    narrow = subprocess.run([GPUVET, "fleet", expected], capture_output=True, text=True, timeout=TIMEOUT, env=env)
    check(any(len(line) > 80 for line in wide.stdout.splitlines()), "unwrapped, some lines are wider than 80")
    over = [line for line in narrow.stdout.splitlines() if len(line) > 80]
    check(not over, "fleet at COLUMNS=80: no line over 80 columns: %s" % over[:2])
    def text(out):  # words only (a long path may break after a '/'), the run's duration left out
        return "".join(re.sub(r"\(\d+ ms\)", "", out).split())
    check(text(narrow.stdout) == text(wide.stdout) and narrow.returncode == wide.returncode,
          "the wrapped report has the same words as the unwrapped one")


def main():
    check_width()
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        vr, bench = make_fleet(tmp)
        for dirpath, dirs, files in os.walk(tmp):
            for d in dirs:
                os.chmod(os.path.join(dirpath, d), 0o755)
        nobody = as_nobody()
        out_dir = os.path.join(tmp, "out")
        os.makedirs(out_dir, mode=0o777)
        os.chmod(out_dir, 0o777)
        out = os.path.join(out_dir, "fleet.json")
        inputs = [vr, os.path.join(tmp, "empty"), os.path.join(tmp, "missing")]
        p = run(inputs + ["--json", out], nobody or [])
        if os.environ.get("FLEET_TEST_SHOW"):
            print(p.stdout)
        check(p.returncode == 5, "findings and skipped inputs: exit 5 (1 + 4), got %d: %s" % (p.returncode, p.stderr))
        for bad in ("node-10", "node-11", "node-12", "empty", "missing"):
            check(any(line.startswith("gpuvet fleet: skipping ") and bad in line for line in p.stderr.splitlines()),
                  "stderr warns about %s" % bad)
        check("Traceback" not in p.stderr and "runtime error" not in p.stderr and "AddressSanitizer" not in p.stderr,
              "no sanitizer report")
        with open(out) as f:
            doc = json.load(f)
        check_json(doc, vr, tmp, nobody)
        check_text(p.stdout, vr)
        check(not [x for x in os.listdir(out_dir) if x != "fleet.json"], "no temporary file beside the JSON")

        # --json - : the document alone on standard output, the same aggregate.
        p = run(inputs + ["--json", "-"], nobody or [])
        same = json.loads(p.stdout) if p.stdout.startswith("{") else None
        for d in (doc, same or {}):
            d.get("summary", {}).pop("duration_ms", None)
        check(same == doc, "--json - prints the same document, and only it")
        # One thread reads the same aggregate as many.
        p = run(inputs + ["--json", "-", "--threads", "1"], nobody or [])
        one = json.loads(p.stdout) if p.stdout.startswith("{") else {}
        one.get("summary", {}).pop("duration_ms", None)
        check(one == doc, "--threads 1 gives the same aggregate")

        # --strict: a skipped input is an error, the aggregate still written.
        p = run(inputs + ["--strict", "--json", out], nobody or [])
        check(p.returncode == 2 and "--strict: " in p.stderr, "--strict with skipped inputs: exit 2 (%d)" % p.returncode)
        # Only good inputs: findings alone, exit 1; a passing node alone: 0.
        good = [os.path.join(vr, n) for n in NODES]
        p = run(good)
        check(p.returncode == 1, "findings, nothing skipped: exit 1 (%d: %s)" % (p.returncode, p.stderr))
        p = run([os.path.join(vr, "node-01", "gpuvet-check-quick.json")])
        check(p.returncode == 0 and "Verdict: ✓ PASS" in p.stdout, "one passing report: exit 0 (%d)" % p.returncode)
        p = run([os.path.join(vr, "node-01", "gpuvet-check-quick.json"), os.path.join(tmp, "missing")])
        check(p.returncode == 4, "a passing report and a missing one: exit 4 (%d)" % p.returncode)
        check_own_aggregate(tmp, vr)
        check_slow_node(tmp, bench)
        check_names_and_links(tmp, vr)
        # Nothing readable: exit 2, naming the inputs.
        p = run([os.path.join(tmp, "empty"), os.path.join(vr, "node-12")])
        check(p.returncode == 2 and "no report could be read" in p.stderr, "nothing read: exit 2 (%d)" % p.returncode)

        # --rules: a tighter table flags the 3% node; a bad one is refused naming the file.
        rules = os.path.join(tmp, "rules.json")
        with open(rules, "w") as f:
            json.dump({"schema": "gpuvet.fleet-rules/1",
                       "defaults": {"warn_pct": 1, "fail_pct": 2, "mads": 0, "min_samples": 5},
                       "metrics": [{"metric": "memory/copy", "min": 1e9}]}, f)
        p = run(good + ["--rules", rules, "--json", "-"])
        tight = json.loads(p.stdout) if p.stdout.startswith("{") else {"outliers": [], "rules": None}
        check(tight["rules"] == rules, "the rules file is named in the JSON")
        check(by(tight["outliers"], node=WITHIN, metric="memory/triad", status="fail"),
              "--rules with fail_pct 2 flags the 3% node")
        check(len(by(tight["outliers"], metric="memory/copy", rule="min")) == 64,
              "a min bound fails every figure below it (8 nodes x 8 GPUs)")
        with open(rules, "w") as f:
            f.write('{"schema": "gpuvet.fleet-rules/1", "defaults": {"warn_pct": 20, "fail_pct": 10, '
                    '"mads": 3, "min_samples": 5}}')
        p = run(good + ["--rules", rules])
        check(p.returncode == 2 and rules in p.stderr and "warn_pct" in p.stderr,
              "a bad rules file: exit 2 naming it (%d: %s)" % (p.returncode, p.stderr.strip()))
        p = run(good + ["--rules", os.path.join(tmp, "nope.json")])
        check(p.returncode == 2 and "nope.json" in p.stderr, "a missing rules file: exit 2 naming it")
        # Its name with a terminal escape in it: named as \xNN, never raw (N17).
        p = run(good + ["--rules", os.path.join(tmp, "nope\x1b]0;OWNED\x07.json")])
        check(p.returncode == 2 and "\x1b" not in p.stderr and "\x07" not in p.stderr and "\\x1b]0;OWNED" in p.stderr,
              "a rules file named with escapes: named as \\xNN (%r)" % p.stderr)
        # A report without a host named without a directory: named by its file.
        shutil.copy(os.path.join(vr, "node-09", "gpuvet-bench.json"), os.path.join(tmp, "rack7-node3.json"))
        p = subprocess.run([GPUVET, "fleet", "rack7-node3.json", "--json", "-"], cwd=tmp, capture_output=True,
                           text=True, timeout=TIMEOUT)
        alone = json.loads(p.stdout) if p.stdout.startswith("{") else {"nodes": []}
        check([(n["name"], n["name_from"]) for n in alone["nodes"]] == [("rack7-node3", "file")],
              "a hostless report named without a directory: its file name (%s)" % alone["nodes"])
        check_hostile(tmp, os.path.join(vr, "node-01", "gpuvet-check-quick.json"))
        # Usage.
        p = run([])
        check(p.returncode == 2 and "at least one report" in p.stderr, "no operand: exit 2")
        p = run(good + ["--json", os.path.join(tmp, "no", "such", "dir.json")])
        check(p.returncode == 2 and "dir.json" in p.stderr, "an unwritable --json path: exit 2 before reading")
        p = run(good + ["--threads", "0"])
        check(p.returncode == 2 and "--threads" in p.stderr, "--threads 0 refused")
    return finish()


if __name__ == "__main__":
    sys.exit(main())

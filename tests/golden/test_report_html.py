#!/usr/bin/env python3
"""`gpuvet report --html` rendered by headless Chromium (Debian's `chromium`).

Five pages are written from real gpuvet documents: a failing check (the dgx-h100-degraded
golden), a passing one (dgx-h100), a bench run and a burn with telemetry (html-inputs/, made
by gpuvet on the fake CUDA/cuBLASLt/NVML, see html-inputs/README.md), and the three of one
node on one page. Chromium loads each once, with its network stack logged, and:

- its DOM (--dump-dom) holds every failing check's id with its remedy, the failures before
  the passing results, one <svg> per chart with the bars, series and points the documents
  hold, the sections in order;
- the console logged nothing (--enable-logging=stderr) and the page requested nothing
  (--log-net-log: no request from the page; its markup has no element or attribute that
  fetches or runs anything);
- a page from a document with markup and control characters in its strings shows them as
  text (no script, img or onload in the DOM);
- its screenshot (1280x2000) matches the reference PNG in html-reference/ within a tolerance
  (fonts-dejavu-core named by the page, the times from the documents' mtimes set here);
  GPUVET_UPDATE_GOLDEN=1 rewrites the references;
- the combined page prints to a non-empty PDF.

`gpuvet fleet --html` is rendered the same way, over a small fleet made from the same
documents (validation_results/<host>/ as the Ansible play fetches them): a failing node, a
GPU figure 25% below its model's median, a node on another kernel, a truncated report. Its
DOM holds every node that did not pass, every outlier (failures first), the drift, one
distribution chart per figure with a row per GPU model holding as many values as the
aggregate (fleet --json on the same inputs), and the sections in order; the screenshot is
compared as the others.

Bad input exits 2 naming the file and leaves no page behind. Screenshots, pages, diffs and
the PDF are kept in OUTDIR (the build's tests/report-html/) as CI artifacts.

SKIP (77) without chromium, Pillow (python3-pil) or the DejaVu fonts.

Usage: test_report_html.py GPUVET OUTDIR"""
import html.parser
import json
import math
import re
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakes"))
import fakeenv  # noqa: E402  (the time scale of a busy or sanitized run)

GPUVET, OUTDIR = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "html-reference")
SCALE = fakeenv.time_scale()
WRITTEN = 1764000000  # 2025-11-24 16:00:00 UTC: every document's mtime, so pages do not change
SHOT_W, SHOT_H = 1280, 2000
REF_W, REF_H = SHOT_W // 2, SHOT_H // 2  # references are kept at half size to keep the repository small
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def skip(why):
    print("SKIP:", why)
    sys.exit(77)


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if not CHROMIUM:
    skip("chromium is not installed (Debian package chromium; tools/bootstrap.sh installs it)")
try:
    from PIL import Image, ImageChops
except ImportError:
    # Debian's python3-pil lives in the system Python's dist-packages; a python3 of another
    # prefix (pyenv, a venv) of the same minor version loads it from there
    sys.path.append("/usr/lib/python3/dist-packages")
try:
    from PIL import Image, ImageChops
except ImportError:
    skip("Pillow is not installed (Debian package python3-pil; tools/bootstrap.sh installs it)")
if not os.path.exists("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"):
    skip("fonts-dejavu-core is not installed: screenshots would not match the references")

INPUTS = {
    "check-failing.json": os.path.join(HERE, "expected", "dgx-h100-degraded.json"),
    "check-passing.json": os.path.join(HERE, "expected", "dgx-h100.json"),
    "bench.json": os.path.join(HERE, "html-inputs", "bench-dgx-h100.json"),
    "burn.json": os.path.join(HERE, "html-inputs", "burn-dgx-h100.json"),
}
PAGES = {
    "check-failing": ["check-failing.json"],
    "check-passing": ["check-passing.json"],
    "bench": ["bench.json"],
    "burn": ["burn.json"],
    "node": ["check-passing.json", "bench.json", "burn.json"],
    "hostile": ["hostile.json"],  # written by hostile_document(); no screenshot reference
}
HOSTNAME = '<script>document.title="owned"</script>"\' \x1b[31m'
SUMMARY = '<img src=x onerror=alert(1)> & </dd></dl>'


def hostile_document(work):
    """check-failing.json with markup, quotes and a control character in the strings the
    page shows, to see them as text in the browser's DOM."""
    d = json.load(open(os.path.join(work, "check-failing.json")))
    d["host"]["hostname"] = HOSTNAME
    failing = next(c for c in d["checks"] if c["status"] == "fail")
    failing["summary"] = SUMMARY
    failing["remedy"] = "<script>alert(2)</script>"
    failing["evidence"] = {"<b>key</b>": "\"><svg onload=alert(3)>"}
    path = os.path.join(work, "hostile.json")
    json.dump(d, open(path, "w"))
    os.utime(path, (WRITTEN, WRITTEN))


def check_hostile(dom):
    check(not dom.find("script") and not dom.find("img"), "hostile: no script or img element in the DOM")
    check(all(dom.elements[i][1].get("onload") is None for i in dom.find("svg")), "hostile: no onload attribute")
    h1 = dom.find("h1")
    check(h1 and HOSTNAME.replace("\x1b", "\\x1B") in dom.text_of(h1[0]),
          "hostile: the hostname shown as text, its escape character as \\x1B: %r" % (dom.text_of(h1[0]) if h1 else None))
    check(any(SUMMARY in dom.text_of(i) for i in dom.find("dd")), "hostile: the summary shown as text")


class Dom(html.parser.HTMLParser):
    """Elements in document order: (tag, attrs, index), and the text inside each result block."""

    def __init__(self):
        super().__init__()
        self.elements = []
        self.stack = []
        self.text = {}  # index of an element -> its text

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        if tag not in ("meta", "br"):  # HTML's void elements here; SVG's come with end tags in the DOM dump
            self.stack.append(len(self.elements) - 1)
            self.text[len(self.elements) - 1] = []

    def handle_endtag(self, tag):
        while self.stack:
            i = self.stack.pop()
            if self.elements[i][0] == tag:
                break

    def handle_data(self, data):
        for i in self.stack:
            self.text[i].append(data)

    def find(self, tag=None, **attrs):
        out = []
        for i, (t, a) in enumerate(self.elements):
            if tag and t != tag:
                continue
            if all(attrs.get(k) is None or a.get(k.replace("_", "-")) == v for k, v in attrs.items()):
                out.append(i)
        return out

    def has_class(self, i, cls):
        return cls in (self.elements[i][1].get("class") or "").split()

    def text_of(self, i):
        return "".join(self.text.get(i, []))


FLEET_NODES = ["node-%02d" % i for i in range(1, 7)]
FLEET_FAILING, FLEET_LOW, FLEET_KERNEL = "node-02", "node-04", "node-05"


def make_fleet(work):
    """validation_results/<host>/: a check and a bench report per node, from the inputs."""
    vr = os.path.join(work, "fleet", "validation_results")
    passing = json.load(open(os.path.join(work, "check-passing.json")))
    failing = json.load(open(os.path.join(work, "check-failing.json")))
    bench = json.load(open(os.path.join(work, "bench.json")))
    # The fake GPUs' figures are far below an H100's baselines, so bench failed them; the
    # fleet judges them as a healthy node's would be
    for m in bench["measurements"]:
        if m["status"] == "fail":
            m["status"] = "pass"
    bench["summary"]["verdict"] = "pass"
    low_gpu = sorted({m["subject"] for m in bench["measurements"] if m.get("name") == "triad"})[1]
    for i, node in enumerate(FLEET_NODES):
        check_doc = json.loads(json.dumps(failing if node == FLEET_FAILING else passing))
        check_doc["host"]["hostname"] = node
        if node == FLEET_KERNEL:
            check_doc["host"]["kernel_release"] = "6.8.0-45-generic"
        b = json.loads(json.dumps(bench))
        b["host"]["hostname"] = node
        if node == FLEET_KERNEL:
            b["host"]["kernel_release"] = "6.8.0-45-generic"
        for m in b["measurements"]:
            if (m.get("stats") or {}).get("median") is not None:
                # a quiet fleet's spread: 0.2% a node
                m["stats"]["median"] *= 1 + 0.002 * i
                if node == FLEET_LOW and m["name"] == "triad" and m["subject"] == low_gpu:
                    m["stats"]["median"] *= 0.75
        os.makedirs(os.path.join(vr, node))
        for name, doc in (("gpuvet-check-quick.json", check_doc), ("gpuvet-bench.json", b)):
            path = os.path.join(vr, node, name)
            with open(path, "w") as f:
                json.dump(doc, f)
            os.utime(path, (WRITTEN, WRITTEN))
    os.makedirs(os.path.join(vr, "node-07"))
    with open(os.path.join(vr, "node-07", "gpuvet-check-quick.json"), "w") as f:
        f.write(json.dumps(passing)[:5000])
    return os.path.relpath(vr, work)


def fleet(args, cwd):
    return subprocess.run([GPUVET, "fleet"] + args, cwd=cwd, capture_output=True, text=True, timeout=30 * SCALE)


def check_fleet(dom, agg):
    """The fleet page's DOM against the aggregate fleet --json wrote from the same inputs."""
    order = [dom.find("section", id=s) for s in ("failing-nodes", "checks", "outliers", "drift", "distributions",
                                                   "skipped", "all-nodes")]
    check(all(order) and [i[0] for i in order] == sorted(i[0] for i in order),
          "fleet: failing nodes, checks, outliers, drift, distributions, skipped inputs, every node, in that order")
    verdict = dom.find("div", id="verdict")
    check(verdict and dom.has_class(verdict[0], "st-" + agg["summary"]["verdict"]),
          "fleet: the verdict box says %s" % agg["summary"]["verdict"])
    bad = [n for n in agg["nodes"] if n["verdict"] in ("warn", "fail", "error")]
    rows = [dom.elements[i][1]["data-node-status"] for i in dom.find("tr") if "data-node-status" in dom.elements[i][1]]
    check(len(rows) == len(bad) and rows == sorted(rows, key=["fail", "error", "warn"].index),
          "fleet: a row per node that did not pass (%d), failures first: %s" % (len(bad), rows))
    failing_rows = [dom.text_of(i) for i in dom.find("tr") if dom.elements[i][1].get("data-node-status") == "fail"]
    check(any(FLEET_FAILING in t for t in failing_rows), "fleet: %s's row is a failure" % FLEET_FAILING)
    failed_ids = [c["id"] for c in agg["checks"] if c["fail"]]
    row = [t for t in failing_rows if FLEET_FAILING in t]
    check(row and all(i in row[0] for i in failed_ids[:6]), "fleet: the failing node's row names its checks %s" %
          failed_ids[:6])
    outl = [i for i in dom.find("tr") if "data-outlier-status" in dom.elements[i][1]]
    statuses = [dom.elements[i][1]["data-outlier-status"] for i in outl]
    check(len(outl) == len(agg["outliers"]) and statuses == sorted(statuses, key=["fail", "warn"].index),
          "fleet: a row per outlier (%d), failures first: %s" % (len(agg["outliers"]), statuses))
    groups = [i for i in dom.find("div") if dom.has_class(i, "outlier-group")]
    check(len(groups) == len(agg.get("outlier_groups", [])) and
          [dom.elements[i][1].get("data-figures") for i in groups] ==
          [str(g["figures"]) for g in agg.get("outlier_groups", [])],
          "fleet: one finding per outlier group of the aggregate, its figures folded under it")
    check(any(FLEET_LOW in dom.text_of(i) and "triad" in dom.text_of(i) for i in outl
              if dom.elements[i][1]["data-outlier-status"] == "fail"),
          "fleet: %s's low triad is a failing outlier" % FLEET_LOW)
    drift = dom.find("section", id="drift")
    text = dom.text_of(drift[0]) if drift else ""
    check("kernel_release" in text and FLEET_KERNEL in text and "6.8.0-45-generic" in text,
          "fleet: the drift names %s's kernel" % FLEET_KERNEL)
    skipped = dom.find("section", id="skipped")
    check(skipped and "node-07" in dom.text_of(skipped[0]), "fleet: the truncated report is listed as skipped")
    # one chart per figure and unit, a row per GPU model with the aggregate's count of values
    figures = []
    for m in agg["metrics"]:
        if (m["metric"], m["unit"]) not in figures:
            figures.append((m["metric"], m["unit"]))
    charts = [i for i in dom.find("svg") if dom.has_class(i, "distribution")]
    check(len(charts) == len(figures), "fleet: one distribution chart per figure (%d), got %d" %
          (len(figures), len(charts)))
    want = [m["n"] for f in figures for m in agg["metrics"] if (m["metric"], m["unit"]) == f]
    got = [int(dom.elements[i][1].get("data-values", -1)) for i in dom.find("g") if dom.has_class(i, "group")]
    check(got == want, "fleet: values per GPU model and figure as aggregated (%d groups)" % len(want))
    # the low GPU stands out of its chart under its own node's name
    divs = [i for i in dom.find("div") if dom.elements[i][1].get("data-metric")]
    triad = [k for k, i in enumerate(divs) if dom.elements[i][1]["data-metric"] == "memory/triad"]
    labels = []
    if triad:
        start = divs[triad[0]]
        end = divs[triad[0] + 1] if triad[0] + 1 < len(divs) else len(dom.elements)
        labels = [dom.text_of(i) for i in dom.find("text") if start < i < end and dom.has_class(i, "outlier-label")]
    low = [o["subject"].split(" ")[0] for o in agg["outliers"] if o["node"] == FLEET_LOW and o["metric"] == "memory/triad"]
    check(labels and all(t.startswith("%s %s: " % (FLEET_LOW, low[0] if low else "?")) for t in labels),
          "fleet: the triad chart labels its outlier with node and GPU %s %s: %s" % (FLEET_LOW, low, labels))
    toc = [dom.elements[i][1].get("href") for i in dom.find("a") if dom.elements[i][1].get("href", "").startswith("#")]
    check(toc == ["#" + dom.elements[i][1]["id"] for i in divs],
          "fleet: the figures' table of contents links every chart in order (%d links)" % len(toc))


def gpuvet(args, cwd):
    return subprocess.run([GPUVET, "report"] + args, cwd=cwd, capture_output=True, text=True,
                          timeout=30 * SCALE)


CHROMIUM_FLAGS = [
    "--headless", "--disable-gpu",
    # tests run as root in CI containers, where Chromium's sandbox cannot start: the pages
    # are our own, loaded from files, with networking checked to be unused
    "--no-sandbox",
    "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-extensions", "--hide-scrollbars", "--force-color-profile=srgb",
    "--force-device-scale-factor=1", "--enable-logging=stderr", "--v=0",
]


def chromium_start(args, workdir):
    """Start Chromium with a fresh profile in its own process group (so that a timeout kills
    all of it)."""
    profile = tempfile.mkdtemp(prefix="profile-", dir=workdir)
    cmd = [CHROMIUM] + CHROMIUM_FLAGS + ["--user-data-dir=" + profile] + args
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def chromium_wait(p, name, deadline):
    """(stdout, stderr) of a Chromium started by chromium_start, or None past the deadline
    (a monotonic time), after killing its process group."""
    try:
        out, err = p.communicate(timeout=max(1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        check(False, "%s: chromium did not finish in time" % name)
        return None
    check(p.returncode == 0, "%s: chromium exits 0, got %d: %s" % (name, p.returncode, err[-800:]))
    return out, err


def page_requests(netlog, page_url):
    """URLs the page itself asked for (the network isolation key of a file:// page); Chromium's
    own background requests have another key."""
    try:
        log = json.load(open(netlog))
    except (OSError, ValueError) as e:
        check(False, "net log %s unreadable: %s" % (netlog, e))
        return []
    urls = set()
    for e in log.get("events", []):
        p = e.get("params") or {}
        if "file://" in str(p.get("network_isolation_key", "")) and p.get("url") not in (None, page_url):
            urls.add(p["url"])
    return sorted(urls)


def compare(name, shot):
    """The screenshot against html-reference/NAME.png, both at half size."""
    ref_path = os.path.join(REFERENCE, name + ".png")
    img = Image.open(shot).convert("RGB")
    check(img.size == (SHOT_W, SHOT_H), "%s: screenshot is %dx%d" % ((name,) + img.size))
    small = img.resize((REF_W, REF_H), Image.BOX)
    if os.environ.get("GPUVET_UPDATE_GOLDEN") == "1":
        os.makedirs(REFERENCE, exist_ok=True)
        # 256 colours: a third of the size, and the quantisation moves no pixel past the tolerance
        small.quantize(256, method=Image.Quantize.MEDIANCUT).save(ref_path, optimize=True)
        print("updated", ref_path)
        return
    if not os.path.exists(ref_path):
        check(False, "%s: no reference %s (GPUVET_UPDATE_GOLDEN=1 writes it)" % (name, ref_path))
        return
    ref = Image.open(ref_path).convert("RGB")
    diff = ImageChops.difference(small, ref).convert("L")
    hist = diff.histogram()
    pixels = REF_W * REF_H
    # Anti-aliasing and a changed version string move a few pixels; a moved block, a lost
    # chart or a changed colour moves thousands.
    strong = sum(hist[64:]) / pixels
    mean = sum(i * h for i, h in enumerate(hist)) / pixels
    diff.point(lambda v: min(255, v * 4)).save(os.path.join(OUTDIR, name + "-diff.png"))
    print("%s: %.3f%% of pixels differ strongly from the reference, mean difference %.2f" % (name, strong * 100, mean))
    check(strong < 0.01 and mean < 3, "%s: screenshot matches %s (%.3f%% strongly different, mean %.2f; see %s)" %
          (name, ref_path, strong * 100, mean, os.path.join(OUTDIR, name + "-diff.png")))


def finite(v):
    return isinstance(v, (int, float)) and math.isfinite(v)


def check_results(name, dom, docs):
    results = dom.find("div")
    blocks = [i for i in results if dom.has_class(i, "result")]
    passed = dom.find("details", id="passed")
    for doc in docs:
        items = list(doc.get("checks") or [])
        for m in doc.get("measurements") or []:
            items.append(dict(m, id="bench %s/%s" % (m["bench"], m["name"])))
        for it in items:
            if it["status"] not in ("fail", "warn", "error"):
                continue
            mine = [i for i in blocks if dom.elements[i][1].get("data-id") == it["id"] and
                    dom.elements[i][1].get("data-status") == it["status"]]
            check(mine, "%s: %s %s has its block" % (name, it["status"], it["id"]))
            if it.get("remedy"):
                # `code` spans are shown as code, without their backticks
                shown = re.sub(r"`([^`]+)`", r"\1", it["remedy"])
                check(any(shown in dom.text_of(i) for i in mine),
                      "%s: %s's remedy is shown: %s" % (name, it["id"], it["remedy"][:60]))
    n_pass = sum(d["summary"]["pass"] for d in docs)
    rows = [i for i in dom.find("tr") if dom.elements[i][1].get("data-status") == "pass"]
    check(len(rows) == n_pass, "%s: %d passing results folded, got %d" % (name, n_pass, len(rows)))
    statuses = [dom.elements[i][1].get("data-status") for i in blocks]
    order = {"fail": 0, "warn": 1, "error": 2}
    check(statuses == sorted(statuses, key=lambda s: order[s]), "%s: failures, then warnings, then errors: %s" %
          (name, statuses))
    if blocks and passed:
        check(max(blocks) < passed[0], "%s: every failure before the passing results" % name)
    verdict = dom.find("div", id="verdict")
    worst = "pass"
    for d in docs:
        v = d["summary"]["verdict"]
        if ["skip", "pass", "warn", "fail", "error"].index(v) > ["skip", "pass", "warn", "fail", "error"].index(worst):
            worst = v
    check(verdict and worst in dom.text_of(verdict[0]), "%s: the verdict %s in the header" % (name, worst))


def check_bench(name, dom, doc):
    judged = [m for m in doc["measurements"] if finite(m.get("peak")) or finite(m.get("baseline"))]
    groups = []
    for m in judged:
        if (m["bench"], m["unit"]) not in groups:
            groups.append((m["bench"], m["unit"]))
    charts = [i for i in dom.find("svg") if dom.has_class(i, "bars")]
    check(len(charts) == len(groups), "%s: one bar chart per benchmark and unit (%d), got %d" %
          (name, len(groups), len(charts)))
    bars = [i for i in dom.find("rect") if dom.has_class(i, "bar")]
    with_value = [m for m in judged if m.get("stats") and finite(m["stats"].get("median"))]
    check(len(bars) == len(with_value), "%s: %d bars, got %d" % (name, len(with_value), len(bars)))
    for m in judged:
        cls = "st-" + m["status"]
        check(any(dom.has_class(i, cls) for i in bars), "%s: a %s bar for %s" % (name, m["status"], m["name"]))
    # the same measurement on 3 GPUs or more side by side: a chart per benchmark and unit, a
    # row per measurement with its number of values
    counts, order = {}, []
    for m in doc["measurements"]:
        if m.get("stats") and finite(m["stats"].get("median")):
            key = (m["bench"], m["unit"], m["name"])
            counts[key] = counts.get(key, 0) + 1
            if key not in order:
                order.append(key)
    rows = [k for k in order if counts[k] >= 3]
    charts = {(b, u) for b, u, _ in rows}
    spread = [i for i in dom.find("svg") if dom.has_class(i, "distribution")]
    check(len(spread) == len(charts), "%s: %d charts across GPUs, got %d" % (name, len(charts), len(spread)))
    got = [int(dom.elements[i][1].get("data-values", -1)) for i in dom.find("g") if dom.has_class(i, "group")]
    want = [counts[k] for b, u in dict.fromkeys((b, u) for b, u, _ in rows) for k in rows if k[:2] == (b, u)]
    check(got == want, "%s: values per measurement across GPUs: want %s, got %s" % (name, want, got))
    check(len(rows) > 0, "%s: the bench input has measurements on 3 GPUs or more" % name)


def check_burn(name, dom, doc):
    devices = doc["burn"]["devices"]
    fields = ["temperature_c", "memory_temperature_c", "power_w", "sm_clock_mhz", "utilization_pct"]
    want = []
    for f in fields:
        counts = [sum(1 for s in (d.get("telemetry") or {}).get("samples", []) if finite(s.get(f)) and finite(s["t_s"]))
                  for d in devices]
        if any(counts):
            want.append(counts)
    if any(d.get("throughput") for d in devices):
        want.append([len(d.get("throughput") or []) for d in devices])
    charts = [i for i in dom.find("svg") if dom.has_class(i, "series")]
    check(len(charts) == len(want), "%s: %d time-series charts, got %d" % (name, len(want), len(charts)))
    paths = [i for i in dom.find("path") if dom.has_class(i, "series")]
    got = [int(dom.elements[i][1].get("data-points", -1)) for i in paths]
    flat = [c for counts in want for c in counts]
    check(got == flat, "%s: series and their points per device: want %s, got %s" % (name, flat, got))
    check(len(want) and all(c >= 8 for c in want[0]), "%s: the telemetry has its samples: %s" % (name, want[:1]))
    # Each chart draws the levels its verdicts used, where the document tells them: the
    # slowdown and memory temperatures, the power limit, the SM clock floor of burn.sm_clock.
    def one(values):
        return sorted({v for v in values if finite(v)})
    tel = [d.get("telemetry") or {} for d in devices]
    floors = [float(c["evidence"]["clock_floor_mhz"]) for c in doc["checks"]
              if c["id"] == "burn.sm_clock" and "clock_floor_mhz" in (c.get("evidence") or {})]
    want_limits = {
        "GPU temperature": one(t.get("temperature_slowdown_c") for t in tel),
        "Memory (HBM) temperature": one(t.get("memory_temperature_max_c") for t in tel),
        # the enforced limit of each device's last sample that tells it
        "Power draw": one(([s["power_limit_w"] for s in t.get("samples", []) if finite(s.get("power_limit_w"))]
                           or [None])[-1] for t in tel),
        "SM clock": one(floors),
    }
    got_limits = {}
    for k, i in enumerate(charts):
        end = charts[k + 1] if k + 1 < len(charts) else len(dom.elements)
        title = dom.elements[i][1].get("aria-label", "")
        got_limits[title] = sorted(float(dom.elements[j][1]["data-limit"]) for j in dom.find("line")
                                   if i < j < end and dom.has_class(j, "limit"))
    for title, values in want_limits.items():
        if title in got_limits:
            check(got_limits[title] == values, "%s: %s chart draws the limits %s, got %s" %
                  (name, title, values, got_limits[title]))
    check(want_limits["GPU temperature"] and want_limits["SM clock"] and want_limits["Power draw"],
          "%s: the burn input tells the slowdown, the clock floor and the power limit: %s" % (name, want_limits))


class Markup(html.parser.HTMLParser):
    """What the page's markup (not its text) would make a browser fetch or run."""

    def __init__(self):
        super().__init__()
        self.found = []
        self.in_style = False

    def handle_starttag(self, tag, attrs):
        self.in_style = tag == "style"
        if tag in ("script", "link", "img", "iframe", "object", "embed", "base"):
            self.found.append("<%s>" % tag)
        for k, v in attrs:
            # A link within the page, or (fleet) to a node's page beside it, fetches nothing
            # until followed.
            if tag == "a" and k == "href" and v and (v.startswith("#") or (":" not in v and v.endswith(".html"))):
                continue
            if k in ("src", "href", "xlink:href", "srcset", "background") or k.startswith("on"):
                self.found.append("%s=%s" % (k, v))
            if k == "style" and v and "url(" in v:
                self.found.append("style with url(")

    def handle_endtag(self, tag):
        self.in_style = False

    def handle_data(self, data):
        if self.in_style and ("url(" in data or "@import" in data):
            self.found.append("url( or @import in the stylesheet")


def static_checks(name, text):
    m = Markup()
    m.feed(text)
    check(not m.found, "%s: nothing to fetch or run in the page's markup: %s" % (name, m.found[:5]))


def bad_input(work):
    def refused(args, what, *names):
        out = os.path.join(work, "refused.html")
        p = gpuvet(["--html", out] + args, work)
        check(p.returncode == 2, "%s: exit 2, got %d (%s)" % (what, p.returncode, p.stderr.strip()))
        for n in names:
            check(n in p.stderr, "%s: the message names %s: %s" % (what, n, p.stderr.strip()))
        check(not os.path.exists(out), "%s: no page left behind" % what)
        check(not [f for f in os.listdir(work) if f.startswith(".refused") or f.startswith("refused.html.")],
              "%s: no temporary file left behind" % what)
        return p.stderr

    with open(os.path.join(work, "truncated.json"), "w") as f:
        f.write(open(INPUTS["check-failing.json"]).read()[:3000])
    with open(os.path.join(work, "notjson.json"), "w") as f:
        f.write("Verdict: FAIL\n")
    doc = json.load(open(INPUTS["check-passing.json"]))
    for fname, mutate in [("schema.json", lambda d: d.update(schema="gpuvet.report/7")),
                          ("noschema.json", lambda d: d.pop("schema")),
                          ("type.json", lambda d: d["checks"][2].update(status=3)),
                          ("node.json", lambda d: d["host"].update(hostname="other-node"))]:
        d = json.loads(json.dumps(doc))
        mutate(d)
        json.dump(d, open(os.path.join(work, fname), "w"))
    refused(["truncated.json"], "truncated JSON", "truncated.json", "line")
    refused(["notjson.json"], "not JSON", "notjson.json")
    refused(["schema.json"], "unknown schema version", "schema.json", "gpuvet.report/7")
    refused(["noschema.json"], "no schema", "noschema.json", "schema")
    refused(["type.json"], "a status of the wrong type", "type.json", "checks[2].status")
    refused(["check-passing.json", "node.json"], "documents of two nodes", "node.json", "other-node", "dgx-h100-01")
    refused(["missing.json"], "a missing file", "missing.json")
    # Over the 64 MiB cap by a byte: refused before it is read (a 317 MB report once took 2.3 GB
    # and 24 s). Sparse, so the test writes nothing.
    with open(os.path.join(work, "huge.json"), "w") as f:
        f.truncate((64 << 20) + 1)
    refused(["huge.json"], "a file over 64 MiB", "huge.json", "larger than 64 MiB")
    os.unlink(os.path.join(work, "huge.json"))
    # a previous page is never destroyed by a refused run
    keep = os.path.join(work, "keep.html")
    open(keep, "w").write("previous")
    p = gpuvet(["--html", keep, "truncated.json"], work)
    check(p.returncode == 2 and open(keep).read() == "previous", "a refused run leaves the previous page as it was")
    p = gpuvet(["--html", os.path.join(work, "x.html")], work)
    check(p.returncode == 2 and "REPORT.json" in p.stderr, "no document: usage error: %s" % p.stderr.strip())
    p = gpuvet(["--html", "-", "check-passing.json"], work)
    check(p.returncode == 0 and p.stdout.startswith("<!DOCTYPE html>"), "--html - writes the page to stdout")


def main():
    os.makedirs(OUTDIR, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as work:
        for local, src in INPUTS.items():
            shutil.copy(src, os.path.join(work, local))
            os.utime(os.path.join(work, local), (WRITTEN, WRITTEN))
        bad_input(work)
        hostile_document(work)
        vr = make_fleet(work)
        agg_path = os.path.join(work, "fleet.json")
        p = fleet(["--json", agg_path, "--html", os.path.join(OUTDIR, "fleet.html"), vr], work)
        check(p.returncode == 5, "fleet: findings and a skipped input, exit 5 (1 + 4), got %d: %s" %
              (p.returncode, p.stderr[-600:]))
        agg = json.load(open(agg_path)) if os.path.exists(agg_path) else None
        # Every page is written first, then all the Chromiums run at once (each launch takes
        # a second or two, mostly waiting), under one scaled deadline.
        runs = {}
        for name, files in PAGES.items():
            page = os.path.join(OUTDIR, name + ".html")
            p = gpuvet(["--html", page] + files, work)
            check(p.returncode == 0, "%s: written, exit 0, got %d: %s" % (name, p.returncode, p.stderr))
            if p.returncode != 0:
                continue
            static_checks(name, open(page, encoding="utf-8").read())
            url = "file://" + page
            shot = os.path.join(OUTDIR, name + ".png")
            if os.path.exists(shot):
                os.unlink(shot)
            netlog = os.path.join(work, name + "-net.json")
            runs[name] = (chromium_start(["--log-net-log=" + netlog, "--dump-dom", "--screenshot=" + shot,
                                          "--window-size=%d,%d" % (SHOT_W, SHOT_H), url], work), url, netlog, shot)
        if agg:
            page = os.path.join(OUTDIR, "fleet.html")
            static_checks("fleet", open(page, encoding="utf-8").read())
            shot = os.path.join(OUTDIR, "fleet.png")
            if os.path.exists(shot):
                os.unlink(shot)
            netlog = os.path.join(work, "fleet-net.json")
            runs["fleet"] = (chromium_start(["--log-net-log=" + netlog, "--dump-dom", "--screenshot=" + shot,
                                             "--window-size=%d,%d" % (SHOT_W, SHOT_H), "file://" + page], work),
                             "file://" + page, netlog, shot)
        pdf = os.path.join(OUTDIR, "node.pdf")
        if os.path.exists(pdf):
            os.unlink(pdf)
        printing = chromium_start(["--no-pdf-header-footer", "--print-to-pdf=" + pdf,
                                   "file://" + os.path.join(OUTDIR, "node.html")], work)
        deadline = time.monotonic() + 90 * SCALE
        for name, (proc, url, netlog, shot) in runs.items():
            r = chromium_wait(proc, name, deadline)
            if not r:
                continue
            out, err = r
            console = [line for line in err.splitlines() if ":CONSOLE" in line]
            check(not console, "%s: nothing on the console: %s" % (name, console[:3]))
            requests = page_requests(netlog, url)
            check(requests == [], "%s: no request from the page: %s" % (name, requests))
            dom = Dom()
            dom.feed(out)
            if name == "fleet":
                check_fleet(dom, agg)
                compare(name, shot) if os.path.exists(shot) else check(False, "fleet: chromium wrote no screenshot")
                continue
            docs = [json.load(open(os.path.join(work, f))) for f in PAGES[name]]
            check_results(name, dom, docs)
            for d in docs:
                if d["schema"].startswith("gpuvet.bench"):
                    check_bench(name, dom, d)
                if d.get("burn"):
                    check_burn(name, dom, d)
            if name == "node":
                ids = [dom.find("section", id=s) for s in ("results", "inventory", "bench", "burn")]
                check(all(ids) and [i[0] for i in ids] == sorted(i[0] for i in ids),
                      "node: results, inventory, bench, burn in that order")
            if name == "hostile":
                check_hostile(dom)
            elif os.path.exists(shot):
                compare(name, shot)
            else:
                check(False, "%s: chromium wrote no screenshot" % name)
        chromium_wait(printing, "print", deadline)
        data = open(pdf, "rb").read() if os.path.exists(pdf) else b""
        # the page objects, or the page tree's count should a later Chromium pack them in streams
        counts = [int(c) for c in re.findall(rb"/Type\s*/Pages\b[^>]*?/Count\s+(\d+)", data)]
        pages = max([len(re.findall(rb"/Type\s*/Page\b", data))] + counts)
        check(data.startswith(b"%PDF-") and len(data) > 20000 and pages >= 2,
              "the node page prints to a PDF of several pages (%d bytes, %d pages)" % (len(data), pages))
    print("artifacts in %s (%.1f s)" % (OUTDIR, time.monotonic() - started))
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("ok")


main()

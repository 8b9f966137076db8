#!/usr/bin/env python3
"""deploy/grafana's dashboard: every query of it answered by a real Prometheus scraping gpuvet
serve (suite 'golden'); docs/serve.md "Dashboard and alerts".

Usage: test_serve_dashboard.py GPUVET SRC_ROOT FAKE_LIB

The dashboard JSON is read as Grafana imports it: unique panel ids, every panel and target
on the ${datasource} variable, every query filtered by the $Hostname variable. Then gpuvet
serve runs on the fake NVML's 8x H100 scenario with what every panel shows present (GPM
activity, violation counters, an Xid on GPU 2, a process on GPU 0, a check report with a
failing check) as --hostname node-a, and Prometheus (Debian's) scrapes it every second from
a temporary directory, loopback only, torn down after. Each variable's label_values() must
give node-a and the GPUs 0-7, and each panel's query, with the variables at "All" and
$__rate_interval at 30s, must return series: a query that returns none fails (a renamed
metric, a label the series lack, a join that matches nothing). A per-GPU DCGM query must
return the 8 GPUs; the stat panels must say 8 up, 0 down, 0 samplers stopped, 1 check failing.
A second target serves a dcgm-exporter node's body (its default counters and labels, 2
GPUs): every panel built only on those fields must return that node's GPUs.
The same Prometheus evaluates deploy/prometheus/gpuvet-alerts.yml: every rule must evaluate,
read series serve writes, and exactly the failing check's and GPU 2's Xid alerts must fire.
Exits 77 (skip) when prometheus is not installed.
"""
import http.client
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

GPUVET, SRC_ROOT, FAKE_LIB = sys.argv[1:4]
FAKES = os.path.join(SRC_ROOT, "tests", "fakes")
sys.path.insert(0, FAKES)
import fakeenv  # noqa: E402

SCALE = fakeenv.time_scale()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
from serve_harness import Serve, free_port, prometheus_query, start_prometheus, stop_process  # noqa: E402

DASHBOARD = os.path.join(SRC_ROOT, "deploy", "grafana", "gpuvet-dashboard.json")
RULES = os.path.join(SRC_ROOT, "deploy", "prometheus", "gpuvet-alerts.yml")
# Series of the rules that this serve does not write: the periodic check's (--check-interval).
NOT_HERE = {"gpuvet_check_runs_total"}
NODE = "node-a"
VARIABLES = {"$Hostname": NODE, "$gpu": ".*", "$__rate_interval": "30s"}
# A node running NVIDIA's dcgm-exporter with its default counters: the fields of
# etc/default-counters.csv (NVIDIA/dcgm-exporter, commit b54068a, the lines not commented
# out) under its labels in its template's order (gpu, UUID, pci_bus_id, device, modelName,
# Hostname, then the DCGM_FI_DRIVER_VERSION label field). tests/fixtures/SOURCES.md.
DCGM_NODE = "dcgm-node"
DCGM_DEFAULT = {
    "DCGM_FI_DEV_SM_CLOCK": "gauge", "DCGM_FI_DEV_MEM_CLOCK": "gauge", "DCGM_FI_DEV_MEMORY_TEMP": "gauge",
    "DCGM_FI_DEV_GPU_TEMP": "gauge", "DCGM_FI_DEV_POWER_USAGE": "gauge",
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": "counter", "DCGM_FI_DEV_PCIE_TX_THROUGHPUT": "counter",
    "DCGM_FI_DEV_PCIE_RX_THROUGHPUT": "counter", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": "counter",
    "DCGM_FI_DEV_GPU_UTIL": "gauge", "DCGM_FI_DEV_MEM_COPY_UTIL": "gauge", "DCGM_FI_DEV_ENC_UTIL": "gauge",
    "DCGM_FI_DEV_DEC_UTIL": "gauge", "DCGM_FI_DEV_XID_ERRORS": "gauge", "DCGM_FI_DEV_FB_FREE": "gauge",
    "DCGM_FI_DEV_FB_USED": "gauge", "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL": "counter",
    "DCGM_FI_DEV_VGPU_LICENSE_STATUS": "gauge", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": "counter",
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": "counter", "DCGM_FI_DEV_ROW_REMAP_FAILURE": "gauge",
}


def dcgm_exporter_body():
    out = []
    for name, kind in DCGM_DEFAULT.items():
        out += ["# HELP %s %s" % (name, name), "# TYPE %s %s" % (name, kind)]
        for gpu in (0, 1):
            out.append('%s{gpu="%d",UUID="GPU-00000000-0000-0000-0000-00000000000%d",pci_bus_id="00000000:%02X:00.0",'
                       'device="nvidia%d",modelName="NVIDIA A100-SXM4-80GB",Hostname="%s",'
                       'DCGM_FI_DRIVER_VERSION="535.183.06"} %d' % (name, gpu, gpu, 7 + gpu, gpu, DCGM_NODE,
                                                                   0 if kind == "counter" else 40))
    return ("\n".join(out) + "\n").encode()


class DcgmExporter(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = dcgm_exporter_body()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def on_dcgm_exporter(expr):
    """A query the dcgm-exporter node answers: DCGM fields of its default set only."""
    names = set(re.findall(r"\b(?:DCGM_FI_\w+|gpuvet_\w+)", expr))
    return names and all(n in DCGM_DEFAULT for n in names)


def on_dcgm_node(expr):
    """A dashboard query as it reads the dcgm-exporter node's series."""
    return expand(expr).replace('Hostname=~"%s"' % NODE, 'Hostname=~"%s"' % DCGM_NODE)


def api(port, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10 * SCALE)
    c.request("GET", "/api/v1/" + path)
    r = c.getresponse()
    data = json.loads(r.read())
    c.close()
    return data.get("data") if data.get("status") == "success" else None


query = prometheus_query


def expand(expr):
    for k, v in VARIABLES.items():
        expr = expr.replace(k, v)
    return expr


def read_dashboard():
    """The panels' (title, expr) and the query variables, after the checks Grafana's import needs."""
    if not check(os.path.isfile(DASHBOARD), "%s exists" % DASHBOARD):
        return None, None
    with open(DASHBOARD) as f:
        d = json.load(f)
    ids = [p["id"] for p in d["panels"]]
    check(len(ids) == len(set(ids)), "unique panel ids: %s" % ids)
    check(d.get("uid") and d.get("title"), "a uid and a title")
    names = [v["name"] for v in d["templating"]["list"]]
    check(names == ["datasource", "Hostname", "gpu"], "variables %s" % names)
    targets = []
    for p in d["panels"]:
        if p["type"] == "row":
            continue
        check(p.get("datasource", {}).get("uid") == "${datasource}", "%s: on ${datasource}" % p["title"])
        check(p.get("targets"), "%s: has queries" % p["title"])
        for t in p.get("targets", []):
            check(t.get("datasource", {}).get("uid") == "${datasource}",
                  "%s/%s: on ${datasource}" % (p["title"], t["refId"]))
            check('Hostname=~"$Hostname"' in t["expr"], "%s/%s: filtered by $Hostname" % (p["title"], t["refId"]))
            targets.append((p["title"] + "/" + t["refId"], p["type"], t["expr"]))
    variables = [(v["name"], v["query"]["query"]) for v in d["templating"]["list"] if v["type"] == "query"]
    return targets, variables


def label_values(port, q):
    """Grafana's label_values(SELECTOR, LABEL) as a PromQL query: the label's values."""
    m = re.fullmatch(r"label_values\((.*), *(\w+)\)", q)
    if not check(m, "variable query %s is label_values(selector, label)" % q):
        return set()
    res, _ = query(port, "group by (%s) (%s)" % (m.group(2), expand(m.group(1))))
    return {r["metric"].get(m.group(2)) for r in res or []}


def per_gpu(expr):
    """A DCGM query that keeps each GPU's series (no aggregation)."""
    return re.match(r"(increase\(|rate\()?DCGM_FI_", expr) is not None


def check_rules(port):
    """The alert rules on the same Prometheus: every one evaluates without error, reads series
    serve writes, and those the node's faults call for fire with the GPU's labels."""
    with open(RULES) as f:
        text = f.read()
    names = set(re.findall(r"\b(?:DCGM_FI_\w+|gpuvet_\w+)", text))
    have = {r["metric"]["__name__"] for r in query(port, 'group by (__name__) ({__name__=~"DCGM_FI_.*|gpuvet_.*"})')[0]}
    helps = subprocess.run([GPUVET, "serve", "--help-metrics"], capture_output=True, text=True, timeout=30).stdout
    dcgm = {line.split("\t")[0] for line in helps.splitlines()}
    unknown = sorted(n for n in names if n not in have and n not in dcgm and n not in NOT_HERE)
    check(not unknown, "the rules read series serve writes: unknown %s" % unknown)
    firing = []
    deadline = time.monotonic() + 30 * SCALE
    while time.monotonic() < deadline:
        alerts = (api(port, "alerts") or {}).get("alerts", [])
        firing = sorted((a["labels"]["alertname"], a["labels"].get("gpu", ""), a["labels"].get("xid", ""),
                         a["labels"].get("id", ""), a["labels"].get("Hostname", "")) for a in alerts
                        if a["state"] == "firing")
        if len(firing) >= 2:
            break
        time.sleep(1)
    check(firing == [("GpuvetCheckFailing", "", "", "gpu.xid", ""), ("GpuvetXidCritical", "2", "79", "", NODE)],
          "firing on the node: the failing check and GPU 2's Xid 79, nothing else: %s" % firing)
    groups = (api(port, "rules") or {}).get("groups", [])
    rules = [r for g in groups for r in g["rules"]]
    check(len(rules) == len(re.findall(r"^      - alert: ", text, re.M)) and
          all(r.get("health") == "ok" for r in rules),
          "every rule evaluates: %s" % [(r["name"], r.get("health"), r.get("lastError")) for r in rules
                                       if r.get("health") != "ok"])


def main():
    targets, variables = read_dashboard()
    if targets is None:
        return finish()
    prometheus = shutil.which("prometheus")
    if not prometheus:
        print("SKIP: prometheus is not installed (Debian: apt-get install prometheus)")
        return 77
    tmp = tempfile.mkdtemp(prefix="gpuvet-dash-")
    serve = prom = dcgm = None
    try:
        dcgm = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), DcgmExporter)
        threading.Thread(target=dcgm.serve_forever, daemon=True).start()
        scn = os.path.join(tmp, "gpus.scn")
        with open(scn, "w") as f:
            f.write("include %s\n[gpu 0-7]\ngpm_activity = 62.5 58 31.25 40.5 55 0 21 3\n"
                    "violation_power = 200740215123 ns\nviolation_thermal = 1500 ns\n"
                    "[gpu 0]\nprocess = %d 1024MiB python3 train.py\n[gpu 2]\nxid = 79\n"
                    % (os.path.join(FAKES, "scenarios", "h100-sxm-8gpu.scn"), os.getpid()))
        report = os.path.join(tmp, "check.json")
        with open(report, "w") as f:
            json.dump({"schema": "gpuvet.report/1", "checks": [
                {"id": "gpu.xid", "status": "fail"}, {"id": "gpu.ecc_errors", "status": "pass"},
                {"id": "gpu.thermal", "status": "warn"}]}, f)
        serve = Serve(GPUVET, FAKE_LIB, scn, ["--hostname", NODE, "--check-report", report], interval_ms=500)
        prom, web, prom_log = start_prometheus(prometheus, tmp, [("gpuvet", serve.port), ("dcgm", dcgm.server_address[1])],
                                               rule_files=[RULES])
        # Until every query answers (rates need two scrapes, GPM its second round), bounded.
        results = {}
        t0 = time.monotonic()
        deadline = t0 + 60 * SCALE
        while time.monotonic() < deadline and prom.poll() is None:
            try:
                results = {name: query(web, expand(expr)) for name, _, expr in targets}
                # the dcgm-exporter node's rates need two scrapes of it too
                dcgm_ready = all(query(web, on_dcgm_node(expr))[0] for _, _, expr in targets if on_dcgm_exporter(expr))
            except (OSError, ValueError, KeyError, http.client.HTTPException):
                results, dcgm_ready = {}, False
            if results and all(res for res, _ in results.values()) and dcgm_ready:
                break
            time.sleep(1)
        print("Prometheus answered the dashboard's %d queries %.1f s after it started" %
              (len(targets), time.monotonic() - t0))
        for name, _, expr in targets:
            res, err = results.get(name, (None, "no answer"))
            check(res, "%s returns series: %s%s" % (name, expr, " (%s)" % err if err else ""))
            if res and per_gpu(expr):
                gpus = sorted(r["metric"].get("gpu") for r in res)
                check(gpus == [str(i) for i in range(8)] and all(r["metric"].get("Hostname") == NODE for r in res),
                      "%s: the 8 GPUs of %s: %s" % (name, NODE, gpus))
        for name, q in variables:
            want = {NODE, DCGM_NODE} if name == "Hostname" else {str(i) for i in range(8)}
            got = label_values(web, q)
            check(got == want, "variable %s: %s, want %s" % (name, sorted(got), sorted(want)))

        def stat(title):
            res = next((results[n][0] for n, _, _ in targets if n == title + "/A"), None)
            return float(res[0]["value"][1]) if res and len(res) == 1 else None
        check(stat("GPUs up") == 8, "GPUs up: %s" % stat("GPUs up"))
        check(stat("GPUs down") == 0, "GPUs down: %s" % stat("GPUs down"))
        check(stat("Samplers stopped") == 0, "Samplers stopped: %s" % stat("Samplers stopped"))
        check(stat("Failing checks") == 1, "Failing checks: %s" % stat("Failing checks"))
        notpass = results.get("Checks not passing/A", (None,))[0] or []
        check(sorted((r["metric"].get("id"), r["metric"].get("status"), r["metric"].get("Hostname")) for r in notpass)
              == [("gpu.thermal", "warn", NODE), ("gpu.xid", "fail", NODE)],
              "Checks not passing: %s" % [r["metric"] for r in notpass])
        xids = results.get("Xid errors since serve started/A", (None,))[0] or []
        check([(r["metric"].get("gpu"), r["metric"].get("xid"), r["value"][1]) for r in xids] == [("2", "79", "1")],
              "Xid table: %s" % [(r["metric"], r["value"]) for r in xids])
        # The dcgm-exporter node: what its default counters feed returns its 2 GPUs.
        for name, _, expr in targets:
            if not on_dcgm_exporter(expr):
                continue
            res, err = query(web, on_dcgm_node(expr))
            gpus = sorted(r["metric"].get("gpu", "") for r in res or [])
            check(res and (gpus == ["0", "1"] or not per_gpu(expr)),
                  "%s on dcgm-exporter's series: GPUs %s%s" % (name, gpus, " (%s)" % err if err else ""))
        check_rules(web)
        if any(not res for res, _ in results.values()):
            prom_log.seek(0)
            print(prom_log.read()[-2000:])
    finally:
        if prom:
            rc = stop_process(prom)
            check(rc == 0, "prometheus exit %s" % rc)
        if dcgm:
            dcgm.shutdown()
            dcgm.server_close()
        if serve:
            rc, _ = serve.stop(bound=10)
            check(rc == 0, "gpuvet serve exit %s" % rc)
        shutil.rmtree(tmp, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())

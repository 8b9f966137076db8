#!/usr/bin/env python3
"""gpuvet serve against the fake NVML (suite 'golden'); docs/serve.md.

Usage: test_serve.py GPUVET SRC_ROOT FAKE_LIB

Scrapes /metrics with http.client and compares every series dcgm-exporter's dashboards
read (names, labels, DCGM units) with the scenario's values; a GPU given other values
shows them under its own labels. Then: HELP/TYPE for every family; the Accept negotiation
(OpenMetrics for Prometheus' header, text for none, text/plain or a low OpenMetrics q);
/health, 404, 405 and a request with a body; a GPU whose call hangs mid-run (its values
leave, never frozen: gpuvet_gpu_up 0, gpuvet_sampler_up 0, the age grows, /health 503);
SIGTERM and SIGINT stop it with exit 0 within a bound, also with a call stuck in NVML;
Xids from NVML's events as per-code counters and dcgm-exporter's last-Xid gauge;
--check-report's statuses per check id, following a new report, gone for a bad or missing one;
bad --listen and a busy port exit 2 naming it; promtool check metrics when installed.
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

GPUVET, SRC_ROOT, FAKE_LIB = sys.argv[1:4]
FAKES = os.path.join(SRC_ROOT, "tests", "fakes")
SCENARIOS = os.path.join(FAKES, "scenarios")
sys.path.insert(0, FAKES)
import fakeenv  # noqa: E402

SCALE = fakeenv.time_scale()
HOST = socket.gethostname()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
from serve_harness import (PROMETHEUS_ACCEPT, Serve, check_statuses, parse, promtool_lint, scalar,  # noqa: E402
                           scenario_with)


# GPU 3's counters in test_values: NVLink errors on two of its 18 links (dcgm-exporter has
# their sums), the video engines busy, its own energy and PCIe replays.
GPU3_COUNTERS = ("[gpu 3]\nnvlink.2.crc_flit = 1523\nnvlink.2.crc_data = 12\nnvlink.2.replay = 2\n"
                 "nvlink.9.replay = 40\n"
                 "nvlink.2.recovery = 3\nutilization_encoder = 35 %\nutilization_decoder = 71 %\n"
                 "total_energy_consumption = 1234567890123 mJ\npcie_replay_counter = 9\n")
# name: (value of the other GPUs, value of GPU 3), in dcgm-exporter's units (energy in mJ).
COUNTERS = {
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": (0, 9), "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": (60480123457, 1234567890123),
    "DCGM_FI_DEV_ENC_UTIL": (0, 35), "DCGM_FI_DEV_DEC_UTIL": (0, 71),
    "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL": (0, 1523),
    "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL": (0, 12),
    "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL": (0, 42), "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL": (0, 3),
}


def test_values(tmp):
    scn = scenario_with(tmp, "values.scn", "[gpu 3]\ntemperature = 77 C\npower_usage = 412.5 W\nclock_sm = 1980 MHz\n"
                                           "memory_used = 40000 MiB\nmemory_free = 41081 MiB\nutilization_gpu = 93 %\n"
                                           "violation_power = 200740215123 ns\nviolation_thermal = 1500 ns\n"
                                           "violation_sync_boost = 0 ns\n"
                                           + GPU3_COUNTERS)
    s = Serve(GPUVET, FAKE_LIB, scn)
    try:
        status, ctype, body = s.get("/metrics")
        check(status == 200 and ctype == "text/plain; version=0.0.4; charset=utf-8",
              "/metrics: %s %s" % (status, ctype))
        series, types, helps = parse(body)
        want = {  # name: (value of GPUs but 3, value of GPU 3), in dcgm-exporter's units
            "DCGM_FI_DEV_GPU_TEMP": (41, 77), "DCGM_FI_DEV_POWER_USAGE": (69.62, 412.5),
            "DCGM_FI_DEV_SM_CLOCK": (345, 1980), "DCGM_FI_DEV_MEM_CLOCK": (2619, 2619),
            "DCGM_FI_DEV_FB_USED": (0, 40000), "DCGM_FI_DEV_FB_FREE": (81081, 41081),
            "DCGM_FI_DEV_GPU_UTIL": (0, 93), "DCGM_FI_DEV_MEMORY_TEMP": (48, 48),
            "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": (0, 0), "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": (0, 0),
        }
        want.update(COUNTERS)
        for name, (normal, gpu3) in want.items():
            got = series.get(name, {})
            check(sorted(got) == [str(i) for i in range(8)], "%s: GPUs %s" % (name, sorted(got)))
            for gpu, (labels, value) in got.items():
                expect = gpu3 if gpu == "3" else normal
                check(abs(value - expect) < 1e-9, "%s{gpu=%s} = %s, want %s" % (name, gpu, value, expect))
                check(list(labels) == ["gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname",
                                       "DCGM_FI_DRIVER_VERSION"],
                      "%s: labels %s (dcgm-exporter's, in its order)" % (name, list(labels)))
                check(labels["DCGM_FI_DRIVER_VERSION"] == "550.54.15",
                      "%s{gpu=%s}: the scenario's driver version: %s" % (name, gpu, labels))
                check(labels["modelName"] == "NVIDIA H100 80GB HBM3" and labels["Hostname"] == HOST
                      and labels["device"] == "nvidia" + gpu and re.fullmatch(r"GPU-[0-9a-f-]{36}", labels["UUID"])
                      and re.fullmatch(r"[0-9A-F]{8}:[0-9A-F]{2}:[0-9A-F]{2}\.[0-9A-F]", labels["pci_bus_id"]),
                      "%s{gpu=%s}: labels %s" % (name, gpu, labels))
            check(name in helps and types.get(name) in ("gauge", "counter"), "%s: HELP/TYPE missing" % name)
        check(types.get("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL") == "counter", "ECC counter typed %s" %
              types.get("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"))
        # DCGM counts the violation times in ns (dcgm_fields.h: "Power Violation time in ns",
        # since DCGM 4.1; dcgm-exporter's counters say "(in ns)"), as NVML does: the scenario's
        # values come through whole. Only GPU 3 has them (NVML answers NOT_SUPPORTED elsewhere).
        for name, ns in (("DCGM_FI_DEV_POWER_VIOLATION", 200740215123), ("DCGM_FI_DEV_THERMAL_VIOLATION", 1500),
                         ("DCGM_FI_DEV_SYNC_BOOST_VIOLATION", 0)):
            got = series.get(name, {}).get("3")
            check(got is not None and got[1] == ns and types.get(name) == "counter",
                  "%s{gpu=3} = %s, want %d ns (a counter)" % (name, got and got[1], ns))
        for name in COUNTERS:
            want_type = "gauge" if name.endswith("_UTIL") else "counter"
            check(types.get(name) == want_type, "%s typed %s, not %s" % (name, types.get(name), want_type))
        for name in series:
            check(name in types and name in helps, "%s: a sample without HELP/TYPE" % name)
        check(all(v == 1 for _, v in series.get("gpuvet_gpu_up", {}).values()) and
              len(series.get("gpuvet_gpu_up", {})) == 8, "gpuvet_gpu_up: %s" % series.get("gpuvet_gpu_up"))
        # The driver version is dcgm-exporter's label: gpuvet's own series keep the GPU's labels.
        own = [labels for name in ("gpuvet_gpu_up",) for labels, _ in series.get(name, {}).values()]
        check(own and all("DCGM_FI_DRIVER_VERSION" not in labels for labels in own),
              "no driver version label on gpuvet_gpu_up: %s" % own[:1])
        check(scalar(body, "gpuvet_sampler_up") == 1, "gpuvet_sampler_up not 1")
        age = scalar(body, "gpuvet_sample_age_seconds")
        check(age is not None and 0 <= age < 5 * SCALE, "gpuvet_sample_age_seconds %s" % age)
        check(body.endswith("\n") and "# EOF" not in body, "text body: ends badly or has # EOF")
        # The same GPUs in query's CSV: one registry, two writers.
        env = fakeenv.gpuvet_env(scn, {"GPUVET_NVML_LIB": FAKE_LIB})
        q = subprocess.run([GPUVET, "query", "--query-gpu=index,uuid,temperature.gpu", "--format=csv,noheader,nounits"],
                           env=env, capture_output=True, text=True, timeout=30 * SCALE)
        for row in q.stdout.splitlines():
            idx, uuid, temp = [x.strip() for x in row.split(",")]
            labels, value = series["DCGM_FI_DEV_GPU_TEMP"][idx]
            check(labels["UUID"] == uuid and value == float(temp), "GPU %s: query says %s %s, serve %s %s" %
                  (idx, uuid, temp, labels["UUID"], value))

        # Accept negotiation
        for accept, om in ((PROMETHEUS_ACCEPT, True), (None, False), ("text/plain;version=0.0.4", False),
                           ("application/openmetrics-text;q=0.2,text/plain", False),
                           ("application/openmetrics-text;version=1.0.0", True),
                           ("application/openmetrics-text;q=0", False), ("garbage;;;q=zz,,", False)):
            status, ctype, obody = s.get("/metrics", {"Accept": accept} if accept else {})
            is_om = ctype == "application/openmetrics-text; version=1.0.0; charset=utf-8"
            check(status == 200 and is_om == om, "Accept %r: %s" % (accept, ctype))
            check(obody.endswith("# EOF\n") == om, "Accept %r: # EOF %s" % (accept, "missing" if om else "in text"))
            if om:
                oseries, otypes, _ = parse(obody)
                check(otypes.get("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL") == "unknown",
                      "OpenMetrics: DCGM counter typed %s, not unknown" % otypes.get("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"))
                check(oseries.get("DCGM_FI_DEV_GPU_TEMP", {}).get("3", (0, 0))[1] == 77, "OpenMetrics: GPU 3 temp")

        status, _, hbody = s.get("/health")
        check(status == 200 and hbody == "ok\n", "/health: %s %r" % (status, hbody))
        status, _, _ = s.get("/nope")
        check(status == 404, "/nope: %s" % status)
        status, _, _ = s.get("/metrics", method="POST", body="x" * 1000)
        check(status == 405, "POST /metrics: %s" % status)
        status, _, body2 = s.get("/metrics", method="GET", body="y" * 5000)
        check(status == 200 and "DCGM_FI_DEV_GPU_TEMP" in body2, "GET with a body: %s" % status)

        promtool_lint(body, "8 GPUs' body")
    finally:
        rc, took = s.stop(signal.SIGTERM)
    check(rc == 0, "SIGTERM: exit %s; stderr %r" % (rc, s.stderr()[-500:]))
    print("values: SIGTERM exit %s in %.2f s" % (rc, took))


def test_counters_absent(tmp):
    """NVML's NOT_SUPPORTED and a failing call give no sample, never a zero: an L40S (no
    NVLink, no energy counter in its capture) and injected errors on GPUs of the H100s."""
    s = Serve(GPUVET, FAKE_LIB, os.path.join(SCENARIOS, "captured-l40s.scn"))
    try:
        series, _, _ = parse(s.get("/metrics")[2])
    finally:
        s.stop()
    nvlink = [n for n in series if n.startswith("DCGM_FI_DEV_NVLINK_")]
    check(not nvlink, "L40S (NVLink NOT_SUPPORTED): %s exported" % nvlink)
    check("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" not in series, "L40S: energy exported with no reading")
    check(sorted(series.get("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", {})) == ["0"] and
          sorted(series.get("DCGM_FI_DEV_ENC_UTIL", {})) == ["0"],
          "L40S: PCIe replays and encoder %s %s" % (series.get("DCGM_FI_DEV_PCIE_REPLAY_COUNTER"),
                                                     series.get("DCGM_FI_DEV_ENC_UTIL")))
    # GPU 3 counts NVLink errors, so its links are asked one by one, and the call fails there;
    # GPU 5 has lost its energy counter and GPU 6 its PCIe replay counter; GPU 2 has no NVLink.
    scn = scenario_with(tmp, "faults.scn", GPU3_COUNTERS +
                        "\n[gpu 2]\nnvlink_count = 0\n"
                        "fault nvmlDeviceGetNvLinkErrorCounter 3 NVML_ERROR_UNKNOWN always\n"
                        "fault nvmlDeviceGetTotalEnergyConsumption 5 NVML_ERROR_GPU_IS_LOST always\n"
                        "fault nvmlDeviceGetFieldValues 6 NVML_ERROR_NOT_SUPPORTED always\n"
                        "fault nvmlDeviceGetPcieReplayCounter 6 NVML_ERROR_NO_PERMISSION always\n")
    s = Serve(GPUVET, FAKE_LIB, scn)
    try:
        series, _, _ = parse(s.get("/metrics")[2])
    finally:
        s.stop()
    for name in COUNTERS:
        missing = {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": ["5"], "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": ["6"]}.get(
            name, ["2", "3"] if name.startswith("DCGM_FI_DEV_NVLINK_") else [])
        want = sorted(set(str(i) for i in range(8)) - set(missing))
        check(sorted(series.get(name, {})) == want, "faults: %s on GPUs %s, want %s" %
              (name, sorted(series.get(name, {})), want))
    print("counters absent where NVML has none: L40S and %d injected faults" % 4)


def test_hang(tmp):
    # GPU 1's temperature call never returns from the 4th round on (3 calls answer per GPU 1).
    scn = scenario_with(tmp, "hang.scn", "hang nvmlDeviceGetTemperature 1 after=3\n")
    s = Serve(GPUVET, FAKE_LIB, scn,
              ["--nvml-call-timeout-ms", str(int(300 * SCALE)), "--stale-after-ms", str(int(5000 * SCALE))])
    try:
        deadline = time.monotonic() + 20 * SCALE
        body = ""
        while time.monotonic() < deadline:
            _, _, body = s.get("/metrics")
            if scalar(body, "gpuvet_sampler_up") == 0:
                break
            time.sleep(0.1)
        series, _, _ = parse(body)
        check(scalar(body, "gpuvet_sampler_up") == 0, "hang: gpuvet_sampler_up still %s" %
              scalar(body, "gpuvet_sampler_up"))
        up = {g: v for g, (_, v) in series.get("gpuvet_gpu_up", {}).items()}
        check(up.get("1") == 0 and len(up) == 8, "hang: gpuvet_gpu_up %s" % up)
        check(not any(n.startswith("DCGM_") for n in series),
              "hang: values of a stale round still served: %s" % sorted(n for n in series if n.startswith("DCGM_")))
        age1 = scalar(body, "gpuvet_sample_age_seconds")
        time.sleep(0.5)
        status, _, body = s.get("/metrics")
        age2 = scalar(body, "gpuvet_sample_age_seconds")
        check(status == 200 and age1 is not None and age2 is not None and age2 > age1,
              "hang: sample age %s then %s (should grow)" % (age1, age2))
        status, _, hbody = s.get("/health")
        check(status == 503 and "never returned" in hbody, "hang: /health %s %r" % (status, hbody))
        check("no longer read (nvmlDeviceGetTemperature on GPU 1 did not return within" in s.stderr(),
              "hang: not said on stderr, naming the call and its GPU: %r" % s.stderr()[-400:])
    finally:
        rc, took = s.stop(signal.SIGINT)
    check(rc == 0, "hang: SIGINT exit %s; stderr %r" % (rc, s.stderr()[-500:]))
    print("hang: SIGINT exit %s in %.2f s" % (rc, took))


def test_stale_before_hang(tmp):
    # Slow rounds (each temperature call 600 ms) with a stale bound of 300 ms: values leave
    # while the sampler still runs, and come back with fresh rounds never.
    scn = scenario_with(tmp, "slow.scn", "latency nvmlDeviceGetTemperature 600\n")
    s = Serve(GPUVET, FAKE_LIB, scn, ["--stale-after-ms", "300", "--nvml-call-timeout-ms", str(int(5000 * SCALE))])
    try:
        time.sleep(1.0)
        status, _, body = s.get("/metrics")
        series, _, _ = parse(body)
        check(status == 200 and scalar(body, "gpuvet_sampler_up") == 1, "slow: sampler_up %s" %
              scalar(body, "gpuvet_sampler_up"))
        check("DCGM_FI_DEV_GPU_TEMP" not in series and all(v == 0 for _, v in series.get("gpuvet_gpu_up", {}).values()),
              "slow: a stale round's values served")
        status, _, hbody = s.get("/health")
        check(status == 503 and "stale" in hbody, "slow: /health %s %r" % (status, hbody))
    finally:
        rc, _ = s.stop(signal.SIGTERM)
    check(rc == 0, "slow: SIGTERM exit %s" % rc)


def test_xids(tmp):
    # Xids delivered by NVML's events: GPU 2 79, 48, 79; GPU 5 31 (tests/fakes/README.md, "xid").
    scn = scenario_with(tmp, "xids.scn", "[gpu 2]\nxid = 79\nxid = 48\nxid = 79\n[gpu 5]\nxid = 31\n")
    s = Serve(GPUVET, FAKE_LIB, scn)
    try:
        want = {("2", "79"): 2, ("2", "48"): 1, ("5", "31"): 1}
        deadline = time.monotonic() + 20 * SCALE
        got = {}
        while time.monotonic() < deadline:
            _, _, body = s.get("/metrics")
            got = {}
            for m in re.finditer(r'^gpuvet_xid_errors_total\{gpu="(\d+)",.*,xid="(\d+)"\} (\S+)$', body, re.M):
                got[(m.group(1), m.group(2))] = float(m.group(3))
            if got == want:
                break
            time.sleep(0.1)
        check(got == want, "Xid counters %s, want %s" % (got, want))
        series, types, _ = parse(body)
        last = {g: v for g, (_, v) in series.get("DCGM_FI_DEV_XID_ERRORS", {}).items()}
        check(last == {str(i): {2: 79, 5: 31}.get(i, 0) for i in range(8)}, "DCGM_FI_DEV_XID_ERRORS %s" % last)
        check(types.get("gpuvet_xid_errors_total") == "counter", "text: Xid counter typed %s" %
              types.get("gpuvet_xid_errors_total"))
        _, _, obody = s.get("/metrics", {"Accept": PROMETHEUS_ACCEPT})
        check("# TYPE gpuvet_xid_errors counter\n" in obody and 'gpuvet_xid_errors_total{gpu="2"' in obody,
              "OpenMetrics: the Xid family is not gpuvet_xid_errors with _total samples")
    finally:
        rc, _ = s.stop(signal.SIGTERM)
    check(rc == 0, "xids: SIGTERM exit %s" % rc)


def test_check_report(tmp):
    report = json.load(open(os.path.join(SRC_ROOT, "tests", "golden", "expected", "dgx-h100.json")))
    # One subject of a check that has several fails: the id fails (worst over its subjects).
    ids = [c["id"] for c in report["checks"]]
    multi = next(i for i in ids if ids.count(i) > 1)
    first = next(c for c in report["checks"] if c["id"] == multi)
    first["status"] = "fail"
    want = {}
    order = ["skip", "pass", "warn", "fail", "error"]
    for c in report["checks"]:
        if c["id"] not in want or order.index(c["status"]) > order.index(want[c["id"]]):
            want[c["id"]] = c["status"]
    path = os.path.join(tmp, "check.json")

    def write(text):
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)

    write(json.dumps(report))
    s = Serve(GPUVET, FAKE_LIB, os.path.join(SCENARIOS, "h100-sxm-8gpu.scn"), ["--check-report", path])

    def wait_for(pred, what):
        deadline = time.monotonic() + 10 * SCALE
        body = ""
        while time.monotonic() < deadline:
            _, _, body = s.get("/metrics")
            if pred(body):
                return body
            time.sleep(0.1)
        check(False, what)
        return body

    try:
        body = wait_for(lambda b: scalar(b, "gpuvet_check_report_up") == 1, "check report: not up")
        got = check_statuses(body)
        check(got == want, "check report: %d ids, %d differ from the report (e.g. %s)" %
              (len(got), sum(1 for k in want if got.get(k) != want[k]),
               [(k, got.get(k), want[k]) for k in want if got.get(k) != want[k]][:3]))
        check(got.get(multi) == "fail",
              "check report: %s (one of its subjects failing) is %s" % (multi, got.get(multi)))
        # A new report replaces it: the statuses follow.
        report["checks"] = [dict(c, status="warn") if c["id"] == ids[0] else c for c in report["checks"]]
        write(json.dumps(report))
        body = wait_for(lambda b: check_statuses(b).get(ids[0]) == "warn", "check report: the new report not read")
        # Garbage, then a JSON that is not a check report, then no file: no statuses, never the old ones.
        for text, what, said in (("garbage", "garbage", "not JSON"),
                                 ('{"schema": "gpuvet.fleet/1", "checks": []}', "another schema", "gpuvet.report/1"),
                                 ('{"schema": "gpuvet.report/1", "checks": [{"id": "x", "status": "bad"}]}',
                                  "bad status", "status is not"),
                                 (None, "no file", "not there")):
            if text is None:
                os.unlink(path)
            else:
                write(text)
            deadline = time.monotonic() + 10 * SCALE
            while said not in s.stderr() and time.monotonic() < deadline:
                time.sleep(0.05)
            check(said in s.stderr(), "check report %s: not said on stderr (%r)" % (what, s.stderr()[-300:]))
            _, _, body = s.get("/metrics")
            check(scalar(body, "gpuvet_check_report_up") == 0, "check report %s: still up" % what)
            check("gpuvet_check_status{" not in body, "check report %s: old statuses still served" % what)
    finally:
        rc, _ = s.stop(signal.SIGTERM)
    check(rc == 0, "check report: SIGTERM exit %s" % rc)


def test_hostname():
    """--hostname: the node's name in a pod (whose own host name is the pod's) on every series."""
    s = Serve(GPUVET, FAKE_LIB, os.path.join(SCENARIOS, "h100-sxm-8gpu.scn"), ["--hostname", "gpu-node-7"])
    try:
        _, _, body = s.get("/metrics")
        hosts = {labels["Hostname"] for family in parse(body)[0].values() for labels, _ in family.values()
                 if "Hostname" in labels}
        check(hosts == {"gpu-node-7"}, "--hostname gpu-node-7: Hostname labels %s" % sorted(hosts))
    finally:
        s.stop()
    env = fakeenv.gpuvet_env(os.path.join(SCENARIOS, "h100-sxm-8gpu.scn"), {"GPUVET_NVML_LIB": FAKE_LIB})
    r = subprocess.run([GPUVET, "serve", "--listen", "127.0.0.1:0", "--hostname", ""], env=env, capture_output=True,
                       text=True, timeout=30 * SCALE)
    check(r.returncode == 2 and "--hostname" in r.stderr, "--hostname '': rc %d %r" % (r.returncode, r.stderr))


def test_bad_listen():
    env = fakeenv.gpuvet_env(os.path.join(SCENARIOS, "h100-sxm-8gpu.scn"), {"GPUVET_NVML_LIB": FAKE_LIB})
    for spec in ("9400", "1.2.3.4.5:80", "127.0.0.1:99999", "[::1]9400"):
        r = subprocess.run([GPUVET, "serve", "--listen", spec], env=env, capture_output=True, text=True,
                           timeout=30 * SCALE)
        check(r.returncode == 2 and spec in r.stderr, "--listen %s: rc %d %r" % (spec, r.returncode, r.stderr))
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    spec = "127.0.0.1:%d" % busy.getsockname()[1]
    r = subprocess.run([GPUVET, "serve", "--listen", spec], env=env, capture_output=True, text=True,
                       timeout=30 * SCALE)
    check(r.returncode == 2 and spec in r.stderr and "in use" in r.stderr, "busy port: rc %d %r" %
          (r.returncode, r.stderr))
    busy.close()
    r = subprocess.run([GPUVET, "serve", "--listen", "127.0.0.1:0"],
                       env=fakeenv.gpuvet_env(os.path.join(SCENARIOS, "driver-not-loaded.scn"),
                                              {"GPUVET_NVML_LIB": FAKE_LIB}),
                       capture_output=True, text=True, timeout=60 * SCALE)
    check(r.returncode == 1 and "nvmlInit" in r.stderr, "no driver: rc %d %r" % (r.returncode, r.stderr))


def main():
    with tempfile.TemporaryDirectory(prefix="gpuvet-serve-") as tmp:
        t0 = time.monotonic()
        test_values(tmp)
        test_counters_absent(tmp)
        test_hang(tmp)
        test_xids(tmp)
        test_check_report(tmp)
        test_stale_before_hang(tmp)
        test_hostname()
        test_bad_listen()
        print("%.1f s" % (time.monotonic() - t0))
    return finish()


if __name__ == "__main__":
    sys.exit(main())

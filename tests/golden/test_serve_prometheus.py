#!/usr/bin/env python3
"""A real Prometheus scrapes gpuvet serve (suite 'golden'); docs/serve.md.

Usage: test_serve_prometheus.py GPUVET SRC_ROOT FAKE_LIB

gpuvet serve runs on the fake NVML's 8x H100 scenario (GPU 5 at 66 C) on a free port;
Prometheus (Debian's, 2.42 here) is started with a configuration of its own in a temporary
directory (scrape_interval 1s, that one target, its storage there, its web API on another
free port) and torn down after. Its query API must return DCGM_FI_DEV_GPU_TEMP for the 8
GPUs with dcgm-exporter's labels (plus job and instance) and the scenario's values, the
target up, a DCGM counter that OpenMetrics declares "unknown" ingested, and gpuvet_gpu_up
1 for every GPU. Prometheus asks for OpenMetrics first, so this is the OpenMetrics body.
GPU 0 runs a real process of this machine whose name is not UTF-8 (prctl PR_SET_NAME, as any
user may): Prometheus rejects a scrape over one invalid label value, so the target must stay
up and the process's series carry U+FFFD in its place (issue 38, N1).
A second serve (job "lost") sees the same 8 GPUs until nvmlDeviceGetCount_v2 starts failing:
Prometheus must then hold gpuvet_gpu_up 0 for each of them under the UUID and bus id it had,
so that the documented gpuvet_gpu_up == 0 alert fires (N10, N16).
Exits 77 (skip) when prometheus is not installed.
"""
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

GPUVET, SRC_ROOT, FAKE_LIB = sys.argv[1:4]
FAKES = os.path.join(SRC_ROOT, "tests", "fakes")
sys.path.insert(0, FAKES)
import fakeenv  # noqa: E402

SCALE = fakeenv.time_scale()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
from serve_harness import Serve, prometheus_query, start_prometheus, stop_process  # noqa: E402


def query(port, expr):
    return prometheus_query(port, expr)[0]


def main():
    prometheus = shutil.which("prometheus")
    if not prometheus:
        print("SKIP: prometheus is not installed (Debian: apt-get install prometheus)")
        return 77
    tmp = tempfile.mkdtemp(prefix="gpuvet-prom-")
    serve = prom = lost = None
    # A process named with bytes that are not UTF-8, on GPU 0.
    odd = subprocess.Popen([sys.executable, "-c", "import ctypes, time; "
                            "ctypes.CDLL(None).prctl(15, b'\\xff\\xfeevil', 0, 0, 0); time.sleep(3600)"])
    try:
        scn = os.path.join(tmp, "gpus.scn")
        with open(scn, "w") as f:
            f.write("include %s\n[gpu 0-7]\ngpm_activity = 62.5 58 31.25 40.5 55 0 21 3\n[gpu 5]\ntemperature = 66 C\n"
                    "[gpu 0]\nprocess = %d 1024MiB odd\n" % (os.path.join(FAKES, "scenarios", "h100-sxm-8gpu.scn"), odd.pid))
        deadline = time.monotonic() + 10 * SCALE
        while time.monotonic() < deadline:  # the name is set once the interpreter has started
            with open("/proc/%d/comm" % odd.pid, "rb") as f:
                if f.read().startswith(b"\xff\xfe"):
                    break
            time.sleep(0.05)
        serve = Serve(GPUVET, FAKE_LIB, scn, interval_ms=500)
        port = serve.port
        # Four rounds count the GPUs, then the count fails for good.
        lost_scn = os.path.join(tmp, "lost.scn")
        with open(lost_scn, "w") as f:
            f.write("include %s\nfault nvmlDeviceGetCount_v2 * UNKNOWN after=4\n" %
                    os.path.join(FAKES, "scenarios", "h100-sxm-8gpu.scn"))
        lost = Serve(GPUVET, FAKE_LIB, lost_scn, interval_ms=500)
        prom, web, prom_log = start_prometheus(prometheus, tmp, [("gpuvet", port), ("lost", lost.port)])
        t0 = time.monotonic()
        temps = None
        deadline = time.monotonic() + 60 * SCALE
        while time.monotonic() < deadline and prom.poll() is None:
            try:
                temps = query(web, 'DCGM_FI_DEV_GPU_TEMP{job="gpuvet"}')
            except (OSError, ValueError, KeyError, http.client.HTTPException):
                temps = None
            if temps and len(temps) == 8:
                break
            time.sleep(0.5)
        if not check(temps and len(temps) == 8, "Prometheus has %s series of DCGM_FI_DEV_GPU_TEMP" %
                     (len(temps) if temps else "no")):
            prom_log.seek(0)
            print(prom_log.read()[-2000:])
            return 1
        print("Prometheus ingested the 8 GPUs %.1f s after it started" % (time.monotonic() - t0))
        host = socket.gethostname()
        for r in temps:
            m = r["metric"]
            gpu = m.get("gpu")
            check(set(m) == {"__name__", "gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname",
                             "DCGM_FI_DRIVER_VERSION", "job", "instance"}, "GPU %s: labels %s" % (gpu, sorted(m)))
            check(m.get("DCGM_FI_DRIVER_VERSION") == "550.54.15", "GPU %s: driver version %s" % (gpu, m))
            check(m.get("modelName") == "NVIDIA H100 80GB HBM3" and m.get("Hostname") == host
                  and m.get("device") == "nvidia%s" % gpu and m.get("job") == "gpuvet"
                  and m.get("instance") == "127.0.0.1:%d" % port, "GPU %s: labels %s" % (gpu, m))
            check(float(r["value"][1]) == (66 if gpu == "5" else 41), "GPU %s: %s C" % (gpu, r["value"][1]))
        up = query(web, 'up{job="gpuvet"}')
        check(up and up[0]["value"][1] == "1", "up{job=gpuvet}: %s" % up)
        dbe = query(web, 'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{job="gpuvet"}')
        check(dbe and len(dbe) == 8 and all(x["value"][1] == "0" for x in dbe), "DBE counter: %s" % dbe)
        fb = query(web, 'DCGM_FI_DEV_FB_FREE{job="gpuvet",gpu="0"}')
        check(fb and fb[0]["value"][1] == "81081", "FB_FREE of GPU 0: %s" % fb)
        gup = query(web, 'sum(gpuvet_gpu_up{job="gpuvet"})')
        check(gup and gup[0]["value"][1] == "8", "sum(gpuvet_gpu_up): %s" % gup)
        # The tensor-core panel of NVIDIA's dcgm-exporter dashboard: GPM's rate from the
        # second round on, so it may take a scrape more than the temperatures.
        tensor = None
        deadline = time.monotonic() + 20 * SCALE
        while time.monotonic() < deadline:
            tensor = query(web, 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{job="gpuvet"}')
            if tensor and len(tensor) == 8:
                break
            time.sleep(0.5)
        check(tensor and len(tensor) == 8 and all(abs(float(x["value"][1]) - 0.405) < 1e-12 for x in tensor),
              "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE: %s" % tensor)
        mem = query(web, 'gpuvet_process_gpu_memory_bytes{pid="%d"}' % odd.pid)
        check(mem and len(mem) == 1 and mem[0]["metric"].get("process") == "\ufffd\ufffdevil"
              and mem[0]["value"][1] == str(1024 << 20),
              "the process named with invalid UTF-8 is ingested with U+FFFD: %s" % mem)
        up = query(web, 'up{job="gpuvet"}')
        check(up and up[0]["value"][1] == "1", "up{job=gpuvet} with that process: %s" % up)
        # The GPUs NVML no longer counts: down, under the labels they had.
        want = {(r["metric"]["UUID"], r["metric"]["pci_bus_id"]) for r in temps}
        down = None
        deadline = time.monotonic() + 30 * SCALE
        while time.monotonic() < deadline:
            down = query(web, 'gpuvet_gpu_up{job="lost"} == 0')
            if down and len(down) == 8:
                break
            time.sleep(0.5)
        got = {(r["metric"].get("UUID"), r["metric"].get("pci_bus_id")) for r in down or []}
        check(down and len(down) == 8 and got == want,
              "count failing: gpuvet_gpu_up 0 for the 8 GPUs under their UUID and bus id: %s" % sorted(got))
        up = query(web, 'up{job="lost"}')
        check(up and up[0]["value"][1] == "1", "up{job=lost}: %s" % up)
    finally:
        odd.kill()
        odd.wait()
        if prom:
            rc = stop_process(prom)
            check(rc == 0, "prometheus exit %s" % rc)
        for s in (serve, lost):
            if s:
                rc, _ = s.stop(bound=10)
                check(rc == 0, "gpuvet serve exit %s" % rc)
        shutil.rmtree(tmp, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())

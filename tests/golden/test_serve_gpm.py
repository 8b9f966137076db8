#!/usr/bin/env python3
"""gpuvet serve's DCGM profiling series from NVML's GPM (suite 'golden'); docs/serve.md
"Profiling series".

Usage: test_serve_gpm.py GPUVET SRC_ROOT FAKE_LIB

Against the fake NVML, whose GPM answers from the scenario's gpm_activity (percent) and
gpm_traffic (MiB/s) and refuses samples given in the wrong order, of two GPUs, freed or
never taken:
- the twelve DCGM_FI_PROF_* series of every GPU with GPM, in DCGM's units (a ratio 0-1,
  bytes per second), with dcgm-exporter's labels in its order, typed gauge;
- none in the first round (two samples make a window), then every round;
- a GPU without GPM (the scenario gives no values: an Ampere board) and a metric the GPU
  lacks ("-") have no series, never a zero; a failing nvmlGpmMetricsGet or nvmlGpmSampleGet
  on one GPU takes only that GPU's series away, and gpuvet_gpu_up stays 1 (an error is no
  hang);
- a rate that changes between rounds (FAKE_NVML_SCENARIO_LATER) is followed, never frozen;
- a GPM call that never returns is a hang like any: gpuvet_sampler_up 0, the series gone,
  SIGTERM still exits 0;
- every sample buffer gpuvet allocated is freed by the time it stops (the fake names the
  ones left at nvmlShutdown);
- promtool check metrics finds nothing beyond dcgm-exporter's own naming.
"""
import os
import signal
import socket
import sys
import tempfile
import time

GPUVET, SRC_ROOT, FAKE_LIB = sys.argv[1:4]
FAKES = os.path.join(SRC_ROOT, "tests", "fakes")
sys.path.insert(0, FAKES)
import fakeenv  # noqa: E402

SCALE = fakeenv.time_scale()
HOST = socket.gethostname()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
from serve_harness import Serve, parse, promtool_lint, scalar, scenario_with  # noqa: E402

LABELS = ["gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "DCGM_FI_DRIVER_VERSION"]
MIB = 1048576
# The DCGM series in gpm_activity's order (percent in the scenario, a ratio exported) ...
ACTIVITY = ["DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_SM_OCCUPANCY",
            "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE", "DCGM_FI_PROF_PIPE_FP64_ACTIVE",
            "DCGM_FI_PROF_PIPE_FP32_ACTIVE", "DCGM_FI_PROF_PIPE_FP16_ACTIVE"]
# ... and in gpm_traffic's (MiB/s in the scenario, bytes/s exported).
TRAFFIC = ["DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_PROF_PCIE_RX_BYTES", "DCGM_FI_PROF_NVLINK_RX_BYTES",
           "DCGM_FI_PROF_NVLINK_TX_BYTES"]
PROF = ACTIVITY + TRAFFIC

BUSY = "gpm_activity = 62.5 58 31.25 40.5 55 0.75 21 3\ngpm_traffic = 1024 2048.5 40960 38912\n"


def expected(activity, traffic):
    """{series: value} in DCGM's units; a "-" leaves the series out."""
    want = {}
    for name, v in zip(ACTIVITY, activity.split()):
        if v != "-":
            want[name] = float(v) / 100
    for name, v in zip(TRAFFIC, traffic.split()):
        if v != "-":
            want[name] = float(v) * MIB
    return want


def busy_serve(tmp, name, text=""):
    """gpuvet serve on the 8x H100 with BUSY's rates and text over them, a round every
    150 ms, and its first /metrics body that has profiling series."""
    s = Serve(GPUVET, FAKE_LIB, scenario_with(tmp, name, "[gpu 0-7]\n" + BUSY + text), interval_ms=int(150 * SCALE))
    try:
        return s, wait_for(s, lambda b: "DCGM_FI_PROF_SM_ACTIVE{" in b, "%s: a round with GPM values" % name)
    except BaseException:
        s.stop()
        raise


def wait_for(s, pred, what, seconds=10):
    """The first /metrics body pred accepts, polling; the last one (and a failure) if none does."""
    deadline = time.monotonic() + seconds * SCALE
    body = ""
    while time.monotonic() < deadline:
        body = s.get("/metrics")[2]
        if pred(body):
            return body
        time.sleep(0.05)
    check(False, "%s: not seen within %.0f s" % (what, seconds * SCALE))
    return body


def stop_clean(s, what):
    rc, took = s.stop(signal.SIGTERM)
    err = s.stderr()
    check(rc == 0, "%s: SIGTERM exit %s; stderr %r" % (what, rc, err[-800:]))
    check("GPM samples not freed" not in err, "%s: %s" % (what, err[-800:]))
    return rc, took


def test_values(tmp):
    """Every GPU's series against the scenario; GPU 2 without GPM, GPU 5 without NVLink."""
    s, body = busy_serve(tmp, "values.scn", "[gpu 2]\ngpm_activity = N/A\ngpm_traffic = N/A\n"
                         "[gpu 5]\ngpm_activity = 10 9 8 7 6 5 4 3\ngpm_traffic = 100 200 - -\n")
    try:
        series, types, helps = parse(body)
        for gpu in map(str, range(8)):
            if gpu == "2":
                want = {}
            elif gpu == "5":
                want = expected("10 9 8 7 6 5 4 3", "100 200 - -")
            else:
                want = expected("62.5 58 31.25 40.5 55 0.75 21 3", "1024 2048.5 40960 38912")
            got = {name: series[name][gpu] for name in PROF if gpu in series.get(name, {})}
            check(sorted(got) == sorted(want), "GPU %s: series %s, want %s" % (gpu, sorted(got), sorted(want)))
            for name, (labels, value) in got.items():
                w = want.get(name)
                check(w is not None and abs(value - w) <= 1e-12 * max(1.0, w),
                      "%s{gpu=%s} = %r, want %r" % (name, gpu, value, w))
                check(list(labels) == LABELS and labels["Hostname"] == HOST and labels["device"] == "nvidia" + gpu,
                      "%s{gpu=%s}: labels %s" % (name, gpu, labels))
        for name in PROF:
            check(types.get(name) == "gauge" and name in helps, "%s: TYPE %s, HELP %s" %
                  (name, types.get(name), name in helps))
        up = series.get("gpuvet_gpu_up", {})
        check(len(up) == 8 and all(v == 1 for _, v in up.values()), "gpuvet_gpu_up: %s" % up)
        promtool_lint(body, "body with the profiling series")
    finally:
        stop_clean(s, "values")
    print("values: 12 series on 6 GPUs, 8 on GPU 5 (no NVLink), none on GPU 2 (no GPM)")


def test_first_round(tmp):
    """One sample is no window: the first round has no profiling series; the second has."""
    scn = scenario_with(tmp, "first.scn", "[gpu 0-7]\n" + BUSY)
    s = Serve(GPUVET, FAKE_LIB, scn, interval_ms=int(1500 * SCALE))
    try:
        body = wait_for(s, lambda b: scalar(b, "gpuvet_sampler_up") == 1, "the first round")
        prof_lines = body.count("DCGM_FI_PROF_")
        check("DCGM_FI_DEV_GPU_TEMP{" in body and prof_lines == 0,
              "first round: %d profiling lines (want none before a second sample)" % prof_lines)
        body = wait_for(s, lambda b: "DCGM_FI_PROF_GR_ENGINE_ACTIVE{" in b, "the second round", 10)
        check(len(parse(body)[0].get("DCGM_FI_PROF_GR_ENGINE_ACTIVE", {})) == 8, "second round: not 8 GPUs")
    finally:
        stop_clean(s, "first round")
    print("first round: no profiling series; the second: all 8 GPUs")


def test_errors(tmp):
    """An error in one GPU's GPM calls takes only its series away; the GPU stays up."""
    s, body = busy_serve(tmp, "errors.scn", "fault nvmlGpmMetricsGet 4 NVML_ERROR_UNKNOWN always\n"
                         "fault nvmlGpmSampleGet 6 NVML_ERROR_GPU_IS_LOST always\n")
    try:
        time.sleep(0.4 * SCALE)  # a few rounds more: the failing GPUs fail in each
        body = s.get("/metrics")[2]
        series = parse(body)[0]
        for name in PROF:
            check(sorted(series.get(name, {})) == ["0", "1", "2", "3", "5", "7"],
                  "errors: %s on GPUs %s" % (name, sorted(series.get(name, {}))))
        up = series.get("gpuvet_gpu_up", {})
        check(len(up) == 8 and all(v == 1 for _, v in up.values()), "errors: gpuvet_gpu_up %s" % up)
    finally:
        stop_clean(s, "errors")
    print("errors: GPUs 4 (nvmlGpmMetricsGet) and 6 (nvmlGpmSampleGet) without series, all GPUs up")


def test_follows_changes(tmp):
    """Rates that change while serve runs are exported as they change (never the first)."""
    later = scenario_with(tmp, "later.scn", "[gpu 0-7]\ngpm_activity = 5 5 5 5 5 5 5 5\ngpm_traffic = 1 1 1 1\n")
    scn = scenario_with(tmp, "before.scn", "[gpu 0-7]\n" + BUSY)
    s = Serve(GPUVET, FAKE_LIB, scn, interval_ms=int(150 * SCALE),
              env={"FAKE_NVML_SCENARIO_LATER": "%s:%d" % (later, int(1500 * SCALE))})
    try:
        def all_gpus(value):
            return lambda b: [v for _, v in parse(b)[0].get("DCGM_FI_PROF_SM_ACTIVE", {}).values()] == [value] * 8

        wait_for(s, all_gpus(0.58), "the first rates")
        # The change lands between two GPUs' calls of one round: the next round has it on all.
        body = wait_for(s, all_gpus(0.05), "the changed rates", 15)
        series = parse(body)[0]
        check(all(series["DCGM_FI_PROF_PCIE_TX_BYTES"][g][1] == MIB for g in map(str, range(8))),
              "changed: PCIe TX %s" % series.get("DCGM_FI_PROF_PCIE_TX_BYTES"))
    finally:
        stop_clean(s, "changes")
    print("changes: the rates followed the scenario's change")


def test_hang(tmp):
    """A GPM call that never returns is a hang: the sampler stops, the series leave."""
    scn = scenario_with(tmp, "hang.scn", "[gpu 0-7]\n" + BUSY + "hang nvmlGpmSampleGet 3 after=3\n")
    s = Serve(GPUVET, FAKE_LIB, scn, ["--nvml-call-timeout-ms", str(int(300 * SCALE))],
              interval_ms=int(150 * SCALE))
    try:
        body = wait_for(s, lambda b: scalar(b, "gpuvet_sampler_up") == 0, "the sampler stopping", 20)
        check("DCGM_FI_PROF_" not in body and "DCGM_FI_DEV_GPU_TEMP{" not in body,
              "hang: DCGM series still exported after the sampler stopped")
        up = parse(body)[0].get("gpuvet_gpu_up", {})
        check(up.get("3", (0, 1))[1] == 0, "hang: GPU 3 gpuvet_gpu_up %r" % (up.get("3"),))
        deadline = time.monotonic() + 5 * SCALE
        while "no longer read" not in s.stderr() and time.monotonic() < deadline:
            time.sleep(0.05)
        check("(nvmlGpmSampleGet on GPU 3 did not return within" in s.stderr(),
              "hang: stderr does not name the call and its GPU: %r" % s.stderr()[-500:])
        status, _, hbody = s.get("/health")
        check(status == 503, "hang: /health %s %r" % (status, hbody))
    finally:
        rc, took = s.stop(signal.SIGTERM)
    check(rc == 0, "hang: SIGTERM exit %s" % rc)
    print("hang in nvmlGpmSampleGet: sampler stopped, series gone, SIGTERM exit %s in %.2f s" % (rc, took))


def main():
    with tempfile.TemporaryDirectory(prefix="gpuvet-serve-gpm-") as tmp:
        test_values(tmp)
        test_first_round(tmp)
        test_errors(tmp)
        test_follows_changes(tmp)
        test_hang(tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())

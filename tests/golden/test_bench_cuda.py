#!/usr/bin/env python3
"""`gpuvet bench` through the CUDA backend on the fake libcuda (tests/fakes/fake_cuda.c):
memory, compute, transfer and p2p end to end (every measurement passes and is verified);
a wrong kernel fails verification; an error injected into each driver call the run makes
gives error measurements naming the call, never a crash; a hung call becomes a timeout;
Volta (cc 7.0) is refused with the documented message and --backend auto goes on to
OpenCL.

Usage: test_bench_cuda.py GPUVET FAKE_LIBCUDA"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_tree  # noqa: E402

GPUVET, FAKE = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def bench(names, env=None, args=(), timeout=120):
    e = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_CUDA_")}
    e["GPUVET_CUDA_LIB"] = FAKE
    e.update(env or {})
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        p = subprocess.run([GPUVET, "bench", names, "--json", f.name, "-q", "-n", "3", "-w", "1"] + list(args),
                           env=e, capture_output=True, text=True, timeout=timeout)
        try:
            report = json.load(open(f.name))
        except ValueError:
            report = None
    return p, report


def main():
    # --- end to end: every benchmark passes and verifies
    p, rep = bench("memory,compute,transfer,p2p", {"FAKE_CUDA_DEVICES": "2"}, ["-s", "4M"])
    check(p.returncode == 0, "clean run exits 0, got %d: %s" % (p.returncode, p.stderr))
    ms = rep["measurements"] if rep else []
    check(all(b["backend"] == "cuda" for b in rep["benchmarks"]) if rep else False, "every benchmark ran on cuda")
    names = {(m["bench"], m["name"]) for m in ms}
    for want in [("memory", "triad"), ("compute", "fp32_fma"), ("transfer", "h2d_pinned"), ("transfer", "bidir_pinned"),
                 ("p2p", "write_uni"),
                 ("p2p", "write_bidir"), ("p2p", "latency")]:
        check(want in names, "measurement %s/%s present" % want)
    for m in ms:
        check(m["status"] == "pass", "%s/%s %s passes: %s" % (m["bench"], m["name"], m["subject"], m["summary"]))
        check(m["remedy"] is None, "%s/%s passes without a remedy" % (m["bench"], m["name"]))
        if m["bench"] != "compute" or "fma" in m["name"]:
            if m["name"] not in ("launch_latency_host", "launch_latency_device"):
                check(m["verified"], "%s/%s verified" % (m["bench"], m["name"]))
    # device_copy counts bytes once but moves them twice: its ceiling is half the spec
    # bandwidth (the fixture's H100: 3350 GB/s)
    with tempfile.TemporaryDirectory() as root:
        fixture_tree.build(root)
        _, mrep = bench("memory", None, ["-s", "128M", "-r", root])
        mm = {m["name"]: m for m in (mrep or {}).get("measurements", [])}
        # judged like a check result: what was observed, what was expected, what to do
        tri = mm.get("triad", {})
        check(tri.get("status") in ("warn", "fail") and (tri.get("observed") or "").startswith("%.4g GB/s, median of 3" %
                                                                                            tri["stats"]["median"]),
              "triad's observed figure: %s" % tri.get("observed"))
        check(re.match(r"at least [\d.]+ GB/s \(\d+% of the (baseline [\d.]+|peak 3350) GB/s: ", tri.get("expected") or ""),
              "triad's expected figure names its reference: %s" % tri.get("expected"))
        check("Device memory bandwidth below the reference" in (tri.get("remedy") or ""),
              "a slow triad carries the memory benchmark's remedy: %s" % tri.get("remedy"))
        check(mrep and mrep["summary"]["verdict"] in ("warn", "fail"), "the run's verdict folds its measurements")
        check(mm.get("triad", {}).get("peak") == 3350 and mm.get("device_copy", {}).get("peak") == 1675,
              "device_copy peak is half the memory peak: %s vs %s" % (mm.get("device_copy", {}).get("peak"),
                                                                     mm.get("triad", {}).get("peak")))
        # 4 MiB moves in ~4 us at 3350 GB/s: launch latency, not memory, so no peak
        _, mrep = bench("memory", None, ["-s", "4M", "-r", root])
        small = {m["name"]: m for m in (mrep or {}).get("measurements", [])}
        check(small.get("triad", {}).get("peak") is None and
              "launch latency" in small.get("triad", {}).get("params", {}).get("peak", ""),
              "a 4 MiB triad has no peak and says why: %s" % small.get("triad", {}).get("params"))
    # the fake's figures: p2p 300 GB/s with 2 us per copy on 4 MiB, PCIe 25 GB/s
    uni = [m for m in ms if m["bench"] == "p2p" and m["name"] == "write_uni"]
    if uni:
        want = 4 * 2**20 / (2e-6 + 4 * 2**20 / 300e9) / 1e9
        check(abs(uni[0]["stats"]["median"] - want) < 0.01 * want, "p2p uni %.1f GB/s (fake: %.1f)" %
              (uni[0]["stats"]["median"], want))
        check(uni[0]["params"].get("link") in ("pcie", "nvlink (sxm, assumed)"), "p2p names the link: %s" % uni[0]["params"])

    # --- a wrong kernel must fail verification
    for kernel, bench_name, meas in [("triad_f32", "memory", "triad"), ("copy_f32", "memory", "copy"),
                                     ("read_f32", "memory", "read"), ("fma_f32", "compute", "fp32_fma"),
                                     ("fill_u32", "transfer", "d2h_pinned")]:
        p, rep = bench(bench_name, {"FAKE_CUDA_WRONG_KERNEL": kernel}, ["-s", "1M"])
        check(p.returncode == 1, "wrong %s: exit 1, got %d" % (kernel, p.returncode))
        bad = [m for m in (rep or {}).get("measurements", []) if m["name"] == meas]
        check(bad and all(m["status"] == "fail" and not m["verified"] and m["verify_error"] for m in bad),
              "wrong %s fails %s/%s verification" % (kernel, bench_name, meas))
        check(bad and all("A wrong result is a fault" in (m["remedy"] or "") for m in bad),
              "wrong %s: the remedy is verification's, not slowness's" % kernel)

    # --- an error in each driver call the runs make: no crash, error measurements naming it
    with tempfile.NamedTemporaryFile(mode="r") as log:
        bench("memory,compute,transfer,p2p", {"FAKE_CUDA_DEVICES": "2", "FAKE_CUDA_LOG": log.name}, ["-s", "1M"])
        called = sorted({line.split()[0] for line in log})
    teardown = {"cuMemFree_v2", "cuMemFreeHost", "cuStreamDestroy_v2", "cuModuleUnload", "cuEventDestroy_v2",
                "cuDevicePrimaryCtxRelease_v2", "cuGetErrorName", "cuGetErrorString"}
    check(len(called) >= 25, "the runs make %d distinct driver calls: %s" % (len(called), called))
    for fn in called:
        for when in ("", ":call=2"):
            p, rep = bench("memory,compute,transfer,p2p", {"FAKE_CUDA_DEVICES": "2",
                                                           "FAKE_CUDA_FAIL": fn + ":CUDA_ERROR_LAUNCH_FAILED" + when},
                           ["-s", "1M", "-b", "cuda"])
            check(p.returncode in (0, 1), "%s%s: exit %d (a crash?) %s" % (fn, when, p.returncode, p.stderr[-300:]))
            check(rep is not None, "%s%s: a JSON report" % (fn, when))
            if rep is None or fn in teardown:
                continue
            errs = [m for m in rep["measurements"] if m["status"] in ("error", "skip", "fail")]
            named = [m for m in errs if fn in (m["summary"] or "") and "CUDA_ERROR_LAUNCH_FAILED" in m["summary"]]
            if when == "":
                check(named, "%s fails: a measurement names it (got %s)" %
                      (fn, [m["summary"] for m in errs][:3]))

    # --- a hung call becomes a timeout, not a hang
    p, rep = bench("memory", {"FAKE_CUDA_HANG": "cuStreamSynchronize"}, ["--timeout", "3", "-s", "1M"], timeout=60)
    check(p.returncode == 1, "hung cuStreamSynchronize: exit 1, got %d" % p.returncode)
    check(rep and any("timed out" in (m["summary"] or "") for m in rep["measurements"]), "hung call reported as timed out")

    # --- Volta: refused with the documented message; auto goes on to OpenCL
    p, rep = bench("memory", {"FAKE_CUDA_CC": "7.0", "FAKE_CUDA_NAME": "Tesla V100-SXM2-32GB"}, ["-b", "cuda", "-s", "1M"])
    text = json.dumps(rep)
    check("compute capability 7.0" in text and "--backend opencl" in text, "cuda on Volta refused with the message")
    p, rep = bench("memory", {"FAKE_CUDA_CC": "7.0"}, ["-b", "auto", "-s", "1M"], timeout=300)
    backends = [b["backend"] for b in rep["benchmarks"]] if rep else []
    if backends == ["opencl"]:
        print("auto on Volta: opencl")
    else:
        text = json.dumps(rep)
        # no OpenCL platform on this machine: the message still names both
        check("compute capability 7.0" in text and "opencl" in text,
              "auto on Volta goes to OpenCL (got backends %s)" % backends)

    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

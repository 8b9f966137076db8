#!/usr/bin/env python3
"""`gpuvet bench gemm` on the fake libcuda (tests/fakes/fake_cuda.c) and the fake cuBLASLt
(tests/fakes/fake_cublaslt.c): every precision verified with the fake's rates on a cc 9.0
device, and the fastest of the heuristic's algorithms kept (the fake ranks it last); fp8
skipped on 8.0, tf32/bf16/fp8 on 7.5; the sweep and its best-of headline; sizes that do not
fit skipped; a wrong matmul fails verification; an error injected into each cuBLASLt call
gives an error naming it; a hung matmul times out; the library missing skips with the
sonames tried, and an older soname in a directory is found; OpenCL skips.

Usage: test_bench_gemm.py GPUVET FAKE_LIBCUDA FAKE_LIBCUBLASLT"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_tree  # noqa: E402

GPUVET, FAKE_CUDA, FAKE_LT = sys.argv[1], sys.argv[2], sys.argv[3]
RATES = {"fp64": 60, "fp32": 50, "tf32": 400, "fp16": 800, "bf16": 800, "fp8": 1600}  # fake_cublaslt.c
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def bench(env=None, args=(), timeout=120):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("FAKE_CUDA_", "FAKE_CUBLASLT_", "GPUVET_"))}
    e["GPUVET_CUDA_LIB"] = FAKE_CUDA
    e["GPUVET_CUBLASLT_LIB"] = FAKE_LT
    e.update(env or {})
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        p = subprocess.run([GPUVET, "bench", "gemm", "--json", f.name, "-q", "-n", "3", "-w", "1"] + list(args),
                           env=e, capture_output=True, text=True, timeout=timeout)
        try:
            report = json.load(open(f.name))
        except ValueError:
            report = None
    return p, report


def by_name(rep):
    return {m["name"]: m for m in (rep or {}).get("measurements", [])}


def main():
    # --- cc 9.0: every precision, verified, at the fake's rate of its fastest algorithm
    p, rep = bench(args=["-b", "cuda", "-s", "16K"])
    check(p.returncode == 0, "clean run exits 0, got %d: %s" % (p.returncode, p.stderr[-500:]))
    ms = by_name(rep)
    for prec, rate in RATES.items():
        m = ms.get(prec)
        check(m is not None, "%s measured" % prec)
        if not m:
            continue
        check(m["status"] == "pass" and m["verified"] and m["unit"] == "TFLOPS",
              "%s passes verified: %s %s" % (prec, m["status"], m["summary"]))
        med = (m["stats"] or {}).get("median", 0)
        check(abs(med - rate) < 0.01 * rate, "%s at the fastest algorithm's rate: %.1f, fake %d" % (prec, med, rate))
        check(m["params"].get("algo", "").startswith("heuristic #4 of 4"),
              "%s keeps the fake's fastest (4th) algorithm: %s" % (prec, m["params"].get("algo")))
    check(ms.get("fp32", {}).get("params", {}).get("n") == "64", "16K of fp32 is n=64")
    check(ms.get("fp8", {}).get("params", {}).get("n") == "128", "16K of fp8 is n=128")
    check("libcublasLt" in ms.get("bf16", {}).get("params", {}).get("cublaslt", ""), "the library is named")

    # --- judged on a node whose GPU 0 (0000:1b:00.0) is an H100 SXM (tests/golden/fixture_tree.py):
    # baselines from data/baselines.json by precision, peaks from data/gpus.json (fp64: the
    # Tensor Core column). bf16 at the H100's achieved 794.5 passes; at 400 it fails.
    with tempfile.TemporaryDirectory() as root:
        fixture_tree.build(root)
        p, rep = bench({"FAKE_CUBLASLT_TFLOPS": "bf16=794.5,fp64=60"}, ["-b", "cuda", "-s", "8K", "-r", root])
        ms = by_name(rep)
        bf, f64 = ms.get("bf16", {}), ms.get("fp64", {})
        check(bf.get("status") == "pass" and bf.get("baseline") == 794.5 and bf.get("peak") == 989.5 and
              abs(bf.get("ratio_baseline", 0) - 1) < 0.01,
              "bf16 judged against the H100 baseline and peak: %s" % {k: bf.get(k) for k in ("baseline", "peak", "summary")})
        check(f64.get("peak") == 67 and "fp64_tc" in f64.get("peak_source", "") and f64.get("baseline") is None,
              "fp64 peak is the Tensor Core figure: %s %s" % (f64.get("peak"), f64.get("peak_source")))
        check(f64.get("status") == "pass" and abs(f64.get("ratio_peak", 0) - 60 / 67) < 0.01, "fp64 at 90% of peak passes")
        p, rep = bench({"FAKE_CUBLASLT_TFLOPS": "bf16=400"}, ["-b", "cuda", "-s", "8K", "-r", root, "-p", "bf16"])
        bf = by_name(rep).get("bf16", {})
        check(p.returncode == 1 and bf.get("status") == "fail" and "of baseline" in bf.get("summary", ""),
              "bf16 at half the baseline fails: %s" % bf.get("summary"))

    # --- a workspace refused by the device: fewer algorithms, still measured
    p, rep = bench({"FAKE_CUDA_FAIL": "cuMemAlloc_v2:CUDA_ERROR_OUT_OF_MEMORY:call=1"},
                   ["-b", "cuda", "-s", "8K", "-p", "bf16"])
    m = by_name(rep).get("bf16", {})
    check(m.get("status") == "pass" and m["params"].get("algo", "").startswith("heuristic #2 of 2"),
          "without a workspace only the algorithms needing none run: %s" % m.get("params"))

    # --- compute capability gates
    p, rep = bench({"FAKE_CUDA_CC": "8.0"}, ["-b", "cuda", "-s", "8K"])
    ms = by_name(rep)
    check(p.returncode == 0, "cc 8.0 exits 0, got %d" % p.returncode)
    check(ms.get("fp8", {}).get("status") == "skip" and "8.9" in ms["fp8"]["summary"] and "8.0" in ms["fp8"]["summary"],
          "fp8 skipped on 8.0 with the reason: %s" % ms.get("fp8", {}).get("summary"))
    for prec in ("fp64", "fp32", "tf32", "fp16", "bf16"):
        check(ms.get(prec, {}).get("status") == "pass", "%s passes on 8.0" % prec)
    p, rep = bench({"FAKE_CUDA_CC": "7.5"}, ["-b", "cuda", "-s", "8K"])
    ms = by_name(rep)
    for prec in ("tf32", "bf16", "fp8"):
        check(ms.get(prec, {}).get("status") == "skip", "%s skipped on 7.5" % prec)
    check(ms.get("fp16", {}).get("status") == "pass", "fp16 runs on 7.5")

    # --- the sweep: one measurement per size, the best again as the judged headline
    p, rep = bench({"GPUVET_BENCH_TEST_GEMM_SIZES": "32,48,64"}, ["-b", "cuda", "-p", "fp16"])
    ms = by_name(rep)
    for n in (32, 48, 64):
        m = ms.get("fp16_%d" % n)
        check(m and m["status"] == "pass" and m["verified"] and m["params"]["n"] == str(n), "sweep point fp16_%d" % n)
    head = ms.get("fp16")
    check(head and head["status"] == "pass" and head["verified"] and head["params"].get("best_of_n") == "32,48,64",
          "headline fp16 over the sweep: %s" % (head or {}).get("params"))
    if head:
        best = max(ms["fp16_%d" % n]["stats"]["median"] for n in (32, 48, 64))
        check(head["stats"]["median"] == best, "headline is the best size")
    # sizes that do not fit in 90% of the device's memory are skipped, the others run
    p, rep = bench({"GPUVET_BENCH_TEST_GEMM_SIZES": "32,4096", "FAKE_CUDA_MEM_MIB": "64"}, ["-b", "cuda", "-p", "fp64"])
    ms = by_name(rep)
    check(ms.get("fp64_4096", {}).get("status") == "skip" and "needs" in ms["fp64_4096"]["summary"],
          "n=4096 fp64 does not fit in 64 MiB: %s" % ms.get("fp64_4096", {}).get("summary"))
    check(ms.get("fp64", {}).get("params", {}).get("best_of_n") == "32", "the headline names the sizes that ran")

    # --- a wrong matmul fails verification, every precision
    p, rep = bench({"FAKE_CUBLASLT_WRONG": "1"}, ["-b", "cuda", "-s", "16K"])
    check(p.returncode == 1, "wrong matmul: exit 1, got %d" % p.returncode)
    ms = by_name(rep)
    for prec in RATES:
        m = ms.get(prec, {})
        check(m.get("status") == "fail" and not m.get("verified") and "expected" in m.get("verify_error", ""),
              "wrong %s fails verification: %s" % (prec, m.get("summary")))
    # large enough for the sampled columns (n > 256)
    p, rep = bench({"FAKE_CUBLASLT_WRONG": "1"}, ["-b", "cuda", "-s", "96K", "-p", "fp8", "-n", "1"], timeout=300)
    m = by_name(rep).get("fp8", {})
    check(m.get("params", {}).get("n") == "304" and m.get("status") == "fail",
          "wrong fp8 at n=304 caught by the sampled columns: %s" % m.get("summary"))

    # --- an error in each cuBLASLt call: an error measurement naming the call, never a crash
    with tempfile.NamedTemporaryFile(mode="r") as log:
        bench({"FAKE_CUBLASLT_LOG": log.name}, ["-b", "cuda", "-s", "8K"])
        called = sorted({line.split()[0] for line in log})
    teardown = {"cublasLtDestroy", "cublasLtMatmulDescDestroy", "cublasLtMatrixLayoutDestroy",
                "cublasLtMatmulPreferenceDestroy", "cublasLtGetVersion"}
    check(len(set(called) - teardown) >= 8, "the run makes the cuBLASLt calls: %s" % called)
    for fn in called:
        for when in ("", ":call=2"):
            p, rep = bench({"FAKE_CUBLASLT_FAIL": fn + ":CUBLAS_STATUS_INTERNAL_ERROR" + when}, ["-b", "cuda", "-s", "8K"])
            check(p.returncode in (0, 1), "%s%s: exit %d (a crash?) %s" % (fn, when, p.returncode, p.stderr[-300:]))
            check(rep is not None, "%s%s: a JSON report" % (fn, when))
            if rep is None or fn in teardown:
                continue
            named = [m for m in rep["measurements"] if m["status"] == "error"
                     and fn + ": CUBLAS_STATUS_INTERNAL_ERROR (14)" in (m["summary"] or "")]
            if when == "":
                check(named and p.returncode == 1, "%s fails: an error names it (got %s)" %
                      (fn, [m["summary"] for m in rep["measurements"]][:3]))
    # an algorithm the library refuses to run is passed over, the next one kept
    p, rep = bench({"FAKE_CUBLASLT_FAIL": "cublasLtMatmul:CUBLAS_STATUS_NOT_SUPPORTED:call=1"},
                   ["-b", "cuda", "-s", "8K", "-p", "fp32"])
    m = by_name(rep).get("fp32", {})
    check(m.get("status") == "pass" and m["params"].get("algo", "").endswith("(4 timed)"),
          "a refused candidate is skipped: %s %s" % (m.get("status"), m.get("params")))
    # driver errors inside the benchmark name the driver call
    for fn in ("cuEventRecord", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2"):
        p, rep = bench({"FAKE_CUDA_FAIL": fn + ":CUDA_ERROR_LAUNCH_FAILED"}, ["-b", "cuda", "-s", "8K", "-p", "fp32"])
        check(any(fn in (m["summary"] or "") and m["status"] == "error" for m in (rep or {}).get("measurements", [])),
              "%s failing: an error names it" % fn)

    # --- a hung matmul becomes a timeout
    p, rep = bench({"FAKE_CUBLASLT_HANG": "cublasLtMatmul"}, ["-b", "cuda", "-s", "8K", "--timeout", "3"], timeout=60)
    check(p.returncode == 1 and rep and any("timed out" in (m["summary"] or "") for m in rep["measurements"]),
          "hung cublasLtMatmul reported as timed out")

    # --- no library: skipped, naming the sonames tried; an older soname in a directory is found
    with tempfile.TemporaryDirectory() as d:
        p, rep = bench({"GPUVET_CUBLASLT_LIB": d}, ["-b", "cuda", "-s", "8K"])
        ms = (rep or {}).get("measurements", [])
        check(p.returncode == 0 and ms and all(m["status"] == "skip" for m in ms) and
              any("libcublasLt.so.13/.12/.11 not found" in m["summary"] for m in ms),
              "missing cuBLASLt skips with the sonames: %s" % [m["summary"] for m in ms])
        os.symlink(FAKE_LT, os.path.join(d, "libcublasLt.so.12"))
        p, rep = bench({"GPUVET_CUBLASLT_LIB": d}, ["-b", "cuda", "-s", "8K", "-p", "fp32"])
        m = by_name(rep).get("fp32", {})
        check(m.get("status") == "pass" and "libcublasLt.so.12" in m["params"].get("cublaslt", ""),
              "libcublasLt.so.12 found when .13 is absent: %s" % m.get("params"))

    # --- OpenCL has no cuBLASLt
    p, rep = bench(args=["-b", "opencl", "-s", "8K"], timeout=300)
    text = json.dumps(rep)
    check(p.returncode == 0 and ("GEMM needs CUDA (cuBLASLt)" in text or "no GPU backend" in text),
          "gemm on OpenCL skips: %s" % [m["summary"] for m in (rep or {}).get("measurements", [])])

    # --- an unknown precision is bad input
    p, _ = bench(args=["-b", "cuda", "-p", "fp4"])
    check(p.returncode == 2 and "fp4" in p.stderr, "unknown precision: exit 2, got %d" % p.returncode)

    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

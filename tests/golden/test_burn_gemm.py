#!/usr/bin/env python3
"""The burn's GEMM load (src/burn/gemm_load.c) through its driver (tests/unit/test_gemm_load.c).

PoCL with two devices (POCL_DEVICES="pthread pthread"): fp32 and fp64 verified, the two
devices' digests equal and stable; GPUVET_TEST_CORRUPT_GEMM=1:ROW:COL makes device 1's
kernel produce one wrong element, found against the host reference at (ROW, COL), its
digest different from device 0's; at n > 256 (a sample) a corner is found and an element
outside the sample still changes the digest; fp16 and the others are -ENOTSUP.
The fake libcuda + cuBLASLt, two devices, every precision: clean digests equal;
FAKE_CUBLASLT_CORRUPT=1:ROW:COL:3 corrupts device 1 from its third matmul (the open's
warm-up is the first), so round 1 is clean and round 2 differs from the first result and
the host reference at (ROW, COL); the algorithm excludes split-K; fp32 gives the same
digest as PoCL's; tf32/bf16/fp8 -ENOTSUP on 7.5, fp8 on 8.0; a cuBLASLt failure mid-run
is an error naming cublasLtMatmul; a bad n is -EINVAL.

Usage: test_burn_gemm.py TEST_GEMM_LOAD FAKE_LIBCUDA FAKE_LIBCUBLASLT"""
import json
import os
import subprocess
import sys

DRIVER, FAKE_CUDA, FAKE_LT = sys.argv[1], sys.argv[2], sys.argv[3]
ENOTSUP, EINVAL = -95, -22
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(backend, args, env=None):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("FAKE_CUDA_", "FAKE_CUBLASLT_", "GPUVET_", "POCL_"))}
    if backend == "cuda":
        e.update({"GPUVET_CUDA_LIB": FAKE_CUDA, "GPUVET_CUBLASLT_LIB": FAKE_LT, "FAKE_CUDA_DEVICES": "2"})
    else:
        e["POCL_DEVICES"] = "pthread pthread"
    e.update(env or {})
    p = subprocess.run([DRIVER, backend] + list(args), env=e, capture_output=True, text=True, timeout=120)
    if p.returncode == 77:
        return None
    check(p.returncode == 0, "%s %s exits 0, got %d: %s" % (backend, args, p.returncode, p.stderr[-400:]))
    try:
        return json.loads(p.stdout)
    except ValueError:
        check(False, "%s %s prints JSON: %s" % (backend, args, p.stdout[-400:]))
        return []


def clean(dev, rounds, what):
    check(dev["rc"] == 0, "%s: rc 0, got %s (%s)" % (what, dev["rc"], dev.get("error")))
    rs = dev.get("rounds", [])
    check(len(rs) == rounds, "%s: %d rounds, got %d" % (what, rounds, len(rs)))
    for i, r in enumerate(rs):
        check(r["faulty_vs_host"] == 0 and r["faulty_vs_first"] == 0, "%s round %d: no fault, got %s" % (what, i, r))
        check(r["sampled"] > 0, "%s round %d: a sample was checked" % (what, i))
        check(r["compared"] == (0 if i == 0 else dev["n"] ** 2),
              "%s round %d: compared %d elements with the first result" % (what, i, r["compared"]))
    check(len({r["digest"] for r in rs}) == 1, "%s: the same digest every round" % what)
    return rs[0]["digest"] if rs else None


def fault_at(r, row, col, what):
    f = r.get("fault")
    check(f is not None and f["row"] == row and f["col"] == col and f["expected"] != f["got"],
          "%s: the fault placed at (%d, %d), got %s" % (what, row, col, f))


def opencl():
    out = run("opencl", ["--n", "64", "--rounds", "2"])
    if out is None:
        print("SKIP: no OpenCL platform (PoCL)")
        return None
    check(len(out) == 2, "two PoCL devices, got %d" % len(out))
    digests = [clean(d, 2, "opencl fp32 device %d" % d["device"]) for d in out]
    check(digests[0] == digests[1], "opencl fp32: the two devices' digests equal")
    check(out[0]["fingerprint"] == out[1]["fingerprint"], "opencl: the same fingerprint on both devices")
    check(out[0]["rounds"][0]["sampled"] == 64 * 64, "n=64: every element against the host reference")
    check("gemm_f32" in out[0]["describe"] and "n=64" in out[0]["describe"], "describe: %s" % out[0]["describe"])
    pocl_fp32 = digests[0]

    out = run("opencl", ["--n", "64", "--rounds", "2", "--precision", "fp64"])
    d64 = [clean(d, 2, "opencl fp64 device %d" % d["device"]) for d in out]
    check(d64[0] == d64[1], "opencl fp64: equal digests")

    for prec in ("fp32", "fp64"):
        out = run("opencl", ["--n", "64", "--rounds", "2", "--precision", prec],
                  {"GPUVET_TEST_CORRUPT_GEMM": "1:5:7"})
        good = clean(out[0], 2, "opencl %s corrupted run, device 0" % prec)
        bad = out[1]["rounds"]
        for i, r in enumerate(bad):
            what = "opencl %s device 1 round %d" % (prec, i)
            check(r["faulty_vs_host"] == 1, "%s: one element off the host reference, got %s" % (what, r))
            check(r["faulty_vs_first"] == 0, "%s: the same wrong element every time (first result too)" % what)
            check(r["digest"] != good, "%s: its digest differs from device 0's" % what)
            fault_at(r, 5, 7, what)

    # n > 256: a sample; a corner is in it, (100, 200) is not, but the digest still differs
    out = run("opencl", ["--n", "320", "--rounds", "1"], {"GPUVET_TEST_CORRUPT_GEMM": "1:319:0"})
    good = clean(out[0], 1, "opencl n=320 device 0")
    r = out[1]["rounds"][0]
    check(r["sampled"] == 1024, "n=320: 1024 sampled elements, got %d" % r["sampled"])
    check(r["faulty_vs_host"] == 1 and r["digest"] != good, "n=320: the corner (319, 0) found: %s" % r)
    fault_at(r, 319, 0, "n=320 corner")
    out = run("opencl", ["--n", "320", "--rounds", "1"], {"GPUVET_TEST_CORRUPT_GEMM": "0:100:200"})
    r = out[0]["rounds"][0]
    check(r["digest"] != out[1]["rounds"][0]["digest"], "n=320: an element outside the sample changes the digest")

    for prec in ("fp16", "bf16", "tf32", "fp8"):
        out = run("opencl", ["--n", "64", "--precision", prec, "--devices", "0"])
        check(out[0]["rc"] == ENOTSUP and "CUDA" in out[0].get("error", ""),
              "opencl %s: -ENOTSUP saying it needs CUDA, got %s" % (prec, out[0]))
    out = run("opencl", ["--n", "100", "--devices", "0"])
    check(out[0]["rc"] == EINVAL and "multiple of 16" in out[0].get("error", ""), "n=100: -EINVAL, got %s" % out[0])
    return pocl_fp32


def cuda(pocl_fp32):
    for prec in ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8"):
        out = run("cuda", ["--n", "64", "--rounds", "3", "--precision", prec])
        digests = [clean(d, 3, "cuda %s device %d" % (prec, d["device"])) for d in out]
        check(len(out) == 2 and digests[0] == digests[1], "cuda %s: the two devices' digests equal" % prec)
        check("algorithm 1 of 2 (reduction scheme NONE)" in out[0].get("describe", ""),
              "cuda %s: the split-K algorithms left out: %s" % (prec, out[0].get("describe")))
        if prec == "fp32" and pocl_fp32:
            check(digests[0] == pocl_fp32, "fp32: cuBLASLt's D has the same digest as PoCL's")

        out = run("cuda", ["--n", "64", "--rounds", "3", "--precision", prec], {"FAKE_CUBLASLT_CORRUPT": "1:9:3:3"})
        good = clean(out[0], 3, "cuda %s corrupted run, device 0" % prec)
        bad = out[1]["rounds"]
        check(bad[0]["digest"] == good and bad[0]["faulty_vs_host"] == 0, "cuda %s: round 1 clean" % prec)
        for i in (1, 2):
            r, what = bad[i], "cuda %s device 1 round %d" % (prec, i)
            check(r["faulty_vs_first"] == 1 and r["faulty_vs_host"] == 1,
                  "%s: one element off the first result and the host, got %s" % (what, r))
            check(r["digest"] != good, "%s: its digest differs" % what)
            fault_at(r, 9, 3, what)

    for cc, refused in (("7.5", ("tf32", "bf16", "fp8")), ("8.0", ("fp8",))):
        for prec in ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8"):
            out = run("cuda", ["--n", "32", "--rounds", "1", "--precision", prec, "--devices", "0"],
                      {"FAKE_CUDA_CC": cc})
            if prec in refused:
                check(out[0]["rc"] == ENOTSUP and "compute capability" in out[0].get("error", "")
                      and "is %s" % cc in out[0].get("error", ""),
                      "cc %s %s: -ENOTSUP naming the capability, got %s" % (cc, prec, out[0]))
            else:
                clean(out[0], 1, "cc %s %s" % (cc, prec))

    out = run("cuda", ["--n", "32", "--rounds", "3", "--devices", "0"],
              {"FAKE_CUBLASLT_FAIL": "cublasLtMatmul:CUBLAS_STATUS_EXECUTION_FAILED:call=3"})
    d = out[0]
    check(d["rc"] < 0 and "cublasLtMatmul" in d.get("error", "") and "EXECUTION_FAILED" in d.get("error", ""),
          "a failed cublasLtMatmul mid-run: an error naming it, got %s" % d)
    check(len(d.get("rounds", [])) == 1, "the failure ends the run after round 1, got %s" % d.get("rounds"))
    out = run("cuda", ["--n", "32", "--devices", "0"],
              {"FAKE_CUBLASLT_FAIL": "cublasLtMatmulAlgoGetHeuristic:CUBLAS_STATUS_INTERNAL_ERROR"})
    check(out[0]["rc"] < 0 and "cublasLtMatmulAlgoGetHeuristic" in out[0].get("error", ""),
          "a failed heuristic at open: named, got %s" % out[0])
    out = run("cuda", ["--n", "32", "--devices", "0"], {"GPUVET_CUBLASLT_LIB": "/nonexistent/libcublasLt.so.13"})
    check(out[0]["rc"] == -2, "no cuBLASLt: -ENOENT, got %s" % out[0])


def main():
    pocl_fp32 = opencl()
    cuda(pocl_fp32)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

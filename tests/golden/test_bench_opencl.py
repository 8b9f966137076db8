#!/usr/bin/env python3
"""The OpenCL backend and the device benchmarks (memory, compute, transfer) on a real
OpenCL device (PoCL's CPU device in CI), through tests/unit/test_opencl_driver.c.

  test_bench_opencl.py DRIVER [GPUVET]

Checks: every benchmark produces verified figures; a kernel built intentionally wrong
(GPUVET_TEST_WRONG_KERNEL, honoured by the test driver's build only) fails verification,
while the gpuvet binary ignores that variable; the GPU variant of the kernels
(GPUVET_TEST_CL_TUNING=gpu) is also correct; bad sizes and precisions give error
measurements, not crashes. Sizes and repetitions are small: CI has 2 cores.
Exit 77 (skip) only when the driver finds no OpenCL platform or device."""
import json
import os
import re
import subprocess
import sys

DRIVER = sys.argv[1]
GPUVET = sys.argv[2] if len(sys.argv) > 2 else None
failures = []


def run(bench, *args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([DRIVER, bench, *args], capture_output=True, text=True, env=e, timeout=300)
    if p.returncode == 77:
        print("SKIP: " + p.stderr.strip())
        sys.exit(77)
    if p.returncode != 0:
        failures.append("%s %s: exit %d: %s" % (bench, " ".join(args), p.returncode, p.stderr.strip()[-500:]))
        return {}
    return {m["name"]: m for m in json.loads(p.stdout)}


def expect(cond, what):
    if not cond:
        failures.append(what)


def expect_verified(ms, names, label):
    for n in names:
        m = ms.get(n)
        expect(m is not None, "%s: no %s measurement" % (label, n))
        if m:
            expect(m["status"] == "pass" and m["verified"] and m["median"] > 0 and len(m["samples"]) >= 2,
                   "%s: %s not a verified pass: %s" % (label, n, json.dumps(m)[:400]))


MEM = ["copy", "scale", "add", "triad", "read", "write", "device_copy"]
small = ["--size", str(1 << 20), "--reps", "3", "--warmup", "1"]

# 1. every benchmark, verified figures
mem = run("memory", *small)
expect_verified(mem, MEM, "memory")
if mem:
    expect(mem["copy"]["params"].get("bytes_counted") == "2 x size", "memory: copy counts 2 arrays")
    expect(mem["device_copy"]["params"].get("bytes_counted") == "1 x size", "memory: device copy counts once")

comp = run("compute", "--reps", "2", "--warmup", "1")
expect_verified(comp, ["fp32_fma"], "compute")
for n in ["launch_latency_host", "launch_latency_device"]:  # an empty kernel: nothing to verify
    m = comp.get(n, {})
    expect(m.get("status") == "pass" and m.get("unit") == "us" and 0 < m.get("median", 0) < 1e5,
           "compute: %s: %s" % (n, m))
for n in ["fp64_fma", "fp16_fma"]:  # PoCL: fp64 yes, fp16 no; any device: verified or skipped with a reason
    m = comp.get(n)
    expect(m is not None and ((m["status"] == "pass" and m["verified"]) or
                              (m["status"] == "skip" and "support" in m["summary"])),
           "compute: %s neither verified nor skipped with a reason: %s" % (n, m))

xfer = run("transfer", "--size", str(256 << 10), "--reps", "2", "--warmup", "1")
XF = ["h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable"]
expect_verified(xfer, XF, "transfer")
# bidirectional: both directions at once on two queues, bytes of both counted, both verified
expect_verified(xfer, ["bidir_pinned", "bidir_pageable"], "transfer")
for n in ["bidir_pinned", "bidir_pageable"]:
    prm = xfer.get(n, {}).get("params", {})
    expect(float(prm.get("h2d_gbps", 0)) > 0 and float(prm.get("d2h_gbps", 0)) > 0 and
           prm.get("bytes_counted", "").startswith("2 x size"), "transfer: %s per-direction rates: %s" % (n, prm))
# the sweep: 64 KiB and 256 KiB for each of the four
if xfer:
    p = subprocess.run([DRIVER, "transfer", "--size", str(256 << 10), "--reps", "2"], capture_output=True, text=True)
    sizes = sorted({m["params"].get("size_bytes") for m in json.loads(p.stdout) if re.sub(r"_\d+[KM]$", "", m["name"]) == "h2d_pinned"})
    expect(sizes == ["262144", "65536"], "transfer: sweep sizes %s" % sizes)

# 2. intentionally wrong kernels (test build only) fail verification, the rest still pass
for kernel, bench, name, args in [("triad_f32", "memory", "triad", small), ("read_f32", "memory", "read", small),
                                  ("copy_f32", "memory", "copy", small),
                                  ("fma_f32", "compute", "fp32_fma", ["--reps", "2", "--precision", "fp32"]),
                                  ("fill_u32", "transfer", "d2h_pinned", ["--size", str(64 << 10), "--reps", "2"])]:
    ms = run(bench, *args, env={"GPUVET_TEST_WRONG_KERNEL": kernel})
    m = ms.get(name, {})
    expect(m.get("status") == "fail" and not m.get("verified") and m.get("verify_error"),
           "wrong %s: %s should fail verification: %s" % (kernel, name, json.dumps(m)[:400]))
    if kernel == "triad_f32":
        expect_verified(ms, ["copy", "add", "write"], "wrong triad_f32, other kernels")

# 3. the GPU variant of the kernels (float4, grid-stride, no coarsening) is correct too
expect_verified(run("memory", *small, env={"GPUVET_TEST_CL_TUNING": "gpu"}), MEM, "gpu tuning memory")
expect_verified(run("compute", "--reps", "2", "--precision", "fp32", env={"GPUVET_TEST_CL_TUNING": "gpu"}),
                ["fp32_fma"], "gpu tuning compute")

# 3b. every vector width of the CPU FMA kernels (their x<W> variants, normally chosen by
# calibration) computes the chains right, and a wrong fma_f32 fails at every width
comp = run("compute", "--reps", "2", "--warmup", "1")
shape = comp.get("fp32_fma", {}).get("params", {}).get("kernel_shape", "")
expect(shape != "", "compute: fp32_fma names its kernel shape: %s" % comp.get("fp32_fma"))
if "calibrated" in shape or "scalar" not in shape:  # a CPU device: the variants exist
    for w in ["2", "4", "8", "16"]:
        ms = run("compute", "--reps", "2", "--warmup", "1", env={"GPUVET_TEST_CL_FMA_WIDTH": w})
        for n in ["fp32_fma", "fp64_fma"]:
            m = ms.get(n, {})
            if (n, w) == ("fp32_fma", "2"):  # no float2 variant: calibrated as usual
                continue
            expect(m.get("status") == "skip" or (m.get("verified") and "%s x 8" % w in m.get("params", {}).get("kernel_shape", "")),
                   "width %s: %s not verified at that width: %s" % (w, n, json.dumps(m)[:400]))
        ms = run("compute", "--reps", "2", "--precision", "fp32",
                 env={"GPUVET_TEST_CL_FMA_WIDTH": w, "GPUVET_TEST_WRONG_KERNEL": "fma_f32"})
        m = ms.get("fp32_fma", {})
        expect(m.get("status") == "fail" and not m.get("verified"),
               "width %s: a wrong fma_f32 should fail verification: %s" % (w, json.dumps(m)[:400]))

# 3c. every shape of the CPU memory kernels (<kernel>_v<W> and read_f32_v<W>s<S>, normally
# chosen by calibration at the first launch) is verified, and a wrong kernel fails at each
rshape = mem.get("read", {}).get("params", {}).get("kernel_shape", "")
expect(rshape != "", "memory: read names its kernel shape: %s" % mem.get("read"))
if "blocks" in rshape:  # a CPU device: the variants exist
    expect("calibrated" in rshape, "memory: read's shape is calibrated on a CPU device: %s" % rshape)
    for w in ["4", "8", "16"]:
        for st in ["1", "4", "8"]:
            hooks = {"GPUVET_TEST_CL_MEM_WIDTH": w, "GPUVET_TEST_CL_READ_STREAMS": st}
            ms = run("memory", *small, *([] if st == "1" else ["--only", "read"]), env=hooks)
            expect_verified(ms, MEM if st == "1" else ["read"], "memory float%s, read %s streams" % (w, st))
            for n in (MEM[:-1] if st == "1" else ["read"]):
                shape = ms.get(n, {}).get("params", {}).get("kernel_shape", "")
                want = "float%s x %s stream" % (w, st) if n == "read" else "float%s," % w
                expect(shape.startswith(want), "memory %s: shape %r, expected %r" % (n, shape, want))
        st = {"4": "1", "8": "4", "16": "8"}[w]
        for kernel, name in [("read_f32", "read"), ("copy_f32", "copy"), ("triad_f32", "triad")]:
            ms = run("memory", *small, "--only", name, env={"GPUVET_TEST_CL_MEM_WIDTH": w,
                                                            "GPUVET_TEST_CL_READ_STREAMS": st,
                                                            "GPUVET_TEST_WRONG_KERNEL": kernel})
            m = ms.get(name, {})
            expect(m.get("status") == "fail" and not m.get("verified"),
                   "float%s: a wrong %s should fail verification: %s" % (w, kernel, json.dumps(m)[:400]))

# 4. bad input: clear error measurements
for bench, size, word in [("memory", "1000", "invalid size"), ("memory", "4098", "invalid size"),
                          ("transfer", "4096", "invalid size"), ("memory", str(1 << 40), "exceeds")]:
    ms = run(bench, "--size", size, "--reps", "2")
    m = ms.get("setup", {})
    expect(m.get("status") == "error" and word in m.get("summary", ""),
           "%s --size %s: expected a setup error '%s': %s" % (bench, size, word, m))
m = run("compute", "--precision", "fp7").get("setup", {})
expect(m.get("status") == "error" and "unknown precision" in m.get("summary", ""), "unknown precision: %s" % m)
m = run("memory", "--gpus", "99", *small).get("open", {})
expect(m.get("status") == "error" and "does not exist" in m.get("summary", ""), "device 99: %s" % m)

# 5. the gpuvet binary ignores the test hook: its triad is verified
if GPUVET:
    e = dict(os.environ, GPUVET_TEST_WRONG_KERNEL="triad_f32")
    p = subprocess.run([GPUVET, "bench", "memory", "--backend", "opencl", "--size", "1M", "--reps", "2", "-j", "-"],
                       capture_output=True, text=True, env=e, timeout=300)
    try:
        ms = {m["name"]: m for m in json.loads(p.stdout)["measurements"]}
        expect(ms.get("triad", {}).get("verified") is True,
               "gpuvet bench memory honoured GPUVET_TEST_WRONG_KERNEL: %s" % ms.get("triad"))
    except (ValueError, KeyError) as err:
        failures.append("gpuvet bench memory --backend opencl -j -: exit %d, %s: %s" % (p.returncode, err, p.stderr[-300:]))

if failures:
    print("FAIL:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("ok: memory, compute, transfer verified on OpenCL; wrong kernels caught; bad input reported")

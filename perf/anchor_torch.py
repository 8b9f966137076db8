#!/usr/bin/env python3
"""A PyTorch yardstick for gpuvet bench on a live GPU: the same measurements, made the way
PyTorch users get them, on the same machine in the same run.

- device copy: torch's copy_ of a 256 MiB buffer (cudaMemcpyAsync D2D), bytes counted once;
- triad: a = b + 3 c on 256 MiB float32 arrays (one fused torch.add with alpha), STREAM bytes (3 arrays);
- H2D / D2H: pinned host tensors copied with non_blocking=True, 256 MiB, bytes counted once;
- GEMM: square n x n products (n = 8192 and 4096) in fp64, fp32, tf32, fp16, bf16 and fp8
  (torch._scaled_mm, E4M3 in, BF16 out), TFLOPS = 2 n^3 / time.

Each figure is the median of 20 timed repetitions after 3 warm-ups, timed with CUDA events;
inputs are random, never zeros. Prints one line per figure, writes JSON with --json.
"""
import argparse
import json
import statistics

import torch
import machine  # perf/machine.py: the line naming this machine


def timed(fn, reps=20, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1000.0)
    return statistics.median(times)


def gemm_figures(n, results):
    dev = "cuda"
    flops = 2.0 * n * n * n
    torch.backends.cuda.matmul.allow_tf32 = False
    for name, dtype in (("fp64", torch.float64), ("fp32", torch.float32), ("fp16", torch.float16),
                        ("bf16", torch.bfloat16)):
        a = torch.randn(n, n, device=dev, dtype=dtype)
        b = torch.randn(n, n, device=dev, dtype=dtype)
        t = timed(lambda: torch.mm(a, b), reps=10 if name == "fp64" else 20)
        results["gemm_%s_%d_tflops" % (name, n)] = flops / t / 1e12
        del a, b
    torch.backends.cuda.matmul.allow_tf32 = True
    a = torch.randn(n, n, device=dev)
    b = torch.randn(n, n, device=dev)
    results["gemm_tf32_%d_tflops" % n] = flops / timed(lambda: torch.mm(a, b)) / 1e12
    torch.backends.cuda.matmul.allow_tf32 = False
    del a, b
    if hasattr(torch, "_scaled_mm") and torch.cuda.get_device_capability() >= (8, 9):
        a = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn)
        b = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn).t()  # column-major B, as _scaled_mm wants
        one = torch.tensor(1.0, device=dev)
        try:
            t = timed(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
            results["gemm_fp8_%d_tflops" % n] = flops / t / 1e12
        except RuntimeError as e:
            results["gemm_fp8_%d_error" % n] = str(e).split("\n")[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json")
    args = ap.parse_args()
    machine.print_header()
    dev = "cuda"
    res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda}
    size = 256 << 20
    n = size // 4
    src = torch.rand(n, device=dev)
    dst = torch.empty_like(src)
    res["device_copy_gbps"] = size / timed(lambda: dst.copy_(src)) / 1e9
    b, c = torch.rand(n, device=dev), torch.rand(n, device=dev)
    res["triad_gbps"] = 3 * size / timed(lambda: torch.add(b, c, alpha=3.0, out=dst)) / 1e9
    del src, dst, b, c
    host = torch.rand(n).pin_memory()
    devbuf = torch.empty(n, device=dev)
    res["h2d_pinned_gbps"] = size / timed(lambda: devbuf.copy_(host, non_blocking=True)) / 1e9
    res["d2h_pinned_gbps"] = size / timed(lambda: host.copy_(devbuf, non_blocking=True)) / 1e9
    del host, devbuf
    for n in (4096, 8192):
        gemm_figures(n, res)
    print("anchor-torch: %s, torch %s (CUDA %s)" % (res["device"], res["torch"], res["cuda"]))
    for k, v in res.items():
        if isinstance(v, float):
            print("  %-28s %10.1f" % (k, v))
        elif k.endswith("_error"):
            print("  %-28s %s" % (k, v))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Bidirectional transfers (bench_transfer.c's bidir_pinned and bidir_pageable, through
dev_ops.copy_h2d_on/copy_d2h_on/event_record_on/event_span_ms of the CUDA backend) on the
fake libcuda, with the small fixture tree so device 0 (0000:1b:00.0) has a Gen5 x16 link:

- FAKE_CUDA_DUPLEX=1 (the default; PCIe is full duplex): both directions at the full rate,
  bidir = 2 x the unidirectional figure, peak 2 x 63 GB/s, pass, verified; the parameters
  h2d_gbps and d2h_gbps carry each direction's own rate (nvbandwidth's bidirectional figure).
- FAKE_CUDA_DUPLEX=0 (one link shared by both directions): bidir = 1 x, and it fails
  against the 2 x peak, as a link that cannot carry both directions at once must.
- pageable: measured, no peak (whether the driver's staged copies overlap is its business).
- a wrong fill kernel fails the D2H half of the verification; a failure creating the
  second stream is an error measurement naming the call, the rest still pass.

Usage: test_bench_bidir.py GPUVET FAKE_LIBCUDA"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_tree  # noqa: E402

GPUVET, FAKE = sys.argv[1], sys.argv[2]
SIZE = 16 << 20
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def bench(root, env=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_CUDA_")}
    e.update({"GPUVET_CUDA_LIB": FAKE, "FAKE_CUDA_PCIE_GBPS": "55"})
    e.update(env or {})
    p = subprocess.run([GPUVET, "bench", "transfer", "-b", "cuda", "-r", root, "-s", str(SIZE), "-n", "3", "-w", "1",
                        "-q", "-j", "-"], env=e, capture_output=True, text=True, timeout=120)
    try:
        ms = json.loads(p.stdout)["measurements"]
    except (ValueError, KeyError):
        ms = []
        check(False, "no JSON report (exit %d): %s" % (p.returncode, p.stderr[-300:]))
    # The sweep's smaller sizes are named with their size ("bidir_pinned_64K"); key by the base.
    return p, {(re.sub(r"_\d+[KM]$", "", m["name"]), m["params"].get("size_bytes")): m for m in ms}


def near(a, b, tol=0.01):
    return a and b and abs(a - b) <= tol * b


def main():
    with tempfile.TemporaryDirectory() as root:
        fixture_tree.build(root)
        big = str(SIZE)

        # --- duplex: 2 x one direction, judged against 2 x the link's per-direction peak
        p, ms = bench(root)
        h2d, d2h = ms.get(("h2d_pinned", big), {}), ms.get(("d2h_pinned", big), {})
        bi, bp = ms.get(("bidir_pinned", big), {}), ms.get(("bidir_pageable", big), {})
        uni = (h2d.get("stats") or {}).get("median")
        got = (bi.get("stats") or {}).get("median")
        check(near(got, 2 * uni), "duplex: bidir %s GB/s should be 2 x h2d %s" % (got, uni))
        check(bi.get("status") == "pass" and bi.get("verified"), "duplex: bidir_pinned a verified pass: %s" % bi)
        check(near(bi.get("peak"), 2 * (h2d.get("peak") or 0), 1e-6) and
              (bi.get("peak_source") or "").startswith("2 directions x PCIe link of 0000:1b:00.0"),
              "bidir peak is 2 x the per-direction PCIe peak: %s / %s" % (bi.get("peak"), bi.get("peak_source")))
        prm = bi.get("params", {})
        check(prm.get("bytes_counted", "").startswith("2 x size"), "bidir counts both directions: %s" % prm)
        check(near(float(prm.get("h2d_gbps", 0)), uni) and near(float(prm.get("d2h_gbps", 0)),
                                                                (d2h.get("stats") or {}).get("median")),
              "duplex: each direction at its unidirectional rate: %s" % prm)
        check(bp.get("verified") and bp.get("peak") is None and "none" in bp.get("params", {}).get("peak", ""),
              "bidir_pageable: verified, no peak, says why: %s" % bp)
        # Only the sweep's largest size is judged: a 64 KiB copy on a healthy H100 ran at 16% of
        # the link (latency), and pageable copies are bound by the host's memcpy (docs/bench.md).
        for (base, size), m in ms.items():
            headline = size == big
            check((m["name"] == base) == headline, "%s at %s bytes: the plain name only for the largest size"
                  % (m["name"], size))
            if not headline or "pageable" in base:
                check(m.get("peak") is None and m.get("ratio_peak") is None,
                      "%s: no peak for a small size or pageable memory: %s" % (m["name"], m.get("peak")))
        check(h2d.get("peak") and ms.get(("h2d_pageable", big), {}).get("peak") is None,
              "pinned h2d has the link's peak, pageable none")
        sizes = sorted(int(k[1]) for k in ms if k[0] == "bidir_pinned")
        check(sizes == [64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20], "bidir over the sweep: %s" % sizes)

        # --- a link shared by both directions: 1 x, a fail against 2 x the peak
        p, ms = bench(root, {"FAKE_CUDA_DUPLEX": "0"})
        bi = ms.get(("bidir_pinned", big), {})
        got = (bi.get("stats") or {}).get("median")
        uni = (ms.get(("h2d_pinned", big), {}).get("stats") or {}).get("median")
        check(near(got, uni), "shared link: bidir %s GB/s should be 1 x h2d %s" % (got, uni))
        check(bi.get("status") == "fail" and bi.get("verified"), "shared link: bidir_pinned verified but fails: %s" % bi)
        check(p.returncode == 1, "shared link: exit 1, got %d" % p.returncode)

        # --- the D2H half of the verification catches a wrong fill kernel
        p, ms = bench(root, {"FAKE_CUDA_WRONG_KERNEL": "fill_u32"})
        bi = ms.get(("bidir_pinned", big), {})
        check(bi.get("status") == "fail" and not bi.get("verified") and
              (bi.get("verify_error") or "").startswith("d2h: word"), "wrong fill_u32: bidir fails d2h: %s" % bi)

        # --- the second stream cannot be created: an error naming the call, the rest pass
        p, ms = bench(root, {"FAKE_CUDA_FAIL": "cuStreamCreate:CUDA_ERROR_LAUNCH_FAILED:call=2"})
        bi = ms.get(("bidir_pinned", "65536"), {})
        check(bi.get("status") == "error" and "cuStreamCreate" in (bi.get("summary") or "") and
              "second stream" in bi.get("summary", ""), "second stream refused: %s" % bi)
        h2d = ms.get(("h2d_pinned", big), {})
        check(h2d.get("status") == "pass", "second stream refused: unidirectional still passes: %s" % h2d)

    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

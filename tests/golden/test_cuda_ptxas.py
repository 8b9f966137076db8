#!/usr/bin/env python3
"""CI's "assemble PTX for every target with ptxas": kernels/bench_kernels.cu to PTX for
each architecture this nvcc lists from compute_75 up, each assembled by ptxas for its
own sm_XX; and the lowest PTX (compute_75, what forward compatibility rests on) assembled
for every sm_XX too. A kernel that does not compile or assemble anywhere fails here.

Usage: test_cuda_ptxas.py NVCC KERNELS_CU. Exits 77 (skip) without nvcc or ptxas."""
import os
import subprocess
import sys
import tempfile


def main():
    nvcc, source = sys.argv[1], sys.argv[2]
    if not nvcc or not os.access(nvcc, os.X_OK):
        print("SKIP: no nvcc in this build")
        return 77
    ptxas = os.path.join(os.path.dirname(nvcc), "ptxas")
    if not os.access(ptxas, os.X_OK):
        print("SKIP: no ptxas next to", nvcc)
        return 77
    out = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True, check=True).stdout
    archs = sorted(int(a.replace("compute_", "")) for a in out.split() if a.startswith("compute_"))
    archs = [a for a in archs if a >= 75]
    if not archs:
        print("FAIL: nvcc lists no architecture from compute_75 up:", out)
        return 1
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        ptx = {}
        for a in archs:
            ptx[a] = os.path.join(tmp, "k%d.ptx" % a)
            r = subprocess.run([nvcc, "-ptx", "-arch=compute_%d" % a, source, "-o", ptx[a]],
                               capture_output=True, text=True)
            if r.returncode != 0:
                failures.append("nvcc -ptx compute_%d: %s" % (a, r.stderr.strip()))
                ptx.pop(a)
        jobs = [(a, a) for a in ptx] + [(archs[0], a) for a in archs[1:] if archs[0] in ptx]
        for src, target in jobs:
            cmd = [ptxas, "-arch=sm_%d" % target, ptx[src], "-o", os.path.join(tmp, "k.cubin")]
            r = subprocess.run(cmd, capture_output=True, text=True)
            status = "ok" if r.returncode == 0 else "FAILED"
            print("ptxas compute_%d -> sm_%d: %s" % (src, target, status))
            if r.returncode != 0:
                failures.append("%s: %s" % (" ".join(cmd), r.stderr.strip()))
        # Every kernel of kernels.def is in the PTX under its plain (extern "C") name.
        defs = open(os.path.join(os.path.dirname(source), "..", "src", "bench", "kernels.def")).read()
        names = [line.split("(", 1)[1].split(",", 1)[0] for line in defs.splitlines()
                 if line.startswith("KERNEL(")]
        text = open(ptx[archs[0]]).read() if archs[0] in ptx else ""
        for n in names:
            if ".entry %s(" % n not in text:
                failures.append("kernel %s of kernels.def is not in the PTX (extern \"C\"?)" % n)
        print("%d kernels, PTX for %d architectures" % (len(names), len(ptx)))
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Write a large fleet of node reports for perf/fleet_aggregate.sh, outside the repository:
OUTDIR/validation_results/<host>/ for NODES hosts, each with an 8-GPU check report made from
a real one (CHECK_TEMPLATE: the dgx-h100 golden report, ~78 KB) with its values varied (the
hostname, the kernel release on 1 node in 97, a failing link on 1 in 53, the duration), and
for every SHARE-th node a bench report (BENCH_TEMPLATE: a real gpuvet.bench/2 written on the
fake CUDA driver) with its figures varied by up to 3% (16 variants, taken in turn).

Usage: perf/fleet_gen.py OUTDIR NODES CHECK_TEMPLATE BENCH_TEMPLATE [SHARE]
"""
import copy
import json
import os
import random
import sys

HOST_PLACEHOLDER = "@@HOSTNAME@@"


def text_of(doc):
    doc = copy.deepcopy(doc)
    doc["host"]["hostname"] = HOST_PLACEHOLDER
    return json.dumps(doc, indent=2)


def check_variants(check):
    """Healthy, another kernel, a failing link: the texts the nodes are made of."""
    kernel = copy.deepcopy(check)
    kernel["host"]["kernel_release"] = "5.15.0-107-generic"
    failing = copy.deepcopy(check)
    c = next(c for c in failing["checks"] if c["id"] == "pcie.link_width")
    c["status"] = "fail"
    failing["summary"]["fail"] += 1
    failing["summary"]["pass"] -= 1
    failing["summary"]["verdict"] = "fail"
    return text_of(check), text_of(kernel), text_of(failing)


def bench_variants(bench, rnd, n=16):
    out = []
    for _ in range(n):
        b = copy.deepcopy(bench)
        for m in b["measurements"]:
            if m.get("stats"):
                m["stats"]["median"] *= rnd.uniform(0.97, 1.03)
        out.append(text_of(b))
    return out


def main(argv):
    if len(argv) not in (5, 6):
        sys.exit(__doc__)
    out, nodes, check_path, bench_path = argv[1], int(argv[2]), argv[3], argv[4]
    share = int(argv[5]) if len(argv) == 6 else 10
    with open(check_path) as f:
        healthy, kernel, failing = check_variants(json.load(f))
    rnd = random.Random(20261125)
    with open(bench_path) as f:
        benches = bench_variants(json.load(f), rnd)
    total = files = 0
    for i in range(nodes):
        host = "gpu-%05d" % i
        d = os.path.join(out, "validation_results", host)
        os.makedirs(d, exist_ok=True)
        text = kernel if i % 97 == 5 else failing if i % 53 == 7 else healthy
        text = text.replace(HOST_PLACEHOLDER, host)
        with open(os.path.join(d, "gpuvet-check-quick.json"), "w") as f:
            f.write(text)
        total += len(text)
        files += 1
        if i % share == 0:
            text = benches[(i // share) % len(benches)].replace(HOST_PLACEHOLDER, host)
            with open(os.path.join(d, "gpuvet-bench.json"), "w") as f:
                f.write(text)
            total += len(text)
            files += 1
    print("wrote %d nodes, %d files, %.1f MB under %s" % (nodes, files, total / 1e6, out))


if __name__ == "__main__":
    main(sys.argv)

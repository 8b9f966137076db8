#!/usr/bin/env python3
"""Golden tests of `gpuvet detect` on four GPU servers (tests/fixtures/machines.py):

- hgx-b300: 8x B300 (Blackwell Ultra, sm_103) on R580 580.95.05
- rtxpro6000-server: 2x RTX PRO 6000 Blackwell Server Edition on 570.133.20, below the
  card's own floor (575.57.08)
- p100-node: 4x P100 SXM2 on R590, past Pascal's last branch (R580)
- a40-node: 4x A40 (GA102, sm_86) with no driver installed

    test_detect.py GPUVET

Each report (--json) is compared with tests/golden/expected-detect/<name>.json after
dropping what changes between runs (root, gpuvet_version), and the facts the fixture
exists for are asserted on their own, so a golden rewritten by mistake still fails.
GPUVET_UPDATE_GOLDEN=1 rewrites the expected files. Exit 0 when all hold."""

import difflib
import json
import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import fixture_cache  # noqa: E402  (the shared fixture trees)

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "expected-detect")
PCI_IDS = os.path.join(HERE, "..", "fixtures", "pci.ids")
NAMES = ("hgx-b300", "rtxpro6000-server", "p100-node", "a40-node")

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL " + what)


def by(items, key, value):
    return next((i for i in items if i.get(key) == value), {})


def facts(name, doc):
    """What each fixture is for, asserted outside the golden file."""
    gpu = doc["gpus"][0]
    rec = gpu["recommended"]
    wheels = gpu["pytorch"]
    cuda = gpu["cuda"]
    if name == "hgx-b300":
        check(gpu["architecture"] == "blackwell_ultra" and gpu["sm"] == "sm_103", name + ": Blackwell Ultra, sm_103")
        check(doc["driver"]["branch"] == "R580" and doc["driver"]["branch_supported"], name + ": R580 is supported")
        check(rec["driver_branch"] == "R580" and rec["cuda"] == "13.0", name + ": R580 with CUDA 13.0 recommended")
        check(by(cuda, "version", "12.8")["verdict"] == "arch_unsupported", name + ": CUDA 12.8 has no sm_103")
        check(by(cuda, "version", "12.9")["verdict"] == "native", name + ": CUDA 12.9 builds sm_103")
        check(by(wheels, "wheel", "cu130")["verdict"] == "native", name + ": cu130 runs (sm_100 cubins)")
        check(by(wheels, "wheel", "cu126")["verdict"] == "arch_unsupported", name + ": cu126 has no Blackwell code")
    elif name == "rtxpro6000-server":
        check(gpu["datacenter"] is True, name + ": a datacenter card")
        check(gpu["driver_supports_gpu"] is False and "575.57.08" in (gpu["problem"] or ""),
              name + ": 570.133.20 is below the card's 575.57.08 floor")
        check(doc["driver"]["branch_supported"] is False, name + ": R570 is past its end of life")
        check(all(w["verdict"] != "native" for w in wheels), name + ": no wheel runs on this driver")
    elif name == "p100-node":
        check(gpu["architecture"] == "pascal", name + ": Pascal")
        check("past R580" in (gpu["problem"] or ""), name + ": R590 is past Pascal's last branch")
        check(rec["driver_branch"] == "R580" and rec["cuda"] == "12.9", name + ": R580 with CUDA 12.9 recommended")
        check(by(cuda, "version", "13.0")["verdict"] == "arch_unsupported", name + ": CUDA 13 cannot run Pascal")
        check(by(wheels, "wheel", "cu130")["verdict"] == "arch_unsupported", name + ": cu130 cannot run Pascal")
    elif name == "a40-node":
        check(doc["driver"]["installed"] is False and gpu["driver_assumed"] is True, name + ": no driver, R580 assumed")
        check(gpu["compute_capability"] == "8.6", name + ": GA102 is 8.6")
        check(by(cuda, "version", "11.0")["verdict"] == "arch_unsupported", name + ": sm_86 came with CUDA 11.1")
        check(by(cuda, "version", "11.1")["verdict"] == "native", name + ": CUDA 11.1 builds sm_86")
        check(by(wheels, "wheel", "cu126")["verdict"] == "native", name + ": cu126 runs natively on R580")


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: test_detect.py GPUVET\n")
        return 2
    gpuvet = os.path.abspath(argv[1])
    fixtures = fixture_cache.ensure(*NAMES)
    update = os.environ.get("GPUVET_UPDATE_GOLDEN") == "1"
    for name in NAMES:
        root = os.path.join(fixtures, name)
        proc = subprocess.run([gpuvet, "detect", "--root", root, "--json"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True,
                              env=dict(os.environ, GPUVET_PCI_IDS=PCI_IDS))
        if proc.returncode != 0:
            check(False, "%s: gpuvet detect exited %d: %s" % (name, proc.returncode, proc.stderr.strip()))
            continue
        doc = json.loads(proc.stdout)
        doc.pop("root", None)
        doc.pop("gpuvet_version", None)
        facts(name, doc)
        got = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        path = os.path.join(EXPECTED, name + ".json")
        if update:
            os.makedirs(EXPECTED, exist_ok=True)
            with open(path, "w") as f:
                f.write(got)
            print("updated " + os.path.relpath(path))
            continue
        try:
            with open(path) as f:
                want = f.read()
        except OSError as e:
            check(False, "%s: %s (GPUVET_UPDATE_GOLDEN=1 creates it)" % (name, e))
            continue
        if got != want:
            sys.stdout.writelines(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                                       "expected-detect/%s.json" % name, "got"))
            check(False, "%s: report differs from the golden file" % name)
        else:
            print("ok   " + name)
    for_driver(gpuvet, fixtures)
    json_file(gpuvet, fixtures)
    return 1 if failures else 0


def run_detect(gpuvet, *args):
    return subprocess.run([gpuvet, "detect"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=dict(os.environ, GPUVET_PCI_IDS=PCI_IDS))


def for_driver(gpuvet, fixtures):
    """--for-driver: what an installer asks before it installs a driver."""
    p100 = os.path.join(fixtures, "p100-node")
    proc = run_detect(gpuvet, "--root", p100, "--json", "--for-driver", "535")
    if proc.returncode != 0:
        check(False, "--for-driver 535 exited %d: %s" % (proc.returncode, proc.stderr.strip()))
        return
    doc = json.loads(proc.stdout)
    planned, gpu = doc["for_driver"], doc["gpus"][0]
    check(planned["requested"] == "535" and planned["version"] == "535.309.01" and planned["branch"] == "R535",
          "--for-driver 535 means R535's newest known driver: %s" % planned)
    check(planned["max_cuda_native"] == "12.2" and planned["max_cuda_minor_compat"] == "12.9",
          "R535 runs CUDA 12.2 natively and 12.9 with minor-version compatibility")
    check(doc["driver"]["installed"] and doc["driver"]["version"] == "590.48.01",
          "the installed driver is still described as installed")
    check(gpu["evaluated_driver"] == "535.309.01" and gpu["driver_assumed"] is True,
          "every GPU is judged for the planned driver")
    check(gpu["driver_supports_gpu"] is True and gpu["problem"] is None, "R535 drives Pascal (R590 does not)")
    check(by(gpu["cuda"], "version", "12.8")["verdict"] == "minor_compat", "CUDA 12.8 on R535: minor compat")
    check(by(gpu["cuda"], "version", "12.2")["verdict"] == "native", "CUDA 12.2 on R535: native")
    b300 = run_detect(gpuvet, "--root", os.path.join(fixtures, "hgx-b300"), "--json", "--for-driver", "R535")
    gpu = json.loads(b300.stdout)["gpus"][0] if b300.returncode == 0 else {}
    check(gpu.get("driver_supports_gpu") is False and "580.82.07" in (gpu.get("problem") or ""),
          "R535 cannot drive Blackwell Ultra, and the problem names the floor")
    exact = run_detect(gpuvet, "--root", p100, "--json", "--for-driver", "580.65.06")
    check(exact.returncode == 0 and json.loads(exact.stdout)["for_driver"]["version"] == "580.65.06",
          "a full version is judged as given")
    text = run_detect(gpuvet, "--root", p100, "--for-driver", "580")
    check(text.returncode == 0 and "Judged for driver 580.95.05 (--for-driver 580; R580" in text.stdout,
          "the text names the driver it judges for")
    # CUDA 13.4 GA (13.4.1) needs R615, 13.4 Update 1 is 13.4.2, 13.5 runs on R620's
    # 620.70.06 (its redist manifest ships cuda_compat for cuda13.5); R615 is a branch
    # NVIDIA ships (domain review F49, F52; compat.json cites each).
    b300_root = os.path.join(fixtures, "hgx-b300")
    r620 = run_detect(gpuvet, "--root", b300_root, "--json", "--for-driver", "620.70.06")
    planned = json.loads(r620.stdout)["for_driver"] if r620.returncode == 0 else {}
    check(planned.get("branch") == "R620" and planned.get("max_cuda_native") == "13.5",
          "--for-driver 620.70.06 runs CUDA 13.5 natively: %s" % planned)
    r620 = run_detect(gpuvet, "--root", b300_root, "--for-driver", "620.70.06")
    check(r620.returncode == 0 and "CUDA <= 13.5 natively" in r620.stdout, "the text says CUDA 13.5 for 620.70.06")
    r615 = run_detect(gpuvet, "--root", b300_root, "--json", "--for-driver", "615.71.09")
    planned = json.loads(r615.stdout)["for_driver"] if r615.returncode == 0 else {}
    check(planned.get("branch") == "R615" and planned.get("branch_kind") == "NFB"
          and planned.get("max_cuda_native") == "13.4",
          "--for-driver 615.71.09 knows R615 (a new feature branch) and CUDA 13.4: %s" % planned)
    r615 = run_detect(gpuvet, "--root", b300_root, "--for-driver", "615.71.09")
    check(r615.returncode == 0 and "not a datacenter branch NVIDIA lists" not in r615.stdout
          and "past its end of life" not in r615.stdout.split("Judged for", 1)[-1].split("\n", 1)[0],
          "R615 is named, and not called past its end of life: %s" % r615.stdout.splitlines()[:3])
    r615 = run_detect(gpuvet, "--root", b300_root, "--json", "--for-driver", "615")
    check(r615.returncode == 0 and json.loads(r615.stdout)["for_driver"]["version"] == "615.71.09",
          "--for-driver 615 means R615's known driver 615.71.09")
    for bad, words in (("999", "lists no branch R999"), ("abc", "expected a driver version"),
                       ("R580.1", "expected a driver version"), ("", "--for-driver: empty value")):
        proc = run_detect(gpuvet, "--root", p100, "--for-driver", bad)
        check(proc.returncode == 2 and words in proc.stderr and proc.stdout == "",
              "--for-driver %r: exit 2 naming the problem (got %d: %s)" % (bad, proc.returncode, proc.stderr.strip()))
    print("ok   --for-driver")


def json_file(gpuvet, fixtures):
    """--json FILE prints the text and writes the same answer to FILE; --json alone (or -)
    puts the JSON alone on standard output."""
    p100 = os.path.join(fixtures, "p100-node")
    alone = run_detect(gpuvet, "--root", p100, "--json")
    dash = run_detect(gpuvet, "--root", p100, "-j", "-")
    check(alone.returncode == 0 and dash.stdout == alone.stdout and alone.stdout.startswith("{"),
          "--json and -j -: the JSON alone on standard output: %s" % alone.stderr.strip())
    text = run_detect(gpuvet, "--root", p100)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "detect.json")
        both = run_detect(gpuvet, "--root", p100, "--json", path)
        written = open(path).read() if os.path.exists(path) else ""
    check(both.returncode == 0 and both.stdout == text.stdout and written == alone.stdout,
          "--json FILE: the text on standard output and the JSON in FILE (%d: %s)" % (both.returncode,
                                                                                   both.stderr.strip()))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "gpus.json")
        table = run_detect(gpuvet, "--list-gpus", "--json", path)
        written = json.load(open(path)) if os.path.exists(path) else {}
    check(table.returncode == 0 and not table.stdout.startswith("{") and written.get("schema") == "gpuvet.gpus/1",
          "--list-gpus --json FILE: the table as text and gpuvet.gpus/1 in FILE: %s" % table.stderr.strip())
    print("ok   --json FILE")


if __name__ == "__main__":
    sys.exit(main(sys.argv))

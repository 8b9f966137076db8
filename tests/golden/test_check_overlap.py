#!/usr/bin/env python3
"""`gpuvet check` reads NVML while it gathers the sysfs facts, and holds the CUDA driver probe
until the facts are in (docs/nvml.md, "Using it"; docs/perf.md, issue 13).

    test_check_overlap.py GPUVET_TEST_HOOKS FAKE_LIBNVML FAKE_LIBCUDA

gpuvet-test-hooks is gpuvet with GPUVET_TEST_FACTS_HOLD=FILE: its facts are not done until
FILE exists, as on a node whose sysfs reads are slow. The test does not create FILE until
the fake NVML has logged every call of the reference run ($FAKE_NVML_CALL_LOG, nvmlShutdown
aside), so a check that reads NVML only after the facts never gets there: the test then
fails after its wait (60 s, scaled), whatever the machine's speed. Nothing here is timed
against a figure: the order is shown by what the fakes logged before FILE existed.

While the facts are held, the fake libcuda must not have been loaded ($FAKE_CUDA_LOAD_LOG):
the probe's child, forked before NVML's threads, waits at its gate. The hold lasts longer
than --cuda-init-timeout-ms, so a deadline counted from the fork rather than the release
would end in a timeout. After FILE: the run ends as the reference run did (same results),
the probe having run once (gpu.cuda_driver passes). Exit 0 when all holds, 1 otherwise."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakes"))
import fakeenv  # noqa: E402  (time_scale)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import fixture_cache  # noqa: E402  (the shared fixture trees)

HERE = os.path.dirname(os.path.abspath(__file__))
SCN = os.path.join(HERE, "nvml-scenarios", "golden-dgx-h100.scn")
PCI_IDS = os.path.join(HERE, "..", "fixtures", "pci.ids")
CUDA_TIMEOUT_MS = 1000
WAIT_S = 60 * fakeenv.time_scale()


def lines(path):
    try:
        with open(path) as f:
            return [line.split() for line in f if line.strip()]
    except FileNotFoundError:
        return []


def nvml_calls(path):
    return [w for w in lines(path) if w and w[0] != "nvmlShutdown"]


def results(report):
    return [(r["id"], r.get("subject"), r["status"], r["summary"]) for r in report["checks"]]


def main():
    gpuvet, fake_nvml, fake_cuda = sys.argv[1:4]
    root = os.path.join(fixture_cache.ensure("dgx-h100"), "dgx-h100")
    with tempfile.TemporaryDirectory(prefix="gpuvet-overlap-") as tmp:
        libdir = os.path.join(tmp, "lib")
        os.makedirs(libdir)
        libcuda = os.path.join(libdir, "libcuda.so.550.54.15")
        shutil.copyfile(fake_cuda, libcuda)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_CUDA_", "FAKE_NVML_", "GPUVET_"))}
        env.update(GPUVET_PCI_IDS=PCI_IDS, GPUVET_NVML_LIB=fake_nvml, FAKE_NVML_SCENARIO=SCN,
                   GPUVET_CUDA_LIB=libcuda, FAKE_CUDA_DEVICES="8")

        def argv(out):
            return [gpuvet, "check", "--level", "quick", "--root", root, "--json", out, "--quiet",
                    "--cuda-init-timeout-ms", str(CUDA_TIMEOUT_MS)]

        # The reference: the same run with nothing held.
        ref_calls, ref_loads = os.path.join(tmp, "ref-calls"), os.path.join(tmp, "ref-loads")
        p = subprocess.run(argv(os.path.join(tmp, "ref.json")), capture_output=True, text=True, timeout=WAIT_S,
                           env=dict(env, FAKE_NVML_CALL_LOG=ref_calls, FAKE_CUDA_LOAD_LOG=ref_loads))
        if not check(p.returncode == 0, "reference run: exit 0, got %d %s" % (p.returncode, p.stderr[-500:])):
            return finish()
        with open(os.path.join(tmp, "ref.json")) as f:
            ref = json.load(f)
        want = len(nvml_calls(ref_calls))
        check(want > 8 * 10, "reference run: %d NVML calls logged" % want)
        check(len(lines(ref_loads)) == 1, "reference run: libcuda loaded once (by the probe)")

        # The held run.
        go = os.path.join(tmp, "go")
        calls, loads = os.path.join(tmp, "calls"), os.path.join(tmp, "loads")
        start = time.monotonic()
        proc = subprocess.Popen(argv(os.path.join(tmp, "held.json")), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=dict(env, GPUVET_TEST_FACTS_HOLD=go, FAKE_NVML_CALL_LOG=calls,
                                                    FAKE_CUDA_LOAD_LOG=loads))
        while len(nvml_calls(calls)) < want and proc.poll() is None and time.monotonic() - start < WAIT_S:
            time.sleep(0.01)
        got = len(nvml_calls(calls))
        finished_early = proc.poll() is not None
        check(got == want and not finished_early,
              "while the facts are held, NVML is read: %d of the reference's %d calls logged%s" %
              (got, want, " (the run ended while held)" if finished_early else ""))
        check(not any(w[0] == "nvmlShutdown" for w in lines(calls)), "NVML is not shut down while the facts are held")
        # Held longer than the probe's deadline: a deadline counted from the fork would end in
        # a timeout.
        while time.monotonic() - start < (CUDA_TIMEOUT_MS + 500) / 1000:
            time.sleep(0.01)
        check(len(lines(loads)) == 0, "while the facts are held, the CUDA probe waits: libcuda not loaded")
        open(go, "w").close()
        try:
            out, err = proc.communicate(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        check(proc.returncode == 0, "held run: exit 0, got %s %s" % (proc.returncode, err[-500:]))
        check(len(lines(loads)) == 1, "released: libcuda loaded once (by the probe)")
        held = None
        try:
            with open(os.path.join(tmp, "held.json")) as f:
                held = json.load(f)
        except (OSError, ValueError):
            pass
        if check(held is not None, "held run: a JSON report"):
            check(results(held) == results(ref), "held run: the reference's results")
            cuda = [r for r in held["checks"] if r["id"] == "gpu.cuda_driver"]
            check(len(cuda) == 1 and cuda[0]["status"] == "pass",
                  "gpu.cuda_driver passes (its deadline counted from the release): %s" %
                  [(r["status"], r["summary"]) for r in cuda])
            check(len(nvml_calls(calls)) == want, "held run: no NVML call more than the reference's")
    return finish()


if __name__ == "__main__":
    sys.exit(main())

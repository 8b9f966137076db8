#!/usr/bin/env python3
"""gpuvet query against the fake NVML (suite 'golden').

Usage: test_query.py GPUVET SRC_ROOT FAKE_LIB BUILD_DIR

1. For every captured-*.scn (tests/fakes/smi2scenario.py output of a real `nvidia-smi -q`),
   `gpuvet query --query-gpu=<every supported field the capture's CSV has> --format=csv`
   reproduces the capture's own `nvidia-smi --query-gpu ... --format=csv` section, cell by
   cell (the timestamp only by format); with nounits and noheader too.
2. pynvml (nvidia-ml-py) and gpustat, run against the same fake, see the same name, UUID,
   memory, temperature, power and utilisation as gpuvet query (skipped, loudly, when PyPI
   cannot be reached to install them).
3. Conventions: aliases, -i by index/UUID/bus id, -f, an unknown field (exit 2, named),
   SIGTERM during -lms (exit 0, whole lines only), a hung call (finishes, [N/A], exit 1),
   no driver (exit 1, says so).
4. Loops that must end: a round slower than the interval still stops within a second of
   SIGINT/SIGTERM; a wedged nvmlShutdown between rounds stops the loop (exit 3, named).
5. Only what is asked is read (the fake's call log): --query-gpu=name makes at most 5 NVML
   calls per GPU, a power field never walks NVLinks, and every field still answers.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

GPUVET, SRC_ROOT, FAKE_LIB, BUILD_DIR = sys.argv[1:5]
FAKES = os.path.join(SRC_ROOT, "tests", "fakes")
SCENARIOS = os.path.join(FAKES, "scenarios")
REALDATA = os.path.join(SRC_ROOT, "tests", "realdata", "nvidia_gpu_exporter")

os.environ.setdefault("FAKE_NVML_LIB", FAKE_LIB)
os.environ.setdefault("FAKE_NVML_BUILD_DIR", BUILD_DIR)
sys.path.insert(0, FAKES)
import fakeenv  # noqa: E402  (the fake's helpers: env, client venv)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)
    return cond


def env_for(scenario, extra=None):
    """For the Python clients (pynvml, gpustat) on the fake."""
    return fakeenv.run_env(scenario, dict({"GPUVET_NVML_LIB": FAKE_LIB}, **(extra or {})))


def gpuvet_env_for(scenario, extra=None):
    """For gpuvet itself: leak checks stay on under ASan."""
    return fakeenv.gpuvet_env(scenario, dict({"GPUVET_NVML_LIB": FAKE_LIB}, **(extra or {})))


def gpuvet(args, scenario, timeout=60, extra=None):
    return subprocess.run([GPUVET, "query"] + args, env=gpuvet_env_for(scenario, extra), capture_output=True, text=True,
                          timeout=timeout)


def supported_fields():
    r = subprocess.run([GPUVET, "query", "--help-query-gpu"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    names = re.findall(r'^"([^"]+)"', r.stdout, re.M)
    assert names, "--help-query-gpu lists no field"
    return names


def split_row(line):
    return [c.strip() for c in line.split(", ")]


def capture_csv(path):
    """The first `nvidia-smi --query-gpu=... --format=csv` section: (header, [rows])."""
    lines = open(path).read().split("\n")
    for i, line in enumerate(lines):
        if line.startswith("# $ nvidia-smi --query-gpu=") and line.rstrip().endswith("--format=csv"):
            j = i + 1
            while lines[j].startswith("#"):
                j += 1
            header = split_row(lines[j])
            rows = []
            k = j + 1
            while k < len(lines) and lines[k].strip() and not lines[k].startswith("#"):
                rows.append(split_row(lines[k]))
                k += 1
            return header, rows
    raise RuntimeError(path + ": no --query-gpu CSV section")


def base_name(h):
    return h.split(" [")[0]


TIMESTAMP = re.compile(r"^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$")


def strip_unit(header_cell, value):
    m = re.search(r"\[(.+)\]$", header_cell)
    if m and value.endswith(" " + m.group(1)):
        return value[: -len(m.group(1)) - 1]
    return value


def scenario_with_cc(scn, header, row, tmp):
    """nvidia-smi -q does not print the compute capability, so the converter cannot put it
    in the scenario; take it from the capture's own CSV (an include adds it)."""
    text = open(scn).read()
    if "cuda_compute_capability" in text or "compute_cap" not in header:
        return scn
    path = os.path.join(tmp, os.path.basename(scn))
    with open(path, "w") as f:
        f.write("include %s\n[gpu 0]\ncuda_compute_capability = %s\n" % (scn, row[header.index("compute_cap")]))
    return path


# nvidia-smi -q (which the scenario comes from) and the CSV section were sampled moments
# apart: a live reading may differ between them. For these the scenario's value (the -q
# one) is accepted too, formatted as nvidia-smi would.
LIVE = {
    "power.draw": ("power_usage", lambda v: "%.2f W" % (fakeenv.to_mw(v) / 1000.0)),
    "temperature.gpu": ("temperature", lambda v: str(fakeenv.to_int(v))),
    "temperature.gpu.tlimit": ("temperature_margin", lambda v: str(fakeenv.to_int(v))),
    "temperature.memory": ("temperature_memory", lambda v: str(fakeenv.to_int(v))),
    "utilization.gpu": ("utilization_gpu", lambda v: "%d %%" % fakeenv.to_int(v)),
    "utilization.memory": ("utilization_memory", lambda v: "%d %%" % fakeenv.to_int(v)),
    "memory.used": ("memory_used", lambda v: "%d MiB" % (fakeenv.to_bytes(v) >> 20)),
    "memory.free": ("memory_free", lambda v: "%d MiB" % (fakeenv.to_bytes(v) >> 20)),
}


def live_value(scn_values, field, fmt, header_cell):
    key, conv = LIVE[field]
    if key not in scn_values:
        return None
    v = conv(scn_values[key])
    return strip_unit(header_cell, v) if fmt == "csv,nounits" else v


def test_captures(fields, tmp):
    scns = sorted(f for f in os.listdir(SCENARIOS) if f.startswith("captured-") and f.endswith(".scn"))
    check(scns, "no captured-*.scn scenario in " + SCENARIOS)
    for name in scns:
        scn = os.path.join(SCENARIOS, name)
        m = re.search(r"from (\S+\.txt)", open(scn).read())
        if not check(m, name + ": names no capture"):
            continue
        header, rows = capture_csv(os.path.join(REALDATA, m.group(1)))
        names = [base_name(h) for h in header]
        before = len(failures)
        wanted = [f for f in fields if f in names]
        scn_values = fakeenv.load_scenario(scn)["gpus"].get(0, {})
        scn = scenario_with_cc(scn, names, rows[0], tmp)
        for fmt in ("csv", "csv,nounits", "csv,noheader"):
            r = gpuvet(["--query-gpu=" + ",".join(wanted), "--format=" + fmt], scn)
            if not check(r.returncode == 0, "%s %s: exit %d: %s" % (name, fmt, r.returncode, r.stderr)):
                continue
            out = r.stdout.rstrip("\n").split("\n")
            if fmt != "csv,noheader":
                got_header = split_row(out.pop(0))
                for f, h in zip(wanted, got_header):
                    check(h == header[names.index(f)], "%s: header %r, nvidia-smi %r" % (name, h, header[names.index(f)]))
            check(len(out) == len(rows), "%s %s: %d rows, capture %d" % (name, fmt, len(out), len(rows)))
            for got, want in zip(out, rows):
                cells = split_row(got)
                check(len(cells) == len(wanted), "%s: %d cells, asked %d" % (name, len(cells), len(wanted)))
                for f, v in zip(wanted, cells):
                    h = header[names.index(f)]
                    exp = want[names.index(f)]
                    if f == "timestamp":
                        check(TIMESTAMP.match(v), "%s: timestamp %r" % (name, v))
                        continue
                    if fmt == "csv,nounits":
                        exp = strip_unit(h, exp)
                    if v != exp and f in LIVE and v == live_value(scn_values, f, fmt, h):
                        if fmt == "csv":
                            print("note: %s: %s = %r is nvidia-smi -q's reading; its CSV, taken later, has %r"
                                  % (name, f, v, exp))
                        continue
                    check(v == exp, "%s %s: %s = %r, nvidia-smi printed %r" % (name, fmt, f, v, exp))
        if len(failures) == before:
            print("ok: %s: %d fields match the capture's CSV" % (name, len(wanted)))


CLIENT_SCRIPT = r"""
import json, sys
import pynvml as N
N.nvmlInit()
out = []
def s(x):
    return x.decode() if isinstance(x, bytes) else x
for i in range(N.nvmlDeviceGetCount()):
    h = N.nvmlDeviceGetHandleByIndex(i)
    # v2, as nvidia-smi and gpuvet: v1's "used" includes the reserved memory
    m = N.nvmlDeviceGetMemoryInfo(h, version=N.nvmlMemory_v2)
    m1 = N.nvmlDeviceGetMemoryInfo(h)
    assert m1.used == m1.total - m1.free, (m1.used, m1.total, m1.free)
    u = N.nvmlDeviceGetUtilizationRates(h)
    out.append({"name": s(N.nvmlDeviceGetName(h)), "uuid": s(N.nvmlDeviceGetUUID(h)),
                "memory.total": m.total // 2**20, "memory.used": m.used // 2**20,
                "temperature.gpu": N.nvmlDeviceGetTemperature(h, N.NVML_TEMPERATURE_GPU),
                "power.draw": N.nvmlDeviceGetPowerUsage(h) / 1000.0,
                "enforced.power.limit": N.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0,
                "utilization.gpu": u.gpu, "utilization.memory": u.memory})
N.nvmlShutdown()
print(json.dumps(out))
"""

CROSS = ["index", "name", "uuid", "memory.total", "memory.used", "temperature.gpu", "power.draw",
         "enforced.power.limit", "utilization.gpu", "utilization.memory"]


def test_clients(scenario):
    try:
        py = fakeenv.venv_python()
    except SystemExit:
        print("SKIP (loud): pynvml/gpustat cross-check: the client venv could not be created")
        return
    scn = os.path.join(SCENARIOS, scenario)
    r = gpuvet(["--query-gpu=" + ",".join(CROSS), "--format=csv,noheader,nounits"], scn)
    if not check(r.returncode == 0, "%s: gpuvet exit %d: %s" % (scenario, r.returncode, r.stderr)):
        return
    ours = [dict(zip(CROSS, split_row(line))) for line in r.stdout.strip().split("\n")]

    env = env_for(scn)
    p = subprocess.run([py, "-c", CLIENT_SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    if check(p.returncode == 0, "%s: pynvml script: %s" % (scenario, p.stderr)):
        theirs = json.loads(p.stdout)
        check(len(theirs) == len(ours), "%s: pynvml sees %d GPUs, gpuvet %d" % (scenario, len(theirs), len(ours)))
        for o, t in zip(ours, theirs):
            for k in ("name", "uuid"):
                check(o[k] == t[k], "%s GPU %s: %s gpuvet %r pynvml %r" % (scenario, o["index"], k, o[k], t[k]))
            for k in ("memory.total", "memory.used", "temperature.gpu", "utilization.gpu", "utilization.memory"):
                check(int(o[k]) == t[k], "%s GPU %s: %s gpuvet %s pynvml %s" % (scenario, o["index"], k, o[k], t[k]))
            for k in ("power.draw", "enforced.power.limit"):
                check(o[k] == "%.2f" % t[k], "%s GPU %s: %s gpuvet %s pynvml %.2f" % (scenario, o["index"], k, o[k], t[k]))
        print("ok: %s: pynvml agrees on %d GPUs" % (scenario, len(theirs)))

    gpustat = os.path.join(os.path.dirname(py), "gpustat")
    p = subprocess.run([gpustat, "--json"], env=env, capture_output=True, text=True, timeout=120)
    if check(p.returncode == 0, "%s: gpustat --json: %s" % (scenario, p.stderr)):
        gpus = json.loads(p.stdout)["gpus"]
        check(len(gpus) == len(ours), "%s: gpustat sees %d GPUs, gpuvet %d" % (scenario, len(gpus), len(ours)))
        for o, t in zip(ours, gpus):
            check(int(o["index"]) == t["index"], "%s: gpustat index %s" % (scenario, t["index"]))
            for k in ("name", "uuid"):
                check(o[k] == t[k], "%s GPU %s: %s gpuvet %r gpustat %r" % (scenario, o["index"], k, o[k], t[k]))
            for k in ("memory.total", "memory.used", "temperature.gpu", "utilization.gpu"):
                check(int(o[k]) == t[k], "%s GPU %s: %s gpuvet %s gpustat %s" % (scenario, o["index"], k, o[k], t[k]))
            # gpustat prints whole watts (milliwatts // 1000)
            for k in ("power.draw", "enforced.power.limit"):
                check(int(float(o[k])) == t[k], "%s GPU %s: %s gpuvet %s gpustat %s" % (scenario, o["index"], k, o[k], t[k]))
        print("ok: %s: gpustat agrees on %d GPUs" % (scenario, len(gpus)))


def test_conventions(tmp):
    h100 = os.path.join(SCENARIOS, "h100-sxm-8gpu.scn")

    r = gpuvet(["--query-gpu=name,foo.bar", "--format=csv"], h100)
    check(r.returncode == 2, "unknown field: exit %d, not 2" % r.returncode)
    check('Field "foo.bar" is not a valid field to query.' in r.stderr, "unknown field not named: " + r.stderr)
    check(r.stdout == "", "unknown field: stdout %r" % r.stdout)
    r = gpuvet(["--query-gpu=name", "--format=xml"], h100)
    check(r.returncode == 2, "--format=xml: exit %d, not 2" % r.returncode)

    # aliases answer under the canonical header, as nvidia-smi's do
    r = gpuvet(["--query-gpu=gpu_name,clocks.sm,clocks_throttle_reasons.gpu_idle,gpu_bus_id", "--format=csv"], h100)
    check(r.returncode == 0, "aliases: exit %d %s" % (r.returncode, r.stderr))
    check(r.stdout.split("\n")[0] == "name, clocks.current.sm [MHz], clocks_event_reasons.gpu_idle, pci.bus_id",
          "aliases header: " + r.stdout.split("\n")[0])

    # -i: index, UUID, PCI bus id in NVML's and sysfs' spelling
    r = gpuvet(["--query-gpu=index,uuid,pci.bus_id", "--format=csv,noheader"], h100)
    rows = [split_row(x) for x in r.stdout.strip().split("\n")]
    check(len(rows) == 8, "h100-sxm-8gpu: %d rows" % len(rows))
    idx, uuid, bus = rows[5]
    sysfs_bus = bus[4:].lower()
    for sel, want in (("5", ["5"]), (uuid, ["5"]), (bus, ["5"]), (sysfs_bus, ["5"]), ("2," + uuid, ["2", "5"])):
        r = gpuvet(["--query-gpu=index", "--format=csv,noheader", "-i", sel], h100)
        check(r.returncode == 0 and r.stdout.split() == want, "-i %s: %r %s" % (sel, r.stdout, r.stderr))
    r = gpuvet(["--query-gpu=index", "--format=csv", "-i", "9"], h100)
    check(r.returncode == 2 and "-i 9" in r.stderr, "-i 9 on 8 GPUs: exit %d %s" % (r.returncode, r.stderr))

    # -f: the file holds the output, stdout nothing; it is truncated first
    path = os.path.join(tmp, "q.csv")
    with open(path, "w") as f:
        f.write("old content that must go\n" * 50)
    r = gpuvet(["--query-gpu=index,name", "--format=csv", "-f", path], h100)
    text = open(path).read()
    check(r.returncode == 0 and r.stdout == "" and text.startswith("index, name\n0, NVIDIA H100") and "old" not in text,
          "-f: %r / %r" % (r.stdout, text[:80]))

    # -lms loop, stopped by SIGTERM: exit 0, only whole lines, header once
    for sig in (signal.SIGTERM, signal.SIGINT):
        p = subprocess.Popen([GPUVET, "query", "--query-gpu=timestamp,index,power.draw", "--format=csv", "-lms", "50"],
                             env=gpuvet_env_for(h100), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.6)
        p.send_signal(sig)
        try:
            out, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            check(False, "-lms: still running 10 s after %s" % sig.name)
        check(p.returncode == 0, "-lms + %s: exit %d %s" % (sig.name, p.returncode, err))
        lines = out.split("\n")
        check(out.endswith("\n") and lines.count("timestamp, index, power.draw [W]") == 1,
              "-lms: partial line or header repeated: %r" % out[-200:])
        body = [x for x in lines[1:] if x]
        check(len(body) >= 16 and len(body) % 8 == 0 and all(len(split_row(x)) == 3 for x in body),
              "-lms + %s: %d rows" % (sig.name, len(body)))
    r = gpuvet(["--query-gpu=index", "-l", "0"], h100)
    check(r.returncode == 2, "-l 0: exit %d" % r.returncode)

    # a call that never returns: the query still ends, within the per-call deadline
    t0 = time.monotonic()
    r = gpuvet(["--query-gpu=index,name,power.draw,temperature.gpu", "--format=csv,noheader"],
               os.path.join(SCENARIOS, "hang.scn"), timeout=30)
    dt = time.monotonic() - t0
    rows = [split_row(x) for x in r.stdout.strip().split("\n")]
    check(r.returncode == 1, "hang: exit %d, not 1" % r.returncode)
    check(dt < 10 * fakeenv.time_scale(), "hang: took %.1f s" % dt)
    check(len(rows) == 8 and rows[3][2] == "[N/A]" and rows[2][2].endswith(" W"), "hang: rows %r" % rows)
    check("nvmlDeviceGetPowerUsage" in r.stderr, "hang: stderr does not name the call: " + r.stderr)

    # no driver: a message, exit 1, nothing on stdout
    r = gpuvet(["--query-gpu=index", "--format=csv"], os.path.join(SCENARIOS, "driver-not-loaded.scn"))
    check(r.returncode == 1 and r.stdout == "" and "nvmlInit" in r.stderr, "driver-not-loaded: %d %r %r" %
          (r.returncode, r.stdout, r.stderr))
    r = gpuvet(["--query-gpu=index", "--format=csv"], h100, extra={"GPUVET_NVML_LIB": "/nonexistent/libnvidia-ml.so.1"})
    check(r.returncode == 1 and "NVML could not be loaded" in r.stderr, "no library: %d %r" % (r.returncode, r.stderr))

    # a GPU fallen off the bus: its cells say so, the others answer
    r = gpuvet(["--query-gpu=index,name,temperature.gpu", "--format=csv,noheader"],
               os.path.join(SCENARIOS, "xid79-lost.scn"))
    check(r.returncode == 1 and "[GPU is lost]" in r.stdout, "xid79-lost: %d %r" % (r.returncode, r.stdout))
    # One field's call answering GPU_IS_LOST while the others answer: exit 1 too, as the
    # docs say for [GPU is lost] cells (review B19).
    lost = os.path.join(tmp, "temp-lost.scn")
    with open(lost, "w") as f:
        f.write("include %s\nfault nvmlDeviceGetTemperature 2 GPU_IS_LOST\n" % h100)
    r = gpuvet(["--query-gpu=index,name,temperature.gpu", "--format=csv,noheader"], lost)
    rows = [split_row(x) for x in r.stdout.strip().split("\n")]
    check(r.returncode == 1 and rows[2][2] == "[GPU is lost]" and rows[1][2] != "[GPU is lost]",
          "one call GPU_IS_LOST: exit %d %r" % (r.returncode, rows))
    check("GPU 2" in r.stderr and "lost" in r.stderr, "one call GPU_IS_LOST: stderr %r" % r.stderr)
    print("ok: conventions")


def stop_loop(args, scenario_text, tmp, sig, settle_s):
    """Start `query ARGS` on SCENARIO_TEXT, send SIG after SETTLE_S; (exit, seconds to exit, out, err)."""
    scn = os.path.join(tmp, "loop.scn")
    with open(scn, "w") as f:
        f.write(scenario_text)
    p = subprocess.Popen([GPUVET, "query"] + args, env=gpuvet_env_for(scn), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(settle_s)
    t0 = time.monotonic()
    p.send_signal(sig)
    try:
        out, err = p.communicate(timeout=30 * fakeenv.time_scale())
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        return None, None, out, err
    return p.returncode, time.monotonic() - t0, out, err


def test_loops_end(tmp):
    base = "include %s\n" % os.path.join(SCENARIOS, "h100-sxm-8gpu.scn")
    scale = fakeenv.time_scale()
    # Every round outlasts -l 1: the signal arrives while NVML is being read, never while
    # the loop sleeps. It must still be taken, within the supervisor's 100 ms poll.
    for sig in (signal.SIGINT, signal.SIGTERM):
        rc, dt, out, err = stop_loop(["--query-gpu=index,power.draw", "--format=csv", "-l", "1"],
                                     base + "latency nvmlDeviceGetPowerUsage 1100\n", tmp, sig, 3.0)
        if check(rc is not None, "slow round + %s: still running 30 s after the signal" % sig.name):
            check(rc == 0, "slow round + %s: exit %s %s" % (sig.name, rc, err))
            check(dt < 1.0 * scale, "slow round + %s: took %.2f s to stop (> 1 s)" % (sig.name, dt))
            check(out.endswith("\n") and all(len(split_row(x)) == 2 for x in out.split("\n")[1:] if x),
                  "slow round + %s: partial rows %r" % (sig.name, out[-200:]))
    # nvmlShutdown never returns: the first round's release hangs; the loop must end on
    # its own (exit 3, the call named) instead of stranding a thread per round.
    scn = os.path.join(tmp, "shutdown-hang.scn")
    with open(scn, "w") as f:
        f.write(base + "hang nvmlShutdown *\n")
    t0 = time.monotonic()
    try:
        r = subprocess.run([GPUVET, "query", "--query-gpu=index", "--format=csv", "-lms", "200"],
                           env=gpuvet_env_for(scn), capture_output=True, text=True, timeout=30 * scale)
        dt = time.monotonic() - t0
        check(r.returncode == 3, "nvmlShutdown hang in a loop: exit %d, not 3 %s" % (r.returncode, r.stderr))
        check("nvmlShutdown" in r.stderr, "nvmlShutdown hang in a loop: not named: %r" % r.stderr)
        check(dt < 10 * scale, "nvmlShutdown hang in a loop: took %.1f s" % dt)
    except subprocess.TimeoutExpired:
        check(False, "nvmlShutdown hang in a loop: still running after 30 s")
    print("ok: loops end")


def call_log(args, scenario, tmp):
    """Run query with the fake's call log on; return (result, [(function, gpu)])."""
    log = os.path.join(tmp, "calls.log")
    if os.path.exists(log):
        os.unlink(log)
    r = gpuvet(args, scenario, extra={"FAKE_NVML_CALL_LOG": log})
    calls = []
    if os.path.exists(log):
        with open(log) as f:
            calls = [(fn, int(gpu)) for fn, gpu in (line.split() for line in f if line.strip())]
    return r, calls


def test_reads_only_what_is_asked(tmp):
    scn = os.path.join(SCENARIOS, "h100-sxm-8gpu.scn")
    gpus = 8
    r, calls = call_log(["--query-gpu=name", "--format=csv,noheader"], scn, tmp)
    check(r.returncode == 0 and len(r.stdout.splitlines()) == gpus, "name: %d rows, exit %d %s" %
          (len(r.stdout.splitlines()), r.returncode, r.stderr))
    per_gpu = [sum(1 for _, g in calls if g == i) for i in range(gpus)]
    system = sum(1 for _, g in calls if g < 0)
    print("query --query-gpu=name: %d NVML calls for %d GPUs (per GPU %s, %d system)" %
          (len(calls), gpus, per_gpu, system))
    check(max(per_gpu) <= 5, "name: at most 5 NVML calls per GPU, got %s" % per_gpu)
    check(system <= 8, "name: %d system calls (init, versions, count, shutdown expected)" % system)

    r, calls = call_log(["--query-gpu=power.draw,power.limit", "--format=csv,noheader"], scn, tmp)
    fns = {fn for fn, _ in calls}
    check("nvmlDeviceGetPowerUsage" in fns and "nvmlDeviceGetPowerManagementLimit" in fns,
          "power fields: the power calls were not made: %s" % sorted(fns))
    check(not any("NvLink" in fn or "Ecc" in fn or "Processes" in fn for fn in fns),
          "power fields: unrelated calls made: %s" % sorted(fns))

    # Each field asked alone reads all it needs: its cell equals the one it gets among
    # every field (compute_cap needs the minor number, fabric.status the state). The
    # timestamp differs by nature.
    fields = supported_fields()
    r = gpuvet(["--query-gpu=" + ",".join(fields), "--format=csv,noheader", "-i", "0"], scn)
    together = split_row(r.stdout.splitlines()[0]) if r.returncode == 0 and r.stdout else []
    check(len(together) == len(fields), "all fields: %d cells for %d fields, exit %d %s" %
          (len(together), len(fields), r.returncode, r.stderr))
    for field, cell in list(zip(fields, together))[1:]:
        alone = gpuvet(["--query-gpu=" + field, "--format=csv,noheader", "-i", "0"], scn)
        check(alone.stdout.strip() == cell, "%s alone: %r, among all fields: %r" % (field, alone.stdout.strip(), cell))
    print("ok: reads only what is asked")


def main():
    fakeenv.ensure_loadable()
    fields = supported_fields()
    with tempfile.TemporaryDirectory() as tmp:
        test_captures(fields, tmp)
        test_conventions(tmp)
        test_loops_end(tmp)
        test_reads_only_what_is_asked(tmp)
    for scn in ("h100-sxm-8gpu.scn", "thermal-slowdown.scn"):
        test_clients(scn)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

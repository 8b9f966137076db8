"""Shared helpers of the fake-NVML tests (stdlib only).

Environment (set by tests/meson.build; defaults let the tests run by hand from the repo):
  FAKE_NVML_LIB        the built libnvidia-ml.so.1
  FAKE_NVML_BUILD_DIR  where the client venv is created (fake-nvml-venv/)
  FAKE_NVML_REALDATA   the nvidia_gpu_exporter captures
  FAKE_NVML_SANITIZE   meson's b_sanitize; with 'address' the ASan runtime is preloaded
  FAKE_NVML_CC         the C compiler, to find that runtime
"""
import fcntl
import os
import random
import re
import shlex
import socket
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC_ROOT = os.path.dirname(os.path.dirname(HERE))
SCENARIOS = os.path.join(HERE, "scenarios")
LIB = os.environ.get("FAKE_NVML_LIB", os.path.join(SRC_ROOT, "build-fake", "tests", "libnvidia-ml.so.1"))
LIB_DIR = os.path.dirname(LIB)
BUILD_DIR = os.environ.get("FAKE_NVML_BUILD_DIR", os.path.join(SRC_ROOT, "build-fake", "tests"))
REALDATA = os.environ.get("FAKE_NVML_REALDATA",
                          os.path.join(SRC_ROOT, "tests", "realdata", "nvidia_gpu_exporter"))
CLIENTS = ["nvidia-ml-py", "gpustat", "nvitop"]

# the init errors scenarios use, by value
INIT_ERROR_VALUES = {"NVML_ERROR_DRIVER_NOT_LOADED": 9, "NVML_ERROR_LIB_RM_VERSION_MISMATCH": 18,
                     "NVML_ERROR_NO_PERMISSION": 4, "NVML_ERROR_UNKNOWN": 999}


def init_error(path):
    """The value nvmlInit returns for the scenario at PATH (0: success)."""
    v = load_scenario(path)["global"].get("init_error")
    return INIT_ERROR_VALUES[v] if v and v not in ("none", "N/A") else 0


def time_scale():
    """How much slower than a quiet machine the tests may run: the larger of
    GPUVET_TEST_TIME_SCALE (the caller's: a busy CI machine sets it) and
    GPUVET_TEST_TIME_SCALE_BUILD (tests/meson.build: 3 under sanitizers). Wall-clock bounds
    and the short deadlines tests give gpuvet are multiplied by it, so that no verdict
    depends on the machine being idle (docs/testing.md)."""
    scale = 1.0
    for var in ("GPUVET_TEST_TIME_SCALE", "GPUVET_TEST_TIME_SCALE_BUILD"):
        try:
            scale = max(scale, float(os.environ.get(var, "1")))
        except ValueError:
            pass
    return scale


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on, for a server a test starts.

    Not one the kernel picks for bind(port 0): those come from the ephemeral range, which every
    outgoing connection of every test running at once also draws from, so one was sometimes
    taken between this call and the server's bind ("Address already in use"). A random port
    below that range is only ever taken by another test's server, which picks at random too."""
    lo = 32768
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    first, last = (10000, lo - 1) if lo > 12000 else (61000, 65000)
    rng = random.SystemRandom()
    for _ in range(500):
        port = rng.randint(first, last)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError("no free TCP port on 127.0.0.1 in %d-%d" % (first, last))


def hangs(path):
    return bool(load_scenario(path)["hangs"])


def sanitizer_env():
    """LD_PRELOAD (and options) so that an ASan-built fake loads into python."""
    if "address" not in os.environ.get("FAKE_NVML_SANITIZE", ""):
        return {}
    cc = shlex.split(os.environ.get("FAKE_NVML_CC", "cc"))
    runtime = None
    for name in ("libasan.so", "libclang_rt.asan-x86_64.so"):
        try:
            out = subprocess.run(cc + [f"-print-file-name={name}"], capture_output=True, text=True).stdout.strip()
        except OSError:
            continue
        if out and os.path.isabs(out) and os.path.exists(out):
            runtime = out
            break
    if runtime is None:
        return {}
    return {"LD_PRELOAD": runtime, "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0",
            "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}


def ensure_loadable():
    """Re-executes this test under the sanitizer runtime when the fake needs it."""
    env = sanitizer_env()
    if env and os.environ.get("LD_PRELOAD") != env["LD_PRELOAD"]:
        os.environ.update(env)
        os.execv(sys.executable, [sys.executable] + sys.argv)


def gpuvet_env(scenario, extra=None):
    """For running gpuvet itself on the fake: an ASan gpuvet brings its own runtime, and
    keeps leak checks on (the fake frees its scenario when it is unloaded)."""
    env = dict(os.environ)
    # What ensure_loadable() set for python (the preloaded runtime, leak checks off) is not
    # for gpuvet.
    for key, value in sanitizer_env().items():
        if env.get(key) == value:
            del env[key]
    env["FAKE_NVML_SCENARIO"] = scenario
    env.update(extra or {})
    return env


def run_env(scenario, extra=None):
    env = dict(os.environ)
    env.update(sanitizer_env())
    env["LD_LIBRARY_PATH"] = LIB_DIR + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env["FAKE_NVML_SCENARIO"] = scenario
    env.pop("PYTHONPATH", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["NO_COLOR"] = "1"
    if extra:
        env.update(extra)
    return env


def scenario_files():
    return sorted(os.path.join(SCENARIOS, f) for f in os.listdir(SCENARIOS) if f.endswith(".scn"))


def pypi_reachable():
    try:
        socket.create_connection(("pypi.org", 443), timeout=10).close()
        return True
    except OSError:
        return False


def venv_python():
    """The python of a venv with the clients, created under the build dir if absent;
    exits 77 (skip) if it has to be created and PyPI cannot be reached."""
    venv = os.path.join(BUILD_DIR, "fake-nvml-venv")
    py = os.path.join(venv, "bin", "python")
    done = os.path.join(venv, ".complete")
    os.makedirs(BUILD_DIR, exist_ok=True)
    with open(os.path.join(BUILD_DIR, "fake-nvml-venv.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the tests run in parallel: one creates it
        if os.path.exists(done):
            return py
        if not pypi_reachable():
            print("SKIP: PyPI (pypi.org:443) cannot be reached to install " + ", ".join(CLIENTS))
            sys.exit(77)
        subprocess.run([sys.executable, "-m", "venv", "--clear", venv], check=True)
        r = subprocess.run([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"] + CLIENTS,
                           capture_output=True, text=True)
        if r.returncode != 0:
            if not pypi_reachable():
                print("SKIP: PyPI became unreachable while installing the clients:\n" + r.stderr)
                sys.exit(77)
            raise RuntimeError("pip install " + " ".join(CLIENTS) + " failed:\n" + r.stderr)
        open(done, "w").close()
    return py


# --- a reader of scenario files, for expectations (the fake's own parser is C) ---------

def load_scenario(path, state=None):
    """{gpu index: {key: raw value}} of the GPUs (MIG sections skipped), following includes.
    Handles what the committed scenarios use: sections, ranges, N/A, trailing comments."""
    if state is None:
        state = {"gpus": {}, "global": {}, "count": None, "hangs": []}
    cur = None
    with open(path) as f:
        for line in f:
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            s = re.sub(r"\s+#.*$", "", s)
            if s.startswith("["):
                body = s[1:-1].split()
                if body == ["global"]:
                    cur = None
                elif len(body) > 2:
                    cur = []  # a MIG device
                else:
                    idx = body[1]
                    if idx == "*":
                        cur = sorted(state["gpus"])
                    elif "-" in idx:
                        a, b = idx.split("-")
                        cur = list(range(int(a), int(b) + 1))
                    else:
                        cur = [int(idx)]
                    for g in cur:
                        state["gpus"].setdefault(g, {})
                continue
            if s.startswith("include "):
                load_scenario(os.path.join(os.path.dirname(path), s.split(None, 1)[1]), state)
                continue
            if s.split()[0] in ("fault", "hang", "latency"):
                if s.split()[0] == "hang":
                    state["hangs"].append(s)
                continue
            key, _, value = s.partition("=")
            key, value = key.strip(), value.strip()
            if cur is None:
                if key == "gpu_count":
                    state["count"] = int(value)
                state["global"][key] = value
                continue
            for g in cur:
                if value in ("N/A", "[N/A]"):
                    state["gpus"][g].pop(key, None)
                else:
                    state["gpus"][g][key] = value
    return state


def to_bytes(v):
    n, _, unit = v.partition(" ")
    if not unit:
        m = re.fullmatch(r"(\d+)([A-Za-z]*)", v)
        n, unit = m.group(1), m.group(2)
    return int(n) * {"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit]


def to_mw(v):
    n, _, unit = v.partition(" ")
    return round(float(n) * 1000) if unit == "W" else int(n)


def to_int(v):
    return int(v.split()[0], 0)


def capture_machine(cap, tmp):
    """A captured machine (tests/captures/NAME) to judge: its snapshot unpacked under
    tmp/root and its nvidia-smi -q converted to the fake NVML's scenario tmp/nvml.scn, which
    includes the capture's nvml-extra.scn when it has one. Returns (root, scenario); raises
    RuntimeError with smi2scenario's words when the conversion fails."""
    root = os.path.join(tmp, "root")
    os.mkdir(root)
    with tarfile.open(os.path.join(cap, "snapshot.tar.xz")) as t:
        t.extractall(root, filter="tar") if hasattr(tarfile, "data_filter") else t.extractall(root)
    scn = os.path.join(tmp, "nvml.scn")
    with open(scn, "w") as f:
        conv = subprocess.run([sys.executable, os.path.join(HERE, "smi2scenario.py"),
                               os.path.join(cap, "nvidia-smi-q.txt")], stdout=f, stderr=subprocess.PIPE, text=True)
    if conv.returncode != 0:
        raise RuntimeError("smi2scenario: " + conv.stderr)
    extra = os.path.join(cap, "nvml-extra.scn")
    if os.path.exists(extra):
        with open(scn, "a") as f:
            f.write("include %s\n" % os.path.abspath(extra))
    return root, scn

"""gpuvet serve started from a deployment's own command line (a systemd unit's ExecStart, a
Kubernetes container's command and args), on the fake NVML, for tests/deploy: the argv as
the deployment gives it, with only the listening address moved to a free port of 127.0.0.1
and paths the test names replaced."""
import http.client
import os
import re
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakes"))
import fakeenv  # noqa: E402

SCENARIO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakes", "scenarios", "h100-sxm-8gpu.scn")


def listen_port(argv):
    """The port of the argv's --listen (--listen X, --listen=X, -l X), or None."""
    for i, a in enumerate(argv):
        value = None
        if a in ("--listen", "-l") and i + 1 < len(argv):
            value = argv[i + 1]
        elif a.startswith("--listen="):
            value = a.split("=", 1)[1]
        if value is not None:
            return int(value.rsplit(":", 1)[1])
    return None


def on_free_port(argv):
    """The argv with its --listen on 127.0.0.1:0 (port 0: a free one, named on stderr)."""
    out, skip = [], False
    for i, a in enumerate(argv):
        if skip:
            skip = False
            continue
        if a in ("--listen", "-l"):
            out += [a, "127.0.0.1:0"]
            skip = True
        elif a.startswith("--listen="):
            out.append("--listen=127.0.0.1:0")
        else:
            out.append(a)
    return out


class Served:
    """gpuvet serve running argv (argv[0] replaced by the gpuvet under test)."""

    def __init__(self, gpuvet, fake_lib, argv, extra_env=None):
        self.err = tempfile.TemporaryFile(mode="w+")
        env = fakeenv.gpuvet_env(SCENARIO, dict({"GPUVET_NVML_LIB": fake_lib}, **(extra_env or {})))
        self.argv = [gpuvet] + on_free_port(argv[1:])
        self.p = subprocess.Popen(self.argv, env=env, stdout=subprocess.DEVNULL, stderr=self.err, text=True)
        self.port = None
        deadline = time.monotonic() + 20 * fakeenv.time_scale()
        while time.monotonic() < deadline and self.p.poll() is None:
            m = re.search(r"\(port (\d+)", self.stderr())
            if m:
                self.port = int(m.group(1))
                return
            time.sleep(0.05)
        rc = self.p.poll()
        self.stop()
        raise RuntimeError("%s did not start: rc %s, stderr %r" % (" ".join(self.argv), rc, self.stderr()))

    def stderr(self):
        self.err.seek(0)
        return self.err.read()

    def get(self, path):
        """(status, body) of GET path."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10 * fakeenv.time_scale())
        try:
            c.request("GET", path)
            r = c.getresponse()
            return r.status, r.read().decode()
        finally:
            c.close()

    def wait_for(self, path, predicate, seconds=10):
        """GET path until predicate(status, body) holds or the scaled deadline passes; the last answer."""
        deadline = time.monotonic() + seconds * fakeenv.time_scale()
        while True:
            status, body = self.get(path)
            if predicate(status, body) or time.monotonic() > deadline:
                return status, body
            time.sleep(0.1)

    def stop(self):
        """SIGTERM; the exit status (killed, and None, past the scaled bound)."""
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(timeout=10 * fakeenv.time_scale())
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
                return None
        return self.p.returncode

"""gpuvet serve as the serve tests run it (docs/serve.md): started on a free port of
127.0.0.1 against a fake-NVML scenario with its standard error kept in a file, asked over
HTTP or HTTPS, stopped by a signal within a bound; and the text exposition format parsed.

The tests import it after fakeenv and testlib are on sys.path (they put them there).
"""
import base64
import collections
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse

import fakeenv
from testlib import check

SCALE = fakeenv.time_scale()
# What Prometheus 2.x sends: OpenMetrics first.
PROMETHEUS_ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
                     "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
SANITIZER_SAYS = ("runtime error", "Sanitizer")

Reply = collections.namedtuple("Reply", "status headers body")


class Serve:
    """One gpuvet serve process. Options beyond --listen go in extra; interval_ms=None
    leaves --interval-ms at its default."""

    def __init__(self, gpuvet, fake_lib, scenario, extra=(), interval_ms=100, env=None):
        self.err = tempfile.TemporaryFile(mode="w+")
        args = [gpuvet, "serve", "--listen", "127.0.0.1:0"]
        if interval_ms is not None:
            args += ["--interval-ms", str(interval_ms)]
        overrides = {"GPUVET_NVML_LIB": fake_lib}
        overrides.update(env or {})
        self.p = subprocess.Popen(args + list(extra), env=fakeenv.gpuvet_env(scenario, overrides),
                                  stdout=subprocess.DEVNULL, stderr=self.err, text=True)
        self.port = None
        deadline = time.monotonic() + 20 * SCALE
        while time.monotonic() < deadline and self.p.poll() is None:
            m = re.search(r"\(port (\d+)", self.stderr())
            if m:
                self.port = int(m.group(1))
                return
            time.sleep(0.05)
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        raise RuntimeError("gpuvet serve did not start: rc %s, stderr %r" % (self.p.returncode, self.stderr()[-2000:]))

    @property
    def pid(self):
        return self.p.pid

    def stderr(self):
        self.err.seek(0)
        return self.err.read()

    def request(self, path, headers=None, method="GET", body=None, tls=None, auth=None):
        """One request on a connection of its own; tls is an ssl context for HTTPS, auth
        "user:password" for basic auth. A Reply; the transport's exceptions pass through."""
        if tls:
            c = http.client.HTTPSConnection("127.0.0.1", self.port, context=tls, timeout=10 * SCALE)
        else:
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10 * SCALE)
        headers = dict(headers or {})
        if auth:
            headers["Authorization"] = "Basic " + base64.b64encode(auth.encode()).decode()
        try:
            c.request(method, path, body=body, headers=headers)
            r = c.getresponse()
            return Reply(r.status, r.headers, r.read().decode())
        finally:
            c.close()

    def get(self, path, headers=None, method="GET", body=None):
        """(status, Content-Type, body) of a plain HTTP request."""
        r = self.request(path, headers, method, body)
        return r.status, r.headers.get("Content-Type"), r.body

    def stop(self, sig=signal.SIGTERM, bound=5.0):
        """Send sig and wait up to bound (scaled) seconds: (exit status, seconds it took).
        Still running then is a failure (and it is killed); so is a sanitizer's report."""
        t0 = time.monotonic()
        if self.p.poll() is None:
            self.p.send_signal(sig)
        try:
            rc = self.p.wait(timeout=bound * SCALE)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = self.p.wait()
            check(False, "gpuvet serve still running %.0f s after %s" % (bound * SCALE, sig.name))
        took = time.monotonic() - t0
        err = self.stderr()
        check(not any(s in err for s in SANITIZER_SAYS), "gpuvet serve: sanitizer report: %s" % err[-2000:])
        return rc, took


def stop_process(p, bound=10):
    """SIGTERM a helper process (Prometheus) and wait up to bound (scaled) seconds: its exit
    status. Still running then is a failure, and it is killed."""
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            return p.wait(timeout=bound * SCALE)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            check(False, "%s still running %.0f s after SIGTERM" % (p.args[0], bound * SCALE))
    return p.returncode


def start_prometheus(prometheus, tmp, jobs, rule_files=()):
    """Debian's Prometheus scraping each (job name, port) of jobs on 127.0.0.1 every second,
    with its configuration, storage and log in tmp and its web API on a free port of its own:
    (process, API port, log file). The caller stops it with stop_process."""
    config = os.path.join(tmp, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n")
        if rule_files:
            f.write("rule_files: [%s]\n" % ", ".join("'%s'" % r for r in rule_files))
        f.write("scrape_configs:\n")
        for name, port in jobs:
            f.write("  - job_name: %s\n    static_configs:\n      - targets: ['127.0.0.1:%d']\n" % (name, port))
    web = free_port()
    log = open(os.path.join(tmp, "prometheus.log"), "w+")
    p = subprocess.Popen([prometheus, "--config.file", config, "--storage.tsdb.path", os.path.join(tmp, "data"),
                          "--web.listen-address", "127.0.0.1:%d" % web, "--log.level", "warn"],
                         stdout=log, stderr=subprocess.STDOUT, cwd=tmp)
    return p, web, log


def prometheus_query(port, expr):
    """An instant query of the Prometheus on port: (result, None), or (None, its error)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10 * SCALE)
    c.request("GET", "/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    r = c.getresponse()
    data = json.loads(r.read())
    c.close()
    if data.get("status") != "success":
        return None, data.get("error")
    return data["data"]["result"], None


H100_SCENARIO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakes", "scenarios", "h100-sxm-8gpu.scn")


def scenario_with(tmp, name, text):
    """A scenario file in tmp: the fake's 8x H100 with text over it."""
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write("include %s\n%s\n" % (H100_SCENARIO, text))
    return path


free_port = fakeenv.free_port


SAMPLE = re.compile(r'^([A-Za-z_:][A-Za-z0-9_:]*)\{([^}]*)\} (\S+)$')
LABEL = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(body):
    """({name: {gpu: (labels dict, value)}}, {family: type}, {families with HELP}) of a
    text or OpenMetrics body. Samples without labels (gpuvet_sampler_up and the like) are
    left to scalar(); any other line that is not a sample fails."""
    series, types, helps = {}, {}, set()
    for line in body.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, t = line.split(" ", 3)
            types[name] = t
        elif line.startswith("# HELP "):
            helps.add(line.split(" ")[2])
        elif line and not line.startswith("#"):
            m = SAMPLE.match(line)
            if not m:
                check(re.fullmatch(r"[A-Za-z_:][A-Za-z0-9_:]* \S+", line) is not None, "not a sample line: %r" % line)
                continue
            labels = dict(LABEL.findall(m.group(2)))
            series.setdefault(m.group(1), {})[labels.get("gpu")] = (labels, float(m.group(3)))
    return series, types, helps


def scalar(body, name):
    """The value of the unlabelled sample name, or None."""
    m = re.search(r"^%s (\S+)$" % re.escape(name), body, re.M)
    return float(m.group(1)) if m else None


def check_statuses(body):
    """{id: status} from gpuvet_check_status (the one with value 1), and every id's 5 lines."""
    got, lines = {}, {}
    for m in re.finditer(r'^gpuvet_check_status\{id="([^"]+)",status="(\w+)"\} (\d)$', body, re.M):
        lines[m.group(1)] = lines.get(m.group(1), 0) + 1
        if m.group(3) == "1":
            check(m.group(1) not in got, "check %s: two statuses" % m.group(1))
            got[m.group(1)] = m.group(2)
    check(all(n == 5 for n in lines.values()), "gpuvet_check_status: an id without its 5 lines")
    return got


# promtool's lint of dcgm-exporter's own names, kept on purpose because dashboards read
# them (docs/serve.md): camelCase labels (modelName, Hostname, UUID), DCGM counters without
# "_total", and DCGM_FI_DEV_PCIE_REPLAY_COUNTER, whose name holds its type.
DCGM_NAMING_LINT = (
    lambda x: x.endswith("label names should be written in 'snake_case' not 'camelCase'"),
    lambda x: x.startswith("DCGM_FI_") and x.endswith('counter metrics should have "_total" suffix'),
    lambda x: x == "DCGM_FI_DEV_PCIE_REPLAY_COUNTER metric name should not include type 'counter'",
)


def promtool_lint(body, what):
    """`promtool check metrics` of a text body: it must parse (exit 0, or 3 for lint only)
    with no problem but dcgm-exporter's naming. Skipped, saying so, without promtool."""
    promtool = shutil.which("promtool")
    if not promtool:
        print("promtool not installed: its lint of the %s skipped" % what)
        return
    r = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, text=True,
                       timeout=60 * SCALE)
    problems = [x for x in (r.stdout + r.stderr).splitlines() if x.strip()]
    other = [x for x in problems if not any(known(x) for known in DCGM_NAMING_LINT)]
    check(r.returncode in (0, 3) and not other, "promtool check metrics, %s: rc %d, %s" %
          (what, r.returncode, other[:10]))
    print("promtool check metrics, %s: rc %d, %d lint lines, all dcgm-exporter's naming" %
          (what, r.returncode, len(problems)))

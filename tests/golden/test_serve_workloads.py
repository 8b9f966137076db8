#!/usr/bin/env python3
"""gpuvet serve's processes and their workloads (suite 'golden'); docs/serve.md,
"Processes and workloads".

Usage: test_serve_workloads.py GPUVET SRC_ROOT FAKE_LIB

A machine tree made here (--root) holds /proc/PID/{cgroup,stat,status,cmdline} for a
process of a Slurm cgroup/v1 job, a Slurm cgroup/v2 job (and one named by its SLUID, as
Slurm 26.05 does), a Kubernetes pod under the systemd driver with kubelet's
/var/log/pods and /var/log/containers entries, a pod under the cgroupfs driver whose log
directory is gone, a docker container and a plain process; one PID NVML lists has no
/proc entry (it ended between NVML's list and the lookup). The fake NVML lists them on
GPUs 0-3 and 70 nameless processes on GPU 4. Checked: every gpuvet_process_gpu_memory_bytes
sample and label value, gpuvet_gpu_processes, the cap of 64 (the largest kept), no process
series in a stale round; --workload-labels adds dcgm-exporter's container, hpc_job,
namespace and pod labels to the DCGM series of those GPUs only; a process NVML stops
listing leaves the body; a PID reused by another process (a new start time) is looked up
again, while the same process is not (its cgroup is read once); a bad --root exits 2.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

GPUVET, SRC_ROOT, FAKE_LIB = sys.argv[1:4]
FAKES = os.path.join(SRC_ROOT, "tests", "fakes")
SCENARIOS = os.path.join(FAKES, "scenarios")
sys.path.insert(0, FAKES)
import fakeenv  # noqa: E402

SCALE = fakeenv.time_scale()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
from serve_harness import LABEL, PROMETHEUS_ACCEPT, SAMPLE, Serve, promtool_lint  # noqa: E402

CID_POD = "3f9a" * 16          # the systemd-driver pod's container
CID_POD2 = "b7c1" * 16         # the cgroupfs pod's container
CID_DOCKER = "d0c4e2" * 10 + "abcd"
POD_UID = "0f2b6e1c-4d3a-4b8e-9c1d-2a3b4c5d6e7f"
POD2_UID = "5a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
SLUID = "s0K3M9QWE4RT5Z"
MIB = 1024 * 1024

# pid: (comm, uid, cgroup text)
PROCS = {
    1001: ("python3", 1000, "12:memory:/slurm/uid_1000/job_4242/step_0/task_0\n"
                            "11:devices:/slurm/uid_1000/job_4242/step_0\n"
                            "1:name=systemd:/system.slice/slurmd.service\n"
                            "0::/system.slice/slurmd.service\n"),
    1002: ("train", 1001, "0::/system.slice/slurmstepd.scope/job_5151/step_batch/user/task_0\n"),
    1003: ("nccl-test", 1001, "0::/system.slice/slurmstepd.scope/%s/step_0/user/task_1\n" % SLUID),
    2001: ("torchrun", 0, "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice/"
                          "cri-containerd-%s.scope\n" % (POD_UID.replace("-", "_"), CID_POD)),
    2002: ("infer", 65534, "11:memory:/kubepods/pod%s/%s\n0::/\n" % (POD2_UID, CID_POD2)),
    3001: ("ollama", 0, "0::/system.slice/docker-%s.scope\n" % CID_DOCKER),
    4001: ("blender", 1000, "0::/user.slice/user-1000.slice/session-3.scope\n"),
}
GONE = 5001
# GPU: [(pid, MiB)]
ON_GPU = {0: [(1001, 8192), (1003, 1024)], 1: [(1002, 4096)], 2: [(2001, 20480), (2002, 512)],
          3: [(3001, 3000), (4001, 300), (GONE, 100)]}
CAPPED = [(20000 + k, 10 + k) for k in range(70)]  # GPU 4: 70 processes, 10..79 MiB
# pid: (slurm_job, pod, namespace, container, container_id)
WANT = {
    1001: ("4242", "", "", "", ""),
    1002: ("5151", "", "", "", ""),
    1003: (SLUID, "", "", "", ""),
    2001: ("", "trainer-7d9f8", "ml-team", "pytorch", CID_POD),
    2002: ("", "", "", "", CID_POD2),
    3001: ("", "", "", "", CID_DOCKER),
    4001: ("", "", "", "", ""),
    GONE: ("", "", "", "", ""),
}
USERS = {1000: "alice", 1001: "bob", 0: "root"}


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def stat_line(pid, comm, start):
    # Fields 3.. of proc_pid_stat(5); starttime is field 22. A ')' and a space in comm
    # as a process may name itself.
    rest = ["S", "1", str(pid), str(pid), "0", "-1", "4194560"] + ["0"] * 12 + [str(start)] + ["0"] * 30
    return "%d (%s) %s\n" % (pid, comm, " ".join(rest))


def make_proc(root, pid, comm, uid, cgroup, start=100000):
    d = os.path.join(root, "proc", str(pid))
    write(os.path.join(d, "stat"), stat_line(pid, comm + ") x", start))
    write(os.path.join(d, "status"), "Name:\t%s\nUmask:\t0022\nState:\tS (sleeping)\nPid:\t%d\n"
          "Uid:\t%d\t%d\t%d\t%d\nNSpid:\t%d\n" % (comm, pid, uid, uid, uid, uid, pid))
    write(os.path.join(d, "cmdline"), comm + "\0--flag\0")
    write(os.path.join(d, "cgroup"), cgroup)


def make_root(tmp):
    root = os.path.join(tmp, "root")
    for pid, (comm, uid, cgroup) in PROCS.items():
        make_proc(root, pid, comm, uid, cgroup)
    write(os.path.join(root, "proc", "self", "status"), "Name:\tgpuvet\nPid:\t77\nNSpid:\t77\n")
    write(os.path.join(root, "etc", "passwd"), "".join("%s:x:%d:%d::/home/%s:/bin/sh\n" % (n, u, u, n)
                                                       for u, n in USERS.items()))
    pod_dir = os.path.join(root, "var", "log", "pods", "ml-team_trainer-7d9f8_" + POD_UID)
    write(os.path.join(pod_dir, "pytorch", "0.log"), "")
    write(os.path.join(pod_dir, "init-weights", "0.log"), "")
    # Another pod of the same name, an earlier one (another uid): not ours.
    write(os.path.join(root, "var", "log", "pods", "ml-team_trainer-7d9f8_" + "9" * 8 + "-0000-4000-8000-" + "0" * 12,
                       "pytorch", "0.log"), "")
    cont = os.path.join(root, "var", "log", "containers")
    os.makedirs(cont)
    os.symlink("/var/log/pods/ml-team_trainer-7d9f8_%s/pytorch/0.log" % POD_UID,
               os.path.join(cont, "trainer-7d9f8_ml-team_pytorch-%s.log" % CID_POD))
    os.symlink("/var/log/pods/ml-team_trainer-7d9f8_%s/init-weights/0.log" % POD_UID,
               os.path.join(cont, "trainer-7d9f8_ml-team_init-weights-%s.log" % ("e" * 64)))
    # The cgroupfs pod (POD2_UID) has no log directory: rotated away.
    return root


# The driver's SM samples (process lines' sm=): 3001's above 100 % is unknown, so it has no
# SM sample; every other process listed has one, 0 when not sampled.
SM = {1001: 62, 2001: 17, 3001: 250}


def scenario(tmp, name, on_gpu, capped, top=()):
    lines = ["include %s" % os.path.join(SCENARIOS, "h100-sxm-8gpu.scn")] + list(top)
    for gpu, procs in sorted(on_gpu.items()):
        lines.append("[gpu %d]" % gpu)
        for pid, mib in procs:
            comm = PROCS.get(pid, ("gone",))[0]
            sm = " sm=%d" % SM[pid] if pid in SM else ""
            lines.append("process = %d %dMiB%s %s" % (pid, mib, sm, comm))
    if capped:
        lines.append("[gpu 4]")
        lines += ["process = %d %dMiB worker" % (pid, mib) for pid, mib in capped]
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def samples(body, name):
    """[(labels, value)] of every sample of name, in order."""
    out = []
    for line in body.splitlines():
        m = SAMPLE.match(line)
        if m and m.group(1) == name:
            out.append((dict(LABEL.findall(m.group(2))), float(m.group(3))))
    return out


def scrape(s, quiet=False):
    status, _, body = s.get("/metrics")
    if not quiet or status != 200:
        check(status == 200, "/metrics: %s" % status)
    return body


def wait_for(s, cond, what, bound=10.0):
    """The first body for which cond holds, polled until bound (scaled) seconds."""
    deadline = time.monotonic() + bound * SCALE
    body = scrape(s, quiet=True)
    while not cond(body) and time.monotonic() < deadline:
        time.sleep(0.05)
        body = scrape(s, quiet=True)
    check(cond(body), what)
    return body


PROC_LABELS = ["gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "pid", "process", "user",
               "slurm_job", "pod", "namespace", "container", "container_id"]


def test_processes(tmp, root):
    scn = scenario(tmp, "procs.scn", ON_GPU, CAPPED)
    s = Serve(GPUVET, FAKE_LIB, scn, extra=["--root", root])
    try:
        body = scrape(s)
        mem = samples(body, "gpuvet_process_gpu_memory_bytes")
        by_pid = {int(lab["pid"]): (lab, v) for lab, v in mem}
        for gpu, procs in ON_GPU.items():
            for pid, mib in procs:
                if not check(pid in by_pid, "pid %d on GPU %d exported" % (pid, gpu)):
                    continue
                lab, v = by_pid[pid]
                check(lab["gpu"] == str(gpu) and v == mib * MIB, "pid %d: gpu %s, %d bytes" % (pid, lab["gpu"], v))
                line = next(ln for ln in body.splitlines()
                            if ln.startswith("gpuvet_process_gpu_memory_bytes{") and 'pid="%d"' % pid in ln)
                names = re.findall(r'([A-Za-z_]+)="', line)
                check(names == PROC_LABELS, "pid %d: labels in order %s" % (pid, names))
                comm, uid = (PROCS[pid][0], USERS.get(PROCS[pid][1], str(PROCS[pid][1]))) if pid in PROCS else ("", "")
                check(lab["process"] == comm and lab["user"] == uid,
                      "pid %d: process %r user %r (want %r %r)" % (pid, lab["process"], lab["user"], comm, uid))
                got = (lab["slurm_job"], lab["pod"], lab["namespace"], lab["container"], lab["container_id"])
                check(got == WANT[pid], "pid %d: workload %s (want %s)" % (pid, got, WANT[pid]))
        sm = {int(lab["pid"]): v for lab, v in samples(body, "gpuvet_process_sm_utilization_percent")}
        want_sm = {pid: float(SM.get(pid, 0)) for pid in by_pid if SM.get(pid, 0) <= 100}
        check(sm == want_sm, "gpuvet_process_sm_utilization_percent: %d processes, differ: %s" %
              (len(sm), sorted((p, sm.get(p), want_sm.get(p)) for p in set(sm) | set(want_sm)
                               if sm.get(p) != want_sm.get(p))[:5]))
        counts = {lab["gpu"]: v for lab, v in samples(body, "gpuvet_gpu_processes")}
        want_counts = {str(g): len(ON_GPU.get(g, [])) for g in range(8)}
        want_counts["4"] = len(CAPPED)
        check(counts == {k: float(v) for k, v in want_counts.items()}, "gpuvet_gpu_processes %s" % counts)
        capped = [int(lab["pid"]) for lab, _ in mem if lab["gpu"] == "4"]
        largest = [pid for pid, _ in sorted(CAPPED, key=lambda p: -p[1])[:64]]
        check(len(capped) == 64 and sorted(capped) == sorted(largest),
              "GPU 4: 64 of 70 exported, the largest (%d exported)" % len(capped))
        check("# TYPE gpuvet_process_gpu_memory_bytes gauge" in body and "# TYPE gpuvet_gpu_processes gauge" in body,
              "TYPE lines of the process families")
        for lab, _ in samples(body, "DCGM_FI_DEV_GPU_TEMP"):
            check(not {"pod", "namespace", "container", "hpc_job"} & set(lab),
                  "no workload label without --workload-labels (GPU %s)" % lab["gpu"])

        # The same process is not looked up again: its cgroup changed in place stays as read.
        write(os.path.join(root, "proc", "1001", "cgroup"), "0::/system.slice/slurmstepd.scope/job_9999/step_0\n")
        # PID 1002 ended and the kernel gave its number to another process (a new start time).
        make_proc(root, 1002, "other", 1000, "0::/system.slice/slurmstepd.scope/job_6262/step_1/user/task_0\n",
                  start=200000)
        body = wait_for(s, lambda b: any(lab["pid"] == "1002" and lab["slurm_job"] == "6262"
                                         for lab, _ in samples(b, "gpuvet_process_gpu_memory_bytes")),
                        "PID 1002 reused (new start time): looked up again, job 6262")
        lab = {int(la["pid"]): la for la, _ in samples(body, "gpuvet_process_gpu_memory_bytes")}
        check(lab[1002]["process"] == "other" and lab[1002]["user"] == "alice", "PID 1002's new process and user")
        check(lab[1001]["slurm_job"] == "4242", "PID 1001 (same start time): cached, job %s" % lab[1001]["slurm_job"])
        make_proc(root, 1002, *PROCS[1002])
        make_proc(root, 1001, *PROCS[1001])
    finally:
        rc, _ = s.stop()
    check(rc == 0, "SIGTERM: exit %s" % rc)


def test_workload_labels(tmp, root):
    scn = scenario(tmp, "labels.scn", ON_GPU, [])
    s = Serve(GPUVET, FAKE_LIB, scn, extra=["--root", root, "--workload-labels"])
    try:
        body = scrape(s)
        temp = samples(body, "DCGM_FI_DEV_GPU_TEMP")
        per_gpu = {}
        for lab, _ in temp:
            extra = {k: v for k, v in lab.items() if k in ("pod", "namespace", "container", "hpc_job")}
            per_gpu.setdefault(lab["gpu"], []).append(extra)
        want = {
            "0": [{"hpc_job": "4242"}, {"hpc_job": SLUID}],
            "1": [{"hpc_job": "5151"}],
            # 2002's names are unknown: only 2001's pod labels, once.
            "2": [{"container": "pytorch", "namespace": "ml-team", "pod": "trainer-7d9f8"}],
            "3": [{}], "4": [{}], "5": [{}], "6": [{}], "7": [{}],
        }
        check(per_gpu == want, "DCGM_FI_DEV_GPU_TEMP's workload labels per GPU: %s" % per_gpu)
        line = next(ln for ln in body.splitlines() if ln.startswith("DCGM_FI_DEV_POWER_USAGE{gpu=\"2\""))
        names = re.findall(r'([A-Za-z_]+)="', line)
        check(names == ["gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "DCGM_FI_DRIVER_VERSION",
                        "container", "namespace", "pod"],
              "dcgm-exporter's order: the GPU's labels, the driver version, then container, namespace, pod: %s" % names)
        check(len(samples(body, "DCGM_FI_DEV_FB_USED")) == 8 + 1, "FB_USED: one sample more (GPU 0's two jobs)")
        lint(body)
        status, ctype, om = s.get("/metrics", headers={"Accept": PROMETHEUS_ACCEPT})
        check(status == 200 and "openmetrics" in ctype and om.endswith("# EOF\n") and
              len(samples(om, "gpuvet_process_gpu_memory_bytes")) == 8 and
              len(samples(om, "DCGM_FI_DEV_GPU_TEMP")) == 9, "OpenMetrics: the same process and labelled samples")
        up = samples(body, "gpuvet_gpu_up")
        check(len(up) == 8 and not any("pod" in lab or "hpc_job" in lab for lab, _ in up),
              "gpuvet's own series keep the GPU's labels only")
    finally:
        rc, _ = s.stop()
    check(rc == 0, "SIGTERM: exit %s" % rc)


def lint(body):
    """promtool's lint of a body with the process series and workload labels: nothing but
    dcgm-exporter's own naming (docs/serve.md), as golden_serve allows."""
    promtool_lint(body, "body with the process series and workload labels")


def test_leaving(tmp, root):
    first = scenario(tmp, "before.scn", ON_GPU, [])
    after = dict(ON_GPU)
    after[2] = [(2002, 512)]
    later = scenario(tmp, "after.scn", after, [])
    delay_ms = int(1500 * SCALE)
    s = Serve(GPUVET, FAKE_LIB, first, extra=["--root", root, "--workload-labels"],
              env={"FAKE_NVML_SCENARIO_LATER": "%s:%d" % (later, delay_ms)})
    try:
        body = scrape(s)
        pids = {lab["pid"] for lab, _ in samples(body, "gpuvet_process_gpu_memory_bytes")}
        check("2001" in pids, "pid 2001 listed before it ends")
        body = wait_for(s, lambda b: "2001" not in {lab["pid"] for lab, _ in
                                                    samples(b, "gpuvet_process_gpu_memory_bytes")},
                        "pid 2001 leaves the body once NVML stops listing it", bound=10.0 + delay_ms / 1000)
        counts = {lab["gpu"]: v for lab, v in samples(body, "gpuvet_gpu_processes")}
        check(counts.get("2") == 1, "GPU 2 counts 1 process then: %s" % counts.get("2"))
        temp = [lab for lab, _ in samples(body, "DCGM_FI_DEV_GPU_TEMP") if lab["gpu"] == "2"]
        check(len(temp) == 1 and "pod" not in temp[0], "GPU 2's DCGM series lose the pod's labels: %s" % temp)
    finally:
        rc, _ = s.stop()
    check(rc == 0, "SIGTERM: exit %s" % rc)


def test_stale(tmp, root):
    """A slow round: no process series (they are as old as the DCGM values)."""
    # Each temperature call 300 ms: a round of 8 GPUs takes 2.4 s, stale after 0.1 s.
    scn = scenario(tmp, "slow.scn", ON_GPU, [], top=["latency nvmlDeviceGetTemperature 300"])
    s = Serve(GPUVET, FAKE_LIB, scn, extra=["--root", root, "--stale-after-ms", "100"], interval_ms=100)
    try:
        body = wait_for(s, lambda b: 'gpuvet_gpu_up{gpu="0"' in b and "gpuvet_process_gpu_memory_bytes{" not in b
                        and "DCGM_FI_DEV_GPU_TEMP{" not in b, "stale round: no process series, no DCGM series")
        check("gpuvet_gpu_processes{" not in body, "stale round: no gpuvet_gpu_processes")
    finally:
        s.stop()


def test_bad_root(tmp):
    scn = scenario(tmp, "bad.scn", {}, [])
    for root in (os.path.join(tmp, "no-such-dir"), scn):
        r = subprocess.run([GPUVET, "serve", "--listen", "127.0.0.1:0", "--root", root],
                           env=fakeenv.gpuvet_env(scn, {"GPUVET_NVML_LIB": FAKE_LIB}), capture_output=True, text=True,
                           timeout=30 * SCALE)
        check(r.returncode == 2 and "--root %s" % root in r.stderr, "--root %s: rc %d %r" % (root, r.returncode,
                                                                                            r.stderr[-300:]))


def main():
    with tempfile.TemporaryDirectory(prefix="gpuvet-serve-workloads-") as tmp:
        t0 = time.monotonic()
        root = make_root(tmp)
        test_processes(tmp, root)
        test_workload_labels(tmp, root)
        test_leaving(tmp, root)
        test_stale(tmp, root)
        test_bad_root(tmp)
        print("%.1f s" % (time.monotonic() - t0))
    return finish()


if __name__ == "__main__":
    sys.exit(main())

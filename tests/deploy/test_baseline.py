#!/usr/bin/env python3
"""setup_gpu_baseline.yml (role gpu_baseline) with real ansible-core, in throw-away roots.

    test_baseline.py GPUVET OUTDIR [check|repos|packages|apply|bad]...

Each run happens in an overlay of this machine's / entered with chroot
(throwaway_root.py), with /etc/os-release (and lsb-release or redhat-release) of the
platform it plays, and a fixture tree for `gpuvet detect --root`:

- --check --diff per OS family (Ubuntu 22.04 and 24.04, Debian 12, Rocky 8 and 9), each
  with a different GPU and method: the plan written to baseline_results/<host>/plan.json is
  asserted (branch and CUDA chosen by detect, kernel module flavour, the family's package
  names and repositories, precompiled falling back to native, the driver container image),
  and nothing is written on the node;
- the parts that need no GPU and no network applied for real on Debian 12 (package and
  repository tasks skipped: NVIDIA's repositories are out of reach), with stand-ins for
  nvidia-ctk (tests/fakes/fake_nvidia_ctk.py) and update-initramfs: nouveau blacklist,
  initramfs rebuilt once, docker's daemon.json (other keys kept) or containerd's drop-in,
  the CDI spec, the persistenced drop-in and unit enabled, the power limit unit, the
  detection report; a second run changes nothing and calls neither stand-in again;
- the repository tasks in check mode on Debian 12 without python3-debian (the tasks above
  skip the repos and packages tags): python3-debian and NVIDIA's repository reported as
  what would be added, nothing written;
- `--check --tags packages` alone on Debian 12: the plan is made, the packages only NVIDIA's
  repositories carry are reported as what would be installed, the rest simulated by apt;
- bad input stops the play before anything is written, naming the variable: an unknown
  driver_installation_method, a CUDA the chosen driver cannot run, a driver that cannot
  drive the GPU, a GPU gpuvet detect does not know.
Skips (exit 77) without ansible-playbook or without root and overlayfs."""
import json
import os
import re
import shutil
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
import throwaway_root  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import fixture_cache  # noqa: E402  (the shared fixture trees)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
ANSIBLE = os.path.join(REPO, "deploy", "ansible")
FAKE_CTK = os.path.join(REPO, "tests", "fakes", "fake_nvidia_ctk.py")

OS_RELEASE = {
    "ubuntu2204": {"etc/os-release": 'NAME="Ubuntu"\nVERSION_ID="22.04"\nVERSION="22.04.5 LTS (Jammy Jellyfish)"\n'
                                     'VERSION_CODENAME=jammy\nID=ubuntu\nID_LIKE=debian\n',
                   "etc/lsb-release": "DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=22.04\nDISTRIB_CODENAME=jammy\n"},
    "ubuntu2404": {"etc/os-release": 'NAME="Ubuntu"\nVERSION_ID="24.04"\nVERSION="24.04.1 LTS (Noble Numbat)"\n'
                                     'VERSION_CODENAME=noble\nID=ubuntu\nID_LIKE=debian\n',
                   "etc/lsb-release": "DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=24.04\nDISTRIB_CODENAME=noble\n"},
    "debian12": {},
    "rocky8": {"etc/os-release": 'NAME="Rocky Linux"\nVERSION="8.10 (Green Obsidian)"\nID="rocky"\n'
                                 'ID_LIKE="rhel centos fedora"\nVERSION_ID="8.10"\nPLATFORM_ID="platform:el8"\n',
               "etc/redhat-release": "Rocky Linux release 8.10 (Green Obsidian)\n"},
    "rocky9": {"etc/os-release": 'NAME="Rocky Linux"\nVERSION="9.4 (Blue Onyx)"\nID="rocky"\n'
                                 'ID_LIKE="rhel centos fedora"\nVERSION_ID="9.4"\nPLATFORM_ID="platform:el9"\n',
               "etc/redhat-release": "Rocky Linux release 9.4 (Blue Onyx)\n"},
}

# What a distribution's NVIDIA packages install: Ubuntu's unit, which keeps persistence off.
PERSISTENCED_UNIT = """[Unit]
Description=NVIDIA Persistence Daemon
Wants=syslog.target
StopWhenUnneeded=true

[Service]
Type=forking
ExecStart=/usr/bin/nvidia-persistenced --user nvidia-persistenced --no-persistence-mode --verbose
ExecStopPost=/bin/rm -rf /var/run/nvidia-persistenced
"""


class Baseline:
    def __init__(self, gpuvet, outdir):
        self.outdir = outdir
        self.fixtures = None  # the shared cache's directory, once prepare() has made them
        self.bin = os.path.join(outdir, "bin")
        os.makedirs(self.bin, exist_ok=True)
        link = os.path.join(self.bin, "gpuvet")
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(gpuvet, link)
        self.inventory = os.path.join(outdir, "inventory")
        os.makedirs(os.path.join(self.inventory, "group_vars"), exist_ok=True)
        # The shipped group_vars: the defaults a user gets.
        shutil.copy(os.path.join(ANSIBLE, "inventory", "group_vars", "gpu_nodes.yml"),
                    os.path.join(self.inventory, "group_vars", "gpu_nodes.yml"))
        with open(os.path.join(self.inventory, "hosts.yml"), "w") as f:
            f.write("all:\n  children:\n    gpu_nodes:\n      vars:\n        ansible_connection: local\n"
                    "        ansible_python_interpreter: /usr/bin/python3\n        gpuvet_become: false\n"
                    "      hosts:\n        node:\n")

    def seed(self, name, platform, stand_ins, extra=None):
        """The files copied over the root: os-release, and the stand-ins of a node whose
        driver packages are in (persistenced's unit) and whose tools the role calls."""
        seed = os.path.join(self.outdir, "seed-" + name)
        shutil.rmtree(seed, ignore_errors=True)
        os.makedirs(seed)
        files = dict(OS_RELEASE[platform])
        if stand_ins:
            files["usr/local/sbin/nvidia-ctk"] = open(FAKE_CTK).read()
            files["usr/local/sbin/update-initramfs"] = (
                '#!/bin/sh\necho "update-initramfs $*" >> %s/initramfs.log\n' % os.path.join(self.outdir, name))
            files["usr/lib/systemd/system/nvidia-persistenced.service"] = PERSISTENCED_UNIT
            files["etc/docker/daemon.json"] = '{"log-driver": "json-file"}\n'
        files.update(extra or {})
        for rel, text in files.items():
            path = os.path.join(seed, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
            if rel.startswith("usr/local/sbin/") or rel.startswith("usr/local/bin/"):
                os.chmod(path, 0o755)
        return seed, sorted(files)

    def play(self, name, platform, fixture, args, stand_ins=False, keep=False, playbook="setup_gpu_baseline.yml",
             command=None, extra_seed=None, binds=()):
        """Run a playbook (or command, an argv run from deploy/ansible) in the throw-away root
        `name`; returns (process, scratch, seeded)."""
        scratch = os.path.join(self.outdir, name)
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)
        os.makedirs(scratch, exist_ok=True)
        seed, seeded = self.seed(name, platform, stand_ins, extra_seed)
        results = os.path.join(scratch, "results")
        env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
                   ANSIBLE_CONFIG=os.path.join(ANSIBLE, "ansible.cfg"),
                   PATH=self.bin + ":" + os.environ.get("PATH", ""),
                   FAKE_NVIDIA_CTK_LOG=os.path.join(scratch, "nvidia-ctk.log"))
        vars_ = ["-e", "gpu_baseline_detect_root=" + os.path.join(self.fixtures, fixture),
                 "-e", "gpu_baseline_results_dir=" + results]
        run = (list(command) if command else
               [shutil.which("ansible-playbook"), "-i", os.path.join(self.inventory, "hosts.yml"), "playbooks/" + playbook])
        argv = ["sh", "-c", 'cd "$0" && exec "$@"', ANSIBLE] + run + vars_ + list(args)
        # A continued root keeps what the first run made of the seeded files.
        proc = throwaway_root.run(scratch, argv, seed=None if keep else seed, keep=keep, env=env, binds=binds)
        return proc, scratch, seeded

    def play_hosts(self, run, cases, args, playbook="setup_gpu_baseline.yml"):
        """One ansible-playbook run over several throw-away roots, an inventory host each
        (throwaway_root.run_hosts): cases are dicts with name (the host, and its root's
        directory), platform, fixture, and optionally vars (the host's variables, as -e gave
        them), stand_ins, extra_seed, keep (continue the root of an earlier run), binds.
        Returns (process, {name: (scratch, seeded files)}); the host's control-node results
        are in scratch/results/NAME/."""
        hosts, roots, where = {}, [], {}
        for case in cases:
            name = case["name"]
            scratch = os.path.join(self.outdir, name)
            keep = case.get("keep", False)
            if not keep:
                shutil.rmtree(scratch, ignore_errors=True)
            os.makedirs(scratch, exist_ok=True)
            throwaway_root.prepare_root(scratch, keep)
            seed, seeded = self.seed(name, case["platform"], case.get("stand_ins", False), case.get("extra_seed"))
            host = throwaway_root.host_vars(scratch, {"FAKE_NVIDIA_CTK_LOG": os.path.join(scratch, "nvidia-ctk.log")})
            host.update({"gpu_baseline_detect_root": os.path.join(self.fixtures, case["fixture"]),
                         "gpu_baseline_results_dir": os.path.join(scratch, "results")})
            host.update(case.get("vars", {}))
            hosts[name] = host
            roots.append((scratch, None if keep else seed, list(case.get("binds", ()))))
            where[name] = (scratch, seeded)
        inventory = os.path.join(self.inventory, "hosts-%s.yml" % run)
        with open(inventory, "w") as f:  # JSON is YAML
            json.dump({"all": {"children": {"gpu_nodes": {"vars": {"gpuvet_become": False}, "hosts": hosts}}}}, f,
                      indent=1)
        # The controller runs outside the roots: its own files stay in the output directory.
        env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
                   ANSIBLE_CONFIG=os.path.join(ANSIBLE, "ansible.cfg"),
                   ANSIBLE_LOCAL_TEMP=os.path.join(self.outdir, "ansible-local"),
                   ANSIBLE_HOME=os.path.join(self.outdir, "ansible-home"),
                   PATH=self.bin + ":" + os.environ.get("PATH", ""))
        argv = ["sh", "-c", 'cd "$0" && exec "$@"', ANSIBLE, shutil.which("ansible-playbook"), "-i", inventory,
                "playbooks/" + playbook] + list(args)
        return throwaway_root.run_hosts(roots, argv, env=env), where


def recap(out, host="node"):
    m = re.search(r"^%s\s+:\s+((?:\w+=\d+\s*)+)$" % re.escape(host), out, re.M)
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(1))} if m else {}


def host_output(out, host):
    """The lines of a run's output that belong to host: its result lines and what follows
    them (a result's JSON, a debug message), the diff shown just before each (the default
    callback prints a result's diff, then its status line), and each failure's message."""
    status = re.compile(r"^(ok|changed|skipping|fatal|failed|included): \[([^\]]+)\]")
    mine, pending, owner = [], [], None
    for line in out.splitlines():
        m = status.match(line)
        if m:
            owner = m.group(2).split(" -> ")[0]
            if owner == host:
                mine.extend(pending)
                mine.append(line)
                # A failure's message as the play wrote it (the line is JSON, quotes escaped).
                if m.group(1) in ("fatal", "failed") and " => {" in line:
                    try:
                        mine.append(str(json.loads(line[line.index(" => {") + 4:]).get("msg", "")))
                    except ValueError:
                        pass
            pending = []
        elif line.startswith(("TASK [", "RUNNING HANDLER [", "PLAY ", "PLAY RECAP")):
            owner, pending = None, []
        elif line.startswith("--- before") or pending:
            pending.append(line)
        elif owner == host:
            mine.append(line)
    return "\n".join(mine)


def written(scratch, seeded):
    """What the play wrote on the node: the upper layer less the seeded files and the
    interpreter's own droppings."""
    return [p for p in throwaway_root.changed_files(scratch) if p not in seeded and "__pycache__" not in p]


def plan_path(scratch, host="node"):
    return os.path.join(scratch, "results", host, "plan.json")


def plan_of(scratch, host="node"):
    with open(plan_path(scratch, host)) as f:
        return json.load(f)


def check_mode_per_family(b):
    cases = [
        # name, platform, fixture, host variables, expectations on the plan
        ("ubuntu2204", "ubuntu2204", "a100-nouveau", {}, {
            "platform": "ubuntu2204", "driver_branch": "R580", "cuda": "13.0", "kernel_modules": "open",
            "method_used": "native", "container_packages": ["docker.io", "nvidia-container-toolkit"],
            "cuda_packages": ["cuda-toolkit-13-0"], "chosen_by": "driver: gpuvet detect, CUDA: gpuvet detect"}),
        ("ubuntu2404", "ubuntu2404", "hgx-b300", {"driver_installation_method": "precompiled"}, {
            "platform": "ubuntu2404", "kernel_modules": "open", "method": "precompiled", "method_used": "native"}),
        ("debian12", "debian12", "p100-node", {"driver_installation_method": "precompiled"}, {
            "platform": "debian12", "cuda": "12.9", "kernel_modules": "proprietary", "method_used": "native",
            "cuda_packages": ["cuda-toolkit-12-9"]}),
        ("rocky8", "rocky8", "a40-node", {"container_runtime": "containerd"}, {
            "platform": "rhel8", "kernel_modules": "open", "container_runtime": "containerd",
            "container_packages": ["containerd.io", "nvidia-container-toolkit"]}),
        ("rocky9", "rocky9", "dgx-h100", {"driver_installation_method": "driver-container",
                                          "nvidia_driver_version": "580.95.05", "cuda_version": "12-8"}, {
            "platform": "rhel9", "method_used": "driver-container", "driver_packages": [],
            "driver_container_image": "nvcr.io/nvidia/driver:580.95.05-rhel9", "cuda": "12.8",
            "chosen_by": "driver: nvidia_driver_version, CUDA: cuda_version"}),
    ]
    # One run, a host (and a root) per family.
    proc, roots = b.play_hosts("check", [{"name": "check-" + name, "platform": platform, "fixture": fixture,
                                          "vars": host} for name, platform, fixture, host, _ in cases],
                               ["--check", "--diff", "--skip-tags", "packages,repos"])
    for name, platform, fixture, extra, want in cases:
        host = "check-" + name
        scratch, seeded = roots[host]
        out = host_output(proc.stdout, host)
        r = recap(proc.stdout, host)
        if not check(r.get("failed") == 0 and r.get("unreachable") == 0 and os.path.exists(plan_path(scratch, host)),
                     "%s --check: the play succeeds (rc %d, %s)" % (name, proc.returncode, r)):
            print(out[-4000:], proc.stderr[-2000:])
            continue
        plan = plan_of(scratch, host)
        for key, value in want.items():
            check(plan.get(key) == value, "%s --check: plan %s = %r (got %r)" % (name, key, value, plan.get(key)))
        pkgs = plan["driver_packages"]
        kernel = plan["kernel"]
        if name == "ubuntu2204":
            check(pkgs == ["linux-headers-" + kernel, "dkms", "nvidia-driver-pinning-580", "nvidia-open"],
                  "ubuntu2204: headers, DKMS, the R580 pin and nvidia-open: %s" % pkgs)
            check(plan["repositories"][0].endswith("/cuda/repos/ubuntu2204/x86_64/"), "ubuntu2204: NVIDIA's ubuntu2204 repository")
            check("+blacklist nouveau" in out and "blacklist-nouveau.conf" in out,
                  "ubuntu2204: --diff shows the nouveau blacklist")
            check(plan["reboot_needed"] is True, "ubuntu2204: nouveau is loaded, so a reboot is due")
        elif name == "ubuntu2404":
            check(pkgs[-2:] == ["nvidia-driver-pinning-580", "nvidia-open"], "ubuntu2404: fell back to the native packages")
            check("no precompiled open modules of R580 for kernel " + kernel in plan["method_note"]
                  and "apt-cache show linux-modules-nvidia-580-server-open-" + kernel in plan["method_note"],
                  "ubuntu2404: the fallback names the package it looked for: " + plan["method_note"])
            check(plan["architectures"] == ["blackwell_ultra"], "ubuntu2404: Blackwell Ultra needs the open modules")
        elif name == "debian12":
            check(pkgs[-2:] == ["nvidia-driver-pinning-580", "cuda-drivers"], "debian12: Pascal gets cuda-drivers (proprietary)")
            check("(the platform has none)" in plan["method_note"], "debian12: no precompiled modules exist: " + plan["method_note"])
        elif name == "rocky8":
            check(pkgs == ["kernel-devel-" + kernel, "kernel-headers", "@nvidia-driver:580-open"],
                  "rocky8: kernel-devel and the 580-open module stream: %s" % pkgs)
            check(plan["repositories"] == [
                "https://developer.download.nvidia.com/compute/cuda/repos/rhel8/x86_64/cuda-rhel8.repo",
                "https://nvidia.github.io/libnvidia-container/stable/rpm/nvidia-container-toolkit.repo",
                "https://download.docker.com/linux/rhel/docker-ce.repo"], "rocky8: the three .repo files")
        elif name == "rocky9":
            check("nvcr.io/nvidia/driver:580.95.05-rhel9" in out, "rocky9: --diff shows the driver container unit")
        stray = written(scratch, seeded)
        check(stray == [], "%s --check: nothing written on the node (%s)" % (name, stray[:5]))
    check(proc.returncode == 0, "--check over the five families: the run succeeds (rc %d)" % proc.returncode)


def apply_for_real(b):
    # docker, driver loaded (the CDI spec can be generated), a power limit; and containerd,
    # no driver loaded yet (a100-nouveau), persistence mode off: one run, a root each.
    docker = {"name": "apply-docker", "platform": "debian12", "fixture": "dgx-h100", "stand_ins": True,
              "vars": {"gpu_power_limit": "300"}}
    containerd = {"name": "apply-containerd", "platform": "debian12", "fixture": "a100-nouveau", "stand_ins": True,
                  "vars": {"container_runtime": "containerd", "gpu_persistence_mode": "false"}}
    args = ["--diff", "--skip-tags", "packages,repos"]
    proc, roots = b.play_hosts("apply", [docker, containerd], args)
    if not check(proc.returncode == 0, "apply (docker and containerd): the play succeeds (rc %d)" % proc.returncode):
        print(proc.stdout[-5000:], proc.stderr[-2000:])
        return
    apply_containerd(host_output(proc.stdout, "apply-containerd"), roots["apply-containerd"][0])
    scratch, seeded = roots["apply-docker"]
    upper = os.path.join(scratch, "upper")

    def read(rel):
        try:
            with open(os.path.join(upper, rel)) as f:
                return f.read()
        except OSError:
            return None
    blacklist = read("etc/modprobe.d/blacklist-nouveau.conf") or ""
    check("blacklist nouveau\n" in blacklist and "options nouveau modeset=0\n" in blacklist,
          "apply: /etc/modprobe.d/blacklist-nouveau.conf blacklists nouveau")
    log = os.path.join(scratch, "initramfs.log")
    check(os.path.exists(log) and open(log).read() == "update-initramfs -u\n", "apply: the initramfs is rebuilt once")
    daemon = json.loads(read("etc/docker/daemon.json") or "{}")
    check(daemon.get("runtimes", {}).get("nvidia") == {"args": [], "path": "nvidia-container-runtime"}
          and daemon.get("log-driver") == "json-file", "apply: daemon.json gains the nvidia runtime, keeps log-driver")
    check((read("etc/cdi/nvidia.yaml") or "").startswith("---\ncdiVersion:"), "apply: the CDI spec is written")
    dropin = read("etc/systemd/system/nvidia-persistenced.service.d/gpuvet.conf") or ""
    check("ExecStart=\nExecStart=/usr/bin/nvidia-persistenced --persistence-mode --verbose" in dropin
          and "StopWhenUnneeded=false" in dropin, "apply: the persistenced drop-in turns persistence mode on")
    check(os.path.islink(os.path.join(upper, "etc/systemd/system/multi-user.target.wants/nvidia-persistenced.service")),
          "apply: nvidia-persistenced is enabled")
    power = read("etc/systemd/system/gpuvet-power-limit.service") or ""
    check("ExecStart=/usr/bin/nvidia-smi --power-limit=300" in power
          and os.path.islink(os.path.join(upper, "etc/systemd/system/multi-user.target.wants/gpuvet-power-limit.service")),
          "apply: the power limit unit is installed and enabled")
    report = read("var/log/gpu_baseline/gpu_detection.txt") or ""
    check("8x NVIDIA H100 80GB HBM3" in report and "Install   driver R580" in report,
          "apply: /var/log/gpu_baseline/gpu_detection.txt is gpuvet detect's report")
    node_plan = json.loads(read("var/log/gpu_baseline/plan.json") or "{}")
    check(node_plan.get("power_limit_w") in (300, "300") and node_plan.get("reboot_needed") is True,
          "apply: the node keeps the plan; R550 is loaded and R580 planned, so a reboot is due")

    again, _ = b.play_hosts("apply-again", [dict(docker, keep=True)], args)
    r = recap(again.stdout, "apply-docker")
    check(again.returncode == 0 and r.get("changed") == 0, "apply: a second run changes nothing (%s)" % r)
    if r.get("changed"):
        print("\n".join(line for line in again.stdout.splitlines() if line.startswith("changed:") or "TASK" in line)[-3000:])
    ctk = open(os.path.join(scratch, "nvidia-ctk.log")).read().splitlines()
    check([c for c in ctk if c.startswith("runtime configure")] == ["runtime configure --runtime=docker"],
          "apply: nvidia-ctk runtime configure ran once over both runs: %s" % ctk)
    check(open(log).read() == "update-initramfs -u\n", "apply: the second run did not rebuild the initramfs")


def apply_containerd(out, scratch):
    """What the containerd host of apply_for_real's run wrote (out: its output)."""
    upper = os.path.join(scratch, "upper")

    def read(rel):
        try:
            with open(os.path.join(upper, rel)) as f:
                return f.read()
        except OSError:
            return None
    drop_in = read("etc/containerd/conf.d/99-nvidia.toml") or ""
    check('containerd.runtimes.nvidia.options]' in drop_in and 'BinaryName = "/usr/bin/nvidia-container-runtime"' in drop_in,
          "apply (containerd): conf.d/99-nvidia.toml registers the nvidia runtime")
    check('imports = ["/etc/containerd/conf.d/*.toml"]' in (read("etc/containerd/config.toml") or ""),
          "apply (containerd): config.toml imports the drop-in")
    check(read("etc/cdi/nvidia.yaml") is None, "apply (containerd): no CDI spec before a driver is loaded")
    check(read("etc/systemd/system/nvidia-persistenced.service.d/gpuvet.conf") is None,
          "apply (containerd): gpu_persistence_mode=false writes no drop-in")
    check("needs a reboot to load the R580 driver" in out, "apply (containerd): the play says a reboot is due")


def bad_input(b):
    # A copy, not an overlay: the throw-away roots overlay / itself, which shows no mounts.
    unknown = fixture_cache.writable("a40-node", os.path.join(b.outdir, "unknown-gpu"), overlay=False)
    for dev in os.listdir(os.path.join(unknown, "sys", "bus", "pci", "devices")):
        path = os.path.join(unknown, "sys", "bus", "pci", "devices", dev)
        real = os.path.realpath(path) if os.path.islink(path) else path
        try:
            if open(os.path.join(real, "vendor")).read().strip() == "0x10de":
                # No NVIDIA GPU has this id in gpus.json. The kernel shows a device's id in
                # its uevent too (PCI_ID), which gpuvet reads first: change both.
                with open(os.path.join(real, "device"), "w") as f:
                    f.write("0x1fff\n")
                uevent = os.path.join(real, "uevent")
                if os.path.exists(uevent):
                    with open(uevent) as f:
                        lines = f.read().splitlines()
                    lines = ["PCI_ID=10DE:1FFF" if x.startswith("PCI_ID=") else x for x in lines]
                    with open(uevent, "w") as f:
                        f.write("\n".join(lines) + "\n")
        except OSError:
            pass
    cases = [
        ("method", "a40-node", {"driver_installation_method": "dkms"},
         'driver_installation_method is "dkms": expected native, driver-container or precompiled'),
        ("cuda", "a40-node", {"nvidia_driver_version": "535", "cuda_version": "13-0"},
         "cuda_version is 13.0: "),
        ("driver", "hgx-b300", {"nvidia_driver_version": "535"},
         "nvidia_driver_version is 535 (535.309.01): NVIDIA B300"),
        ("unknown-gpu", unknown, {},
         "auto_detect_cuda_version is on, but gpuvet detect does not know 10de:1fff"),
        ("runtime", "a40-node", {"container_runtime": "podman"}, 'container_runtime is "podman"'),
        ("container-debian", "a40-node", {"driver_installation_method": "driver-container"},
         "NVIDIA publishes no driver container image for debian12"),
    ]
    # One run, a host (and a root) per case: each must fail on its own.
    proc, roots = b.play_hosts("bad", [{"name": "bad-" + name, "platform": "debian12", "fixture": fixture,
                                        "stand_ins": True, "vars": host} for name, fixture, host, _ in cases], [])
    check(proc.returncode != 0, "bad input: the run fails (rc %d)" % proc.returncode)
    for name, fixture, extra, words in cases:
        host = "bad-" + name
        scratch, seeded = roots[host]
        out = " ".join(host_output(proc.stdout, host).split())
        check(recap(proc.stdout, host).get("failed") == 1 and words in out,
              "bad %s: the play stops naming it: %r" % (name, words))
        if words not in out:
            print(out[-1500:])
        stray = written(scratch, seeded)
        check(stray == [], "bad %s: nothing written on the node (%s)" % (name, stray[:5]))


def prepare(argv, fixtures):
    """(Baseline, None) for `test_X.py GPUVET OUTDIR` with the fixtures made, or (None, 77)
    when this machine cannot run the playbooks in throw-away roots."""
    gpuvet, outdir = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    if not shutil.which("ansible-playbook"):
        print("SKIP: ansible-playbook not installed (tools/run-tests.sh installs ansible-core)")
        return None, 77
    if not throwaway_root.available():
        print("SKIP: needs root and overlayfs in a mount namespace for the throw-away roots")
        return None, 77
    os.makedirs(outdir, exist_ok=True)
    b = Baseline(gpuvet, outdir)
    b.fixtures = fixture_cache.ensure(*fixtures)
    return b, None


def repos_check_mode(b):
    """The repository tasks in check mode on a Debian 12 node whose Python lacks
    python3-debian (deb822_repository's import): the play succeeds, says it would install
    python3-debian and add NVIDIA's repository, and writes nothing. The packages tag stays
    skipped: its apt tasks resolve NVIDIA's packages from the repository check mode does
    not add."""
    missing = subprocess.run(["/usr/bin/python3", "-c", "import debian.deb822"],
                             capture_output=True).returncode != 0
    proc, scratch, seeded = b.play("repos-check", "debian12", "dgx-h100",
                                   ["--check", "--diff", "--skip-tags", "packages"])
    r = recap(proc.stdout)
    if not check(r.get("failed") == 0 and proc.returncode == 0,
                 "debian12 --check with the repos tag: the play succeeds (rc %d, %s)" % (proc.returncode, r)):
        print(proc.stdout[-4000:], proc.stderr[-2000:])
        return
    if missing:
        check(re.search(r"TASK \[gpu_baseline : Install python3-debian[^\n]*\n(?:[^\n]*\n)*?changed: \[node\]",
                        proc.stdout) is not None, "--check says it would install python3-debian")
        check("would add the apt repository cuda: https://developer.download.nvidia.com/compute/cuda/repos/debian12/"
              in proc.stdout, "--check names NVIDIA's debian12 CUDA repository it would add")
    else:
        print("note: this machine's Python has python3-debian; the path without it is not exercised")
    # apt's own simulation (what the apt module's check mode runs) logs its planner's input.
    stray = [p for p in written(scratch, seeded) if p != "var/log/apt/eipp.log.xz"]
    check(stray == [], "repos --check: nothing written on the node (%s)" % stray[:5])


def packages_check_mode(b):
    """`--check --tags packages` alone on Debian 12: the plan is still made (the packages'
    names come from it), apt's check mode simulates the packages Debian has, and those only
    NVIDIA's repositories carry (not added in check mode) are reported as what would be
    installed instead of failing apt; nothing is written."""
    proc, scratch, seeded = b.play("packages-check", "debian12", "dgx-h100",
                                   ["--check", "--diff", "--tags", "packages"])
    r = recap(proc.stdout)
    if not check(r.get("failed") == 0 and proc.returncode == 0,
                 "debian12 --check --tags packages: the play succeeds (rc %d, %s)" % (proc.returncode, r)):
        print(proc.stdout[-4000:], proc.stderr[-2000:])
        return
    check("TASK [gpu_baseline : Write the plan down]" in proc.stdout, "--tags packages still makes the plan")
    would = re.search(r"would install ([^:\n]*): not in apt's lists", proc.stdout)
    named = set(would.group(1).split(", ")) if would else set()
    check({"cuda-toolkit-13-0", "nvidia-open", "nvidia-container-toolkit"} <= named,
          "the packages of NVIDIA's repositories reported as what would be installed: %s" % sorted(named))
    simulated = re.search(r"TASK \[gpu_baseline : Install the container runtime[^\n]*\(apt\)[^\n]*\n"
                          r"(?:[^\n]*\n)*?changed: \[node\]", proc.stdout)
    check("docker.io" not in named and simulated is not None,
          "apt's own check mode simulates the packages Debian has (docker.io)")
    stray = [p for p in written(scratch, seeded) if p != "var/log/apt/eipp.log.xz"]
    check(stray == [], "packages --check: nothing written on the node (%s)" % stray[:5])


PARTS = {"check": check_mode_per_family, "repos": repos_check_mode, "packages": packages_check_mode,
         "apply": apply_for_real, "bad": bad_input}


def main():
    # An optional third argument runs one part (meson runs the parts as separate tests,
    # so they share its slots with the other tests).
    parts = sys.argv[3:] or list(PARTS)
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        print("test_baseline.py: unknown part %s (expected %s)" % (unknown[0], ", ".join(PARTS)))
        return 2
    b, skip = prepare(sys.argv, ["a100-nouveau", "hgx-b300", "p100-node", "a40-node", "dgx-h100"])
    if skip:
        return skip
    for part in parts:
        PARTS[part](b)
    return finish()


if __name__ == "__main__":
    sys.exit(main())

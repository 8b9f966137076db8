#!/usr/bin/env python3
"""validate_gpu.yml over SSH against two test hosts, each with gpuvet from the Debian package.

    test_ansible_ssh.py GPUVET_DEB

Each host is a network namespace on this machine with its own veth link and its own sshd
(host key, authorized key and config made by the test, listening on the namespace's
address); gpuvet is unpacked from the .deb into a directory per host. Host 1 judges the
healthy dgx-h100 fixture, host 2 the degraded one (gpu_validation_root, a host variable).
The play must fail for host 2 only, fetch both reports over SSH, and print a verdict line
per host. Everything made is torn down at the end. Needs root, `ip`, `sshd` and `ssh`;
skips (77) without them. Exit 0 when every case holds, 1 otherwise."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import fixture_cache  # noqa: E402  (the shared fixture trees)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ANSIBLE = os.path.join(REPO, "deploy", "ansible")
SSHD = "/usr/sbin/sshd"
HOSTS = [("gpu-node-a", "dgx-h100", "pass"), ("gpu-node-b", "dgx-h100-degraded", "fail")]


def sh(*cmd, **kw):
    return subprocess.run(list(cmd), check=True, capture_output=True, text=True, **kw)


class TestHost:
    """A network namespace with a veth link to this machine and an sshd inside it."""

    def __init__(self, index, tmp, pubkey):
        self.index = index
        tag = "%d%d" % (os.getpid() % 10000, index)
        self.ns = "gvt%s" % tag
        self.veth = "gvh%s" % tag
        self.addr = "10.231.%d.2" % ((os.getpid() + index) % 250 + 1)
        self.host_addr = self.addr[:-1] + "1"
        self.dir = os.path.join(tmp, self.ns)
        os.makedirs(self.dir)
        self.pidfile = os.path.join(self.dir, "sshd.pid")
        sh("ip", "netns", "add", self.ns)
        sh("ip", "link", "add", self.veth, "type", "veth", "peer", "name", "eth0", "netns", self.ns)
        sh("ip", "addr", "add", self.host_addr + "/30", "dev", self.veth)
        sh("ip", "link", "set", self.veth, "up")
        sh("ip", "netns", "exec", self.ns, "ip", "addr", "add", self.addr + "/30", "dev", "eth0")
        sh("ip", "netns", "exec", self.ns, "ip", "link", "set", "eth0", "up")
        sh("ip", "netns", "exec", self.ns, "ip", "link", "set", "lo", "up")
        hostkey = os.path.join(self.dir, "hostkey")
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", hostkey)
        keys = os.path.join(self.dir, "authorized_keys")
        shutil.copy(pubkey, keys)
        os.chmod(keys, 0o600)
        config = os.path.join(self.dir, "sshd_config")
        with open(config, "w") as f:
            f.write("ListenAddress %s\nPort 22\nHostKey %s\nAuthorizedKeysFile %s\nPermitRootLogin prohibit-password\n"
                    "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
                    "Subsystem sftp internal-sftp\nPidFile %s\n" % (self.addr, hostkey, keys, self.pidfile))
        os.makedirs("/run/sshd", exist_ok=True)
        sh("ip", "netns", "exec", self.ns, SSHD, "-f", config, "-E", os.path.join(self.dir, "sshd.log"))
        for _ in range(100):
            if os.path.exists(self.pidfile):
                break
            time.sleep(0.05)

    def close(self):
        try:
            with open(self.pidfile) as f:
                os.kill(int(f.read().strip()), 15)
        except (OSError, ValueError):
            pass
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)
        subprocess.run(["ip", "link", "del", self.veth], capture_output=True)


def main():
    deb = os.path.abspath(sys.argv[1])
    missing = [t for t in ("ip", "ssh", "ssh-keygen", "ansible-playbook") if not shutil.which(t)]
    if os.geteuid() != 0 or missing or not os.path.exists(SSHD):
        print("SKIP: needs root, sshd and %s" % ", ".join(missing or ["ip, ssh"]))
        return 77
    # OpenSSH without PAM refuses a locked account ("!" in /etc/shadow) even with a key.
    with open("/etc/shadow") as f:
        root = next((line.split(":")[1] for line in f if line.startswith("root:")), "")
    if root.startswith("!"):
        print("SKIP: root's account is locked (/etc/shadow), so sshd refuses it")
        return 77
    fixtures = fixture_cache.ensure("dgx-h100", "dgx-h100-degraded")
    hosts = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            userkey = os.path.join(tmp, "userkey")
            sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", userkey)
            lines = []
            for i, (name, fixture, _) in enumerate(HOSTS, 1):
                h = TestHost(i, tmp, userkey + ".pub")
                hosts.append(h)
                prefix = os.path.join(tmp, name + "-root")  # gpuvet "installed" from the package
                sh("dpkg-deb", "-x", deb, prefix)
                lines.append("""        %s:
          ansible_host: %s
          gpu_validation_gpuvet: %s
          gpu_validation_root: %s
          gpu_validation_report_dir: %s
          gpu_baseline_detect_root: %s
""" % (name, h.addr, os.path.join(prefix, "usr", "bin", "gpuvet"), os.path.join(fixtures, fixture),
                        os.path.join(h.dir, "reports"), os.path.join(fixtures, fixture)))
            inventory = os.path.join(tmp, "hosts.yml")
            results = os.path.join(tmp, "results")
            with open(inventory, "w") as f:
                f.write("""all:
  children:
    gpu_nodes:
      vars:
        ansible_user: root
        ansible_ssh_private_key_file: %s
        ansible_ssh_common_args: -o UserKnownHostsFile=%s -o StrictHostKeyChecking=accept-new
        ansible_python_interpreter: /usr/bin/python3
        gpu_validation_results_dir: %s
      hosts:
%s""" % (userkey, os.path.join(tmp, "known_hosts"), results, "".join(lines)))
            env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ANSIBLE, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
                       ANSIBLE_HOME=os.path.join(tmp, "ansible-home"))
            p = subprocess.run(["ansible-playbook", "-i", inventory, "playbooks/validate_gpu.yml", "-e", "gpuvet_become=false"],
                               cwd=ANSIBLE, env=env, capture_output=True, text=True, timeout=600)
            out = p.stdout + p.stderr
            if not check(p.returncode == 2, "the play fails for the failing host (exit 2), got %d" % p.returncode):
                print(out[-3000:])
            for name, fixture, verdict in HOSTS:
                check("%s: %s (gpuvet check --level quick:" % (name, verdict.upper()) in out,
                      "%s: its verdict line (%s)" % (name, verdict.upper()))
                path = os.path.join(results, name, "gpuvet-check-quick.json")
                if check(os.path.exists(path), "%s: report fetched over SSH" % name):
                    with open(path) as f:
                        rep = json.load(f)
                    check(rep["summary"]["verdict"] == verdict and rep["root"] == os.path.join(fixtures, fixture),
                          "%s: the report judged %s (%s)" % (name, fixture, verdict))
            check("gpu-node-b failed validation" in out and "gpu-node-a failed validation" not in out,
                  "only gpu-node-b fails the play")

            # setup_gpu_baseline.yml --check with the package: each node detects with a scratch
            # copy of gpuvet unpacked from the .deb the control node sends, plans, and keeps nothing.
            baseline = os.path.join(tmp, "baseline")
            before = set(os.listdir("/tmp"))
            p = subprocess.run(["ansible-playbook", "-i", inventory, "playbooks/setup_gpu_baseline.yml", "--check", "--diff",
                                "--skip-tags", "packages,repos", "-e", "gpuvet_become=false",
                                "-e", "gpu_baseline_gpuvet_package=" + deb, "-e", "gpu_baseline_results_dir=" + baseline],
                               cwd=ANSIBLE, env=env, capture_output=True, text=True, timeout=600)
            if not check(p.returncode == 0, "setup_gpu_baseline.yml --check over SSH with the .deb: succeeds (rc %d)"
                         % p.returncode):
                print((p.stdout + p.stderr)[-3000:])
            for name, fixture, _ in HOSTS:
                path = os.path.join(baseline, name, "plan.json")
                if check(os.path.exists(path), "%s: plan.json fetched" % name):
                    with open(path) as f:
                        plan = json.load(f)
                    check(plan["driver_branch"] == "R580" and plan["gpus"] == ["NVIDIA H100 80GB HBM3"]
                          and plan["kernel_modules"] == "open",
                          "%s: R580 with open modules for the H100s (gpuvet from the .deb answered)" % name)
            left = [d for d in set(os.listdir("/tmp")) - before if d.endswith(".gpuvet")]
            check(left == [], "the scratch copies of gpuvet are removed (%s)" % left)
        finally:
            for h in hosts:
                h.close()
    return finish()


if __name__ == "__main__":
    sys.exit(main())

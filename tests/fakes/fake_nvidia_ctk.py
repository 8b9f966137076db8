#!/usr/bin/env python3
"""Stand-in for NVIDIA Container Toolkit's nvidia-ctk, for the gpu_baseline role's tests
(the toolkit is in no Debian repository the test machine reaches).

It does what nvidia-ctk 1.18 documents for the calls the role makes, writing the same
keys to the same files, and appends each call to $FAKE_NVIDIA_CTK_LOG:

  runtime configure --runtime=docker [--config=F]      F (/etc/docker/daemon.json): adds
      runtimes.nvidia = {"args": [], "path": "nvidia-container-runtime"}, keeps other keys,
      4-space indent
  runtime configure --runtime=containerd [--config=F]  /etc/containerd/conf.d/99-nvidia.toml
      with the nvidia runtime (config version 2 plugin path) and an imports line in F
      (/etc/containerd/config.toml)
  cdi generate --output=F                              a CDI spec for kind nvidia.com/gpu

Anything else exits 2, as nvidia-ctk does for usage errors."""
import json
import os
import sys

CONTAINERD_DROP_IN = """version = 2

[plugins]

  [plugins."io.containerd.grpc.v1.cri"]

    [plugins."io.containerd.grpc.v1.cri".containerd]

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes]

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
          privileged_without_host_devices = false
          runtime_engine = ""
          runtime_root = ""
          runtime_type = "io.containerd.runc.v2"

          [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
            BinaryName = "/usr/bin/nvidia-container-runtime"
"""

CDI_SPEC = """---
cdiVersion: 0.5.0
kind: nvidia.com/gpu
devices:
- name: all
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
containerEdits:
  deviceNodes:
  - path: /dev/nvidiactl
"""


def option(args, name, default=None):
    for a in args:
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return default


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def configure_docker(path):
    config = {}
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
        config = json.loads(text) if text.strip() else {}
    config.setdefault("runtimes", {})["nvidia"] = {"args": [], "path": "nvidia-container-runtime"}
    write(path, json.dumps(config, indent=4) + "\n")


def configure_containerd(path):
    drop_in_dir = os.path.join(os.path.dirname(path), "conf.d")
    write(os.path.join(drop_in_dir, "99-nvidia.toml"), CONTAINERD_DROP_IN)
    text = open(path).read() if os.path.exists(path) else "version = 2\n"
    line = 'imports = ["%s/*.toml"]' % drop_in_dir
    if line not in text:
        write(path, line + "\n" + text)


def main(args):
    log = os.environ.get("FAKE_NVIDIA_CTK_LOG")
    if log:
        with open(log, "a") as f:
            f.write(" ".join(args) + "\n")
    if args[:2] == ["runtime", "configure"]:
        runtime = option(args, "--runtime", "docker")
        if runtime == "docker":
            configure_docker(option(args, "--config", "/etc/docker/daemon.json"))
        elif runtime == "containerd":
            configure_containerd(option(args, "--config", "/etc/containerd/config.toml"))
        else:
            sys.stderr.write("nvidia-ctk: unrecognized runtime '%s'\n" % runtime)
            return 2
        return 0
    if args[:2] == ["cdi", "generate"]:
        output = option(args, "--output")
        if output:
            write(output, CDI_SPEC)
        else:
            sys.stdout.write(CDI_SPEC)
        return 0
    sys.stderr.write("nvidia-ctk: unsupported call: %s\n" % " ".join(args))
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

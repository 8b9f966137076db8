#!/usr/bin/env bash
# Install what gpuvet needs to build and test on Debian 12 / Ubuntu 22.04+. Idempotent.
set -euo pipefail

packages=(
  meson ninja-build gcc clang pkg-config python3
  libjansson-dev libyaml-dev libarchive-dev libcmocka-dev libpci-dev pci.ids
  libmicrohttpd-dev    # gpuvet serve's HTTP server (src/serve/http_server.c): the build needs it
  libcrypt-dev         # gpuvet serve's basic auth checks bcrypt hashes with crypt_rn: the build needs it
  nettle-dev           # bench nccl's rendezvous proves the job's secret with Nettle's HMAC-SHA256: the build needs it
  prometheus wrk prometheus-node-exporter   # tests/golden/test_serve_prometheus.py: a real Prometheus scrapes gpuvet serve (promtool lints the body in golden_serve); perf/serve_scrape.sh drives /metrics with wrk, node_exporter as its reference point
  libncurses-dev       # gpuvet top's screen (src/top/top_screen.c): the build links ncurses
  tmux                 # tests/golden/test_top.py runs gpuvet top in a detached tmux session and reads the screen back
  libjsmn-dev          # gpuvet fleet reads node reports with jsmn (src/fleet/fleet_doc.c): the build needs jsmn.h
  libclang-rt-14-dev   # sanitizer and libFuzzer runtimes for clang
  strace               # tests/golden/test_output.py holds a syscall to signal gpuvet exactly there
  python3-jsonschema   # tests/data/test_datafiles.py validates data/*.json against data/schema/; tests/deploy/test_k8s.py the ServiceMonitor against its CRD
  python3-venv         # tools/run-tests.sh installs ansible-core and ansible-lint in a venv
  openssh-server openssh-client iproute2   # tests/deploy/test_ansible_ssh.py: test hosts in network namespaces
  dpkg-dev debhelper rpm   # tools/build-packages.sh: the .deb (dpkg-buildpackage) and the RPM (rpmbuild)
  libibverbs-dev       # tests/abi/verbs_*.c: src/bindings/verbs_api.h against rdma-core's <infiniband/verbs.h>
  ocl-icd-libopencl1 pocl-opencl-icd   # OpenCL ICD loader (dlopen'd at run time) + PoCL's CPU device for the OpenCL tests
  munge slurmctld slurmd slurm-client   # tests/slurm/test_slurm_health.py: a real one-node cluster (own key, socket, conf)
  chromium python3-pil fonts-dejavu-core   # tests/golden/test_report_html.py: headless rendering of report --html, screenshots compared with Pillow, the page's fixed font
  shellcheck curl jq openssl python3-yaml   # tests/deploy/test_k8s.py: deploy/k8s/gpuvet-k8s-check linted and run against a stand-in API server over TLS
  man-db groff-base zsh   # tests/golden/test_cli_tables.py: the generated man pages rendered by man -l, the zsh completion's syntax (zsh -n)
  systemd              # tests/deploy/test_systemd.py: systemd-analyze verify on deploy/systemd's units (installed, never run as PID 1)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "bootstrap: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

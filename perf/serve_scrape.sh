#!/usr/bin/env bash
# gpuvet serve under wrk (docs/perf.md, "gpuvet serve"), node_exporter the same way in the
# same run as a reference point:
#   perf/serve_scrape.sh [BUILDDIR] [SECONDS] [CONNECTIONS] [BUSY]
# gpuvet serve runs on the fake NVML's 8x H100 scenario (BUILDDIR/tests/libnvidia-ml.so.1),
# a round every second; wrk (2 threads, 1 for 1 connection; CONNECTIONS keep-alive connections, SECONDS long;
# gpuvet serve keeps them alive since 2026-11-29, before it closed each after one answer)
# scrapes /metrics; then the server's VmRSS and VmHWM from /proc. prometheus-node-exporter
# (Debian's), when installed, is measured with the same wrk command right after. BUSY (default
# 0) CPU-bound loops run beside both for the whole measurement: issue 41's tail targets hold
# "with the machine at load 2" (BUSY=2).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
seconds=${2:-10}
conns=${3:-16}
busy=${4:-0}
threads=$(( conns < 2 ? conns : 2 ))  # wrk wants at least one connection a thread
gpuvet=$build/gpuvet
[ -x "$gpuvet" ] || { echo "perf/serve_scrape.sh: no $gpuvet: build first" >&2; exit 2; }
command -v wrk >/dev/null || { echo "perf/serve_scrape.sh: wrk is not installed (apt-get install wrk)" >&2; exit 2; }
python3 -c "import sys; sys.path.insert(0, \"perf\"); import machine; machine.print_header()"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
kb() { awk -v k="$2:" '$1==k {print $2}' "/proc/$1/status"; }
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT

measure() { # NAME PID URL
  local name=$1 pid=$2 url=$3 bytes
  bytes=$(curl -s "$url" | wc -c)
  echo "== $name: $url ($bytes bytes a scrape); wrk -t$threads -c$conns -d${seconds}s --latency"
  echo "   load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  wrk -t"$threads" -c"$conns" -d"${seconds}s" --latency "$url" | grep -E "Requests/sec|Transfer/sec|  (50|90|99)%|Latency |requests in|Socket errors|Non-2xx"
  echo "   $name VmRSS $(kb "$pid" VmRSS) kB, VmHWM $(kb "$pid" VmHWM) kB; CPU time $(ps -o cputime= -p "$pid")"
}

for _ in $(seq "$busy"); do
  sh -c 'while :; do :; done' &
  pids+=($!)
done
[ "$busy" -gt 0 ] && echo "$busy busy loops beside the servers"

port=$(free_port)
FAKE_NVML_SCENARIO=$PWD/tests/fakes/scenarios/h100-sxm-8gpu.scn GPUVET_NVML_LIB=$build/tests/libnvidia-ml.so.1 \
  "$gpuvet" serve --listen "127.0.0.1:$port" --interval-ms 1000 2>/dev/null &
pids+=($!)
serve_pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
# The body a Prometheus server sees in steady state: GPM's profiling series come from the
# second round on (docs/serve.md, "Profiling series").
for _ in $(seq 50); do curl -s "http://127.0.0.1:$port/metrics" | grep -q '^DCGM_FI_PROF_' && break; sleep 0.1; done
measure "gpuvet serve (8 fake GPUs)" "$serve_pid" "http://127.0.0.1:$port/metrics"

if command -v prometheus-node-exporter >/dev/null; then
  nport=$(free_port)
  prometheus-node-exporter --web.listen-address="127.0.0.1:$nport" >/dev/null 2>&1 &
  pids+=($!)
  node_pid=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$nport/metrics" >/dev/null && break; sleep 0.1; done
  measure "node_exporter $(prometheus-node-exporter --version 2>&1 | head -1 | awk '{print $3}')" "$node_pid" \
    "http://127.0.0.1:$nport/metrics"
else
  echo "prometheus-node-exporter is not installed: no reference point"
fi

#!/usr/bin/env bash
# gpuvet fleet on 10,000 generated node reports (docs/perf.md, "gpuvet fleet"):
#   perf/fleet_aggregate.sh [BUILDDIR] [NODES] [SHARE]
# Writes the fleet under a temporary directory (removed at the end): NODES 8-GPU check
# reports made from tests/golden/expected/dgx-h100.json, and a bench report (memory,
# compute, transfer, p2p on 8 fake GPUs, written here by the BUILDDIR's gpuvet on the fake
# CUDA driver) for 1 node in SHARE. Then, the files in the page cache:
#   1. the parsers, one thread, the files in memory (perf/fleet_parse_bench.c): jansson's
#      json_loadb, jsmn's tokenizer, fleet_doc_parse;
#   2. gpuvet fleet under /usr/bin/time -v, on every CPU and on one thread, check reports
#      only and with the bench reports, and with --html: wall time, peak RSS, files/s, MB/s;
#   3. that every thread count gives the same aggregate.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
nodes=${2:-10000}
share=${3:-10}
gpuvet=$build/gpuvet
[ -x "$gpuvet" ] || { echo "perf/fleet_aggregate.sh: no $gpuvet: build first" >&2; exit 2; }
# FLEET_PERF_DIR=DIR keeps the generated fleet there (and reuses it on the next run).
if [ -n "${FLEET_PERF_DIR:-}" ]; then
  tmp=$FLEET_PERF_DIR
  mkdir -p "$tmp"
else
  tmp=$(mktemp -d /tmp/gpuvet-fleet-perf.XXXXXX)
  trap 'rm -rf "$tmp"' EXIT
fi
if [ ! -d "$tmp/fleet" ]; then
  python3 tests/fixtures/mkfixture.py "$tmp/fx" dgx-h100 >/dev/null
  # bench exits 1: the fake's figures are below an H100's baselines; the report is what counts.
  GPUVET_CUDA_LIB=$build/tests/libcuda.so.1 FAKE_CUDA_DEVICES=8 "$gpuvet" bench memory,compute,transfer,p2p \
    --json "$tmp/bench.json" -q -n 3 -w 1 -s 4M --root "$tmp/fx/dgx-h100" >/dev/null || true
  python3 perf/fleet_gen.py "$tmp/fleet" "$nodes" tests/golden/expected/dgx-h100.json "$tmp/bench.json" "$share"
fi
python3 -c "import sys; sys.path.insert(0, \"perf\"); import machine; machine.print_header()"

cc -O2 -D_GNU_SOURCE -Isrc -I"$build" perf/fleet_parse_bench.c "$build/libgpuvet.a" -ljansson -lm -lpthread -ldl \
  -o "$tmp/parse_bench"
# sed, not head: head's early exit would kill the pipe under pipefail.
checks=$(find "$tmp/fleet" -name 'gpuvet-check-quick.json' | sort | sed -n 1,2000p)
benches=$(find "$tmp/fleet" -name 'gpuvet-bench.json' | sort | sed -n 1,200p)
echo "== parsers, one thread, 2000 check reports in memory"
# shellcheck disable=SC2086
"$tmp/parse_bench" $checks
echo "== parsers, one thread, 200 bench reports in memory"
# shellcheck disable=SC2086
"$tmp/parse_bench" $benches

mb_check=$(find "$tmp/fleet" -name 'gpuvet-check-quick.json' -printf '%s\n' | awk '{s+=$1} END {printf "%.1f", s/1e6}')
mb_all=$(find "$tmp/fleet" -name '*.json' -printf '%s\n' | awk '{s+=$1} END {printf "%.1f", s/1e6}')
n_check=$(find "$tmp/fleet" -name 'gpuvet-check-quick.json' | wc -l)
n_all=$(find "$tmp/fleet" -name '*.json' | wc -l)
if [ ! -d "$tmp/checks-only" ]; then
  mkdir "$tmp/checks-only"
  (cd "$tmp/fleet/validation_results" && find . -name 'gpuvet-check-quick.json' -print0 | xargs -0 cp --parents -t "$tmp/checks-only/")
fi
cat "$tmp"/fleet/validation_results/*/*.json >/dev/null # into the page cache
cat "$tmp"/checks-only/*/*.json >/dev/null

run() { # label files mb args...
  local label=$1 files=$2 mb=$3
  shift 3
  /usr/bin/time -v "$gpuvet" fleet "$@" --json "$tmp/out.json" >/dev/null 2>"$tmp/time.txt" || true
  local wall rss
  wall=$(grep 'Elapsed (wall clock)' "$tmp/time.txt" | awk '{print $NF}' | awk -F: '{ if (NF == 3) print $1*3600+$2*60+$3; else print $1*60+$2 }')
  rss=$(grep 'Maximum resident set size' "$tmp/time.txt" | awk '{print $NF}')
  printf '%-40s %6.2f s wall  %7.1f MiB peak RSS  %8.0f files/s  %7.1f MB/s  (user %s s, sys %s s)\n' "$label" "$wall" \
    "$(echo "$rss / 1024" | bc -l)" "$(echo "$files / $wall" | bc -l)" "$(echo "$mb / $wall" | bc -l)" \
    "$(grep 'User time' "$tmp/time.txt" | awk '{print $NF}')" "$(grep 'System time' "$tmp/time.txt" | awk '{print $NF}')"
}
echo "== gpuvet fleet ($n_check check reports, $mb_check MB; with bench: $n_all files, $mb_all MB)"
for i in 1 2 3; do
  run "check reports, all CPUs (run $i)" "$n_check" "$mb_check" "$tmp/checks-only"
done
run "check reports, --threads 1" "$n_check" "$mb_check" "$tmp/checks-only" --threads 1
for i in 1 2 3; do
  run "check + bench reports, all CPUs (run $i)" "$n_all" "$mb_all" "$tmp/fleet"
done
run "check + bench reports, --threads 1" "$n_all" "$mb_all" "$tmp/fleet" --threads 1
# --html keeps every figure's values for the charts and writes the page beside the JSON.
run "check + bench reports, --html too" "$n_all" "$mb_all" "$tmp/fleet" --html "$tmp/out.html"
echo "the page: $(stat -c %s "$tmp/out.html") bytes"

echo "== the same aggregate on 1, 2 and 8 threads"
# fleet exits 1 when some nodes fail (the generated fleet has failing nodes): not an error here.
for t in 1 2 8; do
  { "$gpuvet" fleet "$tmp/fleet" --threads $t --json - 2>/dev/null || [ $? -eq 1 ]; } | grep -v '"duration_ms"' | sha256sum
done | uniq -c

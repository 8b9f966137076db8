#!/usr/bin/env bash
# Run every GPU path of gpuvet on a machine with NVIDIA GPUs and write one report.
#
#   tools/gpu-run.sh [-b GPUVET] [-o OUTDIR] [-a ANCHOR_DIR] [-q]
#
# It runs: info, topo, detect; check --level quick (five times, timed), standard and full;
# bench all through CUDA and, when an NVIDIA OpenCL ICD is there, through OpenCL; bench nccl
# (every collective, then all_reduce to 8 GiB; needs libnccl.so.2 or $GPUVET_NCCL_LIB); query of
# every field compared cell by cell with nvidia-smi (tools/gpu_query_compare.py); snapshot
# and its replay; and the anchors found in ANCHOR_DIR (an nvbandwidth binary built outside
# the tree) plus our own PyTorch yardstick (perf/anchor_torch.py); burn in every mode, and
# stopped by SIGINT. -q runs a short subset (check, query, bench memory/transfer).
#
# OUTDIR gets one log per step, the JSON reports, summary.md (one row per step: exit code,
# seconds, verdict) and all.tar.gz of everything. No step can hang the script: each runs
# under `timeout`. The script never changes the GPU's settings (clocks, power, MIG, reset).
set -uo pipefail

gpuvet=build/gpuvet
out=gpu-run-out
anchors=
quick=0
while getopts "b:o:a:qh" opt; do
        case $opt in
        b) gpuvet=$OPTARG ;;
        o) out=$OPTARG ;;
        a) anchors=$OPTARG ;;
        q) quick=1 ;;
        *) sed -n '2,16p' "$0"; exit 2 ;;
        esac
done
here=$(cd "$(dirname "$0")/.." && pwd)
gpuvet=$(readlink -f "$gpuvet")
mkdir -p "$out" || exit 2
out=$(readlink -f "$out")
[ -x "$gpuvet" ] || { echo "gpu-run: $gpuvet is not an executable gpuvet" >&2; exit 2; }

summary=$out/summary.md
printf '# gpuvet GPU run, %s\n\nhost %s, %s\n\n| step | exit | seconds | result |\n|---|---|---|---|\n' \
        "$(date -u +%FT%TZ)" "$(hostname)" "$("$gpuvet" --version)" >"$summary"

# step NAME TIMEOUT CMD...: run CMD with its output in NAME.log, add a summary row.
step() {
        local name=$1 limit=$2
        shift 2
        local t0 t1 rc
        t0=$(date +%s%N)
        timeout -k 10 "$limit" "$@" >"$out/$name.log" 2>&1
        rc=$?
        t1=$(date +%s%N)
        local what
        what=$(grep -m1 -E '^Verdict:|^verdict|^query-compare:|^anchor' "$out/$name.log" | cut -c1-120)
        [ $rc -eq 124 ] && what="TIMED OUT after ${limit}s"
        local ms=$(((t1 - t0) / 1000000))
        printf '| %s | %d | %d.%03d | %s |\n' "$name" "$rc" $((ms / 1000)) $((ms % 1000)) "${what//|/\\|}" >>"$summary"
        echo "gpu-run: $name exit $rc"
        return 0
}

# cuBLASLt: the toolkit's, else the one a pip nvidia-cublas wheel brought.
if [ -z "${GPUVET_CUBLASLT_LIB:-}" ]; then
        for lib in /usr/local/cuda/lib64/libcublasLt.so.13 /usr/local/cuda/lib64/libcublasLt.so.12 \
                $(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__file__))' 2>/dev/null)/cu13/lib/libcublasLt.so.13 \
                $(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__file__))' 2>/dev/null)/cublas/lib/libcublasLt.so.12; do
                [ -e "$lib" ] && { export GPUVET_CUBLASLT_LIB=$lib; break; }
        done
fi
echo "cuBLASLt: ${GPUVET_CUBLASLT_LIB:-not found}" >>"$summary.env"

# The machine as NVIDIA's own tools see it, for comparison.
step nvidia-smi-q 60 nvidia-smi -q
step nvidia-smi-topo 60 nvidia-smi topo -m
step uname 5 uname -a

step version 10 "$gpuvet" --version
step info 60 "$gpuvet" info --json
step info-text 60 "$gpuvet" info
step topo 60 "$gpuvet" topo
step detect 60 "$gpuvet" detect --json
for i in 1 2 3 4 5; do
        step check-quick-$i 60 "$gpuvet" check --color never --json "$out/check-quick-$i.json"
done
step check-quick-verbose 60 "$gpuvet" check -v --color never
step query-compare 300 python3 "$here/tools/gpu_query_compare.py" --gpuvet "$gpuvet" --json "$out/query-compare.json"
# A loop ends on SIGTERM with exit 0: timeout's 124 is the expected end here.
step query-loop 3 "$gpuvet" query --query-gpu=timestamp,index,power.draw,clocks.sm,temperature.gpu,utilization.gpu \
        --format=csv -lms 200
step check-standard 180 "$gpuvet" check --level standard --color never --json "$out/check-standard.json"
step check-full 900 "$gpuvet" check --level full --burn-duration 2m --color never --json "$out/check-full.json"
if [ $quick -eq 1 ]; then
        step bench-memory 300 "$gpuvet" bench memory --backend cuda --json "$out/bench-memory.json"
        step bench-transfer 300 "$gpuvet" bench transfer --backend cuda --json "$out/bench-transfer.json"
else
        step bench-all-cuda 360 "$gpuvet" bench all --backend cuda --json "$out/bench-all-cuda.json"
        if [ -e /etc/OpenCL/vendors/nvidia.icd ] || [ -n "${OCL_ICD_VENDORS:-}" ]; then
                step bench-opencl 180 "$gpuvet" bench memory,compute,transfer --backend opencl \
                        --json "$out/bench-opencl.json"
        else
                echo "| bench-opencl | - | - | skipped: no NVIDIA OpenCL ICD registered |" >>"$summary"
        fi
        # NCCL over every GPU in one process (nccl-tests' -b 8 -e 1G -f 2), every collective;
        # then the seed's 8G sweep of all_reduce alone
        step bench-nccl 600 "$gpuvet" bench nccl -C all --json "$out/bench-nccl.json"
        step bench-nccl-8g 600 "$gpuvet" bench nccl -C all_reduce -e 8G --json "$out/bench-nccl-8g.json"
fi
# Every mode for 30 s each; then the SIGINT path on a real GPU (stop within a second,
# partial report written).
step burn 600 "$gpuvet" burn --duration 2m --mode all --no-progress --json "$out/burn.json"
step burn-fp16 300 "$gpuvet" burn --duration 30s --precision fp16 --no-progress --json "$out/burn-fp16.json"
step burn-sigint 60 timeout -s INT 15 "$gpuvet" burn --duration 5m --no-progress --json "$out/burn-sigint.json"
step snapshot 120 "$gpuvet" snapshot -o "$out/snapshot.tar"
if [ -s "$out/snapshot.tar" ]; then
        mkdir -p "$out/snaproot" && tar -xf "$out/snapshot.tar" -C "$out/snaproot"
        step snapshot-replay 60 "$gpuvet" check --no-nvml --color never --root "$out/snaproot" \
                --json "$out/check-replay.json"
        rm -rf "$out/snaproot"
fi

# Anchors, same machine, same run.
if [ -n "$anchors" ] && [ -x "$anchors/nvbandwidth" ]; then
        step anchor-nvbandwidth 240 "$anchors/nvbandwidth" -t host_to_device_memcpy_ce device_to_host_memcpy_ce \
                host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce device_local_copy
fi
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
        step anchor-torch 240 python3 "$here/perf/anchor_torch.py" --json "$out/anchor-torch.json"
fi

(cd "$out" && tar -czf all.tar.gz --exclude=all.tar.gz --exclude=snapshot.tar ./*)
cat "$summary"

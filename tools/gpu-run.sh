#!/usr/bin/env bash
# Run every GPU path of gpuvet on a machine with NVIDIA GPUs, in at most 8 minutes, and
# write one report.
#
#   tools/gpu-run.sh [-b GPUVET] [-o OUTDIR] [-a ANCHOR_DIR] [-B SECONDS] [-S SCALE] [-s]
#
#   -b GPUVET      the gpuvet to run (default build/gpuvet)
#   -o OUTDIR      where the report goes (default gpu-run-out)
#   -a ANCHOR_DIR  holds an nvbandwidth binary built outside the tree
#   -B SECONDS     the whole run's budget (default 480: a lent GPU machine has 15 minutes
#                  of device time, its start-up included)
#   -S SCALE       multiply every step's limit and the budget by SCALE, a whole number
#                  (default 1): for the test suite's slow builds (sanitizers) and loaded
#                  machines, never on a lent GPU
#   -s             smoke: the same steps with the smallest sizes and durations (CI runs it
#                  against the fake NVML, libcuda, cuBLASLt and NCCL: tests/golden/test_gpu_run.py)
#
# The steps, most valuable first, each under its own `timeout` (the limits add up to less
# than the budget): nvidia-smi -q and topo; info, topo, detect; check quick (three times,
# timed) and standard; query of every field compared cell by cell with nvidia-smi
# (tools/gpu_query_compare.py); bench all through CUDA and its anchors (nvbandwidth from
# ANCHOR_DIR, PyTorch through perf/anchor_torch.py); check full with a short burn; burn in
# every mode, and stopped by SIGINT; bench train and bench nccl on the GPUs present; tune's
# GPU settings plan, apply, status, revert (revert runs whenever apply started); serve's GPM
# series beside `nvidia-smi dmon` (tools/gpu_gpm_compare.py); the container GPU test where
# a container runtime exists; bench through OpenCL where NVIDIA's ICD is registered;
# snapshot and its replay. A step that would end past the budget is skipped, and the
# summary says so.
#
# OUTDIR gets one log per step, the JSON reports, summary.md (one row per step: exit code,
# seconds, verdict) and all.tar.gz of everything. The only GPU settings changed are tune's,
# and its revert restores them before the next step.
set -uo pipefail

gpuvet=build/gpuvet
out=gpu-run-out
anchors=
budget=480
smoke=0
scale=1
while getopts "b:o:a:B:S:sh" opt; do
        case $opt in
        b) gpuvet=$OPTARG ;;
        o) out=$OPTARG ;;
        a) anchors=$OPTARG ;;
        B) budget=$OPTARG ;;
        S) scale=$OPTARG ;;
        s) smoke=1 ;;
        *) sed -n '2,30p' "$0"; exit 2 ;;
        esac
done
case $budget in '' | *[!0-9]*) echo "gpu-run: -B takes whole seconds, not $budget" >&2; exit 2 ;; esac
case $scale in '' | 0 | *[!0-9]*) echo "gpu-run: -S takes a whole number from 1, not $scale" >&2; exit 2 ;; esac
budget=$((budget * scale))
here=$(cd "$(dirname "$0")/.." && pwd)
gpuvet=$(readlink -f "$gpuvet")
mkdir -p "$out" || exit 2
out=$(readlink -f "$out")
[ -x "$gpuvet" ] || { echo "gpu-run: $gpuvet is not an executable gpuvet" >&2; exit 2; }

# The global deadline, less what packing the report takes.
started=$(date +%s)
deadline=$((started + budget - 5))

summary=$out/summary.md
printf '# gpuvet GPU run, %s\n\nhost %s, %s, budget %d s%s\n\n| step | exit | seconds | result |\n|---|---|---|---|\n' \
        "$(date -u +%FT%TZ)" "$(hostname)" "$("$gpuvet" --version | head -1)" "$budget" \
        "$([ $smoke -eq 1 ] && echo ', smoke sizes')" >"$summary"

skipped() {
        printf '| %s | - | - | skipped: %s |\n' "$1" "$2" >>"$summary"
        echo "gpu-run: $1 skipped: $2"
}

# step NAME TIMEOUT CMD...: run CMD with its output in NAME.log, add a summary row; skip it
# when less than TIMEOUT seconds of the budget are left. Returns 1 when skipped.
step() {
        local name=$1 limit=$(($2 * scale))
        shift 2
        local left=$((deadline - $(date +%s)))
        if [ "$left" -lt "$limit" ]; then
                skipped "$name" "global deadline (${left} s of the budget left, the step may take ${limit} s)"
                return 1
        fi
        local t0 t1 rc
        t0=$(date +%s%N)
        timeout -k 2 "$limit" "$@" >"$out/$name.log" 2>&1
        rc=$?
        t1=$(date +%s%N)
        local what
        what=$(grep -m1 -E '^Verdict:|^verdict|^query-compare:|^gpm-compare:|^anchor|^gpuvet tune' "$out/$name.log" |
                cut -c1-120)
        [ $rc -eq 124 ] && what="TIMED OUT after ${limit}s"
        local ms=$(((t1 - t0) / 1000000))
        printf '| %s | %d | %d.%03d | %s |\n' "$name" "$rc" $((ms / 1000)) $((ms % 1000)) "${what//|/\\|}" >>"$summary"
        echo "gpu-run: $name exit $rc"
        return 0
}

# cuBLASLt: the toolkit's, else the one a pip nvidia-cublas wheel brought.
if [ -z "${GPUVET_CUBLASLT_LIB:-}" ]; then
        wheels=$(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__file__))' 2>/dev/null)
        for lib in /usr/local/cuda/lib64/libcublasLt.so.13 /usr/local/cuda/lib64/libcublasLt.so.12 \
                "$wheels/cu13/lib/libcublasLt.so.13" "$wheels/cublas/lib/libcublasLt.so.12"; do
                [ -e "$lib" ] && { export GPUVET_CUBLASLT_LIB=$lib; break; }
        done
fi
# NCCL: the loader's, else the one a pip nvidia-nccl wheel brought (PyTorch's images).
if [ -z "${GPUVET_NCCL_LIB:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2 '; then
        wheels=$(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__file__))' 2>/dev/null)
        [ -n "$wheels" ] && [ -e "$wheels/nccl/lib/libnccl.so.2" ] && export GPUVET_NCCL_LIB=$wheels/nccl/lib/libnccl.so.2
fi
{
        uname -a
        echo "cuBLASLt: ${GPUVET_CUBLASLT_LIB:-not found}"
        echo "NCCL: ${GPUVET_NCCL_LIB:-libnccl.so.2 as the loader finds it}"
        echo "nproc: $(nproc), load: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/environment.txt"

# The GPUs present, as the device list for bench train and nccl ("0-7").
ngpus=$(timeout 10 "$gpuvet" query --query-gpu=index --format=csv,noheader 2>/dev/null | grep -c '^[0-9]')
gpus=0-$((ngpus > 0 ? ngpus - 1 : 0))

# Sizes and durations: a real run's, or the smallest that still runs every path (-s).
# Smoke leaves check full's device.benchmarks out: it is bench all again, at full size (its
# host-memory pass alone takes minutes on a loaded 2-core CI machine).
if [ $smoke -eq 1 ]; then
        burn_full=2s burn_all=4s burn_int=3 pulse=500ms
        full_only=(--only burn) memtest=(--memtest-size 16M)
        bench_sizes=(--size 1M --reps 2 --warmup 1)
        train=(--layers 2 --hidden 64 --heads 4 --seq 32 --micro-batch 2 --vocab 128 --steps 2 --warmup 1)
        nccl=(-e 64K -n 2 -w 1)
        serve_s=4
else
        burn_full=15s burn_all=28s burn_int=5 pulse=2s
        full_only=() memtest=()
        bench_sizes=()
        train=(--model megatron-1.2b --steps 5 --warmup 1)
        nccl=(-e 64M -n 5 -w 2)
        serve_s=15
fi

# 1. What NVIDIA's own tools see, and the fast paths.
step nvidia-smi-q 10 nvidia-smi -q
step nvidia-smi-topo 5 nvidia-smi topo -m
step info 10 "$gpuvet" info --json
step topo 5 "$gpuvet" topo
step detect 5 "$gpuvet" detect --json
for i in 1 2 3; do
        step check-quick-$i 5 "$gpuvet" check --color never --json "$out/check-quick-$i.json"
done
step check-standard 15 "$gpuvet" check --level standard --color never --json "$out/check-standard.json"
step query-compare 25 python3 "$here/tools/gpu_query_compare.py" --gpuvet "$gpuvet" --json "$out/query-compare.json"
# The loop runs until SIGTERM, on which it exits 0.
step query-loop 5 timeout --preserve-status 3 "$gpuvet" query \
        --query-gpu=timestamp,index,power.draw,clocks.sm,temperature.gpu,utilization.gpu --format=csv -lms 200

# 2. bench against its anchors, same machine, same run.
step bench-all-cuda 60 "$gpuvet" bench all --backend cuda "${bench_sizes[@]}" --no-progress \
        --json "$out/bench-all-cuda.json"
if [ -n "$anchors" ] && [ -x "$anchors/nvbandwidth" ]; then
        step anchor-nvbandwidth 20 "$anchors/nvbandwidth" -t host_to_device_memcpy_ce device_to_host_memcpy_ce \
                host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce device_local_copy
else
        skipped anchor-nvbandwidth "no nvbandwidth in the anchor folder (-a)"
fi
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
        step anchor-torch 30 python3 "$here/perf/anchor_torch.py" --json "$out/anchor-torch.json"
else
        skipped anchor-torch "no PyTorch that sees a CUDA device"
fi

# 3. The stress test, in check and alone: every mode, then the SIGINT path (stops within a
# second with a partial report; burn exits 1 for an interrupted run).
step check-full 70 "$gpuvet" check --level full "${full_only[@]}" --burn-duration "$burn_full" --color never \
        --json "$out/check-full.json"
step burn 40 "$gpuvet" burn --duration "$burn_all" --mode all --pulse-period "$pulse" "${memtest[@]}" --no-progress \
        --json "$out/burn.json"
step burn-sigint 10 timeout --preserve-status -s INT "$burn_int" "$gpuvet" burn --duration 5m --no-progress \
        --json "$out/burn-sigint.json"

# 4. Training proxy and collectives on every GPU present (one GPU: NCCL's single rank).
step bench-train 25 "$gpuvet" bench train "${train[@]}" --gpus "$gpus" --no-progress --json "$out/bench-train.json"
step bench-nccl 20 "$gpuvet" bench nccl -C all "${nccl[@]}" --gpus "$gpus" --json "$out/bench-nccl.json"

# 5. tune's GPU settings: persistence on, the lowest power limit and the highest application
# clocks, so that apply changes something on any GPU; the snapshot lives in OUTDIR. Revert
# runs whenever apply started, even killed half-way, and gets its time reserved.
tune=(--profile none --no-policy --set gpu.persistence=on --set gpu.power_limit=min --set gpu.app_clocks=max
        --state "$out/tune-state.json")
step tune-plan 5 "$gpuvet" tune plan "${tune[@]}" --json "$out/tune-plan.json"
deadline=$((deadline - 10))
if step tune-apply 10 "$gpuvet" tune apply "${tune[@]}" --no-progress; then
        step tune-status 5 "$gpuvet" tune status "${tune[@]}" --json "$out/tune-status.json"
        deadline=$((deadline + 10))
        step tune-revert 10 "$gpuvet" tune revert "${tune[@]}"
else
        deadline=$((deadline + 10))
fi

# 6. serve's GPM series beside nvidia-smi dmon, on a loopback port.
step serve-gpm 25 python3 "$here/tools/gpu_gpm_compare.py" --gpuvet "$gpuvet" --seconds "$serve_s" \
        --out "$out" --json "$out/serve-gpm.json"

# 7. The container GPU test, where a runtime exists (it never pulls an image).
if [ -n "${GPUVET_CONTAINER_RUNTIME:-}" ] || command -v docker >/dev/null || command -v podman >/dev/null; then
        step container-gpu 15 "$gpuvet" check --level standard --only container.gpu_access --container-timeout 10s \
                --color never --json "$out/container-gpu.json"
else
        skipped container-gpu "no container runtime (docker, podman or \$GPUVET_CONTAINER_RUNTIME)"
fi

# 8. OpenCL through NVIDIA's ICD, then the snapshot and its replay.
if [ -e /etc/OpenCL/vendors/nvidia.icd ] || [ -n "${OCL_ICD_VENDORS:-}" ]; then
        step bench-opencl 15 "$gpuvet" bench memory,compute,transfer --backend opencl "${bench_sizes[@]}" \
                --no-progress --json "$out/bench-opencl.json"
else
        skipped bench-opencl "no NVIDIA OpenCL ICD registered"
fi
if step snapshot 15 "$gpuvet" snapshot -o "$out/snapshot.tar" && [ -s "$out/snapshot.tar" ]; then
        mkdir -p "$out/snaproot" && tar -xf "$out/snapshot.tar" -C "$out/snaproot"
        step snapshot-replay 5 "$gpuvet" check --no-nvml --color never --root "$out/snaproot" \
                --json "$out/check-replay.json"
        rm -rf "$out/snaproot"
fi

printf '\nwhole run: %d s of a %d s budget\n' $(($(date +%s) - started)) "$budget" >>"$summary"
(cd "$out" && tar -czf all.tar.gz --exclude=all.tar.gz --exclude=snapshot.tar ./*)
cat "$summary"

#!/usr/bin/env bash
# Set up, build and run every test suite: a gcc build (every suite), a clang build (unit,
# fuzz replays, nvml), an ASan+UBSan build (every suite) and a libFuzzer build (each target
# fuzzed briefly). Ends with one line "tests: N passed, N failed, N skipped".
set -euo pipefail
cd "$(dirname "$0")/.."

tools/bootstrap.sh

# The official nvml.h for the NVML ABI test (tests/abi): PyPI's nvidia-nvml-dev, pinned to
# the release src/bindings/nvml_api.h was last checked against, installed once beside the
# build directories. Without it (no network, no pip) the nvml_abi test reports SKIP.
nvml_dev_version=13.5.37
nvml_dev_dir=build-deps/nvidia-nvml-dev-$nvml_dev_version
if [ ! -f "$nvml_dev_dir/.complete" ]; then
  rm -rf "$nvml_dev_dir"
  if PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$nvml_dev_dir" \
      "nvidia-nvml-dev==$nvml_dev_version"; then
    touch "$nvml_dev_dir/.complete"
  else
    echo "warning: could not pip install nvidia-nvml-dev; the nvml_abi test will be skipped" >&2
  fi
fi
nvml_h=$(find "$nvml_dev_dir" -path '*/include/nvml.h' 2>/dev/null | head -n 1 || true)
nvml_include_dir=${nvml_h:+$PWD/$(dirname "$nvml_h")}

# The official nccl.h for the NCCL ABI test: the CUDA toolkit's when it has one (13.0 ships
# NCCL 2.28.9), else PyPI's nvidia-nccl-cu13 of the release src/bindings/nccl_api.h was checked
# against (nccl.h still needs the toolkit's cuda_runtime.h). Without either, nccl_abi SKIPs.
nccl_include_dir=
if [ ! -f /usr/local/cuda/include/nccl.h ]; then
  nccl_version=2.28.9
  nccl_dir=build-deps/nvidia-nccl-cu13-$nccl_version
  if [ ! -f "$nccl_dir/.complete" ]; then
    rm -rf "$nccl_dir"
    if PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$nccl_dir" \
        "nvidia-nccl-cu13==$nccl_version"; then
      touch "$nccl_dir/.complete"
    else
      echo "warning: could not pip install nvidia-nccl-cu13; the nccl_abi test will be skipped" >&2
    fi
  fi
  if [ -f "$nccl_dir/nvidia/nccl/include/nccl.h" ]; then
    nccl_include_dir=$PWD/$nccl_dir/nvidia/nccl/include
    # nccl_loader resolves every symbol in this real library too
    export GPUVET_TEST_NCCL_REAL=$PWD/$nccl_dir/nvidia/nccl/lib/libnccl.so.2
  fi
fi

# ansible-core and ansible-lint for tests/deploy (the playbooks run for real), and
# kubernetes-validate for tests/deploy/test_k8s.py (deploy/k8s against Kubernetes' schemas),
# pinned, in a virtual environment beside the build directories; on PATH for the suites
# below. The marker names the pins, so changing one rebuilds the environment.
ansible_venv=build-deps/ansible-venv
venv_pins=("ansible-core==2.19.14" "ansible-lint==26.10.1" "kubernetes-validate==1.37.0")
if [ "$(cat "$ansible_venv/.complete" 2>/dev/null)" != "${venv_pins[*]}" ]; then
  rm -rf "$ansible_venv"
  if python3 -m venv "$ansible_venv" && "$ansible_venv/bin/pip" install --quiet --disable-pip-version-check \
      "${venv_pins[@]}"; then
    echo "${venv_pins[*]}" > "$ansible_venv/.complete"
  else
    echo "warning: could not install ansible-core and kubernetes-validate; the deploy tests will be skipped" >&2
  fi
fi
export PATH="$PWD/$ansible_venv/bin:$PATH"

# The tests' own wall-clock bounds and deadlines scale with GPUVET_TEST_TIME_SCALE
# (docs/testing.md), and so do meson's per-test timeouts. 2 by default, since CI machines
# are shared; a more heavily loaded one sets more.
scale=${GPUVET_TEST_TIME_SCALE:-2}
export GPUVET_TEST_TIME_SCALE=$scale
case $scale in ''|*[!0-9.]*) echo "GPUVET_TEST_TIME_SCALE must be a number, not \"$scale\"" >&2; exit 2 ;; esac
timeout_multiplier() { python3 -c "import math,sys; print(max(1, math.ceil(float(sys.argv[1]) * float(sys.argv[2]))))" "$scale" "$1"; }

# The fixture machines, written once for every build below (tests/fixtures/fixture_cache.py);
# checked at the end to be as they were written.
export GPUVET_FIXTURE_CACHE=$PWD/build-deps/fixture-cache

results=()
run_suite() {
  local dir=$1; shift
  echo "== $dir: meson setup $*"
  if [ -d "$dir" ]; then
    meson setup --reconfigure "$dir" "$@" >/dev/null
  else
    meson setup "$dir" "$@" >/dev/null
  fi
  ninja -C "$dir"
  # Keep going on failures: the summary below counts them.
  local mult=1
  [ "$dir" = build-sanitize ] && mult=2
  local only=()
  for suite in ${SUITES:-}; do only+=(--suite "$suite"); done
  for suite in ${NO_SUITES:-}; do only+=(--no-suite "$suite"); done
  meson test -C "$dir" "${only[@]}" --print-errorlogs --num-processes 2 \
    --timeout-multiplier "$(timeout_multiplier $mult)" || true
  results+=("$dir/meson-logs/testlog.json")
}

run_suite build -Dnvml_include_dir="$nvml_include_dir" -Dnccl_include_dir="$nccl_include_dir"
# The second compiler builds everything warning-free (-Werror) and runs the suites that
# test code paths directly (unit, fuzz corpora, the fake NVML's own tests); the golden
# suites drive the gpuvet binary, which the gcc and the ASan+UBSan builds already run.
CC=clang SUITES="unit fuzz nvml" run_suite build-clang -Dnvml_include_dir="$nvml_include_dir" -Dnccl_include_dir="$nccl_include_dir"
# The deploy suite drives Ansible; the gpuvet paths it calls run under the golden suites.
# -O1, as AddressSanitizer's documentation advises: at -O0 the golden suites' host-side
# verification ran about 1.6x longer, for no finding -O1 hides.
NO_SUITES="deploy" run_suite build-sanitize -Db_sanitize=address,undefined -Db_lundef=false -Ddebug=true -Doptimization=1 \
  -Dnvml_include_dir="$nvml_include_dir" -Dnccl_include_dir="$nccl_include_dir"

# libFuzzer: each target fuzzed for a short bounded time from its corpus (the corpora are
# also replayed by every suite above as fuzz_* tests). Only the fuzz targets are built.
echo "== build-fuzz: meson setup -Dfuzzing=true (clang, ASan+UBSan)"
fuzz_args=(-Dfuzzing=true -Db_lundef=false -Dfuzz_seconds="${GPUVET_FUZZ_SECONDS:-10}")
if [ -d build-fuzz ]; then
  CC=clang meson setup --reconfigure build-fuzz "${fuzz_args[@]}" >/dev/null
else
  CC=clang meson setup build-fuzz "${fuzz_args[@]}" >/dev/null
fi
ninja -C build-fuzz $(ls tests/fuzz/corpus | sed 's|^|tests/fuzz_|')
meson test -C build-fuzz --suite fuzzrun --no-rebuild --print-errorlogs --num-processes 2 || true
results+=("build-fuzz/meson-logs/testlog.json")

# The release artefacts: the dist tarball, the .deb and the RPM built as users get them,
# then checked (tests/package/test_packages.py), and an installed gpuvet reading its data.
echo "== packages: tools/build-packages.sh build-packages/out"
version=$(meson introspect --projectinfo build | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
rm -rf build-packages && mkdir -p build-packages
package_result=FAIL
if tools/build-packages.sh build-packages/out build && python3 tests/package/test_packages.py build-packages/out "$version"; then
  package_result=OK
fi
echo "{\"name\": \"packages\", \"result\": \"$package_result\"}" > build-packages/testlog.json
# validate_gpu.yml over SSH against two hosts (network namespaces with their own sshd),
# each with gpuvet from the .deb just built.
ssh_result=FAIL
deb=$(ls build-packages/out/gpuvet_*.deb 2>/dev/null | head -n 1 || true)
if [ -n "$deb" ]; then
  set +e
  python3 tests/deploy/test_ansible_ssh.py "$deb"
  rc=$?
  set -e
  case $rc in 0) ssh_result=OK ;; 77) ssh_result=SKIP ;; esac
fi
echo "{\"name\": \"deploy_ansible_ssh\", \"result\": \"$ssh_result\"}" >> build-packages/testlog.json
results+=("build-packages/testlog.json")

# No test may have written into the shared fixture trees.
cache_result=FAIL
python3 tests/fixtures/fixture_cache.py verify && cache_result=OK
echo "{\"name\": \"fixture_cache_untouched\", \"result\": \"$cache_result\"}" > build-deps/fixture-cache/testlog.json
results+=("build-deps/fixture-cache/testlog.json")

python3 - "${results[@]}" <<'PY'
import json, sys
passed = failed = skipped = 0
for path in sys.argv[1:]:
    with open(path) as f:
        for line in f:
            r = json.loads(line)["result"]
            if r in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif r == "SKIP":
                skipped += 1
            else:
                failed += 1
                print("FAILED:", path.split("/")[0], json.loads(line)["name"], r)
print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
PY

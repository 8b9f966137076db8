#!/usr/bin/env bash
# Set up, build and run every test suite: a gcc build, a clang build, and an
# ASan+UBSan build. Ends with one line "tests: N passed, N failed, N skipped".
set -euo pipefail
cd "$(dirname "$0")/.."

tools/bootstrap.sh

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
  meson test -C "$dir" --print-errorlogs --num-processes 2 || true
  results+=("$dir/meson-logs/testlog.json")
}

run_suite build
CC=clang run_suite build-clang
run_suite build-sanitize -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug

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

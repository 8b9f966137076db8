#!/usr/bin/env bash
# Fuzz one target for SECONDS and merge what it learned into its corpus:
#   tools/fuzz.sh TARGET SECONDS      (TARGET: a folder of tests/fuzz/corpus)
#   tools/fuzz.sh all SECONDS         (each target in turn)
#   tools/fuzz.sh pending SECONDS     (each target whose corpus has seen under 10 M executions)
#   tools/fuzz.sh ledger              (the executions each target has seen, over every run)
# Builds the libFuzzer targets into build-fuzz/ (clang, ASan+UBSan) on first use. New inputs
# that add coverage land in tests/fuzz/corpus/TARGET/ (libFuzzer -merge=1); commit them.
# Every run adds a row to tests/fuzz/ledger.tsv (commit it with the corpus).
# A crash stops with exit 1 and leaves the input under build-fuzz/fuzz-work/TARGET/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$*" = ledger ]; then
  exec python3 tests/fuzz/ledger.py tests/fuzz/ledger.tsv tests/fuzz/corpus
fi
if [ $# -ne 2 ] || ! [[ $2 =~ ^[0-9]+$ ]] || [ "$2" -lt 1 ]; then
  echo "usage: tools/fuzz.sh TARGET|all|pending SECONDS, or tools/fuzz.sh ledger" >&2
  exit 2
fi
targets=$1
if [ "$targets" = all ]; then
  targets=$(ls tests/fuzz/corpus)
elif [ "$targets" = pending ]; then
  targets=$(python3 tests/fuzz/ledger.py tests/fuzz/ledger.tsv tests/fuzz/corpus --pending)
fi
for t in $targets; do
  if [ ! -d "tests/fuzz/corpus/$t" ] || [ ! -f "tests/fuzz/fuzz_$t.c" ]; then
    echo "tools/fuzz.sh: no fuzz target \"$t\" (have: $(ls tests/fuzz/corpus | tr '\n' ' '))" >&2
    exit 2
  fi
done
tools/bootstrap.sh
if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang meson setup build-fuzz -Dfuzzing=true -Db_lundef=false >/dev/null
fi
for t in $targets; do
  ninja -C build-fuzz "tests/fuzz_$t" >/dev/null
  python3 tests/fuzz/run_fuzz.py "build-fuzz/tests/fuzz_$t" "tests/fuzz/corpus/$t" "$2" \
    "build-fuzz/fuzz-work/$t" --merge --ledger tests/fuzz/ledger.tsv
done

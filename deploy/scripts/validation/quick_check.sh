#!/usr/bin/env bash
# The seed's quick GPU check, now `gpuvet check --level quick`: one verdict for the node and
# a remedy per problem, under a second.
#
#   quick_check.sh [OUT.json] [gpuvet check options...]
#   (a first argument that starts with "-" is an option: the report then goes to the default)
#
# OUT.json receives the JSON report (docs/report-schema.md). Without it the report is
# gpu_check.json in a directory no other user can write (the seed's /tmp/gpu_check.json
# let any local user put a FIFO or a symlink there first): $GPUVET_REPORT_DIR when set,
# /var/lib/gpuvet for root, $XDG_RUNTIME_DIR/gpuvet, else a new `mktemp -d` directory;
# the path is printed on stderr. Exit status is gpuvet's: 0 pass (warnings allowed), 1 a
# check failed, 2 bad input, 3 an internal error. $GPUVET names the gpuvet to run (default:
# the one in PATH).
set -euo pipefail
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  out=$1
  shift
else
  # Not a fixed name in /tmp: any local user could put a FIFO or a symlink there first.
  if [ -n "${GPUVET_REPORT_DIR:-}" ]; then
    dir=$GPUVET_REPORT_DIR
  elif [ "$(id -u)" = 0 ]; then
    dir=/var/lib/gpuvet
  elif [ -n "${XDG_RUNTIME_DIR:-}" ] && [ -d "$XDG_RUNTIME_DIR" ] && [ -O "$XDG_RUNTIME_DIR" ]; then
    dir=$XDG_RUNTIME_DIR/gpuvet
  else
    dir=$(mktemp -d "${TMPDIR:-/tmp}/gpuvet.XXXXXXXX")
  fi
  mkdir -p -m 0755 "$dir"
  out=$dir/gpu_check.json
  echo "${0##*/}: the report goes to $out" >&2
fi
exec "${GPUVET:-gpuvet}" check --level quick --json "$out" "$@"

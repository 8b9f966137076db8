#!/usr/bin/env bash
# The seed's full system validation, now `gpuvet check --level standard`: every quick check
# plus the device probes on each GPU (a verified kernel, host-device copies, memory
# bandwidth, peer copies, the PCIe link under load); under a minute on 8 GPUs.
#
#   system_check.sh [OUT.json] [gpuvet check options...]
#   (a first argument that starts with "-" is an option: the report then goes to the default)
#
# OUT.json receives the JSON report. Without it the report is
# system_check.json in a directory no other user can write (the seed's /tmp/system_check.json
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
  out=$dir/system_check.json
  echo "${0##*/}: the report goes to $out" >&2
fi
exec "${GPUVET:-gpuvet}" check --level standard --json "$out" "$@"

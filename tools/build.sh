#!/usr/bin/env bash
# Install build dependencies (Debian/Ubuntu) and build gpuvet into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/bootstrap.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null

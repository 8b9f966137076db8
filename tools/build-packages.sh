#!/usr/bin/env bash
# Build gpuvet's release artefacts into OUTDIR: the `meson dist` tarball, the Debian
# package (dpkg-buildpackage from the unpacked tarball, as a distribution builds it) and
# the RPM (rpmbuild from the same tarball with packaging/rpm/gpuvet.spec).
#
#   tools/build-packages.sh OUTDIR [BUILDDIR]
#
# BUILDDIR: a configured build directory of this git checkout (default build). The RPM is
# built with --nodeps where the host is not an RPM distribution (its build dependencies
# are Debian packages there, unknown to rpm).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/build-packages.sh OUTDIR [BUILDDIR]}
build=${2:-build}
mkdir -p "$out"
out=$(cd "$out" && pwd)
[ -d "$build" ] || meson setup "$build" >/dev/null

version=$(meson introspect --projectinfo "$build" | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
echo "== dist: gpuvet-$version.tar.xz"
meson dist -C "$build" --no-tests --formats xztar --allow-dirty >/dev/null
tarball=$build/meson-dist/gpuvet-$version.tar.xz
cp "$tarball" "$out/"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The two package builds are independent: run them side by side.
build_deb() {
  mkdir -p "$work/deb"
  tar -xf "$tarball" -C "$work/deb"
  (cd "$work/deb/gpuvet-$version" && dpkg-buildpackage -b -us -uc >"$work/deb.log" 2>&1) || {
    tail -40 "$work/deb.log" >&2; echo "build-packages: dpkg-buildpackage failed" >&2; return 1; }
  cp "$work"/deb/gpuvet_"$version"_*.deb "$out/"
}
build_rpm() {
  mkdir -p "$work/rpm/SOURCES"
  cp "$tarball" "$work/rpm/SOURCES/"
  local nodeps=()
  command -v dnf >/dev/null 2>&1 || command -v yum >/dev/null 2>&1 || nodeps=(--nodeps)
  rpmbuild -bb "${nodeps[@]}" --define "_topdir $work/rpm" packaging/rpm/gpuvet.spec >"$work/rpm.log" 2>&1 || {
    tail -40 "$work/rpm.log" >&2; echo "build-packages: rpmbuild failed" >&2; return 1; }
  find "$work/rpm/RPMS" -name '*.rpm' -exec cp {} "$out/" \;
}
echo "== deb: dpkg-buildpackage -b, rpm: rpmbuild -bb"
build_deb & deb_pid=$!
build_rpm & rpm_pid=$!
failed=0
wait "$deb_pid" || failed=1
wait "$rpm_pid" || failed=1
[ "$failed" = 0 ] || exit 1
ls -1 "$out"

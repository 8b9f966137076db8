#!/usr/bin/env python3
"""Build gpuvet in a clean Debian 12 root from README's "Building by hand" list alone, so
that the list cannot miss a build dependency again. Opt-in (downloads ~150 MB and compiles
everything: minutes on a busy machine):

    GPUVET_CLEAN_ROOT_BUILD=1 test_clean_root_build.py SOURCE_ROOT WORKDIR

debootstrap --variant=minbase bookworm into WORKDIR/root (kept and reused by later runs
when it exists), the packages README names (the first `...` list of the section) installed
with apt-get --no-install-recommends, the committed sources (git archive HEAD) configured
with -Dtests=disabled and built; the binary must run (`gpuvet --version`, `check --list`).
$GPUVET_DEBIAN_MIRROR names the mirror (default http://deb.debian.org/debian).
Skips (exit 77) unless opted in, without root, debootstrap or git. Exit 0 when all hold."""
import os
import re
import shutil
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402


def readme_build_packages(root):
    with open(os.path.join(root, "README.md")) as f:
        readme = f.read()
    section = re.search(r"^## Building by hand\n(.*?)(?=^## |\Z)", readme, re.M | re.S).group(1)
    # The first code span of the section is the build dependency list.
    return re.search(r"`([^`]+)`", section).group(1).split()


def in_root(rootfs, script, **kw):
    """Run a shell script in the root, /proc and /dev from the host in a private mount
    namespace (nothing stays mounted after)."""
    wrapper = ('mount -t proc proc "$0/proc" && mount --rbind /dev "$0/dev" && '
               'cp /etc/resolv.conf "$0/etc/resolv.conf" && exec chroot "$0" /bin/sh -ec "$1"')
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "--fork", "sh", "-c", wrapper,
                           rootfs, script], capture_output=True, text=True, **kw)


def main():
    source, workdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if os.environ.get("GPUVET_CLEAN_ROOT_BUILD") != "1":
        print("SKIP: opt-in (GPUVET_CLEAN_ROOT_BUILD=1): downloads a Debian root and builds gpuvet in it")
        return 77
    if os.geteuid() != 0 or not shutil.which("debootstrap") or not shutil.which("git"):
        print("SKIP: needs root, debootstrap and git")
        return 77
    packages = readme_build_packages(source)
    check("meson" in packages and "libjansson-dev" in packages, "README's build list read: %s" % " ".join(packages))
    os.makedirs(workdir, exist_ok=True)
    rootfs = os.path.join(workdir, "root")
    mirror = os.environ.get("GPUVET_DEBIAN_MIRROR", "http://deb.debian.org/debian")
    if not os.path.exists(os.path.join(rootfs, "usr", "bin", "apt-get")):
        shutil.rmtree(rootfs, ignore_errors=True)
        p = subprocess.run(["debootstrap", "--variant=minbase", "bookworm", rootfs, mirror],
                           capture_output=True, text=True)
        if not check(p.returncode == 0, "debootstrap bookworm from %s" % mirror):
            print(p.stdout[-3000:], p.stderr[-3000:])
            return finish()
    p = in_root(rootfs, "export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && "
                "apt-get install -y -qq --no-install-recommends %s >/dev/null" % " ".join(packages))
    if not check(p.returncode == 0, "apt-get install README's list in the clean root"):
        print(p.stdout[-3000:], p.stderr[-3000:])
        return finish()
    src = os.path.join(rootfs, "src")
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(src)
    archive = subprocess.run(["git", "-C", source, "archive", "--format=tar", "HEAD"], capture_output=True)
    subprocess.run(["tar", "-x", "-C", src], input=archive.stdout, check=True)
    p = in_root(rootfs, "cd /src && meson setup build -Dtests=disabled >/tmp/setup.log 2>&1 || "
                "{ tail -30 /tmp/setup.log; exit 1; }; ninja -C build >/tmp/build.log 2>&1 || "
                "{ tail -30 /tmp/build.log; exit 1; }; build/gpuvet --version && build/gpuvet check --list >/dev/null")
    check(p.returncode == 0 and p.stdout.startswith("gpuvet "),
          "meson setup, ninja and the binary in the clean root: %s" % (p.stdout[-2000:] + p.stderr[-2000:]))
    return finish()


if __name__ == "__main__":
    sys.exit(main())

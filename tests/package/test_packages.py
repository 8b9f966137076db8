#!/usr/bin/env python3
"""The release artefacts tools/build-packages.sh made, checked as a user meets them, and an
installed gpuvet finding its data files.

    test_packages.py OUTDIR VERSION

OUTDIR holds gpuvet-VERSION.tar.xz, gpuvet_VERSION_<arch>.deb and gpuvet-VERSION-*.rpm.
Checks: the tarball unpacks to gpuvet-VERSION/ with the sources, data, debian/ and the RPM
spec; the .deb's control fields (version, the run-time libraries gpuvet dlopens among its
Depends) and files (/usr/bin/gpuvet, the tables in /usr/share/gpuvet, the systemd units in
/usr/lib/systemd/system, /etc/default/gpuvet-serve as a conffile), its binary runs and
reports VERSION; the RPM's version, files (the units too, /etc/default/gpuvet-serve as
%config) and requirements; and `meson install` into a prefix gives a gpuvet that reads
the installed tables (an edit to the installed gpus.json shows in `detect --list-gpus`,
`--version` names the directory) while a copy of the same binary elsewhere keeps its
built-in tables, and the units under PREFIX/lib/systemd/system. Exit 0 when all hold, 1 otherwise."""
import glob
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UNITS = ["gpuvet-serve.service", "gpuvet-check.service", "gpuvet-check.timer"]
# What the packages and `meson install` put beside the binary: the seed's shortcuts and
# scripts (with the Ansible tree install_gpu_driver.sh runs), the Slurm scripts, the docs.
EXTRAS = ["bin/numa-gpu-info", "bin/gpu-benchmark", "sbin/gpuvet-healthcheck",
          "share/gpuvet/scripts/validation/quick_check.sh", "share/gpuvet/scripts/validation/system_check.sh",
          "share/gpuvet/scripts/install/install_gpu_driver.sh",
          "share/gpuvet/ansible/playbooks/setup_gpu_baseline.yml", "share/gpuvet/ansible/inventory/local.yml",
          "share/gpuvet/slurm/prolog.d/50-gpuvet-check", "share/gpuvet/slurm/epilog.d/50-gpuvet-check",
          "share/doc/gpuvet/README.md", "share/doc/gpuvet/docs/checks.md",
          "share/doc/gpuvet/docs/slurm.md", "share/doc/gpuvet/deploy.md", "share/doc/gpuvet/slurm-scripts.md",
          "share/gpuvet/grafana/gpuvet-dashboard.json", "share/gpuvet/prometheus/gpuvet-alerts.yml",
          "share/gpuvet/schema/common.schema.json", "share/gpuvet/schema/report-1.schema.json",
          "share/doc/gpuvet/examples/policy.yaml",
          "share/bash-completion/completions/gpuvet", "share/zsh/vendor-completions/_gpuvet"]
# A few of the man pages generated from the option tables (the packages gzip them).
MAN_PAGES = ["share/man/man1/gpuvet.1", "share/man/man1/gpuvet-check.1", "share/man/man1/gpuvet-bench-nccl.1"]
# gpuvet-serve.service's EnvironmentFile: a configuration file the packages keep on upgrade.
SERVE_DEFAULTS = "etc/default/gpuvet-serve"
EXECUTABLES = [e for e in EXTRAS if e.startswith(("bin/", "sbin/")) or e.endswith(".sh") or "/slurm/" in e]
TABLES = ["baselines.json", "compat.json", "fleet_rules.json", "gpus.json", "models.json", "ngc.json", "nics.json",
          "tune-profiles.json", "xid.json"]


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def check_tarball(outdir, version):
    path = os.path.join(outdir, "gpuvet-%s.tar.xz" % version)
    if not check(os.path.exists(path), "dist tarball %s" % os.path.basename(path)):
        return
    with tarfile.open(path) as t:
        names = set(t.getnames())
    top = "gpuvet-%s/" % version
    check(all(n == top.rstrip("/") or n.startswith(top) for n in names), "tarball: everything under %s" % top)
    for want in ["meson.build", "src/main.c", "debian/control", "debian/rules", "packaging/rpm/gpuvet.spec",
                 "README.md"] + ["data/" + t for t in TABLES]:
        check(top + want in names, "tarball holds %s" % want)


def check_deb(outdir, version):
    debs = glob.glob(os.path.join(outdir, "gpuvet_%s_*.deb" % version))
    if not check(len(debs) == 1, "one .deb for %s: %s" % (version, debs)):
        return
    deb = debs[0]
    field = lambda f: run(["dpkg-deb", "-f", deb, f]).stdout.strip()  # noqa: E731
    check(field("Package") == "gpuvet" and field("Version") == version, "deb: package gpuvet, version %s" % version)
    depends = field("Depends")
    for lib in ("libc6", "libjansson4", "libyaml-0-2", "libarchive13", "libpci3", "libmicrohttpd12", "libcrypt1",
                "libnettle8", "libncursesw6"):
        check(lib in depends, "deb Depends names %s (%s)" % (lib, depends))
    files = run(["dpkg-deb", "-c", deb]).stdout
    for want in (["./usr/bin/gpuvet"] + ["./usr/share/gpuvet/" + t for t in TABLES]
                 + ["./usr/lib/systemd/system/" + u for u in UNITS] + ["./usr/" + e for e in EXTRAS]
                 + ["./usr/%s.gz" % m for m in MAN_PAGES] + ["./usr/share/doc/gpuvet/copyright"]):
        check((" " + want + "\n") in files or files.endswith(" " + want), "deb installs %s" % want[1:])
    check((" ./" + SERVE_DEFAULTS + "\n") in files, "deb installs /%s" % SERVE_DEFAULTS)
    conffiles = run(["dpkg-deb", "-I", deb, "conffiles"]).stdout.split()
    check("/" + SERVE_DEFAULTS in conffiles, "deb: /%s is a conffile (%s)" % (SERVE_DEFAULTS, conffiles))
    modes = {line.split()[-1]: line.split()[0] for line in files.splitlines() if line.strip()}
    for e in EXECUTABLES:
        check(modes.get("./usr/" + e, "").startswith("-rwxr-xr-x"), "deb: /usr/%s is executable" % e)
    with tempfile.TemporaryDirectory() as tmp:
        run(["dpkg-deb", "-x", deb, tmp], check=True)
        p = run([os.path.join(tmp, "usr", "bin", "gpuvet"), "--version"])
        check(p.returncode == 0 and p.stdout.startswith("gpuvet %s\n" % version),
              "the packaged binary runs: %r" % p.stdout)


def check_rpm(outdir, version):
    rpms = glob.glob(os.path.join(outdir, "gpuvet-%s-*.rpm" % version))
    if not check(len(rpms) == 1, "one .rpm for %s: %s" % (version, rpms)):
        return
    rpm = rpms[0]
    q = run(["rpm", "-qp", "--queryformat", "%{NAME} %{VERSION}", rpm]).stdout
    check(q == "gpuvet %s" % version, "rpm: gpuvet %s, got %r" % (version, q))
    files = run(["rpm", "-qpl", rpm]).stdout.split()
    for want in (["/usr/bin/gpuvet"] + ["/usr/share/gpuvet/" + t for t in TABLES]
                 + ["/usr/lib/systemd/system/" + u for u in UNITS] + ["/usr/" + e for e in EXTRAS]):
        check(want in files, "rpm installs %s" % want)
    # rpmbuild's brp-compress gzips man pages where the distribution's macros run it (Fedora),
    # not on every host rpm (Debian's): either form
    for m in MAN_PAGES:
        check(any("/usr/" + m + ext in files for ext in ("", ".gz", ".xz", ".bz2", ".zst")), "rpm installs /usr/%s" % m)
    configs = run(["rpm", "-qpc", rpm]).stdout.split()
    check("/" + SERVE_DEFAULTS in configs, "rpm: /%s is a %%config file (%s)" % (SERVE_DEFAULTS, configs))
    # %license: /usr/share/licenses/gpuvet on Fedora, gpuvet-VERSION where rpm's
    # _licensedir is versioned (Debian's rpm).
    check(any(re.fullmatch(r"/usr/share/licenses/gpuvet(-[0-9.]+)?/LICENSE", f) for f in files),
          "rpm installs LICENSE as %license")
    requires = run(["rpm", "-qpR", rpm]).stdout
    for lib in ("libjansson.so.4", "libyaml", "libarchive", "pciutils-libs", "libmicrohttpd", "libxcrypt", "nettle",
                "ncurses-libs"):
        check(lib in requires, "rpm requires %s" % lib)


def check_seed_wrappers(prefix):
    """The seed's shortcuts run the installed gpuvet (through PATH, as on a node)."""
    env = {"PATH": os.path.join(prefix, "bin") + ":/usr/bin:/bin"}
    p = run([os.path.join(prefix, "bin", "gpu-benchmark"), "--list"], env=env)
    check(p.returncode == 0 and "transfer" in p.stdout and "nccl" in p.stdout,
          "gpu-benchmark --list lists gpuvet bench's benchmarks: %r" % p.stdout[:200])
    p = run([os.path.join(prefix, "bin", "numa-gpu-info"), "--help"], env=env)
    check(p.returncode == 0 and "topo" in p.stdout, "numa-gpu-info --help is gpuvet topo's: %r" % p.stdout[:200])
    p = run([os.path.join(prefix, "share", "gpuvet", "scripts", "install", "install_gpu_driver.sh"), "--help"], env=env)
    check(p.returncode == 0 and "--method" in p.stdout, "the installed install_gpu_driver.sh finds its Ansible tree")


def check_installed_data():
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "prefix")
        build = os.path.join(tmp, "build")
        run(["meson", "setup", build, REPO, "--prefix", prefix, "-Dtests=disabled"], check=True)
        p = run(["meson", "install", "-C", build])
        if not check(p.returncode == 0, "meson install into %s: %s" % (prefix, p.stderr[-300:])):
            return
        gpuvet = os.path.join(prefix, "bin", "gpuvet")
        datadir = os.path.join(prefix, "share", "gpuvet")
        for t in TABLES:
            check(os.path.exists(os.path.join(datadir, t)), "installed %s" % t)
        for u in UNITS:
            check(os.path.exists(os.path.join(prefix, "lib", "systemd", "system", u)), "installed the unit %s" % u)
        for e in EXTRAS:
            path = os.path.join(prefix, e)
            check(os.path.exists(path) and (e not in EXECUTABLES or os.access(path, os.X_OK)), "installed %s" % e)
        for m in MAN_PAGES:
            check(os.path.exists(os.path.join(prefix, m)), "installed the man page %s" % m)
        check(os.path.exists(os.path.join(prefix, SERVE_DEFAULTS)),
              "installed %s (the prefix's sysconfdir)" % SERVE_DEFAULTS)
        check_seed_wrappers(prefix)
        p = run([gpuvet, "--version"], env={"PATH": "/usr/bin:/bin"})
        check("data: %s\n" % datadir in p.stdout, "the installed gpuvet names its data dir: %r" % p.stdout)
        # An edit to the installed table is what the installed binary reads.
        gpus = os.path.join(datadir, "gpus.json")
        with open(gpus) as f:
            text = f.read()
        marker = "NVIDIA H100 80GB HBM3 (installed table)"
        with open(gpus, "w") as f:
            f.write(text.replace('"NVIDIA H100 80GB HBM3"', '"%s"' % marker, 1))
        p = run([gpuvet, "detect", "--list-gpus"], env={"PATH": "/usr/bin:/bin"})
        check(marker in p.stdout, "detect --list-gpus reads the installed gpus.json")
        profiles = os.path.join(datadir, "tune-profiles.json")
        with open(profiles) as f:
            text = f.read()
        with open(profiles, "w") as f:
            f.write(text.replace('"vm.swappiness": "10"', '"vm.swappiness": "7"', 1))
        p = run([gpuvet, "tune", "profiles"], env={"PATH": "/usr/bin:/bin"})
        check("  vm.swappiness=7" in p.stdout, "tune profiles reads the installed tune-profiles.json")
        # The same binary anywhere else keeps the tables built into it.
        copy = os.path.join(tmp, "gpuvet-copy")
        shutil.copy(gpuvet, copy)
        p = run([copy, "--version"], env={"PATH": "/usr/bin:/bin"})
        check("data: built in" in p.stdout, "a copy elsewhere uses its built-in tables: %r" % p.stdout)
        p = run([copy, "detect", "--list-gpus"], env={"PATH": "/usr/bin:/bin"})
        check(marker not in p.stdout and "NVIDIA H100 80GB HBM3" in p.stdout, "... and lists the built-in names")
        # GPUVET_DATA_DIR still wins over the installed directory.
        p = run([gpuvet, "--version"], env={"PATH": "/usr/bin:/bin", "GPUVET_DATA_DIR": os.path.join(REPO, "data")})
        check("data: %s\n" % os.path.join(REPO, "data") in p.stdout, "$GPUVET_DATA_DIR overrides the installed dir")


def main():
    outdir, version = sys.argv[1:3]
    check_tarball(outdir, version)
    check_deb(outdir, version)
    check_rpm(outdir, version)
    check_installed_data()
    return finish()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""What a packager reads before building gpuvet, checked against the build itself, so that
neither can drift from the other:

    test_metadata.py SOURCE_ROOT

- licence: LICENSE exists, and meson.build's project(license), debian/copyright's Files: *
  paragraph and the RPM spec's License: name the same licence (MIT), with the same
  copyright holder as LICENSE and debian/copyright's licence text equal to LICENSE's.
- build dependencies: every dependency() and required header in meson.build maps (by the
  table below) to a Debian package, and each of those packages is named in README's
  "Building by hand", in debian/control's Build-Depends (the test-only ones excepted, the
  package builds with -Dtests=disabled) and in tools/bootstrap.sh.
A meson.build dependency missing from the table fails too: whoever adds one names its package.
- what the packages say and hold: debian/control's and the RPM spec's descriptions name every
  command of src/cmd/registry.c's table; meson installs deploy/systemd/gpuvet-serve.default as
  SYSCONFDIR/default/gpuvet-serve, the EnvironmentFile the serve unit reads (optional, "-")
  and whose $GPUVET_SERVE_ARGS ends its command, and the spec keeps it %config(noreplace);
  meson installs the example policy under the docs' examples/, and, with GPUVET given,
  `gpuvet policy validate` accepts it as shipped and with its settings uncommented.

    test_metadata.py SOURCE_ROOT [GPUVET]
Exit 0 when all hold, 1 otherwise."""
import os
import re
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402

LICENSE_ID = "MIT"
HOLDER = "the gpuvet authors"

# meson.build's dependency() names (and has_header() headers) -> Debian's -dev package.
# None: part of libc / the compiler, nothing to install.
DEBIAN_PACKAGE = {
    "jansson": "libjansson-dev",
    "yaml-0.1": "libyaml-dev",
    "libarchive": "libarchive-dev",
    "libpci": "libpci-dev",
    "libmicrohttpd": "libmicrohttpd-dev",
    "libcrypt": "libcrypt-dev",
    "nettle": "nettle-dev",
    "ncurses": "libncurses-dev",
    "cmocka": "libcmocka-dev",
    "jsmn.h": "libjsmn-dev",
    "threads": None,
    "dl": None,
}
# Needed only when the tests are built (get_option('tests')): not in the package's Build-Depends.
TEST_ONLY = {"cmocka"}
# The tools every build needs, whatever meson.build's dependencies are.
TOOLS = ["meson", "ninja-build", "gcc", "pkg-config", "python3"]


def read(root, path):
    with open(os.path.join(root, path)) as f:
        return f.read()


def check_licence(root):
    if not check(os.path.exists(os.path.join(root, "LICENSE")), "LICENSE exists"):
        return
    licence = read(root, "LICENSE")
    check(licence.startswith("MIT License\n"), "LICENSE is the MIT licence")
    holder = re.search(r"^Copyright \(c\) (\d{4}) (.+)$", licence, re.M)
    check(holder is not None and holder.group(2) == HOLDER, "LICENSE's copyright holder is %s" % HOLDER)

    meson = re.search(r"license\s*:\s*'([^']*)'", read(root, "meson.build"))
    check(meson is not None and meson.group(1) == LICENSE_ID,
          "meson.build project(license) is %s: %s" % (LICENSE_ID, meson and meson.group(1)))

    spec = re.search(r"^License:\s*(\S.*)$", read(root, "packaging/rpm/gpuvet.spec"), re.M)
    check(spec is not None and spec.group(1).strip() == LICENSE_ID,
          "the RPM spec's License: is %s: %s" % (LICENSE_ID, spec and spec.group(1)))
    check("%license LICENSE" in read(root, "packaging/rpm/gpuvet.spec"), "the RPM ships LICENSE as %license")

    # DEP-5: paragraphs separated by blank lines; the Files: * one names the licence, a
    # stand-alone License: paragraph carries its text (continuation lines, "." for blank).
    paragraphs = [p for p in read(root, "debian/copyright").split("\n\n") if p.strip()]
    files = [p for p in paragraphs if re.search(r"^Files:\s*\*\s*$", p, re.M)]
    if not check(len(files) == 1, "debian/copyright has one Files: * paragraph"):
        return
    named = re.search(r"^License:\s*(\S+)\s*$", files[0], re.M)
    check(named is not None and named.group(1) == LICENSE_ID,
          "debian/copyright's Files: * licence is %s: %s" % (LICENSE_ID, named and named.group(1)))
    copyright_line = re.search(r"^Copyright:\s*(.+)$", files[0], re.M)
    check(copyright_line is not None and holder is not None
          and copyright_line.group(1).strip() == "%s %s" % (holder.group(1), HOLDER),
          "debian/copyright's Copyright: matches LICENSE: %s" % (copyright_line and copyright_line.group(1)))
    standalone = [p for p in paragraphs if p.startswith("License: %s\n" % LICENSE_ID)]
    if check(len(standalone) == 1, "debian/copyright carries the %s text in a License: paragraph" % LICENSE_ID):
        body = [line[1:] for line in standalone[0].split("\n")[1:]]
        text = "\n".join("" if line == "." else line for line in body)
        # Compare the permission notice and the disclaimer, the licence proper.
        want = licence.split("\n\n", 2)[2].strip()
        check(" ".join(text.split()) == " ".join(want.split()),
              "debian/copyright's licence text is LICENSE's")


def build_section(readme):
    m = re.search(r"^## Building by hand\n(.*?)(?=^## |\Z)", readme, re.M | re.S)
    return m.group(1) if m else ""


def check_build_deps(root):
    meson = read(root, "meson.build")
    names = re.findall(r"\bdependency\(\s*'([^']+)'", meson)
    headers = re.findall(r"\bhas_header\(\s*'([^']+)'", meson)
    check(len(names) >= 10, "meson.build's dependency() calls found: %s" % names)
    section = build_section(read(root, "README.md"))
    check(section != "", "README has a \"Building by hand\" section")
    words = set(re.findall(r"[a-z0-9][a-z0-9.+-]*[a-z0-9]", section))
    control = read(root, "debian/control")
    build_depends = re.search(r"^Build-Depends:(.*?)(?=^\S)", control, re.M | re.S)
    build_depends = set(re.findall(r"[a-z0-9][a-z0-9.+-]*", build_depends.group(1))) if build_depends else set()
    bootstrap = set(re.findall(r"[a-z0-9][a-z0-9.+-]*", read(root, "tools/bootstrap.sh")))
    for name in names + headers:
        if not check(name in DEBIAN_PACKAGE, "meson.build's %s has a Debian package in this test's table" % name):
            continue
        package = DEBIAN_PACKAGE[name]
        if package is None:
            continue
        check(package in words, "README \"Building by hand\" lists %s (meson.build: %s)" % (package, name))
        check(package in bootstrap, "tools/bootstrap.sh installs %s (meson.build: %s)" % (package, name))
        if name not in TEST_ONLY:
            check(package in build_depends, "debian/control Build-Depends names %s (meson.build: %s)" % (package, name))
    for tool in TOOLS:
        check(tool in words, "README \"Building by hand\" lists %s" % tool)


def commands(root):
    """The commands of gpuvet's table in src/cmd/registry.c (but `help`, which is no feature)."""
    names = re.findall(r'^\s*\{"([a-z][a-z-]*)", cmd_\w+,', read(root, "src/cmd/registry.c"), re.M)
    return [n for n in names if n != "help"]


def check_packaging(root, gpuvet):
    names = commands(root)
    check(len(names) >= 17, "src/cmd/registry.c's command table read: %s" % names)
    control = read(root, "debian/control")
    description = control[control.index("\nDescription:"):] if "\nDescription:" in control else ""
    spec = read(root, "packaging/rpm/gpuvet.spec")
    spec_description = re.search(r"^%description\n(.*?)^%", spec, re.M | re.S)
    spec_description = spec_description.group(1) if spec_description else ""
    for name in names:
        named = re.compile(r"`(gpuvet )?%s`" % re.escape(name))
        check(named.search(description) is not None, "debian/control's description names `%s`" % name)
        check(named.search(spec_description) is not None, "the RPM spec's %%description names `%s`" % name)

    meson = read(root, "meson.build")
    check(re.search(r"install_data\('deploy/systemd/gpuvet-serve\.default', rename : 'gpuvet-serve',\s*"
                    r"install_dir : get_option\('sysconfdir'\) / 'default'\)", meson) is not None,
          "meson installs deploy/systemd/gpuvet-serve.default as SYSCONFDIR/default/gpuvet-serve")
    unit = read(root, "deploy/systemd/gpuvet-serve.service")
    check(re.search(r"^EnvironmentFile=-/etc/default/gpuvet-serve$", unit, re.M) is not None,
          "gpuvet-serve.service reads /etc/default/gpuvet-serve when it exists")
    check(re.search(r"^ExecStart=.* \$GPUVET_SERVE_ARGS$", unit, re.M) is not None,
          "gpuvet-serve.service's command ends with $GPUVET_SERVE_ARGS")
    check("GPUVET_SERVE_ARGS=" in read(root, "deploy/systemd/gpuvet-serve.default"),
          "the shipped gpuvet-serve default file sets GPUVET_SERVE_ARGS")
    check("%config(noreplace) %{_sysconfdir}/default/gpuvet-serve" in spec and "--sysconfdir=%{_sysconfdir}" in spec,
          "the RPM keeps /etc/default/gpuvet-serve as %config(noreplace)")

    example = "deploy/policy/policy.example.yaml"
    check(re.search(r"install_data\('%s', rename : 'policy\.yaml', install_dir : docdir / 'examples'\)"
                    % re.escape(example), meson) is not None,
          "meson installs the example policy as DOCDIR/examples/policy.yaml")
    if gpuvet is None:
        return
    text = read(root, example)
    with tempfile.TemporaryDirectory() as tmp:
        for what, body in (("as shipped", text), ("uncommented", re.sub(r"^# ", "", text, flags=re.M))):
            path = os.path.join(tmp, "policy-%s.yaml" % what.replace(" ", "-"))
            with open(path, "w") as f:
                f.write(body)
            p = subprocess.run([gpuvet, "policy", "validate", path], capture_output=True, text=True)
            check(p.returncode == 0, "gpuvet policy validate accepts the example policy %s: %s"
                  % (what, (p.stdout + p.stderr).strip()[-400:]))


def main():
    root = sys.argv[1]
    gpuvet = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None
    check_licence(root)
    check_build_deps(root)
    check_packaging(root, gpuvet)
    return finish()


if __name__ == "__main__":
    sys.exit(main())

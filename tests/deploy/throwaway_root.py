"""Run a command in a throw-away root: an overlay of this machine's / whose writes land in
a scratch directory, entered with chroot in a private mount namespace. The command sees a
normal system (python, systemctl, the repository at its usual path); what it changes is
left in UPPER for the test to read, and the real / is untouched.

run_hosts() plays several roots in one ansible-playbook run: the controller stays outside,
in a mount namespace holding every root, and each inventory host's interpreter is a wrapper
that chroots into that host's root, so one playbook run (one start-up, one parse, the hosts
in parallel) covers what took a run per root.

Needs root and overlayfs in a new mount namespace (unshare -m); available() says whether
this machine has them."""
import os
import shlex
import shutil
import subprocess



def available():
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("chroot"):
        return False
    probe = "/tmp/gpuvet-overlay-probe-%d" % os.getpid()
    try:
        for d in ("upper", "work", "merged"):
            os.makedirs(os.path.join(probe, d), exist_ok=True)
        p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            "mount -t overlay overlay -o lowerdir=/,upperdir=%s/upper,workdir=%s/work %s/merged"
                            % (probe, probe, probe)], capture_output=True)
        return p.returncode == 0
    finally:
        shutil.rmtree(probe, ignore_errors=True)


# Mounts one root at $scratch/merged; then the seed's files are copied over it.
_MOUNT_ROOT = r'''
m=$scratch/merged
mount -t overlay overlay -o lowerdir=/,upperdir=$scratch/upper,workdir=$scratch/work "$m"
for d in proc sys dev; do mount --rbind /$d "$m/$d"; done
mount --bind "$scratch" "$m$scratch"
for b in $binds; do mount --bind "$b" "$m$b"; done
if [ -n "$seed" ]; then
    (cd "$seed" && find . -type f) | while read -r f; do
        mkdir -p "$(dirname "$m/$f")"; rm -f "$m/$f"; cp -p "$seed/$f" "$m/$f"
    done
fi
'''

# A host's ansible_python_interpreter: the module runs chrooted into the host's root, in
# the directory the controller runs in (the same path exists inside), with the host's own
# environment on top of the controller's.
_INTERPRETER = """#!/bin/sh
%(exports)sexec chroot %(merged)s /bin/sh -c 'cd "$0" 2>/dev/null || cd /; exec /usr/bin/python3 "$@"' "$PWD" "$@"
"""


def prepare_root(scratch, keep=False):
    """Make (or, keep=True, continue) the layers of the root kept in scratch."""
    upper, work = os.path.join(scratch, "upper"), os.path.join(scratch, "work")
    if not keep:
        shutil.rmtree(upper, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    for d in (upper, work, os.path.join(scratch, "merged"), os.path.join(scratch, "ansible-tmp")):
        os.makedirs(d, exist_ok=True)


def host_vars(scratch, env=None):
    """The inventory variables that make a host of run_hosts() live in the root kept in
    scratch: its interpreter wrapper (written here) and a temporary directory the module
    sees at the same path as the controller."""
    wrapper = os.path.join(scratch, "python")
    exports = "".join("export %s=%s\n" % (k, shlex.quote(v)) for k, v in sorted((env or {}).items()))
    with open(wrapper, "w") as f:
        f.write(_INTERPRETER % {"exports": exports, "merged": shlex.quote(os.path.join(scratch, "merged"))})
    os.chmod(wrapper, 0o755)
    return {"ansible_connection": "local", "ansible_python_interpreter": wrapper,
            "ansible_remote_tmp": os.path.join(scratch, "ansible-tmp")}


def run(scratch, argv, seed=None, keep=False, env=None, timeout=900, binds=()):
    """Run argv inside the throw-away root kept in scratch (made if absent). seed: a
    directory whose files are copied over the root first (e.g. etc/os-release). keep=False
    starts from a clean upper layer; keep=True continues the previous run's root. binds:
    directories (absolute, no spaces) the command writes through to, as the scratch dir."""
    prepare_root(scratch, keep)
    script = 'set -e\nscratch=$1; seed=$2; binds=$3; shift 3\n' + _MOUNT_ROOT + 'exec chroot "$m" "$@"\n'
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
                           scratch, seed or "", " ".join(binds)] + list(argv), capture_output=True, text=True, env=env,
                          timeout=timeout)


def run_hosts(roots, argv, env=None, timeout=900):
    """Run argv (an ansible-playbook command line whose inventory uses host_vars()) with
    every root of roots mounted: roots is a list of (scratch, seed, binds), each prepared
    with prepare_root(); seed None keeps what the root holds."""
    script = ["set -e"]
    for scratch, seed, binds in roots:
        script.append("scratch=%s; seed=%s; binds=%s" % (shlex.quote(scratch), shlex.quote(seed or ""),
                                                         shlex.quote(" ".join(binds))))
        script.append(_MOUNT_ROOT)
    script.append('exec "$@"')
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", "\n".join(script), "sh"]
                          + list(argv), capture_output=True, text=True, env=env, timeout=timeout)


def changed_files(scratch, prefixes=("etc", "var/log", "usr", "opt", "lib")):
    """Paths (relative to /) the run wrote under prefixes, from the upper layer."""
    upper = os.path.join(scratch, "upper")
    found = []
    for prefix in prefixes:
        for dirpath, _, files in os.walk(os.path.join(upper, prefix)):
            for name in files:
                found.append(os.path.relpath(os.path.join(dirpath, name), upper))
    return sorted(found)

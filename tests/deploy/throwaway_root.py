"""Run a command in a throw-away root: an overlay of this machine's / whose writes land in
a scratch directory, entered with chroot in a private mount namespace. The command sees a
normal system (python, systemctl, the repository at its usual path); what it changes is
left in UPPER for the test to read, and the real / is untouched.

Needs root and overlayfs in a new mount namespace (unshare -m); available() says whether
this machine has them."""
import os
import shutil
import subprocess

_SCRIPT = r'''
set -e
scratch=$1; seed=$2; binds=$3; shift 3
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
exec chroot "$m" "$@"
'''


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


def run(scratch, argv, seed=None, keep=False, env=None, timeout=900, binds=()):
    """Run argv inside the throw-away root kept in scratch (made if absent). seed: a
    directory whose files are copied over the root first (e.g. etc/os-release). keep=False
    starts from a clean upper layer; keep=True continues the previous run's root. binds:
    directories (absolute, no spaces) the command writes through to, as the scratch dir."""
    upper, work = os.path.join(scratch, "upper"), os.path.join(scratch, "work")
    if not keep:
        shutil.rmtree(upper, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    for d in (upper, work, os.path.join(scratch, "merged")):
        os.makedirs(d, exist_ok=True)
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", _SCRIPT, "sh",
                           scratch, seed or "", " ".join(binds)] + list(argv), capture_output=True, text=True, env=env,
                          timeout=timeout)


def changed_files(scratch, prefixes=("etc", "var/log", "usr", "opt", "lib")):
    """Paths (relative to /) the run wrote under prefixes, from the upper layer."""
    upper = os.path.join(scratch, "upper")
    found = []
    for prefix in prefixes:
        for dirpath, _, files in os.walk(os.path.join(upper, prefix)):
            for name in files:
                found.append(os.path.relpath(os.path.join(dirpath, name), upper))
    return sorted(found)

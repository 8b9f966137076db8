#!/usr/bin/env python3
"""gpuvet tune on writable trees of every fixture (overlays over the shared ones, or copies:
tests/fixtures/fixture_cache.py).

    test_tune.py GPUVET [GPUVET_TEST_HOOKS]

- `tune plan` (profile throughput) per fixture against tests/golden/expected-tune/NAME.txt
  (GPUVET_UPDATE_GOLDEN=1 rewrites them); exit 1 when changes are pending, 0 after apply;
- apply, then revert, leaves every file of the fixture byte-identical (symlinks included);
  only gpuvet's own /var/lib/gpuvet appears;
- apply killed with SIGKILL after each of its steps (GPUVET_TUNE_STOP_AFTER=N): revert
  restores the original exactly, and apply run again completes;
- a second apply while the lock is held refuses (--lock-timeout 0) or waits and completes;
- revert with no snapshot, or with one from another boot, refuses with the reason;
- an attribute the kernel refuses to write (a read-only bind mount, as in a VM) is
  reported as refused and the rest still applies and reverts;
- apply as a non-root user on the live system refuses naming the first setting;
- bad input: unknown profile, setting, value, action; --profile none without --set;
- the site policy's tune section: its profile is the default, its settings override the
  profile, --set overrides them, --no-policy ignores them, and a bad one is named by line;
- kernel command-line settings: a GRUB drop-in on a Debian tree, the BLS entries and their
  templates on a RHEL tree (a parameter the line has replaced in place, RHEL 8's
  "$kernelopts" entry cannot), byte-identical after revert, also after a kill at every
  step; after a reboot revert restores them (and leaves the runtime values), status tells
  written from in effect;
- the state and its lock as symlinks, FIFOs, a state directory linked out of the root, and
  state entries that name a file or value their setting does not write: refused (exit 2);
  --set numbers other than plain decimal refused;
- net.irq_affinity: the MSI interrupts of the NICs on a GPU's NUMA node go to that node's
  CPUs and back; with irqbalance running they cannot.
Exit 0 when every case holds, 1 otherwise."""
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import fixture_cache  # noqa: E402  (the shared fixture trees)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
EXPECTED = os.path.join(HERE, "expected-tune")
NAMES = ["dgx-h100", "dgx-h100-degraded", "a100-nouveau", "vm-guest", "vfio-host", "cpu-only", "hgx-b300",
         "rtxpro6000-server", "p100-node", "a40-node"]


GPUVET_STATE = os.path.join("var", "lib", "gpuvet")  # tune's own snapshot: not the machine's


def tree_state(root):
    """What every file and symlink of the tree holds, gpuvet's own state directory left out
    (fixture_cache.state: of an overlay, only what was written)."""
    return fixture_cache.state(root, ignore=(GPUVET_STATE,))


def tune(gpuvet, *args, env=None):
    exe = HOOKS if HOOKS and env and "GPUVET_TUNE_STOP_AFTER" in env else gpuvet
    return subprocess.run([exe, "tune"] + list(args), capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})), timeout=120)


def golden_and_round_trip(gpuvet, work):
    update = os.environ.get("GPUVET_UPDATE_GOLDEN") == "1"
    for name in NAMES:
        root = os.path.join(work, name)
        fixture_cache.writable(name, root)
        original = tree_state(root)
        p = tune(gpuvet, "plan", "--root", root)
        text = p.stdout.replace(root, "ROOT")
        path = os.path.join(EXPECTED, name + ".txt")
        if update:
            os.makedirs(EXPECTED, exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
            print("updated " + os.path.relpath(path, REPO))
        else:
            want = open(path).read() if os.path.exists(path) else None
            if not check(text == want, "%s: tune plan matches expected-tune/%s.txt" % (name, name)):
                print(text)
        pending = "setting to change" in text or "settings to change" in text
        check(p.returncode == (1 if pending else 0), "%s: plan exits %d (changes pending: %s)"
              % (name, p.returncode, pending))
        p = tune(gpuvet, "apply", "--root", root)
        check(p.returncode == 0 and "0 did not take" in p.stdout, "%s: apply succeeds (%s)" % (name, p.stdout.strip()[-200:]))
        again = tune(gpuvet, "plan", "--root", root)
        check(again.returncode == 0 and "Nothing to change" in again.stdout, "%s: after apply, plan has nothing to do" % name)
        st = tune(gpuvet, "status", "--root", root, "--json")
        doc = json.loads(st.stdout) if st.returncode in (0, 1) and st.stdout else {}
        check(st.returncode == 0 and doc.get("state") == "applied" and doc.get("drifted") == 0,
              "%s: status: applied, nothing drifted" % name)
        second = tune(gpuvet, "apply", "--root", root)
        check(second.returncode == 0, "%s: a second apply succeeds (idempotent)" % name)
        p = tune(gpuvet, "revert", "--root", root)
        check(p.returncode == 0, "%s: revert succeeds (%s)" % (name, (p.stdout + p.stderr).strip()[-200:]))
        diff = fixture_cache.differences(original, tree_state(root))
        check(diff == [], "%s: apply + revert is byte-identical (%s)" % (name, diff[:5]))
        check(not os.path.exists(os.path.join(root, "var", "lib", "gpuvet", "tune-state.json")),
              "%s: revert removes the snapshot" % name)


def killed_at_every_step(gpuvet, work):
    root = os.path.join(work, "kill")
    fixture_cache.writable("a100-nouveau", root)
    original = tree_state(root)
    # Three single-file settings: step 1 the snapshot, 2-4 the writes, 5 the check.
    args = ["--root", root, "--profile", "none", "--set", "memory.thp=always", "--set", "vm.swappiness=10",
            "--set", "cpu.boost=off"]
    steps = 5
    for n in range(1, steps + 1):
        killed = tune(gpuvet, "apply", *args, env={"GPUVET_TUNE_STOP_AFTER": str(n)})
        check(killed.returncode == -9, "killed after step %d (rc %d)" % (n, killed.returncode))
        state = os.path.join(root, "var", "lib", "gpuvet", "tune-state.json")
        check(os.path.exists(state), "after a kill at step %d the snapshot exists" % n)
        p = tune(gpuvet, "revert", "--root", root)
        diff = fixture_cache.differences(original, tree_state(root))
        check(p.returncode == 0 and diff == [], "kill at step %d, revert: byte-identical (%s)" % (n, diff[:3]))
        tune(gpuvet, "apply", *args, env={"GPUVET_TUNE_STOP_AFTER": str(n)})
        p = tune(gpuvet, "apply", *args)
        st = tune(gpuvet, "status", "--root", root, "--json")
        check(p.returncode == 0 and json.loads(st.stdout).get("drifted") == 0,
              "kill at step %d, apply again: completes" % n)
        p = tune(gpuvet, "revert", "--root", root)
        diff = fixture_cache.differences(original, tree_state(root))
        check(p.returncode == 0 and diff == [], "kill at step %d, apply again, revert: byte-identical (%s)" % (n, diff[:3]))
    # The full profile (258 files on this fixture): a kill mid-way through the writes.
    full = ["--root", root]
    for n in (2, 100, 259):
        killed = tune(gpuvet, "apply", *full, env={"GPUVET_TUNE_STOP_AFTER": str(n)})
        p = tune(gpuvet, "revert", "--root", root)
        diff = fixture_cache.differences(original, tree_state(root))
        check(killed.returncode == -9 and p.returncode == 0 and diff == [],
              "throughput killed after step %d, revert: byte-identical (%s)" % (n, diff[:3]))


def locking(gpuvet, work):
    root = os.path.join(work, "lock")
    fixture_cache.writable("vm-guest", root)
    lock_path = os.path.join(root, "var", "lib", "gpuvet", "tune-state.json.lock")
    os.makedirs(os.path.dirname(lock_path), exist_ok=True)
    with open(lock_path, "w") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)
        holder.write("4242\n")
        holder.flush()
        p = tune(gpuvet, "apply", "--root", root, "--lock-timeout", "0")
        check(p.returncode == 2 and "another gpuvet tune (pid 4242) holds" in p.stderr,
              "a second apply refuses while the lock is held: " + p.stderr.strip())
        waiter = subprocess.Popen([gpuvet, "tune", "apply", "--root", root, "--lock-timeout", "120"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)
        check(waiter.poll() is None, "with --lock-timeout the second apply waits")
        fcntl.flock(holder, fcntl.LOCK_UN)
    out, err = waiter.communicate(timeout=120)
    check(waiter.returncode == 0, "and completes once the lock is free (%s)" % (out + err).strip()[-200:])
    tune(gpuvet, "revert", "--root", root)


def refusals(gpuvet, work):
    root = os.path.join(work, "refuse")
    fixture_cache.writable("a100-nouveau", root)
    p = tune(gpuvet, "revert", "--root", root)
    check(p.returncode == 2 and "nothing to revert" in p.stderr, "revert without a snapshot refuses: " + p.stderr.strip())
    boot = os.path.join(root, "proc", "sys", "kernel", "random", "boot_id")
    os.makedirs(os.path.dirname(boot), exist_ok=True)
    with open(boot, "w") as f:
        f.write("11111111-2222-3333-4444-555555555555\n")
    tune(gpuvet, "apply", "--root", root)
    with open(boot, "w") as f:
        f.write("99999999-2222-3333-4444-555555555555\n")
    p = tune(gpuvet, "revert", "--root", root)
    check(p.returncode == 2 and "was taken on another boot (boot id 11111111" in p.stderr,
          "revert of a snapshot from another boot refuses: " + p.stderr.strip()[:160])
    st = tune(gpuvet, "status", "--root", root)
    check(st.returncode == 1 and "another boot" in st.stdout, "status says the snapshot is from another boot")

    # A read-only attribute: the kernel refuses the write; the rest applies and reverts.
    root = os.path.join(work, "readonly")
    fixture_cache.writable("vm-guest", root)
    original = tree_state(root)
    thp = os.path.join(root, "sys", "kernel", "mm", "transparent_hugepage", "enabled")
    script = ('mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && "$2" tune apply --root "$3" && '
              '"$2" tune revert --root "$3"')
    p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", thp, gpuvet, root],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0 and "mount" in p.stderr:
        print("SKIP read-only attribute: cannot bind-mount here: " + p.stderr.strip())
    else:
        check(p.returncode == 0 and "refused" in p.stdout and "Read-only file system" in p.stdout,
              "a read-only attribute is reported as refused, the rest applies: " + p.stdout.strip()[-300:])
        diff = fixture_cache.differences(original, tree_state(root))
        check(diff == [], "and revert restores the rest byte-identically (%s)" % diff[:3])

    # Non-root on the live system: refused before anything is written.
    if os.geteuid() == 0 and shutil.which("setpriv"):
        try:
            current = int(open("/proc/sys/vm/swappiness").read())
        except OSError:
            current = None
        if current is not None:
            other = (current + 1) % 101
            p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", gpuvet, "tune", "apply",
                                "--profile", "none", "--set", "vm.swappiness=%d" % other, "--state",
                                os.path.join(work, "nonroot-state.json")], capture_output=True, text=True, timeout=60)
            check(p.returncode == 2 and "vm.swappiness needs root (it writes /proc/sys/vm/swappiness)" in p.stderr,
                  "non-root apply on the live system refuses naming the setting: " + p.stderr.strip())
            check(int(open("/proc/sys/vm/swappiness").read()) == current, "and writes nothing")


def bad_input(gpuvet, work):
    root = fixture_cache.path("vm-guest")  # nothing here may write
    cases = [
        (["plan", "--root", root, "--profile", "fast"], "--profile fast: built-in tune-profiles.json has no such profile (it has throughput passthrough-host balanced)"),
        (["plan", "--root", root, "--set", "cpu.turbo=on"], '--set: unknown setting "cpu.turbo"'),
        (["plan", "--root", root, "--set", "vm.swappiness=300"], '--set: vm.swappiness="300": expected 0..200'),
        (["plan", "--root", root, "--set", "novalue"], '--set "novalue": expected KEY=VALUE'),
        (["plan", "--root", root, "--profile", "none"], "--profile none leaves nothing to do"),
        (["tweak"], 'unknown action "tweak"'),
        ([], "name an action"),
        (["plan", "--root", "/nonexistent/root"], "--root /nonexistent/root"),
        (["plan", "--root", root, "--data-dir", "/nonexistent"], "/nonexistent/tune-profiles.json"),
    ]
    for args, words in cases:
        p = tune(gpuvet, *args)
        check(p.returncode == 2 and words in p.stderr, "tune %s: exit 2 with %r (got %d: %s)"
              % (" ".join(args), words, p.returncode, p.stderr.strip()[:200]))
    p = tune(gpuvet, "plan", "--root", root, "--json")
    doc = json.loads(p.stdout)
    check(doc["schema"] == "gpuvet.tune-plan/1" and doc["changes"] == 2
          and [s["setting"] for s in doc["settings"] if s["state"] == "change"] == ["memory.thp", "vm.swappiness"],
          "plan --json on vm-guest: THP and swappiness change")
    floor = os.path.join(work, "floor")
    fixture_cache.writable("a100-nouveau", floor)
    original = tree_state(floor)
    p = tune(gpuvet, "apply", "--root", floor, "--profile", "none", "--set", "cpu.min_freq=max")
    cpu0 = os.path.join(floor, "sys", "devices", "system", "cpu", "cpu0", "cpufreq")
    check(p.returncode == 0 and open(os.path.join(cpu0, "scaling_min_freq")).read()
          == open(os.path.join(cpu0, "cpuinfo_max_freq")).read(), "cpu.min_freq=max raises every CPU's floor to its maximum")
    p = tune(gpuvet, "revert", "--root", floor)
    check(p.returncode == 0 and fixture_cache.differences(original, tree_state(floor)) == [], "and revert restores it")
    p = tune(gpuvet, "plan", "--root", floor, "--profile", "none", "--set", "cpu.min_freq=99")
    check(p.returncode == 0 and "cpu0 runs 1500000-3529052 kHz, not 99" in p.stdout, "cpu.min_freq outside the range: cannot")
    # A second apply of other settings keeps the first one's entries, drifted or not.
    layered = os.path.join(work, "layered")
    fixture_cache.writable("vm-guest", layered)
    original = tree_state(layered)
    tune(gpuvet, "apply", "--root", layered, "--profile", "none", "--set", "vm.swappiness=10")
    with open(os.path.join(layered, "proc", "sys", "vm", "swappiness"), "w") as f:
        f.write("33\n")
    p = tune(gpuvet, "apply", "--root", layered, "--profile", "none", "--set", "memory.thp=never")
    check(p.returncode == 0 and "0 did not take" in p.stdout, "a later apply does not judge an earlier apply's drift")
    st = tune(gpuvet, "status", "--root", layered)
    check(st.returncode == 1 and "drifted  /proc/sys/vm/swappiness: 33, applied 10 (was 60)" in st.stdout,
          "status reports that drift")
    p = tune(gpuvet, "revert", "--root", layered)
    check(p.returncode == 0 and fixture_cache.differences(original, tree_state(layered)) == [],
          "revert restores both applies' files byte-identically")
    quiet = os.path.join(work, "quiet")
    fixture_cache.writable("vm-guest", quiet)
    p = tune(gpuvet, "apply", "--root", quiet, "--profile", "none", "--set", "vm.swappiness=60")
    check(p.returncode == 0 and "nothing to change" in p.stdout
          and not os.path.exists(os.path.join(quiet, "var", "lib", "gpuvet")),
          "apply with nothing to change writes no snapshot")
    unit_root = os.path.join(work, "unit")
    fixture_cache.writable("vm-guest", unit_root)
    p = tune(gpuvet, "install-unit", "--root", unit_root, "--profile", "balanced", "--set", "vm.swappiness=5")
    unit = os.path.join(unit_root, "etc", "systemd", "system", "gpuvet-tune.service")
    text = open(unit).read() if os.path.exists(unit) else ""
    check(p.returncode == 0 and "ExecStart=%s tune apply --profile balanced --set vm.swappiness=5\n" % gpuvet in text
          and "Type=oneshot" in text and "WantedBy=multi-user.target" in text,
          "install-unit writes gpuvet-tune.service with the same profile and --set")
    link = os.path.join(unit_root, "etc", "systemd", "system", "multi-user.target.wants", "gpuvet-tune.service")
    check(os.path.islink(link) and os.readlink(link) == "../gpuvet-tune.service", "install-unit enables it")
    p = tune(gpuvet, "install-unit", "--root", unit_root, "--profile", "balanced", "--set", "vm.swappiness=5")
    check(p.returncode == 0 and "unchanged and already enabled" in p.stdout, "install-unit a second time changes nothing")
    p = tune(gpuvet, "profiles")
    check(p.returncode == 0 and "throughput:" in p.stdout and "  vm.swappiness=10" in p.stdout, "tune profiles lists them")


SITE_POLICY = """policy: 1
tune:
  profile: balanced
  settings:
    vm.swappiness: 1
    cpu.boost: off
"""


def site_policy(gpuvet, work):
    root = os.path.join(work, "site")
    fixture_cache.writable("dgx-h100", root)
    os.makedirs(os.path.join(root, "etc", "gpuvet"))
    policy = os.path.join(root, "etc", "gpuvet", "policy.yaml")
    with open(policy, "w") as f:
        f.write(SITE_POLICY)
    original = tree_state(root)
    p = tune(gpuvet, "plan", "--root", root, "--json")
    doc = json.loads(p.stdout) if p.stdout else {}
    by_key = {s["setting"]: s for s in doc.get("settings", [])}
    check(p.returncode == 1 and doc.get("profile") == "balanced" and doc.get("policy") == policy,
          "the default policy's tune.profile picks the profile (%s)" % doc.get("profile"))
    check(by_key.get("vm.swappiness", {}).get("value") == "1" and by_key["vm.swappiness"].get("from") == "policy"
          and by_key["vm.swappiness"].get("policy_line") == 5, "its tune.settings override the profile, with the line")
    check(by_key.get("cpu.boost", {}).get("value") == "off" and "cpu.governor" not in by_key,
          "and add settings the profile leaves out")
    p = tune(gpuvet, "plan", "--root", root, "--profile", "throughput", "--set", "vm.swappiness=5")
    check("vm.swappiness=5 (--set)" in p.stdout and "cpu.boost=off (policy line 6)" in p.stdout
          and "profile throughput" in p.stdout, "--profile beats tune.profile, --set beats tune.settings")
    p = tune(gpuvet, "plan", "--root", root, "--no-policy", "--json")
    doc = json.loads(p.stdout) if p.stdout else {}
    check(doc.get("profile") == "throughput" and doc.get("policy") is None, "--no-policy ignores it")
    p = tune(gpuvet, "apply", "--root", root)
    check(p.returncode == 0 and open(os.path.join(root, "proc", "sys", "vm", "swappiness")).read().strip() == "1",
          "apply sets the policy's values")
    p = tune(gpuvet, "revert", "--root", root)
    check(p.returncode == 0 and fixture_cache.differences(original, tree_state(root)) == [], "and revert restores them")
    p = tune(gpuvet, "install-unit", "--root", root)
    unit = os.path.join(root, "etc", "systemd", "system", "gpuvet-tune.service")
    text = open(unit).read() if os.path.exists(unit) else ""
    check(p.returncode == 0 and "ExecStart=%s tune apply\n" % gpuvet in text,
          "install-unit without --profile leaves the choice to the policy at each boot")
    bad = os.path.join(work, "bad-policy.yaml")
    with open(bad, "w") as f:
        f.write("policy: 1\ntune:\n  settings:\n    vm.swapiness: 1\n    cpu.boost: maybe\n  extra: 1\n")
    p = tune(gpuvet, "plan", "--root", root, "--policy", bad)
    check(p.returncode == 2 and bad + ':4: tune.settings: no setting named "vm.swapiness"' in p.stderr
          and bad + ':5: tune.settings.cpu.boost: expected on|off, not "maybe"' in p.stderr
          and bad + ':6: unknown key "extra" in tune' in p.stderr, "a bad tune section is named line by line")
    with open(bad, "w") as f:
        f.write("policy: 1\ntune:\n  profile: fast\n")
    p = tune(gpuvet, "plan", "--root", root, "--policy", bad)
    check(p.returncode == 2 and bad + ":3: tune.profile fast: built-in tune-profiles.json has no such profile" in p.stderr,
          "an unknown tune.profile names the policy line: " + p.stderr.strip()[:200])


BLS_ENTRY = ("title Red Hat Enterprise Linux (5.14.0-427.el9.x86_64) 9.4\nversion 5.14.0-427.el9.x86_64\n"
             "linux /vmlinuz-5.14.0-427.el9.x86_64\ninitrd /initramfs-5.14.0-427.el9.x86_64.img $tuned_initrd\n"
             "options root=/dev/mapper/rhel-root ro crashkernel=1G-4G:192M intel_idle.max_cstate=5 rhgb quiet "
             "$tuned_params\ngrub_users $grub_users\ngrub_arg --unrestricted\ngrub_class rhel\n")


def boot_tree(work, name, fixture, files):
    root = os.path.join(work, name)
    fixture_cache.writable(fixture, root)
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    return root


def boot_cmdline(gpuvet, work):
    deb = boot_tree(work, "boot-deb", "a100-nouveau", {
        "etc/default/grub": 'GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT="quiet splash"\nGRUB_CMDLINE_LINUX=""\n',
        "etc/debian_version": "12.8\n"})
    original = tree_state(deb)
    p = tune(gpuvet, "apply", "--root", deb)
    dropin = os.path.join(deb, "etc", "default", "grub.d", "90-gpuvet.cfg")
    text = open(dropin).read() if os.path.exists(dropin) else ""
    check(p.returncode == 0 and 'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX intel_idle.max_cstate=1 '
          'processor.max_cstate=1"\n' in text and "take effect at the next boot" in p.stdout
          and "run update-grub" in p.stdout, "throughput on a Debian tree: the GRUB drop-in, update-grub named")
    p = tune(gpuvet, "plan", "--root", deb)
    check(p.returncode == 0 and "ok      boot.max_cstate=1 (written; the running kernel has not booted with it yet)"
          in p.stdout, "plan: written but not booted with yet")
    p = tune(gpuvet, "revert", "--root", deb)
    check(p.returncode == 0 and fixture_cache.differences(original, tree_state(deb)) == [] and not os.path.exists(dropin),
          "revert removes the drop-in: byte-identical")

    bls = boot_tree(work, "boot-bls", "dgx-h100", {
        "boot/loader/entries/1f2e-5.14.0-427.el9.x86_64.conf": BLS_ENTRY,
        "boot/loader/entries/1f2e-4.18.0-553.el8.x86_64.conf": "title RHEL 8 kernel\noptions $kernelopts\n",
        "etc/kernel/cmdline": "root=/dev/mapper/rhel-root ro crashkernel=1G-4G:192M rhgb quiet\n",
        "etc/default/grub": 'GRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX="crashkernel=1G-4G:192M rhgb quiet "\n'
                            'GRUB_ENABLE_BLSCFG=true\n'})
    original = tree_state(bls)
    args = ["--root", bls, "--profile", "none", "--set", "boot.max_cstate=1", "--set", "boot.iommu=pt"]
    p = tune(gpuvet, "plan", *args)
    check(p.returncode == 1 and "3 of 3 files" in p.stdout and '"options $kernelopts"' in p.stdout
          and "grubby --update-kernel=ALL" in p.stdout, "BLS: 3 files to change, the $kernelopts entry cannot")
    p = tune(gpuvet, "apply", *args)
    entry = open(os.path.join(bls, "boot/loader/entries/1f2e-5.14.0-427.el9.x86_64.conf")).read()
    check(p.returncode == 0 and "options root=/dev/mapper/rhel-root ro crashkernel=1G-4G:192M intel_idle.max_cstate=1 "
          "rhgb quiet $tuned_params processor.max_cstate=1 intel_iommu=on iommu=pt\n" in entry,
          "BLS: the options line gets the parameters, one it had replaced in place")
    check(open(os.path.join(bls, "etc/kernel/cmdline")).read().startswith(
          "root=/dev/mapper/rhel-root ro crashkernel=1G-4G:192M rhgb quiet intel_idle.max_cstate=1"),
          "BLS: /etc/kernel/cmdline (new kernels) too")
    p = tune(gpuvet, "revert", "--root", bls)
    check(p.returncode == 0 and fixture_cache.differences(original, tree_state(bls)) == [], "BLS: revert is byte-identical")
    # 1 snapshot, 2..7 the writes (2 settings x 3 files), 8 the checks.
    for n in range(1, 9):
        k = tune(gpuvet, "apply", *args, env={"GPUVET_TUNE_STOP_AFTER": str(n)})
        r = tune(gpuvet, "revert", "--root", bls)
        check(k.returncode == -9 and r.returncode == 0 and fixture_cache.differences(original, tree_state(bls)) == [],
              "BLS: killed after step %d, revert: byte-identical" % n)
        tune(gpuvet, "apply", *args, env={"GPUVET_TUNE_STOP_AFTER": str(n)})
        a = tune(gpuvet, "apply", *args)
        check(a.returncode == 0 and "0 did not take" in a.stdout, "BLS: killed after step %d, apply again completes" % n)
        tune(gpuvet, "revert", "--root", bls)
    check(fixture_cache.differences(original, tree_state(bls)) == [], "BLS: byte-identical after the kills")

    # A reboot between apply and revert: the command line is restored, runtime values left.
    boot = os.path.join(bls, "proc", "sys", "kernel", "random", "boot_id")
    os.makedirs(os.path.dirname(boot), exist_ok=True)
    with open(boot, "w") as f:
        f.write("11111111-2222-3333-4444-555555555555\n")
    original = tree_state(bls)
    tune(gpuvet, "apply", *args, "--set", "vm.swappiness=33")
    with open(boot, "w") as f:
        f.write("99999999-2222-3333-4444-555555555555\n")
    with open(os.path.join(bls, "proc", "cmdline"), "w") as f:
        f.write("BOOT_IMAGE=(hd0,gpt2)/vmlinuz root=/dev/mapper/rhel-root ro intel_idle.max_cstate=1 "
                "processor.max_cstate=1 intel_iommu=on iommu=pt\n")
    p = tune(gpuvet, "plan", "--json", *args)
    effect = [t.get("in_effect") for x in (json.loads(p.stdout) if p.stdout else {}).get("settings", [])
              for t in x["targets"] if t["need"] == "ok"]
    check(p.returncode == 0 and effect and all(effect), "after the reboot, plan: ok and in effect")
    st = tune(gpuvet, "status", "--root", bls, "--json")
    doc = json.loads(st.stdout) if st.stdout else {}
    states = sorted({e["state"] for e in doc.get("entries", [])})
    in_effect = [e.get("in_effect") for e in doc.get("entries", []) if "in_effect" in e]
    check(st.returncode == 0 and states == ["held", "reset"] and in_effect and all(in_effect),
          "after a reboot, status: the command line held and in effect, the runtime value reset (%s)" % states)
    r = tune(gpuvet, "revert", "--root", bls)
    swappiness = open(os.path.join(bls, "proc", "sys", "vm", "swappiness")).read().strip()
    diff = fixture_cache.differences(original, tree_state(bls))
    check(r.returncode == 0 and "the reboot reset its runtime values (1, left as they are)" in r.stdout
          and diff == ["proc/cmdline", "proc/sys/kernel/random/boot_id", "proc/sys/vm/swappiness"] and swappiness == "33",
          "after a reboot, revert restores the boot loader files only (%s)" % diff)


def irq_affinity(gpuvet, work):
    irq = {"0000:1c:00.0": ["120", "121"], "0000:9e:00.0": ["300"]}
    files = {}
    for nic, numbers in irq.items():
        for n in numbers:
            files["sys/bus/pci/devices/%s/msi_irqs/%s" % (nic, n)] = "msix\n"
            files["proc/irq/%s/smp_affinity_list" % n] = "0-223\n"
    root = boot_tree(work, "irq", "dgx-h100", files)
    # sys/bus/pci/devices entries are symlinks into sys/devices: the files went through them.
    original = tree_state(root)
    args = ["--root", root, "--profile", "none", "--set", "net.irq_affinity=local"]
    p = tune(gpuvet, "plan", "--json", *args)
    doc = json.loads(p.stdout) if p.stdout else {}
    targets = {t["path"]: t for s in doc.get("settings", []) for t in s["targets"] if t["need"] == "change"}
    check(p.returncode == 1 and targets.get("/proc/irq/120/smp_affinity_list", {}).get("wanted") == "0-55,112-167"
          and targets.get("/proc/irq/300/smp_affinity_list", {}).get("wanted") == "56-111,168-223" and len(targets) == 3,
          "net.irq_affinity=local: each NIC's interrupts to its node's CPUs (%s)" % sorted(targets))
    p = tune(gpuvet, "apply", *args)
    check(p.returncode == 0 and open(os.path.join(root, "proc/irq/121/smp_affinity_list")).read().strip() == "0-55,112-167",
          "apply writes them")
    p = tune(gpuvet, "revert", "--root", root)
    check(p.returncode == 0 and fixture_cache.differences(original, tree_state(root)) == [], "revert: byte-identical")
    os.makedirs(os.path.join(root, "proc", "4242"))
    with open(os.path.join(root, "proc", "4242", "comm"), "w") as f:
        f.write("irqbalance\n")
    p = tune(gpuvet, "plan", *args)
    check(p.returncode == 0 and "irqbalance runs and would move the interrupts back" in p.stdout,
          "with irqbalance running: cannot, saying why")


def release_ignores_hook(gpuvet, work):
    root = os.path.join(work, "no-hook")
    fixture_cache.writable("vm-guest", root)
    p = subprocess.run([gpuvet, "tune", "apply", "--root", root], capture_output=True, text=True,
                       env=dict(os.environ, GPUVET_TUNE_STOP_AFTER="1"), timeout=120)
    check(p.returncode == 0 and "0 did not take" in p.stdout,
          "the released gpuvet ignores GPUVET_TUNE_STOP_AFTER (rc %d)" % p.returncode)
    tune(gpuvet, "revert", "--root", root)


def bounded_tune(gpuvet, *args):
    """tune where a FIFO may block it: a hang is a failure (rc None), not the test's end."""
    try:
        return subprocess.run([gpuvet, "tune"] + list(args), capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(args, None, "", "blocked for 60 s")


def untrusted_state(gpuvet, work):
    """The state file and its lock live where root writes: nothing there may lead tune
    outside --root, and revert writes back only what a setting owns (review N11, N12)."""
    victim = os.path.join(work, "victim")
    root = os.path.join(work, "lock-link")
    fixture_cache.writable("vm-guest", root)
    state_dir = os.path.join(root, GPUVET_STATE)
    os.makedirs(state_dir)
    with open(victim, "w") as f:
        f.write("keep\n")
    os.symlink(victim, os.path.join(state_dir, "tune-state.json.lock"))
    p = tune(gpuvet, "apply", "--root", root)
    check(p.returncode == 2 and "tune-state.json.lock: not a regular file" in p.stderr,
          "a symlink as the lock is refused (rc %d: %s)" % (p.returncode, p.stderr.strip()[-200:]))
    check(open(victim).read() == "keep\n", "and the file it names is not truncated")
    shutil.rmtree(state_dir)
    os.makedirs(state_dir)
    os.mkfifo(os.path.join(state_dir, "tune-state.json.lock"))
    p = bounded_tune(gpuvet, "apply", "--root", root)
    check(p.returncode == 2 and "not a regular file" in p.stderr, "a FIFO as the lock is refused: " + p.stderr.strip()[-200:])
    shutil.rmtree(state_dir)
    os.makedirs(state_dir)
    os.mkfifo(os.path.join(state_dir, "tune-state.json"))
    p = bounded_tune(gpuvet, "status", "--root", root)
    check(p.returncode == 2 and "not a regular file" in p.stderr, "a FIFO as the state is refused, not read: "
          + p.stderr.strip()[-200:])
    shutil.rmtree(state_dir)

    # <root>/var/lib/gpuvet as a symlink out of the root: resolved inside it, as the
    # setting files are (here it leads nowhere inside: refused; made there: used).
    outside = os.path.join(work, "outside")
    os.makedirs(outside)
    os.symlink(outside, state_dir)
    p = tune(gpuvet, "apply", "--root", root)
    check(p.returncode == 2 and "leads nowhere inside the root" in p.stderr and os.listdir(outside) == [],
          "a state directory linked out of the root is not followed out (%s; outside holds %s)"
          % (p.stderr.strip()[-200:], os.listdir(outside)))
    inside = os.path.join(root, outside.lstrip("/"))
    os.makedirs(inside)
    p = tune(gpuvet, "apply", "--root", root)
    check(p.returncode == 0 and os.listdir(outside) == [] and "tune-state.json" in os.listdir(inside),
          "the link is followed inside the root (%s)" % p.stderr.strip()[-200:])
    tune(gpuvet, "revert", "--root", root)

    # A boot loader directory linked out of the root: the drop-in is written inside it.
    deb = boot_tree(work, "boot-link", "a100-nouveau", {
        "etc/default/grub": 'GRUB_CMDLINE_LINUX=""\n', "etc/debian_version": "12.8\n"})
    grub_out = os.path.join(work, "grub-outside")
    os.makedirs(grub_out)
    os.symlink(grub_out, os.path.join(deb, "etc", "default", "grub.d"))
    p = tune(gpuvet, "apply", "--root", deb, "--profile", "none", "--set", "boot.max_cstate=1")
    check(os.listdir(grub_out) == [], "a grub.d linked out of the root: nothing written out there (%s; rc %d: %s)"
          % (os.listdir(grub_out), p.returncode, (p.stdout + p.stderr).strip()[-200:]))

    # Entries that name what their setting does not write.
    forged_root = os.path.join(work, "forged")
    fixture_cache.writable("vm-guest", forged_root)
    original = tree_state(forged_root)
    p = tune(gpuvet, "apply", "--root", forged_root, "--profile", "none", "--set", "vm.swappiness=10")
    check(p.returncode == 0, "apply for the forged states: " + p.stderr.strip()[-200:])
    state_path = os.path.join(forged_root, GPUVET_STATE, "tune-state.json")
    good = json.load(open(state_path))
    passwd = os.path.join(forged_root, "etc", "passwd")
    os.makedirs(os.path.dirname(passwd), exist_ok=True)
    with open(passwd, "w") as f:
        f.write("root:x:0:0::/root:/bin/sh\n")
    entry = good["entries"][0]
    forgeries = [
        ("a file of another setting", dict(entry, path="/etc/passwd", before="0"), "not a file vm.swappiness writes"),
        ("core_pattern", dict(entry, path="/proc/sys/kernel/core_pattern", before="7"), "not a file vm.swappiness"),
        ("core_pattern's value", dict(entry, path="/proc/sys/kernel/core_pattern", before="|/tmp/evil"), "entries[0]"),
        ("a value not of the file's shape", dict(entry, before="1; reboot"), "is not a value of vm.swappiness"),
        ("an unknown setting", dict(entry, setting="nosuch"), 'no setting "nosuch"'),
        ("an unknown result", dict(entry, result="weird"), 'result "weird"'),
        ("a GPU attribute under a file setting", dict(entry, path="nvml:0000:18:00.0/power_limit"), "does not set"),
    ]
    for what, forged, words in forgeries:
        with open(state_path, "w") as f:
            json.dump(dict(good, entries=[forged]), f)
        for action in ("revert", "status"):
            p = tune(gpuvet, action, "--root", forged_root)
            check(p.returncode == 2 and words in p.stderr,
                  "%s with %s: exit 2 naming it (rc %d: %s)" % (action, what, p.returncode, p.stderr.strip()[-200:]))
        check(open(passwd).read() == "root:x:0:0::/root:/bin/sh\n", "%s: /etc/passwd untouched" % what)
    with open(state_path, "w") as f:
        json.dump(dict(good, status="weird"), f)
    p = tune(gpuvet, "revert", "--root", forged_root)
    check(p.returncode == 2 and 'status "weird"' in p.stderr, "an unknown status: exit 2: " + p.stderr.strip()[-200:])
    with open(state_path, "w") as f:
        json.dump(good, f)
    os.unlink(passwd)
    p = tune(gpuvet, "revert", "--root", forged_root)
    check(p.returncode == 0 and fixture_cache.differences(original, tree_state(forged_root)) == [],
          "the state as apply wrote it still reverts: " + p.stderr.strip()[-200:])


def set_values_strict(gpuvet, work):
    """--set numbers are written to the kernel as given: only its own decimal form (N19)."""
    root = os.path.join(work, "numbers")
    fixture_cache.writable("vm-guest", root)
    swappiness = os.path.join(root, "proc", "sys", "vm", "swappiness")
    before = open(swappiness).read()
    for value in ("0x10", " 1", "1 ", "010", "+5", "-0", "1e1", ""):
        p = tune(gpuvet, "apply", "--root", root, "--profile", "none", "--set", "vm.swappiness=" + value)
        check(p.returncode == 2 and "expected 0..200" in p.stderr,
              "--set vm.swappiness=%r refused (rc %d: %s)" % (value, p.returncode, p.stderr.strip()[-200:]))
    for value in ("0x10", "010", " 2000000"):
        p = tune(gpuvet, "plan", "--root", root, "--profile", "none", "--set", "cpu.min_freq=" + value)
        check(p.returncode == 2 and "expected max|min|kHz" in p.stderr, "--set cpu.min_freq=%r refused" % value)
    check(open(swappiness).read() == before, "nothing written")
    p = tune(gpuvet, "apply", "--root", root, "--profile", "none", "--set", "vm.swappiness=0")
    check(p.returncode == 0 and open(swappiness).read().strip() == "0", "vm.swappiness=0 is written as 0")
    tune(gpuvet, "revert", "--root", root)


def main():
    global HOOKS
    gpuvet = os.path.abspath(sys.argv[1])
    HOOKS = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None
    fixture_cache.ensure(*NAMES)
    with fixture_cache.scratch(prefix="gpuvet-tune-") as work:
        golden_and_round_trip(gpuvet, work)
        if HOOKS:
            killed_at_every_step(gpuvet, work)
            release_ignores_hook(gpuvet, work)
        else:
            print("SKIP kills: no gpuvet-test-hooks given (second argument)")
        locking(gpuvet, work)
        refusals(gpuvet, work)
        bad_input(gpuvet, work)
        site_policy(gpuvet, work)
        boot_cmdline(gpuvet, work)
        irq_affinity(gpuvet, work)
        untrusted_state(gpuvet, work)
        set_values_strict(gpuvet, work)
    return finish()


if __name__ == "__main__":
    sys.exit(main())

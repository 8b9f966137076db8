#!/usr/bin/env python3
"""benchmark_tools, ngc_images, install_gpu_driver.sh, cpu_optimization and
full_deployment_optimized.yml with real ansible-core, in
throw-away roots (see test_baseline.py for how they are made).

    test_roles.py GPUVET OUTDIR [PART]...   (parts: benchmark_tools ngc_images install_driver
                                             cpu_optimization full_deployment)

- benchmark_tools: --check on Rocky 9 names the dnf packages (EPEL, ocl-icd, clinfo,
  perftest, libcublas-X-Y, libnccl); on Debian 12 the distribution's packages are
  installed for real with apt (NVIDIA's repository skipped: out of reach), a second run
  changes nothing;
- ngc_images: with a stand-in docker (records pulls, answers inspect), the NGC release is
  the one gpuvet ngc pick chooses (native) on R580 for the H100s; a second run pulls
  nothing; an unknown image name and an empty version with auto-selection off stop the play
  naming ngc_images_to_pull;
- install_gpu_driver.sh --check --method M [--auto-detect]: the playbook runs in check mode
  on this machine as inventory/local.yml's only node and writes the plan; a bad method and
  driver-container on Debian stop with the reason;
- cpu_optimization: --check counts the pending settings as changed in the recap and sets
  nothing; gpuvet tune on a writable fixture copy (never this machine) sets the
  seed's variables, installs gpuvet-tune.service, writes gpuvet tune's GRUB drop-in into the
  copy; a second run changes nothing; gpuvet tune revert undoes it; a bad
  thp_enabled stops the play;
- full_deployment_optimized.yml --check runs all four roles and writes nothing.
Skips (exit 77) without ansible-playbook or without root and overlayfs."""
import json
import os
import re
import shutil
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
from test_baseline import REPO, host_output, prepare, recap  # noqa: E402

INSTALL_DRIVER = os.path.join(REPO, "deploy", "scripts", "install", "install_gpu_driver.sh")

# A docker that knows which images it holds (a state file beside the log) and lists GPUs.
FAKE_DOCKER = r'''#!/bin/sh
state=%(dir)s/docker-images
echo "docker $*" >> %(dir)s/docker.log
case "$1 $2" in
"image inspect") grep -qxF "$3" "$state" 2>/dev/null && { echo '[{"Id": "sha256:0123"}]'; exit 0; }
                 echo "Error: No such image: $3" >&2; exit 1 ;;
"pull "*) echo "$2" >> "$state"; echo "Status: Downloaded newer image for $2"; exit 0 ;;
"run --rm") echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)"; exit 0 ;;
esac
echo "fake docker: unsupported: $*" >&2; exit 2
'''


def benchmark_tools(b):
    proc, scratch, _ = b.play("bench-rocky9", "rocky9", "dgx-h100", ["--check", "--skip-tags", "packages",
                              "-e", "cuda_version=13-0"], playbook="setup_benchmark_tools.yml")
    if check(proc.returncode == 0, "benchmark_tools --check on Rocky 9: the play succeeds (rc %d)" % proc.returncode):
        check("node (dnf): epel-release ocl-icd clinfo perftest infiniband-diags libibverbs-utils libcublas-13-0 libnccl"
              in proc.stdout, "benchmark_tools rocky9: EPEL, ocl-icd, clinfo, the fabric tools, cuBLAS and NCCL for 13-0")
    else:
        print(proc.stdout[-3000:])
    args = ["--skip-tags", "nvidia_repo", "-e", "cuda_version=13-0", "-v"]
    proc, scratch, _ = b.play("bench-debian", "debian12", "dgx-h100", args, playbook="setup_benchmark_tools.yml")
    if not check(proc.returncode == 0, "benchmark_tools on Debian 12: apt installs the tools (rc %d)" % proc.returncode):
        print(proc.stdout[-4000:], proc.stderr[-2000:])
        return
    status = open(os.path.join(scratch, "upper", "var", "lib", "dpkg", "status")).read() \
        if os.path.exists(os.path.join(scratch, "upper", "var", "lib", "dpkg", "status")) else ""
    for pkg in ("perftest", "clinfo", "infiniband-diags", "ibverbs-utils"):
        check(re.search(r"^Package: %s\nStatus: install ok installed" % re.escape(pkg), status, re.M) is not None,
              "benchmark_tools debian12: %s is installed in the throw-away root" % pkg)
    check(shutil.which("perftest") is None and not os.path.exists("/usr/bin/ib_write_bw"),
          "benchmark_tools debian12: the real root is untouched")
    check("libcublas-13-0" not in status, "benchmark_tools debian12: NVIDIA's packages were skipped (no repository)")
    again, _, _ = b.play("bench-debian", "debian12", "dgx-h100", args, playbook="setup_benchmark_tools.yml", keep=True)
    check(again.returncode == 0 and recap(again.stdout).get("changed") == 0,
          "benchmark_tools debian12: a second run changes nothing (%s)" % recap(again.stdout))


def ngc_images(b):
    def seed_for(name):
        d = os.path.join(b.outdir, name)
        return {"usr/local/bin/docker": FAKE_DOCKER % {"dir": d}}
    args = ["-e", "ngc_images_for_driver=580"]
    proc, scratch, _ = b.play("ngc", "debian12", "dgx-h100", args, playbook="setup_ngc_images.yml",
                              extra_seed=seed_for("ngc"))
    if not check(proc.returncode == 0, "ngc_images: the play succeeds (rc %d)" % proc.returncode):
        print(proc.stdout[-4000:], proc.stderr[-2000:])
        return
    picked = json.loads(subprocess.run([os.path.join(b.bin, "gpuvet"), "ngc", "pick", "--json", "--for-driver", "580",
                                        "--root", os.path.join(b.fixtures, "dgx-h100"), "pytorch"],
                                       capture_output=True, text=True).stdout)["picks"][0]
    want, release = picked["ref"], picked["release"]
    check(picked["verdict"] == "native", "ngc_images: gpuvet ngc pick chooses a native release on R580 (%s)" % release)
    log = open(os.path.join(scratch, "docker.log")).read().splitlines()
    check(("docker pull " + want) in log, "ngc_images: pulls %s, gpuvet ngc pick's choice on R580 (%s)" % (want, log))
    check(not any(line.startswith("docker run") for line in log),
          "ngc_images: no GPU test, since this machine has no NVIDIA driver loaded")
    manifest = json.loads(open(os.path.join(scratch, "upper", "var", "log", "gpu_baseline", "ngc_images.json")).read())
    check(manifest["images"] == [want] and manifest["release_chosen"] == {"pytorch": release},
          "ngc_images: the manifest names it: %s" % manifest)
    again, _, _ = b.play("ngc", "debian12", "dgx-h100", args, playbook="setup_ngc_images.yml", keep=True)
    log2 = open(os.path.join(scratch, "docker.log")).read().splitlines()
    check(again.returncode == 0 and recap(again.stdout).get("changed") == 0
          and [x for x in log2 if x.startswith("docker pull")] == ["docker pull " + want],
          "ngc_images: a second run pulls nothing and changes nothing (%s)" % recap(again.stdout))
    # One run, a host (and a root, with its own stand-in docker) per bad list.
    bad = (("unknown", {"ngc_images_to_pull": [{"name": "pytorchh", "version": "25.01"}]}, "ngc_images_to_pull names pytorchh"),
           ("no-auto", {"ngc_images_to_pull": [{"name": "pytorch", "version": ""}], "auto_select_images_by_cuda": False},
            "ngc_images_to_pull leaves a version empty, but auto_select_images_by_cuda is off"))
    proc, roots = b.play_hosts("ngc-bad", [{"name": "ngc-bad-" + name, "platform": "debian12", "fixture": "dgx-h100",
                                            "vars": host, "extra_seed": seed_for("ngc-bad-" + name)}
                                           for name, host, _ in bad], [], playbook="setup_ngc_images.yml")
    for name, _, words in bad:
        host = "ngc-bad-" + name
        out = " ".join(host_output(proc.stdout, host).split())
        check(proc.returncode != 0 and recap(proc.stdout, host).get("failed") == 1 and words in out,
              "ngc_images bad %s: stops naming it: %r" % (name, words))
        check(not os.path.exists(os.path.join(roots[host][0], "docker.log")), "ngc_images bad %s: docker never ran" % name)


def writable_tree(b, fixture, name):
    """A copy of a fixture for gpuvet tune to write (its /dev/nvidia* nodes left out: they
    cannot be copied without the driver)."""
    tree = os.path.join(b.outdir, name)
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(os.path.join(b.fixtures, fixture), tree, symlinks=True,
                    ignore=lambda d, names: [n for n in names if n.startswith("nvidia") and d.endswith("/dev")])
    return tree


def cpu_optimization(b):
    # gpuvet tune acts on a writable copy of a fixture (--root), never on the test machine.
    tree = writable_tree(b, "a100-nouveau", "cpu-tree")
    # A Debian boot configuration in the tree, for the kernel command line.
    os.makedirs(os.path.join(tree, "etc", "default"), exist_ok=True)
    with open(os.path.join(tree, "etc", "default", "grub"), "w") as f:
        f.write('GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_CMDLINE_LINUX=""\n')
    with open(os.path.join(tree, "etc", "debian_version"), "w") as f:
        f.write("12.8\n")
    args = ["-e", "cpu_optimization_root=" + tree, "-e", "vm_swappiness=5"]
    # --check users read the recap: pending changes must count there, and nothing is set.
    proc, _, _ = b.play("cpu-check", "debian12", "a100-nouveau", args + ["--check"],
                        playbook="setup_cpu_optimization.yml", binds=[tree])
    check(proc.returncode == 0 and recap(proc.stdout).get("changed", 0) > 0,
          "cpu_optimization --check: pending changes show in the recap (%s)" % recap(proc.stdout))
    with open(os.path.join(tree, "proc", "sys", "vm", "swappiness")) as f:
        check(f.read().strip() == "60", "cpu_optimization --check sets nothing")
    proc, scratch, _ = b.play("cpu", "debian12", "a100-nouveau", args, playbook="setup_cpu_optimization.yml",
                              binds=[tree])
    if not check(proc.returncode == 0, "cpu_optimization: the play succeeds (rc %d)" % proc.returncode):
        print(proc.stdout[-4000:], proc.stderr[-1500:])
        return

    def value(rel):
        with open(os.path.join(tree, rel)) as f:
            return f.read().strip()
    check(value("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") == "performance"
          and value("sys/devices/system/cpu/cpu127/cpufreq/scaling_governor") == "performance",
          "cpu_optimization: every CPU's governor is performance (gpuvet tune apply)")
    check(value("proc/sys/vm/swappiness") == "5" and value("sys/kernel/mm/transparent_hugepage/enabled")
          == "[always] madvise never", "cpu_optimization: vm_swappiness=5 (-e) and thp_enabled=always")
    unit = os.path.join(tree, "etc", "systemd", "system", "gpuvet-tune.service")
    unit_text = open(unit).read() if os.path.exists(unit) else ""
    check("--set vm.swappiness=5 --set kernel.numa_balancing=0" in unit_text and "boot.max_cstate" not in unit_text,
          "cpu_optimization: install_perf_service installs gpuvet-tune.service with the runtime settings")
    grub = os.path.join(tree, "etc", "default", "grub.d", "90-gpuvet.cfg")
    check(os.path.exists(grub) and 'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX intel_idle.max_cstate=1 '
          'processor.max_cstate=1"' in open(grub).read(),
          "cpu_optimization: max_cstate=1 goes on the kernel command line (gpuvet tune's GRUB drop-in)")
    again, _, _ = b.play("cpu", "debian12", "a100-nouveau", args, playbook="setup_cpu_optimization.yml", keep=True,
                         binds=[tree])
    check(again.returncode == 0 and recap(again.stdout).get("changed") == 0,
          "cpu_optimization: a second run changes nothing (%s)" % recap(again.stdout))
    p = subprocess.run([os.path.join(b.bin, "gpuvet"), "tune", "revert", "--root", tree], capture_output=True, text=True)
    check(p.returncode == 0 and value("proc/sys/vm/swappiness") == "60" and not os.path.exists(grub),
          "cpu_optimization: gpuvet tune revert undoes it, the GRUB drop-in included")
    proc, _, _ = b.play("cpu-bad", "debian12", "a100-nouveau", ["-e", "cpu_optimization_root=" + tree, "-e", "thp_enabled=sometimes"],
                        playbook="setup_cpu_optimization.yml", binds=[tree])
    check(proc.returncode != 0 and 'thp_enabled is "sometimes": expected always, madvise or never' in proc.stdout,
          "cpu_optimization: a bad thp_enabled stops the play naming it")


def full_deployment(b):
    tree = writable_tree(b, "a100-nouveau", "full-tree")
    proc, scratch, seeded = b.play("full", "ubuntu2204", "a100-nouveau",
                                   ["--check", "--diff", "--skip-tags", "packages,repos", "-e", "cpu_optimization_root=" + tree,
                                    "-e", "ngc_images_for_driver=580"], playbook="full_deployment_optimized.yml",
                                   binds=[tree])
    if not check(proc.returncode == 0, "full_deployment_optimized.yml --check: succeeds (rc %d)" % proc.returncode):
        print(proc.stdout[-4000:], proc.stderr[-1500:])
        return
    for role in ("gpu_baseline", "cpu_optimization", "benchmark_tools", "ngc_images"):
        check("TASK [%s : " % role in proc.stdout, "full_deployment_optimized.yml runs %s" % role)
    check("node: R580 (open modules, native)" in proc.stdout and "nvcr.io/nvidia/pytorch:" in proc.stdout,
          "full_deployment_optimized.yml: plans R580 and a PyTorch NGC image")
    from test_baseline import written
    check(written(scratch, seeded) == [], "full_deployment_optimized.yml --check writes nothing on the node")
    check(open(os.path.join(tree, "proc", "sys", "vm", "swappiness")).read().strip() == "60",
          "full_deployment_optimized.yml --check leaves the CPU settings alone")


def install_driver_script(b):
    base = [INSTALL_DRIVER]
    proc, scratch, _ = b.play("script-native", "ubuntu2204", "a100-nouveau", ["--skip-tags", "packages,repos"],
                              command=base + ["--method", "native", "--auto-detect", "--check", "--"])
    if check(proc.returncode == 0, "install_gpu_driver.sh --method native --auto-detect --check: succeeds (rc %d)"
             % proc.returncode):
        plan = json.load(open(os.path.join(scratch, "results", "localhost", "plan.json")))
        check(plan["method"] == "native" and plan["driver_branch"] == "R580" and plan["platform"] == "ubuntu2204",
              "install_gpu_driver.sh: the plan for localhost is R580, native")
        check("+blacklist nouveau" in proc.stdout, "install_gpu_driver.sh --check: shows the diff")
    else:
        print(proc.stdout[-3000:], proc.stderr[-1000:])
    proc, scratch, _ = b.play("script-container", "debian12", "a100-nouveau", [],
                              command=base + ["--method", "driver-container", "--check", "--"])
    check(proc.returncode != 0 and "NVIDIA publishes no driver container image for debian12" in " ".join(proc.stdout.split()),
          "install_gpu_driver.sh --method driver-container on Debian: stops with the reason")
    p = subprocess.run(base + ["--method", "dkms"], capture_output=True, text=True)
    check(p.returncode == 2 and 'expected native, driver-container or precompiled' in p.stderr,
          "install_gpu_driver.sh --method dkms: exit 2 naming the choices")
    p = subprocess.run(base, capture_output=True, text=True)
    check(p.returncode == 2 and "--method is required" in p.stderr, "install_gpu_driver.sh without --method: exit 2")


PARTS = {"benchmark_tools": benchmark_tools, "ngc_images": ngc_images, "install_driver": install_driver_script,
         "cpu_optimization": cpu_optimization, "full_deployment": full_deployment}


def main():
    # Optional further arguments run some parts (meson runs them as separate tests, so they
    # share its slots with the other tests).
    parts = sys.argv[3:] or list(PARTS)
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        print("test_roles.py: unknown part %s (expected %s)" % (unknown[0], ", ".join(PARTS)))
        return 2
    b, skip = prepare(sys.argv, ["a100-nouveau", "dgx-h100"])
    if skip:
        return skip
    for part in parts:
        PARTS[part](b)
    return finish()


if __name__ == "__main__":
    sys.exit(main())

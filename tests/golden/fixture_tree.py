"""A small sysfs/procfs tree for the golden tests, used when tests/fixtures/mkfixture.py
is absent or fails: two H100 SXM GPUs behind PCIe switch ports (one link downtrained to
Gen4 x8), the nvidia driver bound, and the /proc and /etc files a host gatherer reads.
The values are written in the kernel's formats (trailing newline, 0x-prefixed ids)."""

import os
import struct
import subprocess
import sys

GPUS = [
    # addr, bridge addr, numa node, local cpulist, current speed, current width
    ("0000:1b:00.0", "0000:1a:00.0", 0, "0-15", "32.0 GT/s PCIe", "16"),
    ("0000:3b:00.0", "0000:3a:00.0", 1, "16-31", "16.0 GT/s PCIe", "8"),
]


def write(root, path, content, mode=0o644):
    full = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as f:
        f.write(content.encode() if isinstance(content, str) else content)
    os.chmod(full, mode)
    return full


def symlink(root, path, target):
    full = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    os.symlink(target, full)


def config_space(vendor, device, acs_ctrl=None):
    """4096 bytes of PCI config space: ids at 0, an ACS extended capability at 0x100."""
    cfg = bytearray(4096)
    struct.pack_into("<HH", cfg, 0, vendor, device)
    if acs_ctrl is not None:
        struct.pack_into("<IHH", cfg, 0x100, 0x000D | (1 << 16), 0x005F, acs_ctrl)
    return bytes(cfg)


def pci_device(root, devpath, addr, vendor, device, cls, numa, cpulist, speed, width,
               max_speed="32.0 GT/s PCIe", max_width="16", driver=None, acs_ctrl=None):
    d = f"/sys/devices/{devpath}"
    files = {
        "vendor": f"0x{vendor:04x}\n",
        "device": f"0x{device:04x}\n",
        "class": f"0x{cls:06x}\n",
        "subsystem_vendor": f"0x{vendor:04x}\n",
        "subsystem_device": "0x16c1\n",
        "numa_node": f"{numa}\n",
        "local_cpulist": f"{cpulist}\n",
        "local_cpus": "00000000,0000ffff\n" if numa == 0 else "00000000,ffff0000\n",
        "current_link_speed": f"{speed}\n",
        "current_link_width": f"{width}\n",
        "max_link_speed": f"{max_speed}\n",
        "max_link_width": f"{max_width}\n",
        "aer_dev_correctable": "RxErr 0\nBadTLP 0\nBadDLLP 0\nRollover 0\nTimeout 0\n"
                               "NonFatalErr 0\nCorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR 0\n",
        "aer_dev_nonfatal": "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 0\nCmpltAbrt 0\n"
                            "UnxCmplt 0\nRxOF 0\nMalfTLP 0\nECRC 0\nUnsupReq 0\nACSViol 0\n"
                            "TOTAL_ERR_NONFATAL 0\n",
        "aer_dev_fatal": "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 0\nCmpltAbrt 0\n"
                         "UnxCmplt 0\nRxOF 0\nMalfTLP 0\nECRC 0\nUnsupReq 0\nACSViol 0\n"
                         "TOTAL_ERR_FATAL 0\n",
        "resource": "0x00000000d8000000 0x00000000d8ffffff 0x0000000000040200\n"
                    "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
                    "0x0000380000000000 0x0000381fffffffff 0x000000000014220c\n",
    }
    for name, content in files.items():
        write(root, f"{d}/{name}", content)
    write(root, f"{d}/config", config_space(vendor, device, acs_ctrl))
    depth = devpath.count("/") + 2  # from the device directory up to sys/
    if driver:
        symlink(root, f"{d}/driver", "../" * depth + f"bus/pci/drivers/{driver}")
        os.makedirs(os.path.join(root, f"sys/bus/pci/drivers/{driver}"), exist_ok=True)
    symlink(root, f"/sys/bus/pci/devices/{addr}", "../../.." + f"/devices/{devpath}")
    group = 20 + GPUS_INDEX.get(addr, 0)
    symlink(root, f"{d}/iommu_group", "../" * depth + f"kernel/iommu_groups/{group}")
    os.makedirs(os.path.join(root, f"sys/kernel/iommu_groups/{group}"), exist_ok=True)


GPUS_INDEX = {g[0]: i for i, g in enumerate(GPUS)}


def build(root):
    """Write the small tree under root (which must exist)."""
    for i, (addr, bridge, numa, cpus, speed, width) in enumerate(GPUS):
        host_bridge = f"pci0000:{bridge[5:7]}"
        pci_device(root, f"{host_bridge}/{bridge}", bridge, 0x10b5, 0xc010, 0x060400, numa, cpus,
                   "32.0 GT/s PCIe", "16", driver="pcieport", acs_ctrl=0x001d)
        pci_device(root, f"{host_bridge}/{bridge}/{addr}", addr, 0x10de, 0x2330, 0x030200, numa, cpus,
                   speed, width, driver="nvidia")
        write(root, f"/proc/driver/nvidia/gpus/{addr}/information",
              "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 150\n"
              f"Bus Location: \t {addr[5:]}\nDevice Minor: \t {i}\n")
    write(root, "/proc/driver/nvidia/version",
          "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  "
          "(dvs-builder@U16-I3-B03-4-3)  Tue Mar  5 22:15:33 UTC 2024\n"
          "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n")
    write(root, "/proc/sys/kernel/hostname", "gpu-node-07\n")
    write(root, "/proc/sys/kernel/osrelease", "6.1.0-18-amd64\n")
    write(root, "/proc/version", "Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org) "
          "(gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) "
          "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)\n")
    write(root, "/proc/cmdline", "BOOT_IMAGE=/vmlinuz-6.1.0-18-amd64 root=UUID=0e1c ro quiet "
          "intel_iommu=on iommu=pt\n")
    cpuinfo = ""
    for cpu in range(32):
        cpuinfo += (f"processor\t: {cpu}\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n"
                    "model name\t: Intel(R) Xeon(R) Platinum 8480+\nflags\t\t: fpu vme de pse tsc msr "
                    "pae mce cx8 apic sep mtrr pge mca cmov avx512f\n\n")
    write(root, "/proc/cpuinfo", cpuinfo)
    write(root, "/proc/meminfo", "MemTotal:       2113484800 kB\nMemFree:        2000000000 kB\n"
          "MemAvailable:   2050000000 kB\nHugePages_Total:       0\nHugepagesize:       2048 kB\n")
    write(root, "/proc/modules", "nvidia_uvm 1531904 0 - Live 0x0000000000000000 (PO)\n"
          "nvidia 8568832 1 nvidia_uvm, Live 0x0000000000000000 (PO)\n")
    write(root, "/etc/os-release", 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\n'
          'VERSION_ID="12"\nID=debian\n')
    write(root, "/sys/devices/system/cpu/online", "0-31\n")
    write(root, "/sys/devices/system/cpu/possible", "0-31\n")
    for cpu in range(32):
        write(root, f"/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor", "performance\n")
    for node, cpus in ((0, "0-15"), (1, "16-31")):
        write(root, f"/sys/devices/system/node/node{node}/cpulist", f"{cpus}\n")
    write(root, "/sys/devices/system/node/online", "0-1\n")
    write(root, "/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n")
    write(root, "/sys/class/dmi/id/sys_vendor", "Supermicro\n")
    write(root, "/sys/class/dmi/id/product_name", "SYS-821GE-TNHR\n")


def _fixture_cache(srcdir):
    """tests/fixtures/fixture_cache.py of srcdir, or None where it does not exist."""
    directory = os.path.join(srcdir, "tests", "fixtures")
    if not os.path.exists(os.path.join(directory, "fixture_cache.py")):
        return None
    if directory not in sys.path:
        sys.path.insert(0, directory)
    import fixture_cache
    return fixture_cache


def make_fixtures(srcdir, outdir, first_only=False, writable=False):
    """The machines of the shared fixture generator (tests/fixtures/mkfixture.py, through
    its cache) when it exists and works, else the small tree written into outdir. Returns
    [(root, description)]. The generator's trees are the shared ones, read only, unless
    `writable`: then each is the caller's own (in outdir; give it back with release()), in
    which directories can be renamed within the tree: an overlay with redirects as root,
    else a copy."""
    cache = _fixture_cache(srcdir)
    if cache and writable:
        cache.private_mounts()
    out = []
    if cache:
        for name in fixture_names(os.path.join(srcdir, "tests", "fixtures", "mkfixture.py")):
            try:
                root = cache.path(name)
            except (subprocess.CalledProcessError, OSError):
                continue  # e.g. not root: the generator's /dev/nvidia* nodes need CAP_MKNOD
            if writable:
                root = cache.writable(name, os.path.join(outdir, name), renames=True)
            out.append((root, f"mkfixture.py {name}"))
            if first_only:
                break
    if not out:
        dest = os.path.join(outdir, "small")
        os.makedirs(dest)
        build(dest)
        out.append((dest, "small tree (tests/golden/fixture_tree.py)"))
    return out


def make_fixture(srcdir, outdir):
    """One writable fixture with GPUs: the generator's first machine, or the small tree."""
    return make_fixtures(srcdir, outdir, first_only=True, writable=True)[0]


def release(srcdir, root):
    """Remove a tree make_fixture made."""
    cache = _fixture_cache(srcdir)
    if cache:
        cache.release(root)
    else:
        import shutil
        shutil.rmtree(root, ignore_errors=True)


def fixture_names(gen):
    """Names the generator knows (--list), in its order."""
    r = subprocess.run([sys.executable, gen, "--list"], capture_output=True, text=True)
    return r.stdout.split() if r.returncode == 0 else []

/* PCI devices as sysfs shows them: identity, driver, locality, link, AER, BARs, ACS.
 *
 * Every device under /sys/bus/pci/devices is named (ids, driver); what else is read of a
 * device depends on its role (see struct pci_role in pci.c): everything of a GPU, less of a
 * network adapter and of the bridges above them, nothing more of the rest. Upstream
 * bridges are linked by index so checks can walk from a GPU to its root port. A value that
 * was not or could not be read keeps its "unknown" marker (documented per field) and never
 * a made-up zero. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fsroot;

#define PCI_VENDOR_NVIDIA 0x10de
#define PCI_CLASS_BRIDGE_PCI 0x0604
#define PCI_NUM_BARS 6

/* IORESOURCE_* flags of include/linux/ioport.h that BAR judging needs (a kernel ABI:
 * they are what sysfs "resource" prints in its third column). */
#define PCI_RES_MEM 0x00000200u
#define PCI_RES_PREFETCH 0x00002000u
#define PCI_RES_MEM_64 0x00100000u
#define PCI_RES_DISABLED 0x10000000u
#define PCI_RES_UNSET 0x20000000u

/* NVIDIA's third memory BAR ("BAR3"): 32 MiB on every generation since Fermi. */
#define PCI_GPU_SMALL_BAR_BYTES (32ull << 20)

/* A BAR as the kernel holds it (one line of sysfs "resource"). */
struct pci_bar {
        uint64_t start;       /* 0 when the firmware or kernel gave it no address */
        uint64_t size;        /* bytes; 0 for an unimplemented BAR or a 64-bit BAR's upper half */
        uint64_t flags;       /* PCI_RES_* */
};

/* The groups of a device's fields beyond its ids and driver, read by role. */
enum pci_part {
        PCI_PART_PATH = 1 << 0,  /* sysfs_path resolved, parent */
        PCI_PART_PLACE = 1 << 1, /* iommu_group, numa_node, local_cpulist */
        PCI_PART_LINK = 1 << 2,  /* link speed and width */
        PCI_PART_AER = 1 << 3,   /* aer_* */
        PCI_PART_BARS = 1 << 4,  /* bars */
};

struct pci_dev {
        char addr[16];        /* "0000:1b:00.0" */
        char sysfs_path[512]; /* resolved, root-relative: "/sys/devices/pci0000:00/..." with
                               * PCI_PART_PATH, else "/sys/bus/pci/devices/<addr>" */
        unsigned parts;       /* enum pci_part: which groups of the fields below were read */
        int parent;           /* index of the upstream PCI device, -1 at a host bridge (or
                               * without PCI_PART_PATH) */

        bool have_ids;        /* vendor/device/class readable */
        const char *ids_attr; /* when not: the attribute that failed ("vendor" ...) */
        int ids_errno;        /* and why (ENOENT: absent, EINVAL: not a hex id ...) */
        uint32_t vendor, device, subsys_vendor, subsys_device;
        uint32_t class_code;  /* 24-bit: 0x030200 = 3D controller */
        char name[128];       /* "Mellanox Technologies MT2910 Family [ConnectX-7]" from pci.ids;
                               * filled only for devices a report names (pci.ids costs a few ms
                               * to load), "" otherwise */

        char driver[32];      /* bound driver, "" when none */
        int numa_node;        /* -1 when sysfs says -1 */
        bool have_numa_node;  /* numa_node file present and valid */
        int numa_node_errno;  /* numa_node present but unreadable/garbled (EINVAL), else 0 */
        char local_cpulist[256]; /* "" when unknown; from local_cpulist or local_cpus */
        int iommu_group;      /* -1 when the device has none */

        bool have_link;       /* current/max link speed and width readable */
        unsigned cur_speed_mts, max_speed_mts; /* 16000 = 16 GT/s = Gen4 */
        unsigned cur_width, max_width;
        int link_errno;              /* why the link could not be read (ENODATA: "Unknown", link down) */
        const char *link_bad_attr;   /* which attribute: "current_link_speed" ... (static string) */

        bool have_aer;        /* aer_dev_* counters present */
        uint64_t aer_correctable, aer_nonfatal, aer_fatal;

        bool have_bars;       /* the resource file was read: bars[] holds its first 6 lines */
        struct pci_bar bars[PCI_NUM_BARS];

        /* ACS extended capability, from config space (readable past 256 bytes only by root). */
        enum { PCI_ACS_UNKNOWN, PCI_ACS_ABSENT, PCI_ACS_PRESENT } acs;
        uint16_t acs_cap, acs_ctrl;
        bool acs_read;        /* config space was read (only bridges above GPUs are) */
        /* ATS extended capability of an NVIDIA (Mellanox) NIC function bound to vfio-pci,
         * likewise (read for those only): a ConnectX shows it only with ATS_ENABLED in its
         * firmware; ats_enabled is its control bit. */
        enum { PCI_ATS_UNKNOWN, PCI_ATS_ABSENT, PCI_ATS_PRESENT } ats;
        bool ats_enabled;

        int read_errno;       /* first unexpected read error for this device, 0 if none */
};

struct pci_facts {
        struct pci_dev *devs;
        size_t n;
        int list_errno;       /* 0, or why /sys/bus/pci/devices could not be listed */
        char nvidia_proc_gpus[64][16]; /* addresses listed in /proc/driver/nvidia/gpus */
        size_t n_nvidia_proc_gpus;
};

/* Every PCI function's ids and driver, and each GPU's place and own link (what every report
 * shows): the inventory. The tree adds what checks judge of the GPUs, the NICs and the
 * bridges above them (AER, BARs, the ports' links, ACS, ATS); pci_gather reads both. */
int pci_gather_inventory(struct fsroot *fs, struct pci_facts *ret);
void pci_gather_tree(struct fsroot *fs, struct pci_facts *ret);
int pci_gather(struct fsroot *fs, struct pci_facts *ret);
void pci_facts_done(struct pci_facts *p);

static inline unsigned pci_class_base(const struct pci_dev *d) { return d->class_code >> 16; }
static inline unsigned pci_class_sub(const struct pci_dev *d) { return d->class_code >> 8; }

bool pci_is_nvidia_gpu(const struct pci_facts *p, const struct pci_dev *d);
bool pci_is_nvswitch(const struct pci_dev *d);
bool pci_is_network(const struct pci_dev *d);
/* An NVIDIA (Mellanox, vendor 15b3) network function: ConnectX, BlueField. */
bool pci_is_mellanox_nic(const struct pci_dev *d);
bool pci_is_bridge(const struct pci_dev *d);
const struct pci_dev *pci_find(const struct pci_facts *p, const char *addr);
/* The best link d can train to: its own max_link_speed/width, capped by the port above it
 * (a Gen5 GPU in a Gen4 slot). False when sysfs shows no link. */
/* d's link as it is now (current_link_speed, current_link_width): read again while a copy
 * is in flight, it is the link under load. -ENODATA for "Unknown" (the link is down),
 * -EINVAL for a value that is not a speed or width, else the read's errno. */
int pci_read_link_now(struct fsroot *fs, const struct pci_dev *d, unsigned *ret_mts, unsigned *ret_width);
bool pci_link_best(const struct pci_facts *p, const struct pci_dev *d, unsigned *ret_mts, unsigned *ret_width);

/* The framebuffer aperture of an NVIDIA GPU, found by the BAR layout rather than by its
 * register number. NVIDIA GPUs implement three memory BARs in order: the registers
 * (NVIDIA's "BAR0", 16-32 MiB), the framebuffer aperture ("BAR1", 64-bit prefetchable,
 * the size NVML's BAR1 memory info reports) and a small 64-bit BAR. A 64-bit BAR takes two
 * registers, and sysfs prints its upper half as an all-zero line, so the aperture is
 * register 1 when the register BAR is 32-bit (bare metal) and register 2 when it is 64-bit
 * (as QEMU guests show it). Returns the register index, or -1 when the layout has no
 * second memory BAR (never assigned, or released by the kernel). */
int pci_gpu_aperture(const struct pci_dev *d);

/* Whether a BAR has an address: the kernel marks one it could not place with
 * IORESOURCE_UNSET (start 0, end = size - 1) or DISABLED. */
bool pci_bar_assigned(const struct pci_bar *b);

/* PCIe bandwidth of one direction in GB/s for a link of speed_mts and width lanes
 * (encoding overhead included); 0 when unknown. */
double pci_link_gbps(unsigned speed_mts, unsigned width);

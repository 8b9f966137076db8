/* PCI devices as sysfs shows them: identity, driver, locality, link, AER, BARs, ACS.
 *
 * Every device under /sys/bus/pci/devices is gathered; upstream bridges are linked by
 * index so checks can walk from a GPU to its root port. A value that could not be read
 * keeps its "unknown" marker (documented per field) and never a made-up zero. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fsroot;

#define PCI_VENDOR_NVIDIA 0x10de
#define PCI_CLASS_BRIDGE_PCI 0x0604
#define PCI_NUM_BARS 6

struct pci_dev {
        char addr[16];        /* "0000:1b:00.0" */
        char sysfs_path[512]; /* resolved, root-relative: "/sys/devices/pci0000:00/..." */
        int parent;           /* index of the upstream PCI device, -1 at a host bridge */

        bool have_ids;        /* vendor/device/class readable */
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

        bool have_bars;
        uint64_t bar_bytes[PCI_NUM_BARS];

        /* ACS extended capability, from config space (readable past 256 bytes only by root). */
        enum { PCI_ACS_UNKNOWN, PCI_ACS_ABSENT, PCI_ACS_PRESENT } acs;
        uint16_t acs_cap, acs_ctrl;
        bool acs_read;        /* config space was read (only bridges above GPUs are) */

        int read_errno;       /* first unexpected read error for this device, 0 if none */
};

struct pci_facts {
        struct pci_dev *devs;
        size_t n;
        int list_errno;       /* 0, or why /sys/bus/pci/devices could not be listed */
        char nvidia_proc_gpus[64][16]; /* addresses listed in /proc/driver/nvidia/gpus */
        size_t n_nvidia_proc_gpus;
};

int pci_gather(struct fsroot *fs, struct pci_facts *ret);
void pci_facts_done(struct pci_facts *p);

static inline unsigned pci_class_base(const struct pci_dev *d) { return d->class_code >> 16; }
static inline unsigned pci_class_sub(const struct pci_dev *d) { return d->class_code >> 8; }

bool pci_is_nvidia_gpu(const struct pci_facts *p, const struct pci_dev *d);
bool pci_is_nvswitch(const struct pci_dev *d);
bool pci_is_network(const struct pci_dev *d);
bool pci_is_bridge(const struct pci_dev *d);
const struct pci_dev *pci_find(const struct pci_facts *p, const char *addr);

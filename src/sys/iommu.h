/* IOMMU facts: the IOMMU units the kernel registered, the IOMMU groups and their members,
 * interrupt remapping, and the vfio pieces a passthrough host needs.
 *
 * Read from /sys/class/iommu, /sys/kernel/iommu_groups, /sys/module and /proc/interrupts.
 * Nothing here needs root. A directory that is absent leaves its list empty with errno 0
 * (no IOMMU is "not present", not an error); any other failure keeps the errno. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fsroot;
struct facts;
struct gpu_facts;
struct pci_facts;

/* Intel VT-d extended capability register, bit 3: interrupt remapping supported. */
#define IOMMU_INTEL_ECAP_IR (UINT64_C(1) << 3)

enum iommu_kind {
        IOMMU_KIND_OTHER, /* Arm SMMU, virtio-iommu, ... */
        IOMMU_KIND_INTEL, /* "dmarN": VT-d */
        IOMMU_KIND_AMD,   /* "ivhdN": AMD-Vi */
        _IOMMU_KIND_COUNT,
};

enum iommu_tristate {
        IOMMU_UNKNOWN,
        IOMMU_NO,
        IOMMU_YES,
        _IOMMU_TRISTATE_COUNT,
};

struct iommu_unit {
        char name[64]; /* "dmar0", "ivhd0" */
        enum iommu_kind kind;
        bool have_ecap; /* Intel only: intel-iommu/ecap readable */
        uint64_t ecap;
};

struct iommu_group {
        int id;
        char type[16];  /* "DMA", "DMA-FQ", "identity", "unmanaged", "blocked"; "" when the
                         * kernel has no type file (< 5.11) */
        char **devices; /* member PCI addresses, sorted, NULL-terminated (may be NULL) */
        bool read;      /* type and devices were read: see gather_groups in iommu.c */
};

struct iommu_facts {
        struct iommu_unit *units;
        size_t n_units;
        int units_errno;  /* 0, or why /sys/class/iommu could not be listed (not ENOENT) */

        struct iommu_group *groups;
        size_t n_groups;
        int groups_errno; /* 0, or why /sys/kernel/iommu_groups could not be listed */

        /* Present as a loaded module (/proc/modules) or built in (/sys/module/<name>). */
        bool mod_vfio, mod_vfio_pci, mod_vfio_iommu_type1, mod_iommufd;
        /* /sys/module/vfio_iommu_type1/parameters/allow_unsafe_interrupts */
        enum iommu_tristate allow_unsafe_interrupts;
        /* Interrupts routed through remapping ("IR-PCI-MSI", "IR-IO-APIC" chips in
         * /proc/interrupts): x86 only; UNKNOWN when the file is unreadable. */
        enum iommu_tristate irq_remapping;
};

int iommu_gather(struct fsroot *fs, struct facts *f);
void iommu_facts_done(struct iommu_facts *x);

/* The group with this id, or NULL. */
const struct iommu_group *iommu_find_group(const struct iommu_facts *x, int id);
/* Number of NVIDIA GPUs bound to vfio-pci: more than zero makes this a passthrough host. */
size_t iommu_count_vfio_gpus(const struct gpu_facts *g, const struct pci_facts *p);
/* True when groups show the IOMMU translating DMA on this node (units or groups exist). */
bool iommu_active(const struct iommu_facts *x);

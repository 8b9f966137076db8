/* Virtualisation facts: whether gpuvet runs inside a virtual machine, and which hypervisor.
 *
 * Evidence, strongest first: /sys/hypervisor/type (Xen), the DMI system vendor/product/BIOS
 * vendor (QEMU, VMware, Hyper-V, EC2, GCE ...), the "hypervisor" CPU flag (x86), and the
 * clock sources the kernel offers (kvm-clock, hyperv_clocksource_*, xen) to name the
 * hypervisor behind a bare flag (Firecracker and Cloud Hypervisor guests have no DMI). */
#pragma once

#include <stdbool.h>

struct fsroot;
struct facts;

struct virt_facts {
        bool is_vm;
        char hypervisor[64];   /* "KVM", "VMware", "Microsoft Hyper-V", ...; "" on bare metal */
        char source[160];      /* the file(s) that told us, for evidence */
        char dmi_bios_vendor[128]; /* "" when unknown */
        char xen_type[32];     /* /sys/hypervisor/type, "" when absent */
        char clocksources[256]; /* available_clocksource, "" when unreadable */
};

int virt_gather(struct fsroot *fs, struct facts *f);
void virt_facts_done(struct virt_facts *x);

/* Decide from already-read values (pure; used by virt_gather and the unit tests). */
void virt_detect(const char *sys_vendor, const char *product_name, const char *bios_vendor, const char *xen_type,
                 bool cpu_hypervisor_flag, const char *clocksources, struct virt_facts *ret);

#include "core/array.h"
#include "sys/facts.h"
#include "core/fsroot.h"

#include <stdio.h>
#include <string.h>

#define DMI_DIR "/sys/class/dmi/id"
#define CLOCKSOURCE_FILE "/sys/devices/system/clocksource/clocksource0/available_clocksource"

/* DMI strings virtual machines are known to set; each given field must start with its
 * pattern. Order matters only where two could match. */
static const struct {
        const char *sys_vendor, *product_name, *bios_vendor;
        const char *hypervisor;
} dmi_table[] = {
        {"QEMU", NULL, NULL, "QEMU/KVM"},
        {NULL, "KVM", NULL, "KVM"},
        {NULL, "OpenStack", NULL, "OpenStack (KVM)"},
        {"VMware", NULL, NULL, "VMware"},
        {"Microsoft Corporation", "Virtual Machine", NULL, "Microsoft Hyper-V"},
        {"Amazon EC2", NULL, NULL, "Amazon EC2 (Nitro)"},
        {NULL, "Google Compute Engine", NULL, "Google Compute Engine (KVM)"},
        {"Xen", NULL, NULL, "Xen"},
        {NULL, "HVM domU", NULL, "Xen"},
        {"innotek GmbH", NULL, NULL, "VirtualBox"},
        {"Parallels", NULL, NULL, "Parallels"},
        {"Cloud Hypervisor", NULL, NULL, "Cloud Hypervisor"},
        {"Nutanix", "AHV", NULL, "Nutanix AHV"},
        {NULL, "BHYVE", NULL, "bhyve"},
        {NULL, NULL, "SeaBIOS", "QEMU/KVM"},
};

static const struct {
        const char *token, *hypervisor;
} clock_table[] = {
        {"kvm-clock", "KVM"},
        {"hyperv_clocksource_tsc_page", "Microsoft Hyper-V"},
        {"hyperv_clocksource_msr", "Microsoft Hyper-V"},
        {"xen", "Xen"},
};

/* A NULL pattern matches anything; otherwise the value must start with it. */
static bool field_matches(const char *value, const char *pattern) {
        return !pattern || (value[0] && strncmp(value, pattern, strlen(pattern)) == 0);
}

static bool has_token(const char *list, const char *token) {
        size_t n = strlen(token);
        for (const char *p = list; (p = strstr(p, token)); p += n)
                if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0' || p[n] == '\n'))
                        return true;
        return false;
}

static bool ends_with(const char *s, const char *suffix) {
        size_t ls = strlen(s), lx = strlen(suffix);
        return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

void virt_detect(const char *sys_vendor, const char *product_name, const char *bios_vendor, const char *xen_type,
                 bool cpu_hypervisor_flag, const char *clocksources, struct virt_facts *ret) {
        ret->is_vm = false;
        ret->hypervisor[0] = ret->source[0] = '\0';

        if (xen_type[0]) {
                ret->is_vm = true;
                snprintf(ret->hypervisor, sizeof(ret->hypervisor), "Xen");
                snprintf(ret->source, sizeof(ret->source), "/sys/hypervisor/type");
                return;
        }
        for (size_t i = 0; i < ARRAY_COUNT(dmi_table); i++) {
                if (!field_matches(sys_vendor, dmi_table[i].sys_vendor) ||
                    !field_matches(product_name, dmi_table[i].product_name) ||
                    !field_matches(bios_vendor, dmi_table[i].bios_vendor))
                        continue;
                /* EC2 bare-metal instances ("i3.metal", "c5.metal") keep the Amazon vendor
                 * string: there only the CPU flag can say "VM". */
                if (ends_with(product_name, ".metal") && !cpu_hypervisor_flag)
                        return;
                ret->is_vm = true;
                snprintf(ret->hypervisor, sizeof(ret->hypervisor), "%s", dmi_table[i].hypervisor);
                snprintf(ret->source, sizeof(ret->source), DMI_DIR "/{sys_vendor,product_name,bios_vendor}");
                return;
        }
        if (!cpu_hypervisor_flag)
                return;
        ret->is_vm = true;
        snprintf(ret->hypervisor, sizeof(ret->hypervisor), "unknown hypervisor");
        snprintf(ret->source, sizeof(ret->source), "/proc/cpuinfo (hypervisor flag)");
        for (size_t i = 0; i < ARRAY_COUNT(clock_table); i++)
                if (has_token(clocksources, clock_table[i].token)) {
                        snprintf(ret->hypervisor, sizeof(ret->hypervisor), "%s", clock_table[i].hypervisor);
                        snprintf(ret->source, sizeof(ret->source), "/proc/cpuinfo (hypervisor flag), " CLOCKSOURCE_FILE);
                        break;
                }
}

int virt_gather(struct fsroot *fs, struct facts *f) {
        struct virt_facts *x = &f->virt;
        memset(x, 0, sizeof(*x));
        if (fsroot_read_str(fs, DMI_DIR "/bios_vendor", x->dmi_bios_vendor, sizeof(x->dmi_bios_vendor)) < 0)
                x->dmi_bios_vendor[0] = '\0';
        if (fsroot_read_str(fs, "/sys/hypervisor/type", x->xen_type, sizeof(x->xen_type)) < 0)
                x->xen_type[0] = '\0';
        if (fsroot_read_str(fs, CLOCKSOURCE_FILE, x->clocksources, sizeof(x->clocksources)) < 0)
                x->clocksources[0] = '\0';
        virt_detect(f->host.dmi_sys_vendor, f->host.dmi_product_name, x->dmi_bios_vendor, x->xen_type,
                    f->host.cpu_hypervisor_flag, x->clocksources, x);
        return 0;
}

void virt_facts_done(struct virt_facts *x) { memset(x, 0, sizeof(*x)); }

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "checks/check.h"

/* Root port 00:01.0 above a GPU (01:00.0) and its audio function (01:00.1), all in group 10. */
struct fixture {
        struct facts f;
        struct pci_dev devs[3];
        struct gpu gpu;
        struct iommu_group group;
        struct iommu_unit unit;
};

static char *members[] = {"0000:00:01.0", "0000:01:00.0", "0000:01:00.1", NULL};

static void dev(struct pci_dev *d, const char *addr, uint32_t vendor, uint32_t cls, int parent, const char *driver) {
        snprintf(d->addr, sizeof(d->addr), "%s", addr);
        snprintf(d->sysfs_path, sizeof(d->sysfs_path), "/sys/devices/pci0000:00/%s", addr);
        snprintf(d->driver, sizeof(d->driver), "%s", driver);
        d->have_ids = true;
        d->vendor = vendor;
        d->class_code = cls;
        d->parent = parent;
        d->iommu_group = 10;
}

/* A healthy passthrough host. */
static void setup(struct fixture *x) {
        memset(x, 0, sizeof(*x));
        dev(&x->devs[0], "0000:00:01.0", 0x8086, 0x060400, -1, "pcieport");
        dev(&x->devs[1], "0000:01:00.0", 0x10de, 0x030200, 0, "vfio-pci");
        dev(&x->devs[2], "0000:01:00.1", 0x10de, 0x040300, 0, "vfio-pci");
        x->f.pci.devs = x->devs;
        x->f.pci.n = 3;
        x->gpu.pci_index = 1;
        x->f.gpus.gpus = &x->gpu;
        x->f.gpus.n = 1;
        snprintf(x->unit.name, sizeof(x->unit.name), "dmar0");
        x->unit.kind = IOMMU_KIND_INTEL;
        x->unit.have_ecap = true;
        x->unit.ecap = 0xf050da;
        x->group.id = 10;
        x->group.devices = members;
        snprintf(x->group.type, sizeof(x->group.type), "unmanaged");
        struct iommu_facts *io = &x->f.iommu;
        io->units = &x->unit;
        io->n_units = 1;
        io->groups = &x->group;
        io->n_groups = 1;
        io->mod_vfio = io->mod_vfio_pci = io->mod_vfio_iommu_type1 = true;
        io->allow_unsafe_interrupts = IOMMU_NO;
        io->irq_remapping = IOMMU_YES;
}

static void run(const struct check_info *c, const struct facts *f, struct report *rep, size_t n) {
        report_init(rep);
        c->run(c, f, rep);
        assert_int_equal(rep->n_results, n);
}

static void test_host_healthy(void **state) {
        (void)state;
        struct fixture x;
        setup(&x);
        struct report rep;
        run(&check_passthrough_host, &x.f, &rep, 2);
        const struct result *h = &rep.results[0], *g = &rep.results[1];
        assert_string_equal(h->subject, "host");
        assert_int_equal(h->status, STATUS_PASS);
        assert_string_equal(h->observed, "vfio modules: present; IOMMU on (1 unit, 1 group); interrupt remapping on; "
                                         "allow_unsafe_interrupts=N");
        assert_string_equal(h->expected, "vfio, vfio_pci, vfio_iommu_type1 (or iommufd) present; IOMMU on; interrupt "
                                         "remapping on; allow_unsafe_interrupts=N");
        assert_string_equal(h->summary, "passthrough host ready: 1 GPU on vfio-pci, vfio and IOMMU in place");
        assert_string_equal(g->subject, "0000:01:00.0");
        assert_int_equal(g->status, STATUS_PASS);
        assert_string_equal(g->observed, "group 10: 3 devices, all viable");
        report_done(&rep);

        /* iommufd instead of the type1 backend (Linux >= 6.2). */
        x.f.iommu.mod_vfio_iommu_type1 = false;
        x.f.iommu.mod_iommufd = true;
        run(&check_passthrough_host, &x.f, &rep, 2);
        assert_int_equal(rep.results[0].status, STATUS_PASS);
        report_done(&rep);
}

static void test_host_problems(void **state) {
        (void)state;
        struct fixture x;
        setup(&x);
        struct report rep;
        x.f.iommu.mod_vfio_iommu_type1 = false;
        x.f.iommu.irq_remapping = IOMMU_NO;
        run(&check_passthrough_host, &x.f, &rep, 2);
        const struct result *h = &rep.results[0];
        assert_int_equal(h->status, STATUS_FAIL);
        assert_string_equal(h->observed, "vfio modules: missing vfio_iommu_type1; IOMMU on (1 unit, 1 group); interrupt "
                                         "remapping off; allow_unsafe_interrupts=N");
        assert_string_equal(h->summary, "passthrough host: vfio modules missing (vfio_iommu_type1); interrupt remapping "
                                        "off: vfio refuses to hand devices to a VM");
        assert_non_null(strstr(h->remedy, "sudo modprobe -a vfio vfio_pci vfio_iommu_type1"));
        assert_non_null(strstr(h->remedy, "intremap=off"));
        report_done(&rep);

        /* Hardware without IR (ecap bit 3 clear), accepted through the unsafe switch: warn. */
        x.f.iommu.mod_vfio_iommu_type1 = true;
        x.unit.ecap = 0xf050d2;
        x.f.iommu.allow_unsafe_interrupts = IOMMU_YES;
        run(&check_passthrough_host, &x.f, &rep, 2);
        assert_int_equal(rep.results[0].status, STATUS_WARN);
        report_done(&rep);
        x.f.iommu.allow_unsafe_interrupts = IOMMU_NO;
        run(&check_passthrough_host, &x.f, &rep, 2);
        assert_int_equal(rep.results[0].status, STATUS_FAIL);
        assert_non_null(strstr(rep.results[0].remedy, "ecap IR bit clear"));
        report_done(&rep);

        /* The unsafe switch on a host that has IR: warn, it is not needed. */
        x.f.iommu.irq_remapping = IOMMU_YES;
        x.f.iommu.allow_unsafe_interrupts = IOMMU_YES;
        run(&check_passthrough_host, &x.f, &rep, 2);
        assert_int_equal(rep.results[0].status, STATUS_WARN);
        assert_string_equal(rep.results[0].summary,
                            "passthrough host: allow_unsafe_interrupts=Y: vfio accepts devices without interrupt isolation");
        report_done(&rep);

        /* IOMMU off. */
        x.f.iommu.allow_unsafe_interrupts = IOMMU_NO;
        x.f.iommu.n_units = 0;
        x.f.iommu.n_groups = 0;
        x.devs[1].iommu_group = -1;
        run(&check_passthrough_host, &x.f, &rep, 2);
        assert_int_equal(rep.results[0].status, STATUS_FAIL);
        assert_string_equal(rep.results[1].summary, "0000:01:00.0 is bound to vfio-pci but has no IOMMU group");
        report_done(&rep);
}

static void test_host_dirty_group(void **state) {
        (void)state;
        struct fixture x;
        setup(&x);
        snprintf(x.devs[2].driver, sizeof(x.devs[2].driver), "snd_hda_intel");
        struct report rep;
        run(&check_passthrough_host, &x.f, &rep, 2);
        const struct result *g = &rep.results[1];
        assert_int_equal(g->status, STATUS_FAIL);
        assert_string_equal(g->observed, "group 10: 0000:01:00.1 on snd_hda_intel");
        assert_string_equal(g->summary, "IOMMU group 10 of 0000:01:00.0 holds 1 device on a host driver: the VM cannot start");
        assert_non_null(strstr(g->remedy, "`sudo driverctl set-override 0000:01:00.1 vfio-pci`"));
        report_done(&rep);

        /* An unbound function is viable. */
        x.devs[2].driver[0] = '\0';
        run(&check_passthrough_host, &x.f, &rep, 2);
        assert_int_equal(rep.results[1].status, STATUS_PASS);
        report_done(&rep);
}

static void test_host_skip(void **state) {
        (void)state;
        struct fixture x;
        setup(&x);
        snprintf(x.devs[1].driver, sizeof(x.devs[1].driver), "nvidia");
        struct report rep;
        run(&check_passthrough_host, &x.f, &rep, 1);
        assert_int_equal(rep.results[0].status, STATUS_SKIP);
        assert_string_equal(rep.results[0].summary, "no GPU bound to vfio-pci: not a passthrough host");
        report_done(&rep);
}

static void test_guest(void **state) {
        (void)state;
        struct fixture x;
        setup(&x);
        snprintf(x.devs[1].driver, sizeof(x.devs[1].driver), "nvidia");
        struct report rep;
        run(&check_passthrough_guest, &x.f, &rep, 1);
        assert_int_equal(rep.results[0].status, STATUS_SKIP);
        assert_string_equal(rep.results[0].summary, "not a virtual machine (no hypervisor CPU flag, VM DMI vendor or Xen)");
        report_done(&rep);

        virt_detect("QEMU", "Standard PC (Q35 + ICH9, 2009)", "EFI Development Kit II / OVMF", "", true, "kvm-clock tsc",
                    &x.f.virt);
        run(&check_passthrough_guest, &x.f, &rep, 1);
        const struct result *r = &rep.results[0];
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "QEMU/KVM guest, 1 GPU passed through");
        assert_string_equal(r->summary, "QEMU/KVM guest with 1 GPU; 1 without PCIe link attributes, normal behind an "
                                        "emulated root port");
        report_done(&rep);

        x.devs[1].have_link = true;
        run(&check_passthrough_guest, &x.f, &rep, 1);
        assert_string_equal(rep.results[0].summary, "QEMU/KVM guest with 1 GPU passed through");
        report_done(&rep);

        x.f.gpus.n = 0;
        run(&check_passthrough_guest, &x.f, &rep, 1);
        assert_int_equal(rep.results[0].status, STATUS_SKIP);
        assert_string_equal(rep.results[0].summary, "QEMU/KVM guest with no NVIDIA GPU passed through (a CPU-only VM)");
        report_done(&rep);
}

static void test_virt_detect(void **state) {
        (void)state;
        struct virt_facts v;
        memset(&v, 0, sizeof(v));
        virt_detect("", "", "", "", false, "tsc hpet acpi_pm", &v);
        assert_false(v.is_vm);
        assert_string_equal(v.hypervisor, "");

        virt_detect("Supermicro", "SYS-821GE-TNHR", "American Megatrends International, LLC.", "", false, "tsc", &v);
        assert_false(v.is_vm);

        virt_detect("VMware, Inc.", "VMware7,1", "VMware, Inc.", "", true, "tsc", &v);
        assert_true(v.is_vm);
        assert_string_equal(v.hypervisor, "VMware");

        virt_detect("Microsoft Corporation", "Virtual Machine", "Microsoft Corporation", "", true,
                    "hyperv_clocksource_tsc_page acpi_pm", &v);
        assert_string_equal(v.hypervisor, "Microsoft Hyper-V");
        /* A Surface laptop is no VM. */
        virt_detect("Microsoft Corporation", "Surface Laptop 5", "Microsoft Corporation", "", false, "tsc", &v);
        assert_false(v.is_vm);

        virt_detect("Amazon EC2", "p5.48xlarge", "Amazon EC2", "", true, "kvm-clock tsc", &v);
        assert_string_equal(v.hypervisor, "Amazon EC2 (Nitro)");
        virt_detect("Amazon EC2", "p4d.metal", "Amazon EC2", "", false, "tsc", &v);
        assert_false(v.is_vm);

        virt_detect("Google", "Google Compute Engine", "Google", "", true, "kvm-clock tsc", &v);
        assert_string_equal(v.hypervisor, "Google Compute Engine (KVM)");
        assert_string_equal(v.source, "/sys/class/dmi/id/{sys_vendor,product_name,bios_vendor}");

        virt_detect("", "", "", "xen", true, "xen tsc", &v);
        assert_string_equal(v.hypervisor, "Xen");
        assert_string_equal(v.source, "/sys/hypervisor/type");

        /* Firecracker: no DMI at all, only the CPU flag and kvm-clock. */
        virt_detect("", "", "", "", true, "tsc kvm-clock ", &v);
        assert_true(v.is_vm);
        assert_string_equal(v.hypervisor, "KVM");
        virt_detect("", "", "", "", true, "", &v);
        assert_string_equal(v.hypervisor, "unknown hypervisor");
        assert_string_equal(v.source, "/proc/cpuinfo (hypervisor flag)");
}

/* ConnectX functions on vfio-pci: with ATS, without, unreadable; one on mlx5_core is not judged. */
static void test_nic_ats(void **state) {
        (void)state;
        struct pci_dev devs[4];
        memset(devs, 0, sizeof(devs));
        dev(&devs[0], "0000:ca:00.0", 0x15b3, 0x020700, -1, "vfio-pci");
        devs[0].ats = PCI_ATS_PRESENT;
        devs[0].ats_enabled = true;
        dev(&devs[1], "0000:cb:00.0", 0x15b3, 0x020000, -1, "vfio-pci");
        devs[1].ats = PCI_ATS_ABSENT;
        dev(&devs[2], "0000:cc:00.0", 0x15b3, 0x020000, -1, "vfio-pci");
        dev(&devs[3], "0000:cd:00.0", 0x15b3, 0x020000, -1, "mlx5_core");
        devs[3].ats = PCI_ATS_ABSENT;
        struct facts f;
        memset(&f, 0, sizeof(f));
        f.pci.devs = devs;
        f.pci.n = 4;
        struct report rep;
        run(&check_passthrough_nic_ats, &f, &rep, 3);
        assert_int_equal(rep.results[0].status, STATUS_PASS);
        assert_non_null(strstr(rep.results[0].observed, "enable bit set"));
        assert_int_equal(rep.results[1].status, STATUS_WARN);
        assert_string_equal(rep.results[1].subject, "0000:cb:00.0");
        assert_non_null(strstr(rep.results[1].remedy, "mlxconfig -d 0000:cb:00.0 set ATS_ENABLED=true"));
        assert_int_equal(rep.results[2].status, STATUS_SKIP); /* not root */
        report_done(&rep);

        f.pci.n = 0; /* no NIC on vfio-pci */
        run(&check_passthrough_nic_ats, &f, &rep, 1);
        assert_int_equal(rep.results[0].status, STATUS_SKIP);
        report_done(&rep);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_host_healthy),   cmocka_unit_test(test_host_problems),
                cmocka_unit_test(test_host_dirty_group), cmocka_unit_test(test_host_skip),
                cmocka_unit_test(test_guest),          cmocka_unit_test(test_virt_detect),
                cmocka_unit_test(test_nic_ats),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

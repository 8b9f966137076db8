#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "core/fsroot.h"
#include "tree.h"

/* A root port 00:01.0 with a GPU (01:00.0), its audio function (01:00.1) and a NIC (02:00.0)
 * below; the GPU in IOMMU group 10. */
struct fixture {
        struct facts f;
        struct pci_dev devs[4];
        struct gpu gpu;
        struct iommu_group groups[2];
        struct iommu_unit unit;
};

static void dev(struct pci_dev *d, const char *addr, uint32_t vendor, uint32_t cls, int parent, int group) {
        snprintf(d->addr, sizeof(d->addr), "%s", addr);
        snprintf(d->sysfs_path, sizeof(d->sysfs_path), "/sys/devices/pci0000:00/%s", addr);
        d->have_ids = true;
        d->vendor = vendor;
        d->device = 0x2330;
        d->class_code = cls;
        d->parent = parent;
        d->iommu_group = group;
}

static void setup(struct fixture *x) {
        memset(x, 0, sizeof(*x));
        dev(&x->devs[0], "0000:00:01.0", 0x8086, 0x060400, -1, 10);
        dev(&x->devs[1], "0000:01:00.0", 0x10de, 0x030200, 0, 10);
        dev(&x->devs[2], "0000:01:00.1", 0x10de, 0x040300, 0, 10);
        dev(&x->devs[3], "0000:02:00.0", 0x15b3, 0x020000, 0, 11);
        snprintf(x->devs[1].driver, sizeof(x->devs[1].driver), "nvidia");
        x->f.pci.devs = x->devs;
        x->f.pci.n = 4;
        x->gpu.pci_index = 1;
        x->f.gpus.gpus = &x->gpu;
        x->f.gpus.n = 1;
        snprintf(x->unit.name, sizeof(x->unit.name), "dmar0");
        x->unit.kind = IOMMU_KIND_INTEL;
        snprintf(x->f.host.cpu_vendor, sizeof(x->f.host.cpu_vendor), "GenuineIntel");
}

static char *members_clean[] = {"0000:00:01.0", "0000:01:00.0", "0000:01:00.1", NULL};
static char *members_nic[] = {"0000:01:00.0", "0000:01:00.1", "0000:02:00.0", NULL};
static char *members_alone[] = {"0000:01:00.0", NULL};
static char *members_other[] = {"0000:02:00.0", NULL};

/* IOMMU on: one VT-d unit, group 10 (the GPU's) and group 11 of the given types. */
static void iommu_on(struct fixture *x, const char *type, char **gpu_members) {
        x->f.iommu.units = &x->unit;
        x->f.iommu.n_units = 1;
        x->groups[0].id = 10;
        snprintf(x->groups[0].type, sizeof(x->groups[0].type), "%s", type);
        x->groups[0].devices = gpu_members;
        x->groups[1].id = 11;
        snprintf(x->groups[1].type, sizeof(x->groups[1].type), "%s", type);
        x->groups[1].devices = members_other;
        x->f.iommu.groups = x->groups;
        x->f.iommu.n_groups = 2;
}

static const struct result *run_one(const struct check_info *c, const struct facts *f, struct report *rep, size_t idx) {
        report_init(rep);
        c->run(c, f, rep);
        assert_true(rep->n_results > idx);
        return &rep->results[idx];
}

static void test_enabled_off_bare_metal(void **state) {
        (void)state;
        struct fixture x;
        setup(&x);
        x.f.host.cmdline = "BOOT_IMAGE=/vmlinuz root=/dev/sda1";
        for (size_t i = 0; i < 4; i++)
                x.devs[i].iommu_group = -1;
        struct report rep;
        const struct result *r = run_one(&check_iommu_enabled, &x.f, &rep, 0);
        assert_int_equal(rep.n_results, 1);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->subject, "host");
        assert_string_equal(r->observed, "off: no /sys/class/iommu units, 0 groups; cmdline: no IOMMU options");
        assert_string_equal(r->expected, "IOMMU off, or on with iommu=pt (passthrough) for host-owned GPUs");
        report_done(&rep);
}

static void test_enabled_translated_warns(void **state) {
        (void)state;
        struct fixture x;
        setup(&x);
        x.f.host.cmdline = "root=/dev/sda1 intel_iommu=on";
        iommu_on(&x, "DMA-FQ", members_clean);
        struct report rep;
        const struct result *r = run_one(&check_iommu_enabled, &x.f, &rep, 0);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->observed,
                            "on: 1 Intel VT-d unit, 2 groups; DMA translation (group 10 type DMA-FQ); cmdline: intel_iommu=on");
        assert_non_null(strstr(r->remedy, "iommu=pt"));
        report_done(&rep);
}

static void test_enabled_passthrough_mode(void **state) {
        (void)state;
        struct fixture x;
        setup(&x);
        x.f.host.cmdline = "intel_iommu=on iommu=pt";
        iommu_on(&x, "identity", members_clean);
        struct report rep;
        const struct result *r = run_one(&check_iommu_enabled, &x.f, &rep, 0);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed,
                            "on: 1 Intel VT-d unit, 2 groups; passthrough (group 10 type identity); cmdline: "
                            "intel_iommu=on iommu=pt");
        report_done(&rep);

        /* A kernel without group type files (< 5.11): the command line decides. */
        iommu_on(&x, "", members_clean);
        r = run_one(&check_iommu_enabled, &x.f, &rep, 0);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "on: 1 Intel VT-d unit, 2 groups; passthrough (iommu=pt on the command line); "
                                         "cmdline: intel_iommu=on iommu=pt");
        report_done(&rep);
        x.f.host.cmdline = "intel_iommu=on";
        r = run_one(&check_iommu_enabled, &x.f, &rep, 0);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->observed, "on: 1 Intel VT-d unit, 2 groups; DMA translation (kernel default: no "
                                         "iommu=pt); cmdline: intel_iommu=on");
        report_done(&rep);
}

static void test_enabled_vfio_host(void **state) {
        (void)state;
        struct fixture x;
        setup(&x);
        snprintf(x.devs[1].driver, sizeof(x.devs[1].driver), "vfio-pci");
        x.f.host.cmdline = "intel_iommu=off";
        struct report rep;
        const struct result *r = run_one(&check_iommu_enabled, &x.f, &rep, 0);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->summary, "IOMMU off on a passthrough host: vfio-pci cannot isolate its GPUs");
        assert_string_equal(r->expected, "IOMMU on (GPUs bound to vfio-pci need it)");
        assert_non_null(strstr(r->remedy, "intel_iommu=on"));
        report_done(&rep);

        /* Full translation is right for a passthrough host: no warning. */
        x.f.host.cmdline = "intel_iommu=on";
        iommu_on(&x, "unmanaged", members_alone);
        snprintf(x.groups[1].type, sizeof(x.groups[1].type), "DMA");
        r = run_one(&check_iommu_enabled, &x.f, &rep, 0);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "on: 1 Intel VT-d unit, 2 groups; host devices in DMA translation (group 11 "
                                         "type DMA); cmdline: intel_iommu=on");
        report_done(&rep);
}

static void test_enabled_vm_and_errors(void **state) {
        (void)state;
        struct fixture x;
        setup(&x);
        x.f.virt.is_vm = true;
        snprintf(x.f.virt.hypervisor, sizeof(x.f.virt.hypervisor), "KVM");
        struct report rep;
        const struct result *r = run_one(&check_iommu_enabled, &x.f, &rep, 0);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "KVM guest without a virtual IOMMU: DMA isolation is the host's job");
        assert_string_equal(r->observed, "off: no /sys/class/iommu units, 0 groups; cmdline: unknown (/proc/cmdline unreadable)");
        report_done(&rep);

        x.f.iommu.groups_errno = EACCES;
        r = run_one(&check_iommu_enabled, &x.f, &rep, 0);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->summary, "cannot list /sys/kernel/iommu_groups: Permission denied");
        report_done(&rep);
}

static void test_groups_clean(void **state) {
        (void)state;
        struct fixture x;
        setup(&x);
        iommu_on(&x, "identity", members_clean);
        struct report rep;
        const struct result *r = run_one(&check_iommu_gpu_groups, &x.f, &rep, 0);
        assert_int_equal(rep.n_results, 1);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->subject, "0000:01:00.0");
        assert_string_equal(r->observed, "group 10: 0000:00:01.0 (bridge), 0000:01:00.1 (same device)");
        assert_string_equal(r->expected, "group 10 holds only the GPU, its own functions and PCI bridges");
        report_done(&rep);

        iommu_on(&x, "identity", members_alone);
        r = run_one(&check_iommu_gpu_groups, &x.f, &rep, 0);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "group 10: GPU alone");
        assert_string_equal(r->summary, "GPU is isolated in IOMMU group 10");
        report_done(&rep);
}

static void test_groups_shared(void **state) {
        (void)state;
        struct fixture x;
        setup(&x);
        iommu_on(&x, "identity", members_nic);
        struct report rep;
        /* Bare metal: sharing is reported, not judged. */
        const struct result *r = run_one(&check_iommu_gpu_groups, &x.f, &rep, 0);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "group 10: 0000:01:00.1 (same device), 0000:02:00.0 (network)");
        assert_string_equal(r->summary, "IOMMU group 10 shared with 1 unrelated device: harmless without passthrough, "
                                        "but this GPU could not be passed through alone");
        report_done(&rep);

        /* The device to move is named when pci.ids knows it. */
        struct pci_dev *nic = (struct pci_dev *)pci_find(&x.f.pci, "0000:02:00.0");
        snprintf(nic->name, sizeof(nic->name), "Intel Corporation Ethernet Controller X710 for 10GbE SFP+");
        r = run_one(&check_iommu_gpu_groups, &x.f, &rep, 0);
        assert_string_equal(r->observed, "group 10: 0000:01:00.1 (same device), 0000:02:00.0 (network: Intel Corporation "
                                         "Ethernet Controller X710 for 10GbE SFP+)");
        report_done(&rep);

        snprintf(x.devs[1].driver, sizeof(x.devs[1].driver), "vfio-pci");
        r = run_one(&check_iommu_gpu_groups, &x.f, &rep, 0);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->summary, "IOMMU group 10 also holds 1 unrelated device: the GPU cannot be passed through alone");
        assert_non_null(r->remedy);
        report_done(&rep);
}

static void test_groups_skips(void **state) {
        (void)state;
        struct fixture x;
        setup(&x);
        struct report rep;
        const struct result *r = run_one(&check_iommu_gpu_groups, &x.f, &rep, 0);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "no IOMMU groups in /sys/kernel/iommu_groups (IOMMU off)");
        report_done(&rep);

        iommu_on(&x, "DMA", NULL);
        r = run_one(&check_iommu_gpu_groups, &x.f, &rep, 0);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->summary, "cannot list the members of IOMMU group 10 (/sys/kernel/iommu_groups/10/devices)");
        report_done(&rep);

        x.devs[1].iommu_group = -1;
        r = run_one(&check_iommu_gpu_groups, &x.f, &rep, 0);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "0000:01:00.0 has no IOMMU group (no iommu_group link)");
        report_done(&rep);

        x.f.gpus.n = 0;
        r = run_one(&check_iommu_gpu_groups, &x.f, &rep, 0);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "no NVIDIA GPU on the PCI bus");
        report_done(&rep);
}

/* ---- the gatherer on a tiny tree ---- */

static void test_gather(void **state) {
        (void)state;
        char *root = tree_new("iommu");
        tree_put(root, "/sys/class/iommu/dmar0/intel-iommu/ecap", "f050da\n");
        tree_put(root, "/sys/class/iommu/dmar1/intel-iommu/ecap", "garbage\n");
        tree_put(root, "/sys/kernel/iommu_groups/12/type", "identity\n");
        tree_put(root, "/sys/kernel/iommu_groups/12/devices/0000:1b:00.0", "");
        tree_put(root, "/sys/kernel/iommu_groups/12/devices/0000:1b:00.1", "");
        tree_put(root, "/sys/kernel/iommu_groups/3/devices/0000:00:1f.0", "");
        tree_put(root, "/sys/kernel/iommu_groups/notanumber/type", "DMA\n");
        tree_put(root, "/sys/module/vfio/refcnt", "0\n");
        tree_put(root, "/sys/module/vfio_iommu_type1/parameters/allow_unsafe_interrupts", "N\n");
        tree_put(root, "/proc/interrupts", "           CPU0\n 24:   0  IR-PCI-MSI 512000-edge  ahci\n");

        struct fsroot *fs;
        assert_int_equal(fsroot_open(root, &fs), 0);
        struct facts f;
        memset(&f, 0, sizeof(f));
        assert_int_equal(iommu_gather(fs, &f), 0);
        const struct iommu_facts *x = &f.iommu;
        assert_int_equal(x->n_units, 2);
        assert_string_equal(x->units[0].name, "dmar0");
        assert_int_equal(x->units[0].kind, IOMMU_KIND_INTEL);
        assert_true(x->units[0].have_ecap);
        assert_int_equal(x->units[0].ecap, 0xf050da);
        assert_true(x->units[0].ecap & IOMMU_INTEL_ECAP_IR);
        assert_false(x->units[1].have_ecap);
        assert_int_equal(x->n_groups, 2);
        assert_int_equal(x->groups[0].id, 3);
        assert_string_equal(x->groups[0].type, "");
        assert_int_equal(x->groups[1].id, 12);
        assert_string_equal(x->groups[1].type, "identity");
        assert_string_equal(x->groups[1].devices[0], "0000:1b:00.0");
        assert_string_equal(x->groups[1].devices[1], "0000:1b:00.1");
        assert_null(x->groups[1].devices[2]);
        assert_true(x->mod_vfio);
        assert_false(x->mod_vfio_pci);
        assert_true(x->mod_vfio_iommu_type1);
        assert_int_equal(x->allow_unsafe_interrupts, IOMMU_NO);
        assert_int_equal(x->irq_remapping, IOMMU_YES);
        assert_true(iommu_active(x));
        iommu_facts_done(&f.iommu);
        fsroot_free(fs);
        tree_remove(root);

        /* An empty tree: no IOMMU, nothing unknown turned into a value. */
        char *empty = tree_new("iommu");
        assert_int_equal(fsroot_open(empty, &fs), 0);
        memset(&f, 0, sizeof(f));
        assert_int_equal(iommu_gather(fs, &f), 0);
        assert_int_equal(f.iommu.n_units, 0);
        assert_int_equal(f.iommu.n_groups, 0);
        assert_int_equal(f.iommu.units_errno, 0);
        assert_int_equal(f.iommu.groups_errno, 0);
        assert_false(iommu_active(&f.iommu));
        assert_int_equal(f.iommu.allow_unsafe_interrupts, IOMMU_UNKNOWN);
        assert_int_equal(f.iommu.irq_remapping, IOMMU_UNKNOWN);
        iommu_facts_done(&f.iommu);
        fsroot_free(fs);
        tree_remove(empty);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_enabled_off_bare_metal),
                cmocka_unit_test(test_enabled_translated_warns),
                cmocka_unit_test(test_enabled_passthrough_mode),
                cmocka_unit_test(test_enabled_vfio_host),
                cmocka_unit_test(test_enabled_vm_and_errors),
                cmocka_unit_test(test_groups_clean),
                cmocka_unit_test(test_groups_shared),
                cmocka_unit_test(test_groups_skips),
                cmocka_unit_test(test_gather),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

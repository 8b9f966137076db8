#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "checks/check.h"

#define GIB (UINT64_C(1) << 30)
#define MIB (UINT64_C(1) << 20)

/* Root port 00:01.0 -> switch upstream 01:00.0 -> switch downstream 02:00.0 -> GPU 03:00.0. */
struct fixture {
        struct facts f;
        struct pci_dev devs[5];
        struct gpu gpu;
        struct gpu_model model;
};

static void dev(struct pci_dev *d, const char *addr, uint32_t vendor, uint32_t cls, int parent) {
        snprintf(d->addr, sizeof(d->addr), "%s", addr);
        snprintf(d->sysfs_path, sizeof(d->sysfs_path), "/sys/devices/pci0000:00/%s", addr);
        d->have_ids = true;
        d->vendor = vendor;
        d->class_code = cls;
        d->parent = parent;
        d->iommu_group = -1;
        d->acs = PCI_ACS_UNKNOWN;
}

static void setup(struct fixture *x) {
        memset(x, 0, sizeof(*x));
        dev(&x->devs[0], "0000:00:01.0", 0x8086, 0x060400, -1);
        dev(&x->devs[1], "0000:01:00.0", 0x1000, 0x060400, 0);
        dev(&x->devs[2], "0000:02:00.0", 0x1000, 0x060400, 1);
        dev(&x->devs[3], "0000:03:00.0", 0x10de, 0x030200, 2);
        dev(&x->devs[4], "0000:04:00.0", 0x8086, 0x010802, -1);
        x->f.pci.devs = x->devs;
        x->f.pci.n = 5;
        x->gpu.pci_index = 3;
        x->f.gpus.gpus = &x->gpu;
        x->f.gpus.n = 1;
        x->model.name = "NVIDIA H100 80GB HBM3";
        x->model.datacenter = true;
        x->model.memory_gb = 80;
}

static const struct result *run_one(const struct check_info *c, const struct facts *f, struct report *rep) {
        report_init(rep);
        c->run(c, f, rep);
        assert_int_equal(rep->n_results, 1);
        return &rep->results[0];
}

static void aer(struct pci_dev *d, uint64_t cor, uint64_t nonfatal, uint64_t fatal) {
        d->have_aer = true;
        d->aer_correctable = cor;
        d->aer_nonfatal = nonfatal;
        d->aer_fatal = fatal;
}

static void test_aer(void **state) {
        (void)state;
        struct fixture x;
        setup(&x);
        struct report rep;
        const struct result *r = run_one(&check_pcie_aer, &x.f, &rep);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "the kernel exposes no AER counters for 0000:03:00.0 (no aer_dev_* files: AER off, "
                                        "firmware-first error handling, a VM, or Linux < 4.17)");
        report_done(&rep);

        x.devs[3].read_errno = 22;
        r = run_one(&check_pcie_aer, &x.f, &rep);
        assert_int_equal(r->status, STATUS_ERROR);
        report_done(&rep);
        x.devs[3].read_errno = 0;

        aer(&x.devs[3], 0, 0, 0);
        aer(&x.devs[2], 0, 0, 0);
        r = run_one(&check_pcie_aer, &x.f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "GPU 0000:03:00.0: correctable 0, non-fatal 0, fatal 0; 1 bridge above: no errors");
        assert_string_equal(r->expected, "0 errors of every kind since boot");
        report_done(&rep);

        aer(&x.devs[2], 7, 0, 0);
        r = run_one(&check_pcie_aer, &x.f, &rep);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->observed, "GPU 0000:03:00.0: correctable 0, non-fatal 0, fatal 0; bridge 0000:02:00.0: "
                                         "correctable 7, non-fatal 0, fatal 0");
        assert_non_null(r->remedy);
        report_done(&rep);

        aer(&x.devs[3], 0, 1, 0);
        r = run_one(&check_pcie_aer, &x.f, &rep);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->summary, "uncorrectable PCIe errors logged on the path of 0000:03:00.0");
        report_done(&rep);

        aer(&x.devs[3], 0, 0, 2);
        aer(&x.devs[2], 0, 0, 0);
        r = run_one(&check_pcie_aer, &x.f, &rep);
        assert_int_equal(r->status, STATUS_FAIL);
        report_done(&rep);
}

static void acs(struct pci_dev *d, uint16_t ctrl) {
        d->acs = PCI_ACS_PRESENT;
        d->acs_cap = 0x005f;
        d->acs_ctrl = ctrl;
}

static void test_link_read_errors(void **state) {
        (void)state;
        struct fixture x;
        setup(&x);
        struct report rep;
        const struct result *r = run_one(&check_pcie_link_speed, &x.f, &rep);
        assert_int_equal(r->status, STATUS_SKIP);
        report_done(&rep);

        x.devs[3].link_errno = EINVAL;
        x.devs[3].link_bad_attr = "current_link_speed";
        r = run_one(&check_pcie_link_width, &x.f, &rep);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->summary, "cannot read current_link_speed of 0000:03:00.0: not a link speed/width value");
        assert_string_equal(r->evidence[0].value, "/sys/devices/pci0000:00/0000:03:00.0/current_link_speed");
        report_done(&rep);

        x.devs[3].link_errno = ENODATA;
        r = run_one(&check_pcie_link_speed, &x.f, &rep);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->summary, "current_link_speed of 0000:03:00.0 reads \"Unknown\": the link is down");
        assert_non_null(strstr(r->remedy, "Xid 79"));
        report_done(&rep);
}

static void test_acs(void **state) {
        (void)state;
        struct fixture x;
        setup(&x);
        struct report rep;
        const struct result *r = run_one(&check_pcie_acs, &x.f, &rep);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "needs root to read PCIe extended config space "
                                        "(/sys/devices/pci0000:00/0000:02:00.0/config past 256 bytes)");
        report_done(&rep);

        /* Bare metal, two GPUs: redirect on the switch port is a warning. */
        x.f.gpus.n = 1;
        acs(&x.devs[2], 0x001d);
        acs(&x.devs[1], 0x0000);
        x.devs[0].acs = PCI_ACS_ABSENT;
        struct gpu two[2] = {{.pci_index = 3}, {.pci_index = 3}};
        x.f.gpus.gpus = two;
        x.f.gpus.n = 2;
        report_init(&rep);
        check_pcie_acs.run(&check_pcie_acs, &x.f, &rep);
        assert_int_equal(rep.n_results, 2);
        r = &rep.results[0];
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->observed, "0000:02:00.0 ACS ctrl 0x001d (SV RR CR UF); 0000:01:00.0 ACS ctrl 0x0000 (none); "
                                         "0000:00:01.0 no ACS");
        assert_string_equal(r->expected, "no P2P redirect (RR CR EC) on the switch ports above the GPU (bare metal)");
        assert_non_null(strstr(r->remedy, "setpci -s <bridge> ECAP_ACS+0x6.w=0000` for each of: 0000:02:00.0 "));
        report_done(&rep);

        /* Redirect on the root port alone is how the kernel leaves it with the IOMMU on:
         * peers below the switch still meet there, so it is not judged. */
        acs(&x.devs[2], 0x0000);
        acs(&x.devs[0], 0x001d);
        report_init(&rep);
        check_pcie_acs.run(&check_pcie_acs, &x.f, &rep);
        assert_int_equal(rep.results[0].status, STATUS_PASS);
        report_done(&rep);
        acs(&x.devs[2], 0x001d);
        x.devs[0].acs = PCI_ACS_ABSENT;

        /* One GPU and no NIC: nothing to slow down. */
        x.f.gpus.gpus = &x.gpu;
        x.f.gpus.n = 1;
        r = run_one(&check_pcie_acs, &x.f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        report_done(&rep);

        acs(&x.devs[2], 0x0001);
        r = run_one(&check_pcie_acs, &x.f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->summary, "no ACS redirect on the switch ports above 0000:03:00.0: peers below a switch meet there");
        report_done(&rep);

        /* A passthrough host wants redirect everywhere. */
        snprintf(x.devs[3].driver, sizeof(x.devs[3].driver), "vfio-pci");
        r = run_one(&check_pcie_acs, &x.f, &rep);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->summary, "3 bridges above 0000:03:00.0 without ACS redirect: the devices below are not "
                                        "isolated from each other");
        report_done(&rep);
        acs(&x.devs[0], 0x001d);
        acs(&x.devs[1], 0x001d);
        acs(&x.devs[2], 0x001d);
        r = run_one(&check_pcie_acs, &x.f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        report_done(&rep);

        /* A guest: emulated bridges. */
        x.devs[3].driver[0] = '\0';
        x.f.virt.is_vm = true;
        snprintf(x.f.virt.hypervisor, sizeof(x.f.virt.hypervisor), "QEMU/KVM");
        r = run_one(&check_pcie_acs, &x.f, &rep);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "QEMU/KVM guest: the bridges above 0000:03:00.0 are emulated");
        report_done(&rep);

        x.devs[3].parent = -1;
        r = run_one(&check_pcie_acs, &x.f, &rep);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "no PCIe bridge above 0000:03:00.0 (root bus device)");
        report_done(&rep);
}

#define MEM32 (PCI_RES_MEM | 0x40000u)                                   /* 0x40200 */
#define MEM64_PREF (PCI_RES_MEM | PCI_RES_PREFETCH | PCI_RES_MEM_64 | 0x40000u | 0xcu) /* 0x14220c */

static void bar(struct pci_dev *d, int reg, uint64_t start, uint64_t size, uint64_t flags) {
        d->bars[reg] = (struct pci_bar){.start = start, .size = size, .flags = flags};
}

/* Bare metal (lspci of an HGX H100): 32-bit registers at 0, the aperture at 1-2, the small
 * 64-bit BAR at 3-4. bar1 = 0: the aperture's register is left without an address. */
static void bars(struct pci_dev *d, uint64_t bar1) {
        memset(d->bars, 0, sizeof(d->bars));
        d->have_bars = true;
        bar(d, 0, 0xfa000000, 16 * MIB, MEM32);
        if (bar1)
                bar(d, 1, 0x2000000000000, bar1, MEM64_PREF);
        else
                bar(d, 1, 0, 128 * GIB, MEM64_PREF | PCI_RES_UNSET);
        bar(d, 3, 0x2002000000000, 32 * MIB, MEM64_PREF);
}

static void test_bar1(void **state) {
        (void)state;
        struct fixture x;
        setup(&x);
        struct report rep;
        const struct result *r = run_one(&check_pcie_bar1, &x.f, &rep);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "BAR sizes of 0000:03:00.0 unknown: /sys/devices/pci0000:00/0000:03:00.0/resource "
                                        "absent or unparsable");
        report_done(&rep);

        x.gpu.model = &x.model;
        bars(&x.devs[3], 128 * GIB);
        r = run_one(&check_pcie_bar1, &x.f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "BAR1 128 GiB, GPU memory 80 GiB");
        assert_string_equal(r->expected, "BAR1 >= GPU memory (80 GiB): Above 4G decoding / Resizable BAR on");
        assert_string_equal(r->summary, "BAR1 128 GiB covers the GPU memory: Above 4G decoding / Resizable BAR on");
        report_done(&rep);

        bars(&x.devs[3], 256 * MIB);
        r = run_one(&check_pcie_bar1, &x.f, &rep);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->observed, "BAR1 256 MiB, GPU memory 80 GiB");
        assert_non_null(strstr(r->remedy, "Above 4G Decoding"));
        report_done(&rep);

        x.model.datacenter = false;
        r = run_one(&check_pcie_bar1, &x.f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        report_done(&rep);

        bars(&x.devs[3], 0);
        r = run_one(&check_pcie_bar1, &x.f, &rep);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->observed, "BAR1 (register 1) of 128 GiB has no address, GPU memory 80 GiB");
        report_done(&rep);

        /* The aperture's line cleared by a failed assignment: the small BAR is not taken for it. */
        memset(&x.devs[3].bars[1], 0, sizeof(x.devs[3].bars[1]));
        r = run_one(&check_pcie_bar1, &x.f, &rep);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->observed, "no framebuffer aperture among the BARs, GPU memory 80 GiB");
        report_done(&rep);

        /* Unknown model: any aperture past the legacy 256 MiB shows Above 4G decoding on. */
        x.gpu.model = NULL;
        bars(&x.devs[3], 32 * GIB);
        r = run_one(&check_pcie_bar1, &x.f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "BAR1 32 GiB");
        assert_string_equal(r->expected, "BAR1 > 256 MiB: Above 4G decoding / Resizable BAR on");
        report_done(&rep);

        x.gpu.model = &x.model;
        bars(&x.devs[3], 64 * GIB);
        r = run_one(&check_pcie_bar1, &x.f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->summary, "BAR1 64 GiB: Above 4G decoding on; the aperture maps part of the 80 GiB of memory");
        report_done(&rep);
}

/* The H100 SXM passed through to a QEMU guest (sysfs resource captured on driver 580.159.04,
 * tests/fixtures/captured/SOURCES.md): the register BAR is 64-bit, so the 128 GiB aperture
 * is register 2 and register 1 is the registers' upper half. It was reported "not assigned". */
static void test_bar1_layout_64bit_registers(void **state) {
        (void)state;
        struct fixture x;
        setup(&x);
        x.gpu.model = &x.model;
        struct pci_dev *d = &x.devs[3];
        d->have_bars = true;
        bar(d, 0, 0x102002000000, 16 * MIB, MEM64_PREF);
        bar(d, 2, 0x100000000000, 128 * GIB, MEM64_PREF);
        bar(d, 4, 0x102000000000, 32 * MIB, MEM64_PREF);
        assert_int_equal(pci_gpu_aperture(d), 2);
        struct report rep;
        const struct result *r = run_one(&check_pcie_bar1, &x.f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "BAR1 128 GiB, GPU memory 80 GiB");
        report_done(&rep);

        /* A layout we cannot read, but NVML reports the aperture the driver mapped. */
        memset(d->bars, 0, sizeof(d->bars));
        struct nvml_gpu g;
        memset(&g, 0, sizeof(g));
        g.pci_bus_id.state = NV_OK;
        snprintf(g.pci_bus_id.v, sizeof(g.pci_bus_id.v), "0000:03:00.0");
        g.bar1_total_bytes.state = NV_OK;
        g.bar1_total_bytes.v = 128 * GIB;
        x.f.nvml.gpus = &g;
        x.f.nvml.n_gpus = 1;
        r = run_one(&check_pcie_bar1, &x.f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "BAR1 128 GiB, GPU memory 80 GiB");
        report_done(&rep);

        /* NVML's size also stands in when the resource file is missing. */
        d->have_bars = false;
        r = run_one(&check_pcie_bar1, &x.f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        report_done(&rep);
}

static void set_link(struct pci_dev *d, unsigned cur_mts, unsigned cur_w, unsigned max_mts, unsigned max_w) {
        d->have_link = true;
        d->cur_speed_mts = cur_mts;
        d->cur_width = cur_w;
        d->max_speed_mts = max_mts;
        d->max_width = max_w;
}

/* Width and speed are judged against what the slot gives: the lesser of the GPU's and its
 * upstream port's maximum. An x16 card in a slot wired x8 is the slot's doing, not missing
 * lanes; a Gen5 card under a Gen4 port likewise. */
static void test_link_vs_slot(void **state) {
        (void)state;
        struct fixture x;
        setup(&x);
        struct pci_dev *gpu = &x.devs[3], *port = &x.devs[2];
        set_link(gpu, 32000, 8, 32000, 16);
        set_link(port, 32000, 8, 32000, 8);
        struct report rep;
        const struct result *r = run_one(&check_pcie_link_width, &x.f, &rep);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->summary, "slot limits the GPU to x8 of its x16 (now Gen5 x8): 50% of the host bandwidth");
        assert_string_equal(r->observed, "Gen5 x8");
        assert_string_equal(r->expected, "x8 (the slot's width)");
        assert_null(strstr(r->remedy, "Reseat"));
        report_done(&rep);

        /* The same card trained at x4 in that x8 slot: lanes missing, judged against x8. */
        set_link(gpu, 32000, 4, 32000, 16);
        r = run_one(&check_pcie_link_width, &x.f, &rep);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->summary, "link trained at x4 of the x8 its slot gives (now Gen5 x4): 50% of the lanes "
                                        "are missing");
        report_done(&rep);

        /* The same x4 link seen from a VM guest: the platform's wiring, no physical remedy. */
        x.f.virt.is_vm = true;
        snprintf(x.f.virt.hypervisor, sizeof(x.f.virt.hypervisor), "KVM");
        r = run_one(&check_pcie_link_width, &x.f, &rep);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->summary, "the GPU's link in this KVM guest is x4 of the card's x16 (now Gen5 x4): 16 of "
                                        "63 GB/s per direction at Gen5; the platform wires it so");
        assert_null(strstr(r->remedy, "Reseat"));
        report_done(&rep);
        x.f.virt.is_vm = false;
        x.f.virt.hypervisor[0] = '\0';

        /* A Gen5 GPU under a Gen4 switch port, running at Gen4. */
        set_link(gpu, 16000, 16, 32000, 16);
        set_link(port, 16000, 16, 16000, 16);
        r = run_one(&check_pcie_link_speed, &x.f, &rep);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->summary, "the port above allows Gen4: the Gen5 GPU runs at Gen4 x16");
        assert_string_equal(r->expected, "Gen4 x16 (the port's maximum)");
        report_done(&rep);
        r = run_one(&check_pcie_link_width, &x.f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        report_done(&rep);

        /* At Gen1 under that port, against the port's Gen4: GPUs train down at idle, so
         * no finding unless NVML says the GPU works (nvidia-smi --help-query-gpu). */
        set_link(gpu, 2500, 16, 32000, 16);
        r = run_one(&check_pcie_link_speed, &x.f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_non_null(strstr(r->summary, "link at Gen1 x16 below the Gen4 x16 its slot gives while the GPU is "
                                           "maybe idle"));
        report_done(&rep);
        struct nvml_gpu ng = {0};
        ng.pci_bus_id.state = NV_OK;
        snprintf(ng.pci_bus_id.v, sizeof(ng.pci_bus_id.v), "%s", gpu->addr);
        ng.clocks_event_reasons.state = NV_OK;
        ng.clocks_event_reasons.v = NV_CLOCKS_EVENT_GPU_IDLE;
        x.f.nvml.gpus = &ng;
        x.f.nvml.n_gpus = 1;
        r = run_one(&check_pcie_link_speed, &x.f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_non_null(strstr(r->summary, "while the GPU is idle"));
        report_done(&rep);
        ng.clocks_event_reasons.v = 0; /* busy: the low link is a finding */
        r = run_one(&check_pcie_link_speed, &x.f, &rep);
        assert_int_equal(r->status, STATUS_WARN);
        assert_non_null(strstr(r->summary, "link at Gen1 x16 below the Gen4 x16 its slot gives while the GPU is busy"));
        report_done(&rep);
        x.f.nvml.gpus = NULL;
        x.f.nvml.n_gpus = 0;

        /* An emulated port slower than the link that trained through it says nothing. */
        set_link(gpu, 32000, 16, 32000, 16);
        set_link(port, 2500, 1, 2500, 1);
        r = run_one(&check_pcie_link_width, &x.f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        report_done(&rep);
        r = run_one(&check_pcie_link_speed, &x.f, &rep);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->summary, "link runs at its maximum speed (Gen5 x16)");
        report_done(&rep);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_aer),
                cmocka_unit_test(test_link_read_errors),
                cmocka_unit_test(test_acs),
                cmocka_unit_test(test_bar1),
                cmocka_unit_test(test_link_vs_slot),
                cmocka_unit_test(test_bar1_layout_64bit_registers),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

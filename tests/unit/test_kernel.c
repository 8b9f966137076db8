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

struct node {
        struct facts f;
        struct pci_dev devs[1];
        struct gpu gpus[1];
        struct report rep;
};

static void node_init(struct node *n, size_t n_gpus, const char *driver) {
        memset(n, 0, sizeof(*n));
        if (n_gpus) {
                strcpy(n->devs[0].addr, "0000:1b:00.0");
                n->devs[0].have_ids = true;
                n->devs[0].vendor = 0x10de;
                n->devs[0].device = 0x2330;
                n->devs[0].class_code = 0x030200;
                strcpy(n->devs[0].driver, driver);
        }
        n->f.pci.devs = n->devs;
        n->f.pci.n = n_gpus;
        n->f.gpus.gpus = n->gpus;
        n->f.gpus.n = n_gpus;
        strcpy(n->f.host.kernel_release, "6.8.0-45-generic");
        n->f.kernel.efi_booted = true;
        n->f.kernel.secure_boot = 1;
        strcpy(n->f.kernel.secure_boot_source,
               "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c");
        n->f.kernel.sig_enforce = 1;
        strcpy(n->f.kernel.lockdown, "integrity");
        report_init(&n->rep);
}

static const struct result *run(struct node *n, const struct check_info *c) {
        report_done(&n->rep);
        report_init(&n->rep);
        c->run(c, &n->f, &n->rep);
        assert_int_equal(n->rep.n_results, 1);
        return &n->rep.results[0];
}

static void test_version(void **state) {
        (void)state;
        struct node n;
        node_init(&n, 0, "");
        const struct result *r = run(&n, &check_kernel_version);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "6.8.0-45-generic");
        assert_string_equal(r->expected, "Linux 4.15 or newer");

        strcpy(n.f.host.kernel_release, "4.4.0-210-generic");
        r = run(&n, &check_kernel_version);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->observed, "4.4.0-210-generic");
        assert_non_null(r->remedy);

        strcpy(n.f.host.kernel_release, "");
        r = run(&n, &check_kernel_version);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->observed, "unknown");

        strcpy(n.f.host.kernel_release, "linux");
        r = run(&n, &check_kernel_version);
        assert_int_equal(r->status, STATUS_ERROR);
        report_done(&n.rep);
}

static void test_cmdline(void **state) {
        (void)state;
        struct node n;
        node_init(&n, 0, "");
        const struct result *r = run(&n, &check_kernel_cmdline);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->summary, "cannot read /proc/cmdline: the kernel parameters are unknown");

        n.f.host.cmdline = "BOOT_IMAGE=/vmlinuz-6.8.0 root=UUID=1234 ro quiet splash";
        r = run(&n, &check_kernel_cmdline);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "no GPU-relevant parameters");
        assert_string_equal(r->expected, "none of pci=noaer, pci=nommconf, pcie_aspm=force");

        n.f.host.cmdline = "ro intel_iommu=on iommu=pt pcie_aspm=off default_hugepagesz=1G hugepages=64 "
                           "nvidia-drm.modeset=1 nvidia.NVreg_EnableGpuFirmware=0 quiet -- iommu=off";
        r = run(&n, &check_kernel_cmdline);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "intel_iommu=on iommu=pt pcie_aspm=off default_hugepagesz=1G hugepages=64 "
                                         "nvidia-drm.modeset=1 nvidia.NVreg_EnableGpuFirmware=0");

        n.f.host.cmdline = "ro pci=realloc,noaer pcie_aspm=force";
        r = run(&n, &check_kernel_cmdline);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->observed, "pci=realloc,noaer pcie_aspm=force");
        assert_non_null(strstr(r->summary, "pci=noaer turns PCIe Advanced Error Reporting off"));
        assert_non_null(strstr(r->summary, "pcie_aspm=force"));
        assert_non_null(strstr(r->remedy, "Remove pci=noaer, pcie_aspm=force from GRUB_CMDLINE_LINUX"));

        /* "noaerx" or pcie_aspm=forced are not the harmful words. */
        n.f.host.cmdline = "pci=noaerx pcie_aspm=forced";
        r = run(&n, &check_kernel_cmdline);
        assert_int_equal(r->status, STATUS_PASS);
        report_done(&n.rep);
}

static void test_secure_boot(void **state) {
        (void)state;
        struct node n;
        node_init(&n, 1, "");
        const struct result *r = run(&n, &check_kernel_secure_boot);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->summary,
                            "Secure Boot is on and the nvidia module is not loaded: an unsigned module is refused");
        assert_string_equal(r->observed, "Secure Boot on, module signature enforcement on, lockdown integrity");
        assert_string_equal(r->expected, "nvidia module loaded (signed)");
        assert_non_null(strstr(r->remedy, "mokutil --import"));

        /* Enforcement through lockdown even with sig_enforce N: still a failure. */
        n.f.kernel.sig_enforce = 0;
        r = run(&n, &check_kernel_secure_boot);
        assert_int_equal(r->status, STATUS_FAIL);

        strcpy(n.f.kernel.lockdown, "none");
        r = run(&n, &check_kernel_secure_boot);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "Secure Boot on, module signature enforcement off, lockdown none");

        n.f.nvidia.module_loaded = true;
        n.f.nvidia.have_taint = true;
        strcpy(n.f.nvidia.module_taint, "POE");
        r = run(&n, &check_kernel_secure_boot);
        assert_int_equal(r->status, STATUS_PASS);
        assert_non_null(strstr(r->summary, "loaded unsigned (taint E)"));

        strcpy(n.f.nvidia.module_taint, "PO");
        n.f.kernel.sig_enforce = 1;
        strcpy(n.f.kernel.lockdown, "integrity");
        r = run(&n, &check_kernel_secure_boot);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->summary, "Secure Boot is on and the nvidia module is loaded");

        n.f.kernel.secure_boot = 0;
        r = run(&n, &check_kernel_secure_boot);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "Secure Boot off, module signature enforcement on, lockdown integrity");

        n.f.kernel.secure_boot = -1;
        n.f.kernel.secure_boot_errno = -EBADMSG;
        r = run(&n, &check_kernel_secure_boot);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_non_null(strstr(r->summary, "unexpected size or value"));

        n.f.kernel.secure_boot_errno = -ENOTCONN;
        r = run(&n, &check_kernel_secure_boot);
        assert_int_equal(r->status, STATUS_SKIP);

        n.f.kernel.efi_booted = false;
        r = run(&n, &check_kernel_secure_boot);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "not booted with UEFI (no /sys/firmware/efi): no Secure Boot");
        report_done(&n.rep);
}

static void test_secure_boot_passthrough(void **state) {
        (void)state;
        struct node n;
        node_init(&n, 1, "vfio-pci");
        const struct result *r = run(&n, &check_kernel_secure_boot);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->summary, "Secure Boot is on; no GPU here needs the nvidia module (all bound to vfio-pci)");
        report_done(&n.rep);
}

#define SB_VAR "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"

static void gather_in(const char *root, struct kernel_facts *k) {
        struct fsroot *fs;
        assert_int_equal(fsroot_open(root, &fs), 0);
        struct facts f;
        memset(&f, 0, sizeof(f));
        assert_int_equal(kernel_gather(fs, &f), 0);
        *k = f.kernel;
        fsroot_free(fs);
}

static void test_gather(void **state) {
        (void)state;
        char *root = tree_new("kernel");
        struct kernel_facts k;

        /* Legacy BIOS boot: nothing under /sys/firmware/efi. */
        gather_in(root, &k);
        assert_false(k.efi_booted);
        assert_int_equal(k.secure_boot, -1);
        assert_int_equal(k.sig_enforce, -1);
        assert_int_equal(k.sig_enforce_errno, -ENOENT);
        assert_string_equal(k.lockdown, "");

        /* efivarfs: 4 attribute bytes (NV|BS|RT = 0x06), then 1. */
        const unsigned char on[] = {0x06, 0x00, 0x00, 0x00, 0x01};
        tree_put_bytes(root, SB_VAR, on, sizeof(on));
        tree_put_bytes(root, "/sys/module/module/parameters/sig_enforce", "Y\n", 2);
        tree_put_bytes(root, "/sys/kernel/security/lockdown", "none [integrity] confidentiality\n", 33);
        gather_in(root, &k);
        assert_true(k.efi_booted);
        assert_int_equal(k.secure_boot, 1);
        assert_int_equal(k.sig_enforce, 1);
        assert_string_equal(k.lockdown, "integrity");

        const unsigned char off[] = {0x06, 0x00, 0x00, 0x00, 0x00};
        tree_put_bytes(root, SB_VAR, off, sizeof(off));
        gather_in(root, &k);
        assert_int_equal(k.secure_boot, 0);

        /* Truncated: attributes only. */
        tree_put_bytes(root, SB_VAR, off, 4);
        gather_in(root, &k);
        assert_int_equal(k.secure_boot, -1);
        assert_int_equal(k.secure_boot_errno, -EBADMSG);

        tree_put_bytes(root, "/sys/module/module/parameters/sig_enforce", "maybe\n", 6);
        gather_in(root, &k);
        assert_int_equal(k.sig_enforce, -1);
        assert_int_equal(k.sig_enforce_errno, -EINVAL);

        /* efivarfs mounted but no SecureBoot variable: firmware without Secure Boot. */
        tree_unlink(root, SB_VAR);
        tree_put_bytes(root, "/sys/firmware/efi/efivars/BootOrder-8be4df61-93ca-11d2-aa0d-00e098032b8c", on, 5);
        gather_in(root, &k);
        assert_int_equal(k.secure_boot, 0);

        /* An empty efivars directory: efivarfs not mounted. */
        tree_unlink(root, "/sys/firmware/efi/efivars/BootOrder-8be4df61-93ca-11d2-aa0d-00e098032b8c");
        gather_in(root, &k);
        assert_int_equal(k.secure_boot, -1);
        assert_int_equal(k.secure_boot_errno, -ENOTCONN);

        tree_remove(root);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_version),
                cmocka_unit_test(test_cmdline),
                cmocka_unit_test(test_secure_boot),
                cmocka_unit_test(test_secure_boot_passthrough),
                cmocka_unit_test(test_gather),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

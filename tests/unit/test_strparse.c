#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "core/strparse.h"

static void test_u64(void **state) {
        (void)state;
        uint64_t v;
        assert_int_equal(parse_u64("42\n", &v), 0);
        assert_int_equal(v, 42);
        assert_int_equal(parse_u64(" 0x10de ", &v), 0);
        assert_int_equal(v, 0x10de);
        assert_int_equal(parse_u64("", &v), -EINVAL);
        assert_int_equal(parse_u64("12abc", &v), -EINVAL);
        assert_int_equal(parse_u64("-1", &v), -EINVAL);
        assert_int_equal(parse_u64("99999999999999999999999", &v), -ERANGE);
}

static void test_int(void **state) {
        (void)state;
        int v;
        assert_int_equal(parse_int("-1\n", &v), 0);
        assert_int_equal(v, -1);
        assert_int_equal(parse_int("2147483648", &v), -ERANGE);
        assert_int_equal(parse_int("-2147483648", &v), 0);
        assert_int_equal(parse_int("1 2", &v), -EINVAL);
}

static void test_duration(void **state) {
        (void)state;
        uint64_t ms;
        static const struct {
                const char *text;
                uint64_t ms;
        } good[] = {
                {"90", 90000}, {"90s", 90000}, {"5m", 300000}, {"1h30m", 5400000}, {"2h", 7200000},
                {"500ms", 500}, {" 1d\n", 86400000}, {"1m30s", 90000}, {"10sec", 10000}, {"3min", 180000},
                {"0s", 0}, {"1H", 3600000}, {"0.5", 500}, {"1.5h", 5400000}, {"0.25s", 250}, {"2.5ms", 2},
                {"1m0.5s", 60500}, {"0.000000001d", 0},
        };
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                assert_int_equal(parse_duration_ms(good[i].text, &ms), 0);
                assert_int_equal(ms, good[i].ms);
        }
        static const char *const bad[] = {"", " ", "m", "5x", "5 m", "-5s", "5m30", "30 5m", "5mm", "s5", "5m-",
                                          "1.", ".5", "1.5.2s", "0.0000000001s", "1,5s"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_int_equal(parse_duration_ms(bad[i], &ms), -EINVAL);
        assert_int_equal(parse_duration_ms("99999999999999999999", &ms), -ERANGE);
        assert_int_equal(parse_duration_ms("999999999999999d", &ms), -ERANGE);
}

static void test_cpulist(void **state) {
        (void)state;
        uint64_t mask[2];
        unsigned n;
        char buf[64];
        assert_int_equal(parse_cpulist("0-3,8,10-11\n", mask, 128, &n), 0);
        assert_int_equal(n, 7);
        assert_int_equal(format_cpulist(mask, 128, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "0-3,8,10-11");
        assert_int_equal(parse_cpulist("", mask, 128, &n), 0);
        assert_int_equal(n, 0);
        assert_int_equal(parse_cpulist("3-1", mask, 128, &n), -ERANGE);
        assert_int_equal(parse_cpulist("1,,2", mask, 128, &n), -EINVAL);
        assert_int_equal(parse_cpulist("0-4294967295", NULL, 0, &n), -ERANGE);
        /* Ranges across word edges, overlaps counted once, ids past the mask dropped. */
        assert_int_equal(parse_cpulist("60-70,65-66,127-200", mask, 128, &n), 0);
        assert_int_equal(n, 12);
        assert_int_equal(format_cpulist(mask, 128, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "60-70,127");
        /* Without a mask every listed id counts. */
        assert_int_equal(parse_cpulist("0-3,2-5", NULL, 0, &n), 0);
        assert_int_equal(n, 8);
        assert_int_equal(parse_cpulist("0-127", mask, 128, &n), 0);
        assert_int_equal(n, 128);
}

static void test_bitmap_next_set(void **state) {
        (void)state;
        uint64_t mask[2] = {0};
        unsigned n;
        assert_int_equal(bitmap_next_set(mask, 128, 0), 128);
        assert_int_equal(parse_cpulist("3,63-64,127", mask, 128, &n), 0);
        assert_int_equal(bitmap_next_set(mask, 128, 0), 3);
        assert_int_equal(bitmap_next_set(mask, 128, 4), 63);
        assert_int_equal(bitmap_next_set(mask, 128, 64), 64);
        assert_int_equal(bitmap_next_set(mask, 128, 65), 127);
        assert_int_equal(bitmap_next_set(mask, 128, 128), 128);
        /* A bit past mask_bits in the last word is not reported. */
        assert_int_equal(bitmap_next_set(mask, 100, 65), 100);
}

static void test_cpumask(void **state) {
        (void)state;
        uint64_t mask[2];
        unsigned n;
        char buf[64];
        /* As hwloc's POWER9 capture writes it: CPUs 0-15. */
        assert_int_equal(parse_cpumask("0000,00000000,00000000,00000000,00000000,0000ffff\n", mask, 128, &n), 0);
        assert_int_equal(n, 16);
        assert_int_equal(format_cpulist(mask, 128, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "0-15");
        assert_int_equal(parse_cpumask("ff000000,00000000", mask, 128, &n), 0);
        assert_int_equal(format_cpulist(mask, 128, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "56-63");
        assert_int_equal(parse_cpumask("xyz", mask, 128, &n), -EINVAL);
}

static void test_link_speed(void **state) {
        (void)state;
        unsigned mts;
        assert_int_equal(parse_link_speed("16.0 GT/s PCIe\n", &mts), 0);
        assert_int_equal(mts, 16000);
        assert_int_equal(pcie_gen_from_mts(mts), 4);
        assert_int_equal(parse_link_speed("2.5 GT/s", &mts), 0);
        assert_int_equal(pcie_gen_from_mts(mts), 1);
        assert_int_equal(parse_link_speed("Unknown", &mts), -ENODATA);
        assert_int_equal(parse_link_speed("fast", &mts), -EINVAL);
}

static void test_cmdline(void **state) {
        (void)state;
        char v[64];
        const char *cl = "BOOT_IMAGE=/vmlinuz ro quiet intel_iommu=on iommu=pt foo=\"a b\" intel_iommu=off -- iommu=x";
        assert_int_equal(cmdline_get(cl, "intel_iommu", v, sizeof(v)), 0);
        assert_string_equal(v, "off");
        assert_int_equal(cmdline_get(cl, "iommu", v, sizeof(v)), 0);
        assert_string_equal(v, "pt");
        assert_int_equal(cmdline_get(cl, "quiet", v, sizeof(v)), 0);
        assert_string_equal(v, "");
        assert_int_equal(cmdline_get(cl, "foo", v, sizeof(v)), 0);
        assert_string_equal(v, "a b");
        assert_int_equal(cmdline_get(cl, "amd_iommu", v, sizeof(v)), -ENOENT);
}

static void test_meminfo_aer_resource(void **state) {
        (void)state;
        uint64_t kb, total;
        assert_int_equal(parse_meminfo_kb("MemTotal:       2097152 kB\nSwapTotal:  0 kB\n", "SwapTotal", &kb), 0);
        assert_int_equal(kb, 0);
        assert_int_equal(parse_meminfo_kb("MemTotal: 1 kB\n", "Mem", &kb), -ENOENT);
        assert_int_equal(parse_aer_total("RxErr 0\nBadTLP 2\nTOTAL_ERR_COR 5\n", &total), 0);
        assert_int_equal(total, 5);
        assert_int_equal(parse_aer_total("RxErr 0\n", &total), -EINVAL);
        struct pci_resource_line res[6];
        size_t n;
        assert_int_equal(parse_pci_resource("0x00000000fa000000 0x00000000faffffff 0x0000000000040200\n"
                                            "0x0000000000000000 0x0000000000000000 0x0000000000000000\n",
                                            res, 6, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(res[0].start, 0xfa000000u);
        assert_int_equal(res[0].end - res[0].start + 1, 16u << 20);
        assert_int_equal(res[0].flags, 0x40200);
        assert_int_equal(res[1].end, 0);
        assert_int_equal(parse_pci_resource("garbage", res, 6, &n), -EINVAL);
        assert_int_equal(parse_pci_resource("0x2000 0x1000 0x200\n", res, 6, &n), -EINVAL);
}

/* As drivers/pci/pci-driver.c pci_uevent() and the driver core print it. */
static void test_pci_uevent(void **state) {
        (void)state;
        struct pci_uevent u;
        assert_int_equal(parse_pci_uevent("DRIVER=nvidia\nPCI_CLASS=30200\nPCI_ID=10DE:2330\n"
                                          "PCI_SUBSYS_ID=10DE:16C1\nPCI_SLOT_NAME=0000:1b:00.0\n"
                                          "MODALIAS=pci:v000010DEd00002330sv000010DEsd000016C1bc03sc02i00\n", &u), 0);
        assert_int_equal(u.vendor, 0x10de);
        assert_int_equal(u.device, 0x2330);
        assert_int_equal(u.class_code, 0x030200);
        assert_true(u.have_subsys);
        assert_int_equal(u.subsys_device, 0x16c1);
        assert_string_equal(u.driver, "nvidia");
        /* No driver bound: no DRIVER= line. */
        assert_int_equal(parse_pci_uevent("PCI_CLASS=60400\nPCI_ID=8086:09AB\n", &u), 0);
        assert_string_equal(u.driver, "");
        assert_int_equal(u.class_code, 0x060400);
        assert_false(u.have_subsys);
        assert_int_equal(parse_pci_uevent("PCI_CLASS=30200\n", &u), -EINVAL);
        assert_int_equal(parse_pci_uevent("PCI_CLASS=30200\nPCI_ID=10DE\n", &u), -EINVAL);
        assert_int_equal(parse_pci_uevent("PCI_CLASS=zz\nPCI_ID=10DE:2330\n", &u), -EINVAL);
        assert_int_equal(parse_pci_uevent("PCI_CLASS=30200\nPCI_ID=10DE0:2330\n", &u), -EINVAL);
        assert_int_equal(parse_pci_uevent("PCI_CLASS=30200\nPCI_ID=10DE:2330\nDRIVER=a/b\n", &u), -EINVAL);
        assert_int_equal(parse_pci_uevent("garbage\n", &u), -EINVAL);
}

static void test_versions(void **state) {
        (void)state;
        char v[32];
        int cmp;
        assert_int_equal(parse_nvidia_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n", v, sizeof(v)), 0);
        assert_string_equal(v, "550.54.15");
        assert_int_equal(parse_nvidia_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build\n", v, sizeof(v)), 0);
        assert_string_equal(v, "580.65.06");
        assert_int_equal(parse_nvidia_version("nonsense", v, sizeof(v)), -EINVAL);
        assert_int_equal(version_compare("535.104.05", "550.54.14", &cmp), 0);
        assert_int_equal(cmp, -1);
        assert_int_equal(version_compare("580", "580.0", &cmp), 0);
        assert_int_equal(cmp, 0);
        assert_int_equal(version_compare("12.10", "12.9", &cmp), 0);
        assert_int_equal(cmp, 1);
        assert_int_equal(version_compare("x", "1", &cmp), -EINVAL);
}

static void test_misc(void **state) {
        (void)state;
        char v[32];
        bool b;
        assert_int_equal(parse_bracketed_choice("always [madvise] never\n", v, sizeof(v)), 0);
        assert_string_equal(v, "madvise");
        assert_int_equal(parse_bracketed_choice("always madvise", v, sizeof(v)), -EINVAL);
        assert_int_equal(parse_bool("Y\n", &b), 0);
        assert_true(b);
        assert_int_equal(parse_bool("off", &b), 0);
        assert_false(b);
        assert_int_equal(parse_bool("maybe", &b), -EINVAL);
        char small[8];
        assert_int_equal(parse_env_value("NAME=Debian\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n", "PRETTY_NAME", small, sizeof(small)), -ENOSPC);
        char big[64];
        assert_int_equal(parse_env_value("PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n", "PRETTY_NAME", big, sizeof(big)), 0);
        assert_string_equal(big, "Debian GNU/Linux 12 (bookworm)");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_u64),         cmocka_unit_test(test_int),
                cmocka_unit_test(test_duration),
                cmocka_unit_test(test_cpulist), cmocka_unit_test(test_bitmap_next_set),     cmocka_unit_test(test_cpumask),
                cmocka_unit_test(test_link_speed),  cmocka_unit_test(test_cmdline),
                cmocka_unit_test(test_meminfo_aer_resource), cmocka_unit_test(test_pci_uevent),
                cmocka_unit_test(test_versions),
                cmocka_unit_test(test_misc),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

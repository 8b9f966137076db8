/* libFuzzer target: every parser of src/core/strparse.h over one input.
 *
 * The input is copied and NUL-terminated (the parsers take C strings). Parsers that take
 * a key get fixed keys seen in real files and, for variety, the input's first line as
 * the key and the rest as the text. Invariants are checked with abort(), so a violation
 * is a crash the fuzzer keeps:
 *   - a cpulist or cpumask that parses formats back (format_cpulist) into a list that
 *     parses to the same mask and count;
 *   - output buffers are NUL-terminated within their size on success. */
#include "core/strparse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MASK_BITS 1024
#define MASK_WORDS (MASK_BITS / 64)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_str(int r, const char *buf, size_t size) {
        if (r == 0 && strnlen(buf, size) == size)
                abort();
}

static void roundtrip(const uint64_t *mask, unsigned count) {
        char list[8192];
        if (format_cpulist(mask, MASK_BITS, list, sizeof(list)) < 0)
                abort(); /* 1024 bits never need more than ~2.6 KB */
        uint64_t again[MASK_WORDS];
        unsigned count_again;
        if (parse_cpulist(list, again, MASK_BITS, &count_again) < 0)
                abort();
        if (count_again != count || memcmp(mask, again, sizeof(again)) != 0)
                abort();
}

static void keyed(const char *text, const char *key) {
        uint64_t v;
        char buf[64], tiny[2];
        (void)parse_meminfo_kb(text, key, &v);
        int r = cmdline_get(text, key, buf, sizeof(buf));
        check_str(r, buf, sizeof(buf));
        r = cmdline_get(text, key, tiny, sizeof(tiny));
        check_str(r, tiny, sizeof(tiny));
        r = parse_env_value(text, key, buf, sizeof(buf));
        check_str(r, buf, sizeof(buf));
        r = parse_env_value(text, key, tiny, sizeof(tiny));
        check_str(r, tiny, sizeof(tiny));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s = malloc(size + 1);
        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';

        uint64_t u64;
        int i;
        uint32_t u32;
        bool b;
        unsigned count, mts;
        char buf[64], tiny[2];
        (void)parse_u64(s, &u64);
        (void)parse_int(s, &i);
        (void)parse_duration_ms(s, &u64);
        (void)parse_hex_u32(s, &u32);
        (void)parse_bool(s, &b);

        uint64_t mask[MASK_WORDS];
        if (parse_cpulist(s, mask, MASK_BITS, &count) == 0)
                roundtrip(mask, count);
        (void)parse_cpulist(s, NULL, 0, &count);
        if (parse_cpumask(s, mask, MASK_BITS, &count) == 0)
                roundtrip(mask, count);
        (void)parse_cpumask(s, NULL, 0, &count);

        if (parse_link_speed(s, &mts) == 0)
                (void)pcie_gen_from_mts(mts);
        check_str(parse_bracketed_choice(s, buf, sizeof(buf)), buf, sizeof(buf));
        check_str(parse_bracketed_choice(s, tiny, sizeof(tiny)), tiny, sizeof(tiny));
        (void)parse_aer_total(s, &u64);
        struct pci_resource_line res[17];
        size_t n;
        (void)parse_pci_resource(s, res, 6, &n);
        (void)parse_pci_resource(s, res, 17, &n);
        struct pci_uevent ue;
        if (parse_pci_uevent(s, &ue) == 0 && (ue.vendor > 0xffff || ue.class_code > 0xffffff ||
                                              strlen(ue.driver) >= sizeof(ue.driver)))
                abort();
        check_str(parse_nvidia_version(s, buf, sizeof(buf)), buf, sizeof(buf));
        check_str(parse_nvidia_version(s, tiny, sizeof(tiny)), tiny, sizeof(tiny));

        static const char *const keys[] = {"MemTotal", "HugePages_Total", "iommu", "intel_iommu",
                                           "default_hugepagesz", "PRETTY_NAME", "ID", ""};
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
                keyed(s, keys[k]);

        /* Two operands: split at the first NUL or newline. */
        size_t cut = strcspn(s, "\n");
        char *second = s + cut;
        if (*second) {
                *second++ = '\0';
                keyed(second, s);
        } else if (cut < size) {
                second = s + cut + 1; /* an embedded NUL: the rest of the input */
        }
        int cmp, cmp_back;
        if (version_compare(s, second, &cmp) == 0) {
                /* The comparison must be antisymmetric. */
                if (version_compare(second, s, &cmp_back) < 0 || cmp_back != -cmp)
                        abort();
        }
        free(s);
        return 0;
}

/* Pure parsers for sysfs and procfs values. No I/O; each takes a NUL-terminated string
 * and returns 0 or a negative errno (-EINVAL malformed, -ERANGE out of range), writing
 * its result only on success. Fuzzed by tests/fuzz/fuzz_strparse.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Unsigned decimal (or 0x-prefixed hex) with optional surrounding whitespace. */
int parse_u64(const char *s, uint64_t *ret);
int parse_int(const char *s, int *ret);
/* Hex with or without 0x ("0x10de", "10de"). */
int parse_hex_u32(const char *s, uint32_t *ret);
/* A duration as people write it: "90" (seconds), "90s", "5m", "1h30m", "2h", "500ms",
 * "1d", "0.5", "1.5h" (units ms, s/sec, m/min, h, d; a bare number only alone; a fraction
 * of up to 9 digits on any number). Milliseconds in *ret, a fraction of one cut off. */
int parse_duration_ms(const char *s, uint64_t *ret);
/* A size as people write it: "268435456", "4096B", "256M", "1G", "64MiB", "512k" (binary
 * multiples K, M, G, T, optionally followed by "B" or "iB"). Bytes in *ret; -ERANGE past
 * 2^64 - 1. */
int parse_size_bytes(const char *s, uint64_t *ret);
/* "Y"/"N"/"1"/"0"/"on"/"off"/"yes"/"no"/"true"/"false". */
int parse_bool(const char *s, bool *ret);

/* CPU list "0-3,8,10-11" -> count and highest id; bits set in a caller-sized bitmap when
 * mask is non-NULL. An empty list is valid (count 0). */
int parse_cpulist(const char *s, uint64_t *mask, size_t mask_bits, unsigned *ret_count);
/* CPU mask "0000,00000000,0000ffff" (32-bit hex groups, most significant first). */
int parse_cpumask(const char *s, uint64_t *mask, size_t mask_bits, unsigned *ret_count);
/* The lowest set bit at or above from, or mask_bits when there is none. */
size_t bitmap_next_set(const uint64_t *mask, size_t mask_bits, size_t from);
/* Format a bitmap back into a canonical cpulist ("0-3,8"). */
int format_cpulist(const uint64_t *mask, size_t mask_bits, char *buf, size_t size);

/* PCIe link speed attribute: "16.0 GT/s PCIe", "8 GT/s", "2.5 GT/s", "Unknown" ->
 * -ENODATA. Returns speed in MT/s (16000) to stay integral. */
int parse_link_speed(const char *s, unsigned *ret_mts);
/* GT/s in MT/s -> PCIe generation (2500 -> 1 ... 64000 -> 6); 0 if unknown. */
unsigned pcie_gen_from_mts(unsigned mts);
/* A link for people: "Gen5 x16", or "4.0 GT/s x1" for a rate that is no generation's. */
void pcie_link_text(unsigned mts, unsigned width, char *buf, size_t size);

/* "[always] madvise never" -> "always". */
int parse_bracketed_choice(const char *s, char *buf, size_t size);

/* /proc/meminfo style "Key:   1234 kB" -> value in kB for key; -ENOENT when absent. */
int parse_meminfo_kb(const char *text, const char *key, uint64_t *ret_kb);

/* The next line of text at *p into buf (without its newline; cut to size), advancing *p
 * past it. Returns false at the end of the text. */
bool text_next_line(const char **p, char *buf, size_t size);
/* The next word of a kernel command line at *p, advancing *p past it: its start, with its
 * length in *len (quotes keep spaces inside a word); NULL at the end, and at a bare "--"
 * (what follows goes to init, not the kernel). */
const char *cmdline_next_word(const char **p, size_t *len);
/* Kernel command line: value of "key=value", or "" for a bare "key"; -ENOENT when absent.
 * The last occurrence wins, as in the kernel. Quoted values are unquoted. */
int cmdline_get(const char *cmdline, const char *key, char *buf, size_t size);

/* AER counter files ("RxErr 0\nBadTLP 0\n...TOTAL_ERR_COR 3") -> the TOTAL_* value. */
int parse_aer_total(const char *text, uint64_t *ret_total);

/* One line of a PCI "resource" file, as the kernel prints it: bus-independent start and
 * end addresses (inclusive) and the IORESOURCE_* flags. An unimplemented BAR, or the upper
 * half of a 64-bit one, is all zeros. */
struct pci_resource_line {
        uint64_t start, end, flags;
};

/* PCI "resource" file: one "start end flags" line per resource. Writes up to n lines and
 * the number parsed. -EINVAL when a line is not three hex numbers or ends before it starts. */
int parse_pci_resource(const char *text, struct pci_resource_line *lines, size_t n, size_t *ret_n);

/* What a PCI device's sysfs "uevent" says of it: the kernel's pci_uevent() prints the ids
 * the vendor/device/class/subsystem_* attributes show, and the driver core adds DRIVER=
 * for a bound device: six files in one. */
struct pci_uevent {
        uint32_t vendor, device, class_code;
        uint32_t subsys_vendor, subsys_device;
        bool have_subsys;     /* PCI_SUBSYS_ID= was there */
        char driver[32];      /* "" when no DRIVER= line: no driver bound */
};

/* Parse a PCI uevent ("DRIVER=nvidia\nPCI_CLASS=30200\nPCI_ID=10DE:2330\n..."). -EINVAL
 * when PCI_ID or PCI_CLASS is missing or not hex, or PCI_SUBSYS_ID or DRIVER is malformed. */
int parse_pci_uevent(const char *text, struct pci_uevent *ret);

/* "/proc/driver/nvidia/version": "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  ..."
 * -> "550.54.15". */
int parse_nvidia_version(const char *text, char *buf, size_t size);

/* Compare dotted versions numerically ("535.104.05" < "550.54.14"); -EINVAL if either
 * is not dotted decimal. */
int version_compare(const char *a, const char *b, int *ret_cmp);

/* os-release style KEY="value" lines -> value (unquoted); -ENOENT when absent. */
int parse_env_value(const char *text, const char *key, char *buf, size_t size);

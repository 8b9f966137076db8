#include "core/array.h"
#include "core/strparse.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *skip_ws(const char *s) {
        while (*s && isspace((unsigned char)*s))
                s++;
        return s;
}

static bool only_ws(const char *s) { return *skip_ws(s) == '\0'; }

int parse_u64(const char *s, uint64_t *ret) {
        s = skip_ws(s);
        if (!isdigit((unsigned char)*s))
                return -EINVAL;
        int base = 10;
        if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
                base = 16;
                s += 2;
                if (!isxdigit((unsigned char)*s))
                        return -EINVAL;
        }
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, base);
        if (errno == ERANGE)
                return -ERANGE;
        if (!only_ws(end))
                return -EINVAL;
        *ret = v;
        return 0;
}

int parse_int(const char *s, int *ret) {
        s = skip_ws(s);
        bool neg = *s == '-';
        uint64_t v;
        int r = parse_u64(neg ? s + 1 : s, &v);
        if (r < 0)
                return r;
        if (neg ? v > 2147483648ull : v > 2147483647ull)
                return -ERANGE;
        *ret = neg ? (int)(-(int64_t)v) : (int)v;
        return 0;
}

int parse_hex_u32(const char *s, uint32_t *ret) {
        s = skip_ws(s);
        if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
                s += 2;
        if (!isxdigit((unsigned char)*s))
                return -EINVAL;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 16);
        if (errno == ERANGE || v > UINT32_MAX)
                return -ERANGE;
        if (!only_ws(end))
                return -EINVAL;
        *ret = (uint32_t)v;
        return 0;
}

int parse_bool(const char *s, bool *ret) {
        char word[8];
        s = skip_ws(s);
        size_t n = 0;
        while (s[n] && !isspace((unsigned char)s[n]))
                n++;
        if (n == 0 || n >= sizeof(word) || !only_ws(s + n))
                return -EINVAL;
        memcpy(word, s, n);
        word[n] = '\0';
        static const char *const yes[] = {"1", "y", "yes", "on", "true"};
        static const char *const no[] = {"0", "n", "no", "off", "false"};
        for (size_t i = 0; i < ARRAY_COUNT(yes); i++) {
                if (strcasecmp(word, yes[i]) == 0) {
                        *ret = true;
                        return 0;
                }
                if (strcasecmp(word, no[i]) == 0) {
                        *ret = false;
                        return 0;
                }
        }
        return -EINVAL;
}

/* Sets ids a..b a word at a time: "0-65535" costs 1,024 steps, not 65,536. Without a mask,
 * every id listed counts, repeats included. */
static void set_range(uint64_t *mask, size_t mask_bits, unsigned long a, unsigned long b, unsigned *count) {
        if (!mask) {
                *count += (unsigned)(b - a + 1);
                return;
        }
        if (a >= mask_bits)
                return;
        if (b >= mask_bits)
                b = mask_bits - 1;
        for (unsigned long w = a / 64; w <= b / 64; w++) {
                unsigned lo = w == a / 64 ? a % 64 : 0, hi = w == b / 64 ? b % 64 : 63;
                uint64_t bits = (~0ull >> (63 - hi)) & (~0ull << lo);
                *count += (unsigned)__builtin_popcountll(bits & ~mask[w]);
                mask[w] |= bits;
        }
}

size_t bitmap_next_set(const uint64_t *mask, size_t mask_bits, size_t from) {
        for (size_t w = from / 64; w * 64 < mask_bits; w++) {
                uint64_t word = mask[w];
                if (w == from / 64)
                        word &= ~0ull << (from % 64);
                if (word) {
                        size_t bit = w * 64 + (size_t)__builtin_ctzll(word);
                        return bit < mask_bits ? bit : mask_bits;
                }
        }
        return mask_bits;
}

static void set_bit(uint64_t *mask, size_t mask_bits, unsigned long bit, unsigned *count) {
        if (mask && bit < mask_bits) {
                uint64_t b = 1ull << (bit % 64);
                if (!(mask[bit / 64] & b)) {
                        mask[bit / 64] |= b;
                        (*count)++;
                }
        } else if (!mask) {
                (*count)++;
        }
}

/* Larger ids than this are not CPUs: refuse rather than loop for minutes on "0-4294967295". */
#define CPU_ID_LIMIT 65536

int parse_cpulist(const char *s, uint64_t *mask, size_t mask_bits, unsigned *ret_count) {
        unsigned count = 0;
        if (mask)
                memset(mask, 0, (mask_bits + 63) / 64 * sizeof(uint64_t));
        s = skip_ws(s);
        while (*s) {
                char *end;
                if (!isdigit((unsigned char)*s))
                        return -EINVAL;
                errno = 0;
                unsigned long a = strtoul(s, &end, 10), b = a;
                if (errno || a >= CPU_ID_LIMIT)
                        return -ERANGE;
                s = end;
                if (*s == '-') {
                        s++;
                        if (!isdigit((unsigned char)*s))
                                return -EINVAL;
                        b = strtoul(s, &end, 10);
                        if (errno || b >= CPU_ID_LIMIT || b < a)
                                return -ERANGE;
                        s = end;
                }
                set_range(mask, mask_bits, a, b, &count);
                if (*s == ',') {
                        s++;
                        if (!isdigit((unsigned char)*s))
                                return -EINVAL;
                        continue;
                }
                if (!only_ws(s))
                        return -EINVAL;
                break;
        }
        *ret_count = count;
        return 0;
}

int parse_cpumask(const char *s, uint64_t *mask, size_t mask_bits, unsigned *ret_count) {
        size_t len = strlen(s);
        while (len > 0 && isspace((unsigned char)s[len - 1]))
                len--;
        s = skip_ws(s);
        len = strlen(s) < len ? strlen(s) : len;
        if (len == 0)
                return -EINVAL;
        if (mask)
                memset(mask, 0, (mask_bits + 63) / 64 * sizeof(uint64_t));
        unsigned count = 0;
        unsigned long bit = 0;
        /* Walk from the least significant (rightmost) hex digit. */
        for (size_t i = len; i-- > 0;) {
                char c = s[i];
                if (c == ',')
                        continue;
                if (!isxdigit((unsigned char)c))
                        return -EINVAL;
                unsigned v = (unsigned)(isdigit((unsigned char)c) ? c - '0' : (tolower((unsigned char)c) - 'a' + 10));
                for (unsigned k = 0; k < 4; k++, bit++) {
                        if (!(v & (1u << k)))
                                continue;
                        if (bit >= CPU_ID_LIMIT)
                                return -ERANGE;
                        set_bit(mask, mask_bits, bit, &count);
                }
        }
        *ret_count = count;
        return 0;
}

int format_cpulist(const uint64_t *mask, size_t mask_bits, char *buf, size_t size) {
        size_t off = 0;
        if (size == 0)
                return -ENOSPC;
        buf[0] = '\0';
        for (size_t i = 0; i < mask_bits;) {
                if (!(mask[i / 64] & (1ull << (i % 64)))) {
                        i++;
                        continue;
                }
                size_t j = i;
                while (j + 1 < mask_bits && (mask[(j + 1) / 64] & (1ull << ((j + 1) % 64))))
                        j++;
                int n = j > i ? snprintf(buf + off, size - off, "%s%zu-%zu", off ? "," : "", i, j)
                              : snprintf(buf + off, size - off, "%s%zu", off ? "," : "", i);
                if (n < 0 || (size_t)n >= size - off)
                        return -ENOSPC;
                off += (size_t)n;
                i = j + 1;
        }
        return 0;
}

int parse_link_speed(const char *s, unsigned *ret_mts) {
        s = skip_ws(s);
        if (strncasecmp(s, "Unknown", 7) == 0)
                return -ENODATA;
        if (!isdigit((unsigned char)*s))
                return -EINVAL;
        char *end;
        errno = 0;
        double gts = strtod(s, &end);
        if (errno || gts <= 0 || gts > 1000)
                return -ERANGE;
        end = (char *)skip_ws(end);
        if (strncmp(end, "GT/s", 4) != 0)
                return -EINVAL;
        *ret_mts = (unsigned)(gts * 1000.0 + 0.5);
        return 0;
}

unsigned pcie_gen_from_mts(unsigned mts) {
        static const unsigned speeds[] = {2500, 5000, 8000, 16000, 32000, 64000};
        for (unsigned i = 0; i < ARRAY_COUNT(speeds); i++)
                if (mts == speeds[i])
                        return i + 1;
        return 0;
}

int parse_bracketed_choice(const char *s, char *buf, size_t size) {
        const char *open = strchr(s, '[');
        if (!open)
                return -EINVAL;
        const char *close = strchr(open + 1, ']');
        if (!close || close == open + 1)
                return -EINVAL;
        size_t n = (size_t)(close - open - 1);
        if (n >= size)
                return -ENOSPC;
        memcpy(buf, open + 1, n);
        buf[n] = '\0';
        return 0;
}

int parse_meminfo_kb(const char *text, const char *key, uint64_t *ret_kb) {
        size_t klen = strlen(key);
        for (const char *line = text; line && *line;) {
                const char *eol = strchr(line, '\n');
                if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
                        char value[64];
                        size_t n = (size_t)((eol ? eol : line + strlen(line)) - (line + klen + 1));
                        if (n >= sizeof(value))
                                return -EINVAL;
                        memcpy(value, line + klen + 1, n);
                        value[n] = '\0';
                        char *unit = strstr(value, "kB");
                        if (unit)
                                *unit = '\0';
                        return parse_u64(value, ret_kb);
                }
                line = eol ? eol + 1 : NULL;
        }
        return -ENOENT;
}

/* Copy value v (vlen bytes) into buf without the quotes around it, when it starts and ends
 * with the same one of quotes. Returns 0, or -ENOSPC when it does not fit. */
static int copy_unquoted(const char *v, size_t vlen, const char *quotes, char *buf, size_t size) {
        if (vlen >= 2 && v[0] && strchr(quotes, v[0]) && v[vlen - 1] == v[0]) {
                v++;
                vlen -= 2;
        }
        if (vlen >= size)
                return -ENOSPC;
        memcpy(buf, v, vlen);
        buf[vlen] = '\0';
        return 0;
}

bool text_next_line(const char **p, char *buf, size_t size) {
        const char *line = *p;
        if (!line || !*line)
                return false;
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        snprintf(buf, size, "%.*s", (int)len, line);
        *p = eol ? eol + 1 : line + len;
        return true;
}

const char *cmdline_next_word(const char **p, size_t *len) {
        const char *start = skip_ws(*p);
        /* A word runs to the next unquoted space. */
        const char *end = start;
        bool quoted = false;
        while (*end && (quoted || !isspace((unsigned char)*end))) {
                if (*end == '"')
                        quoted = !quoted;
                end++;
        }
        *p = end;
        *len = (size_t)(end - start);
        /* Everything after a bare "--" goes to init, not the kernel. */
        if (*len == 0 || (*len == 2 && strncmp(start, "--", 2) == 0))
                return NULL;
        return start;
}

int cmdline_get(const char *cmdline, const char *key, char *buf, size_t size) {
        size_t klen = strlen(key), wlen;
        int found = -ENOENT;
        const char *p = cmdline, *start;
        while ((start = cmdline_next_word(&p, &wlen))) {
                if (wlen < klen || strncmp(start, key, klen) != 0)
                        continue;
                if (wlen == klen) {
                        if (size == 0)
                                return -ENOSPC;
                        buf[0] = '\0';
                        found = 0;
                } else if (start[klen] == '=') {
                        if (copy_unquoted(start + klen + 1, wlen - klen - 1, "\"", buf, size) < 0)
                                return -ENOSPC;
                        found = 0;
                }
        }
        return found;
}

/* "10DE:2330" -> 0x10de, 0x2330: two 16-bit hex ids. */
static int parse_id_pair(const char *s, uint32_t *a, uint32_t *b) {
        const char *colon = strchr(s, ':');
        char first[8];
        if (!colon || colon == s || (size_t)(colon - s) >= sizeof(first))
                return -EINVAL;
        memcpy(first, s, (size_t)(colon - s));
        first[colon - s] = '\0';
        if (parse_hex_u32(first, a) < 0 || parse_hex_u32(colon + 1, b) < 0 || *a > 0xffff || *b > 0xffff)
                return -EINVAL;
        return 0;
}

int parse_pci_uevent(const char *text, struct pci_uevent *ret) {
        memset(ret, 0, sizeof(*ret));
        bool have_id = false, have_class = false;
        char line[256];
        const char *p = text;
        while (text_next_line(&p, line, sizeof(line))) {
                char *eq = strchr(line, '=');
                if (!eq)
                        continue;
                *eq = '\0';
                const char *key = line, *value = eq + 1;
                if (strcmp(key, "PCI_ID") == 0) {
                        if (parse_id_pair(value, &ret->vendor, &ret->device) < 0)
                                return -EINVAL;
                        have_id = true;
                } else if (strcmp(key, "PCI_CLASS") == 0) {
                        if (parse_hex_u32(value, &ret->class_code) < 0 || ret->class_code > 0xffffff)
                                return -EINVAL;
                        have_class = true;
                } else if (strcmp(key, "PCI_SUBSYS_ID") == 0) {
                        if (parse_id_pair(value, &ret->subsys_vendor, &ret->subsys_device) < 0)
                                return -EINVAL;
                        ret->have_subsys = true;
                } else if (strcmp(key, "DRIVER") == 0) {
                        size_t len = strlen(value);
                        if (len == 0 || len >= sizeof(ret->driver) || strchr(value, '/'))
                                return -EINVAL;
                        memcpy(ret->driver, value, len + 1);
                }
        }
        return have_id && have_class ? 0 : -EINVAL;
}

int parse_aer_total(const char *text, uint64_t *ret_total) {
        for (const char *line = text; line && *line;) {
                const char *eol = strchr(line, '\n');
                if (strncmp(line, "TOTAL_", 6) == 0) {
                        const char *sp = line;
                        while (*sp && *sp != ' ' && *sp != '\n')
                                sp++;
                        char value[32];
                        size_t n = (size_t)((eol ? eol : sp + strlen(sp)) - sp);
                        if (n == 0 || n >= sizeof(value))
                                return -EINVAL;
                        memcpy(value, sp, n);
                        value[n] = '\0';
                        return parse_u64(value, ret_total);
                }
                line = eol ? eol + 1 : NULL;
        }
        return -EINVAL;
}

int parse_pci_resource(const char *text, struct pci_resource_line *lines, size_t n, size_t *ret_n) {
        size_t i = 0;
        for (const char *line = text; line && *line && i < n;) {
                unsigned long long start, end, flags;
                int used = 0;
                if (sscanf(line, "%llx %llx %llx%n", &start, &end, &flags, &used) != 3)
                        return -EINVAL;
                if (end < start)
                        return -EINVAL;
                lines[i++] = (struct pci_resource_line){.start = start, .end = end, .flags = flags};
                const char *eol = strchr(line, '\n');
                line = eol ? eol + 1 : NULL;
        }
        if (i == 0)
                return -EINVAL;
        *ret_n = i;
        return 0;
}

int parse_nvidia_version(const char *text, char *buf, size_t size) {
        const char *p = strstr(text, "Kernel Module");
        if (!p)
                return -EINVAL;
        p = skip_ws(p + strlen("Kernel Module"));
        /* Open kernel modules say "Kernel Module for x86_64"; the version follows. */
        if (strncmp(p, "for ", 4) == 0) {
                p = skip_ws(p + 4);
                while (*p && !isspace((unsigned char)*p))
                        p++;
                p = skip_ws(p);
        }
        size_t n = 0;
        while (p[n] && (isdigit((unsigned char)p[n]) || p[n] == '.'))
                n++;
        if (n == 0 || !isdigit((unsigned char)p[0]))
                return -EINVAL;
        if (n >= size)
                return -ENOSPC;
        memcpy(buf, p, n);
        buf[n] = '\0';
        return 0;
}

int version_compare(const char *a, const char *b, int *ret_cmp) {
        for (;;) {
                if (!isdigit((unsigned char)*a) || !isdigit((unsigned char)*b))
                        return -EINVAL;
                char *ea, *eb;
                unsigned long va = strtoul(a, &ea, 10), vb = strtoul(b, &eb, 10);
                if (va != vb) {
                        *ret_cmp = va < vb ? -1 : 1;
                        return 0;
                }
                a = ea;
                b = eb;
                bool more_a = *a == '.', more_b = *b == '.';
                if ((*a && !more_a) || (*b && !more_b))
                        return -EINVAL;
                if (!more_a && !more_b) {
                        *ret_cmp = 0;
                        return 0;
                }
                /* "550.54" vs "550.54.14": the missing part counts as 0. */
                if (!more_a) {
                        a = "0";
                        b++;
                } else if (!more_b) {
                        b = "0";
                        a++;
                } else {
                        a++;
                        b++;
                }
        }
}

int parse_env_value(const char *text, const char *key, char *buf, size_t size) {
        size_t klen = strlen(key);
        for (const char *line = text; line && *line;) {
                const char *eol = strchr(line, '\n');
                size_t len = eol ? (size_t)(eol - line) : strlen(line);
                if (len > klen && strncmp(line, key, klen) == 0 && line[klen] == '=') {
                        return copy_unquoted(line + klen + 1, len - klen - 1, "\"'", buf, size);
                }
                line = eol ? eol + 1 : NULL;
        }
        return -ENOENT;
}

void pcie_link_text(unsigned mts, unsigned width, char *buf, size_t size) {
        unsigned gen = pcie_gen_from_mts(mts);
        if (gen)
                snprintf(buf, size, "Gen%u x%u", gen, width);
        else
                snprintf(buf, size, "%.1f GT/s x%u", mts / 1000.0, width);
}

/* The units a duration may carry, longest spelling first for each so "ms" is never read
 * as "m" followed by junk. */
static const struct {
        const char *name;
        uint64_t ms;
} duration_units[] = {
        {"ms", 1}, {"s", 1000}, {"sec", 1000}, {"m", 60000}, {"min", 60000}, {"h", 3600000}, {"d", 86400000},
};

/* The decimal number s starts with (no sign, no space) into *ret, *end after it: 0, or
 * -EINVAL (no digit first), -ERANGE (past 64 bits). */
static int leading_decimal(const char *s, unsigned long long *ret, char **end) {
        if (!isdigit((unsigned char)*s))
                return -EINVAL;
        errno = 0;
        *ret = strtoull(s, end, 10);
        return errno == ERANGE ? -ERANGE : 0;
}

int parse_duration_ms(const char *s, uint64_t *ret) {
        s = skip_ws(s);
        uint64_t total = 0;
        bool any = false, bare = false;
        while (*s && !isspace((unsigned char)*s)) {
                if (bare)
                        return -EINVAL;
                char *end;
                unsigned long long v;
                int r = leading_decimal(s, &v, &end);
                if (r < 0)
                        return r;
                /* "0.5", "1.5h": the fraction's digits and their scale */
                uint64_t frac = 0, scale = 1;
                if (*end == '.') {
                        end++;
                        if (!isdigit((unsigned char)*end))
                                return -EINVAL;
                        for (; isdigit((unsigned char)*end); end++) {
                                if (scale == 1000000000ull)
                                        return -EINVAL;
                                frac = frac * 10 + (uint64_t)(*end - '0');
                                scale *= 10;
                        }
                }
                size_t ulen = 0;
                while (isalpha((unsigned char)end[ulen]))
                        ulen++;
                uint64_t unit = 0;
                if (ulen == 0) {
                        unit = 1000; /* a bare number is seconds, and only alone */
                        bare = true;
                        if (any)
                                return -EINVAL;
                }
                for (size_t i = 0; ulen && i < ARRAY_COUNT(duration_units); i++)
                        if (strlen(duration_units[i].name) == ulen && strncasecmp(end, duration_units[i].name, ulen) == 0)
                                unit = duration_units[i].ms;
                if (!unit)
                        return -EINVAL;
                if (v > UINT64_MAX / unit || total > UINT64_MAX - v * unit)
                        return -ERANGE;
                total += v * unit;
                /* frac < scale <= 1e9 and unit <= 1 day in ms: frac * unit fits in 64 bits */
                uint64_t part = frac * unit / scale;
                if (total > UINT64_MAX - part)
                        return -ERANGE;
                total += part;
                any = true;
                s = end + ulen;
        }
        if (!any || !only_ws(s))
                return -EINVAL;
        *ret = total;
        return 0;
}

int parse_size_bytes(const char *s, uint64_t *ret) {
        char *end;
        unsigned long long v;
        int r = leading_decimal(s, &v, &end);
        if (r < 0)
                return r;
        unsigned shift = 0;
        switch (toupper((unsigned char)*end)) {
        case 'K': shift = 10; end++; break;
        case 'M': shift = 20; end++; break;
        case 'G': shift = 30; end++; break;
        case 'T': shift = 40; end++; break;
        }
        if (shift && (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0))
                end += strlen(end);
        else if (!shift && strcmp(end, "B") == 0)
                end++;
        if (*end)
                return -EINVAL;
        if (shift && v > UINT64_MAX >> shift)
                return -ERANGE;
        *ret = (uint64_t)v << shift;
        return 0;
}

#include "sys/xid.h"
#include "core/array.h"
#include "core/fsroot.h"
#include "sys/facts.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A node in a crash loop can log thousands of Xids; counts stay exact past this. */
#define XID_EVENTS_MAX 4096

static const char *const syslog_files[] = {"/var/log/kern.log", "/var/log/messages", "/var/log/syslog"};

/* Fabric Manager's default LOG_FILE_NAME. */
#define FM_LOG "/var/log/fabricmanager.log"

/* text = [p, end) without the line end, cut to fit. */
static void copy_text(char *text, size_t size, const char *p, const char *end) {
        size_t tlen = (size_t)(end - p);
        while (tlen > 0 && (p[tlen - 1] == '\n' || p[tlen - 1] == '\r'))
                tlen--;
        if (tlen >= size)
                tlen = size - 1;
        memcpy(text, p, tlen);
        text[tlen] = '\0';
}

static void set_text(struct xid_event *ev, const char *p, const char *end) {
        copy_text(ev->text, sizeof(ev->text), p, end);
}

/* "... changed from 0x0 (None) to 0x1 (GPU Reset Required)": the value after " to 0x".
 * The value, not its text, is read: R610 renamed 0x1 "PF FLR" and 0x2 "OS Reboot". */
static int parse_recovery_action(const char *p, const char *end) {
        static const char to[] = " to 0x";
        for (const char *q = p; q + sizeof(to) - 1 < end; q++) {
                if (memcmp(q, to, sizeof(to) - 1) != 0)
                        continue;
                const char *h = q + sizeof(to) - 1;
                int v = 0, digits = 0;
                while (h < end && isxdigit((unsigned char)*h) && digits < 4) {
                        v = v * 16 + (isdigit((unsigned char)*h) ? *h - '0' : (tolower((unsigned char)*h) - 'a' + 10));
                        h++;
                        digits++;
                }
                if (digits > 0 && (h == end || !isxdigit((unsigned char)*h)))
                        return v;
                return -1;
        }
        return -1;
}

static bool is_word(const char *p, const char *end, const char *word) {
        size_t n = strlen(word);
        return (size_t)(end - p) >= n && memcmp(p, word, n) == 0 &&
               (p + n == end || *(p + n) == ' ' || *(p + n) == ',');
}

/* "0x0409a0c2 0x00000008 ...": the first two values inside the last parentheses that open
 * with a hex number. */
static bool parse_registers(const char *p, const char *end, uint32_t *first, uint32_t *second) {
        const char *open = NULL;
        for (const char *q = p; q + 3 <= end; q++)
                if (q[0] == '(' && q[1] == '0' && (q[2] == 'x' || q[2] == 'X'))
                        open = q + 1;
        if (!open)
                return false;
        uint32_t v[2];
        const char *q = open;
        for (int i = 0; i < 2; i++) {
                while (q < end && (*q == ' ' || *q == ','))
                        q++;
                if (end - q < 3 || q[0] != '0' || (q[1] != 'x' && q[1] != 'X') || !isxdigit((unsigned char)q[2]))
                        return false;
                q += 2;
                uint64_t x = 0;
                int digits = 0;
                while (q < end && isxdigit((unsigned char)*q) && digits <= 8) {
                        x = x * 16 + (uint64_t)(isdigit((unsigned char)*q) ? *q - '0' : tolower((unsigned char)*q) - 'a' + 10);
                        q++;
                        digits++;
                }
                if (digits > 8)
                        return false;
                v[i] = (uint32_t)x;
        }
        *first = v[0];
        *second = v[1];
        return true;
}

/* Xid 144-150: "<unit> <Fatal|Nonfatal> XC<n> i<n> Link <n> (<IntrInfo> <error status> ...)",
 * the format NVIDIA's catalog gives for WORKFLOW_NVLINK5_ERR. A line in another format keeps
 * unit "" and fatal -1: gpuvet cannot decode it. */
static void parse_nvlink5(const char *p, const char *end, struct xid_event *ev) {
        ev->unit[0] = '\0';
        ev->fatal = -1;
        ev->has_regs = 0;
        ev->intr_info = ev->error_status = 0;
        if (ev->code < 144 || ev->code > 150)
                return;
        /* The unit runs to the fatal word: letters, digits, '_' and the space of a unit the
         * decode table writes with one ("MSE Degraded"). */
        for (const char *w = p; w < end && (size_t)(w - p) < sizeof(ev->unit); w++) {
                if (!(isalnum((unsigned char)*w) || *w == '_' || *w == ' '))
                        break;
                if (w == p || w[-1] != ' ')
                        continue;
                int fatal = is_word(w, end, "Fatal") ? 1 : is_word(w, end, "Nonfatal") || is_word(w, end, "Non-fatal") ? 0 : -1;
                if (fatal < 0)
                        continue;
                size_t n = (size_t)(w - 1 - p);
                if (n == 0 || n >= sizeof(ev->unit))
                        break;
                memcpy(ev->unit, p, n);
                ev->unit[n] = '\0';
                ev->fatal = fatal;
                break;
        }
        ev->has_regs = parse_registers(p, end, &ev->intr_info, &ev->error_status);
}

/* Whether the n characters sscanf took as a PCI address are one: its %x also takes a sign,
 * leading blanks and "0x", which would make "0000:-6:00.0" bus 0xfffffffa. */
static bool is_bdf_text(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!isxdigit((unsigned char)s[i]) && s[i] != ':' && s[i] != '.')
                        return false;
        return true;
}

int xid_parse_line(const char *line, size_t len, struct xid_event *ev) {
        static const char marker[] = "NVRM: Xid (";
        const char *end = line + len;
        const char *p = memmem(line, len, marker, sizeof(marker) - 1);
        if (!p)
                return 0;
        p += sizeof(marker) - 1;
        if (end - p >= 4 && memcmp(p, "PCI:", 4) == 0)
                p += 4;
        /* "0000:3b:00", possibly followed by " GPU-I:05" on MIG: the bus address is the
         * first token; older drivers print it without the domain ("3b:00"). */
        const char *a = p;
        while (p < end && *p != ')' && *p != ' ')
                p++;
        size_t alen = (size_t)(p - a);
        unsigned dom = 0, bus, dev;
        char tmp[24];
        if (alen == 0 || alen >= sizeof(tmp))
                return 0;
        memcpy(tmp, a, alen);
        tmp[alen] = '\0';
        char tail;
        if (sscanf(tmp, "%x:%x:%x%c", &dom, &bus, &dev, &tail) != 3) {
                dom = 0;
                if (sscanf(tmp, "%x:%x%c", &bus, &dev, &tail) != 2)
                        return 0;
        }
        if (!is_bdf_text(tmp, alen) || dom > 0xffff || bus > 0xff || dev > 0x1f)
                return 0;
        while (p < end && *p != ')')
                p++;
        if (p + 1 >= end || p[1] != ':')
                return 0;
        p += 2;
        while (p < end && *p == ' ')
                p++;
        if (p >= end || !isdigit((unsigned char)*p))
                return 0;
        long code = 0;
        while (p < end && isdigit((unsigned char)*p) && code < 100000)
                code = code * 10 + (*p++ - '0');
        if (code >= 100000)
                return 0;
        while (p < end && (*p == ',' || *p == ' '))
                p++;
        snprintf(ev->addr, sizeof(ev->addr), "%04x:%02x:%02x.0", dom, bus, dev);
        ev->code = (int)code;
        set_text(ev, p, end);
        ev->recovery_action = code == XID_RECOVERY_ACTION_CHANGED ? parse_recovery_action(p, end) : -1;
        parse_nvlink5(p, end, ev);
        return 1;
}

static void add_to(struct xid_event **events, size_t *n, size_t *dropped, const struct xid_event *ev) {
        if (*n >= XID_EVENTS_MAX) {
                (*dropped)++;
                return;
        }
        if (*n % 64 == 0) {
                struct xid_event *grown = realloc(*events, (*n + 64) * sizeof(*grown));
                if (!grown) {
                        (*dropped)++;
                        return;
                }
                *events = grown;
        }
        (*events)[(*n)++] = *ev;
}

static void add_event(struct xid_facts *x, const struct xid_event *ev) {
        add_to(&x->events, &x->n, &x->n_dropped, ev);
}

/* Each log line is searched for a dozen markers: memmem, not a memcmp at every offset. */
static const char *find(const char *hay, size_t len, const char *needle) {
        return memmem(hay, len, needle, strlen(needle));
}

/* Where the first marker in line ends; NULL when line has none. */
static const char *after(const char *line, size_t len, const char *marker) {
        const char *p = find(line, len, marker);
        return p ? p + strlen(marker) : NULL;
}

/* The PCI address "DDDD:BB:DD.F" at p (the domain in up to 8 hex digits when long_domain, as
 * the Fabric Manager prints it, but never past 0xffff) into domain, bus, device, function;
 * the characters it takes, or 0 when there is none. */
static int pci_address_at(const char *p, const char *end, bool long_domain, unsigned a[4]) {
        char tmp[24];
        copy_text(tmp, sizeof(tmp), p, end);
        int used = 0;
        if (sscanf(tmp, long_domain ? "%8x:%2x:%2x.%1u%n" : "%4x:%2x:%2x.%1u%n", &a[0], &a[1], &a[2], &a[3],
                   &used) != 4 ||
            !is_bdf_text(tmp, (size_t)used) || a[0] > 0xffff || a[2] > 0x1f || a[3] > 7)
                return 0;
        return used;
}

/* An SXid code at *p, 1 to 5 digits, *p moved past the digits read; false for none or more. */
static bool sxid_code(const char **p, const char *end, long *code) {
        int digits = 0;
        *code = 0;
        while (*p < end && isdigit((unsigned char)**p) && digits < 6) {
                *code = *code * 10 + (**p - '0');
                (*p)++;
                digits++;
        }
        return digits > 0 && digits < 6;
}

/* What the driver logs when it cannot bring a GPU up (no Xid number): NVRM's own lines and
 * the PCI core's report of the failed probe. */
static const char *const fault_markers[] = {
        "RmInitAdapter failed", "rm_init_adapter failed",
        /* "GPU has fallen off the bus.", and the three-line "NVRM: The NVIDIA GPU 0000:b3:00.0 /
         * NVRM: (PCI ID: 10de:26b5) installed in this system has / NVRM: fallen off the bus and
         * is not responding to commands." (NVIDIA/NVSentinel issue 155) */
        "fallen off the bus",
        "probe routine failed", "probe routine was not called", "probe with driver nvidia failed",
        "is not supported by the", /* "... installed in this system is not supported by the 470.xx ... release" */
        /* "NVRM: The NVIDIA GPU 0000:17:00.0 (PCI ID: 10de:1bb3) installed in this system / NVRM: is
         * not supported by open nvidia.ko because it does not include the / NVRM: required GPU
         * System Processor (GSP)." (a GPU before Turing under the open modules) */
        "not supported by open nvidia.ko",
};

int nvrm_fault_parse_line(const char *line, size_t len, struct xid_event *ev) {
        if (find(line, len, "NVRM: Xid ("))
                return 0; /* an Xid line: xid_parse_line's */
        const char *hit = NULL;
        for (size_t i = 0; i < ARRAY_COUNT(fault_markers) && !hit; i++)
                hit = find(line, len, fault_markers[i]);
        if (!hit || !(find(line, len, "NVRM") || find(line, len, "nvidia")))
                return 0;
        memset(ev, 0, sizeof(*ev));
        ev->recovery_action = -1;
        /* The first "dddd:bb:dd.f" (or NVRM's "PCI:dddd:bb:dd") names the GPU. */
        for (size_t i = 0; i + 10 <= len; i++) {
                unsigned dom, bus, dev, fn = 0;
                char tmp[16];
                size_t n = len - i < sizeof(tmp) - 1 ? len - i : sizeof(tmp) - 1;
                memcpy(tmp, line + i, n);
                tmp[n] = '\0';
                if (!isxdigit((unsigned char)tmp[0]) || (i > 0 && isxdigit((unsigned char)line[i - 1])))
                        continue;
                int used = 0;
                if (sscanf(tmp, "%4x:%2x:%2x.%1u%n", &dom, &bus, &dev, &fn, &used) == 4 && used == 12 &&
                    is_bdf_text(tmp, 12) && dev <= 0x1f && fn <= 7) {
                        snprintf(ev->addr, sizeof(ev->addr), "%04x:%02x:%02x.0", dom, bus, dev);
                        break;
                }
                if (sscanf(tmp, "%4x:%2x:%2x%n", &dom, &bus, &dev, &used) == 3 && used == 10 &&
                    is_bdf_text(tmp, 10) && dev <= 0x1f &&
                    i >= 4 && memcmp(line + i - 4, "PCI:", 4) == 0) {
                        snprintf(ev->addr, sizeof(ev->addr), "%04x:%02x:%02x.0", dom, bus, dev);
                        break;
                }
        }
        /* Evidence: the line from its NVRM/nvidia tag on, without the kmsg header; /dev/kmsg
         * writes the breaks of a multi-line message as "\\x0a". */
        const char *from = find(line, len, "NVRM");
        if (!from)
                from = find(line, len, "nvidia");
        set_text(ev, from, line + len);
        for (char *e; (e = strstr(ev->text, "\\x0a"));) {
                *e = ' ';
                memmove(e + 1, e + 4, strlen(e + 4) + 1);
        }
        return 1;
}

/* The decimal number at p, read no further than end; -1 when there is none or it is past any
 * NVSwitch's port count. */
static int link_number(const char *p, const char *end) {
        int v = 0, digits = 0;
        while (p < end && isdigit((unsigned char)*p) && digits < 5) {
                v = v * 10 + (*p++ - '0');
                digits++;
        }
        return digits > 0 && digits < 5 && v < 1024 ? v : -1;
}

/* One SXid, from either log: the switch at dom:bus:dev.fn, its link or port from the number
 * after link_word (searched from rest on), and the line's text from text_word on. */
/* a: the switch's PCI address as pci_address_at reads it. */
static void sxid_fill(struct sxid_event *ev, const unsigned a[4], long code, bool fatal, const char *rest,
                      const char *link_word, const char *line, size_t len, const char *text_word) {
        const char *end = line + len;
        memset(ev, 0, sizeof(*ev));
        snprintf(ev->addr, sizeof(ev->addr), "%04x:%02x:%02x.%u", a[0], a[1], a[2], a[3]);
        ev->code = (int)code;
        ev->fatal = fatal;
        ev->link = -1;
        const char *l = find(rest, (size_t)(end - rest), link_word);
        if (l)
                ev->link = link_number(l + strlen(link_word), end);
        const char *from = find(line, len, text_word);
        copy_text(ev->text, sizeof(ev->text), from ? from : line, end);
}

/* "...: SXid (PCI:0000:c1:00.0): 28006, Non-fatal, Link 46 MC TS crumbstore MCTO (First)". The
 * report's further lines ("28006, Severity 0 ...", "28006, Data {...}") name no severity and
 * are not counted again. */
static int sxid_parse_kernel(const char *line, size_t len, struct sxid_event *ev) {
        const char *end = line + len;
        const char *p = after(line, len, "SXid (PCI:");
        unsigned a[4];
        int used = p ? pci_address_at(p, end, false, a) : 0;
        if (!used)
                return 0;
        p += used;
        if (end - p < 3 || memcmp(p, "): ", 3) != 0)
                return 0;
        p += 3;
        long code;
        if (!sxid_code(&p, end, &code) || end - p < 2 || p[0] != ',' || p[1] != ' ')
                return 0;
        p += 2;
        bool fatal;
        if (is_word(p, end, "Fatal"))
                fatal = true;
        else if (is_word(p, end, "Non-fatal"))
                fatal = false;
        else
                return 0;
        sxid_fill(ev, a, code, fatal, p, ", Link ", line, len, "nvidia-nvswitch");
        return 1;
}

/* The Fabric Manager's "[Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch fatal error
 * 20034 on fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 33" (the format
 * leptonai/gpud's fabric-manager log reader documents). */
static int sxid_parse_fm(const char *line, size_t len, struct sxid_event *ev) {
        const char *end = line + len;
        const char *p = after(line, len, "detected NVSwitch ");
        if (!p)
                return 0;
        bool fatal;
        if ((size_t)(end - p) > 12 && memcmp(p, "fatal error ", 12) == 0) {
                fatal = true;
                p += 12;
        } else if ((size_t)(end - p) > 16 && memcmp(p, "non-fatal error ", 16) == 0) {
                fatal = false;
                p += 16;
        } else {
                return 0;
        }
        long code;
        if (!sxid_code(&p, end, &code))
                return 0;
        const char *b = after(p, (size_t)(end - p), "pci bus id ");
        unsigned a[4];
        if (!b || !pci_address_at(b, end, true, a))
                return 0;
        sxid_fill(ev, a, code, fatal, b, " port ", line, len, "detected");
        return 1;
}

int sxid_parse_line(const char *line, size_t len, struct sxid_event *ev) {
        return sxid_parse_kernel(line, len, ev) || sxid_parse_fm(line, len, ev);
}

static void add_sxid(struct xid_facts *x, const struct sxid_event *ev) {
        if (x->n_sxids >= XID_EVENTS_MAX) {
                x->n_dropped++;
                return;
        }
        if (x->n_sxids % 64 == 0) {
                struct sxid_event *grown = realloc(x->sxids, (x->n_sxids + 64) * sizeof(*grown));
                if (!grown) {
                        x->n_dropped++;
                        return;
                }
                x->sxids = grown;
        }
        x->sxids[x->n_sxids++] = *ev;
}

/* The start of the line of text that p is on. */
static const char *line_start(const char *text, const char *p) {
        while (p > text && p[-1] != '\n')
                p--;
        return p;
}

/* Fabric Manager prints its configuration at every start ("[May 02 2024 18:41:23] [INFO] [tid
 * 404868] Abort CUDA jobs when FM exits = 1", as leptonai/gpud's log reader shows): SXids
 * before the last start belong to an earlier run or boot. */
static const char *fm_current_run(const char *text) {
        const char *start = text;
        for (const char *p = text; (p = strstr(p, "Abort CUDA jobs when FM exits")); p++)
                start = line_start(text, p);
        return start;
}

int sxid_parse_fm_log(const char *text, const char *source, struct xid_facts *x) {
        x->fm_log = source;
        for (const char *p = fm_current_run(text); *p;) {
                const char *eol = strchr(p, '\n');
                size_t len = eol ? (size_t)(eol - p) : strlen(p);
                struct sxid_event ev;
                if (sxid_parse_line(p, len, &ev)) {
                        ev.source = source;
                        add_sxid(x, &ev);
                }
                if (!eol)
                        break;
                p = eol + 1;
        }
        return 0;
}

/* Where the current boot starts in a syslog file: after the last kernel banner. */
static const char *current_boot(const char *text) {
        const char *start = text;
        for (const char *p = text; (p = strstr(p, "Linux version ")); p++) {
                const char *bol = line_start(text, p);
                /* Only the kernel's own banner, not a user's echo of it. */
                if (strstr(bol, "kernel:") && strstr(bol, "kernel:") < p)
                        start = bol;
        }
        return start;
}

/* "NVRM: The NVIDIA GPU 0000:b3:00.0": the first line of the driver's multi-line reports,
 * which syslog may keep as separate lines; the address, for the lines that follow. */
static bool multiline_head(const char *line, size_t len, char addr[16]) {
        static const char head[] = "NVRM: The NVIDIA GPU ";
        const char *p = find(line, len, head);
        if (!p)
                return false;
        p += sizeof(head) - 1;
        unsigned dom, bus, dev, fn;
        int used = 0;
        char tmp[16];
        size_t n = (size_t)(line + len - p) < sizeof(tmp) - 1 ? (size_t)(line + len - p) : sizeof(tmp) - 1;
        memcpy(tmp, p, n);
        tmp[n] = '\0';
        if (sscanf(tmp, "%4x:%2x:%2x.%1u%n", &dom, &bus, &dev, &fn, &used) != 4 || used != 12 ||
            !is_bdf_text(tmp, 12) || dev > 0x1f)
                return false;
        snprintf(addr, 16, "%04x:%02x:%02x.0", dom, bus, dev);
        return true;
}

int xid_parse_log(const char *text, int is_kmsg, struct xid_facts *x) {
        const char *p = is_kmsg ? text : current_boot(text);
        size_t line_no = 0, head_line = 0;
        char head_addr[16] = "";
        while (*p) {
                const char *eol = strchr(p, '\n');
                size_t len = eol ? (size_t)(eol - p) : strlen(p);
                struct xid_event ev;
                struct sxid_event sx;
                line_no++;
                if (xid_parse_line(p, len, &ev)) {
                        ev.usec = -1;
                        ev.seq = line_no;
                        /* kmsg record header: "prio,seq,usec,flags;" */
                        unsigned prio;
                        unsigned long long seq, usec;
                        if (is_kmsg && sscanf(p, "%u,%llu,%llu", &prio, &seq, &usec) == 3)
                                ev.usec = (int64_t)usec;
                        add_event(x, &ev);
                        if (ev.code == XID_RECOVERY_ACTION_CHANGED && ev.recovery_action == 0)
                                add_to(&x->reinits, &x->n_reinits, &x->n_dropped, &ev);
                } else if (nvrm_fault_parse_line(p, len, &ev)) {
                        ev.usec = -1;
                        ev.seq = line_no;
                        if (!ev.addr[0] && head_addr[0] && line_no - head_line <= 3)
                                memcpy(ev.addr, head_addr, sizeof(ev.addr));
                        add_to(&x->faults, &x->n_faults, &x->n_dropped, &ev);
                } else if (sxid_parse_line(p, len, &sx)) {
                        sx.source = NULL; /* xid_gather names the log it read */
                        add_sxid(x, &sx);
                } else if (find(p, len, "NVRM: loading NVIDIA UNIX")) {
                        /* The boot's own load precedes every Xid; a later one re-initialised
                         * every GPU (the driver was unloaded and loaded again). */
                        x->driver_loaded_seen = true;
                        if (x->n > 0 || x->n_faults > 0) {
                                memset(&ev, 0, sizeof(ev));
                                ev.seq = line_no;
                                ev.usec = -1;
                                ev.recovery_action = -1;
                                ev.fatal = -1;
                                const char *from = find(p, len, "NVRM");
                                set_text(&ev, from, p + len);
                                add_to(&x->reinits, &x->n_reinits, &x->n_dropped, &ev);
                        }
                }
                if (multiline_head(p, len, head_addr))
                        head_line = line_no;
                if (!eol)
                        break;
                p = eol + 1;
        }
        return 0;
}

static void gather_sxids(struct fsroot *fs, struct xid_facts *x);

static int gather_kernel_log(struct fsroot *fs, struct xid_facts *x);

int xid_gather(struct fsroot *fs, struct facts *f) {
        struct xid_facts *x = &f->xid;
        memset(x, 0, sizeof(*x));
        int r = gather_kernel_log(fs, x);
        gather_sxids(fs, x);
        return r;
}

static int gather_kernel_log(struct fsroot *fs, struct xid_facts *x) {
        char *text;
        int r = fsroot_read_kmsg(fs, &text, NULL);
        if (r == 0) {
                x->source = "/dev/kmsg";
                xid_parse_log(text, 1, x);
                free(text);
                return 0;
        }
        x->kmsg_errno = -r;
        for (size_t i = 0; i < ARRAY_COUNT(syslog_files); i++) {
                if (fsroot_read_alloc(fs, syslog_files[i], &text, NULL) < 0)
                        continue;
                x->source = syslog_files[i];
                xid_parse_log(text, 0, x);
                free(text);
                break;
        }
        return 0;
}

static void gather_sxids(struct fsroot *fs, struct xid_facts *x) {
        for (size_t i = 0; i < x->n_sxids; i++)
                x->sxids[i].source = x->source;
        char *text;
        if (fsroot_read_alloc(fs, FM_LOG, &text, NULL) < 0)
                return;
        sxid_parse_fm_log(text, FM_LOG, x);
        free(text);
}

void xid_facts_done(struct xid_facts *x) {
        free(x->events);
        free(x->faults);
        free(x->reinits);
        free(x->sxids);
        memset(x, 0, sizeof(*x));
}

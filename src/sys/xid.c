#include "sys/xid.h"
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

/* ev->text = [p, end) without the line end, cut to fit. */
static void set_text(struct xid_event *ev, const char *p, const char *end) {
        size_t tlen = (size_t)(end - p);
        while (tlen > 0 && (p[tlen - 1] == '\n' || p[tlen - 1] == '\r'))
                tlen--;
        if (tlen >= sizeof(ev->text))
                tlen = sizeof(ev->text) - 1;
        memcpy(ev->text, p, tlen);
        ev->text[tlen] = '\0';
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

int xid_parse_line(const char *line, size_t len, struct xid_event *ev) {
        static const char marker[] = "NVRM: Xid (";
        const char *end = line + len;
        const char *p = NULL;
        for (const char *q = line; q + sizeof(marker) - 1 <= end; q++)
                if (memcmp(q, marker, sizeof(marker) - 1) == 0) {
                        p = q + sizeof(marker) - 1;
                        break;
                }
        if (!p)
                return 0;
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
        if (dom > 0xffff || bus > 0xff || dev > 0x1f)
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

static const char *find(const char *hay, size_t len, const char *needle) {
        size_t nl = strlen(needle);
        for (size_t i = 0; i + nl <= len; i++)
                if (memcmp(hay + i, needle, nl) == 0)
                        return hay + i;
        return NULL;
}

/* What the driver logs when it cannot bring a GPU up (no Xid number): NVRM's own lines and
 * the PCI core's report of the failed probe. */
static const char *const fault_markers[] = {
        "RmInitAdapter failed", "rm_init_adapter failed", "GPU has fallen off the bus",
        "probe routine failed", "probe routine was not called", "probe with driver nvidia failed",
        "is not supported by the", /* "... installed in this system is not supported by the 470.xx ... release" */
};

int nvrm_fault_parse_line(const char *line, size_t len, struct xid_event *ev) {
        if (find(line, len, "NVRM: Xid ("))
                return 0; /* an Xid line: xid_parse_line's */
        const char *hit = NULL;
        for (size_t i = 0; i < sizeof(fault_markers) / sizeof(fault_markers[0]) && !hit; i++)
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
                    dev <= 0x1f && fn <= 7) {
                        snprintf(ev->addr, sizeof(ev->addr), "%04x:%02x:%02x.0", dom, bus, dev);
                        break;
                }
                if (sscanf(tmp, "%4x:%2x:%2x%n", &dom, &bus, &dev, &used) == 3 && used == 10 && dev <= 0x1f &&
                    i >= 4 && memcmp(line + i - 4, "PCI:", 4) == 0) {
                        snprintf(ev->addr, sizeof(ev->addr), "%04x:%02x:%02x.0", dom, bus, dev);
                        break;
                }
        }
        /* Evidence: the line from its NVRM/nvidia tag on, without the kmsg header. */
        const char *from = find(line, len, "NVRM");
        if (!from)
                from = find(line, len, "nvidia");
        set_text(ev, from, line + len);
        return 1;
}

/* Where the current boot starts in a syslog file: after the last kernel banner. */
static const char *current_boot(const char *text) {
        const char *start = text;
        for (const char *p = text; (p = strstr(p, "Linux version ")); p++) {
                const char *bol = p;
                while (bol > text && bol[-1] != '\n')
                        bol--;
                /* Only the kernel's own banner, not a user's echo of it. */
                if (strstr(bol, "kernel:") && strstr(bol, "kernel:") < p)
                        start = bol;
        }
        return start;
}

int xid_parse_log(const char *text, int is_kmsg, struct xid_facts *x) {
        const char *p = is_kmsg ? text : current_boot(text);
        while (*p) {
                const char *eol = strchr(p, '\n');
                size_t len = eol ? (size_t)(eol - p) : strlen(p);
                struct xid_event ev;
                if (xid_parse_line(p, len, &ev)) {
                        ev.usec = -1;
                        /* kmsg record header: "prio,seq,usec,flags;" */
                        unsigned prio;
                        unsigned long long seq, usec;
                        if (is_kmsg && sscanf(p, "%u,%llu,%llu", &prio, &seq, &usec) == 3)
                                ev.usec = (int64_t)usec;
                        add_event(x, &ev);
                } else if (nvrm_fault_parse_line(p, len, &ev)) {
                        ev.usec = -1;
                        add_to(&x->faults, &x->n_faults, &x->n_dropped, &ev);
                }
                if (!eol)
                        break;
                p = eol + 1;
        }
        return 0;
}

int xid_gather(struct fsroot *fs, struct facts *f) {
        struct xid_facts *x = &f->xid;
        memset(x, 0, sizeof(*x));
        char *text;
        int r = fsroot_read_kmsg(fs, &text, NULL);
        if (r == 0) {
                x->source = "/dev/kmsg";
                xid_parse_log(text, 1, x);
                free(text);
                return 0;
        }
        x->kmsg_errno = -r;
        for (size_t i = 0; i < sizeof(syslog_files) / sizeof(syslog_files[0]); i++) {
                if (fsroot_read_alloc(fs, syslog_files[i], &text, NULL) < 0)
                        continue;
                x->source = syslog_files[i];
                xid_parse_log(text, 0, x);
                free(text);
                return 0;
        }
        return 0;
}

void xid_facts_done(struct xid_facts *x) {
        free(x->events);
        free(x->faults);
        memset(x, 0, sizeof(*x));
}

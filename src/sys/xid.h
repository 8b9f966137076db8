/* NVIDIA Xid events since boot, from the kernel log.
 *
 * The driver logs every Xid as "NVRM: Xid (PCI:0000:3b:00): 79, pid=..., <text>". The log
 * comes from /dev/kmsg (records since boot) or, where that is closed to the user
 * (kernel.dmesg_restrict=1), from the syslog files, cut at the last boot. */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct fsroot;
struct facts;

/* The Xid whose line carries the driver's recovery action (R565 and later). */
#define XID_RECOVERY_ACTION_CHANGED 154

struct xid_event {
        char addr[16];     /* GPU PCI address, function 0: "0000:3b:00.0" */
        int code;
        char text[160];    /* the rest of the log line, for evidence */
        int64_t usec;      /* microseconds after boot (kmsg), -1 when unknown */
        /* Xid 154 "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot
         * Required)": the action it changed to; -1 for other Xids or a line without one. */
        int recovery_action;
};

struct xid_facts {
        const char *source;   /* "/dev/kmsg", "/var/log/kern.log", ...; NULL when none read */
        int kmsg_errno;       /* why /dev/kmsg could not be read (EPERM: dmesg_restrict), 0 if read */
        struct xid_event *events;
        size_t n;
        size_t n_dropped;     /* events past the cap, counted but not kept */
        /* NVRM lines of a GPU the driver could not bring up, which carry no Xid number:
         * "RmInitAdapter failed", "GPU has fallen off the bus", "probe routine failed".
         * code is 0; addr is "" when the line names no GPU. Capped like events. */
        struct xid_event *faults;
        size_t n_faults;
};

int xid_gather(struct fsroot *fs, struct facts *f);
void xid_facts_done(struct xid_facts *x);

/* Parse one log line; returns 1 and fills ev when it is an Xid line, 0 when not, with
 * usec left for the caller. Pure: fuzzed and unit-tested. */
int xid_parse_line(const char *line, size_t len, struct xid_event *ev);

/* Parse one log line; returns 1 and fills ev (code 0) when it is an NVRM fault line of the
 * kind xid_facts.faults keeps, 0 when not. Pure: fuzzed and unit-tested. */
int nvrm_fault_parse_line(const char *line, size_t len, struct xid_event *ev);

/* Parse a whole log: kmsg records or syslog text. For syslog text only the lines after
 * the last kernel boot banner ("Linux version ") count. Appends to x (events capped). */
int xid_parse_log(const char *text, int is_kmsg, struct xid_facts *x);

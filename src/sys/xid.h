/* NVIDIA Xid events since boot, from the kernel log.
 *
 * The driver logs every Xid as "NVRM: Xid (PCI:0000:3b:00): 79, pid=..., <text>". The log
 * comes from /dev/kmsg (records since boot) or, where that is closed to the user
 * (kernel.dmesg_restrict=1), from the syslog files, cut at the last boot. The NVSwitch
 * driver's SXid lines come from the same log and from the Fabric Manager's own log. */
#pragma once

#include <stdbool.h>
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
        size_t seq;        /* position in the log: orders events, faults and re-initialisations */
        /* Xid 144-150 (NVLink5): "145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000008
         * ...)": the unit, the driver's own fatal word and the first two registers, which
         * NVIDIA's decode table reads as IntrInfo and the error status. */
        char unit[24];     /* "RLW_RXPIPE"; "" when the line names none */
        int fatal;         /* 1 "Fatal", 0 "Nonfatal", -1 the line does not say */
        int has_regs;      /* intr_info and error_status were read */
        uint32_t intr_info, error_status;
};

/* An NVSwitch error: "nvidia-nvswitch3: SXid (PCI:0000:c1:00.0): 28006, Non-fatal, Link 46
 * ...", or the Fabric Manager's "detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci
 * bus id 00000000:86:00.0 physical id 3 port 33". */
struct sxid_event {
        char addr[16];     /* the NVSwitch's PCI address, "0000:c1:00.0" */
        int code;
        bool fatal;
        int link;          /* -1 when the line names none */
        char text[160];
        const char *source; /* "/dev/kmsg", "/var/log/fabricmanager.log", ... */
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
        /* Lines after which the driver re-initialised GPUs: its module loaded again
         * ("NVRM: loading NVIDIA UNIX ... Kernel Module"; addr "", every GPU) or a GPU's
         * recovery action went back to 0x0 (None) (Xid 154; that GPU). Only those after
         * the first Xid or fault are kept. */
        struct xid_event *reinits;
        size_t n_reinits;
        bool driver_loaded_seen; /* the boot's own module load was seen */
        struct sxid_event *sxids;
        size_t n_sxids;
        const char *fm_log;   /* the Fabric Manager log read, NULL when none */
};

int xid_gather(struct fsroot *fs, struct facts *f);
void xid_facts_done(struct xid_facts *x);

/* Parse one log line; returns 1 and fills ev when it is an Xid line, 0 when not, with
 * usec left for the caller. Pure: fuzzed and unit-tested. */
int xid_parse_line(const char *line, size_t len, struct xid_event *ev);

/* Parse one log line; returns 1 and fills ev (code 0) when it is an NVRM fault line of the
 * kind xid_facts.faults keeps, 0 when not. Pure: fuzzed and unit-tested. */
int nvrm_fault_parse_line(const char *line, size_t len, struct xid_event *ev);

/* Parse one SXid line (kernel log or Fabric Manager log); returns 1 and fills ev (source
 * left NULL) when it is the first line of an SXid report, 0 when not. Pure: fuzzed. */
int sxid_parse_line(const char *line, size_t len, struct sxid_event *ev);

/* The Fabric Manager log: the SXids after its last start (it appends across restarts and
 * boots). Appends to x. */
int sxid_parse_fm_log(const char *text, const char *source, struct xid_facts *x);

/* Parse a whole log: kmsg records or syslog text. For syslog text only the lines after
 * the last kernel boot banner ("Linux version ") count. Appends to x (events capped). */
int xid_parse_log(const char *text, int is_kmsg, struct xid_facts *x);
